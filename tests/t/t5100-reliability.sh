#!/bin/sh
test_description='runs that survive: kill -9 and resume, runs at once, leases, signals'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

N=20
KILLS=8

test_expect_success 'setup: 20 targets, a deterministic model that needs the feedback' '
	rel_repo repo $N &&
	rel_model m0 100 && start_stub m0 && echo $stub_pid >stub0.pid &&
	rel_campaign u.yaml rel $stub_port
'

test_expect_success 'the uninterrupted run proposes every target on its second attempt' '
	sluice run --store u.db u.yaml >out &&
	rel_states u.db >states.u &&
	test $(grep -c "|proposed|2$" states.u) = $N &&
	test $(rel_requests m0) = $((2 * N)) &&
	kill $(cat stub0.pid)
'

test_expect_success "$KILLS kill -9 at different instants, then a run to the end: the same result" '
	rel_model m1 100 && start_stub m1 && echo $stub_pid >stub1.pid &&
	rel_campaign k.yaml rel $stub_port &&
	rel_kill_series $KILLS k.db k.yaml m1 &&
	test "$(sqlite3 k.db "select count(*) from runs where outcome is null or outcome = '"'"'crashed'"'"'")" -ge 1 &&
	sluice run --store k.db k.yaml >out &&
	rel_states k.db >states.k &&
	test_cmp states.u states.k
'

test_expect_success 'a resumed attempt carried the earlier reply and its feedback' '
	# no second attempt was asked without the first reply: every request
	# the model answered with the WRONG reply was a first attempt
	test "$(sqlite3 k.db "select count(*) from attempts where n = 2 and prompt not like '"'"'%WRONG%'"'"'")" = 0 &&
	test "$(sqlite3 k.db "select count(*) from attempts where n = 1 and feedback like '"'"'%WRONG%'"'"'")" = $N
'

# In flight at a kill: a request asked, or answered and not yet journalled;
# a model slot is held until its reply is journalled, so at most
# `concurrency` (4) of them.
test_expect_success 'tokens billed exceed the uninterrupted run by at most the requests in flight' '
	r=$(rel_requests m1) &&
	echo "requests: $r, uninterrupted $((2 * N)), bound $((2 * N + 4 * KILLS))" &&
	test $r -le $((2 * N + 4 * KILLS)) &&
	test "$(sqlite3 k.db "select sum(tokens_in + tokens_out) from attempts")" = \
	     "$(sqlite3 u.db "select sum(tokens_in + tokens_out) from attempts")" &&
	test "$(sqlite3 k.db "pragma integrity_check")" = ok &&
	kill $(cat stub1.pid)
'

test_expect_success 'setup: a fresh model server' '
	rel_model m2 100 && start_stub m2 && echo $stub_pid >stub2.pid && echo $stub_port >port2 &&
	rel_campaign p.yaml rel $stub_port
'

test_expect_success 'two runs at once share the work: every target worked once' '
	{ sluice run --store p2.db p.yaml >out1 2>err1 & p1=$!; } &&
	{ sluice run --store p2.db p.yaml >out2 2>err2 & p2=$!; } &&
	{ wait $p1; r1=$?; } && { wait $p2; r2=$?; } &&
	cat err1 err2 &&
	test $r1 = 0 && test $r2 = 0 &&
	rel_states p2.db >states.p2 &&
	test_cmp states.u states.p2 &&
	test $(rel_requests m2) = $((2 * N)) &&
	test "$(sqlite3 p2.db "select count(distinct owner) from runs")" = 2
'

# check_branches STORE PREFIX: the branches under the store's prefix (PREFIX,
# or PREFIX-ID8 where another store of the campaign holds PREFIX's names)
# are those of the passed candidates, each at its candidate's commit
check_branches() {
	sqlite3 "$1" "select branch || ' ' || commit_oid from candidates where state = 'passed'" >want.br &&
	prefix=$(head -1 want.br | sed "s|/[^/]* .*||") &&
	prefix=${prefix:-$2} &&
	case $prefix in "$2"|"$2"-????????) ;; *) false ;; esac &&
	git -C repo for-each-ref --format="%(refname:short) %(objectname)" refs/heads/$prefix/ |
		grep -v "/base-" | sort >have.br &&
	sort want.br >want.sorted &&
	test_cmp want.sorted have.br
}

