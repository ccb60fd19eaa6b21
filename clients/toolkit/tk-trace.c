/* The apps' trace output: render/trace.c's JSON lines
 * ({"name":..,"ns":..,"pid":..,<fields>}), so the bench reads one format.
 * Only the trace library is linked, not the servers' renderer. Unlike the
 * servers, the apps trace to stdout unless DUET_TRACE names a file: their
 * results are their output. */
#include <stdarg.h>
#include <time.h>
#include <unistd.h>

#include "render.h"
#include "tk-trace.h"

uint64_t tk_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tk_trace(const char *name, const char *fields, ...)
{
	/* The app's one trace, for its whole life (exit closes it). */
	static struct render_trace *trace;
	static bool opened;
	va_list ap;

	if (!opened) {
		opened = true;
		if (render_trace_open(NULL, &trace) != 0 || !trace)
			trace = render_trace_from_fd(STDOUT_FILENO);
	}
	va_start(ap, fields);
	render_tracev(trace, name, fields, ap);
	va_end(ap);
}
