/*
 * store.c - the SQLite campaign store.
 *
 * Reads and writes the tables of migrations.c.  Every function prepares its
 * statement, binds, steps, reads the columns into owned records and
 * finalizes, translating SQLite's codes into SL_E* at this boundary.
 *
 * Threads: each thread has its own connection (opened on its first call,
 * closed when it ends or by sl_store_free).  WAL: readers see committed rows
 * and never wait.  Each write is its own transaction or in the thread's
 * sl_store_begin/commit; writers take turns on SQLite's lock (busy timeout).
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/statvfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "storage/store.h"
#include "storage/store_internal.h"
#include "storage/migrations.h"
#include "storage/step_store.h"
#include "common/util.h"

/* How long a connection waits on another's write lock, and how often BEGIN tries. */
#define BUSY_MS 10000
#define BEGIN_TRIES 3

/* One thread's connection; on the store's list until the thread ends. */
typedef struct conn {
	sqlite3 *db;
	sl_store *st;
	int in_tx;                  /* between sl_store_begin and commit/rollback */
	struct conn *next;
} conn;

struct sl_store {
	char *path;
	char *uri;                  /* what each connection opens: path, or a read-only URI */
	int flags;                  /* and with which flags */
	int readonly;               /* opened read-only: the file or its file system */
	pthread_key_t key;          /* this thread's conn */
	pthread_mutex_t lock;       /* guards conns */
	conn *conns;
};

/* Settings every connection needs (the journal mode is the file's own). */
static int conn_setup(sl_store *st, sqlite3 *db)
{
	sqlite3_busy_timeout(db, BUSY_MS);
	sqlite3_extended_result_codes(db, 1);
	if (st->readonly)
		return SQLITE_OK;
	return sqlite3_exec(db, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;",
			    NULL, NULL, NULL);
}

static conn *conn_attach(sl_store *st, sqlite3 *db)
{
	conn *c = sl_xcalloc(1, sizeof(*c));

	c->db = db;
	c->st = st;
	pthread_mutex_lock(&st->lock);
	c->next = st->conns;
	st->conns = c;
	pthread_mutex_unlock(&st->lock);
	pthread_setspecific(st->key, c);
	return c;
}

/* The key's destructor: a thread that used the store has ended. */
static void conn_end(void *p)
{
	conn *c = p, **pp;

	pthread_mutex_lock(&c->st->lock);
	for (pp = &c->st->conns; *pp && *pp != c; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = c->next;
	pthread_mutex_unlock(&c->st->lock);
	sqlite3_close_v2(c->db);
	free(c);
}

/* This thread's connection, opened on first use; NULL if it cannot be opened. */
static conn *conn_get(sl_store *st)
{
	conn *c = pthread_getspecific(st->key);
	sqlite3 *db = NULL;

	if (c)
		return c;
	if (sqlite3_open_v2(st->uri, &db, st->flags, NULL) != SQLITE_OK ||
	    conn_setup(st, db) != SQLITE_OK) {
		sqlite3_close_v2(db);
		return NULL;
	}
	return conn_attach(st, db);
}

static sqlite3 *conn_db(sl_store *st)
{
	conn *c = conn_get(st);

	return c ? c->db : NULL;
}

int sl_store_fail(sl_store *st, sl_err *err, const char *what)
{
	sqlite3 *db = conn_db(st);

	if (!db)
		return sl_err_set(err, SL_ERROR, "store '%s': %s: cannot open a connection",
				  st->path, what);
	switch (sqlite3_extended_errcode(db) & 0xff) {
	case SQLITE_READONLY:
		return sl_err_set(err, SL_EINPUT, "store '%s' is read-only (%s); this command "
				  "needs to write it", st->path, what);
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return sl_err_set(err, SL_EINPUT, "store '%s' is damaged (%s: %s); restore it "
				  "from a copy", st->path, what, sqlite3_errmsg(db));
	case SQLITE_FULL:
		return sl_err_set(err, SL_ERROR, "store '%s': %s: the disk is full; nothing was "
				  "lost, and `sluice run` resumes once there is room", st->path,
				  what);
	}
	return sl_err_set(err, SL_ERROR, "store '%s': %s: %s", st->path, what,
			  sqlite3_errmsg(db));
}

static sqlite3_stmt *prep(sl_store *st, const char *sql, sl_err *err)
{
	sqlite3_stmt *s = NULL;

	sqlite3 *db = conn_db(st);

	if (!db || sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		sl_store_fail(st, err, "prepare");
		sqlite3_finalize(s);
		return NULL;
	}
	return s;
}

sqlite3_stmt *sl_store_prepare(sl_store *st, const char *sql, sl_err *err)
{
	return prep(st, sql, err);
}

void sl_store_bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

char *sl_store_col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return t ? sl_xstrndup((const char *)t, (size_t)sqlite3_column_bytes(s, i)) : NULL;
}

int sl_store_exec(sl_store *st, sqlite3_stmt *s, const char *what, sl_err *err)
{
	int rc;

	if (!s)
		return SL_ERROR;
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return sl_store_fail(st, err, what);
	return SL_OK;
}

/* sl_store_exec for an INSERT: the row id and change count of this thread's connection. */
static int insert_stmt(sl_store *st, sqlite3_stmt *s, const char *what, int64_t *id_out,
		       int *changes_out, sl_err *err)
{
	sqlite3 *db = s ? sqlite3_db_handle(s) : NULL;

	if (sl_store_exec(st, s, what, err))
		return SL_ERROR;
	if (id_out)
		*id_out = sqlite3_last_insert_rowid(db);
	if (changes_out)
		*changes_out = sqlite3_changes(db);
	return SL_OK;
}

static int exec_sql(sl_store *st, const char *sql, sl_err *err)
{
	sqlite3 *db = conn_db(st);

	if (!db || sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		char what[48];

		snprintf(what, sizeof(what), "%.40s", sql);
		sl_store_fail(st, err, what);
		return err ? err->code : SL_ERROR;
	}
	return SL_OK;
}

/* 1 if path cannot be written: a read-only file system, or its mode. */
static int not_writable(const char *path)
{
	struct statvfs vfs;

	if (!statvfs(path, &vfs) && (vfs.f_flag & ST_RDONLY))
		return 1;
	return access(path, W_OK) && (errno == EACCES || errno == EROFS || errno == EPERM);
}

/*
 * Open an existing store for reading only.  A WAL database needs its -shm
 * file; where that cannot be made (a read-only file system) the file is
 * opened as immutable, which is right there: nobody can be writing it.
 * Every connection of the store opens the URI that worked.
 */
static int open_readonly(sl_store *st, const char *path, sl_err *err)
{
	sl_buf uri = SL_BUF_INIT;
	sqlite3 *db = NULL;
	int ok = 0;

	st->readonly = 1;
	st->flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX;
	for (int pass = 0; pass < 2 && !ok; pass++) {
		sl_buf_reset(&uri);
		sl_buf_adds(&uri, "file:");
		for (const char *p = path; *p; p++) {
			if (*p == '?' || *p == '#' || *p == '%')
				sl_buf_addf(&uri, "%%%02X", (unsigned char)*p);
			else
				sl_buf_addch(&uri, *p);
		}
		sl_buf_adds(&uri, pass ? "?immutable=1" : "?mode=ro");
		sqlite3_close_v2(db);
		db = NULL;
		if (sqlite3_open_v2(uri.buf, &db, st->flags, NULL) != SQLITE_OK)
			continue;
		ok = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL,
				  NULL) == SQLITE_OK;
	}
	if (ok) {
		free(st->uri);
		st->uri = sl_buf_detach(&uri, NULL);
		conn_setup(st, db);
		conn_attach(st, db);
	} else {
		sl_err_set(err, SL_EINPUT, "cannot open read-only store '%s': %s", path,
			   db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close_v2(db);
	}
	sl_buf_release(&uri);
	return ok ? SL_OK : SL_EINPUT;
}

