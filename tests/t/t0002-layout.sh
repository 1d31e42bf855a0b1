#!/bin/sh
# t0002-layout.sh - the dependency rules between folders hold, and no code
# outside the SQL and JSON boundary compares a state's name with strcmp
# (docs/ARCHITECTURE.md; the rules live in tests/check-layout.sh), the
# library never prints, and the check sees a broken rule.

test_description='dependency rules between folders'
. ./test-lib.sh

top=$(cd "$TEST_DIRECTORY/../.." && pwd)

test_expect_success 'every #include of the tree keeps the rules' '
	sh "$top/tests/check-layout.sh" "$top"
'

test_expect_success 'setup: a copy of the tree' '
	mkdir tree &&
	(cd "$top" && tar cf - common storage scoping validators pipeline) | (cd tree && tar xf -) &&
	sh "$top/tests/check-layout.sh" tree
'

test_expect_success 'a strcmp on a state name outside the boundary is refused' '
	cp tree/pipeline/review/review.c review.c.orig &&
	echo "static int m(const char *s) { return !strcmp(s, \"merged\"); }" \
		>>tree/pipeline/review/review.c &&
	echo "static int f(const char *s) { return !strncmp(\"sarif\", s, 5); }" \
		>>tree/validators/gating.c &&
	test_must_fail sh "$top/tests/check-layout.sh" tree >out &&
	n=$(wc -l <tree/pipeline/review/review.c) &&
	grep "^pipeline/review/review.c:$n: strcmp on the name \"merged\" outside" out &&
	grep "^validators/gating.c:[0-9]*: strcmp on the name \"sarif\" outside" out &&
	test "$(wc -l <out)" = 2 &&
	cp review.c.orig tree/pipeline/review/review.c &&
	cp "$top/validators/gating.c" tree/validators/gating.c &&
	sh "$top/tests/check-layout.sh" tree
'

test_expect_success 'the store and the JSON readers may compare names' '
	cp tree/storage/review_store.c review_store.c.orig &&
	echo "static int m(const char *s) { return !strcmp(s, \"merged\"); }" \
		>>tree/storage/review_store.c &&
	sh "$top/tests/check-layout.sh" tree &&
	cp review_store.c.orig tree/storage/review_store.c
'

test_expect_success 'the check fails when it cannot read the name tables' '
	cp tree/storage/store.c store.c.orig &&
	sed "s/_names\[/_words[/" store.c.orig >tree/storage/store.c &&
	sed "s/_names\[/_words[/" "$top/storage/review_store.c" >tree/storage/review_store.c &&
	sed "s/_names\[/_words[/" "$top/validators/gating.c" >tree/validators/gating.c &&
	test_must_fail sh "$top/tests/check-layout.sh" tree >out &&
	grep "cannot read the name tables" out &&
	cp store.c.orig tree/storage/store.c &&
	cp "$top/storage/review_store.c" tree/storage/review_store.c &&
	cp "$top/validators/gating.c" tree/validators/gating.c
'

test_expect_success 'the library printing is refused, the command-line program may' '
	cp tree/scoping/scope.c scope.c.orig &&
	cp tree/pipeline/run/run.c run.c.orig &&
	cp tree/storage/store.c store.c.orig &&
	cp tree/pipeline/cli/main.c main.c.orig &&
	echo "static void p1(void) { fprintf(stderr, \"x\"); }" >>tree/scoping/scope.c &&
	echo "static void p2(void) { printf(\"%d\", 1); }" >>tree/pipeline/run/run.c &&
	echo "static void p3(void) { (void)write(2, \"x\", 1); }" >>tree/storage/store.c &&
	echo "static void p4(void) { printf(\"x\"); fputs(\"y\", stdout); }" >>tree/pipeline/cli/main.c &&
	test_must_fail sh "$top/tests/check-layout.sh" tree >out &&
	cat out &&
	grep "^scoping/scope.c:$(wc -l <tree/scoping/scope.c): the library prints" out &&
	grep "^pipeline/run/run.c:$(wc -l <tree/pipeline/run/run.c): the library prints" out &&
	grep "^storage/store.c:$(wc -l <tree/storage/store.c): the library prints" out &&
	test "$(wc -l <out)" = 3 &&
	cp scope.c.orig tree/scoping/scope.c &&
	cp run.c.orig tree/pipeline/run/run.c &&
	cp store.c.orig tree/storage/store.c &&
	sh "$top/tests/check-layout.sh" tree &&
	cp main.c.orig tree/pipeline/cli/main.c
