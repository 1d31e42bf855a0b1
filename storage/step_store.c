/*
 * step_store.c - the steps table (migration 15): a session's steps written
 * and read back in order, and exported as the replay provider's lines
 * (step_store.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common/sha256.h"
#include "common/util.h"
#include "storage/step_store.h"
#include "storage/store_internal.h"

int sl_step_put(sl_store *st, const sl_step_rec *in, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "INSERT OR REPLACE INTO steps (target_id, n, "
					   "step, reply, request_key, kind, command, exit_status, "
					   "output, output_bytes, model_ms, command_ms, tokens_in, "
					   "tokens_out, cost, ran, differs) VALUES (?, ?, ?, ?, ?, "
					   "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", err);

	if (s) {
		sqlite3_bind_int64(s, 1, in->target_id);
		sqlite3_bind_int64(s, 2, in->n);
		sqlite3_bind_int64(s, 3, in->step);
		sl_store_bind_text(s, 4, in->reply ? in->reply : "");
		sl_store_bind_text(s, 5, in->request_key);
		sl_store_bind_text(s, 6, in->kind ? in->kind : "command");
		sl_store_bind_text(s, 7, in->command);
		sqlite3_bind_int64(s, 8, in->exit_status);
		sl_store_bind_text(s, 9, in->output);
		sqlite3_bind_int64(s, 10, in->output_bytes);
		sqlite3_bind_int64(s, 11, in->model_ms);
		sqlite3_bind_int64(s, 12, in->command_ms);
		sqlite3_bind_int64(s, 13, in->tokens_in);
		sqlite3_bind_int64(s, 14, in->tokens_out);
		sqlite3_bind_double(s, 15, in->cost);
		sqlite3_bind_int(s, 16, in->ran);
		sqlite3_bind_int(s, 17, in->differs);
	}
	return sl_store_exec(st, s, "record step", err);
}

static void read_step(sqlite3_stmt *s, void *row)
{
	sl_step_rec *r = row;

	r->target_id = sqlite3_column_int64(s, 0);
	r->n = sqlite3_column_int64(s, 1);
	r->step = sqlite3_column_int64(s, 2);
	r->reply = sl_store_col_text(s, 3);
	r->request_key = sl_store_col_text(s, 4);
	r->kind = sl_store_col_text(s, 5);
	r->command = sl_store_col_text(s, 6);
	r->exit_status = sqlite3_column_int64(s, 7);
	r->output = sl_store_col_text(s, 8);
	r->output_bytes = sqlite3_column_int64(s, 9);
	r->model_ms = sqlite3_column_int64(s, 10);
	r->command_ms = sqlite3_column_int64(s, 11);
	r->tokens_in = sqlite3_column_int64(s, 12);
	r->tokens_out = sqlite3_column_int64(s, 13);
	r->cost = sqlite3_column_double(s, 14);
	r->ran = sqlite3_column_int(s, 15);
	r->differs = sqlite3_column_int(s, 16);
}

int sl_step_list(sl_store *st, int64_t target_id, int64_t n, sl_step_rec **out,
		 size_t *nout, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "SELECT target_id, n, step, reply, request_key, "
					   "kind, command, exit_status, output, output_bytes, "
					   "model_ms, command_ms, tokens_in, tokens_out, cost, ran, "
					   "differs FROM steps WHERE target_id = ? AND (? = 0 OR "
					   "n = ?) ORDER BY n, step", err);

	*out = NULL;
	*nout = 0;
	if (s) {
		sqlite3_bind_int64(s, 1, target_id);
		sqlite3_bind_int64(s, 2, n);
		sqlite3_bind_int64(s, 3, n);
	}
	if (!sl_store_rows(st, s, sizeof(**out), read_step, (void **)out, nout, "read steps",
			   err))
		return SL_OK;
	sl_step_list_free(*out, *nout);
	*out = NULL;
	*nout = 0;
	return SL_ERROR;
}

void sl_step_list_free(sl_step_rec *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].reply);
		free(v[i].request_key);
		free(v[i].kind);
		free(v[i].command);
		free(v[i].output);
	}
	free(v);
}

int sl_step_export(sl_store *st, sl_buf *out, sl_err *err)
{
	/* the position is the session's (session.c): target key, attempt, step */
	sqlite3_stmt *s = sl_store_prepare(st, "SELECT json_object('key', s.request_key, "
					   "'reply', s.reply, 'tokens_in', s.tokens_in, "
					   "'tokens_out', s.tokens_out, 'at', printf('%s %lld %lld', "
					   "t.key, s.n, s.step)), p.output FROM steps s "
					   "JOIN targets t ON t.id = s.target_id LEFT JOIN steps p "
					   "ON p.target_id = s.target_id AND p.n = s.n AND "
					   "p.step = s.step - 1 WHERE s.request_key IS NOT NULL "
					   "ORDER BY s.target_id, s.n, s.step", err);
	int rc;

	if (!s)
		return SL_ERROR;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *line = (const char *)sqlite3_column_text(s, 0);
		size_t len = (size_t)sqlite3_column_bytes(s, 0);
		char seen[65];

		if (!line || !len || line[len - 1] != '}')
			BUG("json_object gave no object");
		if (sqlite3_column_type(s, 1) == SQLITE_NULL) {
			sl_buf_add(out, line, len);
		} else {
			/* what the model was shown last: the step before's observation */
			sl_sha256_hex(seen, sqlite3_column_text(s, 1),
				      (size_t)sqlite3_column_bytes(s, 1));
			sl_buf_add(out, line, len - 1);
			sl_buf_addf(out, ",\"seen\":\"%s\"}", seen);
		}
		sl_buf_addch(out, '\n');
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? SL_OK : sl_store_fail(st, err, "export steps");
}