/* Open path for writing (creating it if asked) as this thread's connection. */
static int open_readwrite(sl_store *st, int create, sl_err *err)
{
	sqlite3 *db = NULL;
	int ret = SL_OK;

	st->flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX |
		(create ? SQLITE_OPEN_CREATE : 0);
	if (sqlite3_open_v2(st->uri, &db, st->flags, NULL) != SQLITE_OK) {
		if (!create && !db)
			ret = sl_err_set(err, SL_ENOTFOUND, "cannot open store '%s'", st->path);
		else
			ret = sl_err_set(err, create ? SL_ERROR : SL_ENOTFOUND,
					 "cannot open store '%s': %s", st->path,
					 db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close_v2(db);
		return ret;
	}
	sqlite3_busy_timeout(db, BUSY_MS);
	sqlite3_extended_result_codes(db, 1);
	conn_attach(st, db);
	return SL_OK;
}

/* A damaged file is named at once, before any number is read from it. */
static int check_intact(sl_store *st, sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc, ok = 0;
	char *msg = NULL;

	if (sqlite3_prepare_v2(conn_db(st), "PRAGMA quick_check(1)", -1, &s, NULL) == SQLITE_OK &&
	    (rc = sqlite3_step(s)) == SQLITE_ROW) {
		msg = sl_store_col_text(s, 0);
		ok = msg && !strcmp(msg, "ok");
	}
	sqlite3_finalize(s);
	if (!ok && msg)
		sl_err_set(err, SL_EINPUT, "store '%s' is damaged (%s); restore it from a copy",
			   st->path, msg);
	else if (!ok)
		sl_store_fail(st, err, "check");
	free(msg);
	return ok ? SL_OK : SL_EINPUT;
}

sqlite3 *sl_store_sqlite(sl_store *st)
{
	return conn_db(st);
}

const char *sl_store_path(sl_store *st)
{
	return st->path;
}

int sl_store_row(sl_store *st, sqlite3_stmt *s, sl_store_read_fn *read, void *out,
		 const char *what, sl_err *err)
{
	int rc;

	if (!s)
		return SL_ERROR;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		read(s, out);
	sqlite3_finalize(s);
	if (rc == SQLITE_ROW)
		return SL_OK;
	return rc == SQLITE_DONE ? SL_ENOTFOUND : sl_store_fail(st, err, what);
}

int sl_store_rows(sl_store *st, sqlite3_stmt *s, size_t size, sl_store_read_fn *read,
		  void **out, size_t *n, const char *what, sl_err *err)
{
	char *v = NULL;
	size_t alloc = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!s)
		return SL_ERROR;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == alloc) {
			alloc = alloc ? sl_st_mult(alloc, 2) : 8;
			v = sl_xrealloc(v, sl_st_mult(alloc, size));
		}
		memset(v + *n * size, 0, size);
		read(s, v + (*n)++ * size);
	}
	sqlite3_finalize(s);
	*out = v;
	return rc == SQLITE_DONE ? SL_OK : sl_store_fail(st, err, what);
}

/* The row of sql (bound to id) read into out; "no NOUN ID" when there is none. */
static int get_by_id(sl_store *st, const char *sql, int64_t id, sl_store_read_fn *read,
		     void *out, const char *noun, sl_err *err)
{
	sqlite3_stmt *s = prep(st, sql, err);
	char what[64];
	int ret;

	if (s)
		sqlite3_bind_int64(s, 1, id);
	snprintf(what, sizeof(what), "read %s", noun);
	ret = sl_store_row(st, s, read, out, what, err);
	if (ret == SL_ENOTFOUND)
		sl_err_set(err, SL_ENOTFOUND, "no %s %lld", noun, (long long)id);
	return ret;
}

