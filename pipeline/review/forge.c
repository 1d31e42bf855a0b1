/*
 * forge.c - the front of the forge clients (forge.h): the kind table, and
 * what every kind shares.
 *
 * One request function does authentication, retries, rate limits and the
 * Link header, each try sent by pipeline/http (sl_http_send); the calls
 * above it have one shape for every forge and ask the kind
 * (forge_github.c, forge_gitlab.c; forge_internal.h) for its paths and
 * fields.  Pagination URLs are followed only when they stay under the
 * configured API URL, so the token never goes to another host.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <curl/curl.h>
#include <jansson.h>

#include "pipeline/review/forge_internal.h"
#include "common/util.h"
#include "common/caps.h"

/* The kinds of forge, by enum sl_forge_kind. */
static const sl_forge_ops *const kinds[] = {
	[SL_FORGE_GITHUB] = &sl_forge_github,
	[SL_FORGE_GITLAB] = &sl_forge_gitlab,
};

typedef sl_forge_reply reply;

void sl_forge_reply_init(reply *r)
{
	sl_http_response_init(&r->http, SL_CAP_FORGE_BODY);
	r->remaining = r->reset = -1;
	r->next = NULL;
}

void sl_forge_reply_release(reply *r)
{
	sl_http_response_release(&r->http);
	free(r->next);
	r->next = NULL;
	r->remaining = r->reset = -1;
}

void sl_forge_pr_release(sl_forge_pr *pr)
{
	free(pr->url);
	free(pr->merge_sha);
	free(pr->close_comment);
	memset(pr, 0, sizeof(*pr));
}

void sl_forge_pr_set(sl_forge_pr *out, int64_t number, const char *url, int state,
		     const char *sha)
{
	sl_forge_pr_release(out);
	out->number = number;
	out->url = sl_xstrdup_or_null(url);
	out->state = state;
	out->merge_sha = state == SL_PR_MERGED && sha ? sl_xstrdup(sha) : NULL;
}

static char *url_encode(const char *s)
{
	sl_buf b = SL_BUF_INIT;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
			sl_buf_addch(&b, c);
		else
			sl_buf_addf(&b, "%%%02X", c);
	}
	return sl_buf_detach(&b, NULL);
}

int sl_forge_new(sl_forge **out, const sl_forge_opts *opts, sl_err *err)
{
	sl_forge *f;
	const sl_forge_ops *kind;
	const char *slash;
	size_t n;
	int ret;

	*out = NULL;
	if ((unsigned)opts->kind >= sizeof(kinds) / sizeof(kinds[0]) || !kinds[opts->kind])
		return sl_err_set(err, SL_EINPUT, "no forge configured (review: forge)");
	kind = kinds[opts->kind];
	if (!opts->token || !*opts->token)
		return sl_err_set(err, SL_EINPUT, "no token for the forge");
	if (kind->check && (ret = kind->check(opts, err)))
		return ret;
	f = sl_xcalloc(1, sizeof(*f));
	f->o = *opts;
	f->kind = kind;
	f->api = sl_xstrdup(opts->api_url ? opts->api_url : kind->api);
	n = strlen(f->api);
	while (n && f->api[n - 1] == '/')
		f->api[--n] = '\0';
	f->last_write_ms = -1;
	f->project_enc = url_encode(opts->project);
	slash = strchr(opts->project, '/');
	f->owner = slash ? sl_xstrndup(opts->project, (size_t)(slash - opts->project)) :
		sl_xstrdup(opts->project);
	*out = f;
	return SL_OK;
}

void sl_forge_free(sl_forge *f)
{
	if (!f)
		return;
	free(f->api);
	free(f->project_enc);
	free(f->owner);
	free(f);
}

static int64_t header_int(const char *v, size_t len)
{
	char tmp[32];

	while (len && isspace((unsigned char)*v))
		v++, len--;
	if (!len || len >= sizeof(tmp) || !isdigit((unsigned char)*v))
		return -1;
	memcpy(tmp, v, len);
	tmp[len] = '\0';
	return strtoll(tmp, NULL, 10);
}

/* The URL of rel="next" in a Link header value. */
static char *link_next(const char *v, size_t len)
{
	char *s = sl_xstrndup(v, len), *p = s, *res = NULL;

	while ((p = strchr(p, '<'))) {
		char *end = strchr(p, '>');

		if (!end)
			break;
		if (strstr(end, "rel=\"next\"") && (!strchr(end, ',') ||
						    strstr(end, "rel=\"next\"") < strchr(end, ','))) {
			res = sl_xstrndup(p + 1, (size_t)(end - p - 1));
			break;
		}
		p = end + 1;
	}
	free(s);
	return res;
}

