/*
 * syntax.h - does a change add syntax errors?  (the "syntax" gate)
 *
 * Parses the old and the new text of a file with the language's tree-sitter
 * grammar and counts ERROR and MISSING nodes (an ERROR node counts once,
 * whatever it contains); for Python also indentation problems, which the
 * grammar's error recovery accepts without an ERROR node (an empty block,
 * statements of one block at different columns).  A change passes when the new text has no more of
 * them than the old: code that was already broken in the base stays
 * editable, and a candidate is rejected before any build is spent on it.
 * Reads only the texts (or, for a commit, the object database); writes only
 * the report.
 *
 * Report lines (appended, one per problem of the new text, at most 10 per
 * file, only when the check fails), 1-based line:column:
 *     PATH:12:5: syntax error near 'foo(,'
 *     PATH:14:1: missing '}'
 * preceded by a summary line:
 *     PATH: the change adds syntax errors (base 0, candidate 2)
 *
 * sl_syntax_check_commit() is declared in validators/validators.h.
 */
#ifndef SL_SYNTAX_H
#define SL_SYNTAX_H

#include <stddef.h>
#include <git2.h>

#include "common/buf.h"
#include "common/err.h"
#include "validators/validators.h"

#endif
