/*
 * forge.c - the GitHub and GitLab REST clients behind forge.h.
 *
 * One request function does authentication, retries, rate limits and the
 * Link header, each try sent by pipeline/http (sl_http_send); the calls
 * above it know each service's paths and fields.
 * Pagination URLs are followed only when they stay under the configured
 * API URL, so the token never goes to another host.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <curl/curl.h>
#include <jansson.h>

#include "pipeline/http/http.h"
#include "pipeline/review/forge.h"
#include "common/util.h"
#include "common/caps.h"

struct sl_forge {
	sl_forge_opts o;
	char *api;                  /* without a trailing slash */
	char *project_enc;          /* GitLab: the project id or path, URL-encoded */
	char *owner;                /* GitHub: the part of project before '/' */
	int64_t quota_reset;        /* the quota is spent until this epoch second; 0 = not */
};

typedef struct reply {
	sl_http_response http;      /* status, body, Retry-After */
	int64_t remaining, reset;   /* x-ratelimit-*; -1 = not sent */
	char *next;                 /* Link rel="next" */
} reply;

static void reply_init(reply *r)
{
	sl_http_response_init(&r->http, SL_CAP_FORGE_BODY);
	r->remaining = r->reset = -1;
	r->next = NULL;
}

static void reply_release(reply *r)
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
	const char *dflt = opts->kind == SL_FORGE_GITLAB ? "https://gitlab.com/api/v4" :
		"https://api.github.com";
	const char *slash;
	size_t n;

	*out = NULL;
	if (opts->kind != SL_FORGE_GITHUB && opts->kind != SL_FORGE_GITLAB)
		return sl_err_set(err, SL_EINPUT, "no forge configured (review: forge)");
	if (!opts->token || !*opts->token)
		return sl_err_set(err, SL_EINPUT, "no token for the forge");
	if (opts->kind == SL_FORGE_GITHUB && (!(slash = strchr(opts->project, '/')) ||
					       slash == opts->project || !slash[1]))
		return sl_err_set(err, SL_EINPUT, "GitHub project '%s' is not OWNER/NAME",
				  opts->project);
	f = sl_xcalloc(1, sizeof(*f));
	f->o = *opts;
	f->api = sl_xstrdup(opts->api_url ? opts->api_url : dflt);
	n = strlen(f->api);
	while (n && f->api[n - 1] == '/')
		f->api[--n] = '\0';
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
		int64_t s = (r->http.retry_after_ms + 999) / 1000;

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

	if (f->o.kind == SL_FORGE_GITLAB)
		snprintf(auth, sizeof(auth), "PRIVATE-TOKEN: %s", f->o.token);
	else
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", f->o.token);
	hdr = sl_curl()->slist_append(hdr, auth);
	explicit_bzero(auth, sizeof(auth));
	hdr = sl_curl()->slist_append(hdr, f->o.kind == SL_FORGE_GITLAB ? "Accept: application/json" :
				"Accept: application/vnd.github+json");
	if (f->o.kind == SL_FORGE_GITHUB)
		hdr = sl_curl()->slist_append(hdr, "X-GitHub-Api-Version: 2022-11-28");
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

		reply_release(r);
		hr = sl_http_send(h, &rq, &r->http);
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

