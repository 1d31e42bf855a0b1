/*
 * scope_cache.c - the scope_cache table (migration "scope cache").
 *
 * Reads and writes rows of scope_cache through the store's connection with
 * statements prepared once per handle.  Puts are batched in one store
 * transaction (sl_store_begin/commit, so they serialise with the other
 * writers of the store).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "storage/scope_cache.h"
#include "storage/store_internal.h"
#include "common/util.h"

struct sl_scope_cache {
	sl_store *st;
	sqlite3_stmt *get, *put;
	char *lang, *qkey;
	int in_tx;
};

static int fail(sl_store *st, sl_err *err, const char *what)
{
	return sl_err_set(err, SL_ERROR, "scope cache in '%s': %s: %s", sl_store_path(st), what,
			  sqlite3_errmsg(sl_store_sqlite(st)));
}

void sl_scope_cache_free(sl_scope_cache *c)
{
	if (!c)
		return;
	sl_scope_cache_abort(c);
	sqlite3_finalize(c->get);
	sqlite3_finalize(c->put);
	free(c->lang);
	free(c->qkey);
	free(c);
}

int sl_scope_cache_open(sl_scope_cache **out, sl_store *st, const char *lang,
			const char *qkey, sl_err *err)
{
	sl_scope_cache *c = sl_xcalloc(1, sizeof(*c));
	sqlite3 *db = sl_store_sqlite(st);
	int ret = SL_ERROR;

	*out = NULL;
	c->st = st;
	c->lang = sl_xstrdup(lang);
	c->qkey = sl_xstrdup(qkey);
	if (!db || sqlite3_prepare_v2(db, "SELECT flags, data FROM scope_cache"
			       " WHERE qkey = ?1 AND lang = ?2 AND blob = ?3", -1, &c->get, NULL) ||
	    sqlite3_prepare_v2(db, "INSERT INTO scope_cache(qkey, lang, blob, flags, data)"
			       " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO UPDATE SET"
			       " flags = excluded.flags, data = excluded.data", -1, &c->put, NULL)) {
		fail(st, err, "prepare");
		goto done;
	}
	*out = c;
	c = NULL;
	ret = SL_OK;
done:
	sl_scope_cache_free(c);
	return ret;
}

int sl_scope_cache_get(sl_scope_cache *c, const char *blob, sl_scope_cache_val *out, sl_err *err)
{
	int rc;

	sqlite3_reset(c->get);
	sqlite3_bind_text(c->get, 1, c->qkey, -1, SQLITE_STATIC);
	sqlite3_bind_text(c->get, 2, c->lang, -1, SQLITE_STATIC);
	sqlite3_bind_text(c->get, 3, blob, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(c->get);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return fail(c->st, err, "read");
	out->flags = (unsigned)sqlite3_column_int64(c->get, 0);
	out->data = sqlite3_column_blob(c->get, 1);
	out->len = (size_t)sqlite3_column_bytes(c->get, 1);
	if (!out->data)
		out->data = "";
	return 1;
}

int sl_scope_cache_begin(sl_scope_cache *c, sl_err *err)
{
	if (c->in_tx)
		BUG("scope cache transaction already open");
	sqlite3_reset(c->get);
	if (sl_store_begin(c->st, err))
		return SL_ERROR;
	c->in_tx = 1;
	return SL_OK;
}

int sl_scope_cache_put(sl_scope_cache *c, const char *blob, unsigned flags, const void *data,
		       size_t len, sl_err *err)
{
	int rc;

	if (len > INT32_MAX)
		return sl_err_set(err, SL_EINPUT, "scope cache: entry of %zu bytes too large", len);
	sqlite3_reset(c->put);
	sqlite3_bind_text(c->put, 1, c->qkey, -1, SQLITE_STATIC);
	sqlite3_bind_text(c->put, 2, c->lang, -1, SQLITE_STATIC);
	sqlite3_bind_text(c->put, 3, blob, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(c->put, 4, flags);
	sqlite3_bind_blob(c->put, 5, len ? data : "", (int)len, SQLITE_STATIC);
	rc = sqlite3_step(c->put);
	sqlite3_reset(c->put);
	if (rc != SQLITE_DONE)
		return fail(c->st, err, "write");
	return SL_OK;
}

int sl_scope_cache_commit(sl_scope_cache *c, sl_err *err)
{
	if (!c->in_tx)
		return SL_OK;
	sqlite3_reset(c->get);
	sqlite3_reset(c->put);
	c->in_tx = 0;
	return sl_store_commit(c->st, err);
}

void sl_scope_cache_abort(sl_scope_cache *c)
{
	if (c && c->in_tx) {
		c->in_tx = 0;
		sl_store_rollback(c->st);
	}
}

int sl_scope_cache_rows(sl_store *st, long long *out, sl_err *err)
{
	sqlite3 *db = sl_store_sqlite(st);
	sqlite3_stmt *s = NULL;
	int ret = SL_ERROR;

	*out = 0;
	if (!db || sqlite3_prepare_v2(db, "SELECT count(*) FROM scope_cache", -1, &s, NULL) ||
	    sqlite3_step(s) != SQLITE_ROW) {
		fail(st, err, "count");
		goto done;
	}
	*out = sqlite3_column_int64(s, 0);
	ret = SL_OK;
done:
	sqlite3_finalize(s);
	return ret;
}

int sl_scope_cache_prune(sl_store *st, const char *keep_qkey, sl_err *err)
{
	sqlite3 *db = sl_store_sqlite(st);
	sqlite3_stmt *s = NULL;
	int ret = SL_ERROR;

	if (!db || sqlite3_prepare_v2(db, "DELETE FROM scope_cache WHERE ?1 IS NULL OR qkey <> ?1",
				      -1, &s, NULL)) {
		fail(st, err, "prepare");
		goto done;
	}
	if (keep_qkey)
		sqlite3_bind_text(s, 1, keep_qkey, -1, SQLITE_STATIC);
	if (sqlite3_step(s) != SQLITE_DONE) {
		fail(st, err, "prune");
		goto done;
	}
	ret = SL_OK;
done:
	sqlite3_finalize(s);
	return ret;
}

/* The store_meta key of a compiled query's mark: "scope-query-ok:" and its hash. */
static void query_ok_key(char *out, size_t outsz, const char *qhash)
{
	snprintf(out, outsz, "scope-query-ok:%s", qhash);
}

