#!/bin/sh
test_description='a campaign as 4 shards (own clone, store and bundle each) merged equals the campaign on one machine; merge is idempotent; mismatches are refused'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-shard.sh"


test_expect_success 'setup: the example project, a clone per machine, the base commit' '
	cp -R "$EXAMPLES/migration/project" user &&
	make_repo user &&
	for d in single s0 s1 s2 s3 s3b sd p; do git clone -q user $d || return 1; done &&
	BASE=$(git -C user rev-parse main) &&
	echo "$BASE" >base
'
BASE=$(cat base 2>/dev/null)
BASE12=$(echo "$BASE" | cut -c1-12)

test_expect_success 'shard-plan prints how many targets each shard gets' '
	sl shard-plan --repo "$TRASH/user" --shards 4 $CAMPAIGN >plan &&
	head -1 plan | grep -q "^campaign buf-copy-n: 3 targets on base $BASE12 in 4 shards$" &&
	test $(grep -c "^shard [0-3]/4: [0-9]*$" plan) = 4 &&
	test $(sed -n "s|^shard ./4: ||p" plan | awk "{ s += \$1 } END { print s }") = 3 &&
	sl shard-plan --json --repo "$TRASH/user" --shards 4 $CAMPAIGN >plan.json &&
	grep -q "\"targets\":3,\"shards\":\[[0-9],[0-9],[0-9],[0-9]\]" plan.json &&
	test_expect_code 2 sl shard-plan --repo "$TRASH/user" $CAMPAIGN 2>err &&
	grep -q "shards N is required" err
'

test_expect_success 'the campaign on one machine' '
	sl run --repo "$TRASH/single" --store "$TRASH/single.db" $CAMPAIGN >single.out 2>&1 &&
	grep -q "proposed  *3" single.out
'

test_expect_success 'four shards, each in its clone with its store and bundle, on the base' '
	for k in 0 1 2 3; do
		run_shard $k 4 s$k s$k.db --base "$BASE" --bundle "$TRASH/b$k.bundle" || return 1
	done &&
	for k in 0 1 2 3; do
		test "$(sqlite3 s$k.db "select count(*) from targets")" = "$(sed -n "s|^shard $k/4: ||p" plan)" || return 1
	done &&
	test "$(for k in 0 1 2 3; do sqlite3 s$k.db "select key from targets"; done | sort | uniq -d)" = ""
'

test_expect_success 'status on a shard store says which shard it is and how far it got' '
	n=$(sed -n "s|^shard 3/4: ||p" plan) &&
	sluice status --store s3.db >st3 &&
	grep -q "^shard: 3/4 of base $BASE12: $n of $n targets finished$" st3 &&
	sluice status --store s3.db --json >st3.json &&
	grep -q "\"shard\":{\"index\":3,\"count\":4,\"base\":\"$BASE\",\"targets\":$n,\"finished\":$n}" st3.json &&
	sluice status --store single.db >st &&
	! grep -q "^shard" st
'

test_expect_success 'a shard store refuses another shard and an unsharded run; bad --shard is a usage error' '
	test_expect_code 2 sl run --shard 1/4 --repo "$TRASH/s0" --store "$TRASH/s0.db" $CAMPAIGN 2>err &&
	grep -q "holds shard 0/4, not 1/4" err &&
	test_expect_code 2 sl run --repo "$TRASH/s0" --store "$TRASH/s0.db" $CAMPAIGN 2>err &&
	grep -q "holds shard 0/4 of the campaign; run it with --shard 0/4" err &&
	test_expect_code 2 sl run --shard 0/4 --repo "$TRASH/single" --store "$TRASH/single.db" $CAMPAIGN 2>err &&
	grep -q "holds targets of a run that was no shard" err &&
	for bad in 4/4 1/0 x 1/4x -1/4 /4; do
		test_expect_code 2 sl run --shard $bad --store "$TRASH/bad.db" $CAMPAIGN 2>err &&
		grep -q "expected K/N with 0 <= K < N" err || return 1
	done &&
	! test -e bad.db
