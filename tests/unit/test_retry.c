/*
 * test_retry.c - the HTTP providers' retries against tests/helper/stub-model
 * with faults injected: which failures are retried, how long each wait is,
 * and that giving up is clean.  Sleeping, jitter and the wall clock go
 * through the provider hooks, so no test waits for real (only the trickle
 * test spends its short timeouts).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/generate/provider.h"
#include "stub.h"
#include "common/util.h"
#include "unit.h"

#define KEY "sk-retry-5a6b7c8d9e"

typedef struct fake {
	pthread_mutex_t lock;
	int64_t slept[64];
	int nslept;
	double jitter;          /* < 0: use the default generator */
	int64_t now_s;
} fake;

static void fake_sleep(void *ctx, int64_t ms)
{
	fake *f = ctx;

	pthread_mutex_lock(&f->lock);
	if (f->nslept < 64)
		f->slept[f->nslept++] = ms;
	pthread_mutex_unlock(&f->lock);
}

static double fake_jitter(void *ctx)
{
	return ((fake *)ctx)->jitter;
}

static int64_t fake_now(void *ctx)
{
	return ((fake *)ctx)->now_s;
}

static void fake_init(fake *f, double jitter)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	f->jitter = jitter;
	f->now_s = 1445412480;     /* Wed, 21 Oct 2015 07:28:00 GMT */
}

static sl_provider *provider(const stub *s, int kind, fake *f, int max_retries,
			     unsigned base_ms, unsigned max_ms, unsigned timeout_ms)
{
	sl_provider_opts o = SL_PROVIDER_OPTS_INIT;
	sl_provider *p = NULL;
	sl_err err = SL_ERR_INIT;

	o.kind = kind;
	o.base_url = s->base_url;
	o.model = "stub-1";
	o.api_key_env = "SL_TEST_KEY";
	o.timeout_ms = timeout_ms ? timeout_ms : 5000;
	o.max_retries = max_retries;
	o.base_backoff_ms = base_ms;
	o.max_backoff_ms = max_ms;
	o.hooks.sleep_ms = fake_sleep;
	o.hooks.jitter = f->jitter >= 0 ? fake_jitter : NULL;
	o.hooks.now_s = fake_now;
	o.hooks.ctx = f;
	if (sl_provider_new(&p, &o, &err))
		fprintf(stderr, "sl_provider_new: %s\n", err.msg);
	CHECK(p != NULL);
	return p;
}

static const sl_chat_msg chat[] = {
	{ "system", "You edit code." },
	{ "user", "Fix x.c" },
};

/* Complete once; the code, with c and err filled. */
static int call(sl_provider *p, sl_completion *c, sl_err *err)
{
	sl_err_clear(err);
	return p ? sl_provider_complete(p, chat, 2, c, err) : -100;
}

