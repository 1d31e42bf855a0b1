/*
 * reply_node.c - node replacement: the model answers with the whole new text
 * of the target unit, and sluice splices it into the unit's byte range.
 *
 * This is the format that fails least for unit-scoped targets: there are no
 * line numbers, counts or context lines to get wrong.  What can go wrong is
 * the wrapping (fences, prose, indentation of the first line, a trailing
 * newline), which is what this file normalises.  A reply without a fenced
 * block is a format error: prose must not replace the unit.
 */
#include <string.h>

#include "pipeline/generate/edit.h"
#include "common/util.h"

/* The body of the longest fenced block in text, or NULL when there is none. */
static const char *longest_fence(const char *text, size_t len, size_t *body_len)
{
	const char *best = NULL, *p = text, *end = text + len;
	size_t best_len = 0;

	while (p < end) {
		const char *line_end = memchr(p, '\n', (size_t)(end - p));
		const char *next = line_end ? line_end + 1 : end;

		if ((end - p >= 3 && (!strncmp(p, "```", 3) || !strncmp(p, "~~~", 3)))) {
			char fence = *p;
			const char *body = next, *q = next;

			/* find the closing fence */
			while (q < end) {
				const char *qe = memchr(q, '\n', (size_t)(end - q));
				const char *qn = qe ? qe + 1 : end;
				const char *t = q;

				while (t < qn && (*t == ' ' || *t == '\t'))
					t++;
				if (qn - t >= 3 && t[0] == fence && t[1] == fence && t[2] == fence)
					break;
				q = qn;
			}
			if ((size_t)(q - body) > best_len || !best) {
				best = body;
				best_len = (size_t)(q - body);
			}
			if (q >= end)
				break;
			p = memchr(q, '\n', (size_t)(end - q));
			p = p ? p + 1 : end;
			continue;
		}
		p = next;
	}
	*body_len = best_len;
	return best;
}

int sl_reply_parse_node(sl_edit_list *out, const char *reply, size_t len, const char *path,
			uint32_t start, uint32_t end, const char *old_text, sl_err *err)
{
	sl_buf text = SL_BUF_INIT;
	size_t blen = 0, old_len = strlen(old_text);
	const char *body = longest_fence(reply, len, &blen);
	sl_edit *e;
	size_t lead = 0;

	/* prose (a refusal, an explanation) must not replace the unit */
	if (!body)
		return sl_err_set(err, SL_EINPUT, "the reply has no fenced code block: answer with "
				  "the complete new text of the unit in one fenced code block");
	for (size_t i = 0; i < blen; i++)
		if (body[i] != '\r' || i + 1 >= blen || body[i + 1] != '\n')
			sl_buf_addch(&text, body[i]);
	/* the unit starts mid-line: its first line carries no indentation */
	while (lead < text.len && (text.buf[lead] == ' ' || text.buf[lead] == '\t'))
		lead++;
	if (!(old_len && (old_text[0] == ' ' || old_text[0] == '\t')) && lead) {
		memmove(text.buf, text.buf + lead, text.len - lead + 1);
		text.len -= lead;
	}
	if (text.len && text.buf[text.len - 1] == '\n' &&
	    !(old_len && old_text[old_len - 1] == '\n'))
		sl_buf_setlen(&text, text.len - 1);
	if (!text.len || strspn(text.buf, " \t\n") == text.len) {
		sl_buf_release(&text);
		return sl_err_set(err, SL_EINPUT, "the reply holds no code: answer with the complete "
				  "new text of the unit in one fenced code block");
	}
	if (end < start || end - start != old_len) {
		sl_buf_release(&text);
		return sl_err_set(err, SL_ERROR, "node range %u-%u does not fit its text", start, end);
	}
	e = sl_edit_list_add(out, SL_EDIT_SPLICE, path, old_text, text.buf);
	e->start = start;
	e->end = end;
	sl_buf_release(&text);
	return SL_OK;
}
