/*
 * coverage.h - line coverage from lcov tracefiles and gcov text, per file.
 *
 * lcov (geninfo/lcov --capture, llvm-cov export -format=lcov, c8/nyc,
 * coverage.py lcov): records "SF:path" ... "DA:line,count[,checksum]" ...
 * "end_of_record"; other records (FN, BRDA, LF, LH...) are ignored, since
 * LF/LH are recomputed from the DA lines.  gcov text (`gcov -t`, or the
 * .gcov files): "COUNT:LINE:SOURCE" where COUNT is a number (maybe with a
 * '*' suffix), "#####" or "=====" (0) or "-" (not executable), and the
 * file named by the "-:0:Source:path" line; several files may follow each
 * other.  The same file seen twice (two records, two gcov runs) is merged
 * by adding counts.  Paths go through sl_report_path (diff_lines.h).
 * Reports are capped: at most 10000 files and 1000000 lines in all.
 *
 * The `coverage` gate in a campaign file (read by pipeline/spec/gates.c):
 *
 *     - name: coverage
 *       kind: coverage
 *       command: make coverage        # leaves the report in the worktree
 *       report: coverage.info         # read with sl_read_beneath
 *       format: lcov                  # lcov | gcov
 *
 * The target's region comes from the target row (file, start and end line
 * of its enclosing node).  Base runs once per campaign; per candidate:
 *
 *     sl_coverage base, cand;   (sl_coverage_init each, parse each)
 *     raised = sl_coverage_raised(&base, &cand, file, start, end, &why);
 *     verdict = raised ? PASS : FAIL;    why -> feedback
 */
#ifndef SL_COVERAGE_H
#define SL_COVERAGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "validators/validators.h"

typedef struct sl_cov_line {
	unsigned line;              /* 1-based */
	uint64_t count;             /* times executed (saturating) */
} sl_cov_line;

typedef struct sl_cov_file {
	char *path;                 /* repository-relative; owned */
	sl_cov_line *v;             /* executable lines, ascending, unique */
	size_t n, alloc;
} sl_cov_file;

typedef struct sl_coverage {
	sl_cov_file *files;
	size_t n, alloc;
	size_t lines;               /* total lines held (for the cap) */
	int truncated;              /* a cap was hit */
} sl_coverage;

void sl_coverage_init(sl_coverage *c);
void sl_coverage_release(sl_coverage *c);

/* Parse and merge into *out.  SL_EINPUT when nothing in text is a record. */
int sl_coverage_parse_lcov(sl_coverage *out, const char *text, size_t len, sl_err *err);
/*
 * gcov text; path names the file when the text has no "Source:" line (a
 * lone .gcov excerpt), else may be NULL.  SL_EINPUT when no line parses.
 */
int sl_coverage_parse_gcov(sl_coverage *out, const char *text, size_t len,
			   const char *path, sl_err *err);

/*
 * gcov JSON (`gcov --stdout --json-format`, or the unzipped .gcov.json.gz):
 * files[].file and files[].lines[].line_number / count; several documents
 * may follow each other.  SL_EINPUT when no line parses.
 */
int sl_coverage_parse_gcov_json(sl_coverage *out, const char *text, size_t len, sl_err *err);

/* The file (path normalised with sl_report_path), or NULL. */
const sl_cov_file *sl_coverage_file(const sl_coverage *c, const char *path);

/*
 * "The candidate raised coverage of its target": covered lines in the
 * region went up, or, failing that, covered lines in the whole file went
 * up.  Returns 1 or 0; why (may be NULL) gets one line such as
 * "covered lines in src/a.c:10-40: 3/12 -> 5/12".  A file absent from the
 * candidate's report is 0; absent from the base's counts as 0 covered.
 */
int sl_coverage_raised(const sl_coverage *base, const sl_coverage *cand, const char *path,
		       unsigned start_line, unsigned end_line, sl_buf *why);

#endif
