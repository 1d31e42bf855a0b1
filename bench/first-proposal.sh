#!/bin/sh
# bench/first-proposal.sh - when the first candidate is proposed, against the
# base's preparation plus one candidate's gates (issue 29 point 6), run by
# hand (never by make test).
#
#   sh bench/first-proposal.sh [PREP_S] [MODEL_S] [REPEAT]
#
# One target; a `prepare: true` gate that takes PREP_S seconds (default 4)
# and a gate `true`; the command provider answers after MODEL_S seconds
# (default 3).  From the run's events (--events, docs/EVENTS.md), REPEAT
# times (default 3): the first proposal (run_start to the first `candidate`
# event with passed true), the base (run_start to the baseline's last
# gate_ended: the warm base prepared and measured), and the candidate's own
# gates (the sum of its gate_ended durations).  Prints medians and
# first / (base + gates): the goal is at most 1.0x (plus the scheduling of a
# few milliseconds), where a run that asked the model only after the base
# would show (base + model + gates) / (base + gates).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SLUICE=${SLUICE:-$ROOT/build/sluice}
PREP=${1:-4} MODEL=${2:-3} REPEAT=${3:-3}
die() { echo "bench/first-proposal.sh: $*" >&2; exit 2; }
[ -x "$SLUICE" ] || die "build sluice first (make)"
command -v jq >/dev/null || die "needs jq"
for v in "$PREP" "$MODEL" "$REPEAT"; do
	case $v in '' | *[!0-9]*) die "arguments are whole numbers: $v" ;; esac
done
[ "$REPEAT" -ge 1 ] && [ "$REPEAT" -le 20 ] || die "1 <= REPEAT <= 20"

work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-first.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
cd "$work"
mkdir -p repo/src
printf 'int old_api(int x) { return x; }\nint new_api(int x) { return x; }\nint f(void) { return old_api(1); }\n' >repo/src/a.c
(cd repo && git init -q -b main && git add -A && git -c user.name=b -c user.email=b@b commit -q -m base)
printf '```c\nint f(void) { return new_api(1); }\n```\n' >reply.txt
printf 'cat >/dev/null\nsleep %s\ncat %s/reply.txt\n' "$MODEL" "$work" >model.sh

campaign() { # N
	cat <<EOF
name: first-$1
repository: repo
scratch: $work/scratch$1
targets:
  language: c
  query: '((call_expression function: (identifier) @fn) @call (#eq? @fn "old_api"))'
  unit: function
provider: {kind: command, command: "sh $work/model.sh"}
gates:
  - {name: prep, command: "sleep $PREP", prepare: true, timeout: 300}
  - {name: check, command: "true"}
EOF
}

# ms between two of the events' timestamps (2026-01-02T03:04:05.678Z)
ms() { jq -rn --arg a "$1" --arg b "$2" '
	def t: (.[0:19] + "Z" | fromdateiso8601) * 1000 + (.[20:23] | tonumber);
	($b | t) - ($a | t)'; }

: >rows
r=1
while [ "$r" -le "$REPEAT" ]; do
	campaign "$r" >c$r.yaml
	"$SLUICE" run --store s$r.db --events ev$r.jsonl c$r.yaml >run$r.txt 2>&1 || {
		tail -n 20 run$r.txt >&2
		die "repeat $r: the run failed"
	}
	t0=$(jq -r 'select(.event == "run_start") | .ts' ev$r.jsonl)
	tb=$(jq -r 'select(.event == "gate_ended" and .on == "baseline") | .ts' ev$r.jsonl | tail -n 1)
	tp=$(jq -r 'select(.event == "candidate" and .passed) | .ts' ev$r.jsonl | head -n 1)
	g=$(jq -s '[.[] | select(.event == "gate_ended" and .on == "candidate") | .duration_ms] | add // 0' ev$r.jsonl)
	[ -n "$t0" ] && [ -n "$tb" ] && [ -n "$tp" ] || die "repeat $r: events missing (run_start, baseline, candidate)"
	first=$(ms "$t0" "$tp") base=$(ms "$t0" "$tb")
	echo "repeat $r: first proposal $first ms; base $base ms; candidate gates $g ms"
	echo "$first $base $g" >>rows
	r=$((r + 1))
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
f=$(cut -d' ' -f1 rows | median) b=$(cut -d' ' -f2 rows | median) g=$(cut -d' ' -f3 rows | median)
awk -v f="$f" -v b="$b" -v g="$g" -v m="$MODEL" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
	printf "medians: first proposal %.2f s; base %.2f s; candidate gates %.2f s; model %d s (load %s)\n", f / 1000, b / 1000, g / 1000, m, load
	printf "first / (base + gates): %.2fx   goal <= 1.0x  %s\n", f / (b + g), (f <= (b + g) * 1.02) ? "met" : "NOT met"
	printf "a run that asked the model after the base would take about (base + model + gates) / (base + gates) = %.2fx\n", (b + m * 1000 + g) / (b + g)
}'
