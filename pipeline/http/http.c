/*
 * http.c - one HTTP request with libcurl and the retry arithmetic
 * (http.h).
 *
 * The easy handle is reset and set up from the request for every try; the
 * body goes into the caller's capped buffer (a write callback that refuses
 * past the cap makes libcurl abort with CURLE_WRITE_ERROR); the header
 * callback reads the retry headers and passes every header on; the
 * progress callback polls the stop flag.  libcurl's own signals are off
 * (CURLOPT_NOSIGNAL), as threads require.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "pipeline/http/http.h"
#include "common/util.h"

/* What the functions do when libcurl cannot be loaded. */
static CURLcode no_global_init(long flags)
{
	return CURLE_FAILED_INIT;
}

static CURL *no_easy_init(void)
{
	return NULL;
}

static CURLcode no_easy_setopt(CURL *h, CURLoption option, ...)
{
	return CURLE_FAILED_INIT;
}

static CURLcode no_easy_perform(CURL *h)
{
	return CURLE_FAILED_INIT;
}

static CURLcode no_easy_getinfo(CURL *h, CURLINFO info, ...)
{
	return CURLE_FAILED_INIT;
}

static void no_easy_handle(CURL *h)
{
}

static const char *no_easy_strerror(CURLcode rc)
{
	return "libcurl could not be loaded";
}

static struct curl_slist *no_slist_append(struct curl_slist *list, const char *s)
{
	return NULL;
}

static void no_slist_free_all(struct curl_slist *list)
{
}

static time_t no_getdate(const char *date, const time_t *unused)
{
	return (time_t)-1;
}

static sl_curl_api api = {
	no_global_init, no_easy_init, no_easy_setopt, no_easy_perform, no_easy_getinfo,
	no_easy_handle, no_easy_handle, no_easy_strerror, no_slist_append, no_slist_free_all,
	no_getdate,
};
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[256];
static CURLcode init_rc = CURLE_FAILED_INIT;

static void load(void)
{
	static const char *const names[] = { "libcurl.so.4", "libcurl-gnutls.so.4", NULL };
	static const char *const syms[] = {
		"curl_global_init", "curl_easy_init", "curl_easy_setopt", "curl_easy_perform",
		"curl_easy_getinfo", "curl_easy_reset", "curl_easy_cleanup", "curl_easy_strerror",
		"curl_slist_append", "curl_slist_free_all", "curl_getdate", NULL
	};
	sl_curl_api t;
	void *const fns[] = {
		&t.global_init, &t.easy_init, &t.easy_setopt, &t.easy_perform, &t.easy_getinfo,
		&t.easy_reset, &t.easy_cleanup, &t.easy_strerror, &t.slist_append,
		&t.slist_free_all, &t.getdate,
	};

	if (sl_dl_load(names, syms, fns, load_error, sizeof(load_error)))
		return;
	init_rc = t.global_init(CURL_GLOBAL_DEFAULT);
	if (init_rc != CURLE_OK)
		snprintf(load_error, sizeof(load_error), "%s", t.easy_strerror(init_rc));
	else
		api = t;
}

const sl_curl_api *sl_curl(void)
{
	pthread_once(&load_once, load);
	return &api;
}

int sl_http_global_init(sl_err *err)
{
	sl_curl();
	if (init_rc != CURLE_OK)
		return sl_err_set(err, SL_ERROR, "cannot initialise libcurl: %s", load_error);
	return SL_OK;
}

void sl_http_response_init(sl_http_response *r, size_t body_cap)
{
	r->status = 0;
	sl_buf_init(&r->body, body_cap);
	r->retry_after_ms = -1;
	r->error[0] = '\0';
}

void sl_http_response_release(sl_http_response *r)
{
	size_t cap = r->body.cap;

	sl_buf_release(&r->body);
	sl_http_response_init(r, cap);
}

typedef struct exchange {
	const sl_http_request *rq;
	sl_http_response *r;
	int64_t now_s;
} exchange;

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
	sl_buf *b = userp;
	size_t n = size * nmemb;

	if (sl_buf_add(b, data, n))
		return 0;      /* over the cap: abort the transfer */
	return n;
}

/* The digits of s as a number, saturated at INT64_MAX; -1 if s is not all digits. */
static int64_t digits_saturated(const char *s)
{
	int64_t n = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		n = n > (INT64_MAX - 9) / 10 ? INT64_MAX : n * 10 + (*s - '0');
	}
	return n;
}

/*
 * Retry-After: delta-seconds or an HTTP date; retry-after-ms: milliseconds.
 * A wait too long to count saturates at INT64_MAX ms (the caller's cap
 * decides), never wraps.
 */
