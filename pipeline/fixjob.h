/*
 * fixjob.h - choosing targets from the baseline: a fix campaign's are the
 * query's units that enclose a finding the analyzer reported on the base
 * (README, "The fix job"); a testgen campaign may keep only the units its
 * coverage report shows below a threshold ("The testgen job").
 *
 * Calling sequence (pipeline/run/, kind: fix):
 *     scope the base with the campaign's query (e.g. every function);
 *     measure the gates' baseline, collect the finding-gone gates' base
 *     findings (validators/validators.h, sl_gating_base_findings);
 *     or read the campaign's findings file:
 *         sl_fix_load_findings(&findings, &unplaced, c, &why, err)
 *     sl_fix_targets(&list, c, store, &findings, &unplaced, &note, err)   the targets
 *     record the targets and the unplaced findings (one transaction);
 *     per target: sl_fix_finding_text(&findings, t, &buf) for the prompt.
 * Findings in one unit merge into one target; a finding inside nested units
 * belongs to the innermost.  A file with a finding outside every unit
 * becomes one target of unit "file" that replaces its units.
 */
#ifndef SL_FIXJOB_H
#define SL_FIXJOB_H

#include "common/buf.h"
#include "validators/validators.h"
#include "scoping/scope.h"

/* Why a finding holds no target (sl_unplaced_reason_name gives its text). */
enum sl_unplaced_reason {
	SL_UNPLACED_UNTRACKED = 1,  /* the path is no tracked file of the base */
	SL_UNPLACED_AMBIGUOUS,      /* several tracked files end with it */
	SL_UNPLACED_NO_FILE,        /* the finding names no file */
	SL_UNPLACED_NO_LINE,        /* a file of the campaign, no line */
	SL_UNPLACED_NO_UNIT,        /* a file of the campaign, outside every unit it scopes */
};

/*
 * The findings that no target holds, each with its reason, and how many
 * placed findings lie in files outside the campaign's paths (counted only).
 * sl_unplaced_init fills a caller-owned struct; _release frees its contents.
 */
typedef struct sl_unplaced {
	sl_findings f;              /* files as reported; owned */
	unsigned char *why;         /* enum sl_unplaced_reason, one per finding of f */
	size_t walloc;
	size_t outside;
} sl_unplaced;

void sl_unplaced_init(sl_unplaced *u);
void sl_unplaced_release(sl_unplaced *u);
const char *sl_unplaced_reason_name(int why);

/*
 * Drop from list every target whose unit encloses no finding of f (the
 * list stays sorted).  *unplaced = how many findings no target encloses
 * (in a file or at a line the query does not cover).
 */
void sl_fix_select(sl_target_list *list, const sl_findings *f, size_t *unplaced);

/*
 * Append the findings inside t's unit to out, one "FILE:LINE:COL: LEVEL:
 * MESSAGE [RULE]" line each with its related locations indented under it
 * (capped at 8 KiB); nothing when there are none.
 */
void sl_fix_finding_text(const sl_findings *f, const sl_target *t, sl_buf *out);

/*
 * testgen's `coverage_below: PERCENT`: drop from list every target whose
 * unit has at least that share of its executable lines covered in cov (the
 * base's coverage report).  A unit the report does not know, or with no
 * executable line, stays.  cov NULL: nothing is dropped.
 */
/*
 * Parse a findings file of the given format (enum sl_report_format: gcc,
 * gcc-json, sarif; tap, junit, automake or ctest: failing tests, see
 * finding_gone.h) into out.
 * name: the file's name or NULL (one automake .trs file names its test).
 * SL_EINPUT for a SARIF or JUnit file that does not parse.
 */
int sl_fix_parse_findings(sl_findings *out, int format, const char *name,
			  const char *text, size_t len, sl_err *err);

