#!/bin/sh
test_description='a stop during the baseline; leases with a short TTL'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

N=6
# the base's gate: a command line of this run's own (pgrep -x finds it)
GATE="sleep 917.5130$$"

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
	rel_model m 0 && start_stub m && echo $stub_pid >stub.pid && echo $stub_port >port &&
	rel_campaign b.yaml block $stub_port "  - name: block" "    command: $GATE" \
		"    timeout: 3600"
'

test_expect_success 'SIGTERM during the baseline kills its gate at once: exit 143' '
	{ sluice run --store b.db b.yaml >out 2>err & pid=$!; } &&
	i=0 &&
	while [ $i -lt 1200 ] && ! pgrep -fx "$GATE" >/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done &&
	pgrep -fx "$GATE" >/dev/null &&
	kill -TERM $pid &&
	wait_gone $pid &&
	{ wait $pid; rc=$?; } &&
	cat err &&
	test $rc = 143 &&
	grep -q "stopped by SIGTERM" err &&
	i=0 &&
	while [ $i -lt 600 ] && pgrep -fx "$GATE" >/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done &&
	! pgrep -fx "$GATE"
'

test_expect_success 'the killed baseline is kept nowhere; nothing judged, the replies the model sent meanwhile journalled' '
	test "$(sqlite3 b.db "select count(*) from baselines where gate = '"'"'block'"'"'")" = 0 &&
	test "$(sqlite3 b.db "select count(*) from gate_cache")" = 0 &&
	test "$(sqlite3 b.db "select outcome from runs")" = stopped &&
	test "$(sqlite3 b.db "select count(*) from targets where state <> '"'"'pending'"'"'")" = 0 &&
	test "$(sqlite3 b.db "select count(*) from attempts")" = 0 &&
	test "$(sqlite3 b.db "select count(*) from replies")" -le $(rel_requests m) &&
	test -z "$(ls scratch/block 2>/dev/null | grep "^sl-")" &&
	test $(git -C repo worktree list | wc -l) = 1
'

test_expect_success 'SIGINT twice during the baseline: exit 130 at once, no gate left, nothing kept' '
	{ sluice run --store b.db b.yaml >out 2>err & pid=$!; } &&
	i=0 &&
	while [ $i -lt 1200 ] && ! pgrep -fx "$GATE" >/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done &&
	pgrep -fx "$GATE" >/dev/null &&
	kill -INT $pid && kill -INT $pid &&
	wait_gone $pid &&
	{ wait $pid; rc=$?; } &&
	test $rc = 130 &&
	i=0 &&
	while [ $i -lt 600 ] && pgrep -fx "$GATE" >/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done &&
	! pgrep -fx "$GATE" &&
	test "$(sqlite3 b.db "select count(*) from baselines where gate = '"'"'block'"'"'")" = 0
'

test_expect_success 'the next run, the gate unblocked, measures the baseline and finishes' '
	sed -i "s/command: $GATE/command: sleep 0/" b.yaml &&
	sluice run --store b.db b.yaml >out 2>err &&
	test "$(sqlite3 b.db "select verdict from baselines where gate = '"'"'block'"'"'")" = pass &&
	test "$(sqlite3 b.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = $N
'

test_expect_success 'a gate fixed after it failed on the base is measured again' '
	rel_campaign f.yaml fixed $(cat port) "  - name: late" "    command: \"false\"" &&
	{ sluice run --store f.db f.yaml >out 2>err; rc=$?; } &&
	test $rc = 1 &&
	grep -q "gate .late. fails on the base commit" err &&
	test "$(sqlite3 f.db "select verdict from baselines where gate = '"'"'late'"'"'")" = fail &&
	sed -i "s/command: \"false\"/command: \"true\"/" f.yaml &&
	sluice run --store f.db f.yaml >out 2>err &&
	test "$(sqlite3 f.db "select verdict from baselines where gate = '"'"'late'"'"'")" = pass &&
	test "$(sqlite3 f.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = $N
'

