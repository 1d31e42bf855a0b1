#!/bin/sh
test_description='threats on files: host secrets, writes outside, /proc/1/environ, inherited descriptors'
. ./test-lib.sh

# A secret in the test's $HOME, a sibling worktree and a store file next to
# the workdir, and the jail's host process environment carrying a token.
mkdir -p work sibling "$HOME/.ssh"
echo "ssh-key-canary-4200" >"$HOME/.ssh/id_rsa"
echo "sibling data" >sibling/a
sqlite3 store.db "create table t(x); insert into t values ('store-canary-4200');"
snapshot() {
	tree_digest sibling; sha1sum "$HOME/.ssh/id_rsa" store.db
	ls -la "$HOME/.ssh"; ls "$TRASH" | grep -v -x -e out -e expect
}
before=$(snapshot)

test_expect_success 'host secrets cannot be read' '
	jail-run --timeout 30000 work "
		cat \"$HOME/.ssh/id_rsa\" 2>/dev/null && echo read-key;
		cat \"$TRASH/store.db\" 2>/dev/null && echo read-store;
		ls /root /home \"$HOME\" 2>/dev/null && echo listed;
		grep -r -l -s -D skip --exclude-dir=proc --exclude-dir=usr ssh-key-canary-4200 /;
		find / -path /proc -prune -o -name id_rsa -print 2>/dev/null; echo searched" >out &&
	echo searched >expect &&
	test_cmp expect out
'

test_expect_success 'writes outside the workdir fail and change nothing' '
	jail-run work "
		for f in \"$HOME/.ssh/id_rsa\" \"$TRASH/sibling/a\" \"$TRASH/store.db\" \
			\"$TRASH/new\" /src/../escape /tmp/../etc/x /usr/x /etc/passwd; do
			(echo pwned >>\"\$f\") 2>/dev/null && echo wrote \$f; done;
		ln -s /etc/passwd /src/link-out 2>/dev/null; echo pwned 2>/dev/null >>/src/link-out &&
			echo wrote-through-link;
		echo done" >out &&
	echo done >expect &&
	test_cmp expect out &&
	test ! -e "$TRASH/new" && test ! -e "$TRASH/escape" &&
	test "$before" = "$(snapshot)"
'

test_expect_success '/proc/1/environ and every environ in the jail are free of host secrets' '
	SLUICE_API_KEY=sk-4200-secret GITHUB_TOKEN=gh-4200-secret jail-run work "
		n=4200;
		cat /proc/1/environ 2>/dev/null | tr \"\\0\" \"\\n\" | grep -c \$n-secret;
		cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null |
			tr \"\\0\" \"\\n\" | grep -c \"\$n-[s]ecret\"; env | grep -c \$n-secret; true" >out &&
	printf "0\n0\n0\n" >expect &&
	test_cmp expect out
'

test_expect_success 'inherited descriptors are not visible inside' '
	cp "$SLUICE_BUILD/tests/helper/threat" work/threat &&
	exec 7<"$HOME/.ssh/id_rsa" 8>>"$TRASH/store.db" &&
	{
		jail-run work "./threat fds; cat 2>/dev/null <&7 && echo read-fd7;
			echo pwned 2>/dev/null >&8 && echo wrote-fd8; true" >out
		rc=$?
		exec 7<&- 8>&-
	} &&
	test $rc = 0 &&
	echo "fds above 2: 0" >expect &&
	test_cmp expect out &&
	test "$before" = "$(snapshot)"
'

test_done
