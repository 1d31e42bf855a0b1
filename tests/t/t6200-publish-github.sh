#!/bin/sh
test_description='publish to a stub GitHub: push, pull requests, pacing, rate limits, idempotence, sync of outcomes'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

export FORGE_TOKEN=ghp-secret-token-4711

review_section() { # PORT MAX_OPEN [extra lines]
	port=$1 max=$2
	shift 2
	printf '%s\n' "review:" "  forge: github" "  api_url: http://127.0.0.1:$port" \
		"  project: acme/greet" "  token_env: FORGE_TOKEN" "  remote: $TRASH/remote.git" \
		"  max_open: $max" "  max_per_hour: 10" "  labels: [sluice, migration]" \
		"  draft: true" "$@"
}

forge() { # the stub's base URL (tests run in subshells: read it from its file)
	echo "http://127.0.0.1:$(cat forge.port)"
}

pr_branch() { # N: the head branch of pull request N, as the store recorded it
	sqlite3 s.db "select distinct branch from published where number = $1"
}

test_expect_success 'setup: a run with three proposed candidates, a bare remote, the stub GitHub' '
	greet_repo repo &&
	git -C repo config user.name "Repo Owner" &&
	git -C repo config user.email "owner@example.com" &&
	git init -q --bare remote.git &&
	git -C repo push -q "$TRASH/remote.git" main &&
	start_forge github acme/greet "$TRASH/remote.git" --limit-403 1 --limit-429 1 &&
	echo $forge_pid >forge.pid &&
	write_campaign c.yaml &&
	review_section $forge_port 2 >>c.yaml &&
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *3" out &&
	cp s.db s-quota.db
'

test_expect_success 'publish opens two pull requests (max_open 2) and paces the third' '
	sluice publish --store s.db c.yaml >out 2>err &&
	cat out &&
	grep -q "3 changes: 2 opened, 0 updated, 0 up to date, 1 paced" out &&
	grep -q "paced (2 open of 2" out &&
	test "$(grep -c "POST /repos/acme/greet/pulls 201" forge.log)" = 2 &&
	test "$(git -C remote.git for-each-ref refs/heads/sluice/greet/review/ | wc -l)" = 2
'

test_expect_success 'gc leaves the review branches alone and does not call them another store'"'"'s' '
	git -C repo for-each-ref --format="%(refname)" refs/heads/sluice/greet/review/ >before &&
	sluice gc --store s.db >out 2>err &&
	cat err &&
	! grep "review/" err &&
	git -C repo for-each-ref --format="%(refname)" refs/heads/sluice/greet/review/ >after &&
	test_cmp before after
'

test_expect_success 'rate limits are honoured: 429 and the secondary 403 are retried after Retry-After' '
	grep -n " 429$" forge.log >r429 && test $(wc -l <r429) = 1 &&
	grep -n " 403$" forge.log >r403 && test $(wc -l <r403) = 1 &&
	for f in r429 r403; do
		n=$(cut -d: -f1 $f) &&
		t0=$(sed -n "${n}p" forge.log | cut -d" " -f1) &&
		t1=$(sed -n "$((n + 1))p" forge.log | cut -d" " -f1) &&
		req0=$(sed -n "${n}p" forge.log | cut -d" " -f2,3) &&
		req1=$(sed -n "$((n + 1))p" forge.log | cut -d" " -f2,3) &&
		test "$req0" = "$req1" &&
		test $((t1 - t0)) -ge 1000 || return 1
	done
'

test_expect_success 'the pull requests carry the templates, labels, draft flag; the commit the repo identity' '
	curl -sf "$(forge)/_stub/state" >state.json &&
	test "$(grep -o "\"title\":\"sluice(greet): src/[a-z]*\.c\"" state.json | wc -l)" = 2 &&
	grep -q "Produced by sluice campaign .greet.: 1 target found by a tree-sitter query, edited by rule (rules) in 1 attempt, applied to base [0-9a-f]* and checked in a jail by the gates syntax, expect, build, test." state.json &&
	grep -q "### Gates.*- build: pass (1 of 1 passed)" state.json &&
	grep -q "\"labels\":\[\"sluice\",\"migration\"\]" state.json &&
	grep -q "\"draft\":true" state.json &&
	b=$(pr_branch 1) &&
	test "$(git -C remote.git log -1 --format="%an <%ae>|%cn <%ce>" "$b")" = "Repo Owner <owner@example.com>|Repo Owner <owner@example.com>" &&
	git -C remote.git log -1 --format=%B "$b" >msg &&
	head -1 msg | grep -q "^sluice(greet): src/" &&
	grep -q "^- .src/.*:[0-9]*-[0-9]*. (candidate [0-9]*, attempt 1)" msg
