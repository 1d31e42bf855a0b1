#!/bin/sh
test_description='candidate branches in packed-refs: gc and crash recovery in one rewrite, stale locks'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

N=6

test_lazy_prereq STRACE 'strace -o /dev/null true'

# nogates_campaign F NAME PORT: rel_campaign without its gates (its
# candidates are written in batches, their branches into packed-refs)
nogates_campaign() {
	rel_campaign "$1.full" "$2" "$3" &&
	sed -e '/^gates:/,$d' "$1.full" >"$1" &&
	! grep -q "^gates:" "$1"
}

# stale_branches K PREFIX: K branches under PREFIX, packed, at a commit whose
# trailer names the campaign of p.db (gc deletes only its store's branches)
stale_branches() {
	c=$(leftover_commit repo p.db) &&
	i=1 &&
	while [ $i -le $1 ]; do
		echo "create refs/heads/$2/stale-$i $c" || return 1
		i=$((i + 1))
	done >updates &&
	git -C repo update-ref --stdin <"$TRASH/updates" &&
	git -C repo pack-refs --all
}

# renames_of_packed TRACE: how many times packed-refs.lock became packed-refs
renames_of_packed() {
	grep "rename.*packed-refs.lock.*packed-refs\"" "$1" | grep -vc "unfinished\|= -1" || true
}

# traced TRACE CMD...: CMD under strace, its renames written to TRACE.
# LeakSanitizer cannot work under ptrace: off for CMD (the sanitizer build).
traced() {
	t=$1 && shift &&
	LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}detect_leaks=0" \
		strace -f -o "$t" -e trace=rename,renameat,renameat2 "$@"
}

# plant_lock PID: a packed-refs.lock with the note sluice process PID leaves
plant_lock() {
	: >repo/.git/packed-refs.lock &&
	printf "%s %s %s\n" "$(uname -n)" "$1" "$(stat -c %i repo/.git/packed-refs.lock)" \
		>repo/.git/packed-refs.sluice-lock
}

# dead_pid: a pid no process has (one that just exited)
dead_pid() {
	sh -c 'echo $$'
}

test_expect_success 'setup: a campaign without gates, its candidates proposed' '
	rel_repo repo $N &&
	rel_model m 0 && start_stub m && echo $stub_pid >stub.pid &&
	nogates_campaign p.yaml pk $stub_port &&
	sluice run --store p.db p.yaml >out &&
	test "$(sqlite3 p.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = $N &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/pk/ >proposed.br &&
	test $(wc -l <proposed.br) = $N
'

test_expect_success STRACE 'gc deletes 300 stale branches in one rewrite of packed-refs' '
	stale_branches 300 sluice/pk &&
	traced trace sluice gc --store p.db >out 2>err &&
	cat err &&
	grep -q "^removed 300 branches$" out &&
	test "$(renames_of_packed trace)" = 1 &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/pk/ >after.br &&
	test_cmp proposed.br after.br &&
	git -C repo fsck --strict
'

test_expect_success 'a lock a crashed sluice left is removed, with a message' '
	stale_branches 5 sluice/pk &&
	pid=$(dead_pid) && ! kill -0 $pid 2>/dev/null &&
	plant_lock $pid &&
	sluice gc --store p.db >out 2>err &&
	grep "removed .*packed-refs.lock, left by sluice process $pid (gone)" err &&
	grep -q "^removed 5 branches$" out &&
	test ! -e repo/.git/packed-refs.lock &&
	git -C repo for-each-ref --format="%(refname) %(objectname)" refs/heads/sluice/pk/ >after.br &&
	test_cmp proposed.br after.br
'

test_expect_success 'a lock git may hold is left alone: gc says what to do' '
	stale_branches 5 sluice/pk &&
	: >repo/.git/packed-refs.lock && : >repo/.git/packed-refs.sluice-lock &&
	sluice gc --store p.db >out 2>err &&
	grep "packed-refs.lock. exists: a git or sluice process may be updating refs; if none is running on this repository (a crash left it), remove the file" err &&
	grep -q "^removed 0 branches$" out &&
	test -e repo/.git/packed-refs.lock &&
	test $(git -C repo for-each-ref refs/heads/sluice/pk/ | wc -l) = $((N + 5)) &&
	# the same for a live sluice process
	plant_lock $$ &&
	sluice gc --store p.db >out 2>err &&
	grep -q "^removed 0 branches$" out &&
	test -e repo/.git/packed-refs.lock &&
	rm repo/.git/packed-refs.lock &&
	sluice gc --store p.db >out 2>err &&
	grep -q "^removed 5 branches$" out
'

test_expect_success STRACE 'a crashed run'"'"'s queued branches come back in one packed update' '
	rm -f m/request-* &&
	nogates_campaign k.yaml kk $(cat m/port) &&
	# killed as its first worker ends: what it proposed is in the store and
	# the journals of its workers only
	test_expect_code 137 env SLUICE_TEST_KILL_BEFORE_FLUSH=1 sluice run --store k.db k.yaml >out 2>err &&
	p=$(sqlite3 k.db "select count(*) from targets where state = '"'"'proposed'"'"'") &&
	test $p -ge 1 &&
	test $(ls scratch/kk | grep -c "^journal-") -ge 1 &&
	test -z "$(git -C repo for-each-ref refs/heads/sluice/kk/)" &&
	# the next run has nothing else to do: every rename of packed-refs is the restore
	sqlite3 k.db "update targets set state = '"'"'skipped'"'"' where state = '"'"'pending'"'"'" &&
	traced trace sluice run --store k.db k.yaml >out 2>err &&
	test "$(renames_of_packed trace)" = 1 &&
	test -z "$(ls scratch/kk | grep "^journal-")" &&
	test $(git -C repo for-each-ref refs/heads/sluice/kk/ | wc -l) = $p &&
	test -z "$(find repo/.git/refs/heads -path "*sluice/kk*" -type f)" &&
	sqlite3 k.db "select branch || '"'"' '"'"' || commit_oid from candidates where state = '"'"'passed'"'"'" |
		sort >want.br &&
	git -C repo for-each-ref --format="%(refname:short) %(objectname)" refs/heads/sluice/kk/ |
		sort >have.br &&
	test_cmp want.br have.br
'

test_expect_success 'cleanup' '
	kill $(cat stub.pid)
'

test_done
