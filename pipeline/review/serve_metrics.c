/*
 * serve_metrics.c - /metrics of `sluice serve`: every campaign of the
 * stores in the OpenMetrics text format (1.0.0), for Prometheus.
 *
 * Families, each labelled with store and campaign: sluice_targets (gauge,
 * by state), sluice_gate_runs (counter, by gate and verdict, cached
 * verdicts too), sluice_gate_duration_seconds (histogram by gate, runs not
 * cached), sluice_tokens and sluice_cost (counters, by provider),
 * sluice_proposed (gauge), sluice_decisions (counter, by decision),
 * sluice_acceptance_ratio (gauge, once anything is decided), and for a
 * model judge's gate (kind: judge) sluice_judge_verdicts (counter, by gate
 * and verdict: accept, reject, error) and sluice_judge_reviewed (counter,
 * the candidates it accepted by the reviewers' latest decision).  The text ends
 * with "# EOF".  Label values are made safe for a terminal and escaped as
 * the format asks (backslash, quote, newline).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/review/serve_internal.h"
#include "storage/dash_store.h"
#include "storage/review_store.h"
#include "common/term.h"
#include "common/util.h"

/* What the families read of one campaign. */
typedef struct metric_camp {
	const char *store;          /* borrowed */
	sl_campaign_rec c;
	sl_metrics m;
	int64_t by_state[SL_T_NSTATES];
	sl_dash_gate *g;
	size_t ng;
	sl_funnel f;                /* its gates' model judges */
} metric_camp;

static void add_label_value(sl_buf *out, const char *s)
{
	sl_buf safe = SL_BUF_INIT;

	sl_term_safe(&safe, s ? s : "", s ? strlen(s) : 0, 0);
	for (const char *p = safe.buf; *p; p++) {
		if (*p == '\\' || *p == '"')
			sl_buf_addch(out, '\\');
		if (*p == '\n')
			sl_buf_adds(out, "\\n");
		else
			sl_buf_addch(out, *p);
	}
	sl_buf_release(&safe);
}

/* NAME{store="..",campaign=".." and the opening of the next label, if any. */
static void sample(sl_buf *out, const char *name, const metric_camp *mc)
{
	sl_buf_addf(out, "%s{store=\"", name);
	add_label_value(out, mc->store);
	sl_buf_adds(out, "\",campaign=\"");
	add_label_value(out, mc->c.name);
	sl_buf_addch(out, '"');
}

static void family(sl_buf *out, const char *name, const char *type, const char *help)
{
	sl_buf_addf(out, "# TYPE %s %s\n# HELP %s %s\n", name, type, name, help);
}

static void add_targets(sl_buf *out, const metric_camp *mc, size_t n)
{
	family(out, "sluice_targets", "gauge", "Targets by state.");
	for (size_t i = 0; i < n; i++)
		for (int s = 0; s < SL_T_NSTATES; s++) {
			sample(out, "sluice_targets", &mc[i]);
			sl_buf_addf(out, ",state=\"%s\"} %lld\n", sl_target_state_name(s),
				    (long long)mc[i].by_state[s]);
		}
}

static void add_gate_runs(sl_buf *out, const metric_camp *mc, size_t n)
{
	family(out, "sluice_gate_runs", "counter", "Gate runs on candidates by verdict.");
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < mc[i].ng; k++)
			for (int v = 0; v < SL_VERDICT_N; v++) {
				sample(out, "sluice_gate_runs_total", &mc[i]);
				sl_buf_adds(out, ",gate=\"");
				add_label_value(out, mc[i].g[k].gate);
				sl_buf_addf(out, "\",verdict=\"%s\"} %lld\n",
					    sl_verdict_name((sl_verdict)v),
					    (long long)mc[i].g[k].verdicts[v]);
			}
}

