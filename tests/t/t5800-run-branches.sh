#!/bin/sh
test_description='run: a branch per target, and none left for a candidate that did not pass'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'setup: two targets that start at the same place' '
	mkdir -p nest/src &&
	echo "x = a.b().c()" >nest/src/m.py &&
	make_repo nest &&
	cat >nest.yaml <<-EOF &&
	name: nest
	repository: nest
	scratch: $TRASH/scratch
	targets:
	  language: python
	  paths: ["src/*.py"]
	  query: "(call) @call"
	rules:
	  - capture: call
	    template: "z()"
	attempts: 1
	gates:
	  - name: ok
	    command: "true"
	EOF
	sluice scope nest.yaml >out &&
	test $(wc -l <out) = 2 &&
	test $(sort -u out | wc -l) = 1
'

test_expect_success 'each proposed target gets its own branch, at its own commit' '
	sluice run --store n.db nest.yaml >out &&
	test "$(store_query n.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 2 &&
	test "$(store_query n.db "select count(distinct branch) from candidates")" = 2 &&
	store_query n.db "select branch || '"'"' '"'"' || commit_oid from candidates" >want &&
	while read branch oid; do
		test "$(git -C nest rev-parse "refs/heads/$branch")" = "$oid" || return 1
	done <want
'

test_expect_success 'candidate branches have no reflog; the repository config is unchanged' '
	test "$(git -C nest config core.logAllRefUpdates)" = true &&
	cp nest/.git/config config.before &&
	sluice run --store n2.db nest.yaml >out &&
	test "$(store_query n2.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 2 &&
	test -e nest/.git/logs/HEAD &&
	test ! -e nest/.git/logs/refs/heads/sluice &&
	test_cmp config.before nest/.git/config
'

test_expect_success 'setup: one model target whose gate is slow on the candidate' '
	mkdir -p repo/src &&
	{
		echo "int old_api(int x) { return x; }"
		echo "int new_api(int x) { return x + 0; }"
		echo "int f1(void) { return old_api(1); }"
	} >repo/src/a.c &&
	make_repo repo &&
	mkdir m &&
	openai_reply m/reply-1.json <<-\EOF &&
	```c
	int f1(void) { return new_api(1); }
	```
	EOF
	start_stub m && echo $stub_pid >stub.pid &&
	cat >c.yaml <<-EOF
	name: orphan
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  unit: function
	provider:
	  kind: openai
	  base_url: http://127.0.0.1:$stub_port/v1
	  model: stub-model-1
	attempts: 1
	gates:
	  - name: slow
	    command: "if grep -q new_api.1 src/a.c; then sleep 30.5800$$; fi"
	    timeout: 60
	EOF
'

test_expect_success 'kill -9 while the candidate is gated' '
	{ sluice run --store s.db c.yaml >/dev/null 2>&1 & pid=$!; } &&
	for i in $(seq 1 300); do
		git -C repo for-each-ref --format="%(refname)" refs/heads/sluice/orphan/ |
			grep -v /base- >refs
		test -s refs && break
		sleep 0.1
	done &&
	test -s refs &&
	# until the gate runs (its sleep has a command line of its own)
	for i in $(seq 1 600); do
		pgrep -fx "sleep 30.5800$$" >/dev/null && break
		sleep 0.1
	done &&
	pgrep -fx "sleep 30.5800$$" >/dev/null &&
	kill -9 $pid &&
	{ wait $pid 2>/dev/null || :; } &&
	test "$(store_query s.db "select count(*) from attempts")" = 0
'

test_expect_success 'a rerun whose candidate fails early leaves no branch behind' '
	echo "no code in this reply" | openai_reply m/reply-2.json &&
	# as if the kill had come before the reply was journalled (else the
	# rerun takes the journalled reply and never asks again)
	store_query s.db "delete from replies" &&
	{ sluice run --store s.db c.yaml >out 2>err; test $? = 1; } &&
	test "$(store_query s.db "select state from targets")" = failed &&
	git -C repo for-each-ref refs/heads/sluice/ >refs &&
	test ! -s refs