static void parse_retry_after(exchange *x, int ms, const char *v, size_t len)
{
	char val[128];
	int64_t n;

	while (len && (*v == ' ' || *v == '\t'))
		v++, len--;
	while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
		len--;
	if (!len || len >= sizeof(val))
		return;
	memcpy(val, v, len);
	val[len] = '\0';
	if ((n = digits_saturated(val)) >= 0) {
		if (ms)
			x->r->retry_after_ms = n;
		else if (x->r->retry_after_ms < 0)   /* retry-after-ms is more precise */
			x->r->retry_after_ms = n > INT64_MAX / 1000 ? INT64_MAX : n * 1000;
		return;
	}
	if (!ms && x->r->retry_after_ms < 0) {
		time_t when = sl_curl()->getdate(val, NULL);
		int64_t d;

		if (when == (time_t)-1)
			return;
		d = (int64_t)when > x->now_s ? (int64_t)when - x->now_s : 0;
		x->r->retry_after_ms = d > INT64_MAX / 1000 ? INT64_MAX : d * 1000;
	}
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userp)
{
	exchange *x = userp;
	size_t n = size * nmemb, name_len, vlen;
	const char *colon, *v;

	if (n >= 5 && !strncmp(data, "HTTP/", 5)) {
		x->r->retry_after_ms = -1;          /* a new response (after 100 Continue) */
		return n;
	}
	if (!(colon = memchr(data, ':', n)))
		return n;
	name_len = (size_t)(colon - data);
	v = colon + 1;
	vlen = n - name_len - 1;
	while (vlen && (*v == ' ' || *v == '\t'))
		v++, vlen--;
	while (vlen && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' ' ||
			v[vlen - 1] == '\t'))
		vlen--;
	if (name_len == 14 && !strncasecmp(data, "retry-after-ms", 14))
		parse_retry_after(x, 1, v, vlen);
	else if (name_len == 11 && !strncasecmp(data, "retry-after", 11))
		parse_retry_after(x, 0, v, vlen);
	if (x->rq->on_header)
		x->rq->on_header(x->rq->ctx, data, name_len, v, vlen);
	return n;
}

static int on_xfer(void *userp, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const sl_http_request *rq = userp;

	return rq->stop && *rq->stop;
}

static int transient_curl(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_PARTIAL_FILE:
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

int sl_http_send(CURL *h, const sl_http_request *rq, sl_http_response *r)
{
	exchange x = { rq, r, rq->now_s ? rq->now_s : (int64_t)time(NULL) };
	const sl_curl_api *c = sl_curl();
	CURLcode rc;

	r->status = 0;
	sl_buf_reset(&r->body);
	r->body.truncated = 0;
	r->retry_after_ms = -1;
	r->error[0] = '\0';
	c->easy_reset(h);
	c->easy_setopt(h, CURLOPT_URL, rq->url);
	c->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (rq->method)
		c->easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
	if (rq->body) {
		c->easy_setopt(h, CURLOPT_POST, 1L);
		c->easy_setopt(h, CURLOPT_POSTFIELDS, rq->body);
		c->easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(rq->body));
	}
	c->easy_setopt(h, CURLOPT_HTTPHEADER, rq->headers);
	c->easy_setopt(h, CURLOPT_USERAGENT, "sluice");
	c->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	c->easy_setopt(h, CURLOPT_WRITEDATA, &r->body);
	c->easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	c->easy_setopt(h, CURLOPT_HEADERDATA, &x);
	c->easy_setopt(h, CURLOPT_ERRORBUFFER, r->error);
	c->easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)rq->timeout_ms);
	if (rq->connect_timeout_ms > 0)
		c->easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)rq->connect_timeout_ms);
	c->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	c->easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	c->easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_xfer);
	c->easy_setopt(h, CURLOPT_XFERINFODATA, (void *)rq);

	rc = c->easy_perform(h);
	c->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	/* nothing of this request may outlive the call in the handle */
	c->easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	c->easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	if (!r->error[0] && rc != CURLE_OK)
		snprintf(r->error, sizeof(r->error), "%s", c->easy_strerror(rc));
	if (rc == CURLE_OK)
		return SL_HTTP_DONE;
	if (rc == CURLE_ABORTED_BY_CALLBACK)
		return SL_HTTP_STOPPED;
	if (rc == CURLE_OPERATION_TIMEDOUT)
		return SL_HTTP_TIMEOUT;
	if (rc == CURLE_WRITE_ERROR && r->body.truncated)
		return SL_HTTP_TOO_BIG;
	return transient_curl(rc) ? SL_HTTP_TRANSIENT : SL_HTTP_FAILED;
}

int sl_http_status_transient(long status)
{
	return status == 429 || status == 408 || status >= 500;
}

int64_t sl_http_backoff_ms(int k, int64_t base_ms, int64_t max_ms, int64_t retry_after_ms,
			   double jitter)
{
	int64_t ceiling = base_ms, wait;

	if (retry_after_ms >= 0)
		return retry_after_ms < max_ms ? retry_after_ms : max_ms;
	for (int i = 0; i < k && ceiling < max_ms; i++)
		ceiling *= 2;
	if (ceiling > max_ms)
		ceiling = max_ms;
	if (!(jitter >= 0))     /* also NaN */
		jitter = 0;
	if (jitter > 1)
		jitter = 1;
	wait = (int64_t)((double)ceiling * jitter + 0.5);
	return wait < ceiling ? wait : ceiling;
}

void sl_http_sleep_ms(int64_t ms, const volatile int *stop)
{
	for (int64_t left = ms; left > 0 && !(stop && *stop); left -= 50) {
		int64_t slice = left < 50 ? left : 50;
		struct timespec ts = { 0, (long)slice * 1000000L };

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
}

void sl_http_redact(sl_buf *b, const char *secret)
{
	size_t sl = secret ? strlen(secret) : 0, at = 0;
	sl_buf out;
	const char *p;

	if (sl < 4 || !memmem(b->buf, b->len, secret, sl))
		return;
	sl_buf_init(&out, b->cap);
	while ((p = memmem(b->buf + at, b->len - at, secret, sl))) {
		sl_buf_add(&out, b->buf + at, (size_t)(p - b->buf) - at);
		sl_buf_adds(&out, SL_HTTP_REDACTED);
		at = (size_t)(p - b->buf) + sl;
	}
	sl_buf_add(&out, b->buf + at, b->len - at);
	out.truncated |= b->truncated;
	sl_buf_release(b);
	*b = out;
}
