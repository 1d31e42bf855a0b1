#!/bin/sh
# bench/act.sh [BUILD] [STEPS] [PROJECT] - what a step of a `generate: act`
# session costs beyond its command, and an edit-build-test step against the
# same incremental build and tests run by hand (issue 28; docs/BENCHMARKS.md).
#
# (1) A session of STEPS (default 50) `true` commands, then submit, from the
#     scripted command provider (tests/fixtures/act/model.sh) over the warm
#     base of the project.  From the store: each step's command_ms (the
#     jailed run of `true`: the jail, the observation; `true` itself is well
#     under a millisecond), p50 and p90; from --events: the session's wall
#     time (from the later of its target's claim and the warm base's last
#     gate, to the target done), less every step's model_ms and
#     command_ms, per step: sluice's own work between steps (the store's
#     writes, the chat, the budgets).  The steps change nothing, so each
#     session ends "no change" (exit status 1).
# (2) A session of 10 edit-build-test steps against the same command run 10
#     times by hand in a copy of the project built beforehand, one before
#     each step (the scripted model runs it): medians and their ratio (goal:
#     within 1.2x).
#
# The project: without PROJECT, a tiny C project (tests/t/lib-act.sh) and
# the step `touch src/calc.c && make 2>&1 && make test`.  PROJECT is a CMake
# project (a git repository, cloned, never written; e.g. a checkout of
# cJSON): its warm base and the tree by hand are configured and built
# beforehand (`cmake -S . -B out && cmake --build out`), the step is
# `touch TOUCH && cmake --build out && ctest --test-dir out`; the campaign's
# one target is what QUERY matches in TOUCH (defaults for cJSON: cJSON.c,
# the sprintf of cJSON_Version).  KEEP=1 keeps the work directory.
# Run by hand after `make`:  sh bench/act.sh;  sh bench/act.sh build 50 /tmp/cjson
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$top/build}" && pwd) || exit 2
STEPS=${2:-50}
PROJECT=${3:-}
sluice=$BUILD/sluice
test -x "$sluice" || { echo "missing $sluice: make" >&2; exit 2; }
command -v jq >/dev/null && command -v sqlite3 >/dev/null || { echo "needs jq and sqlite3" >&2; exit 2; }
tmp=$(mktemp -d /tmp/sluice-bench-act.XXXXXX)
[ -n "${KEEP:-}" ] && echo "kept: $tmp" >&2 || trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
TRASH=$tmp
. "$top/tests/t/lib-act.sh"

if [ -n "$PROJECT" ]; then
	test -f "$PROJECT/CMakeLists.txt" || { echo "PROJECT: no CMakeLists.txt in '$PROJECT'" >&2; exit 2; }
	git clone -q "$PROJECT" repo || exit 2
	TOUCH=${TOUCH:-cJSON.c}
	QUERY=${QUERY:-'((call_expression function: (identifier) @fn arguments: (argument_list . (identifier) @a)) @call (#eq? @fn \"sprintf\") (#eq? @a \"version\"))'}
	prepare='{ test -f out/CMakeCache.txt || cmake -S . -B out; } && cmake --build out 2>&1'
	cmd="touch $TOUCH && cmake --build out 2>&1 && ctest --test-dir out 2>&1"
	head_yaml() {
		printf "%s\n" "name: $1" "repository: repo" "scratch: $tmp/scratch" "targets:" \
			"  language: c" "  paths: [\"$TOUCH\"]" "  query: \"$QUERY\"" \
			"  capture: call" "instructions: \"Nothing to change.\""
	}
else
	act_repo repo && (cd repo && git init -q -b main && git add -A && git commit -q -m initial) || exit 2
	prepare='make 2>&1'
	cmd='touch src/calc.c && make 2>&1 && make test'
	head_yaml() { act_yaml "$1"; }
fi

# steps DIR N COMMAND: the scripted model's replies, N times COMMAND, then submit
steps() {
	mkdir -p "$1" &&
	printf "%s\n" "cat <<\\END" "\`\`\`sh" "$3" "\`\`\`" "END" >"$1/default" &&
	printf "%s\n" "cat <<\\END" "\`\`\`sh" "submit" "\`\`\`" "END" >"$1/$(($2 + 1))"
}

# session NAME DIR N: run the campaign; the store NAME.db, the events NAME.jsonl
session() {
	head_yaml "$1" >"$1.yaml" &&
	printf "%s\n" "generate: act" "attempts: 1" "session: {steps: $(($3 + 1))}" "gates:" \
		"  - {name: build, command: \"$(printf "%s" "$prepare" | sed "s/\"/\\\\\"/g")\", prepare: true}" \
		"provider: {kind: command, command: \"ACT_DIR=$tmp/$2 ACT_LOG=$tmp/$2.log sh $top/tests/fixtures/act/model.sh\"}" \
		>>"$1.yaml" &&
	# the steps change nothing: the session ends "no change" (exit 1), as meant
	"$sluice" run --store "$1.db" --events "$1.jsonl" "$1.yaml" >/dev/null 2>"$1.err"
	test $? -le 1 && test "$(sqlite3 "$1.db" "select count(*) from steps where kind = 'command'")" = "$3" ||
		{ echo "the session $1 failed:" >&2; tail -n 5 "$1.err" >&2; exit 1; }
}

