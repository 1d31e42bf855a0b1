#!/bin/sh
# t1240-scope-keywords.sh - the keyword prefilter's table comes from the
# grammars (ci/gen-keywords.c): a query naming a node type that
# always begins with a keyword parses only the files holding that keyword
# as a token, in every language (case_statement: "case" or "default";
# Python's with_statement: "with" or "async").  In C, Python and Go the
# keyword must lie outside comments and string literals: a file with the
# keyword only there is not parsed.  The sites are those of a scope
# without the prefilter; --stats says how many files were parsed.

test_description='sluice scope: keywords from the grammar'
. ./test-lib.sh

test_expect_success 'setup' '
	mkdir -p repo &&
	cat >repo/comment.c <<-\EOF &&
	/* a switch with a case for each value */
	int f(int x)
	{
		return x; /* default: none */
	}
	const char *s = "case default:";
	EOF
	cat >repo/code.c <<-\EOF &&
	int g(int x)
	{
		switch (x) {
		case 1:
			return 2;
		default:
			return 0;
		}
	}
	EOF
	printf "int h(void) { return 1; }\n" >repo/none.c &&
	cat >repo/comment.py <<-\EOF &&
	# with a comment
	withx = 1
	s = "with"
	t = """
	with open(x) as f:
	    pass
	"""
	EOF
	cat >repo/code.py <<-\EOF &&
	def f():
	    with open("x") as fh:
	        return fh.read()
	EOF
	cat >repo/fstring.py <<-\EOF &&
	s = f"{x}"
	with open("y") as fh:
	    pass
	EOF
	cat >repo/comment.go <<-\EOF &&
	package p

	// for ever
	var s = `for {
	}`
	var r = "for"
	EOF
	cat >repo/code.go <<-\EOF &&
	package p

	func f() {
		for {
		}
	}
	EOF
	make_repo repo
'

# scope LANG QUERY PARSED SKIPPED: the sites in "sites" (with and without the
# prefilter, which must agree), and the files parsed and skipped by the prefilter
scope() {
	sluice scope --repo repo --lang "$1" --query "$2" --stats >out &&
	sluice scope --repo repo --lang "$1" --query "$2" --no-prefilter >all &&
	grep -v -e "^[a-z ]*: " -e "^  " out >sites &&
	grep -v -e "^[a-z ]*: " -e "^  " all >sites.all &&
	test_cmp sites.all sites &&
	grep -x "parsed: $3" out &&
	grep -x "skipped by prefilter: $4" out
}

test_expect_success 'C: a case in code is found; in a comment or a string the file is not parsed' '
	scope c "(case_statement) @c" 1 2 &&
	grep "^code.c:4:" sites && grep "^code.c:6:" sites &&
	test "$(wc -l <sites)" = 2
'

test_expect_success 'Python: with in code is found; in comments, strings and a longer name it is not' '
	scope python "(with_statement) @w" 2 1 &&
	grep "^code.py:2:" sites && grep "^fstring.py:2:" sites &&
	test "$(wc -l <sites)" = 2
'

test_expect_success 'Go: for in code is found; in a comment, a raw string or a string it is not' '
	scope go "(for_statement) @f" 1 1 &&
	grep "^code.go:4:" sites &&
	test "$(wc -l <sites)" = 1
'

test_done
