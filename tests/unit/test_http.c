/*
 * test_http.c - pipeline/http: the retry arithmetic, redaction, and one request sent
 * to tests/helper/stub-model over real HTTP on 127.0.0.1 (status, body,
 * Retry-After in its three forms, other headers, the body cap, a stop, a
 * timeout, a refused connection).
 */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pipeline/http/http.h"
#include "stub.h"
#include "common/util.h"
#include "unit.h"

static void test_backoff(void)
{
	/* jitter 1: plain capped doubling */
	CHECK_INT(sl_http_backoff_ms(0, 1000, 30000, -1, 1.0), 1000);
	CHECK_INT(sl_http_backoff_ms(1, 1000, 30000, -1, 1.0), 2000);
	CHECK_INT(sl_http_backoff_ms(4, 1000, 30000, -1, 1.0), 16000);
	CHECK_INT(sl_http_backoff_ms(5, 1000, 30000, -1, 1.0), 30000);
	CHECK_INT(sl_http_backoff_ms(60, 1000, 30000, -1, 1.0), 30000);
	/* full jitter: a share of the ceiling; out-of-range jitter is clamped */
	CHECK_INT(sl_http_backoff_ms(2, 1000, 30000, -1, 0.5), 2000);
	CHECK_INT(sl_http_backoff_ms(2, 1000, 30000, -1, 0.0), 0);
	CHECK_INT(sl_http_backoff_ms(2, 1000, 30000, -1, -3.0), 0);
	CHECK_INT(sl_http_backoff_ms(2, 1000, 30000, -1, NAN), 0);
	CHECK_INT(sl_http_backoff_ms(2, 1000, 30000, -1, 7.0), 4000);
	/* the server's word wins, capped */
	CHECK_INT(sl_http_backoff_ms(3, 1000, 30000, 2500, 0.1), 2500);
	CHECK_INT(sl_http_backoff_ms(0, 1000, 30000, 0, 1.0), 0);
	CHECK_INT(sl_http_backoff_ms(0, 1000, 30000, 90000, 1.0), 30000);
}

static void test_redact(void)
{
	sl_buf b;

	sl_buf_init(&b, 0);
	sl_buf_adds(&b, "k=sk-123456;sk-123456sk-123456 end");
	sl_http_redact(&b, "sk-123456");
	CHECK_STR(b.buf, "k=[redacted];[redacted][redacted] end");
	CHECK_INT(b.len, strlen(b.buf));
	sl_http_redact(&b, NULL);
	sl_http_redact(&b, "end");     /* too short to be a secret */
	CHECK_STR(b.buf, "k=[redacted];[redacted][redacted] end");
	sl_buf_release(&b);
	/* a short secret: the marker is longer, the cap still holds */
	sl_buf_init(&b, 16);
	sl_buf_adds(&b, "abcd abcd abcd");
	sl_http_redact(&b, "abcd");
	CHECK_INT(b.len, 16);
	CHECK(b.truncated);
	CHECK(!strstr(b.buf, "abcd"));
	sl_buf_release(&b);
}

static void test_status_transient(void)
{
	CHECK(sl_http_status_transient(408));
	CHECK(sl_http_status_transient(429));
	CHECK(sl_http_status_transient(500));
	CHECK(sl_http_status_transient(503));
	CHECK(!sl_http_status_transient(200));
	CHECK(!sl_http_status_transient(400));
	CHECK(!sl_http_status_transient(403));
	CHECK(!sl_http_status_transient(404));
}

typedef struct seen {
	char remaining[32];
	int headers;
} seen;

static void on_header(void *ctx, const char *name, size_t name_len, const char *value,
		      size_t value_len)
{
	seen *s = ctx;

	s->headers++;
	if (name_len == 21 && !strncasecmp(name, "x-ratelimit-remaining", 21))
		snprintf(s->remaining, sizeof(s->remaining), "%.*s", (int)value_len, value);
}