'

test_expect_success 'publish again: nothing is opened twice, nothing is pushed again' '
	before=$(wc -l <forge.log) &&
	sluice publish --store s.db c.yaml >out &&
	grep -q "3 changes: 0 opened, 0 updated, 2 up to date, 1 paced" out &&
	test "$(grep -c "POST /repos/acme/greet/pulls " forge.log)" = 3 &&
	test "$(sed -n "$((before + 1)),\$p" forge.log | grep -c "POST\|PATCH")" = 0
'

test_expect_success 'a run that died before recording its pull requests finds them instead of opening new ones' '
	sqlite3 s.db "delete from published" &&
	sluice publish --store s.db c.yaml >out &&
	grep -q "2 updated" out &&
	grep -q "found open, updated" out &&
	test "$(grep -c "POST /repos/acme/greet/pulls 201" forge.log)" = 2 &&
	test "$(sqlite3 s.db "select count(distinct number) from published")" = 2
'

test_expect_success 'an updated change force-updates its branch and its pull request body' '
	b=$(pr_branch 1) &&
	old=$(git -C remote.git rev-parse "$b") &&
	write_campaign c.yaml &&
	review_section $(cat forge.port) 2 "  body: \"v2 {{produced}}\"" \
		"  commit_message: \"greet v2: {{paths}}\\n\\n{{produced}}\\n\"" >>c.yaml &&
	sluice publish --store s.db c.yaml >out &&
	grep -q "0 opened, 2 updated" out &&
	new=$(git -C remote.git rev-parse "$b") &&
	test "$old" != "$new" &&
	git -C remote.git diff --quiet "$old" "$new" &&
	grep -q "PATCH /repos/acme/greet/pulls/1 200" forge.log &&
	curl -sf "$(forge)/_stub/state" | grep -q "\"body\":\"v2 Produced by sluice" &&
	test "$(git -C remote.git log -1 --format=%s "$b")" = "greet v2: $(git -C remote.git diff --name-only main "$b")"
'

test_expect_success 'a body-only change updates the pull request without a push' '
	write_campaign c.yaml &&
	review_section $(cat forge.port) 2 "  body: \"v3 {{produced}}\"" \
		"  commit_message: \"greet v2: {{paths}}\\n\\n{{produced}}\\n\"" >>c.yaml &&
	sluice publish --store s.db c.yaml >out &&
	grep -q "0 opened, 2 updated" out &&
	grep -q "title and body updated" out &&
	curl -sf "$(forge)/_stub/state" | grep -q "\"body\":\"v3 Produced by sluice"
'

test_expect_success 'sync with a wrong token is refused (exit 2) and does not show it' '
	FORGE_TOKEN=wrong-token-99 test_expect_code 2 sluice sync --store s.db c.yaml >out 2>err &&
	grep -q "HTTP 401: Bad credentials" err &&
	! grep -q wrong-token-99 out err
'

test_expect_success 'sync: merged means accepted and landed unchanged; closed means rejected with the comment' '
	b1=$(pr_branch 1) &&
	git clone -q -b main remote.git work &&
	git -C work merge -q --no-ff -m "Merge #1" "origin/$b1" &&
	git -C work push -q origin main &&
	curl -sf -X POST --data-binary "$(git -C work rev-parse HEAD)" "$(forge)/_stub/merge/1" >/dev/null &&
	for c in "looks fine" "nit: spacing" "ok"; do
		curl -sf -X POST --data-binary "$c" "$(forge)/_stub/review/1" >/dev/null || return 1
	done &&
	curl -sf -X POST --data-binary "prefer a named constant here" "$(forge)/_stub/close/2" >/dev/null &&
	sluice sync --store s.db c.yaml >out &&
	cat out &&
	grep -q "2 requests: 0 open, 1 merged (1 landed unchanged), 1 closed" out &&
	grep -q "#1: merged, 3 review comments; landed unchanged" out &&
	test "$(sqlite3 s.db "select d.decision || \"|\" || d.reason from decisions d join published p on p.candidate_id = d.candidate_id where p.number = 1")" = "accept|merged as #1, landed unchanged" &&
	test "$(sqlite3 s.db "select d.decision || \"|\" || d.reason from decisions d join published p on p.candidate_id = d.candidate_id where p.number = 2")" = "reject|prefer a named constant here" &&
	test "$(sqlite3 s.db "select review_comments from published where number = 1")" = 3 &&
	grep -q "GET /repos/acme/greet/pulls/1/comments?page=2 200" forge.log
