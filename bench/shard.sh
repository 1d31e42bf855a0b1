#!/bin/sh
# bench/shard.sh [BUILD] [TARGETS] - a campaign as 1, 2 and 4 shards, and the
# merge at scale.
#
# Part 1: the migration example (examples/migration, no network) run as N =
# 1, 2 and 4 shards on this machine, the shards one after another and then
# all at once, each in its own clone with its own store, bundle and TMPDIR
# (as ci/slurm/sluice-array.sbatch runs them), then merged.  Prints per
# configuration the wall time of the shards, the cost per target (the sum of
# the shards' times over the targets), the merge time and the merged store's
# size, and checks the merged funnel is the one-shard funnel.
# Part 2: a store of TARGETS (default 100000) proposed targets, each with an
# attempt, a candidate and three gate runs (made with SQL from a real shard
# store), merged into a new store, then merged again (nothing to copy).
# Run by hand after `make`:  sh bench/shard.sh
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$top/build}" && pwd)
ntargets=${2:-100000}
sluice=$BUILD/sluice
command -v sqlite3 >/dev/null || { echo "needs sqlite3" >&2; exit 2; }
test -x "$sluice" || { echo "missing $sluice: make" >&2; exit 2; }
tmp=$(mktemp -d /tmp/sluice-bench-shard.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
campaign=examples/migration/campaign.yaml

now_ms() { date +%s%3N; }

cp -R "$top/examples/migration/project" "$tmp/user"
(cd "$tmp/user" && git init -q -b main && git add -A &&
	git -c user.name=bench -c user.email=bench@example.com commit -q -m base)
base=$(git -C "$tmp/user" rev-parse main)
targets=$("$sluice" shard-plan --repo "$tmp/user" --shards 1 --json "$top/$campaign" |
	sed -n 's/.*"targets":\([0-9]*\).*/\1/p')

# shard DIR K N: one shard in its clone under DIR; prints its milliseconds
shard() {
	w=$1/s$2
	git clone -q --shared --no-checkout "$tmp/user" "$w"
	mkdir -p "$w.tmp"
	t0=$(now_ms)
	(cd "$top" && TMPDIR="$w.tmp" "$sluice" run --shard "$2/$3" --base "$base" --repo "$w" \
		--store "$w.db" --bundle "$w.bundle" "$campaign") >"$w.out" 2>&1 || [ $? -eq 1 ]
	echo $(($(now_ms) - t0)) >"$w.ms"
}

# config N MODE: the shards (seq or par), then the merge; one line of results
config() {
	n=$1 mode=$2
	d=$tmp/n$n-$mode
	mkdir -p "$d"
	git clone -q "$tmp/user" "$d/into"
	t0=$(now_ms)
	k=0
	while [ $k -lt "$n" ]; do
		if [ "$mode" = par ]; then shard "$d" $k "$n" & else shard "$d" $k "$n"; fi
		k=$((k + 1))
	done
	wait
	wall=$(($(now_ms) - t0))
	sum=$(cat "$d"/s*.ms | awk '{ s += $1 } END { print s }')
	set --
	k=0
	while [ $k -lt "$n" ]; do set -- "$@" "$d/s$k.db" --bundle "$d/s$k.bundle"; k=$((k + 1)); done
	t0=$(now_ms)
	"$sluice" merge --store "$d/merged.db" --repo "$d/into" "$@" >"$d/merge.out"
	merge=$(($(now_ms) - t0))
	"$sluice" status --store "$d/merged.db" | sed -n '2,16p' >"$d/funnel"
	same=yes
	[ ! -f "$tmp/funnel.1" ] || cmp -s "$tmp/funnel.1" "$d/funnel" || same=NO
	[ -f "$tmp/funnel.1" ] || cp "$d/funnel" "$tmp/funnel.1"
	printf "%-3s %-4s %8d %12d %9d %12d  %s\n" "$n" "$mode" "$wall" $((sum / targets)) "$merge" \
		"$(stat -c %s "$d/merged.db")" "$same"
}

echo "part 1: $campaign, $targets targets"
echo "N   mode  wall_ms  ms/target*  merge_ms  store_bytes  funnel=1 shard"
for n in 1 2 4; do
	for mode in seq par; do
		[ "$n" = 1 ] && [ "$mode" = par ] && continue
		config $n $mode
	done
done
echo "  (* the shards' summed time over the targets: what each target costs)"

echo "part 2: merging a store of $ntargets targets"
cp "$tmp/n1-seq/s0.db" "$tmp/big.db"
sqlite3 "$tmp/big.db" "
PRAGMA foreign_keys = OFF;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $ntargets)
INSERT INTO targets (campaign_id, key, path, lang, blob, unit, start_byte, end_byte, start_line,
	start_col, end_line, end_col, nsites, state, attempts, updated_at)
SELECT 1, 'gen/f' || i || '.c:10-20', 'gen/f' || i || '.c', 'c', 'abc', 'capture', 10, 20, 1, 1,
	1, 5, 1, 'proposed', 1, '2026-01-01' FROM n;
INSERT INTO attempts (target_id, n, source, outcome, created_at) SELECT id, 1, 'rules',
	'candidate', '2026-01-01' FROM targets WHERE key LIKE 'gen/%';
INSERT INTO candidates (attempt_id, target_id, diff, commit_oid, state, created_at) SELECT a.id,
	a.target_id, 'diff --git a/x b/x', '1111111111111111111111111111111111111111', 'passed',
	'2026-01-01' FROM attempts a JOIN targets t ON t.id = a.target_id WHERE t.key LIKE 'gen/%';
INSERT INTO gate_runs (candidate_id, gate, verdict, exit_status, duration_ms, output_bytes,
	output_tail, created_at) SELECT c.id, g.g, 'pass', 0, 1, 0, '', '2026-01-01' FROM
	candidates c JOIN targets t ON t.id = c.target_id, (SELECT 'syntax' g UNION ALL SELECT
	'build' UNION ALL SELECT 'test') g WHERE t.key LIKE 'gen/%';"
t0=$(now_ms)
"$sluice" merge --store "$tmp/big-merged.db" --repo "$tmp/user" "$tmp/big.db" >/dev/null
first=$(($(now_ms) - t0))
t0=$(now_ms)
"$sluice" merge --store "$tmp/big-merged.db" --repo "$tmp/user" "$tmp/big.db" >/dev/null
again=$(($(now_ms) - t0))
echo "merge: ${first} ms (again, nothing to copy: ${again} ms); input $(stat -c %s "$tmp/big.db") bytes, merged $(stat -c %s "$tmp/big-merged.db") bytes"
