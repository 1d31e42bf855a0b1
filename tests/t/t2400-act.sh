#!/bin/sh
test_description='generate: act: the model works in a jailed session of shell commands before it submits'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-act.sh"

# A small C project: src/calc.c calls old_api, which is to become new_api,
# declared in src/api.h, which calc.c does not include yet.  The build
# fails on an undeclared function; `make test` checks the program's output.
# The scripted model (tests/fixtures/act/model.sh) answers step K with what
# the script DIR/K prints.
test_expect_success 'setup' '
	act_repo repo &&
	mkdir repo/docs &&
	echo "test -x prog" >repo/check.sh &&
	echo notes >repo/docs/notes.txt &&
	make_repo repo &&
	act_session_yaml act "make test 2>&1 && sh check.sh" >base.yaml
'

steps_of() {
	store_query "$1" "select s.step || \" \" || s.kind || \" \" || s.exit_status from steps s order by s.n, s.step"
}

test_expect_success 'a model explores, edits, builds, reads the failure, fixes and submits: proposed' '
	reply m1 1 "grep -rn old_api src" &&
	reply m1 2 "sed -i \"s/old_api(3)/new_api(3)/\" src/calc.c" &&
	reply m1 3 "make 2>&1" &&
	cat >m1/4 <<-\EOF &&
	# the fix only once the build said what was wrong
	if tail -n 20 "$1" | grep -q "implicit declaration of function .new_api"; then
	cat <<\END
	The header is missing.
	```sh
	sed -i "1i #include \"api.h\"" src/calc.c
	```
	END
	else
	printf "%s\n" "\`\`\`sh" "submit" "\`\`\`"
	fi
	EOF
	reply m1 5 "make 2>&1 && make test && cat src/calc.c" &&
	reply m1 6 submit &&
	campaign c1.yaml m1 &&
	sluice run --store s1.db c1.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	steps_of s1.db >actual &&
	printf "%s\n" "1 command 0" "2 command 0" "3 command 2" "4 command 0" "5 command 0" "6 submit -1" >expect &&
	test_cmp expect actual &&
	test "$(cat m1.log | tr "\n" " ")" = "1 2 3 4 5 6 " &&
	store_query s1.db "select diff from candidates" >diff &&
	grep -q "^+#include \"api.h\"" diff &&
	grep -q "^+.*new_api(3) \* 2" diff &&
	! grep -q "\.o" diff
'

test_expect_success 'show --steps prints the trajectory, text and JSON' '
	sluice show --store s1.db --steps 1 >show && cat show &&
	grep -q "step 3: make 2>&1" show &&
	grep -q "exit status 2" show &&
	grep -q "implicit declaration" show &&
	grep -q "step 6: submit" show &&
	sluice show --store s1.db --steps --json 1 >show.json &&
	jq -e ".steps | length == 6" show.json &&
	jq -e ".steps[2].exit_status == 2 and .steps[2].command == \"make 2>&1\"" show.json
'

# attempt_of STORE: the attempt's outcome and error
attempt_of() {
	store_query "$1" "select outcome || \" \" || coalesce(error, \"\") from attempts order by id"
}

test_expect_success 'a model that loops for ever: the step budget ends it, the change is dropped' '
	reply m2 default "ls" &&
	campaign c2.yaml m2 "session: {steps: 4}" &&
	{ sluice run --store s2.db c2.yaml >out 2>err; test $? = 1; } &&
	grep -q "failed  *1" out &&
	test "$(cat m2.log | tr "\n" " ")" = "1 2 3 4 " &&
	attempt_of s2.db >actual &&
	echo "no_edit the session'"'"'s 4 steps ran out" >expect &&
	test_cmp expect actual &&
	steps_of s2.db >actual &&
	printf "%s\n" "1 command 0" "2 command 0" "3 command 0" "4 command 0" "5 budget -1" >expect &&
	test_cmp expect actual
