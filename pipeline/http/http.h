/*
 * http.h - one HTTP request with libcurl, and the arithmetic of retrying
 * it, shared by the model providers (pipeline/generate/provider_http.c) and
 * the forge clients (pipeline/review/forge.c).
 *
 * sl_http_send performs one request on the caller's easy handle: http and
 * https only, the response body read into the caller's buffer (capped by
 * its sl_buf_init: a larger body aborts the transfer), Retry-After (seconds
 * or an HTTP date) and retry-after-ms read, every header also handed to an
 * optional callback, and a stop flag polled during the transfer; and
 * sl_http_redact for a secret quoted back in a reply.  When to
 * retry stays with the caller (each service has its own rules), from these
 * pieces: which outcomes may succeed when tried again
 * (sl_http_status_transient, SL_HTTP_TRANSIENT and SL_HTTP_TIMEOUT), the
 * wait before retry k (sl_http_backoff_ms), and a wait that a stop cuts
 * short (sl_http_sleep_ms).
 *
 * Threads: any number of sends at once, each on its own handle.
 *
 * Calling sequence: sl_http_global_init (once or more, from any thread),
 * then for each try sl_http_response_init ... sl_http_send ...
 * sl_http_response_release.
 */
#ifndef SL_HTTP_H
#define SL_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <curl/curl.h>

#include "common/buf.h"
#include "common/err.h"

typedef struct sl_http_request {
	const char *method;          /* NULL: POST when body is set, else GET */
	const char *url;             /* http:// or https:// */
	const char *body;            /* NUL-terminated; NULL: none */
	struct curl_slist *headers;  /* borrowed; NULL: none */
	int64_t timeout_ms;          /* the whole transfer; > 0 */
	int64_t connect_timeout_ms;  /* 0: curl's default */
	int64_t now_s;               /* wall clock for Retry-After dates; 0: time(NULL) */
	const volatile int *stop;    /* non-zero aborts the transfer; NULL: never */
	/* every response header: its name, and its value without the
	 * whitespace around it (nor the CRLF); may be NULL */
	void (*on_header)(void *ctx, const char *name, size_t name_len,
			  const char *value, size_t value_len);
	void *ctx;
} sl_http_request;

enum sl_http_result {
	SL_HTTP_DONE = 0,            /* a response arrived (any status) */
	SL_HTTP_STOPPED,             /* *stop became non-zero */
	SL_HTTP_TIMEOUT,             /* timeout_ms passed */
	SL_HTTP_TOO_BIG,             /* the body passed its buffer's cap */
	SL_HTTP_TRANSIENT,           /* cannot connect, reset, nothing or a part
				      * received: may work when tried again */
	SL_HTTP_FAILED,              /* any other transport failure */
};

typedef struct sl_http_response {
	long status;                 /* 0: no response */
	sl_buf body;
	int64_t retry_after_ms;      /* from Retry-After or retry-after-ms
				      * (the more precise wins); -1: not sent */
	char error[CURL_ERROR_SIZE]; /* libcurl's text for a transport failure */
} sl_http_response;

/* body capped at body_cap bytes (0: unbounded). */
void sl_http_response_init(sl_http_response *r, size_t body_cap);
void sl_http_response_release(sl_http_response *r);

/*
 * libcurl's functions as sluice calls them.  libcurl is loaded (dlopen) the
 * first time one is wanted, so a command that sends no HTTP (scope, the
 * gates) never maps it nor what it pulls in (gnutls, kerberos, ldap: 3.5
 * MB resident).  When it cannot be loaded every function fails as libcurl
 * does when it cannot start (no handle, no list, CURLE_FAILED_INIT), and
 * sl_http_global_init says why.
 */
typedef struct sl_curl_api {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *h, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	void (*easy_reset)(CURL *h);
	void (*easy_cleanup)(CURL *h);
	const char *(*easy_strerror)(CURLcode rc);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
	time_t (*getdate)(const char *date, const time_t *unused);
} sl_curl_api;

/* The functions, libcurl loaded if it was not (any thread). */
const sl_curl_api *sl_curl(void);

/* Load libcurl and curl_global_init, once per process; SL_ERROR if either failed. */
int sl_http_global_init(sl_err *err);

/*
 * One try of rq on h (reset first; the caller may reuse it for the next
 * try).  r is reset first and filled as far as the transfer got.  Returns
 * an enum sl_http_result.
 */
int sl_http_send(CURL *h, const sl_http_request *rq, sl_http_response *r);

/* 408, 429 and 5xx: an answer that may change when asked again. */
int sl_http_status_transient(long status);

/*
 * The wait before retry k (0-based): retry_after_ms when >= 0, else "full
 * jitter", jitter (in [0, 1]) times min(max_ms, base_ms * 2^k); always
 * capped at max_ms.  jitter 1 gives plain capped doubling.
 */
int64_t sl_http_backoff_ms(int k, int64_t base_ms, int64_t max_ms, int64_t retry_after_ms,
			   double jitter);

/* What a secret quoted back by an endpoint becomes before anything keeps it. */
#define SL_HTTP_REDACTED "[redacted]"

/*
 * Replace every occurrence of secret in b by SL_HTTP_REDACTED (b's cap
 * still holds).  A secret NULL or shorter than 4 bytes is left: it would
 * match ordinary text.
 */
void sl_http_redact(sl_buf *b, const char *secret);

/* Sleep ms, in slices of at most 50 ms, returning early once *stop is set. */
void sl_http_sleep_ms(int64_t ms, const volatile int *stop);

#endif
