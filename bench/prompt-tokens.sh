#!/bin/sh
# bench/prompt-tokens.sh REPO FILE QUERY [UNIT] - run by hand (never by make
# test): the tokens of the first prompt sluice sends for each target that
# QUERY (a tree-sitter query on C, capture @t) finds in FILE of REPO (a git
# repository; its HEAD), with the compact context (the default) and with
# `context: file` (the whole file), and the ratio.  UNIT is the campaign's
# unit (default capture).  Tokens are the bytes the command provider
# received on its stdin (system message and prompt) divided by 4, as
# sluice counts a provider that does not report usage.  Nothing is written
# to REPO: the campaign runs in a copy, its provider answers nothing usable
# and there are no gates.  SLUICE=path measures another build.  Prints one
# line per target, "PATH:LINE compact N file M (Rx)", then the medians.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SLUICE=${SLUICE:-"$ROOT/build/sluice"}
[ $# -ge 3 ] && git -C "$1" rev-parse -q --verify HEAD >/dev/null ||
	{ echo "usage: bench/prompt-tokens.sh REPO FILE QUERY [UNIT]" >&2; exit 2; }
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
git clone -q "$1" "$work/repo" || exit 2
unit=${4:-capture}
for mode in compact file; do
	mkdir "$work/$mode"
	# the provider keeps each request whose prompt is a first one, and answers nothing usable
	cat >"$work/$mode.yaml" <<EOF
name: prompt-$mode
repository: $work/repo
scratch: $work/scratch-$mode
context: $mode
targets:
  language: c
  paths: ["$2"]
  query: '$(printf '%s' "$3" | sed "s/'/''/g")'
  capture: t
  unit: $unit
provider:
  kind: command
  command: f=\$(mktemp $work/$mode/req.XXXXXX) && cat >\$f && echo no
attempts: 1
EOF
	"$SLUICE" run --store "$work/$mode.db" "$work/$mode.yaml" >/dev/null 2>"$work/$mode.err"
	sqlite3 "$work/$mode.db" "SELECT t.path || ':' || t.start_line, length(CAST(r.request AS BLOB))
		FROM replies r JOIN targets t ON t.id = r.target_id WHERE r.round = 0
		ORDER BY t.path, t.start_line" >"$work/$mode.sizes" ||
		{ cat "$work/$mode.err" >&2; exit 2; }
done
join -t '|' "$work/compact.sizes" "$work/file.sizes" |
awk -F'|' '{ c = int(($2 + 3) / 4); f = int(($3 + 3) / 4);
	printf "%s compact %d file %d (%.1fx)\n", $1, c, f, f / c; print c > "'"$work"'/c"; print f > "'"$work"'/f" }'
printf 'median: compact %s file %s tokens\n' "$(sort -n "$work/c" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')" \
	"$(sort -n "$work/f" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