'

test_expect_success 'the session'"'"'s wall time: no step starts after it' '
	reply m8 1 "sleep 2" &&
	reply m8 default "ls" &&
	campaign c8.yaml m8 "session: {timeout: 1, step_timeout: 30}" &&
	{ sluice run --store s8.db c8.yaml >out 2>err; test $? = 1; } &&
	test "$(cat m8.log)" = 1 &&
	attempt_of s8.db >actual &&
	echo "no_edit the session'"'"'s 1 s ran out" >expect &&
	test_cmp expect actual
'

test_expect_success 'on_budget: gate judges the change a session out of steps left' '
	reply m3 1 "sed -i \"s/old_api(3)/new_api(3)/\" src/calc.c && sed -i \"1i #include \\\"api.h\\\"\" src/calc.c" &&
	reply m3 default "ls" &&
	campaign c3.yaml m3 "session: {steps: 2, on_budget: gate}" &&
	sluice run --store s3.db c3.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	test "$(cat m3.log | tr "\n" " ")" = "1 2 "
'

test_expect_success 'a model that submits nothing: no candidate, said so' '
	reply m4 1 submit &&
	campaign c4.yaml m4 &&
	{ sluice run --store s4.db c4.yaml >out 2>err; test $? = 1; } &&
	grep -q "failed  *1" out &&
	attempt_of s4.db >actual &&
	echo "no_edit the session submitted no change" >expect &&
	test_cmp expect actual
'

test_expect_success 'a model that tries to escape: each try contained, refused or cut' '
	reply m5 1 "cat /proc/[0-9]*/environ | tr \"\\\\0\" \"\\\\n\"; ls /proc | grep -c \"^[0-9]\"; env" &&
	reply m5 2 "echo x >$TRASH/escaped; echo x >/usr/escaped; echo x >../escaped; ls /.lower /.ovl" &&
	reply m5 3 "echo \"exit 0\" >check.sh && echo hi >docs/notes.txt && sed -i \"s/old_api(3)/new_api(3)/\" src/calc.c && sed -i \"1i #include \\\"api.h\\\"\" src/calc.c" &&
	reply m5 4 submit &&
	reply m5 5 "sleep 60; echo woke" &&
	reply m5 6 "yes flood | head -c 3000000" &&
	reply m5 7 "printf \"\\\\033]0;evil\\\\007\\\\033[2J\\\\n\"" &&
	reply m5 8 "echo notes >docs/notes.txt && rm check.sh" &&
	reply m5 9 submit &&
	reply m5 10 "echo \"test -x prog\" >check.sh" &&
	reply m5 11 submit &&
	campaign c5.yaml m5 "session: {steps: 12, step_timeout: 2, output_bytes: 1000}" &&
	SLUICE_TEST_SECRET=topsecret-value sluice run --store s5.db c5.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	! test -e "$TRASH/escaped" && ! test -e "$TRASH/../escaped" &&
	sluice show --store s5.db --steps --json 1 >steps.json &&
	jq -r ".steps[0].output" steps.json >o1 &&
	! grep -q topsecret o1 && ! grep -q "$TRASH" o1 &&
	jq -r ".steps[1].output" steps.json >o2 &&
	grep -q "Read-only file system\|Permission denied" o2 &&
	jq -r ".steps[3].output" steps.json >o4 &&
	grep -q "^Your submit was refused" o4 &&
	grep -q "check.sh. is run by gate .test." o4 &&
	grep -q "docs/notes.txt. is outside the paths" o4 &&
	jq -r ".steps[4].output" steps.json >o5 &&
	grep -q "time ran out: 2 s" o5 && ! grep -q woke o5 &&
	jq -r ".steps[5].output" steps.json >o6 &&
	grep -q "bytes cut: the output was 3000000 bytes" o6 &&
	test $(wc -c <o6) -lt 1400 &&
	jq -e ".steps[5].output_bytes == 3000000" steps.json &&
	jq -r ".steps[8].output" steps.json >o9 &&
	grep -q "check.sh. is run by gate" o9 &&
	sluice show --store s5.db --steps 1 >show &&
	grep -q "\^\[\]0;evil" show &&
	! grep -q "$(printf "\033")" show &&
	store_query s5.db "select diff from candidates" >diff &&
	! grep -q "check.sh\|notes" diff &&
	sqlite3 s5.db .dump >dump &&
	! grep -q topsecret dump
