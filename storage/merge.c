/*
 * merge.c - a shard's identity in its store, and shard stores folded into
 * one (merge.h).
 *
 * The input is attached to the output's connection as schema "src" and
 * copied with INSERT ... SELECT, set by set: temporary tables map each
 * input id (target, attempt, candidate) to its new id in the output, found
 * again by the row's natural key (a target's campaign and key, an attempt's
 * target and number, a candidate's attempt).  The columns copied are those
 * both schemas have (an input of an older schema is migrated when opened),
 * so a column a later migration adds is carried without a change here.
 * Leases are not copied: a merged target is held by nobody.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/merge.h"
#include "storage/store_internal.h"
#include "common/buf.h"
#include "common/util.h"

int sl_store_shard_get(sl_store *st, unsigned *k, unsigned *n, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "SELECT value FROM store_meta WHERE key = 'shard'",
					   err);
	char *v = NULL;
	int rc;

	*k = *n = 0;
	if (!s)
		return SL_ERROR;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		v = sl_store_col_text(s, 0);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sl_store_fail(st, err, "read the shard");
	if (v && (sscanf(v, "%u/%u", k, n) != 2 || !*n || *k >= *n)) {
		sl_err_set(err, SL_EINPUT, "store '%s': bad shard '%s'", sl_store_path(st), v);
		*k = *n = 0;
		free(v);
		return SL_EINPUT;
	}
	free(v);
	return SL_OK;
}

int sl_store_shard_set(sl_store *st, unsigned k, unsigned n, sl_err *err)
{
	unsigned hk, hn;
	int64_t targets = 0;
	sqlite3_stmt *s;
	char v[32];

	if (sl_store_shard_get(st, &hk, &hn, err))
		return SL_ERROR;
	if (hn && (hk != k || hn != n))
		return sl_err_set(err, SL_EINPUT, "store '%s' holds shard %u/%u, not %u/%u; "
				  "give each shard its own store", sl_store_path(st), hk, hn, k, n);
	if (hn)
		return SL_OK;
	if (!(s = sl_store_prepare(st, "SELECT count(*) FROM targets", err)))
		return SL_ERROR;
	if (sqlite3_step(s) == SQLITE_ROW)
		targets = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (targets)
		return sl_err_set(err, SL_EINPUT, "store '%s' holds targets of a run that was no "
				  "shard; give each shard its own store", sl_store_path(st));
	snprintf(v, sizeof(v), "%u/%u", k, n);
	/* another run of a shard may record it at the same time: the first one stays */
	if (!(s = sl_store_prepare(st, "INSERT OR IGNORE INTO store_meta (key, value) VALUES "
				   "('shard', ?)", err)))
		return SL_ERROR;
	sl_store_bind_text(s, 1, v);
	if (sl_store_exec(st, s, "record the shard", err) || sl_store_shard_get(st, &hk, &hn, err))
		return SL_ERROR;
	if (hk != k || hn != n)
		return sl_err_set(err, SL_EINPUT, "store '%s' holds shard %u/%u, not %u/%u; "
				  "give each shard its own store", sl_store_path(st), hk, hn, k, n);
	return SL_OK;
}

/* One campaign of a store as merging compares it. */
typedef struct merge_def {
	const char *store;          /* borrowed: the store's path */
	char *name, *base, *prefix, *digest;
} merge_def;

static void read_def(sqlite3_stmt *s, void *row)
{
	merge_def *d = row;

	d->name = sl_store_col_text(s, 0);
	d->base = sl_store_col_text(s, 1);
	d->prefix = sl_store_col_text(s, 2);
	d->digest = sl_store_col_text(s, 3);
}

static void defs_free(merge_def *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].name);
		free(v[i].base);
		free(v[i].prefix);
		free(v[i].digest);
	}
	free(v);
}

/* Append st's campaigns to *v (*n of them), each with its last run's definition digest. */
static int read_defs(sl_store *st, merge_def **v, size_t *n, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "SELECT c.name, c.base_oid, c.branch_prefix, "
		"(SELECT r.digest FROM runs r WHERE r.campaign_id = c.id ORDER BY r.id DESC "
		"LIMIT 1) FROM campaigns c ORDER BY c.id", err);
	merge_def *got = NULL;
	size_t ngot = 0;
	int ret;

	if ((ret = sl_store_rows(st, s, sizeof(*got), read_def, (void **)&got, &ngot,
				 "read the campaigns", err))) {
		defs_free(got, ngot);
		return ret;
	}
	*v = sl_xrealloc(*v, sl_st_mult(*n + ngot + 1, sizeof(**v)));
	for (size_t i = 0; i < ngot; i++) {
		got[i].store = sl_store_path(st);
		(*v)[(*n)++] = got[i];
	}
	free(got);
	return SL_OK;
}

