#!/bin/sh
test_description='a stop kills the command provider: SIGTERM or the wall-time budget while the command blocks, no process left, the target pending, the next run resumes; a killed sluice leaves no command behind'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

# every process of the model command has this in its command line
MARK=sl-t5135-$$-mark

# no_command_left: no process of the model command remains.  Its leader is
# reaped before sluice exits; a background child killed with the group is
# gone once the kernel has ended it (bounded wait, 60 s at most).
no_command_left() {
	i=0
	while [ $i -lt 1200 ] && pgrep -f "$MARK" >/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done
	! pgrep -f "$MARK"
}

# wait_for_file FILE PID: until FILE exists, while PID lives (bounded: 60 s)
wait_for_file() {
	i=0
	while [ $i -lt 1200 ] && ! test -f "$1" && kill -0 "$2" 2>/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done
	test -f "$1"
}

test_expect_success 'setup: one target, a model command that blocks on a fifo until told to answer' '
	rel_repo one 1 &&
	mkfifo "$TRASH/fifo-$MARK" &&
	cat >"$TRASH/model-$MARK.sh" <<-EOF &&
	if test -f "$TRASH/answer"; then cat "$TRASH/reply.txt"; exit 0; fi
	cat "$TRASH/fifo-$MARK" >/dev/null &
	touch "$TRASH/started"
	wait
	EOF
	cat >"$TRASH/reply.txt" <<-\EOF &&
	```c
	int f(void) { return new_api(0); }
	```
	EOF
	rel_campaign c.yaml cmd 1 &&
	sed -i -e "s/^repository: repo/repository: one/" \
		-e "s|^  kind: openai|  kind: command\n  command: \"sh $TRASH/model-$MARK.sh\"|" \
		-e "/^  base_url:/d" -e "/^  model:/d" c.yaml &&
	grep -q "kind: command" c.yaml &&
	! grep -q base_url c.yaml
'

test_expect_success 'SIGTERM while the command blocks: exit 143, its process group killed' '
	{ sluice run --store c.db c.yaml >out 2>err & pid=$!; } &&
	wait_for_file started $pid &&
	pgrep -f "$MARK" >/dev/null &&
	kill -TERM $pid &&
	{ wait $pid; rc=$?; } &&
	cat err &&
	test $rc = 143 &&
	grep -q "stopped by SIGTERM" err &&
	no_command_left
'

test_expect_success 'the target is pending with no attempt spent, the run recorded as stopped' '
	test "$(rel_states c.db)" = "$(sqlite3 c.db "select key from targets")|pending|0" &&
	test "$(sqlite3 c.db "select count(*) from attempts")" = 0 &&
	test "$(sqlite3 c.db "select outcome from runs")" = stopped
'

test_expect_success 'the next run resumes: the command answers, the target is proposed' '
	touch answer &&
	sluice run --store c.db c.yaml >out 2>err &&
	test "$(sqlite3 c.db "select state, attempts from targets")" = "proposed|1"
'

test_expect_success 'the wall-time budget kills a command that blocks: the target waits for the next run' '
	rm -f answer started &&
	sed "s/^name: cmd/name: cmdwall/" c.yaml >w.yaml &&
	printf "budget:\n  max_wall_time: 10\n" >>w.yaml &&
	# the warm base and the baseline first: the wall time of the run is
	# spent by the blocking command, not by preparing on a loaded machine
	sluice baseline --store w.db w.yaml >baseline.out &&
	{ timeout 120 sluice run --store w.db w.yaml >out 2>err; rc=$?; } &&
	cat err &&
	test $rc = 1 &&
	grep "stopped: " err &&
	grep "stopped: .*wall" err &&
	! grep "kept failing" err &&
	test -f started &&
	test "$(sqlite3 w.db "select count(*) from attempts")" = 0 &&
	test "$(sqlite3 w.db "select count(*) from targets where state not in ('"'"'pending'"'"', '"'"'budget'"'"')")" = 0 &&
	no_command_left
'

test_expect_success 'kill -9 of sluice: the command it ran does not outlive it' '
	mkfifo "$TRASH/fifo9-$MARK" &&
	sed -e "s/^name: cmd/name: cmdkill/" \
		-e "s|^  command: .*|  command: \"touch $TRASH/started9; exec cat $TRASH/fifo9-$MARK\"|" \
		c.yaml >k.yaml &&
	grep -q "exec cat" k.yaml &&
	{ sluice run --store k.db k.yaml >out 2>err & pid=$!; } &&
	wait_for_file started9 $pid &&
	kill -9 $pid &&
	{ wait $pid; rc=$?; } &&
	test $rc = 137 &&
	no_command_left
'

# should a test above have failed, a command may still block on its fifo:
# give it the line it waits for (it exits), never a kill by name
test_expect_success 'cleanup' '
	for f in "$TRASH/fifo-$MARK" "$TRASH/fifo9-$MARK"; do
		if pgrep -f "$f" >/dev/null; then timeout 10 sh -c "echo x >\"$f\"" || true; fi
	done
'

test_done
