/*
 * report_lists.c - targets and candidates as lists: `sluice targets`,
 * `sluice show PATH:LINE` and the lists in `status --json` (the findings
 * not placed come from report_unplaced.c).
 *
 * Reads targets, candidates and attempts from the store; renders text or
 * JSON into the caller's buffer.
 */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "pipeline/review/report.h"
#include "common/term.h"
#include "pipeline/review/review.h"
#include "common/util.h"

void sl_report_add_safe(sl_buf *out, const char *s)
{
	if (s)
		sl_term_safe(out, s, strlen(s), 0);
}

/* The latest candidate of each target: index into cands, or -1; by target id order. */
static int64_t latest_candidate(const sl_candidate_rec *cands, size_t nc, int64_t target_id)
{
	int64_t best = -1;

	for (size_t i = 0; i < nc; i++)
		if (cands[i].target_id == target_id)
			best = (int64_t)i;
	return best;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

void sl_report_add_indented(sl_buf *out, const char *s, const char *indent)
{
	while (s && *s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);

		sl_buf_add(out, s, n);
		if (!nl || !nl[1])
			break;
		sl_buf_addf(out, "\n%s", indent);
		s = nl + 1;
	}
}

/*
 * A whole reason on one line, neutralised for a terminal: a newline is
 * written \n and a backslash \\, so each target stays one line of `targets`.
 */
static void add_one_line(sl_buf *out, const char *r)
{
	while (*r) {
		size_t n = strcspn(r, "\\\n");

		sl_term_safe(out, r, n, 0);
		r += n;
		if (!*r)
			break;
		if (*r == '\\' || r[1])
			sl_buf_adds(out, *r == '\n' ? "\\n" : "\\\\");
		r++;
	}
}

/*
 * What to say of a target: its reason, or for a rejected target that has
 * none the reason its candidate was rejected with.
 */
static const char *target_reason(const sl_target_rec *t, const sl_candidate_rec *c)
{
	if (!t->reason && t->state == SL_T_REJECTED && c && c->decision == SL_D_REJECT)
		return c->decision_reason;
	return t->reason;
}

static json_t *target_json(const sl_target_rec *t, const sl_candidate_rec *c)
{
	json_t *o = json_object();
	const char *reason = target_reason(t, c);

	json_object_set_new(o, "id", json_integer(t->id));
	json_object_set_new(o, "path", json_string(t->path));
	json_object_set_new(o, "start_line", json_integer(t->start_line));
	json_object_set_new(o, "end_line", json_integer(t->end_line));
	json_object_set_new(o, "unit", json_string(t->unit));
	json_object_set_new(o, "state", json_string(sl_target_state_name(t->state)));
	json_object_set_new(o, "attempts", json_integer(t->attempts));
	json_object_set_new(o, "reason", str_or_null(reason));
	json_object_set_new(o, "candidate", c ? json_integer(c->id) : json_null());
	return o;
}

static void add_json_line(sl_buf *out, json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);

	sl_buf_adds(out, s ? s : "null");
	sl_buf_addch(out, '\n');
	free(s);
	json_decref(o);
}

int sl_report_targets(sl_buf *out, sl_store *st, int64_t campaign_id, unsigned states,
		      int json, size_t *count_out, sl_err *err)
{
	sl_target_rec *t = NULL;
	sl_candidate_rec *c = NULL;
	size_t nt = 0, nc = 0, count = 0;
	int ret;

	if ((ret = sl_store_targets(st, campaign_id, SL_T_ANY, &t, &nt, err)) ||
	    (ret = sl_store_candidates(st, campaign_id, SL_C_ANY, &c, &nc, err)))
		goto done;
	for (size_t i = 0; i < nt; i++) {
		const char *reason;
		int64_t ci;

		if (states && (t[i].state < 0 || !(states & (1u << t[i].state))))
			continue;
		count++;
		ci = latest_candidate(c, nc, t[i].id);
		if (json) {
			add_json_line(out, target_json(&t[i], ci >= 0 ? &c[ci] : NULL));
			continue;
		}
		sl_buf_addf(out, "%5lld  %-8s  %s:%lld  attempts %lld", (long long)t[i].id,
			    sl_target_state_name(t[i].state), t[i].path, (long long)t[i].start_line,
			    (long long)t[i].attempts);
		if (ci >= 0)
			sl_buf_addf(out, "  candidate %lld", (long long)c[ci].id);
		if ((reason = target_reason(&t[i], ci >= 0 ? &c[ci] : NULL))) {
			sl_buf_adds(out, "  ");
			add_one_line(out, reason);
		}
		sl_buf_addch(out, '\n');
	}
	*count_out = count;
done:
	sl_target_list_free(t, nt);
	sl_candidate_list_free(c, nc);
	return ret;
}

