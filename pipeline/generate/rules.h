/*
 * rules.h - deterministic rewrites: the first source of edits.
 *
 * A rule names a capture of the campaign's query and a template.  For every
 * site of a target whose match has that capture, the capture's bytes are
 * replaced by the template with each ${name} substituted by the text of the
 * match's capture `name` ("$$" is a literal '$'; a '$' before anything but
 * '{' or '$' is literal too).  A quantified capture that occurs several
 * times in a match stands for its first occurrence in ${name}.  ${...name}
 * (a sequence capture) stands for the rest of the list the capture starts:
 * the source text from its (first) node to the end of the last named
 * sibling after it, separators and all.  With `(argument_list . (_) @buf
 * . (_) @rest)` it is every argument after the first, "fmt, a, b"; in a
 * statement list, the statements from the capture to the block's end.
 * (Quantifiers need not be written: tree-sitter 0.20 reports `(_)+` as its
 * shortest match.)  When the unit's text cannot be parsed it is the span
 * of the capture's occurrences.  ${...name} of a capture the match lacks
 * (a `*` that matched nothing) is empty; a template whose ${name} names a
 * capture the match lacks makes the rule not apply to that site.
 *
 * A rule may carry conditions (`where:`), each on one capture; all must
 * hold for the rule to apply to a site, and a condition on a capture the
 * match lacks does not hold:
 *     match / not_match       a POSIX extended regex on the capture's text
 *     has / has_not           a tree-sitter query that matches (does not
 *                             match) inside the capture's node
 *     declared / not_declared a tree-sitter query that matches (does not
 *                             match) the declarator that declares the
 *                             capture's name in the target's unit: in C,
 *                             `buf[64]` of `char buf[64];` or `*p` of a
 *                             parameter `char *p`; with no declaration in
 *                             the unit (the unit is the call itself, say)
 *                             neither holds
 * The queries' predicates (#eq?, #match?...) are applied.
 *
 * A rule may be a Coccinelle semantic patch instead (cocci: the file; no
 * capture, no template; C and C++): spatch rewrites the target's unit in
 * the jail (rules_cocci.c), and each stretch it changed is an edit.  These
 * rules run first, in order, once per target; the sites their changes
 * touch are theirs, and the template rules are tried on the others.
 *
 * Order: per site, the rules are tried in the campaign's order and the
 * first that applies (its capture is in the match, every ${name} of its
 * template is bound, its conditions hold) rewrites it; later rules are not
 * tried on that site, even when the first one's rewrite changes nothing.
 */
#ifndef SL_RULES_H
#define SL_RULES_H

#include "pipeline/generate/edit.h"
#include "common/err.h"
#include "common/util.h"
#include "scoping/scope.h"

enum sl_rule_cond_kind { SL_COND_MATCH = 0, SL_COND_HAS, SL_COND_DECLARED };

/* One condition of a rule; strings borrowed from whoever built the rule. */
typedef struct sl_rule_cond {
	const char *capture;
	enum sl_rule_cond_kind kind;
	int negate;                 /* not_match, has_not, not_declared */
	const char *text;           /* the regex or the query */
} sl_rule_cond;

typedef struct sl_rule {
	const char *capture;        /* NULL for a cocci rule */
	const char *template_text;  /* NULL for a cocci rule */
	const char *cocci;          /* a Coccinelle semantic patch (a file), or NULL */
	const sl_rule_cond *where;  /* borrowed; nwhere entries, all must hold */
	size_t nwhere;
} sl_rule;

/* What became of one site of a target (sl_rules_apply_ext). */
typedef struct sl_rule_site {
	int rule;                   /* index of the rule that applies, -1: none (the model's) */
	long edit;                  /* index of its edit in the list, -1: none (no change,
				       or it overlaps a site rewritten before) */
} sl_rule_site;

/*
 * Append one SL_EDIT_SPLICE per site a rule rewrites (first applying rule
 * wins per site, see above): path from the target, start/end the capture's
 * bytes, old_text the capture's text, new_text the rendered template.  A
 * rewrite that changes nothing, or whose capture overlaps one already
 * rewritten by this call (nested sites), adds no edit.  t->lang names the
 * grammar of the conditions' queries.  Returns the number of edits added
 * (0: no rule applies), or a negative SL_E* code (a bad template, regex or
 * query).
 */
int sl_rules_apply(sl_edit_list *out, const sl_rule *rules, size_t nrules,
		   const sl_target *t, sl_err *err);
/* The same; sites (t->nsites entries, or NULL) gets what became of each site. */
int sl_rules_apply_ext(sl_edit_list *out, const sl_rule *rules, size_t nrules,
		       const sl_target *t, sl_rule_site *sites, sl_err *err);

/* Check a template's syntax (unterminated ${...}); SL_EINPUT on error. */
int sl_rules_check_template(const char *template_text, sl_err *err);

/*
 * Check one rule against the campaign's language and query: its template,
 * every capture it names (the one it rewrites, ${...}, where:) defined by
 * the query, each regex and query of its conditions compiling.  SL_EINPUT
 * with a message (not positioned).
 */
int sl_rule_check(const sl_rule *r, const char *language, const char *query, sl_err *err);

/*
 * The captures a rule needs bound to apply, into names (appended, each
 * once): the one it rewrites, each ${name} and each capture of a condition;
 * not ${...name}, which may be empty.  The campaign loader reads it to
 * warn of rules that can never apply.
 */
void sl_rule_needs(sl_strvec *names, const sl_rule *r);

/* One stretch of text that differs: old bytes [ob, oe) became new bytes [nb, ne). */
typedef struct sl_text_change {
	uint32_t ob, oe, nb, ne;
} sl_text_change;

/*
 * rules_cocci.c: the stretches where now differs from old, in order: the
 * line diff's hunks (no context), each narrowed to the bytes that differ
 * (their common prefix and suffix dropped).  *out is the caller's to free.
 */
int sl_text_changes(sl_text_change **out, size_t *n, const char *old, size_t oldlen,
		    const char *now, size_t nowlen, sl_err *err);
/*
 * rules_cocci.c: run r's semantic patch on t's unit in the jail and append
 * one splice per stretch it changed.  Returns the number of edits (0: no
 * change, or no unit text), or a negative SL_E* (SL_EINPUT: spatch failed,
 * its output in the message).
 */
int sl_rules_cocci(sl_edit_list *out, const sl_rule *r, const sl_target *t, sl_err *err);

/* rules_where.c: 1 if every condition of r holds at site s of t, 0 if not; <0 an error. */
struct sl_where_ctx;
int sl_rule_where_holds(struct sl_where_ctx **ctx, const sl_rule *r, const sl_target *t,
			const sl_site *s, sl_err *err);
/*
 * The end (a byte offset in the file) of the rest of the list whose
 * element spans [start, end) in t's unit: 1 and *out, or 0 when the unit
 * does not parse or no node spans exactly that range.
 */
int sl_where_rest_end(struct sl_where_ctx **ctx, const sl_target *t, uint32_t start,
		      uint32_t end, uint32_t *out);
/* Free what sl_rule_where_holds kept for the target (the unit's tree); NULL is a no-op. */
void sl_where_ctx_free(struct sl_where_ctx *ctx);
/* Check a condition's regex or query (SL_EINPUT with a message). */
int sl_rule_cond_check(const sl_rule_cond *c, const char *language, sl_err *err);

#endif
