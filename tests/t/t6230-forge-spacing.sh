#!/bin/sh
test_description='mutating forge requests are spaced (GitHub asks for about a second between them)'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

export FORGE_TOKEN=ghp-secret-token-4711

test_expect_success 'setup: three proposed candidates, a bare remote, the stub GitHub' '
	greet_repo repo &&
	git init -q --bare remote.git &&
	git -C repo push -q "$TRASH/remote.git" main &&
	start_forge github acme/greet "$TRASH/remote.git" &&
	echo $forge_pid >forge.pid &&
	write_campaign c.yaml &&
	printf "%s\n" "review:" "  forge: github" "  api_url: http://127.0.0.1:$forge_port" \
		"  project: acme/greet" "  token_env: FORGE_TOKEN" "  remote: $TRASH/remote.git" \
		"  labels: [sluice]" >>c.yaml &&
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *3" out
'

test_expect_success 'a bad SLUICE_FORGE_WRITE_INTERVAL_MS is bad input (exit 2), nothing pushed' '
	for v in x -1 60001 "" 5s; do
		test_expect_code 2 env SLUICE_FORGE_WRITE_INTERVAL_MS="$v" \
			sluice publish --store s.db c.yaml >out 2>err &&
		grep -q "^sluice: SLUICE_FORGE_WRITE_INTERVAL_MS: expected milliseconds from 0 to 60000, got .$v.$" err || return 1
	done &&
	test "$(git -C remote.git for-each-ref refs/heads/sluice | wc -l)" = 0 &&
	! grep -q POST forge.log
'

# The client spaces its sends; the stub logs each reply a little later, by a
# delay that varies: a lower bound that holds is on the whole publish, which
# sends M mutating requests at least (M - 1) intervals apart.
test_expect_success 'publish spaces its mutating requests by the interval: a lower bound on its time' '
	t0=$(date +%s%3N) &&
	SLUICE_FORGE_WRITE_INTERVAL_MS=1000 sluice publish --store s.db c.yaml >out &&
	t1=$(date +%s%3N) &&
	grep -q "3 changes: 3 opened" out &&
	m=$(grep -cE "^[0-9]+ (POST|PATCH|PUT|DELETE) " forge.log) &&
	test $m = 6 &&
	test $((t1 - t0)) -ge $(((m - 1) * 1000))
'

test_expect_success 'stop the stub' '
	kill $(cat forge.pid)
'

test_done
