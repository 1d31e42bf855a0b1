#!/bin/sh
test_description='a model endpoint that misbehaves in every way; budgets under concurrency'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

# good_model DIR: every request gets a usable reply (150 tokens)
good_model() {
	mkdir -p "$1" &&
	openai_reply "$1/reply-1.json" <<-\EOF
	```c
	int f(void) { return new_api(0); }
	```
	EOF
}

# one_target_run NAME FAULT: a one-target campaign whose endpoint misbehaves
# once (FAULT 1), then answers
one_target_run() {
	good_model "m-$1" &&
	echo "$2 1" >"m-$1/reply-1.fault" &&
	start_stub "m-$1" && echo $stub_pid >"stub-$1.pid" &&
	rel_campaign "$1.yaml" "$1" $stub_port &&
	sed -i -e "s/max_retries: 2/max_retries: 3\n  timeout: 2/" -e "s/^  query: .*/&\n  paths: [\"src\/m0.c\"]/" "$1.yaml" &&
	sed -i "s/^repository: repo/repository: one/" "$1.yaml" &&
	sluice run --store "$1.db" "$1.yaml" >out 2>err
	rc=$?
	kill $(cat "stub-$1.pid")
	cat err
	test $rc = 0 &&
	test "$(sqlite3 "$1.db" "select state, attempts from targets")" = "proposed|1" &&
	test "$(sqlite3 "$1.db" "select n, retries from attempts")" = "1|1" &&
	test $(rel_requests "m-$1") = 2
}

test_expect_success 'setup: a repository with one target' '
	rel_repo one 1 && rel_repo repo 16
'

for fault in truncate garbage reset drop hang; do
	test_expect_success "a reply that fails once ($fault) is retried and costs no attempt" "
		one_target_run $fault $fault
	"
done

test_expect_success 'retries run out: the target stays pending with its reason, then resumes' '
	good_model down && echo reset >down/reply-1.fault &&
	start_stub down && echo $stub_pid >stub-down.pid && echo $stub_port >port-down &&
	rel_campaign d.yaml down $stub_port &&
	sed -i -e "s/max_retries: 2/max_retries: 1/" -e "s/^repository: repo/repository: one/" d.yaml &&
	test_expect_code 1 sluice run --store d.db d.yaml >out 2>err &&
	test "$(sqlite3 d.db "select state, attempts from targets")" = "pending|0" &&
	sqlite3 d.db "select reason from targets" | grep -q "gave up after 1 retry" &&
	test "$(sqlite3 d.db "select count(*) from attempts")" = 0 &&
	rm down/reply-1.fault &&
	sluice run --store d.db d.yaml >out 2>err &&
	test "$(sqlite3 d.db "select state, attempts from targets")" = "proposed|1" &&
	kill $(cat stub-down.pid)
'

test_expect_success 'impossible usage numbers are rejected, billed as the reservation, reported' '
	mkdir lies &&
	printf "%s" "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"\`\`\`c\\nint f(void) { return new_api(0); }\\n\`\`\`\\n\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":4611686018427387904,\"completion_tokens\":-7}}" >lies/reply-1.json &&
	start_stub lies && echo $stub_pid >stub-lies.pid &&
	rel_campaign l.yaml lies $stub_port "budget:" "  max_tokens: 100000000" &&
	sed -i "s/^repository: repo/repository: one/" l.yaml &&
	sluice run --store l.db l.yaml >out 2>err &&
	grep -q "1 replies reported impossible token counts" err &&
	sqlite3 l.db "select usage_note from attempts" | grep -q "reported 4611686018427387904 prompt and -7 completion tokens" &&
	test "$(sqlite3 l.db "select tokens_in < 100000 and tokens_out = 4096 from attempts")" = 1 &&
	sluice status --store l.db >st &&
	grep -q "^budget: [0-9]* of 100000000 tokens used (overshoot 0)" st &&
	sluice run --store l.db l.yaml >out 2>err &&
	kill $(cat stub-lies.pid)
'

test_expect_success 'a token budget holds with concurrency 8: overshoot at most one reply'  '
	good_model m8 && echo 100 >m8/reply-1.delay &&
	start_stub m8 && echo $stub_pid >stub-m8.pid &&
	rel_campaign b.yaml budget8 $stub_port "budget:" "  max_tokens: 1500" &&
	sed -i -e "s/^concurrency: 4/concurrency: 8/" -e "s/max_retries: 2/max_retries: 2\n  max_tokens: 200/" b.yaml &&
	test_expect_code 0 sluice run --store b.db b.yaml >out 2>err &&
	used=$(sqlite3 b.db "select sum(tokens_in + tokens_out) from attempts") &&
	echo "used $used of 1500" &&
	test $used -le 1650 &&
	test $(rel_requests m8) = $((used / 150)) &&
	test "$(sqlite3 b.db "select count(*) from targets where state = '"'"'budget'"'"'")" -ge 1 &&
	sluice status --store b.db >st &&
	grep -q "^budget: $used of 1500 tokens used (overshoot $((used > 1500 ? used - 1500 : 0)))" st &&
	sluice status --store b.db --json >st.json &&
	grep -q "\"tokens_used\":$used,\"max_tokens\":1500," st.json &&
	kill $(cat stub-m8.pid)
'

test_expect_success 'counts an older sluice stored unchecked do not break status, export or run' '
	sqlite3 b.db "update attempts set tokens_in = 4611686018427387904, tokens_out = 4611686018427387904" &&
	sluice status --store b.db >st &&
	grep -q "overshoot" st &&
	sluice export --store b.db --out exp >/dev/null &&
	sluice run --store b.db b.yaml >out 2>err &&
	grep -q "token budget reached" err
'

test_expect_success 'a hanging endpoint cannot hold the run past its wall-time budget' '
	good_model hang && echo hang >hang/reply-1.fault &&
	start_stub hang && echo $stub_pid >stub-hang.pid &&
	rel_campaign h.yaml hang $stub_port "budget:" "  max_wall_time: 2" &&
	sed -i -e "s/^concurrency: 4/concurrency: 8/" -e "s/max_retries: 2/max_retries: 5\n  timeout: 600/" h.yaml &&
	{ timeout 120 sluice run --store h.db h.yaml >out 2>err; rc=$?; } &&
	cat err &&
	test $rc = 1 &&
	test "$(sqlite3 h.db "select count(*) from attempts")" = 0 &&
	test "$(sqlite3 h.db "select count(*) from targets where state not in ('"'"'pending'"'"', '"'"'budget'"'"')")" = 0 &&
	test $(rel_requests hang) -le 8 &&
	kill $(cat stub-hang.pid)
'

test_done
