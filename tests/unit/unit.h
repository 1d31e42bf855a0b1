/*
 * unit.h - the unit-test layer's whole framework.
 *
 * A test file defines test functions and lists them in main():
 *
 *     static void test_empty(void) { CHECK(parse("") == 0); }
 *     int main(void) { RUN(test_empty); return unit_done(); }
 *
 * Each RUN prints "ok N - name" or "not ok N - name" (TAP), each failed
 * CHECK prints the file, line and expression on stderr.  A test that cannot
 * run on this machine calls SKIP("reason") (which returns from it) and is
 * reported "ok N # skip name: reason", counted as skipped, never as passed;
 * a check that failed before the SKIP still fails the test.  unit_done()
 * prints the totals and returns the exit status (non-zero if anything failed).
 */
#ifndef SL_UNIT_H
#define SL_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_n, unit_failed, unit_skipped, unit_cur_failed;
static char unit_skip_reason[256];

#define CHECK(expr) do { if (!(expr)) { \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #expr); \
	unit_cur_failed = 1; } } while (0)

#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_)) { \
	fprintf(stderr, "%s:%d: check failed: %s == %s\n  got:      '%s'\n  expected: '%s'\n", \
		__FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
	unit_cur_failed = 1; } } while (0)

#define CHECK_INT(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) { \
	fprintf(stderr, "%s:%d: check failed: %s == %s (got %lld, expected %lld)\n", \
		__FILE__, __LINE__, #a, #b, a_, b_); \
	unit_cur_failed = 1; } } while (0)

#define SKIP(reason) do { snprintf(unit_skip_reason, sizeof(unit_skip_reason), \
	"%s", (reason)); return; } while (0)

/* RUN_AS(fn, name): the same, reported under name (a test run twice) */
#define RUN(fn) RUN_AS(fn, #fn)
#define RUN_AS(fn, name) do { unit_cur_failed = 0; *unit_skip_reason = '\0'; fn(); unit_n++; \
	if (unit_cur_failed) { unit_failed++; \
		printf("not ok %d - %s\n", unit_n, name); \
	} else if (*unit_skip_reason) { unit_skipped++; \
		printf("ok %d # skip %s: %s\n", unit_n, name, unit_skip_reason); \
	} else { printf("ok %d - %s\n", unit_n, name); } \
	fflush(stdout); } while (0)

static inline int unit_done(void)
{
	printf("# %d passed, %d failed, %d skipped\n",
	       unit_n - unit_failed - unit_skipped, unit_failed, unit_skipped);
	return unit_failed ? 1 : 0;
}

#endif
