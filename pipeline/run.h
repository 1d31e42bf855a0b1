/*
 * run.h - the orchestrator: the only code that knows the order of stages
 * (its code: pipeline/run/, one concern a file; run_internal.h there).
 *
 * sl_campaign_load() (campaign.h) loads the campaign; sl_run() then: opens the store and records the campaign (or finds it and
 * reuses the base commit recorded the first time, so a rerun resumes on the
 * same tree), cleans worktrees a crashed run left behind, scopes the base and
 * records new targets, and takes every pending target through
 *     rules or provider -> reply parsing -> apply -> worktree -> gates
 * for up to `attempts` attempts, feeding the failure of one attempt into the
 * prompt of the next.  Each attempt's records (attempt, candidate, gate runs,
 * the target's new state) are written in one transaction; a candidate that
 * passes every gate keeps its branch <branch_prefix>/<target>, any other
 * candidate's branch is deleted.
 *
 * Surviving interruptions: the run registers in the store (lease.h) and
 * claims each target before touching it, so several runs share a campaign;
 * the baseline is measured by one run at a time.  A model reply is
 * journalled the moment it arrives (journal.h) and a resumed attempt takes
 * it instead of asking again; a resumed target's conversation is rebuilt
 * from its recorded attempts.  Tokens and cost are reserved before each
 * request and settled on its reply; a failure the provider could have
 * retried away leaves the target pending.  opts.stop ends the run cleanly.
 */
#ifndef SL_RUN_H
#define SL_RUN_H

#include <stdint.h>
#include <git2.h>

#include "common/buf.h"
#include "common/err.h"
#include "scoping/scope.h"
#include "pipeline/campaign.h"
#include "pipeline/spec.h"
#include "storage/store.h"

typedef struct sl_run_opts {
	const char *spec_path;
	const char *repo;           /* overrides the spec's repository */
	const char *store;          /* the store file */
	/*
	 * One line per finished target, per gate run on the base and per
	 * notice (targets chosen, why a budget stopped the run); NULL = none.
	 * Called from the worker threads, one call at a time.
	 */
	sl_notice_fn progress;
	void *progress_ctx;
	const char *record;         /* append every model reply to this JSON lines file */
	int unsafe;                 /* run gates without the minimum jail; recorded */
	/*
	 * Set by the caller (a signal handler) to stop the run: no new request,
	 * attempt or target starts, model requests in flight are aborted, gates
	 * in flight are killed, their worktrees and branches removed; targets
	 * in progress stay pending (what they already received is journalled).
	 * sl_run then returns SL_OK with summary.interrupted set.  Borrowed.
	 */
	const volatile int *stop;
	unsigned lease_ttl_s;       /* leases on targets last this long unless renewed
				       (every third of it); 0 = the campaign's
				       lease_ttl, else 60 */
	/*
	 * A shard (README "Running on many machines"): only the targets
	 * sl_run_shard_of() puts in shard shard_k of shard_n are recorded and
	 * worked on, and the store says so (storage/merge.h); shard_n = 0: all.
	 * base, when set, is the commit every shard must scope: a campaign whose
	 * base (resolved, or recorded by an earlier run) is another is refused.
	 */
	unsigned shard_k, shard_n;
	const char *base;
} sl_run_opts;
#define SL_RUN_OPTS_INIT { .spec_path = NULL }

typedef struct sl_run_summary {
	int64_t campaign_id;
	char *campaign;             /* owned */
	size_t targets, processed;
	size_t proposed_now;        /* targets proposed by this run */
	size_t held_elsewhere;      /* pending targets another live run holds */
	size_t lease_lost;          /* targets another run took over while this one was
				       paused past its lease: left to it, nothing written */
	size_t transient;           /* targets left pending after retries ran out */
	size_t usage_rejected;      /* replies whose usage numbers were not believed */
	size_t targets_held_max;    /* target records the run held at once (a chunk read
				       from the store and the workers' own) */
	int64_t stale_digest;       /* finished targets judged under another definition */
	int interrupted;            /* opts.stop was set */
	int64_t tokens_used, budget_tokens; /* campaign-wide, after the run */
	char *stop_reason;          /* why a budget stopped the run; NULL if none; owned */
} sl_run_summary;

void sl_run_summary_release(sl_run_summary *s);
int sl_run(sl_run_summary *out, const sl_run_opts *opts, sl_err *err);

/*
 * `sluice baseline`: load the campaign, open the store and record the
 * campaign like sl_run(), measure (or load) every gate on the base and
 * render it into out (validators/validators.h, sl_gating_describe); no target is scoped
 * and nothing is generated.  SL_EBASE, with out filled, when a gate cannot
 * judge.
 */
int sl_run_baseline(sl_buf *out, const sl_run_opts *opts, int json, sl_err *err);

/*
 * The shard (0..n-1) of the target whose key (path:start_byte-end_byte,
 * sl_target_rec.key) is key: from a hash of the key alone, so every
 * machine puts a target in the same shard.
 */
unsigned sl_run_shard_of(const char *key, unsigned n);
/* The same for a scoped target (`sluice shard-plan`). */
unsigned sl_run_target_shard(const sl_target *t, unsigned n);

/* The store path to use: explicit, else $SLUICE_STORE, else the default. Caller frees. */
char *sl_default_store_path(const char *explicit_path);

#endif
