/*
 * policy.h - the `policy` gate: judge a candidate by its diff alone.
 *
 * Runs before anything of the candidate runs (no jail, no worktree): the
 * diff stored for the candidate, as the gate runner parsed it once
 * (diff_lines.h), is checked against
 * the campaign's limits.  Rules, each reported by name:
 *   "path"        a touched file (new or old path) matches no allow_paths glob,
 *                 or is absolute, climbs with "..", or names .git;
 *   "build-file"  a build or CI file was touched and allow_build_files is 0;
 *   "max-files"   more files touched than max_files;
 *   "max-lines"   more lines added + removed than max_lines;
 *   "forbid"      an added line matches a forbidden POSIX extended regex;
 *   "diff"        the diff does not parse.
 * Globs use sl_glob_match; a pattern without '/' matches the file's base
 * name at any depth (as .gitignore does), one with '/' the whole path.
 *
 * In a campaign file (read by pipeline/spec/gates.c):
 *
 *     gates:
 *       - name: policy
 *         kind: policy
 *         allow_paths: ["*.c", "*.h"]    # globs; default: everything
 *         max_files: 5                          # default 0: no limit
 *         max_lines: 200                        # added + removed; 0: no limit
 *         forbid: ["system\\(", "#pragma GCC diagnostic ignored"]
 *         allow_build_files: false              # default false
 *         build_files: [...]                    # replaces the default list
 *
 * Calling sequence (at spec load, then per candidate):
 *
 *     if (sl_policy_validate(&opts, &err)) ... spec error (bad regex)
 *     sl_policy_result r;
 *     sl_policy_result_init(&r);
 *     if (sl_policy_check(&r, &opts, &changed, &err)) ... error
 *     verdict = r.pass ? SL_VERDICT_PASS : SL_VERDICT_FAIL;
 *     sl_policy_result_text(&r, &feedback);    (for the model and the log)
 *     sl_policy_result_release(&r);
 */
#ifndef SL_POLICY_H
#define SL_POLICY_H

#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"
#include "validators/diff_lines.h"
#include "validators/validators.h"

/* The default build/CI file list, NULL-terminated (static storage). */
extern const char *const sl_policy_default_build_files[];

/*
 * 1 when path matches one of patterns (NULL-terminated; NULL: none), as
 * the policy's globs match: without '/' the base name at any depth.
 */
int sl_policy_glob_any(const char *const *patterns, const char *path);

typedef struct sl_violation {
	char *file;                 /* owned; NULL for whole-diff rules (max-files, ...) */
	unsigned line;              /* new-file line, 0 if none */
	const char *rule;           /* static string: "path", "forbid", ... */
	char *message;              /* owned, one line */
} sl_violation;

typedef struct sl_policy_result {
	int pass;                   /* 1 when there is no violation */
	sl_violation *v;            /* at most 100 kept ... */
	size_t n, alloc;
	size_t dropped;             /* ... and this many more counted */
} sl_policy_result;

void sl_policy_result_init(sl_policy_result *r);
void sl_policy_result_release(sl_policy_result *r);

/*
 * Check the parsed diff ch against opts; fills *out (released first).
 * Returns 0 whatever the verdict, SL_EINPUT for a bad forbid pattern.  A
 * diff that did not parse (ch->error) is a "diff" violation, not an error.
 */
int sl_policy_check(sl_policy_result *out, const sl_policy_opts *opts, const sl_changed *ch,
		    sl_err *err);

/*
 * Append the violations as lines for model feedback and logs:
 *   "policy: N violation(s)" then "FILE:LINE: RULE: MESSAGE" per violation.
 */
void sl_policy_result_text(const sl_policy_result *r, sl_buf *out);

#endif
