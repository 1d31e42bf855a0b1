#!/bin/sh
# sluice-submit.sh - run a campaign on a Slurm cluster: N shards as one job
# array, and a merge job that starts when every shard has ended well.
#
#   sh ci/slurm/sluice-submit.sh CAMPAIGN.yaml REPO OUTDIR N [SBATCH OPTION]...
#
# Run it from the directory the campaign's commands expect (a command
# provider's relative paths), on a file system every node sees (REPO, OUTDIR
# and this directory).  The base commit is resolved here, once, and every
# shard is told it (`sluice run --base`): a shard whose repository resolves
# the campaign's base to another commit refuses to run.  Each task of the
# array runs sluice-array.sbatch (shard K of N in a node-local clone, its
# store and bundle copied to OUTDIR/shard-K.db and OUTDIR/shard-K.bundle);
# sluice-merge.sbatch then folds them into OUTDIR/merged.db and makes the
# proposed branches in REPO.  Logs: OUTDIR/shard-K.log, OUTDIR/merge.log.
# SBATCH OPTIONs (--partition=..., --time=...) go to both jobs.  Prints the
# two job ids, "ARRAY MERGE", on stdout.  sluice must be on PATH (or
# $SLUICE name it) on every node.
set -eu
[ $# -ge 4 ] || { echo "usage: sluice-submit.sh CAMPAIGN.yaml REPO OUTDIR N [SBATCH OPTION]..." >&2; exit 2; }
campaign=$1 repo=$2 out=$3 n=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
sluice=${SLUICE:-sluice}
case $n in ''|*[!0-9]*|0) echo "sluice-submit.sh: N must be a positive number, got '$n'" >&2; exit 2 ;; esac
campaign=$(cd "$(dirname "$campaign")" && pwd)/$(basename "$campaign")
repo=$(cd "$repo" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
# the base every shard must scope, and how many targets each gets
"$sluice" shard-plan --repo "$repo" --shards "$n" "$campaign" >&2
base=$("$sluice" shard-plan --json --repo "$repo" --shards "$n" "$campaign" |
	sed -n 's/.*"base":"\([0-9a-f]*\)".*/\1/p')
[ -n "$base" ] || { echo "sluice-submit.sh: cannot resolve the campaign's base" >&2; exit 2; }
export SLUICE_CAMPAIGN="$campaign" SLUICE_REPO="$repo" SLUICE_OUT="$out" SLUICE_BASE="$base" SLUICE_SHARDS="$n"
array=$(sbatch --parsable --array="0-$((n - 1))" --chdir="$PWD" --output="$out/shard-%a.log" \
	--export=ALL "$@" "$here/sluice-array.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" --chdir="$PWD" --output="$out/merge.log" \
	--export=ALL "$@" "$here/sluice-merge.sbatch")
merge=${merge%%;*}
echo "$array $merge"
