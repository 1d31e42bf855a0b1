#!/bin/sh
test_description='store faults are named: read-only, damaged, disk full'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'setup: a finished campaign' '
	greet_repo repo &&
	write_campaign c.yaml &&
	sluice run --store s.db c.yaml >out &&
	sluice status --store s.db >status.rw &&
	mkdir ro && cp s.db ro/ && ls ro >listing
'

# in_ro CMD...: run CMD with ./ro mounted read-only (a mount namespace of its own)
in_ro() {
	unshare -rm sh -c 'mount --bind ro ro && mount -o remount,bind,ro ro && exec "$@"' sh "$@"
}

test_expect_success 'read-only store: read commands work' '
	in_ro sluice status --store ro/s.db >status.ro &&
	test_cmp status.rw status.ro &&
	id=$(sqlite3 s.db "select min(id) from candidates where state = '"'"'passed'"'"'") &&
	in_ro sluice show $id --store ro/s.db >show.ro &&
	grep -q "^diff --git" show.ro &&
	in_ro sluice export --store ro/s.db --out exp >/dev/null &&
	test -s exp/series.mbox
'

test_expect_success 'read-only store: write commands say so, exit 2, nothing changes' '
	id=$(sqlite3 s.db "select min(id) from candidates where state = '"'"'passed'"'"'") &&
	test_expect_code 2 in_ro sluice accept $id --store ro/s.db 2>err &&
	grep -q "store .ro/s.db. is read-only" err &&
	test_expect_code 2 in_ro sluice run --store ro/s.db c.yaml 2>err &&
	grep -q "store .ro/s.db. is read-only" err &&
	ls ro >listing.after &&
	test_cmp listing listing.after &&
	cmp s.db ro/s.db
'

test_expect_success 'a store whose last page is garbage is reported damaged, exit 2' '
	cp s.db bad.db &&
	size=$(stat -c %s bad.db) &&
	page=$(sqlite3 bad.db "pragma page_size") &&
	yes garbage | head -c $page | dd of=bad.db bs=$page seek=$((size / page - 1)) conv=notrunc 2>/dev/null &&
	test_expect_code 2 sluice status --store bad.db >out 2>err &&
	grep -q "store .bad.db. is damaged" err &&
	test ! -s out &&
	test_expect_code 2 sluice export --store bad.db --out x 2>err &&
	grep -q "is damaged" err &&
	test_expect_code 2 sluice run --store bad.db c.yaml 2>err &&
	grep -q "is damaged" err
'

test_expect_success 'disk full: a clear error, and the next run resumes' '
	greet_repo repo2 &&
	RULE_TEMPLATE= write_campaign d.yaml &&
	sed -i -e "s/^name: greet/name: full/" -e "s/^repository: repo/repository: repo2/" d.yaml &&
	mkdir small &&
	unshare -rm sh -c "mount -t tmpfs -o size=200k tmpfs small &&
		head -c 150000 /dev/zero >small/filler &&
		sluice run --store small/f.db d.yaml >out 2>err; echo \$? >rc;
		cp small/f.db* . 2>/dev/null; true" &&
	cat err &&
	test "$(cat rc)" = 3 &&
	grep -q "the disk is full" err &&
	sluice run --store f.db d.yaml >out 2>err &&
	grep -q "proposed  *3" out
'

test_done