/* The headers sl_http_send does not read itself: rate limits and Link. */
static void on_header(void *ctx, const char *name, size_t name_len, const char *v, size_t vlen)
{
	reply *r = ctx;

#define IS(h) (name_len == strlen(h) && !strncasecmp(name, h, name_len))
	if (IS("x-ratelimit-remaining") || IS("ratelimit-remaining"))
		r->remaining = header_int(v, vlen);
	else if (IS("x-ratelimit-reset") || IS("ratelimit-reset"))
		r->reset = header_int(v, vlen);
	else if (IS("link")) {
		free(r->next);
		r->next = link_next(v, vlen);
	}
#undef IS
}

/* A 403 or 429 that asks to wait: *wait_s how long. */
static int rate_limited(const reply *r, unsigned *wait_s)
{
	if (r->http.status != 429 && r->http.status != 403)
		return 0;
	if (r->http.retry_after_ms >= 0) {
		/* rounded up without overflow: Retry-After may saturate at INT64_MAX ms */
		int64_t ms = r->http.retry_after_ms, s = ms / 1000 + (ms % 1000 != 0);

		*wait_s = (unsigned)(s > 86400 ? 86400 : s);
		return 1;
	}
	if (r->remaining == 0 && r->reset > 0) {
		int64_t d = r->reset - (int64_t)time(NULL);

		*wait_s = (unsigned)(d < 1 ? 1 : d > 86400 ? 86400 : d);
		return 1;
	}
	if (r->http.status == 429 || strstr(r->http.body.buf, "secondary rate limit") ||
	    strstr(r->http.body.buf, "rate limit exceeded")) {
		*wait_s = 60;
		return 1;
	}
	return 0;
}

/* The service's error message from a reply body, made printable and short. */
static void api_message(char *out, size_t size, const reply *r)
{
	json_t *j = json_loads(r->http.body.buf, 0, NULL);
	const char *m = j ? json_string_value(json_object_get(j, "message")) : NULL;
	size_t i, o = 0;

	if (!m && j)
		m = json_string_value(json_object_get(j, "error"));
	for (i = 0; m && m[i] && o + 1 < size && o < 160; i++)
		out[o++] = (unsigned char)m[i] < 0x20 || m[i] == 0x7f ? ' ' : m[i];
	out[o] = '\0';
	json_decref(j);
}

/* The wait before retry k: 1, 2, 4, 8, 16, then 30 seconds. */
static unsigned backoff_s(unsigned k)
{
	return (unsigned)(sl_http_backoff_ms((int)(k < 8 ? k : 8), 1000, 30000, -1, 1.0) / 1000);
}

/* The URL of path: under the API URL, or a full URL that must start with it (a Link). */
static char *request_url(const sl_forge *f, const char *path, sl_err *err)
{
	size_t n = strlen(f->api);

	if (strncmp(path, "http", 4))
		return sl_path_join(f->api, path[0] == '/' ? path + 1 : path);
	if (strncmp(path, f->api, n) || (path[n] && path[n] != '/' && path[n] != '?')) {
		sl_err_set(err, SL_ERROR, "the forge sent a link outside '%s'", f->api);
		return NULL;
	}
	return sl_xstrdup(path);
}

/* The service's headers, the token's included (free with free_headers). */
static struct curl_slist *request_headers(const sl_forge *f, int has_body)
{
	struct curl_slist *hdr = NULL;
	char auth[512];

	snprintf(auth, sizeof(auth), f->kind->auth, f->o.token);
	hdr = sl_curl()->slist_append(hdr, auth);
	explicit_bzero(auth, sizeof(auth));
	for (const char *const *h = f->kind->headers; *h; h++)
		hdr = sl_curl()->slist_append(hdr, *h);
	if (has_body)
		hdr = sl_curl()->slist_append(hdr, "Content-Type: application/json");
	return hdr;
}

/* Free a header list without leaving the token in freed memory. */
static void free_headers(struct curl_slist *hdr)
{
	for (struct curl_slist *s = hdr; s; s = s->next)
		explicit_bzero(s->data, strlen(s->data));
	sl_curl()->slist_free_all(hdr);
}

