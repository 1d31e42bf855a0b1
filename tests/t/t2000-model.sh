#!/bin/sh
test_description='a model campaign against a stub OpenAI-compatible server: self-correction, secrets'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

KEY=sk-test-4f1d9c2b7a0e
export SLUICE_TEST_KEY=$KEY

test_expect_success 'setup: repository, stub replies (first breaks the build, second is right)' '
	greet_repo repo &&
	mkdir m &&
	openai_reply m/reply-1.json <<-\EOF &&
	Here is the change:

	```diff
	--- a/src/app.c
	+++ b/src/app.c
	@@ -8,5 +8,5 @@ int main(int argc, char **argv)
	 	char banner[32];
	 
	-	greet_old(banner, argc > 1 ? argv[1] : "world");
	+	greet(banner, argc > 1 ? argv[1] : "world");
	 	puts(banner);
	 	report_header(stdout, "platform");
	```
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
	  capture: call
	  unit: function
	provider:
	  kind: openai
	  base_url: http://127.0.0.1:$stub_port/v1
	  model: stub-model-1
	  api_key_env: SLUICE_TEST_KEY
	  temperature: 0
	instructions: Replace greet_old(out, name) with greet(out, sizeof out, name).
	edit_format: udiff
	attempts: 3
	gates:
	  - name: build
	    command: make
	    timeout: 120
	  - name: test
	    command: make test
	EOF
'

test_expect_success 'the run proposes the second attempt' '
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *1" out &&
	grep -q "attempts  *2" out &&
	grep -q "edits  *2  (placed exactly 2, moved 0, by whitespace 0; refused 0)" out &&
	test "$(store_query s.db "select group_concat(outcome) from attempts")" = "candidate,candidate" &&
	test "$(store_query s.db "select group_concat(gate || '"'"':'"'"' || verdict) from gate_runs")" = "syntax:pass,expect:pass,build:fail,syntax:pass,expect:pass,build:pass,test:pass" &&
	git -C repo show sluice/model/src-app.c-L6:src/app.c | grep -q "greet(banner, sizeof banner,"
'

test_expect_success 'the first request carried the target and the instructions' '
	test -f m/request-1.json &&
	grep -q "stub-model-1" m/request-1.json &&
	grep -q "greet_old(banner" m/request-1.json &&
	grep -q "Replace greet_old" m/request-1.json
'

test_expect_success 'the second request carried the failing gate and its output' '
	test -f m/request-2.json &&
	grep -q "build" m/request-2.json &&
	grep -q "too few arguments to function" m/request-2.json &&
	! test -f m/request-3.json
'

test_expect_success 'the key went in the Authorization header only' '
	grep -qi "^authorization: Bearer $KEY" m/request-1.headers &&
	! grep -q "$KEY" m/request-1.json
'

test_expect_success 'the key is nowhere in the store, the replies or the output' '
	! grep -a -q "$KEY" s.db s.db-wal 2>/dev/null &&
	test "$(store_query s.db "select count(*) from attempts where prompt like '"'"'%$KEY%'"'"' or reply like '"'"'%$KEY%'"'"'")" = 0 &&
	! grep -q "$KEY" out
'

test_expect_success 'the key never reaches a gate' '
	mkdir m2 && cp m/reply-2.json m2/reply-1.json &&
	kill $(cat stub.pid) && start_stub m2 && echo $stub_pid >stub.pid &&
	sed -e "s/^name: model/name: envcheck/" -e "s/127.0.0.1:[0-9]*/127.0.0.1:$stub_port/" c.yaml >e.yaml &&
	cat >>e.yaml <<-\EOF &&
	  - name: env
	    command: "env; if env | grep -q sk-test; then exit 1; fi"
	EOF
	sluice run --store e.db e.yaml >out &&
	store_query e.db "select output_tail from gate_runs where gate = '"'"'env'"'"'" >envout &&
	grep -q "^PATH=" envout &&
	! grep -q "SLUICE_TEST_KEY" envout
'

test_expect_success 'an endpoint that is down costs no attempt: the target stays pending' '
	{ kill $(cat stub.pid) 2>/dev/null || :; } &&
	sed -e "s/^name: model/name: down/" c.yaml >d.yaml &&
	test_expect_code 1 sluice run --store d.db d.yaml >out 2>err &&
	test "$(store_query d.db "select count(*) from attempts")" = 0 &&
	test "$(store_query d.db "select state, attempts from targets")" = "pending|0" &&
	store_query d.db "select reason from targets" | grep -q "cannot reach the model" &&
	grep -q "1 targets stay pending" err
'

test_expect_success 'a missing key variable is an input error' '
	sed -e "s/^name: model/name: nokey/" -e "s/SLUICE_TEST_KEY/SLUICE_NO_SUCH_KEY/" c.yaml >k.yaml &&
	test_expect_code 2 sluice run --store k.db k.yaml 2>err &&
	grep -q "SLUICE_NO_SUCH_KEY" err
'

test_expect_success 'cleanup' '
	{ kill $(cat stub.pid) 2>/dev/null || :; }
'

test_done
