/*
 * run_internal.h - what the files of pipeline/run/ share; private to that
 * folder.  The public side is pipeline/run.h.
 *
 * One concern a file:
 *   run.c      sl_run() and sl_run_baseline(): set-up, the campaign's digest,
 *              the provider, starting the workers and the summary
 *   pool.c     a worker thread: takes the next target, claims it, takes it
 *              through its attempts, the progress line
 *   targets.c  the scoped targets' index, branch names, which targets this
 *              run works on (fix and testgen choose them from the baseline)
 *   attempt.c  the attempts at one target: rules, the model step, building
 *              the candidate, judging it, recording it
 *   model.c    the model step: the prompt, the request (or the reply
 *              journalled before a crash), the reply's format, its usage
 *   session.c  the model step of `generate: act`: a session of shell
 *              commands in the jail, recorded step by step
 *   judge.c    the candidate judged: syntax and policy on the diff, then
 *              its tree (warm base and layer, or a worktree) and the gates
 *   judge_model.c  the model judge gate: one request, accept or reject
 *   expect.c   the change did what was asked (a migration's query is gone
 *              from the unit), judged with the syntax
 *   record.c   the store's records of the campaign, targets and attempts
 *   budget.c   what stops a run early: budgets, the early-stop rule, a stop
 *   batch.c    a run without gates: each worker's objects in one pack per
 *              batch, its journal, and restoring what a crash left
 *   lease.c    leases: the worker's epoch, fenced transactions, the keeper
 *   base.c     the base: how candidates' trees are made, the baseline
 *   events.c   the watch (each thread's step, the ETA) and the event stream
 *
 * Names: functions one file calls in another start with run_; the step
 * functions of an attempt take its context, run_attempt.
 */
#ifndef SL_RUN_INTERNAL_H
#define SL_RUN_INTERNAL_H

#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <git2.h>
#include <git2/sys/odb_backend.h>

#include "pipeline/apply/apply.h"
#include "pipeline/apply/warm.h"
#include "pipeline/fixjob.h"
#include "pipeline/generate/edit.h"
#include "pipeline/generate/provider.h"
#include "pipeline/run.h"
#include "storage/journal.h"
#include "storage/store.h"
#include "validators/validators.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/util.h"

/*
 * What the run knows of the targets it scoped, by target id, one bit a
 * target: the targets themselves (unit text, sites) are in the store
 * (target_scope), read back when a worker takes one, so memory does not
 * grow with the campaign.  Filled while scoping, read-only once the
 * workers run.
 */
typedef struct target_index {
	uint64_t *scoped;           /* scoped by this run: not set, no longer matches */
	uint64_t *shares;           /* another target scoped by this run starts where it
				       does (their branch names would collide) */
	size_t nwords;
	unsigned shard_k, shard_n;  /* the run's shard (sl_run_opts); shard_n = 0: none */
} target_index;

/*
 * The sink scoping passes the targets to, in scope order (run_record_emit):
 * they are written to the store a chunk at a time, each chunk in one
 * transaction, and forgotten.
 */
typedef struct run_recorder {
	struct run_ctx *x;
	struct rec_item *v;         /* the chunk not written yet */
	size_t n, size;
	size_t scoped;              /* targets passed on (in the shard or not) */
	size_t held_max;            /* the most held at once */
	/* the target passed on before: does the next start where it does? */
	char *prev_path;
	uint32_t prev_start, prev_end;
	size_t prev_at;             /* its place in v; SIZE_MAX: written or not recorded */
	int64_t prev_id;            /* once written; 0: not recorded */
	sl_err err;
} run_recorder;

/*
 * The per-run state.  Workers (threads) share it; everything below `lock`
 * is guarded by it.  Each worker opens its own git_repository (libgit2
 * objects are not shared across threads); the store serialises
 * transactions itself; the provider may be called from several threads.
 */