/* SL_EINPUT if d cannot be merged with o, a campaign of the same name. */
static int def_conflict(const merge_def *d, const merge_def *o, sl_err *err)
{
	const char *what = NULL;

	if (strcmp(d->base, o->base))
		what = "scopes another base commit";
	else if (strcmp(d->prefix, o->prefix))
		what = "has another branch prefix";
	else if (d->digest && o->digest && strcmp(d->digest, o->digest))
		what = "has another definition (gates, rules, prompt or model)";
	if (!what)
		return SL_OK;
	return sl_err_set(err, SL_EINPUT, "cannot merge '%s': its campaign '%s' %s than in '%s' "
			  "(base %.12s, digest %.12s; there base %.12s, digest %.12s)", d->store,
			  d->name, what, o->store, d->base, d->digest ? d->digest : "-", o->base,
			  o->digest ? o->digest : "-");
}

/* SL_EINPUT if the inputs are shards of different partitions, or one of them is out. */
static int check_shards(sl_store *out, sl_store *const *in, size_t n, sl_err *err)
{
	unsigned k, first_n = 0, kn;
	const char *first = NULL;
	char *rout = out ? realpath(sl_store_path(out), NULL) : NULL;
	int ret = SL_OK;

	/* a shard's store is run on as that shard: the merge goes elsewhere */
	if (out && !(ret = sl_store_shard_get(out, &k, &kn, err)) && kn)
		ret = sl_err_set(err, SL_EINPUT, "cannot merge into '%s': it holds shard %u/%u; "
				 "merge into a store of its own", sl_store_path(out), k, kn);
	for (size_t i = 0; i < n && !ret; i++) {
		char *r = realpath(sl_store_path(in[i]), NULL);

		if (rout && r && !strcmp(r, rout))
			ret = sl_err_set(err, SL_EINPUT, "cannot merge '%s' into itself",
					 sl_store_path(in[i]));
		free(r);
		if (ret || (ret = sl_store_shard_get(in[i], &k, &kn, err)) || !kn)
			continue;
		if (!first_n) {
			first_n = kn;
			first = sl_store_path(in[i]);
		} else if (kn != first_n) {
			ret = sl_err_set(err, SL_EINPUT, "cannot merge '%s': it holds shard %u/%u, "
					 "'%s' one of %u shards", sl_store_path(in[i]), k, kn,
					 first, first_n);
		}
	}
	free(rout);
	return ret;
}

int sl_merge_check(sl_store *out, sl_store *const *in, size_t n, sl_err *err)
{
	merge_def *defs = NULL;
	size_t ndefs = 0;
	int ret;

	if ((ret = check_shards(out, in, n, err)) || (out && (ret = read_defs(out, &defs, &ndefs,
									   err))))
		goto done;
	for (size_t i = 0; i < n && !ret; i++) {
		size_t from = ndefs;

		if ((ret = read_defs(in[i], &defs, &ndefs, err)))
			break;
		for (size_t a = from; a < ndefs && !ret; a++)
			for (size_t b = 0; b < from && !ret; b++)
				if (!strcmp(defs[a].name, defs[b].name))
					ret = def_conflict(&defs[a], &defs[b], err);
	}
done:
	defs_free(defs, ndefs);
	return ret;
}

/* The parameters merge's statements may name, bound wherever they appear. */
typedef struct merge_ctx {
	sl_store *out;
	sqlite3 *db;                /* out's connection of this thread, src attached */
	const sl_merge_opts *opts;
	char store_id[SL_STORE_ID_LEN + 1];
	int64_t scid, cid;          /* the campaign in src, and in out */
} merge_ctx;

static sqlite3_stmt *prepare(merge_ctx *x, const char *sql, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(x->out, sql, err);
	int i;

	if (!s)
		return NULL;
	if ((i = sqlite3_bind_parameter_index(s, ":scid")))
		sqlite3_bind_int64(s, i, x->scid);
	if ((i = sqlite3_bind_parameter_index(s, ":cid")))
		sqlite3_bind_int64(s, i, x->cid);
	if ((i = sqlite3_bind_parameter_index(s, ":store")))
		sl_store_bind_text(s, i, x->store_id);
	if ((i = sqlite3_bind_parameter_index(s, ":repo")))
		sl_store_bind_text(s, i, x->opts->repo_path);
	return s;
}

