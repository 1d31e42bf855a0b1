# test-lib.sh - the end-to-end layer's framework, in the style of git's t/.
#
# A script sets test_description, sources this file, runs
#     test_expect_success 'what it checks' '<shell commands>'
# blocks and ends with test_done.  Each script runs in a fresh trash
# directory (build/tests/trash.<script>) with HOME pointing into it, so
# nothing outside is read or written.  "sluice" on PATH is the freshly built
# binary; test helpers (stub-model ...) are on PATH too.
#
# SLUICE_TEST_TRACE=1 traces every test body (set -x) into its output.
# A body is a &&-chain, checked before it runs (a broken chain is a bug in
# the test).  test_expect_success PREREQS 'title' 'body' runs only where the
# prerequisites hold (test_set_prereq, test_lazy_prereq; ROOT, SETPRIV and
# SCRIPT are defined here), else it prints "ok N # skip" and counts a skip.
#
# Helpers: test_cmp A B (diff -u), test_must_fail CMD (exit 1..125, not a
# crash), test_expect_code N CMD, make_repo DIR (git repo with one commit of
# the files already in DIR), tree_digest DIR (hash of every file and mode).

set -u
: "${SLUICE_BUILD:?run through tests/run-tests.sh or set SLUICE_BUILD}"
TEST_DIRECTORY=$(pwd)
TEST_NAME=$(basename "$0" .sh)
# SLUICE_TEST_TRASH: run-tests.sh's own directory for a second run of a
# script (as nobody, or without Landlock); else one per script in the build.
TRASH=${SLUICE_TEST_TRASH:-"$SLUICE_BUILD/tests/trash.$TEST_NAME"}
FIXTURES="$TEST_DIRECTORY/../fixtures"
EXAMPLES="$TEST_DIRECTORY/../../examples"
rm -rf "$TRASH" && mkdir -p "$TRASH" || exit 1
cd "$TRASH" || exit 1
# the physical path, as git and the kernel print it (SLUICE_BUILD may hold ".." or links)
TRASH=$(pwd -P) && SLUICE_BUILD=$(cd "$SLUICE_BUILD" && pwd -P) || exit 1
export HOME="$TRASH/home" TMPDIR="$TRASH/tmp" XDG_DATA_HOME="$TRASH/home/.local/share"
mkdir -p "$HOME" "$TMPDIR"
export PATH="$SLUICE_BUILD:$SLUICE_BUILD/tests/helper:$PATH"
export GIT_AUTHOR_NAME="Test Author" GIT_AUTHOR_EMAIL="author@example.com"
export GIT_COMMITTER_NAME="Test Committer" GIT_COMMITTER_EMAIL="committer@example.com"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
unset SLUICE_STORE
# publish and sync space their mutating forge requests by a second; t6230 sets its own
export SLUICE_FORGE_WRITE_INTERVAL_MS=0

test_count=0 test_failed=0 test_skipped=0
test_prereqs=" " test_lazy_names=" "

# test_set_prereq NAME: this machine has NAME (a capability some tests need).
test_set_prereq() {
	test_prereqs="$test_prereqs$1 "
}

# test_lazy_prereq NAME 'script': NAME holds if SCRIPT succeeds; it runs in a
# subshell the first time a test asks for NAME, and its answer is kept.
test_lazy_prereq() {
	test_lazy_names="$test_lazy_names$1 "
	eval "test_lazy_script_$1=\$2"
}

# test_have_prereq A,B,!C: every listed prerequisite holds (!C: C does not).
test_have_prereq() {
	for p in $(printf '%s' "$1" | tr ',' ' '); do
		neg=
		case $p in !*) neg=1 p=${p#!} ;; esac
		case $test_lazy_names in *" $p "*)
			test_lazy_names=$(printf '%s' "$test_lazy_names" | sed "s/ $p / /")
			eval "script=\$test_lazy_script_$p"
			if ( eval "$script" ) >/dev/null 2>&1 </dev/null; then test_set_prereq "$p"; fi ;;
		esac
		case $test_prereqs in
		*" $p "*) [ -z "$neg" ] || return 1 ;;
		*) [ -n "$neg" ] || return 1 ;;
		esac
	done
	return 0
}

# What most machines have, but a CI runner or a container may lack.
test_lazy_prereq ROOT 'test "$(id -u)" = 0'
test_lazy_prereq SETPRIV 'command -v setpriv'
test_lazy_prereq SCRIPT 'command -v script'

# test_expect_success [PREREQS] 'title' 'body'
#
# The body is a chain of commands joined by && whose status is the test's.
# Before it runs it is checked: "(exit 117) && BODY" must exit 117, else a
# link of the chain is missing and a failure before the gap would go
# unnoticed; that is a bug in the test, reported as a failure.  A test whose
# prerequisites do not hold here is reported "ok N # skip ..." and counted
# as skipped, never as passed.
test_expect_success() {
	if [ -n "${SLUICE_TEST_TRACE:-}" ]; then set -x; fi
	test_prereq=
	if [ $# = 3 ]; then test_prereq=$1; shift; fi
	test_count=$((test_count + 1))
	if [ -n "$test_prereq" ] && ! test_have_prereq "$test_prereq"; then
		test_skipped=$((test_skipped + 1))
		echo "ok $test_count # skip $1 (missing $test_prereq)"
		return 0
	fi
	( eval "(exit 117) && $2" ) >"$TRASH/.lint.$test_count" 2>&1 </dev/null
	if [ $? != 117 ]; then
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $1"
		printf '%s\n' "bug in the test script: broken &&-chain:" "$2" | sed 's/^/#   /'
		return 0
	fi
	if ( eval "$2" ) >"$TRASH/.out.$test_count" 2>&1; then
		echo "ok $test_count - $1"
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $1"
		sed 's/^/#   /' "$TRASH/.out.$test_count"
	fi
}

test_done() {
	echo "# $((test_count - test_failed - test_skipped)) passed, $test_failed failed, $test_skipped skipped"
	[ "$test_failed" = 0 ]
	exit $?
}

test_cmp() { diff -u "$1" "$2"; }

test_must_fail() {
	"$@"
	rc=$?
	if [ $rc = 0 ]; then echo "test_must_fail: '$*' succeeded" >&2; return 1; fi
	if [ $rc -gt 125 ]; then echo "test_must_fail: '$*' died with $rc" >&2; return 1; fi
	return 0
}

test_expect_code() {
	want=$1; shift
	"$@"
	rc=$?
	if [ $rc != "$want" ]; then echo "test_expect_code: '$*' exited $rc, wanted $want" >&2; return 1; fi
	return 0
}

make_repo() {
	( cd "$1" && git init -q -b main && git add -A && git commit -q -m initial )
}

tree_digest() {
	( cd "$1" && find . -path ./.git -prune -o -print0 | sort -z |
	  xargs -0 stat -c '%n %a %s' && find . -path ./.git -prune -o -type f -print0 | sort -z |
	  xargs -0 sha1sum ) | sha1sum | cut -d' ' -f1
}
