#!/bin/sh
test_description='campaigns without gates: batched candidates under runs at once and kill -9'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

N=40

# nogates_campaign F NAME PORT REPO: rel_campaign without its gates (so its
# candidates are written in batches), against REPO
nogates_campaign() {
	rel_campaign "$1.full" "$2" "$3" &&
	sed -e '/^gates:/,$d' -e "s/^repository: repo$/repository: $4/" "$1.full" >"$1" &&
	! grep -q "^gates:" "$1"
}

# check_batches STORE REPO PREFIX: every target proposed once; each passed
# candidate's branch exists at the commit whose diff the store holds; no
# other branch under PREFIX; no journal left; the repository is sound
check_batches() {
	test "$(sqlite3 "$1" "select count(*) from targets where state = 'proposed'")" = $N &&
	test "$(sqlite3 "$1" "select count(*) from candidates where state = 'passed'")" = $N &&
	test "$(sqlite3 "$1" "select count(distinct branch) from candidates where state = 'passed'")" = $N &&
	sqlite3 "$1" "select id || '|' || branch || '|' || commit_oid from candidates where state = 'passed'" >cands &&
	while IFS="|" read id branch oid; do
		test "$(git -C "$2" rev-parse "refs/heads/$branch")" = "$oid" &&
		{ git -C "$2" diff main "$oid" && echo; } >got.diff &&
		sqlite3 "$1" "select diff from candidates where id = $id" >want.diff &&
		test_cmp want.diff got.diff || return 1
	done <cands &&
	cut -d"|" -f2 cands | sort >want.br &&
	git -C "$2" for-each-ref --format="%(refname:short)" "refs/heads/$3/" | grep -v "/base-" |
		sort >have.br &&
	test_cmp want.br have.br &&
	test -z "$(ls scratch/$3 2>/dev/null | grep journal)" &&
	git -C "$2" fsck --strict
}

test_expect_success 'setup: 40 targets, a model, a campaign without gates' '
	rel_repo repo $N &&
	rel_model m 50 && start_stub m && echo $stub_pid >stub.pid && echo $stub_port >port
'

for k in 2 3
do
	test_expect_success "$k runs at once: every batched branch at its own commit" '
		rm -rf r$k && cp -R repo r$k && rm -f m/request-* &&
		nogates_campaign b$k.yaml b$k $(cat port) r$k &&
		i=1 &&
		while [ $i -le $k ]; do
			{ sluice run --store b$k.db b$k.yaml >out$i 2>err$i & echo $! >pid$i; } &&
			i=$((i + 1))
		done &&
		i=1 &&
		while [ $i -le $k ]; do
			{ wait $(cat pid$i); echo $? >rc$i; } &&
			cat err$i &&
			test "$(cat rc$i)" = 0 &&
			i=$((i + 1))
		done &&
		test "$(sqlite3 b$k.db "select count(distinct owner) from runs")" = $k &&
		test $(rel_requests m) = $N &&
		check_batches b$k.db r$k sluice/b$k
	'
done

test_expect_success 'kill -9 of one of three runs mid-batch: the next run rebuilds what it lost' '
	rm -rf rk && cp -R repo rk && rm -f m/request-* &&
	nogates_campaign bk.yaml bk $(cat port) rk &&
	# this one dies (SIGKILL) as its first worker ends, before any of its
	# batches reaches the repository: its proposals exist in the store and
	# its journals only
	{ SLUICE_TEST_KILL_BEFORE_FLUSH=1 sluice run --store bk.db bk.yaml >outk 2>errk &
	  echo $! >pidk; } &&
	{ sluice run --store bk.db bk.yaml >out1 2>err1 & echo $! >pid1; } &&
	{ sluice run --store bk.db bk.yaml >out2 2>err2 & echo $! >pid2; } &&
	{ wait $(cat pidk); echo $? >rck; } &&
	{ wait $(cat pid1); echo $? >rc1; } && { wait $(cat pid2); echo $? >rc2; } &&
	cat err1 err2 &&
	test "$(cat rck)" = 137 && test "$(cat rc1)" = 0 && test "$(cat rc2)" = 0 &&
	cat scratch/bk/journal-*-$(cat pidk)-* >lost &&
	test -s lost &&
	while read oid source branch; do
		test_must_fail git -C rk cat-file -e "$oid" &&
		test_must_fail git -C rk rev-parse -q --verify "refs/heads/$branch" || return 1
	done <lost &&
	# two runs at once find the orphaned journals: one restores each
	{ sluice run --store bk.db bk.yaml >out1 2>err1 & echo $! >pid1; } &&
	{ sluice run --store bk.db bk.yaml >out2 2>err2 & echo $! >pid2; } &&
	{ wait $(cat pid1); echo $? >rc1; } && { wait $(cat pid2); echo $? >rc2; } &&
	cat err1 err2 &&
	test "$(cat rc1)" = 0 && test "$(cat rc2)" = 0 &&
	check_batches bk.db rk sluice/bk
