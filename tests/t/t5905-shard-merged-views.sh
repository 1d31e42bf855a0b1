#!/bin/sh
test_description='the merged store of 4 shards reads as the single-machine store: targets, export, publish to a stub GitHub, /metrics; gc and branch states count the shards'"'"' commits as its own'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-shard.sh"

export FORGE_TOKEN=ghp-secret-token-4711

# what differs by machine and not by campaign: ids, commits, store ids,
# times, paths of the trash
normalize() {
	sed -e "s|$TRASH/single\\b|REPO|g" -e "s|$TRASH/user\\b|REPO|g" -e "s|$TRASH|TRASH|g" \
	    -e 's/[0-9a-f]\{40\}/OID/g' -e 's/Sluice-Store: [0-9a-f]*\/[0-9]*/Sluice-Store: STORE/' \
	    -e 's/candidate [0-9]*/candidate N/g' -e 's/"\(id\|candidate\)": *[0-9]*/"\1": N/g' \
	    -e 's/[0-9]\{4\}-[0-9][0-9]-[0-9][0-9][T ][0-9:.]*Z\{0,1\}/TIME/g' \
	    -e 's/^Date: .*/Date: TIME/' -e 's/time="[0-9.]*"/time="T"/g' \
	    -e 's|http://127.0.0.1:[0-9]*/|FORGE/|g' -e 's/[0-9][0-9.]* \(ms\|s\)\b/N \1/g' \
	    -e 's/id="c[0-9]*"/id="cN"/g' -e 's/#c[0-9]*"/#cN"/g' "$@"
}

# review.yaml PORT REMOTE: the example campaign publishing to the stub at PORT
review_campaign() {
	cp "$EXAMPLES/../$CAMPAIGN" "$1" &&
	printf '%s\n' "review:" "  forge: github" "  api_url: http://127.0.0.1:$2" \
		"  project: acme/mig" "  token_env: FORGE_TOKEN" "  remote: $3" \
		"  max_open: 10" "  max_per_hour: 100" >>"$1"
}

test_expect_success 'setup: one machine, four shards merged' '
	cp -R "$EXAMPLES/migration/project" user &&
	make_repo user &&
	for d in single s0 s1 s2 s3; do git clone -q user $d || return 1; done &&
	BASE=$(git -C user rev-parse main) &&
	sl run --repo "$TRASH/single" --store "$TRASH/single.db" $CAMPAIGN >single.out 2>&1 &&
	for k in 0 1 2 3; do
		run_shard $k 4 s$k s$k.db --base "$BASE" --bundle "$TRASH/b$k.bundle" || return 1
	done &&
	sluice merge --store m.db --repo user s0.db s1.db s2.db s3.db \
		--bundle b0.bundle --bundle b1.bundle --bundle b2.bundle --bundle b3.bundle >merge.out &&
	grep -q "branches: 3 made" merge.out
'

test_expect_success 'targets --json: the same targets, states and attempts' '
	sluice targets --store single.db --json | normalize >targets.single &&
	sluice targets --store m.db --json | normalize >targets.merged &&
	test_cmp targets.single targets.merged
'

test_expect_success 'export: the same patches and report' '
	sluice export --store single.db --out "$TRASH/x.single" &&
	sluice export --store m.db --out "$TRASH/x.merged" &&
	(cd x.single && find . -type f | sort) >files.single &&
	(cd x.merged && find . -type f | sort) >files.merged &&
	test_cmp files.single files.merged &&
	grep -q "series.mbox" files.merged &&
	for f in $(cat files.single); do
		normalize "x.single/$f" >one.single &&
		normalize "x.merged/$f" >one.merged &&
		test_cmp one.single one.merged || return 1
	done
'

test_expect_success 'publish: the same pull requests on the stub GitHub' '
	for w in single merged; do
		git init -q --bare remote-$w.git &&
		git -C user push -q "$TRASH/remote-$w.git" main &&
		start_forge github acme/mig "$TRASH/remote-$w.git" &&
		echo $forge_pid >forge-$w.pid &&
		mv forge.log forge-$w.log 2>/dev/null; review_campaign pub-$w.yaml $forge_port "$TRASH/remote-$w.git" &&
		curl -sf "$forge_url/_stub/state" >/dev/null &&
		echo $forge_url >forge-$w.url || return 1
	done &&
	sluice publish --store single.db --repo single pub-single.yaml >pub.single &&
	sluice publish --store m.db --repo user pub-merged.yaml >pub.merged &&
	grep -q "3 opened" pub.single &&
	normalize pub.single >pub.single.n &&
	normalize pub.merged >pub.merged.n &&
	test_cmp pub.single.n pub.merged.n &&
	for w in single merged; do
		curl -sf "$(cat forge-$w.url)/_stub/state" | jq -S . | normalize >prs.$w &&
		git -C remote-$w.git for-each-ref --format="%(refname)" refs/heads/ |
		while read -r ref; do echo "$ref $(git -C remote-$w.git rev-parse "$ref^{tree}")"; done >heads.$w || return 1
	done &&
	test_cmp prs.single prs.merged &&
	test_cmp heads.single heads.merged &&
	for w in single merged; do kill $(cat forge-$w.pid); done
