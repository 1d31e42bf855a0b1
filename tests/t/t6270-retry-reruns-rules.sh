#!/bin/sh
test_description='retry runs the rules again: after a rule changed (stale) and after a reviewer sent a target back'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'setup: a rule whose candidates fail the build' '
	greet_repo repo &&
	RULE_TEMPLATE="greet(\${out}, sizeof \${out}, \${name}" write_campaign c.yaml &&
	test_expect_code 1 sluice run --store s.db c.yaml >out &&
	grep -q "^  failed  *3" out
'

test_expect_success 'the rule fixed, retry --state stale runs it again: every target proposed' '
	write_campaign c.yaml &&
	test_expect_code 1 sluice run --store s.db c.yaml >out 2>err &&
	grep -q "judged under another definition.*retry --state stale" err &&
	sluice retry --store s.db --state stale >out &&
	grep -q "sent back 3 targets" out &&
	sluice run --store s.db c.yaml >out &&
	cat out &&
	grep -q "^  proposed  *3" out &&
	! grep -q "no model to retry" out &&
	test "$(sqlite3 s.db "select count(*) from attempts where n = 2 and source = '"'"'rules'"'"' and outcome = '"'"'candidate'"'"'")" = 3
'

test_expect_success 'a proposed target sent back by retry PATH:LINE gets the rules'"'"' candidate again' '
	sluice retry --store s.db src/report.c:18 >out &&
	sluice run --store s.db c.yaml >out &&
	sluice targets --store s.db >out &&
	cat out &&
	grep -q " proposed  *src/report.c:18  *attempts 3 " out
'

test_done
