#!/bin/sh
test_description='rules: a sequence capture, conditions, order and its warnings, and the check that the change did what was asked'
. ./test-lib.sh

# out.c: sprintf in each form (no argument after the format, one, two) into an
# array, one into a pointer, and a strcpy the rules do not fix.
test_expect_success 'setup: a function with sprintf forms, a pointer buffer and a strcpy' '
	mkdir -p proj/src &&
	cat >proj/src/out.c <<-\EOF &&
	#include <stdio.h>
	#include <string.h>

	void report(const char *name, int n)
	{
		char buf[64];
		char *p = buf;

		sprintf(buf, "hello");
		sprintf(buf, "%d", n);
		sprintf(buf, "%s %d", name, n);
		sprintf(p, "%s", name);
		strcpy(buf, name);
	}
	EOF
	make_repo proj &&
	cat >base.yaml <<-EOF
	name: sprintf
	repository: proj
	base: main
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ["src/*.c"]
	  query: |
	    (call_expression
	      function: (identifier) @fn
	      arguments: (argument_list . (_) @buf . (_) @rest)
	      (#eq? @fn "sprintf")) @call
	  capture: call
	  unit: function
	attempts: 1
	EOF
'

test_expect_success 'one rule with a rest-of-arguments capture rewrites every sprintf form' '
	cat base.yaml - >seq.yaml <<-\EOF &&
	rules:
	  - capture: call
	    template: "snprintf(${buf}, sizeof ${buf}, ${...rest})"
	EOF
	sluice preview seq.yaml >out &&
	grep -x "+snprintf(buf, sizeof buf, \"hello\");" out &&
	grep -x "+snprintf(buf, sizeof buf, \"%d\", n);" out &&
	grep -x "+snprintf(buf, sizeof buf, \"%s %d\", name, n);" out &&
	grep -x "+snprintf(p, sizeof p, \"%s\", name);" out &&
	grep -x "4 sites: 4 rewritten by rules, 0 unchanged, 0 for the model" out
'

test_expect_success 'a condition on the declaration skips the pointer buffer: it is for the model' '
	cat base.yaml - >where.yaml <<-\EOF &&
	rules:
	  - capture: call
	    template: "snprintf(${buf}, sizeof ${buf}, ${...rest})"
	    where:
	      buf: {declared: "(array_declarator)"}
	EOF
	sluice preview where.yaml >out &&
	grep -x "+snprintf(buf, sizeof buf, \"%s %d\", name, n);" out &&
	! grep "snprintf(p" out &&
	grep -x "src/out.c:12:1: for the model: sprintf(p, \"%s\", name)" out &&
	grep -x "4 sites: 3 rewritten by rules, 0 unchanged, 1 for the model" out
'

test_expect_success 'rules are tried in order: the first that applies wins, the next catches the rest' '
	cat base.yaml - >order.yaml <<-\EOF &&
	rules:
	  - capture: call
	    template: "snprintf(${buf}, sizeof ${buf}, ${...rest})"
	    where:
	      buf: {declared: "(array_declarator)"}
	  - capture: call
	    template: "snprintf(${buf}, BUFSIZE, ${...rest})"
	    where:
	      buf: {not_declared: "(array_declarator)", match: "^p$"}
	EOF
	sluice preview order.yaml >out 2>err &&
	! test -s err &&
	grep -x "src/out.c:12:1: rule 2 (@call)" out &&
	grep -x "+snprintf(p, BUFSIZE, \"%s\", name);" out &&
	grep -x "src/out.c:9:1: rule 1 (@call)" out
'

test_expect_success 'overlapping rules and a rule that can never apply warn at load' '
	cat base.yaml - >overlap.yaml <<-\EOF &&
	rules:
	  - capture: call
	    template: "snprintf(${buf}, sizeof ${buf}, ${...rest})"
	  - capture: call
	    template: "never(${buf}, ${fn})"
	  - capture: buf
	    template: "x"
	  - capture: call
	    template: "other()"
	    where:
	      buf: {match: "^p$"}
	EOF
	sluice preview overlap.yaml >out 2>err &&
	cat err &&
	grep -x "sluice: overlap.yaml:19:5: warning: rule 2 can never apply: rule 1 (line 17) applies first wherever it could" err &&
	grep -x "sluice: overlap.yaml:21:5: warning: rule 3 can never apply: rule 1 (line 17) applies first wherever it could" err &&
	grep -x "sluice: overlap.yaml:23:5: warning: rule 4 can never apply: rule 1 (line 17) applies first wherever it could" err &&
	cat base.yaml - >overlap2.yaml <<-\EOF &&
	rules:
	  - capture: call
	    template: "snprintf(${buf}, sizeof ${buf}, ${rest})"
	  - capture: call
	    template: "snprintf(${fn})"
	EOF
	sluice preview overlap2.yaml >out 2>err &&
	grep -x "sluice: overlap2.yaml:19:5: warning: rule 2 overlaps rule 1 (line 17): both rewrite @call, and where both could apply rule 1 does (rules are tried in order)" err &&
	sluice run --store o.db overlap2.yaml >run.out 2>run.err &&
	grep -q "overlap2.yaml:19:5: warning: rule 2 overlaps rule 1" run.err
'

test_expect_success 'bad conditions are input errors with the file and line' '
	cat base.yaml - >bad1.yaml <<-\EOF &&
	rules:
	  - capture: call
	    template: "x"
	    where:
	      nothere: {match: "a"}
	EOF
	test_expect_code 2 sluice preview bad1.yaml 2>err &&
	grep -q "^sluice: bad1.yaml:17:5: rule condition on capture .nothere., which the query does not define" err &&
	sed "s/nothere: {match: \"a\"}/buf: {has: \"(no_such_node)\"}/" bad1.yaml >bad2.yaml &&
	test_expect_code 2 sluice preview bad2.yaml 2>err &&
	grep -q "^sluice: bad2.yaml:17:5: rule condition on .buf.: .*no_such_node" err &&
	sed "s/nothere: {match: \"a\"}/buf: {match: \"(\"}/" bad1.yaml >bad3.yaml &&
	test_expect_code 2 sluice preview bad3.yaml 2>err &&
	grep -q "^sluice: bad3.yaml:17:5: bad regex" err &&
	sed "s/nothere: {match: \"a\"}/buf: {matches: \"a\"}/" bad1.yaml >bad4.yaml &&
	test_expect_code 2 sluice preview bad4.yaml 2>err &&
	grep -q "^sluice: bad4.yaml:20:[0-9]*: unknown key .matches. in .where." err &&
	! test -e "$XDG_DATA_HOME/sluice"
'

# The query matches sprintf and strcpy; the rule fixes only sprintf.
test_expect_success 'setup: a campaign whose rule leaves the strcpy of the unit' '
	cat >partial.yaml <<-EOF
	name: partial
	repository: proj
	base: main
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ["src/*.c"]
	  query: |
	    (call_expression
	      function: (identifier) @fn
	      arguments: (argument_list . (_) @buf . (_) @rest)
	      (#any-of? @fn "sprintf" "strcpy")) @call
	  capture: call
	  unit: function
	attempts: 1
	rules:
	  - capture: call
	    template: "snprintf(\${buf}, sizeof \${buf}, \${...rest})"
	    where:
	      fn: {match: "^sprintf$"}
	EOF
'

test_expect_success 'the partial rewrite is rejected by the gate expect, naming the site left' '
	test_expect_code 1 sluice run --store p.db partial.yaml >out 2>err &&
	grep -q "^    expect  *0 passed, 1 failed" out &&
	test "$(sqlite3 p.db "select group_concat(gate || '"'"':'"'"' || verdict) from gate_runs")" = "syntax:pass,expect:fail" &&
	sluice show --store p.db 1 >show &&
	grep -q "^gate expect  *fail" show &&
	grep -q "the campaign.s query still matches 1 time inside the target (src/out.c:4-14) where it matched before:" show &&
	grep -qx "  src/out.c:13:1: strcpy(buf, name)" show &&
	sluice targets --store p.db >targets &&
	grep -q "failed  *src/out.c:4 .*src/out.c:13:1: strcpy(buf, name)" targets &&
	test -z "$(git -C proj for-each-ref refs/heads/sluice/partial)"
'

test_expect_success 'the report names the site left too' '
	sluice export --store p.db --out export >out &&
	grep -q "src/out.c:13:1: strcpy(buf, name)" export/report.md &&
	grep -q "src/out.c:13:1: strcpy(buf, name)" export/report.html
'

test_expect_success 'the model gets the rules candidate with the site left; its own partial candidate fails the same way' '
	cat >reply.txt <<-\EOF &&
	```c
	void report(const char *name, int n)
	{
		char buf[64];
		char *p = buf;

		snprintf(buf, sizeof buf, "hello");
		snprintf(buf, sizeof buf, "%d", n);
		snprintf(buf, sizeof buf, "%s %d", name, n);
		snprintf(p, 64, "%s", name);
		strcpy(buf, name);
	}
	```
	EOF
	sed -e "s/^attempts: 1/attempts: 2/" -e "s/^name: partial/name: partial-model/" partial.yaml >model.yaml &&
	cat >>model.yaml <<-EOF &&
	provider:
	  kind: command
	  command: "cat >$TRASH/request.txt; cat $TRASH/reply.txt"
	EOF
	test_expect_code 1 sluice run --store m.db model.yaml >out 2>err &&
	grep -q "src/out.c:13:1: strcpy(buf, name)" request.txt &&
	grep -q "A deterministic rewrite was tried first and failed" request.txt &&
	test "$(sqlite3 m.db "select group_concat(source || '"'"':'"'"' || outcome) from attempts order by n")" = "rules:candidate,command:candidate" &&
	test "$(sqlite3 m.db "select count(*) from gate_runs where gate = '"'"'expect'"'"' and verdict = '"'"'fail'"'"'")" = 2 &&
	sluice show --store m.db 2 >show2 &&
	grep -qx "  src/out.c:13:1: strcpy(buf, name)" show2
'

test_expect_success 'a full rewrite passes; expect: {gone: none} turns the check off' '
	cat >>partial.yaml <<-\EOF &&
	  - capture: call
	    template: "strlcpy(${buf}, ${...rest}, sizeof ${buf})"
	EOF
	sed "s/^name: partial/name: full/" partial.yaml >full.yaml &&
	sluice run --store f.db full.yaml >out &&
	grep -q "^  proposed  *1" out &&
	test "$(sqlite3 f.db "select group_concat(gate || '"'"':'"'"' || verdict) from gate_runs")" = "syntax:pass,expect:pass" &&
	sed -e "s/^name: partial/name: off/" -e "s/^  unit: function/  unit: function\n  expect: {gone: none}/" partial.yaml >off.yaml &&
	head -n -2 off.yaml >off2.yaml &&
	sluice run --store off.db off2.yaml >out &&
	grep -q "^  proposed  *1" out &&
	test "$(sqlite3 off.db "select group_concat(gate) from gate_runs")" = "syntax"
'

test_expect_success 'expect: gone names a query that must match nowhere in the unit after the change' '
	sed -e "s/^name: sprintf/name: gone/" -e "s/^  unit: function/  unit: function\n  expect: {gone: \"((call_expression function: (identifier) @f) (#eq? @f \\\\\"strcpy\\\\\"))\"}/" base.yaml >gone.yaml &&
	cat >>gone.yaml <<-\EOF &&
	rules:
	  - capture: call
	    template: "snprintf(${buf}, sizeof ${buf}, ${...rest})"
	EOF
	grep -q "expect: {gone:" gone.yaml &&
	test_expect_code 1 sluice run --store g.db gone.yaml >out &&
	sluice show --store g.db 1 >show &&
	grep -q "the query of .expect: gone. still matches 1 time inside the target (src/out.c:4-14):" show &&
	grep -qx "  src/out.c:13:1: strcpy" show
'

test_expect_success 'expect: present names a query that must match after the change' '
	sed -e "s/^name: partial/name: present/" -e "s/^  unit: function/  unit: function\n  expect: {gone: none, present: \"((identifier) @f (#eq? @f \\\\\"strlcpy\\\\\"))\"}/" partial.yaml >present.yaml &&
	head -n -2 present.yaml >present2.yaml &&
	cat present2.yaml &&
	test_expect_code 1 sluice run --store pr.db present2.yaml >out &&
	sluice show --store pr.db 1 >show &&
	grep -q "the query of .expect: present. does not match inside the target" show &&
	sluice run --store pr2.db present.yaml >out &&
	grep -q "^  proposed  *1" out
'

test_done