/* Run sql (one statement, no rows wanted). */
static int run(merge_ctx *x, const char *sql, sl_err *err)
{
	return sl_store_exec(x->out, prepare(x, sql, err), "merge", err);
}

/* The one integer sql returns (0 when no row). */
static int run_int(merge_ctx *x, const char *sql, int64_t *out, sl_err *err)
{
	sqlite3_stmt *s = prepare(x, sql, err);
	int rc;

	*out = 0;
	if (!s)
		return SL_ERROR;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? SL_OK : sl_store_fail(x->out, err, "merge");
}

/*
 * One INSERT ... SELECT from src.TABLE (aliased s): every column both
 * schemas have but a rowid id, each as the input has it unless set gives
 * its expression (pairs of column and SQL, ended by NULL).  from orders
 * the rows (ids are given in the input's order); upsert, when not NULL, is
 * the conflict target whose row is updated instead.
 */
typedef struct copy_spec {
	const char *table;
	const char *verb;           /* "INSERT" or "INSERT OR IGNORE" */
	const char *from;           /* after "FROM src.TABLE s": joins, WHERE, ORDER BY */
	const char *const *set;
	const char *upsert;
} copy_spec;

static const char *set_expr(const copy_spec *c, const char *col)
{
	for (const char *const *p = c->set; p && *p; p += 2)
		if (!strcmp(p[0], col))
			return p[1];
	return NULL;
}

static int copy_rows(merge_ctx *x, const copy_spec *c, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(x->out, "SELECT m.name FROM pragma_table_info(?1, "
		"'main') m JOIN pragma_table_info(?1, 'src') i USING (name) WHERE NOT (m.name = "
		"'id' AND m.pk = 1) ORDER BY m.cid", err);
	sl_buf cols = SL_BUF_INIT, vals = SL_BUF_INIT, upd = SL_BUF_INIT, sql = SL_BUF_INIT;
	int rc, ret = SL_ERROR;

	if (!s)
		return SL_ERROR;
	sl_store_bind_text(s, 1, c->table);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *col = (const char *)sqlite3_column_text(s, 0), *e = set_expr(c, col);

		sl_buf_addf(&cols, "%s\"%s\"", cols.len ? ", " : "", col);
		if (e)
			sl_buf_addf(&vals, "%s%s", vals.len ? ", " : "", e);
		else
			sl_buf_addf(&vals, "%ss.\"%s\"", vals.len ? ", " : "", col);
		sl_buf_addf(&upd, "%s\"%s\" = excluded.\"%s\"", upd.len ? ", " : "", col, col);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		sl_store_fail(x->out, err, "read the columns");
		goto done;
	}
	sl_buf_addf(&sql, "%s INTO main.%s (%s) SELECT %s FROM src.%s s %s", c->verb, c->table,
		    cols.buf, vals.buf, c->table, c->from);
	if (c->upsert)
		sl_buf_addf(&sql, " ON CONFLICT %s DO UPDATE SET %s", c->upsert, upd.buf);
	ret = run(x, sql.buf, err);
	if (ret)
		sl_err_prefix(err, "copy %s: ", c->table);
done:
	sl_buf_release(&cols);
	sl_buf_release(&vals);
	sl_buf_release(&upd);
	sl_buf_release(&sql);
	return ret;
}

/*
 * What a target holds, as a string: equal in two stores when neither ran
 * the target on since (state, attempts, replies, decisions, publications).
 */
#define TARGET_SIG \
	"s.state || '/' || s.attempts || '/' || s.attempt_base || '/' || coalesce(s.digest, '') " \
	"|| '/' || (SELECT count(*) FROM src.attempts a WHERE a.target_id = s.id) || '/' || " \
	"(SELECT count(*) FROM src.replies r WHERE r.target_id = s.id) || '/' || (SELECT " \
	"count(*) FROM src.decisions d JOIN src.candidates c ON c.id = d.candidate_id WHERE " \
	"c.target_id = s.id) || '/' || coalesce((SELECT group_concat(p.state) FROM src.published " \
	"p JOIN src.candidates c ON c.id = p.candidate_id WHERE c.target_id = s.id), '')"

