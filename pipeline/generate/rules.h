/*
 * rules.h - deterministic rewrites: the first source of edits.
 *
 * A rule names a capture of the campaign's query and a template.  For every
 * site of a target whose match has that capture, the capture's bytes are
 * replaced by the template with each ${name} substituted by the text of the
 * match's capture `name` ("$$" is a literal '$'; a '$' before anything but
 * '{' or '$' is literal too).  A quantified capture that occurs several
 * times in a match stands for its first occurrence.  A template that names
 * a capture the match does not have makes the rule not apply to that site.
 */
#ifndef SL_RULES_H
#define SL_RULES_H

#include "pipeline/generate/edit.h"
#include "common/err.h"
#include "scoping/scope.h"

typedef struct sl_rule {
	const char *capture;
	const char *template_text;
} sl_rule;

/*
 * Append one SL_EDIT_SPLICE per site a rule rewrites (first matching rule
 * wins per site): path from the target, start/end the capture's bytes,
 * old_text the capture's text, new_text the rendered template.  A rewrite
 * that changes nothing, or whose capture overlaps one already rewritten by
 * this call (nested sites), adds no edit.  Returns the number of edits
 * added (0: no rule applies), or a negative SL_E* code (a bad template).
 */
int sl_rules_apply(sl_edit_list *out, const sl_rule *rules, size_t nrules,
		   const sl_target *t, sl_err *err);

/* Check a template's syntax (unterminated ${...}); SL_EINPUT on error. */
int sl_rules_check_template(const char *template_text, sl_err *err);

#endif
