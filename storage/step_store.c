/*
 * step_store.c - the steps table (migration 14): a session's steps written
 * and read back in order (step_store.h).
 */
#include <stdlib.h>
#include <string.h>

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
