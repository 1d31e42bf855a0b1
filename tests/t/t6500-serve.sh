#!/bin/sh
test_description='serve: a read-only dashboard over two stores (funnels, targets filtered, attempts, diffs, charts) rendered in headless Chromium, hostile text shown inert, only GET and HEAD, loopback unless allowed with a token, /metrics parsed by a strict OpenMetrics parser'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# The repository's hostile file name, a gate's hostile log, a model's hostile reply:
# HTML that would run and terminal escapes (a window title, a clipboard write).
hostile_file=$(printf 'src/<script>alert(1)<!--\033]0;owned\007.c')

cdp() {
	CDP_LOG="$TRASH/chromium.log" /usr/bin/python3 "$TEST_DIRECTORY/lib-cdp.py" "$@"
}

# curl_code URL [curl args]: the HTTP status only
curl_code() {
	u=$1
	shift
	curl -s -o /dev/null -w "%{http_code}" "$@" "$u"
}

# campaign FILE NAME REPO GATE-COMMAND [EXTRA YAML LINE]...: the greet rules
# on REPO (every src/*.c) with one gate
campaign() {
	f=$1 name=$2 repo=$3 gate=$4
	shift 4
	cat >"$f" <<-EOF
	name: $name
	repository: $repo
	base: main
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ["src/*.c"]
	  query: "((call_expression function: (identifier) @fn arguments: (argument_list . (_) @out . (_) @name .)) @call (#eq? @fn \"greet_old\"))"
	  capture: call
	attempts: 1
	gates:
	  - name: check
	    command: "$gate"
	    timeout: 300
	EOF
	for extra in "$@"; do printf '%s\n' "$extra" >>"$f"; done
}

test_expect_success 'setup: a store of rules with a hostile file and gate log, a store of a hostile model reply' '
	greet_repo repo &&
	printf "void f(void)\n{\n\tchar b[8];\n\tgreet_old(b, \"x\");\n}\n" >"repo/$hostile_file" &&
	printf "grep -q greet_old src/app.c || { printf \"<script>alert(2)</script>\\033]0;gate-title\\007 refused\\n\"; exit 3; }\n" >repo/check.sh &&
	git -C repo add -A && git -C repo commit -q -m hostile &&
	campaign r.yaml rules repo "sh check.sh" "rules:" "  - capture: call" \
		"    template: \"greet(\${out}, sizeof \${out}, \${name})\"" &&
	sluice run --store s.db r.yaml >out &&
	test "$(store_query s.db "select count(*) from targets where state = \"proposed\"")" = 2 &&
	test "$(store_query s.db "select state from targets where path = \"src/app.c\"")" = failed &&
	test "$(store_query s.db "select state from targets where path like \"%alert(1)%\"")" = failed &&
	printf "I cannot <script>alert(3)</script> do that \033]52;c;Zm9v\007 here\n" >reply.txt &&
	campaign m.yaml model repo "true" "provider: {kind: command, command: \"cat $TRASH/reply.txt\"}" \
		"edit_format: udiff" &&
	sed -i "s|paths: \[\"src/\*.c\"\]|paths: [\"src/app.c\"]|" m.yaml &&
	{ sluice run --store m.db m.yaml >out 2>err || true; } &&
	test "$(store_query m.db "select outcome from attempts")" = parse_error
'

test_expect_success 'a non-loopback address needs --allow-remote and a token; a bad address or store is refused (exit 2)' '
	test_expect_code 2 sluice serve --store s.db --listen 0.0.0.0:0 >out 2>err &&
	grep -q "is not loopback: serving other hosts needs --allow-remote and --token-file" err &&
	test_expect_code 2 sluice serve --store s.db --listen 0.0.0.0:0 --allow-remote >out 2>err &&
	grep -q "a token is required (--token-file)" err &&
	test_expect_code 2 sluice serve --store s.db --listen localhost:80 >out 2>err &&
	grep -q "listen address .localhost:80. is not a numeric HOST:PORT" err &&
	test_expect_code 2 sluice serve --store missing.db --listen 127.0.0.1:0 >out 2>err &&
	grep -q "missing.db" err &&
	printf "short\n" >short.token &&
	test_expect_code 2 sluice serve --store s.db --listen 127.0.0.1:0 --token-file short.token >out 2>err &&
	grep -q "at least 16 characters" err &&
	test ! -s out
'

