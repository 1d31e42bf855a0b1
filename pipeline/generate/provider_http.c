/*
 * provider_http.c - the openai and anthropic kinds' transport: one try
 * after another with the libcurl easy interface.
 *
 * sl_provider_http_new reads the key from the environment once, keeps it
 * in the provider (wiped on free) and sends it only in a header; messages
 * that could quote a server's answer, and the recorded request body, have
 * the key masked.  The request body is built once per call by the kind's
 * file (provider_openai.c, provider_anthropic.c) and sent by each try.
 * Handles come from a locked pool in the provider, so concurrent calls
 * never share one and connections are still reused.  The response body is
 * read into a capped buffer, then parsed by the kind's parser.  libcurl is
 * initialised once per process, on first use, behind a pthread_once;
 * curl_global_cleanup is never called.
 *
 * Retries: each try is classified (done, retry, fail); the wait before a
 * retry comes from Retry-After or from capped exponential backoff with full
 * jitter, and goes through the hooks so tests see every wait without
 * sleeping.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "pipeline/generate/provider_internal.h"
#include "common/util.h"

void sl_provider_set_finish(sl_completion *out, json_t *fr)
{
	if (json_is_string(fr))
		snprintf(out->finish_reason, sizeof(out->finish_reason), "%s", json_string_value(fr));
}

/* The body as a JSON object, or SL_ERROR with where it broke. */
json_t *sl_provider_load_object(const sl_buf *body, sl_err *err)
{
	json_error_t jerr;
	json_t *root;

	if (!body->len) {
		sl_err_set(err, SL_ERROR, "the model endpoint returned an empty body");
		return NULL;
	}
	root = json_loadb(body->buf, body->len, 0, &jerr);
	if (!root) {
		sl_err_set(err, SL_ERROR, "the model endpoint returned invalid JSON: %s "
			   "at byte %d of %zu", jerr.text, jerr.position, body->len);
		return NULL;
	}
	if (!json_is_object(root)) {
		sl_err_set(err, SL_ERROR, "the model endpoint returned JSON that is not an object");
		json_decref(root);
		return NULL;
	}
	return root;
}

static void http_error_message(sl_buf *msg, long status, const sl_buf *body)
{
	json_t *root = json_loadb(body->buf, body->len, 0, NULL), *e, *m = NULL;

	sl_buf_addf(msg, "HTTP %ld: ", status);
	if (json_is_object(root)) {
		e = json_object_get(root, "error");
		if (json_is_object(e))
			m = json_object_get(e, "message");
		else if (json_is_string(e))
			m = e;
		if (!json_is_string(m))
			m = json_object_get(root, "message");
		if (!json_is_string(m))
			m = json_object_get(root, "detail");
	}
	if (json_is_string(m))
		sl_provider_add_snippet(msg, json_string_value(m), json_string_length(m));
	else if (body->len)
		sl_provider_add_snippet(msg, body->buf, body->len);
	else
		sl_buf_adds(msg, "(empty body)");
	json_decref(root);
}

static void default_sleep(void *ctx, int64_t ms)
{
	(void)ctx;
	if (ms > 0)
		sl_provider_sleep_ms((long)ms);
}

/* xorshift64*, one state per thread, seeded from the kernel */
static double default_jitter(void *ctx)
{
	static _Thread_local uint64_t s;

	(void)ctx;
	if (!s) {
		if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != (ssize_t)sizeof(s))
			s = (uint64_t)sl_now_ms() ^ (uint64_t)(uintptr_t)&s;
		s |= 1;
	}
	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	return (double)((s * 0x2545F4914F6CDD1DULL) >> 11) / (double)(1ULL << 53);
}

static int64_t default_now(void *ctx)
{
	(void)ctx;
	return (int64_t)time(NULL);
}

