/*
 * serve_pages.c - the dashboard's pages and live.json (serve_internal.h).
 *
 * Reads the stores (read-only) and renders HTML with the pieces report.html
 * uses (funnel, outcomes, gates, coloured diffs; report.h); every text from
 * a store is first made safe for a terminal (escape sequences shown, not
 * kept: term.h), then escaped for HTML.  Each page's body names the stamp
 * it was made at and where to poll for the next (data-live, data-stamp);
 * the parts of the page a run changes carry data-live and an id, and
 * /static/live.js redraws them from the page fetched again once the stamp
 * changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/review/serve_internal.h"
#include "pipeline/review/report.h"
#include "storage/dash_store.h"
#include "storage/review_store.h"
#include "common/term.h"
#include "common/util.h"

/* Prompts and replies show this many lines unless the attempt is asked for in full. */
#define ELIDE_LINES 12
/* Targets a page of the targets' list shows. */
#define TARGETS_PER_PAGE 100

const char serve_live_js[] =
	"/* sluice serve: poll the stamp, redraw the parts marked data-live */\n"
	"(function () {\n"
	"  var b = document.body, url = b.dataset.live, ms = +b.dataset.refresh || 2000;\n"
	"  if (!url) return;\n"
	"  b.dataset.updates = '0';\n"
	"  function redraw() {\n"
	"    return fetch(location.href, { cache: 'no-store' }).then(function (r) {\n"
	"      return r.text();\n"
	"    }).then(function (t) {\n"
	"      var doc = new DOMParser().parseFromString(t, 'text/html');\n"
	"      document.querySelectorAll('[data-live]').forEach(function (el) {\n"
	"        var n = doc.getElementById(el.id);\n"
	"        if (n) el.replaceChildren.apply(el, Array.prototype.slice.call(n.childNodes));\n"
	"      });\n"
	"      b.dataset.stamp = doc.body.dataset.stamp;\n"
	"      b.dataset.updates = String(+b.dataset.updates + 1);\n"
	"    });\n"
	"  }\n"
	"  function poll() {\n"
	"    fetch(url, { cache: 'no-store' }).then(function (r) { return r.json(); })\n"
	"      .then(function (j) { if (j.stamp !== b.dataset.stamp) return redraw(); })\n"
	"      .catch(function () { b.dataset.offline = '1'; })\n"
	"      .then(function () { setTimeout(poll, ms); });\n"
	"  }\n"
	"  setTimeout(poll, ms);\n"
	"})();\n";

/* Text from a store: escape sequences shown (term.h), then HTML-escaped. */
static void add_text(sl_buf *out, const char *s)
{
	sl_buf safe = SL_BUF_INIT;

	if (!s)
		return;
	sl_term_safe(&safe, s, strlen(s), 0);
	sl_report_add_xml(out, safe.buf);
	sl_buf_release(&safe);
}

/* s percent-encoded for a URL's query (then safe in an attribute too). */
static void add_url_arg(sl_buf *out, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~/", c))
			sl_buf_addch(out, c);
		else
			sl_buf_addf(out, "%%%02X", c);
	}
}

/* A positive decimal number, or -1. */
static int64_t parse_num(const char *s)
{
	char *end = NULL;
	long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	v = strtoll(s, &end, 10);
	return *end || v < 0 ? -1 : v;
}

/* The store of segment 1 ("s/S/..."). */
static int store_of(const serve_stores *s, const serve_req *r, size_t *si, sl_err *err)
{
	int64_t i = parse_num(r->seg[1]);

	if (i < 0 || (size_t)i >= s->n)
		return sl_err_set(err, SL_ENOTFOUND, "no store %s", r->seg[1]);
	*si = (size_t)i;
	return SL_OK;
}

/* The campaign of id in a store, into out (released by the caller). */
static int campaign_of(sl_store *st, int64_t id, sl_campaign_rec *out, sl_err *err)
{
	sl_campaign_rec *c = NULL;
	size_t n = 0;
	int ret = sl_store_campaign_list(st, &c, &n, err);

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; !ret && i < n; i++)
		if (c[i].id == id) {
			*out = c[i];
			memset(&c[i], 0, sizeof(c[i]));
			goto done;
		}
	if (!ret)
		ret = sl_err_set(err, SL_ENOTFOUND, "no campaign %lld", (long long)id);
done:
	sl_campaign_list_free(c, n);
	return ret;
}

