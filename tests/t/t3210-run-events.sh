#!/bin/sh
test_description='run --events: the event stream of a whole example campaign, stopped by SIGTERM and resumed, every line valid against docs/events.schema.json'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

SCHEMA="$TEST_DIRECTORY/../../docs/events.schema.json"

# check-events SCHEMA FILE: every line of FILE a JSON object valid against
# SCHEMA; prints "ok N" or the first line that is not and why.  A small
# validator of the JSON Schema keywords the schema uses (type, const, enum,
# pattern, minLength, minimum, required, properties, additionalProperties,
# allOf, if/then): no package needed.
cat >check-events.py <<\EOF
import json, re, sys

def types_of(v):
    if v is None: return {"null"}
    if isinstance(v, bool): return {"boolean"}
    if isinstance(v, int): return {"integer", "number"}
    if isinstance(v, float): return {"number"}
    if isinstance(v, str): return {"string"}
    if isinstance(v, list): return {"array"}
    return {"object"}

def errors(s, v, where):
    known = {"$schema", "$id", "title", "description", "type", "const", "enum", "pattern",
             "minLength", "minimum", "required", "properties", "additionalProperties",
             "allOf", "if", "then"}
    for k in s:
        if k not in known:
            yield "%s: the validator does not know the keyword %s" % (where, k)
    if "type" in s:
        want = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not types_of(v) & set(want):
            yield "%s: %r is not of type %s" % (where, v, want)
            return
    if "const" in s and (v != s["const"] or type(v) != type(s["const"])):
        yield "%s: %r is not %r" % (where, v, s["const"])
    if "enum" in s and not any(v == e and type(v) == type(e) for e in s["enum"]):
        yield "%s: %r is not one of %s" % (where, v, s["enum"])
    if isinstance(v, str):
        if "pattern" in s and not re.search(s["pattern"], v):
            yield "%s: %r does not match %s" % (where, v, s["pattern"])
        if len(v) < s.get("minLength", 0):
            yield "%s: %r is too short" % (where, v)
    if "minimum" in s and isinstance(v, (int, float)) and not isinstance(v, bool) and v < s["minimum"]:
        yield "%s: %r is below %r" % (where, v, s["minimum"])
    if isinstance(v, dict):
        for k in s.get("required", []):
            if k not in v:
                yield "%s: %s is missing" % (where, k)
        props = s.get("properties", {})
        for k, x in v.items():
            if k in props:
                yield from errors(props[k], x, where + "." + k)
            elif s.get("additionalProperties", True) is False:
                yield "%s: %s is not in the schema" % (where, k)
    for sub in s.get("allOf", []):
        yield from errors(sub, v, where)
    if "if" in s and not list(errors(s["if"], v, where)):
        yield from errors(s.get("then", {}), v, where)

schema = json.load(open(sys.argv[1]))
n = 0
for n, line in enumerate(open(sys.argv[2]), 1):
    try:
        v = json.loads(line)
    except ValueError as e:
        sys.exit("line %d is not JSON (%s): %s" % (n, e, line))
    for e in errors(schema, v, "line %d" % n):
        sys.exit("%s\n%s" % (e, line))
if not n:
    sys.exit("no events")
print("ok", n)
EOF

# the model version of the migration example against the stub: the rule
# does two sites, the model the third; its first request hangs
OPENAI_API_KEY=sk-test-events
export OPENAI_API_KEY

test_expect_success 'setup: the migration example, a stub model whose first answer hangs' '
	cp -R "$EXAMPLES/migration/project" mig &&
	make_repo mig &&
	mkdir m &&
	openai_reply m/reply-1.json <"$EXAMPLES/migration/replies/ui.txt" &&
	echo "hang 1" >m/reply-1.fault &&
	start_stub m && echo $stub_pid >stub.pid &&
	sed "s|base_url: https://api.openai.com/v1|base_url: http://127.0.0.1:$stub_port/v1|" \
		"$EXAMPLES/migration/campaign-openai.yaml" >mig.yaml &&
	grep -q "127.0.0.1:$stub_port" mig.yaml
'

test_expect_success 'the validator refuses what the schema does not allow' '
	printf "%s\n" "{\"v\":1,\"ts\":\"2026-01-02T03:04:05.678Z\",\"run\":\"h:1:2\",\"campaign\":\"c\",\"event\":\"stop\",\"worker\":0,\"target\":null,\"reason\":\"x\"}" >good.jsonl &&
	python3 check-events.py "$SCHEMA" good.jsonl &&
	sed "s/\"v\":1/\"v\":2/" good.jsonl >bad1.jsonl &&
	! python3 check-events.py "$SCHEMA" bad1.jsonl &&
	sed "s/,\"reason\":\"x\"//" good.jsonl >bad2.jsonl &&
	! python3 check-events.py "$SCHEMA" bad2.jsonl &&
	sed "s/\"worker\":0/\"worker\":0,\"extra\":1/" good.jsonl >bad3.jsonl &&
	! python3 check-events.py "$SCHEMA" bad3.jsonl &&
	sed "s/\"event\":\"stop\"/\"event\":\"gate_ended\"/" good.jsonl >bad4.jsonl &&
	! python3 check-events.py "$SCHEMA" bad4.jsonl
'

