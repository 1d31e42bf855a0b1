/*
 * store.h - the campaign store: one SQLite file holding every campaign run
 * against it, every target, attempt, candidate, gate run and decision.
 *
 * The file is opened in WAL mode with foreign keys on; tables are STRICT;
 * the schema is created and upgraded by numbered migrations tracked with
 * PRAGMA user_version (storage/migrations.c), each applied in its own
 * transaction.  Callers group the writes of one state change of a target in
 * sl_store_begin()/sl_store_commit(), so a kill at any instant loses at most
 * the step in flight and `sluice run` resumes from the last committed state.
 *
 * Records returned by the read functions are owned by the caller and freed
 * with the matching *_release / *_list_free function.
 */
#ifndef SL_STORE_H
#define SL_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"

typedef struct sl_store sl_store;

/*
 * Open (creating the file and its directory when create is set) and migrate.
 * A store may be used by any number of threads: each gets a connection of
 * its own on its first call, closed when the thread ends.  sl_store_free()
 * closes the rest; call it once no other thread uses the store.  If st is
 * NULL nothing occurs.
 */
int sl_store_open(sl_store **out, const char *path, int create, sl_err *err);
/* Open an existing store for reading only, whoever may write it meanwhile. */
int sl_store_open_readonly(sl_store **out, const char *path, sl_err *err);
void sl_store_free(sl_store *st);
int sl_store_schema_version(sl_store *st);

/*
 * The store's identity: 16 hex digits made at random with the store (or
 * when an older store was migrated), kept in it for ever.  A candidate's
 * commit names it, so runs of other stores leave its branches alone.
 */
#define SL_STORE_ID_LEN 16
int sl_store_id(char out[SL_STORE_ID_LEN + 1], sl_store *st, sl_err *err);

/*
 * Transactions, per thread.  sl_store_begin() takes the file's write lock
 * (waiting for another thread's or process's writer) for this thread's
 * writes until sl_store_commit() or sl_store_rollback(); other threads read
 * the last committed rows meanwhile.  A write outside a transaction is a
 * transaction of its own.  Nesting is a bug; sl_store_rollback() without a
 * transaction does nothing.
 */
int sl_store_begin(sl_store *st, sl_err *err);
int sl_store_commit(sl_store *st, sl_err *err);
void sl_store_rollback(sl_store *st);

/* Sum of tokens and cost over the campaign's attempts (for campaign-wide budgets). */
int sl_store_usage(sl_store *st, int64_t campaign_id, int64_t *tokens_out, double *cost_out,
		   sl_err *err);

typedef struct sl_campaign_rec {
	int64_t id;
	char *name, *spec_path, *spec_text, *repo_path, *base_rev, *base_oid;
	char *branch_prefix, *created_at;
} sl_campaign_rec;

void sl_campaign_rec_release(sl_campaign_rec *c);
/* SL_ENOTFOUND if no campaign has that name. */
int sl_store_campaign_get(sl_store *st, const char *name, sl_campaign_rec *out, sl_err *err);
int sl_store_campaign_add(sl_store *st, const sl_campaign_rec *in, int64_t *id_out, sl_err *err);
int sl_store_campaign_list(sl_store *st, sl_campaign_rec **out, size_t *n, sl_err *err);
void sl_campaign_list_free(sl_campaign_rec *v, size_t n);

/*
 * Target states.  Their names ("pending", "proposed", ...) exist only in
 * the store's rows and in JSON; code compares the enum.
 */
enum sl_target_state {
	SL_T_ANY = -1,              /* a filter that takes every state; what an unknown
				       name reads as */
	SL_T_PENDING = 0,           /* not finished: `sluice run` works on it */
	SL_T_PROPOSED,              /* a candidate passed every gate */
	SL_T_FAILED,                /* every attempt failed */
	SL_T_SKIPPED,               /* nothing to try (no rule applies, no model) */
	SL_T_ACCEPTED,              /* a reviewer accepted its candidate */
	SL_T_REJECTED,              /* a reviewer rejected its candidate */
	SL_T_BUDGET,                /* a budget ran out first: a later run continues it */
	SL_T_NSTATES
};

