/*
 * context.h - what a prompt carries about a target, ranked and cut to a
 * token budget.
 *
 * Sections, in rank order:
 *   1. the unit itself (always; cut at a line boundary if it alone is over
 *      the budget);
 *   2. for a unit inside a function (a call, a statement), that function
 *      whole, or when it does not fit, its head and the declarations at the
 *      top of its body;
 *   3. the file's imports / includes (top-level import nodes of the
 *      language, outside functions and classes);
 *   4. definitions of the identifiers the unit references (every node type
 *      ending in "identifier": variables, functions, types, fields), in the
 *      order of first reference: first those in the same file, then those
 *      found in other files of the same language through a symbol index
 *      built with tree-sitter (function / type / class / macro / variable
 *      definitions by name).  The index is built on demand: only files whose
 *      bytes contain one of the wanted names are parsed, at most
 *      SL_CONTEXT_MAX_FILES of them; files in the unit's directory rank
 *      before the rest, then by path.  A function is shown by its
 *      signature (the text before its body, then ";" or " ..."), and a
 *      definition with the same name and text as one shown before (a
 *      prototype and the function's signature) is left out.
 * A section that would overrun the budget is left out and the next ones are
 * still tried, so a huge definition does not hide small ones after it.
 *
 * Token estimate: ceil(bytes / 4) of the section's text, headers included
 * (sl_context_tokens); it over-counts code a little for most tokenizers.
 *
 * Output text: each section starts with a header line
 *     "### unit PATH:L1-L2 (UNIT)" / "### enclosing function PATH:L1-L2" /
 *     "### imports of PATH" /
 *     "### definition of NAME (PATH:LINE)"
 * and ends with a newline.
 */
#ifndef SL_CONTEXT_H
#define SL_CONTEXT_H

#include <git2.h>

#include "common/buf.h"
#include "common/err.h"
#include "scoping/scope.h"
#include "common/caps.h"

/* The token estimate of len bytes. */
unsigned sl_context_tokens(size_t len);

/* Flags of sl_context_build: leave the unit out (a prompt that shows it apart). */
#define SL_CONTEXT_NO_UNIT 1u

/*
 * Append the context of target t (scoped from `commit` of repo) to out,
 * using at most budget_tokens by the estimate above (0 = unlimited).
 * Errors: SL_ENOTFOUND (path not in the commit), SL_EINPUT (language),
 * SL_ERROR (libgit2).
 */
int sl_context_build(sl_buf *out, git_repository *repo, const git_oid *commit,
		     const sl_target *t, unsigned budget_tokens, unsigned flags, sl_err *err);

#endif