/* The stamp of the campaigns a page shows: one (cid > 0) or all of the stores. */
static int page_stamp(const serve_stores *s, size_t si, int64_t cid, sl_buf *out, sl_err *err)
{
	sl_campaign_rec *c = NULL;
	size_t n = 0;
	int ret = SL_OK;

	if (cid > 0)
		return sl_store_dash_stamp(s->st[si], cid, out, err);
	for (size_t i = 0; i < s->n && !ret; i++) {
		if ((ret = sl_store_campaign_list(s->st[i], &c, &n, err)))
			break;
		for (size_t k = 0; k < n && !ret; k++) {
			sl_buf_addf(out, "%s%zu.%lld:", out->len ? ";" : "", i, (long long)c[k].id);
			ret = sl_store_dash_stamp(s->st[i], c[k].id, out, err);
		}
		sl_campaign_list_free(c, n);
		c = NULL;
		n = 0;
	}
	return ret;
}

/* The page's head, up to the navigation; the stamp says what the page shows. */
static int page_head(const serve_stores *s, serve_reply *rep, const char *title, size_t si,
		     int64_t cid, sl_err *err)
{
	sl_buf stamp = SL_BUF_INIT, *out = &rep->body;
	int ret = page_stamp(s, si, cid, &stamp, err);

	if (ret)
		goto done;
	rep->type = "text/html; charset=utf-8";
	sl_buf_adds(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		    "<title>");
	add_text(out, title);
	sl_buf_adds(out, " &middot; sluice</title>\n<link rel=\"stylesheet\" "
		    "href=\"/static/style.css\">\n<script src=\"/static/live.js\" defer></script>"
		    "</head>\n<body data-live=\"/live.json");
	if (cid > 0)
		sl_buf_addf(out, "?s=%zu&amp;c=%lld", si, (long long)cid);
	sl_buf_addf(out, "\" data-refresh=\"%d\" data-stamp=\"", s->refresh_ms);
	sl_report_add_xml(out, stamp.buf);
	sl_buf_adds(out, "\">\n<nav><a href=\"/\">all campaigns</a>");
done:
	sl_buf_release(&stamp);
	return ret;
}

/* A campaign's link in the navigation. */
static void nav_campaign(sl_buf *out, size_t si, const sl_campaign_rec *c)
{
	sl_buf_addf(out, " &rsaquo; <a href=\"/s/%zu/c/%lld\">", si, (long long)c->id);
	add_text(out, c->name);
	sl_buf_adds(out, "</a>");
}

/* A campaign's counts in one line (the part live pages redraw). */
static void add_summary(sl_buf *out, const sl_funnel *f)
{
	sl_buf_addf(out, "<p class=\"summary\">%lld targets: <b class=\"pending\">%lld</b> pending, "
		    "<b class=\"proposed\">%lld</b> proposed, %lld accepted, %lld rejected, %lld "
		    "failed, %lld skipped, %lld over budget; %lld attempts, %lld candidates; %lld "
		    "tokens, cost %.4f.</p>\n", (long long)f->targets, (long long)f->pending,
		    (long long)f->proposed, (long long)f->accepted, (long long)f->rejected,
		    (long long)f->failed, (long long)f->skipped, (long long)f->budget,
		    (long long)f->attempts, (long long)f->candidates,
		    (long long)(f->tokens_in + f->tokens_out), f->cost);
}

/* One campaign of the index: its link, store, counts and funnel. */
static int index_campaign(sl_buf *out, sl_store *st, size_t si, const char *path,
			  const sl_campaign_rec *c, sl_err *err)
{
	sl_funnel f = { 0 };
	int ret = sl_store_funnel(st, c->id, &f, err);

	if (ret)
		return ret;
	sl_buf_addf(out, "<section class=\"campaign\"><h2><a href=\"/s/%zu/c/%lld\">", si,
		    (long long)c->id);
	add_text(out, c->name);
	sl_buf_adds(out, "</a> <small>store ");
	add_text(out, path);
	sl_buf_adds(out, ", repository ");
	add_text(out, c->repo_path);
	sl_buf_addf(out, "</small></h2>\n<div id=\"camp-%zu-%lld\" data-live>", si,
		    (long long)c->id);
	add_summary(out, &f);
	sl_report_html_funnel(out, &f);
	sl_buf_adds(out, "</div></section>\n");
	sl_funnel_release(&f);
	return SL_OK;
}

int serve_index(const serve_stores *s, const serve_req *r, serve_reply *rep, sl_err *err)
{
	sl_campaign_rec *c = NULL;
	size_t n = 0, total = 0;
	int ret;

	if ((ret = page_head(s, rep, "campaigns", 0, 0, err)))
		return ret;
	sl_buf_adds(&rep->body, "</nav>\n<h1>sluice campaigns</h1>\n");
	for (size_t i = 0; i < s->n && !ret; i++) {
		if ((ret = sl_store_campaign_list(s->st[i], &c, &n, err)))
			break;
		for (size_t k = 0; k < n && !ret; k++)
			ret = index_campaign(&rep->body, s->st[i], i, s->paths[i], &c[k], err);
		total += n;
		sl_campaign_list_free(c, n);
		c = NULL;
		n = 0;
	}
	if (!total)
		sl_buf_adds(&rep->body, "<p>No campaign in these stores yet.</p>\n");
	sl_buf_adds(&rep->body, "</body></html>\n");
	return ret;
}

