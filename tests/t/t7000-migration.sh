#!/bin/sh
test_description='a rules migration end to end: scope, apply, gates in the jail, store, review'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'setup: the demo project in a repository, with a dirty working tree' '
	greet_repo repo &&
	git -C repo branch feature &&
	echo "local edit" >>repo/src/app.c &&
	echo "untracked" >repo/notes.txt &&
	write_campaign c.yaml &&
	tree_digest repo >digest.before &&
	refs_outside sluice/greet repo >refs.before &&
	git -C repo status --porcelain >status.before
'

test_expect_success 'scope finds the three call sites' '
	sluice scope c.yaml >out &&
	cat >expect <<-\EOF &&
	src/app.c:10:2: capture (1 site)
	src/report.c:10:2: capture (1 site)
	src/report.c:18:2: capture (1 site)
	EOF
	test_cmp expect out
'

test_expect_success 'scope --json gives one object per target' '
	sluice scope --json c.yaml >out &&
	test $(wc -l <out) = 3 &&
	grep -q "\"path\":\"src/report.c\",\"start_line\":18,\"start_col\":2,\"end_line\":18" out &&
	grep -q "\"unit\":\"capture\"" out
'

test_expect_success 'scope reads the base commit, not the working tree' '
	echo "void more(void) { char b[4]; greet_old(b, \"x\"); }" >>repo/src/report.c &&
	sluice scope c.yaml >out &&
	test $(wc -l <out) = 3 &&
	git -C repo checkout -q -- src/report.c
'

test_expect_success 'run proposes all three candidates' '
	sluice run --store s.db c.yaml >out &&
	grep -q "targets  *3" out &&
	grep -q "proposed  *3" out &&
	grep -q "build  *3 passed, 0 failed, 0 skipped, 0 cached (3 runs)" out &&
	grep -q "test  *3 passed, 0 failed, 0 skipped, 0 cached (3 runs)" out
'

test_expect_success 'each proposed candidate has its branch with the migrated call' '
	git -C repo for-each-ref --format="%(refname:short)" refs/heads/sluice/greet/ >branches &&
	test $(wc -l <branches) = 3 &&
	git -C repo show sluice/greet/src-report.c-L18C2:src/report.c >report.c &&
	grep -q "greet(line, sizeof line, author);" report.c &&
	grep -q "greet_old(line, team);" report.c
'

test_expect_success 'the store holds the campaign, attempts, candidates and gate runs' '
	test "$(store_query s.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = 3 &&
	test "$(store_query s.db "select count(*) from gate_runs where verdict = '"'"'pass'"'"' and gate in ('"'"'build'"'"', '"'"'test'"'"')")" = 6 &&
	test "$(store_query s.db "select count(*) from gate_runs where gate = '"'"'syntax'"'"' and verdict = '"'"'pass'"'"'")" = 3 &&
	test "$(store_query s.db "select count(*) from candidates where diff like '"'"'%+%greet(%'"'"'")" = 3 &&
	test "$(store_query s.db "pragma journal_mode")" = wal &&
	test "$(store_query s.db "pragma user_version")" -ge 1
'

test_expect_success 'the user working tree, index, and other refs are untouched' '
	tree_digest repo >digest.after &&
	test_cmp digest.before digest.after &&
	refs_outside sluice/greet repo >refs.after &&
	test_cmp refs.before refs.after &&
	git -C repo status --porcelain >status.after &&
	test_cmp status.before status.after &&
	test -z "$(git -C repo worktree list --porcelain | grep "^worktree" | grep -v "$TRASH/repo\$")"
'

test_expect_success 'no scratch worktree is left behind (the warm base stays for the next run)' '
	test -z "$(ls -A scratch/greet 2>/dev/null | grep -v "^warm-[0-9a-f]\{16\}\$")"
'

test_expect_success 'a second run resumes: nothing is redone' '
	before=$(store_query s.db "select count(*) from attempts") &&
	sluice run --store s.db c.yaml >out &&
	after=$(store_query s.db "select count(*) from attempts") &&
	test "$before" = "$after"
'

test_expect_success 'status shows the funnel and the proposed candidates' '
	sluice status --store s.db >out &&
	grep -q "proposed  *3" out &&
	grep -q "sluice/greet/src-app.c-L10C2" out &&
	sluice status --store s.db --json >out.json &&
	grep -q "\"targets\":3" out.json &&
	grep -q "\"proposed\":3" out.json
'

cand_of() { # PATH LINE: the candidate id of the target at PATH:LINE
	store_query s.db "select c.id from candidates c join targets t on t.id = c.target_id where t.path = '$1' and t.start_line = $2"
}

test_expect_success 'show prints the gates and the diff' '
	app=$(cand_of src/app.c 10) &&
	sluice show --store s.db $app >out &&
	grep -q "^gate build *pass" out &&
	grep -q "^+.*greet(banner, sizeof banner" out &&
	sluice show --store s.db --json $app >out.json &&
	grep -q "\"state\":\"passed\"" out.json
'

test_expect_success 'accept and reject are recorded and counted' '
	sluice accept --store s.db $(cand_of src/app.c 10) &&
	r10=$(cand_of src/report.c 10) &&
	test_expect_code 2 sluice reject --store s.db $r10 &&
	sluice reject --store s.db $r10 --reason "prefer a named constant" &&
	sluice status --store s.db >out &&
	grep -q "accepted  *1" out &&
	grep -q "rejected  *1" out &&
	test "$(store_query s.db "select reason from decisions where decision = '"'"'reject'"'"'")" = "prefer a named constant"
'

test_expect_success 'export writes a git am-able series without the rejected candidate' '
	sluice export --store s.db --out export >out &&
	grep -q "^2 patches" out &&
	test $(grep -c "^Subject: \[PATCH" export/series.mbox) = 2 &&
	grep -q "PATCH 1/2" export/series.mbox &&
	grep -q "## Proposed changes (2)" export/report.md &&
	git clone -q repo clone &&
	git -C clone am -q ../export/series.mbox &&
	! grep -q greet_old clone/src/app.c &&
	grep -q "greet_old(line, team)" clone/src/report.c &&
	grep -q "greet(line, sizeof line, author)" clone/src/report.c
'

test_done
