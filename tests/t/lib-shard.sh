# lib-shard.sh - what the tests of shards and their merge compare (sourced
# after test-lib.sh): a store's funnel, targets and row counts, and the
# proposed branches of a repository, each without what names a machine.
#
# status_flat STORE    status --json, one field a line, without the lists,
#                      the repository and the leases
# target_lines STORE   every target as "path:line state attempts", sorted
# branch_trees REPO    each branch under sluice/ with the tree of its commit
# row_counts STORE     how many rows each table holds
# sl ARGS...           sluice from the top of the source tree (the example
#                      campaign's command provider reads a file there)
# run_shard K N CLONE STORE [options]   one shard of $CAMPAIGN (the example)

CAMPAIGN=examples/migration/campaign.yaml

sl() {
	(cd "$EXAMPLES/.." && sluice "$@")
}

# run_shard K N CLONE STORE [more options]: one shard; exit 1 (nothing proposed) is fine
run_shard() {
	k=$1 n=$2 clone=$3 store=$4
	shift 4
	sl run --shard "$k/$n" --repo "$TRASH/$clone" --store "$TRASH/$store" "$@" $CAMPAIGN \
		>"$store.out" 2>&1 || test $? = 1 || { cat "$store.out"; false; }
}

# status --json without what names a machine: repository, ids, commits, times
status_flat() {
	sluice status --store "$1" --json >"$1.json" &&
	sqlite3 :memory: "select json_remove(cast(readfile('$1.json') as text), '\$.target_list', '\$.candidate_list', '\$.repository', '\$.leases')" | tr ',' '\n'
}

# every target as "path:line state attempts", sorted
target_lines() {
	sqlite3 "$1" "select path || ':' || start_line || ' ' || state || ' ' || attempts from targets order by 1"
}

# each proposed branch of REPO with its tree
branch_trees() {
	git -C "$1" for-each-ref --format='%(refname) %(objectname)' refs/heads/sluice/ |
	while read -r ref commit; do echo "$ref $(git -C "$1" rev-parse "$commit^{tree}")"; done
}

# how many rows each table of STORE holds (runs: one per run of a shard, also a rerun)
row_counts() {
	for t in campaigns targets attempts candidates gate_runs decisions replies runs baselines gate_cache published; do
		echo "$t $(sqlite3 "$1" "select count(*) from $t")"
	done
}
