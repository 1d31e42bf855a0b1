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

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CURLcode init_rc;

static void global_init(void)
{
	init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int sl_http_global_init(sl_err *err)
{
	pthread_once(&init_once, global_init);
	if (init_rc != CURLE_OK)
		return sl_err_set(err, SL_ERROR, "cannot initialise libcurl: %s",
				  curl_easy_strerror(init_rc));
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

/* Retry-After: delta-seconds or an HTTP date; retry-after-ms: milliseconds. */
static void parse_retry_after(exchange *x, int ms, const char *v, size_t len)
{
	char val[128];
	char *end;
	long long n;

	while (len && (*v == ' ' || *v == '\t'))
		v++, len--;
	while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
		len--;
	if (!len || len >= sizeof(val))
		return;
	memcpy(val, v, len);
	val[len] = '\0';
	errno = 0;
	n = strtoll(val, &end, 10);
	if (!*end && !errno && n >= 0 && end != val) {
		if (ms)
			x->r->retry_after_ms = n;
		else if (x->r->retry_after_ms < 0)   /* retry-after-ms is more precise */
			x->r->retry_after_ms = n > INT64_MAX / 1000 ? INT64_MAX : n * 1000;
		return;
	}
	if (!ms && x->r->retry_after_ms < 0) {
		time_t when = curl_getdate(val, NULL);

		if (when != (time_t)-1)
			x->r->retry_after_ms = when > x->now_s ? ((int64_t)when - x->now_s) * 1000 : 0;
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
	CURLcode rc;

	r->status = 0;
	sl_buf_reset(&r->body);
	r->body.truncated = 0;
	r->retry_after_ms = -1;
	r->error[0] = '\0';
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, rq->url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (rq->method)
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
	if (rq->body) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(rq->body));
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, rq->headers);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "sluice");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &r->body);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->error);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)rq->timeout_ms);
	if (rq->connect_timeout_ms > 0)
		curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)rq->connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_xfer);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)rq);

	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	/* nothing of this request may outlive the call in the handle */
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	if (!r->error[0] && rc != CURLE_OK)
		snprintf(r->error, sizeof(r->error), "%s", curl_easy_strerror(rc));
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
