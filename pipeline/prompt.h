/*
 * prompt.h - the messages a model sees.
 *
 * A prompt template is text with {{name}} variables:
 *   {{path}} {{language}} {{unit}} {{start_line}} {{end_line}} {{file}}
 *   {{instructions}} {{edit_format}}
 * The system message comes from the edit format and says exactly how to
 * answer.  Feedback from a failed gate goes in a follow-up user message
 * built by sl_prompt_feedback().
 */
#ifndef SL_PROMPT_H
#define SL_PROMPT_H

#include "buf.h"
#include "err.h"

typedef struct sl_prompt_vars {
	const char *path, *language, *unit, *file, *instructions;
	unsigned start_line, end_line;
	int edit_format;            /* enum sl_edit_format */
} sl_prompt_vars;

/* The template used when the spec gives none. */
extern const char sl_prompt_default_template[];

/* Render tmpl into out; SL_EINPUT naming an unknown {{variable}}. */
int sl_prompt_render(sl_buf *out, const char *tmpl, const sl_prompt_vars *vars, sl_err *err);
/* Validate a template without rendering it. */
int sl_prompt_check(const char *tmpl, sl_err *err);
/* The system message for an edit format (static). */
const char *sl_prompt_system(int edit_format);
/*
 * The follow-up message after a failed attempt: which gate failed (or why
 * the edit could not be applied) and the tail of its output.
 */
void sl_prompt_feedback(sl_buf *out, const char *gate, const char *verdict,
			const char *output_tail);

#endif
