#!/bin/sh
test_description='the store: kill -9 mid-campaign, then resume where it stopped'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'setup: a campaign whose gate is slow' '
	greet_repo repo &&
	write_campaign c.yaml &&
	cat >>c.yaml <<-\EOF
	  - name: slow
	    command: sleep 2
	    timeout: 60
	EOF
'

test_expect_success 'kill -9 after the first target is recorded' '
	{ sluice run --store s.db c.yaml >/dev/null 2>&1 & pid=$!; } &&
	for i in $(seq 1 300); do
		n=$(store_query s.db "select count(*) from targets where state = '"'"'proposed'"'"'" 2>/dev/null || echo 0)
		test "${n:-0}" -ge 1 && break
		sleep 0.1
	done &&
	kill -9 $pid &&
	{ wait $pid 2>/dev/null || :; } &&
	n=$(store_query s.db "select count(*) from targets where state = '"'"'proposed'"'"'") &&
	test "$n" -ge 1 && test "$n" -lt 3 &&
	echo $n >proposed.before
'

test_expect_success 'the store is consistent after the kill' '
	test "$(store_query s.db "pragma integrity_check")" = ok &&
	test "$(store_query s.db "select count(*) from candidates c join targets t on t.id = c.target_id where t.state = '"'"'pending'"'"'")" = 0
'

test_expect_success 'the rerun finishes only the rest, and cleans the crashed worktree' '
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *3" out &&
	test "$(store_query s.db "select count(*) from attempts")" = 3 &&
	test "$(store_query s.db "select max(n) from attempts")" = 1 &&
	test -z "$(ls -A scratch/greet 2>/dev/null | grep -v "^warm-[0-9a-f]\{16\}\$")" &&
	test $(git -C repo worktree list | wc -l) = 1
'

test_done
