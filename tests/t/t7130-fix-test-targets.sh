#!/bin/sh
test_description='fix campaigns: a failing test targets the code it exercises, not the test'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# tests/fixtures/unity: hex_digit() (src/hex.c:5-12) forgets that 'a' is
# ten; a Unity-like harness reports the failing assertion's own place,
# "tests/test_hex.c:14:test_letters:FAIL: Expected 10 Was 0", as a TAP
# diagnostic.  test_letters calls parse_hex2() (which passes), then
# hex_digit() on the failing line.  The campaign's paths hold only src/.

test_expect_success 'setup: the Unity-style project, a fix of hex_digit, the campaign' '
	cp -R "$FIXTURES/unity" repo &&
	make_repo repo &&
	cat >fix.txt <<-\EOF &&
	```diff
	--- a/src/hex.c
	+++ b/src/hex.c
	@@ -10,1 +10,1 @@
	-		return c - '"'"'a'"'"';
	+		return c - '"'"'a'"'"' + 10;
	```
	EOF
	cat >fix.yaml <<-EOF
	name: unity
	kind: fix
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ["src/*.c"]
	provider: {kind: command, command: "cat $TRASH/fix.txt"}
	edit_format: udiff
	attempts: 1
	jobs: 1
	gates:
	  - {name: build, command: make}
	  - {name: failing, kind: finding-gone, format: tap, command: "make -s check"}
	  - {name: test, kind: test, format: tap, command: "make -s check"}
	EOF
'

test_expect_success 'the failing test targets the function it calls on the failing line' '
	{ sluice run --store s.db fix.yaml >out 2>err || { cat out err; false; }; } &&
	test "$(store_query s.db "select path || \":\" || start_line || \"-\" || end_line from targets")" = "src/hex.c:5-12" &&
	grep -q "proposed  *1" out &&
	test "$(store_query s.db "select verdict || \": \" || note from gate_runs where gate = \"failing\"")" = "pass: the target'"'"'s findings are gone"
'

test_expect_success 'the prompt carries the failure text and the test.s function' '
	store_query s.db "select prompt from attempts" >prompt &&
	grep -q "src/hex.c:5: error: failing test test_letters: tests/test_hex.c:14:test_letters:FAIL: Expected 10 Was 0 \[test:test_letters\]" prompt &&
	grep -q "^  tests/test_hex.c:11: note: the failing test, tests/test_hex.c:11-15 (it calls hex_digit):" prompt &&
	grep -q "^  void test_letters(void)" prompt &&
	grep -q "TEST_ASSERT_EQUAL_INT(10, hex_digit(.a.));" prompt
'

test_expect_success 'a wrong fix of the function is still judged by the test' '
	sed "s/+ 10;/+ 9;/" fix.txt >wrong.txt &&
	sed -e "s/^name: unity/name: unity-wrong/" -e "s|fix.txt|wrong.txt|" fix.yaml >wrong.yaml &&
	test_expect_code 1 sluice run --store w.db wrong.yaml >out 2>err &&
	test "$(store_query w.db "select verdict || \": \" || note from gate_runs where gate = \"failing\"")" = "fail: still failing: test_letters"
'

test_expect_success 'fix: {target: test} keeps the failure.s own place: outside src/, no target' '
	sed "s/^name: unity/name: unity-test/" fix.yaml >test.yaml &&
	echo "fix: {target: test}" >>test.yaml &&
	test_expect_code 1 sluice run --store t.db test.yaml >out 2>err &&
	test "$(store_query t.db "select count(*) from targets")" = 0 &&
	grep -q "fix: 1 findings on the base, 0 targets; 1 findings lie outside the campaign.s files" err
'

test_expect_success 'fix: {target: test} with the tests in paths targets the test' '
	sed -e "s/^name: unity/name: unity-tests/" -e "s|paths: \[\"src/\*.c\"\]|paths: [\"src/*.c\", \"tests/*.c\"]|" fix.yaml >tests.yaml &&
	grep -q "tests/\*.c" tests.yaml &&
	echo "fix: {target: test}" >>tests.yaml &&
	test_expect_code 1 sluice run --store u.db tests.yaml >out 2>err &&
	test "$(store_query u.db "select path || \":\" || start_line || \"-\" || end_line from targets")" = "tests/test_hex.c:11-15"
'

test_expect_success 'fix.target: a word it does not know, or outside a fix campaign, is refused' '
	cp fix.yaml bad1.yaml &&
	echo "fix: {target: tests}" >>bad1.yaml &&
	test_expect_code 2 sluice run --store bad.db bad1.yaml 2>err &&
	grep -q "^sluice: bad1.yaml:16:15: .target. must be one of: code, test" err &&
	sed "/^kind: fix/d" fix.yaml >bad2.yaml &&
	echo "fix: {target: code}" >>bad2.yaml &&
	test_expect_code 2 sluice run --store bad.db bad2.yaml 2>err &&
	grep -q "^sluice: bad2.yaml:15:6: .fix. belongs to fix campaigns" err &&
	! test -e bad.db
