/*
 * provider.c - model providers: OpenAI-compatible and Anthropic HTTP
 * endpoints, an external command, and replay from a JSON lines file.
 *
 * HTTP kinds: sl_provider_new reads the key from the environment once, keeps
 * it in the provider (wiped on free) and sends it only in a header; messages
 * that could quote a server's answer, and the recorded request body, have
 * the key masked.  The request body is built once per call with jansson
 * (text that is not valid UTF-8 is repaired, as JSON requires) and sent by
 * one try after another with the libcurl easy interface.  Handles come from a
 * locked pool in the provider, so concurrent calls never share one and
 * connections are still reused.  The response body is read into a capped
 * buffer, then parsed.  libcurl is initialised once per process, on first
 * use, behind a pthread_once; curl_global_cleanup is never called.
 *
 * Retries: each try is classified (done, retry, fail); the wait before a
 * retry comes from Retry-After or from capped exponential backoff with full
 * jitter, and goes through the hooks so tests see every wait without
 * sleeping.
 *
 * command: fork, then in the child a new process group, stdin/stdout/stderr
 * on a socket and two pipes, every other descriptor closed, and exec of
 * /bin/sh -c COMMAND with the host environment.  stdin is a socket so the
 * parent can write with MSG_NOSIGNAL: a command that exits without reading
 * cannot kill sluice with SIGPIPE.  The parent writes the flattened chat and
 * reads both outputs with poll() until they close or the deadline passes,
 * then waits for the child; at the deadline, and after every run, the whole
 * process group is killed (while the leader is an unreaped zombie, so the
 * group id cannot have been reused).
 *
 * replay: the file is read whole by sl_provider_new into an array sorted by
 * key (file order kept among equal keys); the k-th call with a key gets the
 * k-th line recorded for it, the last one again past the end.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/generate/provider.h"
#include "common/sha256.h"
#include "common/term.h"
#include "common/util.h"

extern char **environ;

#define REPLY_CAP (1024 * 1024)          /* the reply text */
#define BODY_CAP (8 * 1024 * 1024)       /* an HTTP response body */
#define STDERR_KEEP 8192                 /* tail of a command's stderr */
#define ERR_SNIPPET 300                  /* server text quoted in an error */
#define POOL_KEEP 64                     /* idle libcurl handles kept */

typedef struct replay_entry {
	char key[65];
	char *reply;
	size_t reply_len;
	int64_t tokens_in, tokens_out;
	int truncated, http_status;
	size_t line;                /* 1-based, for ordering and messages */
	size_t used;                /* first of a key group: replies handed out */
} replay_entry;

struct sl_provider {
	int kind;
	unsigned timeout_ms;
	/* http */
	char *url;                  /* base_url + "/chat/completions" or "/messages" */
	char *model;
	char *key;                  /* NULL: no key header */
	double temperature;
	int max_tokens;
	sl_strvec headers;          /* extra "Name: value" lines */
	char *response_format;      /* JSON text or NULL */
	char *anthropic_version;
	int max_retries;
	int64_t base_backoff_ms, max_backoff_ms;
	sl_provider_hooks hooks;
	int64_t deadline_ms;        /* sl_now_ms() after which nothing is sent; 0 = none */
	const volatile int *stop;   /* set: abort transfers and waits */
	pthread_mutex_t lock;       /* the pool and the replay cursors */
	CURL **pool;
	size_t npool, apool;
	/* command */
	char *command;
	/* replay */
	int replay_kind;
	char *replay_path;
	replay_entry *replay;
	size_t nreplay;
};

void sl_completion_init(sl_completion *c)
{
	sl_buf_init(&c->text, REPLY_CAP);
	sl_buf_init(&c->request, 0);
	c->tokens_in = c->tokens_out = -1;
	c->http_status = 0;
	c->latency_ms = 0;
	c->key[0] = '\0';
	c->retries = 0;
	memset(c->waits_ms, 0, sizeof(c->waits_ms));
	c->truncated = 0;
	c->transient = 0;
	c->finish_reason[0] = '\0';
}

void sl_completion_release(sl_completion *c)
{
	sl_buf_release(&c->text);
	sl_buf_release(&c->request);
	sl_completion_init(c);
}

static const char *const kind_names[] = {
	[SL_PROVIDER_RULES] = "rules",
	[SL_PROVIDER_OPENAI] = "openai",
	[SL_PROVIDER_COMMAND] = "command",
	[SL_PROVIDER_ANTHROPIC] = "anthropic",
	[SL_PROVIDER_REPLAY] = "replay",
};

