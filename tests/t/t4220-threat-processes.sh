#!/bin/sh
test_description='threats on processes and privileges: signals, ptrace, setuid, namespaces, mount, TIOCSTI'
. ./test-lib.sh

mkdir work
cp "$SLUICE_BUILD/tests/helper/threat" work/threat

test_expect_success 'a host process can be neither signalled nor ptraced' '
	{ sleep 300 & victim=$!; } &&
	{
		jail-run work "./threat kill $victim; ./threat ptrace $victim; kill -9 -1 2>/dev/null; true" >out
		rc=$?
		alive=no
		kill -0 $victim && alive=yes
		kill $victim
		wait
	} &&
	{ test $rc = 137 || test $rc = 0; } &&
	test $alive = yes &&
	printf "kill denied: ESRCH\nptrace denied: ESRCH\n" >expect &&
	test_cmp expect out
'

test_expect_success 'ptrace works on its own children only (leak sanitizers need it)' '
	jail-run work "./threat ptrace-child; ./threat ptrace 1" >out &&
	printf "ptrace-child ok\nptrace denied: EPERM\n" >expect &&
	test_cmp expect out
'

test_expect_success 'a setuid binary in the worktree gains nothing' '
	cp work/threat work/suid && chmod 4755 work/suid &&
	ls -l work/suid | grep -q "^-rwsr-xr-x" &&
	jail-run work "./suid euid; su -c id root </dev/null >/dev/null 2>&1 && echo su-worked;
		grep CapEff /proc/self/status" >out &&
	printf "euid 1000\nCapEff:\t0000000000000000\n" >expect &&
	test_cmp expect out
'

test_expect_success 'no new user namespaces' '
	jail-run work "./threat userns; unshare -U -r true 2>/dev/null && echo unshare-worked;
		cat /proc/sys/user/max_user_namespaces" >out &&
	printf "unshare-user denied: EPERM\nclone-user denied: EPERM\n0\n" >expect &&
	test_cmp expect out
'

# the host's mounts this test could have caused: under its trash directory
# or the jail's own directories (other processes on a shared machine mount
# and unmount elsewhere while it runs)
our_mounts() {
	grep -e "$TRASH" -e sluice-jail /proc/self/mountinfo | sort
}

test_expect_success 'no mounts, and the host mount table is unchanged' '
	our_mounts >before &&
	jail-run work "./threat mount; mount -t tmpfs none /tmp 2>/dev/null && echo mounted; true" >out &&
	printf "mount-tmpfs denied: EPERM\nremount-root denied: EPERM\numount-src denied: EPERM\n" >expect &&
	test_cmp expect out &&
	our_mounts >after &&
	test_cmp before after
'

test_expect_success SCRIPT 'TIOCSTI, with and without high bits, injects nothing into the terminal' '
	cat >pty.sh <<-EOF &&
	stty -echo -icanon min 0 time 0
	jail-run work "./threat tiocsti" >inside
	line=\$(dd bs=64 count=1 2>/dev/null | tr -d "\\004")
	if test -n "\$line"; then echo "injected: \$line"; else echo clean; fi
	EOF
	script -qec "sh pty.sh" /dev/null </dev/null >typescript 2>&1 &&
	grep -q "clean" typescript &&
	! grep "injected" typescript &&
	! grep " ok$" inside &&
	grep -x "tiocsti-high fd 0 denied: EPERM" inside &&
	grep -x "open /dev/tty denied: ENOENT" inside
'

test_done