typedef struct run_ctx {
	const sl_run_opts *opts;
	sl_campaign *c;
	sl_store *st;
	sl_provider *provider;      /* NULL for the rules kind */
	sl_provider *judge_provider; /* the model judge's when the campaign asks edits in a
				       response_format (the judge answers without it);
				       NULL: provider */
	char *scratch;              /* this campaign's worktree root */
	char *gitconfig;            /* config layered on each repo handle: no reflog */
	int gitconfig_fd;
	int64_t campaign_id;
	target_index index;         /* the targets scoped at the base */
	size_t scope_held_max;      /* scoped targets held at once while recording */
	size_t scope_results_max;   /* files' encoded results scoping held at once */
	size_t npending;            /* targets this run works on, counted at its start */
	sem_t model_slots;          /* `concurrency` */
	sem_t gate_slots;           /* `jobs` */
	int64_t start_ms;
	char owner[160];            /* this run's name in leases: HOST:PID:START */
	char digest[65];            /* of what judges a target (campaign_digest) */
	char store_tag[64];         /* who makes this run's branches: STORE_ID/CAMPAIGN_ID,
				       the Sluice-Store trailer of its commits */
	char *store_tags;           /* whose branches it may move: store_tag and those
				       of the shard stores merged into it (sl_store_tags) */
	int64_t lease_ttl_ms;
	pthread_t keeper;           /* the lease keeper, when kept */
	int kept, registered;       /* the keeper runs; the run is in the store's leases */
	int sems;                   /* the slots below are initialised */

	int git_lock_fd;            /* the git directory, flock()ed with git_lock: other
				       sluice processes */
	pthread_mutex_t git_lock;   /* ref and worktree changes in the repository: libgit2
				       creates and prunes ref directories without locking */
	pthread_mutex_t lock;
	size_t next;                /* targets taken by the workers */
	/*
	 * The targets this run works on are read from the store a chunk at a
	 * time (run_next_target): what the run holds does not grow with the
	 * campaign.  held counts the target records in memory, the chunk's and
	 * those the workers took.
	 */
	sl_target_rec *chunk;
	size_t nchunk, chunk_at, chunk_size;
	int64_t cursor;             /* the id of the last target read */
	int chunk_end;              /* the store has no more */
	size_t held, held_max;
	size_t seq;                 /* worktree names */
	size_t finished, passed_now;
	int64_t tokens_used;        /* campaign-wide, including earlier runs */
	double cost_used;
	int64_t tokens_reserved;    /* by the requests in flight */
	double cost_reserved;
	size_t inflight;
	pthread_cond_t settled;     /* a request in flight settled its reservation */
	size_t held_elsewhere, transient, usage_rejected;
	size_t lost;                /* targets taken over while this run was paused */
	int ending;                 /* the workers are done: the lease keeper stops */
	pthread_cond_t end_cond;
	int renewing;               /* the lease keeper is writing to the store */
	size_t nworkers;            /* worker threads running */
	size_t at_flush;            /* tests: workers waiting to flush (stop_for_test) */
	char *replay_file;          /* replay: the JSON lines file in use */
	sl_gating *gating;          /* the gates and their baseline */
	sl_warm *warm;              /* the warm base; NULL: a worktree per candidate */
	sl_findings findings;       /* kind fix: the base findings the targets come from */
	sl_unplaced unplaced;       /* and those no target holds (recorded with the targets) */
	char same_error[160];       /* the last provider error, and how many in a row */
	unsigned same_errors;       /* (run_provider_error) */
	int stop;                   /* a budget ran out: start nothing new */
	char stop_reason[160];
	int failed;                 /* machinery broke: every worker stops */
	sl_err err;                 /* the first such error */
	int base_stopped;           /* a signal came before the baseline was complete */
	sl_run_watch *watch;        /* opts.watch, or the run's own (own_watch) */
	int own_watch;
	int base_state;             /* the base (warm base, baseline): 0 being made while
				       the workers generate, 1 ready, -1 failed */
	pthread_cond_t base_cond;   /* base_state changed */
} run_ctx;