'

test_expect_success 'a backtrace in the failure text: its innermost frame in the code decides' '
	cp -R "$FIXTURES/unity" repo2 &&
	sed "s/TEST_ASSERT_EQUAL_INT(10, hex_digit(.a.));/TEST_ASSERT_EQUAL_INT(10, parse_hex2(\"0a\"));/" \
		"$FIXTURES/unity/tests/test_hex.c" >repo2/tests/test_hex.c &&
	grep -q "parse_hex2(\"0a\")" repo2/tests/test_hex.c &&
	make_repo repo2 &&
	cat >stack.sh <<-\EOF &&
	make -s check | awk '"'"'{ print } /:FAIL:/ {
		print "#   #0 0x7f3a in __interceptor_strlen ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:387"
		print "#   #1 0x4011 in hex_digit /home/ci/proj/src/hex.c:10:3"
		print "#   #2 0x4022 in parse_hex2 /home/ci/proj/src/hex.c:17:11"
		print "#   #3 0x4033 in test_letters /home/ci/proj/tests/test_hex.c:14:2"
	}'"'"'
	EOF
	cp stack.sh repo2/stack.sh && (cd repo2 && git add stack.sh && git commit -qm stack) &&
	sed -e "s/^name: unity/name: unity-stack/" -e "s/^repository: repo/repository: repo2/" \
		-e "s|command: \"make -s check\"}|command: \"sh stack.sh\"}|" fix.yaml >stack.yaml &&
	grep -q "sh stack.sh" stack.yaml &&
	{ sluice run --store k.db stack.yaml >out 2>err || { cat out err; false; }; } &&
	test "$(store_query k.db "select path || \":\" || start_line || \"-\" || end_line from targets")" = "src/hex.c:5-12" &&
	store_query k.db "select prompt from attempts" >prompt &&
	grep -q "^src/hex.c:10: error: failing test test_letters" prompt &&
	grep -q "note: the failing test, tests/test_hex.c:11-15 (it calls parse_hex2)\|note: the failing test, tests/test_hex.c:11-15:" prompt
'

test_expect_success 'without the backtrace the call on the failing line decides: parse_hex2' '
	sed -e "s/^name: unity-stack/name: unity-nostack/" -e "s|command: \"sh stack.sh\"}|command: \"make -s check\"}|" \
		stack.yaml >nostack.yaml &&
	test_expect_code 1 sluice run --store n.db nostack.yaml >out 2>err &&
	test "$(store_query n.db "select path || \":\" || start_line || \"-\" || end_line from targets")" = "src/hex.c:15-22"
'

test_expect_success 'a findings file whose first frame is no file of the repository: the frame in the code decides' '
	cat >asan.tap <<-\EOF &&
	ok 1 - test_digits
	not ok 2 - test_letters
	# ==7==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011
	#     #0 0x7f3a in __interceptor_strlen ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:387
	#     #1 0x4011 in hex_digit /home/ci/proj/src/hex.c:10:3
	#     #2 0x4022 in parse_hex2 /home/ci/proj/src/hex.c:17:11
	1..2
	EOF
	sed "s/^name: unity-nostack/name: unity-asan/" nostack.yaml >asan.yaml &&
	echo "findings: {report: asan.tap, format: tap}" >>asan.yaml &&
	{ sluice run --store a.db asan.yaml >out 2>err || { cat out err; false; }; } &&
	test "$(store_query a.db "select path || \":\" || start_line || \"-\" || end_line from targets")" = "src/hex.c:5-12" &&
	test "$(store_query a.db "select count(*) from unplaced")" = 0 &&
	grep -q "fix: 1 failing tests put on the code they exercise (1 by a backtrace, 0 by the test.s calls)" err
'

test_expect_success 'a failure with no place: the test function of that name, its first call' '
	cp -R "$FIXTURES/unity" repo3 &&
	echo "make -s check | sed \"s/^# tests.test_hex.c:[0-9]*:/# /\"" >repo3/noplace.sh &&
	make_repo repo3 &&
	sed -e "s/^name: unity/name: unity-noplace/" -e "s/^repository: repo/repository: repo3/" \
		-e "s|command: \"make -s check\"}|command: \"sh noplace.sh\"}|" fix.yaml >noplace.yaml &&
	grep -q "sh noplace.sh" noplace.yaml &&
	test_expect_code 1 sluice run --store p.db noplace.yaml >out 2>err &&
	test "$(store_query p.db "select path || \":\" || start_line || \"-\" || end_line from targets")" = "src/hex.c:15-22" &&
	store_query p.db "select prompt from attempts" >prompt &&
	grep -q "failing test test_letters: test_letters:FAIL: Expected 10 Was 0" prompt &&
	grep -q "note: the failing test, tests/test_hex.c:11-15 (it calls parse_hex2):" prompt
'

test_done
