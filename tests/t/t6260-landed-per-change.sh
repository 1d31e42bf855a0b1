#!/bin/sh
test_description='landed unchanged is judged per change: two changes in one file, both merged untouched'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

export FORGE_TOKEN=ghp-secret-token-4711

forge() {
	echo "http://127.0.0.1:$(cat forge.port)"
}

merge_pr() { # N [EDIT]: merge request N's branch into main, EDIT (a sed script) applied to it
	b=$(sqlite3 s.db "select distinct branch from published where number = $1") &&
	git -C work fetch -q origin &&
	git -C work merge -q --no-ff --no-commit "origin/$b" &&
	if test -n "${2:-}"; then
		sed -i "$2" work/src/report.c && git -C work add src/report.c
	fi &&
	git -C work commit -q -m "Merge #$1" &&
	git -C work push -q origin main &&
	curl -sf -X POST --data-binary "$(git -C work rev-parse HEAD)" "$(forge)/_stub/merge/$1" >/dev/null
}

test_expect_success 'setup: three requests, two of them in src/report.c' '
	greet_repo repo &&
	git init -q --bare remote.git &&
	git -C repo push -q "$TRASH/remote.git" main &&
	start_forge github acme/greet "$TRASH/remote.git" &&
	echo $forge_pid >forge.pid &&
	write_campaign c.yaml &&
	printf "%s\n" "review:" "  forge: github" "  api_url: $forge_url" "  project: acme/greet" \
		"  token_env: FORGE_TOKEN" "  remote: $TRASH/remote.git" >>c.yaml &&
	sluice run --store s.db c.yaml >out &&
	sluice publish --store s.db c.yaml >out &&
	grep -q "3 opened" out &&
	sqlite3 s.db "select distinct number from published where branch like '"'"'%src-report.c%'"'"' order by 1" >report.prs &&
	test $(wc -l <report.prs) = 2 &&
	git clone -q -b main remote.git work
'

test_expect_success 'both changes of src/report.c merged one after the other land unchanged' '
	for n in $(cat report.prs); do
		merge_pr $n || return 1
	done &&
	sluice sync --store s.db c.yaml >out &&
	cat out &&
	grep -q "2 merged (2 landed unchanged)" out &&
	sluice status --store s.db >out &&
	grep -q "landed unchanged  *100% (2 of 2)" out
'

test_expect_success 'a merge that rewrote the change'"'"'s own line is changed before landing' '
	n=$(sqlite3 s.db "select distinct number from published where branch like '"'"'%src-app.c%'"'"'") &&
	b=$(sqlite3 s.db "select distinct branch from published where number = $n") &&
	git -C work fetch -q origin &&
	git -C work merge -q --no-ff --no-commit "origin/$b" &&
	sed -i "s/sizeof banner/sizeof(banner)/; \$a /* reviewed */" work/src/app.c &&
	git -C work commit -q -am "Merge #$n with a tweak" &&
	git -C work push -q origin main &&
	curl -sf -X POST --data-binary "$(git -C work rev-parse HEAD)" "$(forge)/_stub/merge/$n" >/dev/null &&
	sluice sync --store s.db c.yaml >out &&
	grep -q "1 merged (0 landed unchanged)" out &&
	test "$(sqlite3 s.db "select distinct landed_unchanged from published where number = $n")" = 0
'

test_expect_success 'stop the stub' '
	kill $(cat forge.pid)
'

test_done
