/*
 * report.h - the campaign as people and dashboards read it: target and
 * candidate lists, outcome metrics, the HTML report and JUnit XML.
 *
 * Everything here reads the store and renders into a caller's sl_buf (or,
 * for the exports, files in a directory it is given); nothing writes the
 * store.  Text that came from a gate or a model is escaped for its
 * destination: control characters are neutralised in terminal text,
 * HTML and XML get entity escapes.
 */
#ifndef SL_REPORT_H
#define SL_REPORT_H

#include "common/buf.h"
#include "common/err.h"
#include "storage/store.h"
#include "storage/review_store.h"

/*
 * The campaign's targets, filtered to those whose state is in states (a
 * mask of 1u << enum sl_target_state; 0 = all): as text, one line each
 * ("ID STATE PATH:LINE attempts N [candidate C] REASON"), or as JSON lines
 * (one object per target).  *count_out = targets listed.
 */
int sl_report_targets(sl_buf *out, sl_store *st, int64_t campaign_id, unsigned states,
		      int json, size_t *count_out, sl_err *err);

/*
 * `sluice show ID --steps`: the session steps of the candidate's target
 * (`generate: act`), every attempt's in order, as text or one JSON object
 * {"candidate": ID, "steps": [...]}.  SL_ENOTFOUND for no such candidate.
 */
int sl_report_steps(sl_buf *out, sl_store *st, int64_t candidate_id, int json, sl_err *err);

/*
 * report.html's trajectory of attempt n of a target (nothing when it had no
 * session): each step's kind, command, exit status, durations, tokens,
 * output size and replay flag, its message and observation folded; escaped.
 */
int sl_report_html_steps(sl_buf *out, sl_store *st, int64_t target_id, int64_t n, sl_err *err);

/*
 * `sluice show PATH:LINE`: the target whose lines hold LINE in PATH.  When it
 * has candidates, the latest is shown as sl_review_show() shows it; else the
 * target itself (state, attempts, reason; flags as sl_review_show's).
 * SL_ENOTFOUND when no target covers that line.
 */
int sl_report_show_target(sl_buf *out, sl_store *st, int64_t campaign_id, const char *path,
			  int64_t line, int flags, sl_err *err);

void sl_report_metrics_text(sl_buf *out, const sl_metrics *m);

/*
 * `status --json`: the funnel object of sl_review_funnel_json() with the
 * metrics, every target and every candidate, and the findings not placed
 * (unplaced: file, line, rule, message, reason) added; one line.
 */
int sl_report_status_json(sl_buf *out, sl_store *st, const sl_campaign_rec *c,
			  const sl_funnel *f, sl_err *err);

/*
 * OUTDIR/report.html: self-contained (no external asset, no script): the
 * funnel as an inline SVG chart, each proposed change with its diff
 * coloured, gate verdicts with log excerpts, attempts, model and cost, and
 * the rejected candidates, failed targets and findings not placed with
 * their reasons.
 */
int sl_report_html(sl_store *st, const sl_campaign_rec *c, const char *outdir, sl_err *err);

/*
 * OUTDIR/junit.xml: one testsuite per gate, one testcase per candidate
 * (failure for fail/timeout, error for error, skipped for skip), for CI
 * dashboards.
 */
int sl_report_junit(sl_store *st, const sl_campaign_rec *c, const char *outdir, sl_err *err);

/*
 * A fix campaign's findings that no target holds, with their reasons: the
 * count line of `sluice status` (nothing when there are none), a JSON array
 * (always), one line {"unplaced": {...}} each (`targets --json`), or the
 * section "Findings not placed" of report.md or report.html (nothing when
 * there are none).
 */
enum sl_unplaced_form { SL_UNPLACED_TEXT, SL_UNPLACED_JSON, SL_UNPLACED_JSON_LINES,
	SL_UNPLACED_MD, SL_UNPLACED_HTML };
int sl_report_unplaced(sl_buf *out, sl_store *st, int64_t campaign_id,
		       enum sl_unplaced_form form, sl_err *err);

/*
 * The pieces of report.html that the dashboard (serve.c) shows too, each
 * appended to out with every text from the store escaped: the style sheet;
 * a diff coloured by line kind and token; the funnel as an inline SVG bar
 * chart (<svg id="funnel">), a model judge's gate named so, and under it
 * each model judge's vetoes and the reviewers' decisions on what it
 * accepted (<p class="judge">); the outcomes' tables (acceptance, landing,
 * per group); a candidate's gates with the logs of those that did not pass
 * (open), and with all_logs those of the others too (folded).
 */
extern const char sl_report_html_style[];
void sl_report_html_diff(sl_buf *out, const char *diff);
void sl_report_html_funnel(sl_buf *out, const sl_funnel *f);
void sl_report_html_outcomes(sl_buf *out, const sl_metrics *m);
void sl_report_html_gates(sl_buf *out, const sl_gate_run_rec *g, size_t ng, int all_logs);

/* Append s escaped for HTML or XML text and attributes. */
void sl_report_add_xml(sl_buf *out, const char *s);
/* Append s made safe for a terminal (term.h: controls shown, not sent). */
void sl_report_add_safe(sl_buf *out, const char *s);
/*
 * Append s (NULL: nothing) with indent after each of its newlines but a
 * final one, so a text of several lines stays one item of a list.
 */
void sl_report_add_indented(sl_buf *out, const char *s, const char *indent);

#endif