/* A value of a step, or < 0 where the step has none. */
typedef double point_fn(const sl_dash_point *p);

static double p_acceptance(const sl_dash_point *p)
{
	return p->decided ? 100.0 * (double)p->accepted / (double)p->decided : -1;
}

static double p_landed(const sl_dash_point *p)
{
	return p->landed_checked ? 100.0 * (double)p->landed_unchanged /
		(double)p->landed_checked : -1;
}

static double p_attempts(const sl_dash_point *p)
{
	return (double)p->attempts;
}

static double p_tokens(const sl_dash_point *p)
{
	return (double)p->tokens;
}

static double p_cost(const sl_dash_point *p)
{
	return p->cost;
}

/* One series over time as an inline SVG bar chart, with its title and scale. */
static void add_chart(sl_buf *out, const char *id, const char *title, const char *fmt,
		      const sl_dash_point *p, size_t n, point_fn *val)
{
	const int w = 440, h = 110, top = 8, left = 4;
	double max = 0;
	size_t have = 0;
	char v[64];

	for (size_t i = 0; i < n; i++) {
		have += val(&p[i]) >= 0;
		if (val(&p[i]) > max)
			max = val(&p[i]);
	}
	snprintf(v, sizeof(v), fmt, max);
	sl_buf_addf(out, "<figure class=\"chart\"><figcaption>%s%s%s%s</figcaption>\n"
		    "<svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		    "height=\"%d\" role=\"img\" aria-label=\"%s\">\n<line x1=\"%d\" y1=\"%d\" "
		    "x2=\"%d\" y2=\"%d\" stroke=\"#8c959f\"/>\n", title, have ? " (max " : "",
		    have ? v : "", have ? ")" : "", id, w + 2 * left, h + top + 16, title, left,
		    top + h, left + w, top + h);
	for (size_t i = 0; i < n; i++) {
		double x = val(&p[i]);
		int bw = (int)(w / (n > 0 ? n : 1)) > 40 ? 40 : (int)(w / (n > 0 ? n : 1)),
		    bh = max > 0 && x > 0 ?
			(int)(h * x / max + 0.5) : 0;

		if (x < 0)
			continue;
		snprintf(v, sizeof(v), fmt, x);
		sl_buf_addf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
			    "fill=\"#1f6feb\"><title>", left + (int)i * bw, top + h - (bh ? bh : 1),
			    bw > 2 ? bw - 1 : 1, bh ? bh : 1);
		add_text(out, p[i].t);
		sl_buf_addf(out, ": %s</title></rect>\n", v);
	}
	if (have) {
		sl_buf_addf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\">", left, top + h + 13);
		add_text(out, p[0].t);
		sl_buf_addf(out, "</text><text x=\"%d\" y=\"%d\" font-size=\"11\" "
			    "text-anchor=\"end\">", left + w, top + h + 13);
		add_text(out, p[n - 1].t);
		sl_buf_adds(out, "</text>\n");
	} else {
		sl_buf_addf(out, "<text x=\"%d\" y=\"%d\" font-size=\"12\">no data yet</text>\n",
			    left + 8, top + h / 2);
	}
	sl_buf_adds(out, "</svg></figure>\n");
}

/* The charts over time: attempts, acceptance, landed unchanged, tokens, cost. */
static int add_charts(sl_buf *out, sl_store *st, int64_t cid, sl_err *err)
{
	static const char *const steps[] = { "minute", "hour", "day" };
	sl_dash_point *p = NULL;
	enum sl_dash_step step = SL_DASH_MINUTE;
	size_t n = 0;
	int ret = sl_store_dash_series(st, cid, &p, &n, &step, err);

	if (ret)
		return ret;
	sl_buf_addf(out, "<p>One bar per %s (UTC).</p>\n", steps[step]);
	add_chart(out, "chart-acceptance", "acceptance rate, %", "%.0f%%", p, n, p_acceptance);
	add_chart(out, "chart-landed", "landed unchanged, %", "%.0f%%", p, n, p_landed);
	add_chart(out, "chart-tokens", "tokens", "%.0f", p, n, p_tokens);
	add_chart(out, "chart-cost", "cost", "%.4f", p, n, p_cost);
	add_chart(out, "chart-attempts", "attempts", "%.0f", p, n, p_attempts);
	free(p);
	return SL_OK;
}

