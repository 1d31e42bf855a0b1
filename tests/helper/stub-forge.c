/*
 * stub-forge.c - a GitHub or GitLab REST API for tests, over real HTTP on
 * 127.0.0.1, behaving as the public API documentation describes the parts
 * sluice uses.
 *
 *     stub-forge --kind github|gitlab --token T --project P --bare DIR
 *                [--port-file F] [--log F] [--per-page N] [--limit-403 N]
 *                [--limit-429 N] [--retry-after V] [--quota N] [--echo-auth 1]
 *                [--max-seconds N]
 *
 * Every API request must authenticate (GitHub "Authorization: Bearer T" or
 * "token T"; GitLab "PRIVATE-TOKEN: T" or Bearer), else 401 (with
 * --echo-auth 1, whose message quotes the credentials the request sent, as
 * a careless service might).  Lists are
 * paginated N per page (default 2) with a Link header (rel="next"; GitLab
 * also x-next-page).  Opening a second open request for the same head is
 * GitHub's 422 "A pull request already exists" / GitLab's 409; a head that
 * is not a branch of the bare repository DIR is 422 (GitHub) / 404
 * (GitLab: "Source branch does not exist"); a missing branch or request is
 * 404.  --limit-403 N: the first N requests that open a request get GitHub's
 * secondary rate limit (403 with Retry-After: 1); --limit-429 N: the first N
 * API requests of any kind get 429 with Retry-After: 1 (both send
 * Retry-After: V instead with --retry-after V).  --quota N: every
 * reply carries x-ratelimit-limit/-remaining/-reset; after N API requests
 * the quota is spent until the next whole second plus one (reset), and a
 * request before then gets 403 "API rate limit exceeded" with remaining 0.
 *
 * GitHub: /repos/P/pulls (GET ?head=OWNER:B&state=S, POST), /pulls/N (GET,
 * PATCH: title, body, state open|closed), /pulls/N/comments, /issues/N/comments
 * (GET, POST), /issues/N/labels (POST),
 * /branches/B.  GitLab: /api/v4/projects/ENC(P)/merge_requests (GET
 * ?source_branch=B&state=S, POST), /merge_requests/IID (GET, PUT: title, description, state_event
 * close|reopen), /notes (GET, POST),
 * /repository/branches/B.  A list's state filter is the documented one:
 * GitHub open (the default), closed (merged ones too) or all; GitLab
 * opened, closed, merged or all (the default).
 *
 * Test controls (no auth): POST /_stub/merge/N (body: the merge commit),
 * POST /_stub/close/N (body: a closing comment, may be empty), POST
 * /_stub/review/N (body: a review comment), GET /_stub/state (every
 * request as JSON).
 *
 * --log F gets one line per request as it is answered:
 * "MS METHOD TARGET STATUS" (MS: milliseconds since the epoch).  One
 * request per connection; exits after --max-seconds (default 300).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/util.h"

#define HEAD_CAP (64 * 1024)
#define BODY_CAP (4 * 1024 * 1024)
#define MAX_PRS 1000

static int gitlab;
static const char *token, *project, *bare, *log_path;
static unsigned per_page = 2, limit_403, limit_429, quota, quota_left;
static const char *retry_after = "1";
static int echo_auth;
static int64_t quota_reset;
static int port;
static json_t *prs;             /* array of request objects, [i] has number i + 1 */

static int64_t now_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static char *url_decode(const char *s, size_t n)
{
	sl_buf b = SL_BUF_INIT;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n + 0 + 1 && isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2])) {
			char hex[3] = { s[i + 1], s[i + 2], 0 };

			sl_buf_addch(&b, (int)strtol(hex, NULL, 16));
			i += 2;
		} else {
			sl_buf_addch(&b, s[i] == '+' ? ' ' : s[i]);
		}
	}
	return sl_buf_detach(&b, NULL);
}

/* The decoded value of query parameter name, or NULL. */
static char *query_param(const char *query, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = query; p && *p; ) {
		const char *amp = strchr(p, '&');
		size_t len = amp ? (size_t)(amp - p) : strlen(p);

		if (len > n && !strncmp(p, name, n) && p[n] == '=')
			return url_decode(p + n + 1, len - n - 1);
		p = amp ? amp + 1 : NULL;
	}
	return NULL;
}

