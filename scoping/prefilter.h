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
 *                                            match of re must contain
 * and only when @c is always present in a match of the pattern (capture
 * quantifier one or one-or-more): an absent capture passes a predicate.
 * Negated forms, capture-to-capture comparisons, regexes with '|' and empty
 * strings give nothing.  A file passes if some pattern has all its
 * requirements met; a query with a pattern without requirements gets no
 * filter at all (sl_prefilter_new returns NULL, which passes everything).
 * The filter is conservative: it may keep a file that cannot match, never
 * the reverse.
 */
#ifndef SL_SCOPING_PREFILTER_H
#define SL_SCOPING_PREFILTER_H

#include <stddef.h>
#include <tree_sitter/api.h>

typedef struct sl_prefilter sl_prefilter;

/* A filter for q, or NULL when the query offers no literal to require. */
sl_prefilter *sl_prefilter_new(const TSQuery *q);
/* 1 if the text may hold a match (always 1 for a NULL filter). */
int sl_prefilter_pass(const sl_prefilter *f, const char *text, size_t len);
/* Number of distinct literal strings the filter looks for. */
size_t sl_prefilter_count(const sl_prefilter *f);
void sl_prefilter_free(sl_prefilter *f);

/*
 * The longest literal every match of the POSIX extended regex re must
 * contain, written to out (cap bytes with its NUL); "" when there is none.
 */
void sl_regex_literal(const char *re, char *out, size_t cap);

#endif
