/* The bench's open functions (drm-scanout.h, vfb-source.h) say why they
 * failed in a caller's buffer rather than on stderr, so that the caller
 * can put it in its own line. */
#ifndef DUET_BENCH_WHY_H
#define DUET_BENCH_WHY_H

#include <stdarg.h>
#include <stdio.h>

/* Formats the reason into why[len]; returns -1, the functions' failure.
 * Only these files include this, hence the short name. */
static inline int fail(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

#endif
