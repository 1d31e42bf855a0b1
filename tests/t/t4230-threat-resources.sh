#!/bin/sh
test_description='threats on resources: fork bomb, memory, CPU, disk, output flood, daemons'
. ./test-lib.sh

mkdir work
cp "$SLUICE_BUILD/tests/helper/threat" work/threat
echo kept >work/kept
before=$(tree_digest work)
root=no
test "$(id -u)" = 0 && root=yes

# no process whose command line matches $1 is left on the host (each
# pattern names this run's own processes: the script runs in four modes at
# once, and other checkouts' suites may run beside it)
none_left() {
	! pgrep -f -- "$1"
}

test_expect_success 'a fork bomb is bounded and leaves nothing behind' '
	jail-run --pids 64 --timeout 20000 work "./threat forkbomb 5000 $$" >out &&
	n=$(sed -n "s/^forked //p" out) &&
	test "$n" -lt 512 &&
	if test $root = yes; then test "$n" -lt 64; fi &&
	{ jail-run --timeout 3000 work ":(){ :|:& };: 2>/dev/null; sleep 1; echo survived" >out2; rc=$?; } &&
	test $rc != 125 &&
	none_left "./threat forkbomb 5000 $$\$"
'

test_expect_success 'several processes allocating memory hit the cgroup limit (or the run refuses)' '
	{ jail-run --mem-mb 128 --layers layers --timeout 20000 work "./threat memhog 4 64" >out 2>err; rc=$?; } &&
	if test $rc = 125; then
		# no memory cgroup for this user: asked for, so refused (t4250)
		grep "memory limit of 128 MiB asked for" err
	else
		test $rc = 0 && grep -q cgroup-memory layers &&
		grep -x oom layers && ! grep -x "survivors 4" out
	fi
'

test_expect_success 'a CPU loop ends at the timeout (124) and nothing of it survives' '
	m=spin4230$$ &&
	test_expect_code 124 jail-run --timeout 1000 work "while :; do : $m; done & while :; do : $m; done" &&
	none_left "while :; do : $m; done"
'

test_expect_success 'a disk fill hits the size cap of the overlay; the host worktree is unchanged' '
	jail-run --disk-mb 8 work "dd if=/dev/zero of=big bs=1M count=64 2>&1 | grep -o \"No space left on device\" | head -1;
		rm big; echo changed >kept; cat kept" >out &&
	printf "No space left on device\nchanged\n" >expect &&
	test_cmp expect out &&
	test "$before" = "$(tree_digest work)"
'

test_expect_success 'a /tmp fill hits the size of /tmp' '
	jail-run --tmp-mb 4 work "dd if=/dev/zero of=/tmp/big bs=1M count=64 2>&1 | grep -o \"No space left on device\" | head -1" >out &&
	echo "No space left on device" >expect &&
	test_cmp expect out
'

test_expect_success 'an output flood is capped and does not hang' '
	test_expect_code 124 jail-run --cap 1000 --timeout 2000 work "yes flood" >out &&
	test $(wc -c <out) -le 1000 &&
	jail-run --cap 1000 --timeout 120000 work "head -c 50000000 /dev/zero; echo end" >out2 &&
	test $(wc -c <out2) = 1000 &&
	test "$(tail -c 4 out2)" = "end"
'

test_expect_success 'daemons that try to outlive the gate do not' '
	m=4230$$ &&
	jail-run work "(setsid sleep 301$m &); (nohup sleep 302$m >/dev/null 2>&1 &);
		sh -c \"trap \\\"\\\" HUP TERM; sleep 303$m\" & echo started" >out &&
	echo started >expect &&
	test_cmp expect out &&
	none_left "sleep 301$m\$" && none_left "sleep 302$m\$" && none_left "sleep 303$m\$"
'

test_done