/* The attempts at a target so far: earlier replies and what went wrong with them. */
typedef struct run_history {
	sl_turn *v;
	size_t n, alloc;
} run_history;

/* What one attempt produced, before it is recorded. */
typedef struct attempt_state {
	sl_attempt_rec a;           /* strings borrowed from the fields below */
	sl_edit_list edits;
	sl_completion comp;
	sl_buf prompt, file, diff, feedback, report_json, context;
	sl_buf finding, fix_instr;  /* kind fix: the target's findings, the instructions with them */
	const char *tree;           /* how the candidate's tree was made (static), or NULL */
	int64_t tree_ms;            /* and the time that took */
	sl_apply_report report;
	sl_err aerr;                /* why the attempt's edits were unusable */
	char *chat;
	char *correction_reply;     /* the unusable reply a correction round quoted */
	char correction_key[65];    /* and the key of its request */
	int use_rules;
	int transient;              /* the request failed for a passing reason: the
				       attempt does not count, the target stays pending */
	char usage_note[256];       /* the endpoint's usage numbers were rejected */
} attempt_state;

/*
 * One attempt at a target, passed from step to step (git's rev_info): the
 * run, the worker's repository, the target, the conversation so far, and
 * what the attempt made.  run_process_target() (attempt.c) fills the
 * fields down to n, one attempt after another; attempt() fills those below
 * n and releases them when the attempt is recorded.
 */
typedef struct run_attempt {
	run_ctx *x;
	git_repository *repo;       /* the worker's */
	sl_target_rec *rec;         /* the target's record */
	const sl_target *t;         /* the target as scoped at the base */
	run_history *hist;          /* earlier attempts; a failed one adds its own */
	int64_t n;                  /* the attempt's number */
	attempt_state s;            /* what the attempt produced */
	const char *target_branch;  /* borrowed: the branch the target's candidates go on */
	char *branch;               /* the candidate's branch, once there is a candidate */
	git_oid commit;             /* the candidate's commit */
	sl_changed *changed;        /* its diff, parsed once for every gate while it is judged */
	sl_gate_outcome gates;      /* its gate runs */
	int passed;                 /* it passed every gate */
	int ended;                  /* the attempt ended early (a budget, a failed request,
				       a stop); recorded if it counts */
	int done;                   /* the target reached a final state */
} run_attempt;

/*
 * A run without gates writes each worker's new objects to an in-memory
 * object database (libgit2's mempack) and flushes them as one pack per
 * batch, then creates the batch's branches: no loose file per object and
 * per candidate in the user's .git.  Until its batch is flushed, a
 * proposed candidate's commit and branch exist only in memory, so each is
 * first appended to the worker's journal in the scratch root (before the
 * store records the candidate); the next run restores what a crash lost
 * (run_restore_journals: the commit is rebuilt from the diff the store holds).
 */
/*
 * Candidates per pack.  libgit2 rescans objects/pack whenever it writes an
 * object it does not have, at a cost that grows with the number of packs,
 * so batches are large: a few tens of MB of objects per worker.
 */
#define BATCH_MAX 4096
/*
 * And bytes of objects per batch: the mempack is most of what a run
 * without gates holds (about 5 KB a candidate in a tree of 10,000 files),
 * so a batch is flushed at whichever comes first (issue 29).
 */
#define BATCH_BYTES ((size_t)6 << 20)
/* The batch is full: flush it before the next target (run_batch_flush). */
#define BATCH_FULL(b) ((b)->count >= (b)->max || (b)->bytes >= BATCH_BYTES)

