#!/bin/sh
test_description='fix campaigns: findings that cannot be placed are kept with their reason, counted apart, shown by status and the reports'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# examples/fix/project with a second calc.c (lib/calc.c), so "calc.c" is
# ambiguous; the findings file holds one finding that lands in dup_name()
# (src/calc.c:18-28, whose canned candidate is the right fix), one in a
# file the repository does not have, one ambiguous, and one in a tracked
# file outside the campaign's paths (counted only).
CANDIDATES=$EXAMPLES/fix/replies

test_expect_success 'setup: a fix campaign whose findings file has placed and unplaced findings' '
	command -v cppcheck >/dev/null &&
	cp -R "$EXAMPLES/fix/project" repo &&
	mkdir repo/lib &&
	cp repo/src/calc.c repo/lib/calc.c &&
	make_repo repo &&
	printf "%s\n" "src/calc.c:25:3: warning: Memory leak: p [memleak]" \
		"gone/missing.c:4:1: warning: nowhere to be seen [ghost]" \
		"calc.c:58:9: warning: Uninitialized variable: c [uninitvar]" \
		"tests/check.c:3:1: warning: style [x]" >findings.txt &&
	cat >fix.yaml <<-EOF &&
	name: fix
	kind: fix
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ["src/*.c"]
	provider: {kind: command, command: "sh $CANDIDATES/pick.sh $CANDIDATES"}
	edit_format: node
	attempts: 1
	jobs: 1
	instructions: Fix the finding.
	gates:
	  - {name: build, command: make}
	  - {name: analyzer, kind: finding-gone, format: gcc, command: "make -s scan"}
	  - {name: test, kind: test, format: tap, command: "make -s check"}
	findings: {report: findings.txt, format: gcc}
	EOF
	{ sluice run --store s.db fix.yaml >out 2>err || { cat out err; false; }; }
'

test_expect_success 'the placed finding is the one target' '
	test "$(store_query s.db "select path || \":\" || start_line || \"-\" || end_line from targets")" = "src/calc.c:18-28"
'

test_expect_success 'status --json lists the unplaced findings with their reasons' '
	sluice status --store s.db --json >status.json &&
	jq -c ".unplaced[] | [.file, .line, .rule, .reason]" status.json >actual &&
	cat >expect <<-\EOF &&
	["gone/missing.c",4,"ghost","not a tracked file of the repository"]
	["calc.c",58,"uninitvar","ambiguous, several tracked files end with it"]
	EOF
	test_cmp expect actual &&
	test "$(jq -r ".unplaced[1].message" status.json)" = "Uninitialized variable: c"
'

test_expect_success 'targets --json lists them after the targets, not with --state' '
	sluice targets --store s.db --json >targets.json &&
	test "$(jq -c "select(.unplaced == null) | .path" targets.json)" = "\"src/calc.c\"" &&
	jq -c "select(.unplaced) | .unplaced | [.file, .line, .rule, .reason]" targets.json >actual &&
	cat >expect <<-\EOF &&
	["gone/missing.c",4,"ghost","not a tracked file of the repository"]
	["calc.c",58,"uninitvar","ambiguous, several tracked files end with it"]
	EOF
	test_cmp expect actual &&
	sluice targets --store s.db --json --state pending,proposed,failed >filtered.json &&
	! grep -q unplaced filtered.json
'

test_expect_success 'status and the run summary count them' '
	sluice status --store s.db >status.txt &&
	grep -q "^findings not placed: 2 " status.txt &&
	grep -q "^findings not placed: 2 " out
'

test_expect_success SCRIPT 'the progress line counts them apart from those outside the campaign.s files' '
	script -qec "sluice run --store p.db fix.yaml" /dev/null </dev/null >typescript 2>&1 &&
	grep -q "fix: 4 findings on the base, 1 targets; 2 findings not placed (sluice status lists them); 1 findings lie outside the campaign.s files" typescript
'

test_expect_success 'a rerun does not record them twice' '
	sluice run --store s.db fix.yaml >out2 2>err2 &&
	test "$(store_query s.db "select count(*) from unplaced")" = 2
'

test_expect_success 'report.md and report.html have a section with the reasons' '
	sluice export --store s.db --out export >out &&
	grep -q "^## Findings not placed (2)$" export/report.md &&
	grep -q "^- .gone/missing.c:4. \[ghost\] nowhere to be seen: not a tracked file of the repository$" export/report.md &&
	grep -q "^- .calc.c:58. \[uninitvar\] Uninitialized variable: c: ambiguous, several tracked files end with it$" export/report.md &&
	grep -q "<h2>Findings not placed (2)</h2>" export/report.html &&
	grep -q "<td>gone/missing.c:4</td><td>ghost</td><td>nowhere to be seen</td><td>not a tracked file of the repository</td>" export/report.html
'

test_done