/* The gates' verdicts and times, each gate linking to the targets it refused. */
static int add_gates(sl_buf *out, sl_store *st, size_t si, int64_t cid, sl_err *err)
{
	sl_dash_gate *g = NULL;
	size_t n = 0;
	int ret = sl_store_dash_gates(st, cid, &g, &n, err);

	if (ret)
		return ret;
	sl_buf_adds(out, "<table class=\"gates\"><tr><th>gate</th>");
	for (int v = 0; v < SL_VERDICT_N; v++)
		sl_buf_addf(out, "<th>%s</th>", sl_verdict_name((sl_verdict)v));
	sl_buf_adds(out, "<th>cached</th><th>mean time</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		sl_buf_addf(out, "<tr><td><a href=\"/s/%zu/c/%lld/targets?gate=", si,
			    (long long)cid);
		add_url_arg(out, g[i].gate);
		sl_buf_adds(out, "\">");
		add_text(out, g[i].gate);
		sl_buf_adds(out, "</a></td>");
		for (int v = 0; v < SL_VERDICT_N; v++)
			sl_buf_addf(out, "<td>%lld</td>", (long long)g[i].verdicts[v]);
		sl_buf_addf(out, "<td>%lld</td><td>%.2f s</td></tr>\n", (long long)g[i].cached,
			    g[i].runs ? g[i].sum_s / (double)g[i].runs : 0.0);
	}
	sl_buf_adds(out, "</table>\n");
	sl_dash_gate_list_free(g, n);
	return SL_OK;
}

/* Links to the campaign's targets by state, with their counts. */
static void add_state_links(sl_buf *out, size_t si, int64_t cid, const sl_funnel *f)
{
	const struct { enum sl_target_state st; int64_t n; } v[] = {
		{ SL_T_PENDING, f->pending }, { SL_T_PROPOSED, f->proposed - f->accepted -
						f->rejected },
		{ SL_T_ACCEPTED, f->accepted }, { SL_T_REJECTED, f->rejected },
		{ SL_T_FAILED, f->failed }, { SL_T_SKIPPED, f->skipped }, { SL_T_BUDGET, f->budget },
	};

	sl_buf_addf(out, "<p>Targets: <a href=\"/s/%zu/c/%lld/targets\">all %lld</a>", si,
		    (long long)cid, (long long)f->targets);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		sl_buf_addf(out, " &middot; <a href=\"/s/%zu/c/%lld/targets?state=%s\">%s</a>", si,
			    (long long)cid, sl_target_state_name(v[i].st),
			    sl_target_state_name(v[i].st));
	sl_buf_adds(out, "</p>\n");
}

/* The campaign's page body after the head: counts, funnel, outcomes, gates, charts. */
static int campaign_body(sl_buf *out, sl_store *st, size_t si, const sl_campaign_rec *c,
			 sl_err *err)
{
	sl_funnel f = { 0 };
	sl_metrics m = { 0 };
	int ret;

	if ((ret = sl_store_funnel(st, c->id, &f, err)) ||
	    (ret = sl_store_metrics(st, c->id, &m, err)))
		goto done;
	sl_buf_adds(out, "<h1>Campaign <code>");
	add_text(out, c->name);
	sl_buf_adds(out, "</code></h1>\n<p>Base <code>");
	add_text(out, c->base_oid);
	sl_buf_adds(out, "</code> of <code>");
	add_text(out, c->repo_path);
	sl_buf_adds(out, "</code>.</p>\n<div id=\"counts\" data-live>");
	add_summary(out, &f);
	add_state_links(out, si, c->id, &f);
	sl_buf_adds(out, "<h2>Funnel</h2>\n");
	sl_report_html_funnel(out, &f);
	sl_report_html_outcomes(out, &m);
	sl_buf_adds(out, "<h2>Gates</h2>\n");
	if ((ret = add_gates(out, st, si, c->id, err)))
		goto done;
	sl_buf_adds(out, "<h2>Over time</h2>\n");
	if ((ret = add_charts(out, st, c->id, err)))
		goto done;
	sl_buf_adds(out, "</div>\n");
done:
	sl_funnel_release(&f);
	sl_metrics_release(&m);
	return ret;
}

/* The store (segment 1) and campaign (segment 3) a page of "s/S/c/C..." names. */
static int page_campaign(const serve_stores *s, const serve_req *r, size_t *si,
			 sl_campaign_rec *c, sl_err *err)
{
	int64_t cid = parse_num(r->seg[3]);
	int ret = store_of(s, r, si, err);

	memset(c, 0, sizeof(*c));
	if (ret)
		return ret;
	if (cid <= 0)
		return sl_err_set(err, SL_ENOTFOUND, "no campaign %s", r->seg[3]);
	return campaign_of(s->st[*si], cid, c, err);
}