test_expect_success 'serve on a free port prints its address; pages of both stores load' '
	start_serve serve.out --store s.db --store m.db --listen 127.0.0.1:0 &&
	echo "$serve_url" >url && echo $serve_pid >main.pid &&
	grep -q "^http://127.0.0.1:[1-9][0-9]*/$" url &&
	curl -sf "$serve_url" >index.html &&
	grep -q "<a href=\"/s/0/c/1\">rules</a>" index.html &&
	grep -q "<a href=\"/s/1/c/1\">model</a>" index.html &&
	test "$(grep -c "<svg id=\"funnel\"" index.html)" = 2 &&
	curl -sf "${serve_url}s/0/c/1" >camp.html &&
	grep -q "<svg id=\"funnel\"" camp.html &&
	grep -q "<svg id=\"chart-tokens\"" camp.html &&
	grep -q "<svg id=\"chart-acceptance\"" camp.html &&
	grep -q "<a href=\"/s/0/c/1/targets?gate=check\">check</a>" camp.html &&
	test "$(curl_code "${serve_url}s/0/c/9")" = 404 &&
	test "$(curl_code "${serve_url}s/7/c/1")" = 404 &&
	test "$(curl_code "${serve_url}nowhere")" = 404
'

test_expect_success 'targets are filtered by state, gate, file and search' '
	serve_url=$(cat url) &&
	u="${serve_url}s/0/c/1/targets" &&
	curl -sf "$u" >all.html &&
	grep -q "4 targets found" all.html &&
	curl -sf "$u?state=failed" >failed.html &&
	grep -q "2 targets found" failed.html && grep -q "src/app.c:10" failed.html &&
	curl -sf "$u?gate=check" >gate.html &&
	grep -q "1 target found" gate.html && grep -q "src/app.c:10" gate.html &&
	curl -sf "$u?file=src/report.c" >file.html &&
	grep -q "2 targets found" file.html &&
	curl -sf "$u?file=src/*.c&state=proposed" >glob.html &&
	grep -q "2 targets found" glob.html &&
	curl -sf "$u?q=REFUSED" >search.html &&
	grep -q "1 target found" search.html && grep -q "src/app.c:10" search.html &&
	test "$(curl_code "$u?state=bogus")" = 400
'

test_expect_success 'only GET and HEAD: POST, PUT and DELETE get 405 and write nothing' '
	serve_url=$(cat url) &&
	before=$(store_query s.db "select count(*) || \" \" || coalesce(max(id), 0) from decisions") &&
	for m in POST PUT DELETE PATCH; do
		curl -s -i -X $m -d "decision=accept" "${serve_url}s/0/c/1" >resp.$m &&
		head -1 resp.$m | grep -q "^HTTP/1.1 405" &&
		grep -qi "^Allow: GET, HEAD" resp.$m || return 1
	done &&
	curl -s -I "${serve_url}s/0/c/1" >head.txt &&
	head -1 head.txt | grep -q "^HTTP/1.1 200" &&
	grep -qi "^Content-Security-Policy: default-src .none.; script-src .self." head.txt &&
	test "$(store_query s.db "select count(*) || \" \" || coalesce(max(id), 0) from decisions")" = "$before" &&
	test "$(curl_code "$serve_url" -H "Host: attacker.example")" = 403
'

test_expect_success 'hostile file names, gate logs and replies are escaped, their terminal escapes shown' '
	serve_url=$(cat url) &&
	tid=$(store_query s.db "select id from targets where path like \"%alert(1)%\"") &&
	curl -sf "${serve_url}s/0/t/$tid" >hostile.html &&
	grep -q "&lt;script&gt;alert(1)&lt;!--^\[\]0;owned^G.c" hostile.html &&
	app=$(store_query s.db "select id from targets where path = \"src/app.c\"") &&
	curl -sf "${serve_url}s/0/t/$app" >app.html &&
	grep -q "&lt;script&gt;alert(2)&lt;/script&gt;^\[\]0;gate-title^G refused" app.html &&
	curl -sf "${serve_url}s/1/t/1" >reply.html &&
	grep -q "I cannot &lt;script&gt;alert(3)&lt;/script&gt; do that ^\[\]52;c;Zm9v^G here" reply.html &&
	cat hostile.html app.html reply.html >all-pages &&
	! grep -q "<script>alert" all-pages &&
	! grep -q "$(printf "\033")" all-pages &&
	! grep -q "$(printf "\007")" all-pages &&
	test "$(grep -c "<script" all-pages)" = 3
'

test_expect_success 'a prompt is elided unless its attempt is asked for in full' '
	serve_url=$(cat url) &&
	grep -q "<p class=\"elided\">&hellip; [0-9]* more lines, [0-9]* bytes: <a href=\"/s/1/t/1?full=1#a1\">show all</a></p>" reply.html &&
	curl -sf "${serve_url}s/1/t/1?full=1" >full.html &&
	! grep -q "class=\"elided\"" full.html &&
	prompt_lines=$(store_query m.db "select prompt from attempts" | wc -l) &&
	test "$prompt_lines" -gt 12 &&
	test "$(wc -l <full.html)" -ge "$(($(wc -l <reply.html) + prompt_lines - 14))"
