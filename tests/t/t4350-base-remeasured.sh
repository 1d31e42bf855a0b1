#!/bin/sh
test_description='a gate fixed after a base refusal: every gate is measured on the base again, in order on one tree; nothing measured out of order is stored or shared'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# campaign NAME MAKE: the calc fixture's legacy_scale(b) rewritten by rule,
# on the warm base (the shared baseline is kept with it), three gates that
# build on each other's outputs: configure writes the Makefile, make
# (command MAKE) writes made, check needs made.
campaign() {
	calc_campaign "$1" "\${x}" b "  - {name: configure, command: \"touch Makefile\"}" \
		"  - {name: make, command: \"$2\"}" "  - {name: check, command: \"test -f made\"}" |
	sed "/writable_worktree/d"
}

PASS='{"verdict":"pass","exit_status":0,"output":"","report":null}'

baselines() { # STORE: gate:verdict:exit of every stored base run
	store_query "$1" "select group_concat(gate || ':' || verdict || ':' || exit_status, ' ') from (select gate, verdict, exit_status from baselines order by gate, run)"
}

test_expect_success 'setup' '
	mkdir repo && cp -R "$FIXTURES/calc/." repo/ && make_repo repo
'

test_expect_success 'a typo in a gate: the first run is refused (exit 127 is a configuration error)' '
	campaign typo "tuch made" >c.yaml &&
	test_expect_code 1 sluice run --store s.db c.yaml >out 2>err &&
	grep -q "^sluice: gate '"'"'make'"'"' fails on the base commit (exit 127)" err &&
	! grep -q "proposed" out
'

test_expect_success 'baseline in that state says make cannot judge' '
	test_expect_code 1 sluice baseline --store s.db c.yaml >out 2>err &&
	grep -x "baseline: every gate runs on the base again, in order: gate '"'"'make'"'"' could not judge it last time" err &&
	grep -q "^gate make (custom, expect pass): error on the base (exit 127)\|^gate make (custom, expect pass): fail on the base (exit 127)" out &&
	grep -q "cannot judge: gate '"'"'make'"'"' fails on the base commit (exit 127)" out
'

test_expect_success 'the typo fixed: every gate is measured again in order, the base is accepted and the candidate proposed' '
	campaign typo "touch made" >c.yaml &&
	sluice run --store s.db c.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	grep -x "baseline: every gate runs on the base again, in order: gate '"'"'make'"'"' has no stored run as defined now" err &&
	grep -q "baseline: gate '"'"'configure'"'"' on the base" err &&
	grep -q "baseline: gate '"'"'check'"'"' on the base" err &&
	test "$(baselines s.db)" = "check:pass:0 configure:pass:0 make:pass:0"
'

test_expect_success 'baseline after the fix shows all three passing, from the store' '
	sluice baseline --store s.db c.yaml >out 2>err &&
	grep -x "gate configure (custom, expect pass): pass on the base (exit 0)" out &&
	grep -x "gate make (custom, expect pass): pass on the base (exit 0)" out &&
	grep -x "gate check (custom, expect pass): pass on the base (exit 0)" out &&
	! grep -q "on the base (run" err
'

test_expect_success 'a fresh store of the fixed campaign accepts the base too' '
	sluice run --store fresh.db c.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	! grep -q "on the base (run" err &&
	test "$(baselines fresh.db)" = "check:pass:0 configure:pass:0 make:pass:0"
'

test_expect_success 'a fixed gate that needs an earlier gate'"'"'s output is measured after it' '
	campaign needs "test -f Makefile && tuch made" >n.yaml &&
	test_expect_code 1 sluice run --store n.db n.yaml >out 2>err &&
	grep -q "^sluice: gate '"'"'make'"'"' fails on the base commit (exit 127)" err &&
	campaign needs "test -f Makefile && touch made" >n.yaml &&
	sluice run --store n.db n.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	test "$(baselines n.db)" = "check:pass:0 configure:pass:0 make:pass:0"
'

test_expect_success 'the shared baselines hold whole measurements that judge: all three passing' '
	ls scratch/*/warm-*/baseline-*.json >shared &&
	test "$(wc -l <shared)" = 2 &&
	for f in $(cat shared); do
		test "$(cat "$f")" = "{\"gates\":{\"configure\":[$PASS],\"make\":[$PASS],\"check\":[$PASS]}}" || return 1
	done
'

test_done
