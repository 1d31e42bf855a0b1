/*
 * unplaced_store.c - a fix campaign's findings that no target holds (table
 * unplaced of migration 10, unplaced_store.h).
 */
#include <stdlib.h>

#include "storage/unplaced_store.h"
#include "storage/store_internal.h"
#include "common/util.h"

void sl_unplaced_list_free(sl_unplaced_rec *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].file);
		free(v[i].rule);
		free(v[i].message);
		free(v[i].reason);
	}
	free(v);
}

int sl_store_unplaced_add(sl_store *st, int64_t campaign_id, const sl_unplaced_rec *in,
			  sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "INSERT OR IGNORE INTO unplaced (campaign_id, "
					   "file, line, rule, message, reason) VALUES (?, ?, ?, ?, ?, ?)",
					   err);

	if (s) {
		sqlite3_bind_int64(s, 1, campaign_id);
		sl_store_bind_text(s, 2, in->file);
		sqlite3_bind_int64(s, 3, in->line);
		sl_store_bind_text(s, 4, in->rule ? in->rule : "");
		sl_store_bind_text(s, 5, in->message ? in->message : "");
		sl_store_bind_text(s, 6, in->reason);
	}
	return sl_store_exec(st, s, "record an unplaced finding", err);
}

static void read_unplaced(sqlite3_stmt *s, void *row)
{
	sl_unplaced_rec *u = row;

	u->file = sl_store_col_text(s, 0);
	u->line = sqlite3_column_int64(s, 1);
	u->rule = sl_store_col_text(s, 2);
	u->message = sl_store_col_text(s, 3);
	u->reason = sl_store_col_text(s, 4);
}

int sl_store_unplaced(sl_store *st, int64_t campaign_id, sl_unplaced_rec **out, size_t *n,
		      sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "SELECT file, line, rule, message, reason FROM "
					   "unplaced WHERE campaign_id = ? ORDER BY rowid", err);

	*out = NULL;
	*n = 0;
	if (s)
		sqlite3_bind_int64(s, 1, campaign_id);
	return sl_store_rows(st, s, sizeof(**out), read_unplaced, (void **)out, n,
			     "read the unplaced findings", err);
}
