#!/bin/sh
test_description='the review ledger tells one story: show, the funnel, targets and report.md after reject and retry'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

cand_of() { # PATH LINE: the first candidate id of the target at PATH:LINE
	store_query s.db "select min(c.id) from candidates c join targets t on t.id = c.target_id where t.path = '$1' and t.start_line = $2"
}

test_expect_success 'setup: three proposed, one rejected with a two-line reason, then retried' '
	greet_repo repo &&
	write_campaign c.yaml &&
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *3" out &&
	rej=$(cand_of src/report.c 18) &&
	echo $rej >rej &&
	sluice reject --store s.db $rej --reason "use a named constant
and keep greet_old here" &&
	sluice targets --store s.db --state rejected >targets.rejected &&
	sluice retry --store s.db --state rejected >out &&
	sluice run --store s.db c.yaml >out
'

test_expect_success 'targets shows the rejection reason of a rejected target, whole, one line per target' '
	test $(wc -l <targets.rejected) = 1 &&
	grep -q "^ *[0-9]*  *rejected  *src/report.c:18 .*  use a named constant\\\\nand keep greet_old here$" targets.rejected
'

test_expect_success 'show of the rejected candidate still says rejected, with its reason' '
	sluice show --store s.db $(cat rej) >out &&
	grep -q "^decision: reject: use a named constant" out &&
	grep -q "and keep greet_old here" out &&
	grep -q "^state: *passed, rejected (was proposed on sluice/greet/src-report.c-L18C2)$" out &&
	! grep -q ", proposed on" out &&
	sluice show --store s.db --json $(cat rej) >out.json &&
	grep -q "\"decision\":\"reject\",\"reason\":\"use a named constant\\\\nand keep greet_old here\"" out.json
'

test_expect_success 'the funnel counts the rejection; by rules and by model sum to proposed' '
	sluice status --store s.db >out &&
	proposed=$(store_query s.db "select count(*) from targets where state in ('"'"'proposed'"'"', '"'"'accepted'"'"', '"'"'rejected'"'"')") &&
	grep -q "^  proposed  *$proposed " out &&
	grep -q "^  rejected  *1  candidate (latest decision)$" out &&
	sluice status --store s.db --json >out.json &&
	grep -q "\"proposed_by\":{\"rules\":$proposed,\"model\":0},\"proposed\":$proposed,\"accepted\":0,\"rejected\":1" out.json
'

test_expect_success 'targets and report.md give a reason whole' '
	sluice targets --store s.db --json >out.json &&
	sluice export --store s.db --out export >out &&
	grep -q "use a named constant" export/report.md &&
	grep -A1 "use a named constant" export/report.md | grep -q "^  and keep greet_old here$"
'

test_done
