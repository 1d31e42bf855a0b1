#!/bin/sh
test_description='fix campaigns: targets from a real analyzer (cppcheck) in the jail, the finding-gone proof'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# The project (examples/fix/project): cppcheck finds genuine defects
# in five functions of src/calc.c; the canned candidates
# (examples/fix/replies, chosen by pick.sh from the prompt) are:
#   dup_name   frees before the early return: the right fix
#   sum4       fixes the loop and reads buf[4] on a new line: the finding moved
#   sign       adds a cppcheck-suppress comment
#   mid3       drops the out-of-bounds read and returns the wrong element: a test breaks
#   count_pos  guts the function to "return 0"
CANDIDATES=$EXAMPLES/fix/replies

test_have_prereq_cmd() { command -v "$1" >/dev/null 2>&1; }

test_expect_success 'setup: the project in a repository, the fix campaign' '
	test_have_prereq_cmd cppcheck &&
	cp -R "$EXAMPLES/fix/project" repo &&
	make_repo repo &&
	cat >fix.yaml <<-EOF &&
	name: fix
	kind: fix
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ["src/*.c"]
	  query: "(function_definition) @fn"
	provider: {kind: command, command: "sh $CANDIDATES/pick.sh $CANDIDATES"}
	edit_format: node
	attempts: 1
	jobs: 1
	instructions: Fix the finding.
	gates:
	  - {name: build, command: make}
	  - {name: analyzer, kind: finding-gone, format: gcc, command: "make -s scan"}
	  - {name: test, kind: test, format: tap, command: "make -s check"}
	EOF
	{ sluice run --store s.db fix.yaml >out 2>err ||
	{ cat out err; false; }; }
'

from_file() { # NAME FINDINGS-FILE FORMAT: fix.yaml renamed, without its query, findings from the file
	sed -e "s/^name: fix/name: $1/" -e "/^  query:/d" fix.yaml &&
	echo "findings: {report: $2, format: $3}"
}

test_expect_success 'each function with findings is one target; findings in one function merge' '
	store_query s.db "select path || \":\" || start_line || \"-\" || end_line from targets order by start_line" >actual &&
	cat >expect <<-\EOF &&
	src/calc.c:7-16
	src/calc.c:18-28
	src/calc.c:30-39
	src/calc.c:41-49
	src/calc.c:51-59
	EOF
	test_cmp expect actual
'

test_expect_success 'the prompt carries the findings of its unit, rule and related locations' '
	store_query s.db "select prompt from attempts a join targets t on t.id = a.target_id where t.start_line = 51" >prompt &&
	grep -q "src/calc.c:58:9: warning: Uninitialized variable: c \[uninitvar\]" prompt &&
	grep -q "src/calc.c:57:4: warning: Uninitialized variable: c \[legacyUninitvar\]" prompt &&
	grep -q "^  src/calc.c:55: note: Assuming condition is false" prompt &&
	! grep -q "memleak" prompt
'

verdict_of() { # START_LINE GATE: verdict and note of that gate on that target
	store_query s.db "select g.verdict || \": \" || coalesce(g.note, \"\") from gate_runs g join candidates c on c.id = g.candidate_id join targets t on t.id = c.target_id where t.start_line = $1 and g.gate = \"$2\""
}

test_expect_success 'the right fix is proposed with its finding gone' '
	test "$(verdict_of 18 analyzer)" = "pass: the target'"'"'s findings are gone" &&
	test "$(verdict_of 18 test | cut -d: -f1)" = pass &&
	test "$(store_query s.db "select state from targets where start_line = 18")" = proposed
'

test_expect_success 'a fix that moves the finding to another line is rejected' '
	test "$(verdict_of 7 analyzer)" = "fail: moved: src/calc.c:14 [arrayIndexOutOfBounds] is now at line 15"
'

test_expect_success 'a suppression comment is rejected' '
	test "$(verdict_of 30 analyzer)" = "fail: silences the analyzer: adds '"'"'cppcheck-suppress'"'"' at src/calc.c:38"
'

