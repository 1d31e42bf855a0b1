#!/bin/sh
test_description='status --json and show --json tell what each candidate'"'"'s branch holds (issue 25)

branch_state is ours (the branch holds the candidate), moved (another
commit), other-store (a commit another store made, by its Sluice-Store
trailer) or gone; null for a candidate without a branch.  The text says
the same.'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# states STORE: "ID STATE" of each candidate in status --json, by id
states() {
	sluice status --store "$1" --json >st.json &&
	jq -r ".candidate_list[] | \"\(.id) \(.branch_state)\"" st.json | sort -n
}

test_expect_success 'setup: two stores propose on one repository' '
	mkdir -p repo/src &&
	printf "a()\nb()\nc()\nd()\n" >repo/src/m.py &&
	make_repo repo &&
	share_campaign pass.yaml "z()" true &&
	sluice run --store a.db pass.yaml >out &&
	share_campaign y.yaml "y()" true &&
	sluice run --store b.db y.yaml >out 2>err &&
	test "$(store_query a.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 4
'

test_expect_success 'every branch holds its candidate: ours' '
	states a.db >got &&
	printf "1 ours\n2 ours\n3 ours\n4 ours\n" >want &&
	test_cmp want got
'

test_expect_success 'moved, another store'"'"'s commit, gone: each said so' '
	b1=$(store_query a.db "select branch from candidates where id = 1") &&
	b2=$(store_query a.db "select branch from candidates where id = 2") &&
	b3=$(store_query a.db "select branch from candidates where id = 3") &&
	other=$(store_query b.db "select commit_oid from candidates where id = 1") &&
	git -C repo branch -f "$b1" main &&
	git -C repo branch -f "$b2" "$other" &&
	git -C repo branch -D "$b3" &&
	states a.db >got &&
	printf "1 moved\n2 other-store\n3 gone\n4 ours\n" >want &&
	test_cmp want got &&
	sluice show --store a.db --json 2 >show.json &&
	test "$(jq -r .branch_state show.json)" = other-store &&
	sluice status --store a.db >st &&
	grep "  $b1  (the branch now holds another commit)" st &&
	grep "  $b2  (the branch now holds another store'"'"'s commit)" st &&
	grep "  $b3  (the branch is gone)" st &&
	sluice show --store a.db 2 >sh &&
	grep "^state:    passed, proposed on $b2 (the branch now holds another store'"'"'s commit)" sh
'

test_done
