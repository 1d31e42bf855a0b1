#!/bin/sh
test_description='a model endpoint that quotes the API key back: the key is stored nowhere, shown nowhere'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

KEY=sk-quoted-7c1e93b5d2a4f086
export SLUICE_TEST_KEY=$KEY

# campaign NAME: the campaign NAME.yaml against the stub of directory NAME
campaign() {
	cat >$1.yaml <<-EOF
	name: $1
	repository: repo
	base: main
	scratch: $TRASH/scratch
	targets:
	  language: c
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  unit: function
	provider:
	  kind: openai
	  base_url: http://127.0.0.1:$stub_port/v1
	  model: stub-model-1
	  api_key_env: SLUICE_TEST_KEY
	  max_retries: 1
	attempts: 1
	gates:
	  - name: ok
	    command: "true"
	EOF
}

# restart_stub NAME: the stub of the last test stopped, one on directory
# NAME (its reply files written) started, and the campaign NAME.yaml for it
restart_stub() {
	kill $(cat stub.pid) &&
	start_stub $1 && echo $stub_pid >stub.pid &&
	campaign $1
}

# no_key NAME: the key is in no table of NAME.db, nor in NAME's record,
# output, `targets`, `show --attempts` or any commit of the repository
no_key() {
	sqlite3 $1.db .dump >$1.dump &&
	grep -q "redacted" $1.dump &&
	sluice targets --store $1.db >$1.show &&
	if test "$(sqlite3 $1.db "select count(*) from candidates")" != 0; then
		sluice show 1 --store $1.db --attempts >>$1.show
	fi &&
	! grep -a -q "$KEY" $1.dump $1.db $1.rec $1.out $1.err $1.show &&
	! git -C repo log -p --all | grep -q "$KEY"
}

test_expect_success 'setup: a target; a stub that quotes the key in an error, a reply and its code' '
	mkdir -p repo/src &&
	{
		echo "int old_api(int x) { return x; }"
		echo "int new_api(int x) { return x + 0; }"
		echo "int f1(void) { return old_api(1); }"
	} >repo/src/a.c &&
	make_repo repo &&
	mkdir quoted &&
	echo 500 >quoted/reply-1.status &&
	printf "X-Echo-Key: %s\n" "$KEY" >quoted/reply-1.headers &&
	printf "{\"error\":{\"message\":\"key %s is overloaded\"}}\n" "$KEY" >quoted/reply-1.json &&
	openai_reply quoted/reply-2.json <<-EOF &&
	Your key $KEY works. Here is the function:
	\`\`\`c
	int f1(void) { return new_api(1); } /* $KEY */
	\`\`\`
	EOF
	start_stub quoted && echo $stub_pid >stub.pid &&
	campaign quoted
'

test_expect_success 'the run proposes the reply with the key redacted, in the record too' '
	sluice run --store quoted.db --record quoted.rec quoted.yaml >quoted.out 2>quoted.err &&
	grep -q "proposed  *1" quoted.out &&
	grep -q "\[redacted\]" quoted.rec &&
	git -C repo show sluice/quoted/src-a.c-L3:src/a.c >a.c &&
	grep -q "new_api(1); } /\* \[redacted\] \*/" a.c &&
	no_key quoted
'

test_expect_success 'a key the JSON spells with escapes is redacted as well' '
	mkdir escaped &&
	cat >escaped/reply-1.json <<-\EOF &&
	{"choices":[{"index":0,"message":{"role":"assistant","content":"```c\nint f1(void) { return new_api(1); } /* sk\u002dquoted\u002d7c1e93b5d2a4f086 */\n```\n"},"finish_reason":"stop"}]}
	EOF
	! grep -q "$KEY" escaped/reply-1.json &&
	restart_stub escaped &&
	sluice run --store escaped.db --record escaped.rec escaped.yaml >escaped.out 2>escaped.err &&
	grep -q "proposed  *1" escaped.out &&
	git -C repo show sluice/escaped/src-a.c-L3:src/a.c >a.c &&
	grep -q "/\* \[redacted\] \*/" a.c &&
	no_key escaped
'

test_expect_success 'an error that quotes the key fails the target; its reason has the key redacted' '
	mkdir refused &&
	echo 401 >refused/reply-1.status &&
	printf "{\"error\":{\"message\":\"Incorrect API key provided: %s\"}}\n" "$KEY" >refused/reply-1.json &&
	restart_stub refused &&
	test_expect_code 1 sluice run --store refused.db --record refused.rec refused.yaml \
		>refused.out 2>refused.err &&
	grep -q "failed  *1" refused.out &&
	: >>refused.rec &&
	no_key refused &&
	grep -q "Incorrect API key provided: \[redacted\]" refused.dump
'

test_expect_success 'stop the stub' '
	kill $(cat stub.pid)
'

test_done
