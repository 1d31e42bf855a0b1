#!/bin/sh
# t2310-token-usage.sh - every token counted: a command provider reports its
# usage on the last line of its stderr ("sluice-usage: prompt=N
# completion=M"); one that does not, and an HTTP reply without "usage", are
# counted from the bytes sent and received (4 a token), marked estimated in
# the store, in status and in show; the token budget binds on both, and
# unusable replies count.
test_description='command usage trailer, estimated tokens, budgets on both'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'setup: eight targets, providers with and without usage' '
	many_repo repo &&
	cat >reply.txt <<-\EOF &&
	```c
	int f(void) { return new_api(0); }
	```
	EOF
	cat >with-usage.sh <<-EOF &&
	cat >/dev/null
	echo call >>"$TRASH/calls-usage"
	cat "$TRASH/reply.txt"
	echo "some progress" >&2
	echo "sluice-usage: prompt=400 completion=100" >&2
	EOF
	cat >without-usage.sh <<-EOF &&
	cat >"$TRASH/last-request"
	echo call >>"$TRASH/calls-bytes"
	cat "$TRASH/reply.txt"
	EOF
	model_campaign usage.yaml usage "sh $TRASH/with-usage.sh" "attempts: 1" "budget: {max_tokens: 1000}" &&
	model_campaign bytes.yaml bytes "sh $TRASH/without-usage.sh" "attempts: 1" "budget: {max_tokens: 1000}"
'

test_expect_success 'a command that reports usage: the budget stops after exactly two requests' '
	sluice run --store usage.db usage.yaml >out 2>err &&
	test $(wc -l <calls-usage) = 2 &&
	test "$(store_query usage.db "SELECT sum(tokens_in), sum(tokens_out), sum(tokens_estimated) FROM attempts")" = "800|200|0" &&
	test "$(store_query usage.db "SELECT count(*) FROM targets WHERE state = '"'"'budget'"'"'")" = 6 &&
	grep -q "token budget reached (1000 of 1000)" err &&
	! grep -q estimated out
'

test_expect_success 'a command that does not: its bytes are counted, and the budget binds on them' '
	sluice run --store bytes.db bytes.yaml >out 2>err &&
	calls=$(wc -l <calls-bytes) &&
	test "$calls" -ge 1 && test "$calls" -lt 8 &&
	test "$(store_query bytes.db "SELECT count(*) FROM attempts")" = "$calls" &&
	test "$(store_query bytes.db "SELECT count(*) FROM attempts WHERE tokens_estimated = 1
		AND tokens_in = (length(CAST(request AS BLOB)) + 3) / 4
		AND tokens_out = (length(CAST(reply AS BLOB)) + 3) / 4")" = "$calls" &&
	test "$(store_query bytes.db "SELECT sum(tokens_in + tokens_out) >= 1000 FROM attempts")" = 1 &&
	grep -q "token budget reached" err
'

test_expect_success 'status and show say the tokens are estimated' '
	sluice status --store bytes.db >st &&
	total=$(store_query bytes.db "SELECT sum(tokens_in + tokens_out) FROM attempts") &&
	grep "estimated" st &&
	grep -q "~$(printf "%d" "$total" | sed "s/\([0-9]\)\([0-9]\{3\}\)$/\1,\2/") tokens (estimated" st &&
	sluice show --store bytes.db --attempts 1 >sh &&
	grep -q "~[0-9,]* tokens (estimated)" sh &&
	sluice show --store bytes.db --attempts --json 1 >sh.json &&
	grep -q "\"tokens_estimated\": *true" sh.json
'

test_expect_success 'unusable replies count: prose twice in the node format is billed' '
	cat >prose.sh <<-\EOF &&
	cat >/dev/null
	echo "I would rather not change this code."
	EOF
	model_campaign prose.yaml prose "sh $TRASH/prose.sh" "attempts: 1" &&
	test_expect_code 1 sluice run --store prose.db prose.yaml >out 2>err &&
	test "$(store_query prose.db "SELECT count(*) FROM attempts WHERE outcome = '"'"'parse_error'"'"'
		AND format_errors = 2 AND tokens_estimated = 1 AND tokens_in > 0 AND tokens_out > 0")" = 8
'

test_expect_success 'an HTTP reply without usage is counted from its bytes, estimated' '
	mkdir m &&
	printf "%s\n" "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"\`\`\`c\\nint f(void) { return new_api(0); }\\n\`\`\`\\n\"},\"finish_reason\":\"stop\"}]}" >m/reply-1.json &&
	start_stub m && echo $stub_pid >stub.pid &&
	model_campaign http.yaml http "unused" "attempts: 1" &&
	sed -i -e "s|^  kind: command|  kind: openai|" -e "s|^  command: unused|  base_url: http://127.0.0.1:$stub_port/v1\n  model: m|" http.yaml &&
	sluice run --store http.db http.yaml >out 2>err &&
	kill $(cat stub.pid) &&
	test -f m/request-8.json &&
	test "$(store_query http.db "SELECT count(*) FROM attempts WHERE tokens_estimated = 1
		AND tokens_in = (length(CAST(request AS BLOB)) + 3) / 4 AND tokens_out > 0")" = 8
'

test_done
