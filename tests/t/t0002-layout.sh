#!/bin/sh
# t0002-layout.sh - the dependency rules between folders hold
# (docs/ARCHITECTURE.md; the rules live in tests/check-layout.sh), and the
# check sees a broken rule.

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

test_expect_success 'a lower folder including a higher one is refused' '
	cp tree/storage/store.c store.c.orig &&
	echo "#include \"pipeline/run.h\"" >>tree/storage/store.c &&
	test_must_fail sh "$top/tests/check-layout.sh" tree >out &&
	grep "storage/store.c:[0-9]*: storage may not include pipeline/run.h" out &&
	cp store.c.orig tree/storage/store.c
'

test_expect_success 'validators are entered by their front door only' '
	cp tree/pipeline/run.c run.c.orig &&
	echo "#include \"validators/jail.h\"" >>tree/pipeline/run.c &&
	test_must_fail sh "$top/tests/check-layout.sh" tree >out &&
	grep "include validators/validators.h, not validators/jail.h" out &&
	cp run.c.orig tree/pipeline/run.c
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
