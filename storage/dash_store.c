/*
 * dash_store.c - the dashboard's reads (dash_store.h): activity over time,
 * gates' verdicts and duration histograms, targets found by a filter, and
 * the campaign's stamp.  Every query is scoped to one campaign and only
 * reads; `sluice serve` opens the store read-only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/dash_store.h"
#include "storage/store_internal.h"
#include "common/buf.h"
#include "common/util.h"

const double sl_dash_bucket_s[SL_DASH_NBUCKETS] = { 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800 };

/* The step that shows the campaign's attempts in at most a few hundred points. */
static int series_step(sl_store *st, int64_t campaign_id, enum sl_dash_step *step, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "SELECT coalesce((julianday(max(a.created_at)) - "
					   "julianday(min(a.created_at))) * 24, 0) FROM attempts a "
					   "JOIN targets t ON t.id = a.target_id WHERE "
					   "t.campaign_id = ?", err);
	double hours;
	int rc;

	if (!s)
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, campaign_id);
	rc = sqlite3_step(s);
	hours = rc == SQLITE_ROW ? sqlite3_column_double(s, 0) : 0;
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW)
		return sl_store_fail(st, err, "read the campaign's span");
	*step = hours < 3 ? SL_DASH_MINUTE : hours < 24 * 7 ? SL_DASH_HOUR : SL_DASH_DAY;
	return SL_OK;
}

static void read_point(sqlite3_stmt *s, void *row)
{
	sl_dash_point *p = row;
	const char *t = (const char *)sqlite3_column_text(s, 0);

	snprintf(p->t, sizeof(p->t), "%s", t ? t : "?");
	p->attempts = sqlite3_column_int64(s, 1);
	p->tokens = sqlite3_column_int64(s, 2);
	p->cost = sqlite3_column_double(s, 3);
	p->decided = sqlite3_column_int64(s, 4);
	p->accepted = sqlite3_column_int64(s, 5);
	p->landed_checked = sqlite3_column_int64(s, 6);
	p->landed_unchanged = sqlite3_column_int64(s, 7);
}

int sl_store_dash_series(sl_store *st, int64_t campaign_id, sl_dash_point **out, size_t *n,
			 enum sl_dash_step *step_out, sl_err *err)
{
	static const int cut[] = { [SL_DASH_MINUTE] = 16, [SL_DASH_HOUR] = 13, [SL_DASH_DAY] = 10 };
	sqlite3_stmt *s;
	int ret;

	*out = NULL;
	*n = 0;
	if ((ret = series_step(st, campaign_id, step_out, err)))
		return ret;
	/* the latest decision of each candidate, as the outcome metrics count them */
	s = sl_store_prepare(st, "WITH ev(t, at, tok, cost, dec, acc, lc, lu) AS ("
			     "SELECT a.created_at, 1, max(a.tokens_in, 0) + max(a.tokens_out, 0), "
			     "a.cost, 0, 0, 0, 0 FROM attempts a JOIN targets t ON t.id = a.target_id "
			     "WHERE t.campaign_id = ?1 UNION ALL "
			     "SELECT d.decided_at, 0, 0, 0, 1, d.decision = 'accept', 0, 0 "
			     "FROM decisions d JOIN candidates c ON c.id = d.candidate_id "
			     "JOIN targets t ON t.id = c.target_id WHERE t.campaign_id = ?1 AND "
			     "d.id = (SELECT max(id) FROM decisions WHERE candidate_id = c.id) "
			     "UNION ALL SELECT p.updated_at, 0, 0, 0, 0, 0, 1, p.landed_unchanged = 1 "
			     "FROM published p WHERE p.campaign_id = ?1 AND p.landed_unchanged >= 0) "
			     "SELECT * FROM (SELECT substr(t, 1, ?2) AS b, sum(at), sum(tok), "
			     "sum(cost), sum(dec), sum(acc), sum(lc), sum(lu) FROM ev GROUP BY b "
			     "ORDER BY b DESC LIMIT ?3) ORDER BY b", err);
	if (s) {
		sqlite3_bind_int64(s, 1, campaign_id);
		sqlite3_bind_int(s, 2, cut[*step_out]);
		sqlite3_bind_int(s, 3, SL_DASH_MAX_POINTS);
	}
	return sl_store_rows(st, s, sizeof(**out), read_point, (void **)out, n,
			     "read the campaign's activity", err);
}