static int branch_exists(const char *b)
{
	sl_buf path = SL_BUF_INIT, packed = SL_BUF_INIT, line = SL_BUF_INIT;
	struct stat st;
	sl_err err = SL_ERR_INIT;
	int found;

	sl_buf_addf(&path, "%s/refs/heads/%s", bare, b);
	found = !stat(path.buf, &st) && S_ISREG(st.st_mode);
	sl_buf_reset(&path);
	sl_buf_addf(&path, "%s/packed-refs", bare);
	sl_buf_addf(&line, " refs/heads/%s\n", b);
	if (!found && !sl_read_file(&packed, path.buf, 16 << 20, &err))
		found = strstr(packed.buf, line.buf) != NULL;
	sl_buf_release(&path);
	sl_buf_release(&packed);
	sl_buf_release(&line);
	return found;
}

typedef struct resp {
	int status;
	json_t *body;               /* stolen */
	sl_buf headers;             /* extra header lines */
} resp;

static void answer(resp *r, int status, json_t *body)
{
	r->status = status;
	json_decref(r->body);
	r->body = body;
}

static void message(resp *r, int status, const char *msg)
{
	answer(r, status, gitlab && status != 401 ? json_pack("{s:[s]}", "message", msg) :
	       json_pack("{s:s}", "message", msg));
}

/* Page `page` of list, with Link headers pointing at base&page=K. */
static void paginate(resp *r, json_t *list, const char *target, const char *query)
{
	char *pg = query_param(query, "page");
	long page = pg ? strtol(pg, NULL, 10) : 1;
	size_t total = json_array_size(list), pages = total ? (total + per_page - 1) / per_page : 1;
	json_t *out = json_array();
	sl_buf base = SL_BUF_INIT;
	const char *q = strchr(target, '?');

	free(pg);
	if (page < 1)
		page = 1;
	for (size_t i = (size_t)(page - 1) * per_page; i < total && i < (size_t)page * per_page; i++)
		json_array_append(out, json_array_get(list, i));
	/* the same target without its page parameter */
	sl_buf_addf(&base, "http://127.0.0.1:%d", port);
	sl_buf_add(&base, target, q ? (size_t)(q - target) : strlen(target));
	sl_buf_addch(&base, '?');
	for (const char *p = query; p && *p; ) {
		const char *amp = strchr(p, '&');
		size_t len = amp ? (size_t)(amp - p) : strlen(p);

		if (strncmp(p, "page=", 5))
			sl_buf_addf(&base, "%.*s&", (int)len, p);
		p = amp ? amp + 1 : NULL;
	}
	if ((size_t)page < pages) {
		sl_buf_addf(&r->headers, "Link: <%spage=%ld>; rel=\"next\", <%spage=%zu>; "
			    "rel=\"last\"\r\n", base.buf, page + 1, base.buf, pages);
		if (gitlab)
			sl_buf_addf(&r->headers, "x-next-page: %ld\r\n", page + 1);
	}
	if (gitlab)
		sl_buf_addf(&r->headers, "x-total: %zu\r\nx-page: %ld\r\n", total, page);
	sl_buf_release(&base);
	json_decref(list);
	answer(r, 200, out);
}

static json_t *pr_at(long n)
{
	return n >= 1 && (size_t)n <= json_array_size(prs) ? json_array_get(prs, (size_t)n - 1) :
		NULL;
}

static const char *pr_state(json_t *p)
{
	return json_string_value(json_object_get(p, "state"));
}

static json_t *view(json_t *p)
{
	json_t *v = json_deep_copy(p);

	json_object_del(v, "comments");
	json_object_del(v, "review_comments_list");
	json_object_del(v, "notes");
	return v;
}

