/*
 * report_html.c - OUTDIR/report.html, the report a person opens in a
 * browser, also offline: one file with its style inline, no script, no
 * external asset.
 *
 * Reads the funnel, candidates, gate runs, attempts and targets from the
 * store.  Sections: the funnel as an inline SVG bar chart (and each model
 * judge's vetoes, and what reviewers decided on what it accepted); each proposed
 * change with its gates (notes, log excerpts of those that did not pass),
 * model and cost, and its diff coloured by line kind and by token
 * (keywords, strings, comments); rejected candidates; failed or skipped
 * targets with their reasons.  Every attempt at a change's or a failed
 * target's target is folded in a <details>: source, outcome, why it
 * failed, its session's steps (generate: act), its candidate's gates and
 * logs and its coloured diff.
 * Everything from the store is escaped: gate output and model text are
 * hostile.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "pipeline/review/report.h"
#include "common/util.h"
#include "common/caps.h"

const char sl_report_html_style[] =
	"body{font:15px/1.4 system-ui,sans-serif;margin:2em auto;max-width:70em;color:#1b1f24}"
	"h1{font-size:1.6em}h2{border-bottom:1px solid #d0d7de;padding-bottom:.2em}"
	"table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #d0d7de;"
	"padding:.2em .6em;text-align:left}"
	".pass{color:#116329;font-weight:600}.fail,.timeout,.error{color:#b3261e;font-weight:600}"
	".skip{color:#7d4e00;font-weight:600}"
	".change{border:1px solid #d0d7de;border-radius:6px;padding:0 1em 1em;margin:1.5em 0}"
	"pre{background:#f6f8fa;padding:.6em;overflow-x:auto;font:13px/1.45 monospace}"
	"pre.diff{padding:0;background:#fff;border:1px solid #d0d7de}"
	"pre.diff span.l{display:block;padding:0 .6em;white-space:pre}"
	".add{background:#aef0b9}.del{background:#ffc1c0}.hunk{background:#ddf4ff;color:#0550ae}"
	".meta{color:#57606a;font-weight:600}"
	".kw{color:#cf222e;font-weight:600}.str{color:#0a3069}.com{color:#6e7781;font-style:italic}"
	".num{color:#0550ae}";

/* HTML and XML text: entities, and control characters XML 1.0 forbids as '?'. */
void sl_report_add_xml(sl_buf *out, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '<': sl_buf_adds(out, "&lt;"); break;
		case '>': sl_buf_adds(out, "&gt;"); break;
		case '&': sl_buf_adds(out, "&amp;"); break;
		case '"': sl_buf_adds(out, "&quot;"); break;
		case '\'': sl_buf_adds(out, "&#39;"); break;
		default:
			sl_buf_addch(out, (c < 0x20 && c != '\n' && c != '\t' && c != '\r') ||
				     c == 0x7f ? '?' : c);
		}
	}
}

static void add_xml_n(sl_buf *out, const char *s, size_t n)
{
	char *t = sl_xstrndup(s, n);

	sl_report_add_xml(out, t);
	free(t);
}

static const char *const keywords[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
	"enum", "extern", "float", "for", "goto", "if", "int", "long", "return", "short",
	"signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
	"volatile", "while", "bool", "true", "false", "NULL", "class", "def", "import", "from",
	"fn", "let", "mut", "pub", "func", "package", "var", "new", "this", "self", "None",
	"null", "public", "private", "function", "async", "await", "try", "catch", "throw",
};

static int is_keyword(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strlen(keywords[i]) == n && !strncmp(keywords[i], s, n))
			return 1;
	return 0;
}

/* A C preprocessor directive after its '#' (else '#' starts a comment). */
static int is_directive(const char *s, size_t n)
{
	static const char *const d[] = { "include", "define", "if", "ifdef", "ifndef", "endif",
		"else", "elif", "undef", "pragma", "error" };
	size_t k = 0;

	while (k < n && (isalpha((unsigned char)s[k])))
		k++;
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		if (strlen(d[i]) == k && !strncmp(d[i], s, k))
			return 1;
	return 0;
}

