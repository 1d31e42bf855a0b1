#!/bin/sh
# t1241-scope-body.sh - a query whose every match is one statement directly
# in a function's body ((function_definition body: (compound_statement
# X))) is judged statement by statement of the body's top level
# (SL_ITEMS_BODY, items.h): a statement without "for" is not parsed (its
# syntax error is not counted by --stats), nor, when the query looks no
# further into the statement than its type (SL_ITEMS_BODY_LEAF), the
# statements in the blocks of one that holds a nested loop; a loop
# directly in a body is found, and an "else for" or a loop inside a do
# stays where it is (not taken for a statement of the body).  The sites
# are those of a scope without the prefilter.

test_description='sluice scope: statements directly in a function body'
. ./test-lib.sh

test_expect_success 'setup' '
	mkdir -p repo &&
	cat >repo/nested.c <<-\EOF &&
	int f(int n)
	{
		int s = 0;

		s = ;
		if (n > 0) {
			s = ;
			for (int i = 0; i < n; i++)
				s += i;
		}
		return s;
	}
	EOF
	cat >repo/direct.c <<-\EOF &&
	int g(int n, int *t)
	{
		int s = 0;

		if (n < 0)
			return 0;
		else for (int i = 0; i < -n; i++)
			s--;
		do
			for (;;)
				break;
		while (0);
		for (int i = 0; i < n; i++)
			s += t[i];
		return s;
	}
	EOF
	printf "int h(void) { return 1; }\n" >repo/none.c &&
	make_repo repo
'

Q="(function_definition body: (compound_statement (for_statement) @for))"

# same_sites QUERY: the sites (in "sites") and --stats (in "out") of QUERY,
# whose sites must be those without the prefilter
same_sites() {
	sluice scope --repo repo --lang c --query "$1" --stats >out &&
	sluice scope --repo repo --lang c --query "$1" --no-prefilter >all &&
	grep -v -e "^[a-z ]*: " -e "^  " out >sites &&
	grep -v -e "^[a-z ]*: " -e "^  " all >sites.all &&
	test_cmp sites.all sites
}

test_expect_success 'a loop directly in a body is found; a statement without one is not parsed' '
	same_sites "$Q" &&
	grep "^direct.c:13:" sites &&
	test "$(wc -l <sites)" = 1 &&
	grep -x "parsed: 2" out &&
	grep -x "parsed in part: 2" out &&
	grep -x "skipped by prefilter: 1" out &&
	grep -x "parse errors: 0" out &&
	sluice scope --repo repo --lang c --query "$Q" --stats --no-prefilter >all &&
	grep -x "parse errors: 1" all
'

test_expect_success 'a pattern inside the statement: its blocks are parsed' '
	Q2="(function_definition body: (compound_statement (if_statement (compound_statement (for_statement))) @if))" &&
	same_sites "$Q2" &&
	grep "^nested.c:6:" sites &&
	grep -x "parse errors: 1" out
'

test_expect_success 'a capture on an outer node: the body is not split' '
	sluice scope --repo repo --lang c --stats \
		--query "(function_definition body: (compound_statement (for_statement) @for)) @fn" >out &&
	grep -x "parse errors: 1" out
'

test_expect_success 'a function head with a syntax error: the body is not parsed again' '
	mkdir head &&
	cat >head/head.c <<-\EOF &&
	UNITTEST int k(int n)
	{
		int s = 0;

		for (int i = 0; i < n; i++)
			s += i;
		return s;
	}

	int p(int n)
	{
		for (int i = 0; i < n; i++)
			n--;
		return n;
	}
	EOF
	make_repo head &&
	sluice scope --repo head --lang c --query "$Q" --stats >out &&
	sluice scope --repo head --lang c --query "$Q" --no-prefilter >all &&
	grep -v -e "^[a-z ]*: " -e "^  " out >sites &&
	test_cmp all sites &&
	test "$(wc -l <sites)" = 2 &&
	grep -x "parsed in part: 1" out &&
	grep -x "parsed again: 0" out &&
	grep -x "parse errors: 1" out
'

test_done