/* One line of the histogram: NAME_SUFFIX{...,gate="G"[,le="B"]} V */
static void hist_line(sl_buf *out, const metric_camp *mc, const char *gate, const char *suffix,
		      const char *le)
{
	char name[64];

	snprintf(name, sizeof(name), "sluice_gate_duration_seconds_%s", suffix);
	sample(out, name, mc);
	sl_buf_adds(out, ",gate=\"");
	add_label_value(out, gate);
	sl_buf_addch(out, '"');
	if (le)
		sl_buf_addf(out, ",le=\"%s\"", le);
	sl_buf_adds(out, "} ");
}

static void add_durations(sl_buf *out, const metric_camp *mc, size_t n)
{
	family(out, "sluice_gate_duration_seconds", "histogram",
	       "Time of gate runs on candidates, cached verdicts left out.");
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < mc[i].ng; k++) {
			const sl_dash_gate *g = &mc[i].g[k];
			char le[32];

			for (int b = 0; b < SL_DASH_NBUCKETS; b++) {
				snprintf(le, sizeof(le), "%g", sl_dash_bucket_s[b]);
				hist_line(out, &mc[i], g->gate, "bucket", le);
				sl_buf_addf(out, "%lld\n", (long long)g->le[b]);
			}
			hist_line(out, &mc[i], g->gate, "bucket", "+Inf");
			sl_buf_addf(out, "%lld\n", (long long)g->runs);
			hist_line(out, &mc[i], g->gate, "count", NULL);
			sl_buf_addf(out, "%lld\n", (long long)g->runs);
			hist_line(out, &mc[i], g->gate, "sum", NULL);
			sl_buf_addf(out, "%.3f\n", g->sum_s);
		}
}

/* sluice_tokens and sluice_cost by provider (the metrics' "provider" groups). */
static void add_usage(sl_buf *out, const metric_camp *mc, size_t n, int cost)
{
	family(out, cost ? "sluice_cost" : "sluice_tokens", "counter", cost ?
	       "Cost of attempts by provider, in the price table's currency." :
	       "Tokens of attempts by provider.");
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < mc[i].m.ngroups; k++) {
			const sl_metric_group *g = &mc[i].m.groups[k];

			if (strcmp(g->kind, "provider"))
				continue;
			sample(out, cost ? "sluice_cost_total" : "sluice_tokens_total", &mc[i]);
			sl_buf_adds(out, ",provider=\"");
			add_label_value(out, g->name);
			if (cost)
				sl_buf_addf(out, "\"} %.6f\n", g->cost);
			else
				sl_buf_addf(out, "\"} %lld\n", (long long)g->tokens);
		}
}

static void add_acceptance(sl_buf *out, const metric_camp *mc, size_t n)
{
	family(out, "sluice_proposed", "gauge", "Candidates proposed for review.");
	for (size_t i = 0; i < n; i++) {
		sample(out, "sluice_proposed", &mc[i]);
		sl_buf_addf(out, "} %lld\n", (long long)mc[i].m.proposed);
	}
	family(out, "sluice_decisions", "counter", "Proposed candidates by their latest decision.");
	for (size_t i = 0; i < n; i++) {
		sample(out, "sluice_decisions_total", &mc[i]);
		sl_buf_addf(out, ",decision=\"accept\"} %lld\n", (long long)mc[i].m.accepted);
		sample(out, "sluice_decisions_total", &mc[i]);
		sl_buf_addf(out, ",decision=\"reject\"} %lld\n", (long long)mc[i].m.rejected);
	}
	family(out, "sluice_acceptance_ratio", "gauge", "Accepted of decided candidates.");
	for (size_t i = 0; i < n; i++)
		if (mc[i].m.acceptance_rate >= 0) {
			sample(out, "sluice_acceptance_ratio", &mc[i]);
			sl_buf_addf(out, "} %.6f\n", mc[i].m.acceptance_rate);
		}
}

