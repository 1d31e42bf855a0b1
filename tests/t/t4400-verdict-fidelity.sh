#!/bin/sh
test_description='verdict fidelity: a known bug, five canned candidates, every gate style, broken gates'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# The project (tests/fixtures/fidelity): clamp() returns lo for values above
# hi; the test clamp_above fails on the base.  The candidates (canned
# search/replace replies, fed by the command provider) are:
#   right        the fix
#   noop         changes the buggy line without changing what it does
#   wrong        changes the condition, the bug stays
#   regression   the fix, and span() broken
#   compile-error  the fix calls an undeclared name: nothing builds
#   vanish       the fix, and the span test deleted
CANDIDATES=$FIXTURES/fidelity/candidates

TAP_GATE='  - {name: test, kind: test, format: tap, command: "make -s check"}'
EXIT_GATE='  - {name: test, kind: test, command: "make -s check", expect: fix}'
MUST_FIX_GATE='  - {name: test, kind: test, format: tap, command: "make -s check", must_fix: [clamp_above]}'

# campaign NAME CANDIDATE [LINE...]: the campaign with the gates (and any
# top-level lines) given; the provider answers with the canned candidate.
campaign() {
	name=$1 cand=$2
	shift 2
	cat <<EOF2
name: $name
repository: repo
scratch: $TRASH/scratch
targets:
  language: c
  paths: ["src/*.c", "tests/*.c"]
  query: |
    (function_definition
      declarator: (function_declarator declarator: (identifier) @n)
      (#eq? @n "clamp")) @fn
  capture: fn
provider: {kind: command, command: "touch $TRASH/asked; cat $CANDIDATES/$cand.txt"}
edit_format: search-replace
attempts: 1
jobs: 1
EOF2
	for line in "$@"; do printf '%s\n' "$line"; done
}

verdicts() { # STORE: gate:verdict of every gate run, in order
	store_query "$1" "select group_concat(gate || ':' || verdict, ' ') from (select gate, verdict from gate_runs order by id)"
}

test_note() { # STORE: the note of the test gate's run
	store_query "$1" "select coalesce(note, '') from gate_runs where gate = 'test'"
}

# judge STYLE CANDIDATE VERDICT NOTE: run the candidate under the gate style,
# then check the exit status, the verdicts, the test gate's note and (when it
# failed) that the feedback names what the note names.  (j_ names:
# test_expect_code sets $want.)
judge() {
	j_name=$1-$2 j_want=$3 j_note=$4
	case "$1" in
	tap) campaign "$j_name" "$2" "gates:" "$TAP_GATE" ;;
	exit) campaign "$j_name" "$2" "gates:" "$EXIT_GATE" ;;
	mf) campaign "$j_name" "$2" "gates:" "$MUST_FIX_GATE" ;;
	goal) campaign "$j_name" "$2" "goal: fix" "gates:" "$TAP_GATE" ;;
	esac >"$j_name.yaml" &&
	if test "$j_want" = pass
	then
		sluice run --store "$j_name.db" "$j_name.yaml" >"$j_name.out"
	else
		test_expect_code 1 sluice run --store "$j_name.db" "$j_name.yaml" >"$j_name.out"
	fi &&
	test "$(verdicts "$j_name.db")" = "syntax:pass expect:pass test:$j_want" &&
	test "$(test_note "$j_name.db")" = "$j_note" &&
	if test "$j_want" = pass
	then
		grep -q "proposed  *1" "$j_name.out"
	else
		grep -q "proposed  *0" "$j_name.out" &&
		store_query "$j_name.db" "select reason from targets" >"$j_name.reason" &&
		case "$j_note" in
		"broken: "*|"still failing: "*|"vanished: "*)
			grep -q "${j_note#*: }" "$j_name.reason" ;;
		esac
	fi
}

test_expect_success 'setup: the project, its base failing one test' '
	mkdir repo &&
	cp -R "$FIXTURES/fidelity/." repo/ &&
	rm -r repo/candidates &&
	make_repo repo &&
	test_expect_code 2 make -s -C repo check >base.tap &&
	grep -x "not ok 3 - clamp_above" base.tap &&
	test $(grep -c "^ok" base.tap) = 4 &&
	make -s -C repo clean
'

# Styles: tap = a per-test report, no must-fix (the base's passing tests must
# pass; the failing clamp_above is not blamed, so changes that leave the bug
# pass); exit = the exit status only, expect: fix (fails on the base, must
# pass); mf = must_fix: [clamp_above] (must go from fail to pass); goal =
# goal: fix (every test failing on the base must pass, none named).
while IFS='|' read -r style cand verdict note title
do
	test_expect_success "$style, $cand: $title" "judge $style $cand $verdict '$note'"
