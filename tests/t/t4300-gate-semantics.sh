#!/bin/sh
test_description='gate semantics: baseline, regressions, flaky tests, static findings near changes, cache, policy, syntax'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

campaign() { calc_campaign "$@"; }

TEST_GATE='  - {name: test, kind: test, format: tap, command: "sh tests.sh"}'
STATIC_GATE='  - {name: warnings, kind: static, format: gcc, command: "cc -Wall -Wextra -c src/calc.c -o /tmp/calc.o"}'

verdicts() { # STORE: gate:verdict of every gate run, in order
	store_query "$1" "select group_concat(gate || ':' || verdict, ' ') from (select gate, verdict from gate_runs order by id)"
}

test_expect_success 'setup' '
	mkdir repo && cp -R "$FIXTURES/calc/." repo/ && make_repo repo
'

test_expect_success 'a failure already on the base is not blamed; a flaky base test is found and excluded' '
	campaign ok "\${x}" "[ab]" "$TEST_GATE" >ok.yaml &&
	sluice run --store ok.db ok.yaml >out &&
	grep -q "proposed  *2" out &&
	test "$(store_query ok.db "select count(*) from baselines where gate = '"'"'test'"'"'")" = 2 &&
	test "$(verdicts ok.db)" = "syntax:pass expect:pass test:pass syntax:pass expect:pass test:pass" &&
	test "$(store_query ok.db "select distinct note from gate_runs where gate = '"'"'test'"'"'")" = "flaky on the base, excluded: flaky; not blamed (failing on the base; must_fix or goal: fix would blame them): broken_at_base"
'

test_expect_success 'baseline names the flaky test excluded and the base failure not blamed, from the store' '
	sluice baseline --store ok.db ok.yaml >out &&
	grep -x "gate test (test, tap, expect pass): pass on the base (exit 0), 4 tests" out &&
	grep -x "  pass  add  (must pass)" out &&
	grep -x "  fail  broken_at_base  (not blamed)" out &&
	grep -x "  pass  flaky  (flaky: excluded)" out &&
	test "$(store_query ok.db "select count(*) from baselines where gate = '"'"'test'"'"'")" = 2
'

test_expect_success 'a regression is caught, with the failing test named in the feedback' '
	campaign reg "(\${x})" "b" "$TEST_GATE" >reg.yaml &&
	test_expect_code 1 sluice run --store reg.db reg.yaml >out &&
	test "$(verdicts reg.db)" = "syntax:pass expect:pass test:fail" &&
	store_query reg.db "select reason from targets" >reason &&
	grep -q "sub" reason &&
	! grep -q "broken_at_base" reason &&
	! grep -q "flaky" reason
'

test_expect_success 'a generated test that is flaky is rejected by reruns' '
	cat >reply.txt <<-\EOF &&
	src/calc.c
	```
	<<<<<<< SEARCH
	 	return legacy_scale(a) + b;
	=======
	 	return a + b;
	>>>>>>> REPLACE
	```
	tests.sh
	```
	<<<<<<< SEARCH
	exit 0
	=======
	if [ -f .state2 ]; then rm .state2; echo "not ok 5 - new_flaky"; else : >.state2; echo "ok 5 - new_flaky"; fi
	exit 0
	>>>>>>> REPLACE
	```
	EOF
	sed -i "s/^ 	/	/" reply.txt &&
	{
		campaign gen "unused" "a" "  - {name: test, kind: test, format: tap, command: \"sh tests.sh\", reruns: 2}" |
		sed -e "/^rules:/,/^    template:/d" -e "s|^  paths: .*|  paths: [\"src/*.c\", \"tests.sh\"]|"
		echo "provider: {kind: command, command: \"cat $TRASH/reply.txt\"}"
		echo "edit_format: search-replace"
	} >gen.yaml &&
	test_expect_code 1 sluice run --store gen.db gen.yaml >out &&
	test "$(verdicts gen.db)" = "syntax:pass expect:pass test:fail" &&
	test "$(store_query gen.db "select note from gate_runs where gate = '"'"'test'"'"'")" = "failed on run 2 of 2" &&
	store_query gen.db "select reason from targets" | grep -q new_flaky
'

test_expect_success 'with one run the same generated test would have passed (the rerun is what caught it)' '
	sed -e "s/^name: gen/name: gen1/" -e "s/, reruns: 2}/}/" gen.yaml >gen1.yaml &&
	sluice run --store gen1.db gen1.yaml >out &&
	test "$(verdicts gen1.db)" = "syntax:pass expect:pass test:pass"
'

test_expect_success 'a new warning on a changed line fails the static gate' '
	campaign warn "({ int unused_new = 0; \${x}; })" "a" "$STATIC_GATE" >warn.yaml &&
	test_expect_code 1 sluice run --store warn.db warn.yaml >out &&
	test "$(verdicts warn.db)" = "syntax:pass expect:pass warnings:fail" &&
	store_query warn.db "select reason from targets" >reason &&
	grep -q "unused_new" reason &&
	! grep -q "unused_old" reason
'

test_expect_success 'an old warning elsewhere does not' '
	campaign clean "\${x}" "b" "$STATIC_GATE" >clean.yaml &&
	sluice run --store clean.db clean.yaml >out &&
	test "$(verdicts clean.db)" = "syntax:pass expect:pass warnings:pass" &&
	store_query clean.db "select output from baselines" | grep -q unused_old
'

