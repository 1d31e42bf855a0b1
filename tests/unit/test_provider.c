/*
 * test_provider.c - the providers against real processes: the openai and
 * anthropic kinds against tests/helper/stub-model on 127.0.0.1 (one stub per
 * test, see stub.h), canned bodies from tests/fixtures/provider/, the
 * command kind with /bin/sh commands.  Retries have their own file
 * (test_retry.c); here every HTTP provider has max_retries 0 unless said.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/generate/provider.h"
#include "stub.h"
#include "common/util.h"
#include "unit.h"

#define KEY "sk-test-0123456789"

static void nap_ms(long ms)
{
	stub_nap_ms(ms);
}

static const sl_chat_msg chat[] = {
	{ "system", "You edit code." },
	{ "user", "Fix x.c \xff please" },      /* invalid UTF-8 must not break the request */
};

static sl_provider *http(int kind, const char *url, const char *key_env, unsigned timeout_ms,
			 const char *const *headers, const char *response_format)
{
	sl_provider_opts o = SL_PROVIDER_OPTS_INIT;
	sl_provider *p = NULL;
	sl_err err = SL_ERR_INIT;

	o.kind = kind;
	o.base_url = url;
	o.model = "stub-1";
	o.api_key_env = key_env;
	o.temperature = 0.25;
	o.max_tokens = 100;
	o.timeout_ms = timeout_ms;
	o.max_retries = 0;
	o.headers = headers;
	o.response_format = response_format;
	if (sl_provider_new(&p, &o, &err))
		fprintf(stderr, "sl_provider_new: %s\n", err.msg);
	CHECK(p != NULL);
	return p;
}

static sl_provider *openai(const stub *s, const char *key_env, unsigned timeout_ms)
{
	return http(SL_PROVIDER_OPENAI, s->base_url, key_env, timeout_ms, NULL, NULL);
}

/* Complete chat[0..n) on p; the code, c and err filled. */
static int call(sl_provider *p, size_t n, sl_completion *c, sl_err *err)
{
	sl_err_clear(err);
	return p ? sl_provider_complete(p, chat, n, c, err) : -100;
}

static json_t *request_json(stub *s, int n)
{
	char name[64], *text;
	json_t *j;

	snprintf(name, sizeof(name), "request-%d.json", n);
	text = stub_get(s, name);
	j = json_loads(text, 0, NULL);
	free(text);
	CHECK(json_is_object(j));
	return j;
}

