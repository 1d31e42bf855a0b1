/*
 * report_metrics.c - the outcome metrics (storage/review_store.h) as text
 * for `sluice status`.
 */
#include "pipeline/review/report.h"

static void add_rate(sl_buf *out, const char *label, double rate, int64_t part, int64_t whole)
{
	if (rate < 0)
		sl_buf_addf(out, "  %-26s -\n", label);
	else
		sl_buf_addf(out, "  %-26s %.0f%% (%lld of %lld)\n", label, rate * 100,
			    (long long)part, (long long)whole);
}

void sl_report_metrics_text(sl_buf *out, const sl_metrics *m)
{
	sl_buf_adds(out, "\noutcomes (counted in candidates: a retried target's every "
		    "candidate counts):\n");
	add_rate(out, "acceptance rate", m->acceptance_rate, m->accepted, m->decided);
	add_rate(out, "landed unchanged", m->landed_unchanged_rate, m->landed_unchanged,
		 m->landed_checked);
	if (m->median_decision_hours < 0)
		sl_buf_addf(out, "  %-26s -\n", "median time to decision");
	else
		sl_buf_addf(out, "  %-26s %.1f h\n", "median time to decision",
			    m->median_decision_hours);
	if (m->accepted)
		sl_buf_addf(out, "  %-26s %.0f tokens, cost %.4f\n", "per accepted change",
			    m->tokens_per_accepted, m->cost_per_accepted);
	else
		sl_buf_addf(out, "  %-26s -\n", "per accepted change");
	for (size_t i = 0; i < m->ngroups; i++) {
		const sl_metric_group *g = &m->groups[i];

		sl_buf_addf(out, "  %-11s %-14s proposed %lld, accepted %lld, rejected %lld, "
			    "%lld tokens, cost %.4f", g->kind, g->name, (long long)g->proposed,
			    (long long)g->accepted, (long long)g->rejected, (long long)g->tokens,
			    g->cost);
		if (g->accepted)
			sl_buf_addf(out, " (%.4f per accepted)", g->cost / (double)g->accepted);
		sl_buf_addch(out, '\n');
	}
	/* the acceptance rate over time: the last 14 days with decisions */
	for (size_t i = m->ndays > 14 ? m->ndays - 14 : 0; i < m->ndays; i++)
		sl_buf_addf(out, "  decided on %s  %lld accepted of %lld (%.0f%%)\n", m->days[i].day,
			    (long long)m->days[i].accepted, (long long)m->days[i].decided,
			    100.0 * (double)m->days[i].accepted / (double)m->days[i].decided);
}