void sl_dash_gate_list_free(sl_dash_gate *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].gate);
	free(v);
}

static void read_gate(sqlite3_stmt *s, void *row)
{
	sl_dash_gate *g = row;
	int c = 1;

	g->gate = sl_store_col_text(s, 0);
	for (int v = 0; v < SL_VERDICT_N; v++)
		g->verdicts[v] = sqlite3_column_int64(s, c++);
	g->cached = sqlite3_column_int64(s, c++);
	g->runs = sqlite3_column_int64(s, c++);
	g->sum_s = sqlite3_column_double(s, c++) / 1000.0;
	for (int i = 0; i < SL_DASH_NBUCKETS; i++)
		g->le[i] = sqlite3_column_int64(s, c++);
}

int sl_store_dash_gates(sl_store *st, int64_t campaign_id, sl_dash_gate **out, size_t *n,
			sl_err *err)
{
	sl_buf sql = SL_BUF_INIT;
	sqlite3_stmt *s;
	int ret;

	*out = NULL;
	*n = 0;
	sl_buf_adds(&sql, "SELECT g.gate");
	for (int v = 0; v < SL_VERDICT_N; v++)
		sl_buf_addf(&sql, ", sum(g.verdict = '%s')", sl_verdict_name((sl_verdict)v));
	sl_buf_adds(&sql, ", sum(g.cached <> 0), sum(g.cached = 0), "
		    "coalesce(sum(CASE WHEN g.cached = 0 THEN g.duration_ms END), 0)");
	for (int i = 0; i < SL_DASH_NBUCKETS; i++)
		sl_buf_addf(&sql, ", sum(g.cached = 0 AND g.duration_ms <= %.0f)",
			    sl_dash_bucket_s[i] * 1000);
	sl_buf_adds(&sql, " FROM gate_runs g JOIN candidates c ON c.id = g.candidate_id "
		    "JOIN targets t ON t.id = c.target_id WHERE t.campaign_id = ? "
		    "GROUP BY g.gate ORDER BY min(g.id)");
	s = sl_store_prepare(st, sql.buf, err);
	if (s)
		sqlite3_bind_int64(s, 1, campaign_id);
	ret = sl_store_rows(st, s, sizeof(**out), read_gate, (void **)out, n,
			    "read the gates' runs", err);
	sl_buf_release(&sql);
	return ret;
}

#define TARGETS_WHERE \
	" FROM targets t WHERE t.campaign_id = ?1 AND (?2 IS NULL OR t.state = ?2)" \
	" AND (?3 IS NULL OR EXISTS (SELECT 1 FROM candidates c JOIN gate_runs g" \
	"  ON g.candidate_id = c.id WHERE c.target_id = t.id AND g.gate = ?3" \
	"  AND g.verdict IN ('fail', 'timeout', 'error')))" \
	" AND (?4 IS NULL OR t.path = ?4 OR (?5 AND t.path GLOB ?4) OR" \
	"  substr(t.path, 1, length(rtrim(?4, '/')) + 1) = rtrim(?4, '/') || '/')" \
	" AND (?6 IS NULL OR instr(lower(t.path || ' ' || t.unit || ' ' ||" \
	"  coalesce(t.reason, '')), lower(?6)) > 0)"