int serve_campaign(const serve_stores *s, const serve_req *r, serve_reply *rep, sl_err *err)
{
	sl_campaign_rec c;
	size_t si = 0;
	int ret;

	if ((ret = page_campaign(s, r, &si, &c, err)) ||
	    (ret = page_head(s, rep, c.name, si, c.id, err)))
		goto done;
	nav_campaign(&rep->body, si, &c);
	sl_buf_adds(&rep->body, "</nav>\n");
	if ((ret = campaign_body(&rep->body, s->st[si], si, &c, err)))
		goto done;
	sl_buf_adds(&rep->body, "</body></html>\n");
done:
	sl_campaign_rec_release(&c);
	return ret;
}

/* The filter form, its fields holding the query's values. */
static void add_filter_form(sl_buf *out, const sl_dash_query *q)
{
	sl_buf_adds(out, "<form method=\"get\" class=\"filter\"><label>state <select "
		    "name=\"state\"><option value=\"\">any</option>");
	for (int i = 0; i < SL_T_NSTATES; i++)
		sl_buf_addf(out, "<option%s>%s</option>", q->state == i ? " selected" : "",
			    sl_target_state_name(i));
	sl_buf_adds(out, "</select></label> <label>refused by gate <input name=\"gate\" "
		    "size=\"10\" value=\"");
	add_text(out, q->gate);
	sl_buf_adds(out, "\"></label> <label>file <input name=\"file\" size=\"24\" "
		    "placeholder=\"src/ or *.c\" value=\"");
	add_text(out, q->file);
	sl_buf_adds(out, "\"></label> <label>search <input name=\"q\" size=\"20\" value=\"");
	add_text(out, q->text);
	sl_buf_adds(out, "\"></label> <button>filter</button></form>\n");
}

/* One target's row of the list. */
static void add_target_row(sl_buf *out, size_t si, const sl_target_rec *t)
{
	const char *reason = t->reason ? t->reason : "";
	size_t rl = strcspn(reason, "\n");
	char *first = sl_xstrndup(reason, rl > 200 ? 200 : rl);

	sl_buf_addf(out, "<tr><td><a href=\"/s/%zu/t/%lld\">%lld</a></td><td>", si,
		    (long long)t->id, (long long)t->id);
	add_text(out, t->path);
	sl_buf_addf(out, ":%lld</td><td class=\"st-%s\">%s</td><td>%lld</td><td>",
		    (long long)t->start_line, sl_target_state_name(t->state),
		    sl_target_state_name(t->state), (long long)t->attempts);
	add_text(out, t->unit);
	sl_buf_adds(out, "</td><td>");
	add_text(out, first);
	sl_buf_adds(out, "</td></tr>\n");
	free(first);
}

/* The targets the query finds, one page of them, and links to the next. */
static int add_target_list(sl_buf *out, sl_store *st, size_t si, int64_t cid,
			   const sl_dash_query *q, sl_err *err)
{
	int64_t *ids = NULL, total = 0;
	sl_target_rec t;
	size_t n = 0;
	int ret = sl_store_dash_targets(st, cid, q, &ids, &n, &total, err);

	if (ret)
		goto done;
	sl_buf_addf(out, "<p class=\"found\">%lld target%s found; %zu&ndash;%zu shown.</p>\n"
		    "<table class=\"targets\"><tr><th>id</th><th>where</th><th>state</th>"
		    "<th>attempts</th><th>unit</th><th>reason</th></tr>\n", (long long)total,
		    total == 1 ? "" : "s", n ? q->offset + 1 : 0, q->offset + n);
	for (size_t i = 0; i < n && !ret; i++) {
		if ((ret = sl_store_target_get(st, ids[i], &t, err)))
			break;
		add_target_row(out, si, &t);
		sl_target_rec_release(&t);
	}
	sl_buf_adds(out, "</table>\n");
	if (!ret && (int64_t)(q->offset + n) < total)
		sl_buf_addf(out, "<p>More: add <code>&amp;page=%zu</code> to the address.</p>\n",
			    q->offset / TARGETS_PER_PAGE + 2);
done:
	free(ids);
	return ret;
}

