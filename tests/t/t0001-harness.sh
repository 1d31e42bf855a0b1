#!/bin/sh
# t0001-harness.sh - the test harness cannot lie: a broken &&-chain is a
# failure, a missing prerequisite is a skip (never a pass), and
# run-tests.sh counts passes, failures and skips of both layers apart.

test_description='the test harness itself'
. ./test-lib.sh

# sub NAME: run harness/NAME.sh (written by the test) with this test-lib.sh,
# its trash under ./sub-build; its output in NAME.out, its status in NAME.rc.
sub() {
	{ ( cd harness && SLUICE_BUILD="$TRASH/sub-build" sh "./$1.sh" ) >"$1.out" 2>&1; echo $? >"$1.rc"; }
}

test_expect_success 'setup' '
	mkdir harness sub-build &&
	cp "$TEST_DIRECTORY/test-lib.sh" harness/
'

test_expect_success 'a broken &&-chain is reported as a bug in the test, and is not run' '
	cat >harness/chain.sh <<-\EOF &&
	. ./test-lib.sh
	test_expect_success "chained" "true && true"
	test_expect_success "broken" "false; touch ran"
	test_done
	EOF
	sub chain &&
	test "$(cat chain.rc)" = 1 &&
	grep -x "ok 1 - chained" chain.out &&
	grep -x "not ok 2 - broken" chain.out &&
	grep -x "#   bug in the test script: broken &&-chain:" chain.out &&
	grep -x "# 1 passed, 1 failed, 0 skipped" chain.out &&
	! test -e sub-build/tests/trash.chain/.out.2
'

test_expect_success 'TRASH and SLUICE_BUILD are physical paths even when SLUICE_BUILD has ".." in it' '
	cat >harness/paths.sh <<-\EOF &&
	. ./test-lib.sh
	test_expect_success "paths" "echo \"trash=\$TRASH build=\$SLUICE_BUILD\" >\"\$TEST_DIRECTORY/paths.txt\""
	test_done
	EOF
	mkdir sub-build/x &&
	{ ( cd harness && SLUICE_BUILD="$TRASH/sub-build/x/.." sh ./paths.sh ) >paths.out 2>&1; rc=$?; } &&
	test $rc = 0 &&
	test "$(cat harness/paths.txt)" = "trash=$TRASH/sub-build/tests/trash.paths build=$TRASH/sub-build"
'

test_expect_success 'a failing command in the middle of a chain fails the test' '
	cat >harness/fail.sh <<-\EOF &&
	. ./test-lib.sh
	test_expect_success "middle" "true && false && true"
	test_done
	EOF
	sub fail &&
	test "$(cat fail.rc)" = 1 &&
	grep -x "not ok 1 - middle" fail.out
'

test_expect_success 'prerequisites: a missing one skips, never passes; lazy ones are evaluated once' '
	cat >harness/prereq.sh <<-\EOF &&
	. ./test-lib.sh
	test_set_prereq HAVE
	test_lazy_prereq NEVER "false"
	test_lazy_prereq COUNTED "echo x >>\"$TRASH/../../../counted\""
	test_expect_success HAVE "with a prerequisite set" "true"
	test_expect_success NEVER "with a lazy one that fails" "touch ran"
	test_expect_success HAVE,!NEVER "with a negated one" "true"
	test_expect_success COUNTED "lazy, first" "true"
	test_expect_success COUNTED "lazy, second" "true"
	test_expect_success MISSING "with an unknown one" "true"
	test_done
	EOF
	sub prereq &&
	test "$(cat prereq.rc)" = 0 &&
	grep -x "ok 1 - with a prerequisite set" prereq.out &&
	grep -x "ok 2 # skip with a lazy one that fails (missing NEVER)" prereq.out &&
	grep -x "ok 3 - with a negated one" prereq.out &&
	grep -x "ok 6 # skip with an unknown one (missing MISSING)" prereq.out &&
	grep -x "# 4 passed, 0 failed, 2 skipped" prereq.out &&
	test $(wc -l <counted) = 1 &&
	! test -e sub-build/tests/trash.prereq/ran
'

# A fake build tree: one unit "binary" with a pass, a failure and a skip, one
# that stops before its summary, and one that passes.
test_expect_success 'run-tests.sh counts passes, failures and skips; lists the skips; fails' '
	mkdir -p fake/tests/unit &&
	printf "%s\n" "#!/bin/sh" "echo \"ok 1 - a\"" "echo \"not ok 2 - b\"" \
		"echo \"ok 3 # skip c: no cgroup for this user\"" \
		"echo \"# 1 passed, 1 failed, 1 skipped\"" "exit 1" >fake/tests/unit/test_mixed &&
	printf "%s\n" "#!/bin/sh" "echo \"ok 1 - a\"" >fake/tests/unit/test_short &&
	printf "%s\n" "#!/bin/sh" "echo \"ok 1 - a\"" "echo \"# 1 passed, 0 failed, 0 skipped\"" \
		>fake/tests/unit/test_fine &&
	chmod +x fake/tests/unit/test_* &&
	{ T=none sh "$TEST_DIRECTORY/../run-tests.sh" fake >run.out 2>&1; echo $? >run.rc; } &&
	test "$(cat run.rc)" = 1 &&
	tail -n 1 run.out >last &&
	echo "3 passed, 2 failed, 1 skipped" >expect &&
	test_cmp expect last &&
	grep -x "  unit/test_mixed: c: no cgroup for this user" run.out &&
	grep "not ok - unit/test_short ended before its summary line" run.out
'

test_expect_success 'run-tests.sh exits 0 when nothing failed' '
	rm fake/tests/unit/test_mixed fake/tests/unit/test_short &&
	T=none sh "$TEST_DIRECTORY/../run-tests.sh" fake >run2.out 2>&1 &&
	tail -n 1 run2.out >last &&
	echo "1 passed, 0 failed, 0 skipped" >expect &&
	test_cmp expect last
'

test_done
