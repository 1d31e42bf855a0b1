# lib-campaign.sh - helpers for the campaign tests (sourced after test-lib.sh).
#
# greet_repo DIR      a git repository holding the demo project (3 call sites)
# write_campaign F [extra yaml]   the rules campaign of the demo, against ./repo
# refs_outside PREFIX REPO        every ref except those under refs/heads/PREFIX/
# branches_hold STORE [REPO]      each passed candidate's branch points at its commit
#                                 (REPO: ./repo)
# start_forge KIND PROJECT BARE   the stub GitHub/GitLab API (see below)
# greet_on_github F  the demo in ./repo, pushed to ./remote.git, the stub GitHub
#                     started (forge.pid, forge.port) and campaign F publishing there
# python_campaign F NAME REPO     a rules campaign on REPO's Python calls, gate "true"
# calc_campaign NAME TMPL ARG GATES...  a rules campaign on the calc fixture (below)
# start_serve OUT ARGS... / stop_serve PID   `sluice serve ARGS` in the background
# metric_samples FILE  each sample of an OpenMetrics text, read by a strict parser

# start_serve OUT ARGS...: start `sluice serve ARGS` with its stdout in OUT;
# sets $serve_url and $serve_pid once it prints its address (fails if it dies first).
start_serve() {
	out=$1
	shift
	sluice serve "$@" >"$out" 2>"$out.err" &
	serve_pid=$!
	echo $serve_pid >>serve.pids
	for i in $(seq 1 600); do
		grep -q "^serving " "$out" && break
		kill -0 $serve_pid 2>/dev/null || break
		sleep 0.1
	done
	serve_url=$(sed -n "s/^serving //p" "$out")
	test -n "$serve_url" || { cat "$out.err" >&2; false; }
}

# metric_samples FILE: each sample of the OpenMetrics text in FILE, as read by
# prometheus_client's strict parser: "TYPE NAME LABELS VALUE", the labels
# sorted and the store left out (fails on what the parser refuses).
metric_samples() {
	/usr/bin/python3 - "$1" <<-\EOF
	import sys
	from prometheus_client.openmetrics.parser import text_string_to_metric_families
	for f in text_string_to_metric_families(open(sys.argv[1]).read()):
	    for s in f.samples:
	        labels = ",".join("%s=%s" % kv for kv in sorted(s.labels.items()) if kv[0] != "store")
	        print(f.type, s.name, labels, s.value)
	EOF
}

stop_serve() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	true
}

greet_repo() {
	cp -R "$EXAMPLES/greet/project" "$1"
	make_repo "$1"
}

