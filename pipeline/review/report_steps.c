/*
 * report_steps.c - `sluice show ID --steps`: the session (`generate: act`)
 * that led to a candidate, every step of its target in order: the model's
 * message, the command, its exit status, what the model was shown, the
 * durations and tokens, and whether a replay's output differed from the
 * record.  Reads the store; the caller prints (terminal-safe).  The same
 * trajectory, one attempt's, as HTML for report.html: a table of the steps,
 * each step's model message and observation folded, everything escaped.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/review/report.h"
#include "storage/step_store.h"
#include "common/util.h"

static void steps_text(sl_buf *out, const sl_step_rec *v, size_t n)
{
	if (!n)
		sl_buf_adds(out, "no session steps (the campaign does not use generate: act)\n");
	for (size_t i = 0; i < n; i++) {
		const sl_step_rec *r = &v[i];

		sl_buf_addf(out, "attempt %lld step %lld: %s", (long long)r->n, (long long)r->step,
			    r->command ? r->command : r->kind);
		sl_buf_addf(out, "\n  [%s; model %lld ms, %lld+%lld tokens; command %lld ms, "
			    "%lld bytes of output%s]\n", r->kind, (long long)r->model_ms,
			    (long long)r->tokens_in, (long long)r->tokens_out,
			    (long long)r->command_ms, (long long)r->output_bytes,
			    r->differs ? "; DIFFERS from the recorded output on replay" : "");
		if (r->reply && *r->reply)
			sl_buf_addf(out, "  model:\n    %s\n", r->reply);
		if (r->output)
			sl_buf_addf(out, "  observation:\n%s%s", r->output,
				    *r->output && r->output[strlen(r->output) - 1] == '\n' ? "" : "\n");
	}
}

static void steps_json(sl_buf *out, int64_t cand, const sl_step_rec *v, size_t n)
{
	json_t *o = json_object(), *a = json_array();
	char *s;

	json_object_set_new(o, "candidate", json_integer(cand));
	for (size_t i = 0; i < n; i++) {
		const sl_step_rec *r = &v[i];
		json_t *e = json_object();

		json_object_set_new(e, "attempt", json_integer(r->n));
		json_object_set_new(e, "step", json_integer(r->step));
		json_object_set_new(e, "kind", json_string(r->kind));
		json_object_set_new(e, "reply", r->reply ? json_string(r->reply) : json_null());
		json_object_set_new(e, "command", r->command ? json_string(r->command) : json_null());
		json_object_set_new(e, "exit_status", r->exit_status >= 0 ?
				    json_integer(r->exit_status) : json_null());
		json_object_set_new(e, "output", r->output ? json_string(r->output) : json_null());
		json_object_set_new(e, "output_bytes", json_integer(r->output_bytes));
		json_object_set_new(e, "model_ms", json_integer(r->model_ms));
		json_object_set_new(e, "command_ms", json_integer(r->command_ms));
		json_object_set_new(e, "tokens_in", json_integer(r->tokens_in));
		json_object_set_new(e, "tokens_out", json_integer(r->tokens_out));
		json_object_set_new(e, "differs", json_boolean(r->differs));
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "steps", a);
	s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (s) {
		sl_buf_addf(out, "%s\n", s);
		free(s);
	}
	json_decref(o);
}

/* One step as a row of the trajectory table, its texts folded below it. */
static void step_html(sl_buf *out, const sl_step_rec *r)
{
	sl_buf_addf(out, "<tr><td>%lld</td><td>", (long long)r->step);
	sl_report_add_xml(out, r->kind);
	sl_buf_adds(out, "</td><td><code>");
	sl_report_add_xml(out, r->command);
	sl_buf_adds(out, "</code></td><td>");
	if (r->exit_status >= 0)
		sl_buf_addf(out, "%lld", (long long)r->exit_status);
	sl_buf_addf(out, "</td><td>%lld ms</td><td>%lld ms</td><td>%lld+%lld</td><td>%lld%s</td>"
		    "</tr>\n", (long long)r->model_ms, (long long)r->command_ms,
		    (long long)r->tokens_in, (long long)r->tokens_out, (long long)r->output_bytes,
		    r->differs ? " <span class=\"fail\">differs on replay</span>" : "");
	if ((!r->reply || !*r->reply) && (!r->output || !*r->output))
		return;
	sl_buf_adds(out, "<tr><td></td><td colspan=\"7\"><details><summary>message and "
		    "observation</summary>\n<pre class=\"reply\">");
	sl_report_add_xml(out, r->reply);
	sl_buf_adds(out, "</pre>\n<pre class=\"log\">");
	sl_report_add_xml(out, r->output);
	sl_buf_adds(out, "</pre></details></td></tr>\n");
}

int sl_report_html_steps(sl_buf *out, sl_store *st, int64_t target_id, int64_t n, sl_err *err)
{
	sl_step_rec *v = NULL;
	size_t nv = 0;
	int ret;

	if ((ret = sl_step_list(st, target_id, n, &v, &nv, err)) || !nv)
		goto done;
	sl_buf_addf(out, "<details class=\"steps\"><summary>session: %zu step%s</summary>\n"
		    "<table><tr><th>step</th><th>kind</th><th>command</th><th>exit</th>"
		    "<th>model</th><th>command</th><th>tokens</th><th>output bytes</th></tr>\n",
		    nv, nv == 1 ? "" : "s");
	for (size_t i = 0; i < nv; i++)
		step_html(out, &v[i]);
	sl_buf_adds(out, "</table></details>\n");
done:
	sl_step_list_free(v, nv);
	return ret;
}

int sl_report_steps(sl_buf *out, sl_store *st, int64_t candidate_id, int json, sl_err *err)
{
	sl_candidate_rec c;
	sl_step_rec *v = NULL;
	size_t n = 0;
	int ret;

	memset(&c, 0, sizeof(c));
	if ((ret = sl_store_candidate_get(st, candidate_id, &c, err)))
		return ret;
	if (!(ret = sl_step_list(st, c.target_id, 0, &v, &n, err))) {
		if (json)
			steps_json(out, candidate_id, v, n);
		else
			steps_text(out, v, n);
	}
	sl_step_list_free(v, n);
	sl_candidate_rec_release(&c);
	return ret;
}