'

# metrics_of STORE OUT: /metrics of `sluice serve --store STORE` into OUT,
# without the store's label and the gates' times
metrics_of() {
	start_serve "$2.serve" --store "$1" --listen 127.0.0.1:0 &&
	curl -sf "${serve_url}metrics" >"$2.raw"
	rc=$?
	stop_serve $serve_pid
	test $rc = 0 && grep -v "duration_seconds" "$2.raw" | sed "s/store=\"[^\"]*\",//" >"$2"
}

test_expect_success '/metrics of sluice serve: the same counts' '
	metrics_of single.db metrics.single &&
	metrics_of m.db metrics.merged &&
	grep -q "^sluice_targets{campaign=\"buf-copy-n\",state=\"proposed\"} 3$" metrics.merged &&
	test_cmp metrics.single metrics.merged
'

# the commit of candidate ID's branch in the merged store, and its branch
cand_commit() { sqlite3 m.db "select commit_oid from candidates where id = $1"; }
cand_branch() { sqlite3 m.db "select branch from candidates where id = $1"; }

test_expect_success 'merge records the shard stores; status and show count their commits as its own' '
	test "$(sqlite3 m.db "select count(distinct store_id) from merged_stores")" = 4 &&
	for k in 0 1 2 3; do
		id=$(sqlite3 s$k.db "select value from store_meta where key = \"store_id\"") &&
		test "$(sqlite3 m.db "select count(*) from merged_stores where store_id = \"$id\"")" = 1 || return 1
	done &&
	sqlite3 m.db "select id from candidates where state = \"passed\" order by id" >passed &&
	a=$(sed -n 1p passed) && b=$(sed -n 2p passed) &&
	sluice show --store m.db --json $a | jq -r .branch_state >state.a &&
	echo ours >want && test_cmp want state.a &&
	git -C user branch -f "$(cand_branch $a)" "$(cand_commit $b)" &&
	sluice show --store m.db --json $a | jq -r .branch_state >state.a &&
	echo moved >want && test_cmp want state.a &&
	sluice status --store m.db >st &&
	grep -q "$(cand_branch $a)  *(the branch now holds another commit)" st &&
	git -C user fetch -q "$TRASH/single" "refs/heads/$(cand_branch $b):refs/heads/other-store" &&
	git -C user branch -f "$(cand_branch $a)" other-store &&
	sluice show --store m.db --json $a | jq -r .branch_state >state.a &&
	echo other-store >want && test_cmp want state.a &&
	git -C user branch -f "$(cand_branch $a)" "$(cand_commit $a)" &&
	git -C user branch -D -q other-store
'

test_expect_success 'gc on the merged store deletes a stale branch a shard made, keeps the proposed ones' '
	branch_trees user >trees.before &&
	c=$(sqlite3 m.db "select commit_oid from candidates where state = \"passed\" limit 1") &&
	git -C user branch sluice/buf-copy-n/stale-of-a-shard "$c" &&
	sluice gc --store m.db >gc.out 2>&1 &&
	! grep "stale-of-a-shard" gc.out &&
	! grep "[0-9] branch.*(.sluice/buf-copy-n/[a-z]*-[a-z]*.c-L[0-9]*C[0-9]*.*not made by this store" gc.out &&
	test_must_fail git -C user rev-parse -q --verify refs/heads/sluice/buf-copy-n/stale-of-a-shard &&
	branch_trees user >trees.after &&
	test_cmp trees.before trees.after
'

test_expect_success 'merging the merged store carries its shard stores along' '
	sluice merge --store mm.db m.db >mm.out &&
	test "$(sqlite3 mm.db "select count(distinct store_id) from merged_stores")" = 5 &&
	a=$(sed -n 1p passed) &&
	test "$(sluice show --store mm.db --json $a | jq -r .branch_state)" = ours
'

test_expect_success 'a run on the merged store takes over the branch a shard made for a target it retries' '
	cp m.db r.db &&
	sluice retry --store r.db net/conn.c:7 >retry.out &&
	grep -q "sent back 1 target" retry.out &&
	sl run --repo "$TRASH/user" --store "$TRASH/r.db" $CAMPAIGN >r.out 2>&1 &&
	c=$(sqlite3 r.db "select c.commit_oid from candidates c join targets t on t.id = c.target_id where t.path = '"'"'net/conn.c'"'"' and c.state = '"'"'passed'"'"' order by c.id desc limit 1") &&
	test -n "$c" &&
	test "$(git -C user rev-parse refs/heads/sluice/buf-copy-n/net-conn.c-L7C2)" = "$c" &&
	test -z "$(git -C user for-each-ref "refs/heads/sluice/buf-copy-n-*")"
'

test_done
