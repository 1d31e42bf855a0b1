/*
 * diff_lines.h - which lines of which files a candidate's diff changed.
 *
 * Reads the unified diff stored for every candidate (git's patch format, as
 * git_diff_to_buf writes it: "diff --git", mode and rename lines, "---" and
 * "+++" headers, possibly quoted paths, "@@ -a,b +c,d @@" hunks, "\ No
 * newline", "Binary files ... differ"), and tolerates a plain unified diff
 * without "diff --git" lines.  Produces, per file, the sorted line numbers
 * of the NEW file that were added, the points where lines were only removed,
 * and counts of lines added and removed.  The gates use it to decide what is
 * "on or near a changed line" (findings.h, feedback.h), and the policy gate
 * (policy.h) to count and to see each added line.
 *
 * Calling sequence: once per candidate, on the diff row of the store, where
 * the gate runner starts judging it (gating.c); the one parsed value is
 * handed to every gate that reads the diff (policy, static, test,
 * finding-gone, mutants):
 *
 *     sl_changed ch;
 *     sl_changed_init(&ch);
 *     if (sl_changed_parse(&ch, diff, diff_len, NULL, NULL, &err)) ... (SL_EINPUT)
 *     ... sl_findings_new_near(&base, &cand, &ch, radius, &out) ...
 *     ... sl_changed_each_added(&ch, fn, data) ...
 *     sl_changed_release(&ch);
 *
 * Paths are repository-relative, "a/" and "b/" stripped, unquoted.  A
 * deleted file keeps its old path in .path (and has no added lines).
 */
#ifndef SL_DIFF_LINES_H
#define SL_DIFF_LINES_H

#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"

typedef struct sl_changed_file {
	char *path;                 /* the new path (old path for a deleted file); owned */
	char *old_path;             /* the old path; NULL for a created file; owned */
	unsigned added, removed;    /* '+' and '-' lines */
	int created, deleted, renamed, binary;
	unsigned *lines;            /* added lines, 1-based in the new file, ascending */
	size_t nlines, lines_alloc;
	unsigned *cuts;             /* new-file line just after each run of removed lines */
	size_t ncuts, cuts_alloc;
} sl_changed_file;

/* One added line, as the parse met it (sl_changed_each_added). */
typedef struct sl_added_line {
	size_t path;                /* index in sl_changed.paths: the file's path then */
	unsigned line;              /* 1-based in the new file */
	const char *text;           /* without '+' and newline, in the diff (borrowed) */
	size_t len;
} sl_added_line;

typedef struct sl_changed {
	sl_changed_file *files;     /* in diff order */
	size_t nfiles, alloc;
	unsigned added, removed;    /* totals over all files */
	const char *diff;           /* the text parsed last (borrowed: it must outlive
				       the struct, added lines point into it) */
	size_t diff_len;
	sl_added_line *adds;        /* every added line, in diff order */
	size_t nadds, adds_alloc;
	char **paths;               /* the paths added lines name; owned */
	size_t npaths, paths_alloc;
	int error;                  /* what sl_changed_parse returned (0: it parsed) */
	char *error_msg;            /* its message when the diff did not parse; owned */
} sl_changed;

void sl_changed_init(sl_changed *c);
/* Free everything; the struct is reusable (as after init). */
void sl_changed_release(sl_changed *c);

/*
 * Called for each added line while parsing: path is the file's new path,
 * line its 1-based number in the new file, text/len the line without its
 * '+' and newline (not NUL-terminated; borrowed for the call).  A non-zero
 * return stops the parse and is returned by sl_changed_parse.
 */
typedef int (*sl_added_line_fn)(void *data, const char *path, unsigned line,
				const char *text, size_t len);

/*
 * Parse diff (len bytes, NUL not needed; borrowed for the struct's life)
 * and append what it changes to *out.  on_added may be NULL.  Returns 0,
 * SL_EINPUT when the diff is malformed beyond repair (a hunk header that
 * does not parse, more than 100000 files, line numbers past 2^31), or what
 * on_added returned; either is also kept in out->error (and the message in
 * out->error_msg), with what was read before it.  Hunk line counts are
 * trusted only as far as the lines go: a truncated diff is not an error.
 */
int sl_changed_parse(sl_changed *out, const char *diff, size_t len,
		     sl_added_line_fn on_added, void *data, sl_err *err);

/*
 * Call fn for each added line the parse read, in diff order, with the path
 * its file had when the line was read; a non-zero return stops the walk
 * and is returned.  0 when every line was seen.
 */
int sl_changed_each_added(const sl_changed *c, sl_added_line_fn fn, void *data);

/* The file with this new (or, failing that, old) path, or NULL. */
const sl_changed_file *sl_changed_find(const sl_changed *c, const char *path);

/*
 * 1 if path has an added line, or a removal point, within radius lines of
 * line (|l - line| <= radius), else 0.  path is normalised first with
 * sl_report_path (so "/src/a.c" and "./a.c" name "a.c").  A created file
 * counts as changed everywhere.
 */
int sl_changed_near(const sl_changed *c, const char *path, unsigned line, unsigned radius);

/*
 * Turn a path as a gate reports it into the repository-relative form the
 * diff uses: strips "file://" (and percent-decodes), the jail's "/src/"
 * mount point, leading "./", collapses "//" and "." segments and resolves
 * ".." lexically (never above the root: such paths are returned absolute
 * and so match nothing).  Returns a new string the caller frees.
 */
char *sl_report_path(const char *raw);

/* Append s to out with each "%XX" escape decoded (a malformed one is kept as is). */
void sl_percent_decode(sl_buf *out, const char *s);

#endif
