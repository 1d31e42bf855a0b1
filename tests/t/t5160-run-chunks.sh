#!/bin/sh
test_description='a run records the targets as scoping passes them on and reads those it works on from the store, a chunk at a time: what it holds does not grow with the campaign'
. ./test-lib.sh

# chunks_yaml [PREDICATES]: the campaign, its query with PREDICATES added
chunks_yaml() {
	cat <<-EOF
	name: chunks
	repository: repo
	scratch: $TRASH/scratch
	jobs: 2
	targets:
	  language: c
	  query: "((call_expression function: (identifier) @fn arguments: (argument_list (_) @arg)) @call (#eq? @fn \"old_api\")${1:-})"
	  capture: call
	  unit: function
	rules:
	  - capture: call
	    template: "new_api(\${arg})"
	attempts: 1
	EOF
}

# 30 function targets in three files, a rule for each, no gate, two workers.
test_expect_success 'setup: thirty calls to old_api, one per function' '
	mkdir -p repo/src &&
	for f in a b c; do
		{
			echo "int old_api(int x);"
			echo "int new_api(int x);"
			for i in 0 1 2 3 4 5 6 7 8 9; do
				echo "int $f$i(void) { return old_api($i); }"
			done
		} >repo/src/$f.c || return 1
	done &&
	make_repo repo &&
	chunks_yaml >c.yaml
'

# held: the number in "at most N target records" of the run's stats notice
held() {
	sed -n "s/.*run stats: at most \([0-9]*\) target records in memory.*/\1/p" "$1"
}

test_expect_success 'chunks of 4: every target proposed, at most a chunk and one a worker held' '
	SLUICE_RUN_CHUNK=4 SLUICE_RUN_STATS=1 sluice run --store s.db c.yaml >out 2>err &&
	grep -q "^  proposed  *30" out &&
	n=$(held err) &&
	test -n "$n" &&
	test "$n" -ge 1 &&
	test "$n" -le 6 &&
	test "$(sqlite3 s.db "select count(distinct target_id) from candidates")" = 30
'

test_expect_success 'pending and budget targets mixed are all worked on again, chunk by chunk' '
	sluice retry --store s.db src/a.c:3 src/a.c:4 src/b.c:7 src/b.c:12 src/c.c:3 src/c.c:9 >out &&
	grep -q "sent back 6 targets" out &&
	sqlite3 s.db "update targets set state = '"'"'budget'"'"' where state = '"'"'pending'"'"' and id % 2 = 0" &&
	test "$(sqlite3 s.db "select count(*) from targets where state = '"'"'budget'"'"'")" -ge 1 &&
	SLUICE_RUN_CHUNK=2 SLUICE_RUN_STATS=1 sluice run --store s.db c.yaml >out 2>err &&
	grep -q "^  proposed  *30" out &&
	n=$(held err) &&
	test "$n" -ge 1 && test "$n" -le 4 &&
	test "$(sqlite3 s.db "select count(*) from targets where attempts = 2")" = 6
'

test_expect_success 'batches of 3 candidates: each flushed between targets, every target proposed' '
	SLUICE_RUN_BATCH=3 sluice run --store s4.db c.yaml >out 2>err &&
	grep -q "^  proposed  *30" out &&
	test "$(sqlite3 s4.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = 30 &&
	for b in $(sqlite3 s4.db "select branch from candidates where branch is not null"); do
		git -C repo rev-parse --verify -q "refs/heads/$b^{commit}" >/dev/null || return 1
	done
'

test_expect_success 'a pack write that fails is written once more; failing twice fails the run' '
	SLUICE_TEST_PACK_FAILS=1 SLUICE_RUN_BATCH=3 sluice run --store s6p.db c.yaml >out 2>err &&
	grep -q "writing a pack of 3 candidates failed (made to fail.*); once more" err &&
	test "$(sqlite3 s6p.db "select count(*) from targets where state = '"'"'proposed'"'"'")" = 30 &&
	for b in $(sqlite3 s6p.db "select branch from candidates where branch is not null"); do
		git -C repo rev-parse --verify -q "refs/heads/$b^{commit}" >/dev/null || return 1
	done &&
	test_must_fail env SLUICE_TEST_PACK_FAILS=2 SLUICE_RUN_BATCH=3 \
		sluice run --store s7p.db c.yaml >out 2>err &&
	grep -q "cannot write a pack of candidates: made to fail" err
'

# scoped: "at most N of M targets held at once" while scoping and recording
scoped() {
	sed -n "s/.*scoping: at most \([0-9]*\) of \([0-9]*\) targets held at once.*/\1 \2/p" "$1"
}

test_expect_success 'recorded while scoped: at most a chunk of the 30 targets held, same ids and order' '
	SLUICE_RUN_CHUNK=4 SLUICE_RUN_STATS=1 sluice run --store s2.db c.yaml >out 2>err &&
	grep -q "^  proposed  *30" out &&
	set -- $(scoped err) &&
	test "$2" = 30 &&
	test "$1" -ge 1 && test "$1" -le 4 &&
	sqlite3 s.db "select id, key from targets order by id" >ids1 &&
	sqlite3 s2.db "select id, key from targets order by id" >ids2 &&
	test_cmp ids1 ids2 &&
	sqlite3 s2.db "select key from targets order by path, start_byte, end_byte desc" >scope-order &&
	cut -d"|" -f2 ids2 >id-order &&
	test_cmp scope-order id-order
'