int sl_provider_kind_parse(const char *name)
{
	for (size_t i = 1; name && i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (kind_names[i] && !strcmp(name, kind_names[i]))
			return (int)i;
	return 0;
}

const char *sl_provider_kind_name(int kind)
{
	if (kind > 0 && (size_t)kind < sizeof(kind_names) / sizeof(kind_names[0]) &&
	    kind_names[kind])
		return kind_names[kind];
	return "unknown";
}

void sl_provider_flatten_chat(sl_buf *out, const sl_chat_msg *msgs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *c = msgs[i].content ? msgs[i].content : "";
		size_t len = strlen(c);

		if (i)
			sl_buf_addch(out, '\n');
		sl_buf_adds(out, "### ");
		for (const char *r = msgs[i].role ? msgs[i].role : "user"; *r; r++)
			sl_buf_addch(out, *r >= 'a' && *r <= 'z' ? *r - 'a' + 'A' : *r);
		sl_buf_addch(out, '\n');
		sl_buf_add(out, c, len);
		if (!len || c[len - 1] != '\n')
			sl_buf_addch(out, '\n');
	}
}

/* ---- request keys ---------------------------------------------------- */

static void key_field(sl_sha256 *c, const char *s)
{
	char len[32];
	size_t n = s ? strlen(s) : 0;
	int k = snprintf(len, sizeof(len), "%zu:", n);

	sl_sha256_update(c, len, (size_t)k);
	sl_sha256_update(c, s ? s : "", n);
}

void sl_request_key(char out[65], int kind, const char *model,
		    const sl_chat_msg *msgs, size_t n)
{
	sl_sha256 c;
	unsigned char d[32];
	char count[32];

	sl_sha256_init(&c);
	key_field(&c, "sluice-request-1");
	key_field(&c, sl_provider_kind_name(kind));
	key_field(&c, model);
	snprintf(count, sizeof(count), "%zu", n);
	key_field(&c, count);
	for (size_t i = 0; i < n; i++) {
		key_field(&c, msgs[i].role ? msgs[i].role : "user");
		key_field(&c, msgs[i].content);
	}
	sl_sha256_final(&c, d);
	sl_sha256_tohex(out, d);
}

/* ---- text helpers ---------------------------------------------------- */

static void wipe(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
}

/* Replace every occurrence of key in b by "***" (keys shorter than 4 are left). */
static void mask_key(sl_buf *b, const char *key)
{
	size_t kl = key ? strlen(key) : 0;
	char *p;

	if (kl < 4)
		return;
	while ((p = memmem(b->buf, b->len, key, kl))) {
		memcpy(p, "***", 3);
		memmove(p + 3, p + kl, b->len - (size_t)(p - b->buf) - kl + 1);
		b->len -= kl - 3;
	}
}

/* A JSON string of s[0..n), with invalid UTF-8 bytes replaced by U+FFFD. */
static json_t *json_textn(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	sl_buf b = SL_BUF_INIT;
	json_t *j;

	for (size_t i = 0; i < n; ) {
		size_t l = sl_utf8_seq(u + i, n - i);

		if (l) {
			sl_buf_add(&b, u + i, l);
			i += l;
		} else {
			sl_buf_adds(&b, "\xEF\xBF\xBD");
			i++;
		}
	}
	j = json_stringn(b.buf, b.len);
	sl_buf_release(&b);
	if (!j)
		BUG("json_stringn rejected repaired text");
	return j;
}

static json_t *json_text(const char *s)
{
	return json_textn(s, s ? strlen(s) : 0);
}

/* One line of server text for an error message: no control characters, capped. */
static void add_snippet(sl_buf *out, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && i < ERR_SNIPPET; i++) {
		unsigned char c = (unsigned char)s[i];

		sl_buf_addch(out, c < 0x20 || c == 0x7F ? ' ' : c);
	}
	if (i < len)
		sl_buf_adds(out, "...");
}

/* "3 s" or "250 ms" */
static void add_duration(sl_buf *out, unsigned ms)
{
	if (ms % 1000)
		sl_buf_addf(out, "%u ms", ms);
	else
		sl_buf_addf(out, "%u s", ms / 1000);
}

/* ---- request bodies -------------------------------------------------- */

static char *dump(json_t *root)
{
	char *body = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(12));

	json_decref(root);
	if (!body)
		BUG("json_dumps failed");
	return body;
}

