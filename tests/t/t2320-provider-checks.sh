#!/bin/sh
# t2320-provider-checks.sh - cheap format corrections and early provider
# checks: prose in the node format is a format error (a correction round, no
# attempt spent, no gate run on it); a provider that cannot work (a command
# that cannot start, an endpoint that refuses the key) stops the run with one
# line (beside the timestamped lines of the run's start and end) and exit
# status 2 before the warm base and the baseline; five
# identical provider errors in a row stop the run with the targets not done
# left pending, and the next run continues them.  Gate runs and baselines
# are counted in the store.
test_description='node prose is a format error; provider probe; identical errors stop the run'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'setup: eight targets' '
	many_repo repo &&
	cat >good.sh <<-\EOF &&
	cat >/dev/null
	printf "\`\`\`c\nint f(void) { return new_api(0); }\n\`\`\`\n"
	EOF
	cat >prose-first.sh <<-\EOF
	if grep -q "could not be used"; then
		printf "\`\`\`c\nint f(void) { return new_api(0); }\n\`\`\`\n"
	else
		echo "Sure: call new_api instead of old_api and the function is fine."
	fi
	EOF
'

test_expect_success 'prose in the node format: a correction round, no attempt spent, no gate' '
	model_campaign prose.yaml prose "sh $TRASH/prose-first.sh" "attempts: 1" &&
	sluice run --store prose.db prose.yaml >out 2>err &&
	test "$(store_query prose.db "SELECT count(*) FROM targets WHERE state = '"'"'proposed'"'"'")" = 8 &&
	test "$(store_query prose.db "SELECT count(*), sum(format_errors) FROM attempts WHERE n = 1
		AND outcome = '"'"'candidate'"'"' AND format_reply LIKE '"'"'Sure: call new_api%'"'"'")" = "8|8" &&
	test "$(store_query prose.db "SELECT count(*) FROM candidates")" = 8 &&
	for b in $(git -C repo for-each-ref --format="%(refname)" refs/heads/sluice/prose/); do
		git -C repo show "$b:src/many.c" >many.c &&
		! grep -q Sure many.c || return 1
	done
'

test_expect_success 'a provider command that cannot start stops the run before the baseline' '
	model_campaign broken.yaml broken "FOO=1 nosuch-model-xyz --reply" &&
	test_expect_code 2 sluice run --store broken.db broken.yaml >out 2>err &&
	cat err &&
	test $(grep -vc "^\[20[0-9-]*T[0-9:]*Z\] run " err) = 1 &&
	grep -q "provider: .*cannot start: .nosuch-model-xyz. is not a program" err &&
	test "$(store_query broken.db "SELECT count(*) FROM baselines")" = 0 &&
	test "$(store_query broken.db "SELECT count(*) FROM gate_runs")" = 0 &&
	test "$(store_query broken.db "SELECT count(*) FROM attempts")" = 0 &&
	test -z "$(find scratch-broken -name "warm-*" 2>/dev/null)"
'

test_expect_success 'a provider command that is not valid shell stops the run the same way' '
	model_campaign syntax.yaml syntax "'"'"'cat reply.txt | ('"'"'" &&
	test_expect_code 2 sluice run --store syntax.db syntax.yaml >out 2>err &&
	test $(grep -vc "^\[20[0-9-]*T[0-9:]*Z\] run " err) = 1 &&
	grep -q "provider: the command is not valid shell" err &&
	test "$(store_query syntax.db "SELECT count(*) FROM baselines")" = 0
'

test_expect_success 'an endpoint that refuses the key stops the run before the baseline' '
	mkdir m &&
	echo 401 >m/get.status &&
	start_stub m && echo $stub_pid >stub.pid &&
	model_campaign http.yaml http "unused" &&
	sed -i -e "s|^  kind: command|  kind: openai|" -e "s|^  command: unused|  base_url: http://127.0.0.1:$stub_port/v1\n  model: m\n  api_key_env: T2320_KEY|" http.yaml &&
	T2320_KEY=sk-wrong test_expect_code 2 sluice run --store http.db http.yaml >out 2>err &&
	kill $(cat stub.pid) &&
	test $(grep -vc "^\[20[0-9-]*T[0-9:]*Z\] run " err) = 1 &&
	grep -q "refuses the key: HTTP 401" err &&
	grep -q "^GET /v1/models " m/get.log &&
	grep -q "Authorization: Bearer sk-wrong" m/get.log &&
	! test -f m/request-1.json &&
	test "$(store_query http.db "SELECT count(*) FROM baselines")" = 0
'

test_expect_success 'five identical provider errors stop the run; the targets not done stay pending' '
	cat >failing.sh <<-\EOF &&
	cat >/dev/null
	echo "upstream: quota exhausted" >&2
	exit 1
	EOF
	model_campaign same.yaml same "sh $TRASH/failing.sh" "attempts: 3" &&
	test_expect_code 2 sluice run --store same.db same.yaml >out 2>err &&
	grep -q "the provider failed 5 times in a row with the same error (the command exited with status 1: upstream: quota exhausted)" err &&
	test "$(store_query same.db "SELECT count(*) FROM attempts")" = 4 &&
	test "$(store_query same.db "SELECT count(*) FROM attempts WHERE outcome = '"'"'provider_error'"'"'")" = 4 &&
	store_query same.db "SELECT count(*) FROM targets WHERE state = '"'"'pending'"'"'" >pending &&
	test "$(store_query same.db "SELECT count(*) FROM targets WHERE state IN ('"'"'pending'"'"', '"'"'failed'"'"')")" = 8 &&
	test $(cat pending) -ge 7
'

test_expect_success 'the next run, with the provider fixed, continues the pending targets' '
	sed -i "s|failing.sh|good.sh|" same.yaml &&
	sluice run --store same.db same.yaml >out 2>err &&
	test "$(store_query same.db "SELECT count(*) FROM targets WHERE state = '"'"'proposed'"'"'")" = $(cat pending)
'

test_done
