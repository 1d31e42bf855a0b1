#!/bin/sh
test_description='a stop while the warm base is prepared: the run stops with its own message, no false overlay error, no baseline, the half-made base never marked ready'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

# the preparing gate writes "preparing" into the tree it prepares, then blocks
test_expect_success 'setup: a campaign whose preparing gate blocks' '
	greet_repo repo &&
	write_campaign c.yaml &&
	sed -i "s/^  - name: build$/  - name: prep\n    command: \": >preparing; sleep 600\"\n    timeout: 900\n    prepare: true\n  - name: build/" c.yaml &&
	grep -q "prepare: true" c.yaml
'

for sig in INT TERM
do
	test_expect_success "SIG$sig while the warm base is prepared stops the run cleanly" '
		rm -rf scratch &&
		{ sluice run --store $sig.db c.yaml >out 2>err & pid=$!; } &&
		poll "test -n \"\$(find scratch -path \"*/warm-*/tree/preparing\" 2>/dev/null)\" || ! kill -0 $pid 2>/dev/null" &&
		kill -$sig $pid &&
		{ wait $pid; rc=$?; } &&
		cat err &&
		case $sig in INT) test $rc = 130 ;; TERM) test $rc = 143 ;; esac &&
		grep -q "^sluice: stopped by SIG$sig; .sluice run. resumes$" err &&
		! grep -q "cannot mount an overlay" err &&
		! grep -q "a worktree per candidate" err &&
		! grep -q "^baseline:" err &&
		test "$(sqlite3 $sig.db "select count(*) from baselines")" = 0 &&
		test -n "$(find scratch -name "warm-*")" &&
		test -z "$(find scratch -path "*/warm-*/ready")"
	'
done

test_done
