#!/bin/sh
test_description='the bundled examples of each job run end to end with no network, exact funnels'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

run_example() { # KIND: run examples/run-example.sh into the trash directory
	SLUICE_DEMO_DIR=$TRASH/demo sh "$EXAMPLES/run-example.sh" "$1" "$SLUICE_BUILD" >"$1.out" 2>"$1.err" ||
	{ cat "$1.out" "$1.err"; false; }
}

test_expect_success 'migration: three sites in three directories, two by rule, one only the model does' '
	run_example migration &&
	grep -q "targets  *3" migration.out &&
	grep -q "test  *3 passed, 1 failed" migration.out &&
	grep -q "proposed  *3" migration.out &&
	grep -q "by rules  *2" migration.out &&
	grep -q "by model  *1" migration.out &&
	git -C demo/migration show sluice/buf-copy-n/ui-ui.c-L8C2:ui/ui.c >ui.c &&
	grep -q "buf_copy_n(dst, cap, name);" ui.c &&
	git -C demo/migration show sluice/buf-copy-n/net-conn.c-L7C2:net/conn.c >conn.c &&
	grep -q "buf_copy_n(c->host, sizeof c->host, host);" conn.c
'

test_expect_success 'fix: the analyzer example proposes one fix of five' '
	run_example fix &&
	grep -q "targets  *5" fix.out &&
	grep -q "analyzer  *2 passed, 3 failed" fix.out &&
	grep -q "proposed  *1" fix.out &&
	grep -q "^- analyzer: the target.s findings are gone" demo/fix-export/report.md
'

test_expect_success 'fix, failing tests: the test-weakening reply is rejected, the fix of clamp proposed' '
	{ (cd "$EXAMPLES/.." && sluice run --store "$TRASH/fix-tests.db" --repo "$TRASH/demo/fix" \
		examples/fix/campaign-tests.yaml) >fix-tests.out 2>&1 ||
	{ cat fix-tests.out; false; }; } &&
	grep -q "targets  *1$" fix-tests.out &&
	grep -q "failing  *1 passed, 1 failed" fix-tests.out &&
	grep -q "proposed  *1" fix-tests.out &&
	store_query fix-tests.db "select candidate_id || \" \" || verdict || \": \" || note from gate_runs where gate = \"failing\"" >actual &&
	cat >expect <<-\EOF &&
	1 fail: changes the test that judges it: tests/check.c (test clamp_above)
	2 pass: the target'"'"'s findings are gone
	EOF
	test_cmp expect actual &&
	store_query fix-tests.db "select diff from candidates where id = 1" | grep -q "^+.*clamp(15, 0, 10) == 0," &&
	test "$(store_query fix-tests.db "select state from candidates where id = 2")" = passed
'

test_expect_success 'testgen: the example proposes the one good test of six' '
	run_example testgen &&
	grep -q "mutants  *1 passed, 1 failed" testgen.out &&
	grep -q "proposed  *1" testgen.out &&
	grep -q "^- mutants: kills 2 of 9 mutants" demo/testgen-export/report.md
'

test_expect_success 'testgen: the test that only calls clamp covers its lines and kills no mutant' '
	sluice show 5 --store demo/testgen.db >noassert &&
	grep -q "^+	clamp(15, 0, 10);$" noassert &&
	grep -q "^gate coverage  *pass .*4/6 -> 6/6" noassert &&
	grep -q "^gate mutants  *fail .*(kills 0 of 9 mutants the existing tests miss (5 killed by both, 4 survive))$" noassert
'

