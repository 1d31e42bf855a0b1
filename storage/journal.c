/*
 * journal.c - the reply journal and the rebuilt conversation (journal.h).
 *
 * Reads and writes the replies table and the feedback and usage_note
 * columns of attempts (migration "runs that survive").
 */
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "storage/journal.h"
#include "storage/store_internal.h"
#include "common/util.h"

void sl_reply_rec_release(sl_reply_rec *r)
{
	if (!r)
		return;
	free(r->request_key);
	free(r->request);
	free(r->reply);
	free(r->usage_note);
	memset(r, 0, sizeof(*r));
}

int sl_journal_reply_put(sl_store *st, const sl_reply_rec *in, sl_err *err)
{
	sqlite3_stmt *s = NULL;
	char now[32];

	if (!(s = sl_store_prepare(st, "INSERT OR REPLACE INTO replies (target_id, "
			       "n, round, request_key, request, reply, tokens_in, tokens_out, cost, "
			       "http_status, latency_ms, retries, truncated, usage_note, created_at, "
			       "tokens_estimated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       err)))
		return SL_ERROR;
	sl_iso8601_now(now);
	sqlite3_bind_int64(s, 1, in->target_id);
	sqlite3_bind_int64(s, 2, in->n);
	sqlite3_bind_int64(s, 3, in->round);
	sl_store_bind_text(s, 4, in->request_key);
	sl_store_bind_text(s, 5, in->request);
	sl_store_bind_text(s, 6, in->reply ? in->reply : "");
	sqlite3_bind_int64(s, 7, in->tokens_in);
	sqlite3_bind_int64(s, 8, in->tokens_out);
	sqlite3_bind_double(s, 9, in->cost);
	sqlite3_bind_int64(s, 10, in->http_status);
	sqlite3_bind_int64(s, 11, in->latency_ms);
	sqlite3_bind_int64(s, 12, in->retries);
	sqlite3_bind_int(s, 13, in->truncated);
	sl_store_bind_text(s, 14, in->usage_note);
	sl_store_bind_text(s, 15, now);
	sqlite3_bind_int(s, 16, in->tokens_estimated);
	return sl_store_exec(st, s, "journal reply", err);
}

int sl_journal_reply_add(sl_store *st, const sl_reply_rec *in, sl_err *err)
{
	int ret;

	if (sl_store_begin(st, err))
		return SL_ERROR;
	if ((ret = sl_journal_reply_put(st, in, err))) {
		sl_store_rollback(st);
		return ret;
	}
	return sl_store_commit(st, err);
}

static void read_reply(sqlite3_stmt *s, void *row)
{
	sl_reply_rec *r = row;

	r->request_key = sl_store_col_text(s, 0);
	r->request = sl_store_col_text(s, 1);
	r->reply = sl_store_col_text(s, 2);
	r->tokens_in = sqlite3_column_int64(s, 3);
	r->tokens_out = sqlite3_column_int64(s, 4);
	r->cost = sqlite3_column_double(s, 5);
	r->http_status = sqlite3_column_int64(s, 6);
	r->latency_ms = sqlite3_column_int64(s, 7);
	r->retries = sqlite3_column_int64(s, 8);
	r->truncated = sqlite3_column_int(s, 9);
	r->usage_note = sl_store_col_text(s, 10);
	r->tokens_estimated = sqlite3_column_int(s, 11);
}

int sl_journal_reply_get(sl_store *st, int64_t target_id, int64_t n, int64_t round,
			 sl_reply_rec *out, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "SELECT request_key, request, reply, "
					   "tokens_in, tokens_out, cost, http_status, latency_ms, "
					   "retries, truncated, usage_note, tokens_estimated "
					   "FROM replies WHERE "
					   "target_id = ? AND n = ? AND round = ?", err);
	int ret;

	memset(out, 0, sizeof(*out));
	if (s) {
		sqlite3_bind_int64(s, 1, target_id);
		sqlite3_bind_int64(s, 2, n);
		sqlite3_bind_int64(s, 3, round);
	}
	if ((ret = sl_store_row(st, s, read_reply, out, "read journal", err)))
		return ret;
	out->target_id = target_id;
	out->n = n;
	out->round = round;
	return SL_OK;
}

int sl_journal_usage(sl_store *st, int64_t campaign_id, int64_t *tokens_out, double *cost_out,
		     sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc;

	*tokens_out = 0;
	*cost_out = 0;
	/* and the steps of sessions (generate: act) whose attempt is not recorded yet */
	if (!(s = sl_store_prepare(st, "SELECT total(tk), total(c) FROM (SELECT "
			       "max(r.tokens_in, 0) + max(r.tokens_out, 0) AS tk, r.cost AS c "
			       "FROM replies r JOIN targets t "
			       "ON t.id = r.target_id WHERE t.campaign_id = ? AND NOT EXISTS "
			       "(SELECT 1 FROM attempts a WHERE a.target_id = r.target_id "
			       "AND a.n = r.n) UNION ALL SELECT max(p.tokens_in, 0) + "
			       "max(p.tokens_out, 0), p.cost FROM steps p JOIN targets t ON "
			       "t.id = p.target_id WHERE t.campaign_id = ? AND NOT EXISTS "
			       "(SELECT 1 FROM attempts a WHERE a.target_id = p.target_id "
			       "AND a.n = p.n))", err)))
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, campaign_id);
	sqlite3_bind_int64(s, 2, campaign_id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		double t = sqlite3_column_double(s, 0);

		*tokens_out = t < 9e18 ? (int64_t)t : INT64_MAX;
		*cost_out = sqlite3_column_double(s, 1);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? SL_OK : sl_store_fail(st, err, "journal usage");
}

int sl_journal_attempt_note(sl_store *st, int64_t attempt_id, const char *feedback,
			    const char *usage_note, sl_err *err)
{
	sqlite3_stmt *s = NULL;

	if (!(s = sl_store_prepare(st, "UPDATE attempts SET feedback = ?, "
			       "usage_note = ? WHERE id = ?", err)))
		return SL_ERROR;
	sl_store_bind_text(s, 1, feedback && *feedback ? feedback : NULL);
	sl_store_bind_text(s, 2, usage_note);
	sqlite3_bind_int64(s, 3, attempt_id);
	return sl_store_exec(st, s, "note attempt", err);
}

void sl_turn_list_free(sl_turn *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].reply);
		free(v[i].feedback);
	}
	free(v);
}