/* A model judge's verdicts, and the reviewers' decisions on what it accepted. */
static void add_judges(sl_buf *out, const metric_camp *mc, size_t n)
{
	family(out, "sluice_judge_verdicts", "counter",
	       "Verdicts of a model judge's gate on candidates (a model, not a command).");
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < mc[i].f.ngates; k++) {
			const sl_funnel_gate *g = &mc[i].f.gates[k];
			const char *const names[] = { "accept", "reject", "error" };
			const int64_t v[] = { g->passed, g->failed, g->errors };

			for (size_t j = 0; g->judge && j < 3; j++) {
				sample(out, "sluice_judge_verdicts_total", &mc[i]);
				sl_buf_adds(out, ",gate=\"");
				add_label_value(out, g->gate);
				sl_buf_addf(out, "\",verdict=\"%s\"} %lld\n", names[j],
					    (long long)v[j]);
			}
		}
	family(out, "sluice_judge_reviewed", "counter",
	       "Candidates a model judge accepted, by the reviewers' latest decision.");
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < mc[i].f.ngates; k++) {
			const sl_funnel_gate *g = &mc[i].f.gates[k];

			for (int j = 0; g->judge && j < 2; j++) {
				sample(out, "sluice_judge_reviewed_total", &mc[i]);
				sl_buf_adds(out, ",gate=\"");
				add_label_value(out, g->gate);
				sl_buf_addf(out, "\",decision=\"%s\"} %lld\n",
					    j ? "reject" : "accept", (long long)(j ?
					    g->reviewed_reject : g->reviewed_accept));
			}
		}
}

/* Read what the families need of campaign c (taken: mc owns it from here). */
static int read_camp(metric_camp *mc, sl_store *st, const char *store, sl_campaign_rec *c,
		     sl_err *err)
{
	int64_t *ids = NULL;
	size_t nids = 0;
	int ret;

	mc->store = store;
	mc->c = *c;
	memset(c, 0, sizeof(*c));
	if ((ret = sl_store_metrics(st, mc->c.id, &mc->m, err)) ||
	    (ret = sl_store_dash_gates(st, mc->c.id, &mc->g, &mc->ng, err)) ||
	    (ret = sl_store_funnel(st, mc->c.id, &mc->f, err)))
		return ret;
	for (int s = 0; s < SL_T_NSTATES && !ret; s++) {
		sl_dash_query q = { .state = (enum sl_target_state)s, .limit = 1 };

		ret = sl_store_dash_targets(st, mc->c.id, &q, &ids, &nids, &mc->by_state[s], err);
		free(ids);
	}
	return ret;
}

int serve_metrics(const serve_stores *s, const serve_req *r, serve_reply *rep, sl_err *err)
{
	metric_camp *mc = NULL;
	sl_campaign_rec *c = NULL;
	size_t n = 0, nc = 0, alloc = 0;
	int ret = SL_OK;

	for (size_t i = 0; i < s->n && !ret; i++) {
		if ((ret = sl_store_campaign_list(s->st[i], &c, &nc, err)))
			break;
		for (size_t k = 0; k < nc && !ret; k++) {
			SL_ALLOC_GROW(mc, n + 1, alloc);
			memset(&mc[n], 0, sizeof(mc[n]));
			ret = read_camp(&mc[n++], s->st[i], s->paths[i], &c[k], err);
		}
		sl_campaign_list_free(c, nc);
		c = NULL;
		nc = 0;
	}
	if (!ret) {
		rep->type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
		add_targets(&rep->body, mc, n);
		add_gate_runs(&rep->body, mc, n);
		add_durations(&rep->body, mc, n);
		add_usage(&rep->body, mc, n, 0);
		add_usage(&rep->body, mc, n, 1);
		add_acceptance(&rep->body, mc, n);
		add_judges(&rep->body, mc, n);
		sl_buf_adds(&rep->body, "# EOF\n");
	}
	for (size_t i = 0; i < n; i++) {
		sl_campaign_rec_release(&mc[i].c);
		sl_metrics_release(&mc[i].m);
		sl_dash_gate_list_free(mc[i].g, mc[i].ng);
		sl_funnel_release(&mc[i].f);
	}
	free(mc);
	return ret;
}
