#!/bin/sh
test_description='a killed sluice baseline holds nothing: the next command takes its lease over at once (issue 25)

The baseline lease of a `sluice baseline` (or run) killed with -9 is not
waited out when its process is provably gone on this host: the next
baseline or run takes it without waiting for it to expire.'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

# the gate waits in its checkout for a file "go" the test writes (at most 120 s)
test_expect_success 'setup: a campaign whose gate waits on the base; leases of an hour' '
	mkdir -p repo/src &&
	printf "a()\nb()\n" >repo/src/m.py &&
	waiting_gate repo/gate.sh &&
	make_repo repo &&
	share_campaign c.yaml "z()" "sh gate.sh" &&
	printf "%s\n" "lease_ttl: 3600" "jail:" "  warm_base: off" >>c.yaml &&
	sed -i "s/^    command: \"sh gate.sh\"$/&\n    timeout: 200/" c.yaml &&
	grep -q "timeout: 200" c.yaml
'

test_expect_success 'baseline killed with -9 while its gate runs keeps the lease' '
	{ sluice baseline --store s.db c.yaml >out1 2>err1 & pid=$!; } &&
	poll "waiting_dir >/dev/null || ! kill -0 $pid" &&
	waiting_dir >/dev/null &&
	test -n "$(sqlite3 s.db "select baseline_owner from campaigns")" &&
	kill -9 $pid &&
	{ wait $pid || :; } &&
	test "$(sqlite3 s.db "select baseline_owner from campaigns")" != "" &&
	test "$(sqlite3 s.db "select baseline_expires > $(now_ms) + 3000000 from campaigns")" = 1 &&
	test "$(sqlite3 s.db "select count(*) from baselines")" = 0
'

# let_go_until_end PID ERR: release every gate that waits (a checkout may go
# while this looks) until PID ends, at most 60 s; false, with PID killed,
# when PID waited for another run'"'"'s baseline (ERR says so) or did not end
let_go_until_end() {
	i=0
	while kill -0 $1 2>/dev/null && test $i -lt 600; do
		if grep -q "waiting for its baseline" "$2"; then
			kill $1
			return 1
		fi
		# touch, not ": >": a failed redirection of a special builtin
		# (the checkout went meanwhile) ends a POSIX shell; only once: a
		# gate that went on removed "waiting", and its checkout is being
		# removed (a "go" made again in it failed that removal)
		for w in $(find scratch -maxdepth 3 -name waiting 2>/dev/null); do
			test -e "$(dirname "$w")/go" || touch "$(dirname "$w")/go" 2>/dev/null || :
		done
		sleep 0.1
		i=$((i + 1))
	done
	! kill -0 $1 2>/dev/null || { kill $1; return 1; }
}

test_expect_success 'the next baseline takes the lease of the dead one at once' '
	{ sluice baseline --store s.db c.yaml >out2 2>err2 & pid=$!; } &&
	let_go_until_end $pid err2 &&
	{ wait $pid; rc=$?; } &&
	cat err2 &&
	test $rc = 0 &&
	! grep "waiting for its baseline" err2 &&
	test "$(sqlite3 s.db "select count(*) from baselines")" -gt 0 &&
	test "$(sqlite3 s.db "select count(*) from campaigns where baseline_owner is not null")" = 0
'

test_expect_success 'a run after a killed baseline does not wait either' '
	sqlite3 s.db "delete from baselines" &&
	rm -rf scratch &&
	{ sluice baseline --store s.db c.yaml >out3 2>err3 & pid=$!; } &&
	poll "waiting_dir >/dev/null || ! kill -0 $pid" &&
	waiting_dir >/dev/null &&
	kill -9 $pid &&
	{ wait $pid || :; } &&
	test -n "$(sqlite3 s.db "select baseline_owner from campaigns")" &&
	{ sluice run --store s.db c.yaml >out4 2>err4 & pid=$!; } &&
	let_go_until_end $pid err4 &&
	{ wait $pid; rc=$?; } &&
	cat err4 &&
	test $rc = 0 &&
	! grep "waiting for its baseline" err4 &&
	grep -q "proposed  *2" out4
'

test_done
