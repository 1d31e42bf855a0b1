#!/bin/sh
test_description='show --attempts cuts the middle of each long chat message and reply and says how many lines were cut; --full prints them whole; the roles are written as the command provider receives them'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# A 60-line file (the prompt carries it whole: context: file) and a model whose reply is
# 50 lines of talk before its edit; the model keeps the chat it was sent.
test_expect_success 'setup: a long prompt and a long reply' '
	mkdir -p repo/src &&
	{
		echo "int old_api(int x);" &&
		for i in $(seq 1 57); do echo "int v$i = $i;"; done &&
		printf "int f(void)\n{\n\treturn old_api(1);\n}\n"
	} >repo/src/a.c &&
	make_repo repo &&
	cat >model.sh <<-EOF &&
	cat >"$TRASH/stdin.txt"
	for i in \$(seq 1 50); do echo "thinking, line \$i"; done
	printf "src/a.c\n\\\`\\\`\\\`\n<<<<<<< SEARCH\n\treturn old_api(1);\n=======\n\treturn new_api(1);\n>>>>>>> REPLACE\n\\\`\\\`\\\`\n"
	EOF
	cat >c.yaml <<-EOF &&
	name: long
	repository: repo
	scratch: $TRASH/scratch
	attempts: 1
	edit_format: search-replace
	context: file
	provider: {kind: command, command: "sh $TRASH/model.sh"}
	targets: {language: c, paths: ["src/*.c"], capture: call,
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"}
	gates:
	  - {name: ok, command: "! grep -q bad_api src/a.c"}
	EOF
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *1" out &&
	test $(wc -l <stdin.txt) -gt 60
'

# body_lines ROLE FILE: the lines of the ROLE message of the request in FILE
# (show --full's output), up to the next message or the reply.
body_lines() {
	awk -v head="### $1" '
		/^--- reply$/ { on = 0 }
		/^### (system|user|assistant)$/ { on = ($0 == head); next }
		on { n++ }
		END { print n + 0 }' "$2"
}

test_expect_success 'show --attempts: the user message and the reply cut, with the count of lines cut' '
	sluice show --store s.db 1 --attempts >short &&
	sluice show --store s.db 1 --full >full &&
	user=$(body_lines user full) &&
	test "$user" -gt 60 &&
	grep -q "^\[\.\.\. $((user - 8)) lines cut; --full shows them\]$" short &&
	sed -n "/^--- reply$/,\$p" short >short-reply &&
	grep -q "^\[\.\.\. 18 lines cut; --full shows them\]$" short-reply &&
	grep -q "^thinking, line 20$" short-reply &&
	! grep -q "^thinking, line 21$" short-reply &&
	! grep -q "^thinking, line 38$" short-reply &&
	grep -q "^thinking, line 39$" short-reply &&
	grep -q ">>>>>>> REPLACE" short-reply &&
	grep -q "^thinking, line 50$" full &&
	grep -q ">>>>>>> REPLACE" full &&
	test $(wc -c <short) -lt $(wc -c <full) &&
	! grep -q "lines\? cut; --full" full
'

test_expect_success 'show --full prints the recorded prompt whole' '
	store_query s.db "select prompt from attempts" >prompt &&
	sed -n "/^--- request$/,/^--- reply$/p" full | sed "1d;\$d" >full-request &&
	grep -q "^int v57 = 57;$" full-request &&
	test "$(grep -c . prompt)" = "$(grep -c . full-request)"
'

test_expect_success 'one way to write the roles: what the command got is what show prints' '
	grep -E "^### (system|user|assistant)$" stdin.txt >heads-sent &&
	printf "### system\n### user\n" >expect &&
	test_cmp expect heads-sent &&
	sed -n "/^--- request$/,/^--- reply$/p" short | grep -E "^### (system|user|assistant)$" >heads-shown &&
	test_cmp heads-sent heads-shown
'

test_expect_success 'PATH:LINE --attempts cuts the same way; --json stays whole' '
	sluice show --store s.db src/a.c:61 --attempts >short2 &&
	test_cmp short short2 &&
	sluice show --store s.db 1 --attempts --json >json &&
	grep -q "thinking, line 50" json &&
	! grep -q "lines cut; --full" json
'

test_done