typedef struct objbatch {
	git_repository *repo;       /* the worker's */
	git_odb *odb;
	git_odb_backend *mem;       /* owned by odb */
	char *journal;
	int fd;
	char **branch;              /* queued branches, their commits, and the */
	git_oid *commit;            /* targets and lease epochs they were written for */
	int64_t *target, *epoch;
	size_t n, alloc;
	size_t count;               /* candidates written since the last flush */
	size_t max;                 /* BATCH_MAX (SLUICE_RUN_BATCH in tests) */
	size_t bytes;               /* and the size of their objects */
	git_oid *written;           /* each object the mempack took since the last flush */
	size_t nwritten, awritten;
	int (*mem_write)(git_odb_backend *, const git_oid *, const void *, size_t, git_object_t);
} objbatch;

/* The base's checkout for the baseline: made when the first gate must run there. */
typedef struct base_checkout {
	git_repository *repo;
	const char *scratch, *prefix;
	const git_oid *base;
	sl_worktree *wt;
	char *branch;
	run_ctx *x;                 /* its warm base, when there is one */
	char *layer;                /* the base's layer over the warm base */
} base_checkout;

/* run.c */
void run_notice(const run_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void run_git_lock_take(run_ctx *x);
void run_git_lock_give(run_ctx *x);
int64_t run_attempt_limit(const run_ctx *x, const sl_target_rec *rec);
/*
 * Wait until the base is made and measured: the gates need it, generation
 * does not.  SL_OK when it is ready; SL_ERROR when it failed (the run has
 * failed: nothing is judged).
 */
int run_base_wait(run_ctx *x, sl_err *err);

/* pool.c */
void *run_worker(void *arg);

/* targets.c */
void run_key_of(sl_buf *b, const sl_target *t);
/* Note target id as scoped by this run (shares: another starts where it does). */
void run_target_index_mark(target_index *ix, int64_t id, int shares);
void run_target_index_release(target_index *ix);
/*
 * The target of rec as this run scoped it, read back from the store into
 * *out (the caller releases it: sl_target_release); tmp is scratch space.
 * SL_ENOTFOUND (no message) when this run did not scope it: it no longer
 * matches the query.
 */
int run_scoped_target(run_ctx *x, const sl_target_rec *rec, sl_target *out, sl_buf *tmp,
		      sl_err *err);
char *run_branch_name(const char *prefix, const sl_target_rec *t, const target_index *list);
/* Target records a run holds at once: a chunk (SLUICE_RUN_CHUNK in tests). */
size_t run_chunk_size(void);
int run_testgen_targets(run_ctx *x, sl_target_list *list, sl_err *err);
int run_fix_targets(run_ctx *x, sl_target_list *list, sl_err *err);
int run_load_pending(run_ctx *x, sl_err *err);
/*
 * The next target this run works on, moved into *out (the caller releases
 * it with run_put_target): 1, or 0 when there is none left, or SL_ERROR.
 * The caller holds x->lock.
 */
int run_next_target(run_ctx *x, sl_target_rec *out, sl_err *err);
void run_put_target(run_ctx *x, sl_target_rec *rec);
/* 1 if the target of this key is in the run's shard (every target when it is none). */
int run_in_shard(const run_ctx *x, const char *key);
/* Refuse a base other than opts.base; record the shard in the store (after open_store). */
int run_shard_check(run_ctx *x, int opened, sl_err *err);

/* attempt.c */
int run_process_target(run_ctx *x, git_repository *repo, sl_target_rec *rec,
		       const sl_target *t, sl_err *err);
/*
 * What a run killed during the gates of one of the target's candidates
 * left: a lock file of *branch (the target's branch name) and the branch,
 * where this store made it (deleted only while it points where it was
 * read); where another store holds the name, *branch becomes this store's
 * (run_store_branch()).  The worker holds the target's lease; also for a
 * target the run will not work on (stopped by the budget, no longer
 * matching the query).
 */
int run_clear_leftover(run_ctx *x, git_repository *repo, const sl_target_rec *rec,
		       char **branch, sl_err *err);
/*
 * Where another store holds *branch: this store's own name for the target's
 * branch, under PREFIX-ID8/ (the campaign's prefix and the store's id),
 * replaces it, with a notice; 1 when it changed, 0 when *branch already is
 * that name.
 */
int run_store_branch(run_ctx *x, const sl_target_rec *rec, char **branch);
void run_candidate_message(sl_buf *msg, const run_ctx *x, const char *path,
			   long long start, long long end, long long n, const char *source);

/* model.c */
int run_model_step(run_attempt *a, sl_err *err);
/* Tokens a chat's prompt may count (a byte is at most about a third of a token). */
int64_t run_estimate_tokens(const sl_chat_msg *msgs, size_t n);
/* The reply cap a reservation assumes: max_tokens, else 4096. */
int64_t run_reply_cap(const sl_spec *spec);
/* Tokens counted from bytes, about 4 a token. */
int64_t run_bytes_tokens(size_t len);
/* 1 if the journalled reply jr answered this very chat (same request key). */
int run_journal_matches(const sl_spec *spec, const sl_reply_rec *jr, const sl_chat_msg *msgs,
			size_t n);
/*
 * Journal the attempt's reply c of round in a transaction of its own,
 * fenced by the worker's lease: r (its tokens, cost and notes filled by the
 * caller) gets the attempt, the round and c's request, reply and numbers
 * (borrowed from c for the call).
 */
int run_journal_put(run_attempt *a, int round, const sl_completion *c, sl_reply_rec *r,
		    sl_err *err);

/*
 * judge_model.c: the model judge (spec->judge), after the candidate's
 * other gates passed.  Its gate run goes to a->gates; a reject, an answer
 * that cannot be read or a failed request clear a->passed with the reason
 * in the feedback.  SL_EBUDGET when a budget ran out before the request
 * (nothing spent, a->passed cleared); SL_ERROR when the machinery broke.
 */
#define RUN_JUDGE_ROUND 2           /* the judge's reply in the journal (and in
				       sl_store_export_replies) */