test_expect_success 'each proposed branch is there, at its own candidate commit' '
	check_branches p2.db sluice/rel
'

test_expect_success 'setup: the model server again, no branches' '
	kill $(cat stub2.pid) && rm -f m2/request-* && start_stub m2 && echo $stub_pid >stub2.pid &&
	echo $stub_port >port2 &&
	sed -i "s/127.0.0.1:[0-9]*/127.0.0.1:$stub_port/" p.yaml &&
	for b in $(git -C repo for-each-ref --format="%(refname)" refs/heads/sluice/rel/); do
		git -C repo update-ref -d $b || return 1
	done
'

test_expect_success 'three runs at once: the same result, no duplicate work, no error' '
	{ sluice run --store p3.db p.yaml >out1 2>err1 & p1=$!; } &&
	{ sluice run --store p3.db p.yaml >out2 2>err2 & p2=$!; } &&
	{ sluice run --store p3.db p.yaml >out3 2>err3 & p3=$!; } &&
	{ wait $p1; r1=$?; } && { wait $p2; r2=$?; } && { wait $p3; r3=$?; } &&
	cat err1 err2 err3 &&
	test $r1 = 0 && test $r2 = 0 && test $r3 = 0 &&
	rel_states p3.db >states.p3 &&
	test_cmp states.u states.p3 &&
	test $(rel_requests m2) = $((2 * N)) &&
	check_branches p3.db sluice/rel
'

test_expect_success 'leases: a live one of another machine is respected, an expired one taken over' '
	rel_campaign l.yaml lease $(cat port2) "budget:" "  max_tokens: 1" &&
	{ sluice run --store l.db l.yaml >out 2>err; rc=$?; } &&
	test "$(sqlite3 l.db "select count(*) from targets where state = '"'"'budget'"'"'")" -ge $((N - 1)) &&
	far=$(( $(date +%s) * 1000 + 3600000 )) &&
	sqlite3 l.db "update targets set lease_owner = '"'"'otherhost:1:1'"'"', lease_expires = $far
		where id = (select min(id) from targets where state = '"'"'budget'"'"')" &&
	sqlite3 l.db "update targets set lease_owner = '"'"'otherhost:2:1'"'"', lease_expires = 1
		where id = (select max(id) from targets where state = '"'"'budget'"'"')" &&
	sluice status --store l.db >st &&
	grep -q "^lease: otherhost:1:1 holds 1 target " st &&
	sluice status --store l.db --json >st.json &&
	grep -q "\"leases\":\[{\"owner\":\"otherhost:1:1\",\"targets\":1," st.json &&
	grep -q "^lease: otherhost:2:1 held 1 target, expired since 1970-01-01T00:00:00Z" st &&
	grep -q "{\"owner\":\"otherhost:2:1\",\"targets\":1,\"expires_in_ms\":-[0-9]*,\"expired\":true," st.json &&
	sed -i "s/max_tokens: 1$/max_tokens: 100000000/" l.yaml &&
	sluice run --store l.db l.yaml >out 2>err &&
	grep -q "1 targets are held by another run" err &&
	test "$(sqlite3 l.db "select state from targets where lease_owner = '"'"'otherhost:1:1'"'"'")" = budget &&
	test "$(sqlite3 l.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = $((N - 1)) &&
	sqlite3 l.db "update targets set lease_expires = 1 where lease_owner = '"'"'otherhost:1:1'"'"'" &&
	sluice run --store l.db l.yaml >out 2>err &&
	test "$(sqlite3 l.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = $N
'