'

test_expect_success 'report.html shows the trajectory, hostile output escaped' '
	reply m10 1 "echo \"<script>alert(1)</script>\"; printf \"\\\\033[2J\\\\n\"; exit 3" &&
	reply m10 2 "sed -i \"s/old_api(3)/new_api(3)/\" src/calc.c && sed -i \"1i #include \\\"api.h\\\"\" src/calc.c" &&
	reply m10 3 submit &&
	campaign c10.yaml m10 &&
	sluice run --store s10.db c10.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	sluice export --store s10.db --out exp10 &&
	grep -q "session: 3 steps" exp10/report.html &&
	grep -q "<td>1</td><td>command</td><td><code>echo &quot;&lt;script&gt;" exp10/report.html &&
	grep -q "</code></td><td>3</td>" exp10/report.html &&
	grep -q "^&lt;script&gt;alert(1)&lt;/script&gt;$" exp10/report.html &&
	grep -q "^\\^\\[\\[2J$" exp10/report.html &&
	grep -q "<td>3</td><td>submit</td>" exp10/report.html &&
	! grep -q "<script>" exp10/report.html &&
	! grep -q "$(printf "\033")" exp10/report.html
'

test_expect_success 'a failing gate after submit is the next step'"'"'s observation, in the same session' '
	reply m6 1 "sed -i \"s/old_api(3) \\\\* 2/new_api(3) * 3/\" src/calc.c && sed -i \"1i #include \\\"api.h\\\"\" src/calc.c" &&
	reply m6 2 submit &&
	cat >m6/3 <<-\EOF &&
	if tail -n 30 "$1" | grep -q "gate .test.: fail"; then
	cat <<\END
	```sh
	sed -i "s/\* 3/* 2/" src/calc.c
	```
	END
	else
	echo nothing
	fi
	EOF
	reply m6 4 submit &&
	campaign c6.yaml m6 "attempts: 2" &&
	sed -i "/^attempts: 1$/d" c6.yaml &&
	sluice run --store s6.db c6.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	test "$(cat m6.log | tr "\n" " ")" = "1 2 3 4 " &&
	store_query s6.db "select n || \" \" || step || \" \" || kind from steps order by n, step" >actual &&
	printf "%s\n" "1 1 command" "1 2 submit" "2 1 command" "2 2 submit" >expect &&
	test_cmp expect actual
'

# the sluice process above this model script (it is run by sluice's command provider)
cat >"$TRASH/kill-sluice.sh" <<\EOF
p=$$
for i in 1 2 3 4 5 6; do
	p=$(awk '{print $4}' /proc/$p/stat)
	test "$(cat /proc/$p/comm)" = sluice && { kill -9 $p; exit 0; }
done
exit 1
EOF

