/*
 * bench/tests.c - comparing two test reports test by test (the test gate's
 * per-test judgement: sl_tests_regressions and sl_tests_find), with the id
 * index against the linear search it replaced, same run.
 *
 *   sh bench/tests.sh [N]       (builds this against build/libsluice.a)
 *
 * Builds a base and a candidate report of N tests each (default 20000; the
 * candidate lists them backwards), then times sl_tests_regressions on the
 * sets as the parsers build them (indexed) and on copies of the same
 * entries filled by hand (no index: the linear search, the anchor).  Both
 * must find the same regressions.  Prints the times and the ratio.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "validators/testreport.h"
#include "common/buf.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The same entries, without the index (borrowed: never released). */
static sl_tests unindexed(const sl_tests *t)
{
	sl_tests u;

	sl_tests_init(&u);
	u.v = t->v;
	u.n = u.alloc = t->n;
	return u;
}

static double time_regressions(const sl_tests *base, const sl_tests *cand, size_t *found)
{
	sl_tests reg;
	double t0 = now();

	sl_tests_init(&reg);
	*found = sl_tests_regressions(base, cand, &reg);
	t0 = now() - t0;
	sl_tests_release(&reg);
	return t0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	sl_tests base, cand, ub, uc;
	sl_buf id = SL_BUF_INIT;
	size_t fi, fl;
	double ti, tl;

	if (n < 1 || n > 100000) {
		fprintf(stderr, "usage: tests [N up to 100000]\n");
		return 2;
	}
	sl_tests_init(&base);
	sl_tests_init(&cand);
	for (int i = 0; i < n; i++) {
		sl_buf_reset(&id);
		sl_buf_addf(&id, "tests/suite_%d.case_%d", i % 50, i);
		sl_tests_add(&base, id.buf, SL_TEST_PASS, NULL);
		sl_buf_reset(&id);
		sl_buf_addf(&id, "tests/suite_%d.case_%d", (n - 1 - i) % 50, n - 1 - i);
		sl_tests_add(&cand, id.buf, (n - 1 - i) % 97 ? SL_TEST_PASS : SL_TEST_FAIL, NULL);
	}
	ub = unindexed(&base);
	uc = unindexed(&cand);
	ti = time_regressions(&base, &cand, &fi);
	tl = time_regressions(&ub, &uc, &fl);
	printf("%d tests per report, %zu regressions (linear: %zu)\n", n, fi, fl);
	printf("indexed %.4f s, linear (anchor) %.4f s: %.0fx faster\n", ti, tl,
	       ti > 0 ? tl / ti : 0.0);
	sl_tests_release(&base);
	sl_tests_release(&cand);
	sl_buf_release(&id);
	return fi == fl ? 0 : 1;
}
