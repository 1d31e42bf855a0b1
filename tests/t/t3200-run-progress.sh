#!/bin/sh
test_description='run progress: on a terminal a worker line with its target, step and elapsed time during a long gate; off one timestamped event lines and a heartbeat'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# The gate "hold" blocks on app.c's candidate only (the base and the other
# targets pass it at once), in a sleep with a command line of this test's
# own; the test ends that sleep, by its pid, once it has seen what it
# waits for.  The gate's timeout only bounds a test that failed.
HOLD="9173200.$$"

# release: end the hold gate's sleeps (by pid) until PID exits; bounded (120 s).
release() {
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 1200 ]; do
		for p in $(pgrep -fx "sleep $HOLD"); do kill "$p" 2>/dev/null; done
		sleep 0.1
		i=$((i + 1))
	done
	! kill -0 "$1" 2>/dev/null
}

# wait_for PATTERN FILE PID: until FILE holds a line matching the extended
# regex PATTERN; bounded (120 s) and given up when PID ends.
wait_for() {
	i=0
	while [ $i -lt 1200 ] && ! grep -Eq "$1" "$2" 2>/dev/null; do
		kill -0 "$3" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	grep -Eq "$1" "$2"
}

test_expect_success 'setup: the greet campaign with a gate that holds app.c' '
	greet_repo repo &&
	write_campaign c.yaml "  - name: hold" \
		"    command: \"if grep -q sizeof src/app.c; then sleep $HOLD || true; fi\"" \
		"    timeout: 120" &&
	grep -q "sleep $HOLD" c.yaml
'

test_expect_success 'on a terminal: a worker line says the target, the gate and how long it runs' '
	{ TERM=xterm script -qfec "sluice run --store t.db c.yaml >out" typescript >/dev/null &
	  pid=$!; } &&
	wait_for "w[0-9]+ +src/app\.c:10 attempt 1: gate hold \([1-9][0-9]*s\)" typescript $pid &&
	release $pid &&
	wait $pid &&
	grep -q "proposed  *3" out &&
	esc=$(printf "\\033") &&
	grep -q "$esc\[[0-9]*A.$esc\[J" typescript &&
	sed -e "s/$esc\[[0-9]*A//g" -e "s/$esc\[J//g" typescript | tr -d "\\r" >screen &&
	grep -Eq "^sluice: [0-9]+s \| setting up$" screen &&
	grep -Eq "^  run: baseline gate (build|test|hold) \([0-9]+s\)$" screen &&
	grep -Eq "^sluice: [0-9]+s \| [0-9]/3 done, [0-9] proposed \| [0-9.]+/min \| ETA [0-9a-z]+ \| 0 tokens, cost 0.0000$" screen &&
	grep -q "^\[3/3\] " screen
'

test_expect_success 'off a terminal: event lines with their time, a heartbeat during the long gate' '
	{ SLUICE_HEARTBEAT_S=1 sluice run --store o.db c.yaml >out 2>err & pid=$!; } &&
	wait_for "^\[20[0-9-]+T[0-9:]+Z\] w[0-9]+ still running gate hold on src/app\.c:10 \([1-9][0-9]*s\)$" err $pid &&
	release $pid &&
	wait $pid &&
	grep -q "proposed  *3" out &&
	grep -Eq "^\[20[0-9-]+T[0-9:]+Z\] w[0-9]+ src/app\.c:10: gate hold started \(candidate\)$" err &&
	grep -Eq "^\[20[0-9-]+T[0-9:]+Z\] w[0-9]+ src/app\.c:10: gate hold pass in [0-9.]+ s \(candidate\)$" err &&
	grep -Eq "^\[20[0-9-]+T[0-9:]+Z\] run [^ ]+ of campaign greet started$" err &&
	grep -Eq "^\[20[0-9-]+T[0-9:]+Z\] w[0-9]+ src/app\.c:10: proposed after 1 attempt$" err &&
	! grep -q "$(printf "\\033")" err
'

test_done