int sl_store_schema_version(sl_store *st)
{
	sqlite3_stmt *s = NULL;
	int v = -1;

	if (sqlite3_prepare_v2(conn_db(st), "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return v;
}

int sl_store_id(char out[SL_STORE_ID_LEN + 1], sl_store *st, sl_err *err)
{
	sqlite3_stmt *s = NULL;
	const unsigned char *v;
	int ret = SL_ERROR;

	out[0] = '\0';
	if (sqlite3_prepare_v2(conn_db(st), "SELECT value FROM store_meta WHERE key = 'store_id'",
			       -1, &s, NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW ||
	    !(v = sqlite3_column_text(s, 0)) || strlen((const char *)v) != SL_STORE_ID_LEN) {
		sl_err_set(err, SL_ERROR, "cannot read the store's id: %s",
			   sqlite3_errmsg(conn_db(st)));
		goto done;
	}
	memcpy(out, v, SL_STORE_ID_LEN + 1);
	ret = SL_OK;
done:
	sqlite3_finalize(s);
	return ret;
}

/*
 * BEGIN IMMEDIATE on this thread's connection.  The busy handler waits for
 * another writer; SQLite returns BUSY without waiting in a few cases (a WAL
 * being recovered), so BUSY is tried again a bounded number of times.
 */
static int begin_immediate(sl_store *st, sl_err *err)
{
	sqlite3 *db = conn_db(st);
	int rc = SQLITE_CANTOPEN;

	for (int i = 0; db && i < BEGIN_TRIES; i++) {
		rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		if ((rc & 0xff) != SQLITE_BUSY)
			break;
	}
	return rc == SQLITE_OK ? SL_OK : sl_store_fail(st, err, "begin");
}

static void rollback(sl_store *st)
{
	sqlite3 *db = conn_db(st);

	if (db && !sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

/*
 * Refuse another program's SQLite file before anything writes to it:
 * sluice's application_id, or none with nothing in the file (a new store)
 * or with sluice's first table and a schema version (a store made before
 * the id was set).  A file SQLite cannot read is left to the checks after.
 */
static int check_ours(sl_store *st, sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int ours = 1;

	if (sqlite3_prepare_v2(conn_db(st), "SELECT a.application_id, v.user_version, "
			       "(SELECT count(*) FROM sqlite_master), (SELECT count(*) FROM "
			       "sqlite_master WHERE type = 'table' AND name = 'campaigns') "
			       "FROM pragma_application_id() a, pragma_user_version() v",
			       -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
		int app = sqlite3_column_int(s, 0), version = sqlite3_column_int(s, 1);

		ours = app == SL_STORE_APPLICATION_ID ||
			(!app && !version && !sqlite3_column_int(s, 2)) ||
			(!app && version > 0 && sqlite3_column_int(s, 3));
	}
	sqlite3_finalize(s);
	if (!ours)
		return sl_err_set(err, SL_EINPUT, "'%s' is another program's SQLite database, "
				  "not a sluice store; it is left unchanged", st->path);
	return SL_OK;
}

static int migrate(sl_store *st, sl_err *err)
{
	int have = sl_store_schema_version(st);
	size_t want = sl_migrations_count();

	if (have < 0)
		return sl_store_fail(st, err, "read schema version");
	if ((size_t)have > want)
		return sl_err_set(err, SL_EINPUT,
				  "store '%s' has schema version %d, newer than this sluice (%zu)",
				  st->path, have, want);
	for (size_t i = (size_t)have; i < want; i++) {
		char pragma[96];

		if (begin_immediate(st, err))
			return SL_ERROR;
		/* another process may have migrated it while this one waited */
		if ((size_t)sl_store_schema_version(st) > i) {
			if (exec_sql(st, "COMMIT", err))
				return SL_ERROR;
			continue;
		}
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %zu; "
			 "PRAGMA application_id = %d", i + 1, SL_STORE_APPLICATION_ID);
		if (exec_sql(st, sl_migration(i), err) || exec_sql(st, pragma, err)) {
			sl_err_prefix(err, "migration %zu: ", i + 1);
			rollback(st);
			return SL_ERROR;
		}
		if (exec_sql(st, "COMMIT", err))
			return SL_ERROR;
	}
	return SL_OK;
}

static int store_open(sl_store **out, const char *path, int create, int readonly, sl_err *err)
{
	sl_store *st = sl_xcalloc(1, sizeof(*st));
	int ret = SL_ERROR;

	*out = NULL;
	st->path = sl_xstrdup(path);
	st->uri = sl_xstrdup(path);
	pthread_mutex_init(&st->lock, NULL);
	if (pthread_key_create(&st->key, conn_end)) {
		pthread_mutex_destroy(&st->lock);
		free(st->path);
		free(st->uri);
		free(st);
		return sl_err_set(err, SL_ERROR, "cannot open store '%s': out of thread keys",
				  path);
	}
	if (create) {
		char *dir = sl_xstrdup(path), *slash = strrchr(dir, '/');

		if (slash && slash != dir) {
			*slash = '\0';
			if (sl_mkdir_p(dir, 0700, err)) {
				free(dir);
				goto done;
			}
		}
		free(dir);
	}
	if (readonly || (!access(path, F_OK) && not_writable(path))) {
		if (create) {
			ret = sl_err_set(err, SL_EINPUT, "store '%s' is read-only; this command "
					 "needs to write it", path);
			goto done;
		}
		if ((ret = open_readonly(st, path, err)))
			goto done;
	} else if ((ret = open_readwrite(st, create, err))) {
		goto done;
	}
	if ((ret = check_ours(st, err)))
		goto done;
	if (!create && sl_store_schema_version(st) <= 0) {
		/* a read command never turns an empty or foreign file into a store */
		ret = (sqlite3_extended_errcode(conn_db(st)) & 0xff) == SQLITE_CORRUPT ?
			sl_store_fail(st, err, "open") :
			sl_err_set(err, SL_EINPUT, "'%s' is not a sluice store", path);
		goto done;
	}
	if ((ret = check_intact(st, err)))
		goto done;
	if (st->readonly) {
		if ((size_t)sl_store_schema_version(st) != sl_migrations_count()) {
			ret = sl_err_set(err, SL_EINPUT, "store '%s' is read-only and needs an "
					 "upgrade to schema version %zu", path,
					 sl_migrations_count());
			goto done;
		}
		*out = st;
		return SL_OK;
	}
	/* a new file that another process is setting up too: the mode change
	   does not wait on the busy handler, so wait here (at most 10 s) */
	for (int i = 0; i < 100 && sqlite3_exec(conn_db(st), "PRAGMA journal_mode = WAL", NULL,
						NULL, NULL) == SQLITE_BUSY; i++)
		sqlite3_sleep(100);
	if (exec_sql(st, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;"
		     "PRAGMA synchronous = NORMAL;", err)) {
		sl_err_prefix(err, "not a sluice store? ");
		if (err)
			err->code = SL_EINPUT;
		ret = SL_EINPUT;
		goto done;
	}
	if (migrate(st, err)) {
		ret = err ? err->code : SL_ERROR;
		goto done;
	}
	/* the connections opened later need no create flag */
	st->flags &= ~SQLITE_OPEN_CREATE;
	*out = st;
	st = NULL;
	ret = SL_OK;
done:
	sl_store_free(st);
	return ret;
}

int sl_store_open(sl_store **out, const char *path, int create, sl_err *err)
{
	return store_open(out, path, create, 0, err);
}

int sl_store_open_readonly(sl_store **out, const char *path, sl_err *err)
{
	return store_open(out, path, 0, 1, err);
}

void sl_store_free(sl_store *st)
{
	if (!st)
		return;
	/* the threads that used it have ended or are done with it: no destructor
	   runs after the key is gone, so their connections are closed here */
	pthread_key_delete(st->key);
	while (st->conns) {
		conn *c = st->conns;

		st->conns = c->next;
		sqlite3_close_v2(c->db);
		free(c);
	}
	pthread_mutex_destroy(&st->lock);
	free(st->path);
	free(st->uri);
	free(st);
}

int sl_store_begin(sl_store *st, sl_err *err)
{
	conn *c = conn_get(st);

	if (c && c->in_tx)
		BUG("nested store transaction");
	if (begin_immediate(st, err))
		return SL_ERROR;
	c->in_tx = 1;
	return SL_OK;
}

int sl_store_commit(sl_store *st, sl_err *err)
{
	conn *c = conn_get(st);
	int ret;

	if (!c || !c->in_tx)
		BUG("commit without a transaction");
	c->in_tx = 0;
	ret = exec_sql(st, "COMMIT", err);
	if (ret)
		rollback(st);
	return ret;
}

void sl_store_rollback(sl_store *st)
{
	conn *c = pthread_getspecific(st->key);

	if (!c || !c->in_tx)
		return;
	c->in_tx = 0;
	rollback(st);
}

/* campaigns */

void sl_campaign_rec_release(sl_campaign_rec *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->spec_path);
	free(c->spec_text);
	free(c->repo_path);
	free(c->base_rev);
	free(c->base_oid);
	free(c->branch_prefix);
	free(c->created_at);
	memset(c, 0, sizeof(*c));
}

void sl_campaign_list_free(sl_campaign_rec *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sl_campaign_rec_release(&v[i]);
	free(v);
}

#define CAMPAIGN_COLS "id, name, spec_path, spec_text, repo_path, base_rev, base_oid, " \
	"branch_prefix, created_at"

static void read_campaign(sqlite3_stmt *s, void *row)
{
	sl_campaign_rec *c = row;

	c->id = sqlite3_column_int64(s, 0);
	c->name = sl_store_col_text(s, 1);
	c->spec_path = sl_store_col_text(s, 2);
	c->spec_text = sl_store_col_text(s, 3);
	c->repo_path = sl_store_col_text(s, 4);
	c->base_rev = sl_store_col_text(s, 5);
	c->base_oid = sl_store_col_text(s, 6);
	c->branch_prefix = sl_store_col_text(s, 7);
	c->created_at = sl_store_col_text(s, 8);
}

int sl_store_campaign_get(sl_store *st, const char *name, sl_campaign_rec *out, sl_err *err)
{
	sqlite3_stmt *s = prep(st, "SELECT " CAMPAIGN_COLS " FROM campaigns WHERE name = ?", err);
	int ret;

	memset(out, 0, sizeof(*out));
	if (s)
		sl_store_bind_text(s, 1, name);
	ret = sl_store_row(st, s, read_campaign, out, "read campaign", err);
	if (ret == SL_ENOTFOUND)
		sl_err_set(err, SL_ENOTFOUND, "no campaign '%s' in store '%s'", name, st->path);
	return ret;
}

int sl_store_campaign_add(sl_store *st, const sl_campaign_rec *in, int64_t *id_out, sl_err *err)
{
	char now[32];
	sqlite3_stmt *s = prep(st, "INSERT INTO campaigns (name, spec_path, spec_text, repo_path, "
			       "base_rev, base_oid, branch_prefix, created_at) "
			       "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", err);

	if (!s)
		return SL_ERROR;
	sl_iso8601_now(now);
	sl_store_bind_text(s, 1, in->name);
	sl_store_bind_text(s, 2, in->spec_path);
	sl_store_bind_text(s, 3, in->spec_text);
	sl_store_bind_text(s, 4, in->repo_path);
	sl_store_bind_text(s, 5, in->base_rev);
	sl_store_bind_text(s, 6, in->base_oid);
	sl_store_bind_text(s, 7, in->branch_prefix);
	sl_store_bind_text(s, 8, now);
	return insert_stmt(st, s, "add campaign", id_out, NULL, err);
}

int sl_store_campaign_list(sl_store *st, sl_campaign_rec **out, size_t *n, sl_err *err)
{
	return sl_store_rows(st, prep(st, "SELECT " CAMPAIGN_COLS " FROM campaigns ORDER BY id", err),
			    sizeof(**out), read_campaign, (void **)out, n, "list campaigns", err);
}

/* targets */

void sl_target_rec_release(sl_target_rec *t)
{
	if (!t)
		return;
	free(t->key);
	free(t->path);
	free(t->lang);
	free(t->blob);
	free(t->unit);
	free(t->reason);
	memset(t, 0, sizeof(*t));
}

void sl_target_list_free(sl_target_rec *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sl_target_rec_release(&v[i]);
	free(v);
}

static const char *const target_state_names[SL_T_NSTATES] = {
	[SL_T_PENDING] = "pending", [SL_T_PROPOSED] = "proposed", [SL_T_FAILED] = "failed",
	[SL_T_SKIPPED] = "skipped", [SL_T_ACCEPTED] = "accepted", [SL_T_REJECTED] = "rejected",
	[SL_T_BUDGET] = "budget",
};

const char *sl_target_state_name(int state)
{
	return state >= 0 && state < SL_T_NSTATES ? target_state_names[state] : "?";
}

int sl_target_state_parse(const char *name)
{
	for (int i = 0; name && i < SL_T_NSTATES; i++)
		if (!strcmp(name, target_state_names[i]))
			return i;
	return SL_T_ANY;
}

/* A state column read back; the schema's CHECK keeps it one of the names. */
static int col_target_state(sqlite3_stmt *s, int col)
{
	return sl_target_state_parse((const char *)sqlite3_column_text(s, col));
}

static const char *const candidate_state_names[SL_C_NSTATES] = {
	[SL_C_PASSED] = "passed", [SL_C_FAILED] = "failed", [SL_C_ERROR] = "error",
};

const char *sl_candidate_state_name(int state)
{
	return state >= 0 && state < SL_C_NSTATES ? candidate_state_names[state] : "?";
}

int sl_candidate_state_parse(const char *name)
{
	for (int i = 0; name && i < SL_C_NSTATES; i++)
		if (!strcmp(name, candidate_state_names[i]))
			return i;
	return SL_C_ANY;
}

static const char *const decision_names[SL_D_N] = {
	[SL_D_ACCEPT] = "accept", [SL_D_REJECT] = "reject",
};

const char *sl_decision_name(int decision)
{
	return decision > SL_D_NONE && decision < SL_D_N ? decision_names[decision] : NULL;
}

int sl_decision_parse(const char *name)
{
	for (int i = SL_D_NONE + 1; name && i < SL_D_N; i++)
		if (!strcmp(name, decision_names[i]))
			return i;
	return SL_D_NONE;
}

int sl_decision_target_state(int decision)
{
	return decision == SL_D_ACCEPT ? SL_T_ACCEPTED : SL_T_REJECTED;
}

static const char *const attempt_outcome_names[SL_A_NOUTCOMES] = {
	[SL_A_NONE] = "?", [SL_A_CANDIDATE] = "candidate", [SL_A_PARSE_ERROR] = "parse_error",
	[SL_A_APPLY_ERROR] = "apply_error", [SL_A_SYNTAX_ERROR] = "syntax_error",
	[SL_A_PROVIDER_ERROR] = "provider_error", [SL_A_NO_EDIT] = "no_edit",
};

const char *sl_attempt_outcome_name(int outcome)
{
	return outcome > SL_A_NONE && outcome < SL_A_NOUTCOMES ? attempt_outcome_names[outcome] :
		"?";
}

int sl_attempt_outcome_parse(const char *name)
{
	for (int i = SL_A_NONE + 1; name && i < SL_A_NOUTCOMES; i++)
		if (!strcmp(name, attempt_outcome_names[i]))
			return i;
	return SL_A_NONE;
}

static const char *const verdict_names[SL_VERDICT_N] = {
	[SL_VERDICT_PASS] = "pass", [SL_VERDICT_FAIL] = "fail", [SL_VERDICT_TIMEOUT] = "timeout",
	[SL_VERDICT_ERROR] = "error", [SL_VERDICT_SKIP] = "skip",
};

const char *sl_verdict_name(sl_verdict v)
{
	return (int)v >= 0 && v < SL_VERDICT_N ? verdict_names[v] : "unknown";
}

int sl_verdict_parse(const char *name)
{
	for (int i = 0; name && i < SL_VERDICT_N; i++)
		if (!strcmp(name, verdict_names[i]))
			return i;
	return -1;
}

#define TARGET_COLS "id, campaign_id, key, path, lang, blob, unit, start_byte, end_byte, " \
	"start_line, start_col, end_line, end_col, nsites, state, attempts, reason, attempt_base"

static void read_target(sqlite3_stmt *s, void *row)
{
	sl_target_rec *t = row;

	t->id = sqlite3_column_int64(s, 0);
	t->campaign_id = sqlite3_column_int64(s, 1);
	t->key = sl_store_col_text(s, 2);
	t->path = sl_store_col_text(s, 3);
	t->lang = sl_store_col_text(s, 4);
	t->blob = sl_store_col_text(s, 5);
	t->unit = sl_store_col_text(s, 6);
	t->start_byte = sqlite3_column_int64(s, 7);
	t->end_byte = sqlite3_column_int64(s, 8);
	t->start_line = sqlite3_column_int64(s, 9);
	t->start_col = sqlite3_column_int64(s, 10);
	t->end_line = sqlite3_column_int64(s, 11);
	t->end_col = sqlite3_column_int64(s, 12);
	t->nsites = sqlite3_column_int64(s, 13);
	t->state = col_target_state(s, 14);
	t->attempts = sqlite3_column_int64(s, 15);
	t->reason = sl_store_col_text(s, 16);
	t->attempt_base = sqlite3_column_int64(s, 17);
}

int sl_store_target_add(sl_store *st, const sl_target_rec *in, int64_t *id_out,
			int *inserted_out, sl_err *err)
{
	char now[32];
	sqlite3_stmt *s;
	int rc, changes;

	sl_iso8601_now(now);
	s = prep(st, "INSERT INTO targets (campaign_id, key, path, lang, blob, unit, start_byte, "
		 "end_byte, start_line, start_col, end_line, end_col, nsites, state, updated_at) "
		 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?) "
		 "ON CONFLICT (campaign_id, key) DO NOTHING", err);
	if (!s)
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, in->campaign_id);
	sl_store_bind_text(s, 2, in->key);
	sl_store_bind_text(s, 3, in->path);
	sl_store_bind_text(s, 4, in->lang);
	sl_store_bind_text(s, 5, in->blob);
	sl_store_bind_text(s, 6, in->unit);
	sqlite3_bind_int64(s, 7, in->start_byte);
	sqlite3_bind_int64(s, 8, in->end_byte);
	sqlite3_bind_int64(s, 9, in->start_line);
	sqlite3_bind_int64(s, 10, in->start_col);
	sqlite3_bind_int64(s, 11, in->end_line);
	sqlite3_bind_int64(s, 12, in->end_col);
	sqlite3_bind_int64(s, 13, in->nsites);
	sl_store_bind_text(s, 14, now);
	if (insert_stmt(st, s, "add target", NULL, &changes, err))
		return SL_ERROR;
	if (inserted_out)
		*inserted_out = changes > 0;
	s = prep(st, "SELECT id FROM targets WHERE campaign_id = ? AND key = ?", err);
	if (!s)
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, in->campaign_id);
	sl_store_bind_text(s, 2, in->key);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*id_out = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? SL_OK : sl_store_fail(st, err, "read target id");
}

int sl_store_target_scope_put(sl_store *st, int64_t id, const void *data, size_t len,
			      sl_err *err)
{
	sqlite3_stmt *s = prep(st, "INSERT OR REPLACE INTO target_scope (target_id, data) "
			       "VALUES (?, ?)", err);

	if (!s)
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_blob64(s, 2, len ? data : "", (sqlite3_uint64)len, SQLITE_STATIC);
	return sl_store_exec(st, s, "record a target's scope", err);
}

int sl_store_target_scope_get(sl_store *st, int64_t id, sl_buf *out, sl_err *err)
{
	sqlite3_stmt *s = prep(st, "SELECT data FROM target_scope WHERE target_id = ?", err);
	int rc;

	sl_buf_reset(out);
	if (!s)
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		sl_buf_add(out, sqlite3_column_blob(s, 0), (size_t)sqlite3_column_bytes(s, 0));
	sqlite3_finalize(s);
	if (rc == SQLITE_DONE)
		return sl_err_set(err, SL_ENOTFOUND, "target %lld: nothing scoped recorded",
				  (long long)id);
	return rc == SQLITE_ROW ? SL_OK : sl_store_fail(st, err, "read a target's scope");
}

int sl_store_targets(sl_store *st, int64_t campaign_id, int state,
		     sl_target_rec **out, size_t *n, sl_err *err)
{
	/* scope order (tree order, then position; an enclosing unit first), which
	   is id order in a store that scoped them and not in a merged one */
	sqlite3_stmt *s = prep(st, "SELECT " TARGET_COLS " FROM targets WHERE campaign_id = ? "
			       "AND (?2 IS NULL OR state = ?2) ORDER BY path, start_byte, "
			       "end_byte DESC, id", err);

	if (s) {
		sqlite3_bind_int64(s, 1, campaign_id);
		sl_store_bind_text(s, 2, state == SL_T_ANY ? NULL : sl_target_state_name(state));
	}
	return sl_store_rows(st, s, sizeof(**out), read_target, (void **)out, n, "list targets",
			    err);
}

/*
 * Each state's rows come from the (campaign_id, state) index in id order,
 * at most limit of them, so a chunk costs the same at the end of a million
 * targets as at the start.
 */
#define OPEN_TARGETS(state) "SELECT * FROM (SELECT " TARGET_COLS " FROM targets " \
	"WHERE campaign_id = ?1 AND state = '" state "' AND id > ?2 ORDER BY id LIMIT ?3)"

int sl_store_targets_open(sl_store *st, int64_t campaign_id, int64_t after_id, size_t limit,
			  sl_target_rec **out, size_t *n, sl_err *err)
{
	sqlite3_stmt *s = prep(st, "SELECT * FROM (" OPEN_TARGETS("pending") " UNION ALL "
			       OPEN_TARGETS("budget") ") ORDER BY id LIMIT ?3", err);

	if (s) {
		sqlite3_bind_int64(s, 1, campaign_id);
		sqlite3_bind_int64(s, 2, after_id);
		sqlite3_bind_int64(s, 3, (sqlite3_int64)limit);
	}
	return sl_store_rows(st, s, sizeof(**out), read_target, (void **)out, n,
			     "list open targets", err);
}

int sl_store_targets_open_count(sl_store *st, int64_t campaign_id, size_t *out, sl_err *err)
{
	sqlite3_stmt *s = prep(st, "SELECT count(*) FROM targets WHERE campaign_id = ? AND "
			       "state IN ('pending', 'budget')", err);
	int rc;

	*out = 0;
	if (!s)
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, campaign_id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = (size_t)sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? SL_OK : sl_store_fail(st, err, "count open targets");
}

int sl_store_target_get(sl_store *st, int64_t id, sl_target_rec *out, sl_err *err)
{
	memset(out, 0, sizeof(*out));
	return get_by_id(st, "SELECT " TARGET_COLS " FROM targets WHERE id = ?", id, read_target,
			 out, "target", err);
}

int sl_store_target_update(sl_store *st, int64_t id, int state, int64_t attempts,
			   const char *reason, sl_err *err)
{
	char now[32];
	sqlite3_stmt *s = prep(st, "UPDATE targets SET state = ?, attempts = ?, reason = ?, "
			       "updated_at = ? WHERE id = ?", err);

	if (!s)
		return SL_ERROR;
	sl_iso8601_now(now);
	sl_store_bind_text(s, 1, sl_target_state_name(state));
	sqlite3_bind_int64(s, 2, attempts);
	sl_store_bind_text(s, 3, reason);
	sl_store_bind_text(s, 4, now);
	sqlite3_bind_int64(s, 5, id);
	return sl_store_exec(st, s, "update target", err);
}

/* attempts */

void sl_attempt_rec_release(sl_attempt_rec *a)
{
	if (!a)
		return;
	free(a->source);
	free(a->prompt);
	free(a->reply);
	free(a->request);
	free(a->request_key);
	free(a->apply_report);
	free(a->format_key);
	free(a->format_reply);
	free(a->error);
	free(a->created_at);
	memset(a, 0, sizeof(*a));
}

void sl_attempt_list_free(sl_attempt_rec *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sl_attempt_rec_release(&v[i]);
	free(v);
}

int sl_store_attempt_add(sl_store *st, const sl_attempt_rec *in, int64_t *id_out, sl_err *err)
{
	char now[32];
	sqlite3_stmt *s = prep(st, "INSERT INTO attempts (target_id, n, source, prompt, reply, "
			       "tokens_in, tokens_out, latency_ms, outcome, error, created_at, "
			       "request, request_key, http_status, retries, cost, apply_report, "
			       "format_errors, format_key, format_reply, tokens_estimated) "
			       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       err);

	if (!s)
		return SL_ERROR;
	sl_iso8601_now(now);
	sqlite3_bind_int64(s, 1, in->target_id);
	sqlite3_bind_int64(s, 2, in->n);
	sl_store_bind_text(s, 3, in->source);
	sl_store_bind_text(s, 4, in->prompt);
	sl_store_bind_text(s, 5, in->reply);
	sqlite3_bind_int64(s, 6, in->tokens_in);
	sqlite3_bind_int64(s, 7, in->tokens_out);
	sqlite3_bind_int64(s, 8, in->latency_ms);
	sl_store_bind_text(s, 9, sl_attempt_outcome_name(in->outcome));
	sl_store_bind_text(s, 10, in->error);
	sl_store_bind_text(s, 11, now);
	sl_store_bind_text(s, 12, in->request);
	sl_store_bind_text(s, 13, in->request_key);
	sqlite3_bind_int64(s, 14, in->http_status);
	sqlite3_bind_int64(s, 15, in->retries);
	sqlite3_bind_double(s, 16, in->cost);
	sl_store_bind_text(s, 17, in->apply_report);
	sqlite3_bind_int64(s, 18, in->format_errors);
	sl_store_bind_text(s, 19, in->format_key);
	sl_store_bind_text(s, 20, in->format_reply);
	sqlite3_bind_int(s, 21, in->tokens_estimated);
	return insert_stmt(st, s, "add attempt", id_out, NULL, err);
}

#define ATTEMPT_COLS "id, target_id, n, source, prompt, reply, tokens_in, tokens_out, " \
	"latency_ms, outcome, error, created_at, request, request_key, http_status, retries, " \
	"cost, apply_report, format_errors, format_key, format_reply, tokens_estimated"

static void read_attempt(sqlite3_stmt *s, void *row)
{
	sl_attempt_rec *a = row;

	memset(a, 0, sizeof(*a));
	a->id = sqlite3_column_int64(s, 0);
	a->target_id = sqlite3_column_int64(s, 1);
	a->n = sqlite3_column_int64(s, 2);
	a->source = sl_store_col_text(s, 3);
	a->by_rules = a->source && !strcmp(a->source, "rules");
	a->prompt = sl_store_col_text(s, 4);
	a->reply = sl_store_col_text(s, 5);
	a->tokens_in = sqlite3_column_int64(s, 6);
	a->tokens_out = sqlite3_column_int64(s, 7);
	a->latency_ms = sqlite3_column_int64(s, 8);
	a->outcome = sl_attempt_outcome_parse((const char *)sqlite3_column_text(s, 9));
	a->error = sl_store_col_text(s, 10);
	a->created_at = sl_store_col_text(s, 11);
	a->request = sl_store_col_text(s, 12);
	a->request_key = sl_store_col_text(s, 13);
	a->http_status = sqlite3_column_int64(s, 14);
	a->retries = sqlite3_column_int64(s, 15);
	a->cost = sqlite3_column_double(s, 16);
	a->apply_report = sl_store_col_text(s, 17);
	a->format_errors = sqlite3_column_int64(s, 18);
	a->format_key = sl_store_col_text(s, 19);
	a->format_reply = sl_store_col_text(s, 20);
	a->tokens_estimated = sqlite3_column_int(s, 21);
}

int sl_store_export_replies(sl_store *st, const char *path, sl_err *err)
{
	sqlite3_stmt *s = prep(st, "SELECT json_object('key', format_key, 'reply', format_reply, "
			       "'http_status', 200) FROM attempts WHERE format_key IS NOT NULL "
			       "AND format_reply IS NOT NULL "
			       "UNION ALL "
			       "SELECT json_object('key', request_key, 'reply', reply, "
			       "'tokens_in', tokens_in, 'tokens_out', tokens_out, "
			       "'http_status', http_status) FROM attempts "
			       "WHERE request_key IS NOT NULL AND reply IS NOT NULL "
			       /* the model judge's replies live in the journal only */
			       "UNION ALL "
			       "SELECT json_object('key', request_key, 'reply', reply, "
			       "'tokens_in', tokens_in, 'tokens_out', tokens_out, "
			       "'http_status', http_status) FROM replies "
			       "WHERE round = 2 AND request_key IS NOT NULL", err);
	sl_buf out = SL_BUF_INIT;
	int rc, ret;

	if (!s)
		return SL_ERROR;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		sl_buf_add(&out, sqlite3_column_text(s, 0), (size_t)sqlite3_column_bytes(s, 0));
		sl_buf_addch(&out, '\n');
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		ret = sl_store_fail(st, err, "export replies");
	else if (!(ret = sl_step_export(st, &out, err)))
		ret = sl_write_file(path, out.buf, out.len, err);
	sl_buf_release(&out);
	return ret;
}

int sl_store_usage(sl_store *st, int64_t campaign_id, int64_t *tokens_out, double *cost_out,
		   sl_err *err)
{
	sqlite3_stmt *s = prep(st, "SELECT min(total(max(a.tokens_in, 0) + max(a.tokens_out, 0)), "
			       "9e18), total(a.cost) FROM attempts a JOIN targets t "
			       "ON t.id = a.target_id WHERE t.campaign_id = ?", err);
	int rc;

	if (!s)
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, campaign_id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*tokens_out = sqlite3_column_int64(s, 0);
		*cost_out = sqlite3_column_double(s, 1);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? SL_OK : sl_store_fail(st, err, "usage");
}

int sl_store_attempts(sl_store *st, int64_t target_id, sl_attempt_rec **out, size_t *n,
		      sl_err *err)
{
	sqlite3_stmt *s = prep(st, "SELECT " ATTEMPT_COLS " FROM attempts "
			       "WHERE target_id = ? ORDER BY n", err);

	if (s)
		sqlite3_bind_int64(s, 1, target_id);
	return sl_store_rows(st, s, sizeof(**out), read_attempt, (void **)out, n, "list attempts",
			    err);
}

/* candidates */

void sl_candidate_rec_release(sl_candidate_rec *c)
{
	if (!c)
		return;
	free(c->diff);
	free(c->commit_oid);
	free(c->branch);
	free(c->decision_reason);
	free(c->created_at);
	free(c->path);
	free(c->tree);
	memset(c, 0, sizeof(*c));
}

void sl_candidate_list_free(sl_candidate_rec *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sl_candidate_rec_release(&v[i]);
	free(v);
}

int sl_store_candidate_add(sl_store *st, const sl_candidate_rec *in, int64_t *id_out, sl_err *err)
{
	char now[32];
	sqlite3_stmt *s = prep(st, "INSERT INTO candidates (attempt_id, target_id, diff, commit_oid, "
			       "branch, state, created_at, tree, tree_ms) VALUES (?, ?, ?, ?, ?, ?, ?, "
			       "?, ?)", err);

	if (!s)
		return SL_ERROR;
	sl_iso8601_now(now);
	sqlite3_bind_int64(s, 1, in->attempt_id);
	sqlite3_bind_int64(s, 2, in->target_id);
	sl_store_bind_text(s, 3, in->diff ? in->diff : "");
	sl_store_bind_text(s, 4, in->commit_oid);
	sl_store_bind_text(s, 5, in->branch);
	sl_store_bind_text(s, 6, sl_candidate_state_name(in->state));
	sl_store_bind_text(s, 7, now);
	sl_store_bind_text(s, 8, in->tree);
	sqlite3_bind_int64(s, 9, in->tree_ms);
	return insert_stmt(st, s, "add candidate", id_out, NULL, err);
}


int sl_store_candidate_set_commit(sl_store *st, int64_t id, const char *commit_oid, sl_err *err)
{
	sqlite3_stmt *s = prep(st, "UPDATE candidates SET commit_oid = ? WHERE id = ?", err);

	if (!s)
		return SL_ERROR;
	sl_store_bind_text(s, 1, commit_oid);
	sqlite3_bind_int64(s, 2, id);
	return sl_store_exec(st, s, "update candidate", err);
}

int sl_store_candidate_set_branch(sl_store *st, int64_t target_id, const char *commit_oid,
				  const char *branch, sl_err *err)
{
	sqlite3_stmt *s = prep(st, "UPDATE candidates SET branch = ? WHERE target_id = ? AND "
			       "commit_oid = ? AND state = 'passed'", err);

	if (!s)
		return SL_ERROR;
	sl_store_bind_text(s, 1, branch);
	sqlite3_bind_int64(s, 2, target_id);
	sl_store_bind_text(s, 3, commit_oid);
	return sl_store_exec(st, s, "update candidate", err);
}

#define CANDIDATE_SELECT \
	"SELECT c.id, c.attempt_id, c.target_id, t.campaign_id, c.diff, c.commit_oid, c.branch, " \
	"c.state, d.decision, d.reason, c.created_at, t.path, t.start_line, t.end_line, a.n, " \
	"c.tree, c.tree_ms " \
	"FROM candidates c JOIN targets t ON t.id = c.target_id " \
	"JOIN attempts a ON a.id = c.attempt_id " \
	"LEFT JOIN decisions d ON d.id = (SELECT max(id) FROM decisions WHERE candidate_id = c.id) "

static void read_candidate(sqlite3_stmt *s, void *row)
{
	sl_candidate_rec *c = row;

	c->id = sqlite3_column_int64(s, 0);
	c->attempt_id = sqlite3_column_int64(s, 1);
	c->target_id = sqlite3_column_int64(s, 2);
	c->campaign_id = sqlite3_column_int64(s, 3);
	c->diff = sl_store_col_text(s, 4);
	c->commit_oid = sl_store_col_text(s, 5);
	c->branch = sl_store_col_text(s, 6);
	c->state = sl_candidate_state_parse((const char *)sqlite3_column_text(s, 7));
	c->decision = sl_decision_parse((const char *)sqlite3_column_text(s, 8));
	c->decision_reason = sl_store_col_text(s, 9);
	c->created_at = sl_store_col_text(s, 10);
	c->path = sl_store_col_text(s, 11);
	c->start_line = sqlite3_column_int64(s, 12);
	c->end_line = sqlite3_column_int64(s, 13);
	c->attempt_n = sqlite3_column_int64(s, 14);
	c->tree = sl_store_col_text(s, 15);
	c->tree_ms = sqlite3_column_int64(s, 16);
}

int sl_store_candidate_get(sl_store *st, int64_t id, sl_candidate_rec *out, sl_err *err)
{
	memset(out, 0, sizeof(*out));
	return get_by_id(st, CANDIDATE_SELECT "WHERE c.id = ?", id, read_candidate, out,
			 "candidate", err);
}

/*
 * A campaign's candidates by target in scope order (sl_store_targets), then
 * attempt: not the order in which concurrent workers, or the shards of a
 * merged store, made them.
 */
static sqlite3_stmt *candidates_stmt(sl_store *st, int64_t campaign_id, int state, sl_err *err)
{
	sqlite3_stmt *s = prep(st, CANDIDATE_SELECT "WHERE t.campaign_id = ?1 "
			       "AND (?2 IS NULL OR c.state = ?2) ORDER BY t.path, t.start_byte, "
			       "t.end_byte DESC, a.n, c.id", err);

	if (s) {
		sqlite3_bind_int64(s, 1, campaign_id);
		sl_store_bind_text(s, 2, state == SL_C_ANY ? NULL : sl_candidate_state_name(state));
	}
	return s;
}

int sl_store_candidates(sl_store *st, int64_t campaign_id, int state,
			sl_candidate_rec **out, size_t *n, sl_err *err)
{
	return sl_store_rows(st, candidates_stmt(st, campaign_id, state, err), sizeof(**out),
			     read_candidate, (void **)out, n, "list candidates", err);
}

int sl_store_candidates_each(sl_store *st, int64_t campaign_id, int state,
			     int (*fn)(const sl_candidate_rec *c, void *arg), void *arg, sl_err *err)
{
	sqlite3_stmt *s = candidates_stmt(st, campaign_id, state, err);
	int rc, ret = SL_OK;

	if (!s)
		return SL_ERROR;
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		sl_candidate_rec c = { 0 };

		read_candidate(s, &c);
		ret = fn(&c, arg);
		sl_candidate_rec_release(&c);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sl_store_fail(st, err, "list candidates");
	sqlite3_finalize(s);
	return ret;
}

/* gate runs */

void sl_gate_run_list_free(sl_gate_run_rec *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].gate);
		free(v[i].output_tail);
		free(v[i].note);
		free(v[i].jail);
	}
	free(v);
}