int sl_report_show_target(sl_buf *out, sl_store *st, int64_t campaign_id, const char *path,
			  int64_t line, int flags, sl_err *err)
{
	sl_target_rec *t = NULL, *hit = NULL;
	sl_candidate_rec *c = NULL;
	sl_attempt_rec *a = NULL;
	size_t nt = 0, nc = 0, na = 0;
	int64_t ci;
	int ret;

	if ((ret = sl_store_targets(st, campaign_id, SL_T_ANY, &t, &nt, err)) ||
	    (ret = sl_store_candidates(st, campaign_id, SL_C_ANY, &c, &nc, err)))
		goto done;
	/* the narrowest target whose lines hold LINE */
	for (size_t i = 0; i < nt; i++)
		if (!strcmp(t[i].path, path) && t[i].start_line <= line && line <= t[i].end_line &&
		    (!hit || t[i].end_line - t[i].start_line < hit->end_line - hit->start_line))
			hit = &t[i];
	if (!hit) {
		ret = sl_err_set(err, SL_ENOTFOUND, "no target at '%s:%lld'", path, (long long)line);
		goto done;
	}
	if ((ci = latest_candidate(c, nc, hit->id)) >= 0) {
		ret = sl_review_show(out, st, c[ci].id, flags, err);
		goto done;
	}
	if ((flags & SL_SHOW_ATTEMPTS) && (ret = sl_store_attempts(st, hit->id, &a, &na, err)))
		goto done;
	if (flags & 1) {
		json_t *o = target_json(hit, NULL);

		if (flags & SL_SHOW_ATTEMPTS)
			json_object_set_new(o, "attempt_list", sl_review_attempts_json(a, na));
		add_json_line(out, o);
		goto done;
	}
	sl_buf_addf(out, "target %lld: %s:%lld-%lld (%s), no candidate\nstate:    %s\n"
		    "attempts: %lld\n", (long long)hit->id, hit->path, (long long)hit->start_line,
		    (long long)hit->end_line, hit->unit, sl_target_state_name(hit->state),
		    (long long)hit->attempts);
	if (hit->reason) {
		sl_buf_adds(out, "reason:   ");
		sl_report_add_safe(out, hit->reason);
		sl_buf_addch(out, '\n');
	}
	if (flags & SL_SHOW_ATTEMPTS)
		sl_review_attempts_text(out, a, na, !!(flags & SL_SHOW_FULL));
done:
	sl_attempt_list_free(a, na);
	sl_target_list_free(t, nt);
	sl_candidate_list_free(c, nc);
	return ret;
}

