#!/bin/sh
test_description='testgen: a mutant the tests hang on is timed out, never killed, and costs seconds'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# The project (fixtures/testgen/loop): positives() walks its array with
# `i++;` on a line of its own, so the mutant that removes it loops for ever;
# the existing test never calls positives().  loop-call.txt only calls it
# (it asserts nothing), loop-good.txt asserts what it counts.  The mutants
# gate's timeout is 300 s; a mutant's run is bounded by a multiple of the
# unmutated run instead (mutant_timeout_factor), so the gate ends in seconds.
LOOP=$FIXTURES/testgen

test_expect_success 'setup: the project in a repository' '
	cp -R "$LOOP/loop" repo &&
	make_repo repo
'

campaign() { # NAME REPLY: a one-attempt testgen campaign of positives()
	cat >"$1.yaml" <<-EOF
	name: $1
	kind: testgen
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ["src/*.c"]
	  query: |
	    (function_definition
	      declarator: (function_declarator declarator: (identifier) @n)
	      (#eq? @n "positives")) @fn
	  capture: fn
	test_paths: ["tests/t_gen_*.c"]
	provider: {kind: command, command: "cat $LOOP/$2"}
	edit_format: search-replace
	attempts: 1
	gates:
	  - {name: build, command: make}
	  - {name: mutants, kind: mutants, command: make -s check, timeout: 300}
	EOF
}

mutants_of() { # STORE FIELD
	store_query "$1" "select $2 from gate_runs where gate = 'mutants'"
}

test_expect_success 'a test that only calls the function kills nothing: the endless loop times out' '
	campaign call loop-call.txt &&
	test_expect_code 1 sluice run --store c.db call.yaml >out 2>err &&
	test "$(mutants_of c.db verdict)" = fail &&
	mutants_of c.db note >note &&
	grep "^kills 0 of [0-9]* mutants the existing tests miss (.*), 1 timed out after [0-9]* s (line 11: statement removed: i++;)$" note &&
	test "$(store_query c.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 0
'

test_expect_success 'the timed-out mutant costs seconds, not the gate timeout of 300 s' '
	ms=$(mutants_of c.db duration_ms) &&
	test -n "$ms" &&
	test "$ms" -lt 120000
'

test_expect_success 'a test that asserts kills mutants; the timed-out one is counted apart' '
	campaign good loop-good.txt &&
	sluice run --store g.db good.yaml >out 2>err &&
	test "$(mutants_of g.db verdict)" = pass &&
	mutants_of g.db note >note &&
	grep "^kills [1-9][0-9]* of [0-9]* mutants the existing tests miss ([0-9]* killed by both, [0-9]* survive), 1 timed out after [0-9]* s (line 11: statement removed: i++;): line " note &&
	test "$(mutants_of g.db duration_ms)" -lt 120000
'

test_expect_success 'mutant_timeout_factor belongs to mutants gates and is at least 1' '
	sed "s/{name: build, command: make}/{name: build, command: make, mutant_timeout_factor: 3}/" \
		good.yaml >bad.yaml &&
	test_expect_code 2 sluice run --store b.db bad.yaml 2>err &&
	grep -q "bad.yaml:[0-9]*:[0-9]*: .mutant_timeout_factor. belongs to mutants gates" err &&
	sed "s/timeout: 300}/timeout: 300, mutant_timeout_factor: 0}/" good.yaml >zero.yaml &&
	test_expect_code 2 sluice run --store z.db zero.yaml 2>err &&
	grep -q "zero.yaml:[0-9]*:[0-9]*: .*mutant_timeout_factor" err &&
	test ! -e b.db && test ! -e z.db
'

test_done
