#!/bin/sh
# t2300-prompt-context.sh - the default prompt is compact: the unit, the
# function around it, the includes and the definitions it names, cut to
# context_tokens; `context: file` adds the whole file.  Sizes are what the
# command provider received (system message and prompt), as bytes / 4, on
# a file of 611 lines, 14 KB, with eight one-line strcpy sites (printer_c
# below): at most 3,000 tokens a site, and at least 5x fewer than with the
# whole file (bench/prompt-tokens.sh measures the same on any repository).
test_description='compact prompt context by default; the whole file when asked'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# printer_c: tests/fixtures/context/printer-head.c and the fixture's file, its repeated functions written by loops
printer_c() {
	cat "$FIXTURES/context/printer-head.c" &&
	names="null true false number string array object key value item list pair entry field"
	names="$names member element token chunk piece part slot cell unit atom leaf"
	for n in $names; do
		printf '\n/* Make room for %s output: grow the buffer to hold need more bytes. */\n' $n
		printf 'static char *ensure_%s(out_buffer *o, size_t need)\n{\n' $n
		printf '\tsize_t want = o->used + need + 1;\n\tchar *grown;\n\n'
		printf '\tif (want <= o->len)\n\t\treturn o->buf + o->used;\n'
		printf '\tif (want > INT_MAX / 2)\n\t\treturn NULL;\n'
		printf '\tgrown = realloc(o->buf, want * 2 + PRINT_CHUNK);\n\tif (!grown)\n\t\treturn NULL;\n'
		printf '\to->buf = grown;\n\to->len = want * 2 + PRINT_CHUNK;\n\treturn o->buf + o->used;\n}\n'
	done
	for n in null true false number string array object key; do
		printf '\n/* Print the %s of a node. */\n' $n
		printf 'int print_%s(out_buffer *o, const struct node *item)\n{\n' $n
		printf '\tchar *p;\n\tsize_t n = item && item->text ? strlen(item->text) : 4;\n\n'
		printf '\tif (!o || !item)\n\t\treturn -1;\n'
		printf '\tp = ensure_%s(o, MIN_SIZE(n, (size_t)PRINT_CHUNK) + 2);\n' $n
		printf '\tif (!p)\n\t\treturn -1;\n'
		printf '\tstrcpy(p, item->text ? item->text : "null");\n'
		printf '\to->used += strlen(p);\n\treturn 0;\n}\n'
	done
}

# campaign FILE MODE: one-line strcpy sites, a provider that answers nothing usable
campaign() {
	cat >"$1" <<-EOF
	name: ctx-$2
	repository: repo
	scratch: $TRASH/scratch-$2
	context: $2
	targets:
	  language: c
	  paths: ["src/*.c"]
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"strcpy\"))"
	  capture: call
	provider:
	  kind: command
	  command: cat >/dev/null; echo no
	attempts: 1
	EOF
}

# sizes DB: "LINE TOKENS" of each target's first request
sizes() {
	store_query "$1" "SELECT t.start_line || ' ' || ((length(CAST(r.request AS BLOB)) + 3) / 4)
		FROM replies r JOIN targets t ON t.id = r.target_id WHERE r.round = 0
		ORDER BY t.start_line"
}

test_expect_success 'setup: the fixture file in a repository' '
	mkdir -p repo/src &&
	printer_c >repo/src/printer.c &&
	test $(wc -l <repo/src/printer.c) = 611 &&
	cp "$FIXTURES/context/printer.h" repo/src/ &&
	make_repo repo &&
	campaign compact.yaml compact &&
	campaign file.yaml file
'

test_expect_success 'each one-line site costs at most 3,000 prompt tokens' '
	test_expect_code 1 sluice run --store compact.db compact.yaml >out 2>err &&
	sizes compact.db >compact &&
	test $(wc -l <compact) = 8 &&
	while read line tokens; do
		echo "line $line: $tokens tokens" &&
		test "$tokens" -le 3000 || return 1
	done <compact
'

test_expect_success 'the prompt shows the unit, its function and what it names, not the file' '
	store_query compact.db "SELECT r.request FROM replies r JOIN targets t ON t.id = r.target_id
		WHERE r.round = 0 AND t.start_line = 496" >req &&
	grep -q "^strcpy(p, item->text ? item->text : \"null\")$" req &&
	grep -q "^### enclosing function src/printer.c:486-499$" req &&
	grep -q "^#include \"printer.h\"$" req &&
	grep -q "^### definition of node (src/printer.c:26)$" req &&
	! grep -q "ensure_leaf" req &&
	! grep -q "^### definition of item " req &&
	! grep -q "^### definition of p " req
'

test_expect_success 'context: file shows the whole file, at least 5x the tokens' '
	test_expect_code 1 sluice run --store file.db file.yaml >out 2>err &&
	sizes file.db >file &&
	store_query file.db "SELECT r.request FROM replies r WHERE r.round = 0 LIMIT 1" >req &&
	grep -q "ensure_leaf" req &&
	join compact file >both &&
	test $(wc -l <both) = 8 &&
	while read line c f; do
		echo "line $line: compact $c, file $f" &&
		test $((c * 5)) -le "$f" || return 1
	done <both
'

test_expect_success 'context_tokens cuts the context' '
	sed "s/^context: compact/context_tokens: 50/" compact.yaml >small.yaml &&
	test_expect_code 1 sluice run --store small.db small.yaml >out 2>err &&
	sizes small.db >small &&
	join compact small >both &&
	while read line c s; do
		test "$s" -lt "$c" || return 1
	done <both
'

test_expect_success 'an unknown context is refused with the field named' '
	sed "s/^context: compact/context: everything/" compact.yaml >bad.yaml &&
	test_expect_code 2 sluice run --store bad.db bad.yaml 2>err &&
	grep -q "bad.yaml:4:.*context" err &&
	! test -f bad.db
'

test_done
