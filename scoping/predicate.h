/*
 * predicate.h - scoping's internal evaluator of tree-sitter query predicates.
 *
 * The tree-sitter C library parses predicates but never applies them:
 * ts_query_cursor_next_match returns every raw match.  This module compiles
 * the predicates of every pattern of a query once (regexes included) and
 * then says, for one match and the source it was found in, whether the match
 * survives.
 *
 * Supported (a capture is @name, a string is "text" or a bare word):
 *     (#eq? @a "s")  (#eq? @a @b)  (#not-eq? ...)
 *     (#any-eq? ...) (#any-not-eq? ...)        any node of a quantified capture
 *     (#match? @a "re")  (#not-match? ...)  (#any-match? ...) (#any-not-match? ...)
 *     (#any-of? @a "s1" "s2" ...)  (#not-any-of? ...)
 *     (#set! ...)                              a directive: accepted and ignored
 * Regexes are POSIX extended, unanchored (use ^ and $); remember that query
 * strings unescape backslashes, so write "\\d" for \d.
 *
 * A capture that appears several times in a match (a quantified capture)
 * passes a string predicate only if every node passes (the any- forms: if one
 * node does); a capture absent from the match passes (any- forms: fails).
 * Capture-to-capture comparisons use the first node of each.
 *
 * Calling sequence:
 *     sl_preds_compile(&p, query, src, src_len, &off, err)
 *     for each match: if (sl_preds_eval(p, &match, text, text_len)) keep it
 *     sl_preds_free(p)
 * The compiled set borrows strings from the TSQuery: free it first.
 */
#ifndef SL_SCOPING_PREDICATE_H
#define SL_SCOPING_PREDICATE_H

#include <stddef.h>
#include <stdint.h>
#include <tree_sitter/api.h>

#include "common/err.h"

typedef struct sl_preds sl_preds;

/*
 * Compile the predicates of every pattern of q.  src is the query's source
 * text, used for error positions.  On a malformed or unknown predicate or a
 * bad regex returns SL_EINPUT, and *offset_out (if not NULL) is the byte
 * offset of the predicate's name (its '#') in src.
 */
int sl_preds_compile(sl_preds **out, const TSQuery *q, const char *src, size_t src_len,
		     uint32_t *offset_out, sl_err *err);

/* 1 if the match passes every predicate of its pattern, else 0. */
int sl_preds_eval(const sl_preds *p, const TSQueryMatch *m, const char *text, size_t len);

void sl_preds_free(sl_preds *p);

/* Describe a byte offset of src as "line:col" (1-based) into out. */
void sl_query_pos(const char *src, size_t src_len, uint32_t offset, char out[32]);

#endif