test_expect_success 'a fix that breaks a test passes the analyzer and is rejected by the tests' '
	test "$(verdict_of 41 analyzer | cut -d: -f1)" = pass &&
	verdict_of 41 test >v &&
	grep -q "^fail: broken: mid3" v
'

test_expect_success 'gutting the function is rejected as deleting code' '
	test "$(verdict_of 51 analyzer)" = "fail: deletes code: removes 6 of the 9 lines of src/calc.c:51-59 and adds 1"
'

test_expect_success 'the funnel: five targets, one proposed' '
	grep -q "targets  *5" out &&
	grep -q "proposed  *1" out &&
	grep -q "build  *5 passed, 0 failed" out &&
	grep -q "analyzer  *2 passed, 3 failed" out &&
	grep -q "test  *1 passed, 1 failed" out
'

test_expect_success 'baseline shows the findings the targets come from' '
	sluice baseline --store s.db fix.yaml >bl &&
	grep -q "^gate analyzer (finding-gone, gcc, expect pass): pass on the base (exit 0), 6 findings: the targets, each must be gone" bl
'

test_expect_success 'findings from a file: only the units it names are targets, the gate still proves' '
	echo "src/calc.c:25:3: warning: Memory leak: p [memleak]" >leak.txt &&
	sed -e "s/^name: fix/name: fix-file/" fix.yaml >file.yaml &&
	echo "findings: {report: leak.txt, format: gcc}" >>file.yaml &&
	sluice run --store f.db file.yaml >out &&
	test "$(store_query f.db "select path || \":\" || start_line || \":\" || state from targets")" = src/calc.c:18:proposed &&
	store_query f.db "select prompt from attempts" >prompt &&
	grep -q "Memory leak: p \[memleak\]" prompt &&
	! grep -q "arrayIndexOutOfBounds" prompt
'

test_expect_success 'without a query a fix campaign targets the functions that hold findings' '
	sed -e "s/^name: fix/name: fix-noquery/" -e "/^  query:/d" fix.yaml >nq.yaml &&
	! grep -q "^  query:" nq.yaml &&
	{ sluice run --store nq.db nq.yaml >out 2>err ||
	{ cat out err; false; }; } &&
	store_query nq.db "select path || \":\" || start_line || \"-\" || end_line || \" \" || unit || \" \" || state from targets order by start_line" >actual &&
	cat >expect <<-\EOF &&
	src/calc.c:7-16 function failed
	src/calc.c:18-28 function proposed
	src/calc.c:30-39 function failed
	src/calc.c:41-49 function failed
	src/calc.c:51-59 function failed
	EOF
	test_cmp expect actual &&
	grep -q "proposed  *1" out
'

test_expect_success 'a finding outside every function makes its file one target that holds all its findings' '
	printf "%s\n" "src/calc.c:25:3: warning: Memory leak: p [memleak]" \
		"src/calc.c:3:1: warning: include not needed [unusedInclude]" >outside.txt &&
	from_file fix-outside outside.txt gcc >outside.yaml &&
	{ sluice run --store o.db outside.yaml >out 2>err; rc=$?; } &&
	test $rc = 1 &&
	test "$(store_query o.db "select path || \" \" || unit || \" \" || start_line || \"-\" || end_line from targets")" = "src/calc.c file 1-$(($(wc -l <repo/src/calc.c) + 1))" &&
	store_query o.db "select prompt from attempts" >prompt &&
	grep -q "^src/calc.c:3:1: warning: include not needed \[unusedInclude\]" prompt &&
	grep -q "^src/calc.c:25:3: warning: Memory leak: p \[memleak\]" prompt
'

test_expect_success 'a finding in a file outside the campaign stays unplaced and is counted' '
	printf "%s\n" "src/calc.c:25:3: warning: Memory leak: p [memleak]" \
		"tests/check.c:3:1: warning: style [x]" >elsewhere.txt &&
	from_file fix-elsewhere elsewhere.txt gcc >elsewhere.yaml &&
	sluice run --store e.db elsewhere.yaml >out 2>err &&
	test "$(store_query e.db "select unit || \" \" || start_line from targets")" = "function 18"
