#!/bin/sh
test_description='threats on the host itself: device nodes, /proc, setuid files, disk, inotify, terminal, host paths, memory and CPU without cgroups, and the limits a real suite needs'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# run-tests.sh runs this script as root and as nobody, with and without
# Landlock: every check below must hold on the other layers alone.
mkdir work
cp "$SLUICE_BUILD/tests/helper/threat" work/threat
root=no
test "$(id -u)" = 0 && root=yes
host_id=$(id -u)
test $root = yes && host_id=65534

test_expect_success 'device nodes: no chmod, no utimes; writing to them still works' '
	before=$(stat -c "%a %X %Y %Z" /dev/null /dev/full /dev/zero) &&
	jail-run work "chmod 000 /dev/null 2>/dev/null && echo chmod-null;
		chmod 666 /dev/full 2>/dev/null && echo chmod-full;
		touch -d @0 /dev/full /dev/null 2>/dev/null && echo touched;
		mknod /tmp/mem c 1 1 2>/dev/null && echo mknod;
		echo x >/dev/null && echo null-writable;
		head -c 4 /dev/zero | wc -c" >out &&
	printf "null-writable\n4\n" >expect &&
	test_cmp expect out &&
	after=$(stat -c "%a %X %Y %Z" /dev/null /dev/full /dev/zero) &&
	test "$before" = "$after"
'

test_expect_success '/proc: root-only kernel files masked, sysctls read-only, no /sys' '
	core=$(cat /proc/sys/kernel/core_pattern) &&
	jail-run work "
		for f in kcore kpageflags kpagecount kpagecgroup kallsyms slabinfo timer_list \
			sched_debug keys key-users latency_stats vmallocinfo iomem kmsg; do
			head -c 1 /proc/\$f >/dev/null 2>&1 && echo read \$f; done;
		for f in sys/kernel/core_pattern sys/kernel/sysrq sys/vm/drop_caches \
			sys/fs/inotify/max_user_instances sysrq-trigger; do
			( : >>/proc/\$f ) 2>/dev/null && echo open-write \$f; done;
		find /proc/acpi /proc/scsi /proc/driver -mindepth 1 2>/dev/null;
		test -e /sys && echo sys-present;
		cat /proc/sys/kernel/ostype" >out &&
	echo Linux >expect &&
	test_cmp expect out &&
	test "$core" = "$(cat /proc/sys/kernel/core_pattern)"
'

test_expect_success 'every writable mount is nosuid and nodev; a setuid file gains nothing' '
	jail-run work "awk \"\\\$6 ~ /(^|,)rw(,|\\\$)/ && \\\$5 != \\\"/dev/pts\\\" &&
			(\\\$6 !~ /nosuid/ || \\\$6 !~ /nodev/) { print \\\$5 }\" /proc/self/mountinfo;
		cp threat suid && chmod 4755 suid && ./suid euid" >out &&
	echo "euid 1000" >expect &&
	test_cmp expect out &&
	test ! -e work/suid &&
	jail-run --writable 1 work "cp threat suid && chmod 4755 suid && ./suid euid" >out &&
	test_cmp expect out &&
	test "$(stat -c %u work/suid)" = $host_id &&
	test -z "$(find work -perm -4000 -uid 0)" &&
	rm -f work/suid
'

test_expect_success 'disk: the worktree is written through a capped overlay by default' '
	du_before=$(du -sk work | cut -f1) &&
	jail-run work "df -m /src | awk \"NR == 2 { print \\\$2 }\"" >out &&
	echo 2048 >expect &&
	test_cmp expect out &&
	jail-run --disk-mb 16 work "dd if=/dev/zero of=big bs=1M count=64 2>&1 |
		grep -o \"No space left on device\" | head -1; ls -s big | cut -d\" \" -f1" >out &&
	n=$(sed -n 2p out) &&
	test "$(sed -n 1p out)" = "No space left on device" &&
	test "$n" -le 16384 &&
	test ! -e work/big &&
	test "$du_before" = "$(du -sk work | cut -f1)"
'

test_expect_success 'inotify: the jail takes a share of the host user'"'"'s budget, never all of it' '
	mkfifo work/ready work/go &&
	max=$(cat /proc/sys/fs/inotify/max_user_instances) &&
	test -p work/go &&
	{ jail-run --writable 1 --timeout 60000 work "./threat inotify 100000 /src/go >/src/ready" >jailout & } &&
	jail=$! &&
	{
		timeout 60 head -n 1 work/ready >held
		threat inotify-one >host
		timeout 60 sh -c "echo go >work/go"
	} &&
	wait $jail &&
	rm -f work/ready work/go &&
	n=$(cut -d" " -f2 held) &&
	test "$(cut -d" " -f3 held)" = EMFILE &&
	test "$n" -ge 1 && test "$n" -le $((max / 8)) &&
	echo "inotify ok" >expect &&
	test_cmp expect host
'