/* Wait wait_s for why, or SL_EBUDGET when that is longer than the client accepts. */
static int wait_or_refuse(sl_forge *f, const char *method, const char *path, const char *why,
			  unsigned wait_s, sl_err *err)
{
	if (wait_s > f->o.max_wait_s)
		return sl_err_set(err, SL_EBUDGET, "%s %s: %s %u s (more than %u s); try later",
				  method, path, !strcmp(why, "quota spent") ?
				  "the API quota resets in" : "the forge asks to wait", wait_s,
				  f->o.max_wait_s);
	if (f->o.on_wait)
		f->o.on_wait(f->o.ctx, why, wait_s);
	sl_http_sleep_ms((int64_t)wait_s * 1000, NULL);
	return SL_OK;
}

/*
 * Whether a try's outcome (hr, r) is worth another: the reason, with the
 * wait in *wait_s, or NULL when it is final (a reply to hand back, or a
 * transport failure in err: *failed set).
 */
static const char *retry_reason(const reply *r, int hr, unsigned tries, unsigned *wait_s,
				int *failed)
{
	*failed = 0;
	if (hr == SL_HTTP_TRANSIENT || hr == SL_HTTP_TIMEOUT) {
		*wait_s = backoff_s(tries);
		return "connection error";
	}
	if (hr != SL_HTTP_DONE) {
		*failed = 1;
		return NULL;
	}
	if (rate_limited(r, wait_s))
		return "rate limited";
	if (sl_http_status_transient(r->http.status)) {
		*wait_s = backoff_s(tries);
		return "server error";
	}
	return NULL;
}

int64_t sl_forge_write_wait_ms(int64_t last_ms, int64_t now_ms, unsigned interval_ms)
{
	int64_t w;

	if (last_ms < 0 || !interval_ms)
		return 0;
	w = last_ms + (int64_t)interval_ms - now_ms;
	return w < 0 ? 0 : w > (int64_t)interval_ms ? (int64_t)interval_ms : w;
}

/* Space a mutating request (every try of it) from the one before. */
static void space_write(sl_forge *f, const char *method)
{
	if (!strcmp(method, "GET"))
		return;
	sl_http_sleep_ms(sl_forge_write_wait_ms(f->last_write_ms, sl_now_ms(),
						f->o.write_interval_ms), NULL);
	f->last_write_ms = sl_now_ms();
}

/*
 * One request with retries.  path is under the API URL, or a full URL that
 * must start with it (a Link).  On return r holds the final reply.
 */
static int call(sl_forge *f, const char *method, const char *path, json_t *body, reply *r,
		sl_err *err)
{
	CURL *h = NULL;
	char *url, *data = NULL;
	sl_http_request rq = { .method = method, .on_header = on_header, .ctx = r };
	unsigned tries = 0;
	int ret = SL_ERROR;

	if (!(rq.url = url = request_url(f, path, err)))
		return SL_ERROR;
	if (body)
		rq.body = data = json_dumps(body, JSON_COMPACT);
	rq.headers = request_headers(f, body != NULL);
	rq.timeout_ms = (int64_t)f->o.timeout_s * 1000;
	if ((ret = sl_http_global_init(err)))
		goto done;
	ret = SL_ERROR;
	if (!(h = sl_curl()->easy_init()))
		goto done;
	for (;;) {
		int hr, failed;
		unsigned wait_s = 0;
		const char *why;
		int64_t now = (int64_t)time(NULL);

		/* the last reply said the quota is spent: wait for its reset, don't ask */
		if (f->quota_reset > now &&
		    (ret = wait_or_refuse(f, method, path, "quota spent",
					  (unsigned)(f->quota_reset - now), err)))
			goto done;
		f->quota_reset = 0;

		sl_forge_reply_release(r);
		space_write(f, method);
		hr = sl_http_send(h, &rq, &r->http);
		/* a reply that quotes the token back: no message or record made from it shows it */
		sl_http_redact(&r->http.body, f->o.token);
		if (hr == SL_HTTP_DONE && r->remaining == 0 && r->reset > 0)
			f->quota_reset = r->reset;
		why = retry_reason(r, hr, tries, &wait_s, &failed);
		if (failed) {
			ret = sl_err_set(err, SL_ERROR, "%s %s: %s", method, path,
					 hr == SL_HTTP_TOO_BIG ? "the reply is larger than 8 MiB" :
					 r->http.error);
			goto done;
		}
		if (!why)
			break;
		if (tries++ >= f->o.max_retries) {
			if (hr != SL_HTTP_DONE)
				ret = sl_err_set(err, SL_ERROR, "%s %s: %s", method, path, r->http.error);
			else
				ret = sl_err_set(err, SL_ERROR, "%s %s: HTTP %ld (%s) after %u retries",
						 method, path, r->http.status, why, f->o.max_retries);
			goto done;
		}
		if ((ret = wait_or_refuse(f, method, path, why, wait_s, err)))
			goto done;
		f->quota_reset = 0;
	}
	ret = SL_OK;
done:
	sl_curl()->easy_cleanup(h);
	free_headers(rq.headers);
	free(data);
	free(url);
	return ret;
}

