/*
 * prefilter.h - scoping's internal literal prefilter.
 *
 * From a compiled query, derive strings that must occur in a file's bytes
 * for any match to survive the predicates, so a file lacking them is never
 * parsed.  Per pattern the requirements are a conjunction; each requirement
 * is a disjunction of strings:
 *     (#eq? @c "s") (#any-eq? @c "s")        "s"
 *     (#any-of? @c "a" "b")                  "a" or "b"
 *     (#match? @c "re") (#any-match? ...)    the longest literal run every
 *                                            match of re must contain, or
 *                                            for "a|b" and "^(a|b)$", each
 *                                            branch's: any one of them
 * and only when @c is always present in a match of the pattern (capture
 * quantifier one or one-or-more): an absent capture passes a predicate.
 * Negated forms, capture-to-capture comparisons, other regexes with '|'
 * and empty strings give nothing.  A file passes if some pattern has all its
 * requirements met; a query with a pattern without requirements gets no
 * filter at all (sl_prefilter_new returns NULL, which passes everything).
 * The filter is conservative: it may keep a file that cannot match, never
 * the reverse.
 *
 * sl_prefilter_new_ex adds keywords from the query's source and a table of
 * the language (sl_lang_keyword_nodes): a pattern that needs a node of a
 * type the table names (for_statement), or the quoted keyword itself
 * ("for"), outside '?' and '*', needs that keyword as a word: an
 * occurrence not glued to a longer identifier (C-family lexing; in doubt
 * the file is kept).  Alternations require only what every branch does;
 * MISSING nodes and predicates give none.  It also adds separators from
 * the language's '('-delimited lists (argument_list): a list node with k
 * children that each match a named node with text ((_), (identifier);
 * not '?', '*', MISSING, ERROR, groups, alternations or quoted nodes)
 * needs k - 1 separators inside one '(' group, a ',' or a comment, since
 * comments are named extras a child pattern can match.  Separators are
 * only counted in text whose comments and literals are blanked
 * (sl_prefilter_pass_code): sl_prefilter_pass does not judge them.
 */
#ifndef SL_SCOPING_PREFILTER_H
#define SL_SCOPING_PREFILTER_H

#include <stddef.h>
#include <tree_sitter/api.h>

#include "common/util.h"

typedef struct sl_prefilter sl_prefilter;

/* A filter for q, or NULL when the query offers no literal to require. */
sl_prefilter *sl_prefilter_new(const TSQuery *q);
/*
 * The same with the keywords the patterns of src (the source of q, len
 * bytes) imply by the pairs of keyword_nodes (NULL: none), and the
 * separators the list types of list_nodes (NULL-terminated; NULL: none)
 * imply.
 */
sl_prefilter *sl_prefilter_new_ex(const TSQuery *q, const char *src, size_t len,
				  const char *const *keyword_nodes, const char *const *list_nodes);
/*
 * 1 if no pattern of q (source src, len bytes) can match a node of one of
 * the NULL-terminated types holders (the root's, and the other types that
 * hold top-level items), or span two siblings: every match then lies
 * inside one top-level item, and a filter may judge the items of a file
 * one by one (sl_items_split).  0 when in doubt.  In holders, "*_x"
 * stands for every type ending in "_x", "x_*" for every one beginning
 * with "x_", and "\"" for every quoted anonymous node: with the types
 * that hold statements, every match lies inside one statement
 * (SL_ITEMS_STATEMENTS).
 */
int sl_prefilter_below_root(const TSQuery *q, const char *src, size_t len,
			    const char *const *holders);
/*
 * 1 if every pattern of q (source src, len bytes) is (function_definition
 * body: (compound_statement X)), perhaps in a group with predicates, with
 * no capture, field or anchor of the two outer nodes, and X one node as
 * sl_prefilter_below_root reads the top level with the types holders
 * (which X may not be): each match is then one statement directly in a
 * function's body, and a filter may judge those statements one by one
 * (SL_ITEMS_BODY), since the outer nodes need no keyword; 2 when besides
 * no X has a child or field pattern (SL_ITEMS_BODY_LEAF).  0 when in doubt.
 */
int sl_prefilter_body_child(const TSQuery *q, const char *src, size_t len,
			    const char *const *holders);
/* 1 if the text may hold a match (always 1 for a NULL filter). */
int sl_prefilter_pass(const sl_prefilter *f, const char *text, size_t len);
/*
 * The same, with code (len bytes) the text whose comments and literals are
 * blanked (sl_items_split): keywords and separators are looked for there,
 * where only tokens are left, and the other literals in text.
 */
int sl_prefilter_pass_code(const sl_prefilter *f, const char *text, const char *code, size_t len);
/* Number of distinct literal strings (keywords too) the filter looks for. */
size_t sl_prefilter_count(const sl_prefilter *f);
void sl_prefilter_free(sl_prefilter *f);

/*
 * The longest literal every match of the POSIX extended regex re must
 * contain, written to out (cap bytes with its NUL); "" when there is none.
 */
void sl_regex_literal(const char *re, char *out, size_t cap);

/*
 * The branches of an alternation that makes up all of re ("a|b",
 * "^(a|bc+)$"): each branch's longest literal (sl_regex_literal) pushed to
 * out (cleared first).  Returns how many, or 0 (out empty) when re is no
 * such alternation or some branch has no literal.
 */
size_t sl_regex_alternatives(const char *re, sl_strvec *out);

#endif