/* The state's name ("pending" ...); "?" for a value that is none. */
const char *sl_target_state_name(int state);
/* The state named name, or SL_T_ANY when there is none. */
int sl_target_state_parse(const char *name);

typedef struct sl_target_rec {
	int64_t id, campaign_id;
	char *key;                  /* path:start_byte-end_byte */
	char *path, *lang, *blob, *unit;
	int64_t start_byte, end_byte, start_line, start_col, end_line, end_col, nsites;
	enum sl_target_state state;
	int64_t attempts;
	char *reason;               /* why it failed or was skipped; may be NULL */
	int64_t attempt_base;       /* attempts made before the last `sluice retry` */
} sl_target_rec;

void sl_target_rec_release(sl_target_rec *t);
void sl_target_list_free(sl_target_rec *v, size_t n);
/* Insert unless (campaign, key) exists; *id_out is the row either way. */
int sl_store_target_add(sl_store *st, const sl_target_rec *in, int64_t *id_out,
			int *inserted_out, sl_err *err);
/*
 * What scoping gave for target id (sl_target_encode's bytes), written (or
 * replaced) and read back into out; SL_ENOTFOUND when none was written.
 */
int sl_store_target_scope_put(sl_store *st, int64_t id, const void *data, size_t len,
			      sl_err *err);
int sl_store_target_scope_get(sl_store *st, int64_t id, sl_buf *out, sl_err *err);
/*
 * Targets of a campaign in scope order (path, then position, an enclosing
 * unit before what it holds): the same order in a merged store as in one
 * that scoped them; state SL_T_ANY = all.
 */
int sl_store_targets(sl_store *st, int64_t campaign_id, int state,
		     sl_target_rec **out, size_t *n, sl_err *err);
int sl_store_target_get(sl_store *st, int64_t id, sl_target_rec *out, sl_err *err);
/*
 * The targets a run may work on (pending, or stopped by a budget) whose id
 * is above after_id, in id order, at most limit: a run reads them a chunk
 * at a time.  *out is the caller's (sl_target_list_free).
 */
int sl_store_targets_open(sl_store *st, int64_t campaign_id, int64_t after_id, size_t limit,
			  sl_target_rec **out, size_t *n, sl_err *err);
/* How many targets of the campaign are pending or stopped by a budget. */
int sl_store_targets_open_count(sl_store *st, int64_t campaign_id, size_t *out, sl_err *err);
int sl_store_target_update(sl_store *st, int64_t id, int state, int64_t attempts,
			   const char *reason, sl_err *err);

/* Attempt outcomes; names ("candidate" ...) only in the store's rows and in JSON. */
enum sl_attempt_outcome {
	SL_A_NONE = 0,              /* not decided yet: nothing to record */
	SL_A_CANDIDATE,             /* edits applied: a candidate for the gates */
	SL_A_PARSE_ERROR,           /* the reply did not parse */
	SL_A_APPLY_ERROR,           /* the edits did not apply */
	SL_A_SYNTAX_ERROR,          /* the edits broke the syntax (older stores) */
	SL_A_PROVIDER_ERROR,        /* the model could not be asked */
	SL_A_NO_EDIT,               /* no rule applies and there is no model */
	SL_A_NOUTCOMES
};

/* The outcome's name ("candidate" ...); "?" for SL_A_NONE or a value that is none. */
const char *sl_attempt_outcome_name(int outcome);
/* The outcome named name, or SL_A_NONE when there is none. */
int sl_attempt_outcome_parse(const char *name);

typedef struct sl_attempt_rec {
	int64_t id, target_id, n;
	char *source;               /* "rules", "openai", "command" */
	int by_rules;               /* source is the rules: no model was asked */
	char *prompt, *reply;       /* may be NULL (rules) */
	char *request;              /* the request body sent (never holds a key); may be NULL */
	char *request_key;          /* hash of the request, for replay; may be NULL */
	int64_t tokens_in, tokens_out, latency_ms, http_status, retries;
	int64_t format_errors;      /* replies that did not parse (one correction round) */
	char *format_key, *format_reply; /* the request key and reply a correction round
					    replaced; NULL when there was none */
	double cost;                /* in the price table's currency; 0 if unknown */
	int tokens_estimated;       /* the provider did not report the tokens (of a round):
				       counted from the bytes sent and received */
	enum sl_attempt_outcome outcome;
	char *error;                /* may be NULL */
	char *apply_report;         /* JSON from apply; may be NULL */
	char *created_at;
} sl_attempt_rec;

