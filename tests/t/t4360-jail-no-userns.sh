#!/bin/sh
test_description='without user namespaces: doctor names the setting that enables them, gates refuse to run unless --unsafe, which is recorded'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# SLUICE_TEST_NO_USERNS=1 makes every clone of a user namespace by the jail
# fail with EPERM, as under Ubuntu 24.04's AppArmor restriction.
no_userns() {
	env SLUICE_TEST_NO_USERNS=1 "$@"
}

# in_capped_userns CMD...: CMD as root of a new user namespace whose
# user.max_user_namespaces is 0: a real kernel refusal (ENOSPC), as on a
# node where the sysctl is 0.
in_capped_userns() {
	unshare -U -r sh -c 'echo 0 >/proc/sys/user/max_user_namespaces && exec "$@"' sh "$@"
}

test_lazy_prereq CAPPED_USERNS '
	in_capped_userns sh -c "test \"\$(cat /proc/sys/user/max_user_namespaces)\" = 0 && ! unshare -U true"
'

test_expect_success 'setup' '
	greet_repo repo &&
	write_campaign c.yaml
'

test_expect_success 'doctor says the user namespace is missing, why, and what enables it' '
	test_expect_code 1 no_userns sluice doctor >doc &&
	grep "^  userns         no   missing: no user namespace (clone: Operation not permitted) (SLUICE_TEST_NO_USERNS=1)" doc &&
	grep "^minimum for gates (userns, mntns, pidns, netns): no: gates refuse to run without --unsafe" doc &&
	grep "^user namespaces: no" doc &&
	if test -r /proc/sys/user/max_user_namespaces; then
		grep "^  user.max_user_namespaces = $(cat /proc/sys/user/max_user_namespaces)" doc
	fi &&
	test_expect_code 1 no_userns sluice doctor --json >doc.json &&
	jq -e ".minimum == false and .userns.available == false and
		(.userns.why | test(\"no user namespace .clone: Operation not permitted\")) and
		(.userns.settings | type == \"array\")" doc.json
'

test_expect_success 'doctor in a Kubernetes pod and on a Slurm node says what the pod or node needs' '
	test_expect_code 1 no_userns env KUBERNETES_SERVICE_HOST=127.0.0.1 sluice doctor >k8s &&
	grep "^  kubernetes: in a Kubernetes pod the node.s sysctls hold, .*seccompProfile Unconfined.*procMount: Unmasked" k8s &&
	grep "^  userns  .*in a Kubernetes pod" k8s &&
	test_expect_code 1 no_userns env -u KUBERNETES_SERVICE_HOST SLURM_JOB_ID=7 sluice doctor --json >slurm.json &&
	jq -e ".userns.where == \"slurm\" and (.userns.where_needs | test(\"/etc/sysctl.d/ on the compute nodes\"))" slurm.json &&
	sluice doctor --json >plain.json &&
	jq -e ".userns.available == true and (has(\"userns\") and (.userns | has(\"why\") | not))" plain.json
'

test_expect_success 'run and baseline refuse without the jail: exit 1, one line, nothing gated' '
	test_expect_code 1 no_userns sluice run --store s.db c.yaml >out 2>err &&
	grep "^sluice: gates refuse to run without the jail.s user, mount, pid and network namespaces: no user namespace (clone: Operation not permitted).*--unsafe runs them without" err &&
	test "$(store_query s.db "select count(*) from gate_runs")" = 0 &&
	test "$(store_query s.db "select count(*) from candidates")" = 0 &&
	test -z "$(git -C repo for-each-ref refs/heads/sluice)" &&
	test_expect_code 1 no_userns sluice baseline --store s.db c.yaml >out 2>err &&
	grep "^sluice: gates refuse to run without the jail.s user" err &&
	test "$(store_query s.db "select count(*) from gate_runs")" = 0
'

test_expect_success 'run --unsafe runs the gates without it and records so with every verdict' '
	no_userns sluice run --unsafe --store u.db c.yaml >out 2>err &&
	test "$(store_query u.db "select count(*) from gate_runs where gate = '"'"'build'"'"' and jail not like '"'"'unsafe: %'"'"'")" = 0 &&
	test "$(store_query u.db "select count(*) from gate_runs where gate = '"'"'build'"'"' and jail like '"'"'unsafe: mntns,%'"'"'")" -gt 0 &&
	id=$(store_query u.db "select id from candidates where state = '"'"'passed'"'"' limit 1") &&
	sluice show --store u.db "$id" >show &&
	grep "gate build .*\[UNSAFE JAIL\]" show
'

test_expect_success CAPPED_USERNS 'a node whose user.max_user_namespaces is 0: doctor and run name that setting' '
	test_expect_code 1 in_capped_userns sluice doctor >doc &&
	grep "^  userns         no   missing: no user namespace (clone: No space left on device); user.max_user_namespaces is 0: sysctl -w user.max_user_namespaces=" doc &&
	grep "^  user.max_user_namespaces = 0: refuses them; enable: sysctl -w user.max_user_namespaces=" doc &&
	test_expect_code 1 in_capped_userns sluice run --store m.db c.yaml >out 2>err &&
	grep "^sluice: gates refuse to run .*user.max_user_namespaces is 0: sysctl -w user.max_user_namespaces=" err &&
	test "$(store_query m.db "select count(*) from gate_runs")" = 0
'

test_done