test_expect_success 'kill -9 mid-session: the resumed run replays recorded replies, pays nothing twice' '
	reply m7 1 "od -An -tx8 -N8 /dev/urandom; sed -i \"s/old_api(3)/new_api(3)/\" src/calc.c" &&
	reply m7 2 "sed -i \"1i #include \\\"api.h\\\"\" src/calc.c" &&
	cat >m7/3 <<-EOF &&
	if ! test -e $TRASH/killed; then touch $TRASH/killed; sh $TRASH/kill-sluice.sh; exit 0; fi
	printf "%s\\n" "\\\`\\\`\\\`sh" "make 2>&1 && make test" "\\\`\\\`\\\`"
	EOF
	reply m7 4 submit &&
	campaign c7.yaml m7 &&
	{ sluice run --store s7.db c7.yaml >out1 2>err1; test $? = 137; } &&
	test -e killed &&
	sluice status --store s7.db --json >st.json &&
	jq -e ".budget.tokens_used > 0" st.json &&
	sluice run --store s7.db c7.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	test "$(cat m7.log | tr "\n" " ")" = "1 2 3 3 4 " &&
	steps_of s7.db >actual &&
	printf "%s\n" "1 command 0" "2 command 0" "3 command 0" "4 submit -1" >expect &&
	test_cmp expect actual &&
	store_query s7.db "select step || \" \" || differs from steps order by step" >actual &&
	printf "%s\n" "1 1" "2 0" "3 0" "4 0" >expect &&
	test_cmp expect actual
'

# http_campaign FILE DIR [yaml...]: base.yaml with the stub OpenAI endpoint serving DIR
http_campaign() {
	f=$1 d=$2
	shift 2
	cp base.yaml "$f" &&
	printf "%s\n" "provider:" "  kind: openai" "  base_url: http://127.0.0.1:$stub_port/v1" \
		"  model: stub-model-1" >>"$f" &&
	for extra in "$@"; do printf "%s\n" "$extra" >>"$f"; done
}

test_expect_success 'the OpenAI wire form: plain chat, each observation the next user message' '
	mkdir h1 &&
	printf "%s\n" "\`\`\`sh" "sed -i \"s/old_api(3)/new_api(3)/\" src/calc.c && make 2>&1" "\`\`\`" |
		openai_reply h1/reply-1.json &&
	printf "%s\n" "\`\`\`sh" "sed -i '"'"'1i #include \"api.h\"'"'"' src/calc.c" "\`\`\`" |
		openai_reply h1/reply-2.json &&
	printf "%s\n" "\`\`\`sh" "submit" "\`\`\`" | openai_reply h1/reply-3.json &&
	start_stub h1 && echo $stub_pid >stub.pid &&
	http_campaign h1.yaml h1 &&
	sluice run --store h1.db h1.yaml >out 2>err &&
	kill $(cat stub.pid) &&
	grep -q "proposed  *1" out &&
	test -f h1/request-3.json && ! test -f h1/request-4.json &&
	jq -r ".messages[-1].content" h1/request-2.json >obs &&
	grep -q "^exit status 2" obs &&
	grep -q "implicit declaration of function" obs &&
	jq -e ".messages | length == 6 and .[0].role == \"system\" and .[4].role == \"assistant\" and .[5].role == \"user\"" h1/request-3.json
'

test_expect_success 'the session'"'"'s token budget: 150 tokens a reply, 300 at most' '
	mkdir h2 &&
	printf "%s\n" "\`\`\`sh" "ls" "\`\`\`" | openai_reply h2/reply-1.json &&
	start_stub h2 && echo $stub_pid >stub.pid &&
	http_campaign h2.yaml h2 "session: {max_tokens: 300}" &&
	{ sluice run --store h2.db h2.yaml >out 2>err; test $? = 1; } &&
	kill $(cat stub.pid) &&
	test -f h2/request-2.json && ! test -f h2/request-3.json &&
	attempt_of h2.db >actual &&
	echo "no_edit the session'"'"'s 300 tokens ran out" >expect &&
	test_cmp expect actual &&
	store_query h2.db "select tokens_in || \" \" || tokens_out from attempts" >actual &&
	echo "240 60" >expect &&
	test_cmp expect actual
'