/*
 * Read and parse the campaign's `findings` file (spec->findings_report,
 * against spec->dir) into out, and put its paths on the base's files
 * (validators.h, sl_findings_place: the work tree's root stripped, else a
 * unique tail match).  The findings whose path cannot be placed move from
 * out to unplaced with their reason; their paths are listed in report, one
 * line each.  SL_EINPUT "findings: ..." when the file cannot be read or
 * parsed; SL_ERROR when the base's tree cannot be listed.
 */
struct sl_campaign;
int sl_fix_load_findings(sl_findings *out, sl_unplaced *unplaced, const struct sl_campaign *c,
			 sl_buf *report, sl_err *err);

/*
 * kind fix: the campaign's targets from its scoped units (list) and the
 * base's findings f.  A unit stays when it encloses a finding (the innermost
 * when units nest).  A file of the campaign (its paths and language) with a
 * finding outside every unit is scoped whole (unit "file", cache as for
 * sl_scope) and that one target replaces the file's units: it holds all of
 * the file's findings.  Each finding of f that no target holds is copied
 * to unplaced with its reason, or counted in unplaced->outside when its file
 * lies outside the campaign's paths.  A one-line summary for the progress
 * notice is appended to note ("fix: N findings on the base, M targets ...",
 * N counting unplaced's findings too).  Errors are the scoper's.
 */
struct sl_store;
int sl_fix_targets(sl_target_list *list, const struct sl_campaign *c, struct sl_store *cache,
		   const sl_findings *f, sl_unplaced *unplaced, sl_buf *note, sl_err *err);

/* The files of c's base commit into out, sorted (SL_ERROR when git fails). */
int sl_fix_tracked_files(sl_strvec *out, const struct sl_campaign *c, sl_err *err);

/*
 * Put the paths of f (made on the host or in the jail) on tracked, c's
 * base files (validators.h, sl_findings_place, with the repository's work
 * tree as root); why and report as there.
 */
void sl_fix_place(sl_findings *f, const struct sl_campaign *c, const sl_strvec *tracked,
		  sl_buf *report, unsigned char *why);

/* 1 when path is among the campaign's paths (every path when it names none). */
/* A glob that matches exactly path (its metacharacters escaped); the caller frees it. */
char *sl_fix_glob_literal(const char *path);

struct sl_spec;
int sl_fix_in_paths(const struct sl_spec *spec, const char *path);

/*
 * The failing tests of a fix campaign (fixtarget.c; README, "The fix job").
 * For each test failing on the base that a gate of g must see fixed
 * (sl_gating_judging_tests): the files of the campaign's test_paths its
 * failure text names, and the test files that hold its name as a word (of
 * test_paths, else the files under a test directory or named like a test),
 * become files those gates protect (sl_gating_protect).  With fix.target
 * code (the default), each finding of f with rule "test:ID" moves to the
 * code the test exercises, and the test's function joins its notes (the
 * prompt shows both):
 *   1. the innermost frame of a backtrace in the failure text ("#0 0x4005
 *      in f src/a.c:12", "#1 f (x=1) at src/a.c:12") that lies in a file of
 *      the campaign's paths that is no test's;
 *   2. else the failure's place when it lies in such a file already;
 *   3. else the failing test's function (the function enclosing the
 *      failure's place in a test file, or the function named as the test
 *      in the test files) and, of the functions it calls that are defined
 *      in such a file, the call nearest before the failing line (the
 *      nearest after it when none is before; the first call when the
 *      failure has no line).  Functions are found with tree-sitter in c,
 *      cpp and python.
 * A test none of these places stays where its failure put it.  A failing
 * test of u (a findings file's test whose place is no file of the base) that
 * they place moves from u to f.  The gates' findings move with f's
 * (sl_gating_place_tests).  A summary is appended to note when a test
 * moved.  Errors are the scoper's and git's.
 */
struct sl_gating;
int sl_fix_tests(sl_findings *f, sl_unplaced *u, const struct sl_campaign *c,
		 struct sl_store *cache, struct sl_gating *g, sl_buf *note, sl_err *err);

struct sl_coverage;
void sl_testgen_select(sl_target_list *list, const struct sl_coverage *cov, unsigned percent);

#endif
