/*
 * rules.h - deterministic rewrites: the first source of edits.
 *
 * A rule names a capture of the campaign's query and a template.  For every
 * site of a target whose match has that capture, the capture's bytes are
 * replaced by the template with each ${name} substituted by the text of the
 * match's capture `name` ("$$" is a literal '$').  A template that names a
 * capture the match does not have makes the rule not apply to that site.
 */
#ifndef SL_RULES_H
#define SL_RULES_H

#include "edit.h"
#include "err.h"
#include "scope.h"

typedef struct sl_rule {
	const char *capture;
	const char *template_text;
} sl_rule;

/*
 * Append one SL_EDIT_SPLICE per site a rule rewrites (first matching rule
 * wins per site).  Returns the number of edits added (0: no rule applies),
 * or a negative SL_E* code.
 */
int sl_rules_apply(sl_edit_list *out, const sl_rule *rules, size_t nrules,
		   const sl_target *t, sl_err *err);

/* Check a template's syntax (unterminated ${...}); SL_EINPUT on error. */
int sl_rules_check_template(const char *template_text, sl_err *err);

#endif
