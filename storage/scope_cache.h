/*
 * scope_cache.h - scoping's per-file results, kept in the campaign store.
 *
 * A row holds what scoping one blob with one query produced, keyed by
 * (blob id, language, query key); the query key is a hash the caller makes
 * of everything that changes a file's result (query text, site capture,
 * unit, the format of the data).  The data is opaque here: scope.c encodes
 * and decodes it.  Keying by blob id means a changed file simply misses; old
 * rows stay until sl_scope_cache_prune drops them (sl_scope does, for other
 * queries' rows, once the cache is past its cap).
 *
 * Calling sequence (one thread; the handle holds prepared statements):
 *     sl_scope_cache_open(&c, store, lang, qkey, err)
 *     sl_scope_cache_begin(c, err)        one transaction for many gets: a
 *                                         get outside one locks and reads
 *                                         the file afresh, ~10x slower
 *     sl_scope_cache_get(c, blob_hex, &val, err)          per file, 1 = hit
 *     sl_scope_cache_commit(c, err)
 *     ... (no transaction held while parsing) ...
 *     sl_scope_cache_begin(c, err)
 *     sl_scope_cache_put(c, blob_hex, flags, data, len, err)   per new result
 *     sl_scope_cache_commit(c, err)
 *     sl_scope_cache_free(c)                  rolls back an open transaction
 */
#ifndef SL_SCOPE_CACHE_H
#define SL_SCOPE_CACHE_H

#include <stddef.h>

#include "common/err.h"
#include "storage/store.h"

typedef struct sl_scope_cache sl_scope_cache;

typedef struct sl_scope_cache_val {
	unsigned flags;
	const void *data;           /* borrowed: valid until the next call on the handle */
	size_t len;
} sl_scope_cache_val;

int sl_scope_cache_open(sl_scope_cache **out, sl_store *st, const char *lang,
			const char *qkey, sl_err *err);
/* 1 and *out filled on a hit, 0 on a miss, < 0 on error. */
int sl_scope_cache_get(sl_scope_cache *c, const char *blob, sl_scope_cache_val *out, sl_err *err);
/* A store transaction (sl_store_begin) around gets or puts. */
int sl_scope_cache_begin(sl_scope_cache *c, sl_err *err);
int sl_scope_cache_put(sl_scope_cache *c, const char *blob, unsigned flags, const void *data,
		       size_t len, sl_err *err);
int sl_scope_cache_commit(sl_scope_cache *c, sl_err *err);
/* Roll back an open transaction (no-op when none is open). */
void sl_scope_cache_abort(sl_scope_cache *c);
void sl_scope_cache_free(sl_scope_cache *c);

/*
 * Whether the store marks the query of hash qhash (the caller's hash of
 * its language and text) as compiled without harm in-process before
 * (store_meta "scope-query-ok:QHASH"): sl_scope_check_query_in then skips
 * its check in a child.  Any error reads as no.
 */
int sl_scope_cache_query_ok(sl_store *st, const char *qhash);
/* Mark it so (its own transaction; nothing written when marked already). */
int sl_scope_cache_mark_query_ok(sl_store *st, const char *qhash, sl_err *err);

/* Number of rows (all queries); for tests and --stats. */
int sl_scope_cache_rows(sl_store *st, long long *out, sl_err *err);
/* Drop every row of other query keys than keep_qkey (NULL: all rows). */
int sl_scope_cache_prune(sl_store *st, const char *keep_qkey, sl_err *err);

#endif