test_expect_success 'SIGTERM while the model request is in flight: the stream says stop and run_end stopped' '
	{ sluice run --store s.db --repo mig --events ev.jsonl mig.yaml >out1 2>err1 & pid=$!; } &&
	i=0 &&
	while [ $i -lt 1200 ] && ! grep -q "\"event\":\"request_sent\"" ev.jsonl 2>/dev/null; do
		kill -0 $pid 2>/dev/null || break
		sleep 0.05
		i=$((i + 1))
	done &&
	grep -q "\"event\":\"request_sent\"" ev.jsonl &&
	kill -TERM $pid &&
	{ wait $pid; rc=$?; } &&
	test $rc = 143 &&
	tail -n 2 ev.jsonl >last &&
	grep -q "\"event\":\"stop\"" last &&
	tail -n 1 last | grep -q "\"event\":\"run_end\".*\"outcome\":\"stopped\"" &&
	python3 check-events.py "$SCHEMA" ev.jsonl
'

test_expect_success 'the resumed run appends to the stream; the whole of it is valid' '
	sluice run --store s.db --repo mig --events ev.jsonl mig.yaml >out2 2>err2 &&
	grep -q "proposed  *3" out2 &&
	python3 check-events.py "$SCHEMA" ev.jsonl &&
	test "$(grep -c "\"event\":\"run_start\"" ev.jsonl)" = 2 &&
	test "$(sed -n "s/.*\"run\":\"\([^\"]*\)\".*/\1/p" ev.jsonl | uniq | wc -l)" = 2 &&
	tail -n 1 ev.jsonl | grep -q "\"event\":\"run_end\".*\"outcome\":\"done\".*\"proposed\":" &&
	for e in run_start target_claimed edit_placed gate_started gate_ended candidate \
		request_sent request_answered target_done stop run_end
	do
		grep -q "\"event\":\"$e\"" ev.jsonl || { echo "no $e event"; exit 1; }
	done &&
	grep "\"event\":\"request_answered\"" ev.jsonl | grep -q "\"ok\":true,\"tokens_in\":120,\"tokens_out\":30" &&
	grep "\"event\":\"gate_ended\"" ev.jsonl | grep -q "\"gate\":\"test\",\"on\":\"candidate\",\"verdict\":\"fail\"" &&
	grep "\"event\":\"target_done\"" ev.jsonl | grep -q "\"path\":\"ui/ui.c\",\"line\":5,.*\"state\":\"proposed\"" &&
	grep -q "\"event\":\"gate_started\",\"worker\":0,\"target\":null,\"gate\":\"build\",\"on\":\"baseline\"" ev.jsonl &&
	grep -q "\"campaign\":\"buf-copy-n-model\"" ev.jsonl
'

test_expect_success 'off a terminal the events are also timestamped lines on stderr' '
	grep -q "^\[20[0-9-]*T[0-9:]*Z\] w[0-9]* ui/ui.c:5: attempt 2: model request$" err2 &&
	grep -q "^\[20[0-9-]*T[0-9:]*Z\] w[0-9]* ui/ui.c:5: gate test pass in [0-9.]* s (candidate)$" err2
'

test_expect_success '--events -: the stream alone on stdout, the funnel on stderr' '
	greet_repo repo &&
	write_campaign g.yaml &&
	sluice run --store g.db --events - g.yaml >out 2>err &&
	python3 check-events.py "$SCHEMA" out &&
	! grep -v "^{\"v\":1," out &&
	grep -q "proposed  *3" err &&
	grep -q "\"event\":\"run_end\".*\"outcome\":\"done\"" out
'

test_expect_success 'a stream that cannot be written: the run says so, status 3' '
	test_expect_code 3 sluice run --store g2.db --events /dev/full g.yaml >out 2>err &&
	grep -q "cannot write the events to ./dev/full.: No space left on device" err
'

test_expect_success 'a token budget stops a run: a budget event, run_end budget; the raised budget resumes it' '
	mkdir -p brepo/src &&
	{
		echo "int old_api(int x) { return x; }" &&
		for i in 1 2 3; do echo "int f$i(void) { return old_api($i); }"; done
	} >brepo/src/b.c &&
	make_repo brepo &&
	mkdir b &&
	openai_reply b/reply-1.json <<-\EOF &&
	```c
	int f(void) { return new_api(0) + 0; }
	```
	EOF
	start_stub b && echo $stub_pid >bstub.pid &&
	cat >b.yaml <<-EOF &&
	name: budgeted
	repository: brepo
	scratch: $TRASH/scratch
	concurrency: 1
	targets: {language: c, unit: function,
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"}
	provider: {kind: openai, base_url: "http://127.0.0.1:$stub_port/v1", model: stub-1}
	budget: {max_tokens: 150}
	attempts: 1
	gates:
	  - {name: check, command: "true"}
	EOF
	sluice run --store b.db --events bev.jsonl b.yaml >bout 2>berr &&
	grep -q "\"event\":\"budget\".*\"reason\":\"token budget reached (150 of 150)\"" bev.jsonl &&
	tail -n 1 bev.jsonl | grep -q "\"event\":\"run_end\".*\"outcome\":\"budget\"" &&
	grep -q "\"event\":\"target_done\".*\"state\":\"budget\"" bev.jsonl &&
	sed -i "s/max_tokens: 150/max_tokens: 1000/" b.yaml &&
	sluice run --store b.db --events bev.jsonl b.yaml >bout2 2>berr2 &&
	tail -n 1 bev.jsonl | grep -q "\"event\":\"run_end\".*\"outcome\":\"done\"" &&
	test "$(grep -c "\"event\":\"run_start\"" bev.jsonl)" = 2 &&
	python3 check-events.py "$SCHEMA" bev.jsonl
'

test_expect_success 'cleanup' '
	{ kill $(cat stub.pid) $(cat bstub.pid) 2>/dev/null || :; }
'

test_done
