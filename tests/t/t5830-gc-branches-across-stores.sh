#!/bin/sh
test_description='gc --store deletes only the branches its store made (issue 25)

A stale branch is one whose commit carries the store'"'"'s Sluice-Store
trailer and that no proposed or accepted candidate keeps: another store'"'"'s
branches and branches without the trailer stay, with a notice; the store'"'"'s
leftovers under PREFIX-ID8/ go too; a run of this host whose process is
gone holds nothing, lease or not.'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# tag_of STORE: the trailer's tag of the store's campaign
tag_of() {
	echo "$(store_query "$1" "select value from store_meta where key = 'store_id'")/1"
}

# plant BRANCH STORE: a leftover candidate of the store
plant() {
	git -C repo update-ref "refs/heads/$1" "$(leftover_commit repo "$2")"
}

test_expect_success 'setup: a first store proposes three branches, a second none' '
	mkdir -p repo/src &&
	printf "a()\nb()\nc()\n" >repo/src/m.py &&
	make_repo repo &&
	share_campaign pass.yaml "z()" true &&
	share_campaign fail.yaml "q()" "! grep -q q src/m.py" &&
	share_campaign y.yaml "y()" true &&
	sluice run --store a.db pass.yaml >out &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/share/ >a.refs &&
	test $(wc -l <a.refs) = 3 &&
	{ sluice run --store b.db fail.yaml >out 2>err; test $? = 1; } &&
	test "$(store_query b.db "select count(*) from candidates where state = '"'"'failed'"'"'")" = 3
'

test_expect_success 'gc of the second store leaves the first store'"'"'s branches and unmarked ones, and says so' '
	git -C repo branch sluice/share/mine main &&
	sluice gc --store b.db >out 2>err &&
	grep "^removed 0 branches$" out &&
	grep "campaign '"'"'share'"'"': 4 branches (.*) not made by this store (another store'"'"'s, or without its Sluice-Store trailer): left alone" err &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/share/ >now &&
	grep -v /mine now >now.a &&
	test_cmp a.refs now.a &&
	git -C repo rev-parse --verify -q refs/heads/sluice/share/mine
'

test_expect_success 'gc of the store that made a leftover deletes it, and only it' '
	plant sluice/share/stale-1 a.db &&
	sluice gc --store a.db >out 2>err &&
	grep "^removed 1 branch$" out &&
	! git -C repo rev-parse --verify -q refs/heads/sluice/share/stale-1 &&
	git -C repo rev-parse --verify -q refs/heads/sluice/share/mine &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/share/ >now &&
	grep -v /mine now >now.a &&
	test_cmp a.refs now.a
'

test_expect_success 'the store'"'"'s leftovers under PREFIX-ID8/ go too' '
	sluice run --store c.db y.yaml >out 2>err &&
	id8=$(tag_of c.db | cut -c1-8) &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" "refs/heads/sluice/share-$id8/" >c.refs &&
	test $(wc -l <c.refs) = 3 &&
	plant "sluice/share-$id8/stale-2" c.db &&
	sluice gc --store c.db >out 2>err &&
	grep "^removed 1 branch$" out &&
	! git -C repo rev-parse --verify -q "refs/heads/sluice/share-$id8/stale-2" &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" "refs/heads/sluice/share-$id8/" >now &&
	test_cmp c.refs now &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/share/ >now &&
	grep -v /mine now >now.a &&
	test_cmp a.refs now.a
'

test_expect_success 'a crashed run of this host holds nothing: its leftover goes at once' '
	host=$(uname -n | tr : -) &&
	dead=$(sh -c "echo \$\$") && ! kill -0 $dead 2>/dev/null &&
	store_query b.db "update targets set state = '"'"'pending'"'"', lease_owner = '"'"'$host:$dead:1'"'"', lease_expires = 9000000000000000 where id = 1" &&
	plant sluice/share/crash-1 b.db &&
	sluice gc --store b.db >out 2>err &&
	grep "campaign '"'"'share'"'"': run $host:$dead:1 of this host is gone; the 1 target it leased is free" err &&
	grep "^removed 1 branch$" out &&
	! git -C repo rev-parse --verify -q refs/heads/sluice/share/crash-1
'

test_expect_success 'a live run'"'"'s lease still keeps gc off the campaign'"'"'s branches' '
	# an owner names its start: this shell was alive then
	owner=$(uname -n | tr : -):$$:$(date +%s)000 &&
	store_query b.db "update targets set lease_owner = '"'"'$owner'"'"' where id = 1" &&
	plant sluice/share/crash-2 b.db &&
	sluice gc --store b.db >out 2>err &&
	grep "a run is working on it ($owner); its branches are left alone" err &&
	grep "^removed 0 branches$" out &&
	git -C repo rev-parse --verify -q refs/heads/sluice/share/crash-2
'

test_done