int run_model_judge(run_attempt *a, sl_err *err);

/* The attempt's prompt rendered into a->s.prompt (no chat). */
int run_prompt_text(run_attempt *a, sl_err *err);

/*
 * session.c: the model step of `generate: act`: a session of jailed shell
 * commands over the warm base whose change becomes a->s.edits; a->ended
 * as in run_model_step().
 */
int run_session_step(run_attempt *a, sl_err *err);

/* judge.c */
int run_judge_step(run_attempt *a, sl_err *err);
/*
 * expect.c: a migration's candidate did what was asked (its unit holds no
 * match of the query that must be gone, one of `expect: present`): *ok,
 * the gate record "expect" in a->gates and, when not, the sites left in
 * the feedback.  SL_ERROR when the machinery broke.
 */
int run_expect_check(run_attempt *a, int *ok, sl_err *err);
unsigned run_layer_cap(const run_ctx *x);

/* record.c */
int run_move_target(run_ctx *x, int64_t id, enum sl_target_state state, int64_t attempts,
		    const char *reason, sl_err *err);
int run_record_plain(run_attempt *a, enum sl_target_state state, int64_t attempts,
		     const char *reason, sl_err *err);
int run_record_attempt(run_attempt *a, const char *feedback, sl_err *err);
int run_record_campaign(run_ctx *x, sl_err *err);
void run_recorder_init(run_recorder *r, run_ctx *x);
/* sl_scope_opts.emit: record t (arg: the run_recorder); nonzero: failed, see r->err. */
int run_record_emit(const sl_target *t, void *arg);
/* Record the targets of a list (fix, testgen: chosen after scoping), in its order. */
int run_record_list(run_recorder *r, const sl_target_list *list);
/* Write what is left, and a fix campaign's unplaced findings; then release. */
int run_record_finish(run_recorder *r, sl_err *err);
void run_recorder_release(run_recorder *r);

/* budget.c */
int run_interrupted(const run_ctx *x);
int run_budget_reached(run_ctx *x);
void run_early_stop(run_ctx *x);
/*
 * Provider errors in a row: after SL_RUN_SAME_ERRORS identical ones (the
 * same message) the run fails with SL_EINPUT, and 1 is returned: the
 * caller leaves its target pending.  A request that got a reply resets the
 * count (msg NULL).  Takes x->lock.
 */
