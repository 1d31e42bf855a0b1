#!/bin/sh
# t1200-scope-predicates-units.sh - every predicate, positive and negated,
# on captures and strings (with the prefilter on and off); unit widening and
# site merging; language overrides; cache invalidation when a blob changes;
# bad queries exit 2 naming the position.

test_description='sluice scope: predicates, units, cache, errors'
. ./test-lib.sh

CALL='(call_expression function: (identifier) @fn arguments: (argument_list))'
ARGS='(call_expression function: (identifier) @fn arguments: (argument_list . (identifier) @x . (identifier) @y))'

# lines of the targets a query finds in repo c, prefilter on; the same
# with the prefilter off or the test fails
lines() {
	sluice scope --repo c --lang c --capture call --query "$1" >on &&
	sluice scope --repo c --lang c --capture call --query "$1" --no-prefilter >off &&
	test_cmp on off &&
	cut -d: -f2 on | tr "\n" " "
}

test_expect_success 'setup' '
	mkdir c &&
	printf "void f(void)\n{\n\tstrcpy(a, b);\n\tstrncpy(a, b, 1);\n\tmemcpy(a, a, 1);\n\tputs(s);\n}\n" >c/f.c &&
	printf "int g(void) { return 0; }\n" >c/g.c &&
	make_repo c
'

