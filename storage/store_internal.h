/*
 * store_internal.h - for storage/ modules only: the calling thread's
 * connection behind a store and the statement helpers, so a module that owns
 * its own tables (a cache, a log) prepares and runs statements the way
 * store.c does.  Nothing outside storage/ includes this.
 */
#ifndef SL_STORE_INTERNAL_H
#define SL_STORE_INTERNAL_H

#include <sqlite3.h>

#include "storage/store.h"

/* This thread's connection, opened on first use; NULL if it cannot be opened. */
sqlite3 *sl_store_sqlite(sl_store *st);
const char *sl_store_path(sl_store *st);

/* "store 'PATH': WHAT: <sqlite's message>" as SL_ERROR. */
int sl_store_fail(sl_store *st, sl_err *err, const char *what);
/* A prepared statement, or NULL with "store 'PATH': prepare: ..." in err. */
sqlite3_stmt *sl_store_prepare(sl_store *st, const char *sql, sl_err *err);
/* Column i as an owned string, NULL for SQL NULL. */
char *sl_store_col_text(sqlite3_stmt *s, int i);
/* Bind a string, or NULL as SQL NULL. */
void sl_store_bind_text(sqlite3_stmt *s, int i, const char *v);

/*
 * Running a prepared statement s to its end; each finalizes s and accepts
 * s == NULL (a failed sl_store_prepare, already in err) as SL_ERROR.
 *
 * sl_store_exec: a statement that returns no rows ("store 'PATH': WHAT: ..."
 * on failure).  sl_store_row: the first row read into out with read;
 * SL_ENOTFOUND, err untouched, when there is none.  sl_store_rows: every row
 * read into a new zeroed element (of size bytes) of an array in *out,
 * *n elements; the caller frees them also on failure.
 */
typedef void sl_store_read_fn(sqlite3_stmt *s, void *row);
int sl_store_exec(sl_store *st, sqlite3_stmt *s, const char *what, sl_err *err);
int sl_store_row(sl_store *st, sqlite3_stmt *s, sl_store_read_fn *read, void *out,
		 const char *what, sl_err *err);
int sl_store_rows(sl_store *st, sqlite3_stmt *s, size_t size, sl_store_read_fn *read,
		  void **out, size_t *n, const char *what, sl_err *err);

#endif
