#!/bin/sh
test_description='publish to a stub GitLab: merge requests grouped per file, directory or batch, templates, author, sync'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

export FORGE_TOKEN=glpat-secret-0815

forge() { echo "http://127.0.0.1:$(cat forge.port)"; }

review_section() { # GROUP [extra lines]
	group=$1
	shift
	printf '%s\n' "review:" "  forge: gitlab" "  api_url: $(forge)/api/v4" \
		"  project: acme/tools/greet" "  token_env: FORGE_TOKEN" "  remote: $TRASH/remote.git" \
		"  group: $group" "  labels: [sluice, bot]" "  draft: true" \
		"  author: \"Campaign Bot <bot@example.com>\"" \
		"  title: \"greet-v2 ({{count}} sites): {{paths}}\"" "$@"
}

mr() { # IID FIELD: a field of merge request IID as the stub holds it
	curl -sf "$(forge)/_stub/state" | sed 's/},{"iid"/}\n{"iid"/g' | grep "^\[\?{\"iid\":$1," |
		sed "s/.*\"$2\":\"\([^\"]*\)\".*/\1/"
}

test_expect_success 'setup: three proposed candidates in two files, a bare remote, the stub GitLab' '
	greet_repo repo &&
	git init -q --bare remote.git &&
	git -C repo push -q "$TRASH/remote.git" main &&
	start_forge gitlab acme/tools/greet "$TRASH/remote.git" --limit-429 1 &&
	echo $forge_pid >forge.pid &&
	write_campaign c.yaml &&
	review_section file >>c.yaml &&
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *3" out &&
	cp s.db s-dir.db && cp s.db s-batch.db && cp s.db s-hour.db && cp s.db s-404.db
'

test_expect_success 'a push that the forge does not see (its branch is 404) is an error, nothing opened' '
	git init -q --bare elsewhere.git &&
	write_campaign e.yaml &&
	review_section file >>e.yaml &&
	sed -i "s|remote: .*|remote: $TRASH/elsewhere.git|" e.yaml &&
	test_expect_code 3 sluice publish --store s-404.db e.yaml >out 2>err &&
	grep -q "was pushed to .*elsewhere.git. but the forge does not have it (404)" err &&
	grep -q "GET /api/v4/projects/acme%2Ftools%2Fgreet/repository/branches/sluice%2Fgreet%2Freview%2Ffile%2Fsrc%2F[a-z]*.c 404" forge.log &&
	! grep -q POST forge.log &&
	test "$(sqlite3 s-404.db "select count(*) from published")" = 0
'

test_expect_success 'group: file makes one merge request per file, the templated draft title, labels, author' '
	sluice publish --store s.db c.yaml >out &&
	cat out &&
	grep -q "2 changes: 2 opened" out &&
	test "$(grep -c "POST /api/v4/projects/acme%2Ftools%2Fgreet/merge_requests 201" forge.log)" = 2 &&
	curl -sf "$(forge)/_stub/state" >state.json &&
	grep -q "\"title\":\"Draft: greet-v2 (2 sites): src/report.c\"" state.json &&
	grep -q "\"title\":\"Draft: greet-v2 (1 sites): src/app.c\"" state.json &&
	grep -q "\"labels\":\"sluice,bot\"" state.json &&
	b=sluice/greet/review/file/src/report.c &&
	test "$(git -C remote.git log -1 --format="%an <%ae>|%cn <%ce>" "$b")" = "Campaign Bot <bot@example.com>|Campaign Bot <bot@example.com>" &&
	git -C remote.git show "$b:src/report.c" >report.c &&
	grep -q "greet(line, sizeof line, team)" report.c &&
	grep -q "greet(line, sizeof line, author)" report.c &&
	test "$(git -C remote.git rev-list --count main.."$b")" = 1
'

test_expect_success 'a duplicate merge request is GitLab 409; publish again opens nothing' '
	test "$(curl -s -o dup.json -w "%{http_code}" -H "PRIVATE-TOKEN: $FORGE_TOKEN" -X POST \
		--data "{\"source_branch\":\"sluice/greet/review/file/src/app.c\",\"target_branch\":\"main\",\"title\":\"x\"}" \
		"$(forge)/api/v4/projects/acme%2Ftools%2Fgreet/merge_requests")" = 409 &&
	grep -q "Another open merge request already exists" dup.json &&
	sluice publish --store s.db c.yaml >out &&
	grep -q "0 opened, 0 updated, 2 up to date" out &&
	test "$(grep -c "POST /api/v4/projects/acme%2Ftools%2Fgreet/merge_requests 201" forge.log)" = 2
'