test_expect_success 'host paths: not in mountinfo, not in the .git pointer' '
	wpath=$(cd work && pwd -P) &&
	echo "gitdir: $TRASH/repo/.git/worktrees/w" >work/.git &&
	jail-run work "cat /proc/self/mountinfo /proc/1/mountinfo /proc/self/mounts;
		cat /src/.git; pwd; (echo x >.git) 2>/dev/null && echo wrote-git; true" >out &&
	rm work/.git &&
	grep -x "gitdir: /nonexistent" out &&
	! grep -F -e "$TRASH" -e "$wpath" -e "$TMPDIR" -e "$SLUICE_BUILD" out &&
	! grep -q wrote-git out
'

test_expect_success 'memory: a limit asked for holds, or the run refuses (no per-process loophole)' '
	{ jail-run --mem-mb 128 --layers layers --timeout 30000 work "./threat memhog 3 96" >out 2>err; rc=$?; } &&
	if test $root = yes; then
		test $rc = 0 &&
		grep -q cgroup-memory layers && grep -x oom layers && ! grep -x "survivors 3" out
	else
		test $rc = 125 &&
		grep "memory limit of 128 MiB asked for" err &&
		jail-run --mem-mb 128 --accept memory work "./threat memhog 1 256" >out &&
		echo "survivors 0" >expect &&
		test_cmp expect out
	fi
'

test_expect_success 'CPU: a quota holds three spinners, or the run refuses' '
	start=$(date +%s%N) &&
	{ jail-run --cpus-milli 500 --timeout 3000 --layers layers work \
		"for i in 1 2 3; do (while :; do :; done) & done; wait" 2>err; rc=$?; } &&
	wall_ms=$(( ($(date +%s%N) - start) / 1000000 )) &&
	if test $root = yes; then
		test $rc = 124 &&
		grep -q cgroup-cpu layers &&
		cpu=$(sed -n "s/^cpu_ms //p" layers) &&
		echo "cpu $cpu ms in $wall_ms ms" &&
		test "$cpu" -le $((wall_ms / 2 + 200))
	else
		test $rc = 125 &&
		grep "CPU quota of 0.500 CPUs asked for" err &&
		jail-run --cpus-milli 500 --accept cpu --layers layers work "true" &&
		! grep -q cgroup-cpu layers
	fi
'

test_expect_success 'terminal: gate output reaches the terminal neutralised; the store keeps it exact' '
	mkdir repo &&
	echo "int f(void) { return old_api(); }" >repo/m.c &&
	make_repo repo &&
	cat >c.yaml <<-EOF &&
	name: esc
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  capture: call
	rules:
	  - {capture: call, template: "new_api()"}
	attempts: 1
	gates:
	  - name: evil
	    command: "if grep -q new_api m.c; then printf \"\\\\033]0;pwned\\\\007\\\\033]52;c;cHduZWQ=\\\\007\\\\033[6n\\\\302\\\\233\"; exit 1; fi"
	EOF
	test_expect_code 1 sluice run --store s.db c.yaml >out &&
	id=$(store_query s.db "select id from candidates limit 1") &&
	store_query s.db "select hex(output_tail) from gate_runs where gate = '"'"'evil'"'"' and verdict = '"'"'fail'"'"'" >hex &&
	grep -q "1B5D303B70776E6564071B5D35323B633B634864755A57513D071B5B366EC29B" hex &&
	script -qec "sluice show --store s.db $id; sluice show --json --store s.db $id; sluice status --store s.db" typescript >/dev/null &&
	test "$(tr -d -c "\\033\\007" <typescript | wc -c)" = 0 &&
	! grep -q "$(printf "\\302\\233")" typescript &&
	grep -F "^[]0;pwned^G^[]52;c;cHduZWQ=^G^[[6n\\xc2\\x9b" typescript &&
	grep -F "\\u001B]0;pwned\\u0007" typescript
'

test_expect_success 'a terminal of its own inside, never the caller'"'"'s' '
	jail-run work "script -qec \"test -t 0 && test -t 1 && echo tty\" /dev/null | tr -d \"\\r\";
		(: >/dev/tty) 2>/dev/null || echo no-ctty; ./threat tiocsti | grep -c \" ok\"; true" >out &&
	printf "tty\nno-ctty\n0\n" >expect &&
	test_cmp expect out
'

test_expect_success 'sanitizer builds run: no address-space limit unless asked' '
	jail-run --timeout 120000 work "ulimit -v;
		printf \"#include <stdlib.h>\\nint main(void){char *p = malloc(4); p[0] = 1; return 0;}\\n\" >/tmp/a.c &&
		gcc -fsanitize=address -o /tmp/a /tmp/a.c && /tmp/a 2>&1 | grep -o \"detected memory leaks\"" >out &&
	printf "unlimited\ndetected memory leaks\n" >expect &&
	test_cmp expect out &&
	jail-run --as-mb 4096 work "ulimit -v" >out &&
	echo 4194304 >expect &&
	test_cmp expect out
'

test_expect_success 'the process limit follows pids (no fixed 512)' '
	jail-run --pids 2000 work "ulimit -p 2>/dev/null || grep \"Max processes\" /proc/self/limits" >out &&
	grep -q 2000 out &&
	jail-run --pids 2000 work "./threat forkbomb 700" >out &&
	echo "forked 700" >expect &&
	test_cmp expect out
'

test_done
