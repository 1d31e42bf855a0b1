#!/bin/sh
test_description='fencing of a batch flush: a target taken over before its batch is written is dropped, the others written'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

N=4

# run_until_flush STORE CAMPAIGN NAME: a run (outNAME, errNAME) stopped by
# itself before its first flush; $ta the bounding timeout, $pa the run
# (in NAME.pid)
run_until_flush() {
	{ SLUICE_TEST_STOP_BEFORE_FLUSH=1 timeout -s KILL 600 sluice run --store "$1" "$2" \
		>out$3 2>err$3 & ta=$!; } &&
	poll "test -n \"\$(run_pid_of $1)\"" &&
	pa=$(run_pid_of "$1") && echo $pa >$3.pid &&
	poll "grep -q \"^State:.*T\" /proc/$pa/status"
}

branches() {
	git -C repo for-each-ref --format="%(refname:short) %(objectname)" refs/heads/sluice/batchfence/ |
		grep -v "/base-" | sort
}

# no gates: candidates are written in batches; the run stops itself before
# the first flush (SLUICE_TEST_STOP_BEFORE_FLUSH)
test_expect_success 'setup: a campaign without gates' '
	rel_repo repo $N &&
	rel_model m 0 && start_stub m && echo $stub_pid >stub.pid &&
	rel_campaign c.yaml batchfence $stub_port &&
	sed -e "/^gates:/,\$d" c.yaml >b.yaml &&
	! grep -q "^gates:" b.yaml
'

test_expect_success 'a target taken over while the run waits to flush is dropped, the run goes on' '
	run_until_flush b.db b.yaml A &&
	# candidates proposed, none of their branches written yet
	id=$(sqlite3 b.db "select min(id) from targets where state = '"'"'proposed'"'"'") &&
	test -n "$id" &&
	test -z "$(branches)" &&
	br=$(sqlite3 b.db "select branch from candidates where target_id = $id and state = '"'"'passed'"'"'") &&
	test -n "$br" && echo "$br" >lost.br &&
	# another run takes the target over and writes its own branch
	sqlite3 b.db "update targets set lease_owner = '"'"'other:1:1'"'"',
		lease_epoch = lease_epoch + 1 where id = $id" &&
	git -C repo branch "$br" main &&
	git -C repo rev-parse main >other.oid &&
	kill -CONT $pa &&
	{ wait $ta; ra=$?; } &&
	cat errA &&
	test $ra = 0 &&
	test "$(sqlite3 b.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = $N &&
	grep -q "branch '"'"'$br'"'"' left to another run: target $id: lease lost" errA
'

test_expect_success 'the lost target'"'"'s branch is the other run'"'"'s, the others at their commits' '
	br=$(cat lost.br) &&
	test "$(git -C repo rev-parse "refs/heads/$br")" = "$(cat other.oid)" &&
	sqlite3 b.db "select branch || '"'"' '"'"' || commit_oid from candidates
		where state = '"'"'passed'"'"' and branch <> '"'"'$br'"'"'" | sort >want &&
	test $(wc -l <want) = $((N - 1)) &&
	branches | grep -v "^$br " >have &&
	test_cmp want have &&
	test -z "$(ls scratch | grep "^journal-")"
'

# the same with two real runs: the target is sent back (`sluice retry`)
# while A waits to flush, and B proposes it again and writes its branch
test_expect_success 'setup: a second repository and campaign' '
	rel_repo repo2 $N &&
	sed -e "s/^name: batchfence$/name: batchretry/" -e "s/^repository: repo$/repository: repo2/" \
		b.yaml >r.yaml &&
	grep -q "^repository: repo2$" r.yaml
'

test_expect_success 'a target sent back and proposed by run B before A flushes is B'"'"'s' '
	run_until_flush r.db r.yaml RA &&
	id=$(sqlite3 r.db "select min(id) from targets where state = '"'"'proposed'"'"'") &&
	test -n "$id" &&
	at=$(sqlite3 r.db "select path || '"'"':'"'"' || start_line from targets where id = $id") &&
	sluice retry batchretry --store r.db "$at" &&
	test "$(sqlite3 r.db "select state from targets where id = $id")" = pending &&
	{ timeout -s KILL 600 sluice run --store r.db r.yaml >outRB 2>errRB & tb=$!; } &&
	{ wait $tb; rb=$?; } &&
	cat errRB &&
	{ test $rb = 0 || { paused_let_go RA.pid; false; }; } &&
	kill -CONT $pa &&
	{ wait $ta; ra=$?; } &&
	cat errRA &&
	test $ra = 0 &&
	grep -q "left to another run: target $id: lease lost" errRA &&
	test "$(sqlite3 r.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = $N
'

test_expect_success 'each branch is at the last passed candidate of its target' '
	sqlite3 r.db "select branch || '"'"' '"'"' || commit_oid from candidates c
		where id = (select max(id) from candidates where target_id = c.target_id
			and state = '"'"'passed'"'"')" | sort >want.r &&
	test $(wc -l <want.r) = $N &&
	git -C repo2 for-each-ref --format="%(refname:short) %(objectname)" \
		refs/heads/sluice/batchretry/ | grep -v "/base-" | sort >have.r &&
	test_cmp want.r have.r &&
	test -z "$(ls scratch | grep "^journal-")"
'

test_expect_success 'cleanup' '
	paused_let_go A.pid &&
	paused_let_go RA.pid &&
	kill $(cat stub.pid)
'

test_done