test_expect_success 'an identical candidate hits the verdict cache' '
	cat >same.txt <<-\EOF &&
	src/calc.c
	```
	<<<<<<< SEARCH
	 	return legacy_scale(a) + b;
	=======
	 	return (a) + b;
	>>>>>>> REPLACE
	```
	EOF
	sed -i "s/^ 	/	/" same.txt &&
	{
		campaign same "unused" "a" "$TEST_GATE" | sed -e "/^rules:/,/^    template:/d" -e "s/^attempts: 1/attempts: 2/"
		echo "provider: {kind: command, command: \"cat $TRASH/same.txt\"}"
		echo "edit_format: search-replace"
	} >same.yaml &&
	test_expect_code 1 sluice run --store same.db same.yaml >out &&
	test "$(verdicts same.db)" = "syntax:pass expect:pass test:fail syntax:pass expect:pass test:fail" &&
	test "$(store_query same.db "select group_concat(cached) from gate_runs where gate = '"'"'test'"'"'")" = "0,1"
'

test_expect_success 'a test gate whose report never appears on the base stops the campaign before any candidate' '
	campaign norep "\${x}" "a" "  - {name: test, kind: test, format: junit, report: none.xml, command: \"echo ran\"}" >norep.yaml &&
	test_expect_code 1 sluice run --store norep.db norep.yaml >out 2>err &&
	test "$(grep "^sluice: " err)" = "sluice: gate '"'"'test'"'"' reports no tests on the base commit: its report '"'"'none.xml'"'"' was not found (exit 0): ran" &&
	test "$(store_query norep.db "select count(*) from attempts")" = 0 &&
	test "$(store_query norep.db "select count(*) from gate_runs")" = 0
'

test_expect_success 'with allow_skip it is recorded skip, and the candidate may pass' '
	campaign norep2 "\${x}" "a" "  - {name: test, kind: test, format: junit, report: none.xml, command: \"true\", allow_skip: true}" >norep2.yaml &&
	sluice run --store norep2.db norep2.yaml >out &&
	test "$(verdicts norep2.db)" = "syntax:pass expect:pass test:skip" &&
	grep -q "test  *0 passed, 0 failed, 1 skipped, 0 cached (1 run)" out &&
	grep -q "proposed  *1" out
'

test_expect_success 'exit 127 on a candidate is a configuration error, recorded as error, not fail' '
	printf "%s\n" src/calc.c "\`\`\`" "<<<<<<< SEARCH" "	return legacy_scale(a) + b;" "=======" \
		"	return (a) + b;" ">>>>>>> REPLACE" "\`\`\`" tests.sh "\`\`\`" "<<<<<<< SEARCH" \
		"exit 0" "=======" "no-such-test-runner" ">>>>>>> REPLACE" "\`\`\`" >tool.txt &&
	{
		campaign tool "unused" "a" "$TEST_GATE" |
		sed -e "/^rules:/,/^    template:/d" -e "s|^  paths: .*|  paths: [\"src/*.c\", \"tests.sh\"]|" &&
		echo "provider: {kind: command, command: \"cat $TRASH/tool.txt\"}" &&
		echo "edit_format: search-replace"
	} >tool.yaml &&
	test_expect_code 1 sluice run --store tool.db tool.yaml >out &&
	test "$(verdicts tool.db)" = "syntax:pass expect:pass test:error" &&
	test "$(store_query tool.db "select exit_status || '"'"' '"'"' || note from gate_runs where gate = '"'"'test'"'"'")" = "127 configuration error: command not found (exit 127)" &&
	grep -q "test  *0 passed, 0 failed, 0 skipped, 0 cached, 1 errors (1 run)" out &&
	grep -q "proposed  *0" out
'

test_expect_success 'a policy gate refuses forbidden text before any checkout' '
	campaign pol "\${x} /* TODO */" "a" \
		"  - {name: policy, kind: policy, forbid: [\"TODO\"], max_files: 1}" "$TEST_GATE" >pol.yaml &&
	test_expect_code 1 sluice run --store pol.db pol.yaml >out &&
	test "$(verdicts pol.db)" = "syntax:pass expect:pass policy:fail" &&
	store_query pol.db "select reason from targets" | grep -q "TODO"
'

test_expect_success 'the syntax gate rejects an unbalanced brace in C before any build' '
	cat >brace.txt <<-\EOF &&
	src/calc.c
	```
	<<<<<<< SEARCH
	 	return legacy_scale(a) + b;
	 }
	=======
	 	return a + b;
	>>>>>>> REPLACE
	```
	EOF
	sed -i "s/^ //" brace.txt &&
	{
		campaign brace "unused" "a" "  - {name: build, command: \"cc -c src/calc.c -o /tmp/c.o\"}" |
		sed -e "/^rules:/,/^    template:/d"
		echo "provider: {kind: command, command: \"cat $TRASH/brace.txt\"}"
		echo "edit_format: search-replace"
	} >brace.yaml &&
	test_expect_code 1 sluice run --store brace.db brace.yaml >out &&
	test "$(verdicts brace.db)" = "syntax:fail" &&
	store_query brace.db "select reason from targets" | grep -q "does not parse"
'

test_expect_success 'and a bad indent in Python' '
	cat >indent.txt <<-\EOF &&
	util.py
	```
	<<<<<<< SEARCH
	    return legacy_scale(x)
	=======
	    y = x
	      return y
	>>>>>>> REPLACE
	```
	EOF
	cat >py.yaml <<-EOF &&
	name: py
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: python
	  query: "((call function: (identifier) @fn) @call (#eq? @fn \"legacy_scale\"))"
	provider: {kind: command, command: "cat $TRASH/indent.txt"}
	edit_format: search-replace
	attempts: 1
	gates:
	  - {name: build, command: "python3 -c pass"}
	EOF
	test_expect_code 1 sluice run --store py.db py.yaml >out &&
	test "$(verdicts py.db)" = "syntax:fail"
'

test_done