test_expect_success 'the replay provider replays a recorded session step for step, asking no model' '
	campaign r1.yaml m1 &&
	sed -i "s/^name: act$/name: rec/" r1.yaml &&
	sluice run --store r1.db --record "$TRASH/session.jsonl" r1.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	test $(wc -l <session.jsonl) = 6 &&
	cp m1.log m1.before &&
	cp base.yaml r2.yaml &&
	sed -i "s/^name: act$/name: replayed/" r2.yaml &&
	printf "%s\n" "provider: {kind: replay, replay: $TRASH/session.jsonl}" >>r2.yaml &&
	sluice run --store r2.db r2.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	test_cmp m1.before m1.log &&
	test "$(store_query r1.db "select diff from candidates")" = "$(store_query r2.db "select diff from candidates")" &&
	store_query r1.db "select step || kind || reply || output from steps order by step" >steps1 &&
	store_query r2.db "select step || kind || reply || output from steps order by step" >steps2 &&
	test_cmp steps1 steps2
'

test_expect_success 'replay: a command whose output differs is flagged, the session goes on by position' '
	reply m11 1 "od -An -tx8 -N8 /dev/urandom; sed -i \"s/old_api(3)/new_api(3)/\" src/calc.c" &&
	reply m11 2 "sed -i \"1i #include \\\"api.h\\\"\" src/calc.c && make 2>&1" &&
	reply m11 3 submit &&
	campaign r3.yaml m11 &&
	sluice run --store r3.db --record "$TRASH/random.jsonl" r3.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	jq -e "select(.at != null) | .seen | length == 64" random.jsonl >/dev/null &&
	cp base.yaml r4.yaml &&
	printf "%s\n" "provider: {kind: replay, replay: $TRASH/random.jsonl}" >>r4.yaml &&
	sluice run --store r4.db r4.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	test "$(cat m11.log | tr "\n" " ")" = "1 2 3 " &&
	store_query r4.db "select step || \" \" || differs from steps order by step" >actual &&
	printf "%s\n" "1 1" "2 0" "3 0" >expect &&
	test_cmp expect actual &&
	sluice show --store r4.db --steps 1 >show &&
	grep -q "DIFFERS from the recorded output on replay" show &&
	sluice export --store r4.db --out exp4 &&
	grep -q "differs on replay" exp4/report.html
'

# tool_session DIR: the three steps of the fix as calls of the tool the
# request offers (the stub's reply-K.tool, in the request's own wire form)
tool_session() {
	mkdir "$1" &&
	echo 'sed -i "s/old_api(3)/new_api(3)/" src/calc.c && make 2>&1' >"$1/reply-1.tool" &&
	echo "sed -i '1i #include \"api.h\"' src/calc.c" >"$1/reply-2.tool" &&
	echo submit >"$1/reply-3.tool"
}