/* One line of code, its tokens coloured: comments, strings, numbers, keywords. */
static void add_code(sl_buf *out, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i;
		const char *cls = NULL;

		if ((s[i] == '/' && i + 1 < n && s[i + 1] == '/') || s[i] == '#') {
			j = n;
			cls = s[i] == '#' && is_directive(s + i + 1, n - i - 1) ? "kw" : "com";
		} else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
			const char *end = NULL;

			for (size_t k = i + 2; k + 1 < n; k++)
				if (s[k] == '*' && s[k + 1] == '/') {
					end = s + k + 2;
					break;
				}
			j = end ? (size_t)(end - s) : n;
			cls = "com";
		} else if (s[i] == '"' || s[i] == '\'') {
			for (j = i + 1; j < n && s[j] != s[i]; j++)
				if (s[j] == '\\' && j + 1 < n)
					j++;
			j = j < n ? j + 1 : n;
			cls = "str";
		} else if (isdigit((unsigned char)s[i])) {
			while (j < n && isalnum((unsigned char)s[j]))
				j++;
			cls = "num";
		} else if (isalpha((unsigned char)s[i]) || s[i] == '_') {
			while (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_'))
				j++;
			cls = is_keyword(s + i, j - i) ? "kw" : NULL;
		} else {
			j = i + 1;
		}
		if (cls)
			sl_buf_addf(out, "<span class=\"%s\">", cls);
		add_xml_n(out, s + i, j - i);
		if (cls)
			sl_buf_adds(out, "</span>");
		i = j;
	}
}

void sl_report_html_diff(sl_buf *out, const char *diff)
{
	const char *p = diff;

	sl_buf_adds(out, "<pre class=\"diff\">");
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		const char *cls = "ctx";
		int code = 1;

		if (!strncmp(p, "diff ", 5) || !strncmp(p, "index ", 6) || !strncmp(p, "--- ", 4) ||
		    !strncmp(p, "+++ ", 4)) {
			cls = "meta";
			code = 0;
		} else if (!strncmp(p, "@@", 2)) {
			cls = "hunk";
			code = 0;
		} else if (*p == '+') {
			cls = "add";
		} else if (*p == '-') {
			cls = "del";
		}
		sl_buf_addf(out, "<span class=\"l %s\">", cls);
		if (code && n) {
			add_xml_n(out, p, 1);
			add_code(out, p + 1, n - 1);
		} else {
			add_xml_n(out, p, n);
		}
		sl_buf_adds(out, "</span>");
		p = nl ? nl + 1 : NULL;
	}
	sl_buf_adds(out, "</pre>\n");
}

/* The last SL_CAP_REPORT_LOG_LINES lines of a gate's output. */
static void add_log_excerpt(sl_buf *out, const char *log)
{
	size_t len = strlen(log), lines = 0;
	const char *start = log;

	for (size_t i = len; i > 0; i--)
		if (log[i - 1] == '\n' && i != len && ++lines == SL_CAP_REPORT_LOG_LINES) {
			start = log + i;
			break;
		}
	sl_buf_adds(out, "<pre class=\"log\">");
	sl_report_add_xml(out, start);
	sl_buf_adds(out, "</pre>\n");
}

/*
 * Each model judge's line under the funnel: a model's verdicts, not a
 * command's, what it vetoed and what reviewers decided on what it let through.
 */
static void add_judges(sl_buf *out, const sl_funnel *f)
{
	for (size_t i = 0; i < f->ngates; i++) {
		const sl_funnel_gate *g = &f->gates[i];

		if (!g->judge)
			continue;
		sl_buf_adds(out, "<p class=\"judge\">Model judge <code>");
		sl_report_add_xml(out, g->gate);
		sl_buf_addf(out, "</code> (a model's verdict, not a gate's command): vetoed "
			    "<b>%lld</b> of %lld candidates", (long long)g->failed,
			    (long long)g->runs);
		if (g->errors)
			sl_buf_addf(out, ", %lld without a usable verdict", (long long)g->errors);
		sl_buf_addf(out, "; of the %lld it accepted, reviewers accepted <b>%lld</b> and "
			    "rejected <b>%lld</b>.</p>\n", (long long)g->passed,
			    (long long)g->reviewed_accept, (long long)g->reviewed_reject);
	}
}

