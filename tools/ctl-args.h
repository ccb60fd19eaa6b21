/* Argument parsing and timing shared by duet-testctl and duet-xctl, so the
 * Wayland and X11 control tools accept numbers the same way. */
#ifndef DUET_CTL_ARGS_H
#define DUET_CTL_ARGS_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

/* A whole-string integer (decimal, 0x hex or 0 octal) within [min, max]. */
static inline bool ctl_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* A whole-string number within [min, max]. */
static inline bool ctl_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static inline double ctl_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
