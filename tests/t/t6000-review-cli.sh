#!/bin/sh
test_description='reading a campaign from the command line: targets, show PATH:LINE, status lists and outcome metrics'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'setup: a campaign whose policy lets only src/app.c through' '
	greet_repo repo &&
	write_campaign c.yaml "  - name: paths" "    kind: policy" "    allow_paths: [\"src/app.c\"]" &&
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *1" out &&
	grep -q "failed  *2" out
'

test_expect_success 'targets lists every target with its state, attempts, candidate and reason' '
	sluice targets --store s.db >out &&
	test $(wc -l <out) = 3 &&
	grep -q "proposed  *src/app.c:10  attempts 1  candidate [0-9]" out &&
	grep -q "failed  *src/report.c:10  attempts 1  candidate [0-9]*  .*policy .paths." out &&
	grep -q "failed  *src/report.c:18 " out &&
	grep -q "failed  *src/report.c:10 .*policy .paths.:\\\\npolicy: 1 violation\\\\n.*outside the allowed paths$" out
'

test_expect_success 'targets --state filters, repeated or comma-separated' '
	sluice targets --store s.db --state failed >out &&
	test $(wc -l <out) = 2 &&
	! grep -q app.c out &&
	sluice targets --store s.db --state proposed --state failed >out &&
	test $(wc -l <out) = 3 &&
	sluice targets --store s.db --state=proposed,skipped >out &&
	test $(wc -l <out) = 1 &&
	sluice targets --store s.db --state pending >out &&
	test ! -s out
'

test_expect_success 'targets --json gives one object per target' '
	sluice targets --store s.db --json --state failed >out &&
	test $(wc -l <out) = 2 &&
	grep -q "^{\"id\":[0-9]*,\"path\":\"src/report.c\",\"start_line\":18,.*\"state\":\"failed\",\"attempts\":1,\"reason\":\"The candidate broke the campaign.s policy .paths.:.*outside the allowed paths" out
'

test_expect_success 'a bad state or argument is a usage error (exit 2)' '
	test_expect_code 2 sluice targets --store s.db --state nosuch 2>err &&
	grep -q "unknown state .nosuch." err &&
	test_expect_code 2 sluice targets --store s.db --state 2>err &&
	test_expect_code 2 sluice targets --store s.db a b 2>err &&
	test_expect_code 2 sluice targets --store s.db nosuchcampaign 2>err
'

test_expect_success 'show PATH:LINE shows the latest candidate of the target on that line' '
	sluice show --store s.db src/report.c:18 >out &&
	grep -q "^candidate [0-9]*: src/report.c:18-18" out &&
	grep -q "^gate paths *fail" out &&
	grep -q "outside the allowed paths" out &&
	sluice show --store s.db greet src/app.c:10 --json >out.json &&
	grep -q "\"path\":\"src/app.c\",\"start_line\":10" out.json &&
	grep -q "\"state\":\"passed\"" out.json
'

test_expect_success 'show PATH:LINE with no target there is an error naming it (exit 2)' '
	test_expect_code 2 sluice show --store s.db src/report.c:3 2>err &&
	grep -q "no target at .src/report.c:3." err &&
	test_expect_code 2 sluice show --store s.db src/report.c:x 2>err &&
	test_expect_code 2 sluice show --store s.db 0 2>err
'

test_expect_success 'status --json lists every target and candidate' '
	sluice status --store s.db --json >out.json &&
	test $(wc -l <out.json) = 1 &&
	test "$(grep -o "\"state\":\"failed\",\"attempts\"" out.json | wc -l)" = 2 &&
	grep -q "\"target_list\":\[{\"id\":1,\"path\":\"src/app.c\"" out.json &&
	grep -q "\"candidate_list\":\[{" out.json &&
	keys="\"id\":[0-9]*,\"target\":[0-9]*,\"path\":\"src/app.c\",\"start_line\":10,\"end_line\":[0-9]*,\"attempt\":[0-9]*,\"state\":\"passed\",\"commit\":\"[0-9a-f]*\",\"branch\":\"[^\"]*\",\"decision\":null,\"reason\":null,\"created_at\":\"" &&
	grep -q "\"candidate_list\":\[[^]]*{$keys" out.json &&
	sluice show --store s.db src/app.c:10 --json >show.json &&
	grep -q "^{$keys" show.json &&
	test "$(grep -o "\"branch\":\"sluice/greet/src-app.c-L10C2\"" out.json | wc -l)" = 1 &&
	grep -q "\"acceptance_rate\":null" out.json
'

test_expect_success 'status shows outcome metrics: acceptance rate, time to decision, per accepted change' '
	app=$(store_query s.db "select c.id from candidates c join targets t on t.id = c.target_id where t.path = '"'"'src/app.c'"'"'") &&
	sluice accept --store s.db $app &&
	sluice status --store s.db >out &&
	grep -q "acceptance rate  *100% (1 of 1)" out &&
	grep -q "median time to decision  *0.0 h" out &&
	grep -q "per accepted change  *0 tokens, cost 0.0000" out &&
	grep -q "source  *rule  *proposed 1, accepted 1, rejected 0" out &&
	sluice status --store s.db --json >out.json &&
	grep -q "\"acceptance_rate\":1.0" out.json &&
	grep -q "\"by\":\"source\",\"name\":\"rule\",\"proposed\":1,\"accepted\":1" out.json &&
	day=$(store_query s.db "select substr(decided_at, 1, 10) from decisions") &&
	grep -q "decided on $day  1 accepted of 1 (100%)" out &&
	grep -q "\"by_day\":\[{\"day\":\"$day\",\"decided\":1,\"accepted\":1" out.json &&
	sluice reject --store s.db $app --reason "changed my mind" &&
	sluice status --store s.db >out &&
	grep -q "acceptance rate  *0% (0 of 1)" out
'

test_expect_success 'a target that never produced a candidate: show PATH:LINE gives its state and reason' '
	RULE_TEMPLATE="greet_old(\${out}, \${name})" write_campaign n.yaml &&
	sed -i "s/^name: greet/name: noop/" n.yaml &&
	test_expect_code 1 sluice run --store n.db n.yaml >out &&
	sluice targets --store n.db --state skipped >out &&
	test $(wc -l <out) = 3 &&
	! grep -q candidate out &&
	sluice show --store n.db src/report.c:10 >out &&
	grep -q "^target [0-9]*: src/report.c:10-10 (capture), no candidate" out &&
	grep -q "^state: *skipped" out &&
	grep -q "^reason: *no rule applies to this target" out &&
	sluice show --store n.db --json --attempts src/report.c:10 >out.json &&
	grep -q "\"candidate\":null" out.json &&
	grep -q "\"attempt_list\":\[{\"n\":1,\"source\":\"rules\"" out.json
'

test_done
