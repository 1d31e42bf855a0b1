#!/bin/sh
# t1211-scope-statements.sh - a C function is parsed statement by
# statement (scoping/items.c, SL_ITEMS_STATEMENTS) when every match of the
# query lies inside one statement: only the statements that may hold a
# match are parsed, with their blocks' braces, and the targets are the
# same as a parse of every whole file (--no-prefilter).  An argument list
# with k children needs k - 1 separators (',' or a comment) in one '('
# group, and no more than k - 1 commas when the children are anchored at
# both ends; a function definition's parameters do not count.  The file
# is the fuzz harness's seed tests/fuzz/seed/items/stmts.c: else chains,
# do-while, switch and labels, compound literals, a statement expression,
# directives among statements, an else after #endif.

test_description='sluice scope: C functions parsed statement by statement'
. ./test-lib.sh

SEEDS="$TEST_DIRECTORY/../fuzz/seed/items"
THREE='(call_expression arguments: (argument_list . (_) . (_) . (_) .)) @call'

# scope with the prefilter on (stats kept in on.stats) and off; same targets
same() {
	sluice scope --repo "$1" --lang c --query "$2" --stats >on.all &&
	{ grep -v "^[a-z][a-z ]*:\|^  " on.all >on || test ! -s on; } &&
	grep "^[a-z][a-z ]*:" on.all >on.stats &&
	sluice scope --repo "$1" --lang c --query "$2" --no-prefilter >off &&
	test_cmp off on
}

test_expect_success 'setup' '
	mkdir c &&
	cp "$SEEDS"/stmts.c c/ &&
	make_repo c
'

test_expect_success 'calls with three arguments: the same 25, parsed in part, not again' '
	same c "$THREE" &&
	test "$(wc -l <on)" -eq 25 &&
	grep -x "stmts.c:77:2: capture (1 site)" on &&
	grep -x "stmts.c:55:20: capture (1 site)" on &&
	grep -x "stmts.c:26:9: capture (1 site)" on &&
	grep -x "parsed in part: 1" on.stats &&
	grep -x "parsed again: 0" on.stats
'

test_expect_success 'the stats count the bytes given to the parser: part of the file, or all of it' '
	bytes=$(wc -c <c/stmts.c) &&
	sed -n "s/^bytes parsed: \([0-9]*\) of \([0-9]*\) read (.*%)$/\1 \2/p" on.stats >parsed &&
	read p r <parsed &&
	test "$r" -eq "$bytes" && test "$p" -gt 0 && test "$p" -lt "$bytes" &&
	sluice scope --repo c --lang c --query "$THREE" --no-prefilter --stats >whole &&
	grep -x "bytes parsed: $bytes of $bytes read (100.0%)" whole &&
	sluice scope --repo c --lang c --query "$THREE" --stats --json | tail -1 >stats.json &&
	grep "\"bytes_read\":$bytes,\"bytes_parsed\":$p," stats.json
'

test_expect_success 'other queries inside a statement give the same targets' '
	for q in \
		"((call_expression function: (identifier) @f) @c (#eq? @f \"memset\"))" \
		"(call_expression arguments: (argument_list (_) (_) (_))) @c" \
		"(call_expression arguments: (argument_list . (_) . (_) .)) @c" \
		"((identifier) @i (#eq? @i \"out\"))" \
		"((comment) @c (#match? @c \"comment\"))" \
		"((number_literal) @n (#eq? @n \"9\"))"
	do
		same c "$q" || return 1
		grep -x "parsed in part: 1" on.stats || return 1
	done &&
	# nothing to filter on: every file whole
	for q in "(compound_literal_expression) @c" \
		"(initializer_list (number_literal) (number_literal) (number_literal)) @l"
	do
		same c "$q" || return 1
		grep -x "parsed in part: 0" on.stats || return 1
	done
'

test_expect_success 'queries that may span statements parse items whole' '
	for q in "(if_statement) @s" "(compound_statement) @b" "(case_statement) @c" \
		"(labeled_statement) @l" "\"else\" @e" "(preproc_ifdef) @p" "(_) @any"
	do
		same c "$q" || return 1
		grep -x "parsed again: 0" on.stats || return 1
	done &&
	same c "(if_statement) @s" &&
	test "$(wc -l <on)" -eq 5
