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

/*
 * Watching a run (pipeline/run/events.c; README, "Watching a campaign").
 *
 * Steps: what the run itself (slot 0: scoping, base preparation, the
 * baseline) and each worker (slots 1..) is doing now.  One name table,
 * sl_step_name().
 */
enum sl_step {
	SL_STEP_IDLE,
	SL_STEP_SCOPE,              /* scoping the base, choosing the targets */
	SL_STEP_PREPARE,            /* preparing the warm base */
	SL_STEP_BASELINE,           /* the gates on the base */
	SL_STEP_CLAIM,              /* claiming a target, reading its history */
	SL_STEP_RULES,
	SL_STEP_MODEL,              /* a model request */
	SL_STEP_APPLY,              /* the edits placed and committed */
	SL_STEP_CHECK,              /* syntax and policy on the diff */
	SL_STEP_WAIT,               /* waiting for a gate slot (`jobs`) */
	SL_STEP_TREE,               /* the candidate's tree (layer or worktree) */
	SL_STEP_GATE,               /* a jailed gate on the candidate */
	SL_STEP_RECORD,             /* writing the store */
};
const char *sl_step_name(enum sl_step step);

typedef struct sl_step_view {
	enum sl_step step;
	char target[256];           /* the target, "path:line", or "" */
	char gate[64];              /* the gate running (SL_STEP_GATE, _BASELINE, _PREPARE) */
	int64_t attempt;            /* the attempt's number, 0 when none */
	int64_t since_ms;           /* when the step started (sl_now_ms()) */
} sl_step_view;

/* A snapshot of a run: counts, rate, cost, ETA and every slot's step. */
typedef struct sl_run_view {
	int started;                /* the run has begun (else nothing below is set) */
	int working;                /* its workers have begun (the targets are counted) */
	int64_t now_ms, elapsed_ms; /* sl_now_ms() at the snapshot; since the run began */
	size_t total, finished, proposed;
	int64_t tokens;
	double cost;
	double per_min;             /* targets finished a minute since the workers began */
	int64_t eta_ms;             /* from measured model and gate times; -1: not known yet */
	sl_step_view *slot;         /* slot[0] the run itself, then one per worker; owned */
	size_t nslots;
} sl_run_view;

/*
 * The shared, lock-protected place a run says what it is doing: the caller
 * makes one, hands it to sl_run() (opts.watch) and may take snapshots from
 * any thread while the run goes.  sl_run_watch_free(NULL) does nothing.
 */
typedef struct sl_run_watch sl_run_watch;
sl_run_watch *sl_run_watch_new(void);
void sl_run_watch_free(sl_run_watch *w);
/* Fill out (release it with sl_run_view_release); out->started 0 before the run begins. */
void sl_run_watch_view(sl_run_watch *w, sl_run_view *out);
void sl_run_view_release(sl_run_view *v);
/*
 * The ETA's arithmetic (the watch's; tests/unit/test_eta.c): the targets
 * left times what one costs, from the measured model requests (per target,
 * over the `concurrency` slots) and gate times (per candidate, over the
 * `jobs` slots), whichever is the bottleneck.  A target counts for what its
 * steps measured: those done wholly, those in flight by half.  Before any
 * request or gate is measured, the targets done so far over the workers;
 * else -1 (not known).  The time spent setting the run up (scoping, the
 * warm base, the baseline) is never in it.
 */
typedef struct sl_eta_in {
	size_t left, done, busy;    /* targets not finished, done by this run, in flight */
	int64_t model_n, model_ms;  /* model requests measured, their time */
	int64_t cand_n, gate_ms;    /* candidates judged, their gates' time (not cached) */
	int64_t done_ms;            /* the targets done: their time from claim to done */
	unsigned concurrency, jobs, workers;
} sl_eta_in;
int64_t sl_run_eta(const sl_eta_in *in);

/* ms as "42s", "1m05s" or "2h03m", appended to out. */
void sl_run_duration_text(sl_buf *out, int64_t ms);

/*
 * The event stream (docs/EVENTS.md, docs/events.schema.json): one JSON
 * object per step, schema version SL_EVENTS_VERSION.  One name table,
 * sl_event_kind_name(), the "event" field of each line.
 */
#define SL_EVENTS_VERSION 1
enum sl_event_kind {
	SL_EV_RUN_START,
	SL_EV_RUN_END,
	SL_EV_TARGET_CLAIMED,
	SL_EV_TARGET_DONE,
	SL_EV_REQUEST_SENT,
	SL_EV_REQUEST_ANSWERED,
	SL_EV_EDIT_PLACED,
	SL_EV_EDIT_REFUSED,
	SL_EV_GATE_STARTED,
	SL_EV_GATE_ENDED,
	SL_EV_CANDIDATE,
	SL_EV_BUDGET,
	SL_EV_STOP,
};
const char *sl_event_kind_name(enum sl_event_kind kind);

typedef struct sl_run_event {
	enum sl_event_kind kind;
	unsigned worker;            /* 0: the run itself */
	const char *json;           /* the line, without its newline */
	const char *text;           /* the same in words, for a log (not neutralised) */
} sl_run_event;
/* Called from the run's threads, one call at a time, in the stream's order; borrowed. */
typedef void (*sl_event_fn)(void *ctx, const sl_run_event *ev);

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
	sl_event_fn event;          /* every event of the stream; NULL = none */
	void *event_ctx;
	sl_run_watch *watch;        /* where the steps are said; NULL = nowhere; borrowed */
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
