#!/bin/sh
test_description='the jail as an ordinary user: disk_mb holds while a gate runs, doctor tells what holds, a gate out of memory says so'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# as_user CMD...: CMD as an ordinary user: ourselves, or nobody when we are
# root (setpriv), in $TRASH/u, which that user owns, with its own TMPDIR
# and HOME, and a copy of sluice it may run.
as_user() {
	if [ "$(id -u)" = 0 ]; then
		( cd "$TRASH/u" && setpriv --reuid=65534 --regid=65534 --clear-groups \
			env HOME="$TRASH/u/home" TMPDIR="$TRASH/u/tmp" PATH="$TRASH/u/bin:$PATH" "$@" )
	else
		( cd "$TRASH/u" && env HOME="$TRASH/u/home" TMPDIR="$TRASH/u/tmp" \
			PATH="$TRASH/u/bin:$PATH" "$@" )
	fi
}

# as root: nobody must reach the build (a clone under a 0700 mktemp -d does not)
test_lazy_prereq ORDINARY 'test "$(id -u)" != 0 || { command -v setpriv &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$(command -v sluice)"; }'

test_expect_success 'setup' '
	mkdir -p u/repo/src u/bin u/home u/tmp &&
	cp "$SLUICE_BUILD/sluice" u/bin/ &&
	{
		echo "int old_api(int x) { return x; }"
		echo "int f1(void) { return old_api(1); }"
	} >u/repo/src/m.c &&
	make_repo u/repo &&
	cat >u/c.yaml <<-EOF &&
	name: capped
	repository: repo
	scratch: $TRASH/u/scratch
	jail: {disk_mb: 8}
	targets:
	  language: c
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  capture: call
	rules:
	  - {capture: call, template: "new_api(1)"}
	attempts: 1
	gates:
	  - name: fill
	    command: "if grep -q new_api src/m.c; then dd if=/dev/zero of=big bs=1M count=20 2>&1 || { echo refused; exit 1; }; fi"
	EOF
	chmod -R a+rX u &&
	if [ "$(id -u)" = 0 ]; then chown -R 65534:65534 u; fi
'

test_expect_success ORDINARY 'as an ordinary user a gate writing beyond disk_mb is refused while it runs' '
	test_expect_code 1 as_user sluice run --store s.db c.yaml >out &&
	as_user sqlite3 s.db "select output_tail from gate_runs where gate = '"'"'fill'"'"' and verdict = '"'"'fail'"'"'" >tail &&
	grep "No space left on device" tail &&
	grep "refused" tail &&
	grep "sluice: the candidate.s layer is full: writes beyond jail.disk_mb 8 fail" tail &&
	as_user sluice show --store s.db 1 >show &&
	grep "jail.disk_mb 8" show &&
	test -z "$(find "$TRASH" -name big)"
'

test_expect_success ORDINARY 'doctor as an ordinary user: the layer is a tmpfs in a user namespace, no cgroup claimed that is missing' '
	as_user sluice doctor >doc &&
	grep "^candidates. layers (jail.disk_mb): a tmpfs of disk_mb MiB each, in a user namespace of its own" doc &&
	! grep "mounted by root" doc &&
	if grep "^  cgroup-memory  yes" doc; then
		grep "^memory (jail.memory_mb): a cgroup" doc
	else
		grep "^memory (jail.memory_mb): per process only (RLIMIT_DATA)" doc
	fi &&
	as_user sluice doctor --json >doc.json &&
	grep "\"disk\": \"tmpfs-userns\"" doc.json
'

test_expect_success ORDINARY 'where the kernel refuses that tmpfs, doctor says the layer is measured, and the gate fails afterwards' '
	as_user env SLUICE_TEST_NO_LAYER_TMPFS=1 sluice doctor >doc &&
	grep "^candidates. layers (jail.disk_mb): a host directory each, measured after every gate: .* may fill the host.s disk (refused (SLUICE_TEST_NO_LAYER_TMPFS=1))" doc &&
	test_expect_code 1 as_user env SLUICE_TEST_NO_LAYER_TMPFS=1 sluice run --store f.db c.yaml >out &&
	as_user sqlite3 f.db "select output_tail from gate_runs where gate = '"'"'fill'"'"' and verdict = '"'"'fail'"'"'" >tail &&
	! grep "No space left on device" tail &&
	grep "sluice: the gate left 20 MiB in the candidate.s layer, over its cap of 8 MiB (jail.disk_mb)" tail
'

test_expect_success ROOT 'doctor as root: the layer is a tmpfs root mounts, memory a cgroup' '
	sluice doctor >doc &&
	grep "^candidates. layers (jail.disk_mb): a tmpfs of disk_mb MiB each, mounted by root" doc &&
	grep "^  cgroup-memory  yes" doc &&
	grep "^memory (jail.memory_mb): a cgroup" doc &&
	sluice doctor --json >doc.json &&
	grep "\"disk\": \"tmpfs-root\"" doc.json
'

test_expect_success 'a gate that allocates beyond memory_mb is reported as out of memory, naming the limit' '
	mkdir -p m/src &&
	cp u/repo/src/m.c m/src/ &&
	cat >m/eat.sh <<-\EOF &&
	grep -q new_api src/m.c || exit 0
	s=$(head -c 400000000 /dev/zero | tr "\\0" a)
	echo "held ${#s} bytes"
	EOF
	make_repo m &&
	cat >m.yaml <<-EOF &&
	name: hungry
	repository: m
	scratch: $TRASH/mscratch
	jail: {memory_mb: 64, unenforced: [memory]}
	targets:
	  language: c
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  capture: call
	rules:
	  - {capture: call, template: "new_api(1)"}
	attempts: 1
	gates:
	  - name: eat
	    command: "bash eat.sh"
	EOF
	test_expect_code 1 sluice run --store m.db m.yaml >out &&
	sqlite3 m.db "select output_tail from gate_runs where gate = '"'"'eat'"'"' and verdict = '"'"'fail'"'"'" >tail &&
	grep "out of memory.*jail.memory_mb 64" tail &&
	sluice show --store m.db 1 >show &&
	grep "out of memory.*jail.memory_mb 64" show
'

test_expect_success 'an allocation refused under address_space_mb is reported naming it' '
	sed -e "s/^name: hungry/name: spacebound/" \
	    -e "s/memory_mb: 64, unenforced: .memory./address_space_mb: 300/" m.yaml >a.yaml &&
	grep "address_space_mb: 300" a.yaml &&
	test_expect_code 1 sluice run --store a.db a.yaml >out &&
	sqlite3 a.db "select output_tail from gate_runs where gate = '"'"'eat'"'"' and verdict = '"'"'fail'"'"'" >tail &&
	grep "cannot allocate" tail &&
	grep "out of memory: an allocation failed under jail.address_space_mb 300" tail
'

test_expect_success ORDINARY 'as an ordinary user too, a gate out of memory names memory_mb' '
	cp -R m m.yaml u/ &&
	sed -e "s|$TRASH/mscratch|$TRASH/u/mscratch|" m.yaml >u/m.yaml &&
	if [ "$(id -u)" = 0 ]; then chown -R 65534:65534 u; fi &&
	test_expect_code 1 as_user sluice run --store m.db m.yaml >out &&
	as_user sqlite3 m.db "select output_tail from gate_runs where gate = '"'"'eat'"'"' and verdict = '"'"'fail'"'"'" >tail &&
	grep "out of memory.*jail.memory_mb 64" tail
'

test_done