'

test_expect_success 'anchored at both ends: four arguments are not three' '
	mkdir four &&
	printf "int f(int a, int b, int c, int d)\n{\n\treturn g(a, b, c, d) + h(a, b);\n}\n" \
		>four/four.c &&
	make_repo four &&
	same four "$THREE" &&
	test ! -s on &&
	grep -x "skipped by prefilter: 1 (no literal in the query)" on.stats &&
	same four "(call_expression arguments: (argument_list (_) (_) (_))) @c" &&
	grep -x "four.c:3:9: capture (1 site)" on &&
	grep -x "parsed in part: 1" on.stats
'

test_expect_success 'a syntax error outside a statement parses the function again, whole' '
	mkdir err &&
	printf "int f(int a)\n{\n\ta = g(a, 1, 2);\n#if (A\n\ta = g(a, 3, 4);\n#endif\n\treturn a;\n}\n" \
		>err/err.c &&
	make_repo err &&
	same err "$THREE" &&
	grep -x "err.c:3:6: capture (1 site)" on &&
	grep -x "err.c:5:6: capture (1 site)" on &&
	grep -x "parse errors: 1" on.stats &&
	grep -x "parsed again: 1" on.stats &&
	sluice scope --repo err --lang c --query "$THREE" --json --stats >j &&
	grep "\"parsed_again\":1" j
'

test_expect_success 'a function head that cannot be parsed is left out with the rest of it' '
	mkdir head &&
	cat >head/head.c <<-\EOF &&
	static PATH_FUNC(path_a, "A")
	static PATH_FUNC(path_b, "B")

	static void read_paths(struct list *list)
	{
		FILE *fp = open_or_die(path_a(), "r");

		while (read_line(&line, fp) != EOF) {
			trim(&line);
			if (unquote(line.buf, list))
				die(_("bad %s: %s"), path_b(), line.buf);
		}
	}
	EOF
	make_repo head &&
	same head "$THREE" &&
	grep -x "head.c:11:1: capture (1 site)" on &&
	grep -x "parsed again: 0" on.stats
'

test_expect_success 'a unit around the site parses functions whole' '
	same c "$THREE" &&
	sluice scope --repo c --lang c --query "$THREE" --unit function >fn &&
	sluice scope --repo c --lang c --query "$THREE" --unit function --no-prefilter >fn.whole &&
	test_cmp fn.whole fn &&
	grep -x "stmts.c:11:1: function (8 sites)" fn
'

test_expect_success 'targets are printed in order as files are scoped: duplicates, the cache' '
	mkdir dups dups/a dups/b &&
	cp c/stmts.c dups/a/one.c && cp c/stmts.c dups/b/one.c && cp c/stmts.c dups/two.c &&
	printf "int f(void) { return g(1, 2, 3); }\n" >dups/a/three.c &&
	make_repo dups &&
	sluice scope --repo dups --lang c --query "$THREE" --no-prefilter --json >dj.whole &&
	test "$(wc -l <dj.whole)" -eq 76 &&
	for i in 1 2; do
		sluice scope --repo dups --lang c --query "$THREE" --json --cache store.db \
			--stats >dj.$i || return 1
		grep -v "\"stats\"" dj.$i >dj.t &&
		test_cmp dj.whole dj.t || return 1
	done &&
	grep "\"cache_hits\":0" dj.1 &&
	grep "\"cache_hits\":4" dj.2 &&
	sed -n 1p dj.whole | grep "\"path\":\"a/one.c\"" &&
	sed -n 26p dj.whole | grep "\"path\":\"a/three.c\"" &&
	sed -n 76p dj.whole | grep "\"path\":\"two.c\""
'

test_expect_success 'JSON: text of no valid UTF-8 is written with U+FFFD' '
	mkdir utf &&
	printf "int f(void) { return g(\"\\xff\377\", 1, 2); }\n" >utf/u.c &&
	make_repo utf &&
	sluice scope --repo utf --lang c --query "$THREE" --json >uj &&
	grep -F "\"call\":\"g(\\\"\\\\xff\\ufffd\\\", 1, 2)\"" uj
'

test_done