static char *body_openai(const sl_provider *p, const sl_chat_msg *msgs, size_t n)
{
	json_t *root = json_object(), *arr = json_array();

	json_object_set_new(root, "model", json_text(p->model));
	for (size_t i = 0; i < n; i++) {
		json_t *m = json_object();

		json_object_set_new(m, "role", json_text(msgs[i].role ? msgs[i].role : "user"));
		json_object_set_new(m, "content", json_text(msgs[i].content));
		json_array_append_new(arr, m);
	}
	json_object_set_new(root, "messages", arr);
	if (p->temperature >= 0)
		json_object_set_new(root, "temperature", json_real(p->temperature));
	if (p->max_tokens > 0)
		json_object_set_new(root, "max_tokens", json_integer(p->max_tokens));
	if (p->response_format) {
		json_t *rf = json_loads(p->response_format, 0, NULL);

		if (!rf)
			BUG("response_format was validated");
		json_object_set_new(root, "response_format", rf);
	}
	return dump(root);
}

static char *body_anthropic(const sl_provider *p, const sl_chat_msg *msgs, size_t n)
{
	json_t *root = json_object(), *arr = json_array();
	sl_buf system = SL_BUF_INIT;
	int nsys = 0;

	json_object_set_new(root, "model", json_text(p->model));
	json_object_set_new(root, "max_tokens", json_integer(p->max_tokens > 0 ? p->max_tokens : 4096));
	for (size_t i = 0; i < n; i++) {
		const char *role = msgs[i].role ? msgs[i].role : "user";
		json_t *m;

		if (!strcmp(role, "system")) {
			if (nsys++)
				sl_buf_adds(&system, "\n\n");
			sl_buf_adds(&system, msgs[i].content ? msgs[i].content : "");
			continue;
		}
		m = json_object();
		json_object_set_new(m, "role", json_text(role));
		json_object_set_new(m, "content", json_text(msgs[i].content));
		json_array_append_new(arr, m);
	}
	if (nsys)
		json_object_set_new(root, "system", json_textn(system.buf, system.len));
	json_object_set_new(root, "messages", arr);
	if (p->temperature >= 0)
		json_object_set_new(root, "temperature", json_real(p->temperature));
	sl_buf_release(&system);
	return dump(root);
}

/* ---- reply parsing --------------------------------------------------- */