done <<\EOF
tap|right|pass|not blamed (failing on the base; must_fix or goal: fix would blame them): clamp_above|the right fix passes
tap|noop|pass|not blamed (failing on the base; must_fix or goal: fix would blame them): clamp_above|a no-op passes (the base failure is not blamed)
tap|wrong|pass|not blamed (failing on the base; must_fix or goal: fix would blame them): clamp_above|a wrong fix passes (the base failure is not blamed)
tap|regression|fail|broken: span|the fix with a regression elsewhere fails, naming it
tap|compile-error|fail|no tests parsed|a compile error fails (no test parsed is no pass)
tap|vanish|fail|vanished: span|a deleted test fails as vanished
exit|right|pass||the right fix passes
exit|noop|fail|still fails: the campaign expects a fix|a no-op fails
exit|wrong|fail|still fails: the campaign expects a fix|a wrong fix fails
exit|regression|fail|still fails: the campaign expects a fix|the fix with a regression fails
exit|compile-error|fail|still fails: the campaign expects a fix|a compile error fails
mf|right|pass||the right fix passes
mf|noop|fail|still failing: clamp_above|a no-op fails, naming the test still failing
mf|wrong|fail|still failing: clamp_above|a wrong fix fails, naming the test still failing
mf|regression|fail|broken: span|the fix with a regression fails, naming the broken test
mf|compile-error|fail|no tests parsed|a compile error fails
goal|right|pass||the right fix passes
goal|noop|fail|still failing: clamp_above|a no-op fails, naming the test still failing
goal|wrong|fail|still failing: clamp_above|a wrong fix fails, naming the test still failing
goal|regression|fail|broken: span|the fix with a regression fails, naming the broken test
goal|compile-error|fail|no tests parsed|a compile error fails
EOF

test_expect_success 'the feedback of a goal-fix rejection names the test for the next attempt' '
	store_query goal-noop.db "select reason from targets" >reason &&
	grep -q "must be fixed and still do not pass" reason &&
	grep -q "clamp_above" reason
'

# Broken gates: the campaign stops on the base, before any model call.
test_expect_success 'a missing tool (exit 127) stops the campaign with one line, before any candidate is judged' '
	rm -f asked &&
	campaign tool right "gates:" "  - {name: build, command: \"meson compile\"}" >tool.yaml &&
	test_expect_code 1 sluice run --store tool.db tool.yaml >out 2>err &&
	test "$(grep "^sluice: " err)" = "sluice: gate '"'"'build'"'"' fails on the base commit (exit 127): bash: line 1: meson: command not found" &&
	test "$(store_query tool.db "select count(*) from candidates")" = 0 &&
	test "$(store_query tool.db "select count(*) from attempts")" = 0
'

test_expect_success 'exit 127 stops the campaign even for a gate that expects a fix' '
	campaign tool2 right "gates:" "  - {name: build, command: \"meson compile\", expect: fix}" >tool2.yaml &&
	test_expect_code 1 sluice run --store tool2.db tool2.yaml 2>err &&
	grep -q "^sluice: gate .build. fails on the base commit (exit 127): " err
'

test_expect_success 'a gate failing on the base stops the campaign, naming its exit status and output' '
	rm -f asked &&
	campaign failbase right "gates:" "  - {name: test, kind: test, command: \"make -s check\"}" >failbase.yaml &&
	test_expect_code 1 sluice run --store failbase.db failbase.yaml >out 2>err &&
	test "$(grep -c "^sluice: " err)" = 1 &&
	grep -q "^sluice: gate .test. fails on the base commit (exit 2): make: \*\*\* \[Makefile:[0-9]*: check\] Error 1$" err &&
	grep -q "^tree: " err &&
	grep -q "^baseline: gate .test. on the base" err &&
	test "$(store_query failbase.db "select count(*) from candidates")" = 0 &&
	test "$(store_query failbase.db "select count(*) from attempts")" = 0
'

test_expect_success 'a resumed run checks the stored baseline again and stops the same way' '
	test_expect_code 1 sluice run --store failbase.db failbase.yaml 2>err2 &&
	grep "^sluice: " err >line &&
	grep "^sluice: " err2 >line2 &&
	test_cmp line line2
'

test_expect_success 'a test report missing on the base stops the campaign, naming the file' '
	campaign empty right "gates:" \
		"  - {name: test, kind: test, format: junit, report: results.xml, command: \"make -s check >/dev/null 2>&1; true\"}" >empty.yaml &&
	test_expect_code 1 sluice run --store empty.db empty.yaml 2>err &&
	test "$(grep "^sluice: " err)" = "sluice: gate '"'"'test'"'"' reports no tests on the base commit: its report '"'"'results.xml'"'"' was not found (exit 0): (no output)"
'

test_expect_success 'a fix gate that passes on the base has nothing to fix' '
	campaign nofix right "gates:" "  - {name: build, command: \"true\", expect: fix}" >nofix.yaml &&
	test_expect_code 1 sluice run --store nofix.db nofix.yaml 2>err &&
	test "$(grep "^sluice: " err)" = "sluice: gate '"'"'build'"'"' expects a fix, but passes on the base commit"
'

