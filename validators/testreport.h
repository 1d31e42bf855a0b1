/*
 * testreport.h - per-test results from JUnit XML and TAP, and comparisons.
 *
 * JUnit XML (the de-facto schema: Ant/Maven surefire, pytest, Jest's
 * jest-junit, go-junit-report, CTest --output-junit, gtest): every
 * <testcase> under <testsuites>/<testsuite> (suites may nest); its id is
 * "CLASSNAME.NAME" (only NAME when classname is empty or equal to NAME,
 * "SUITE.NAME" when classname is absent); a <failure> child makes it FAIL,
 * <error> ERROR, <skipped> SKIP, none PASS; the message is the failure's
 * message attribute, then its text, capped.  A failing testcase's file
 * and line attributes (gtest, pytest, PHPUnit) place it: "FILE:LINE: "
 * leads a message that names no FILE:LINE of its own, "(test at
 * FILE:LINE)" ends one that does.  Parsed with libxml2 without
 * network, without entity substitution, without DTD loading; entity
 * references are never expanded (text is collected from text and CDATA
 * nodes only), so a billion-laughs document costs nothing.  Input over
 * 32 MiB is refused.
 *
 * Automake (.trs, test-suite.log, `make check` output) and ctest: below.
 *
 * TAP (12/13/14): "ok N - name", "not ok N - name", directives "# SKIP" (a
 * SKIP) and "# TODO" ("not ok" becomes SKIP: an expected failure; "ok"
 * stays PASS), the plan "1..N" (before or after; tests in the plan that
 * never reported are FAIL "not run"), "Bail out!" (a FAIL named "bail out"),
 * "# ..." lines and YAML blocks ("  ---" .. "  ...") after a "not ok" as its
 * message.  Indented subtest lines are skipped.  Ids are the names, or
 * "test N" when a line has none.
 *
 * Duplicate ids (parameterised tests with one name) get " [2]", " [3]"...
 * in order of appearance.  A set holds at most 100000 tests.
 *
 * The `test` gate in a campaign file (read by pipeline/spec/gates.c):
 *
 *     - name: unit
 *       kind: test
 *       command: make check
 *       report: build/test-results.xml   # read with sl_read_beneath; optional
 *       format: junit                     # junit | tap (tap: may be the output itself)
 *       reruns: 3                         # flakiness, see sl_tests_flaky
 *       must_fix: ["suite.test_name"]     # fix campaigns: must now pass
 *
 * Calling sequence (the gate runner): base runs once per campaign, twice when reruns > 1
 * to find flaky tests: flaky = sl_tests_flaky(base1, base2).  Per candidate:
 * parse its report(s); fail if sl_tests_regressions(base, cand) has an entry
 * not in flaky, if a must_fix id is not PASS in cand, or (with reruns N) if
 * any run's regressions are non-empty.  Without a report the exit status
 * decides as before.  Feedback: sl_tests_summary(cand, &buf, 4096).
 */
#ifndef SL_TESTREPORT_H
#define SL_TESTREPORT_H

#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"
#include "validators/validators.h"

/* Append a test (id and message copied; message may be NULL). */
void sl_tests_add(sl_tests *t, const char *id, int result, const char *message);

/*
 * The test with this id (the first added, if several), or NULL: a hash
 * lookup in a set built with sl_tests_add and the parsers, linear in one
 * whose v was filled by hand.
 */
const sl_test *sl_tests_find(const sl_tests *t, const char *id);

/* 1 for FAIL and ERROR. */
int sl_test_failed(int result);
const char *sl_test_result_name(enum sl_test_result result);   /* "pass" "fail" "error" "skip" */

/*
 * Append to *out the tests that PASS in base and do not PASS in cand (a
 * test missing from cand counts, message "missing from the report").
 * Returns how many.
 */
size_t sl_tests_regressions(const sl_tests *base, const sl_tests *cand, sl_tests *out);

/*
 * Append to *out the tests present in both runs (of the same tree) that
 * PASS in one and FAIL or ERROR in the other; SKIP in either is not a flip.
 * The result and message stored are those of the run that did not pass.
 * Returns how many.
 */
size_t sl_tests_flaky(const sl_tests *run_a, const sl_tests *run_b, sl_tests *out);

/*
 * Feedback for the model: "N tests: P passed, F failed, E errors, S
 * skipped" then each failing test with its message indented, stopping
 * before out grows past cap bytes (0 = 4096) and saying how many were left.
 */
void sl_tests_summary(const sl_tests *t, sl_buf *out, size_t cap);

#endif