int sl_forge_call_json(sl_forge *f, const char *method, const char *path, json_t *body,
		     json_t **json_out, reply *r, sl_err *err)
{
	char msg[200];
	int ret;

	*json_out = NULL;
	if ((ret = call(f, method, path, body, r, err)))
		return ret;
	if (r->http.status < 200 || r->http.status > 299) {
		api_message(msg, sizeof(msg), r);
		return sl_err_set(err, r->http.status == 401 || r->http.status == 403 ? SL_EREFUSED :
				  r->http.status == 404 ? SL_ENOTFOUND : SL_ERROR,
				  "%s %s: HTTP %ld%s%s", method, path, r->http.status, msg[0] ? ": " : "",
				  msg);
	}
	if (!(*json_out = json_loads(r->http.body.buf, 0, NULL)))
		return sl_err_set(err, SL_ERROR, "%s %s: the reply is not JSON", method, path);
	return SL_OK;
}

int sl_forge_call_list(sl_forge *f, const char *path, json_t **all, sl_err *err)
{
	reply r;
	char *next = sl_xstrdup(path);
	int ret = SL_OK;

	sl_forge_reply_init(&r);
	*all = json_array();
	for (int page = 0; next && page < SL_FORGE_MAX_PAGES; page++) {
		json_t *j;

		ret = sl_forge_call_json(f, "GET", next, NULL, &j, &r, err);
		free(next);
		next = NULL;
		if (ret)
			break;
		if (!json_is_array(j)) {
			json_decref(j);
			ret = sl_err_set(err, SL_ERROR, "GET %s: expected a list", path);
			break;
		}
		json_array_extend(*all, j);
		json_decref(j);
		next = r.next;
		r.next = NULL;
	}
	free(next);
	sl_forge_reply_release(&r);
	if (ret) {
		json_decref(*all);
		*all = NULL;
	}
	return ret;
}

int sl_forge_branch_exists(sl_forge *f, const char *branch, int *exists_out, sl_err *err)
{
	reply r;
	sl_buf path = SL_BUF_INIT;
	char *enc = url_encode(branch);
	char msg[200];
	int ret;

	sl_forge_reply_init(&r);
	f->kind->branch_path(&path, f, enc);
	if (!(ret = call(f, "GET", path.buf, NULL, &r, err))) {
		*exists_out = r.http.status >= 200 && r.http.status < 300;
		if (!*exists_out && r.http.status != 404) {
			api_message(msg, sizeof(msg), &r);
			ret = sl_err_set(err, r.http.status == 401 ? SL_EREFUSED : SL_ERROR,
					 "GET %s: HTTP %ld%s%s", path.buf, r.http.status,
					 msg[0] ? ": " : "", msg);
		}
	}
	free(enc);
	sl_forge_reply_release(&r);
	sl_buf_release(&path);
	return ret;
}

int sl_forge_find(sl_forge *f, const char *branch, sl_forge_pr *out, sl_err *err)
{
	sl_buf path = SL_BUF_INIT;
	char *enc = url_encode(branch);
	json_t *all = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	f->kind->find_path(&path, f, enc);
	if (!(ret = sl_forge_call_list(f, path.buf, &all, err))) {
		/* the newest request of this head: an open one if any */
		json_t *best = NULL, *e;
		size_t i;

		json_array_foreach(all, i, e) {
			int open = f->kind->pr_state(e) == SL_PR_OPEN;

			if (!best || open)
				best = e;
			if (open)
				break;
		}
		if (best)
			f->kind->fill_pr(best, out);
	}
	json_decref(all);
	free(enc);
	sl_buf_release(&path);
	return ret;
}