void sl_report_html_funnel(sl_buf *out, const sl_funnel *f)
{
	struct { const char *label, *kind; int64_t v; } rows[64];
	size_t n = 0;
	const int w = 520, x0 = 170, bar = 22, gap = 8;
	int64_t max;

	memset(rows, 0, sizeof(rows));
	rows[n].label = "targets"; rows[n++].v = f->targets;
	rows[n].label = "candidates"; rows[n++].v = f->candidates;
	for (size_t i = 0; i < f->ngates && n < 60; i++) {
		rows[n].label = f->gates[i].gate;
		rows[n].kind = f->gates[i].judge ? "model judge " : "gate ";
		rows[n++].v = f->gates[i].passed;
	}
	rows[n].label = "proposed targets"; rows[n++].v = f->proposed;
	rows[n].label = "accepted candidates"; rows[n++].v = f->accepted;
	max = f->targets > f->candidates ? f->targets : f->candidates;
	if (max < 1)
		max = 1;
	sl_buf_addf(out, "<svg id=\"funnel\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		    "height=\"%zu\" role=\"img\" aria-label=\"funnel\">\n",
		    x0 + w + 60, n * (bar + gap) + gap);
	for (size_t i = 0; i < n; i++) {
		int y = gap + (int)i * (bar + gap);
		int bw = (int)((double)w * (double)rows[i].v / (double)max);

		sl_buf_addf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"13\" "
			    "font-family=\"sans-serif\">", x0 - 8, y + 16);
		if (rows[i].kind)
			sl_buf_adds(out, rows[i].kind);
		sl_report_add_xml(out, rows[i].label);
		sl_buf_addf(out, "</text><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
			    "fill=\"%s\"/><text x=\"%d\" y=\"%d\" font-size=\"13\" "
			    "font-family=\"sans-serif\">%lld</text>\n", x0, y, bw > 0 ? bw : 1, bar,
			    i == n - 1 ? "#1a7f37" : "#1f6feb", x0 + (bw > 0 ? bw : 1) + 6, y + 16,
			    (long long)rows[i].v);
	}
	sl_buf_adds(out, "</svg>\n");
	add_judges(out, f);
}

static void add_rate_cell(sl_buf *out, double rate, int64_t part, int64_t whole)
{
	if (rate < 0)
		sl_buf_adds(out, "<td>&ndash;</td>");
	else
		sl_buf_addf(out, "<td>%.0f%% (%lld of %lld)</td>", rate * 100, (long long)part,
			    (long long)whole);
}

/* Acceptance, landing, time to decision and cost per accepted change, by group. */
void sl_report_html_outcomes(sl_buf *out, const sl_metrics *m)
{
	sl_buf_adds(out, "<h2>Outcomes</h2>\n<table><tr><th>acceptance rate</th>");
	add_rate_cell(out, m->acceptance_rate, m->accepted, m->decided);
	sl_buf_adds(out, "</tr>\n<tr><th>landed unchanged</th>");
	add_rate_cell(out, m->landed_unchanged_rate, m->landed_unchanged, m->landed_checked);
	if (m->median_decision_hours >= 0)
		sl_buf_addf(out, "</tr>\n<tr><th>median time to decision</th><td>%.1f h</td>",
			    m->median_decision_hours);
	if (m->accepted)
		sl_buf_addf(out, "</tr>\n<tr><th>per accepted change</th><td>%.0f tokens, cost "
			    "%.4f</td>", m->tokens_per_accepted, m->cost_per_accepted);
	sl_buf_adds(out, "</tr></table>\n<table><tr><th>by</th><th>name</th><th>candidates proposed</th>"
		    "<th>accepted</th><th>rejected</th><th>tokens</th><th>cost</th></tr>\n");
	for (size_t i = 0; i < m->ngroups; i++) {
		sl_buf_addf(out, "<tr><td>%s</td><td>", m->groups[i].kind);
		sl_report_add_xml(out, m->groups[i].name);
		sl_buf_addf(out, "</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%lld</td>"
			    "<td>%.4f</td></tr>\n", (long long)m->groups[i].proposed,
			    (long long)m->groups[i].accepted, (long long)m->groups[i].rejected,
			    (long long)m->groups[i].tokens, m->groups[i].cost);
	}
	sl_buf_adds(out, "</table>\n");
}