/* The query of the form's arguments; an empty field takes all. */
static int target_query(const serve_req *r, sl_dash_query *q, sl_err *err)
{
	const char *state = serve_arg(r, "state"), *page = serve_arg(r, "page");
	int64_t pg = page && *page ? parse_num(page) : 1;

	memset(q, 0, sizeof(*q));
	q->state = SL_T_ANY;
	if (state && *state && (q->state = (enum sl_target_state)sl_target_state_parse(state)) == SL_T_ANY)
		return sl_err_set(err, SL_EINPUT, "no target state '%s'", state);
	if (pg < 1 || pg > 1000000)
		return sl_err_set(err, SL_EINPUT, "page must be a number from 1");
	q->gate = serve_arg(r, "gate");
	q->file = serve_arg(r, "file");
	q->text = serve_arg(r, "q");
	q->gate = q->gate && *q->gate ? q->gate : NULL;
	q->file = q->file && *q->file ? q->file : NULL;
	q->text = q->text && *q->text ? q->text : NULL;
	q->limit = TARGETS_PER_PAGE;
	q->offset = (size_t)(pg - 1) * TARGETS_PER_PAGE;
	return SL_OK;
}

int serve_targets(const serve_stores *s, const serve_req *r, serve_reply *rep, sl_err *err)
{
	sl_campaign_rec c;
	sl_dash_query q;
	size_t si = 0;
	int ret;

	if ((ret = page_campaign(s, r, &si, &c, err)) || (ret = target_query(r, &q, err)) ||
	    (ret = page_head(s, rep, c.name, si, c.id, err)))
		goto done;
	nav_campaign(&rep->body, si, &c);
	sl_buf_adds(&rep->body, " &rsaquo; targets</nav>\n<h1>Targets of <code>");
	add_text(&rep->body, c.name);
	sl_buf_adds(&rep->body, "</code></h1>\n");
	add_filter_form(&rep->body, &q);
	sl_buf_adds(&rep->body, "<div id=\"list\" data-live>");
	if ((ret = add_target_list(&rep->body, s->st[si], si, c.id, &q, err)))
		goto done;
	sl_buf_adds(&rep->body, "</div></body></html>\n");
done:
	sl_campaign_rec_release(&c);
	return ret;
}

/* A prompt or reply: its first lines, and a link to all of it, unless full. */
static void add_elided(sl_buf *out, const char *what, const char *text, int full,
		       const char *full_url)
{
	size_t lines = 0, cut = 0, len;

	if (!text)
		return;
	len = strlen(text);
	for (size_t i = 0; i < len && !cut; i++)
		if (text[i] == '\n' && ++lines == ELIDE_LINES && i + 1 < len)
			cut = i + 1;
	sl_buf_addf(out, "<h4>%s</h4>\n<pre class=\"%s\">", what, what);
	if (full || !cut) {
		add_text(out, text);
	} else {
		char *head = sl_xstrndup(text, cut);
		size_t more = 0;

		for (size_t i = cut; i < len; i++)
			more += text[i] == '\n';
		add_text(out, head);
		free(head);
		sl_buf_addf(out, "</pre>\n<p class=\"elided\">&hellip; %zu more line%s, %zu bytes: "
			    "<a href=\"%s\">show all</a></p>\n", more + (text[len - 1] != '\n'),
			    more + (text[len - 1] != '\n') == 1 ? "" : "s", len - cut, full_url);
		return;
	}
	sl_buf_adds(out, "</pre>\n");
}

/* A candidate of an attempt: its state, branch, decision, gates, logs and diff. */
static int add_candidate(sl_buf *out, sl_store *st, int64_t cand_id, sl_err *err)
{
	sl_candidate_rec c;
	sl_gate_run_rec *g = NULL;
	size_t ng = 0;
	int ret;

	if ((ret = sl_store_candidate_get(st, cand_id, &c, err)))
		return ret;
	if ((ret = sl_store_gate_runs(st, c.id, &g, &ng, err)))
		goto done;
	sl_buf_addf(out, "<div class=\"change\" id=\"k%lld\"><h4>Candidate %lld: <span "
		    "class=\"%s\">%s</span>", (long long)c.id, (long long)c.id,
		    c.state == SL_C_PASSED ? "pass" : "fail", sl_candidate_state_name(c.state));
	if (c.branch) {
		sl_buf_adds(out, ", branch <code>");
		add_text(out, c.branch);
		sl_buf_adds(out, "</code>");
	}
	sl_buf_adds(out, "</h4>\n<p class=\"decision\">Decision: ");
	if (c.decision) {
		sl_buf_addf(out, "<b>%s</b>", sl_decision_name(c.decision));
		if (c.decision_reason) {
			sl_buf_adds(out, ": ");
			add_text(out, c.decision_reason);
		}
	} else {
		sl_buf_adds(out, c.state == SL_C_PASSED ? "none yet" : "none (not proposed)");
	}
	sl_buf_adds(out, ".</p>\n");
	sl_report_html_gates(out, g, ng, 1);
	sl_report_html_diff(out, c.diff);
	sl_buf_adds(out, "</div>\n");
done:
	sl_gate_run_list_free(g, ng);
	sl_candidate_rec_release(&c);
	return ret;
}

