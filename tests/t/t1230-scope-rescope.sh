#!/bin/sh
# t1230-scope-rescope.sh - re-scoping with --cache after a one-file change
# reads and parses that file only, and skips the query's check in a child
# process once the store marks the query as compiled (store_meta
# "scope-query-ok:..."); a query the store does not know is still checked,
# and one the screens refuse is refused with a store too.

test_description='sluice scope: re-scope after a one-file change'
. ./test-lib.sh

Q='((call_expression function: (identifier) @fn) @call (#eq? @fn "strcpy"))'

test_expect_success 'setup' '
	mkdir -p repo &&
	for i in 1 2 3 4 5; do
		printf "void f$i(char *a, char *b)\n{\n\tstrcpy(a, b);\n}\n" >repo/f$i.c || return 1
	done &&
	printf "int g(void) { return 0; }\n" >repo/g.c &&
	make_repo repo
'

test_expect_success 'a first scope fills the cache and marks the query' '
	test "$(sqlite3 c.db "select count(*) from sqlite_master" 2>/dev/null || echo 0)" = 0 &&
	sluice scope --repo repo --lang c --query "$Q" --cache c.db --stats >s1 &&
	grep -x "cache hits: 0" s1 &&
	test "$(sqlite3 c.db "select count(*) from store_meta where key like '"'"'scope-query-ok:%'"'"'")" = 1
'

test_expect_success 'after a one-file change only that file is read and parsed' '
	(cd repo && printf "void h(char *a) { strcpy(a, a); }\n" >>f3.c && git commit -q -am change) &&
	sluice scope --repo repo --lang c --query "$Q" --cache c.db --stats >s2 &&
	grep -x "cache hits: 5" s2 &&
	grep -x "parsed: 1" s2 &&
	grep -x "skipped by prefilter: 0" s2 &&
	grep "^f3.c:" s2 >f3 && test "$(wc -l <f3)" -eq 2 &&
	SLUICE_SCOPE_NO_WORKTREE=1 sluice scope --repo repo --lang c --query "$Q" --stats >s3 &&
	grep -x "parsed: 5" s3 &&
	grep "^bytes parsed: [0-9]* of $(wc -c <repo/f3.c) read " s2 &&
	grep -v -e "^cache hits" -e "^parsed" -e "^skipped by prefilter" -e "^threads" -e "^read from" \
		-e "^bytes parsed" s2 >a &&
	grep -v -e "^cache hits" -e "^parsed" -e "^skipped by prefilter" -e "^threads" -e "^read from" \
		-e "^bytes parsed" s3 >b &&
	test_cmp b a &&
	test "$(sqlite3 c.db "select count(*) from store_meta where key like '"'"'scope-query-ok:%'"'"'")" = 1
'

test_expect_success 'another query is checked and marked in turn; a refused one stays refused' '
	sluice scope --repo repo --lang c --query "(for_statement) @for" --cache c.db >/dev/null &&
	test "$(sqlite3 c.db "select count(*) from store_meta where key like '"'"'scope-query-ok:%'"'"'")" = 2 &&
	test_expect_code 2 sluice scope --repo repo --lang c --query "(_)** @a" --cache c.db 2>e &&
	grep "quantifier" e &&
	test "$(sqlite3 c.db "select count(*) from store_meta where key like '"'"'scope-query-ok:%'"'"'")" = 2
'

test_done