/* The model named in an attempt's request body, or its source. */
static char *model_of(const sl_attempt_rec *a)
{
	json_t *j = a->request ? json_loads(a->request, 0, NULL) : NULL;
	const char *m = j ? json_string_value(json_object_get(j, "model")) : NULL;
	char *r = sl_xstrdup(m ? m : a->source);

	json_decref(j);
	return r;
}

/* An attempt's tokens, in and out, negatives (unknown) counted as 0. */
static int64_t attempt_tokens(const sl_attempt_rec *a)
{
	return (a->tokens_in > 0 ? a->tokens_in : 0) + (a->tokens_out > 0 ? a->tokens_out : 0);
}

/* The change's heading and its line: branch, attempt, producer, tokens, cost, decision. */
static void add_change_head(sl_buf *out, const sl_candidate_rec *c, size_t idx, size_t na,
			    const char *model, int64_t tokens, double cost)
{
	sl_buf_addf(out, "<div class=\"change\" id=\"c%lld\"><h3>%zu. ", (long long)c->id, idx);
	sl_report_add_xml(out, c->path);
	sl_buf_addf(out, " lines %lld&ndash;%lld <small>(candidate %lld)</small></h3>\n<p>",
		    (long long)c->start_line, (long long)c->end_line, (long long)c->id);
	if (c->branch) {
		sl_buf_adds(out, "Branch <code>");
		sl_report_add_xml(out, c->branch);
		sl_buf_adds(out, "</code>; ");
	}
	sl_buf_addf(out, "attempt %lld of %zu; produced by <b>", (long long)c->attempt_n, na);
	sl_report_add_xml(out, model ? model : "?");
	sl_buf_addf(out, "</b>; %lld tokens, cost %.4f", (long long)tokens, cost);
	if (c->decision) {
		sl_buf_addf(out, "; <b>%s</b>",
			    sl_target_state_name(sl_decision_target_state(c->decision)));
		if (c->decision_reason) {
			sl_buf_adds(out, ": ");
			sl_report_add_xml(out, c->decision_reason);
		}
	}
	sl_buf_adds(out, ".</p>\n");
	if (c->tree) {
		sl_buf_adds(out, "<p>Tree: ");
		sl_report_add_xml(out, c->tree);
		sl_buf_addf(out, ", made in %lld ms.</p>\n", (long long)c->tree_ms);
	}
}

/* The gates' table, then the log of each gate that did not pass (all_logs: of each). */
void sl_report_html_gates(sl_buf *out, const sl_gate_run_rec *g, size_t ng, int all_logs)
{
	sl_buf_adds(out, "<table><tr><th>gate</th><th>verdict</th><th>exit</th>"
		    "<th>time</th><th>jail setup</th><th>note</th></tr>\n");
	for (size_t i = 0; i < ng; i++) {
		sl_buf_adds(out, "<tr><td>");
		sl_report_add_xml(out, g[i].gate);
		sl_buf_adds(out, "</td><td class=\"");
		sl_report_add_xml(out, sl_verdict_name(g[i].verdict));
		sl_buf_adds(out, "\">");
		sl_report_add_xml(out, sl_verdict_name(g[i].verdict));
		sl_buf_addf(out, "%s</td><td>%lld</td><td>%lld ms</td><td>%lld ms</td><td>",
			    g[i].cached ? " (cached)" : "", (long long)g[i].exit_status,
			    (long long)g[i].duration_ms, (long long)g[i].jail_ms);
		sl_report_add_xml(out, g[i].note);
		sl_buf_adds(out, "</td></tr>\n");
	}
	sl_buf_adds(out, "</table>\n");
	for (size_t i = 0; i < ng; i++) {
		int pass = g[i].verdict == SL_VERDICT_PASS;

		if ((pass && !all_logs) || !g[i].output_tail[0])
			continue;
		sl_buf_addf(out, "<details%s><summary>log of gate ", pass ? "" : " open");
		sl_report_add_xml(out, g[i].gate);
		sl_buf_adds(out, pass ? " (passed)</summary>\n" : "</summary>\n");
		add_log_excerpt(out, g[i].output_tail);
		sl_buf_adds(out, "</details>\n");
	}
}