/* The campaign's row in out (added if missing); x->cid. */
static int merge_campaign_row(merge_ctx *x, sl_err *err)
{
	static const char *const set[] = {
		"repo_path", "coalesce(:repo, s.repo_path)", "baseline_owner", "NULL",
		"baseline_expires", "NULL", "baseline_epoch", "0", NULL,
	};
	copy_spec c = { "campaigns", "INSERT OR IGNORE", "WHERE s.id = :scid", set, NULL };

	if (copy_rows(x, &c, err) ||
	    run_int(x, "SELECT d.id FROM main.campaigns d JOIN src.campaigns s ON s.name = "
		    "d.name WHERE s.id = :scid", &x->cid, err))
		return SL_ERROR;
	return x->opts->repo_path ? run(x, "UPDATE main.campaigns SET repo_path = :repo "
					"WHERE id = :cid", err) : SL_OK;
}

/*
 * temp.pick: the input's targets to copy: those out lacks, those that came
 * from this input and changed there since, and those out holds unfinished
 * that the input finished.  counts are filled.
 */
static int pick_targets(merge_ctx *x, sl_merge_counts *counts, sl_err *err)
{
	int64_t all, picked, replaced;

	if (run(x, "DELETE FROM temp.pick", err) ||
	    run(x, "INSERT INTO temp.pick (src, sig) SELECT s.id, " TARGET_SIG " FROM "
		"src.targets s WHERE s.campaign_id = :scid", err) ||
	    run_int(x, "SELECT count(*) FROM temp.pick", &all, err) ||
	    run(x, "DELETE FROM temp.pick WHERE src IN (SELECT p.src FROM temp.pick p JOIN "
		"src.targets s ON s.id = p.src JOIN main.targets d ON d.campaign_id = :cid AND "
		"d.key = s.key LEFT JOIN main.merge_origin o ON o.campaign_id = :cid AND o.key = "
		"s.key WHERE NOT ((o.store_id = :store AND o.sig <> p.sig) OR (o.store_id IS NOT "
		":store AND d.state IN ('pending', 'budget') AND s.state NOT IN ('pending', "
		"'budget'))))", err) ||
	    run_int(x, "SELECT count(*) FROM temp.pick", &picked, err) ||
	    run(x, "DELETE FROM temp.old", err) ||
	    run(x, "INSERT INTO temp.old (id) SELECT d.id FROM temp.pick p JOIN src.targets s "
		"ON s.id = p.src JOIN main.targets d ON d.campaign_id = :cid AND d.key = s.key",
		err) ||
	    run_int(x, "SELECT count(*) FROM temp.old", &replaced, err))
		return SL_ERROR;
	counts->kept += (size_t)(all - picked);
	counts->replaced += (size_t)replaced;
	counts->copied += (size_t)(picked - replaced);
	return SL_OK;
}

/* Out's records under the targets in temp.old, which the input's replace. */
static int drop_old(merge_ctx *x, sl_err *err)
{
	static const char *const sql[] = {
		"DELETE FROM main.published WHERE candidate_id IN (SELECT id FROM main.candidates "
		"WHERE target_id IN (SELECT id FROM temp.old))",
		"DELETE FROM main.decisions WHERE candidate_id IN (SELECT id FROM main.candidates "
		"WHERE target_id IN (SELECT id FROM temp.old))",
		"DELETE FROM main.gate_runs WHERE candidate_id IN (SELECT id FROM main.candidates "
		"WHERE target_id IN (SELECT id FROM temp.old))",
		"DELETE FROM main.candidates WHERE target_id IN (SELECT id FROM temp.old)",
		"DELETE FROM main.attempts WHERE target_id IN (SELECT id FROM temp.old)",
		"DELETE FROM main.replies WHERE target_id IN (SELECT id FROM temp.old)",
		"DELETE FROM main.steps WHERE target_id IN (SELECT id FROM temp.old)",
	};

	for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]); i++)
		if (run(x, sql[i], err))
			return SL_ERROR;
	return SL_OK;
}

