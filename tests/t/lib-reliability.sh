# lib-reliability.sh - a deterministic model campaign for kill, resume,
# concurrency and budget tests (sourced after test-lib.sh and lib-campaign.sh).
#
# rel_repo DIR N          a repository with N targets: fI() calling old_api(I),
#                         ten functions per file
# rel_model DIR [MS]      stub files of a model that answers the same request
#                         the same way whatever the order: a first reply the
#                         policy gate refuses (it says WRONG), and, when the
#                         conversation carries that reply, the right one
# rel_campaign F NAME PORT [extra yaml]   the campaign (attempts 2, a policy gate
#                         and a jailed gate) against ./repo
# rel_requests DIR        how many requests the stub in DIR has received
# rel_states STORE        key|state|attempts of every target, sorted
# poll CONDITION          true once the shell condition holds; checked every
#                         0.1 s, at most 600 times, then false naming it
# now_ms                  the time in Unix milliseconds, as leases count it
# run_pid_of STORE        the process of the store's unfinished run
# paused_let_go PIDFILE   continue and end the process PIDFILE names, if any:
#                         a test never leaves a stopped run behind
# stop_quiet PID STORE [GITDIR]
#                         stop PID at an instant it holds no write
#                         transaction on STORE (a stopped writer would lock
#                         everyone else out) and, with GITDIR, not the run's
#                         lock on the repository either (flock of GITDIR: a
#                         run holds it while it changes refs or worktrees):
#                         stop, and if one is held, continue it briefly and
#                         stop again; at most 200 tries
# waiting_gate FILE [COND]  a gate script that, where the shell condition
#                         COND holds (default: always), writes "waiting" in
#                         its tree and waits (120 s at most) for a file "go"
# waiting_dir [EXCEPT]    the checkout under ./scratch (other than EXCEPT)
#                         where a gate waits: it holds a file "waiting" and
#                         no "go" yet (the test writes "go" to let it end)
# rel_kill_series K STORE CAMPAIGN DIR   K runs each killed with -9 at an instant
#                         picked from its number: after 1-5 more requests, or
#                         while gates run; each wait is bounded (30 s)

rel_repo() {
	mkdir -p "$1/src"
	echo "int old_api(int x) { return x; }" >"$1/src/api.c"
	echo "int new_api(int x) { return x + 0; }" >>"$1/src/api.c"
	i=1
	while [ $i -le "$2" ]; do
		echo "int f$i(void) { return old_api($i); }" >>"$1/src/m$(( (i - 1) / 10 )).c"
		i=$((i + 1))
	done
	make_repo "$1"
}

rel_model() {
	mkdir -p "$1"
	openai_reply "$1/reply-1.json" <<-\EOF
	```c
	int f(void) { return new_api(0); } /* WRONG */
	```
	EOF
	printf 'WRONG' >"$1/match-1.contains"
	openai_reply "$1/match-1.json" <<-\EOF
	```c
	int f(void) { return new_api(0); }
	```
	EOF
	echo "${2:-0}" >"$1/reply-1.delay"
	echo "${2:-0}" >"$1/match-1.delay"
}

rel_campaign() {
	file=$1 name=$2 port=$3
	shift 3
	cat >"$file" <<EOF2
name: $name
repository: repo
scratch: $TRASH/scratch
concurrency: 4
jobs: 2
targets:
  language: c
  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
  unit: function
provider:
  kind: openai
  base_url: http://127.0.0.1:$port/v1
  model: stub-model-1
  max_retries: 2
attempts: 2
gates:
  - name: policy
    kind: policy
    forbid: ["WRONG"]
  - name: check
    command: "true"
EOF2
	for extra in "$@"; do printf '%s\n' "$extra" >>"$file"; done
}

rel_requests() {
	ls "$1" | grep -c '^request-[0-9]*\.json$' || true
}

rel_states() {
	sqlite3 "$1" "select key || '|' || state || '|' || attempts from targets order by key"
}

rel_kill_series() {
	k=1
	while [ $k -le "$1" ]; do
		before=$(rel_requests "$4")
		sluice run --store "$2" "$3" >/dev/null 2>&1 &
		pid=$!
		want=$((before + 1 + (k * 7) % 5))
		i=0
		while kill -0 $pid 2>/dev/null && [ "$(rel_requests "$4")" -lt $want ] && [ $i -lt 1200 ]; do
			sleep 0.05
			i=$((i + 1))
		done
		# every third kill lands a little later, while gates run
		if [ $((k % 3)) = 0 ]; then sleep 0.3; fi
		kill -9 $pid 2>/dev/null || true
		wait $pid 2>/dev/null || true
		k=$((k + 1))
	done
	return 0
}

waiting_gate() {
	cat >"$1" <<EOS
if ${2:-true}; then
	: >waiting
	i=0
	while test ! -e go && test \$i -lt 1200; do sleep 0.1; i=\$((i + 1)); done
	# no longer waiting: a test that lets gates go leaves this checkout alone
	rm -f waiting
	test -e go
fi
EOS
}

waiting_dir() {
	for w in $(find scratch -maxdepth 3 -name waiting 2>/dev/null); do
		d=$(dirname "$w")
		test "$d" != "${1:-}" && test ! -e "$d/go" && echo "$d" && return 0
	done
	return 1
}

poll() {
	n=0
	until eval "$1"; do
		n=$((n + 1))
		if [ $n -ge 600 ]; then
			echo "gave up waiting for: $1" >&2
			return 1
		fi
		sleep 0.1
	done
}

now_ms() {
	sqlite3 :memory: "select cast((julianday('now') - 2440587.5) * 86400000 as integer)"
}

run_pid_of() {
	sqlite3 "$1" "select owner from runs where ended_at is null" 2>/dev/null | cut -d: -f2
}

stop_quiet() {
	n=0
	while kill -STOP "$1"; do
		if sqlite3 "$2" "begin immediate; rollback" >/dev/null 2>&1 &&
		   { test -z "${3:-}" || flock -n -x "$3" true; }; then
			return 0
		fi
		kill -CONT "$1"
		n=$((n + 1))
		if [ $n -ge 200 ]; then
			echo "stop_quiet: $2${3:+ or $3} stayed locked" >&2
			return 1
		fi
		sleep 0.05
	done
	return 1
}

paused_let_go() {
	if test -s "$1"; then kill -CONT $(cat "$1") 2>/dev/null; kill $(cat "$1") 2>/dev/null; fi
	return 0
}
