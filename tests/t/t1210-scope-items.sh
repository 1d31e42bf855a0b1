#!/bin/sh
# t1210-scope-items.sh - a C file is parsed item by item (scoping/items.c)
# when every match of the query lies inside one top-level item: only the
# items that hold the query's keywords or literals are parsed, and the
# targets are the same as a parse of every whole file (--no-prefilter).
# The files are the fuzz harness's seeds (tests/fuzz/seed/items/): an
# include guard, functions inside #ifdef/#else, braces in strings,
# characters and comments, a compound literal, directives inside items
# and bodies, a syntax error, and files the split gives up on (a K&R
# function, two heads for one body, digraphs).

test_description='sluice scope: C files parsed item by item'
. ./test-lib.sh

SEEDS="$TEST_DIRECTORY/../fuzz/seed/items"

# scope with the prefilter on (stats kept in on.stats) and off; same targets
same() {
	sluice scope --repo c --lang c --query "$1" --stats >on.all &&
	grep -v "^[a-z][a-z ]*:\|^  " on.all >on &&
	grep "^[a-z][a-z ]*:" on.all >on.stats &&
	sluice scope --repo c --lang c --query "$1" --no-prefilter >off &&
	test_cmp off on
}

test_expect_success 'setup' '
	mkdir c &&
	cp "$SEEDS"/guard.h "$SEEDS"/split.c "$SEEDS"/knr.c "$SEEDS"/heads.c "$SEEDS"/di.c \
		"$SEEDS"/todo.h c/ &&
	make_repo c
'

test_expect_success 'for loops: the include guard and split.c in part, the others whole' '
	same "(function_definition body: (compound_statement (for_statement) @for))" &&
	test "$(wc -l <on)" -eq 4 &&
	grep -x "parsed: 5" on.stats &&
	grep -x "parsed in part: 2" on.stats &&
	grep -x "guard.h:13:2: capture (1 site)" on &&
	grep -x "split.c:24:16: capture (1 site)" on &&
	grep -x "knr.c:5:2: capture (1 site)" on &&
	grep -x "heads.c:6:2: capture (1 site)" on
'

test_expect_success 'a for loop inside a function inside #ifdef, and the #else branch' '
	same "(for_statement) @f" &&
	grep -x "guard.h:19:27: capture (1 site)" on &&
	same "(return_statement) @r" &&
	grep -x "guard.h:21:15: capture (1 site)" on &&
	grep -x "parsed in part: 2" on.stats
'

test_expect_success 'a literal: only the items that hold it' '
	same "((call_expression function: (identifier) @fn) @c (#eq? @fn \"f\"))" &&
	grep -x "split.c:16:23: capture (1 site)" on &&
	grep -x "parsed in part: 3" on.stats &&
	same "((struct_specifier name: (type_identifier) @n) @s (#eq? @n \"p\"))" &&
	test "$(wc -l <on)" -eq 3 &&
	grep -x "parsed in part: 1" on.stats
'

test_expect_success 'a match in the line of a conditional (a comment before #ifdef)' '
	same "((comment) @c (#match? @c \"TODO\"))" &&
	grep -x "todo.h:3:1: capture (1 site)" on &&
	grep -x "parsed in part: 1" on.stats
'

test_expect_success 'keywords in comments and strings do not keep an item' '
	mkdir n &&
	cp "$SEEDS"/nofor.c "$SEEDS"/guard.h n/ &&
	make_repo n &&
	sluice scope --repo n --lang c --query "(for_statement) @f" --stats >n.on &&
	grep -x "skipped by prefilter: 1" n.on &&
	grep -x "parsed: 1" n.on &&
	sluice scope --repo n --lang c --query "(for_statement) @f" --no-prefilter >n.off &&
	grep -v "^[a-z][a-z ]*:\|^  " n.on >n.targets &&
	test_cmp n.off n.targets &&
	same "(for_statement) @f" &&
	sluice scope --repo c --lang c --query "(for_statement) @f" --json --stats >j &&
	grep "\"parsed_in_part\":2" j &&
	same "((string_literal) @s (#match? @s \"for\"))" &&
	grep -x "guard.h:7:28: capture (1 site)" on
'

test_expect_success 'units reach up to the item that holds the site' '
	sluice scope --repo c --lang c --query "(for_statement) @f" --unit function >fn.on &&
	sluice scope --repo c --lang c --query "(for_statement) @f" --unit function --no-prefilter >fn.off &&
	test_cmp fn.off fn.on &&
	grep -x "guard.h:19:1: function (1 site)" fn.on
'

test_expect_success 'a syntax error in another item changes nothing' '
	same "(for_statement) @f" &&
	grep -x "split.c:24:16: capture (1 site)" on
'

test_expect_success 'queries that can match across items parse whole files' '
	for q in "(translation_unit (function_definition) @f)" \
		 "(_ (for_statement) @f)" \
		 "((preproc_ifdef name: (identifier) @n) @p (#eq? @n \"X\"))" \
		 "((preproc_else (function_definition) @f))" \
		 "((for_statement) @a . (return_statement) @b)" \
		 "(for_statement)+ @f" \
		 "[(for_statement) (translation_unit)] @x" \
		 "(ERROR) @e"
	do
		same "$q" &&
		grep -x "parsed in part: 0" on.stats || return 1
	done
'

test_expect_success 'the cache holds the same result' '
	q="(for_statement) @f" &&
	sluice scope --repo c --lang c --query "$q" --cache cache.db >first &&
	sluice scope --repo c --lang c --query "$q" --cache cache.db --stats >second &&
	grep -x "parsed: 0" second &&
	grep -v "^[a-z][a-z ]*:\|^  " second >second.targets &&
	test_cmp first second.targets
'

test_done