/* ---- one HTTP try ---------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static CURL *pool_take(sl_provider *p)
{
	CURL *h = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->npool)
		h = p->pool[--p->npool];
	pthread_mutex_unlock(&p->lock);
	return h ? h : curl_easy_init();
}

static void pool_give(sl_provider *p, CURL *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->npool < POOL_KEEP) {
		SL_ALLOC_GROW(p->pool, p->npool + 1, p->apool);
		p->pool[p->npool++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	if (h)
		curl_easy_cleanup(h);
}

typedef struct http_try {
	sl_buf body;
	int64_t retry_after_ms;     /* -1: the server did not say */
	int64_t now_s;              /* wall clock for HTTP dates */
} http_try;

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
	sl_buf *b = userp;
	size_t n = size * nmemb;

	if (sl_buf_add(b, data, n))
		return 0;      /* over the cap: abort the transfer */
	return n;
}

/* Retry-After: delta-seconds or an HTTP date; retry-after-ms: milliseconds. */
static void parse_retry_after(http_try *t, const char *name, const char *v, size_t len)
{
	char val[128];
	char *end;
	long long n;

	while (len && (*v == ' ' || *v == '\t'))
		v++, len--;
	while (len && (v[len - 1] == '\r' || v[len - 1] == '\n' || v[len - 1] == ' '))
		len--;
	if (!len || len >= sizeof(val))
		return;
	memcpy(val, v, len);
	val[len] = '\0';
	errno = 0;
	n = strtoll(val, &end, 10);
	if (!*end && !errno && n >= 0 && end != val) {
		if (!strcasecmp(name, "retry-after-ms"))
			t->retry_after_ms = n;
		else if (t->retry_after_ms < 0)   /* retry-after-ms is more precise */
			t->retry_after_ms = n > INT64_MAX / 1000 ? INT64_MAX : n * 1000;
		return;
	}
	if (!strcasecmp(name, "retry-after") && t->retry_after_ms < 0) {
		time_t when = curl_getdate(val, NULL);

		if (when != (time_t)-1)
			t->retry_after_ms = when > t->now_s ? ((int64_t)when - t->now_s) * 1000 : 0;
	}
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userp)
{
	http_try *t = userp;
	size_t n = size * nmemb;
	static const char *const names[] = { "retry-after-ms", "retry-after" };

	if (n >= 5 && !strncmp(data, "HTTP/", 5)) {
		t->retry_after_ms = -1;          /* a new response (after 100 Continue) */
		return n;
	}
	for (size_t i = 0; i < 2; i++) {
		size_t nl = strlen(names[i]);

		if (n > nl && data[nl] == ':' && !strncasecmp(data, names[i], nl))
			parse_retry_after(t, names[i], data + nl + 1, n - nl - 1);
	}
	return n;
}

static int retryable_curl(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_PARTIAL_FILE:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

enum { TRY_OK, TRY_RETRY, TRY_FAIL };

static int on_xfer(void *userp, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const sl_provider *p = userp;

	return p->stop && *p->stop;
}

/* Milliseconds one try may take: the timeout, cut at the deadline (<= 0: none left). */
static int64_t try_budget_ms(const sl_provider *p)
{
	int64_t left;

	if (!p->deadline_ms)
		return p->timeout_ms;
	left = p->deadline_ms - sl_now_ms();
	return left < (int64_t)p->timeout_ms ? left : (int64_t)p->timeout_ms;
}

/*
 * One request.  TRY_OK with out filled, or TRY_RETRY / TRY_FAIL with the
 * cause in msg (unmasked: the caller masks).
 */
static int http_once(sl_provider *p, const char *req, sl_completion *out, http_try *t,
		     sl_buf *msg, sl_err *perr)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *headers = NULL, *h2;
	sl_buf keyh = SL_BUF_INIT;
	long status = 0;
	CURLcode rc;
	CURL *h = NULL;
	int ret = TRY_FAIL, failed = 0;
	int64_t budget;

	if ((budget = try_budget_ms(p)) <= 0) {
		sl_buf_adds(msg, "the run's wall-time budget is spent; the request was not sent");
		return TRY_RETRY;
	}
	sl_buf_reset(&t->body);
	t->retry_after_ms = -1;
	t->now_s = (p->hooks.now_s ? p->hooks.now_s : default_now)(p->hooks.ctx);
	out->http_status = 0;

#define ADD_HEADER(s) do { if (!(h2 = curl_slist_append(headers, (s)))) failed = 1; \
	else headers = h2; } while (0)
	ADD_HEADER("Content-Type: application/json");
	ADD_HEADER("Accept: application/json");
	ADD_HEADER("Expect:");
	if (p->kind == SL_PROVIDER_ANTHROPIC) {
		sl_buf_addf(&keyh, "anthropic-version: %s", p->anthropic_version);
		ADD_HEADER(keyh.buf);
		sl_buf_reset(&keyh);
		if (p->key)
			sl_buf_addf(&keyh, "x-api-key: %s", p->key);
	} else if (p->key) {
		sl_buf_addf(&keyh, "Authorization: Bearer %s", p->key);
	}
	if (keyh.len)
		ADD_HEADER(keyh.buf);
	for (size_t i = 0; i < p->headers.n; i++)
		ADD_HEADER(p->headers.v[i]);