readme_campaign() { # SECTION: the first yaml block under the README heading SECTION
	awk -v s="$1" '/^## / { sec = $0 } /^```yaml$/ && sec == s && !done { on = 1; next }
		/^```$/ && on { on = 0; done = 1 } on' "$EXAMPLES/../README.md"
}

manpage_campaign() { # the example of sluice-campaign(5), roff escapes undone
	awk '/^\.SH EXAMPLE/ { sec = 1 } sec && /^\.EE/ { exit } on { print }
		sec && /^\.EX/ { on = 1 }' "$EXAMPLES/../docs/sluice-campaign.5" |
	sed -e "s/\\\\-/-/g" -e "s/\\\\e/\\\\/g"
}

test_expect_success 'the campaign file of each job in the docs loads and scopes its example' '
	manpage_campaign >readme-migration.yaml &&
	grep -q "^name: greet-v2$" readme-migration.yaml &&
	grep -q "forbid: \[\"TODO\", \"printf\\\\\\\\(\"\]" readme-migration.yaml &&
	readme_campaign "## The fix job" >readme-fix.yaml &&
	readme_campaign "## The testgen job" >readme-testgen.yaml &&
	greet_repo greet &&
	sluice scope --repo greet readme-migration.yaml >scope-migration &&
	test $(wc -l <scope-migration) = 3 &&
	sluice scope --repo demo/fix readme-fix.yaml >scope-fix &&
	cut -d" " -f1-2 scope-fix >actual &&
	printf "src/calc.c:%s function\n" 7:1: 18:1: 30:1: 41:1: 51:1: 61:1: >expect &&
	test_cmp expect actual &&
	sluice scope --repo demo/testgen readme-testgen.yaml >scope-testgen &&
	test "$(cut -d" " -f1 scope-testgen)" = src/calc.c:4:1:
'

test_expect_success 'README: the ten-minute campaign runs as written, on the repository it names and with --repo' '
	mkdir guide &&
	readme_campaign "## Your first campaign, in ten minutes" >guide/campaign.yaml &&
	grep -q "^repository: myrepo" guide/campaign.yaml &&
	greet_repo guide/myrepo &&
	git -C guide/myrepo status --porcelain >status-before &&
	git -C guide/myrepo rev-parse HEAD >head-before &&
	sluice scope guide/campaign.yaml >guide-scope &&
	test $(wc -l <guide-scope) = 3 &&
	sluice baseline guide/campaign.yaml --store guide.db >guide-baseline &&
	grep -q "gate test (custom, expect pass): pass on the base" guide-baseline &&
	sluice run guide/campaign.yaml --store guide.db >guide-run 2>&1 &&
	grep -q "proposed  *3" guide-run &&
	sluice show 1 --store guide.db >guide-show &&
	grep -q "^+.*greet(.*, sizeof .*, .*);" guide-show &&
	sluice export guide/campaign.yaml --store guide.db --out guide-export &&
	test -s guide-export/report.html &&
	git -C guide/myrepo for-each-ref --format="%(refname)" >refs &&
	test "$(grep -vc "^refs/heads/sluice/greet-v2/" refs)" = 1 &&
	git -C guide/myrepo status --porcelain >status-after &&
	test_cmp status-before status-after &&
	git -C guide/myrepo rev-parse HEAD >head-after &&
	test_cmp head-before head-after &&
	grep -v "^repository:" guide/campaign.yaml >guide/norepo.yaml &&
	sluice scope guide/norepo.yaml --repo guide/myrepo >guide-scope2 &&
	test_cmp guide-scope guide-scope2
'

test_expect_success 'README: the rules campaign previews as shown and runs, the gate expect passing' '
	readme_campaign "## Rules" >rules.yaml &&
	grep -q "^name: buf-copy-n-rules" rules.yaml &&
	sed -n "/^app\/main.c:14:2: rule 1 (@call)$/,/^3 sites/p" "$EXAMPLES/../README.md" >expect &&
	sluice preview --repo demo/migration rules.yaml >preview &&
	awk "/^ui\// { skip = 0 } !skip { print } /^net\/conn.c:7:2: rule 2/ { print \"...\"; skip = 1 }" \
		preview >actual &&
	test_cmp expect actual &&
	sluice run --store rules.db --repo demo/migration rules.yaml >rules.out 2>&1 &&
	grep -q "proposed  *2" rules.out &&
	grep -q "expect  *2 passed, 0 failed" rules.out &&
	grep -q "skipped  *1" rules.out
'

# The model version of each example (campaign-openai.yaml), unchanged but for
# its endpoint: a stub OpenAI server on 127.0.0.1 that answers with the same
# canned replies the command provider gives.
OPENAI_API_KEY=sk-test-examples
export OPENAI_API_KEY

model_example() { # KIND STUB-DIR: run examples/KIND/campaign-openai.yaml against the stub in STUB-DIR
	start_stub "$2" && echo $stub_pid >"$2.pid" &&
	sed "s|base_url: https://api.openai.com/v1|base_url: http://127.0.0.1:$stub_port/v1|" \
		"$EXAMPLES/$1/campaign-openai.yaml" >"$1-model.yaml" &&
	grep -q "base_url: http://127.0.0.1:$stub_port/v1" "$1-model.yaml" &&
	{ sluice run --store "$1-model.db" --repo demo/$1 "$1-model.yaml" >"$1-model.out" 2>&1; rc=$?; } &&
	kill $(cat "$2.pid") &&
	{ test $rc = 0 || { cat "$1-model.out"; false; }; }
}

test_expect_success 'migration, model version: the rule does two sites, the model the third' '
	mkdir mm &&
	openai_reply mm/reply-1.json <"$EXAMPLES/migration/replies/ui.txt" &&
	model_example migration mm &&
	grep -q "proposed  *3" migration-model.out &&
	grep -q "by rules  *2" migration-model.out &&
	grep -q "by model  *1" migration-model.out &&
	grep -q "\"model\": *\"gpt-4o-mini\"" mm/request-1.json &&
	! test -e mm/request-2.json
'

test_expect_success 'fix, model version: one fix of five is proposed, each reply chosen by its target' '
	mkdir mf &&
	k=0 &&
	for t in 7-16:sum4 18-28:dup_name 30-39:sign 41-49:mid3 51-59:count_pos
	do
		k=$((k + 1)) &&
		echo "lines ${t%:*} of src/calc.c" >mf/match-$k.contains &&
		openai_reply mf/match-$k.json <"$EXAMPLES/fix/replies/${t#*:}.txt" || return 1
	done &&
	model_example fix mf &&
	grep -q "targets  *5" fix-model.out &&
	grep -q "proposed  *1" fix-model.out &&
	test "$(store_query fix-model.db "select state from targets where start_line = 18")" = proposed
'

test_expect_success 'testgen, model version: the test asserting nothing fails at mutants, the third reply is proposed' '
	mkdir mt &&
	openai_reply mt/reply-1.json <"$EXAMPLES/testgen/replies/1-nobuild.txt" &&
	openai_reply mt/reply-2.json <"$EXAMPLES/testgen/replies/5-noassert.txt" &&
	openai_reply mt/reply-3.json <"$EXAMPLES/testgen/replies/6-good.txt" &&
	model_example testgen mt &&
	grep -q "proposed  *1" testgen-model.out &&
	grep -q "mutants  *1 passed, 1 failed" testgen-model.out &&
	test "$(store_query testgen-model.db "select verdict || \": \" || note from gate_runs where gate = \"mutants\" and candidate_id = 2")" = "fail: kills 0 of 9 mutants the existing tests miss (5 killed by both, 4 survive)" &&
	test "$(store_query testgen-model.db "select attempts from targets")" = 3 &&
	! test -e mt/request-4.json
'

test_done
