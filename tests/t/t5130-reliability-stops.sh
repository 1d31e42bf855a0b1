#!/bin/sh
test_description='a stop during the baseline; leases with a short TTL'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

N=6

# wait_gone PID: until the process ends (bounded: 60 s); then its status is
# collected by the caller's wait.  Fails, after killing it, when it does not end.
wait_gone() {
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -0 "$1" 2>/dev/null || return 0
	kill -9 "$1"
	return 1
}

test_expect_success 'setup: a campaign whose gate blocks on the base' '
	rel_repo repo $N &&
	rel_model m 0 && start_stub m && echo $stub_pid >stub.pid &&
	rel_campaign b.yaml block $stub_port "  - name: block" "    command: sleep 917.5130" \
		"    timeout: 3600"
'

test_expect_success 'SIGTERM during the baseline kills its gate at once: exit 143' '
	{ sluice run --store b.db b.yaml >out 2>err & pid=$!; } &&
	i=0 &&
	while [ $i -lt 1200 ] && ! pgrep -fx "sleep 917.5130" >/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done &&
	pgrep -fx "sleep 917.5130" >/dev/null &&
	kill -TERM $pid &&
	wait_gone $pid &&
	{ wait $pid; rc=$?; } &&
	cat err &&
	test $rc = 143 &&
	grep -q "stopped by SIGTERM" err &&
	i=0 &&
	while [ $i -lt 600 ] && pgrep -fx "sleep 917.5130" >/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done &&
	! pgrep -fx "sleep 917.5130"
'

test_expect_success 'the killed baseline is kept nowhere; nothing else happened' '
	test "$(sqlite3 b.db "select count(*) from baselines where gate = '"'"'block'"'"'")" = 0 &&
	test "$(sqlite3 b.db "select count(*) from gate_cache")" = 0 &&
	test "$(sqlite3 b.db "select outcome from runs")" = stopped &&
	test "$(sqlite3 b.db "select count(*) from targets where state <> '"'"'pending'"'"'")" = 0 &&
	test $(rel_requests m) = 0 &&
	test -z "$(ls scratch/block 2>/dev/null | grep "^sl-")" &&
	test $(git -C repo worktree list | wc -l) = 1
'

test_expect_success 'the next run, the gate unblocked, measures the baseline and finishes' '
	sed -i "s/command: sleep 917.5130/command: sleep 0/" b.yaml &&
	sluice run --store b.db b.yaml >out 2>err &&
	test "$(sqlite3 b.db "select verdict from baselines where gate = '"'"'block'"'"'")" = pass &&
	test "$(sqlite3 b.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = $N
'

test_done
