#!/bin/sh
test_description='fencing: a run paused past its leases writes nothing for targets another run took over'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

N=8

# owner_of STORE PID: the owner name the run of process PID registered under
owner_of() {
	sqlite3 "$1" "select owner from runs where owner like '%:$2:%'"
}

# snapshot STORE: every row a run writes for a target (the lease columns
# aside: they are the runs' own business), and the branches
snapshot() {
	sqlite3 "$1" "select id, state, attempts, reason, digest, attempt_base, updated_at
		from targets order by id" &&
	for t in attempts replies candidates gate_runs; do
		sqlite3 "$1" "select * from $t order by 1, 2" || return 1
	done &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/
}

# check_branches STORE PREFIX: the branches under PREFIX are those of the
# passed candidates, each at the commit its candidate recorded
check_branches() {
	sqlite3 "$1" "select branch || ' ' || commit_oid from candidates where state = 'passed'" |
		sort >want.br &&
	git -C repo for-each-ref --format="%(refname:short) %(objectname)" refs/heads/$2/ |
		grep -v "/base-" | sort >have.br &&
	test_cmp want.br have.br
}

test_expect_success 'setup: 8 targets, a deterministic model, the uninterrupted result' '
	rel_repo repo $N &&
	rel_model m0 0 && start_stub m0 && echo $stub_pid >stub0.pid &&
	rel_campaign u.yaml fenceu $stub_port &&
	sluice run --store u.db u.yaml >out &&
	rel_states u.db >states.u &&
	test $(grep -c "|proposed|2$" states.u) = $N &&
	kill $(cat stub0.pid)
'

# the warm base (the default tree) is shared: a paused run holds it
# LOCK_SH, which stops neither B nor gc's check that it is in use
test_expect_success 'setup: a slow model, so that runs hold targets while they wait' '
	rel_model m1 3000 && start_stub m1 && echo $stub_pid >stub1.pid &&
	rel_campaign f.yaml fence $stub_port
'

test_expect_success 'run A paused past its leases, run B takes them over, A resumes' '
	{ sluice run --store f.db --lease-ttl 1 f.yaml >outA 2>errA & pa=$!; } &&
	echo $pa >a.pid &&
	# A waits on the model for four targets: it holds them, touches no branch;
	# paused only once its base is made and measured (the model is asked
	# meanwhile, and a run paused while it builds the warm base holds that
	# lock: B would wait for it, as it should for a live process)
	poll "test \$(rel_requests m1) -ge 4" &&
	poll "grep -q \"pass in .* (baseline)\$\" errA" &&
	stop_quiet $pa f.db repo/.git &&
	oa=$(owner_of f.db $pa) && test -n "$oa" && echo "$oa" >a.owner &&
	sqlite3 f.db "select id || \" \" || lease_epoch from targets
		where lease_owner = '"'"'$oa'"'"' and state = '"'"'pending'"'"'" >held.a &&
	test -s held.a &&
	poll "test \$(sqlite3 f.db \"select count(*) from targets where lease_owner = '"'"'$oa'"'"'
		and state = '"'"'pending'"'"' and lease_expires >= \$(now_ms)\") = 0" &&
	sluice status --store f.db >status.paused &&
	sluice status --store f.db --json >status.paused.json &&
	# bounded: a B that waits on the paused A (the warm base locked
	# exclusively, say) fails here instead of hanging, and A is let go
	{ timeout -s KILL 600 sluice run --store f.db --lease-ttl 600 f.yaml >outB 2>errB & pb=$!; } &&
	echo $pb >b.pid &&
	{ wait $pb; rb=$?; } &&
	cat errB &&
	{ test $rb = 0 || { kill -CONT $pa; kill $pa; false; }; } &&
	grep -q "^tree: warm base (overlay)" errB &&
	snapshot f.db >before.resume &&
	kill -CONT $pa &&
	{ wait $pa; ra=$?; } &&
	cat errA &&
	test $ra = 0 &&
	# what B finished is not "held by another run"
	! grep "held by another run" errA &&
	snapshot f.db >after.resume
'

test_expect_success 'status showed the paused run and its leases as expired' '
	oa=$(cat a.owner) &&
	k=$(wc -l <held.a) &&
	grep "^lease: $oa held $k target" status.paused &&
	grep -q "^lease: $oa held $k targets\{0,1\}, expired since [0-9-]*T[0-9:]*Z" status.paused &&
	grep -q "{\"owner\":\"$oa\",\"targets\":$k,\"expires_in_ms\":-[0-9]*,\"expired\":true,\"expired_at\":\"[0-9-]*T" status.paused.json
'

test_expect_success 'B took over every target A held, each with a higher epoch' '
	while read id epoch; do
		test "$(sqlite3 f.db "select lease_epoch > $epoch from targets where id = $id")" = 1 ||
		return 1
	done <held.a
'

test_expect_success 'A wrote no row and moved no branch after the takeover' '
	test_cmp before.resume after.resume &&
	grep -q "targets were taken over by another run while this one was paused" errA
'

test_expect_success 'the funnel is the uninterrupted run'"'"'s, each branch at its owner'"'"'s commit' '
	rel_states f.db >states.f &&
	test_cmp states.u states.f &&
	check_branches f.db sluice/fence &&
	test "$(sqlite3 f.db "pragma integrity_check")" = ok
'

test_expect_success 'a run whose target outlasts several lease periods keeps its lease' '
	rel_campaign r.yaml renew $(cat m1/port) "jail:" "  warm_base: off" &&
	{ sluice run --store r.db --lease-ttl 1 r.yaml >outR 2>errR & pr=$!; } &&
	poll "test -n \"\$(owner_of r.db $pr)\"" &&
	or=$(owner_of r.db $pr) &&
	poll "test -n \"\$(sqlite3 r.db \"select id from targets where lease_owner = '"'"'$or'"'"'
		and state = '"'"'pending'"'"' limit 1\")\"" &&
	id=$(sqlite3 r.db "select id from targets where lease_owner = '"'"'$or'"'"' and state = '"'"'pending'"'"' limit 1") &&
	e0=$(sqlite3 r.db "select lease_expires from targets where id = $id") &&
	poll "test \$(sqlite3 r.db \"select lease_expires from targets where id = $id\") -gt $e0" &&
	e1=$(sqlite3 r.db "select lease_expires from targets where id = $id") &&
	poll "test \$(sqlite3 r.db \"select lease_expires from targets where id = $id\") -gt $e1" &&
	test "$(sqlite3 r.db "select lease_owner from targets where id = $id")" = "$or" &&
	{ wait $pr; rr=$?; } &&
	test $rr = 0 &&
	test "$(sqlite3 r.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = $N
'

test_expect_success 'cleanup' '
	for f in a.pid b.pid; do
		kill -CONT $(cat $f) 2>/dev/null; kill $(cat $f) 2>/dev/null; :
	done &&
	kill $(cat stub1.pid)
'

test_done