/* A request that must answer 2xx with JSON; *json_out owned by the caller. */
static int call_json(sl_forge *f, const char *method, const char *path, json_t *body,
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

/* Every element of a paginated list, in order, appended to *all (a new array). */
static int call_list(sl_forge *f, const char *path, json_t **all, sl_err *err)
{
	reply r;
	char *next = sl_xstrdup(path);
	int ret = SL_OK;

	reply_init(&r);
	*all = json_array();
	for (int page = 0; next && page < SL_FORGE_MAX_PAGES; page++) {
		json_t *j;

		ret = call_json(f, "GET", next, NULL, &j, &r, err);
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
	reply_release(&r);
	if (ret) {
		json_decref(*all);
		*all = NULL;
	}
	return ret;
}

/*
 * A request's state from the forge's JSON: GitHub says "open" or "closed"
 * (merged when "merged" or "merged_at" says so), GitLab "opened", "merged",
 * "closed" or "locked".
 */
static int pr_state_of(const sl_forge *f, json_t *j)
{
	const char *state = json_string_value(json_object_get(j, "state"));

	if (f->o.kind == SL_FORGE_GITLAB)
		return state && !strcmp(state, "merged") ? SL_PR_MERGED :
			state && !strcmp(state, "opened") ? SL_PR_OPEN : SL_PR_CLOSED;
	if (json_is_true(json_object_get(j, "merged")) ||
	    json_string_value(json_object_get(j, "merged_at")))
		return SL_PR_MERGED;
	return state && !strcmp(state, "open") ? SL_PR_OPEN : SL_PR_CLOSED;
}

static void fill_pr(sl_forge *f, json_t *j, sl_forge_pr *out)
{
	const char *url = json_string_value(json_object_get(j, f->o.kind == SL_FORGE_GITLAB ?
							     "web_url" : "html_url"));
	const char *sha = json_string_value(json_object_get(j, "merge_commit_sha"));

	sl_forge_pr_release(out);
	out->number = json_integer_value(json_object_get(j, f->o.kind == SL_FORGE_GITLAB ?
							 "iid" : "number"));
	out->url = sl_xstrdup_or_null(url);
	if (f->o.kind == SL_FORGE_GITLAB && !sha)
		sha = json_string_value(json_object_get(j, "squash_commit_sha"));
	out->state = pr_state_of(f, j);
	out->merge_sha = out->state == SL_PR_MERGED && sha ? sl_xstrdup(sha) : NULL;
}

int sl_forge_branch_exists(sl_forge *f, const char *branch, int *exists_out, sl_err *err)
{
	reply r;
	sl_buf path = SL_BUF_INIT;
	char *enc = url_encode(branch);
	char msg[200];
	int ret;

	reply_init(&r);
	if (f->o.kind == SL_FORGE_GITLAB)
		sl_buf_addf(&path, "projects/%s/repository/branches/%s", f->project_enc, enc);
	else
		sl_buf_addf(&path, "repos/%s/branches/%s", f->o.project, enc);
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
	reply_release(&r);
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
	if (f->o.kind == SL_FORGE_GITLAB)
		sl_buf_addf(&path, "projects/%s/merge_requests?state=all&source_branch=%s",
			    f->project_enc, enc);
	else
		sl_buf_addf(&path, "repos/%s/pulls?state=all&head=%s:%s", f->o.project, f->owner,
			    enc);
	if (!(ret = call_list(f, path.buf, &all, err))) {
		/* the newest request of this head: an open one if any */
		json_t *best = NULL, *e;
		size_t i;

		json_array_foreach(all, i, e) {
			int open = pr_state_of(f, e) == SL_PR_OPEN;

			if (!best || open)
				best = e;
			if (open)
				break;
		}
		if (best)
			fill_pr(f, best, out);
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
	json_t *req = json_object(), *j = NULL, *lab = json_array();
	int ret, gl = f->o.kind == SL_FORGE_GITLAB;

	memset(out, 0, sizeof(*out));
	reply_init(&r);
	for (size_t i = 0; i < labels->n; i++)
		json_array_append_new(lab, json_string(labels->v[i]));
	if (gl) {
		sl_buf labs = SL_BUF_INIT, t = SL_BUF_INIT;

		for (size_t i = 0; i < labels->n; i++)
			sl_buf_addf(&labs, "%s%s", i ? "," : "", labels->v[i]);
		sl_buf_addf(&t, "%s%s", draft ? "Draft: " : "", title);
		sl_buf_addf(&path, "projects/%s/merge_requests", f->project_enc);
		json_object_set_new(req, "source_branch", json_string(branch));
		json_object_set_new(req, "target_branch", json_string(base));
		json_object_set_new(req, "title", json_string(t.buf));
		json_object_set_new(req, "description", json_string(body));
		if (labels->n)
			json_object_set_new(req, "labels", json_string(labs.buf));
		sl_buf_release(&labs);
		sl_buf_release(&t);
	} else {
		sl_buf_addf(&path, "repos/%s/pulls", f->o.project);
		json_object_set_new(req, "title", json_string(title));
		json_object_set_new(req, "head", json_string(branch));
		json_object_set_new(req, "base", json_string(base));
		json_object_set_new(req, "body", json_string(body));
		json_object_set_new(req, "draft", json_boolean(draft));
	}
	if ((ret = call(f, "POST", path.buf, req, &r, err)))
		goto done;
	if ((!gl && r.http.status == 422) || (gl && r.http.status == 409)) {
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
	fill_pr(f, j, out);
	if (!gl && labels->n) {
		json_t *lreq = json_pack("{s:O}", "labels", lab), *lj = NULL;

		sl_buf_reset(&path);
		sl_buf_addf(&path, "repos/%s/issues/%lld/labels", f->o.project,
			    (long long)out->number);
		ret = call_json(f, "POST", path.buf, lreq, &lj, &r, err);
		json_decref(lj);
		json_decref(lreq);
	}
done:
	json_decref(j);
	json_decref(req);
	json_decref(lab);
	reply_release(&r);
	sl_buf_release(&path);
	return ret;
}

int sl_forge_update(sl_forge *f, int64_t number, const char *title, const char *body,
		    sl_err *err)
{
	reply r;
	sl_buf path = SL_BUF_INIT;
	json_t *req = json_object(), *j = NULL;
	int ret;

	reply_init(&r);
	json_object_set_new(req, "title", json_string(title));
	if (f->o.kind == SL_FORGE_GITLAB) {
		sl_buf_addf(&path, "projects/%s/merge_requests/%lld", f->project_enc,
			    (long long)number);
		json_object_set_new(req, "description", json_string(body));
	} else {
		sl_buf_addf(&path, "repos/%s/pulls/%lld", f->o.project, (long long)number);
		json_object_set_new(req, "body", json_string(body));
	}
	ret = call_json(f, f->o.kind == SL_FORGE_GITLAB ? "PUT" : "PATCH", path.buf, req, &j, &r,
			err);
	json_decref(j);
	json_decref(req);
	reply_release(&r);
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
	reply_init(&r);
	if (f->o.kind == SL_FORGE_GITLAB)
		sl_buf_addf(&path, "projects/%s/merge_requests/%lld", f->project_enc,
			    (long long)number);
	else
		sl_buf_addf(&path, "repos/%s/pulls/%lld", f->o.project, (long long)number);
	if (!(ret = call_json(f, "GET", path.buf, NULL, &j, &r, err)))
		fill_pr(f, j, out);
	json_decref(j);
	reply_release(&r);
	sl_buf_release(&path);
	return ret;
}

int sl_forge_pr_feedback(sl_forge *f, sl_forge_pr *pr, sl_err *err)
{
	sl_buf path = SL_BUF_INIT;
	json_t *all = NULL, *e;
	const char *last = NULL;
	size_t i;
	int ret;

	free(pr->close_comment);
	pr->close_comment = NULL;
	pr->review_comments = 0;
	if (f->o.kind == SL_FORGE_GITLAB) {
		/* notes: people's comments (system notes are GitLab's own) */
		sl_buf_addf(&path, "projects/%s/merge_requests/%lld/notes?sort=asc&order_by=created_at",
			    f->project_enc, (long long)pr->number);
		if ((ret = call_list(f, path.buf, &all, err)))
			goto done;
		json_array_foreach(all, i, e) {
			if (json_is_true(json_object_get(e, "system")))
				continue;
			pr->review_comments++;
			last = json_string_value(json_object_get(e, "body"));
		}
		pr->close_comment = sl_xstrdup_or_null(last);
		goto done;
	}
	sl_buf_addf(&path, "repos/%s/pulls/%lld/comments", f->o.project, (long long)pr->number);
	if ((ret = call_list(f, path.buf, &all, err)))
		goto done;
	pr->review_comments = (int64_t)json_array_size(all);
	json_decref(all);
	all = NULL;
	sl_buf_reset(&path);
	sl_buf_addf(&path, "repos/%s/issues/%lld/comments", f->o.project, (long long)pr->number);
	if ((ret = call_list(f, path.buf, &all, err)))
		goto done;
	if (json_array_size(all))
		last = json_string_value(json_object_get(json_array_get(all,
					json_array_size(all) - 1), "body"));
	pr->close_comment = sl_xstrdup_or_null(last);
done:
	json_decref(all);
	sl_buf_release(&path);
	return ret;
}