test_expect_success 'a rerun scopes again: at most a chunk held, targets out of the query set aside' '
	chunks_yaml " (#match? @arg \\\"^[0-4]\$\\\")" >c5.yaml &&
	sqlite3 s2.db "update targets set state = '"'"'pending'"'"'" &&
	{
		# exit 1: the 15 still matching fail (their one attempt was made)
		SLUICE_RUN_CHUNK=4 SLUICE_RUN_STATS=1 sluice run --store s2.db c5.yaml >out 2>err
		test $? = 1
	} &&
	set -- $(scoped err) &&
	test "$2" = 15 &&
	test "$1" -ge 1 && test "$1" -le 4 &&
	test "$(sqlite3 s2.db "select count(*) from targets")" = 30 &&
	sqlite3 s2.db "select key from targets where state = '"'"'skipped'"'"' and reason = '"'"'no longer matches the query'"'"' order by id" >gone &&
	test "$(wc -l <gone)" = 15 &&
	test "$(sqlite3 s2.db "select count(*) from targets where state <> '"'"'skipped'"'"'")" = 15
'

# results: the N of "the results of N files" (what scoping held at once)
results() {
	sed -n "s/.*scoping: at most [0-9]* of [0-9]* targets held at once, the results of \([0-9]*\) files.*/\1/p" "$1"
}

test_expect_success 'setup: 2,000 files, a call to old_api in each' '
	mkdir -p many/src &&
	awk -v dir=many/src "BEGIN {
		for (f = 0; f < 2000; f++) {
			d = dir \"/d\" int(f / 100)
			if (f % 100 == 0) system(\"mkdir -p \" d)
			p = d \"/f\" f \".c\"
			printf \"int old_api(int x);\\nint f%d(void) { return old_api(%d); }\\n\", f, f > p
			close(p)
		}
	}" &&
	test -f many/src/d19/f1999.c &&
	make_repo many &&
	chunks_yaml | sed "s/^name: chunks/name: many/; s/^repository: repo/repository: many/" >many.yaml &&
	sluice scope many.yaml --json >plain &&
	test "$(wc -l <plain)" = 2000
'

# A rerun scopes the base again and every file is a cache hit: scoping
# reads each hit's result again from the cache when its turn to be passed
# on comes, 128 files a transaction (it held all 2,000 before).
test_expect_success 'a rerun answered from the cache holds the results of a chunk of files, not all: same ids and order' '
	sluice run --store s7.db many.yaml >out 2>err &&
	grep -q "^  proposed  *2000" out &&
	sqlite3 s7.db "select id, key from targets order by id" >ids1 &&
	SLUICE_RUN_STATS=1 sluice run --store s7.db many.yaml >out 2>err &&
	set -- $(scoped err) &&
	test "$2" = 2000 &&
	n=$(results err) &&
	test -n "$n" && test "$n" -ge 1 && test "$n" -le 200 &&
	sqlite3 s7.db "select id, key from targets order by id" >ids2 &&
	test_cmp ids1 ids2 &&
	sqlite3 s7.db "select key from targets order by path, start_byte, end_byte desc" >scope-order &&
	cut -d"|" -f2 ids2 >id-order &&
	test_cmp scope-order id-order &&
	sluice scope many.yaml --cache s7.db --json --stats >warm &&
	grep -q "\"cache_hits\":2000," warm &&
	grep -v "^{\"stats\"" warm >warm-targets &&
	test_cmp plain warm-targets
'

test_expect_success 'cached results that do not decode are scoped again, passed on in order and rewritten' '
	sqlite3 s7.db "update scope_cache set data = x'"'"'0500'"'"' where blob in (select blob from scope_cache order by blob limit 1000)" &&
	test "$(sqlite3 s7.db "select count(*) from scope_cache where data = x'"'"'0500'"'"'")" = 1000 &&
	SLUICE_RUN_STATS=1 sluice run --store s7.db many.yaml >out 2>err &&
	set -- $(scoped err) &&
	test "$2" = 2000 &&
	sqlite3 s7.db "select id, key from targets order by id" >ids3 &&
	test_cmp ids1 ids3 &&
	test "$(sqlite3 s7.db "select count(*) from scope_cache where data = x'"'"'0500'"'"'")" = 0 &&
	sqlite3 s7.db "update scope_cache set data = x'"'"'0500'"'"' where blob not in (select blob from scope_cache order by blob limit 1000)" &&
	sluice scope many.yaml --cache s7.db --json --stats >warm &&
	grep -q "\"cache_hits\":1000," warm &&
	grep -v "^{\"stats\"" warm >warm-targets &&
	test_cmp plain warm-targets
'

# A second campaign of the same changes finds its new objects already in the
# first campaign packs; read back from there they filled each pack cache
# of delta bases (80 MB over 1,200 packs), so they go to packs of its own.
test_expect_success 'a second campaign of the same changes leaves the first one packs alone' '
	chunks_yaml | sed "s/^name: chunks/name: again/" >again.yaml &&
	ls repo/.git/objects/pack/*.pack >packs.before &&
	test -s packs.before &&
	touch -d @978307200 $(cat packs.before) &&
	sluice run --store s9.db again.yaml >out 2>err &&
	grep -q "^  proposed  *30" out &&
	for p in $(cat packs.before); do
		test "$(stat -c %Y "$p")" = 978307200 || return 1
	done &&
	ls repo/.git/objects/pack/*.pack >packs.after &&
	test "$(comm -13 packs.before packs.after | wc -l)" -ge 1 &&
	test "$(git -C repo for-each-ref "refs/heads/sluice/again/*" | wc -l)" = 30 &&
	git -C repo fsck --connectivity-only
'

test_done