'

test_expect_success SCRIPT 'the progress on a terminal says where the findings went' '
	script -qec "sluice run --store e2.db elsewhere.yaml" /dev/null </dev/null >typescript 2>&1 &&
	grep -q "fix: 2 findings on the base, 1 targets; 1 findings lie outside the campaign.s files" typescript &&
	{ script -qec "sluice run --store o2.db outside.yaml" /dev/null </dev/null >typescript 2>&1; rc=$?; } &&
	test $rc = 1 &&
	grep -q "fix: 2 findings on the base, 1 targets (1 whole files: findings outside every unit of the query)" typescript
'

test_expect_success 'host paths in a findings file are put on the repository files' '
	printf "%s\n" "$TRASH/repo/src/calc.c:25:3: warning: Memory leak: p [memleak]" \
		"/ci/work/proj/src/calc.c:14:12: error: Array index out of bounds [arrayIndexOutOfBounds]" \
		"../src/calc.c:58:9: warning: Uninitialized variable: c [uninitvar]" \
		"calc.h:1:1: warning: somewhere [x]" >host.txt &&
	from_file fix-host host.txt gcc >host.yaml &&
	sluice run --store h.db host.yaml >out 2>err &&
	test "$(store_query h.db "select group_concat(start_line, \" \") from (select start_line from targets order by start_line)")" = "7 18 51" &&
	store_query h.db "select prompt from attempts a join targets t on t.id = a.target_id where t.start_line = 7" >prompt &&
	grep -q "^src/calc.c:14:12: error: Array index out of bounds" prompt &&
	! grep -q "/ci/work" prompt
'

test_expect_success 'SARIF locations through uriBaseId and file:// URIs reach their units' '
	cat >host.sarif <<-EOF &&
	{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
	  "originalUriBaseIds": {"ROOT": {"uri": "file://$TRASH/repo/"}},
	  "results": [
	    {"ruleId": "memleak", "message": {"text": "Memory leak: p"},
	     "locations": [{"physicalLocation": {"artifactLocation": {"uri": "src/calc%2Ec", "uriBaseId": "ROOT"}, "region": {"startLine": 25}}}]},
	    {"ruleId": "uninitvar", "message": {"text": "Uninitialized variable: c"},
	     "locations": [{"physicalLocation": {"artifactLocation": {"uri": "file:///elsewhere/proj/src/calc.c"}, "region": {"startLine": 58}}}]}]}]}
	EOF
	from_file fix-sarif host.sarif sarif >sarif.yaml &&
	sluice run --store hs.db sarif.yaml >out 2>err &&
	test "$(store_query hs.db "select group_concat(start_line, \" \") from (select start_line from targets order by start_line)")" = "18 51"
'

test_expect_success SCRIPT 'a path that several files end with is reported, not guessed' '
	git clone -q repo repo2 &&
	mkdir repo2/lib &&
	(cd repo2 && cp src/calc.c lib/calc.c && git add lib && git commit -qm "a second calc.c") &&
	printf "%s\n" "src/calc.c:25:3: warning: Memory leak: p [memleak]" \
		"calc.c:58:9: warning: Uninitialized variable: c [uninitvar]" >amb.txt &&
	from_file fix-amb amb.txt gcc | sed "s/^repository: repo$/repository: repo2/" >amb.yaml &&
	grep -q "^repository: repo2$" amb.yaml &&
	script -qec "sluice run --store amb.db amb.yaml" /dev/null </dev/null >typescript 2>&1 &&
	grep -q "findings: calc.c: ambiguous, several tracked files end with it" typescript &&
	grep -q "fix: 2 findings on the base, 1 targets; 1 findings not placed (sluice status lists them)" typescript &&
	! grep -q "outside the campaign.s files" typescript &&
	test "$(store_query amb.db "select start_line from targets")" = 18
'

test_expect_success 'a findings file that cannot be read is an input error' '
	sed -e "s/^name: fix/name: fix-nofile/" fix.yaml >nofile.yaml &&
	echo "findings: {report: missing.sarif, format: sarif}" >>nofile.yaml &&
	test_expect_code 2 sluice run --store nf.db nofile.yaml 2>err &&
	grep -q "findings: .*missing.sarif" err