'

test_expect_success 'kill -9 from outside while ten proposals wait in memory; two runs finish' '
	rm -rf rx && cp -R repo rx && rm -rf mx && rel_model mx 0 &&
	# from the eleventh request on, the model hangs: the run holds ten
	# proposals in its batch, in memory and in its journal only
	cp mx/reply-1.json mx/reply-11.json && echo hang >mx/reply-11.fault &&
	rm mx/match-1.* &&
	start_stub mx && echo $stub_pid >stubx.pid &&
	nogates_campaign bx.yaml bx $stub_port rx &&
	{ sluice run --store bx.db bx.yaml >outx 2>errx & echo $! >pidx; } &&
	i=0 &&
	while [ $i -lt 1200 ] &&
	      [ "$(sqlite3 bx.db "select count(*) from candidates where state = '"'"'passed'"'"'" \
		2>/dev/null)" != 10 ]; do
		sleep 0.05
		i=$((i + 1))
	done &&
	test "$(sqlite3 bx.db "select count(*) from candidates where state = '"'"'passed'"'"'")" = 10 &&
	test "$(cat scratch/bx/journal-*-$(cat pidx)-* | wc -l)" = 10 &&
	kill -9 $(cat pidx) &&
	{ wait $(cat pidx) 2>/dev/null || :; } &&
	test -z "$(git -C rx for-each-ref refs/heads/sluice/bx/ | grep -v /base-)" &&
	rm mx/reply-11.* &&
	# a line whose candidate the store never recorded (the kill came
	# between the two), its commit in the repository all the same
	echo "$(git -C rx rev-parse main) model sluice/bx/never-recorded" \
		>>$(ls scratch/bx/journal-*-$(cat pidx)-* | head -n 1) &&
	{ sluice run --store bx.db bx.yaml >out1 2>err1 & echo $! >pid1; } &&
	{ sluice run --store bx.db bx.yaml >out2 2>err2 & echo $! >pid2; } &&
	{ wait $(cat pid1); echo $? >rc1; } && { wait $(cat pid2); echo $? >rc2; } &&
	cat err1 err2 &&
	test "$(cat rc1)" = 0 && test "$(cat rc2)" = 0 &&
	check_batches bx.db rx sluice/bx &&
	kill $(cat stubx.pid)
'

test_expect_success 'the store fills up mid-batch: no branch without its recorded candidate' '
	rel_repo rf 400 &&
	# the model campaign without its provider and gates: a rule instead
	nogates_campaign f.yaml full 1 rf &&
	sed -i "/^provider:/,/^attempts:/{/^attempts:/!d}" f.yaml &&
	printf "%s\n" "rules:" "  - capture: call" "    template: \"new_api(0)\"" >>f.yaml &&
	! grep -q "^provider:" f.yaml &&
	mkdir small &&
	# room for the targets and a few attempts: it fills up during the batch
	unshare -rm sh -c "mount -t tmpfs -o size=1000k tmpfs small &&
		sluice run --store small/f.db f.yaml >out 2>err; echo \$? >rc;
		cp small/f.db* . 2>/dev/null; true" &&
	cat err &&
	test "$(cat rc)" = 3 &&
	grep -q "the disk is full" err &&
	test "$(sqlite3 f.db "select count(*) from candidates")" -ge 1 &&
	sqlite3 f.db "select branch from candidates where state = '"'"'passed'"'"'" | sort >want.br &&
	git -C rf for-each-ref --format="%(refname:short)" refs/heads/sluice/full/ | grep -v "/base-" |
		sort >have.br &&
	test_cmp want.br have.br &&
	git -C rf fsck --strict &&
	sluice run --store f.db f.yaml >out 2>err &&
	test "$(sqlite3 f.db "select count(*) from targets where state <> '"'"'proposed'"'"'")" = 0 &&
	sqlite3 f.db "select branch from candidates where state = '"'"'passed'"'"'" | sort >want.br &&
	test $(wc -l <want.br) = 400 &&
	git -C rf for-each-ref --format="%(refname:short)" refs/heads/sluice/full/ | grep -v "/base-" |
		sort >have.br &&
	test_cmp want.br have.br
'

test_expect_success 'cleanup' '
	kill $(cat stub.pid)
'

test_done
