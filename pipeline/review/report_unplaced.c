/*
 * report_unplaced.c - a fix campaign's findings that no target holds
 * (storage/unplaced_store.h), each with its reason: the count line of
 * `sluice status`, the list of `status --json`, the section "Findings not
 * placed" of report.md and report.html.
 *
 * Reads the store; renders into the caller's buffer.  The file, rule and
 * message came from an analyzer: escaped for each destination.
 */
#include <stdlib.h>
#include <jansson.h>

#include "pipeline/review/report.h"
#include "storage/unplaced_store.h"

/* text with every control character (a newline too) shown as a space */
static void add_line_safe(sl_buf *out, const char *s)
{
	for (const char *p = s ? s : ""; *p; p++)
		sl_buf_addch(out, (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p);
}

int sl_report_unplaced(sl_buf *out, sl_store *st, int64_t campaign_id,
		       enum sl_unplaced_form form, sl_err *err)
{
	sl_unplaced_rec *u = NULL;
	size_t n = 0;
	json_t *a = NULL;
	char *text = NULL;
	int ret;

	if ((ret = sl_store_unplaced(st, campaign_id, &u, &n, err)))
		goto done;
	if (form == SL_UNPLACED_JSON || form == SL_UNPLACED_JSON_LINES) {
		a = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, json_pack("{s:s, s:I, s:s, s:s, s:s}", "file",
				u[i].file, "line", (json_int_t)u[i].line, "rule", u[i].rule,
				"message", u[i].message, "reason", u[i].reason));
		for (size_t i = 0; form == SL_UNPLACED_JSON_LINES && i < n; i++) {
			json_t *line = json_pack("{s:O}", "unplaced", json_array_get(a, i));
			char *one = json_dumps(line, JSON_COMPACT);

			if (one)
				sl_buf_addf(out, "%s\n", one);
			free(one);
			json_decref(line);
		}
		if (form == SL_UNPLACED_JSON && (text = json_dumps(a, JSON_COMPACT)))
			sl_buf_adds(out, text);
		goto done;
	}
	if (!n)
		goto done;
	if (form == SL_UNPLACED_TEXT) {
		sl_buf_addf(out, "findings not placed: %zu (sluice status --json lists them)\n", n);
		goto done;
	}
	if (form == SL_UNPLACED_MD)
		sl_buf_addf(out, "## Findings not placed (%zu)\n\n", n);
	else
		sl_buf_addf(out, "<h2>Findings not placed (%zu)</h2>\n<table><tr><th>finding"
			    "</th><th>rule</th><th>message</th><th>reason</th></tr>\n", n);
	for (size_t i = 0; i < n; i++) {
		if (form == SL_UNPLACED_MD) {
			sl_buf_adds(out, "- `");
			add_line_safe(out, u[i].file);
			sl_buf_addf(out, ":%lld`", (long long)u[i].line);
			if (*u[i].rule) {
				sl_buf_adds(out, " [");
				add_line_safe(out, u[i].rule);
				sl_buf_adds(out, "]");
			}
			sl_buf_adds(out, " ");
			add_line_safe(out, u[i].message);
			sl_buf_addf(out, ": %s\n", u[i].reason);
			continue;
		}
		sl_buf_adds(out, "<tr><td>");
		sl_report_add_xml(out, u[i].file);
		sl_buf_addf(out, ":%lld</td><td>", (long long)u[i].line);
		sl_report_add_xml(out, u[i].rule);
		sl_buf_adds(out, "</td><td>");
		sl_report_add_xml(out, u[i].message);
		sl_buf_adds(out, "</td><td>");
		sl_report_add_xml(out, u[i].reason);
		sl_buf_adds(out, "</td></tr>\n");
	}
	sl_buf_adds(out, form == SL_UNPLACED_MD ? "\n" : "</table>\n");
done:
	free(text);
	json_decref(a);
	sl_unplaced_list_free(u, n);
	return ret;
}
