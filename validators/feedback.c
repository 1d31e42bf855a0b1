/*
 * feedback.c - trim a failed gate's output to what the model can act on.
 *
 * Builds the text in a scratch buffer, section by section, each section
 * stopping at the space left, then appends it to the caller's buffer.
 */
#include <string.h>

#include "validators/feedback.h"
#include "validators/findings.h"
#include "common/util.h"

/* Append the lines of text that fit in the space left (cap - out->len). */
static void add_capped(sl_buf *out, const char *text, size_t cap)
{
	while (*text && out->len < cap) {
		const char *nl = strchr(text, '\n');
		size_t l = nl ? (size_t)(nl - text) + 1 : strlen(text);

		if (out->len + l > cap)
			break;
		sl_buf_add(out, text, l);
		text += l;
	}
}

static void add_findings(sl_buf *out, const char *title, const sl_findings *f, size_t cap)
{
	sl_buf t = SL_BUF_INIT;

	if (!f->n || out->len + strlen(title) + 2 >= cap)
		return;
	sl_buf_addf(out, "%s\n", title);
	sl_findings_text(f, &t, cap - out->len > 200 ? cap - out->len - 100 : 100);
	add_capped(out, t.buf, cap);
	sl_buf_release(&t);
}

/* The last lines of the output that fit, starting at a line start. */
static void add_tail(sl_buf *out, const char *output, size_t cap)
{
	size_t len = strlen(output), room;
	const char *start;

	if (out->len + 40 >= cap)
		return;
	room = cap - out->len - 40;
	start = len > room ? output + len - room : output;
	if (start > output) {
		const char *nl = strchr(start, '\n');

		start = nl ? nl + 1 : output + len;
	}
	sl_buf_adds(out, "last lines of the output:\n");
	add_capped(out, start, cap);
	if (out->len && out->buf[out->len - 1] != '\n' && out->len < cap)
		sl_buf_addch(out, '\n');
}

void sl_feedback_build(sl_buf *out, const char *gate, const char *verdict, const char *output,
		       const sl_changed *changed, const sl_tests *tests_or_null)
{
	sl_findings all, near, other;
	sl_buf fb = SL_BUF_INIT;
	const size_t cap = SL_FEEDBACK_CAP;
	int failing_tests = 0;

	sl_findings_init(&all);
	sl_findings_init(&near);
	sl_findings_init(&other);
	if (!output)
		output = "";
	sl_buf_addf(&fb, "gate '%.100s': %.20s\n", gate ? gate : "?", verdict ? verdict : "fail");
	sl_findings_parse_gcc(&all, output, strlen(output));
	for (size_t i = 0; i < all.n; i++) {
		const sl_finding *x = &all.v[i];

		if (x->level < SL_LEVEL_WARNING)
			continue;
		if (changed && x->line && sl_changed_near(changed, x->file, x->line, SL_FEEDBACK_RADIUS))
			sl_findings_add_copy(&near, x);
		else if (x->level == SL_LEVEL_ERROR || !changed)
			sl_findings_add_copy(&other, x);
	}
	add_findings(&fb, changed ? "diagnostics on or near your edits:" : "diagnostics:", &near, cap);
	add_findings(&fb, near.n ? "other errors:" : (changed ? "errors elsewhere:" : "diagnostics:"),
		     &other, cap);
	if (tests_or_null) {
		for (size_t i = 0; i < tests_or_null->n; i++)
			failing_tests += sl_test_failed(tests_or_null->v[i].result);
		if (failing_tests || tests_or_null->bailed_out) {
			sl_buf t = SL_BUF_INIT;

			if (fb.len + 200 < cap) {
				sl_tests_summary(tests_or_null, &t, cap - fb.len - 100);
				add_capped(&fb, t.buf, cap);
			}
			sl_buf_release(&t);
		}
	}
	if (!near.n && !other.n && !failing_tests && !(tests_or_null && tests_or_null->bailed_out))
		add_tail(&fb, output, cap);
	sl_buf_add(out, fb.buf, fb.len);
	sl_buf_release(&fb);
	sl_findings_release(&all);
	sl_findings_release(&near);
	sl_findings_release(&other);
}
