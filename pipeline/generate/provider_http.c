/*
 * provider_http.c - the openai and anthropic kinds' transport: one try
 * after another, each sent by pipeline/http (sl_http_send).
 *
 * sl_provider_http_new reads the key from the environment once, keeps it
 * in the provider (wiped on free) and sends it only in a header; a reply
 * body has it redacted as it arrives, and so do messages that could quote
 * a server's answer and the recorded request body.  What differs between the kinds (the path, the body, the
 * headers, the reply parser) is the kind's sl_provider_wire
 * (provider_openai.c, provider_anthropic.c).  The body is built once per
 * call and sent by each try.  Handles come from a locked pool in the
 * provider, so concurrent calls never share one and connections are still
 * reused.
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
#include "pipeline/http/http.h"
#include "common/util.h"

void sl_provider_set_finish(sl_completion *out, json_t *fr)
{
	if (json_is_string(fr))
		snprintf(out->finish_reason, sizeof(out->finish_reason), "%s", json_string_value(fr));
}

/* The body as a JSON object, or SL_ERROR with where it broke. */
void sl_provider_set_usage(sl_completion *out, json_t *root, const char *cut_reason,
			   const char *in_key, const char *out_key)
{
	json_t *usage = json_object_get(root, "usage");

	out->truncated = !strcmp(out->finish_reason, cut_reason);
	out->tokens_in = sl_provider_json_int(usage, in_key);
	out->tokens_out = sl_provider_json_int(usage, out_key);
}

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


/* ---- hooks ----------------------------------------------------------- */

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

static CURL *pool_take(sl_provider *p)
{
	CURL *h = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->npool)
		h = p->pool[--p->npool];
	pthread_mutex_unlock(&p->lock);
	return h ? h : sl_curl()->easy_init();
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
		sl_curl()->easy_cleanup(h);
}

enum { TRY_OK, TRY_RETRY, TRY_FAIL };

/* Milliseconds one try may take: the timeout, cut at the deadline (<= 0: none left). */
static int64_t try_budget_ms(const sl_provider *p)
{
	int64_t left;

	if (!p->deadline_ms)
		return p->timeout_ms;
	left = p->deadline_ms - sl_now_ms();
	return left < (int64_t)p->timeout_ms ? left : (int64_t)p->timeout_ms;
}

/* Free a header list without leaving the key in freed memory. */
static void free_headers(struct curl_slist *list)
{
	for (struct curl_slist *s = list; s; s = s->next)
		sl_provider_wipe(s->data);
	sl_curl()->slist_free_all(list);
}

/* The request's header list: the common ones, the kind's (with the key), the extra ones. */
static struct curl_slist *request_headers(const sl_provider *p, const sl_provider_wire *w)
{
	static const char *const common[] = {
		"Content-Type: application/json", "Accept: application/json", "Expect:",
	};
	struct curl_slist *list = NULL, *next;
	sl_strvec kind = SL_STRVEC_INIT;
	int failed = 0;

	w->headers(p, &kind);
	for (size_t i = 0; !failed && i < 3 + kind.n + p->headers.n; i++) {
		const char *h = i < 3 ? common[i] : i < 3 + kind.n ? kind.v[i - 3] :
			p->headers.v[i - 3 - kind.n];

		if ((next = sl_curl()->slist_append(list, h)))
			list = next;
		else
			failed = 1;
	}
	for (size_t i = 0; i < kind.n; i++)
		sl_provider_wipe(kind.v[i]);
	sl_strvec_release(&kind);
	if (failed) {
		free_headers(list);
		list = NULL;
	}
	return list;
}

/*
 * One request.  TRY_OK with out filled, or TRY_RETRY / TRY_FAIL with the
 * cause in msg (unmasked: the caller masks).
 */
static int http_once(sl_provider *p, const char *req, sl_completion *out,
		     sl_http_response *resp, sl_buf *msg, sl_err *perr)
{
	const sl_provider_wire *w = p->ops->wire;
	sl_http_request rq = { .url = p->url, .body = req, .stop = p->stop };
	CURL *h = NULL;
	int ret = TRY_FAIL, r;

	if ((rq.timeout_ms = try_budget_ms(p)) <= 0) {
		sl_buf_adds(msg, "the run's wall-time budget is spent; the request was not sent");
		return TRY_RETRY;
	}
	rq.connect_timeout_ms = rq.timeout_ms < 30000 ? rq.timeout_ms : 30000;
	rq.now_s = (p->hooks.now_s ? p->hooks.now_s : default_now)(p->hooks.ctx);
	out->http_status = 0;
	if (!(rq.headers = request_headers(p, w)) || !(h = pool_take(p))) {
		sl_buf_adds(msg, "out of memory preparing the model request");
		goto done;
	}

	r = sl_http_send(h, &rq, resp);
	/* an endpoint may quote the key back (an error, an echo): gone before anyone reads it */
	sl_http_redact(&resp->body, p->key);
	out->http_status = (int)resp->status;
	if (r == SL_HTTP_STOPPED) {
		sl_buf_addf(msg, "the model request to '%s' was stopped", p->url);
		ret = TRY_RETRY;
	} else if (r == SL_HTTP_TIMEOUT) {
		sl_buf_addf(msg, "the model request to '%s' timed out after ", p->url);
		sl_provider_add_duration(msg, (unsigned)rq.timeout_ms);
		if (rq.timeout_ms < (int64_t)p->timeout_ms)
			sl_buf_adds(msg, " (the run's wall-time budget)");
		ret = TRY_RETRY;
	} else if (r == SL_HTTP_TOO_BIG) {
		sl_buf_addf(msg, "the model endpoint's response is larger than %d MiB",
			    SL_CAP_MODEL_BODY_BYTES / (1024 * 1024));
	} else if (r != SL_HTTP_DONE) {
		sl_buf_addf(msg, "cannot reach the model at '%s': %s", p->url, resp->error);
		ret = r == SL_HTTP_TRANSIENT ? TRY_RETRY : TRY_FAIL;
	} else if (resp->status < 200 || resp->status > 299) {
		http_error_message(msg, resp->status, &resp->body);
		ret = sl_http_status_transient(resp->status) ? TRY_RETRY : TRY_FAIL;
		if (resp->status != 429 && resp->status != 503)
			resp->retry_after_ms = -1;
	} else {
		sl_buf_reset(&out->text);
		if (w->parse(out, &resp->body, perr)) {
			/* a cut or garbled body is the transport's fault, not the model's */
			sl_buf_adds(msg, perr->msg);
			sl_err_clear(perr);
			ret = TRY_RETRY;
		} else {
			ret = TRY_OK;
		}
	}
done:
	pool_give(p, h);
	free_headers(rq.headers);
	return ret;
}

