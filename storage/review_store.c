/*
 * review_store.c - the review side of the store: outcome metrics over
 * attempts, candidates, decisions and published changes (the `published`
 * table of migration 4), and the published-change records `sluice publish`
 * and `sluice sync` keep.
 */
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "review_store.h"
#include "store_internal.h"
#include "util.h"

void sl_metrics_release(sl_metrics *m)
{
	for (size_t i = 0; i < m->ngroups; i++) {
		free(m->groups[i].kind);
		free(m->groups[i].name);
	}
	free(m->groups);
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

int sl_store_metrics(sl_store *st, int64_t campaign_id, sl_metrics *out, sl_err *err)
{
	sqlite3 *db = sl_store_sqlite(st);
	sqlite3_stmt *s = NULL;
	double *hours = NULL;
	size_t nh = 0, ah = 0, ag = 0;
	char *format = NULL;
	int rc, ret = SL_ERROR;

	memset(out, 0, sizeof(*out));
	if (sqlite3_prepare_v2(db, "SELECT spec_text FROM campaigns WHERE id = ?", -1, &s,
			       NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(s, 1, campaign_id);
	format = edit_format_of(sqlite3_step(s) == SQLITE_ROW ?
				(const char *)sqlite3_column_text(s, 0) : NULL);
	sqlite3_finalize(s);

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
	if ((rc = sqlite3_step(s)) != SQLITE_ROW)
		goto fail;
	out->proposed = sqlite3_column_int64(s, 0);
	out->decided = sqlite3_column_int64(s, 1);
	out->accepted = sqlite3_column_int64(s, 2);
	out->rejected = sqlite3_column_int64(s, 3);
	out->landed_unchanged = sqlite3_column_int64(s, 4);
	out->landed_checked = sqlite3_column_int64(s, 5);
	out->tokens = sqlite3_column_int64(s, 6);
	out->cost = sqlite3_column_double(s, 7);
	sqlite3_finalize(s);
	s = NULL;
	out->acceptance_rate = out->decided ? (double)out->accepted / (double)out->decided : -1;
	out->landed_unchanged_rate = out->landed_checked ?
		(double)out->landed_unchanged / (double)out->landed_checked : -1;
	out->tokens_per_accepted = out->accepted ? (double)out->tokens / (double)out->accepted : -1;
	out->cost_per_accepted = out->accepted ? out->cost / (double)out->accepted : -1;

	/* time from the candidate to its latest decision */
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
	sqlite3_finalize(s);
	s = NULL;
	out->median_decision_hours = -1;
	if (nh) {
		qsort(hours, nh, sizeof(*hours), cmp_double);
		out->median_decision_hours = nh % 2 ? hours[nh / 2] :
			(hours[nh / 2 - 1] + hours[nh / 2]) / 2;
	}

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
	if (rc != SQLITE_DONE)
		goto fail;
	ret = SL_OK;
	goto done;
fail:
	ret = sl_store_fail(st, err, "metrics");
	sl_metrics_release(out);
done:
	sqlite3_finalize(s);
	free(hours);
	free(format);
	return ret;
}