#define SL_RUN_SAME_ERRORS 5
int run_provider_error(run_ctx *x, const char *msg);
double run_cost_of(const sl_spec *spec, int64_t tin, int64_t tout);
int run_reserve(run_ctx *x, int64_t tokens, double cost);
void run_settle(run_ctx *x, int64_t reserved, double reserved_cost, int64_t tokens,
		double cost);

/* batch.c: the calling worker's batch, or NULL when objects go straight to disk */
extern _Thread_local objbatch *run_cur_batch;
int run_batch_open(objbatch *b, run_ctx *x, git_repository *repo, size_t seq, sl_err *err);
int run_batch_flush(run_ctx *x, objbatch *b, sl_err *err);
int run_batch_queue(objbatch *b, int64_t target_id, const char *branch,
		    const git_oid *commit, const char *source, sl_err *err);
void run_batch_unqueue(objbatch *b, const char *branch);
int run_batch_close(run_ctx *x, objbatch *b, sl_err *err);
int run_restore_journals(run_ctx *x, sl_err *err);

/* lease.c: the epoch of the lease the calling worker holds on its target */
extern _Thread_local int64_t run_cur_epoch;
int run_begin_fenced(run_ctx *x, int64_t target_id, sl_err *err);
void *run_lease_keeper(void *arg);
void run_lease_ttl_set(run_ctx *x);
int run_keeper_start(run_ctx *x, sl_err *err);
/* Stop the keeper (none running: nothing happens). */
void run_keeper_stop(run_ctx *x);
void run_make_owner(run_ctx *x);
void run_lease_lost(run_ctx *x, const sl_target_rec *rec, const sl_err *err);

/*
 * events.c: the steps said in the watch and the event stream; each hook is
 * one call where its step starts or ends (the calling thread's slot and
 * target are thread-locals).
 */
void run_watch_open(run_ctx *x);
void run_watch_close(run_ctx *x);
void run_watch_workers(run_ctx *x, size_t n, unsigned jobs);
void run_watch_counts(run_ctx *x);          /* x->lock held */
void run_slot_take(run_ctx *x);
void run_step(run_ctx *x, enum sl_step step);
void run_attempt_step(run_attempt *a, enum sl_step step);   /* and the attempt's number */
void run_ev_start(run_ctx *x);
void run_ev_end(run_ctx *x, const char *outcome);
void run_ev_claimed(run_ctx *x, const sl_target_rec *rec);
void run_ev_done(run_ctx *x, const sl_target_rec *after, int64_t started_ms);
void run_ev_left(run_ctx *x);               /* the target was dropped: no event */
void run_ev_request(run_attempt *a, int round);
void run_ev_answered(run_attempt *a, int rc, int64_t tin, int64_t tout, double cost);
void run_ev_applied(run_attempt *a);
void run_ev_candidate(run_attempt *a);
void run_ev_gate(void *ctx, const char *gate, const char *where, const sl_gate_run_rec *rec);
void run_ev_judged(run_ctx *x);
void run_ev_budget(run_ctx *x);
void run_ev_stop(run_ctx *x, const char *why);
void run_rate_text(run_ctx *x, sl_buf *out);

/* base.c */
int run_open_gating(run_ctx *x, sl_err *err);
int run_baseline_first(run_ctx *x, sl_err *err);
int run_baseline(run_ctx *x, sl_err *err);
/* `sluice baseline`: every gate measured (or loaded) under the baseline lease, described into out. */
int run_baseline_describe(run_ctx *x, int json, sl_buf *out, sl_err *err);
int run_base_checkout_dir(void *ctx, sl_gate_tree *out, sl_err *err);
int run_base_checkout_release(base_checkout *b, int ret, sl_err *err);

#endif