/* The picked targets and everything under them, under new ids. */
static int copy_targets(merge_ctx *x, sl_err *err)
{
	static const char *const target_set[] = {
		"campaign_id", ":cid", "lease_owner", "NULL", "lease_expires", "NULL",
		"lease_epoch", "0", NULL,
	};
	static const char *const attempt_set[] = { "target_id", "m.dst", NULL };
	static const char *const cand_set[] = { "attempt_id", "a.dst", "target_id", "m.dst", NULL };
	static const char *const run_set[] = { "candidate_id", "c.dst", NULL };
	static const char *const pub_set[] = { "candidate_id", "c.dst", "campaign_id", ":cid",
					       NULL };
	static const char *const by_cand = "JOIN temp.m_c c ON c.src = s.candidate_id ORDER BY s.rowid";
	const copy_spec specs[] = {
		{ "attempts", "INSERT", "JOIN temp.m_t m ON m.src = s.target_id ORDER BY s.id", attempt_set,
		  NULL },
		{ "replies", "INSERT", "JOIN temp.m_t m ON m.src = s.target_id", attempt_set, NULL },
		{ "steps", "INSERT", "JOIN temp.m_t m ON m.src = s.target_id", attempt_set, NULL },
		{ "candidates", "INSERT", "JOIN temp.m_a a ON a.src = s.attempt_id JOIN temp.m_t m "
		  "ON m.src = s.target_id ORDER BY s.id", cand_set, NULL },
		{ "gate_runs", "INSERT", by_cand, run_set, NULL },
		{ "decisions", "INSERT", by_cand, run_set, NULL },
		{ "published", "INSERT", by_cand, pub_set, NULL },
	};
	copy_spec targets = { "targets", "INSERT", "JOIN temp.pick p ON p.src = s.id WHERE true ORDER BY s.id",
			      target_set, "(campaign_id, key)" };

	if (copy_rows(x, &targets, err) ||
	    run(x, "DELETE FROM temp.m_t", err) || run(x, "DELETE FROM temp.m_a", err) ||
	    run(x, "DELETE FROM temp.m_c", err) ||
	    run(x, "INSERT INTO temp.m_t SELECT p.src, d.id FROM temp.pick p JOIN src.targets s "
		"ON s.id = p.src JOIN main.targets d ON d.campaign_id = :cid AND d.key = s.key",
		err))
		return SL_ERROR;
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		if (copy_rows(x, &specs[i], err))
			return SL_ERROR;
		/* the new ids of what the next tables point at */
		if (!strcmp(specs[i].table, "attempts") &&
		    run(x, "INSERT INTO temp.m_a SELECT s.id, d.id FROM src.attempts s JOIN "
			"temp.m_t m ON m.src = s.target_id JOIN main.attempts d ON d.target_id = "
			"m.dst AND d.n = s.n", err))
			return SL_ERROR;
		if (!strcmp(specs[i].table, "candidates") &&
		    run(x, "INSERT INTO temp.m_c SELECT s.id, d.id FROM src.candidates s JOIN "
			"temp.m_a a ON a.src = s.attempt_id JOIN main.candidates d ON d.attempt_id "
			"= a.dst", err))
			return SL_ERROR;
	}
	return run(x, "INSERT INTO main.merge_origin (campaign_id, key, store_id, sig) SELECT "
		   ":cid, s.key, :store, p.sig FROM temp.pick p JOIN src.targets s ON s.id = "
		   "p.src WHERE true ON CONFLICT (campaign_id, key) DO UPDATE SET store_id = "
		   "excluded.store_id, sig = excluded.sig", err);
}

/* One campaign of the input: its row, targets, runs, baselines, findings not placed. */
static int merge_campaign(merge_ctx *x, sl_merge_counts *counts, sl_err *err)
{
	static const char *const camp_set[] = { "campaign_id", ":cid", NULL };
	const copy_spec specs[] = {
		{ "runs", "INSERT OR IGNORE", "WHERE s.campaign_id = :scid ORDER BY s.id", camp_set,
		  NULL },
		{ "baselines", "INSERT OR IGNORE", "WHERE s.campaign_id = :scid", camp_set, NULL },
		{ "unplaced", "INSERT OR IGNORE", "WHERE s.campaign_id = :scid", camp_set, NULL },
	};

	if (merge_campaign_row(x, err) || pick_targets(x, counts, err) || drop_old(x, err) ||
	    copy_targets(x, err) ||
	    run(x, "INSERT OR IGNORE INTO main.merged_stores (campaign_id, store_id, "
		"src_campaign_id) SELECT :cid, :store, :scid UNION SELECT :cid, store_id, "
		"src_campaign_id FROM src.merged_stores WHERE campaign_id = :scid", err))
		return SL_ERROR;
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		if (copy_rows(x, &specs[i], err))
			return SL_ERROR;
	counts->campaigns++;
	return SL_OK;
}