int sl_scope_cache_query_ok(sl_store *st, const char *qhash)
{
	sqlite3 *db = sl_store_sqlite(st);
	sqlite3_stmt *s = NULL;
	char key[128];
	int ok = 0;

	query_ok_key(key, sizeof(key), qhash);
	if (db && !sqlite3_prepare_v2(db, "SELECT 1 FROM store_meta WHERE key = ?1", -1, &s, NULL)) {
		sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
		ok = sqlite3_step(s) == SQLITE_ROW;
	}
	sqlite3_finalize(s);
	return ok;
}

int sl_scope_cache_mark_query_ok(sl_store *st, const char *qhash, sl_err *err)
{
	sqlite3 *db = sl_store_sqlite(st);
	sqlite3_stmt *s = NULL;
	char key[128];
	int ret = SL_ERROR;

	if (sl_scope_cache_query_ok(st, qhash))
		return SL_OK;
	query_ok_key(key, sizeof(key), qhash);
	if (!db || sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO store_meta(key, value) VALUES (?1, '1')",
				      -1, &s, NULL)) {
		fail(st, err, "prepare");
		goto done;
	}
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	if (sl_store_begin(st, err))
		goto done;
	if (sqlite3_step(s) != SQLITE_DONE) {
		fail(st, err, "write");
		sl_store_rollback(st);
		goto done;
	}
	ret = sl_store_commit(st, err);
done:
	sqlite3_finalize(s);
	return ret;
}
