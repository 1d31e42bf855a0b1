#!/bin/sh
# bench/generate.sh - generation throughput and pipeline overhead (run by hand).
#
#   sh bench/generate.sh [BUILD] [TARGETS] [DELAY_MS]
#
# 1. Model concurrency: a stub OpenAI-compatible server on 127.0.0.1 answers
#    every request after DELAY_MS (default 2000); a campaign over TARGETS
#    (default 100) functions with an instant gate runs at concurrency 1, 8 and
#    32.  Prints targets/s for each and the ratio to concurrency 1 (goal: at
#    32, at least 25x).
# 2. Pipeline overhead: the same targets with the rules provider and no gates;
#    prints milliseconds per target (scope + rules + apply + commit + store).
set -eu
BUILD=$(cd "${1:-build}" && pwd)
N=${2:-100}
DELAY=${3:-2000}
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/sluice-bench-gen.XXXXXX)
trap 'kill $stub_pid 2>/dev/null; rm -rf "$work"' EXIT INT TERM
export PATH="$BUILD:$BUILD/tests/helper:$PATH"
cd "$work"

mkdir -p repo/src
{
	echo "int old_api(int x) { return x; }"
	echo "int new_api(int x) { return x; }"
	i=1
	while [ $i -le "$N" ]; do echo "int f$i(void) { return old_api($i); }"; i=$((i + 1)); done
} >repo/src/many.c
(cd repo && git init -q -b main && git add -A &&
	git -c user.name=b -c user.email=b@b commit -q -m base)

mkdir m
content='```c\nint f(void) { return new_api(0); }\n```\n'
i=1
while [ $i -le $((N * 3 + 10)) ]; do
	printf '{"choices":[{"index":0,"message":{"role":"assistant","content":"%s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":20}}\n' "$content" >m/reply-$i.json
	echo "$DELAY" >m/reply-$i.delay
	i=$((i + 1))
done
stub-model --dir m --port-file m/port --max-seconds 3600 &
stub_pid=$!
i=0
while [ ! -s m/port ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat m/port)

campaign() { # name concurrency
	cat <<EOF2
name: $1
repository: $work/repo
scratch: $work/scratch
concurrency: $2
targets:
  language: c
  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
  unit: function
provider:
  kind: openai
  base_url: http://127.0.0.1:$port/v1
  model: bench
attempts: 1
gates:
  - name: instant
    command: "true"
EOF2
}

now_ms() { date +%s%3N; }

base_rate=""
for c in 1 8 32; do
	campaign "c$c" "$c" >c$c.yaml
	t0=$(now_ms)
	sluice run --store s$c.db c$c.yaml >/dev/null || true
	t1=$(now_ms)
	done_n=$(sqlite3 s$c.db "select count(*) from targets where state = 'proposed'")
	rate=$(awk -v n="$done_n" -v ms=$((t1 - t0)) 'BEGIN { printf "%.3f", n * 1000 / ms }')
	[ -n "$base_rate" ] || base_rate=$rate
	ratio=$(awk -v r="$rate" -v b="$base_rate" 'BEGIN { printf "%.1f", r / b }')
	printf 'concurrency %-3s %4s targets in %7.1f s  %8s targets/s  %5sx concurrency 1\n' \
		"$c" "$done_n" "$(awk -v ms=$((t1 - t0)) 'BEGIN { print ms / 1000 }')" "$rate" "$ratio"
done

cat >rules.yaml <<EOF2
name: rules
repository: $work/repo
scratch: $work/scratch
targets:
  language: c
  query: "((call_expression function: (identifier) @fn arguments: (argument_list (_) @arg)) @call (#eq? @fn \"old_api\"))"
  capture: call
rules:
  - capture: call
    template: "new_api(\${arg})"
attempts: 1
EOF2
t0=$(now_ms)
sluice run --store r.db rules.yaml >/dev/null
t1=$(now_ms)
done_n=$(sqlite3 r.db "select count(*) from targets where state = 'proposed'")
printf 'rules, no gates: %s targets in %d ms = %.2f ms per target (whole pipeline)\n' \
	"$done_n" $((t1 - t0)) "$(awk -v n="$done_n" -v ms=$((t1 - t0)) 'BEGIN { print ms / n }')"
