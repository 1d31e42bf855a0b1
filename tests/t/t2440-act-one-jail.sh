#!/bin/sh
test_description='generate: act runs every step of a session in one jail (issue 28)

The jail is built once per session; its pid 1 runs each step'"'"'s command as
a fresh process and kills whatever the command left before the next step.
A step cannot reach pid 1 (signals, ptrace, its descriptors), and a run
killed with -9 mid-session leaves no process, mount point or layer mount.'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-act.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

mark=100$$.25

# host_has TEXT: a host process has TEXT in its command line (not this shell's pipeline)
host_has() {
	for f in /proc/[0-9]*/cmdline; do
		cat "$f" 2>/dev/null | tr "\000" " "
		echo
	done | grep -v "grep\|host_has" | grep -qF -- "$1"
}

test_expect_success 'setup' '
	act_repo repo &&
	make_repo repo
'

# campaign NAME DIR [yaml...]: NAME.yaml, a session with the scripted model in DIR
campaign() {
	{
		act_yaml act &&
		printf "%s\n" "generate: act" "attempts: 1" "gates:" \
			"  - {name: build, command: \"make 2>&1\", prepare: true}" \
			"  - {name: test, command: \"make test 2>&1\"}" \
			"provider: {kind: command, command: \"ACT_DIR=$TRASH/$2 ACT_LOG=$TRASH/$2.log sh $FIXTURES/act/model.sh\"}" &&
		shift 2 &&
		printf "%s\n" "$@"
	} >"$1.yaml"
}

test_expect_success 'a background process of one step is gone before the next; pid 1 is out of reach' '
	reply m1 1 "sleep 1$mark & sleep 2$mark >/dev/null 2>&1 & setsid sleep 3$mark & echo started" &&
	# the model is asked for step 2 once step 1 is over: the host sees no sleep
	cat >m1/2 <<-EOF &&
	if grep -qF "$mark" /proc/[0-9]*/cmdline 2>/dev/null; then echo left >$TRASH/left; fi
	printf "%s\\n" "\\\`\\\`\\\`sh" "ps -e -o comm= 2>/dev/null || cat /proc/[0-9]*/comm" "\\\`\\\`\\\`"
	EOF
	reply m1 3 "echo init \$(cut -d\" \" -f22 /proc/1/stat); for s in KILL TERM INT HUP STOP USR1; do kill -s \$s 1; done; ls /proc/1/fd; cat /proc/1/environ; head -c 1 /proc/1/mem; ls -l /proc/self/fd | grep -c socket" &&
	reply m1 4 "sed -i \"s/old_api(3)/new_api(3)/\" src/calc.c && sed -i \"1i #include \\\"api.h\\\"\" src/calc.c && echo init \$(cut -d\" \" -f22 /proc/1/stat)" &&
	reply m1 5 submit &&
	campaign c1 m1 &&
	sluice run --store s1.db c1.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	! test -e left &&
	sluice show --store s1.db --steps --json 1 >steps.json &&
	jq -r ".steps[0].output" steps.json >o1 &&
	grep -q "^started" o1 &&
	jq -r ".steps[1].output" steps.json >o2 &&
	grep -q "sluice-init" o2 &&
	! grep -q sleep o2 &&
	jq -r ".steps[2].output" steps.json >o3 &&
	test $(grep -c "Permission denied" o3) = 3 &&
	grep -q "^0$" o3 &&
	jq -r ".steps[3].output" steps.json >o4 &&
	grep "^init [0-9][0-9]*$" o3 >init3 &&
	grep "^init [0-9][0-9]*$" o4 >init4 &&
	test_cmp init3 init4
'

test_expect_success 'a jail whose pid 1 was killed between steps is made again; the layer stays' '
	reply m2 1 "sed -i \"s/old_api(3)/new_api(3)/\" src/calc.c && sed -i \"1i #include \\\"api.h\\\"\" src/calc.c" &&
	# asked for step 2, the model kills the jail of its run (a sluice-init
	# whose parent, or whose parent'"'"'s parent, is the run)
	cat >m2/2 <<-EOF &&
	run=\$PPID
	while [ "\$(cat /proc/\$run/comm)" != sluice ] && [ \$run -gt 1 ]; do
		run=\$(cut -d" " -f4 /proc/\$run/stat)
	done
	for st in /proc/[0-9]*/stat; do
		set -- \$(cat \$st 2>/dev/null)
		[ "\$2" = "(sluice-init)" ] || continue
		up=\$(cut -d" " -f4 /proc/\$4/stat 2>/dev/null)
		[ "\$4" = \$run ] || [ "\$up" = \$run ] || continue
		kill -9 \$1 && echo \$1 >>$TRASH/killed
		# until it is gone (or a zombie: its descriptors closed)
		i=0
		while kill -0 \$1 2>/dev/null && ! grep -q "^State:.*Z" /proc/\$1/status && [ \$i -lt 600 ]; do
			sleep 0.05
			i=\$((i + 1))
		done
	done
	printf "%s\\n" "\\\`\\\`\\\`sh" "grep -c new_api src/calc.c" "\\\`\\\`\\\`"
	EOF
	reply m2 3 submit &&
	campaign c2 m2 &&
	sluice run --store s2.db c2.yaml >out 2>err &&
	test $(wc -l <killed) = 1 &&
	grep -q "proposed  *1" out &&
	sluice show --store s2.db --steps --json 1 >steps.json &&
	jq -r ".steps[1].output" steps.json >o2 &&
	printf "%s\n" "exit status 0" "1" "" >expect &&
	test_cmp expect o2
'

# kill_mid_session NAME DIGIT: a run whose step 1 sleeps is killed with -9 while
# the step runs; nothing of its jail stays: no process, and (once status
# has cleaned up after the dead run, as after a gate) no layer mount
kill_mid_session() {
	m=4$mark$2
	reply $1 1 "sleep $m" &&
	reply $1 2 submit &&
	campaign $1 $1 "session: {step_timeout: 600}" &&
	{ sluice run --store $1.db $1.yaml >out 2>err & pid=$!; } &&
	poll "host_has $m || ! kill -0 $pid" &&
	host_has $m &&
	kill -9 $pid &&
	{ wait $pid || :; } &&
	poll "! host_has $m" &&
	sluice status --store $1.db >/dev/null 2>&1 &&
	! grep -q " $TRASH/" /proc/self/mountinfo
}

test_expect_success 'kill -9 mid-session (the jail in the spawner): nothing left behind' '
	kill_mid_session k1 1 &&
	# the spawner saw the run go and cleaned up: no mount point either
	poll "! ls $TMPDIR | grep -q sluice-jail-"
'

test_expect_success 'kill -9 mid-session (the jail in the run): nothing left behind' '
	SLUICE_NO_JAIL_SPAWNER=1 &&
	export SLUICE_NO_JAIL_SPAWNER &&
	kill_mid_session k2 2
'

test_done