int sl_store_gate_run_add(sl_store *st, const sl_gate_run_rec *in, sl_err *err)
{
	char now[32];
	sqlite3_stmt *s = prep(st, "INSERT INTO gate_runs (candidate_id, gate, verdict, "
			       "exit_status, duration_ms, output_bytes, output_tail, created_at, "
			       "cached, note, jail, jail_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       err);

	if (!s)
		return SL_ERROR;
	sl_iso8601_now(now);
	sqlite3_bind_int64(s, 1, in->candidate_id);
	sl_store_bind_text(s, 2, in->gate);
	sl_store_bind_text(s, 3, sl_verdict_name(in->verdict));
	sqlite3_bind_int64(s, 4, in->exit_status);
	sqlite3_bind_int64(s, 5, in->duration_ms);
	sqlite3_bind_int64(s, 6, in->output_bytes);
	sl_store_bind_text(s, 7, in->output_tail ? in->output_tail : "");
	sl_store_bind_text(s, 8, now);
	sqlite3_bind_int64(s, 9, in->cached);
	sl_store_bind_text(s, 10, in->note);
	sl_store_bind_text(s, 11, in->jail);
	sqlite3_bind_int64(s, 12, in->jail_ms);
	return sl_store_exec(st, s, "add gate run", err);
}

static void read_gate_run(sqlite3_stmt *s, void *row)
{
	sl_gate_run_rec *g = row;

	g->id = sqlite3_column_int64(s, 0);
	g->candidate_id = sqlite3_column_int64(s, 1);
	g->gate = sl_store_col_text(s, 2);
	g->verdict = (sl_verdict)sl_verdict_parse((const char *)sqlite3_column_text(s, 3));
	g->exit_status = sqlite3_column_int64(s, 4);
	g->duration_ms = sqlite3_column_int64(s, 5);
	g->output_bytes = sqlite3_column_int64(s, 6);
	g->output_tail = sl_store_col_text(s, 7);
	g->cached = sqlite3_column_int64(s, 8);
	g->note = sl_store_col_text(s, 9);
	g->jail = sl_store_col_text(s, 10);
	g->jail_ms = sqlite3_column_int64(s, 11);
}

int sl_store_gate_runs(sl_store *st, int64_t candidate_id, sl_gate_run_rec **out, size_t *n,
		       sl_err *err)
{
	sqlite3_stmt *s = prep(st, "SELECT id, candidate_id, gate, verdict, exit_status, "
			       "duration_ms, output_bytes, output_tail, cached, note, jail, jail_ms "
			       "FROM gate_runs "
			       "WHERE candidate_id = ? ORDER BY id", err);

	if (s)
		sqlite3_bind_int64(s, 1, candidate_id);
	return sl_store_rows(st, s, sizeof(**out), read_gate_run, (void **)out, n,
			    "list gate runs", err);
}

/* decisions */

int sl_store_decide(sl_store *st, int64_t candidate_id, int decision,
		    const char *reason, sl_err *err)
{
	char now[32];
	sl_candidate_rec c;
	sqlite3_stmt *s;
	int ret = SL_ERROR;

	if (decision != SL_D_ACCEPT && decision != SL_D_REJECT)
		BUG("bad decision %d", decision);
	if (sl_store_begin(st, err))
		return SL_ERROR;
	if ((ret = sl_store_candidate_get(st, candidate_id, &c, err)))
		goto done;
	ret = SL_EINPUT;
	if (c.state != SL_C_PASSED) {
		sl_err_set(err, SL_EINPUT, "candidate %lld was not proposed (it %s its gates)",
			   (long long)candidate_id, sl_candidate_state_name(c.state));
		goto done;
	}
	ret = SL_ERROR;
	sl_iso8601_now(now);
	if (!(s = prep(st, "INSERT INTO decisions (candidate_id, decision, reason, decided_at) "
		       "VALUES (?, ?, ?, ?)", err)))
		goto done;
	sqlite3_bind_int64(s, 1, candidate_id);
	sl_store_bind_text(s, 2, sl_decision_name(decision));
	sl_store_bind_text(s, 3, reason);
	sl_store_bind_text(s, 4, now);
	if (sl_store_exec(st, s, "add decision", err))
		goto done;
	if (!(s = prep(st, "UPDATE targets SET state = ?, updated_at = ? WHERE id = ?", err)))
		goto done;
	sl_store_bind_text(s, 1, sl_target_state_name(sl_decision_target_state(decision)));
	sl_store_bind_text(s, 2, now);
	sqlite3_bind_int64(s, 3, c.target_id);
	if (sl_store_exec(st, s, "update target", err))
		goto done;
	ret = sl_store_commit(st, err);
done:
	if (ret)
		sl_store_rollback(st);
	sl_candidate_rec_release(&c);
	return ret;
}

/* the funnel */

/* The campaign's (?1) candidates, each with its latest decision as d. */
#define FUNNEL_DECIDED "candidates c JOIN targets t ON t.id = c.target_id " \
	"JOIN decisions d ON d.id = (SELECT max(id) FROM decisions WHERE candidate_id = c.id) " \
	"WHERE t.campaign_id = ?1"

void sl_funnel_release(sl_funnel *f)
{
	for (size_t i = 0; i < f->ngates; i++)
		free(f->gates[i].gate);
	free(f->gates);
	memset(f, 0, sizeof(*f));
}

/*
 * Targets by state; accepted and rejected are the decision history: the
 * candidates whose latest decision says so, so a candidate rejected stays
 * counted after its target was retried.
 */
static const char funnel_targets_sql[] = "SELECT count(*), "
	"count(*) FILTER (WHERE state = 'pending'), "
	"count(*) FILTER (WHERE state IN ('proposed','accepted','rejected')), "
	"count(*) FILTER (WHERE state = 'failed'), "
	"count(*) FILTER (WHERE state = 'skipped'), "
	"(SELECT count(*) FILTER (WHERE d.decision = 'accept') FROM " FUNNEL_DECIDED "), "
	"(SELECT count(*) FILTER (WHERE d.decision = 'reject') FROM " FUNNEL_DECIDED "), "
	"count(*) FILTER (WHERE state = 'budget') "
	"FROM targets WHERE campaign_id = ?1";

/* Attempts by outcome and tokens; the cost last. */
static const char funnel_attempts_sql[] = "SELECT count(*), "
	"count(*) FILTER (WHERE a.outcome = 'candidate'), "
	"count(*) FILTER (WHERE a.outcome = 'apply_error'), "
	"count(*) FILTER (WHERE a.outcome = 'parse_error'), "
	"count(*) FILTER (WHERE a.outcome = 'provider_error'), "
	"min(total(max(a.tokens_in, 0)), 9e18), min(total(max(a.tokens_out, 0)), 9e18), "
	"count(*) FILTER (WHERE a.outcome = 'syntax_error'), "
	"coalesce(sum(a.format_errors), 0), "
	"min(total(max(a.tokens_in, 0) + max(a.tokens_out, 0)) FILTER (WHERE a.tokens_estimated), "
	"9e18), coalesce(sum(a.cost), 0) "
	"FROM attempts a JOIN targets t ON t.id = a.target_id WHERE t.campaign_id = ?";

/* Placed hunks by tier, from the attempts' apply reports. */
static const char funnel_tiers_sql[] =
	"SELECT count(*) FILTER (WHERE json_extract(j.value, '$.tier') = 'exact'), "
	"count(*) FILTER (WHERE json_extract(j.value, '$.tier') = 'moved'), "
	"count(*) FILTER (WHERE json_extract(j.value, '$.tier') = 'whitespace'), "
	"count(*) FILTER (WHERE json_extract(j.value, '$.tier') = 'refused') "
	"FROM attempts a JOIN targets t ON t.id = a.target_id, json_each(a.apply_report) j "
	"WHERE t.campaign_id = ? AND json_valid(a.apply_report)";

/*
 * Proposed targets (as the funnel counts them) by where the edit of their
 * latest passed candidate came from, so the two sum to proposed.
 */
static const char funnel_sources_sql[] = "SELECT count(*) FILTER (WHERE a.source = 'rules'), "
	"count(*) FILTER (WHERE a.source <> 'rules') "
	"FROM targets t JOIN candidates c ON c.id = (SELECT max(c2.id) FROM candidates c2 "
	"WHERE c2.target_id = t.id AND c2.state = 'passed') "
	"JOIN attempts a ON a.id = c.attempt_id "
	"WHERE t.campaign_id = ? AND t.state IN ('proposed','accepted','rejected')";

/*
 * Run a one-row query of the campaign's funnel (its id is ?1): column i into
 * *cols[i] for i < n, then column n into *real when real is not NULL.
 */
static int funnel_row(sl_store *st, const char *sql, int64_t *const *cols, size_t n,
		      double *real, int64_t campaign_id, sl_err *err)
{
	sqlite3_stmt *s = prep(st, sql, err);
	int rc;

	if (!s)
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, campaign_id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		for (size_t i = 0; i < n; i++)
			*cols[i] = sqlite3_column_int64(s, (int)i);
		if (real)
			*real = sqlite3_column_double(s, (int)n);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? SL_OK : sl_store_fail(st, err, "funnel");
}

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

/* The one-row counts: targets, attempts, tiers and sources, in the columns' order. */
static int funnel_counts(sl_store *st, int64_t campaign_id, sl_funnel *o, sl_err *err)
{
	int64_t *const targets[] = { &o->targets, &o->pending, &o->proposed, &o->failed,
		&o->skipped, &o->accepted, &o->rejected, &o->budget };
	int64_t *const attempts[] = { &o->attempts, &o->candidates, &o->apply_errors,
		&o->parse_errors, &o->provider_errors, &o->tokens_in, &o->tokens_out,
		&o->syntax_errors, &o->format_errors, &o->tokens_estimated };
	int64_t *const tiers[] = { &o->tier_exact, &o->tier_moved, &o->tier_whitespace,
		&o->tier_refused };
	int64_t *const sources[] = { &o->proposed_rules, &o->proposed_model };
	int ret;

	if ((ret = funnel_row(st, funnel_targets_sql, targets, NCOLS(targets), NULL,
			      campaign_id, err)) ||
	    (ret = funnel_row(st, funnel_attempts_sql, attempts, NCOLS(attempts),
			      &o->cost, campaign_id, err)) ||
	    (ret = funnel_row(st, funnel_tiers_sql, tiers, NCOLS(tiers), NULL,
			      campaign_id, err)))
		return ret;
	return funnel_row(st, funnel_sources_sql, sources, NCOLS(sources), NULL,
			  campaign_id, err);
}

/* Each gate's runs by verdict, in the order the gates first ran. */
static int funnel_gates(sl_store *st, int64_t campaign_id, sl_funnel *out, sl_err *err)
{
	sqlite3_stmt *s;
	size_t alloc = 0;
	int rc;

	s = prep(st, "SELECT g.gate, count(*), "
		 "count(*) FILTER (WHERE NOT g.cached AND g.verdict = 'pass'), "
		 "count(*) FILTER (WHERE NOT g.cached AND g.verdict IN ('fail', 'timeout')), "
		 "count(*) FILTER (WHERE NOT g.cached AND g.verdict = 'skip'), "
		 "count(*) FILTER (WHERE g.cached), "
		 "count(*) FILTER (WHERE NOT g.cached AND g.verdict = 'error'), "
		 /* a model judge's (its note says so): reviewers on what it let through */
		 "max(g.note LIKE 'judged by %'), "
		 "count(*) FILTER (WHERE g.verdict = 'pass' AND d.decision = 'accept'), "
		 "count(*) FILTER (WHERE g.verdict = 'pass' AND d.decision = 'reject') "
		 "FROM gate_runs g JOIN candidates c ON c.id = g.candidate_id "
		 "JOIN targets t ON t.id = c.target_id "
		 "LEFT JOIN decisions d ON d.id = (SELECT max(id) FROM decisions "
		 "WHERE candidate_id = c.id) WHERE t.campaign_id = ? "
		 "GROUP BY g.gate ORDER BY min(g.id)", err);
	if (!s)
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, campaign_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		sl_funnel_gate *g;

		SL_ALLOC_GROW(out->gates, out->ngates + 1, alloc);
		g = &out->gates[out->ngates++];
		g->gate = sl_store_col_text(s, 0);
		g->runs = sqlite3_column_int64(s, 1);
		g->passed = sqlite3_column_int64(s, 2);
		g->failed = sqlite3_column_int64(s, 3);
		g->skipped = sqlite3_column_int64(s, 4);
		g->cached = sqlite3_column_int64(s, 5);
		g->errors = sqlite3_column_int64(s, 6);
		g->judge = sqlite3_column_int(s, 7);
		g->reviewed_accept = sqlite3_column_int64(s, 8);
		g->reviewed_reject = sqlite3_column_int64(s, 9);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		sl_funnel_release(out);
		return sl_store_fail(st, err, "funnel");
	}
	return SL_OK;
}

int sl_store_funnel(sl_store *st, int64_t campaign_id, sl_funnel *out, sl_err *err)
{
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = funnel_counts(st, campaign_id, out, err)))
		return ret;
	return funnel_gates(st, campaign_id, out, err);
}
