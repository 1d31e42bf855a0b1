#!/bin/sh
# t1000-scope.sh - `sluice scope` finds targets in the committed tree:
# globs, language, predicates, the function unit, --json, --repo, and a
# query error that names the predicate.

test_description='sluice scope'
. ./test-lib.sh

# The value of a top-level scalar field of a one-line JSON object, whatever
# the spacing and key order: nested objects (sites) are removed first.
json_field() {
	printf '%s\n' "$1" | sed -e 's/^ *{//' -e 's/} *$//' -e ':a' -e 's/{[^{}]*}//' -e 'ta' |
	grep -o "\"$2\": *\"\{0,1\}[^\",}]*" | sed 's/^[^:]*: *"\{0,1\}//'
}

test_line_count() { test "$(wc -l <"$1")" -eq "$2"; }

test_expect_success 'setup' '
	mkdir -p repo/src repo/other &&
	printf "#include <string.h>\n\nvoid f(char *a, char *b)\n{\n\tstrcpy(a, b);\n\tstrcpy(b, a);\n}\n" >repo/src/a.c &&
	printf "char *g(char *d)\n{\n\treturn strcpy(d, \"x\");\n}\n" >repo/src/b.c &&
	printf "void h(char *p, char *q) { strcpy(p, q); }\n" >repo/other/c.c &&
	printf "strcpy(a, b)\n" >repo/src/d.py &&
	make_repo repo &&
	mkdir repo2 &&
	printf "int main(void)\n{\n\tstrcpy(x, y);\n\treturn 0;\n}\n" >repo2/main.c &&
	make_repo repo2 &&
	cat >campaign.yaml <<-\EOF &&
	name: t1000
	repository: repo
	targets:
	  language: c
	  paths: ["src/**"]
	  query: |
	    ((call_expression function: (identifier) @fn) @call
	     (#eq? @fn "strcpy"))
	  capture: call
	  unit: function
	rules:
	  - capture: fn
	    template: safe_strcpy
	EOF
	sed "s/#eq? @fn/#foo? @fn/" campaign.yaml >bad.yaml
'

test_expect_success 'one line per target, sorted, sites grouped by function' '
	sluice scope campaign.yaml >out &&
	test_line_count out 2 &&
	sed -n 1p out | grep -x "src/a\.c:3:1: function (2 sites)" &&
	sed -n 2p out | grep -x "src/b\.c:1:1: function (1 sites\{0,1\})"
'

test_expect_success 'the committed tree is scoped, not the working tree' '
	printf "void k(void) { strcpy(m, n); }\n" >repo/src/e.c &&
	printf "\n\n" >>repo/src/a.c &&
	sluice scope campaign.yaml >out2 &&
	test_cmp out out2
'

test_expect_success '--json prints one object per target' '
	sluice scope campaign.yaml --json >json &&
	test_line_count json 2 &&
	first=$(sed -n 1p json) &&
	test "$(json_field "$first" path)" = src/a.c &&
	test "$(json_field "$first" start_line)" = 3 &&
	test "$(json_field "$first" start_col)" = 1 &&
	test "$(json_field "$first" end_line)" = 7 &&
	test "$(json_field "$first" end_col)" = 2 &&
	test "$(json_field "$first" unit)" = function &&
	test "$(grep -c "\"sites\"" json)" -eq 2
'

test_expect_success '--repo scopes another repository' '
	sed "s|src/\*\*|**|" campaign.yaml >all.yaml &&
	sluice scope all.yaml --repo "$TRASH/repo2" >out3 &&
	grep -x "main\.c:1:1: function (1 sites\{0,1\})" out3
'

test_expect_success 'an unknown predicate is an error naming it' '
	test_must_fail sluice scope bad.yaml >out4 2>err &&
	test ! -s out4 &&
	grep "unknown predicate .#foo?." err
'

test_done