/* The statement sql with the query's values bound. */
static sqlite3_stmt *targets_stmt(sl_store *st, const char *sql, int64_t campaign_id,
				  const sl_dash_query *q, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, sql, err);

	if (!s)
		return NULL;
	sqlite3_bind_int64(s, 1, campaign_id);
	sl_store_bind_text(s, 2, q->state == SL_T_ANY ? NULL : sl_target_state_name(q->state));
	sl_store_bind_text(s, 3, q->gate);
	sl_store_bind_text(s, 4, q->file);
	sqlite3_bind_int(s, 5, q->file && strpbrk(q->file, "*?["));
	sl_store_bind_text(s, 6, q->text);
	sqlite3_bind_int64(s, 7, q->limit ? (int64_t)q->limit : -1);
	sqlite3_bind_int64(s, 8, (int64_t)q->offset);
	return s;
}

static void read_id(sqlite3_stmt *s, void *row)
{
	*(int64_t *)row = sqlite3_column_int64(s, 0);
}

int sl_store_dash_targets(sl_store *st, int64_t campaign_id, const sl_dash_query *q,
			  int64_t **ids_out, size_t *n, int64_t *total_out, sl_err *err)
{
	sqlite3_stmt *s;
	int64_t *total = NULL;
	size_t ntotal = 0;
	int ret;

	*ids_out = NULL;
	*n = 0;
	*total_out = 0;
	s = targets_stmt(st, "SELECT t.id" TARGETS_WHERE " ORDER BY t.id LIMIT ?7 OFFSET ?8",
			 campaign_id, q, err);
	if ((ret = sl_store_rows(st, s, sizeof(**ids_out), read_id, (void **)ids_out, n,
				 "find targets", err)))
		return ret;
	/* ?7 and ?8 are bound but unused: the count takes the same bindings */
	s = targets_stmt(st, "SELECT count(*) + 0 * ?7 * ?8" TARGETS_WHERE, campaign_id, q, err);
	ret = sl_store_rows(st, s, sizeof(*total), read_id, (void **)&total, &ntotal,
			    "count targets", err);
	if (!ret && ntotal)
		*total_out = total[0];
	free(total);
	return ret;
}

int sl_store_dash_target_candidates(sl_store *st, int64_t target_id, int64_t **ids_out,
				    size_t *n, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "SELECT id FROM candidates WHERE target_id = ? "
					   "ORDER BY id", err);

	*ids_out = NULL;
	*n = 0;
	if (s)
		sqlite3_bind_int64(s, 1, target_id);
	return sl_store_rows(st, s, sizeof(**ids_out), read_id, (void **)ids_out, n,
			     "read a target's candidates", err);
}

int sl_store_dash_stamp(sl_store *st, int64_t campaign_id, sl_buf *out, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "SELECT (SELECT coalesce(group_concat(k, ','), '') "
					   "FROM (SELECT state || count(*) || '+' || sum(attempts) "
					   "AS k FROM targets WHERE campaign_id = ?1 GROUP BY state "
					   "ORDER BY state)) || '/' || (SELECT coalesce(max(a.id), 0) "
					   "FROM attempts a JOIN targets t ON t.id = a.target_id "
					   "WHERE t.campaign_id = ?1) || '/' || (SELECT coalesce("
					   "max(g.id), 0) || '.' || (SELECT coalesce(max(c.id), 0) "
					   "FROM candidates c JOIN targets t ON t.id = c.target_id "
					   "WHERE t.campaign_id = ?1) FROM gate_runs g JOIN "
					   "candidates c ON c.id = g.candidate_id JOIN targets t ON "
					   "t.id = c.target_id WHERE t.campaign_id = ?1) || '/' || "
					   "(SELECT coalesce(max(d.id), 0) FROM decisions d JOIN "
					   "candidates c ON c.id = d.candidate_id JOIN targets t ON "
					   "t.id = c.target_id WHERE t.campaign_id = ?1) || '/' || "
					   "(SELECT count(*) || coalesce(max(updated_at), '') FROM "
					   "published WHERE campaign_id = ?1)", err);
	char *v = NULL;
	int rc;

	if (!s)
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, campaign_id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		v = sl_store_col_text(s, 0);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW) {
		free(v);
		return sl_store_fail(st, err, "read the campaign's stamp");
	}
	sl_buf_adds(out, v ? v : "");
	free(v);
	return SL_OK;
}