/* What the report reads beside the page: the store and every candidate of the campaign. */
struct html_ctx {
	sl_buf *out;
	sl_store *st;
	const sl_candidate_rec *all;  /* every candidate, whatever its state */
	size_t nall;
};

/* The candidate an attempt made, or NULL when it made none. */
static const sl_candidate_rec *candidate_of(const struct html_ctx *h, int64_t attempt_id)
{
	for (size_t i = 0; i < h->nall; i++)
		if (h->all[i].attempt_id == attempt_id)
			return &h->all[i];
	return NULL;
}

/* The run of the first gate that did not pass or skip, or NULL. */
static const sl_gate_run_rec *first_failure(const sl_gate_run_rec *g, size_t ng)
{
	for (size_t i = 0; i < ng; i++)
		if (g[i].verdict != SL_VERDICT_PASS && g[i].verdict != SL_VERDICT_SKIP)
			return &g[i];
	return NULL;
}

/*
 * One attempt, folded: its number, source and outcome, and why it failed
 * in the summary; its error, the gates of its candidate with their notes
 * and logs, and the candidate's diff inside.  The attempt that made the
 * change shown around it (shown_id) has no diff of its own here.
 */
static int add_attempt(struct html_ctx *h, const sl_attempt_rec *a, int64_t shown_id,
		       sl_err *err)
{
	const sl_candidate_rec *c = candidate_of(h, a->id);
	const sl_gate_run_rec *bad;
	sl_gate_run_rec *g = NULL;
	sl_buf *out = h->out;
	size_t ng = 0;
	int ret = SL_OK;

	if (c && (ret = sl_store_gate_runs(h->st, c->id, &g, &ng, err)))
		goto done;
	sl_buf_addf(out, "<details><summary>attempt %lld: ", (long long)a->n);
	sl_report_add_xml(out, a->source);
	sl_buf_adds(out, ", ");
	sl_report_add_xml(out, sl_attempt_outcome_name(a->outcome));
	if ((bad = first_failure(g, ng))) {
		sl_buf_adds(out, ", gate ");
		sl_report_add_xml(out, bad->gate);
		sl_buf_addf(out, ": <span class=\"%s\">%s</span>", sl_verdict_name(bad->verdict),
			    sl_verdict_name(bad->verdict));
	} else if (c) {
		sl_buf_adds(out, ", <span class=\"pass\">passed</span>");
	}
	if (c && c->id == shown_id)
		sl_buf_adds(out, " (this change)");
	sl_buf_addf(out, "</summary>\n<p>%lld tokens, cost %.4f.</p>\n",
		    (long long)attempt_tokens(a), a->cost);
	if (a->error) {
		sl_buf_adds(out, "<pre class=\"reason\">");
		sl_report_add_xml(out, a->error);
		sl_buf_adds(out, "</pre>\n");
	}
	if ((ret = sl_report_html_steps(out, h->st, a->target_id, a->n, err)))
		goto done;
	if (c && c->id != shown_id) {
		sl_report_html_gates(out, g, ng, 0);
		sl_report_html_diff(out, c->diff);
	}
	sl_buf_adds(out, "</details>\n");
done:
	sl_gate_run_list_free(g, ng);
	return ret;
}

/* Every attempt at a target, each folded. */
static int add_attempts(struct html_ctx *h, const sl_attempt_rec *a, size_t na,
			int64_t shown_id, sl_err *err)
{
	int ret = SL_OK;

	for (size_t i = 0; i < na && !ret; i++)
		ret = add_attempt(h, &a[i], shown_id, err);
	return ret;
}