# pct P: the P-th percentile of the numbers on stdin
pct() {
	sort -n | awk -v p="$1" '{ v[NR] = $1 } END { i = int((NR - 1) * p / 100) + 1; print v[i] }'
}

ms_of() { date -d "$1" +%s%3N; }

steps t "$STEPS" true && session trues t "$STEPS"
q="select command_ms from steps where kind = 'command'"
n=$(sqlite3 trues.db "select count(*) from steps where kind = 'command'")
p50=$(sqlite3 trues.db "$q" | pct 50)
p90=$(sqlite3 trues.db "$q" | pct 90)
m50=$(sqlite3 trues.db "select model_ms from steps" | pct 50)
# the session starts once its target is claimed and the warm base is ready (its gates ended)
t0=$(ms_of "$(jq -r 'select(.event == "target_claimed" or .event == "gate_ended") | .ts' trues.jsonl | sort | tail -n 1)")
t1=$(ms_of "$(jq -r 'select(.event == "target_done") | .ts' trues.jsonl | head -n 1)")
sum=$(sqlite3 trues.db "select sum(model_ms) + sum(command_ms) from steps")
steps_all=$(sqlite3 trues.db "select count(*) from steps")
own=$(awk -v w=$((t1 - t0)) -v s="$sum" -v k="$steps_all" 'BEGIN { printf "%.1f", (w - s) / k }')
echo "steps of \`true\`: $n; command_ms p50 $p50 ms, p90 $p90 ms (goal: p50 under 20 ms)"
echo "  the scripted model: model_ms p50 $m50 ms (a shell per request; not sluice's)"
echo "  session wall $((t1 - t0)) ms, of it model + command $sum ms: sluice's own $own ms per step"

# By hand, interleaved with the session's steps (load drift hits both
# alike): the scripted model times the command in the tree by hand before
# it answers each step.  Where this user may make a CPU cgroup as the jail
# makes one (root, cgroup v1 cpu or v2 with its cpu controller), it is run a
# second time in one of the jail's weight (cpu.shares 512, cpu.weight 50:
# the host's own work first), to see what that weight costs under load (in
# the runs of 2026-11-27 it did not explain the spread between runs).
cp -a repo byhand && (cd byhand && sh -c "$prepare" >/dev/null 2>&1) || exit 1
printf "%s\n" "$cmd" >byhand.cmd
anchor_cg=
for d in /sys/fs/cgroup/cpu /sys/fs/cgroup; do
	if [ -f "$d/cpu.shares" ] && mkdir "$d/sluice-bench-act-$$" 2>/dev/null; then
		echo 512 >"$d/sluice-bench-act-$$/cpu.shares" && anchor_cg=$d/sluice-bench-act-$$ && break
	elif [ -f "$d/cgroup.controllers" ] && grep -qw cpu "$d/cgroup.subtree_control" 2>/dev/null &&
		mkdir "$d/sluice-bench-act-$$" 2>/dev/null; then
		echo 50 >"$d/sluice-bench-act-$$/cpu.weight" && anchor_cg=$d/sluice-bench-act-$$ && break
	fi
done
[ -z "$anchor_cg" ] || trap 'rmdir "$anchor_cg"; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
# timed.sh NAME [CGROUP]: the command by hand, its milliseconds appended to NAME.ms
printf "%s\n" 'a=$(date +%s%N)' \
	"(cd $tmp/byhand && { test -z \"\$2\" || echo \$\$ >\"\$2/cgroup.procs\"; } && sh $tmp/byhand.cmd >/dev/null 2>&1) ||" \
	"	echo failed >>$tmp/\$1.ms" 'b=$(date +%s%N)' "echo \$(((b - a) / 1000000)) >>$tmp/\$1.ms" >timed.sh
steps e 10 "$cmd" && {
	echo "sh $tmp/timed.sh byhand"
	test -z "$anchor_cg" || echo "sh $tmp/timed.sh matched $anchor_cg"
	cat e/default
} >e/timed && mv e/timed e/default && session ebt e 10
s50=$(sqlite3 ebt.db "select command_ms from steps where kind = 'command'" | pct 50)
sqlite3 ebt.db "select exit_status from steps where kind = 'command'" | grep -qv '^0$' &&
	{ echo "a session step failed: $cmd" >&2; exit 1; }
! grep -q failed byhand.ms ${anchor_cg:+matched.ms} || { echo "by hand: $cmd failed" >&2; exit 1; }
h50=$(pct 50 <byhand.ms)
ratio() { awk -v s="$1" -v h="$2" 'BEGIN { printf "%.2f", h ? s / h : 0 }'; }
echo "edit-build-test step ($cmd): session p50 $s50 ms, by hand p50 $h50 ms: $(ratio "$s50" "$h50")x (goal: within 1.2x)"
if [ -n "$anchor_cg" ]; then
	m50=$(pct 50 <matched.ms)
	echo "  by hand at the jail's CPU weight ($anchor_cg): p50 $m50 ms: $(ratio "$s50" "$m50")x"
fi
echo "project: ${PROJECT:-the tiny C project}; load: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