static void test_retry_after_seconds(void)
{
	stub s;
	fake f;
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	if (!stub_start(&s))
		return;
	fake_init(&f, 1.0);
	stub_put(&s, "reply-1.status", "429");
	stub_put(&s, "reply-1.headers", "Retry-After: 3\nX-Other: y\n");
	stub_fixture(&s, "reply-1.json", "error-429.json");
	stub_fixture(&s, "reply-2.json", "openai-ok.json");
	p = provider(&s, SL_PROVIDER_OPENAI, &f, 4, 100, 30000, 0);
	sl_completion_init(&c);
	CHECK_INT(call(p, &c, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_STR(c.text.buf, "--- a/x.c\n+++ b/x.c\n");
	CHECK_INT(c.retries, 1);
	CHECK_INT(c.waits_ms[0], 3000);          /* the server's word, not the 100 ms backoff */
	CHECK_INT(f.nslept, 1);
	CHECK_INT(f.slept[0], 3000);
	CHECK_INT(c.http_status, 200);
	CHECK_INT(c.tokens_in, 12);
	CHECK(stub_has(&s, "request-2.json"));
	CHECK(!stub_has(&s, "request-3.json"));
	sl_completion_release(&c);
	sl_provider_free(p);
	stub_stop(&s);
}

static void test_retry_after_date_and_cap(void)
{
	stub s;
	fake f;
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	if (!stub_start(&s))
		return;
	fake_init(&f, 1.0);
	f.now_s -= 7;       /* the date is 7 s ahead of our clock */
	stub_put(&s, "reply-1.status", "429");
	stub_put(&s, "reply-1.headers", "Retry-After: Wed, 21 Oct 2015 07:28:00 GMT\n");
	stub_put(&s, "reply-2.status", "503");
	stub_put(&s, "reply-2.headers", "Retry-After: 120\n");     /* above the cap */
	stub_put(&s, "reply-3.status", "429");
	stub_put(&s, "reply-3.headers", "Retry-After: Wed, 21 Oct 2015 07:00:00 GMT\n"); /* past */
	stub_put(&s, "reply-4.status", "429");
	stub_put(&s, "reply-4.headers", "retry-after-ms: 1250\nRetry-After: 2\n");
	stub_fixture(&s, "reply-5.json", "openai-ok.json");
	p = provider(&s, SL_PROVIDER_OPENAI, &f, 4, 100, 60000, 0);
	sl_completion_init(&c);
	CHECK_INT(call(p, &c, &err), 0);
	CHECK_INT(c.retries, 4);
	CHECK_INT(c.waits_ms[0], 7000);
	CHECK_INT(c.waits_ms[1], 60000);         /* capped at max_backoff_ms */
	CHECK_INT(c.waits_ms[2], 0);
	CHECK_INT(c.waits_ms[3], 1250);
	CHECK_INT(f.nslept, 4);
	sl_completion_release(&c);
	sl_provider_free(p);
	stub_stop(&s);
}

static void test_backoff_grows_and_is_capped(void)
{
	stub s;
	fake f;
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	static const int64_t want[] = { 100, 200, 400, 800, 1000, 1000 };

	if (!stub_start(&s))
		return;
	fake_init(&f, 1.0);       /* the top of each jitter range */
	stub_put(&s, "reply-1.status", "500");
	stub_fixture(&s, "reply-1.json", "error-500.json");   /* every request: 500 */
	p = provider(&s, SL_PROVIDER_OPENAI, &f, 6, 100, 1000, 0);
	sl_completion_init(&c);
	CHECK_INT(call(p, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "HTTP 500: upstream overloaded (gave up after 6 retries)");
	CHECK_INT(c.retries, 6);
	CHECK_INT(c.http_status, 500);
	CHECK_INT(f.nslept, 6);
	for (int i = 0; i < 6; i++) {
		CHECK_INT(c.waits_ms[i], want[i]);
		CHECK_INT(f.slept[i], want[i]);
	}
	CHECK(stub_has(&s, "request-7.json"));    /* 1 + 6 retries, no more */
	CHECK(!stub_has(&s, "request-8.json"));
	sl_provider_free(p);

	/* full jitter: the wait is the drawn fraction of the ceiling */
	fake_init(&f, 0.25);
	p = provider(&s, SL_PROVIDER_OPENAI, &f, 3, 1000, 30000, 0);
	CHECK_INT(call(p, &c, &err), SL_ERROR);
	CHECK_INT(c.retries, 3);
	CHECK_INT(c.waits_ms[0], 250);
	CHECK_INT(c.waits_ms[1], 500);
	CHECK_INT(c.waits_ms[2], 1000);
	sl_provider_free(p);

	/* the default generator stays inside [0, ceiling] */
	fake_init(&f, -1);
	p = provider(&s, SL_PROVIDER_OPENAI, &f, 4, 1000, 3000, 0);
	CHECK_INT(call(p, &c, &err), SL_ERROR);
	CHECK_INT(c.retries, 4);
	CHECK(c.waits_ms[0] >= 0 && c.waits_ms[0] <= 1000);
	CHECK(c.waits_ms[1] >= 0 && c.waits_ms[1] <= 2000);
	CHECK(c.waits_ms[2] >= 0 && c.waits_ms[2] <= 3000);
	CHECK(c.waits_ms[3] >= 0 && c.waits_ms[3] <= 3000);
	sl_provider_free(p);

	/* max_retries 0: one try */
	fake_init(&f, 1.0);
	p = provider(&s, SL_PROVIDER_OPENAI, &f, 0, 100, 1000, 0);
	CHECK_INT(call(p, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "HTTP 500: upstream overloaded");
	CHECK_INT(c.retries, 0);
	CHECK_INT(f.nslept, 0);
	sl_completion_release(&c);
	sl_provider_free(p);
	stub_stop(&s);
}

static void test_4xx_not_retried(void)
{
	stub s;
	fake f;
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	if (!stub_start(&s))
		return;
	fake_init(&f, 1.0);
	stub_put(&s, "reply-1.status", "404");
	stub_fixture(&s, "reply-1.json", "error-404.json");
	stub_put(&s, "reply-2.status", "401");
	stub_put(&s, "reply-2.json", "{\"error\":{\"message\":\"Incorrect API key provided: " KEY "\"}}");
	stub_put(&s, "reply-3.status", "400");
	stub_put(&s, "reply-3.json", "not json at all");
	p = provider(&s, SL_PROVIDER_OPENAI, &f, 4, 100, 1000, 0);
	sl_completion_init(&c);
	CHECK_INT(call(p, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "HTTP 404: The model `nope` does not exist");
	CHECK_INT(c.retries, 0);
	CHECK_INT(c.http_status, 404);
	CHECK(!stub_has(&s, "request-2.json"));
	CHECK_INT(call(p, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "HTTP 401: Incorrect API key provided: [redacted]");
	CHECK_INT(call(p, &c, &err), SL_ERROR);
	CHECK_STR(err.msg, "HTTP 400: not json at all");
	CHECK_INT(f.nslept, 0);
	CHECK(!stub_has(&s, "request-4.json"));
	sl_completion_release(&c);
	sl_provider_free(p);
	stub_stop(&s);
}

static void test_5xx_and_408_retried(void)
{
	stub s;
	fake f;
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	if (!stub_start(&s))
		return;
	fake_init(&f, 1.0);
	stub_put(&s, "reply-1.status", "502");
	stub_put(&s, "reply-2.status", "408");
	stub_put(&s, "reply-3.status", "529");
	stub_put(&s, "reply-3.headers", "Retry-After: 9\n");    /* only 429 and 503 are heeded */
	stub_fixture(&s, "reply-4.json", "anthropic-ok.json");
	p = provider(&s, SL_PROVIDER_ANTHROPIC, &f, 4, 100, 1000, 0);
	sl_completion_init(&c);
	CHECK_INT(call(p, &c, &err), 0);
	CHECK_STR(c.text.buf, "first part, second part");
	CHECK_INT(c.retries, 3);
	CHECK_INT(c.waits_ms[0], 100);
	CHECK_INT(c.waits_ms[1], 200);
	CHECK_INT(c.waits_ms[2], 400);
	sl_completion_release(&c);
	sl_provider_free(p);
	stub_stop(&s);
}

static void test_dropped_connection(void)
{
	stub s;
	fake f;
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	if (!stub_start(&s))
		return;
	fake_init(&f, 1.0);
	/* half a body, then close; then nothing at all; then a real answer */
	stub_fixture(&s, "reply-1.json", "openai-ok.json");
	stub_put(&s, "reply-1.fault", "drop\n");
	stub_put(&s, "reply-2.fault", "close\n");
	stub_fixture(&s, "reply-3.json", "openai-ok.json");
	p = provider(&s, SL_PROVIDER_OPENAI, &f, 4, 100, 1000, 0);
	sl_completion_init(&c);
	CHECK_INT(call(p, &c, &err), 0);
	CHECK_STR(c.text.buf, "--- a/x.c\n+++ b/x.c\n");
	CHECK_INT(c.retries, 2);
	CHECK_INT(c.tokens_out, 34);
	sl_provider_free(p);

	/* every try dropped: fails cleanly once the retries are spent */
	stub_stop(&s);
	if (!stub_start(&s))
		return;
	stub_fixture(&s, "reply-1.json", "openai-ok.json");
	stub_put(&s, "reply-1.fault", "drop\n");
	p = provider(&s, SL_PROVIDER_OPENAI, &f, 2, 100, 1000, 0);
	CHECK_INT(call(p, &c, &err), SL_ERROR);
	CHECK(!strncmp(err.msg, "cannot reach the model at 'http://127.0.0.1:", 44));
	CHECK(strstr(err.msg, "(gave up after 2 retries)") != NULL);
	CHECK_INT(c.retries, 2);
	CHECK_STR(c.text.buf, "");
	CHECK(stub_has(&s, "request-3.json"));
	CHECK(!stub_has(&s, "request-4.json"));
	sl_completion_release(&c);
	sl_provider_free(p);
	stub_stop(&s);
}

static void test_trickle_times_out(void)
{
	stub s;
	fake f;
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;
	int64_t t0;

	if (!stub_start(&s))
		return;
	fake_init(&f, 1.0);
	/*
	 * about 190 bytes at one per 200 ms: 38 s a try, so that an answer in
	 * under 20 s (two tries of 300 ms and a wait of 100 ms, with room for
	 * a loaded machine) can only be the timeout's doing
	 */
	stub_fixture(&s, "reply-1.json", "openai-ok.json");
	stub_put(&s, "reply-1.fault", "trickle 200\n");
	p = provider(&s, SL_PROVIDER_OPENAI, &f, 1, 100, 1000, 300);
	sl_completion_init(&c);
	t0 = sl_now_ms();
	CHECK_INT(call(p, &c, &err), SL_ERROR);
	CHECK(sl_now_ms() - t0 < 20000);
	CHECK(strstr(err.msg, "timed out after 300 ms (gave up after 1 retry)") != NULL);
	CHECK_INT(c.retries, 1);
	CHECK_INT(c.waits_ms[0], 100);
	CHECK_INT(c.http_status, 200);     /* the head had arrived */
	/*
	 * a slow but in-time answer is fine: the last try wins (44 bytes at
	 * one a millisecond, in a timeout with room for a loaded machine)
	 */
	sl_provider_free(p);
	p = provider(&s, SL_PROVIDER_OPENAI, &f, 1, 100, 1000, 5000);
	stub_put(&s, "reply-3.json", "{\"choices\":[{\"message\":{\"content\":\"ok\"}}]}");
	stub_put(&s, "reply-3.fault", "trickle 1\n");
	CHECK_INT(call(p, &c, &err), 0);
	CHECK_STR(c.text.buf, "ok");
	CHECK_INT(c.retries, 0);
	sl_completion_release(&c);
	sl_provider_free(p);
	stub_stop(&s);
}

static void test_connection_refused(void)
{
	stub s;
	fake f;
	sl_provider *p;
	sl_completion c;
	sl_err err = SL_ERR_INIT;

	if (!stub_start(&s))
		return;
	fake_init(&f, 1.0);
	p = provider(&s, SL_PROVIDER_OPENAI, &f, 3, 100, 1000, 0);
	stub_stop(&s);      /* nobody listens on that port now */
	sl_completion_init(&c);
	CHECK_INT(call(p, &c, &err), SL_ERROR);
	CHECK(!strncmp(err.msg, "cannot reach the model at 'http://127.0.0.1:", 44));
	CHECK(strstr(err.msg, "(gave up after 3 retries)") != NULL);
	CHECK(strstr(err.msg, KEY) == NULL);
	CHECK_INT(c.retries, 3);
	CHECK_INT(c.http_status, 0);
	CHECK_INT(f.nslept, 3);
	CHECK_INT(f.slept[2], 400);
	sl_completion_release(&c);
	sl_provider_free(p);
}

int main(void)
{
	setenv("SL_TEST_KEY", KEY, 1);
	setenv("no_proxy", "127.0.0.1,localhost", 1);
	setenv("NO_PROXY", "127.0.0.1,localhost", 1);
	RUN(test_retry_after_seconds);
	RUN(test_retry_after_date_and_cap);
	RUN(test_backoff_grows_and_is_capped);
	RUN(test_4xx_not_retried);
	RUN(test_5xx_and_408_retried);
	RUN(test_dropped_connection);
	RUN(test_trickle_times_out);
	RUN(test_connection_refused);
	return unit_done();
}