'

# JS the browser evaluates: the page made only the dashboard's own script, and
# shows the hostile text as text with no control character left in it
js_inert="document.scripts.length === 1 && !/[\\u0000-\\u0008\\u000b-\\u001f\\u007f]/.test(document.body.textContent) && document.title.indexOf('\\u001b') < 0"

test_expect_success 'headless Chromium: pages load with no console error, funnel and diff drawn, hostile text inert' '
	serve_url=$(cat url) &&
	tid=$(store_query s.db "select id from targets where path like \"%alert(1)%\"") &&
	app=$(store_query s.db "select id from targets where path = \"src/app.c\"") &&
	rep=$(store_query s.db "select min(id) from targets where path = \"src/report.c\"") &&
	cdp open "$serve_url" noerrors \
		eval "document.querySelectorAll(\"svg#funnel rect\").length > 4 && document.querySelector(\"svg#funnel rect\").getBBox().width > 100" \
		open "${serve_url}s/0/c/1" noerrors eval "$js_inert" \
		eval "document.querySelector(\"#chart-tokens\") !== null" \
		open "${serve_url}s/0/t/$tid" noerrors eval "$js_inert" \
		eval "document.body.textContent.includes(\"<script>alert(1)<!--^[]0;owned^G.c\")" \
		open "${serve_url}s/0/t/$rep" noerrors eval "$js_inert" \
		eval "getComputedStyle(document.querySelector(\"pre.diff span.add\")).backgroundColor" \
		open "${serve_url}s/0/t/$app" noerrors eval "$js_inert" \
		eval "document.body.textContent.includes(\"<script>alert(2)</script>^[]0;gate-title^G refused\")" \
		open "${serve_url}s/1/t/1" noerrors eval "$js_inert" \
		eval "document.body.textContent.includes(\"I cannot <script>alert(3)</script> do that\")" \
		open "${serve_url}s/0/c/1/targets?state=proposed" noerrors \
		eval "document.querySelectorAll(\"table.targets tr\").length" >cdp.out &&
	cat cdp.out &&
	printf "%s\n" true true true true true true "\"rgb(174, 240, 185)\"" true true true true 3 >cdp.want &&
	test_cmp cdp.want cdp.out
'

test_expect_success '/metrics is OpenMetrics that a strict parser reads' '
	serve_url=$(cat url) &&
	curl -s -D metrics.head "${serve_url}metrics" >metrics.txt &&
	grep -qi "^Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8" metrics.head &&
	test "$(tail -1 metrics.txt)" = "# EOF" &&
	metric_samples metrics.txt >families &&
	grep -q "^gauge sluice_targets campaign=rules,state=failed 2$" families &&
	grep -q "^gauge sluice_targets campaign=rules,state=proposed 2$" families &&
	grep -q "^gauge sluice_targets campaign=model,state=failed 1$" families &&
	grep -q "^counter sluice_gate_runs_total campaign=rules,gate=check,verdict=fail 1$" families &&
	grep -q "^counter sluice_gate_runs_total campaign=rules,gate=check,verdict=pass 2$" families &&
	grep -q "^histogram sluice_gate_duration_seconds_count campaign=rules,gate=check 3$" families &&
	grep -q "^histogram sluice_gate_duration_seconds_bucket campaign=rules,gate=check,le=+Inf 3$" families &&
	grep -q "^counter sluice_tokens_total campaign=model,provider=command " families &&
	grep -q "^counter sluice_decisions_total campaign=rules,decision=accept 0$" families &&
	grep -q "^gauge sluice_proposed campaign=rules 2$" families
'

test_expect_success 'a strict parser refuses what the dashboard must not write (the check can fail)' '
	sed "\$d" metrics.txt >no-eof.txt &&
	test_must_fail /usr/bin/python3 -c "
