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
export HOME="$TRASH/home" TMPDIR="$TRASH/tmp" XDG_DATA_HOME="$TRASH/home/.local/share"
mkdir -p "$HOME" "$TMPDIR"
export PATH="$SLUICE_BUILD:$SLUICE_BUILD/tests/helper:$PATH"
export GIT_AUTHOR_NAME="Test Author" GIT_AUTHOR_EMAIL="author@example.com"
export GIT_COMMITTER_NAME="Test Committer" GIT_COMMITTER_EMAIL="committer@example.com"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
unset SLUICE_STORE

test_count=0 test_failed=0

test_expect_success() {
	if [ -n "${SLUICE_TEST_TRACE:-}" ]; then set -x; fi
	test_count=$((test_count + 1))
	if ( set -e; eval "$2" ) >"$TRASH/.out.$test_count" 2>&1; then
		echo "ok $test_count - $1"
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $1"
		sed 's/^/#   /' "$TRASH/.out.$test_count"
	fi
}

test_done() {
	echo "# $((test_count - test_failed)) passed, $test_failed failed"
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
