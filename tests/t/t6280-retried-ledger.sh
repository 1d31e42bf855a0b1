#!/bin/sh
test_description='the review ledger after reject and retry (issue 25)

A target rejected and retried has two candidates: the rejected one and the
new one.  When the new candidate'"'"'s request (the old one, updated) is
merged, sync accepts the new candidate only; the funnel, show, targets,
report.md and report.html tell the same counts, each line saying whether
it counts targets or candidates.'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

export FORGE_TOKEN=ghp-secret-token-4711

test_expect_success 'setup: three requests published; the first change rejected, its target retried' '
	greet_on_github c.yaml &&
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *3" out &&
	sluice publish --store s.db c.yaml >out &&
	grep -q "3 opened" out &&
	n=$(sqlite3 s.db "select number from published where candidate_id = 1") &&
	echo $n >number &&
	sluice reject --store s.db 1 --reason "name the buffer size" &&
	at=$(sqlite3 s.db "select path || '"'"':'"'"' || start_line from targets t join candidates c on c.target_id = t.id where c.id = 1") &&
	sluice retry --store s.db "$at" >out &&
	grep -q "sent back 1 target" out &&
	sluice run --store s.db c.yaml >out &&
	test "$(sqlite3 s.db "select count(*) from candidates where target_id = (select target_id from candidates where id = 1)")" = 2 &&
	sluice publish --store s.db c.yaml >out &&
	grep -q "#$n found open, updated" out
'

test_expect_success 'the merged request accepts the new candidate only; the rejected one stays rejected' '
	n=$(cat number) &&
	new=$(sqlite3 s.db "select max(id) from candidates") &&
	curl -sf -X POST --data-binary "$(git -C remote.git rev-parse main)" "http://127.0.0.1:$(cat forge.port)/_stub/merge/$n" >/dev/null &&
	sluice sync --store s.db c.yaml >out &&
	cat out &&
	grep -q "#$n: merged" out &&
	sluice show --store s.db 1 >show1 &&
	grep "^decision: reject: name the buffer size" show1 &&
	sluice show --store s.db $new >shownew &&
	grep "^decision: accept: merged as #$n" shownew &&
	test "$(sqlite3 s.db "select count(*) from decisions where candidate_id = 1 and decision = '"'"'accept'"'"'")" = 0 &&
	# a second sync finds nothing more to do for that request
	sluice sync --store s.db c.yaml >out2 &&
	! grep -q "#$n" out2
'

test_expect_success 'funnel, show, targets, report.md and report.html agree, each count naming what it counts' '
	sluice status --store s.db >st &&
	cat st &&
	# targets by state: 1 accepted, 2 proposed; candidates by decision: 4 accepted, 1 rejected
	sluice targets --store s.db >tg &&
	test "$(grep -c "^ *[0-9]*  *\(proposed\|accepted\|rejected\) " tg)" = 3 &&
	grep -q "^  proposed  *3  targets (100% of targets)$" st &&
	acc=0 rej=0 &&
	for c in $(sqlite3 s.db "select id from candidates where state = '"'"'passed'"'"'"); do
		sluice show --store s.db $c >sh &&
		if grep -q "^decision: accept" sh; then acc=$((acc + 1)); fi &&
		if grep -q "^decision: reject" sh; then rej=$((rej + 1)); fi || return 1
	done &&
	test $acc = 1 && test $rej = 1 &&
	grep -q "^  accepted  *$acc  candidate (latest decision)$" st &&
	grep -q "^  rejected  *$rej  candidate (latest decision)$" st &&
	grep -q "^  failed  *0  targets$" st &&
	grep -q "^outcomes (counted in candidates" st &&
	grep -q "acceptance rate  *50% (1 of 2)" st &&
	sluice export --store s.db --out ex >out &&
	sed -n "/^## Funnel/,/^## Proposed/p" ex/report.md >md &&
	grep -q "^  proposed  *3  targets (100% of targets)$" md &&
	grep -q "^  accepted  *1  candidate (latest decision)$" md &&
	grep -q "^  rejected  *1  candidate (latest decision)$" md &&
	grep -q "3 targets: 3 proposed, 0 failed, 0 skipped; candidates by their latest decision: 1 accepted, 1 rejected;" ex/report.html &&
	grep -q ">accepted candidates</text>" ex/report.html &&
	grep -q ">proposed targets</text>" ex/report.html
'

test_expect_success 'stop the stub' '
	kill $(cat forge.pid)
'

test_done