from prometheus_client.openmetrics.parser import text_string_to_metric_families
list(text_string_to_metric_families(open(\"no-eof.txt\").read()))" 2>/dev/null
'

test_expect_success 'with a token every request carries it: header, ?token= once (a cookie), never a wrong one' '
	stop_serve $(cat main.pid) &&
	printf "0123456789abcdef-token\n" >good.token &&
	start_serve tok.out --store s.db --listen 127.0.0.1:0 --token-file good.token &&
	test "$(curl_code "$serve_url")" = 401 &&
	test "$(curl_code "${serve_url}metrics")" = 401 &&
	test "$(curl_code "$serve_url" -H "Authorization: Bearer 0123456789abcdef-tokex")" = 401 &&
	test "$(curl_code "$serve_url" -H "Authorization: Bearer 0123456789abcdef-token")" = 200 &&
	test "$(curl_code "${serve_url}metrics" -H "Authorization: Bearer 0123456789abcdef-token")" = 200 &&
	curl -s -c jar -o /dev/null "${serve_url}?token=0123456789abcdef-token" &&
	grep -q "sluice_token" jar &&
	test "$(curl_code "${serve_url}s/0/c/1" -b jar)" = 200 &&
	test "$(curl_code "${serve_url}s/0/c/1" -b "sluice_token=wrong")" = 401 &&
	stop_serve $serve_pid
'

test_expect_success 'on a non-loopback address with --allow-remote the token is checked on every request' '
	start_serve remote.out --store s.db --listen 0.0.0.0:0 --allow-remote --token-file good.token &&
	port=${serve_url##*:} && port=${port%/} &&
	test "$(curl_code "http://127.0.0.1:$port/")" = 401 &&
	test "$(curl_code "http://127.0.0.1:$port/" -H "Host: dashboard.example:$port" -H "Authorization: Bearer 0123456789abcdef-token")" = 200 &&
	stop_serve $serve_pid
'

# The live campaign's gate waits, on candidates only (the base has four
# greet_old calls), for a file "go" the test writes into its checkout.
test_expect_success 'setup: a campaign whose gate waits for the test' '
	greet_repo live &&
	cat >live/gate.sh <<-\EOS &&
	if test "$(cat src/*.c | grep -c "greet_old(")" -lt 4; then
		: >waiting
		i=0
		while test ! -e go && test $i -lt 3000; do sleep 0.1; i=$((i + 1)); done
	fi
	EOS
	git -C live add gate.sh && git -C live commit -q -m gate &&
	campaign l.yaml live live "sh gate.sh" "rules:" "  - capture: call" \
		"    template: \"greet(\${out}, sizeof \${out}, \${name})\"" "jail:" "  warm_base: off"
'

# release PID: write "go" once into each checkout whose gate waits, until the
# run PID has ended (once: a checkout released may be in removal already)
cat >release.sh <<\EOF
i=0
: >released
while kill -0 "$1" 2>/dev/null && test $i -lt 3000; do
	for w in $(find scratch -name waiting 2>/dev/null); do
		d=$(dirname "$w")
		grep -qxF "$d" released || { echo "$d" >>released && : >"$d/go"; }
	done
	sleep 0.1
	i=$((i + 1))
done
EOF

test_expect_success 'a page open while a run proceeds shows its data change, and a decision taken, with no reload; then a screenshot' '
	{ timeout -s KILL 600 sluice run --store l.db l.yaml >run.out 2>run.err & run_pid=$!; } &&
	for i in $(seq 1 1200); do
		test -n "$(find scratch -name waiting 2>/dev/null)" && break
		kill -0 $run_pid 2>/dev/null || break
		sleep 0.1
	done &&
	test -n "$(find scratch -name waiting)" &&
	start_serve live.out --store l.db --listen 127.0.0.1:0 --refresh-ms 200 &&
	cdp size 1200 1500 open "${serve_url}s/0/c/1" \
		eval "document.querySelector(\".summary .proposed\").textContent" \
		eval "window.cdpMark = 1" \
		run "sh release.sh $run_pid >/dev/null 2>&1 &" \
		wait "document.querySelector(\".summary .proposed\").textContent === \"3\"" \
		eval "+document.body.dataset.updates > 0 && window.cdpMark === 1" \
		eval "document.querySelectorAll(\"svg#funnel rect\").length" \
		run "sluice accept --store l.db \$(sqlite3 l.db \"select min(id) from candidates\") >/dev/null" \
		wait "document.querySelector(\".summary\").textContent.includes(\"1 accepted\")" \
		eval "document.querySelectorAll(\"#chart-acceptance rect\").length" \
		noerrors shot "$TRASH/dashboard.png" >live.cdp &&
	wait $run_pid &&
	stop_serve $serve_pid &&
	cat live.cdp &&
	printf "%s\n" "\"0\"" 1 true 7 1 >live.want &&
	test_cmp live.want live.cdp &&
	png-probe dashboard.png 1f6feb 1a7f37 >probe &&
	cat probe &&
	read _ bars _ <<-EOF &&
	$(grep ^1f6feb probe)
	EOF
	test "$bars" -gt 10000
'

test_expect_success 'cleanup: no server left' '
	for p in $(cat serve.pids); do stop_serve $p; done
'

test_done
