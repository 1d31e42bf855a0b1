#!/bin/sh
test_description='the model judge gate: accept, reject with a reason, garbage, budget, replay'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# judge_stub DIR VERDICT-TEXT: a stub whose judge (the request with the judge's
# system prompt) answers VERDICT-TEXT and whose generation answers the fix.
judge_stub() {
	mkdir -p "$1" &&
	echo "You review a proposed code change" >"$1/match-1.contains" &&
	printf "%s\n" "$2" | openai_reply "$1/match-1.json" &&
	echo greet_old >"$1/match-2.contains" &&
	openai_reply "$1/match-2.json" <<-\EOF
	```diff
	--- a/src/app.c
	+++ b/src/app.c
	@@ -10,1 +10,1 @@
	-	greet_old(banner, argc > 1 ? argv[1] : "world");
	+	greet(banner, sizeof banner, argc > 1 ? argv[1] : "world");
	```
	EOF
}

# judge_campaign FILE NAME PORT [ATTEMPTS]
judge_campaign() {
	cat >"$1" <<-EOF
	name: $2
	repository: repo
	scratch: $TRASH/scratch
	instructions: Replace greet_old with greet, passing the size of the buffer.
	targets:
	  language: c
	  paths: [src/app.c]
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"greet_old\"))"
	  unit: function
	provider:
	  kind: openai
	  base_url: http://127.0.0.1:$3/v1
	  model: stub-model-1
	edit_format: udiff
	attempts: ${4:-1}
	gates:
	  - name: review
	    kind: judge
	    instructions: The size passed must be the buffer's, not a pointer's.
	  - name: build
	    command: make
	EOF
}

stop_stub() {
	kill "$1" 2>/dev/null || :
}

test_expect_success 'setup: the demo project' '
	greet_repo repo
'

test_expect_success 'a judge without a model is refused, naming the line' '
	cat >bad.yaml <<-EOF &&
	name: bad
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  query: "(call_expression) @call"
	gates:
	  - name: build
	    command: make
	  - {name: review, kind: judge}
	EOF
	test_expect_code 2 sluice run --store bad.db bad.yaml 2>err &&
	grep -q "bad.yaml:10:5: a gate of kind judge asks the campaign.s model: it needs a .provider." err &&
	! test -f bad.db &&
	sed -i "s/kind: judge}/kind: judge, command: make}/" bad.yaml &&
	test_expect_code 2 sluice run --store bad.db bad.yaml 2>err &&
	grep -q "bad.yaml:10:.*command" err
'

test_expect_success 'the judge accepts: proposed, its gate run and tokens recorded' '
	judge_stub a "{\"verdict\": \"accept\", \"reason\": \"greet gets the size of banner\"}" &&
	start_stub a && echo $stub_pid >a.pid &&
	judge_campaign a.yaml accepted $stub_port &&
	cat >rf.txt <<-\EOF &&
	  response_format: "{\"type\": \"json_object\"}"
	EOF
	sed -i "/^  model: stub-model-1/r rf.txt" a.yaml &&
	grep -q "^  response_format: " a.yaml &&
	sluice run --store a.db --record a.jsonl a.yaml >out &&
	grep -q "proposed  *1" out &&
	test "$(store_query a.db "select gate || '"'"':'"'"' || verdict from gate_runs order by id")" = "$(printf "syntax:pass\nexpect:pass\nbuild:pass\nreview:pass")" &&
	store_query a.db "select output_tail from gate_runs where gate = '"'"'review'"'"'" >tail &&
	grep -q "^accept: greet gets the size of banner" tail &&
	test "$(store_query a.db "select tokens_in || '"'"'+'"'"' || tokens_out from attempts")" = "240+60" &&
	grep -q "You review a proposed code change" a/request-2.json &&
	grep -q "The size passed must be the buffer" a/request-2.json &&
	grep -q "greet(banner, sizeof banner" a/request-2.json &&
	grep -q "\"response_format\":{\"type\":\"json_object\"}" a/request-1.json &&
	! grep -q "response_format" a/request-2.json &&
	test $(wc -l <a.jsonl) = 2 &&
	stop_stub $(cat a.pid)
'

