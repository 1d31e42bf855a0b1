#!/bin/sh
test_description='gc --store removes only the warm bases that store used: another store'"'"'s stay, a shared one stays for the other store'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

warm_of() {
	find "$TRASH/scratch/$1" -maxdepth 1 -name "warm-*" | sort
}

test_expect_success 'setup: store a runs greet; store b runs other and greet' '
	greet_repo repo &&
	write_campaign greet.yaml &&
	sed "s/^name: greet/name: other/" greet.yaml >other.yaml &&
	sed "s/^name: greet/name: mine/" greet.yaml >mine.yaml &&
	sluice baseline --store a.db greet.yaml >out &&
	sluice baseline --store a.db mine.yaml >out &&
	sluice baseline --store b.db other.yaml >out &&
	sluice baseline --store b.db greet.yaml >out &&
	test "$(warm_of greet | wc -l)" = 1 &&
	test "$(warm_of other | wc -l)" = 1 &&
	test "$(wc -l <"$(warm_of greet)/stores")" = 2 &&
	grep -qx "$TRASH/a.db" "$(warm_of greet)/stores" &&
	grep -qx "$TRASH/b.db" "$(warm_of other)/stores" &&
	# a warm base from before sluice noted its stores
	mkdir scratch/greet/warm-0123456789abcdef &&
	: >scratch/greet/warm-0123456789abcdef/lock
'

test_expect_success 'gc --store b.db: its own warm base goes, the shared one stays for a, a'"'"'s own is untouched' '
	sluice gc --store b.db >out &&
	grep -q "removed 2 warm bases" out &&
	test "$(warm_of other | wc -l)" = 0 &&
	test "$(warm_of greet | wc -l)" = 1 &&
	test "$(warm_of mine | wc -l)" = 1 &&
	echo "$TRASH/a.db" >expect &&
	test_cmp expect "$(warm_of greet)/stores"
'

test_expect_success 'gc --store a.db: the last store that used it, so the warm base goes' '
	sluice gc --store a.db >out &&
	grep -q "removed 2 warm bases," out &&
	test "$(warm_of greet | wc -l)" = 0 &&
	test "$(warm_of mine | wc -l)" = 0
'

test_done