'

test_expect_success 'setup: three model targets, one request at a time, each slow' '
	mkdir -p repo3/src &&
	{
		echo "int old_api(int x) { return x; }"
		echo "int new_api(int x) { return x + 0; }"
		for i in 1 2 3; do echo "int f$i(void) { return old_api($i); }"; done
	} >repo3/src/a.c &&
	make_repo repo3 &&
	echo 300 >m/reply-1.delay &&
	sed -e "s/^name: orphan/name: broken/" -e "s/^repository: repo/repository: repo3/" \
		-e "s/^attempts: 1/concurrency: 1\njobs: 2\nattempts: 1/" c.yaml >c3.yaml
'

test_expect_success 'when the machinery breaks, no target is marked as stopped by a budget' '
	rm -f m/reply-2.json &&
	test_expect_code 3 sluice run --store s3.db --record /dev/full c3.yaml >out 2>err &&
	grep -q "/dev/full" err &&
	test "$(store_query s3.db "select count(*) from targets where state = '"'"'budget'"'"'")" = 0 &&
	test "$(store_query s3.db "select count(*) from targets where state = '"'"'pending'"'"'")" = 3
'

test_expect_success 'cleanup: stop the stub' '
	kill $(cat stub.pid)
'

test_expect_success 'setup: a reply in the wrong format, then a failed correction request' '
	mkdir m2 &&
	echo "there is no diff in this reply" | openai_reply m2/reply-1.json &&
	echo "{\"error\":{\"message\":\"bad request\"}}" >m2/reply-2.json &&
	echo 400 >m2/reply-2.status &&
	start_stub m2 && echo $stub_pid >stub2.pid &&
	sed -e "s/^name: orphan/name: correction/" \
		-e "s|^  base_url: .*|  base_url: http://127.0.0.1:$stub_port/v1\n  max_retries: 0|" \
		-e "s/^attempts: 1/edit_format: udiff\nattempts: 1/" c.yaml >c4.yaml
'

test_expect_success 'the attempt records the failed request, not the freed first reply' '
	{ sluice run --store s4.db c4.yaml >out 2>err; test $? = 1; } &&
	test -f m2/request-2.json &&
	test "$(store_query s4.db "select outcome, format_errors, reply is null from attempts")" = "provider_error|1|1" &&
	store_query s4.db "select format_reply from attempts" >reply &&
	grep -q "no diff in this reply" reply
'

test_expect_success 'cleanup: stop the second stub' '
	kill $(cat stub2.pid)
'

test_expect_success 'setup: a campaign without gates over three targets' '
	mkdir -p batch/src &&
	for i in 1 2 3; do
		echo "int f$i(void) { return old_api($i); }" >batch/src/f$i.c || return 1
	done &&
	make_repo batch &&
	cat >batch.yaml <<-EOF &&
	name: batch
	repository: batch
	scratch: $TRASH/scratch
	targets:
	  language: c
	  query: "((call_expression function: (identifier) @fn arguments: (argument_list (_) @arg)) @call (#eq? @fn \"old_api\"))"
	  capture: call
	rules:
	  - capture: call
	    template: "new_api(\${arg})"
	attempts: 1
	jobs: 1
	EOF
	git -C batch count-objects -v | sed -n "s/^count: //p" >loose.before
'

test_expect_success 'without gates, candidates are written as one pack: no loose object' '
	sluice run --store b1.db batch.yaml >out &&
	test "$(store_query b1.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 3 &&
	git -C batch count-objects -v | sed -n "s/^count: //p" >loose.after &&
	test_cmp loose.before loose.after &&
	store_query b1.db "select branch || '"'"' '"'"' || commit_oid from candidates" >want &&
	while read branch oid; do
		test "$(git -C batch rev-parse "refs/heads/$branch")" = "$oid" || return 1
	done <want &&
	test -z "$(ls scratch/batch | grep journal)" &&
	git -C batch fsck --strict
'