test_expect_success 'the judge with its own provider: another model on another endpoint judges' '
	judge_stub g "{\"verdict\": \"accept\", \"reason\": \"never asked\"}" &&
	mkdir j &&
	echo "You review a proposed code change" >j/match-1.contains &&
	printf "%s\n" "{\"verdict\": \"reject\", \"reason\": \"the second model says no\"}" |
		openai_reply j/match-1.json &&
	start_stub g && echo $stub_pid >g.pid && gport=$stub_port &&
	start_stub j && echo $stub_pid >j.pid && jport=$stub_port &&
	judge_campaign own.yaml own $gport &&
	cat >jp.txt <<-EOF &&
	    provider: {kind: openai, base_url: "http://127.0.0.1:$jport/v1", model: judge-model-2}
	EOF
	sed -i "/^    kind: judge$/r jp.txt" own.yaml &&
	grep -q "^    provider: {kind: openai" own.yaml &&
	{ sluice run --store own.db own.yaml >out; test $? = 1; } &&
	stop_stub $(cat g.pid) && stop_stub $(cat j.pid) &&
	test -f g/request-1.json && ! test -f g/request-2.json &&
	! grep -q "You review a proposed code change" g/request-1.json &&
	grep -q "\"model\":\"stub-model-1\"" g/request-1.json &&
	test -f j/request-1.json && ! test -f j/request-2.json &&
	grep -q "You review a proposed code change" j/request-1.json &&
	grep -q "\"model\":\"judge-model-2\"" j/request-1.json &&
	store_query own.db "select verdict || \" \" || note from gate_runs where gate = \"review\"" >actual &&
	echo "fail judged by judge-model-2 (openai)" >expect &&
	test_cmp expect actual &&
	store_query own.db "select output_tail from gate_runs where gate = \"review\"" | grep -q "^reject: the second model says no"
'

test_expect_success 'the judge'"'"'s own provider is checked as the campaign'"'"'s is' '
	judge_campaign bad2.yaml bad2 1 &&
	echo "    provider: {kind: command, command: \"echo x\"}" >cmd.txt &&
	sed -i "/^    kind: judge$/r cmd.txt" bad2.yaml &&
	sluice scope bad2.yaml >/dev/null &&
	sed -i "s/{kind: command, command: .*}/{kind: openai, model: m}/" bad2.yaml &&
	test_expect_code 2 sluice scope bad2.yaml 2>err &&
	grep -q "bad2.yaml:.*base_url" err &&
	sed -i "s/{kind: openai, model: m}/{kind: rules}/" bad2.yaml &&
	test_expect_code 2 sluice scope bad2.yaml 2>err &&
	grep -q "bad2.yaml:.*the judge.s .provider. must ask a model" err
'

test_expect_success 'status counts the judge, and what reviewers decided on what it accepted' '
	sluice status --store a.db >st &&
	grep -q "model judge: vetoed 0; of those it accepted, reviewers accepted 0 and rejected 0" st &&
	id=$(store_query a.db "select id from candidates") &&
	sluice reject --store a.db "$id" --reason "not now" &&
	sluice status --store a.db >st &&
	grep -q "model judge: vetoed 0; of those it accepted, reviewers accepted 0 and rejected 1" st &&
	sluice status --store a.db --json >st.json &&
	grep -q "\"judge\":{\"vetoed\":0,\"reviewers_accepted\":0,\"reviewers_rejected\":1}" st.json
'

test_expect_success 'a replay of the recording asks nobody and matches bit for bit' '
	sed -e "s/^name: accepted/name: replayed/" \
	    -e "s|^  kind: openai|  kind: replay\n  replay: $TRASH/a.jsonl|" a.yaml >r.yaml &&
	sluice run --store r.db r.yaml >out &&
	grep -q "proposed  *1" out &&
	! test -f a/request-3.json &&
	test "$(store_query a.db "select gate, verdict, output_tail from gate_runs order by id")" = \
	     "$(store_query r.db "select gate, verdict, output_tail from gate_runs order by id")" &&
	test "$(store_query a.db "select diff from candidates")" = "$(store_query r.db "select diff from candidates")" &&
	test "$(store_query a.db "select request_key, request, reply from replies order by round")" = \
	     "$(store_query r.db "select request_key, request, reply from replies order by round")"
'

test_expect_success 'an earlier store replays the judge too' '
	sed -e "s/^name: accepted/name: fromstore/" \
	    -e "s|^  kind: openai|  kind: replay\n  replay: $TRASH/a.db|" a.yaml >q.yaml &&
	sluice run --store q.db q.yaml >out &&
	grep -q "proposed  *1" out &&
	! test -f a/request-3.json &&
	test "$(store_query a.db "select output_tail from gate_runs where gate = '"'"'review'"'"'")" = \
	     "$(store_query q.db "select output_tail from gate_runs where gate = '"'"'review'"'"'")"
