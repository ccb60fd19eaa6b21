/* Log lines go to stderr with a monotonic timestamp, so that they can be
 * lined up with the trace file (also CLOCK_MONOTONIC). stdout is reserved for
 * the WAYLAND_DISPLAY= line that tests and the bench read. */
#include <stdarg.h>

#include "comp.h"
#include "duet-log.h"

void comp_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	duet_vlog("duet-compositor", true, fmt, ap);
	va_end(ap);
}
