/*
 * findings_json.c - gcc's -fdiagnostics-format=json output as findings
 * (findings.h, format "gcc-json").
 *
 * gcc writes one JSON array per compiler run, so a build's output holds
 * several, mixed with make's own lines.  Each array element with "kind"
 * warning or error becomes a finding: "message", "option" as its rule,
 * locations[0].caret (file, line, column); its "children" (notes) and the
 * events of an -fanalyzer "path" become its notes, one "FILE:LINE: note:
 * TEXT" line each, as the gcc text parser writes them.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "validators/diff_lines.h"
#include "validators/findings.h"
#include "common/util.h"
#include "common/caps.h"

static const char *jtext(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static unsigned jline(json_t *loc, const char *key)
{
	json_t *v = json_object_get(loc, key);

	return json_is_integer(v) && json_integer_value(v) > 0 &&
		json_integer_value(v) < 100000000 ? (unsigned)json_integer_value(v) : 0;
}

static void add_note(sl_buf *notes, json_t *loc, const char *text, size_t *n)
{
	const char *file = jtext(loc, "file");
	char *path;

	if (!file || !text || ++*n > SL_CAP_FINDING_JSON_NOTES)
		return;
	path = sl_report_path(file);
	sl_buf_addf(notes, "%s%s:%u: note: %s", notes->len ? "\n" : "", path,
		    jline(loc, "line"), text);
	free(path);
}

static void one(sl_findings *out, json_t *d)
{
	const char *kind = jtext(d, "kind"), *msg = jtext(d, "message");
	json_t *loc = json_object_get(json_array_get(json_object_get(d, "locations"), 0), "caret");
	json_t *kids = json_object_get(d, "children"), *path = json_object_get(d, "path"), *e;
	sl_buf notes = SL_BUF_INIT;
	sl_finding f = { 0 };
	size_t i, n = 0;
	int level;

	if (!kind || !msg || !json_is_object(loc) || !jtext(loc, "file"))
		return;
	level = !strcmp(kind, "error") || !strcmp(kind, "fatal error") ? SL_LEVEL_ERROR :
		!strcmp(kind, "warning") ? SL_LEVEL_WARNING : 0;
	if (!level)
		return;
	json_array_foreach(kids, i, e)
		add_note(&notes, json_object_get(json_array_get(json_object_get(e, "locations"), 0),
						 "caret"), jtext(e, "message"), &n);
	json_array_foreach(path, i, e)
		add_note(&notes, json_object_get(e, "location"), jtext(e, "description"), &n);
	f.file = sl_report_path(jtext(loc, "file"));
	f.line = jline(loc, "line");
	f.col = jline(loc, "column");
	f.level = level;
	f.rule = (char *)(jtext(d, "option") ? jtext(d, "option") : "");
	f.message = (char *)msg;
	f.notes = notes.len ? notes.buf : NULL;
	sl_findings_add_copy(out, &f);
	free(f.file);
	sl_buf_release(&notes);
}

void sl_findings_parse_gcc_json(sl_findings *out, const char *text, size_t len)
{
	size_t off = 0;

	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t end = nl ? (size_t)(nl - text) + 1 : len;
		json_error_t je;
		json_t *arr;
		size_t i;
		json_t *d;

		if (text[off] != '[') {
			off = end;
			continue;
		}
		arr = json_loadb(text + off, len - off, JSON_DISABLE_EOF_CHECK, &je);
		if (!json_is_array(arr)) {
			json_decref(arr);
			off = end;
			continue;
		}
		json_array_foreach(arr, i, d)
			one(out, d);
		json_decref(arr);
		off += je.position > 0 ? (size_t)je.position : end - off;
	}
}
