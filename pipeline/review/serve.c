/*
 * serve.c - the dashboard's server (serve.h): libmicrohttpd on one thread
 * of its own, the listening address and who may ask, and the routes.
 *
 * Every request is checked before any page is made: GET or HEAD only (405
 * with Allow otherwise), the token when there is one (compared in constant
 * time), and on a loopback address a Host header that names loopback (a
 * page of another site cannot reach the dashboard through a name it made
 * resolve to 127.0.0.1).  The pages then read the stores, opened read-only
 * (serve_pages.c, serve_metrics.c).  Responses forbid every script but the
 * dashboard's own file and every asset from elsewhere.
 *
 * libmicrohttpd is loaded (dlopen) when a server starts, so the other
 * commands never map it nor gnutls and the eight libraries gnutls pulls in
 * (1.7 ms of every command's start-up).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <microhttpd.h>

#include "pipeline/review/serve_internal.h"
#include "pipeline/review/report.h"

/* What the dashboard's pages add to report.html's style. */
static const char serve_css[] =
	"nav{font-size:.9em;color:#57606a;margin-bottom:1em}"
	".campaign{border-top:1px solid #d0d7de;margin-top:1.5em}"
	".chart{display:inline-block;margin:.5em 2em .5em 0}"
	".chart figcaption{font-size:.85em;color:#57606a}"
	"form.filter label{margin-right:.8em}.elided{color:#57606a;font-size:.9em}"
	".attempt{border-left:3px solid #d0d7de;padding-left:1em;margin:1.5em 0}"
	".st-failed,.st-rejected{color:#b3261e}.st-proposed,.st-accepted{color:#116329}";

struct sl_serve {
	serve_stores stores;
	struct MHD_Daemon *d;
	char *token;                /* NULL: none */
	size_t token_len;
	int loopback;               /* bound to a loopback address */
	char url[128];
	sl_notice_fn log;
	void *log_ctx;
};

/* libmicrohttpd's functions as serve.c calls them (mhd_load). */
static struct {
	struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port,
					   MHD_AcceptPolicyCallback apc, void *apc_cls,
					   MHD_AccessHandlerCallback dh, void *dh_cls, ...);
	void (*stop_daemon)(struct MHD_Daemon *d);
	const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *d,
						       enum MHD_DaemonInfoType type, ...);
	const char *(*lookup_connection_value)(struct MHD_Connection *c, enum MHD_ValueKind kind,
					       const char *key);
	int (*get_connection_values)(struct MHD_Connection *c, enum MHD_ValueKind kind,
				     MHD_KeyValueIterator it, void *it_cls);
	struct MHD_Response *(*create_response_from_buffer)(size_t size, void *buffer,
							    enum MHD_ResponseMemoryMode mode);
	enum MHD_Result (*add_response_header)(struct MHD_Response *r, const char *header,
					       const char *content);
	enum MHD_Result (*queue_response)(struct MHD_Connection *c, unsigned int status,
					  struct MHD_Response *r);
	void (*destroy_response)(struct MHD_Response *r);
} mhd;
static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;
static int mhd_loaded;
static char mhd_error[256];

static void mhd_load(void)
{
	static const char *const names[] = { "libmicrohttpd.so.12", "libmicrohttpd.so", NULL };
	static const char *const syms[] = {
		"MHD_start_daemon", "MHD_stop_daemon", "MHD_get_daemon_info",
		"MHD_lookup_connection_value", "MHD_get_connection_values",
		"MHD_create_response_from_buffer", "MHD_add_response_header",
		"MHD_queue_response", "MHD_destroy_response", NULL
	};
	void *const fns[] = {
		&mhd.start_daemon, &mhd.stop_daemon, &mhd.get_daemon_info,
		&mhd.lookup_connection_value, &mhd.get_connection_values,
		&mhd.create_response_from_buffer, &mhd.add_response_header,
		&mhd.queue_response, &mhd.destroy_response,
	};

	mhd_loaded = !sl_dl_load(names, syms, fns, mhd_error, sizeof(mhd_error));
}

