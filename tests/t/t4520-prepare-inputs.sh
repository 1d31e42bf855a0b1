#!/bin/sh
test_description='a preparing gate runs again on a candidate only when the candidate changes one of its inputs'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# An autotools-like project: ./configure (input: configure.ac, by default)
# appends a line to configure-runs.log and writes config.mk; make builds
# prog from src/*.c; `make check` builds and compares prog's output.  The
# test gate prints how many times configure ran in the tree it sees (once:
# when the warm base was prepared).  Three calls of old_api in src/main.c;
# the command provider answers by line with reply-LINE.diff:
#   3  changes src/main.c only;
#   4  also changes configure.ac;
#   5  calls a function that does not exist (the link fails).
test_expect_success 'setup' '
	mkdir -p repo/src &&
	echo "AC_INIT([demo], [1.0])" >repo/configure.ac &&
	printf "%s\n" "echo configured >>configure-runs.log" "echo \"CFLAGS := -O0\" >config.mk" \
		>repo/configure &&
	printf "%s\n" "include config.mk" "SRCS := \$(wildcard src/*.c)" \
		"prog: \$(SRCS)" "	\$(CC) \$(CFLAGS) -o \$@ \$(SRCS)" \
		"check: prog" "	./prog >out.txt && cmp out.txt expected.txt" >repo/Makefile &&
	printf "%s\n" "#include <stdio.h>" "int old_api(int x) { return x; }" \
		"int a(void) { return old_api(1); }" "int b(void) { return old_api(2); }" \
		"int c(void) { return old_api(3); }" \
		"int main(void) { printf(\"%d\\n\", a() + b() + c()); return 0; }" >repo/src/main.c &&
	echo 6 >repo/expected.txt &&
	cat >reply-3.diff <<-\EOF &&
	--- a/src/main.c
	+++ b/src/main.c
	@@ -3 +3 @@
	-int a(void) { return old_api(1); }
	+int a(void) { return 1; }
	EOF
	cat >reply-4.diff <<-\EOF &&
	--- a/src/main.c
	+++ b/src/main.c
	@@ -4 +4 @@
	-int b(void) { return old_api(2); }
	+int b(void) { return 2; }
	--- a/configure.ac
	+++ b/configure.ac
	@@ -1 +1,2 @@
	 AC_INIT([demo], [1.0])
	+AC_PROG_CC
	EOF
	cat >reply-5.diff <<-\EOF &&
	--- a/src/main.c
	+++ b/src/main.c
	@@ -5 +5 @@
	-int c(void) { return old_api(3); }
	+int c(void) { return no_such_function(3); }
	EOF
	printf "%s\n" "n=\$(grep -v \"^\$\" | tail -n 1)" "cat \"$TRASH/reply-\$n.diff\"" >reply.sh &&
	make_repo repo &&
	cat >c.yaml <<-EOF &&
	name: inputs
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  capture: call
	provider: {kind: command, command: "sh $TRASH/reply.sh"}
	prompt: "{{start_line}}"
	edit_format: udiff
	attempts: 1
	jobs: 2
	gates:
	  - {name: configure, command: "sh ./configure", prepare: true}
	  - {name: build, command: "make 2>&1", prepare: true}
	  - {name: test, command: "make check 2>&1 && echo configure runs: \$(wc -l <configure-runs.log)"}
	EOF
	sed -e "s/^jobs: 2/jobs: 2\njail: {warm_base: off}/" -e "s/^name: inputs/name: inputs-off/" \
		c.yaml >off.yaml &&
	grep -q "warm_base: off" off.yaml
'

# per target line: candidate state, then each gate's verdict and note
gates_of() {
	store_query "$1" "select t.start_line || \" \" || c.state || \" \" ||
		(select group_concat(gate || \":\" || verdict || \":\" || coalesce(note, \"\"), \",\") from
		 (select gate, verdict, note from gate_runs g where g.candidate_id = c.id
		  and g.gate not in (\"syntax\", \"expect\") order by g.id))
		from candidates c join targets t on t.id = c.target_id order by t.start_line"
}

test_output() {
	store_query "$1" "select g.output_tail from gate_runs g join candidates c on c.id = g.candidate_id
		join targets t on t.id = c.target_id where g.gate = \"test\" and t.start_line = $2"
}

test_expect_success 'configure is reused unless a candidate changes configure.ac; the build always runs' '
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *2" out &&
	cat >expect <<-\EOF &&
	3 passed configure:pass:prepare: reused (no input changed),build:pass:,test:pass:
	4 passed configure:pass:re-run: configure.ac changed,build:pass:,test:pass:
	5 failed configure:pass:prepare: reused (no input changed),build:fail:
	EOF
	gates_of s.db >actual &&
	test_cmp expect actual &&
	test_output s.db 3 | grep -q "^configure runs: 1$" &&
	test "$(store_query s.db "select count(*) from gate_runs where cached = 1")" = 2 &&
	test_output s.db 4 | grep -q "^configure runs: 2$"
'

test_expect_success 'show says why a preparing gate ran or not' '
	id=$(store_query s.db "select c.id from candidates c join targets t on t.id = c.target_id
		where t.start_line = 3") &&
	sluice show --store s.db $id >show &&
	grep -q "^gate configure .*(prepare: reused (no input changed))$" show &&
	id=$(store_query s.db "select c.id from candidates c join targets t on t.id = c.target_id
		where t.start_line = 4") &&
	sluice show --store s.db $id >show &&
	grep -q "^gate configure .*(re-run: configure.ac changed)" show
'

test_expect_success 'declared inputs replace the defaults, also on the build; a later gate still judges' '
	sed -e "s/^name: inputs/name: inputs-declared/" \
		-e "s/prepare: true}/prepare: true, inputs: [\"*.mk\"]}/" c.yaml >decl.yaml &&
	grep -q "inputs: \[" decl.yaml &&
	sluice run --store d.db decl.yaml >out &&
	gates_of d.db >actual &&
	r="prepare: reused (no input changed)" &&
	printf "%s\n" "3 passed configure:pass:$r,build:pass:$r,test:pass:" \
		"4 passed configure:pass:$r,build:pass:$r,test:pass:" \
		"5 failed configure:pass:$r,build:pass:$r,test:fail:" >expect &&
	test_cmp expect actual &&
	test_output d.db 4 | grep -q "^configure runs: 1$"
'

test_expect_success 'without the overlay (warm_base: off) every gate runs on its worktree: the same verdicts' '
	sluice run --store off.db off.yaml >out &&
	gates_of off.db >actual-off &&
	printf "%s\n" "3 passed configure:pass:,build:pass:,test:pass:" \
		"4 passed configure:pass:,build:pass:,test:pass:" \
		"5 failed configure:pass:,build:fail:" >expect-off &&
	test_cmp expect-off actual-off
'

test_expect_success 'inputs belong to preparing gates' '
	cp c.yaml bad.yaml &&
	echo "  - {name: lint, command: \"true\", inputs: [\"x\"]}" >>bad.yaml &&
	test_expect_code 2 sluice run --store bad.db bad.yaml 2>err &&
	grep -q "bad.yaml:[0-9]*:[0-9]*: .*inputs.* belongs to preparing gates" err &&
	test ! -e bad.db
'

test_done