test_expect_success 'export with the campaign file writes each change as a git am-able patch' '
	sluice export --store s.db --out exp c.yaml >out &&
	grep -q "^2 changes in exp/changes/" out &&
	ls exp/changes >list &&
	test "$(wc -l <list)" = 2 &&
	grep -q "^000[12]-file-src-app.c.patch$" list &&
	grep -q "^000[12]-file-src-report.c.patch$" list &&
	grep -q "^From: Campaign Bot <bot@example.com>" exp/changes/*-file-src-report.c.patch &&
	git clone -q -b main repo am &&
	git -C am am -q "$TRASH"/exp/changes/*.patch &&
	! grep -q greet_old am/src/app.c am/src/report.c &&
	test "$(git -C am rev-list --count origin/main..HEAD)" = 2
'

test_expect_success 'sync: a merged request accepts both of its candidates; a closed one rejects with its note' '
	git clone -q -b main remote.git work &&
	git -C work merge -q --no-ff -m "Merge !1" "origin/$(mr 1 source_branch)" &&
	git -C work push -q origin main &&
	curl -sf -X POST --data-binary "$(git -C work rev-parse HEAD)" "$(forge)/_stub/merge/1" >/dev/null &&
	curl -sf -X POST --data-binary "we keep greet_old here" "$(forge)/_stub/close/2" >/dev/null &&
	sluice sync --store s.db c.yaml >out &&
	cat out &&
	grep -q "2 requests: 0 open, 1 merged (1 landed unchanged), 1 closed" out &&
	test "$(sqlite3 s.db "select count(*) from decisions where decision = '"'"'accept'"'"'")" = "$(sqlite3 s.db "select count(*) from published where number = 1")" &&
	test "$(sqlite3 s.db "select distinct reason from decisions where decision = '"'"'reject'"'"'")" = "we keep greet_old here" &&
	sluice status --store s.db >out &&
	grep -q "landed unchanged  *100%" out
'

test_expect_success 'group: directory puts every candidate under src/ in one change' '
	write_campaign d.yaml &&
	review_section directory >>d.yaml &&
	sluice publish --store s-dir.db d.yaml >out &&
	grep -q "1 change: 1 opened" out &&
	test "$(git -C remote.git diff --name-only $(git -C repo rev-parse main) sluice/greet/review/dir/src.dir | sort | tr "\n" " ")" = "src/app.c src/report.c "
'

test_expect_success 'group: batch bounds each change in lines, by whole files' '
	write_campaign b.yaml &&
	review_section batch "  batch_lines: 4" >>b.yaml &&
	sluice publish --store s-batch.db b.yaml >out &&
	grep -q "2 changes: 2 opened" out &&
	git -C remote.git rev-parse --verify -q sluice/greet/review/batch-1 &&
	git -C remote.git rev-parse --verify -q sluice/greet/review/batch-2 &&
	for b in 1 2; do
		git -C remote.git diff $(git -C repo rev-parse main) sluice/greet/review/batch-$b |
			grep -c "^[-+]	" || return 1
	done | sort | tr "\n" " " >lines &&
	test "$(cat lines)" = "2 4 "
'

test_expect_success 'group: batch never splits a file over two batches, even past its bounds' '
	write_campaign b1.yaml &&
	review_section batch "  batch_files: 1" "  batch_lines: 2" >>b1.yaml &&
	sluice export --store s-batch.db --out expb b1.yaml >out &&
	grep -q "^2 changes in expb/changes/" out &&
	grep -l "^+++ b/src/report.c" expb/changes/*.patch >report.list &&
	test "$(wc -l <report.list)" = 1 &&
	test "$(grep -c "^+.*greet(line, sizeof line" $(cat report.list))" = 2 &&
	test "$(grep -l "^+++ b/src/app.c" expb/changes/*.patch | wc -l)" = 1
'

test_expect_success 'max_per_hour paces new merge requests by those opened in the last hour' '
	write_campaign h.yaml &&
	review_section target "  max_per_hour: 1" >>h.yaml &&
	sluice publish --store s-hour.db h.yaml >out &&
	grep -q "3 changes: 1 opened, 0 updated, 0 up to date, 2 paced" out &&
	grep -q "paced (1 open of 10, 1 opened in the last hour of 1)" out &&
	sqlite3 s-hour.db "update published set opened_at = '"'"'2000-01-01T00:00:00Z'"'"', state = '"'"'merged'"'"'" &&
	sluice publish --store s-hour.db h.yaml >out &&
	grep -q "3 changes: 1 opened, 0 updated, 0 up to date, 1 paced, 1 already decided" out
'

test_expect_success 'a change rejected in sluice has its merge request closed (state_event) with a note' '
	n=$(sqlite3 s-hour.db "select max(number) from published where state = '"'"'open'"'"'") &&
	c=$(sqlite3 s-hour.db "select candidate_id from published where number = $n") &&
	sluice reject --store s-hour.db $c --reason "not here" &&
	sluice sync --store s-hour.db h.yaml >out &&
	grep -q "^1 request closed: its change was rejected" out &&
	grep -q "POST /api/v4/projects/acme%2Ftools%2Fgreet/merge_requests/$n/notes 201" forge.log &&
	test "$(mr $n state)" = closed &&
	test "$(sqlite3 s-hour.db "select state from published where number = $n")" = closed
'

test_expect_success 'a template with an unknown variable is bad input naming file and line (exit 2)' '
	write_campaign t.yaml &&
	review_section file "  body: \"{{nosuch}}\"" >>t.yaml &&
	test_expect_code 2 sluice publish --store s.db t.yaml 2>err &&
	grep -q "^sluice: t.yaml:[0-9]*:[0-9]*: unknown variable .{{nosuch}}. in .body." err
'

test_expect_success 'the token is never stored or printed' '
	! grep -r "$FORGE_TOKEN" s.db* s-dir.db* s-batch.db* out repo/.git remote.git forge.log 2>/dev/null
'

test_expect_success 'stop the stub' '
	kill $(cat forge.pid)
'

test_done