'

test_expect_success 'a shard whose base is not the one it is told is refused, nothing stored' '
	git clone -q user other &&
	echo "/* later */" >>other/app/main.c &&
	git -C other commit -q -am later &&
	test_expect_code 2 sl run --shard 0/4 --base "$BASE" --repo "$TRASH/other" --store "$TRASH/other.db" $CAMPAIGN 2>err &&
	grep -q "every shard must scope the same base" err &&
	! test -e other.db &&
	test_expect_code 2 sl run --shard 0/4 --base nosuchrev --repo "$TRASH/s0" --store "$TRASH/other.db" $CAMPAIGN 2>err &&
	grep -q "no such commit" err &&
	! test -e other.db
'

test_expect_success 'each bundle is a git bundle of its shard'"'"'s proposed branches' '
	for k in 0 1 2 3; do
		git -C user bundle verify "$TRASH/b$k.bundle" >/dev/null 2>&1 || return 1
		git -C user bundle list-heads "$TRASH/b$k.bundle" | cut -d" " -f2 | sort >heads.$k &&
		sqlite3 s$k.db "select \"refs/heads/\" || branch from candidates where state = \"passed\"" | sort >want.$k &&
		test_cmp want.$k heads.$k || return 1
	done &&
	sluice export --store s3.db --bundle "$TRASH/e3.bundle" &&
	git -C user bundle list-heads e3.bundle | sort >e3.heads &&
	git -C user bundle list-heads b3.bundle | sort >b3.heads &&
	test_cmp b3.heads e3.heads
'

test_expect_success 'merge of the four shards: the funnel, targets and branches of one machine' '
	sluice merge --store m.db --repo user s0.db s1.db s2.db s3.db \
		--bundle b0.bundle --bundle b1.bundle --bundle b2.bundle --bundle b3.bundle >merge.out &&
	grep -q "merged 4 stores into m.db: 3 targets copied, 0 replaced, 0 already there" merge.out &&
	grep -q "branches: 3 made, 0 already there" merge.out &&
	status_flat single.db >flat.single &&
	status_flat m.db >flat.merged &&
	test_cmp flat.single flat.merged &&
	target_lines single.db >targets.single &&
	target_lines m.db >targets.merged &&
	test_cmp targets.single targets.merged &&
	branch_trees single >trees.single &&
	branch_trees user >trees.merged &&
	test $(wc -l <trees.merged) = 3 &&
	test_cmp trees.single trees.merged &&
	sluice status --store m.db >st.merged &&
	grep -q "(base $BASE12, $TRASH/user)" st.merged &&
	! grep -q "^shard" st.merged
'

test_expect_success 'merging again, or a shard that ran again, duplicates nothing' '
	row_counts m.db >rows.before &&
	sluice merge --store m.db --repo user s0.db s1.db s2.db s3.db \
		--bundle b0.bundle --bundle b1.bundle --bundle b2.bundle --bundle b3.bundle >merge2.out &&
	grep -q "0 targets copied, 0 replaced, 3 already there" merge2.out &&
	grep -q "branches: 0 made, 3 already there" merge2.out &&
	row_counts m.db >rows.after &&
	test_cmp rows.before rows.after &&
	run_shard 3 4 s3 s3.db --base "$BASE" &&
	run_shard 3 4 s3b s3b.db --base "$BASE" --bundle "$TRASH/b3b.bundle" &&
	sluice merge --store m.db --repo user s3.db s3b.db --bundle b3b.bundle >merge3.out &&
	grep -q "0 targets copied, 0 replaced" merge3.out &&
	row_counts m.db >rows.again &&
	grep -v "^runs " rows.before >rows.before.noruns &&
	grep -v "^runs " rows.again >rows.again.noruns &&
	test_cmp rows.before.noruns rows.again.noruns &&
	test "$(sqlite3 m.db "select count(*) from runs")" = $(($(sed -n "s/^runs //p" rows.before) + 2)) &&
	status_flat m.db >flat.again &&
	test_cmp flat.single flat.again
'