static json_t *metrics_json(const sl_metrics *m)
{
	json_t *o = json_object(), *groups = json_array(), *days = json_array();

#define RATE(x) ((x) < 0 ? json_null() : json_real(x))
	json_object_set_new(o, "proposed", json_integer(m->proposed));
	json_object_set_new(o, "decided", json_integer(m->decided));
	json_object_set_new(o, "accepted", json_integer(m->accepted));
	json_object_set_new(o, "rejected", json_integer(m->rejected));
	json_object_set_new(o, "acceptance_rate", RATE(m->acceptance_rate));
	json_object_set_new(o, "landed_checked", json_integer(m->landed_checked));
	json_object_set_new(o, "landed_unchanged", json_integer(m->landed_unchanged));
	json_object_set_new(o, "landed_unchanged_rate", RATE(m->landed_unchanged_rate));
	json_object_set_new(o, "median_decision_hours", RATE(m->median_decision_hours));
	json_object_set_new(o, "tokens", json_integer(m->tokens));
	json_object_set_new(o, "cost", json_real(m->cost));
	json_object_set_new(o, "tokens_per_accepted", RATE(m->tokens_per_accepted));
	json_object_set_new(o, "cost_per_accepted", RATE(m->cost_per_accepted));
	for (size_t i = 0; i < m->ngroups; i++) {
		const sl_metric_group *g = &m->groups[i];

		json_t *j = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:f}",
			"by", g->kind, "name", g->name, "proposed", (json_int_t)g->proposed,
			"accepted", (json_int_t)g->accepted, "rejected", (json_int_t)g->rejected,
			"landed_unchanged", (json_int_t)g->landed_unchanged,
			"tokens", (json_int_t)g->tokens, "cost", g->cost);

		json_object_set_new(j, "cost_per_accepted", g->accepted ?
				    json_real(g->cost / (double)g->accepted) : json_null());
		json_array_append_new(groups, j);
	}
	for (size_t i = 0; i < m->ndays; i++)
		json_array_append_new(days, json_pack("{s:s,s:I,s:I,s:f}", "day", m->days[i].day,
			"decided", (json_int_t)m->days[i].decided, "accepted",
			(json_int_t)m->days[i].accepted, "acceptance_rate",
			(double)m->days[i].accepted / (double)m->days[i].decided));
#undef RATE
	json_object_set_new(o, "breakdown", groups);
	json_object_set_new(o, "by_day", days);
	return o;
}

int sl_report_status_json(sl_buf *out, sl_store *st, const sl_campaign_rec *camp,
			  const sl_funnel *f, sl_err *err)
{
	sl_buf funnel = SL_BUF_INIT;
	sl_target_rec *t = NULL;
	sl_candidate_rec *c = NULL;
	sl_metrics m = { 0 };
	sl_branch_view v = { 0 };
	size_t nt = 0, nc = 0;
	json_t *o = NULL, *ta, *ca;
	int ret;

	if ((ret = sl_store_targets(st, camp->id, SL_T_ANY, &t, &nt, err)) ||
	    (ret = sl_store_candidates(st, camp->id, SL_C_ANY, &c, &nc, err)) ||
	    (ret = sl_store_metrics(st, camp->id, &m, err)) ||
	    (ret = sl_branch_view_open(&v, st, camp->id, err)))
		goto done;
	sl_review_funnel_json(&funnel, camp, f);
	if (!(o = json_loads(funnel.buf, 0, NULL))) {
		ret = sl_err_set(err, SL_ERROR, "cannot render the funnel as JSON");
		goto done;
	}
	json_object_set_new(o, "metrics", metrics_json(&m));
	ta = json_array();
	for (size_t i = 0; i < nt; i++) {
		int64_t ci = latest_candidate(c, nc, t[i].id);

		json_array_append_new(ta, target_json(&t[i], ci >= 0 ? &c[ci] : NULL));
	}
	json_object_set_new(o, "target_list", ta);
	ca = json_array();
	for (size_t i = 0; i < nc; i++) {
		json_t *cj = sl_review_candidate_json(&c[i]);
		const char *bs = sl_branch_state_name(sl_branch_state_of(&v, c[i].branch,
									 c[i].commit_oid));

		json_object_set_new(cj, "branch_state", bs ? json_string(bs) : json_null());
		json_array_append_new(ca, cj);
	}
	json_object_set_new(o, "candidate_list", ca);
	sl_buf_reset(&funnel);
	if ((ret = sl_report_unplaced(&funnel, st, camp->id, SL_UNPLACED_JSON, err)))
		goto done;
	json_object_set_new(o, "unplaced", json_loads(funnel.buf, 0, NULL));
	add_json_line(out, o);
done:
	sl_branch_view_release(&v);
	sl_metrics_release(&m);
	sl_buf_release(&funnel);
	sl_target_list_free(t, nt);
	sl_candidate_list_free(c, nc);
	return ret;
}