test_expect_success 'retry: a rejected candidate goes back, its reason reaches the model' '
	id=$(sqlite3 p3.db "select min(id) from candidates where state = '"'"'passed'"'"'") &&
	sluice reject $id --reason "keep the name of the function" --store p3.db &&
	sluice retry --store p3.db --state rejected >out &&
	test "$(cat out)" = "sent back 1 target" &&
	before=$(rel_requests m2) &&
	sluice run --store p3.db p.yaml >out 2>err &&
	test $(rel_requests m2) = $((before + 1)) &&
	grep -q "A reviewer rejected this change: keep the name of the function" m2/request-$((before + 1)).json &&
	test "$(sqlite3 p3.db "select t.state, t.attempts from targets t join candidates c on c.target_id = t.id where c.id = $id")" = "proposed|3"
'

test_expect_success 'retry PATH:LINE sends a proposed target back; an unknown place is exit 2' '
	sluice retry --store p3.db src/m1.c:3 >out &&
	test "$(cat out)" = "sent back 1 target" &&
	test "$(sqlite3 p3.db "select state from targets where path = '"'"'src/m1.c'"'"' and start_line = 3")" = pending &&
	test_expect_code 2 sluice retry --store p3.db src/nowhere.c:1 2>err &&
	grep -q "no target of campaign .rel. at .src/nowhere.c:1." err &&
	test_expect_code 2 sluice retry --store p3.db --state proposed 2>err &&
	grep -q "unknown state" err &&
	sluice run --store p3.db p.yaml >out 2>err &&
	test "$(sqlite3 p3.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = $N
'

test_expect_success 'a rerun after a change of the gates says how many were judged otherwise' '
	sed "s/forbid: \[\"WRONG\"\]/forbid: [\"WRONG\", \"XYZZY\"]/" p.yaml >p2.yaml &&
	! cmp p.yaml p2.yaml &&
	sluice run --store p3.db p2.yaml >out 2>err &&
	grep -q "^sluice: $N finished targets were judged under another definition" err &&
	sluice run --store p3.db p.yaml >out 2>err &&
	! grep -q "judged under another definition" err
'

test_expect_success 'retry --state stale sends back what the last definition did not judge' '
	sluice run --store p3.db p2.yaml >out 2>err &&
	sluice retry --store p3.db --state stale >out &&
	test "$(cat out)" = "sent back $N targets" &&
	sluice run --store p3.db p2.yaml >out 2>err &&
	! grep -q "judged under another definition" err &&
	test "$(sqlite3 p3.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = $N &&
	sluice retry --store p3.db --state stale >out &&
	test "$(cat out)" = "sent back 0 targets" &&
	sluice run --store p3.db p.yaml >out 2>err
'

test_expect_success 'gc removes stale branches and ref locks, keeps proposed ones, nothing else' '
	git -C repo branch sluice/rel/stale-one "$(leftover_commit repo p3.db)" &&
	: >repo/.git/refs/heads/sluice/rel/src-m0.c-L1.lock &&
	git -C repo branch keep-me main &&
	id=$(sqlite3 p3.db "select max(id) from candidates where state = '"'"'passed'"'"'") &&
	sluice reject $id --reason "no" --store p3.db &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" | grep -v "^refs/heads/sluice/rel/" >outside.before &&
	sluice gc --store p3.db >out &&
	grep -q "^removed 2 branches$" out &&
	test ! -e repo/.git/refs/heads/sluice/rel/src-m0.c-L1.lock &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" | grep -v "^refs/heads/sluice/rel/" >outside.after &&
	test_cmp outside.before outside.after &&
	sqlite3 p3.db "select c.branch || '"'"' '"'"' || c.commit_oid from candidates c where c.state = '"'"'passed'"'"' and c.id <> $id and not exists (select 1 from decisions d where d.candidate_id = c.id and d.decision = '"'"'reject'"'"')" | sort >want.br &&
	git -C repo for-each-ref --format="%(refname:short) %(objectname)" refs/heads/sluice/rel/ | sort >have.br &&
	test_cmp want.br have.br
'