'

test_expect_success 'status counts the outcomes: acceptance rate and landed-unchanged rate' '
	sluice status --store s.db >out &&
	grep -q "acceptance rate  *50% (1 of 2)" out &&
	grep -q "landed unchanged  *100% (1 of 1)" out &&
	sluice targets --store s.db --state rejected >out &&
	{ grep -q "prefer a named constant" out || sluice show --store s.db --json $(sqlite3 s.db "select candidate_id from published where number = 2") | grep -q "prefer a named constant here"; }
'

test_expect_success 'with two requests decided, the paced change is opened; a merge that changed it is seen' '
	sluice publish --store s.db c.yaml >out &&
	grep -q "1 opened" out &&
	b3=$(pr_branch 3) &&
	test -n "$b3" &&
	git -C work fetch -q origin &&
	git -C work merge -q --no-ff --no-commit "origin/$b3" &&
	f=$(git -C work diff --cached --name-only | head -1) &&
	sed -i "s/greet(\([a-z]*\), sizeof \([a-z]*\),/greet(\1, sizeof(\2),/" "work/$f" &&
	echo "/* reviewed */" >>"work/$f" &&
	git -C work commit -q -am "Merge #3 with a tweak" &&
	git -C work push -q origin main &&
	curl -sf -X POST --data-binary "$(git -C work rev-parse HEAD)" "$(forge)/_stub/merge/3" >/dev/null &&
	sluice sync --store s.db c.yaml >out &&
	grep -q "1 merged (0 landed unchanged)" out &&
	test "$(sqlite3 s.db "select landed_unchanged from published where number = 3")" = 0 &&
	sluice status --store s.db --json | grep -q "\"landed_checked\":2,\"landed_unchanged\":1"
'

test_expect_success 'the token is never stored, printed or pushed' '
	! grep -r "$FORGE_TOKEN" s.db* out err repo/.git remote.git forge.log 2>/dev/null &&
	! sqlite3 s.db .dump | grep -q "$FORGE_TOKEN"
'

test_expect_success 'a missing token variable is a usage error naming it' '
	write_campaign n.yaml &&
	review_section $(cat forge.port) 2 >>n.yaml &&
	sed -i "s/token_env: FORGE_TOKEN/token_env: NO_SUCH_TOKEN_VAR/" n.yaml &&
	test_expect_code 2 sluice publish --store s.db n.yaml 2>err &&
	grep -q "the variable .NO_SUCH_TOKEN_VAR. is not set" err
'

test_expect_success 'the stub behaves as documented: 401 without auth, 404 missing branch, 422 duplicate' '
	test "$(curl -s -o /dev/null -w "%{http_code}" "$(forge)/repos/acme/greet/pulls")" = 401 &&
	auth="Authorization: Bearer $FORGE_TOKEN" &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -H "$auth" "$(forge)/repos/acme/greet/branches/nope")" = 404 &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -H "$auth" "$(forge)/repos/acme/greet/branches/main")" = 200 &&
	pr() { curl -s -o pr.json -w "%{http_code}" -H "$auth" -X POST \
		--data "{\"title\":\"x\",\"head\":\"$1\",\"base\":\"main\"}" "$(forge)/repos/acme/greet/pulls"; } &&
	test "$(pr nope)" = 422 &&
	test "$(pr main)" = 201 &&
	test "$(pr main)" = 422 &&
	grep -q "A pull request already exists for acme/greet:main" pr.json
'

test_expect_success 'stop the stub' '
	kill $(cat forge.pid)
'

test_expect_success 'a spent quota (x-ratelimit-remaining: 0) is waited out before the next request' '
	mkdir q &&
	(
		cd q &&
		start_forge github acme/greet "$TRASH/remote.git" --quota 3 &&
		echo $forge_pid >forge.pid &&
		write_campaign c.yaml &&
		review_section $forge_port 10 >>c.yaml &&
		sed -i "s|^repository: repo|repository: $TRASH/repo|" c.yaml &&
		sluice publish --store ../s-quota.db c.yaml >out;
		rc=$?
		kill $forge_pid
		test $rc = 0
	) &&
	cat q/out &&
	grep -q "3 changes: 3 opened" q/out &&
	grep -q "quota spent, waiting" q/out &&
	! grep -q " 403$" q/forge.log &&
	t3=$(sed -n 3p q/forge.log | cut -d" " -f1) &&
	t4=$(sed -n 4p q/forge.log | cut -d" " -f1) &&
	test "$t4" -ge $(( (t3 / 1000 + 2) * 1000 ))
'

test_done