/* The candidate an attempt made, from the target's candidates, or 0. */
static int64_t candidate_of(sl_store *st, const int64_t *ids, size_t n, int64_t attempt_id)
{
	sl_candidate_rec c;
	int64_t found = 0;

	for (size_t i = 0; i < n && !found; i++) {
		if (sl_store_candidate_get(st, ids[i], &c, NULL))
			continue;
		if (c.attempt_id == attempt_id)
			found = c.id;
		sl_candidate_rec_release(&c);
	}
	return found;
}

/* One attempt: what was asked and answered, how it ended, its candidate. */
static int add_attempt(sl_buf *out, sl_store *st, size_t si, const sl_attempt_rec *a,
		       const int64_t *cands, size_t nc, int64_t full, sl_err *err)
{
	sl_buf url = SL_BUF_INIT;
	int64_t cand = candidate_of(st, cands, nc, a->id);
	int ret = SL_OK;

	sl_buf_addf(out, "<section class=\"attempt\" id=\"a%lld\"><h3>Attempt %lld: ",
		    (long long)a->id, (long long)a->n);
	add_text(out, a->source);
	sl_buf_addf(out, ", %s</h3>\n<p>", sl_attempt_outcome_name(a->outcome));
	if (a->tokens_in >= 0 || a->tokens_out >= 0)
		sl_buf_addf(out, "%lld tokens in, %lld out, ", (long long)a->tokens_in,
			    (long long)a->tokens_out);
	sl_buf_addf(out, "cost %.4f, %lld ms, at ", a->cost, (long long)a->latency_ms);
	add_text(out, a->created_at);
	sl_buf_adds(out, ".</p>\n");
	if (a->error) {
		sl_buf_adds(out, "<pre class=\"reason\">");
		add_text(out, a->error);
		sl_buf_adds(out, "</pre>\n");
	}
	sl_buf_addf(&url, "/s/%zu/t/%lld?full=%lld#a%lld", si, (long long)a->target_id,
		    (long long)a->id, (long long)a->id);
	add_elided(out, "prompt", a->prompt, full == a->id, url.buf);
	add_elided(out, "reply", a->reply, full == a->id, url.buf);
	if (cand)
		ret = add_candidate(out, st, cand, err);
	sl_buf_adds(out, "</section>\n");
	sl_buf_release(&url);
	return ret;
}

/* The target's heading and every attempt at it, oldest first. */
static int target_body(sl_buf *out, sl_store *st, size_t si, const sl_target_rec *t,
		       int64_t full, sl_err *err)
{
	sl_attempt_rec *a = NULL;
	int64_t *cands = NULL;
	size_t na = 0, nc = 0;
	int ret;

	if ((ret = sl_store_attempts(st, t->id, &a, &na, err)) ||
	    (ret = sl_store_dash_target_candidates(st, t->id, &cands, &nc, err)))
		goto done;
	sl_buf_adds(out, "<h1>Target <code>");
	add_text(out, t->path);
	sl_buf_addf(out, ":%lld&ndash;%lld</code></h1>\n<div id=\"target\" data-live><p>"
		    "<span class=\"st-%s\">%s</span>, %lld attempt%s", (long long)t->start_line,
		    (long long)t->end_line, sl_target_state_name(t->state),
		    sl_target_state_name(t->state), (long long)t->attempts,
		    t->attempts == 1 ? "" : "s");
	if (t->unit && *t->unit) {
		sl_buf_adds(out, ", in <code>");
		add_text(out, t->unit);
		sl_buf_adds(out, "</code>");
	}
	sl_buf_adds(out, ".</p>\n");
	if (t->reason) {
		sl_buf_adds(out, "<pre class=\"reason\">");
		add_text(out, t->reason);
		sl_buf_adds(out, "</pre>\n");
	}
	for (size_t i = 0; i < na && !ret; i++)
		ret = add_attempt(out, st, si, &a[i], cands, nc, full, err);
	sl_buf_adds(out, "</div>\n");
done:
	free(cands);
	sl_attempt_list_free(a, na);
	return ret;
}