/* The ids of the input's campaigns, read before the copies write to out. */
static int campaign_ids(merge_ctx *x, int64_t **ids, size_t *n, sl_err *err)
{
	sqlite3_stmt *s = prepare(x, "SELECT id FROM src.campaigns ORDER BY id", err);
	int rc;

	*ids = NULL;
	*n = 0;
	if (!s)
		return SL_ERROR;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*ids = sl_xrealloc(*ids, sl_st_mult(*n + 1, sizeof(**ids)));
		(*ids)[(*n)++] = sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? SL_OK : sl_store_fail(x->out, err, "read the campaigns");
}

static int merge_all(merge_ctx *x, sl_merge_counts *counts, sl_err *err)
{
	static const char *const temps[] = {
		"CREATE TEMP TABLE IF NOT EXISTS pick (src INTEGER PRIMARY KEY, sig TEXT)",
		"CREATE TEMP TABLE IF NOT EXISTS old (id INTEGER PRIMARY KEY)",
		"CREATE TEMP TABLE IF NOT EXISTS m_t (src INTEGER PRIMARY KEY, dst INTEGER)",
		"CREATE TEMP TABLE IF NOT EXISTS m_a (src INTEGER PRIMARY KEY, dst INTEGER)",
		"CREATE TEMP TABLE IF NOT EXISTS m_c (src INTEGER PRIMARY KEY, dst INTEGER)",
	};
	const copy_spec caches[] = {
		{ "gate_cache", "INSERT OR IGNORE", "ORDER BY s.rowid", NULL, NULL },
		{ "scope_cache", "INSERT OR IGNORE", "", NULL, NULL },
	};
	int64_t *ids = NULL;
	size_t n = 0;
	int ret = SL_ERROR;

	for (size_t i = 0; i < sizeof(temps) / sizeof(temps[0]); i++)
		if (run(x, temps[i], err))
			goto done;
	if (campaign_ids(x, &ids, &n, err))
		goto done;
	for (size_t i = 0; i < n; i++) {
		x->scid = ids[i];
		if (merge_campaign(x, counts, err))
			goto done;
	}
	for (size_t i = 0; i < sizeof(caches) / sizeof(caches[0]); i++)
		if (copy_rows(x, &caches[i], err))
			goto done;
	ret = SL_OK;
done:
	free(ids);
	return ret;
}

int sl_store_tags(sl_buf *out, sl_store *st, int64_t campaign_id, sl_err *err)
{
	char id[SL_STORE_ID_LEN + 1];
	sqlite3_stmt *s;
	int rc;

	if (sl_store_id(id, st, err))
		return SL_ERROR;
	sl_buf_addf(out, "%s/%lld", id, (long long)campaign_id);
	if (!(s = sl_store_prepare(st, "SELECT store_id, src_campaign_id FROM merged_stores "
				   "WHERE campaign_id = ? ORDER BY store_id, src_campaign_id", err)))
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, campaign_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		sl_buf_addf(out, "\n%s/%lld", (const char *)sqlite3_column_text(s, 0),
			    (long long)sqlite3_column_int64(s, 1));
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? SL_OK : sl_store_fail(st, err, "read the merged stores");
}

int sl_store_merge(sl_store *out, sl_store *in, const sl_merge_opts *opts,
		   sl_merge_counts *counts, sl_err *err)
{
	static const sl_merge_opts no_opts = SL_MERGE_OPTS_INIT;
	merge_ctx x = { .out = out, .opts = opts ? opts : &no_opts };
	sqlite3_stmt *s = NULL;
	int ret = SL_ERROR, attached = 0;

	if (sl_store_id(x.store_id, in, err) || !(x.db = sl_store_sqlite(out)))
		return sl_err_set(err, SL_ERROR, "cannot open store '%s'", sl_store_path(out));
	if (!(s = sl_store_prepare(out, "ATTACH DATABASE ? AS src", err)))
		return SL_ERROR;
	sl_store_bind_text(s, 1, sl_store_path(in));
	if (sl_store_exec(out, s, "attach the input", err))
		return SL_ERROR;
	attached = 1;
	if (sl_store_begin(out, err))
		goto done;
	if ((ret = merge_all(&x, counts, err))) {
		sl_store_rollback(out);
		goto done;
	}
	ret = sl_store_commit(out, err);
done:
	if (ret)
		sl_err_prefix(err, "merge '%s': ", sl_store_path(in));
	if (attached)
		sqlite3_exec(x.db, "DETACH DATABASE src", NULL, NULL, NULL);
	return ret;
}