static void create(resp *r, json_t *req)
{
	const char *head = json_string_value(json_object_get(req, gitlab ? "source_branch" :
							      "head"));
	const char *base = json_string_value(json_object_get(req, gitlab ? "target_branch" :
							      "base"));
	const char *title = json_string_value(json_object_get(req, "title"));
	const char *body = json_string_value(json_object_get(req, gitlab ? "description" :
							      "body"));
	json_t *p, *e;
	size_t i;
	char url[512];

	if (limit_403) {
		limit_403--;
		sl_buf_addf(&r->headers, "Retry-After: %s\r\n", retry_after);
		message(r, 403, "You have exceeded a secondary rate limit. Please wait a few "
			"minutes before you try again.");
		return;
	}
	if (!head || !base || !title) {
		message(r, gitlab ? 400 : 422, "Validation Failed");
		return;
	}
	if (!branch_exists(head)) {
		if (gitlab)
			message(r, 404, "Source branch does not exist");
		else
			answer(r, 422, json_pack("{s:s,s:[{s:s,s:s,s:s}]}", "message",
						 "Validation Failed", "errors", "resource",
						 "PullRequest", "field", "head", "code", "invalid"));
		return;
	}
	json_array_foreach(prs, i, e) {
		const char *h = json_string_value(json_object_get(e, gitlab ? "source_branch" :
								  "head_ref"));

		if (h && !strcmp(h, head) && !strcmp(pr_state(e), gitlab ? "opened" : "open")) {
			char msg[300];

			if (gitlab) {
				snprintf(msg, sizeof(msg), "Another open merge request already exists "
					 "for this source branch: !%zu", i + 1);
				message(r, 409, msg);
			} else {
				snprintf(msg, sizeof(msg), "A pull request already exists for %.100s:%.100s.",
					 project, head);
				answer(r, 422, json_pack("{s:s,s:[{s:s,s:s,s:s}]}", "message",
							 "Validation Failed", "errors", "resource",
							 "PullRequest", "code", "custom", "message", msg));
			}
			return;
		}
	}
	if (json_array_size(prs) >= MAX_PRS) {
		message(r, 422, "too many");
		return;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/%s/%s/%zu", port, project,
		 gitlab ? "-/merge_requests" : "pull", json_array_size(prs) + 1);
	if (gitlab)
		p = json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:n,s:o}", "iid",
			      (json_int_t)json_array_size(prs) + 1, "state", "opened",
			      "title", title, "description", body ? body : "", "source_branch", head,
			      "target_branch", base, "web_url", url, "merge_commit_sha", "labels",
			      json_object_get(req, "labels") ?
			      json_incref(json_object_get(req, "labels")) : json_string(""));
	else
		p = json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:b,s:b,s:n,s:[]}", "number",
			      (json_int_t)json_array_size(prs) + 1, "state", "open", "title", title,
			      "body", body ? body : "", "head_ref", head, "base_ref", base,
			      "html_url", url, "merged", 0, "draft",
			      json_is_true(json_object_get(req, "draft")), "merge_commit_sha",
			      "labels");
	json_object_set_new(p, "comments", json_array());
	json_object_set_new(p, "review_comments_list", json_array());
	json_object_set_new(p, "notes", json_array());
	json_array_append_new(prs, p);
	answer(r, 201, view(p));
}

static void update(resp *r, json_t *p, json_t *req)
{
	const char *k;
	json_t *v;

	json_object_foreach(req, k, v) {
		const char *s = json_string_value(v);

		if (!strcmp(k, "title") || !strcmp(k, "body") || !strcmp(k, "description"))
			json_object_set(p, k, v);
		else if (!gitlab && !strcmp(k, "state") && s &&
			 (!strcmp(s, "open") || !strcmp(s, "closed")))
			json_object_set(p, k, v);
		else if (gitlab && !strcmp(k, "state_event") && s &&
			 (!strcmp(s, "close") || !strcmp(s, "reopen")))
			json_object_set_new(p, "state", json_string(!strcmp(s, "close") ?
								   "closed" : "opened"));
	}
	answer(r, 200, view(p));
}

