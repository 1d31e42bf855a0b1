#!/bin/sh
test_description='a gateless run flushing its batch after another store wrote its branch names (issue 25)

A run without gates queues its candidates'"'"' branches and writes them when
it flushes the batch.  When another store proposes on the same names in
between, the flush leaves that store'"'"'s branches alone and writes its
own candidates on its store'"'"'s own names (PREFIX-ID8), recorded so: no
candidate is left recorded on a branch that holds another store'"'"'s commit.'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

test_expect_success 'setup: a campaign without gates' '
	mkdir -p repo/src &&
	printf "a()\nb()\nc()\n" >repo/src/m.py &&
	make_repo repo &&
	share_campaign full.yaml "z()" true &&
	# one worker: a kill before its flush comes after every candidate is recorded
	sed -e "/^gates:/,\$d" full.yaml >g.yaml &&
	echo "jobs: 1" >>g.yaml &&
	! grep -q "^gates:" g.yaml
'

test_expect_success 'store B waits to flush while store A proposes on the same names' '
	{ SLUICE_TEST_STOP_BEFORE_FLUSH=1 timeout -s KILL 600 sluice run --store b.db g.yaml \
		>outB 2>errB & tb=$!; } &&
	poll "test -n \"\$(run_pid_of b.db)\"" &&
	pb=$(run_pid_of b.db) &&
	poll "grep -q \"^State:.*T\" /proc/$pb/status" &&
	test "$(store_query b.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 3 &&
	sluice run --store a.db g.yaml >outA 2>errA &&
	branches_hold a.db &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/ >a.refs &&
	test $(wc -l <a.refs) = 3 &&
	kill -CONT $pb &&
	{ wait $tb; rb=$?; } &&
	cat errB &&
	test $rb = 0
'

test_expect_success 'B leaves A'"'"'s branches alone and records its own names' '
	git -C repo for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/share/ >now &&
	test_cmp a.refs now &&
	branches_hold a.db &&
	branches_hold b.db &&
	store_query b.db "select branch from candidates where state = '"'"'passed'"'"'" >b.branches &&
	test $(grep -c "^sluice/share-[0-9a-f]\{8\}/" b.branches) = 3 &&
	grep "is held by another store" errB &&
	sluice status --store b.db --json >st.json &&
	test "$(jq -r "[.candidate_list[].branch_state] | unique | join(\",\")" st.json)" = ours
'

# the same race through a crash: C is killed before its flush, D proposes
# on the names, C'"'"'s rerun restores its candidates from its journal
test_expect_success 'setup: a second repository' '
	mkdir -p repo2/src &&
	printf "a()\nb()\n" >repo2/src/m.py &&
	make_repo repo2 &&
	sed -e "s/^repository: repo$/repository: repo2/" g.yaml >g2.yaml &&
	grep -q "^repository: repo2$" g2.yaml
'

test_expect_success 'a run killed before its flush, another store on the names, the rerun restores on its own' '
	{ SLUICE_TEST_KILL_BEFORE_FLUSH=1 sluice run --store c.db g2.yaml >outC 2>errC; rc=$?; } &&
	test $rc = 137 &&
	test "$(store_query c.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 2 &&
	test -z "$(git -C repo2 for-each-ref refs/heads/sluice/)" &&
	sluice run --store d.db g2.yaml >outD 2>errD &&
	branches_hold d.db repo2 &&
	git -C repo2 for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/ >d.refs &&
	sluice run --store c.db g2.yaml >outC2 2>errC2 &&
	cat errC2 &&
	grep "is held by another store" errC2 &&
	git -C repo2 for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/share/ >now &&
	test_cmp d.refs now &&
	branches_hold d.db repo2 &&
	branches_hold c.db repo2 &&
	test $(store_query c.db "select branch from candidates where state = '"'"'passed'"'"'" |
		grep -c "^sluice/share-[0-9a-f]\{8\}/") = 2
'

# a rerun whose pid is the killed run'"'"'s (a container gives each run the same
# one): the journal is the dead run'"'"'s all the same, restored, not overwritten
test_expect_success 'a rerun with the killed run'"'"'s pid restores its journal' '
	mkdir -p repo3/src &&
	printf "a()\nb()\n" >repo3/src/m.py &&
	make_repo repo3 &&
	sed -e "s/^repository: repo$/repository: repo3/" -e "s/^name: share$/name: reuse/" \
		g.yaml >g3.yaml &&
	{ SLUICE_TEST_KILL_BEFORE_FLUSH=1 sluice run --store e.db g3.yaml >outE 2>errE & pe=$!; } &&
	{ wait $pe; rc=$?; } &&
	test $rc = 137 &&
	test "$(store_query e.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 2 &&
	ls scratch/reuse | grep "^journal-" >journals &&
	test -s journals &&
	# the rerun gets pe'"'"'s pid: its journals named as if this pid wrote them
	# before the rerun started (in 2001)
	cat >rerun.sh <<-\EOS &&
	for j in $(cat journals); do
		new=$(echo "$j" | sed -e "s/-$1-[0-9]*-\([0-9]*\)$/-$$-1000000000000-\1/" \
			-e "s/^journal-$1-/journal-$$-/")
		mv "scratch/reuse/$j" "scratch/reuse/$new"
	done
	exec sluice run --store e.db g3.yaml
	EOS
	sh rerun.sh $pe >outE2 2>errE2 &&
	cat errE2 &&
	branches_hold e.db repo3 &&
	test "$(git -C repo3 for-each-ref refs/heads/sluice/ | wc -l)" = 2 &&
	test -z "$(ls scratch/reuse | grep "^journal-")"
'

test_done