/* A numeric "HOST:PORT" (IPv6 in brackets) as a socket address. */
static int parse_listen(struct sockaddr_storage *ss, int *loopback, const char *listen,
			sl_err *err)
{
	char host[64];
	const char *colon = strrchr(listen, ':'), *h = listen;
	size_t hl = colon ? (size_t)(colon - listen) : 0;
	char *end = NULL;
	long port = colon ? strtol(colon + 1, &end, 10) : -1;
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (hl >= 2 && listen[0] == '[' && listen[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (!colon || !colon[1] || *end || port < 0 || port > 65535 || !hl ||
	    hl >= sizeof(host))
		goto bad;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		*loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
		return SL_OK;
	}
	if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		*loopback = IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
		return SL_OK;
	}
bad:
	return sl_err_set(err, SL_EINPUT, "listen address '%s' is not a numeric HOST:PORT "
			  "(127.0.0.1:8080, [::1]:8080)", listen);
}

/* a == b, in time that depends only on b's length (b is the secret) */
static int token_equal(const char *a, size_t la, const char *b, size_t lb)
{
	unsigned char d = la != lb;

	for (size_t i = 0; i < lb; i++)
		d |= (unsigned char)(b[i] ^ (i < la ? a[i] : 0));
	return !d;
}

/* The token the request carries: Authorization: Bearer, ?token= or the cookie. */
static int token_ok(const sl_serve *sv, struct MHD_Connection *c, int *from_query)
{
	const char *auth = mhd.lookup_connection_value(c, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_AUTHORIZATION);
	const char *q = mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
	const char *ck = mhd.lookup_connection_value(c, MHD_COOKIE_KIND, "sluice_token");
	int ok = 0;

	*from_query = 0;
	if (auth && !strncmp(auth, "Bearer ", 7))
		ok |= token_equal(auth + 7, strlen(auth + 7), sv->token, sv->token_len);
	if (q && token_equal(q, strlen(q), sv->token, sv->token_len))
		ok = *from_query = 1;
	if (ck)
		ok |= token_equal(ck, strlen(ck), sv->token, sv->token_len);
	return ok;
}

/* The Host header names loopback: 127.x, [::1] or localhost, any port. */
static int host_is_loopback(struct MHD_Connection *c)
{
	const char *h = mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	size_t n;

	if (!h)
		return 0;
	if (!strncmp(h, "[::1]", 5))
		return !h[5] || h[5] == ':';
	n = strcspn(h, ":");
	if (n == 9 && !strncasecmp(h, "localhost", 9))
		return 1;
	if (strncmp(h, "127.", 4))
		return 0;
	for (size_t i = 4; i < n; i++)
		if (!strchr("0123456789.", h[i]))
			return 0;
	return 1;
}

const char *serve_arg(const serve_req *r, const char *key)
{
	for (size_t i = 0; i < r->nargs; i++)
		if (!strcmp(r->key[i], key))
			return r->val[i];
	return NULL;
}

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key,
			       const char *value)
{
	serve_req *r = cls;

	if (r->nargs < SERVE_MAX_ARGS && key) {
		r->key[r->nargs] = key;
		r->val[r->nargs++] = value ? value : "";
	}
	return MHD_YES;
}

/* Split path into segments in buf (at most SERVE_MAX_SEGS; more: 0). */
static int split_path(serve_req *r, char *path)
{
	char *p = path;

	while (*p) {
		while (*p == '/')
			*p++ = '\0';
		if (!*p)
			break;
		if (r->nseg == SERVE_MAX_SEGS)
			return 0;
		r->seg[r->nseg++] = p;
		p += strcspn(p, "/");
	}
	return 1;
}

typedef int (*serve_fn)(const serve_stores *, const serve_req *, serve_reply *, sl_err *);

/* The route of a path: its shape, "*" matching any one segment. */
static const struct route {
	const char *shape;
	serve_fn fn;
} routes[] = {
	{ "", serve_index },
	{ "live.json", serve_live },
	{ "metrics", serve_metrics },
	{ "s/*/c/*", serve_campaign },
	{ "s/*/c/*/targets", serve_targets },
	{ "s/*/t/*", serve_target },
	{ "s/*/k/*", serve_candidate },
};