'

test_expect_success 'a fix campaign without a finding-gone gate is refused with its line' '
	sed "/finding-gone/d" fix.yaml >nogate.yaml &&
	test_expect_code 2 sluice run --store n.db nogate.yaml 2>err &&
	grep -q "^sluice: nogate.yaml:2:7: a fix campaign needs a gate of kind finding-gone" err
'

test_expect_success 'bad job keys are one-line errors naming the line, nothing stored' '
	sed "s/^kind: fix/kind: repair/" fix.yaml >k.yaml &&
	test_expect_code 2 sluice run --store z.db k.yaml 2>err &&
	test "$(cat err)" = "sluice: k.yaml:2:7: '"'"'kind'"'"' must be one of: migration, fix, testgen" &&
	sed "s/format: gcc, command: \"make -s scan\"/format: lcov, command: \"make -s scan\"/" fix.yaml >fm.yaml &&
	test_expect_code 2 sluice run --store z.db fm.yaml 2>err &&
	grep -q "^sluice: fm.yaml:16:50: .format. of a finding-gone gate must be gcc, gcc-json, sarif, tap, junit, automake or ctest$" err &&
	sed "s/^kind: fix/kind: migration/" file.yaml >mf.yaml &&
	test_expect_code 2 sluice run --store z.db mf.yaml 2>err &&
	grep -q "^sluice: mf.yaml:18:11: .findings. belongs to fix campaigns$" err &&
	! test -e z.db
'

test_expect_success 'an analyzer that finds nothing on the base cannot judge' '
	sed "s/make -s scan/true/" fix.yaml >clean.yaml &&
	test_expect_code 1 sluice run --store c.db clean.yaml 2>err &&
	grep -q "gate .analyzer. reports no finding on the base commit" err
'

# Failing tests as findings: clamp_above fails on the base and its TAP
# diagnostic names src/calc.c:65, inside clamp().
tests_campaign() { # NAME CANDIDATE-DIR
	cat <<-EOF
	name: $1
	kind: fix
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ["src/*.c"]
	  query: "(function_definition) @fn"
	provider: {kind: command, command: "sh $CANDIDATES/pick.sh $2"}
	edit_format: node
	attempts: 1
	gates:
	  - {name: build, command: make}
	  - {name: failing, kind: finding-gone, format: tap, command: "make -s check"}
	  - {name: test, kind: test, format: tap, command: "make -s check"}
	EOF
}

test_expect_success 'a failing test becomes a target on the function its failure names' '
	tests_campaign tests-right "$CANDIDATES" >right.yaml &&
	{ sluice run --store t.db right.yaml >out 2>err ||
	{ cat out err; false; }; } &&
	test "$(store_query t.db "select path || \":\" || start_line from targets")" = src/calc.c:61 &&
	store_query t.db "select prompt from attempts" | grep -q "^src/calc.c:65: error: failing test clamp_above: src/calc.c:65: clamp(15, 0, 10) != 10 (tests/check.c:40) \[test:clamp_above\]"
'

test_expect_success 'the candidate that makes it pass is proposed' '
	test "$(store_query t.db "select verdict || \" \" || note from gate_runs where gate = \"failing\"")" = "pass the target'"'"'s findings are gone" &&
	grep -q "proposed  *1" out
'

test_expect_success 'a candidate that leaves it failing is rejected' '
	tests_campaign tests-left "$CANDIDATES/left" >left.yaml &&
	test_expect_code 1 sluice run --store l.db left.yaml >out &&
	test "$(store_query l.db "select verdict || \" \" || note from gate_runs where gate = \"failing\"")" = "fail still failing: clamp_above" &&
	grep -q "proposed  *0" out
'