/* The routes under the project; rest is what follows "/repos/P/" or "/projects/ENC/". */
static void route(resp *r, const char *method, const char *target, const char *rest,
		  const char *query, json_t *req)
{
	long n = 0;
	char tail[256] = "";
	json_t *p;

	if (!strncmp(rest, gitlab ? "repository/branches/" : "branches/", gitlab ? 20 : 9)) {
		const char *b = rest + (gitlab ? 20 : 9);
		char *dec = url_decode(b, strlen(b));

		if (branch_exists(dec))
			answer(r, 200, json_pack("{s:s}", "name", dec));
		else
			message(r, 404, gitlab ? "404 Branch Not Found" : "Branch not found");
		free(dec);
		return;
	}
	if (!strcmp(rest, gitlab ? "merge_requests" : "pulls")) {
		if (!strcmp(method, "POST")) {
			create(r, req);
			return;
		}
		if (!strcmp(method, "GET")) {
			char *head = query_param(query, gitlab ? "source_branch" : "head");
			const char *want = head && !gitlab && strchr(head, ':') ?
				strchr(head, ':') + 1 : head;
			char *state = query_param(query, "state");
			const char *st = state ? state : gitlab ? "all" : "open";
			json_t *list = json_array(), *e;
			size_t i;

			json_array_foreach(prs, i, e) {
				const char *h = json_string_value(json_object_get(e, gitlab ?
							"source_branch" : "head_ref"));

				if ((!want || (h && !strcmp(h, want))) &&
				    (!strcmp(st, "all") || !strcmp(st, pr_state(e))))
					json_array_append_new(list, view(e));
			}
			free(head);
			free(state);
			paginate(r, list, target, query);
			return;
		}
	}
	if (sscanf(rest, gitlab ? "merge_requests/%ld%255s" : "pulls/%ld%255s", &n, tail) >= 1 ||
	    (!gitlab && sscanf(rest, "issues/%ld%255s", &n, tail) >= 1)) {
		if (!(p = pr_at(n))) {
			message(r, 404, "Not Found");
			return;
		}
		if (!tail[0] && !strcmp(method, "GET")) {
			answer(r, 200, view(p));
		} else if (!tail[0] && !strcmp(method, gitlab ? "PUT" : "PATCH")) {
			update(r, p, req);
		} else if (!strcmp(method, "POST") && json_string_value(json_object_get(req, "body")) &&
			   !strcmp(tail, gitlab ? "/notes" : "/comments") &&
			   (gitlab || !strncmp(rest, "issues", 6))) {
			json_t *c = gitlab ? json_pack("{s:O,s:b}", "body", json_object_get(req, "body"),
						       "system", 0) :
				json_pack("{s:O}", "body", json_object_get(req, "body"));

			json_array_append(json_object_get(p, gitlab ? "notes" : "comments"), c);
			answer(r, 201, c);
		} else if (!strcmp(tail, "/comments") && !strncmp(rest, "issues", 6)) {
			paginate(r, json_deep_copy(json_object_get(p, "comments")), target, query);
		} else if (!strcmp(tail, "/comments")) {
			paginate(r, json_deep_copy(json_object_get(p, "review_comments_list")),
				 target, query);
		} else if (!strcmp(tail, "/notes")) {
			paginate(r, json_deep_copy(json_object_get(p, "notes")), target, query);
		} else if (!strcmp(tail, "/labels") && !strcmp(method, "POST")) {
			json_object_set(p, "labels", json_object_get(req, "labels"));
			answer(r, 200, json_deep_copy(json_object_get(p, "labels")));
		} else {
			message(r, 404, "Not Found");
		}
		return;
	}
	message(r, 404, "Not Found");
}

static void control(resp *r, const char *method, const char *path, const char *body)
{
	long n = 0;
	json_t *p;

	if (!strcmp(path, "/_stub/state")) {
		answer(r, 200, json_deep_copy(prs));
		return;
	}
	if (strcmp(method, "POST") || (sscanf(path, "/_stub/merge/%ld", &n) != 1 &&
				       sscanf(path, "/_stub/close/%ld", &n) != 1 &&
				       sscanf(path, "/_stub/review/%ld", &n) != 1) || !(p = pr_at(n))) {
		message(r, 404, "no such control");
		return;
	}
	if (!strncmp(path, "/_stub/merge/", 13)) {
		json_object_set_new(p, "state", json_string(gitlab ? "merged" : "closed"));
		if (!gitlab)
			json_object_set_new(p, "merged", json_true());
		json_object_set_new(p, "merge_commit_sha", json_string(body));
	} else if (!strncmp(path, "/_stub/close/", 13)) {
		json_object_set_new(p, "state", json_string("closed"));
		if (*body) {
			json_array_append_new(json_object_get(p, "comments"),
					      json_pack("{s:s}", "body", body));
			json_array_append_new(json_object_get(p, "notes"),
					      json_pack("{s:s,s:b}", "body", body, "system", 0));
		}
		json_array_append_new(json_object_get(p, "notes"),
				      json_pack("{s:s,s:b}", "body", "closed", "system", 1));
	} else {
		json_array_append_new(json_object_get(p, "review_comments_list"),
				      json_pack("{s:s}", "body", body));
		json_array_append_new(json_object_get(p, "notes"),
				      json_pack("{s:s,s:b,s:s}", "body", body, "system", 0, "type",
						"DiffNote"));
	}
	answer(r, 200, view(p));
}

