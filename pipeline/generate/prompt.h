/*
 * prompt.h - the messages a model sees.
 *
 * A prompt template is text with {{name}} variables (blanks inside the
 * braces are allowed: {{ path }}):
 *   {{path}}          the target file, repository-relative
 *   {{language}}      its language name ("c", "python")
 *   {{unit}}          the text of the region to change
 *   {{start_line}} {{end_line}}  the region's 1-based line range
 *   {{file}}          the file's text (the whole file, or an excerpt the
 *                     caller chose for a large file)
 *   {{instructions}}  the campaign's instructions
 *   {{edit_format}}   "unified diff" or "SEARCH/REPLACE block"
 *   {{finding}}       fix campaigns: the findings inside the unit, one
 *                     "FILE:LINE:COL: LEVEL: MESSAGE [RULE]" line each with
 *                     its related locations (notes) under it
 * A NULL string variable renders as "".  There is no escape for a literal
 * "{{": templates needing one are not supported.
 *
 * The system message comes from the edit format and says exactly how to
 * answer.  Feedback from a failed gate goes in a follow-up user message
 * (validators/feedback.h builds it; pipeline/run/ adds it to the conversation).
 */
#ifndef SL_PROMPT_H
#define SL_PROMPT_H

#include "common/buf.h"
#include "common/err.h"

typedef struct sl_prompt_vars {
	const char *path, *language, *unit, *file, *instructions;
	const char *context, *feedback;  /* may be NULL: rendered as "" */
	const char *finding;        /* kind fix: the target's findings; may be NULL */
	unsigned start_line, end_line;
	enum sl_edit_format edit_format;
} sl_prompt_vars;

/*
 * The template used when the spec gives none: the unit, then {{context}}
 * (its enclosing function, the includes, the definitions it uses; built
 * without the unit, SL_CONTEXT_NO_UNIT), no {{file}}.
 */
extern const char sl_prompt_default_template[];
/* The one `context: file` selects: the whole file, the unit, then {{context}}. */
extern const char sl_prompt_file_template[];

/*
 * Render tmpl, appending to out.  SL_EINPUT "unknown prompt variable
 * '{{x}}'" or "unterminated '{{' ..."; out is then left as it was.
 */
int sl_prompt_render(sl_buf *out, const char *tmpl, const sl_prompt_vars *vars, sl_err *err);
/* Validate a template without rendering it (same errors). */
int sl_prompt_check(const char *tmpl, sl_err *err);
/* The system message for an edit format (static); NULL for an unknown format. */
const char *sl_prompt_system(enum sl_edit_format edit_format);
#endif