/* One try of body to the stub's URL; the sl_http_result. */
static int send_one(const stub *s, const char *body, struct curl_slist *headers,
		    int64_t timeout_ms, const volatile int *stop, sl_http_response *r, seen *sn)
{
	sl_http_request rq = { .url = s->base_url, .body = body, .headers = headers,
			       .timeout_ms = timeout_ms, .stop = stop, .now_s = 1445412480,
			       .on_header = on_header, .ctx = sn };
	CURL *h = curl_easy_init();
	sl_err err = SL_ERR_INIT;
	int ret;

	CHECK_INT(sl_http_global_init(&err), 0);
	CHECK(h != NULL);
	if (!h)
		return -1;
	ret = sl_http_send(h, &rq, r);
	curl_easy_cleanup(h);
	return ret;
}

static void test_send_status_body_headers(void)
{
	stub s;
	sl_http_response r;
	seen sn = { "", 0 };
	struct curl_slist *hdr = curl_slist_append(NULL, "X-Test: yes");
	char *req, *req_headers;

	if (!stub_start(&s))
		return;
	stub_put(&s, "reply-1.status", "429");
	stub_put(&s, "reply-1.headers", "Retry-After: 2\nX-RateLimit-Remaining: 0\n");
	stub_put(&s, "reply-1.json", "{\"error\":\"slow down\"}");
	sl_http_response_init(&r, 0);
	CHECK_INT(send_one(&s, "{\"q\":1}", hdr, 10000, NULL, &r, &sn), SL_HTTP_DONE);
	CHECK_INT(r.status, 429);
	CHECK_STR(r.body.buf, "{\"error\":\"slow down\"}");
	CHECK_INT(r.retry_after_ms, 2000);
	CHECK_STR(sn.remaining, "0");
	CHECK(sn.headers >= 3);
	req = stub_get(&s, "request-1.json");
	req_headers = stub_get(&s, "request-1.headers");
	CHECK_STR(req, "{\"q\":1}");
	CHECK(strstr(req_headers, "POST /v1/ ") != NULL);
	CHECK(strstr(req_headers, "X-Test: yes") != NULL);
	free(req);
	free(req_headers);
	sl_http_response_release(&r);
	curl_slist_free_all(hdr);
	stub_stop(&s);
}

static void test_send_retry_after_forms(void)
{
	stub s;
	sl_http_response r;
	seen sn = { "", 0 };

	if (!stub_start(&s))
		return;
	/* retry-after-ms is more precise than Retry-After, in either order */
	stub_put(&s, "reply-1.status", "503");
	stub_put(&s, "reply-1.headers", "retry-after-ms: 1500\nRetry-After: 9\n");
	stub_put(&s, "reply-2.status", "503");
	stub_put(&s, "reply-2.headers", "Retry-After: 9\nretry-after-ms: 1500\n");
	/* an HTTP date: 7 s after the request's clock (1445412480) */
	stub_put(&s, "reply-3.status", "429");
	stub_put(&s, "reply-3.headers", "Retry-After: Wed, 21 Oct 2015 07:28:07 GMT\n");
	/* nonsense is no Retry-After at all */
	stub_put(&s, "reply-4.status", "429");
	stub_put(&s, "reply-4.headers", "Retry-After: soon\n");
	sl_http_response_init(&r, 0);
	CHECK_INT(send_one(&s, "{}", NULL, 10000, NULL, &r, &sn), SL_HTTP_DONE);
	CHECK_INT(r.retry_after_ms, 1500);
	CHECK_INT(send_one(&s, "{}", NULL, 10000, NULL, &r, &sn), SL_HTTP_DONE);
	CHECK_INT(r.retry_after_ms, 1500);
	CHECK_INT(send_one(&s, "{}", NULL, 10000, NULL, &r, &sn), SL_HTTP_DONE);
	CHECK_INT(r.retry_after_ms, 7000);
	CHECK_INT(send_one(&s, "{}", NULL, 10000, NULL, &r, &sn), SL_HTTP_DONE);
	CHECK_INT(r.status, 429);
	CHECK_INT(r.retry_after_ms, -1);
	sl_http_response_release(&r);
	stub_stop(&s);
}