static int authorized(const char *head)
{
	sl_buf want = SL_BUF_INIT;
	int ok = 0;
	const char *forms[] = { "Authorization: Bearer ", "Authorization: token ",
		"PRIVATE-TOKEN: " };

	for (size_t i = gitlab ? 0 : 0; i < 3 && !ok; i++) {
		if ((gitlab && i == 1) || (!gitlab && i == 2))
			continue;
		sl_buf_reset(&want);
		sl_buf_addf(&want, "\r\n%s%s\r\n", forms[i], token);
		ok = strcasestr(head, want.buf) != NULL;
	}
	sl_buf_release(&want);
	return ok;
}

static void serve(int fd)
{
	sl_buf in = SL_BUF_INIT, out = SL_BUF_INIT;
	char method[16] = "", target[4096] = "", *end, *body = NULL;
	size_t clen = 0, hlen;
	resp r = { 0 };
	json_t *req = NULL;
	char *payload = NULL;

	sl_buf_init(&r.headers, 0);
	while (!(end = strstr(in.buf, "\r\n\r\n")) && in.len < HEAD_CAP) {
		char buf[4096];
		ssize_t k = read(fd, buf, sizeof(buf));

		if (k <= 0)
			goto done;
		sl_buf_add(&in, buf, (size_t)k);
	}
	if (!end || sscanf(in.buf, "%15s %4095s", method, target) != 2)
		goto done;
	hlen = (size_t)(end - in.buf) + 4;
	{
		const char *cl = strcasestr(in.buf, "\r\ncontent-length:");

		if (cl && cl < end)
			clen = strtoul(cl + 17, NULL, 10);
	}
	if (clen > BODY_CAP)
		goto done;
	while (in.len < hlen + clen) {
		char buf[4096];
		ssize_t k = read(fd, buf, sizeof(buf));

		if (k <= 0)
			goto done;
		sl_buf_add(&in, buf, (size_t)k);
	}
	body = sl_xstrndup(in.buf + hlen, clen);
	in.buf[hlen - 2] = '\0';
	{
		char *q = strchr(target, '?');
		char *path = sl_xstrndup(target, q ? (size_t)(q - target) : strlen(target));
		const char *query = q ? q + 1 : "";
		sl_buf prefix = SL_BUF_INIT;
		char *enc = NULL;

		if (!strncmp(path, "/_stub/", 7)) {
			control(&r, method, path, body);
		} else if (!authorized(in.buf)) {
			sl_buf m = SL_BUF_INIT;
			const char *a = echo_auth ? strcasestr(in.buf, gitlab ? "\r\nPRIVATE-TOKEN:" :
							    "\r\nAuthorization:") : NULL;

			sl_buf_adds(&m, gitlab ? "401 Unauthorized" : "Bad credentials");
			if (a)
				sl_buf_addf(&m, " (got %.*s)", (int)strcspn(a + 2, "\r"), a + 2);
			message(&r, 401, m.buf);
			sl_buf_release(&m);
		} else if (quota && quota_left == 0 && now_ms() < quota_reset * 1000) {
			sl_buf_addf(&r.headers, "x-ratelimit-limit: %u\r\nx-ratelimit-remaining: 0\r\n"
				    "x-ratelimit-reset: %lld\r\n", quota, (long long)quota_reset);
			message(&r, 403, "API rate limit exceeded for user.");
		} else if (limit_429) {
			limit_429--;
			sl_buf_addf(&r.headers, "Retry-After: %s\r\n", retry_after);
			message(&r, 429, "Too Many Requests");
		} else {
			if (quota) {
				if (!quota_left)
					quota_left = quota;
				if (!--quota_left)
					quota_reset = now_ms() / 1000 + 2;
				sl_buf_addf(&r.headers, "x-ratelimit-limit: %u\r\nx-ratelimit-remaining: "
					    "%u\r\nx-ratelimit-reset: %lld\r\n", quota, quota_left,
					    (long long)(quota_left ? now_ms() / 1000 + 3600 : quota_reset));
			}
			if (gitlab) {
				sl_buf b = SL_BUF_INIT;

				for (const char *c = project; *c; c++)
					if (isalnum((unsigned char)*c) || strchr("-_.~", *c))
						sl_buf_addch(&b, *c);
					else
						sl_buf_addf(&b, "%%%02X", (unsigned char)*c);
				enc = sl_buf_detach(&b, NULL);
				sl_buf_addf(&prefix, "/api/v4/projects/%s/", enc);
			} else {
				sl_buf_addf(&prefix, "/repos/%s/", project);
			}
			if (clen && !(req = json_loads(body, 0, NULL)))
				message(&r, 400, "Problems parsing JSON");
			else if (strncmp(path, prefix.buf, prefix.len))
				message(&r, 404, "Not Found");
			else
				route(&r, method, target, path + prefix.len, query, req);
		}
		free(enc);
		free(path);
		sl_buf_release(&prefix);
	}
	payload = json_dumps(r.body ? r.body : json_null(), JSON_COMPACT | JSON_ENCODE_ANY);
	sl_buf_addf(&out, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
		    "Content-Length: %zu\r\nConnection: close\r\n%s\r\n%s", r.status,
		    r.status < 300 ? "OK" : "Error", strlen(payload), r.headers.buf, payload);
	if (log_path) {
		FILE *fp = fopen(log_path, "a");

		if (fp) {
			fprintf(fp, "%lld %s %s %d\n", (long long)now_ms(), method, target, r.status);
			fclose(fp);
		}
	}
	sl_write_all(fd, out.buf, out.len);
done:
	free(payload);
	free(body);
	json_decref(req);
	json_decref(r.body);
	sl_buf_release(&r.headers);
	sl_buf_release(&in);
	sl_buf_release(&out);
}

