/* Log lines go to stderr with a monotonic timestamp, so that they can be
 * lined up with the trace file (also CLOCK_MONOTONIC). stdout is reserved for
 * the WAYLAND_DISPLAY= line that tests and the bench read. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "comp.h"

void comp_log(const char *fmt, ...)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);

	/* One fprintf per line: stderr is unbuffered and lines from the child
	 * process share it, so build the line first. */
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "[duet-compositor %5lld.%03ld] %s\n", (long long)ts.tv_sec,
	        ts.tv_nsec / 1000000, line);
}