'

test_expect_success 'names in strings and comments are not printing' '
	cp tree/validators/jail.c jail.c.orig &&
	echo "static const char *d = \"/dev/stderr printf(\"; /* writes to stdout */" >>tree/validators/jail.c &&
	sh "$top/tests/check-layout.sh" tree &&
	cp jail.c.orig tree/validators/jail.c
'

test_expect_success 'a lower folder including a higher one is refused' '
	cp tree/storage/store.c store.c.orig &&
	echo "#include \"pipeline/run.h\"" >>tree/storage/store.c &&
	test_must_fail sh "$top/tests/check-layout.sh" tree >out &&
	grep "storage/store.c:[0-9]*: storage may not include pipeline/run.h" out &&
	cp store.c.orig tree/storage/store.c
'

test_expect_success 'validators are entered by their front door only' '
	cp tree/pipeline/run/run.c run.c.orig &&
	echo "#include \"validators/jail.h\"" >>tree/pipeline/run/run.c &&
	test_must_fail sh "$top/tests/check-layout.sh" tree >out &&
	grep "include validators/validators.h, not validators/jail.h" out &&
	cp run.c.orig tree/pipeline/run/run.c
'

test_expect_success 'a function over 100 lines or a file over 1,200 in pipeline/ is refused' '
	cp tree/pipeline/run/budget.c budget.c.orig &&
	{ echo "static void long_one(void)" && echo "{" &&
	  for i in $(seq 101); do echo "	;"; done && echo "}"; } >>tree/pipeline/run/budget.c &&
	test_must_fail sh "$top/tests/check-layout.sh" tree >out &&
	grep "^pipeline/run/budget.c:[0-9]*: function of 102 lines (at most 100): static void long_one" out &&
	for i in $(seq 1200); do echo "/* */"; done >>tree/pipeline/run/budget.c &&
	test_must_fail sh "$top/tests/check-layout.sh" tree >out &&
	grep "^pipeline/run/budget.c:[0-9]*: file of [0-9]* lines (at most 1200)" out &&
	cp budget.c.orig tree/pipeline/run/budget.c
'

test_expect_success 'a field that holds an enum declared int is refused' '
	cp tree/validators/validators.h validators.h.orig &&
	sed "s|^	enum sl_gate_expect expect;|	int expect; /* enum sl_gate_expect */|" \
		validators.h.orig >tree/validators/validators.h &&
	test_must_fail sh "$top/tests/check-layout.sh" tree >out &&
	grep "^validators/validators.h:[0-9]*: a field that holds an enum is declared int" out &&
	cp validators.h.orig tree/validators/validators.h
'

test_expect_success 'an include circle is refused' '
	cp tree/validators/testreport.h testreport.h.orig &&
	echo "#include \"validators/finding_gone.h\"" >>tree/validators/testreport.h &&
	grep -q "include \"validators/testreport.h\"" tree/validators/finding_gone.h &&
	test_must_fail sh "$top/tests/check-layout.sh" tree >out &&
	grep "^include circle: .*validators/testreport.h" out &&
	cp testreport.h.orig tree/validators/testreport.h
'

test_expect_success 'a folder internal header is refused outside its folder' '
	cp tree/pipeline/review/review.c review.c.orig &&
	echo "#include \"pipeline/apply/apply_internal.h\"" >>tree/pipeline/review/review.c &&
	test_must_fail sh "$top/tests/check-layout.sh" tree >out &&
	grep "pipeline/apply/apply_internal.h is private to pipeline/apply/" out &&
	cp review.c.orig tree/pipeline/review/review.c
'

test_expect_success 'validators do not know the campaign file' '
	echo "#include \"pipeline/spec.h\"" >>tree/validators/gating.c &&
	test_must_fail sh "$top/tests/check-layout.sh" tree >out &&
	grep "validators may not include pipeline/spec.h" out
'

test_expect_success 'an include without its folder is refused' '
	echo "#include \"util.h\"" >>tree/scoping/scope.c &&
	test_must_fail sh "$top/tests/check-layout.sh" tree >out &&
	grep "does not name its folder" out
'

test_done