test_expect_success '#eq? and #not-eq? with a string' '
	test "$(lines "(($CALL) @call (#eq? @fn \"strcpy\"))")" = "3 " &&
	test "$(lines "(($CALL) @call (#not-eq? @fn \"strcpy\"))")" = "4 5 6 "
'

test_expect_success '#eq? and #not-eq? between captures' '
	test "$(lines "(($ARGS) @call (#eq? @x @y))")" = "5 " &&
	test "$(lines "(($ARGS) @call (#not-eq? @x @y))")" = "3 4 "
'

test_expect_success '#match? and #not-match?' '
	test "$(lines "(($CALL) @call (#match? @fn \"^str\"))")" = "3 4 " &&
	test "$(lines "(($CALL) @call (#not-match? @fn \"^str\"))")" = "5 6 " &&
	test "$(lines "(($CALL) @call (#match? @fn \"n?cpy\$\"))")" = "3 4 5 "
'

test_expect_success '#any-of? and #not-any-of?' '
	test "$(lines "(($CALL) @call (#any-of? @fn \"puts\" \"memcpy\"))")" = "5 6 " &&
	test "$(lines "(($CALL) @call (#not-any-of? @fn \"puts\" \"memcpy\"))")" = "3 4 "
'

test_expect_success 'two patterns: a file passes the prefilter through either' '
	test "$(lines "(($CALL) @call (#eq? @fn \"puts\")) (($CALL) @call (#eq? @fn \"strcpy\"))")" = "3 6 "
'

test_expect_success 'units: widening and merging sites' '
	mkdir py &&
	cat >py/m.py <<-\PY &&
	class A:
	    def m(self):
	        eval("1")
	        eval(eval("2"))

	    def n(self):
	        eval("3")


	def top():
	    eval("4")
	PY
	make_repo py &&
	q="((call function: (identifier) @fn) @call (#eq? @fn \"eval\"))" &&
	for u in capture statement function class file; do
		sluice scope --repo py --lang python --query "$q" --unit $u >u.$u || return 1
	done &&
	printf "%s\n" "m.py:3:9: capture (1 site)" "m.py:4:9: capture (1 site)" \
		"m.py:4:14: capture (1 site)" "m.py:7:9: capture (1 site)" \
		"m.py:11:5: capture (1 site)" >exp.capture &&
	printf "%s\n" "m.py:3:9: statement (1 site)" "m.py:4:9: statement (2 sites)" \
		"m.py:7:9: statement (1 site)" "m.py:11:5: statement (1 site)" >exp.statement &&
	printf "%s\n" "m.py:2:5: function (3 sites)" "m.py:6:5: function (1 site)" \
		"m.py:10:1: function (1 site)" >exp.function &&
	printf "%s\n" "m.py:1:1: class (4 sites)" "m.py:11:5: capture (1 site)" >exp.class &&
	printf "%s\n" "m.py:1:1: file (5 sites)" >exp.file &&
	for u in capture statement function class file; do
		test_cmp exp.$u u.$u || return 1
	done
'

test_expect_success 'an unknown unit is a usage error' '
	test_expect_code 2 sluice scope --repo py --lang python --query "(call) @c" --unit block 2>err &&
	grep "unknown unit .block." err
'

test_expect_success 'a glob override chooses the language of a path' '
	mkdir ov &&
	printf "class K { void f() { g(); } };\n" >ov/k.h &&
	printf "void h() { g(); }\n" >ov/k.cc &&
	make_repo ov &&
	q="((call_expression function: (identifier) @fn) @c (#eq? @fn \"g\"))" &&
	sluice scope --repo ov --lang cpp --query "$q" >o1 &&
	test "$(cat o1)" = "k.cc:1:12: capture (1 site)" &&
	sluice scope --repo ov --lang cpp --query "$q" --lang-override "*.h=cpp" >o2 &&
	printf "%s\n" "k.cc:1:12: capture (1 site)" "k.h:1:22: capture (1 site)" >exp.o2 &&
	test_cmp exp.o2 o2 &&
	test_expect_code 2 sluice scope --repo ov --lang cpp --query "$q" --lang-override "*.h=cobol"
'

test_expect_success 'the cache: a changed blob misses, the others hit' '
	q="(($CALL) @call (#eq? @fn \"strcpy\"))" &&
	sluice scope --repo c --lang c --query "$q" --cache cache.db --stats >s1 &&
	grep -x "cache hits: 0" s1 &&
	sluice scope --repo c --lang c --query "$q" --cache cache.db --stats >s2 &&
	grep -x "cache hits: 2" s2 && grep -x "parsed: 0" s2 &&
	printf "void k(void) { strcpy(x, y); }\n" >>c/g.c &&
	(cd c && git commit -q -a -m more) &&
	sluice scope --repo c --lang c --query "$q" --cache cache.db --stats >s3 &&
	grep -x "cache hits: 1" s3 && grep -x "parsed: 1" s3 &&
	grep -x "g.c:2:16: capture (1 site)" s3 &&
	sluice scope --repo c --lang c --query "$q" --rev HEAD~1 --cache cache.db --stats >s4 &&
	grep -x "cache hits: 2" s4 && ! grep "^g.c" s4
'

test_expect_success 'the cache key holds the unit and the query' '
	q="(($CALL) @call (#eq? @fn \"strcpy\"))" &&
	sluice scope --repo c --lang c --query "$q" --unit function --cache cache.db --stats >k1 &&
	grep -x "cache hits: 0" k1 && grep -x "f.c:1:1: function (1 site)" k1
'

# the cache is bounded: past 500,000 rows, scoping keeps only its own
# query's rows (the rows of an old query are made up here, "old" as key)
fill_cache() {
	sqlite3 "$1" "with recursive n(i) as (select 1 union all select i + 1 from n where i < $2)
		insert into scope_cache(qkey, lang, blob, flags, data)
		select 'old', 'c', printf('%040x', i), 0, x'00' from n"
}

test_expect_success 'the cache under its cap keeps other queries'"'"' rows' '
	q="(($CALL) @call (#eq? @fn \"strcpy\"))" &&
	sluice scope --repo c --lang c --query "$q" --cache small.db >/dev/null &&
	fill_cache small.db 1000 &&
	sluice scope --repo c --lang c --query "(($CALL) @call (#eq? @fn \"memcpy\"))" \
		--cache small.db >/dev/null &&
	test "$(sqlite3 small.db "select count(*) from scope_cache where qkey = '"'"'old'"'"'")" = 1000 &&
	test "$(sqlite3 small.db "select count(distinct qkey) from scope_cache")" = 3
'

test_expect_success 'the cache past its cap drops other queries'"'"' rows, keeps this one'"'"'s' '
	q="(($CALL) @call (#eq? @fn \"strcpy\"))" &&
	sluice scope --repo c --lang c --query "$q" --cache big.db >/dev/null &&
	fill_cache big.db 500001 &&
	sluice scope --repo c --lang c --query "(($CALL) @call (#eq? @fn \"memcpy\"))" \
		--cache big.db --stats >p1 &&
	test "$(sqlite3 big.db "select count(distinct qkey) from scope_cache")" = 1 &&
	test "$(sqlite3 big.db "select count(*) from scope_cache where qkey = '"'"'old'"'"'")" = 0 &&
	n=$(sqlite3 big.db "select count(*) from scope_cache") &&
	grep -x "files seen: $n" p1 && grep -x "parsed: 1" p1 &&
	sluice scope --repo c --lang c --query "(($CALL) @call (#eq? @fn \"memcpy\"))" \
		--cache big.db --stats >p2 &&
	grep -x "parsed: 0" p2 && grep -x "cache hits: [1-9]" p2
'

test_expect_success 'bad queries exit 2 naming the position' '
	test_expect_code 2 sluice scope --repo c --lang c --query "((call_expression) @c" 2>e1 &&
	grep "^sluice: --query:1:" e1 &&
	test_expect_code 2 sluice scope --repo c --lang c --query "(call_expresion) @c" 2>e2 &&
	grep "^sluice: --query:1:2: .*unknown node type .call_expresion." e2 &&
	printf "((identifier) @i\n  (#frob? @i \"x\"))\n" >bad.scm &&
	test_expect_code 2 sluice scope --repo c --lang c --query-file bad.scm 2>e3 &&
	grep "^sluice: bad.scm:2:4: .*unknown predicate .#frob?." e3 &&
	test_expect_code 2 sluice scope --repo c --lang c --query "((identifier) @i (#match? @i \"(\"))" 2>e4 &&
	grep "^sluice: --query:1:19: .*bad regex" e4 &&
	test_expect_code 2 sluice scope --repo c --lang c --query "(identifier) @i" --capture nope 2>e5 &&
	grep "capture .@nope. is not defined" e5
'

test_expect_success 'usage errors exit 2' '
	test_expect_code 2 sluice scope --repo c --lang c &&
	test_expect_code 2 sluice scope --repo c --lang klingon --query "(x) @x" &&
	test_expect_code 2 sluice scope --repo c --lang c --query "(identifier) @i" --rev nope
'

test_done