# The same failing test through ctest, run in the jail, and through reports
# made on the host: automake's test-suite.log and ctest's JUnit.
test_expect_success 'setup: the project with a CMake build whose tests ctest runs one by one' '
	git clone -q repo repo3 &&
	cat >repo3/CMakeLists.txt <<-\EOF &&
	cmake_minimum_required(VERSION 3.13)
	project(calc C)
	enable_testing()
	add_executable(check tests/check.c src/calc.c)
	target_include_directories(check PRIVATE src)
	foreach(t dup_name sign mid3 count_pos clamp_inside clamp_above sum4_input)
	  add_test(NAME ${t} COMMAND sh -c "./check >all; grep -q \"^ok [0-9]* - ${t}\$\" all || { grep -A1 \" - ${t}\$\" all; exit 1; }")
	endforeach()
	EOF
	(cd repo3 && git add CMakeLists.txt && git commit -qm "cmake") &&
	cmake -S repo3 -B hostbuild >/dev/null &&
	cmake --build hostbuild >/dev/null &&
	{ (cd hostbuild && ctest --output-junit ctest.xml >ctest.out); rc=$?; } &&
	test $rc != 0 &&
	grep -q "clamp_above .*Failed" hostbuild/ctest.out
'

CTEST_CMD='cmake -S . -B b >/dev/null && cmake --build b >/dev/null && cd b && ctest --output-on-failure'
ctest_campaign() { # NAME CANDIDATE-DIR
	tests_campaign "$1" "$2" |
	sed -e "s/^repository: repo$/repository: repo3/" -e "/name: failing/d" &&
	echo "  - {name: failing, kind: finding-gone, format: ctest, command: \"$CTEST_CMD\"}"
}

test_expect_success 'a test failing under ctest in the jail is a target; the fix makes it pass' '
	ctest_campaign ctest-right "$CANDIDATES" >ct.yaml &&
	grep -q "format: ctest" ct.yaml &&
	{ sluice run --store ct.db ct.yaml >out 2>err ||
	{ cat out err; false; }; } &&
	test "$(store_query ct.db "select path || \":\" || start_line || \":\" || state from targets")" = src/calc.c:61:proposed &&
	store_query ct.db "select prompt from attempts" | grep -q "^src/calc.c:65: error: failing test clamp_above: not ok 6 - clamp_above" &&
	test "$(store_query ct.db "select verdict || \" \" || note from gate_runs where gate = \"failing\"")" = "pass the target'"'"'s findings are gone"
'

test_expect_success 'under ctest, a candidate that leaves the test failing is rejected' '
	ctest_campaign ctest-left "$CANDIDATES/left" >ctl.yaml &&
	test_expect_code 1 sluice run --store ctl.db ctl.yaml >out &&
	test "$(store_query ctl.db "select verdict || \" \" || note from gate_runs where gate = \"failing\"")" = "fail still failing: clamp_above"
'

test_expect_success 'ctest JUnit made on the host as the findings file' '
	from_file fix-ctest-junit hostbuild/ctest.xml ctest >cj.yaml &&
	sluice run --store cj.db cj.yaml >out 2>err &&
	test "$(store_query cj.db "select start_line || \":\" || state from targets")" = 61:proposed &&
	store_query cj.db "select prompt from attempts" | grep -q "src/calc.c:65: error: failing test clamp_above"
'

test_expect_success 'automake test-suite.log as the findings file: its sections place the failures' '
	cat >test-suite.log <<-\EOF &&
	==========================================
	   calc 1.0: ./test-suite.log
	==========================================

	# TOTAL: 7
	# PASS:  6
	# FAIL:  1

	.. contents:: :depth: 2

	FAIL: tests/clamp_above
	=======================

	not ok 6 - clamp_above
	# src/calc.c:65: clamp(15, 0, 10) != 10
	FAIL tests/clamp_above (exit status: 1)

	EOF
	from_file fix-am test-suite.log automake >am.yaml &&
	sluice run --store am.db am.yaml >out 2>err &&
	test "$(store_query am.db "select start_line || \":\" || state from targets")" = 61:proposed &&
	store_query am.db "select prompt from attempts" | grep -q "^src/calc.c:65: error: failing test tests/clamp_above: not ok 6 - clamp_above"
'

test_done
