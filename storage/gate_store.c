/*
 * gate_store.c - baselines and the verdict cache (tables of migration 3).
 */
#include <stdlib.h>
#include <string.h>

#include "storage/gate_store.h"
#include "storage/store_internal.h"
#include "common/util.h"

void sl_baseline_list_free(sl_baseline_rec *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].gate);
		free(v[i].output);
		free(v[i].report);
		free(v[i].digest);
	}
	free(v);
}

static void read_baseline(sqlite3_stmt *s, void *row)
{
	sl_baseline_rec *b = row;

	b->gate = sl_store_col_text(s, 0);
	b->run = sqlite3_column_int64(s, 1);
	b->verdict = (sl_verdict)sl_verdict_parse((const char *)sqlite3_column_text(s, 2));
	b->exit_status = sqlite3_column_int64(s, 3);
	b->output = sl_store_col_text(s, 4);
	b->report = sl_store_col_text(s, 5);
	b->digest = sl_store_col_text(s, 6);
}

int sl_store_baseline_get(sl_store *st, int64_t campaign_id, const char *gate,
			  const char *digest, sl_baseline_rec **out, size_t *n, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "SELECT gate, run, verdict, exit_status, "
					   "output, report, def_digest FROM baselines WHERE campaign_id = ? "
					   "AND gate = ? AND def_digest = ? ORDER BY run", err);

	if (s) {
		sqlite3_bind_int64(s, 1, campaign_id);
		sl_store_bind_text(s, 2, gate);
		sl_store_bind_text(s, 3, digest);
	}
	return sl_store_rows(st, s, sizeof(**out), read_baseline, (void **)out, n,
			     "read baseline", err);
}

int sl_store_baseline_add(sl_store *st, int64_t campaign_id, const sl_baseline_rec *in,
			  sl_err *err)
{
	char now[32];
	sqlite3_stmt *s = sl_store_prepare(st, "INSERT OR REPLACE INTO baselines (campaign_id, "
					   "gate, run, verdict, exit_status, output, report, "
					   "created_at, def_digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
					   err);

	if (!s)
		return SL_ERROR;
	sl_iso8601_now(now);
	sqlite3_bind_int64(s, 1, campaign_id);
	sl_store_bind_text(s, 2, in->gate);
	sqlite3_bind_int64(s, 3, in->run);
	sl_store_bind_text(s, 4, sl_verdict_name(in->verdict));
	sqlite3_bind_int64(s, 5, in->exit_status);
	sl_store_bind_text(s, 6, in->output ? in->output : "");
	sl_store_bind_text(s, 7, in->report);
	sl_store_bind_text(s, 8, now);
	sl_store_bind_text(s, 9, in->digest);
	return sl_store_exec(st, s, "add baseline", err);
}

int sl_store_baseline_clear(sl_store *st, int64_t campaign_id, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "DELETE FROM baselines WHERE campaign_id = ?",
					   err);

	if (!s)
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, campaign_id);
	return sl_store_exec(st, s, "clear baseline", err);
}

/* A cache row: the verdict's fields and the feedback kept beside them. */
typedef struct cache_row {
	sl_gate_run_rec *rec;
	char *feedback;
} cache_row;

static void read_cache(sqlite3_stmt *s, void *row)
{
	cache_row *c = row;

	c->rec->verdict = (sl_verdict)sl_verdict_parse((const char *)sqlite3_column_text(s, 0));
	c->rec->exit_status = sqlite3_column_int64(s, 1);
	c->rec->duration_ms = sqlite3_column_int64(s, 2);
	c->rec->output_bytes = sqlite3_column_int64(s, 3);
	c->rec->output_tail = sl_store_col_text(s, 4);
	c->feedback = sl_store_col_text(s, 5);
	c->rec->jail = sl_store_col_text(s, 6);
}

int sl_store_cache_get(sl_store *st, const char *key, sl_gate_run_rec *out,
		       char **feedback_out, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "SELECT verdict, exit_status, duration_ms, "
					   "output_bytes, output_tail, feedback, jail FROM "
					   "gate_cache WHERE key = ?", err);
	cache_row row = { out, NULL };
	int ret;

	memset(out, 0, sizeof(*out));
	if (s)
		sl_store_bind_text(s, 1, key);
	ret = sl_store_row(st, s, read_cache, &row, "read verdict cache", err);
	*feedback_out = row.feedback;
	return ret;
}

int sl_store_cache_put(sl_store *st, const char *key, const sl_gate_run_rec *in,
		       const char *feedback, sl_err *err)
{
	char now[32];
	sqlite3_stmt *s = sl_store_prepare(st, "INSERT OR REPLACE INTO gate_cache (key, "
					   "verdict, exit_status, duration_ms, output_bytes, "
					   "output_tail, feedback, created_at, jail) "
					   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", err);

	if (!s)
		return SL_ERROR;
	sl_iso8601_now(now);
	sl_store_bind_text(s, 1, key);
	sl_store_bind_text(s, 2, sl_verdict_name(in->verdict));
	sqlite3_bind_int64(s, 3, in->exit_status);
	sqlite3_bind_int64(s, 4, in->duration_ms);
	sqlite3_bind_int64(s, 5, in->output_bytes);
	sl_store_bind_text(s, 6, in->output_tail ? in->output_tail : "");
	sl_store_bind_text(s, 7, feedback);
	sl_store_bind_text(s, 8, now);
	sl_store_bind_text(s, 9, in->jail);
	return sl_store_exec(st, s, "write verdict cache", err);
}
