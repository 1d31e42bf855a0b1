/*
 * store_internal.h - for storage/ modules only: the connection behind a
 * store, so a module that owns its own tables (a cache, a log) can prepare
 * statements on it.  Nothing outside storage/ includes this.
 */
#ifndef SL_STORE_INTERNAL_H
#define SL_STORE_INTERNAL_H

#include <sqlite3.h>

#include "storage/store.h"

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

#endif