int sl_forge_open(sl_forge *f, const char *branch, const char *base, const char *title,
		  const char *body, const sl_strvec *labels, int draft, sl_forge_pr *out,
		  sl_err *err)
{
	reply r;
	sl_buf path = SL_BUF_INIT;
	json_t *req = json_object(), *j = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	sl_forge_reply_init(&r);
	f->kind->open_request(&path, req, f, branch, base, title, body, labels, draft);
	if ((ret = call(f, "POST", path.buf, req, &r, err)))
		goto done;
	if (r.http.status == f->kind->open_duplicate) {
		/* a request for this branch exists already: use it */
		if ((ret = sl_forge_find(f, branch, out, err)))
			goto done;
		if (!out->number)
			ret = sl_err_set(err, SL_ERROR, "POST %s: HTTP %ld, but no request for '%s' "
					 "was found", path.buf, r.http.status, branch);
		goto done;
	}
	if (r.http.status != 201 && r.http.status != 200) {
		char msg[200];

		api_message(msg, sizeof(msg), &r);
		ret = sl_err_set(err, r.http.status == 401 || r.http.status == 403 ? SL_EREFUSED : SL_ERROR,
				 "POST %s: HTTP %ld%s%s", path.buf, r.http.status, msg[0] ? ": " : "",
				 msg);
		goto done;
	}
	if (!(j = json_loads(r.http.body.buf, 0, NULL))) {
		ret = sl_err_set(err, SL_ERROR, "POST %s: the reply is not JSON", path.buf);
		goto done;
	}
	f->kind->fill_pr(j, out);
	if (f->kind->after_open)
		ret = f->kind->after_open(f, labels, out, err);
done:
	json_decref(j);
	json_decref(req);
	sl_forge_reply_release(&r);
	sl_buf_release(&path);
	return ret;
}

/* PATCH/PUT req to request number; the reply is checked and dropped. */
static int update_request(sl_forge *f, int64_t number, json_t *req, sl_err *err)
{
	sl_forge_reply r;
	sl_buf path = SL_BUF_INIT;
	json_t *j = NULL;
	int ret;

	sl_forge_reply_init(&r);
	f->kind->pr_path(&path, f, number);
	ret = sl_forge_call_json(f, f->kind->update_method, path.buf, req, &j, &r, err);
	json_decref(j);
	sl_forge_reply_release(&r);
	sl_buf_release(&path);
	return ret;
}

int sl_forge_update(sl_forge *f, int64_t number, const char *title, const char *body,
		    sl_err *err)
{
	json_t *req = json_object();
	int ret;

	json_object_set_new(req, "title", json_string(title));
	json_object_set_new(req, f->kind->body_key, json_string(body));
	ret = update_request(f, number, req, err);
	json_decref(req);
	return ret;
}

int sl_forge_close(sl_forge *f, int64_t number, const char *comment, sl_err *err)
{
	sl_forge_reply r;
	sl_buf path = SL_BUF_INIT;
	json_t *req = NULL, *j = NULL;
	int ret = SL_OK;

	sl_forge_reply_init(&r);
	if (comment) {
		f->kind->comment_path(&path, f, number);
		req = json_pack("{s:s}", "body", comment);
		ret = sl_forge_call_json(f, "POST", path.buf, req, &j, &r, err);
		json_decref(req);
	}
	if (!ret) {
		req = json_pack("{s:s}", f->kind->close_key, f->kind->close_value);
		ret = update_request(f, number, req, err);
		json_decref(req);
	}
	json_decref(j);
	sl_forge_reply_release(&r);
	sl_buf_release(&path);
	return ret;
}

int sl_forge_get(sl_forge *f, int64_t number, sl_forge_pr *out, sl_err *err)
{
	reply r;
	sl_buf path = SL_BUF_INIT;
	json_t *j = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	sl_forge_reply_init(&r);
	f->kind->pr_path(&path, f, number);
	if (!(ret = sl_forge_call_json(f, "GET", path.buf, NULL, &j, &r, err)))
		f->kind->fill_pr(j, out);
	json_decref(j);
	sl_forge_reply_release(&r);
	sl_buf_release(&path);
	return ret;
}

int sl_forge_pr_feedback(sl_forge *f, sl_forge_pr *pr, sl_err *err)
{
	free(pr->close_comment);
	pr->close_comment = NULL;
	pr->review_comments = 0;
	return f->kind->pr_feedback(f, pr, err);
}
