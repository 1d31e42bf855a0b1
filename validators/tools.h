/*
 * tools.h - the programs a gate command runs, as the jail finds them: what
 * the environment digest of warm bases, shared baselines and cached
 * verdicts holds instead of the state of whole folders (README, "Warm
 * base").
 *
 * A program is named by the first word of each simple command of the gate's
 * command (split at `|`, `||`, `&&`, `;`, `&`, newlines and parentheses;
 * variable assignments, `!`, `if`, `then`, `do`, `exec`, `env`, `time` ...
 * before it skipped), resolved on the jail's PATH.  Words the shell
 * resolves itself (builtins), that it expands (`$`, globs) and relative
 * paths (the repository's own scripts, covered by the base commit) name
 * none.  Each becomes one line
 *
 *     tool WORD PATH REALPATH SIZE MTIME      (found)
 *     tool WORD -                             (not found)
 *
 * so that a changed program (an upgrade rewrites it) changes the line, and
 * installing anything else changes none.
 */
#ifndef SL_TOOLS_H
#define SL_TOOLS_H

#include "common/buf.h"
#include "common/util.h"

/* Add the program words of command to words (each once). */
void sl_tools_of_command(sl_strvec *words, const char *command);
/* Append the line of each word of words (sorted in place) to out. */
void sl_tools_describe(sl_buf *out, sl_strvec *words);

#endif
