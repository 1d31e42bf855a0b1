/*
 * journal.h - what a resumed target needs: every model reply recorded the
 * moment it arrives (before any gate runs), and the conversation of earlier
 * attempts rebuilt from the store.
 *
 * A reply is journalled under (target, attempt n, round: 0 for the request,
 * 1 for the format-correction round, 2 for the model judge's) in a
 * transaction of its own, so a kill
 * after it arrived never pays for it again: the resumed attempt takes the
 * journalled reply instead of asking the model.  Tokens and cost count once:
 * sl_journal_usage() adds the journalled replies whose attempt is not
 * recorded yet to what the attempts say (sl_store_usage).
 *
 * Records returned are owned by the caller (release functions below).
 */
#ifndef SL_JOURNAL_H
#define SL_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "storage/store.h"

typedef struct sl_reply_rec {
	int64_t target_id, n, round;
	char *request_key, *request; /* may be NULL */
	char *reply;
	int64_t tokens_in, tokens_out; /* as billed (validated); -1 unknown */
	double cost;
	int64_t http_status, latency_ms, retries;
	int truncated;
	char *usage_note;           /* why the endpoint's usage numbers were not taken */
	int tokens_estimated;       /* the tokens were counted from bytes (none reported) */
} sl_reply_rec;

void sl_reply_rec_release(sl_reply_rec *r);
/* Journal a reply in a transaction of its own (do not call inside one). */
int sl_journal_reply_add(sl_store *st, const sl_reply_rec *in, sl_err *err);
/* The same inside the caller's transaction (a run checks its lease in it first). */
int sl_journal_reply_put(sl_store *st, const sl_reply_rec *in, sl_err *err);
/* The journalled reply of (target, n, round); SL_ENOTFOUND if there is none. */
int sl_journal_reply_get(sl_store *st, int64_t target_id, int64_t n, int64_t round,
			 sl_reply_rec *out, sl_err *err);
/* Tokens and cost of journalled replies whose attempt is not recorded yet. */
int sl_journal_usage(sl_store *st, int64_t campaign_id, int64_t *tokens_out, double *cost_out,
		     sl_err *err);
/* Inside the caller's transaction: the feedback the attempt produced, and its usage note. */
int sl_journal_attempt_note(sl_store *st, int64_t attempt_id, const char *feedback,
			    const char *usage_note, sl_err *err);

/* One earlier attempt, as the next prompt carries it. */
typedef struct sl_turn {
	char *reply;                /* the model's reply; NULL for rules */
	char *feedback;             /* what went wrong (never NULL) */
} sl_turn;

/*
 * The target's attempts in order, with their feedback: the gate or apply
 * failure recorded with the attempt (for stores older than the feedback
 * column: the target's last reason), or, for a candidate a reviewer
 * rejected, "A reviewer rejected this change: REASON".
 */
int sl_journal_history(sl_store *st, int64_t target_id, sl_turn **out, size_t *n, sl_err *err);
void sl_turn_list_free(sl_turn *v, size_t n);

#endif