void sl_attempt_rec_release(sl_attempt_rec *a);
void sl_attempt_list_free(sl_attempt_rec *v, size_t n);
int sl_store_attempt_add(sl_store *st, const sl_attempt_rec *in, int64_t *id_out, sl_err *err);
int sl_store_attempts(sl_store *st, int64_t target_id, sl_attempt_rec **out, size_t *n, sl_err *err);
/*
 * Write every recorded reply (with its request key) as JSON lines in the
 * format sl_replay_record() writes, for the replay provider; a session's
 * steps with their positions (sl_step_export).
 */
int sl_store_export_replies(sl_store *st, const char *path, sl_err *err);

/* Candidate states; names ("passed" ...) only in the store's rows and in JSON. */
enum sl_candidate_state {
	SL_C_ANY = -1,              /* a filter that takes every state; what an unknown
				       name reads as */
	SL_C_PASSED = 0,            /* every gate passed: proposed for review */
	SL_C_FAILED,                /* a gate said no */
	SL_C_ERROR,                 /* a gate could not run */
	SL_C_NSTATES
};

/* The state's name ("passed" ...); "?" for a value that is none. */
const char *sl_candidate_state_name(int state);
/* The state named name, or SL_C_ANY when there is none. */
int sl_candidate_state_parse(const char *name);

/*
 * A reviewer's decision on a proposed candidate; names ("accept",
 * "reject") only in the store's rows, JSON and the command line.
 */
enum sl_decision {
	SL_D_NONE = 0,              /* not decided */
	SL_D_ACCEPT,
	SL_D_REJECT,
	SL_D_N
};

/* "accept", "reject"; NULL for SL_D_NONE or a value that is none. */
const char *sl_decision_name(int decision);
/* The decision named name, or SL_D_NONE when there is none. */
int sl_decision_parse(const char *name);
/* The target state a decision leaves: SL_T_ACCEPTED or SL_T_REJECTED. */
int sl_decision_target_state(int decision);

typedef struct sl_candidate_rec {
	int64_t id, attempt_id, target_id, campaign_id;
	char *diff, *commit_oid;
	char *branch;               /* set when proposed; NULL otherwise */
	enum sl_candidate_state state;
	enum sl_decision decision;  /* the latest, SL_D_NONE if none */
	char *decision_reason;      /* the latest decision's reason; may be NULL */
	char *created_at;
	char *tree;                 /* how its tree was made: "overlay" (the warm base and
				       a layer) or "worktree"; NULL = not recorded */
	int64_t tree_ms;            /* time spent making it */
	/* joined from the target, for display: */
	char *path;
	int64_t start_line, end_line, attempt_n;
} sl_candidate_rec;

void sl_candidate_rec_release(sl_candidate_rec *c);
void sl_candidate_list_free(sl_candidate_rec *v, size_t n);
int sl_store_candidate_add(sl_store *st, const sl_candidate_rec *in, int64_t *id_out, sl_err *err);
/* A candidate rebuilt after a crash (its commit was never written) has a new commit id. */
int sl_store_candidate_set_commit(sl_store *st, int64_t id, const char *commit_oid, sl_err *err);
/*
 * The branch target's passed candidate with commit_oid is proposed on, when
 * its run had to take another name (another store wrote the one it queued).
 */
int sl_store_candidate_set_branch(sl_store *st, int64_t target_id, const char *commit_oid,
				  const char *branch, sl_err *err);
/* SL_ENOTFOUND when there is no candidate with that id. */
int sl_store_candidate_get(sl_store *st, int64_t id, sl_candidate_rec *out, sl_err *err);
/*
 * Candidates of a campaign by target in scope order (sl_store_targets),
 * then attempt; state SL_C_ANY = all.
 */