/* One proposed change: heading, gates and their logs, attempts, coloured diff. */
static int add_change(struct html_ctx *h, const sl_candidate_rec *c, size_t idx, sl_err *err)
{
	sl_gate_run_rec *g = NULL;
	sl_attempt_rec *a = NULL;
	size_t ng = 0, na = 0;
	char *model = NULL;
	double cost = 0;
	int64_t tokens = 0;
	int ret;

	if ((ret = sl_store_gate_runs(h->st, c->id, &g, &ng, err)) ||
	    (ret = sl_store_attempts(h->st, c->target_id, &a, &na, err)))
		goto done;
	for (size_t i = 0; i < na; i++) {
		cost += a[i].cost;
		tokens += attempt_tokens(&a[i]);
		if (a[i].id == c->attempt_id)
			model = model_of(&a[i]);
	}
	add_change_head(h->out, c, idx, na, model, tokens, cost);
	sl_report_html_gates(h->out, g, ng, 0);
	if ((ret = add_attempts(h, a, na, c->id, err)))
		goto done;
	sl_report_html_diff(h->out, c->diff);
	sl_buf_adds(h->out, "</div>\n");
done:
	free(model);
	sl_gate_run_list_free(g, ng);
	sl_attempt_list_free(a, na);
	return ret;
}

/* The page's head and style, the title, and the campaign's one-line summary. */
static void add_page_head(sl_buf *out, const sl_campaign_rec *camp, const sl_funnel *f)
{
	sl_buf_adds(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		    "<title>sluice campaign ");
	sl_report_add_xml(out, camp->name);
	sl_buf_addf(out, "</title>\n<style>%s</style></head>\n<body>\n<h1>sluice campaign "
		    "<code>", sl_report_html_style);
	sl_report_add_xml(out, camp->name);
	sl_buf_adds(out, "</code></h1>\n<p>Base <code>");
	sl_report_add_xml(out, camp->base_oid);
	sl_buf_adds(out, "</code> of <code>");
	sl_report_add_xml(out, camp->repo_path);
	sl_buf_addf(out, "</code>. %lld targets: %lld proposed, %lld failed, %lld skipped; "
		    "candidates by their latest decision: %lld accepted, %lld rejected; %lld "
		    "tokens, cost %.4f.</p>\n<h2>Funnel</h2>\n",
		    (long long)f->targets, (long long)f->proposed, (long long)f->failed,
		    (long long)f->skipped, (long long)f->accepted, (long long)f->rejected,
		    (long long)(f->tokens_in + f->tokens_out), f->cost);
}

/* Every proposed candidate reviewers did not reject, numbered from 1. */
static int add_changes(struct html_ctx *h, const sl_candidate_rec *c, size_t nc, size_t nrej,
		       sl_err *err)
{
	size_t idx = 0;
	int ret;

	sl_buf_addf(h->out, "<h2>Proposed changes (%zu)</h2>\n", nc - nrej);
	for (size_t i = 0; i < nc; i++)
		if (c[i].decision != SL_D_REJECT && (ret = add_change(h, &c[i], ++idx, err)))
			return ret;
	return SL_OK;
}

/* The rejected candidates with their reasons (a table when there are any). */
static void add_rejected(sl_buf *out, const sl_candidate_rec *c, size_t nc, size_t nrej)
{
	sl_buf_addf(out, "<h2>Rejected by reviewers (%zu)</h2>\n", nrej);
	if (!nrej)
		return;
	sl_buf_adds(out, "<table><tr><th>candidate</th><th>target</th><th>reason</th></tr>\n");
	for (size_t i = 0; i < nc; i++) {
		if (c[i].decision != SL_D_REJECT)
			continue;
		sl_buf_addf(out, "<tr><td>%lld</td><td>", (long long)c[i].id);
		sl_report_add_xml(out, c[i].path);
		sl_buf_addf(out, ":%lld</td><td>", (long long)c[i].start_line);
		sl_report_add_xml(out, c[i].decision_reason);
		sl_buf_adds(out, "</td></tr>\n");
	}
	sl_buf_adds(out, "</table>\n");
}

static int is_failed(const sl_target_rec *t)
{
	return t->state == SL_T_FAILED || t->state == SL_T_SKIPPED;
}