test_expect_success 'a shard finished after a merge replaces its unfinished targets' '
	cp s3.db s3-early.db &&
	sqlite3 s3-early.db "delete from store_meta where key = \"store_id\"; insert into store_meta values (\"store_id\", \"00000000000000aa\")" &&
	sqlite3 s3-early.db "delete from gate_runs; delete from decisions; delete from published; delete from candidates; delete from attempts; delete from replies; update targets set state = \"pending\", attempts = 0" &&
	sluice merge --store early.db --repo user s3-early.db >early1.out &&
	test "$(sqlite3 early.db "select count(*) from targets where state = \"pending\"")" -ge 1 &&
	sluice merge --store early.db --repo user s3.db >early2.out &&
	grep -q "0 targets copied, [1-9] replaced" early2.out &&
	test "$(sqlite3 early.db "select count(*) from targets where state = \"pending\"")" = 0 &&
	target_lines s3.db >t.s3 &&
	target_lines early.db >t.early &&
	test_cmp t.s3 t.early
'

test_expect_success 'stores of another definition, base or partition are refused, nothing written' '
	sed "s/make -s check/make check/" "$EXAMPLES/../$CAMPAIGN" >other.yaml &&
	! cmp -s other.yaml "$EXAMPLES/../$CAMPAIGN" &&
	{ (cd "$EXAMPLES/.." && sluice run --shard 0/4 --repo "$TRASH/sd" --store "$TRASH/sd.db" \
		"$TRASH/other.yaml") >sd.out 2>&1 || test $? = 1; } &&
	row_counts m.db >rows.before &&
	test_expect_code 2 sluice merge --store m.db --repo user sd.db 2>err &&
	test $(wc -l <err) = 1 &&
	grep -q "cannot merge .sd.db.: its campaign .buf-copy-n. has another definition" err &&
	row_counts m.db >rows.after &&
	test_cmp rows.before rows.after &&
	test_expect_code 2 sluice merge --store new.db --repo user s0.db sd.db 2>err &&
	grep -q "another definition" err &&
	! test -e new.db &&
	run_shard 0 4 other otherbase.db &&
	test_expect_code 2 sluice merge --store new.db s0.db otherbase.db 2>err &&
	grep -q "scopes another base commit" err &&
	! test -e new.db &&
	run_shard 0 2 p p.db --base "$BASE" &&
	test_expect_code 2 sluice merge --store new.db s0.db p.db 2>err &&
	grep -q "holds shard 0/2, .s0.db. one of 4 shards" err &&
	! test -e new.db &&
	test_expect_code 2 sluice merge --store m.db m.db 2>err &&
	grep -q "into itself" err &&
	test_expect_code 2 sluice merge --store s0.db s1.db 2>err &&
	grep -q "cannot merge into .s0.db.: it holds shard 0/4" err &&
	test_expect_code 2 sluice merge --store new.db --repo user s0.db --bundle s0.db 2>err &&
	grep -q "is not a git bundle" err &&
	! test -e new.db
'

test_expect_success 'targets named by their id (shared start) get the shard in their branch name' '
	mkdir py &&
	printf "f(1)(2)\ng(3)(4)\nh(5)(6)\n" >py/a.py &&
	make_repo py &&
	python_campaign py.yaml nested "$TRASH/py" &&
	for k in 0 1; do
		sluice run --shard $k/2 --store "$TRASH/py$k.db" py.yaml >py$k.out 2>&1 ||
			test $? = 1 || { cat py$k.out; return 1; }
	done &&
	git -C py for-each-ref --format="%(refname:short)" refs/heads/sluice/nested/ >py.branches &&
	test $(wc -l <py.branches) = 6 &&
	test $(grep -c "^sluice/nested/target-[01]-[0-9]*$" py.branches) = 6 &&
	test $(sort -u py.branches | wc -l) = 6 &&
	sluice merge --store py.db py0.db py1.db >py.merge &&
	grep -q "6 targets copied" py.merge &&
	grep -q "branches: 0 made, 6 already there" py.merge
'

test_done
