#!/bin/sh
test_description='generation starts while the base is prepared: the model is asked before the warm base is ready, the gates wait for it; a base that fails stops the run with nothing proposed and the replies already paid for kept'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

# The preparing gate (repo/gate.sh, waiting_gate) writes "waiting" in the
# tree it prepares and waits for "go" there; with "fail" there too, it fails.
# The model command logs each request in $TRASH/asked.
# campaign FILE NAME: the three targets, the model command, the preparing
# gate and "true", its scratch root scratch-NAME
campaign() {
	cat >"$1" <<EOF2
name: $2
repository: repo
scratch: $TRASH/scratch-$2
concurrency: 1
jobs: 1
targets:
  language: c
  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
  unit: function
provider:
  kind: command
  command: "sh $TRASH/model.sh"
gates:
  - name: prep
    command: "sh gate.sh"
    prepare: true
    timeout: 300
  - name: check
    command: "true"
EOF2
}

# waiting_base NAME: the warm tree of scratch-NAME whose preparation waits
waiting_base() {
	w=$(find "scratch-$1" -path "*/warm-*/tree/waiting" 2>/dev/null | head -1) &&
	test -n "$w" && dirname "$w"
}

test_expect_success 'setup: three targets, a preparing gate that waits, a model command that logs' '
	mkdir -p repo &&
	waiting_gate repo/gate.sh &&
	echo "test ! -e fail" >>repo/gate.sh &&
	rel_repo repo 3 &&
	cat >model.sh <<-EOF &&
	cat >/dev/null
	echo asked >>"$TRASH/asked"
	cat "$TRASH/reply.txt"
	EOF
	cat >reply.txt <<-\EOF &&
	```c
	int f(void) { return new_api(0); }
	```
	EOF
	campaign c.yaml during &&
	campaign f.yaml failing
'

test_expect_success 'the model is asked while the warm base waits; released, every target is proposed' '
	{ sluice run --store s.db c.yaml >out 2>err & echo $! >run.pid; } &&
	poll "test -s asked || ! kill -0 $(cat run.pid)" &&
	poll "waiting_base during >/dev/null" &&
	d=$(waiting_base during) &&
	test -s asked &&
	test "$(sqlite3 s.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = 0 &&
	test "$(sqlite3 s.db "select count(*) from baselines")" = 0 &&
	touch "$d/go" &&
	{ wait $(cat run.pid); rc=$?; } &&
	rm -f run.pid &&
	cat err &&
	test $rc = 0 &&
	test "$(sqlite3 s.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = 3 &&
	test "$(wc -l <asked)" = 3
'

test_expect_success 'a base that fails after the model was asked: the run fails, nothing proposed, the replies kept and counted' '
	rm -f asked &&
	{ sluice run --store f.db f.yaml >out 2>err & echo $! >run.pid; } &&
	poll "test -s asked || ! kill -0 $(cat run.pid)" &&
	poll "waiting_base failing >/dev/null" &&
	d=$(waiting_base failing) &&
	test -s asked &&
	touch "$d/fail" "$d/go" &&
	{ wait $(cat run.pid); rc=$?; } &&
	rm -f run.pid &&
	cat err &&
	test $rc != 0 &&
	test "$(sqlite3 f.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = 0 &&
	test "$(sqlite3 f.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 0 &&
	n=$(wc -l <asked) &&
	kept=$(sqlite3 f.db "select count(*) from replies where target_id not in (select target_id from attempts)") &&
	recorded=$(sqlite3 f.db "select count(*) from attempts") &&
	test $((kept + recorded)) -ge "$n" &&
	test "$kept" -ge 1 &&
	sqlite3 f.db "select count(*) from replies where tokens_in + tokens_out > 0" >paid &&
	test "$(cat paid)" = "$kept"
'

test_expect_success 'cleanup: no run left behind' '
	if test -f run.pid; then
		for w in $(find scratch-* -name waiting 2>/dev/null); do touch "$(dirname "$w")/go" || :; done &&
		{ kill $(cat run.pid) 2>/dev/null || :; } &&
		{ wait $(cat run.pid) 2>/dev/null || :; }
	fi
'

test_done
