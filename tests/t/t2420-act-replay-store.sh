#!/bin/sh
test_description='generate: act: a session replayed from an earlier run'"'"'s store, step by step'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-act.sh"

# The fixture of t2400 (lib-act.sh): src/calc.c calls old_api, to become
# new_api, declared in src/api.h, which calc.c does not include yet.  A
# store names an earlier run's replies: they are found by the session's
# position (target, attempt, step) as a --record file's are, never by the
# request's key alone, and a command whose output differs is flagged.
test_expect_success 'setup' '
	act_repo repo &&
	make_repo repo &&
	act_session_yaml act "make test 2>&1" >base.yaml
'

# replayed FILE STORE: base.yaml replaying the replies of the run in STORE
replayed() {
	cp base.yaml "$1" &&
	printf "%s\n" "provider: {kind: replay, replay: $TRASH/$2}" >>"$1"
}

steps_of() {
	store_query "$1" "select step || \" \" || kind || \" \" || differs || \" \" || coalesce(request_key, \"\") || \" \" || tokens_in || \" \" || tokens_out || \" \" || quote(reply) || \" \" || quote(output) from steps order by n, step"
}

test_expect_success 'a whole session replayed from a store, bit for bit, no model asked' '
	reply m1 1 "grep -rn old_api src" &&
	reply m1 2 "sed -i \"s/old_api(3)/new_api(3)/\" src/calc.c && make 2>&1" &&
	reply m1 3 "sed -i \"1i #include \\\"api.h\\\"\" src/calc.c && make 2>&1 && make test" &&
	reply m1 4 submit &&
	campaign c1.yaml m1 &&
	sluice run --store s1.db c1.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	test "$(cat m1.log | tr "\n" " ")" = "1 2 3 4 " &&
	replayed r1.yaml s1.db &&
	sluice run --store r1.db r1.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	test "$(cat m1.log | tr "\n" " ")" = "1 2 3 4 " &&
	test "$(store_query s1.db "select diff from candidates")" = "$(store_query r1.db "select diff from candidates")" &&
	steps_of s1.db >steps1 &&
	steps_of r1.db >steps2 &&
	test $(wc -l <steps1) -ge 4 &&
	test_cmp steps1 steps2
'

test_expect_success 'replayed from a store: a command whose output differs is flagged, the session goes on by position' '
	reply m2 1 "od -An -tx8 -N8 /dev/urandom; sed -i \"s/old_api(3)/new_api(3)/\" src/calc.c" &&
	reply m2 2 "sed -i \"1i #include \\\"api.h\\\"\" src/calc.c && make 2>&1" &&
	reply m2 3 submit &&
	campaign c2.yaml m2 &&
	sluice run --store s2.db c2.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	replayed r2.yaml s2.db &&
	sluice run --store r2.db r2.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	test "$(cat m2.log | tr "\n" " ")" = "1 2 3 " &&
	store_query r2.db "select step || \" \" || differs from steps order by step" >actual &&
	printf "%s\n" "1 1" "2 0" "3 0" >expect &&
	test_cmp expect actual &&
	sluice show --store r2.db --steps 1 >show &&
	grep -q "DIFFERS from the recorded output on replay" show
'

test_done