static int64_t json_int_or(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

static void set_finish(sl_completion *out, json_t *fr)
{
	if (json_is_string(fr))
		snprintf(out->finish_reason, sizeof(out->finish_reason), "%s", json_string_value(fr));
}

/* The body as a JSON object, or SL_ERROR with where it broke. */
static json_t *load_object(const sl_buf *body, sl_err *err)
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

static int parse_openai(sl_completion *out, const sl_buf *body, sl_err *err)
{
	json_t *root, *choices, *choice, *content, *usage, *fr;
	int ret = SL_ERROR;

	if (!(root = load_object(body, err)))
		return SL_ERROR;
	choices = json_object_get(root, "choices");
	if (!json_is_array(choices) || !json_array_size(choices)) {
		sl_err_set(err, SL_ERROR, "the model's reply has no choices");
		goto done;
	}
	choice = json_array_get(choices, 0);
	fr = json_object_get(choice, "finish_reason");
	set_finish(out, fr);
	content = json_object_get(json_object_get(choice, "message"), "content");
	if (!json_is_string(content)) {
		sl_err_set(err, SL_ERROR, "the model's reply has no message content%s%s%s",
			   json_is_string(fr) ? " (finish_reason '" : "",
			   json_is_string(fr) ? json_string_value(fr) : "",
			   json_is_string(fr) ? "')" : "");
		goto done;
	}
	sl_buf_add(&out->text, json_string_value(content), json_string_length(content));
	out->truncated = !strcmp(out->finish_reason, "length");
	usage = json_object_get(root, "usage");
	out->tokens_in = json_int_or(usage, "prompt_tokens");
	out->tokens_out = json_int_or(usage, "completion_tokens");
	ret = SL_OK;
done:
	json_decref(root);
	return ret;
}

static int parse_anthropic(sl_completion *out, const sl_buf *body, sl_err *err)
{
	json_t *root, *content, *block, *usage;
	size_t i;
	int ret = SL_ERROR, ntext = 0;

	if (!(root = load_object(body, err)))
		return SL_ERROR;
	set_finish(out, json_object_get(root, "stop_reason"));
	content = json_object_get(root, "content");
	if (!json_is_array(content)) {
		sl_err_set(err, SL_ERROR, "the model's reply has no content");
		goto done;
	}
	json_array_foreach(content, i, block) {
		json_t *type = json_object_get(block, "type"), *text = json_object_get(block, "text");

		if (json_is_string(type) && !strcmp(json_string_value(type), "text") &&
		    json_is_string(text)) {
			sl_buf_add(&out->text, json_string_value(text), json_string_length(text));
			ntext++;
		}
	}
	if (!ntext) {
		sl_err_set(err, SL_ERROR, "the model's reply has no text content%s%s%s",
			   *out->finish_reason ? " (stop_reason '" : "", out->finish_reason,
			   *out->finish_reason ? "')" : "");
		goto done;
	}
	out->truncated = !strcmp(out->finish_reason, "max_tokens");
	usage = json_object_get(root, "usage");
	out->tokens_in = json_int_or(usage, "input_tokens");
	out->tokens_out = json_int_or(usage, "output_tokens");
	ret = SL_OK;
done:
	json_decref(root);
	return ret;
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
		add_snippet(msg, json_string_value(m), json_string_length(m));
	else if (body->len)
		add_snippet(msg, body->buf, body->len);
	else
		sl_buf_adds(msg, "(empty body)");
	json_decref(root);
}

/* ---- hooks ----------------------------------------------------------- */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void default_sleep(void *ctx, int64_t ms)
{
	(void)ctx;
	if (ms > 0)
		sleep_ms((long)ms);
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
		add_duration(msg, (unsigned)budget);
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
		if ((p->kind == SL_PROVIDER_ANTHROPIC ? parse_anthropic : parse_openai)(out, &t->body, perr)) {
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
		wipe(s->data);
	curl_slist_free_all(headers);
	wipe(keyh.buf);
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

static int complete_http(sl_provider *p, const char *req, sl_completion *out, sl_err *err)
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
			mask_key(&msg, p->key);
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

/* ---- replay ---------------------------------------------------------- */

static int replay_cmp(const void *a, const void *b)
{
	const replay_entry *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int is_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[i] == '\0';
}

static int replay_load(sl_provider *p, const char *path, sl_err *err)
{
	sl_buf file = SL_BUF_INIT;
	size_t alloc = 0, line = 0;
	int ret = SL_EINPUT;

	if (sl_read_file(&file, path, 0, err)) {
		sl_err_prefix(err, "replay file: ");
		goto done;
	}
	for (const char *s = file.buf, *end = file.buf + file.len; s < end; ) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *le = nl ? nl : end;
		json_error_t jerr;
		json_t *root, *key, *reply, *tr;
		replay_entry *e;

		line++;
		while (s < le && (*s == ' ' || *s == '\t' || *s == '\r'))
			s++;
		if (s == le) {
			s = le + 1;
			continue;
		}
		root = json_loadb(s, (size_t)(le - s), JSON_ALLOW_NUL, &jerr);
		s = le + 1;
		if (!json_is_object(root)) {
			sl_err_set(err, SL_EINPUT, "replay file '%s' line %zu: %s", path, line,
				   root ? "not a JSON object" : jerr.text);
			json_decref(root);
			goto done;
		}
		key = json_object_get(root, "key");
		reply = json_object_get(root, "reply");
		if (!json_is_string(key) || !is_hex64(json_string_value(key)) ||
		    !json_is_string(reply)) {
			sl_err_set(err, SL_EINPUT, "replay file '%s' line %zu: %s", path, line,
				   !json_is_string(reply) ? "no \"reply\" string" :
				   "\"key\" is not 64 lowercase hex digits");
			json_decref(root);
			goto done;
		}
		SL_ALLOC_GROW(p->replay, p->nreplay + 1, alloc);
		e = &p->replay[p->nreplay++];
		memset(e, 0, sizeof(*e));
		memcpy(e->key, json_string_value(key), 65);
		e->reply_len = json_string_length(reply);
		e->reply = sl_xstrndup(json_string_value(reply), e->reply_len);
		e->tokens_in = json_int_or(root, "tokens_in");
		e->tokens_out = json_int_or(root, "tokens_out");
		tr = json_object_get(root, "truncated");
		e->truncated = json_is_true(tr);
		e->http_status = json_is_integer(json_object_get(root, "http_status")) ?
			(int)json_integer_value(json_object_get(root, "http_status")) : 0;
		e->line = line;
		json_decref(root);
	}
	if (p->nreplay)
		qsort(p->replay, p->nreplay, sizeof(*p->replay), replay_cmp);
	ret = SL_OK;
done:
	sl_buf_release(&file);
	return ret;
}

/* Index of the first entry recorded for key, or (size_t)-1. */
static size_t replay_find(const sl_provider *p, const char *key)
{
	size_t lo = 0, hi = p->nreplay;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(p->replay[mid].key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nreplay && !strcmp(p->replay[lo].key, key) ? lo : (size_t)-1;
}

static int complete_replay(sl_provider *p, size_t first, sl_completion *out)
{
	size_t count, pick;
	const replay_entry *e;

	for (count = 1; first + count < p->nreplay &&
	     !strcmp(p->replay[first + count].key, p->replay[first].key); count++)
		;
	pthread_mutex_lock(&p->lock);
	pick = p->replay[first].used < count ? p->replay[first].used++ : count - 1;
	pthread_mutex_unlock(&p->lock);
	e = &p->replay[first + pick];
	sl_buf_add(&out->text, e->reply, e->reply_len);
	out->tokens_in = e->tokens_in;
	out->tokens_out = e->tokens_out;
	out->truncated = e->truncated;
	out->http_status = e->http_status;
	return SL_OK;
}

static pthread_mutex_t record_lock = PTHREAD_MUTEX_INITIALIZER;

int sl_replay_record(const char *path, const char *key, const sl_completion *c, sl_err *err)
{
	json_t *root = json_object();
	char *line = NULL;
	size_t len;
	int fd = -1, ret = SL_ERROR;

	if (!key || !is_hex64(key)) {
		ret = sl_err_set(err, SL_EINPUT, "cannot record a reply without a request key");
		goto done;
	}
	json_object_set_new(root, "key", json_string(key));
	json_object_set_new(root, "reply", json_textn(c->text.buf, c->text.len));
	json_object_set_new(root, "tokens_in", json_integer(c->tokens_in));
	json_object_set_new(root, "tokens_out", json_integer(c->tokens_out));
	if (c->truncated)
		json_object_set_new(root, "truncated", json_true());
	if (c->http_status)
		json_object_set_new(root, "http_status", json_integer(c->http_status));
	line = json_dumps(root, JSON_COMPACT);
	if (!line)
		BUG("json_dumps failed");
	len = strlen(line);
	line = sl_xrealloc(line, len + 2);
	line[len++] = '\n';
	line[len] = '\0';
	pthread_mutex_lock(&record_lock);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || sl_write_all(fd, line, len)) {
		sl_err_set(err, SL_ERROR, "cannot append to replay file '%s': %s", path,
			   strerror(errno));
	} else {
		ret = SL_OK;
	}
	if (fd >= 0 && close(fd) && !ret)
		ret = sl_err_set(err, SL_ERROR, "cannot write replay file '%s': %s", path,
				 strerror(errno));
	pthread_mutex_unlock(&record_lock);
done:
	json_decref(root);
	free(line);
	return ret;
}

/* ---- command --------------------------------------------------------- */

/* Move fd out of 0..2 so the child's dup2 calls cannot clobber it. */
static int above_stdio(int fd)
{
	int nfd;

	if (fd < 0 || fd > 2)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Keep the last STDERR_KEEP bytes of stderr. */
static void keep_tail(sl_buf *b, const char *data, size_t n)
{
	if (n >= STDERR_KEEP) {
		sl_buf_reset(b);
		sl_buf_add(b, data + n - STDERR_KEEP, STDERR_KEEP);
		return;
	}
	if (b->len + n > STDERR_KEEP) {
		size_t drop = b->len + n - STDERR_KEEP;

		memmove(b->buf, b->buf + drop, b->len - drop);
		sl_buf_setlen(b, b->len - drop);
	}
	sl_buf_add(b, data, n);
}

static void last_line(sl_buf *out, sl_buf *text)
{
	const char *nl;

	sl_buf_rtrim(text);
	nl = strrchr(text->buf, '\n');
	nl = nl ? nl + 1 : text->buf;
	add_snippet(out, nl, strlen(nl));
}

static int complete_command(sl_provider *p, const sl_chat_msg *msgs, size_t n,
			    sl_completion *out, sl_err *err)
{
	int sv[2] = { -1, -1 }, po[2] = { -1, -1 }, pe[2] = { -1, -1 };
	int ret = SL_ERROR, status = 0, timed_out = 0, killed = 0;
	char *argv[] = { "/bin/sh", "-c", p->command, NULL };
	sl_buf input = SL_BUF_INIT, errtail = SL_BUF_INIT, msg = SL_BUF_INIT;
	int64_t deadline = sl_now_ms() + (int64_t)p->timeout_ms;
	size_t woff = 0;
	pid_t pid = -1;
	char chunk[65536];

	sl_provider_flatten_chat(&input, msgs, n);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) ||
	    pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
		sl_err_set(err, SL_ERROR, "cannot create pipes for the command: %s", strerror(errno));
		goto done;
	}
	sv[1] = above_stdio(sv[1]);
	po[1] = above_stdio(po[1]);
	pe[1] = above_stdio(pe[1]);
	if (sv[1] < 0 || po[1] < 0 || pe[1] < 0) {
		sl_err_set(err, SL_ERROR, "cannot create pipes for the command: %s", strerror(errno));
		goto done;
	}

	pid = fork();
	if (pid < 0) {
		sl_err_set(err, SL_ERROR, "cannot run the command: fork: %s", strerror(errno));
		goto done;
	}
	if (!pid) {
		/* the child: async-signal-safe calls only */
		struct sigaction sa;
		sigset_t none;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(SIGPIPE, &sa, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		if (dup2(sv[1], 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
			_exit(127);
		close_range(3, ~0U, 0);
		execve("/bin/sh", argv, environ);
		_exit(127);
	}
	setpgid(pid, pid);       /* also here: no window where the group does not exist */
	close_fd(&sv[1]);
	close_fd(&po[1]);
	close_fd(&pe[1]);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	fcntl(po[0], F_SETFL, O_NONBLOCK);
	fcntl(pe[0], F_SETFL, O_NONBLOCK);
	if (!input.len)
		close_fd(&sv[0]);

	while (po[0] >= 0 || pe[0] >= 0) {
		struct pollfd fds[3];
		int nf = 0, r;
		int64_t left = deadline - sl_now_ms();

		if (left <= 0) {
			timed_out = 1;
			break;
		}
		if (sv[0] >= 0)
			fds[nf++] = (struct pollfd){ sv[0], POLLOUT, 0 };
		if (po[0] >= 0)
			fds[nf++] = (struct pollfd){ po[0], POLLIN, 0 };
		if (pe[0] >= 0)
			fds[nf++] = (struct pollfd){ pe[0], POLLIN, 0 };
		r = poll(fds, (nfds_t)nf, left > 1000 ? 1000 : (int)left);
		if (r < 0 && errno != EINTR) {
			sl_err_set(err, SL_ERROR, "poll failed: %s", strerror(errno));
			killpg(pid, SIGKILL);
			killed = 1;
			break;
		}
		for (int i = 0; r > 0 && i < nf; i++) {
			int fd = fds[i].fd;
			ssize_t k;

			if (!fds[i].revents)
				continue;
			if (fd == sv[0]) {
				k = send(fd, input.buf + woff, input.len - woff,
					 MSG_NOSIGNAL | MSG_DONTWAIT);
				if (k > 0)
					woff += (size_t)k;
				/* EPIPE and friends: the command stopped reading */
				if (woff == input.len || (k < 0 && errno != EAGAIN && errno != EINTR) ||
				    (fds[i].revents & (POLLERR | POLLHUP)))
					close_fd(&sv[0]);
				continue;
			}
			k = read(fd, chunk, sizeof(chunk));
			if (k < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (k <= 0) {
				close_fd(fd == po[0] ? &po[0] : &pe[0]);
				continue;
			}
			if (fd == po[0])
				sl_buf_add(&out->text, chunk, (size_t)k);   /* past the cap: drained */
			else
				keep_tail(&errtail, chunk, (size_t)k);
		}
	}
	if (timed_out && !killed) {
		killpg(pid, SIGKILL);
		killed = 1;
	}

	/* wait for the exit without reaping, so the group id stays ours */
	for (long nap = 1; ; nap = nap < 20 ? nap * 2 : 20) {
		siginfo_t si;
		int rc;

		memset(&si, 0, sizeof(si));
		rc = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
		if (!rc && si.si_pid == pid)
			break;
		if (rc && errno == ECHILD) {
			sl_err_set(err, SL_ERROR, "lost the command's process %ld", (long)pid);
			pid = -1;
			goto done;
		}
		if (!killed && sl_now_ms() >= deadline) {
			killpg(pid, SIGKILL);
			killed = timed_out = 1;
		}
		sleep_ms(nap);
	}
	killpg(pid, SIGKILL);      /* stragglers: background children of the command */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	pid = -1;

	out->http_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (timed_out) {
		sl_buf_adds(&msg, "the command timed out after ");
		add_duration(&msg, p->timeout_ms);
		sl_err_set(err, SL_ERROR, "%s and was killed", msg.buf);
		goto done;
	}
	if (WIFSIGNALED(status))
		sl_buf_addf(&msg, "the command was killed by signal %d", WTERMSIG(status));
	else if (WEXITSTATUS(status))
		sl_buf_addf(&msg, "the command exited with status %d", WEXITSTATUS(status));
	if (msg.len) {
		if (errtail.len) {
			sl_buf_adds(&msg, ": ");
			last_line(&msg, &errtail);
		}
		sl_err_set(err, SL_ERROR, "%s", msg.buf);
		goto done;
	}
	ret = SL_OK;
done:
	if (pid > 0) {
		killpg(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	close_fd(&sv[0]);
	close_fd(&sv[1]);
	close_fd(&po[0]);
	close_fd(&po[1]);
	close_fd(&pe[0]);
	close_fd(&pe[1]);
	sl_buf_release(&input);
	sl_buf_release(&errtail);
	sl_buf_release(&msg);
	return ret;
}

/* ---- lifecycle ------------------------------------------------------- */

static int check_header(const char *h, sl_err *err)
{
	const char *colon = strchr(h, ':');

	if (!colon || colon == h || strpbrk(h, "\r\n"))
		return sl_err_set(err, SL_EINPUT, "header '%.80s' is not a \"Name: value\" line", h);
	for (const char *c = h; c < colon; c++)
		if (*c <= ' ' || *c >= 0x7F)
			return sl_err_set(err, SL_EINPUT, "header name in '%.80s' is not a token", h);
	return SL_OK;
}

static int new_http(sl_provider *p, const sl_provider_opts *opts, sl_err *err)
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

int sl_provider_new(sl_provider **out, const sl_provider_opts *opts, sl_err *err)
{
	sl_provider *p = NULL;
	int ret = SL_EINPUT;

	*out = NULL;
	if (!opts)
		return sl_err_set(err, SL_EINPUT, "no provider options");
	p = sl_xcalloc(1, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->kind = opts->kind;
	p->timeout_ms = opts->timeout_ms ? opts->timeout_ms :
		(opts->timeout_s ? (opts->timeout_s < 4000000 ? opts->timeout_s : 4000000) : 300) * 1000;
	p->model = sl_xstrdup(opts->model ? opts->model : "");
	p->temperature = opts->temperature;
	p->max_tokens = opts->max_tokens;
	p->anthropic_version = sl_xstrdup(opts->anthropic_version && *opts->anthropic_version ?
					  opts->anthropic_version : "2023-06-01");
	p->max_retries = opts->max_retries < 0 ? 4 : opts->max_retries;
	if (p->max_retries > SL_PROVIDER_MAX_RETRIES)
		p->max_retries = SL_PROVIDER_MAX_RETRIES;
	p->base_backoff_ms = opts->base_backoff_ms ? opts->base_backoff_ms : 1000;
	p->max_backoff_ms = opts->max_backoff_ms ? opts->max_backoff_ms : 30000;
	p->hooks = opts->hooks;
	p->deadline_ms = opts->deadline_ms;
	p->stop = opts->stop;
	for (const char *const *h = opts->headers; h && *h; h++) {
		if ((ret = check_header(*h, err)))
			goto done;
		sl_strvec_push(&p->headers, *h);
	}
	ret = SL_EINPUT;
	if (opts->response_format) {
		json_t *rf = json_loads(opts->response_format, 0, NULL);
		int ok = json_is_object(rf);

		json_decref(rf);
		if (!ok) {
			sl_err_set(err, SL_EINPUT, "response_format is not a JSON object");
			goto done;
		}
		p->response_format = sl_xstrdup(opts->response_format);
	}
	switch (opts->kind) {
	case SL_PROVIDER_OPENAI:
	case SL_PROVIDER_ANTHROPIC:
		if (!opts->model || !*opts->model) {
			sl_err_set(err, SL_EINPUT, "the %s provider needs a model",
				   sl_provider_kind_name(opts->kind));
			goto done;
		}
		if ((ret = new_http(p, opts, err)))
			goto done;
		break;
	case SL_PROVIDER_COMMAND:
		if (!opts->command || !*opts->command) {
			sl_err_set(err, SL_EINPUT, "the command provider needs a command");
			goto done;
		}
		p->command = sl_xstrdup(opts->command);
		break;
	case SL_PROVIDER_REPLAY:
		p->replay_kind = opts->replay_kind;
		if (p->replay_kind && p->replay_kind != SL_PROVIDER_OPENAI &&
		    p->replay_kind != SL_PROVIDER_ANTHROPIC && p->replay_kind != SL_PROVIDER_COMMAND) {
			sl_err_set(err, SL_EINPUT, "cannot replay replies of provider kind %d",
				   p->replay_kind);
			goto done;
		}
		if (!opts->replay_path || !*opts->replay_path) {
			sl_err_set(err, SL_EINPUT, "the replay provider needs a replay file");
			goto done;
		}
		p->replay_path = sl_xstrdup(opts->replay_path);
		if ((ret = replay_load(p, opts->replay_path, err)))
			goto done;
		break;
	case SL_PROVIDER_RULES:
		sl_err_set(err, SL_EINPUT, "the rules provider does not call a model");
		goto done;
	default:
		sl_err_set(err, SL_EINPUT, "unknown provider kind %d", opts->kind);
		goto done;
	}
	*out = p;
	p = NULL;
	ret = SL_OK;
done:
	sl_provider_free(p);
	return ret;
}

/*
 * The kind whose request this call is: itself, or for replay the recorded
 * kind; with none named, the first of openai, anthropic, command whose key
 * has a recorded reply.  Sets out->key; *first is the replay entry, if any.
 */
static int request_kind(sl_provider *p, const sl_chat_msg *msgs, size_t n,
			sl_completion *out, size_t *first, sl_err *err)
{
	static const int any[] = { SL_PROVIDER_OPENAI, SL_PROVIDER_ANTHROPIC, SL_PROVIDER_COMMAND };
	char keys[3][65];

	*first = (size_t)-1;
	if (p->kind != SL_PROVIDER_REPLAY || p->replay_kind) {
		int kind = p->kind == SL_PROVIDER_REPLAY ? p->replay_kind : p->kind;

		sl_request_key(out->key, kind, p->model, msgs, n);
		if (p->kind == SL_PROVIDER_REPLAY && (*first = replay_find(p, out->key)) == (size_t)-1)
			return sl_err_set(err, SL_EINPUT, "no recorded reply for request key '%s' in '%s'",
					  out->key, p->replay_path);
		return kind;
	}
	for (size_t i = 0; i < 3; i++) {
		sl_request_key(keys[i], any[i], p->model, msgs, n);
		if ((*first = replay_find(p, keys[i])) != (size_t)-1) {
			memcpy(out->key, keys[i], sizeof(keys[i]));
			return any[i];
		}
	}
	memcpy(out->key, keys[0], sizeof(keys[0]));
	return sl_err_set(err, SL_EINPUT, "no recorded reply for request key '%s' (openai), "
			  "'%s' (anthropic) or '%s' (command) in '%s'",
			  keys[0], keys[1], keys[2], p->replay_path);
}

int sl_provider_complete(sl_provider *p, const sl_chat_msg *msgs, size_t n,
			 sl_completion *out, sl_err *err)
{
	int64_t t0 = sl_now_ms();
	char *body = NULL;
	size_t first;
	int kind, ret;

	sl_buf_reset(&out->text);
	sl_buf_reset(&out->request);
	out->text.truncated = 0;
	out->tokens_in = out->tokens_out = -1;
	out->http_status = 0;
	out->retries = 0;
	memset(out->waits_ms, 0, sizeof(out->waits_ms));
	out->truncated = 0;
	out->transient = 0;
	out->finish_reason[0] = '\0';
	kind = request_kind(p, msgs, n, out, &first, err);
	if (kind == SL_PROVIDER_OPENAI || kind == SL_PROVIDER_ANTHROPIC) {
		body = kind == SL_PROVIDER_ANTHROPIC ? body_anthropic(p, msgs, n) :
			body_openai(p, msgs, n);
		sl_buf_adds(&out->request, body);
	} else {
		sl_provider_flatten_chat(&out->request, msgs, n);
	}
	mask_key(&out->request, p->key);

	if (kind < 0)
		ret = kind;
	else if (p->kind == SL_PROVIDER_REPLAY)
		ret = complete_replay(p, first, out);
	else if (p->kind == SL_PROVIDER_COMMAND)
		ret = complete_command(p, msgs, n, out, err);
	else    /* the exact bytes: the recorded request may have had the key masked */
		ret = complete_http(p, body, out, err);
	out->latency_ms = sl_now_ms() - t0;
	free(body);
	return ret;
}

void sl_provider_free(sl_provider *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->npool; i++)
		curl_easy_cleanup(p->pool[i]);
	free(p->pool);
	pthread_mutex_destroy(&p->lock);
	wipe(p->key);
	free(p->key);
	free(p->url);
	free(p->model);
	free(p->command);
	sl_strvec_release(&p->headers);
	free(p->response_format);
	free(p->anthropic_version);
	for (size_t i = 0; i < p->nreplay; i++)
		free(p->replay[i].reply);
	free(p->replay);
	free(p->replay_path);
	free(p);
}
