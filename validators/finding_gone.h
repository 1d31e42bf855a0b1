/*
 * finding_gone.h - the proof of a fix: the findings of its target are gone,
 * not moved, not silenced, and the code was not simply deleted.
 *
 * A fix campaign (README, "The fix job") takes its targets from the findings
 * an analyzer or compiler reports on the base: each finding belongs to the
 * unit (function by default) that encloses its line.  The `finding-gone`
 * gate reruns the analyzer on the candidate and sl_finding_gone_judge()
 * decides, in this order, the first reason to reject:
 *
 *   silences   an added line carries a suppression (cppcheck-suppress,
 *              NOLINT, #pragma GCC/clang diagnostic, #pragma warning,
 *              noqa, type: ignore, eslint-disable, @SuppressWarnings,
 *              nosemgrep, lgtm, codeql, coverity), or the diff touches a
 *              build or analyzer configuration file (the policy gate's
 *              build-file list, .clang-tidy, .cppcheck, suppressions files);
 *   deletes    the diff removes at least 3 lines of the target's unit and at
 *              least half of the unit's lines net (removed - added >=
 *              ceil(lines / 2)): a gutted function is not a fix;
 *   still      a finding of the target (same file and rule, or same message
 *              when there is no rule) is reported at its line tracked
 *              through the diff, or anywhere in the unit's new extent when
 *              its own line was rewritten;
 *   moved      a finding with the same file and rule appears at a line that
 *              is not the tracked position of any base finding of that rule;
 *   new        a finding that is new against the base within radius lines of
 *              a changed line (findings.h, sl_findings_new_near).
 *
 * Lines are tracked through the diff: an unchanged base line L maps to its
 * line in the candidate; a removed line maps to the position of the text
 * that replaced it.
 */
#ifndef SL_FINDING_GONE_H
#define SL_FINDING_GONE_H

#include "common/buf.h"
#include "validators/diff_lines.h"
#include "validators/findings.h"
#include "validators/testreport.h"
#include "validators/validators.h"

/*
 * Judge a candidate (module comment): 1 when every finding of the unit is
 * gone and nothing above applies, else 0 with a one-line reason appended to
 * note ("still there: a.c:12 memleak", "moved: ...", "silences the analyzer:
 * ...", "deletes code: ...", "new finding near the change: ...") and the
 * longer explanation for the model appended to fb.  base: the base's
 * findings; cand: the candidate's; ch: the candidate's unified diff as the
 * gate runner parsed it (diff_lines.h).
 */
int sl_finding_gone_judge(const sl_findings *base, const sl_findings *cand,
			  const sl_changed *ch, const sl_unit_ref *unit, unsigned radius,
			  sl_buf *note, sl_buf *fb);

/*
 * Judge a candidate's test report against the failing tests of the unit:
 * 1 when each of them is in cand and passes, else 0 with "still failing:
 * ID" (or "vanished: ID") in note and the test's text in fb.
 */
int sl_tests_fixed_judge(const sl_findings *base, const sl_tests *cand, const sl_unit_ref *unit,
			 sl_buf *note, sl_buf *fb);

/*
 * The tests that judge a fix (README, "The fix job"): a candidate may not
 * change them, their fixtures or their expected output.  A test failing on
 * the base that a gate must see fixed names its files in its id (automake
 * "tests/foo", a path) and in the FILE:LINE locations of its failure text;
 * of those, a file under a test directory (a component named test, tests,
 * t, testing, testsuite, spec, __tests__, unittests, testdata, fixtures...)
 * protects that directory, every file beneath it; a file named like a
 * test elsewhere (test_x.c, x_test.go, x.test.js, XTest.java) protects
 * itself and the files beside it with its stem (x_test.golden, x.exp);
 * any other file (the code under test) protects nothing.
 */
typedef struct sl_judging {
	sl_strvec where;            /* "dir/" (everything beneath), or a file path */
	sl_strvec test;             /* the test each entry of where came from */
} sl_judging;

void sl_judging_init(sl_judging *j);
void sl_judging_release(sl_judging *j);

/* Add the files of test (id, failure text message, may be NULL) to j. */
void sl_judging_add(sl_judging *j, const char *id, const char *message);
/* Add path, a file that holds test id (found by its name), to j: itself and its stem. */
void sl_judging_add_file(sl_judging *j, const char *path, const char *id);

/*
 * 1 when the diff ch changes (adds, edits, deletes or renames) a file of j
 * that no glob of allow (NULL-terminated, may be NULL; policy.h's glob
 * rules) names, with "changes the test that judges it: FILE (test ID)" in
 * note; else 0.
 */
int sl_judging_changed(const sl_judging *j, const char *const *allow, const sl_changed *ch,
		       sl_buf *note);

/*
 * Where base line `line` of `path` is in the candidate, per the diff (the
 * line itself when the diff leaves the file alone).  *removed is set to 1
 * when that line was removed (the result is then where its replacement
 * starts).
 */
unsigned sl_diff_track_line(const char *diff, const char *path, unsigned line, int *removed);

/*
 * The text `path` had before the diff, rebuilt from its text after it
 * (text, len) by undoing the file's hunks: appended to out.  SL_EINPUT when
 * the hunks do not fit the text.  A missing final newline of the old
 * text is not reproduced.
 */
int sl_diff_old_text(const char *diff, const char *path, const char *text, size_t len,
		     sl_buf *out);

#endif