/* A wait too long to count saturates (the caller's cap refuses it); it never wraps. */
static void test_send_retry_after_huge(void)
{
	static const char *const hdr[] = {
		"Retry-After: 99999999999999999999\n",
		"Retry-After: 9223372036854775807\n",
		"Retry-After: 9223372036854776\n",
		"retry-after-ms: 99999999999999999999\n",
		"Retry-After: Fri, 31 Dec 99999999 23:59:59 GMT\n",
	};
	const size_t n = sizeof(hdr) / sizeof(*hdr);
	stub s;
	sl_http_response r;
	seen sn = { "", 0 };
	char name[32];

	if (!stub_start(&s))
		return;
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "reply-%zu.status", i + 1);
		stub_put(&s, name, "429");
		snprintf(name, sizeof(name), "reply-%zu.headers", i + 1);
		stub_put(&s, name, hdr[i]);
	}
	sl_http_response_init(&r, 0);
	for (size_t i = 0; i + 1 < n; i++) {
		CHECK_INT(send_one(&s, "{}", NULL, 10000, NULL, &r, &sn), SL_HTTP_DONE);
		CHECK_INT(r.retry_after_ms, INT64_MAX);
	}
	/* a date in the year 99999999: far, but it counts in milliseconds */
	CHECK_INT(send_one(&s, "{}", NULL, 10000, NULL, &r, &sn), SL_HTTP_DONE);
	CHECK_INT(r.retry_after_ms, ((int64_t)3155633032780799 - 1445412480) * 1000);
	CHECK_INT(sl_http_backoff_ms(0, 1000, 30000, INT64_MAX, 1.0), 30000);
	sl_http_response_release(&r);
	stub_stop(&s);
}

static void test_send_body_cap(void)
{
	stub s;
	sl_http_response r;
	seen sn = { "", 0 };

	if (!stub_start(&s))
		return;
	stub_put(&s, "reply-1.json", "{\"text\":\"more than sixteen bytes\"}");
	sl_http_response_init(&r, 16);
	CHECK_INT(send_one(&s, "{}", NULL, 10000, NULL, &r, &sn), SL_HTTP_TOO_BIG);
	CHECK(r.body.len <= 16);
	sl_http_response_release(&r);
	stub_stop(&s);
}

static void test_send_stop_and_timeout(void)
{
	stub s;
	sl_http_response r;
	seen sn = { "", 0 };
	volatile int stop = 1;

	if (!stub_start(&s))
		return;
	stub_put(&s, "reply-1.fault", "hang");
	sl_http_response_init(&r, 0);
	/* a stop already set: the transfer is aborted however long the timeout */
	CHECK_INT(send_one(&s, "{}", NULL, 600000, &stop, &r, &sn), SL_HTTP_STOPPED);
	/* a server that never answers: the timeout */
	CHECK_INT(send_one(&s, "{}", NULL, 200, NULL, &r, &sn), SL_HTTP_TIMEOUT);
	CHECK(r.error[0] != '\0');
	sl_http_response_release(&r);
	stub_stop(&s);
}

static void test_send_refused(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	sl_http_response r;
	seen sn = { "", 0 };
	stub s;

	/* a port of 127.0.0.1 that was just free: bound, never listened on */
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(fd >= 0);
	CHECK_INT(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_INT(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	memset(&s, 0, sizeof(s));
	snprintf(s.base_url, sizeof(s.base_url), "http://127.0.0.1:%d/v1/", ntohs(a.sin_port));
	sl_http_response_init(&r, 0);
	CHECK_INT(send_one(&s, "{}", NULL, 10000, NULL, &r, &sn), SL_HTTP_TRANSIENT);
	CHECK_INT(r.status, 0);
	CHECK(r.error[0] != '\0');
	sl_http_response_release(&r);
	close(fd);
}

int main(void)
{
	RUN(test_backoff);
	RUN(test_status_transient);
	RUN(test_redact);
	RUN(test_send_status_body_headers);
	RUN(test_send_retry_after_forms);
	RUN(test_send_retry_after_huge);
	RUN(test_send_body_cap);
	RUN(test_send_stop_and_timeout);
	RUN(test_send_refused);
	return unit_done();
}
