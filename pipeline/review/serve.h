/*
 * serve.h - `sluice serve`: a local, read-only web dashboard over one or
 * more campaign stores, and their metrics for Prometheus.
 *
 * libmicrohttpd serves it from a thread of its own.  Pages: every campaign
 * of the stores with its funnel (/), a campaign with its funnel, outcomes,
 * gates and charts over time (/s/S/c/C), its targets filtered by state,
 * gate, file and text (/s/S/c/C/targets), one target with every attempt:
 * prompt (elided unless ?full=ATTEMPT), reply, candidate, gates and their
 * logs, diff and decision (/s/S/t/T, or by candidate /s/S/k/K); a stamp
 * that changes whenever a run records something (/live.json), which the
 * pages' one script (/static/live.js) polls to redraw their parts; and
 * /metrics in the OpenMetrics text format.  Only GET and HEAD (else 405).
 * The stores are opened read-only; every text from a store is escaped.
 *
 * Calling sequence: sl_serve_start (binds and serves), sl_serve_url,
 * sl_serve_free (stops).
 */
#ifndef SL_SERVE_H
#define SL_SERVE_H

#include "common/err.h"
#include "common/util.h"

typedef struct sl_serve_opts {
	const char *const *stores;  /* store files, borrowed; nstores >= 1 */
	size_t nstores;
	const char *listen;         /* "HOST:PORT" (IPv6 in brackets), numeric; PORT 0 picks one */
	int allow_remote;           /* a HOST that is not loopback is refused without it */
	const char *token;          /* every request must carry it (Authorization: Bearer,
				       the cookie it sets, or ?token=); required with a
				       HOST that is not loopback; NULL: none */
	int refresh_ms;             /* how often pages poll for changes; 0: 2000 */
	sl_notice_fn log;           /* the server's errors, a line each; may be NULL */
	void *log_ctx;
} sl_serve_opts;

#define SL_SERVE_OPTS_INIT { .listen = "127.0.0.1:8080" }

typedef struct sl_serve sl_serve;

/*
 * Open the stores read-only, bind the address and start serving.
 * SL_EINPUT for an address that is not numeric HOST:PORT, a HOST that is
 * not loopback without allow_remote and a token, or a store that cannot be
 * opened; SL_ERROR when the address cannot be bound.
 */
int sl_serve_start(sl_serve **out, const sl_serve_opts *o, sl_err *err);

/* "http://HOST:PORT/" with the port bound; borrowed from s. */
const char *sl_serve_url(const sl_serve *s);

/* Stop serving and close the stores.  If s is NULL nothing occurs. */
void sl_serve_free(sl_serve *s);

#endif