#undef ADD_HEADER
	if (failed || !(h = pool_take(p))) {
		sl_buf_adds(msg, "out of memory preparing the model request");
		goto done;
	}

	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, p->url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, req);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(req));
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "sluice");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &t->body);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, t);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)budget);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(budget < 30000 ? budget : 30000));
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_xfer);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, p);

	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	out->http_status = (int)status;
	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		sl_buf_addf(msg, "the model request to '%s' was stopped", p->url);
		ret = TRY_RETRY;
	} else if (rc == CURLE_OPERATION_TIMEDOUT) {
		sl_buf_addf(msg, "the model request to '%s' timed out after ", p->url);
		sl_provider_add_duration(msg, (unsigned)budget);
		if (budget < (int64_t)p->timeout_ms)
			sl_buf_adds(msg, " (the run's wall-time budget)");
		ret = TRY_RETRY;
	} else if (rc == CURLE_WRITE_ERROR && t->body.truncated) {
		sl_buf_addf(msg, "the model endpoint's response is larger than %d MiB",
			    BODY_CAP / (1024 * 1024));
	} else if (rc != CURLE_OK) {
		sl_buf_addf(msg, "cannot reach the model at '%s': %s", p->url,
			    *errbuf ? errbuf : curl_easy_strerror(rc));
		ret = retryable_curl(rc) ? TRY_RETRY : TRY_FAIL;
	} else if (status < 200 || status > 299) {
		http_error_message(msg, status, &t->body);
		ret = status == 429 || status == 408 || status >= 500 ? TRY_RETRY : TRY_FAIL;
		if (status != 429 && status != 503)
			t->retry_after_ms = -1;
	} else {
		sl_buf_reset(&out->text);
		if ((p->kind == SL_PROVIDER_ANTHROPIC ? sl_provider_anthropic_parse : sl_provider_openai_parse)(out, &t->body, perr)) {
			/* a cut or garbled body is the transport's fault, not the model's */
			sl_buf_adds(msg, perr->msg);
			sl_err_clear(perr);
			ret = TRY_RETRY;
		} else {
			ret = TRY_OK;
		}
	}
done:
	if (h) {
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
		curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
		pool_give(p, h);
	}
	/* do not leave the key in freed memory */
	for (struct curl_slist *s = headers; s; s = s->next)
		sl_provider_wipe(s->data);
	curl_slist_free_all(headers);
	sl_provider_wipe(keyh.buf);
	sl_buf_release(&keyh);
	return ret;
}

