#!/bin/sh
# bench/soak.sh - the reliability soak (run by hand, after `make test`).
#
#   sh bench/soak.sh [BUILD] [TARGETS] [KILLS]
#
# A campaign of TARGETS (default 200) targets against a deterministic stub
# model (the first reply of a target fails a policy gate; the reply to a
# conversation that carries it passes) runs once uninterrupted, then again
# in a fresh store killed with -9 KILLS times (default 20) at instants
# picked from the kill's number (after 1-5 more requests, or while gates
# run), then to the end.  Prints whether the result (every target's state
# and attempts) is the uninterrupted run's, and the token overshoot: tokens
# billed in the store and requests the model received, against the
# uninterrupted run and the bound (concurrency x kills requests).
set -eu
BUILD=$(cd "${1:-build}" && pwd)
N=${2:-200}
KILLS=${3:-20}
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/sluice-bench-soak.XXXXXX)
stub_pid=
trap 'kill $stub_pid 2>/dev/null; rm -rf "$work"' EXIT INT TERM
export PATH="$BUILD:$BUILD/tests/helper:$PATH"
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
TRASH=$work
cd "$work"
make_repo() {
	( cd "$1" && git init -q -b main && git add -A && git commit -q -m initial )
}
. "$top/tests/t/lib-campaign.sh"
. "$top/tests/t/lib-reliability.sh"

rel_repo repo "$N"
rel_model m0 50
start_stub m0
rel_campaign u.yaml soak "$stub_port"
t0=$(date +%s)
sluice run --store u.db u.yaml >/dev/null 2>&1 || true
t1=$(date +%s)
kill $stub_pid
r0=$(rel_requests m0)
tok0=$(sqlite3 u.db "select sum(tokens_in + tokens_out) from attempts")

rel_model m1 50
start_stub m1
rel_campaign k.yaml soak "$stub_port"
rel_kill_series "$KILLS" k.db k.yaml m1
crashed=$(sqlite3 k.db "select count(*) from runs where outcome = 'crashed' or ended_at is null")
sluice run --store k.db k.yaml >/dev/null 2>&1 || true
kill $stub_pid
r1=$(rel_requests m1)
tok1=$(sqlite3 k.db "select sum(tokens_in + tokens_out) from attempts")
journal=$(sqlite3 k.db "select coalesce(sum(tokens_in + tokens_out), 0) from replies r where not exists (select 1 from attempts a where a.target_id = r.target_id and a.n = r.n)")
rel_states u.db >states.u
rel_states k.db >states.k
proposed=$(grep -c '|proposed|' states.k || true)
conc=$(sed -n 's/^concurrency: //p' k.yaml)

echo "targets: $N, kills: $KILLS (runs that died: $crashed), uninterrupted run: $((t1 - t0)) s"
if cmp -s states.u states.k; then
	echo "same result as the uninterrupted run ($proposed of $N proposed)"
else
	echo "DIFFERENT result from the uninterrupted run:"
	diff states.u states.k | head -20
fi
# every stub reply bills 150 tokens (lib-campaign.sh's openai_reply)
echo "token overshoot: the model billed $((r1 * 150)) tokens against $((r0 * 150)) uninterrupted:" \
	"+$(((r1 - r0) * 150)) ($(( (r1 - r0) * 100 / r0 ))%), $((r1 - r0)) requests lost in flight" \
	"at the kills (bound: concurrency $conc x $KILLS kills = $((conc * KILLS)))"
echo "tokens recorded in the store: $((tok1 + journal)), uninterrupted $tok0 (never paid twice: replies are journalled on arrival)"
