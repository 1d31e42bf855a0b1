#!/bin/sh
test_description='fix campaigns: the test that judges a fix is protected when its failure names only the code, and test_paths name the test files'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# examples/fix/project, whose clamp_above fails on the base (clamp(15, 0,
# 10) returns 0).  Its diagnostic is cut to the code's place
# ("# src/calc.c:65: clamp(15, 0, 10) != 10"): the failure names no test
# file.  The candidate (examples/fix/replies/tests/weaken.txt) touches
# clamp() and makes the test expect 0.  The campaign's paths hold the
# tests too (else no candidate may edit them).

test_expect_success 'setup: a failure text naming only the code, a test-weakening candidate' '
	cp -R "$EXAMPLES/fix/project" repo &&
	sed "s|printf(\"# %s: %s (%s:%d)\\\\n\", where, what, file, line);|printf(\"# %s: %s\\\\n\", where, what); (void)file; (void)line;|" \
		"$EXAMPLES/fix/project/tests/check.c" >repo/tests/check.c &&
	grep -q "(void)file;" repo/tests/check.c &&
	make_repo repo &&
	(cd repo && make -s tests/check && ./tests/check >../tap; rm -f tests/check) &&
	grep -q "^# src/calc.c:65: clamp(15, 0, 10) != 10$" tap &&
	cat >fix.yaml <<-EOF
	name: names
	kind: fix
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ["src/*.c", "tests/*.c", "checks/*.c"]
	provider: {kind: command, command: "cat $EXAMPLES/fix/replies/tests/weaken.txt"}
	edit_format: udiff
	attempts: 1
	jobs: 1
	gates:
	  - {name: build, command: make}
	  - {name: failing, kind: finding-gone, format: tap, command: "make -s check"}
	  - {name: test, kind: test, format: tap, command: "make -s check"}
	EOF
'

test_expect_success 'the test file that holds the failing test.s name is protected' '
	test_expect_code 1 sluice run --store s.db fix.yaml >out 2>err &&
	test "$(store_query s.db "select path || \":\" || start_line from targets")" = "src/calc.c:61" &&
	test "$(store_query s.db "select verdict || \": \" || note from gate_runs where gate = \"failing\"")" = "fail: changes the test that judges it: tests/check.c (test clamp_above)" &&
	grep -q "proposed  *0" out
'

test_expect_success 'setup: the tests in checks/, a directory no rule knows' '
	cp -R "$EXAMPLES/fix/project" repo2 &&
	mkdir repo2/checks &&
	mv repo2/tests/check.c repo2/checks/calc.c && rmdir repo2/tests &&
	sed "s|tests/check|checks/calc|g" "$EXAMPLES/fix/project/Makefile" >repo2/Makefile &&
	make_repo repo2 &&
	sed "s|tests/check.c|checks/calc.c|g" "$EXAMPLES/fix/replies/tests/weaken.txt" >weaken2.txt &&
	sed -e "s/^name: names/name: paths/" -e "s/^repository: repo/repository: repo2/" \
		-e "s|cat .*weaken.txt|cat $TRASH/weaken2.txt|" fix.yaml >paths.yaml &&
	grep -q weaken2 paths.yaml
'

test_expect_success 'without test_paths checks/calc.c judges nothing: the weakened test is proposed' '
	sluice run --store n.db paths.yaml >out 2>err &&
	grep -q "proposed  *1" out
'

test_expect_success 'test_paths makes the files they match the tests that judge the fix' '
	sed "s/^name: paths/name: paths-tests/" paths.yaml >tp.yaml &&
	echo "test_paths: [\"checks/*.c\"]" >>tp.yaml &&
	test_expect_code 1 sluice run --store t.db tp.yaml >out 2>err &&
	test "$(store_query t.db "select verdict || \": \" || note from gate_runs where gate = \"failing\"")" = "fail: changes the test that judges it: checks/calc.c (test clamp_above)"
'

test_expect_success 'test_paths is refused in a migration campaign' '
	sed "/^kind: fix/d" tp.yaml >mig.yaml &&
	echo "query: x" >/dev/null &&
	test_expect_code 2 sluice run --store m.db mig.yaml 2>err &&
	grep -q "test_paths. belongs to testgen and fix campaigns" err &&
	! test -e m.db
'

test_done