static int64_t backoff_ms(const sl_provider *p, int retry, int64_t retry_after_ms)
{
	int64_t ceiling = p->base_backoff_ms, wait;
	double j;

	if (retry_after_ms >= 0)
		return retry_after_ms < p->max_backoff_ms ? retry_after_ms : p->max_backoff_ms;
	for (int i = 0; i < retry && ceiling < p->max_backoff_ms; i++)
		ceiling *= 2;
	if (ceiling > p->max_backoff_ms)
		ceiling = p->max_backoff_ms;
	j = (p->hooks.jitter ? p->hooks.jitter : default_jitter)(p->hooks.ctx);
	if (!(j >= 0))          /* also NaN */
		j = 0;
	if (j > 1)
		j = 1;
	wait = (int64_t)((double)ceiling * j + 0.5);
	return wait < ceiling ? wait : ceiling;
}

/* Wait ms, in slices, returning early when the run is stopped. */
static void stoppable_sleep(const sl_provider *p, int64_t ms)
{
	for (int64_t left = ms; left > 0 && !(p->stop && *p->stop); left -= 50)
		default_sleep(NULL, left < 50 ? left : 50);
}

int sl_provider_http_complete(sl_provider *p, const char *req, sl_completion *out, sl_err *err)
{
	http_try t;
	sl_buf msg = SL_BUF_INIT;
	sl_err perr = SL_ERR_INIT;
	int ret = SL_ERROR;

	sl_buf_init(&t.body, BODY_CAP);
	for (;;) {
		int r;

		sl_buf_reset(&msg);
		r = http_once(p, req, out, &t, &msg, &perr);
		if (r == TRY_OK) {
			ret = SL_OK;
			break;
		}
		out->transient = r == TRY_RETRY;
		if (r == TRY_RETRY && out->retries < p->max_retries)
			out->waits_ms[out->retries] = backoff_ms(p, out->retries, t.retry_after_ms);
		if (r == TRY_FAIL || out->retries >= p->max_retries || (p->stop && *p->stop) ||
		    (p->deadline_ms && sl_now_ms() + out->waits_ms[out->retries] >= p->deadline_ms)) {
			if (out->retries)
				sl_buf_addf(&msg, " (gave up after %d %s)", out->retries,
					    out->retries == 1 ? "retry" : "retries");
			sl_provider_mask_key(&msg, p->key);
			sl_err_set(err, SL_ERROR, "%s", msg.buf);
			break;
		}
		if (p->hooks.sleep_ms)
			p->hooks.sleep_ms(p->hooks.ctx, out->waits_ms[out->retries]);
		else
			stoppable_sleep(p, out->waits_ms[out->retries]);
		out->retries++;
	}
	sl_buf_release(&t.body);
	sl_buf_release(&msg);
	return ret;
}

int sl_provider_http_new(sl_provider *p, const sl_provider_opts *opts, sl_err *err)
{
	const char *name = sl_provider_kind_name(opts->kind), *key;
	sl_buf url = SL_BUF_INIT;
	size_t bl;

	if (!opts->base_url || !*opts->base_url)
		return sl_err_set(err, SL_EINPUT, "the %s provider needs a base_url", name);
	if (strncmp(opts->base_url, "http://", 7) && strncmp(opts->base_url, "https://", 8))
		return sl_err_set(err, SL_EINPUT, "base_url '%s' is not an http:// or https:// URL",
				  opts->base_url);
	if (opts->api_key_env && *opts->api_key_env) {
		key = getenv(opts->api_key_env);
		if (!key || !*key)
			return sl_err_set(err, SL_EINPUT, "environment variable '%s' is %s",
					  opts->api_key_env, key ? "empty" : "not set");
		p->key = sl_xstrdup(key);
	}
	bl = strlen(opts->base_url);
	while (bl && opts->base_url[bl - 1] == '/')
		bl--;
	sl_buf_add(&url, opts->base_url, bl);
	sl_buf_adds(&url, opts->kind == SL_PROVIDER_ANTHROPIC ? "/messages" : "/chat/completions");
	p->url = sl_buf_detach(&url, NULL);
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK)
		return sl_err_set(err, SL_ERROR, "cannot initialise libcurl: %s",
				  curl_easy_strerror(curl_init_rc));
	return SL_OK;
}
