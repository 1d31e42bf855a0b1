#!/bin/sh
test_description='sluice baseline takes the baseline lease a run takes: it waits for the run measuring the base'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

test_expect_success 'setup: a campaign whose baseline is recorded once' '
	greet_repo repo &&
	write_campaign c.yaml &&
	sluice baseline --store s.db c.yaml >out &&
	test "$(sqlite3 s.db "select count(*) from baselines")" -gt 0
'

test_expect_success 'another run holds the baseline lease: baseline waits, measuring nothing, until it is released' '
	sqlite3 s.db "delete from baselines; update campaigns set baseline_owner = '"'"'elsewhere:1:1'"'"',
		baseline_expires = $(now_ms) + 3600000" &&
	{ sluice baseline --store s.db c.yaml >out 2>err & pid=$!; } &&
	poll "grep -q \"waiting for its baseline\" err || ! kill -0 $pid 2>/dev/null" &&
	grep -q "baseline: another run is measuring the base; waiting for its baseline" err &&
	test "$(sqlite3 s.db "select count(*) from baselines")" = 0 &&
	# released: baseline takes the lease, measures and lets it go
	sqlite3 s.db "update campaigns set baseline_owner = null, baseline_expires = null" &&
	{ wait $pid; rc=$?; } &&
	test $rc = 0 &&
	grep -q "^gate build" out &&
	test "$(sqlite3 s.db "select count(*) from baselines")" -gt 0 &&
	test "$(sqlite3 s.db "select count(*) from campaigns where baseline_owner is not null")" = 0
'

test_done
