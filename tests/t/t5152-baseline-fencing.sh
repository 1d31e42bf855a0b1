#!/bin/sh
test_description='fencing of the baseline: a run paused while it measures the base reads the baseline of the run that took it over'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

N=3

# the gate waits on the base (three old_api calls in src/m0.c, candidates
# have two) for a file "go" the test writes into its checkout, and prints it
test_expect_success 'setup: a gate that waits on the base for the test' '
	rel_repo repo $N &&
	rel_model m 0 && start_stub m && echo $stub_pid >stub.pid &&
	rel_campaign f.yaml basefence $stub_port "jail:" "  warm_base: off" &&
	sed "s/^    command: \"true\"$/    timeout: 200\n    command: sh gate.sh/" f.yaml >f2.yaml &&
	mv f2.yaml f.yaml &&
	grep -q "command: sh gate.sh" f.yaml &&
	cat >repo/gate.sh <<-\EOS &&
	if test "$(grep -c old_api src/m0.c)" = 3; then
		: >waiting
		i=0
		while test ! -e go && test $i -lt 1200; do sleep 0.1; i=$((i + 1)); done
		cat go
	fi
	EOS
	git -C repo add gate.sh && git -C repo commit -q -m gate
'

test_expect_success 'run A paused while it measures the base; B takes the baseline over' '
	{ timeout -s KILL 600 sluice run --store f.db --lease-ttl 1 f.yaml >outA 2>errA & ta=$!; } &&
	poll "waiting_dir >/dev/null" &&
	da=$(waiting_dir) &&
	poll "test -n \"\$(run_pid_of f.db)\"" &&
	pa=$(run_pid_of f.db) && echo $pa >a.pid &&
	stop_quiet $pa f.db repo/.git &&
	poll "test \"\$(sqlite3 f.db \"select baseline_expires < \$(now_ms) from campaigns\")\" = 1" &&
	epoch=$(sqlite3 f.db "select baseline_epoch from campaigns") &&
	{ timeout -s KILL 600 sluice run --store f.db --lease-ttl 600 f.yaml >outB 2>errB & pb=$!; } &&
	poll "waiting_dir $da >/dev/null" &&
	db=$(waiting_dir $da) &&
	echo B >"$db/go" &&
	{ wait $pb; rb=$?; } &&
	cat errB &&
	{ test $rb = 0 || { paused_let_go a.pid; false; }; } &&
	test "$(sqlite3 f.db "select baseline_epoch > $epoch from campaigns")" = 1 &&
	echo A >"$da/go" &&
	sqlite3 f.db "select * from baselines order by 1, 2, 3" >base.before &&
	sqlite3 f.db "select id, state, attempts from targets order by id" >targets.before &&
	sqlite3 f.db "select * from gate_runs order by 1" >verdicts.before &&
	kill -CONT $pa &&
	{ wait $ta; ra=$?; } &&
	cat errA &&
	test $ra = 0
'

test_expect_success 'the store holds one baseline per gate, the one B measured' '
	test "$(sqlite3 f.db "select count(*) from baselines")" = 1 &&
	test "$(sqlite3 f.db "select gate || \" \" || run || \" \" || output from baselines")" = "check 1 B" &&
	sqlite3 f.db "select * from baselines order by 1, 2, 3" >base.after &&
	test_cmp base.before base.after &&
	grep -q "baseline: taken over by another run while this one was paused; reading its baseline" errA
'

test_expect_success 'A ends with the same verdicts: every target proposed, nothing rewritten' '
	sqlite3 f.db "select id, state, attempts from targets order by id" >targets.after &&
	sqlite3 f.db "select * from gate_runs order by 1" >verdicts.after &&
	test_cmp targets.before targets.after &&
	test_cmp verdicts.before verdicts.after &&
	test "$(sqlite3 f.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = $N &&
	test "$(sqlite3 f.db "select count(*) from baselines")" = 1 &&
	test "$(sqlite3 f.db "pragma integrity_check")" = ok
'

test_expect_success 'cleanup' '
	paused_let_go a.pid &&
	kill $(cat stub.pid)
'

test_done