write_campaign() {
	file=$1
	shift
	tmpl='greet(${out}, sizeof ${out}, ${name})'
	test -n "${RULE_TEMPLATE:-}" && tmpl=$RULE_TEMPLATE
	cat >"$file" <<EOF2
name: greet
repository: repo
base: main
scratch: $TRASH/scratch
targets:
  language: c
  paths: ["src/*.c"]
  query: |
    (call_expression
      function: (identifier) @fn
      arguments: (argument_list . (_) @out . (_) @name .)
      (#eq? @fn "greet_old")) @call
  capture: call
rules:
  - capture: call
    template: "$tmpl"
attempts: 1
gates:
  - name: build
    command: make
    timeout: 120
  - name: test
    command: make test
    timeout: 120
EOF2
	for extra in "$@"; do printf '%s\n' "$extra" >>"$file"; done
}

refs_outside() {
	git -C "$2" for-each-ref --format='%(refname) %(objectname)' | grep -v "^refs/heads/$1/" || true
}

branches_hold() {
	store_query "$1" "select branch || ' ' || commit_oid from candidates where state = 'passed'" >want &&
	test -s want &&
	while read branch oid; do
		test "$(git -C "${2:-repo}" rev-parse "refs/heads/$branch")" = "$oid" || return 1
	done <want
}

store_query() {
	sqlite3 "$1" "$2"
}

# openai_reply FILE: wrap stdin as the content of an OpenAI chat-completions reply.
openai_reply() {
	content=$(awk 'BEGIN { ORS = "" } { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); gsub(/\t/, "\\t"); print $0 "\\n" }')
	printf '{"id":"cmpl-1","object":"chat.completion","model":"stub","choices":[{"index":0,"message":{"role":"assistant","content":"%s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}\n' "$content" >"$1"
}

# start_stub DIR: start the stub model server on 127.0.0.1; sets $stub_port, $stub_pid.
start_stub() {
	rm -f "$1/port"
	stub-model --dir "$1" --port-file "$1/port" --max-seconds 300 &
	stub_pid=$!
	# up to a minute on a loaded machine, less if the server died
	for i in $(seq 1 600); do
		test -s "$1/port" && break
		kill -0 $stub_pid 2>/dev/null || break
		sleep 0.1
	done
	stub_port=$(cat "$1/port" 2>/dev/null)
	test -n "$stub_port" || { echo "stub-model did not start" >&2; false; }
}

# start_forge KIND PROJECT BARE [stub-forge options]: start the stub GitHub or
# GitLab API on 127.0.0.1 with token $FORGE_TOKEN; sets $forge_port,
# $forge_pid and $forge_url; fails when the server does not start.
start_forge() {
	kind=$1 proj=$2 bare=$3
	shift 3
	rm -f forge.port
	stub-forge --kind "$kind" --token "$FORGE_TOKEN" --project "$proj" --bare "$bare" \
		--port-file forge.port --log forge.log --max-seconds 600 "$@" &
	forge_pid=$!
	for i in $(seq 1 600); do
		test -s forge.port && break
		kill -0 $forge_pid 2>/dev/null || break
		sleep 0.1
	done
	forge_port=$(cat forge.port) &&
	test -n "$forge_port" &&
	forge_url=http://127.0.0.1:$forge_port
}

greet_on_github() {
	greet_repo repo &&
	git init -q --bare remote.git &&
	git -C repo push -q "$TRASH/remote.git" main &&
	start_forge github acme/greet "$TRASH/remote.git" &&
	echo $forge_pid >forge.pid &&
	write_campaign "$1" &&
	printf "%s\n" "review:" "  forge: github" "  api_url: http://127.0.0.1:$forge_port" \
		"  project: acme/greet" "  token_env: FORGE_TOKEN" "  remote: $TRASH/remote.git" \
		"  max_open: 5" "  max_per_hour: 10" >>"$1"
}

# python_campaign FILE NAME REPO: a campaign NAME that rewrites every call in
# REPO's Python files (base main) by rule, with one gate that passes.
python_campaign() {
	cat >"$1" <<EOF2
name: $2
repository: $3
base: main
scratch: $TRASH/scratch
targets:
  language: python
  paths: ["**/*.py"]
  query: "(call) @call"
rules:
  - capture: call
    template: "z()"
attempts: 1
gates:
  - name: ok
    command: "true"
EOF2
}

# share_campaign FILE TEMPLATE GATE: the campaign "share" on ./repo, rewriting
# every call in src/*.py by TEMPLATE, with the one gate GATE (stores that run
# campaigns of one name share its branch names: t5820, t5830)
share_campaign() {
	cat >"$1" <<EOF2
name: share
repository: repo
scratch: $TRASH/scratch
targets:
  language: python
  paths: ["src/*.py"]
  query: "(call) @call"
rules:
  - capture: call
    template: "$2"
attempts: 1
gates:
  - name: ok
    command: "$3"
EOF2
}

# leftover_commit REPO STORE: a commit on REPO's main whose Sluice-Store
# trailer names the first campaign of STORE, as a candidate's does (gc deletes
# only branches its store made)
leftover_commit() {
	printf "leftover\n\nSluice-Store: %s/1\n" \
		"$(sqlite3 "$2" "select value from store_meta where key = 'store_id'")" |
		git -C "$1" commit-tree -p main "main^{tree}"
}

# calc_campaign NAME TEMPLATE ARG GATES...: on ./repo holding tests/fixtures/calc,
# rules rewrite legacy_scale(ARG) by TEMPLATE; each GATE is a line of the gates list
calc_campaign() {
	name=$1 tmpl=$2 arg=$3
	shift 3
	cat <<EOF2
name: $name
repository: repo
scratch: $TRASH/scratch
targets:
  language: c
  paths: ["src/*.c"]
  query: |
    ((call_expression function: (identifier) @fn
       arguments: (argument_list (identifier) @x)) @call
     (#eq? @fn "legacy_scale") (#match? @x "^$arg\$"))
  capture: call
rules:
  - capture: call
    template: "$tmpl"
attempts: 1
# the flaky fixtures keep state in the worktree between runs
jail: {writable_worktree: true}
gates:
EOF2
	for g in "$@"; do printf '%s\n' "$g"; done
}

# many_repo DIR: a repository whose src/many.c has eight functions f1..f8,
# each calling old_api (eight function targets of model_campaign)
many_repo() {
	mkdir -p "$1/src" &&
	{
		echo "int old_api(int x) { return x; }"
		echo "int new_api(int x) { return x + 0; }"
		for i in 1 2 3 4 5 6 7 8; do echo "int f$i(void) { return old_api($i); }"; done
	} >"$1/src/many.c" &&
	make_repo "$1"
}

# model_campaign FILE NAME COMMAND [extra yaml...]: on ./repo (many_repo), a
# command provider asked for the eight functions, one request at a time, and
# the one gate "true"
model_campaign() {
	file=$1 name=$2 cmd=$3
	shift 3
	cat >"$file" <<EOF2
name: $name
repository: repo
scratch: $TRASH/scratch-$name
concurrency: 1
targets:
  language: c
  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
  unit: function
provider:
  kind: command
  command: $cmd
gates:
  - name: check
    command: "true"
EOF2
	for extra in "$@"; do printf '%s\n' "$extra" >>"$file"; done
}