int main(int argc, char **argv)
{
	const char *port_file = NULL, *kind = NULL;
	unsigned max_seconds = 300;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int s, one = 1;

	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (!strcmp(k, "--kind")) kind = v;
		else if (!strcmp(k, "--token")) token = v;
		else if (!strcmp(k, "--project")) project = v;
		else if (!strcmp(k, "--bare")) bare = v;
		else if (!strcmp(k, "--port-file")) port_file = v;
		else if (!strcmp(k, "--log")) log_path = v;
		else if (!strcmp(k, "--per-page")) per_page = (unsigned)atoi(v);
		else if (!strcmp(k, "--limit-403")) limit_403 = (unsigned)atoi(v);
		else if (!strcmp(k, "--limit-429")) limit_429 = (unsigned)atoi(v);
		else if (!strcmp(k, "--retry-after")) retry_after = v;
		else if (!strcmp(k, "--echo-auth")) echo_auth = atoi(v);
		else if (!strcmp(k, "--quota")) quota = (unsigned)atoi(v);
		else if (!strcmp(k, "--max-seconds")) max_seconds = (unsigned)atoi(v);
		else
			kind = NULL, i = argc;
	}
	if (!kind || (strcmp(kind, "github") && strcmp(kind, "gitlab")) || !token || !project ||
	    !bare || !per_page) {
		fprintf(stderr, "usage: stub-forge --kind github|gitlab --token T --project P "
			"--bare DIR [--port-file F] [--log F] [--per-page N] [--limit-403 N] "
			"[--limit-429 N] [--retry-after V] [--quota N] [--echo-auth 1] "
			"[--max-seconds N]\n");
		return 2;
	}
	gitlab = !strcmp(kind, "gitlab");
	prs = json_array();
	signal(SIGPIPE, SIG_IGN);
	alarm(max_seconds);
	if ((s = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return 1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s, 64) ||
	    getsockname(s, (struct sockaddr *)&sa, &sl))
		return 1;
	port = ntohs(sa.sin_port);
	if (port_file) {
		sl_buf tmp = SL_BUF_INIT, num = SL_BUF_INIT;
		sl_err err = SL_ERR_INIT;

		sl_buf_addf(&tmp, "%s.tmp", port_file);
		sl_buf_addf(&num, "%d\n", port);
		if (sl_write_file(tmp.buf, num.buf, num.len, &err) || rename(tmp.buf, port_file))
			return 1;
		sl_buf_release(&tmp);
		sl_buf_release(&num);
	} else {
		printf("%d\n", port);
		fflush(stdout);
	}
	for (;;) {
		int c = accept(s, NULL, NULL);

		if (c < 0)
			continue;
		serve(c);
		close(c);
	}
}
