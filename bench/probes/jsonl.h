/* What the bench's watchers (observe.c, paint-count.c) print: JSON lines on
 * stdout, each stamped in CLOCK_MONOTONIC ns, the clock of render/trace.c's
 * events, so that the bench can set one beside the other; and their own
 * CPU time, for their done lines. */
#ifndef DUET_BENCH_JSONL_H
#define DUET_BENCH_JSONL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/* One line, printf-formatted, the newline added. */
static inline void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void emit(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	/* A pipe to the bench: each line must leave at once, it is a timestamp. */
	fflush(stdout);
}

#endif
