#!/bin/sh
test_description='gates decide: a broken candidate is rejected and not proposed; hostile gates stay inside'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'setup' '
	greet_repo repo
'

test_expect_success 'a candidate that breaks the build fails at the build gate' '
	RULE_TEMPLATE="greet(\${out}, \${name})" write_campaign c.yaml &&
	test_expect_code 1 sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *0" out &&
	grep -q "build  *0 passed, 3 failed, 0 skipped, 0 cached (3 runs)" out &&
	test "$(store_query s.db "select count(*) from gate_runs where gate = '"'"'test'"'"'")" = 0 &&
	test "$(store_query s.db "select count(*) from targets where state = '"'"'failed'"'"'")" = 3 &&
	store_query s.db "select output_tail from gate_runs where gate = '"'"'build'"'"' limit 1" >tail &&
	grep -q "too few arguments to function .greet." tail
'

test_expect_success 'its branch is not proposed' '
	test -z "$(git -C repo for-each-ref refs/heads/sluice/)"
'

test_expect_success 'a gate that opens TCP and writes outside its worktree fails inside, on the base and on each candidate; the host is unchanged' '
	mkdir m &&
	{ stub-model --dir m --port-file port --max-seconds 120 & echo $! >stub.pid; } &&
	for i in $(seq 1 600); do test -s port && break; sleep 0.1; done &&
	port=$(cat port) &&
	bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" &&
	echo secret >canary &&
	digest=$(sha1sum canary) &&
	write_campaign h.yaml &&
	sed -i "s/^name: greet/name: hostile/" h.yaml &&
	cat >>h.yaml <<-EOF &&
	  - name: escape
	    command: "echo pwned >$TRASH/canary; w=\$?; echo pwned >/usr/pwned; u=\$?; bash -c \"exec 3<>/dev/tcp/127.0.0.1/$port\"; t=\$?; echo write=\$w usr=\$u tcp=\$t; [ \$w != 0 ] && [ \$u != 0 ] && [ \$t != 0 ]"
	    timeout: 30
	EOF
	{ sluice run --store h.db h.yaml >out; rc=$?; kill $(cat stub.pid) 2>/dev/null; } &&
	test $rc = 0 &&
	test "$(sha1sum canary)" = "$digest" &&
	! test -e /usr/pwned &&
	store_query h.db "select output from baselines where gate = '"'"'escape'"'"'" >base.tail &&
	grep -q "write=[1-9][0-9]* usr=[1-9][0-9]* tcp=[1-9]" base.tail &&
	test "$(store_query h.db "select count(*) from gate_runs where gate = '"'"'escape'"'"' and verdict = '"'"'pass'"'"'")" = 3 &&
	store_query h.db "select output_tail from gate_runs where gate = '"'"'escape'"'"'" >tails &&
	test $(grep -c "write=[1-9][0-9]* usr=[1-9][0-9]* tcp=[1-9]" tails) = 3
'

test_done
