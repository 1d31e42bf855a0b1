#!/bin/sh
test_description='per-test gates: base failures left unblamed are said once, in the run and in show; a missing report is named'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# The calc fixture: tests.sh prints TAP where broken_at_base fails on the
# base and every candidate; the rules rewrite legacy_scale(b) in sub().
campaign() { # NAME GATE
	calc_campaign "$1" "\${x}" b "$2"
}

test_expect_success 'setup: the calc fixture without its flaky test' '
	mkdir repo && cp -R "$FIXTURES/calc/." repo/ &&
	sed -e "s/^echo \"1..4\"/echo \"1..3\"/" -e "/flaky/d" -e "/\.state/d" \
		"$FIXTURES/calc/tests.sh" >repo/tests.sh &&
	make_repo repo &&
	(cd repo && sh tests.sh) >tap &&
	grep -q "^not ok 3 - broken_at_base" tap &&
	test "$(grep -c "^ok" tap)" = 2
'

test_expect_success 'the run says once which base failures no candidate is blamed for, and the keys that would' '
	campaign keep "  - {name: test, kind: test, format: tap, command: \"sh tests.sh\"}" >keep.yaml &&
	sluice run --store k.db keep.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	grep "not blamed" err >said &&
	test "$(wc -l <said)" = 1 &&
	test "$(cat said)" = "baseline: gate '"'"'test'"'"': 1 test failing on the base is not blamed, a candidate passes without fixing it: broken_at_base (name it in the gate'"'"'s must_fix, or set goal: fix)"
'

test_expect_success 'show of the proposed candidate says it too' '
	id=$(store_query k.db "select id from candidates") &&
	sluice show --store k.db "$id" >show &&
	grep -q "^gate test .*pass.*(not blamed (failing on the base; must_fix or goal: fix would blame them): broken_at_base)" show
'

test_expect_success 'with must_fix or goal: fix nothing is said' '
	campaign named "  - {name: test, kind: test, format: tap, command: \"sh tests.sh\", must_fix: [broken_at_base]}" >named.yaml &&
	test_expect_code 1 sluice run --store n.db named.yaml >out 2>err &&
	! grep -q "not blamed" err &&
	{ campaign goal "  - {name: test, kind: test, format: tap, command: \"sh tests.sh\"}" &&
	  echo "goal: fix"; } >goal.yaml &&
	test_expect_code 1 sluice run --store g.db goal.yaml >out 2>err &&
	! grep -q "not blamed" err
'

test_expect_success 'a report path that names no file is named when the base reports no tests' '
	campaign typo "  - {name: test, kind: test, format: junit, report: build/junit.xml, command: \"sh tests.sh\"}" >typo.yaml &&
	test_expect_code 1 sluice run --store t.db typo.yaml >out 2>err &&
	grep -q "^sluice: gate '"'"'test'"'"' reports no tests on the base commit: its report '"'"'build/junit.xml'"'"' was not found (exit 0)" err
'

test_done
