#!/bin/sh
test_description='format-correction round, record and replay with the server stopped, early stop'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'setup: the demo project and a stub whose first reply is prose' '
	greet_repo repo &&
	mkdir m &&
	openai_reply m/reply-1.json <<-\EOF &&
	Sure! I would replace greet_old with greet and pass the size of the buffer.
	EOF
	openai_reply m/reply-2.json <<-\EOF &&
	```diff
	--- a/src/app.c
	+++ b/src/app.c
	@@ -10,1 +10,1 @@
	-	greet_old(banner, argc > 1 ? argv[1] : "world");
	+	greet(banner, sizeof banner, argc > 1 ? argv[1] : "world");
	```
	EOF
	start_stub m && echo $stub_pid >stub.pid &&
	cat >c.yaml <<-EOF
	name: model
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: [src/app.c]
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"greet_old\"))"
	  unit: function
	provider:
	  kind: openai
	  base_url: http://127.0.0.1:$stub_port/v1
	  model: stub-model-1
	  response_format: "{\"type\": \"text\"}"
	edit_format: udiff
	attempts: 1
	gates:
	  - name: build
	    command: make
	EOF
'

test_expect_success 'an unusable reply gets one correction round inside the same attempt' '
	sluice run --store s.db --record replies.jsonl c.yaml >out &&
	grep -q "proposed  *1" out &&
	test "$(store_query s.db "select n || '"'"':'"'"' || outcome || '"'"':'"'"' || format_errors from attempts")" = "1:candidate:1" &&
	grep -q "could not be used" m/request-2.json &&
	grep -q "no unified diff" m/request-2.json &&
	grep -q "\"response_format\":{\"type\":\"text\"}" m/request-1.json &&
	test "$(store_query s.db "select tokens_in from attempts")" = 240 &&
	grep -q "format errors" out
'

test_expect_success 'show --attempts prints the request, the reply and the numbers' '
	sluice show --store s.db --attempts 1 >show &&
	grep -q "^attempt 1: openai, candidate, 240+60 tokens" show &&
	grep -q "1 format error" show &&
	grep -q "^--- reply" show &&
	sluice show --store s.db --attempts --json 1 | grep -q "\"format_errors\":1"
'

test_expect_success 'the recording replays the run bit for bit with the server stopped' '
	kill $(cat stub.pid) &&
	test $(wc -l <replies.jsonl) = 2 &&
	sed -e "s/^name: model/name: replayed/" \
	    -e "s|^  kind: openai|  kind: replay\n  replay: $TRASH/replies.jsonl|" c.yaml >r.yaml &&
	sluice run --store r.db r.yaml >out &&
	grep -q "proposed  *1" out &&
	test "$(store_query s.db "select diff from candidates")" = "$(store_query r.db "select diff from candidates")" &&
	test "$(store_query s.db "select request from attempts")" = "$(store_query r.db "select request from attempts")" &&
	test "$(store_query s.db "select reply from attempts")" = "$(store_query r.db "select reply from attempts")" &&
	git -C repo diff --quiet sluice/model/src-app.c-L6 sluice/replayed/src-app.c-L6
'

test_expect_success 'an earlier store is a replay source too' '
	sed -e "s/^name: model/name: fromstore/" \
	    -e "s|^  kind: openai|  kind: replay\n  replay: $TRASH/s.db|" c.yaml >q.yaml &&
	sluice run --store q.db q.yaml >out &&
	grep -q "proposed  *1" out &&
	test "$(store_query s.db "select diff from candidates")" = "$(store_query q.db "select diff from candidates")"
'

test_expect_success 'a request that was never recorded is an error, not a network call' '
	sed -e "s/^name: model/name: miss/" -e "s/stub-model-1/another-model/" \
	    -e "s|^  kind: openai|  kind: replay\n  replay: $TRASH/replies.jsonl|" c.yaml >x.yaml &&
	test_expect_code 2 sluice run --store x.db x.yaml >out 2>err &&
	grep -q "^sluice: .*replay: no recorded reply for request key" err &&
	test "$(store_query x.db "select count(*) from attempts")" = 0 &&
	test "$(store_query x.db "select count(*) from targets where state <> '"'"'pending'"'"'")" = 0
'

test_expect_success 'early stop: after 3 targets with none passing, the rest wait for a later run' '
	mkdir -p many/src &&
	{
		echo "int old_api(int x) { return x; }"
		for i in 1 2 3 4 5 6 7 8; do echo "int f$i(void) { return old_api($i); }"; done
	} >many/src/m.c &&
	make_repo many &&
	cat >e.yaml <<-EOF &&
	name: early
	repository: many
	scratch: $TRASH/scratch
	jobs: 1
	targets:
	  language: c
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  capture: call
	rules:
	  - {capture: call, template: "new_api(1)"}
	budget:
	  early_stop_after: 3
	  early_stop_below: 0.5
	attempts: 1
	gates:
	  - name: never
	    command: "! grep -q new_api src/m.c"
	EOF
	test_expect_code 1 sluice run --store e.db e.yaml >out &&
	test "$(store_query e.db "select count(*) from targets where state = '"'"'failed'"'"'")" = 3 &&
	test "$(store_query e.db "select count(*) from targets where state = '"'"'budget'"'"'")" = 5 &&
	store_query e.db "select distinct reason from targets where state = '"'"'budget'"'"'" | grep -q "early stop"
'

test_expect_success 'a candidate that leaves its target alone is refused' '
	cat >other.txt <<-\EOF &&
	```diff
	--- a/src/app.c
	+++ b/src/app.c
	@@ -10,1 +10,1 @@
	-	greet_old(banner, argc > 1 ? argv[1] : "world");
	+	greet(banner, sizeof banner, argc > 1 ? argv[1] : "world");
	```
	EOF
	cat >o.yaml <<-EOF &&
	name: elsewhere
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ["src/*.c"]
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"greet_old\"))"
	  capture: call
	provider: {kind: command, command: "cat $TRASH/other.txt"}
	edit_format: udiff
	attempts: 1
	EOF
	sluice run --store o.db o.yaml >out &&
	test "$(store_query o.db "select count(*) from attempts where outcome = '"'"'apply_error'"'"'")" = 2 &&
	store_query o.db "select error from attempts" | grep -q "does not change the target, lines 10-10 of .src/report.c." &&
	store_query o.db "select error from attempts" | grep -q "does not change the target, lines 18-18 of .src/report.c." &&
	test "$(git -C repo for-each-ref --format="%(refname:short)" refs/heads/sluice/elsewhere/)" = sluice/elsewhere/src-app.c-L10C2
'

test_expect_success 'cleanup' '
	{ kill $(cat stub.pid) 2>/dev/null || :; }
'

test_done
