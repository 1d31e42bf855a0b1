/*
 * bench.h - what the C benchmarks share: a monotonic clock in milliseconds
 * and percentiles of a series (sorted in place by bench_pct).
 */
#ifndef SL_BENCH_H
#define SL_BENCH_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The p-th percentile of v[0..n), which it sorts. */
static inline double bench_pct(double *v, int n, int p)
{
	int i = (n * p + 99) / 100 - 1;

	qsort(v, (size_t)n, sizeof(*v), bench_cmp);
	return v[i < 0 ? 0 : i];
}

#endif