/* A turn: the reply, and why it was sent back (a reviewer's reason first). */
static void read_turn(sqlite3_stmt *s, void *row)
{
	sl_turn *t = row;
	sl_buf fb = SL_BUF_INIT;
	const char *rejected = (const char *)sqlite3_column_text(s, 1);
	const char *why = (const char *)sqlite3_column_text(s, 2);

	t->reply = sl_store_col_text(s, 0);
	if (rejected)
		sl_buf_addf(&fb, "A reviewer rejected this change: %s", rejected);
	else if (why)
		sl_buf_adds(&fb, why);
	else
		sl_buf_adds(&fb, "This change was sent back for another attempt.");
	t->feedback = sl_buf_detach(&fb, NULL);
}

int sl_journal_history(sl_store *st, int64_t target_id, sl_turn **out, size_t *n, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "SELECT a.reply, (SELECT d.reason FROM "
			       "candidates c JOIN decisions d ON d.candidate_id = c.id WHERE "
			       "c.attempt_id = a.id AND d.decision = 'reject' ORDER BY d.id DESC "
			       "LIMIT 1), coalesce(a.feedback, CASE WHEN a.n = t.attempts THEN "
			       "t.reason END, a.error) FROM attempts a JOIN targets t "
			       "ON t.id = a.target_id WHERE a.target_id = ? ORDER BY a.n", err);

	if (s)
		sqlite3_bind_int64(s, 1, target_id);
	if (!sl_store_rows(st, s, sizeof(**out), read_turn, (void **)out, n, "read history",
			   err))
		return SL_OK;
	sl_turn_list_free(*out, *n);
	*out = NULL;
	*n = 0;
	return SL_ERROR;
}
