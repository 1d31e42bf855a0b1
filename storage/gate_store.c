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

int sl_store_baseline_get(sl_store *st, int64_t campaign_id, const char *gate,
			  const char *digest, sl_baseline_rec **out, size_t *n, sl_err *err)
{
	sqlite3_stmt *s = NULL;
	size_t alloc = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(sl_store_sqlite(st), "SELECT gate, run, verdict, exit_status, "
			       "output, report, def_digest FROM baselines WHERE campaign_id = ? "
			       "AND gate = ? AND def_digest = ? ORDER BY run", -1, &s,
			       NULL) != SQLITE_OK)
		return sl_store_fail(st, err, "read baseline");
	sqlite3_bind_int64(s, 1, campaign_id);
	sl_store_bind_text(s, 2, gate);
	sl_store_bind_text(s, 3, digest);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		sl_baseline_rec *b;

		SL_ALLOC_GROW(*out, *n + 1, alloc);
		b = &(*out)[(*n)++];
		b->gate = sl_store_col_text(s, 0);
		b->run = sqlite3_column_int64(s, 1);
		b->verdict = (sl_verdict)sl_verdict_parse((const char *)sqlite3_column_text(s, 2));
		b->exit_status = sqlite3_column_int64(s, 3);
		b->output = sl_store_col_text(s, 4);
		b->report = sl_store_col_text(s, 5);
		b->digest = sl_store_col_text(s, 6);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? SL_OK : sl_store_fail(st, err, "read baseline");
}

int sl_store_baseline_add(sl_store *st, int64_t campaign_id, const sl_baseline_rec *in,
			  sl_err *err)
{
	sqlite3_stmt *s = NULL;
	char now[32];
	int rc;

	sl_iso8601_now(now);
	if (sqlite3_prepare_v2(sl_store_sqlite(st), "INSERT OR REPLACE INTO baselines (campaign_id, "
			       "gate, run, verdict, exit_status, output, report, created_at, "
			       "def_digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &s,
			       NULL) != SQLITE_OK)
		return sl_store_fail(st, err, "add baseline");
	sqlite3_bind_int64(s, 1, campaign_id);
	sl_store_bind_text(s, 2, in->gate);
	sqlite3_bind_int64(s, 3, in->run);
	sl_store_bind_text(s, 4, sl_verdict_name(in->verdict));
	sqlite3_bind_int64(s, 5, in->exit_status);
	sl_store_bind_text(s, 6, in->output ? in->output : "");
	sl_store_bind_text(s, 7, in->report);
	sl_store_bind_text(s, 8, now);
	sl_store_bind_text(s, 9, in->digest);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? SL_OK : sl_store_fail(st, err, "add baseline");
}

int sl_store_cache_get(sl_store *st, const char *key, sl_gate_run_rec *out,
		       char **feedback_out, sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	*feedback_out = NULL;
	if (sqlite3_prepare_v2(sl_store_sqlite(st), "SELECT verdict, exit_status, duration_ms, "
			       "output_bytes, output_tail, feedback, jail FROM gate_cache WHERE key = ?",
			       -1, &s, NULL) != SQLITE_OK)
		return sl_store_fail(st, err, "read verdict cache");
	sl_store_bind_text(s, 1, key);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		out->verdict = (sl_verdict)sl_verdict_parse((const char *)sqlite3_column_text(s, 0));
		out->exit_status = sqlite3_column_int64(s, 1);
		out->duration_ms = sqlite3_column_int64(s, 2);
		out->output_bytes = sqlite3_column_int64(s, 3);
		out->output_tail = sl_store_col_text(s, 4);
		*feedback_out = sl_store_col_text(s, 5);
		out->jail = sl_store_col_text(s, 6);
	}
	sqlite3_finalize(s);
	if (rc == SQLITE_ROW)
		return SL_OK;
	return rc == SQLITE_DONE ? SL_ENOTFOUND : sl_store_fail(st, err, "read verdict cache");
}

int sl_store_cache_put(sl_store *st, const char *key, const sl_gate_run_rec *in,
		       const char *feedback, sl_err *err)
{
	sqlite3_stmt *s = NULL;
	char now[32];
	int rc;

	sl_iso8601_now(now);
	if (sqlite3_prepare_v2(sl_store_sqlite(st), "INSERT OR REPLACE INTO gate_cache (key, "
			       "verdict, exit_status, duration_ms, output_bytes, output_tail, "
			       "feedback, created_at, jail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &s,
			       NULL) != SQLITE_OK)
		return sl_store_fail(st, err, "write verdict cache");
	sl_store_bind_text(s, 1, key);
	sl_store_bind_text(s, 2, sl_verdict_name(in->verdict));
	sqlite3_bind_int64(s, 3, in->exit_status);
	sqlite3_bind_int64(s, 4, in->duration_ms);
	sqlite3_bind_int64(s, 5, in->output_bytes);
	sl_store_bind_text(s, 6, in->output_tail ? in->output_tail : "");
	sl_store_bind_text(s, 7, feedback);
	sl_store_bind_text(s, 8, now);
	sl_store_bind_text(s, 9, in->jail);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? SL_OK : sl_store_fail(st, err, "write verdict cache");
}
