#!/bin/sh
test_description='testgen campaigns: six canned tests for clamp(), each stopped at the gate named for its defect'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# The project (examples/testgen/project): clamp() and twice(); the
# existing test checks clamp() inside its range only.  A new test registers
# by being a tests/*.c file.  The candidates (examples/testgen/replies,
# the Nth request gets the Nth) create tests/t_gen_clamp.c:
#   1-nobuild   calls a function that does not exist
#   2-fails     asserts a wrong value
#   3-flaky     fails on its third run
#   4-nocov     passes, but covers only what the existing test covers
#   5-noassert  covers both clamping branches and asserts nothing
#   6-good      asserts both clamping branches
CANDIDATES=$EXAMPLES/testgen/replies

test_expect_success 'setup: the project in a repository, the testgen campaign' '
	cp -R "$EXAMPLES/testgen/project" repo &&
	make_repo repo &&
	cat >gen.yaml <<-EOF &&
	name: gen
	kind: testgen
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ["src/*.c"]
	  query: |
	    (function_definition
	      declarator: (function_declarator declarator: (identifier) @n)
	      (#eq? @n "clamp")) @fn
	  capture: fn
	test_paths: ["tests/t_gen_*.c"]
	test_template: |
	  /* t_gen_NAME.c - what it checks */
	  #include "calc.h"
	  int main(void) { return !(CONDITION); }
	provider: {kind: command, command: "sh $CANDIDATES/next.sh $CANDIDATES $TRASH/asked"}
	edit_format: search-replace
	attempts: 6
	gates:
	  - {name: build, command: make}
	  - {name: stable, kind: test, command: make -s check}
	  - {name: coverage, kind: coverage, format: gcov, report: cov.txt, command: make -s coverage}
	  - {name: mutants, kind: mutants, command: make -s check, timeout: 60}
	EOF
	{ sluice run --store s.db gen.yaml >out 2>err ||
	{ cat out err; false; }; }
'

verdicts() { # ATTEMPT: gate:verdict of that attempt's candidate
	store_query s.db "select group_concat(g.gate || \":\" || g.verdict, \" \") from gate_runs g join candidates c on c.id = g.candidate_id join attempts a on a.id = c.attempt_id where a.n = $1 order by g.id"
}

note_of() { # ATTEMPT GATE
	store_query s.db "select coalesce(g.note, \"\") from gate_runs g join candidates c on c.id = g.candidate_id join attempts a on a.id = c.attempt_id where a.n = $1 and g.gate = \"$2\""
}

test_expect_success 'the test that does not build stops at build' '
	test "$(verdicts 1)" = "syntax:pass build:fail"
'

test_expect_success 'the failing test stops at stable on its first run' '
	test "$(verdicts 2)" = "syntax:pass build:pass stable:fail" &&
	test "$(note_of 2 stable)" = "failed on run 1 of 5"
'

test_expect_success 'the flaky test stops at stable on its third run' '
	test "$(verdicts 3)" = "syntax:pass build:pass stable:fail" &&
	test "$(note_of 3 stable)" = "failed on run 3 of 5"
'

test_expect_success 'the test that adds no coverage stops at coverage' '
	test "$(verdicts 4)" = "syntax:pass build:pass stable:pass coverage:fail" &&
	note_of 4 coverage | grep -q "4/6 -> 4/6"
'

test_expect_success 'the test that asserts nothing stops at mutants' '
	test "$(verdicts 5)" = "syntax:pass build:pass stable:pass coverage:pass mutants:fail" &&
	note_of 5 mutants | grep -q "^kills 0 of 9 mutants the existing tests miss"
'

test_expect_success 'exactly the good test is proposed, with the mutants it kills' '
	test "$(verdicts 6)" = "syntax:pass build:pass stable:pass coverage:pass mutants:pass" &&
	note_of 6 coverage | grep -q "4/6 -> 6/6" &&
	test "$(note_of 6 mutants)" = "kills 2 of 9 mutants the existing tests miss (5 killed by both, 2 survive): line 7: statement removed: return lo;; line 9: statement removed: return hi;" &&
	test "$(store_query s.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 1 &&
	git -C repo show sluice/gen/src-calc.c-L4:tests/t_gen_clamp.c >t &&
	grep -q "clamp(-5, 0, 10) == 0" t
'

test_expect_success 'the funnel shows built, stable, coverage, mutants killed, proposed' '
	grep -q "targets  *1" out &&
	grep -q "proposed  *1" out &&
	grep -q "build  *5 passed, 1 failed" out &&
	grep -q "stable  *3 passed, 2 failed" out &&
	grep -q "coverage  *2 passed, 1 failed" out &&
	grep -q "mutants  *1 passed, 1 failed" out
'

test_expect_success 'the code under test is left alone: the mutated file is restored' '
	git -C repo diff --stat main sluice/gen/src-calc.c-L4 >stat &&
	grep -q "tests/t_gen_clamp.c" stat &&
	! grep -q "src/calc.c" stat
'

test_expect_success 'the report shows the coverage added and the mutants killed' '
	sluice export --store s.db --out export &&
	grep -q "^- coverage: covered lines in src/calc.c:4-11: 4/6 -> 6/6" export/report.md &&
	grep -q "^- mutants: kills 2 of 9 mutants the existing tests miss" export/report.md
'

test_expect_success 'a test that extends an existing file is judged against the base version of it' '
	sed -e "s/^name: gen/name: gen-extend/" -e "s/^attempts: 6/attempts: 1/" \
		-e "s|^test_paths: .*|test_paths: [\"tests/t_gen_*.c\", \"tests/t_basic.c\"]|" \
		-e "s|^provider: .*|provider: {kind: command, command: \"cat $FIXTURES/testgen/extend.txt\"}|" \
		gen.yaml >extend.yaml &&
	sluice run --store e.db extend.yaml >out &&
	test "$(store_query e.db "select note from gate_runs where gate = '"'"'mutants'"'"'")" = "kills 2 of 9 mutants the existing tests miss (5 killed by both, 2 survive): line 7: statement removed: return lo;; line 9: statement removed: return hi;" &&
	git -C repo diff --stat main sluice/gen-extend/src-calc.c-L4 >stat &&
	grep -q "tests/t_basic.c" stat &&
	test $(wc -l <stat) = 2
'

test_expect_success 'a test that plants a link where the gate writes mutants is failed, nothing followed' '
	echo "keep me" >victim &&
	cat >plant.txt <<-EOF &&
	tests/t_gen_clamp.c
	\`\`\`c
	<<<<<<< SEARCH
	=======
	#include <stdio.h>
	#include <unistd.h>
	#include "calc.h"
	int main(void)
	{
		FILE *f = fopen("plant.count", "a+");
		long n;

		if (!f)
			return 1;
		fputc(1, f);
		n = ftell(f);
		fclose(f);
		if (n == 8) {
			unlink("src/calc.c");
			if (symlink("$TRASH/victim", "src/calc.c"))
				return 1;
		}
		return !(clamp(15, 0, 10) == 10 && clamp(-5, 0, 10) == 0);
	}
	>>>>>>> REPLACE
	\`\`\`
	EOF
	sed -e "s/^name: gen/name: gen-plant/" -e "s/^attempts: 6/attempts: 1/" \
		-e "s|^provider: .*|provider: {kind: command, command: \"cat $TRASH/plant.txt\"}|" \
		gen.yaml >plant.yaml &&
	test_expect_code 1 sluice run --store p.db plant.yaml >out &&
	test "$(store_query p.db "select verdict from gate_runs where gate = '"'"'stable'"'"'")" = pass &&
	store_query p.db "select verdict || \" \" || note from gate_runs where gate = '"'"'mutants'"'"'" >note &&
	grep -q "^fail the worktree changed under the gate: .*src/calc.c" note &&
	test "$(cat victim)" = "keep me"
'

test_expect_success 'coverage_below keeps only the units the base covers too little' '
	sed -e "s/(#eq? @n \"clamp\")) @fn/) @fn/" -e "s/^attempts: 6/attempts: 1\ncoverage_below: 100/" \
		-e "s/^name: gen/name: gen-below/" -e "s|\$TRASH/asked|\$TRASH/asked-below|" gen.yaml >below.yaml &&
	grep -q "^coverage_below: 100" below.yaml &&
	sluice scope below.yaml >all &&
	test $(wc -l <all) = 2 &&
	test_expect_code 1 sluice run --store below.db below.yaml >out &&
	test "$(store_query below.db "select path || \":\" || start_line from targets")" = src/calc.c:4
'

test_expect_success 'coverage_below needs a coverage gate' '
	sed "/kind: coverage/d" below.yaml >nocov.yaml &&
	test_expect_code 2 sluice run --store n.db nocov.yaml 2>err &&
	grep -q "nocov.yaml:[0-9]*:17: .coverage_below. needs a gate of kind coverage" err
'

test_expect_success 'a testgen campaign needs test_paths' '
	sed "/^test_paths/d" gen.yaml >bad.yaml &&
	test_expect_code 2 sluice run --store b.db bad.yaml 2>err &&
	grep -q "bad.yaml:1:1: missing required field .test_paths." err
'

test_done