test_expect_success 'killed before its batch is written, the next run rebuilds each commit from its diff' '
	mkdir batch2 && cp -R batch/src batch2/ && make_repo batch2 &&
	sed "s/^repository: batch/repository: batch2/" batch.yaml >batch2.yaml &&
	test_expect_code 137 env SLUICE_TEST_KILL_BEFORE_FLUSH=1 sluice run --store b2.db batch2.yaml &&
	test "$(store_query b2.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 3 &&
	test -z "$(git -C batch2 for-each-ref refs/heads/sluice/)" &&
	ls scratch/batch | grep -q journal &&
	store_query b2.db "select commit_oid from candidates" >lost &&
	while read oid; do
		test_must_fail git -C batch2 cat-file -e "$oid" || return 1
	done <lost &&
	sluice run --store b2.db batch2.yaml >out &&
	test -z "$(ls scratch/batch | grep journal)" &&
	store_query b2.db "select id, branch, commit_oid from candidates" >after &&
	test $(wc -l <after) = 3 &&
	while IFS="|" read id branch oid; do
		test "$(git -C batch2 rev-parse "refs/heads/$branch")" = "$oid" &&
		{ git -C batch2 diff main "$oid" && echo; } >got.diff &&
		store_query b2.db "select diff from candidates where id = $id" >want.diff &&
		test_cmp want.diff got.diff || return 1
	done <after &&
	git -C batch2 fsck --strict
'


test_expect_success 'setup: a campaign without gates over 300 targets, two workers' '
	mkdir -p many/src &&
	for f in $(seq 0 29); do
		for i in $(seq 0 9); do
			echo "int f${f}_$i(void) { return old_api($i); }" || return 1
		done >many/src/f$f.c || return 1
	done &&
	make_repo many &&
	git -C many tag -a -m "a release" v1 &&
	git -C many pack-refs --all &&
	git -C many branch keep-loose &&
	git -C many for-each-ref --format="%(refname) %(objectname)" >many-refs.before &&
	sed -e "s/^name: batch/name: many/" -e "s/^repository: batch/repository: many/" \
		-e "s/^jobs: 1/jobs: 2/" batch.yaml >many.yaml
'

test_expect_success 'its 300 branches are packed refs, each at its stored commit, and git fsck passes' '
	sluice run --store m.db many.yaml >out &&
	test "$(store_query m.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 300 &&
	test -z "$(find many/.git/refs/heads/sluice -type f 2>/dev/null)" &&
	test "$(grep -c " refs/heads/sluice/many/" many/.git/packed-refs)" = 300 &&
	test "$(git -C many branch --list "sluice/many/*" | wc -l)" = 300 &&
	store_query m.db "select branch || '"'"' '"'"' || commit_oid from candidates" >want &&
	test $(wc -l <want) = 300 &&
	git -C many for-each-ref --format="%(refname:strip=2) %(objectname)" "refs/heads/sluice/many/" >got &&
	sort want >want.sorted &&
	sort got >got.sorted &&
	test_cmp want.sorted got.sorted &&
	git -C many for-each-ref --format="%(refname) %(objectname)" >many-refs.after &&
	grep -v "^refs/heads/sluice/many/" many-refs.after >outside.after &&
	test_cmp many-refs.before outside.after &&
	test "$(git -C many rev-parse v1^{commit})" = "$(git -C many rev-parse main)" &&
	test -f many/.git/refs/heads/keep-loose &&
	test ! -e many/.git/packed-refs.lock &&
	git -C many fsck --strict
'

test_expect_success 'a second campaign on the same repository keeps the first one branches' '
	sed -e "s/^name: many/name: many2/" -e "s/new_api/newer_api/" many.yaml >many2.yaml &&
	sluice run --store m2.db many2.yaml >out &&
	test "$(git -C many branch --list "sluice/many/*" | wc -l)" = 300 &&
	test "$(git -C many branch --list "sluice/many2/*" | wc -l)" = 300 &&
	git -C many for-each-ref --format="%(refname:strip=2) %(objectname)" "refs/heads/sluice/many/" >got &&
	sort got >got.sorted &&
	test_cmp want.sorted got.sorted &&
	git -C many fsck --strict
'

test_done
