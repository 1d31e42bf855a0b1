/*
 * publish.h - `sluice publish` and `sluice sync`: reviewable changes pushed
 * as branches and opened as pull/merge requests, and their outcomes read
 * back into the store.
 *
 * publish: build the changes (review_change.h); for each, point the local
 * branch PREFIX/review/KEY at its commit, push it (libgit2, forced) to the
 * review remote when it is new or changed, check the forge sees it, then
 * find or open its request (an existing one is never duplicated) or update
 * the title and body of one whose change moved.  New requests are paced:
 * at most review.max_open open at once and review.max_per_hour opened in
 * the last hour (counted from the store); the rest wait for a later run.
 * Each change is recorded in its own transaction.  A head whose request the
 * forge already merged or closed is recorded with that decision, never
 * opened again.
 *
 * Both first close every request recorded as open whose candidates were
 * all rejected in the store (`sluice reject`), with a comment giving the
 * reason, and stop tracking it.
 *
 * sync: for each request recorded as open, read its state: merged records
 * an accept for its candidates, with whether it landed unchanged (the
 * merged commit, fetched from the remote, holds the lines the change wrote
 * as it wrote them at every path it touched, whatever else landed in the
 * same files); closed without merge records a reject with the
 * last comment as the reason; review comments are counted.
 *
 * The token is borrowed from the caller, sent only to the forge (in its
 * auth header) and to the push remote when it is https; it is never
 * recorded or returned in a message.
 */
#ifndef SL_PUBLISH_H
#define SL_PUBLISH_H

#include <git2.h>

#include "common/err.h"
#include "pipeline/spec.h"
#include "storage/store.h"

typedef struct sl_publish_opts {
	const char *token;
	unsigned max_wait_s;        /* longest rate-limit wait accepted (default 900) */
	/* one line of progress per change, and rate-limit waits; may be NULL */
	void (*progress)(void *ctx, const char *line);
	void *ctx;
} sl_publish_opts;

#define SL_PUBLISH_OPTS_INIT { .max_wait_s = 900 }

typedef struct sl_publish_summary {
	size_t changes, opened, updated, unchanged, paced, closed;
	size_t withdrawn;           /* open requests closed: their changes were rejected here */
	/* sync: */
	size_t open, merged, rejected, landed_unchanged;
} sl_publish_summary;

int sl_publish(sl_publish_summary *out, sl_store *st, const sl_campaign_rec *camp,
	       const sl_spec *spec, git_repository *repo, const sl_publish_opts *opts,
	       sl_err *err);

int sl_sync(sl_publish_summary *out, sl_store *st, const sl_campaign_rec *camp,
	    const sl_spec *spec, git_repository *repo, const sl_publish_opts *opts, sl_err *err);

#endif
