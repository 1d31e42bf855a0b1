#!/bin/sh
test_description='the review ledger: a decided request is never reopened, a rejected change closes its request'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

export FORGE_TOKEN=ghp-secret-token-4711

review_section() { # PORT
	printf '%s\n' "review:" "  forge: github" "  api_url: http://127.0.0.1:$1" \
		"  project: acme/greet" "  token_env: FORGE_TOKEN" "  remote: $TRASH/remote.git" \
		"  max_open: 5" "  max_per_hour: 10"
}

forge() {
	echo "http://127.0.0.1:$(cat forge.port)"
}

test_expect_success 'setup: three requests published, #1 merged and #2 closed on the forge' '
	greet_repo repo &&
	git init -q --bare remote.git &&
	git -C repo push -q "$TRASH/remote.git" main &&
	start_forge github acme/greet "$TRASH/remote.git" &&
	echo $forge_pid >forge.pid &&
	write_campaign c.yaml &&
	review_section $forge_port >>c.yaml &&
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *3" out &&
	cp s.db fresh.db &&
	sluice publish --store s.db c.yaml >out &&
	grep -q "3 opened" out &&
	curl -sf -X POST --data-binary "$(git -C remote.git rev-parse main)" "$(forge)/_stub/merge/1" >/dev/null &&
	curl -sf -X POST --data-binary "not this one" "$(forge)/_stub/close/2" >/dev/null
'

test_expect_success 'the stub lists by state as the API does: open by default, all with state=all' '
	auth="Authorization: Bearer $FORGE_TOKEN" &&
	curl -sf -H "$auth" "$(forge)/repos/acme/greet/pulls?per_page=100" >open.json &&
	! grep -q "\"number\":1," open.json &&
	curl -sf -H "$auth" "$(forge)/repos/acme/greet/pulls?state=all&page=1" >all.json &&
	grep -q "\"number\":1," all.json
'

test_expect_success 'a fresh store publishing the same changes opens nothing twice' '
	sluice publish --store fresh.db c.yaml >out &&
	cat out &&
	grep -q "0 opened, 1 updated" out &&
	grep -q "#1 already merged, not opened again" out &&
	grep -q "#2 already closed, not opened again" out &&
	test "$(grep -c "POST /repos/acme/greet/pulls 201" forge.log)" = 3 &&
	test "$(sqlite3 fresh.db "select group_concat(distinct decision) from decisions order by 1")" = "accept,reject" &&
	test "$(sqlite3 fresh.db "select count(distinct number) from published")" = 3
'

test_expect_success 'a retried change keeps its request open; its new candidate updates it' '
	at=$(sqlite3 fresh.db "select t.path || '"'"':'"'"' || t.start_line from published p join candidates c on c.id = p.candidate_id join targets t on t.id = c.target_id where p.number = 3") &&
	sluice retry --store fresh.db "$at" >out &&
	grep -q "sent back 1 target" out &&
	sluice publish --store fresh.db c.yaml >out &&
	! grep -q "closed" out &&
	sluice run --store fresh.db c.yaml >out &&
	sluice publish --store fresh.db c.yaml >out &&
	cat out &&
	grep -q "#3 found open, updated" out &&
	test "$(grep -c "POST /repos/acme/greet/pulls 201" forge.log)" = 3 &&
	test "$(sqlite3 fresh.db "select count(distinct candidate_id) from published where number = 3")" = 2
'

test_expect_success 'a change rejected in sluice has its request closed, with the reason, by the next publish' '
	n=3 &&
	c=$(sqlite3 s.db "select candidate_id from published where number = $n") &&
	sluice reject --store s.db $c --reason "keep greet_old here" &&
	sluice publish --store s.db c.yaml >out &&
	cat out &&
	grep -q "1 request closed: its change was rejected" out &&
	grep -q "#$n: closed, its change was rejected: keep greet_old here" out &&
	grep -q "POST /repos/acme/greet/issues/$n/comments 201" forge.log &&
	grep -q "PATCH /repos/acme/greet/pulls/$n 200" forge.log &&
	curl -sf "$(forge)/_stub/state" >state.json &&
	grep -q "\"body\":\"Rejected in sluice: keep greet_old here\"" state.json &&
	test "$(sqlite3 s.db "select state from published where number = $n")" = closed &&
	sluice sync --store s.db c.yaml >out &&
	cat out &&
	grep -q "^2 requests: 0 open, 1 merged" out &&
	! grep -q "#$n" out &&
	sluice publish --store s.db c.yaml >out &&
	! grep -q "#$n\|closed:" out
'

test_expect_success 'stop the stub' '
	kill $(cat forge.pid)
'

test_done
