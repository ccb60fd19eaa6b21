/* What the micro-benchmarks (readback.c, composite-cost.c) share: a clock
 * read in milliseconds, and samples sorted for their min, median and max.
 * Header-only: each benchmark is one small program. */
#ifndef DUET_BENCH_SAMPLES_H
#define DUET_BENCH_SAMPLES_H

#include <stdlib.h>
#include <time.h>

static inline double sample_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline int samples_by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Then v[0] is the min, v[n / 2] the median and v[n - 1] the max. */
static inline void samples_sort(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), samples_by_value);
}

#endif