int sl_store_candidates(sl_store *st, int64_t campaign_id, int state,
			sl_candidate_rec **out, size_t *n, sl_err *err);
/*
 * The same, one at a time: fn gets each (borrowed for the call) until it
 * returns nonzero, which is returned.  Memory holds one candidate, not the
 * campaign's.
 */
int sl_store_candidates_each(sl_store *st, int64_t campaign_id, int state,
			     int (*fn)(const sl_candidate_rec *c, void *arg), void *arg, sl_err *err);

/*
 * Verdicts of gate runs; names ("pass" ...) only in the store's rows, JSON
 * and reports.  A cached verdict is one of these with the run's cached flag.
 */
typedef enum sl_verdict {
	SL_VERDICT_PASS = 0,
	SL_VERDICT_FAIL,
	SL_VERDICT_TIMEOUT,
	SL_VERDICT_ERROR,           /* the machinery, or a missing command: exit 126/127 */
	SL_VERDICT_SKIP,            /* fails on the base too and the campaign allows it */
	SL_VERDICT_N
} sl_verdict;

/* "pass", "fail", "timeout", "error", "skip"; "unknown" for a value that is none. */
const char *sl_verdict_name(sl_verdict v);
/* The verdict named name, or -1 when there is none. */
int sl_verdict_parse(const char *name);

typedef struct sl_gate_run_rec {
	int64_t id, candidate_id;
	char *gate;
	sl_verdict verdict;
	int64_t exit_status, duration_ms, output_bytes;
	int64_t jail_ms;            /* of duration_ms: setting the jail up (0 = unknown) */
	char *output_tail;
	int64_t cached;             /* the verdict came from the cache */
	char *note;                 /* why a verdict is what it is (skip, flaky, cache); may be NULL */
	char *jail;                 /* the jail's layers ("unsafe: ..." when forced); may be NULL */
} sl_gate_run_rec;

void sl_gate_run_list_free(sl_gate_run_rec *v, size_t n);
int sl_store_gate_run_add(sl_store *st, const sl_gate_run_rec *in, sl_err *err);
int sl_store_gate_runs(sl_store *st, int64_t candidate_id, sl_gate_run_rec **out, size_t *n,
		       sl_err *err);

/* Record a decision (SL_D_ACCEPT or SL_D_REJECT) and move the target to accepted/rejected. */
int sl_store_decide(sl_store *st, int64_t candidate_id, int decision,
		    const char *reason, sl_err *err);

/* A gate's runs: cached verdicts count only as cached, never as passed. */
typedef struct sl_funnel_gate {
	char *gate;
	int64_t runs, passed, failed, skipped, cached, errors;  /* failed: fail or timeout */
	int judge;                  /* a model judge's (its runs' note: "judged by ...") */
	int64_t reviewed_accept, reviewed_reject; /* of the candidates it passed, those
				       whose latest decision accepts / rejects */
} sl_funnel_gate;

typedef struct sl_funnel {
	int64_t targets, pending, proposed, failed, skipped, budget; /* targets by state
								   (proposed: proposed,
								   accepted or rejected) */
	int64_t accepted, rejected; /* candidates whose latest decision says so */
	int64_t attempts, candidates, tokens_in, tokens_out;
	int64_t apply_errors, parse_errors, provider_errors, syntax_errors;
	int64_t format_errors;      /* unusable replies, corrected or not */
	int64_t tokens_estimated;   /* of tokens_in + tokens_out: those of attempts whose
				       tokens were counted from bytes (none reported) */
	int64_t tier_exact, tier_moved, tier_whitespace, tier_refused; /* edits, by how apply
								   placed them */
	double cost;
	int64_t proposed_rules, proposed_model; /* proposed targets, by where the edit of
						   their latest passed candidate came
						   from: they sum to proposed */
	sl_funnel_gate *gates;      /* in order of first run */
	size_t ngates;
} sl_funnel;

int sl_store_funnel(sl_store *st, int64_t campaign_id, sl_funnel *out, sl_err *err);
void sl_funnel_release(sl_funnel *f);

#endif