'

test_expect_success 'a run that died after the judge answered pays for nothing again' '
	mkdir k && cp a/match-* k/ &&
	start_stub k && echo $stub_pid >k.pid &&
	judge_campaign k.yaml resumed $stub_port &&
	sluice run --store k.db k.yaml >out &&
	grep -q "proposed  *1" out &&
	stop_stub $(cat k.pid) &&
	test "$(store_query k.db "select round from replies order by round")" = "$(printf "0\n2")" &&
	sqlite3 k.db "delete from gate_runs; delete from candidates; delete from attempts; update targets set state = \"pending\", attempts = 0" &&
	git -C repo branch -D sluice/resumed/src-app.c-L6 &&
	sluice run --store k.db k.yaml >out &&
	grep -q "proposed  *1" out &&
	! test -f k/request-3.json &&
	test "$(store_query k.db "select tokens_in || '"'"'+'"'"' || tokens_out from attempts")" = "240+60" &&
	store_query k.db "select output_tail from gate_runs where gate = '"'"'review'"'"'" | grep -q "^accept: greet gets"
'

test_expect_success 'the judge rejects: the candidate fails, the reason in show and in the next prompt' '
	judge_stub j "\`\`\`json
{\"verdict\": \"reject\", \"reason\": \"sizeof of a pointer, not of the buffer\"}
\`\`\`" &&
	start_stub j && echo $stub_pid >j.pid &&
	judge_campaign j.yaml rejected $stub_port 2 &&
	sed -i "s/^    instructions: .*/&\n    include_trajectory: true/" j.yaml &&
	grep -q "^    include_trajectory: true" j.yaml &&
	test_expect_code 1 sluice run --store j.db j.yaml >out &&
	grep -q "proposed  *0" out &&
	test "$(store_query j.db "select state from targets")" = failed &&
	test "$(store_query j.db "select count(*) from gate_runs where gate = '"'"'review'"'"' and verdict = '"'"'fail'"'"'")" = 2 &&
	git -C repo for-each-ref refs/heads/sluice/rejected/ >refs && ! test -s refs &&
	sluice show --store j.db 1 >show &&
	grep -q "sizeof of a pointer, not of the buffer" show &&
	grep -q "rejected the change (gate .review.): sizeof of a pointer" j/request-3.json &&
	! grep -q "You review" j/request-3.json &&
	grep -q "The reply the change was made from" j/request-2.json &&
	! grep -q "Attempt 1 failed" j/request-2.json &&
	grep -q "Attempt 1 failed.*rejected the change" j/request-4.json &&
	! grep -q "The reply the change was made from" a/request-2.json &&
	sluice status --store j.db >st &&
	grep -q "model judge: vetoed 2; of those it accepted, reviewers accepted 0 and rejected 0" st &&
	stop_stub $(cat j.pid)
'

test_expect_success 'a garbage answer is the gate error, never a pass' '
	judge_stub g "Looks fine to me!" &&
	start_stub g && echo $stub_pid >g.pid &&
	judge_campaign g.yaml garbage $stub_port &&
	test_expect_code 1 sluice run --store g.db g.yaml >out &&
	grep -q "proposed  *0" out &&
	test "$(store_query g.db "select verdict from gate_runs where gate = '"'"'review'"'"'")" = error &&
	store_query g.db "select output_tail from gate_runs where gate = '"'"'review'"'"'" | grep -q "not one JSON object" &&
	git -C repo for-each-ref refs/heads/sluice/garbage/ >refs && ! test -s refs &&
	printf "%s\n" "{\"verdict\": \"maybe\", \"reason\": \"x\"}" | openai_reply g/match-1.json &&
	judge_campaign g2.yaml garbage2 $stub_port &&
	test_expect_code 1 sluice run --store g2.db g2.yaml >out &&
	grep -q "proposed  *0" out &&
	store_query g2.db "select output_tail from gate_runs where gate = '"'"'review'"'"'" | grep -q "must be .accept. or .reject." &&
	stop_stub $(cat g.pid)
'

test_expect_success 'a judge the budget cannot pay for: the run stops, nothing passes' '
	judge_stub b "{\"verdict\": \"accept\", \"reason\": \"ok\"}" &&
	start_stub b && echo $stub_pid >b.pid &&
	judge_campaign b.yaml budget $stub_port &&
	printf "budget:\n  max_tokens: 150\n" >>b.yaml &&
	test_expect_code 1 sluice run --store b.db b.yaml >out &&
	test "$(store_query b.db "select state from targets")" = budget &&
	! test -f b/request-2.json &&
	test "$(store_query b.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 0 &&
	git -C repo for-each-ref refs/heads/sluice/budget/ >refs && ! test -s refs &&
	stop_stub $(cat b.pid)
'

test_expect_success 'report.md and report.html name the model judge: its vetoes, and reviewers on what it accepted' '
	sluice export --store a.db --out exp-a &&
	grep -q "model judge: vetoed 0; of those it accepted, reviewers accepted 0 and rejected 1" exp-a/report.md &&
	grep -q "<p class=\"judge\">Model judge <code>review</code> (a model.s verdict, not a gate.s command): vetoed <b>0</b> of 1 candidates; of the 1 it accepted, reviewers accepted <b>0</b> and rejected <b>1</b>.</p>" exp-a/report.html &&
	grep -q ">model judge review</text>" exp-a/report.html &&
	grep -q ">gate build</text>" exp-a/report.html &&
	sluice export --store j.db --out exp-j &&
	grep -q "model judge: vetoed 2; of those it accepted, reviewers accepted 0 and rejected 0" exp-j/report.md &&
	grep -q "vetoed <b>2</b> of 2 candidates; of the 0 it accepted" exp-j/report.html &&
	sluice export --store g.db --out exp-g &&
	grep -q "vetoed <b>0</b> of 1 candidates, 1 without a usable verdict;" exp-g/report.html
'

test_expect_success 'the dashboard and /metrics count the model judge apart from the gates' '
	start_serve serve.out --store a.db --store j.db --store g.db --listen 127.0.0.1:0 &&
	curl -sf "$serve_url" >index.html &&
	curl -sf "${serve_url}s/1/c/1" >camp.html &&
	curl -sf "${serve_url}metrics" >metrics.txt &&
	stop_serve $serve_pid &&
	grep -q "Model judge <code>review</code> (a model.s verdict, not a gate.s command): vetoed <b>0</b> of 1 candidates; of the 1 it accepted, reviewers accepted <b>0</b> and rejected <b>1</b>" index.html &&
	grep -q "vetoed <b>2</b> of 2 candidates" index.html &&
	grep -q "vetoed <b>2</b> of 2 candidates" camp.html &&
	grep -q ">model judge review</text>" camp.html &&
	metric_samples metrics.txt >families &&
	grep "^counter sluice_judge_" families >actual &&
	cat >expect <<-\EOF &&
	counter sluice_judge_verdicts_total campaign=accepted,gate=review,verdict=accept 1
	counter sluice_judge_verdicts_total campaign=accepted,gate=review,verdict=reject 0
	counter sluice_judge_verdicts_total campaign=accepted,gate=review,verdict=error 0
	counter sluice_judge_verdicts_total campaign=rejected,gate=review,verdict=accept 0
	counter sluice_judge_verdicts_total campaign=rejected,gate=review,verdict=reject 2
	counter sluice_judge_verdicts_total campaign=rejected,gate=review,verdict=error 0
	counter sluice_judge_verdicts_total campaign=garbage,gate=review,verdict=accept 0
	counter sluice_judge_verdicts_total campaign=garbage,gate=review,verdict=reject 0
	counter sluice_judge_verdicts_total campaign=garbage,gate=review,verdict=error 1
	counter sluice_judge_reviewed_total campaign=accepted,decision=accept,gate=review 0
	counter sluice_judge_reviewed_total campaign=accepted,decision=reject,gate=review 1
	counter sluice_judge_reviewed_total campaign=rejected,decision=accept,gate=review 0
	counter sluice_judge_reviewed_total campaign=rejected,decision=reject,gate=review 0
	counter sluice_judge_reviewed_total campaign=garbage,decision=accept,gate=review 0
	counter sluice_judge_reviewed_total campaign=garbage,decision=reject,gate=review 0
	EOF
	test_cmp expect actual &&
	grep -q "^counter sluice_gate_runs_total campaign=accepted,gate=build,verdict=pass 1" families
'

test_expect_success 'cleanup' '
	for p in a k j g b; do if test -f $p.pid; then stop_stub $(cat $p.pid); fi; done
'

test_done