test_expect_success 'allow_skip: a gate failing on the base is skipped, and the candidate proposed' '
	campaign skip right "gates:" "  - {name: lint, command: \"exit 3\", allow_skip: true}" "$TAP_GATE" >skip.yaml &&
	sluice run --store skip.db skip.yaml >out &&
	test "$(verdicts skip.db)" = "syntax:pass expect:pass lint:skip test:pass" &&
	grep -q "lint  *0 passed, 0 failed, 1 skipped, 0 cached (1 run)" out &&
	sluice status --store skip.db --json >status.json &&
	grep -q "\"gate\":\"lint\",\"runs\":1,\"passed\":0,\"failed\":0,\"skipped\":1,\"cached\":0" status.json &&
	sluice show 1 --store skip.db >show &&
	grep -q "^gates:    3 passed, 0 failed, 1 skipped, 0 cached$" show &&
	sluice show 1 --store skip.db --json >show.json &&
	grep -q "\"gate_counts\":{\"passed\":3,\"failed\":0,\"skipped\":1,\"cached\":0,\"errors\":0}" show.json
'

test_expect_success 'baseline shows the base tests and what each gate blames, before any model call' '
	rm -f asked &&
	campaign bl right "gates:" "$MUST_FIX_GATE" >bl.yaml &&
	sluice baseline --store bl.db bl.yaml >out &&
	cat >expect <<-\EOF &&
	gate test (test, tap, expect pass): fail on the base (exit 2), 5 tests
	  pass  clamp_below  (must pass)
	  pass  clamp_inside  (must pass)
	  fail  clamp_above  (must fix)
	  pass  span  (must pass)
	  pass  midpoint  (must pass)
	EOF
	sed 1d out >actual &&
	test_cmp expect actual &&
	! test -e asked &&
	test "$(store_query bl.db "select count(*) from baselines")" = 2 &&
	sluice baseline --store bl.db bl.yaml >again &&
	test_cmp out again &&
	test "$(store_query bl.db "select count(*) from baselines")" = 2
'

test_expect_success 'baseline --json: without must_fix the base failure is not blamed; with goal fix it must be fixed' '
	campaign bl2 right "gates:" "$TAP_GATE" >bl2.yaml &&
	sluice baseline --store bl.db bl2.yaml --json >bl2.json &&
	grep -q "{\"id\":\"clamp_above\",\"result\":\"fail\",\"blame\":\"not blamed\"}" bl2.json &&
	grep -q "\"expect\":\"pass\",\"allow_skip\":false,\"verdict\":\"fail\",\"exit_status\":2,\"judges\":true,\"error\":null" bl2.json &&
	campaign bl3 right "goal: fix" "gates:" "$TAP_GATE" >bl3.yaml &&
	sluice baseline --store bl.db bl3.yaml --json >bl3.json &&
	grep -q "{\"id\":\"clamp_above\",\"result\":\"fail\",\"blame\":\"must fix\"}" bl3.json &&
	grep -q "\"expect\":\"fix\"" bl3.json
'

test_expect_success 'baseline of a gate that cannot judge: shown, and exit 1 with the same line as run' '
	test_expect_code 1 sluice baseline --store tool.db tool.yaml >out 2>err &&
	test "$(grep "^sluice: " err)" = "sluice: gate '"'"'build'"'"' fails on the base commit (exit 127): bash: line 1: meson: command not found" &&
	grep -q "^gate build (custom, expect pass): fail on the base (exit 127)$" out &&
	grep -q "^  cannot judge: gate .build. fails on the base commit (exit 127)" out
'

# automake's output shape (automake is not a dependency: the TAP lines are
# rewritten as `make check` prints them), read from the output and from a
# test-suite.log-like report.
AM_CMD='make -s check | sed -e \"s/^ok [0-9]* - /PASS: /\" -e \"s/^not ok [0-9]* - /FAIL: /\"'
test_expect_success 'automake results: must-fix from the output; the right fix passes, a regression is named' '
	campaign am-right right "gates:" "  - {name: test, kind: test, format: automake, command: \"$AM_CMD\", must_fix: [clamp_above]}" >am-right.yaml &&
	sluice run --store am-right.db am-right.yaml >out &&
	test "$(verdicts am-right.db)" = "syntax:pass expect:pass test:pass" &&
	campaign am-reg regression "gates:" "  - {name: test, kind: test, format: automake, command: \"$AM_CMD\", must_fix: [clamp_above]}" >am-reg.yaml &&
	test_expect_code 1 sluice run --store am-reg.db am-reg.yaml >out &&
	test "$(test_note am-reg.db)" = "broken: span"
'

test_expect_success 'automake results from a report file; a no-op under goal fix fails' '
	campaign am-log noop "goal: fix" "gates:" "  - {name: test, kind: test, format: automake, report: test-suite.log, command: \"$AM_CMD >test-suite.log\"}" >am-log.yaml &&
	test_expect_code 1 sluice run --store am-log.db am-log.yaml >out &&
	test "$(test_note am-log.db)" = "still failing: clamp_above"
'

test_done