test_expect_success 'native tools, OpenAI: the bash function, tool_calls and tool messages' '
	tool_session t1 &&
	start_stub t1 && echo $stub_pid >stub.pid &&
	http_campaign t1.yaml t1 "session: {wire: tools}" &&
	sluice run --store t1.db t1.yaml >out 2>err &&
	kill $(cat stub.pid) &&
	grep -q "proposed  *1" out &&
	test -f t1/request-3.json && ! test -f t1/request-4.json &&
	jq -e ".tools[0].type == \"function\" and .tools[0].function.name == \"bash\" and
		.tools[0].function.parameters.required == [\"command\"]" t1/request-1.json &&
	jq -e ".messages[2].role == \"assistant\" and .messages[2].content == null and
		(.messages[2].tool_calls[0].function.arguments | fromjson | .command | startswith(\"sed -i\")) and
		.messages[3].role == \"tool\" and
		.messages[3].tool_call_id == .messages[2].tool_calls[0].id and
		(.messages[3].content | startswith(\"exit status 2\"))" t1/request-2.json &&
	jq -e ".messages | length == 6 and .[5].role == \"tool\"" t1/request-3.json &&
	store_query t1.db "select command from steps order by step" >actual &&
	tail -n 1 actual | grep -qx submit
'

test_expect_success 'native tools, Anthropic: tool_use and tool_result blocks' '
	tool_session t2 &&
	start_stub t2 && echo $stub_pid >stub.pid &&
	cp base.yaml t2.yaml &&
	printf "%s\n" "provider:" "  kind: anthropic" "  base_url: http://127.0.0.1:$stub_port/v1" \
		"  model: stub-model-1" "session: {wire: tools}" >>t2.yaml &&
	sluice run --store t2.db t2.yaml >out 2>err &&
	kill $(cat stub.pid) &&
	grep -q "proposed  *1" out &&
	test -f t2/request-3.json && ! test -f t2/request-4.json &&
	jq -e ".tools[0].name == \"bash\" and .tools[0].input_schema.type == \"object\"" t2/request-1.json &&
	jq -e ".messages[1].role == \"assistant\" and .messages[1].content[0].type == \"tool_use\" and
		(.messages[1].content[0].input.command | startswith(\"sed -i\")) and
		.messages[2].role == \"user\" and .messages[2].content[0].type == \"tool_result\" and
		.messages[2].content[0].tool_use_id == .messages[1].content[0].id" t2/request-2.json &&
	store_query t2.db "select command from steps where step = 2" >actual &&
	echo "sed -i '"'"'1i #include \"api.h\"'"'"' src/calc.c" >expect &&
	test_cmp expect actual
'

test_expect_success 'wire: tools needs an HTTP provider' '
	campaign bad.yaml m1 "session: {wire: tools}" &&
	test_expect_code 2 sluice scope bad.yaml 2>err &&
	grep -q "wire: tools. needs an openai or anthropic provider" err
'

test_expect_success 'two sessions at once: each works in its own layer, each candidate holds only its change' '
	mkdir -p two/src &&
	printf "%s\n" "all:" "	cat src/a.c src/b.c >/dev/null" >two/Makefile &&
	echo "int a(void) { return old_api(1); }" >two/src/a.c &&
	echo "int b(void) { return old_api(2); }" >two/src/b.c &&
	make_repo two &&
	mkdir m9 &&
	cat >m9/1 <<-\EOF &&
	f=$(grep -o "file src/[ab].c" "$1" | head -n 1 | cut -d" " -f2)
	printf "%s\n" "\`\`\`sh" "sed -i s/old_api/new_api/ $f && grep -c new_api src/a.c src/b.c; true" "\`\`\`"
	EOF
	reply m9 2 submit &&
	sed -e "s|^repository: repo$|repository: two|" -e "s|^scratch: .*|scratch: $TRASH/scratch2|" \
		-e "s|^  - {name: test.*||" base.yaml >c9.yaml &&
	echo "provider: {kind: command, command: \"ACT_DIR=$TRASH/m9 ACT_LOG=$TRASH/m9.log sh $FIXTURES/act/model.sh\"}" >>c9.yaml &&
	printf "%s\n" "concurrency: 2" "jobs: 2" >>c9.yaml &&
	sluice run --store s9.db c9.yaml >out 2>err &&
	grep -q "proposed  *2" out &&
	test "$(sort m9.log | tr "\n" " ")" = "1 1 2 2 " &&
	store_query s9.db "select t.path || \" \" || ((length(c.diff) - length(replace(c.diff, \"diff --git\", \"\"))) / 10) || \" \" || (instr(c.diff, \"b/\" || t.path) > 0) from candidates c join targets t on t.id = c.target_id order by t.path" >diffs &&
	printf "%s\n" "src/a.c 1 1" "src/b.c 1 1" >expect &&
	test_cmp expect diffs &&
	store_query s9.db "select s.output from steps s join targets t on t.id = s.target_id where s.step = 1 order by t.path" >obs &&
	grep "^src" obs >actual &&
	printf "%s\n" "src/a.c:1" "src/b.c:0" "src/a.c:0" "src/b.c:1" >expect &&
	test_cmp expect actual
'

test_done
