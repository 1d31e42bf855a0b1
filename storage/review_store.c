/*
 * review_store.c - the review side of the store: outcome metrics over
 * attempts, candidates, decisions and published changes (the `published`
 * table of migration 4), and the published-change records `sluice publish`
 * and `sluice sync` keep.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "storage/review_store.h"
#include "storage/store_internal.h"
#include "common/util.h"

void sl_metrics_release(sl_metrics *m)
{
	for (size_t i = 0; i < m->ngroups; i++) {
		free(m->groups[i].kind);
		free(m->groups[i].name);
	}
	free(m->groups);
	free(m->days);
	memset(m, 0, sizeof(*m));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The campaign's edit format as its spec names it ("default" when left out). */
static char *edit_format_of(const char *spec_text)
{
	const char *p = spec_text;

	while (p && *p) {
		if (!strncmp(p, "edit_format:", 12)) {
			p += 12;
			p += strspn(p, " \t\"'");
			return sl_xstrndup(p, strcspn(p, " \t\"'#\r\n"));
		}
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return sl_xstrdup("default");
}

#define ROWS_SQL \
	"WITH r AS (SELECT CASE WHEN a.source = 'rules' THEN 'rule' ELSE 'model' END AS origin," \
	" a.source AS provider," \
	" CASE WHEN a.source = 'rules' THEN 'rules' WHEN json_valid(a.request) THEN" \
	"  coalesce(json_extract(a.request, '$.model'), '?') ELSE '?' END AS model," \
	" CASE WHEN a.source = 'rules' THEN 'rules' ELSE ?2 END AS format," \
	" max(a.tokens_in, 0) + max(a.tokens_out, 0) AS tokens, a.cost AS cost," \
	" coalesce(c.state = 'passed', 0) AS proposed, d.decision AS decision," \
	" p.landed_unchanged AS landed" \
	" FROM attempts a JOIN targets t ON t.id = a.target_id" \
	" LEFT JOIN candidates c ON c.attempt_id = a.id" \
	" LEFT JOIN decisions d ON d.id = (SELECT max(id) FROM decisions WHERE candidate_id = c.id)" \
	" LEFT JOIN published p ON p.candidate_id = c.id" \
	" WHERE t.campaign_id = ?1) "

#define GROUP_SQL(kind, col) \
	"SELECT '" kind "', " col ", sum(proposed), sum(decision IS 'accept'), " \
	"sum(decision IS 'reject'), sum(landed IS 1), sum(tokens), sum(cost) FROM r GROUP BY " col

/* The campaign's edit format from its stored spec, into *format. */
static int metrics_format(sl_store *st, sqlite3 *db, int64_t campaign_id, char **format,
			  sl_err *err)
{
	sqlite3_stmt *s = NULL;

	if (!db || sqlite3_prepare_v2(db, "SELECT spec_text FROM campaigns WHERE id = ?", -1, &s,
				      NULL) != SQLITE_OK)
		return sl_store_fail(st, err, "metrics");
	sqlite3_bind_int64(s, 1, campaign_id);
	*format = edit_format_of(sqlite3_step(s) == SQLITE_ROW ?
				 (const char *)sqlite3_column_text(s, 0) : NULL);
	sqlite3_finalize(s);
	return SL_OK;
}

/* The rates the totals give, -1 where there is nothing to divide by. */
static void metrics_rates(sl_metrics *out)
{
	out->acceptance_rate = out->decided ? (double)out->accepted / (double)out->decided : -1;
	out->landed_unchanged_rate = out->landed_checked ?
		(double)out->landed_unchanged / (double)out->landed_checked : -1;
	out->tokens_per_accepted = out->accepted ? (double)out->tokens / (double)out->accepted : -1;
	out->cost_per_accepted = out->accepted ? out->cost / (double)out->accepted : -1;
}

/* The campaign's totals over every attempt, and their rates. */
static int metrics_totals(sl_store *st, sqlite3 *db, int64_t campaign_id, const char *format,
			  sl_metrics *out, sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int ret = SL_OK;

	if (sqlite3_prepare_v2(db, ROWS_SQL "SELECT coalesce(sum(proposed), 0), "
			       "coalesce(sum(decision IS NOT NULL AND proposed), 0), "
			       "coalesce(sum(decision IS 'accept'), 0), "
			       "coalesce(sum(decision IS 'reject'), 0), "
			       "coalesce(sum(landed IS 1), 0), "
			       "coalesce(sum(landed IS NOT NULL AND decision IS 'accept'), 0), "
			       "coalesce(sum(tokens), 0), coalesce(sum(cost), 0) FROM r",
			       -1, &s, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(s, 1, campaign_id);
	sqlite3_bind_text(s, 2, format, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(s) != SQLITE_ROW)
		goto fail;
	out->proposed = sqlite3_column_int64(s, 0);
	out->decided = sqlite3_column_int64(s, 1);
	out->accepted = sqlite3_column_int64(s, 2);
	out->rejected = sqlite3_column_int64(s, 3);
	out->landed_unchanged = sqlite3_column_int64(s, 4);
	out->landed_checked = sqlite3_column_int64(s, 5);
	out->tokens = sqlite3_column_int64(s, 6);
	out->cost = sqlite3_column_double(s, 7);
	metrics_rates(out);
	goto done;
fail:
	ret = sl_store_fail(st, err, "metrics");
done:
	sqlite3_finalize(s);
	return ret;
}

/* The median time from a proposed candidate to its latest decision, -1 when none. */
static int metrics_median(sl_store *st, sqlite3 *db, int64_t campaign_id, sl_metrics *out,
			  sl_err *err)
{
	sqlite3_stmt *s = NULL;
	double *hours = NULL;
	size_t nh = 0, ah = 0;
	int rc, ret = SL_OK;

	if (sqlite3_prepare_v2(db, "SELECT (julianday(d.decided_at) - julianday(c.created_at)) * 24 "
			       "FROM candidates c JOIN targets t ON t.id = c.target_id "
			       "JOIN decisions d ON d.id = (SELECT max(id) FROM decisions "
			       "WHERE candidate_id = c.id) WHERE t.campaign_id = ? "
			       "AND c.state = 'passed'", -1, &s, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(s, 1, campaign_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		SL_ALLOC_GROW(hours, nh + 1, ah);
		hours[nh++] = sqlite3_column_double(s, 0);
	}
	if (rc != SQLITE_DONE)
		goto fail;
	out->median_decision_hours = -1;
	if (nh) {
		qsort(hours, nh, sizeof(*hours), cmp_double);
		out->median_decision_hours = nh % 2 ? hours[nh / 2] :
			(hours[nh / 2 - 1] + hours[nh / 2]) / 2;
	}
	goto done;
fail:
	ret = sl_store_fail(st, err, "metrics");
done:
	sqlite3_finalize(s);
	free(hours);
	return ret;
}

/* Decisions and acceptances per day of decision, oldest first. */
static int metrics_days(sl_store *st, sqlite3 *db, int64_t campaign_id, sl_metrics *out,
			sl_err *err)
{
	sqlite3_stmt *s = NULL;
	size_t ad = 0;
	int rc, ret = SL_OK;

	if (sqlite3_prepare_v2(db, "SELECT substr(d.decided_at, 1, 10) AS day, count(*), "
			       "count(*) FILTER (WHERE d.decision = 'accept') "
			       "FROM candidates c JOIN targets t ON t.id = c.target_id "
			       "JOIN decisions d ON d.id = (SELECT max(id) FROM decisions "
			       "WHERE candidate_id = c.id) WHERE t.campaign_id = ? "
			       "AND c.state = 'passed' GROUP BY day ORDER BY day", -1, &s,
			       NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(s, 1, campaign_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		sl_metric_day *d;
		const unsigned char *day = sqlite3_column_text(s, 0);

		SL_ALLOC_GROW(out->days, out->ndays + 1, ad);
		d = &out->days[out->ndays++];
		snprintf(d->day, sizeof(d->day), "%s", day ? (const char *)day : "?");
		d->decided = sqlite3_column_int64(s, 1);
		d->accepted = sqlite3_column_int64(s, 2);
	}
	if (rc == SQLITE_DONE)
		goto done;
fail:
	ret = sl_store_fail(st, err, "metrics");
done:
	sqlite3_finalize(s);
	return ret;
}

/* The totals grouped by source, provider, model and edit format. */
static int metrics_groups(sl_store *st, sqlite3 *db, int64_t campaign_id, const char *format,
			  sl_metrics *out, sl_err *err)
{
	sqlite3_stmt *s = NULL;
	size_t ag = 0;
	int rc, ret = SL_OK;

	if (sqlite3_prepare_v2(db, ROWS_SQL GROUP_SQL("source", "origin") " UNION ALL "
			       GROUP_SQL("provider", "provider") " UNION ALL "
			       GROUP_SQL("model", "model") " UNION ALL "
			       GROUP_SQL("edit_format", "format"), -1, &s, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(s, 1, campaign_id);
	sqlite3_bind_text(s, 2, format, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		sl_metric_group *g;

		SL_ALLOC_GROW(out->groups, out->ngroups + 1, ag);
		g = &out->groups[out->ngroups++];
		g->kind = sl_store_col_text(s, 0);
		g->name = sl_store_col_text(s, 1);
		if (!g->name)
			g->name = sl_xstrdup("?");
		g->proposed = sqlite3_column_int64(s, 2);
		g->accepted = sqlite3_column_int64(s, 3);
		g->rejected = sqlite3_column_int64(s, 4);
		g->landed_unchanged = sqlite3_column_int64(s, 5);
		g->tokens = sqlite3_column_int64(s, 6);
		g->cost = sqlite3_column_double(s, 7);
	}
	if (rc == SQLITE_DONE)
		goto done;
fail:
	ret = sl_store_fail(st, err, "metrics");
done:
	sqlite3_finalize(s);
	return ret;
}

int sl_store_metrics(sl_store *st, int64_t campaign_id, sl_metrics *out, sl_err *err)
{
	sqlite3 *db = sl_store_sqlite(st);
	char *format = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = metrics_format(st, db, campaign_id, &format, err)) ||
	    (ret = metrics_totals(st, db, campaign_id, format, out, err)) ||
	    (ret = metrics_median(st, db, campaign_id, out, err)) ||
	    (ret = metrics_days(st, db, campaign_id, out, err)) ||
	    (ret = metrics_groups(st, db, campaign_id, format, out, err)))
		sl_metrics_release(out);
	free(format);
	return ret;
}


/* published changes */

void sl_published_rec_release(sl_published_rec *p)
{
	free(p->forge);
	free(p->project);
	free(p->branch);
	free(p->head_oid);
	free(p->text_sha);
	free(p->url);
	free(p->close_reason);
	free(p->opened_at);
	free(p->updated_at);
	memset(p, 0, sizeof(*p));
}

void sl_published_list_free(sl_published_rec *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sl_published_rec_release(&v[i]);
	free(v);
}

static const char *const pr_state_names[SL_PR_N] = {
	[SL_PR_OPEN] = "open", [SL_PR_MERGED] = "merged", [SL_PR_CLOSED] = "closed",
};

const char *sl_pr_state_name(int state)
{
	return state > SL_PR_NONE && state < SL_PR_N ? pr_state_names[state] : NULL;
}

int sl_pr_state_parse(const char *name)
{
	for (int i = SL_PR_NONE + 1; name && i < SL_PR_N; i++)
		if (!strcmp(name, pr_state_names[i]))
			return i;
	return SL_PR_NONE;
}

#define PUBLISHED_SELECT \
	"SELECT candidate_id, campaign_id, forge, project, branch, head_oid, " \
	"coalesce(number, 0), url, state, coalesce(landed_unchanged, -1), review_comments, " \
	"close_reason, opened_at, updated_at, text_sha FROM published "

static void read_published(sqlite3_stmt *s, void *row)
{
	sl_published_rec *p = row;

	p->candidate_id = sqlite3_column_int64(s, 0);
	p->campaign_id = sqlite3_column_int64(s, 1);
	p->forge = sl_store_col_text(s, 2);
	p->project = sl_store_col_text(s, 3);
	p->branch = sl_store_col_text(s, 4);
	p->head_oid = sl_store_col_text(s, 5);
	p->number = sqlite3_column_int64(s, 6);
	p->url = sl_store_col_text(s, 7);
	p->state = sl_pr_state_parse((const char *)sqlite3_column_text(s, 8));
	p->landed_unchanged = sqlite3_column_int(s, 9);
	p->review_comments = sqlite3_column_int64(s, 10);
	p->close_reason = sl_store_col_text(s, 11);
	p->opened_at = sl_store_col_text(s, 12);
	p->updated_at = sl_store_col_text(s, 13);
	p->text_sha = sl_store_col_text(s, 14);
}

int sl_store_published_get(sl_store *st, int64_t candidate_id, sl_published_rec *out,
			   sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, PUBLISHED_SELECT "WHERE candidate_id = ?", err);
	int ret;

	memset(out, 0, sizeof(*out));
	if (s)
		sqlite3_bind_int64(s, 1, candidate_id);
	ret = sl_store_row(st, s, read_published, out, "read published change", err);
	if (ret == SL_ENOTFOUND)
		sl_err_set(err, SL_ENOTFOUND, "candidate %lld was not published",
			   (long long)candidate_id);
	return ret;
}

int sl_store_published_put(sl_store *st, const sl_published_rec *in, sl_err *err)
{
	char now[32];
	sqlite3_stmt *s = sl_store_prepare(st, "INSERT INTO published (candidate_id, "
			       "campaign_id, forge, project, branch, head_oid, number, url, state, "
			       "landed_unchanged, review_comments, close_reason, opened_at, updated_at, "
			       "text_sha) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
			       "?13, ?13, ?14) ON CONFLICT (candidate_id) DO UPDATE SET forge = ?3, "
			       "project = ?4, branch = ?5, head_oid = ?6, number = ?7, url = ?8, "
			       "state = ?9, landed_unchanged = ?10, review_comments = ?11, "
			       "close_reason = ?12, updated_at = ?13, text_sha = ?14", err);

	if (!s)
		return SL_ERROR;
	sl_iso8601_now(now);
	sqlite3_bind_int64(s, 1, in->candidate_id);
	sqlite3_bind_int64(s, 2, in->campaign_id);
	sl_store_bind_text(s, 3, in->forge);
	sl_store_bind_text(s, 4, in->project);
	sl_store_bind_text(s, 5, in->branch);
	sl_store_bind_text(s, 6, in->head_oid);
	if (in->number)
		sqlite3_bind_int64(s, 7, in->number);
	else
		sqlite3_bind_null(s, 7);
	sl_store_bind_text(s, 8, in->url);
	sl_store_bind_text(s, 9, sl_pr_state_name(in->state));
	if (in->landed_unchanged >= 0)
		sqlite3_bind_int(s, 10, in->landed_unchanged);
	else
		sqlite3_bind_null(s, 10);
	sqlite3_bind_int64(s, 11, in->review_comments);
	sl_store_bind_text(s, 12, in->close_reason);
	sl_store_bind_text(s, 13, now);
	sl_store_bind_text(s, 14, in->text_sha);
	return sl_store_exec(st, s, "record published change", err);
}

int sl_store_published_list(sl_store *st, int64_t campaign_id, int state,
			    sl_published_rec **out, size_t *n, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, PUBLISHED_SELECT "WHERE campaign_id = ?1 "
					   "AND (?2 IS NULL OR state = ?2) ORDER BY candidate_id",
					   err);

	if (s) {
		sqlite3_bind_int64(s, 1, campaign_id);
		sl_store_bind_text(s, 2, sl_pr_state_name(state));
	}
	return sl_store_rows(st, s, sizeof(**out), read_published, (void **)out, n,
			     "list published changes", err);
}

int sl_store_published_pace(sl_store *st, int64_t campaign_id, int64_t *open_out,
			    int64_t *last_hour_out, sl_err *err)
{
	sqlite3_stmt *s = sl_store_prepare(st, "SELECT "
			       "count(DISTINCT number) FILTER (WHERE state = 'open'), "
			       "count(DISTINCT number) FILTER (WHERE opened_at >= "
			       "strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-1 hour')) "
			       "FROM published WHERE campaign_id = ? AND number IS NOT NULL", err);
	int rc;

	if (!s)
		return SL_ERROR;
	sqlite3_bind_int64(s, 1, campaign_id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*open_out = sqlite3_column_int64(s, 0);
		*last_hour_out = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? SL_OK : sl_store_fail(st, err, "count published changes");
}
