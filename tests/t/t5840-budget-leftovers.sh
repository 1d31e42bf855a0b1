#!/bin/sh
test_description='a budget-stopped rerun deletes the branches a killed run left (issue 25)

A run killed with -9 while the gates judge a candidate leaves that
candidate'"'"'s branch, never proposed.  A rerun that the budget stops before
it works on the target still deletes it, where the branch points at a
commit of its own store; a branch the user moved there is left alone.'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

# waiting_count: how many candidates' gates wait
waiting_count() {
	find scratch -maxdepth 3 -name waiting 2>/dev/null | wc -l
}

test_expect_success 'setup: two targets, the stub model, a gate that waits on candidates' '
	mkdir repo &&
	waiting_gate repo/gate.sh "grep -q new_api.0. src/m0.c" &&
	rel_repo repo 2 &&
	rel_model m 0 && start_stub m && echo $stub_pid >stub.pid &&
	set -- "  - name: wait" "    command: sh gate.sh" "    timeout: 200" "jail:" \
		"  warm_base: off" &&
	rel_campaign c.yaml leftovers $stub_port "$@" &&
	rel_campaign broke.yaml leftovers $stub_port "$@" "budget:" "  max_tokens: 1" &&
	sluice scope c.yaml >targets &&
	test $(wc -l <targets) = 2
'

test_expect_success 'a run killed with -9 while its gates judge two candidates leaves their branches' '
	{ sluice run --store s.db c.yaml >out1 2>err1 & pid=$!; } &&
	poll "test \$(waiting_count) = 2 || ! kill -0 $pid" &&
	kill -9 $pid &&
	{ wait $pid || :; } &&
	git -C repo for-each-ref --format="%(refname:short)" refs/heads/sluice/ >left &&
	test $(wc -l <left) = 2 &&
	test "$(store_query s.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 0 &&
	# the user points one of them at main
	git -C repo update-ref "refs/heads/$(sed -n 2p left)" main
'

test_expect_success 'the rerun stopped by its budget deletes its store'"'"'s leftover, not the user'"'"'s branch' '
	{ sluice run --store s.db broke.yaml >out2 2>err2; rc=$?; } &&
	cat out2 err2 &&
	test $rc = 1 &&
	grep -q "stopped: token budget reached" err2 &&
	test "$(store_query s.db "select count(*) from targets where state = '"'"'budget'"'"'")" = 2 &&
	test_must_fail git -C repo rev-parse --verify -q "refs/heads/$(sed -n 1p left)" &&
	test "$(git -C repo rev-parse "refs/heads/$(sed -n 2p left)")" = "$(git -C repo rev-parse main)"
'

test_expect_success 'stop the stub' '
	kill $(cat stub.pid)
'

test_done