static serve_fn route_of(const serve_req *r)
{
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		const char *s = routes[i].shape;
		size_t k = 0;

		for (; *s && k < r->nseg; k++) {
			size_t n = strcspn(s, "/");

			if (!(n == 1 && *s == '*') && (strlen(r->seg[k]) != n ||
						       strncmp(s, r->seg[k], n)))
				break;
			s += n + (s[n] == '/');
		}
		if (!*s && k == r->nseg)
			return routes[i].fn;
	}
	return NULL;
}

static void set_text(serve_reply *rep, unsigned status, const char *msg)
{
	rep->status = status;
	rep->type = "text/plain; charset=utf-8";
	sl_buf_reset(&rep->body);
	sl_buf_adds(&rep->body, msg);
	sl_buf_addch(&rep->body, '\n');
}

/* What a GET of url answers, into rep. */
static void answer(sl_serve *sv, const char *url, struct MHD_Connection *c, serve_reply *rep)
{
	serve_req r = { .nseg = 0 };
	char *path = sl_xstrdup(url);
	sl_err err = SL_ERR_INIT;
	serve_fn fn;
	int ret;

	if (!strcmp(url, "/static/live.js")) {
		rep->status = 200;
		rep->type = "text/javascript; charset=utf-8";
		sl_buf_adds(&rep->body, serve_live_js);
		goto done;
	}
	if (!strcmp(url, "/static/style.css")) {
		rep->status = 200;
		rep->type = "text/css; charset=utf-8";
		sl_buf_adds(&rep->body, sl_report_html_style);
		sl_buf_adds(&rep->body, serve_css);
		goto done;
	}
	if (!strcmp(url, "/favicon.ico")) {
		rep->status = 204;
		rep->type = "image/x-icon";
		goto done;
	}
	mhd.get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_arg, &r);
	if (!split_path(&r, path) || !(fn = route_of(&r))) {
		set_text(rep, 404, "not found");
		goto done;
	}
	ret = fn(&sv->stores, &r, rep, &err);
	if (ret) {
		set_text(rep, ret == SL_ENOTFOUND ? 404 : ret == SL_EINPUT ? 400 : 500, err.msg);
		if (ret != SL_ENOTFOUND && ret != SL_EINPUT && sv->log)
			sv->log(sv->log_ctx, err.msg);
	}
done:
	free(path);
}

static enum MHD_Result send_reply(struct MHD_Connection *c, serve_reply *rep, const char *allow,
				  const char *cookie)
{
	size_t len = 0;
	char *body = sl_buf_detach(&rep->body, &len);
	struct MHD_Response *resp = mhd.create_response_from_buffer(len, body,
								    MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ok;

	if (!resp) {
		free(body);
		return MHD_NO;
	}
	mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, rep->type);
	mhd.add_response_header(resp, "Content-Security-Policy", "default-src 'none'; "
				"script-src 'self'; style-src 'self'; connect-src 'self'; "
				"img-src 'self'; form-action 'self'; base-uri 'none'; "
				"frame-ancestors 'none'");
	mhd.add_response_header(resp, "X-Content-Type-Options", "nosniff");
	mhd.add_response_header(resp, "Referrer-Policy", "no-referrer");
	mhd.add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (allow)
		mhd.add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	if (rep->status == 401)
		mhd.add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	if (cookie)
		mhd.add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, cookie);
	ok = mhd.queue_response(c, rep->status, resp);
	mhd.destroy_response(resp);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	sl_serve *sv = cls;
	serve_reply rep = { .status = 200, .type = NULL, .body = SL_BUF_INIT };
	const char *allow = NULL;
	char *cookie = NULL;
	int from_query = 0;
	enum MHD_Result ok;

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		/* answered before any body is read: nothing is ever written */
		set_text(&rep, 405, "method not allowed: the dashboard is read-only");
		allow = "GET, HEAD";
	} else if (sv->loopback && !host_is_loopback(c)) {
		set_text(&rep, 403, "forbidden: the Host header does not name loopback");
	} else if (sv->token && !token_ok(sv, c, &from_query)) {
		set_text(&rep, 401, "unauthorized: a token is required");
	} else {
		answer(sv, url, c, &rep);
		if (from_query) {
			sl_buf ck = SL_BUF_INIT;

			sl_buf_addf(&ck, "sluice_token=%s; Path=/; HttpOnly; SameSite=Strict",
				    sv->token);
			cookie = sl_buf_detach(&ck, NULL);
		}
	}
	ok = send_reply(c, &rep, allow, cookie);
	free(cookie);
	sl_buf_release(&rep.body);
	return ok;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	sl_serve *sv = cls;
	sl_buf line = SL_BUF_INIT;

	sl_buf_vaddf(&line, fmt, ap);
	sl_buf_rtrim(&line);
	if (sv->log)
		sv->log(sv->log_ctx, line.buf);
	sl_buf_release(&line);
}

