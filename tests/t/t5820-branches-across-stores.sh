#!/bin/sh
test_description='run: stores that run campaigns of one name share no branch (issue 25)

A branch carries the identity of the store that made it (its commit'"'"'s
Sluice-Store trailer): a run of another store neither deletes nor moves it,
says so, and proposes its own candidate on a branch of its own; status
tells whether each proposed branch still holds its candidate.'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'setup: three calls, one a line' '
	mkdir -p repo/src &&
	printf "a()\nb()\nc()\n" >repo/src/m.py &&
	make_repo repo &&
	share_campaign pass.yaml "z()" true &&
	# passes on the base, fails on its own candidates
	share_campaign fail.yaml "q()" "! grep -q q src/m.py"
'

test_expect_success 'a first store proposes three branches' '
	sluice run --store a.db pass.yaml >out &&
	test "$(store_query a.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 3 &&
	branches_hold a.db &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/ >a.refs &&
	test $(wc -l <a.refs) = 3 &&
	git -C repo log -1 --format=%B "$(head -1 a.refs | cut -d" " -f2)" >msg &&
	grep "^Sluice-Store: [0-9a-f]\{16\}/1$" msg
'

test_expect_success 'a second store whose gate fails leaves them alone, and says so' '
	{ sluice run --store b.db fail.yaml >out 2>err; test $? = 1; } &&
	test "$(store_query b.db "select count(*) from candidates where state = '"'"'failed'"'"'")" = 3 &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/ >now &&
	test_cmp a.refs now &&
	branches_hold a.db &&
	grep "branch '"'"'sluice/share/src-m.py-L1'"'"' is held by another store" err
'

test_expect_success 'two more stores: each proposes on its own branches, none moved' '
	share_campaign y.yaml "y()" true &&
	share_campaign w.yaml "w()" true &&
	sluice run --store c.db y.yaml >out 2>err &&
	grep "is held by another store" err &&
	sluice run --store d.db w.yaml >out 2>err &&
	for s in a c d; do
		test "$(store_query $s.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 3 &&
		branches_hold $s.db || return 1
	done &&
	store_query c.db "select branch from candidates" >c.branches &&
	store_query d.db "select branch from candidates" >d.branches &&
	! grep -F -f c.branches a.refs &&
	! grep -x -F -f c.branches d.branches &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/share/ >now &&
	test_cmp a.refs now
'

test_expect_success 'status of each store is truthful about its branches' '
	for s in a c d; do
		sluice status --store $s.db >st.$s &&
		test $(grep -c "^ *[0-9][0-9]*  src/m.py:[0-9]  sluice/share" st.$s) = 3 &&
		! grep "holds another commit" st.$s || return 1
	done &&
	# a branch moved behind sluice'"'"'s back: its store says so
	branch=$(store_query a.db "select branch from candidates where id = 1") &&
	git -C repo branch -f "$branch" main &&
	sluice status --store a.db >st &&
	grep "  $branch  (the branch now holds another commit)" st &&
	sluice show --store a.db 1 >sh &&
	grep "^state:    passed, proposed on $branch (the branch now holds another commit)" sh &&
	git -C repo branch -D "$branch" &&
	sluice status --store a.db >st &&
	grep "  $branch  (the branch is gone)" st
'

test_done
