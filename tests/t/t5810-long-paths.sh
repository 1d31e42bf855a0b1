#!/bin/sh
test_description='run and publish: a target path of 300 characters gets a bounded, valid and unique branch'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

export FORGE_TOKEN=ghp-secret-token-4711

rep() { # N CHAR: CHAR N times
	printf "%${1}s" "" | tr " " "$2"
}

test_expect_success 'setup: files at 300-character paths that differ only at their end, one 254-character name' '
	d=$(rep 60 d) &&
	deep=$d/$d/$d/$d/$(rep 50 f) &&
	mkdir -p long/$(dirname $deep) long/x &&
	echo "x = a.b()" >long/${deep}_a.py &&
	echo "x = a.b()" >long/${deep}_b.py &&
	echo "x = a.b()" >long/x/$(rep 251 e).py &&
	test ${#deep} -gt 290 &&
	make_repo long &&
	git init -q --bare remote.git &&
	git -C long push -q "$TRASH/remote.git" main &&
	python_campaign c.yaml long long
'

test_expect_success 'run proposes every target on a valid branch of its own' '
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *3" out &&
	store_query s.db "select branch from candidates where state = '"'"'passed'"'"'" >branches &&
	test $(sort -u branches | wc -l) = 3 &&
	git -C long branch --list "sluice/*" >listed &&
	test $(wc -l <listed) = 3 &&
	while read b; do
		git check-ref-format "refs/heads/$b" &&
		test ${#b} -le 250 &&
		case $b in *-L1C5) ;; *) return 1 ;; esac
	done <branches
'

test_expect_success 'the branches of the two long paths differ, and keep the head of their path' '
	grep "^sluice/long/$(rep 60 d)-" branches >deep &&
	test $(wc -l <deep) = 2 &&
	test $(sort -u deep | wc -l) = 2
'

test_expect_success 'publish, grouped by file and by directory: the review branches are valid' '
	start_forge github acme/long "$TRASH/remote.git" &&
	echo $forge_pid >forge.pid &&
	for g in file directory; do
		cp c.yaml c-$g.yaml &&
		printf "%s\n" "review:" "  forge: github" "  api_url: $forge_url" \
			"  project: acme/long" "  token_env: FORGE_TOKEN" \
			"  remote: $TRASH/remote.git" "  group: $g" "  max_open: 10" \
			"  max_per_hour: 100" >>c-$g.yaml &&
		sluice publish --store s.db c-$g.yaml >out-$g || return 1
	done &&
	grep -q "3 changes: 3 opened" out-file &&
	grep -q "2 changes: 2 opened" out-directory &&
	git -C remote.git for-each-ref --format="%(refname)" refs/heads/sluice/long/review/ >refs &&
	test $(wc -l <refs) = 5 &&
	while read r; do
		git check-ref-format "$r" &&
		test ${#r} -le 512 || return 1
		for c in $(echo "$r" | tr / " "); do
			test ${#c} -le 200 || return 1
		done
	done <refs
'

test_expect_success 'stop the stub forge' '
	kill $(cat forge.pid)
'

test_done
