/*
 * report_junit.c - OUTDIR/junit.xml: the gate verdicts of every candidate
 * in the JUnit XML that CI dashboards read.
 *
 * One <testsuite> per gate (in order of first run), one <testcase> per
 * candidate that reached the gate, named PATH:LINE (candidate ID):
 * fail and timeout are <failure>, error is <error>, skip is <skipped>, each
 * with the tail of the gate's output.  Reads candidates and gate runs.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline/review/report.h"
#include "common/util.h"

typedef struct suite {
	char *gate;
	sl_buf cases;
	size_t tests, failures, errors, skipped;
	int64_t ms;
} suite;

static suite *suite_for(suite **v, size_t *n, size_t *alloc, const char *gate)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i].gate, gate))
			return &(*v)[i];
	SL_ALLOC_GROW(*v, *n + 1, *alloc);
	memset(&(*v)[*n], 0, sizeof(**v));
	(*v)[*n].gate = sl_xstrdup(gate);
	sl_buf_init(&(*v)[*n].cases, 0);
	return &(*v)[(*n)++];
}

static void add_case(suite *s, const sl_campaign_rec *camp, const sl_candidate_rec *c,
		     const sl_gate_run_rec *g)
{
	sl_verdict v = g->verdict;
	const char *tag = v == SL_VERDICT_FAIL || v == SL_VERDICT_TIMEOUT ? "failure" :
		v == SL_VERDICT_ERROR ? "error" : v == SL_VERDICT_SKIP ? "skipped" : NULL;

	s->tests++;
	s->ms += g->duration_ms;
	sl_buf_adds(&s->cases, "    <testcase classname=\"sluice.");
	sl_report_add_xml(&s->cases, camp->name);
	sl_buf_adds(&s->cases, ".");
	sl_report_add_xml(&s->cases, g->gate);
	sl_buf_adds(&s->cases, "\" name=\"");
	sl_report_add_xml(&s->cases, c->path);
	sl_buf_addf(&s->cases, ":%lld (candidate %lld)\" time=\"%.3f\"", (long long)c->start_line,
		    (long long)c->id, (double)g->duration_ms / 1000.0);
	if (!tag) {
		sl_buf_adds(&s->cases, "/>\n");
		return;
	}
	if (v == SL_VERDICT_FAIL || v == SL_VERDICT_TIMEOUT)
		s->failures++;
	else if (v == SL_VERDICT_ERROR)
		s->errors++;
	else
		s->skipped++;
	sl_buf_addf(&s->cases, ">\n      <%s message=\"", tag);
	sl_report_add_xml(&s->cases, sl_verdict_name(v));
	if (g->note) {
		sl_buf_adds(&s->cases, ": ");
		sl_report_add_xml(&s->cases, g->note);
	}
	sl_buf_addf(&s->cases, "\" type=\"%s\">", sl_verdict_name(v));
	sl_report_add_xml(&s->cases, g->output_tail);
	sl_buf_addf(&s->cases, "</%s>\n    </testcase>\n", tag);
}

int sl_report_junit(sl_store *st, const sl_campaign_rec *camp, const char *outdir, sl_err *err)
{
	sl_candidate_rec *c = NULL;
	suite *suites = NULL;
	size_t nc = 0, ns = 0, alloc = 0, tests = 0, failures = 0, errors = 0, skipped = 0;
	sl_buf out = SL_BUF_INIT;
	char *path = NULL;
	int ret;

	if ((ret = sl_store_candidates(st, camp->id, SL_C_ANY, &c, &nc, err)))
		goto done;
	for (size_t i = 0; i < nc; i++) {
		sl_gate_run_rec *g = NULL;
		size_t ng = 0;

		if ((ret = sl_store_gate_runs(st, c[i].id, &g, &ng, err)))
			goto done;
		for (size_t j = 0; j < ng; j++)
			add_case(suite_for(&suites, &ns, &alloc, g[j].gate), camp, &c[i], &g[j]);
		sl_gate_run_list_free(g, ng);
	}
	for (size_t i = 0; i < ns; i++) {
		tests += suites[i].tests;
		failures += suites[i].failures;
		errors += suites[i].errors;
		skipped += suites[i].skipped;
	}
	sl_buf_adds(&out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"sluice.");
	sl_report_add_xml(&out, camp->name);
	sl_buf_addf(&out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\">\n",
		    tests, failures, errors, skipped);
	for (size_t i = 0; i < ns; i++) {
		sl_buf_adds(&out, "  <testsuite name=\"");
		sl_report_add_xml(&out, suites[i].gate);
		sl_buf_addf(&out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" "
			    "time=\"%.3f\">\n", suites[i].tests, suites[i].failures,
			    suites[i].errors, suites[i].skipped, (double)suites[i].ms / 1000.0);
		sl_buf_add(&out, suites[i].cases.buf, suites[i].cases.len);
		sl_buf_adds(&out, "  </testsuite>\n");
	}
	sl_buf_adds(&out, "</testsuites>\n");
	path = sl_path_join(outdir, "junit.xml");
	ret = sl_write_file(path, out.buf, out.len, err);
done:
	for (size_t i = 0; i < ns; i++) {
		free(suites[i].gate);
		sl_buf_release(&suites[i].cases);
	}
	free(suites);
	free(path);
	sl_buf_release(&out);
	sl_candidate_list_free(c, nc);
	return ret;
}
