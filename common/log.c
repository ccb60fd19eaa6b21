#include <stdio.h>
#include <time.h>

#include "duet-log.h"

void duet_vlog(const char *who, bool stamped, const char *fmt, va_list ap)
{
	struct timespec ts;
	char line[1024];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	vsnprintf(line, sizeof(line), fmt, ap);
	/* One fprintf per line: stderr is unbuffered and shared with the
	 * processes we run, so a line built in pieces could interleave. */
	if (stamped)
		fprintf(stderr, "[%s %5lld.%03ld] %s\n", who, (long long)ts.tv_sec,
		        ts.tv_nsec / 1000000, line);
	else
		fprintf(stderr, "%s: %s\n", who, line);
}
