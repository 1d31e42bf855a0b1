/*
 * store_internal.h - for storage/ modules only: the connection behind a
 * store, so a module that owns its own tables (a cache, a log) can prepare
 * statements on it.  Nothing outside storage/ includes this.
 */
#ifndef SL_STORE_INTERNAL_H
#define SL_STORE_INTERNAL_H

#include <sqlite3.h>

#include "store.h"

sqlite3 *sl_store_sqlite(sl_store *st);
const char *sl_store_path(sl_store *st);

#endif