/* The page of target tid of store si. */
static int target_page(const serve_stores *s, const serve_req *r, size_t si, int64_t tid,
		       serve_reply *rep, sl_err *err)
{
	sl_campaign_rec c = { 0 };
	sl_target_rec t = { 0 };
	sl_buf title = SL_BUF_INIT;
	int ret;

	if (tid <= 0 || sl_store_target_get(s->st[si], tid, &t, NULL)) {
		ret = sl_err_set(err, SL_ENOTFOUND, "no target %lld", (long long)tid);
		goto done;
	}
	sl_buf_addf(&title, "%s:%lld", t.path, (long long)t.start_line);
	if ((ret = campaign_of(s->st[si], t.campaign_id, &c, err)) ||
	    (ret = page_head(s, rep, title.buf, si, c.id, err)))
		goto done;
	nav_campaign(&rep->body, si, &c);
	sl_buf_addf(&rep->body, " &rsaquo; <a href=\"/s/%zu/c/%lld/targets\">targets</a></nav>\n",
		    si, (long long)c.id);
	if ((ret = target_body(&rep->body, s->st[si], si, &t, parse_num(serve_arg(r, "full")),
			       err)))
		goto done;
	sl_buf_adds(&rep->body, "</body></html>\n");
done:
	sl_buf_release(&title);
	sl_target_rec_release(&t);
	sl_campaign_rec_release(&c);
	return ret;
}

int serve_target(const serve_stores *s, const serve_req *r, serve_reply *rep, sl_err *err)
{
	size_t si = 0;
	int ret = store_of(s, r, &si, err);

	return ret ? ret : target_page(s, r, si, parse_num(r->seg[3]), rep, err);
}

int serve_candidate(const serve_stores *s, const serve_req *r, serve_reply *rep, sl_err *err)
{
	sl_candidate_rec c;
	int64_t id = parse_num(r->seg[3]), tid;
	size_t si = 0;
	int ret = store_of(s, r, &si, err);

	if (ret)
		return ret;
	if (id <= 0 || sl_store_candidate_get(s->st[si], id, &c, NULL))
		return sl_err_set(err, SL_ENOTFOUND, "no candidate %s", r->seg[3]);
	tid = c.target_id;
	sl_candidate_rec_release(&c);
	return target_page(s, r, si, tid, rep, err);
}

/* One campaign's counts in live.json. */
static int live_campaign(sl_buf *out, sl_store *st, size_t si, const sl_campaign_rec *c,
			 sl_err *err)
{
	sl_funnel f = { 0 };
	int ret = sl_store_funnel(st, c->id, &f, err);

	if (ret)
		return ret;
	sl_buf_addf(out, "%s{\"store\":%zu,\"id\":%lld,\"name\":", out->buf[out->len - 1] == '[' ?
		    "" : ",", si, (long long)c->id);
	sl_buf_add_json_str(out, c->name, strlen(c->name));
	sl_buf_addf(out, ",\"targets\":%lld,\"pending\":%lld,\"proposed\":%lld,\"accepted\":%lld,"
		    "\"rejected\":%lld,\"failed\":%lld,\"skipped\":%lld,\"budget\":%lld,"
		    "\"attempts\":%lld,\"candidates\":%lld,\"tokens\":%lld,\"cost\":%.6f}",
		    (long long)f.targets, (long long)f.pending, (long long)f.proposed,
		    (long long)f.accepted, (long long)f.rejected, (long long)f.failed,
		    (long long)f.skipped, (long long)f.budget, (long long)f.attempts,
		    (long long)f.candidates, (long long)(f.tokens_in + f.tokens_out), f.cost);
	sl_funnel_release(&f);
	return SL_OK;
}

/* live.json[?s=S&c=C]: the stamp of what a page shows, and each campaign's counts. */
int serve_live(const serve_stores *s, const serve_req *r, serve_reply *rep, sl_err *err)
{
	const char *sa = serve_arg(r, "s"), *ca = serve_arg(r, "c");
	int64_t si = sa ? parse_num(sa) : 0, cid = ca ? parse_num(ca) : 0;
	sl_buf stamp = SL_BUF_INIT;
	sl_campaign_rec *c = NULL;
	size_t n = 0;
	int ret;

	if (si < 0 || (size_t)si >= s->n || cid < 0)
		return sl_err_set(err, SL_ENOTFOUND, "no such store or campaign");
	if ((ret = page_stamp(s, (size_t)si, cid, &stamp, err)))
		goto done;
	rep->type = "application/json";
	sl_buf_adds(&rep->body, "{\"stamp\":");
	sl_buf_add_json_str(&rep->body, stamp.buf, stamp.len);
	sl_buf_adds(&rep->body, ",\"campaigns\":[");
	for (size_t i = 0; i < s->n && !ret; i++) {
		if ((cid && i != (size_t)si) || (ret = sl_store_campaign_list(s->st[i], &c, &n, err)))
			continue;
		for (size_t k = 0; k < n && !ret; k++)
			if (!cid || c[k].id == cid)
				ret = live_campaign(&rep->body, s->st[i], i, &c[k], err);
		sl_campaign_list_free(c, n);
		c = NULL;
		n = 0;
	}
	sl_buf_adds(&rep->body, "]}\n");
done:
	sl_buf_release(&stamp);
	return ret;
}