/* Open each store read-only. */
static int open_stores(sl_serve *sv, const sl_serve_opts *o, sl_err *err)
{
	sv->stores.st = sl_xcalloc(o->nstores, sizeof(*sv->stores.st));
	sv->stores.paths = sl_xcalloc(o->nstores, sizeof(*sv->stores.paths));
	sv->stores.refresh_ms = o->refresh_ms > 0 ? o->refresh_ms : 2000;
	for (size_t i = 0; i < o->nstores; i++) {
		int ret = sl_store_open_readonly(&sv->stores.st[i], o->stores[i], err);

		sv->stores.paths[i] = sl_xstrdup(o->stores[i]);
		sv->stores.n++;
		if (ret)
			return ret == SL_ERROR ? ret : SL_EINPUT;
	}
	return SL_OK;
}

/* Check who may connect, then bind: the address, the loopback rule, the token. */
static int bind_daemon(sl_serve *sv, const sl_serve_opts *o, sl_err *err)
{
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	char host[INET6_ADDRSTRLEN] = "";
	int ret;

	if ((ret = parse_listen(&ss, &sv->loopback, o->listen, err)))
		return ret;
	if (!sv->loopback && !o->allow_remote)
		return sl_err_set(err, SL_EINPUT, "listen address '%s' is not loopback: serving "
				  "other hosts needs --allow-remote and --token-file", o->listen);
	if (!sv->loopback && !o->token)
		return sl_err_set(err, SL_EINPUT, "listen address '%s' is not loopback: a token "
				  "is required (--token-file)", o->listen);
	sv->d = mhd.start_daemon(MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD |
				 (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0), 0, NULL, NULL,
				 on_request, sv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				 MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, sv,
				 MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
				 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_END);
	if (!sv->d)
		return sl_err_set(err, SL_ERROR, "cannot listen on '%s'", o->listen);
	info = mhd.get_daemon_info(sv->d, MHD_DAEMON_INFO_BIND_PORT);
	if (ss.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
	snprintf(sv->url, sizeof(sv->url), ss.ss_family == AF_INET6 ? "http://[%s]:%u/" :
		 "http://%s:%u/", host, info ? (unsigned)info->port : 0);
	return SL_OK;
}

int sl_serve_start(sl_serve **out, const sl_serve_opts *o, sl_err *err)
{
	sl_serve *sv = sl_xcalloc(1, sizeof(*sv));
	int ret;

	*out = NULL;
	pthread_once(&mhd_once, mhd_load);
	if (!mhd_loaded) {
		free(sv);
		return sl_err_set(err, SL_ERROR, "cannot load libmicrohttpd: %s", mhd_error);
	}
	sv->log = o->log;
	sv->log_ctx = o->log_ctx;
	if (o->token) {
		sv->token = sl_xstrdup(o->token);
		sv->token_len = strlen(o->token);
	}
	/* the address first: a refused address opens no store */
	if ((ret = parse_listen(&(struct sockaddr_storage){ 0 }, &(int){ 0 }, o->listen, err)) ||
	    (ret = open_stores(sv, o, err)) || (ret = bind_daemon(sv, o, err))) {
		sl_serve_free(sv);
		return ret;
	}
	*out = sv;
	return SL_OK;
}

const char *sl_serve_url(const sl_serve *s)
{
	return s->url;
}

void sl_serve_free(sl_serve *s)
{
	if (!s)
		return;
	if (s->d)
		mhd.stop_daemon(s->d);
	for (size_t i = 0; i < s->stores.n; i++) {
		sl_store_free(s->stores.st[i]);
		free(s->stores.paths[i]);
	}
	free(s->stores.st);
	free(s->stores.paths);
	free(s->token);
	free(s);
}