static const char *jstr(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static void test_openai_complete(void)
{
	stub s;
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	char *headers = NULL, *body = NULL;
	json_t *req = NULL, *msgs;

	if (!stub_start(&s))
		return;
	stub_fixture(&s, "reply-1.json", "openai-ok.json");
	p = openai(&s, "SL_TEST_KEY", 10000);
	sl_completion_init(&c);
	CHECK_INT(call(p, 2, &c, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_STR(c.text.buf, "--- a/x.c\n+++ b/x.c\n");
	CHECK_INT(c.tokens_in, 12);
	CHECK_INT(c.tokens_out, 34);
	CHECK_INT(c.http_status, 200);
	CHECK_INT(c.retries, 0);
	CHECK_INT(c.truncated, 0);
	CHECK_STR(c.finish_reason, "stop");
	CHECK(c.latency_ms >= 0 && c.latency_ms < 10000);

	headers = stub_get(&s, "request-1.headers");
	CHECK(!strncmp(headers, "POST /v1/chat/completions HTTP/1.1\r\n", 36));
	CHECK(strstr(headers, "\r\nAuthorization: Bearer " KEY "\r\n") != NULL);
	CHECK(strstr(headers, "\r\nContent-Type: application/json\r\n") != NULL);
	body = stub_get(&s, "request-1.json");
	/* what was sent is what is recorded, byte for byte */
	CHECK_STR(c.request.buf, body);
	CHECK(strstr(c.request.buf, KEY) == NULL);
	req = json_loads(body, 0, NULL);
	CHECK(json_is_object(req));
	CHECK_STR(jstr(req, "model"), "stub-1");
	CHECK(json_real_value(json_object_get(req, "temperature")) == 0.25);
	CHECK_INT(json_integer_value(json_object_get(req, "max_tokens")), 100);
	CHECK(json_object_get(req, "response_format") == NULL);
	msgs = json_object_get(req, "messages");
	CHECK_INT(json_array_size(msgs), 2);
	CHECK_STR(jstr(json_array_get(msgs, 0), "role"), "system");
	CHECK_STR(jstr(json_array_get(msgs, 0), "content"), "You edit code.");
	CHECK_STR(jstr(json_array_get(msgs, 1), "role"), "user");
	CHECK_STR(jstr(json_array_get(msgs, 1), "content"), "Fix x.c \xef\xbf\xbd please");
	json_decref(req);
	free(headers);
	free(body);
	sl_completion_release(&c);
	sl_provider_free(p);
	stub_stop(&s);
}

static void test_openai_headers_and_response_format(void)
{
	static const char *const extra[] = { "OpenAI-Organization: org-42", "X-Trace:  a b ", NULL };
	static const char *const bad1[] = { "NoColon", NULL };
	static const char *const bad2[] = { "X-Evil: a\r\nX-Injected: b", NULL };
	sl_provider_opts o = SL_PROVIDER_OPTS_INIT;
	stub s;
	sl_provider *p, *q = NULL;
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	char *headers;
	json_t *req, *rf;

	if (!stub_start(&s))
		return;
	stub_fixture(&s, "reply-1.json", "openai-ok.json");
	p = http(SL_PROVIDER_OPENAI, s.base_url, NULL, 10000, extra,
		 "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"edit\",\"schema\":"
		 "{\"type\":\"object\"}}}");
	sl_completion_init(&c);
	CHECK_INT(call(p, 2, &c, &err), 0);
	headers = stub_get(&s, "request-1.headers");
	CHECK(strstr(headers, "\r\nOpenAI-Organization: org-42\r\n") != NULL);
	CHECK(strstr(headers, "\r\nX-Trace:  a b\r\n") != NULL || strstr(headers, "\r\nX-Trace:  a b \r\n"));
	CHECK(strstr(headers, "Authorization") == NULL);
	req = request_json(&s, 1);
	rf = json_object_get(req, "response_format");
	CHECK_STR(jstr(rf, "type"), "json_schema");
	CHECK_STR(jstr(json_object_get(rf, "json_schema"), "name"), "edit");
	json_decref(req);
	free(headers);
	sl_completion_release(&c);
	sl_provider_free(p);
	stub_stop(&s);

	o.kind = SL_PROVIDER_OPENAI;
	o.base_url = "http://127.0.0.1:9/v1";
	o.model = "m";
	o.headers = bad1;
	CHECK_INT(sl_provider_new(&q, &o, &err), SL_EINPUT);
	CHECK_STR(err.msg, "header 'NoColon' is not a \"Name: value\" line");
	sl_err_clear(&err);
	o.headers = bad2;
	CHECK_INT(sl_provider_new(&q, &o, &err), SL_EINPUT);
	sl_err_clear(&err);
	o.headers = NULL;
	o.response_format = "{\"type\": ";
	CHECK_INT(sl_provider_new(&q, &o, &err), SL_EINPUT);
	CHECK_STR(err.msg, "response_format is not a JSON object");
	CHECK(q == NULL);
}

static void test_openai_bad_replies(void)
{
	static const struct { const char *fixture, *want; } cases[] = {
		{ "openai-empty-choices.json", "the model's reply has no choices" },
		{ "openai-no-content.json",
		  "the model's reply has no message content (finish_reason 'content_filter')" },
		{ "openai-invalid.json",
		  "the model endpoint returned invalid JSON: '[' or '{' expected near '<' at byte 1 of 42" },
		{ "openai-truncated.json",
		  "the model endpoint returned invalid JSON: premature end of input near "
		  "'\"half of a rep' at byte 95 of 95" },
		{ "anthropic-ok.json", "the model's reply has no choices" },
	};
	stub s;
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	char name[32];

	if (!stub_start(&s))
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "reply-%zu.json", i + 1);
		stub_fixture(&s, name, cases[i].fixture);
	}
	stub_put(&s, "reply-6.json", "[1, 2]");
	stub_put(&s, "reply-7.json", "");
	stub_put(&s, "reply-8.json", "{\"choices\":[{\"message\":{\"content\":\"no usage\"}}]}");
	p = openai(&s, "SL_TEST_KEY", 10000);
	sl_completion_init(&c);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(call(p, 2, &c, &err), SL_ERROR);
		CHECK_STR(err.msg, cases[i].want);
		CHECK_INT(c.retries, 0);
		CHECK_STR(c.text.buf, "");
		/* a body that does not parse is the transport's fault: retryable */
		CHECK_INT(c.transient, 1);
	}
	CHECK_INT(call(p, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "the model endpoint returned JSON that is not an object");
	CHECK_INT(call(p, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "the model endpoint returned an empty body");
	CHECK_INT(call(p, 1, &c, &err), 0);
	CHECK_STR(c.text.buf, "no usage");
	CHECK_INT(c.tokens_in, -1);
	CHECK_INT(c.tokens_out, -1);
	CHECK_STR(c.finish_reason, "");
	sl_completion_release(&c);
	sl_provider_free(p);
	stub_stop(&s);
}

/* The run's deadline cuts a request that hangs, and a stop aborts one. */
static void test_deadline_and_stop(void)
{
	stub s;
	sl_provider_opts o = SL_PROVIDER_OPTS_INIT;
	sl_provider *p = NULL;
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	volatile int stop = 0;

	if (!stub_start(&s))
		return;
	stub_fixture(&s, "reply-1.json", "openai-ok.json");
	stub_put(&s, "reply-1.fault", "hang");
	o.kind = SL_PROVIDER_OPENAI;
	o.base_url = s.base_url;
	o.model = "stub-1";
	o.timeout_ms = 600000;
	o.max_retries = 3;
	o.deadline_ms = sl_now_ms() + 300;
	CHECK_INT(sl_provider_new(&p, &o, &err), 0);
	sl_completion_init(&c);
	CHECK_INT(call(p, 2, &c, &err), SL_ERROR);
	CHECK(strstr(err.msg, "wall-time budget") != NULL);
	CHECK_INT(c.transient, 1);
	sl_provider_free(p);
	/* a stop already requested: nothing is sent, no retry */
	stop = 1;
	o.deadline_ms = 0;
	o.stop = &stop;
	CHECK_INT(sl_provider_new(&p, &o, &err), 0);
	CHECK_INT(call(p, 2, &c, &err), SL_ERROR);
	CHECK(strstr(err.msg, "was stopped") != NULL);
	CHECK_INT(c.retries, 0);
	CHECK_INT(c.transient, 1);
	sl_completion_release(&c);
	sl_provider_free(p);
	stub_stop(&s);
}

static void test_max_tokens_flag(void)
{
	stub s;
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	if (!stub_start(&s))
		return;
	stub_fixture(&s, "reply-1.json", "openai-length.json");
	stub_fixture(&s, "reply-2.json", "anthropic-max-tokens.json");
	sl_completion_init(&c);
	p = openai(&s, NULL, 10000);
	CHECK_INT(call(p, 2, &c, &err), 0);
	CHECK_INT(c.truncated, 1);
	CHECK_STR(c.finish_reason, "length");
	CHECK_STR(c.text.buf, "def f(x):\n    return x +");
	CHECK_INT(c.tokens_out, 100);
	sl_provider_free(p);
	p = http(SL_PROVIDER_ANTHROPIC, s.base_url, NULL, 10000, NULL, NULL);
	CHECK_INT(call(p, 2, &c, &err), 0);
	CHECK_INT(c.truncated, 1);
	CHECK_STR(c.finish_reason, "max_tokens");
	CHECK_STR(c.text.buf, "cut he");
	sl_provider_free(p);
	sl_completion_release(&c);
	stub_stop(&s);
}

static void test_anthropic(void)
{
	static const char *const extra[] = { "anthropic-beta: tools-2024", NULL };
	static const sl_chat_msg conv[] = {
		{ "system", "You edit code." },
		{ "user", "Fix x.c" },
		{ "assistant", "Which part?" },
		{ "system", "Answer with a diff." },
		{ "user", "All of it" },
	};
	stub s;
	sl_provider *p;
	sl_provider_opts o = SL_PROVIDER_OPTS_INIT;
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	char *headers;
	json_t *req, *msgs;

	if (!stub_start(&s))
		return;
	stub_fixture(&s, "reply-1.json", "anthropic-ok.json");
	stub_put(&s, "reply-2.status", "400");
	stub_fixture(&s, "reply-2.json", "anthropic-error-400.json");
	stub_fixture(&s, "reply-3.json", "anthropic-empty.json");
	stub_fixture(&s, "reply-4.json", "openai-ok.json");
	p = http(SL_PROVIDER_ANTHROPIC, s.base_url, "SL_TEST_KEY", 10000, extra, "{\"type\":\"json_object\"}");
	sl_completion_init(&c);
	CHECK_INT(p ? sl_provider_complete(p, conv, 5, &c, &err) : -100, 0);
	CHECK_STR(err.msg, "");
	CHECK_STR(c.text.buf, "first part, second part");   /* text blocks only */
	CHECK_INT(c.tokens_in, 21);
	CHECK_INT(c.tokens_out, 9);
	CHECK_STR(c.finish_reason, "end_turn");
	CHECK_INT(c.truncated, 0);

	headers = stub_get(&s, "request-1.headers");
	CHECK(!strncmp(headers, "POST /v1/messages HTTP/1.1\r\n", 28));
	CHECK(strstr(headers, "\r\nx-api-key: " KEY "\r\n") != NULL);
	CHECK(strstr(headers, "\r\nanthropic-version: 2023-06-01\r\n") != NULL);
	CHECK(strstr(headers, "\r\nanthropic-beta: tools-2024\r\n") != NULL);
	CHECK(strstr(headers, "Authorization") == NULL);
	req = request_json(&s, 1);
	CHECK_STR(jstr(req, "model"), "stub-1");
	CHECK_STR(jstr(req, "system"), "You edit code.\n\nAnswer with a diff.");
	CHECK_INT(json_integer_value(json_object_get(req, "max_tokens")), 100);
	CHECK(json_object_get(req, "response_format") == NULL);
	msgs = json_object_get(req, "messages");
	CHECK_INT(json_array_size(msgs), 3);
	CHECK_STR(jstr(json_array_get(msgs, 0), "role"), "user");
	CHECK_STR(jstr(json_array_get(msgs, 1), "role"), "assistant");
	CHECK_STR(jstr(json_array_get(msgs, 1), "content"), "Which part?");
	CHECK_STR(jstr(json_array_get(msgs, 2), "content"), "All of it");
	json_decref(req);
	free(headers);

	CHECK_INT(call(p, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "HTTP 400: max_tokens: field required");
	CHECK_INT(call(p, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "the model's reply has no text content (stop_reason 'refusal')");
	CHECK_INT(call(p, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "the model's reply has no content");
	sl_provider_free(p);

	/* max_tokens defaults to 4096; the version header can be changed */
	o.kind = SL_PROVIDER_ANTHROPIC;
	o.base_url = s.base_url;
	o.model = "claude-stub";
	o.anthropic_version = "2099-01-01";
	o.max_retries = 0;
	stub_fixture(&s, "reply-5.json", "anthropic-ok.json");
	p = NULL;
	CHECK_INT(sl_provider_new(&p, &o, &err), 0);
	CHECK_INT(call(p, 2, &c, &err), 0);
	req = request_json(&s, 5);
	CHECK_INT(json_integer_value(json_object_get(req, "max_tokens")), 4096);
	CHECK(json_object_get(req, "temperature") == NULL);
	json_decref(req);
	headers = stub_get(&s, "request-5.headers");
	CHECK(strstr(headers, "\r\nanthropic-version: 2099-01-01\r\n") != NULL);
	CHECK(strstr(headers, "x-api-key") == NULL);
	free(headers);
	sl_completion_release(&c);
	sl_provider_free(p);
	stub_stop(&s);
}

static void test_key_never_leaks(void)
{
	stub s;
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	const sl_chat_msg leaky[] = { { "user", "my key is " KEY ", keep it" } };
	char *sent;

	if (!stub_start(&s))
		return;
	stub_put(&s, "reply-1.status", "500");
	stub_put(&s, "reply-1.json", "{\"error\":{\"message\":\"boom: key " KEY " rejected\",\"type\":\"x\"}}");
	stub_fixture(&s, "reply-2.json", "openai-ok.json");
	p = openai(&s, "SL_TEST_KEY", 10000);
	sl_completion_init(&c);
	CHECK_INT(call(p, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "HTTP 500: boom: key [redacted] rejected");
	CHECK_INT(c.http_status, 500);
	CHECK(strstr(c.request.buf, KEY) == NULL);
	/* even a chat that quotes the key is recorded without it */
	sl_err_clear(&err);
	CHECK_INT(p ? sl_provider_complete(p, leaky, 1, &c, &err) : -100, 0);
	CHECK(strstr(c.request.buf, "my key is [redacted], keep it") != NULL);
	CHECK(strstr(c.request.buf, KEY) == NULL);
	sent = stub_get(&s, "request-2.json");
	CHECK(strstr(sent, KEY) != NULL);      /* but the endpoint got the chat as it was */
	free(sent);
	/* a reply that quotes the key, plainly or spelled with JSON escapes, has it redacted */
	stub_put(&s, "reply-3.json", "{\"choices\":[{\"message\":{\"content\":\"a " KEY
		 " b sk\\u002dtest-0123456789 c\"}}]}");
	CHECK_INT(call(p, 2, &c, &err), SL_OK);
	CHECK_STR(c.text.buf, "a [redacted] b [redacted] c");
	sl_completion_release(&c);
	sl_provider_free(p);
	stub_stop(&s);
}

static void test_openai_timeout(void)
{
	stub s;
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	int64_t t0 = sl_now_ms();

	if (!stub_start(&s))
		return;
	stub_put(&s, "reply-1.json", "{\"choices\":[{\"message\":{\"content\":\"late\"}}]}");
	stub_put(&s, "reply-1.delay", "30000");
	p = openai(&s, NULL, 1000);
	sl_completion_init(&c);
	CHECK_INT(call(p, 2, &c, &err), SL_ERROR);
	CHECK(strstr(err.msg, "timed out after 1 s") != NULL);
	/* the reply comes after 30 s: what waited for it would take that long */
	CHECK(sl_now_ms() - t0 < 30000);
	sl_completion_release(&c);
	sl_provider_free(p);
	stub_stop(&s);
}

static void test_openai_unreachable(void)
{
	stub s;
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	if (!stub_start(&s))
		return;
	p = openai(&s, NULL, 5000);
	stub_stop(&s);
	sl_completion_init(&c);
	CHECK_INT(call(p, 2, &c, &err), SL_ERROR);
	CHECK(!strncmp(err.msg, "cannot reach the model at 'http://127.0.0.1:", 44));
	sl_completion_release(&c);
	sl_provider_free(p);
}

/* ---- concurrency ----------------------------------------------------- */

typedef struct worker {
	sl_provider *p;
	int id, ok, bad;
} worker;

static void *work(void *arg)
{
	worker *w = arg;
	sl_completion c;

	sl_completion_init(&c);
	for (int i = 0; i < 4; i++) {
		char text[64], want[80];
		sl_chat_msg m[2] = { { "system", "S" }, { "user", text } };
		sl_err err = SL_ERR_INIT;

		snprintf(text, sizeof(text), "thread %d request %d", w->id, i);
		snprintf(want, sizeof(want), "echo: %s", text);
		if (!sl_provider_complete(w->p, m, 2, &c, &err) && !strcmp(c.text.buf, want) &&
		    c.tokens_in == (int64_t)strlen(text) && c.tokens_out == 7)
			w->ok++;
		else
			w->bad++;
	}
	sl_completion_release(&c);
	return NULL;
}

static void concurrent(int kind)
{
	stub s;
	sl_provider *p;
	worker w[8];
	pthread_t t[8];
	int64_t t0;
	int ok = 0;

	if (!stub_start(&s))
		return;
	stub_put(&s, "reply-1.echo", "");
	stub_put(&s, "reply-1.delay", "100");
	p = http(kind, s.base_url, "SL_TEST_KEY", 10000, NULL, NULL);
	if (!p) {
		stub_stop(&s);
		return;
	}
	t0 = sl_now_ms();
	for (int i = 0; i < 8; i++) {
		w[i] = (worker){ p, i, 0, 0 };
		CHECK_INT(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		ok += w[i].ok;
	}
	CHECK_INT(ok, 32);
	/* sequential would take 32 x 100 ms */
	CHECK(sl_now_ms() - t0 < 2500);
	CHECK(stub_has(&s, "request-32.json"));
	CHECK(!stub_has(&s, "request-33.json"));
	sl_provider_free(p);
	stub_stop(&s);
}

static void test_concurrent_openai(void)
{
	concurrent(SL_PROVIDER_OPENAI);
}

static void test_concurrent_anthropic(void)
{
	concurrent(SL_PROVIDER_ANTHROPIC);
}

static void test_options(void)
{
	sl_provider_opts o = SL_PROVIDER_OPTS_INIT;
	sl_provider *p = (sl_provider *)&o;
	sl_err err = SL_ERR_INIT;

	o.kind = SL_PROVIDER_OPENAI;
	o.base_url = "http://127.0.0.1:9/v1";
	o.model = "m";
	o.api_key_env = "SL_TEST_SURELY_UNSET";
	CHECK_INT(sl_provider_new(&p, &o, &err), SL_EINPUT);
	CHECK(p == NULL);
	CHECK_STR(err.msg, "environment variable 'SL_TEST_SURELY_UNSET' is not set");
	sl_err_clear(&err);
	o.api_key_env = NULL;
	o.model = NULL;
	CHECK_INT(sl_provider_new(&p, &o, &err), SL_EINPUT);
	CHECK_STR(err.msg, "the openai provider needs a model");
	sl_err_clear(&err);
	o.kind = SL_PROVIDER_ANTHROPIC;
	CHECK_INT(sl_provider_new(&p, &o, &err), SL_EINPUT);
	CHECK_STR(err.msg, "the anthropic provider needs a model");
	sl_err_clear(&err);
	o.model = "m";
	o.base_url = "ftp://x";
	CHECK_INT(sl_provider_new(&p, &o, &err), SL_EINPUT);
	sl_err_clear(&err);
	o.kind = SL_PROVIDER_RULES;
	CHECK_INT(sl_provider_new(&p, &o, &err), SL_EINPUT);
	sl_err_clear(&err);
	o.kind = SL_PROVIDER_COMMAND;
	CHECK_INT(sl_provider_new(&p, &o, &err), SL_EINPUT);
	CHECK_STR(err.msg, "the command provider needs a command");
	sl_err_clear(&err);
	o.kind = SL_PROVIDER_REPLAY;
	CHECK_INT(sl_provider_new(&p, &o, &err), SL_EINPUT);
	CHECK_STR(err.msg, "the replay provider needs a replay file");
	sl_err_clear(&err);

	CHECK_STR(sl_provider_kind_name(SL_PROVIDER_COMMAND), "command");
	CHECK_STR(sl_provider_kind_name(SL_PROVIDER_ANTHROPIC), "anthropic");
	CHECK_STR(sl_provider_kind_name(99), "unknown");
	/* the existing values do not move */
	CHECK_INT(SL_PROVIDER_RULES, 1);
	CHECK_INT(SL_PROVIDER_OPENAI, 2);
	CHECK_INT(SL_PROVIDER_COMMAND, 3);
}

/* ---- command --------------------------------------------------------- */

static sl_provider *command(const char *cmd, unsigned timeout_s)
{
	sl_provider_opts o = SL_PROVIDER_OPTS_INIT;
	sl_provider *p = NULL;
	sl_err err = SL_ERR_INIT;

	o.kind = SL_PROVIDER_COMMAND;
	o.command = cmd;
	o.timeout_s = timeout_s;
	if (sl_provider_new(&p, &o, &err))
		fprintf(stderr, "sl_provider_new: %s\n", err.msg);
	return p;
}

/* Run cmd on chat; returns the code, text in *c. */
static int run(const char *cmd, unsigned timeout_s, const sl_chat_msg *m, size_t n,
	       sl_completion *c, sl_err *err)
{
	sl_provider *p = command(cmd, timeout_s);
	int rc;

	if (!p)
		return -100;
	rc = sl_provider_complete(p, m, n, c, err);
	sl_provider_free(p);
	return rc;
}

static void test_flatten(void)
{
	sl_buf b = SL_BUF_INIT;
	const sl_chat_msg m[] = {
		{ "system", "S" }, { "user", "U1\n" }, { "assistant", "A" }, { "user", "" },
	};

	sl_provider_flatten_chat(&b, m, 4);
	CHECK_STR(b.buf, "### system\nS\n\n### user\nU1\n\n### assistant\nA\n\n### user\n\n");
	sl_buf_release(&b);
}

static void test_command_cat(void)
{
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	sl_completion_init(&c);
	CHECK_INT(run("cat", 10, chat, 2, &c, &err), 0);
	CHECK_STR(c.text.buf, "### system\nYou edit code.\n\n### user\nFix x.c \xff please\n");
	CHECK_INT(c.http_status, 0);
	CHECK_INT(c.tokens_in, -1);
	sl_completion_release(&c);
}

static void test_command_big_stdin_and_cap(void)
{
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	sl_buf big = SL_BUF_INIT, want = SL_BUF_INIT;
	sl_chat_msg m[1];

	for (int i = 0; i < 20000; i++)
		sl_buf_addf(&big, "line %05d of a big prompt\n", i);
	m[0].role = "user";
	m[0].content = big.buf;
	sl_provider_flatten_chat(&want, m, 1);
	sl_completion_init(&c);
	/* 540 kB through stdin and back: no deadlock between writing and reading */
	CHECK_INT(run("cat", 20, m, 1, &c, &err), 0);
	CHECK_INT(c.text.len, want.len);
	CHECK(!strcmp(c.text.buf, want.buf));
	/* a command that does not read its stdin must not kill us with SIGPIPE */
	CHECK_INT(run("exec echo ignored", 20, m, 1, &c, &err), 0);
	CHECK_STR(c.text.buf, "ignored\n");
	/* stdout is capped at 1 MiB, and the rest drained */
	CHECK_INT(run("head -c 3000000 /dev/zero | tr '\\0' a", 20, chat, 1, &c, &err), 0);
	CHECK_INT(c.text.len, 1024 * 1024);
	CHECK(c.text.truncated);
	sl_completion_release(&c);
	sl_buf_release(&big);
	sl_buf_release(&want);
}

static void test_command_failure(void)
{
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	sl_completion_init(&c);
	CHECK_INT(run("echo partial; echo first >&2; echo 'the real error  ' >&2; exit 3",
		      10, chat, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "the command exited with status 3: the real error");
	CHECK_INT(c.http_status, 3);
	sl_err_clear(&err);
	CHECK_INT(run("kill -9 $$", 10, chat, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "the command was killed by signal 9");
	sl_err_clear(&err);
	CHECK_INT(run("exit 1", 10, chat, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "the command exited with status 1");
	sl_completion_release(&c);
}

static void test_command_usage(void)
{
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	sl_completion_init(&c);
	CHECK_INT(run("echo ok; echo progress >&2; echo 'sluice-usage: prompt=120 completion=7' >&2",
		      10, chat, 2, &c, &err), 0);
	CHECK_STR(c.text.buf, "ok\n");
	CHECK_INT(c.tokens_in, 120);
	CHECK_INT(c.tokens_out, 7);
	/* a part left out, or one that does not parse, is not said */
	CHECK_INT(run("echo 'sluice-usage: completion=9' >&2", 10, chat, 2, &c, &err), 0);
	CHECK_INT(c.tokens_in, -1);
	CHECK_INT(c.tokens_out, 9);
	CHECK_INT(run("echo 'sluice-usage: prompt=x12 completion=3' >&2", 10, chat, 2, &c, &err),
		  0);
	CHECK_INT(c.tokens_in, -1);
	CHECK_INT(c.tokens_out, -1);
	/* not the last line: not usage */
	CHECK_INT(run("echo 'sluice-usage: prompt=5' >&2; echo more >&2", 10, chat, 2, &c, &err),
		  0);
	CHECK_INT(c.tokens_in, -1);
	/* an error quotes the line before the usage line */
	CHECK_INT(run("echo 'quota exhausted' >&2; echo 'sluice-usage: prompt=5' >&2; exit 2",
		      10, chat, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "the command exited with status 2: quota exhausted");
	CHECK_INT(c.tokens_in, 5);
	sl_completion_release(&c);
}

static void test_command_probe(void)
{
	static const struct {
		const char *cmd;
		int rc;
		const char *msg;
	} cases[] = {
		{ "cat", 0, NULL },
		{ "A=1 B=2 exec cat", 0, NULL },
		{ "cd / && ./no-such-thing", 0, NULL },     /* first program: cd */
		{ "\"$SHELL\" -c true", 0, NULL },           /* cannot be told: passes */
		{ "nosuch-sluice-model --flag", SL_EINPUT,
		  "the command cannot start: 'nosuch-sluice-model' is not a program, builtin or "
		  "function the shell finds" },
		{ "X=1 /no/such/bin/model", SL_EINPUT,
		  "the command cannot start: '/no/such/bin/model' is not a program, builtin or "
		  "function the shell finds" },
		{ "cat | (", SL_EINPUT, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sl_provider *p = command(cases[i].cmd, 10);
		sl_err err = SL_ERR_INIT;

		CHECK(p != NULL);
		if (!p)
			continue;
		CHECK_INT(sl_provider_probe(p, &err), cases[i].rc);
		if (cases[i].msg)
			CHECK_STR(err.msg, cases[i].msg);
		else if (cases[i].rc)
			CHECK(!strncmp(err.msg, "the command is not valid shell", 30));
		sl_provider_free(p);
	}
}

static void test_command_timeout(void)
{
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	int64_t t0 = sl_now_ms();

	sl_completion_init(&c);
	CHECK_INT(run("sleep 30", 1, chat, 2, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "the command timed out after 1 s and was killed");
	CHECK(sl_now_ms() - t0 < 30000);    /* not killed: 30 s */
	/* a background child holding stdout open is killed with the group */
	sl_err_clear(&err);
	t0 = sl_now_ms();
	CHECK_INT(run("sleep 30 & echo started; wait", 1, chat, 2, &c, &err), SL_ERROR);
	CHECK(strstr(err.msg, "timed out") != NULL);
	CHECK(sl_now_ms() - t0 < 30000);    /* the child not killed: 30 s */
	CHECK_STR(c.text.buf, "started\n");
	sl_completion_release(&c);
}

/* 1 if pid is gone or a zombie (killed, waiting for its new parent to reap it). */
static int dead(long pid)
{
	char path[64];
	sl_buf st = SL_BUF_INIT;
	const char *close;
	int ret;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (sl_read_file(&st, path, 4096, NULL))
		return 1;
	close = strrchr(st.buf, ')');
	ret = close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
	sl_buf_release(&st);
	return ret;
}

static void test_command_kills_stragglers(void)
{
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	long pid;
	int gone = 0;

	sl_completion_init(&c);
	CHECK_INT(run("sleep 30 >/dev/null 2>&1 & echo $!", 10, chat, 2, &c, &err), 0);
	pid = atol(c.text.buf);
	CHECK(pid > 1);
	for (int i = 0; pid > 1 && i < 200 && !gone; i++) {
		gone = dead(pid);
		if (!gone)
			nap_ms(10);
	}
	CHECK(gone);
	sl_completion_release(&c);
}

static void test_command_env_and_fds(void)
{
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	int leak = open("/dev/null", O_RDONLY);   /* deliberately without O_CLOEXEC */

	sl_completion_init(&c);
	setenv("SL_TEST_ENV", "from the host", 1);
	CHECK_INT(run("printf '%s\\n' \"$SL_TEST_ENV\"", 10, chat, 2, &c, &err), 0);
	CHECK_STR(c.text.buf, "from the host\n");
	CHECK(leak >= 3);
	/* ls opens the directory itself as fd 3: nothing else may be open */
	CHECK_INT(run("exec ls /proc/self/fd", 10, chat, 2, &c, &err), 0);
	CHECK_STR(c.text.buf, "0\n1\n2\n3\n");
	close(leak);
	sl_completion_release(&c);
}

/* The command's argv is /bin/sh -c COMMAND and nothing else: no key in ps. */
static void test_command_argv(void)
{
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	sl_completion_init(&c);
	CHECK_INT(run("tr '\\0' '|' </proc/$$/cmdline", 10, chat, 2, &c, &err), 0);
	CHECK_STR(c.text.buf, "/bin/sh|-c|tr '\\0' '|' </proc/$$/cmdline|");
	CHECK(strstr(c.text.buf, KEY) == NULL);
	CHECK_STR(c.request.buf, "### system\nYou edit code.\n\n### user\nFix x.c \xff please\n");
	CHECK(c.key[0] && strlen(c.key) == 64);
	sl_completion_release(&c);
}

int main(void)
{
	setenv("SL_TEST_KEY", KEY, 1);
	unsetenv("SL_TEST_SURELY_UNSET");
	/* the stub is on loopback: never route it through a proxy */
	setenv("no_proxy", "127.0.0.1,localhost", 1);
	setenv("NO_PROXY", "127.0.0.1,localhost", 1);

	RUN(test_openai_complete);
	RUN(test_openai_headers_and_response_format);
	RUN(test_openai_bad_replies);
	RUN(test_max_tokens_flag);
	RUN(test_deadline_and_stop);
	RUN(test_anthropic);
	RUN(test_key_never_leaks);
	RUN(test_openai_timeout);
	RUN(test_openai_unreachable);
	RUN(test_concurrent_openai);
	RUN(test_concurrent_anthropic);
	RUN(test_options);
	RUN(test_flatten);
	RUN(test_command_cat);
	RUN(test_command_big_stdin_and_cap);
	RUN(test_command_failure);
	RUN(test_command_usage);
	RUN(test_command_probe);
	RUN(test_command_timeout);
	RUN(test_command_kills_stragglers);
	RUN(test_command_env_and_fds);
	RUN(test_command_argv);
	return unit_done();
}
