#!/bin/sh
test_description='budgets hold campaign-wide; a later run with a raised budget continues; node replacement'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'setup: eight targets, a stub whose every reply costs 150 tokens' '
	many_repo repo &&
	mkdir m &&
	openai_reply m/reply-1.json <<-\EOF &&
	```c
	int f(void) { return new_api(0); }
	```
	EOF
	start_stub m && echo $stub_pid >stub.pid &&
	cat >c.yaml <<-EOF
	name: budget
	repository: repo
	scratch: $TRASH/scratch
	concurrency: 1
	targets:
	  language: c
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  unit: function
	provider:
	  kind: openai
	  base_url: http://127.0.0.1:$stub_port/v1
	  model: stub-model-1
	  prices:
	    stub-model-1: {input: 1.0, output: 2.0}
	    other-model: {input: 9, output: 9}
	budget:
	  max_tokens: 750
	attempts: 1
	gates:
	  - name: check
	    command: "true"
	EOF
'

test_expect_success 'node replacement is the default for function units' '
	sluice scope c.yaml >out &&
	test $(wc -l <out) = 8 &&
	grep -q "src/many.c:3:1: function" out
'

test_expect_success 'a token budget of five requests stops after exactly five (no concurrency)' '
	sluice run --store s.db c.yaml >out &&
	test "$(store_query s.db "select count(*) from attempts")" = 5 &&
	test -f m/request-5.json && ! test -f m/request-6.json &&
	test "$(store_query s.db "select count(*) from targets where state = '"'"'budget'"'"'")" = 3 &&
	test "$(store_query s.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = 5 &&
	store_query s.db "select reason from targets where state = '"'"'budget'"'"' limit 1" >reason &&
	grep -q "token budget reached" reason &&
	grep -q "budget  *3" out
'

test_expect_success 'each attempt records tokens, cost, status and latency' '
	test "$(store_query s.db "select min(tokens_in), max(tokens_out), min(http_status) from attempts")" = "120|30|200" &&
	test "$(store_query s.db "select printf('"'"'%.6f'"'"', sum(cost)) from attempts")" = 0.000900
'

test_expect_success 'the node reply was spliced into the function' '
	branch=$(git -C repo for-each-ref --format="%(refname:short)" refs/heads/sluice/budget/ | head -n 1) &&
	git -C repo show "$branch:src/many.c" >many.c &&
	grep -q "^int f(void) { return new_api(0); }$" many.c &&
	test $(grep -c old_api many.c) = 8
'

test_expect_success 'a rerun with a raised budget finishes only the rest' '
	sed -i "s/max_tokens: 750/max_tokens: 100000/" c.yaml &&
	sluice run --store s.db c.yaml >out &&
	test "$(store_query s.db "select count(*) from attempts")" = 8 &&
	test "$(store_query s.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = 8 &&
	test -f m/request-8.json && ! test -f m/request-9.json
'

test_expect_success 'a cost cap with concurrency never overshoots by more than the requests in flight' '
	mkdir m2 && cp m/reply-1.json m2/ &&
	kill $(cat stub.pid) && start_stub m2 && echo $stub_pid >stub.pid &&
	sed -e "s/^name: budget/name: cost/" -e "s/concurrency: 1/concurrency: 3/" \
	    -e "s/127.0.0.1:[0-9]*/127.0.0.1:$stub_port/" \
	    -e "s/  max_tokens: 100000/  max_cost: 0.0004/" c.yaml >k.yaml &&
	sluice run --store k.db k.yaml >out &&
	n=$(store_query k.db "select count(*) from attempts") &&
	test "$n" -ge 3 && test "$n" -le 5 &&
	test "$(store_query k.db "select count(*) from targets where state = '"'"'budget'"'"'")" = $((8 - n))
'

test_expect_success 'max_cost without a price for the model is an input error' '
	sed -e "s/stub-model-1: {input/stub-model-2: {input/" k.yaml >p.yaml &&
	test_expect_code 2 sluice scope p.yaml 2>err &&
	grep -q "needs a price for model .stub-model-1." err
'

test_expect_success 'cleanup' '
	{ kill $(cat stub.pid) 2>/dev/null || :; }
'

test_done
