#!/bin/sh
test_description='fix campaigns: the tests that judge a fix are not the candidate'"'"'s to change'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# The fix project (examples/fix/project) whose clamp_above test prints its
# own __FILE__:__LINE__ (as Unity and most C frameworks do) when it fails:
# clamp(15, 0, 10) returns 0.  The candidate "fixes" it by expecting 0.
# fix.target test keeps the target on the test (t7130: by default it is
# clamp(), which the candidate's edit does not touch).

test_expect_success 'setup: the project, a test naming its own line, a test-weakening candidate' '
	cp -R "$EXAMPLES/fix/project" repo &&
	sed "s|ok_at(clamp(15, 0, 10) == 10, \"clamp_above\", \"src/calc.c:65\", \"clamp(15, 0, 10) != 10\");|{ int ok15 = clamp(15, 0, 10) == 10; char at[64]; snprintf(at, sizeof(at), \"%s:%d\", __FILE__, __LINE__); ok_at(ok15, \"clamp_above\", at, \"clamp(15, 0, 10) != 10\"); }|" \
		"$EXAMPLES/fix/project/tests/check.c" >repo/tests/check.c &&
	grep -q __FILE__ repo/tests/check.c &&
	make_repo repo &&
	(cd repo && make -s tests/check && ./tests/check >../tap; rm -f tests/check) &&
	grep -q "^# tests/check.c:[0-9]*: clamp(15, 0, 10) != 10" tap &&
	at=$(sed -n "s/^# tests\/check.c:\([0-9]*\):.*/\1/p" tap) &&
	cat >weaken.txt <<-EOF &&
	\`\`\`diff
	--- a/tests/check.c
	+++ b/tests/check.c
	@@ -$at,1 +$at,1 @@
	-$(sed -n "${at}p" repo/tests/check.c)
	+$(sed -n "${at}p" repo/tests/check.c | sed "s/== 10;/== 0;/")
	\`\`\`
	EOF
	grep -q "^+.*== 0;" weaken.txt &&
	cat >fix.yaml <<-EOF
	name: weaken
	kind: fix
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ["src/*.c", "tests/*.c"]
	  query: "(function_definition) @fn"
	provider: {kind: command, command: "cat $TRASH/weaken.txt"}
	edit_format: udiff
	attempts: 1
	jobs: 1
	gates:
	  - {name: build, command: make}
	  - {name: failing, kind: finding-gone, format: tap, command: "make -s check"}
	  - {name: test, kind: test, format: tap, command: "make -s check"}
	fix: {target: test}
	EOF
'

test_expect_success 'a candidate that changes the expected value of the failing test is rejected' '
	test_expect_code 1 sluice run --store s.db fix.yaml >out 2>err &&
	test "$(store_query s.db "select verdict || \": \" || note from gate_runs where gate = \"failing\"")" = "fail: changes the test that judges it: tests/check.c (test clamp_above)" &&
	grep -q "proposed  *0" out &&
	store_query s.db "select diff from candidates" | grep -q "^+.*== 0;"
'

test_expect_success 'the campaign that names the file lets the change through' '
	sed -e "s/^name: weaken/name: weaken-allowed/" \
		-e "s|command: \"make -s check\"}|command: \"make -s check\", allow_test_changes: [tests/check.c]}|" \
		fix.yaml >allowed.yaml &&
	grep -q "allow_test_changes" allowed.yaml &&
	sluice run --store a.db allowed.yaml >out 2>err &&
	test "$(store_query a.db "select verdict || \": \" || note from gate_runs where gate = \"failing\"")" = "pass: the target'"'"'s findings are gone" &&
	grep -q "proposed  *1" out
'

test_expect_success 'a base failure the finding-gone gate targets is not said to be unblamed' '
	! grep -q "not blamed" err &&
	test "$(store_query a.db "select verdict || \":\" || coalesce(note, \"\") from gate_runs where gate = \"test\"")" = "pass:"
'

test_expect_success 'allow_test_changes belongs to gates that judge tests' '
	sed -e "s|{name: build, command: make}|{name: build, command: make, allow_test_changes: [x]}|" \
		fix.yaml >bad.yaml &&
	test_expect_code 2 sluice run --store z.db bad.yaml 2>err &&
	grep -q "^sluice: bad.yaml:14:.*.allow_test_changes. needs a test or finding-gone gate with a test .format." err &&
	! test -e z.db
'

test_done