/* The failed or skipped targets' table: state, attempts and reason. */
static void add_failed_table(sl_buf *out, const sl_target_rec *t, size_t nt)
{
	sl_buf_adds(out, "<table><tr><th>target</th><th>state</th><th>attempts</th>"
		    "<th>reason</th></tr>\n");
	for (size_t i = 0; i < nt; i++) {
		if (!is_failed(&t[i]))
			continue;
		sl_buf_adds(out, "<tr><td>");
		sl_report_add_xml(out, t[i].path);
		sl_buf_addf(out, ":%lld</td><td>%s</td><td>%lld</td><td><pre>",
			    (long long)t[i].start_line, sl_target_state_name(t[i].state),
			    (long long)t[i].attempts);
		sl_report_add_xml(out, t[i].reason);
		sl_buf_adds(out, "</pre></td></tr>\n");
	}
	sl_buf_adds(out, "</table>\n");
}

/* The targets that failed or were skipped: the table, then each one's attempts. */
static int add_failed(struct html_ctx *h, const sl_target_rec *t, size_t nt, sl_err *err)
{
	sl_attempt_rec *a = NULL;
	size_t nfail = 0, na = 0;
	int ret = SL_OK;

	for (size_t i = 0; i < nt; i++)
		nfail += is_failed(&t[i]);
	sl_buf_addf(h->out, "<h2>Targets that failed or were skipped (%zu)</h2>\n", nfail);
	if (!nfail)
		goto done;
	add_failed_table(h->out, t, nt);
	for (size_t i = 0; i < nt && !ret; i++) {
		if (!is_failed(&t[i]))
			continue;
		if ((ret = sl_store_attempts(h->st, t[i].id, &a, &na, err)))
			goto done;
		sl_buf_addf(h->out, "<div class=\"change\" id=\"t%lld\"><h3>", (long long)t[i].id);
		sl_report_add_xml(h->out, t[i].path);
		sl_buf_addf(h->out, ":%lld <small>(%s, %zu attempt%s)</small></h3>\n",
			    (long long)t[i].start_line, sl_target_state_name(t[i].state), na,
			    na == 1 ? "" : "s");
		ret = add_attempts(h, a, na, 0, err);
		sl_buf_adds(h->out, "</div>\n");
		sl_attempt_list_free(a, na);
		a = NULL;
		na = 0;
	}
done:
	sl_attempt_list_free(a, na);
	return ret;
}

int sl_report_html(sl_store *st, const sl_campaign_rec *camp, const char *outdir, sl_err *err)
{
	sl_candidate_rec *c = NULL, *all = NULL;
	sl_target_rec *t = NULL;
	sl_funnel f = { 0 };
	sl_metrics m = { 0 };
	sl_buf out = SL_BUF_INIT;
	size_t nc = 0, nt = 0, nrej = 0, nall = 0;
	struct html_ctx h = { &out, st, NULL, 0 };
	char *path = NULL;
	int ret;

	if ((ret = sl_store_funnel(st, camp->id, &f, err)) ||
	    (ret = sl_store_metrics(st, camp->id, &m, err)) ||
	    (ret = sl_store_candidates(st, camp->id, SL_C_PASSED, &c, &nc, err)) ||
	    (ret = sl_store_candidates(st, camp->id, SL_C_ANY, &all, &nall, err)) ||
	    (ret = sl_store_targets(st, camp->id, SL_T_ANY, &t, &nt, err)))
		goto done;
	h.all = all;
	h.nall = nall;
	for (size_t i = 0; i < nc; i++)
		nrej += c[i].decision == SL_D_REJECT;
	add_page_head(&out, camp, &f);
	sl_report_html_funnel(&out, &f);
	sl_report_html_outcomes(&out, &m);
	if ((ret = add_changes(&h, c, nc, nrej, err)))
		goto done;
	add_rejected(&out, c, nc, nrej);
	if ((ret = add_failed(&h, t, nt, err)) ||
	    (ret = sl_report_unplaced(&out, st, camp->id, SL_UNPLACED_HTML, err)))
		goto done;
	sl_buf_adds(&out, "</body></html>\n");
	path = sl_path_join(outdir, "report.html");
	ret = sl_write_file(path, out.buf, out.len, err);
done:
	free(path);
	sl_buf_release(&out);
	sl_funnel_release(&f);
	sl_metrics_release(&m);
	sl_candidate_list_free(c, nc);
	sl_candidate_list_free(all, nall);
	sl_target_list_free(t, nt);
	return ret;
}