test_expect_success 'lease_ttl: a bad value is exit 2 naming the file and line' '
	rel_campaign bad.yaml bad 1 "lease_ttl: 0" &&
	test_expect_code 2 sluice run --store bad.db bad.yaml 2>err &&
	grep -q "^sluice: bad.yaml:[0-9]*:[0-9]*: .lease_ttl. must be between 1 and 86400" err &&
	line=$(grep -n "^lease_ttl:" bad.yaml | cut -d: -f1) &&
	grep -q "^sluice: bad.yaml:$line:" err &&
	rel_campaign bad.yaml bad 1 "lease_ttl: soon" &&
	test_expect_code 2 sluice run --store bad.db bad.yaml 2>err &&
	grep -q "^sluice: bad.yaml:$line:[0-9]*: expected an integer for .lease_ttl." err &&
	test_expect_code 2 sluice run --store bad.db --lease-ttl 0 bad.yaml 2>err &&
	grep -q "^sluice run: --lease-ttl .0.: expected seconds from 1 to 86400" err &&
	test_expect_code 2 sluice run --store bad.db --lease-ttl 2x bad.yaml 2>err &&
	grep -q "lease-ttl .2x." err &&
	test ! -e bad.db
'

# killed_with_leases YAML STORE MODEL [run options]: start a run, kill -9 it
# once its first model request arrived (it holds leases then); prints the
# instants just before it started and just after the kill (Unix ms)
killed_with_leases() {
	yaml=$1 db=$2 dir=$3
	shift 3
	started=$(date +%s%3N)
	sluice run --store "$db" "$@" "$yaml" >/dev/null 2>&1 &
	kpid=$!
	i=0
	while [ $i -lt 1200 ] && ! test -f "$dir/request-1.json"; do
		sleep 0.05
		i=$((i + 1))
	done
	test -f "$dir/request-1.json" || { kill -9 $kpid; return 1; }
	kill -9 $kpid &&
	wait $kpid 2>/dev/null
	echo $started $(date +%s%3N)
}

# taken_over STORE YAML: run until every target is proposed (bounded: 100 runs);
# takeover.err gets what they said
taken_over() {
	i=0
	while [ $i -lt 100 ]; do
		# exit 1 while nothing could be proposed: the targets are held
		sluice run --store "$1" "$2" >/dev/null 2>>takeover.err
		test $? -le 1 || return 1
		test "$(sqlite3 "$1" "select count(*) from targets where state <> 'proposed'")" = 0 &&
			return 0
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}

for how in campaign option
do
	test_expect_success "lease TTL from the $how: a crashed run of another machine is taken over" '
		rm -rf m$how && rel_model m$how 3000 && start_stub m$how && echo $stub_pid >stub.$how &&
		if test $how = campaign
		then
			rel_campaign l$how.yaml l$how $stub_port "lease_ttl: 2" && opt=
		else
			rel_campaign l$how.yaml l$how $stub_port && opt="--lease-ttl 2"
		fi &&
		times=$(killed_with_leases l$how.yaml l$how.db m$how $opt) &&
		started=${times% *} killed=${times#* } &&
		owner=$(sqlite3 l$how.db "select owner from runs") &&
		test "$(sqlite3 l$how.db "select count(*) from targets where lease_owner = '"'"'$owner'"'"'")" -ge 1 &&
		# every claim and renewal happened while the run lived, each for 2 s
		# (wall-clock times, which other machines can compare)
		test "$(sqlite3 l$how.db "select max(lease_expires) from targets")" -le $((killed + 2000)) &&
		test "$(sqlite3 l$how.db "select min(lease_expires) from targets where lease_owner is not null")" -ge $((started + 2000)) &&
		# as if the run had been on another machine: no local reaping
		sqlite3 l$how.db "update targets set lease_owner = '"'"'otherhost:1:1'"'"'
			where lease_owner = '"'"'$owner'"'"';
			update runs set owner = '"'"'otherhost:1:1'"'"'" &&
		taken_over l$how.db l$how.yaml &&
		test "$(sqlite3 l$how.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = $N &&
		kill $(cat stub.$how)
	'
done

test_expect_success 'cleanup' '
	{ kill $(cat stub.pid) 2>/dev/null || true; }
'

test_done
