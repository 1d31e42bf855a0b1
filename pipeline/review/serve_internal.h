/*
 * serve_internal.h - for pipeline/review/serve*.c only: a request as the
 * pages see it (no libmicrohttpd type), the stores served, and the pages.
 *
 * serve.c turns each GET into an sl_serve_req and calls the route's
 * function, which fills a serve_reply; serve_pages.c renders HTML and
 * live.json, serve_metrics.c the OpenMetrics text.
 */
#ifndef SL_SERVE_INTERNAL_H
#define SL_SERVE_INTERNAL_H

#include "common/buf.h"
#include "pipeline/review/serve.h"
#include "storage/store.h"

/* The stores served, opened read-only, in the order given. */
typedef struct serve_stores {
	sl_store **st;
	char **paths;               /* as given on the command line */
	size_t n;
	int refresh_ms;
} serve_stores;

/* One request: the path's segments and the query's arguments, all borrowed. */
#define SERVE_MAX_SEGS 8
#define SERVE_MAX_ARGS 16
typedef struct serve_req {
	const char *seg[SERVE_MAX_SEGS];
	size_t nseg;
	const char *key[SERVE_MAX_ARGS], *val[SERVE_MAX_ARGS];
	size_t nargs;
} serve_req;

/* The query argument key, or NULL. */
const char *serve_arg(const serve_req *r, const char *key);

typedef struct serve_reply {
	unsigned status;            /* 200, 404 ... */
	const char *type;           /* the content type */
	sl_buf body;
} serve_reply;

/*
 * The pages and live.json (serve_pages.c) and /metrics (serve_metrics.c):
 * each fills rep (status 200) or returns an error code with err set
 * (SL_ENOTFOUND: 404, SL_EINPUT: 400, else 500).
 */
int serve_index(const serve_stores *s, const serve_req *r, serve_reply *rep, sl_err *err);
int serve_campaign(const serve_stores *s, const serve_req *r, serve_reply *rep, sl_err *err);
int serve_targets(const serve_stores *s, const serve_req *r, serve_reply *rep, sl_err *err);
int serve_target(const serve_stores *s, const serve_req *r, serve_reply *rep, sl_err *err);
int serve_candidate(const serve_stores *s, const serve_req *r, serve_reply *rep, sl_err *err);
int serve_live(const serve_stores *s, const serve_req *r, serve_reply *rep, sl_err *err);
int serve_metrics(const serve_stores *s, const serve_req *r, serve_reply *rep, sl_err *err);

/* The script every page loads: polls live.json and redraws the page's parts. */
extern const char serve_live_js[];

#endif