static int64_t backoff_ms(const sl_provider *p, int retry, int64_t retry_after_ms)
{
	double j = retry_after_ms >= 0 ? 0 :
		(p->hooks.jitter ? p->hooks.jitter : default_jitter)(p->hooks.ctx);

	return sl_http_backoff_ms(retry, p->base_backoff_ms, p->max_backoff_ms, retry_after_ms, j);
}

int sl_provider_http_complete(sl_provider *p, const sl_provider_call *call, sl_completion *out,
			      sl_err *err)
{
	const char *req = call->body;
	sl_http_response resp;
	sl_buf msg = SL_BUF_INIT;
	sl_err perr = SL_ERR_INIT;
	int ret = SL_ERROR;

	sl_http_response_init(&resp, SL_CAP_MODEL_BODY_BYTES);
	for (;;) {
		int r;

		sl_buf_reset(&msg);
		r = http_once(p, req, out, &resp, &msg, &perr);
		if (r == TRY_OK) {
			ret = SL_OK;
			break;
		}
		out->transient = r == TRY_RETRY;
		if (r == TRY_RETRY && out->retries < p->max_retries)
			out->waits_ms[out->retries] = backoff_ms(p, out->retries, resp.retry_after_ms);
		if (r == TRY_FAIL || out->retries >= p->max_retries || (p->stop && *p->stop) ||
		    (p->deadline_ms && sl_now_ms() + out->waits_ms[out->retries] >= p->deadline_ms)) {
			if (out->retries)
				sl_buf_addf(&msg, " (gave up after %d %s)", out->retries,
					    out->retries == 1 ? "retry" : "retries");
			sl_http_redact(&msg, p->key);
			sl_err_set(err, SL_ERROR, "%s", msg.buf);
			break;
		}
		if (p->hooks.sleep_ms)
			p->hooks.sleep_ms(p->hooks.ctx, out->waits_ms[out->retries]);
		else
			sl_http_sleep_ms(out->waits_ms[out->retries], p->stop);
		out->retries++;
	}
	sl_http_response_release(&resp);
	sl_buf_release(&msg);
	return ret;
}

int sl_provider_http_probe(sl_provider *p, sl_err *err)
{
	const sl_provider_wire *w = p->ops->wire;
	size_t ul = strlen(p->url), pl = strlen(w->path);
	sl_http_request rq = { .stop = p->stop };
	sl_http_response resp;
	sl_buf url = SL_BUF_INIT, msg = SL_BUF_INIT;
	CURL *h = NULL;
	int ret = SL_OK;

	sl_http_response_init(&resp, 64 * 1024);
	sl_buf_add(&url, p->url, ul >= pl ? ul - pl : ul);
	sl_buf_adds(&url, "/models");
	rq.url = url.buf;
	rq.timeout_ms = p->timeout_ms < 10000 ? p->timeout_ms : 10000;
	rq.connect_timeout_ms = rq.timeout_ms;
	if (!(rq.headers = request_headers(p, w)) || !(h = pool_take(p)))
		goto done;
	/* only a refusal of the key stops the run: anything else is for the requests to see */
	if (sl_http_send(h, &rq, &resp) == SL_HTTP_DONE &&
	    (resp.status == 401 || resp.status == 403)) {
		sl_http_redact(&resp.body, p->key);
		http_error_message(&msg, resp.status, &resp.body);
		ret = sl_err_set(err, SL_EINPUT, "the model endpoint '%s' refuses the key: %s",
				 url.buf, msg.buf);
	}
done:
	pool_give(p, h);
	free_headers(rq.headers);
	sl_http_response_release(&resp);
	sl_buf_release(&url);
	sl_buf_release(&msg);
	return ret;
}

int sl_provider_http_new(sl_provider *p, const sl_provider_opts *opts, sl_err *err)
{
	const char *name = sl_provider_kind_name(opts->kind), *key;
	sl_buf url = SL_BUF_INIT;
	size_t bl;

	if (!opts->model || !*opts->model)
		return sl_err_set(err, SL_EINPUT, "the %s provider needs a model", name);
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
	sl_buf_adds(&url, p->ops->wire->path);
	p->url = sl_buf_detach(&url, NULL);
	return sl_http_global_init(err);
}
