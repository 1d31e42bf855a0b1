#!/bin/sh
test_description='the jail contains a hostile command (network, files, processes)'
. ./test-lib.sh

# Layout in the trash directory:
#   work/      the workdir, bound read-write at /src
#   sibling/   another candidate's worktree next to it: must stay untouched
#   canary     a secret outside the workdir: must stay unreadable
mkdir -p work sibling/sub
echo "sibling data" >sibling/a
echo "more" >sibling/sub/b
echo "canary-secret-4000" >canary
echo "in work" >work/file
before=$(tree_digest sibling; sha1sum canary)

test_expect_success 'output and exit status come back' '
	test_expect_code 3 jail-run work "cat file; echo err >&2; exit 3" >out &&
	printf "in work\nerr\n" >expect &&
	test_cmp expect out
'

test_expect_success 'a timeout kills the command (exit 124)' '
	test_expect_code 124 jail-run --timeout 300 work "sleep 60"
'

test_expect_success 'writes to the workdir stay in the overlay; with --writable 1 they reach the host' '
	jail-run work "echo from-jail >made; echo changed >file; cat made file" >out &&
	printf "from-jail\nchanged\n" >expect &&
	test_cmp expect out &&
	test ! -e work/made &&
	echo "in work" >expect &&
	test_cmp expect work/file &&
	jail-run --writable 1 work "echo from-jail >made" &&
	echo from-jail >expect &&
	test_cmp expect work/made &&
	rm work/made
'

test_expect_success 'writes to /, /usr, /etc and /bin fail' '
	n=sluice-t4000-$$ &&
	{
		jail-run work "for p in /$n /usr/$n /etc/$n /bin/$n; do
			touch \$p 2>/dev/null && echo wrote \$p; done; echo done" >out
		rc=$?
		rm -f "/usr/$n" "/etc/$n" "/bin/$n"
	} &&
	test $rc = 0 &&
	echo done >expect &&
	test_cmp expect out
'

test_expect_success 'the canary outside the workdir cannot be read or written' '
	test_must_fail jail-run work "cat \"$TRASH/canary\"" &&
	test_must_fail jail-run work "echo pwned >\"$TRASH/canary\"" &&
	test_must_fail jail-run work "cat /src/../canary" &&
	jail-run --timeout 60000 work "find / -path /proc -prune -o -name canary -print 2>/dev/null; echo searched" >out &&
	echo searched >expect &&
	test_cmp expect out &&
	echo canary-secret-4000 >expect &&
	test_cmp expect canary
'

test_expect_success 'only the toolchain and the jail tree are visible at /' '
	jail-run work "ls /" >out &&
	printf "%s\n" bin dev etc lib lib32 lib64 libx32 proc sbin src tmp usr >all &&
	{ grep -v -x -F -f all out >extra || :; } &&
	test ! -s extra &&
	test_must_fail jail-run work "ls /work /root /home /var 2>/dev/null"
'

test_expect_success 'a TCP connection to a host listener fails inside' '
	rm -f port &&
	{ jail-run --listen port 60 >accepted & } &&
	i=0 &&
	while test ! -s port && test $i -lt 600; do sleep 0.1; i=$((i + 1)); done &&
	PORT=$(cat port) &&
	test_must_fail jail-run work "bash -c \"echo from-jail >/dev/tcp/127.0.0.1/$PORT\"" &&
	bash -c "echo from-host >/dev/tcp/127.0.0.1/$PORT" &&
	wait &&
	echo from-host >expect &&
	test_cmp expect accepted
'

test_expect_success 'the host processes and their environment are out of reach' '
	SLUICE_TOKEN=tok-4000-secret jail-run work "
		cat /proc/1/comm;
		cat /proc/1/environ 2>/dev/null || echo no-environ;
		test -e /proc/$$ || echo no-host-pid;
		cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null |
			tr \"\\0\" \"\\n\" | grep -c \"tok-4000-[s]ecret\"; true" >out &&
	printf "sluice-init\nno-environ\nno-host-pid\n0\n" >expect &&
	test_cmp expect out
'

test_expect_success 'a daemon does not outlive its gate' '
	marker=301.$$4000 &&
	jail-run work "(setsid sleep $marker &); echo started" >out &&
	echo started >expect &&
	test_cmp expect out &&
	! grep -a -l "slee[p].$marker" /proc/[0-9]*/cmdline 2>/dev/null
'

test_expect_success 'a setup failure is an error (exit 125) with the reason' '
	test_expect_code 125 jail-run work/file "true" 2>err &&
	grep "bind /src: Not a directory" err
'

# As root the jail's user is host nobody; as anyone else, that user.
host_id=$(id -u)
test "$host_id" = 0 && host_id=65534

test_expect_success 'uid 1000 inside, an unprivileged host id outside, no capabilities' '
	jail-run work "id -u; id -g; id -G; cat /proc/self/uid_map /proc/self/gid_map;
		grep -E \"^Cap(Eff|Prm|Bnd)\" /proc/self/status" >out &&
	tr -s " \t" " " <out >got &&
	printf "1000\n1000\n1000\n 1000 %s 1\n 1000 %s 1\nCapPrm: 0000000000000000\nCapEff: 0000000000000000\nCapBnd: 0000000000000000\n" \
		"$host_id" "$host_id" >expect &&
	test_cmp expect got &&
	jail-run --writable 1 work "echo x >owned" &&
	test "$(stat -c %u:%g work/owned)" = "$host_id:$( [ $host_id = 65534 ] && echo 65534 || id -g)" &&
	rm work/owned
'

test_expect_success 'the other siblings are unchanged' '
	after=$(tree_digest sibling; sha1sum canary) &&
	test "$before" = "$after"
'

test_expect_success 'the jail dies with its supervisor (kill -9), also after pid 1 took the jail ids' '
	m="sleep 91.4000$$" &&
	{ jail-run work "$m" >/dev/null 2>&1 & jr=$!; } &&
	n=0 &&
	while ! pgrep -f "$m\$" >/dev/null && test $n -lt 600; do sleep 0.1; n=$((n + 1)); done &&
	pgrep -f "$m\$" >/dev/null &&
	kill -9 $jr &&
	{ wait $jr; true; } &&
	n=0 &&
	while pgrep -f "$m\$" >/dev/null && test $n -lt 600; do sleep 0.1; n=$((n + 1)); done &&
	! pgrep -f "$m\$"
'

test_done
