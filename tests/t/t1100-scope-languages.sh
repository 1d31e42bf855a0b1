#!/bin/sh
# t1100-scope-languages.sh - ad-hoc `sluice scope` over one fixture repo per
# language (tests/fixtures/scope/*): the exact targets, and the same output
# with the prefilter off, with one thread, and from a warm cache.

test_description='sluice scope: every language'
. ./test-lib.sh

CASES=$(cd "$FIXTURES/scope" && for d in */; do printf '%s ' "${d%/}"; done)

scope_case() {
	sc_case=$1
	shift
	sluice scope --repo "$sc_case" --lang "$(cat "$FIXTURES/scope/$sc_case/lang")" \
		--query-file "$FIXTURES/scope/$sc_case/query.scm" \
		$(cat "$FIXTURES/scope/$sc_case/args") "$@"
}

test_expect_success 'setup: one repository per case' '
	for c in $CASES; do
		cp -R "$FIXTURES/scope/$c/repo" "$c" && make_repo "$c" || return 1
	done &&
	test "$(echo $CASES | wc -w)" -ge 11
'

for c in $CASES; do
	test_expect_success "$c: the expected targets" "
		scope_case $c >out.$c &&
		test_cmp '$FIXTURES/scope/$c/expected' out.$c &&
		test -s out.$c
	"
done

test_expect_success 'the prefilter never changes the result' '
	for c in $CASES; do
		scope_case $c --no-prefilter >nopf.$c &&
		test_cmp out.$c nopf.$c || return 1
		SLUICE_NO_PREFILTER=1 scope_case $c >nopf2.$c &&
		test_cmp out.$c nopf2.$c || return 1
	done
'

test_expect_success 'the prefilter skips files without the literal' '
	scope_case c --stats >stats &&
	grep -x "skipped by prefilter: 1" stats &&
	grep -x "parsed: 2" stats &&
	scope_case c --stats --no-prefilter >stats2 &&
	grep -x "parsed: 3" stats2
'

test_expect_success 'one thread or several: the same result' '
	for c in $CASES; do
		scope_case $c --threads 1 >t1.$c &&
		test_cmp out.$c t1.$c &&
		scope_case $c --threads 4 >t4.$c &&
		test_cmp out.$c t4.$c || return 1
	done
'

test_expect_success 'a warm cache gives the same result without parsing' '
	for c in $CASES; do
		scope_case $c --cache cache.db >cold.$c &&
		test_cmp out.$c cold.$c &&
		scope_case $c --cache cache.db --stats >warm.$c &&
		grep -x "parsed: 0" warm.$c &&
		grep -v "^[a-z ]*: " warm.$c | grep -v "^  " >warm-targets.$c &&
		test_cmp out.$c warm-targets.$c || return 1
	done
'

test_expect_success 'C: a literal only in a macro body is reported' '
	scope_case c --stats >stats &&
	grep -x "literal without match: 1" stats &&
	grep -x "  lib/m.h" stats &&
	scope_case c --stats --json >sj &&
	grep "\"literal_no_match_paths\":\[\"lib/m.h\"\]" sj
'

test_done