test_expect_success 'gc leaves the branches of a campaign a run is working on' '
	sluice retry --store l.db src/m0.c:2 >out &&
	far=$(( $(date +%s) * 1000 + 3600000 )) &&
	sqlite3 l.db "update targets set lease_owner = '"'"'otherhost:9:9'"'"', lease_expires = $far where state = '"'"'pending'"'"'" &&
	git -C repo branch sluice/lease/stale-two main &&
	git -C repo for-each-ref refs/heads/sluice/lease/ >before &&
	sluice gc --store l.db >out 2>err &&
	grep -q "campaign .lease.: a run is working on it (otherhost:9:9)" err &&
	grep -q "^removed 0 branches$" out &&
	git -C repo for-each-ref refs/heads/sluice/lease/ >after &&
	test_cmp before after
'

test_expect_success 'setup: a slow gate, ten targets' '
	rel_campaign s.yaml sig $(cat port2) "  - name: slow" "    command: sleep 1" "    timeout: 60" &&
	sed -i "s/^  unit: function/&\n  paths: [\"src\/m0.c\"]/" s.yaml &&
	grep -q "paths: \[\"src/m0.c\"\]" s.yaml
'

# wait_for_worktree DIR: until a candidate's tree (a worktree, or its layer
# over the warm base) appears under DIR (bounded)
wait_for_worktree() {
	i=0
	while [ $i -lt 1200 ]; do
		ls "$1" 2>/dev/null | grep -q -e "^sl-" -e "^layer-" && return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

test_expect_success 'SIGTERM: gates killed, worktrees and unpassed branches removed, exit 143' '
	{ sluice run --store g.db s.yaml >out 2>err & pid=$!; } &&
	wait_for_worktree scratch/sig &&
	kill -TERM $pid &&
	{ wait $pid; rc=$?; } &&
	cat err &&
	test $rc = 143 &&
	grep -q "stopped by SIGTERM" err &&
	test -z "$(ls scratch/sig | grep -e "^sl-" -e "^layer-")" &&
	test $(git -C repo worktree list | wc -l) = 1 &&
	check_branches g.db sluice/sig &&
	test "$(sqlite3 g.db "select outcome from runs")" = stopped &&
	test "$(sqlite3 g.db "select count(*) from targets where state = '"'"'pending'"'"'")" -ge 1 &&
	test "$(sqlite3 g.db "select count(*) from targets where state = '"'"'failed'"'"'")" = 0
'

test_expect_success 'SIGINT twice exits at once with 130; the next run resumes and finishes' '
	{ sluice run --store g.db s.yaml >out 2>err & pid=$!; } &&
	wait_for_worktree scratch/sig &&
	kill -INT $pid && kill -INT $pid &&
	{ wait $pid; rc=$?; } &&
	test $rc = 130 &&
	sluice run --store g.db s.yaml >out 2>err &&
	test "$(sqlite3 g.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = 10 &&
	test -z "$(ls scratch/sig | grep -e "^sl-" -e "^layer-")" &&
	test "$(sqlite3 g.db "select count(*) from attempts where n > 2")" = 0
'

test_expect_success 'SIGINT aborts the model requests in flight: nothing arrives, nothing is lost' '
	rel_model slow 20000 && start_stub slow && echo $stub_pid >stub-slow.pid &&
	rel_campaign q.yaml quiet $stub_port &&
	{ sluice run --store q.db q.yaml >out 2>err & pid=$!; } &&
	i=0 &&
	while [ $i -lt 1200 ] && ! test -f slow/request-1.json; do sleep 0.05; i=$((i + 1)); done &&
	test -f slow/request-1.json &&
	kill -INT $pid &&
	{ wait $pid; rc=$?; } &&
	kill $(cat stub-slow.pid) &&
	test $rc = 130 &&
	test "$(sqlite3 q.db "select count(*) from replies")" = 0 &&
	test "$(sqlite3 q.db "select count(*) from attempts")" = 0 &&
	test "$(sqlite3 q.db "select count(*) from targets where state <> '"'"'pending'"'"' or attempts <> 0")" = 0
'

test_expect_success 'cleanup' '
	{ kill $(cat stub2.pid) 2>/dev/null || true; }
'

test_done
