/* The log line of every duet program: one line on stderr. */
#ifndef DUET_LOG_H
#define DUET_LOG_H

#include <stdarg.h>
#include <stdbool.h>

/* "[who sec.ms] message" with CLOCK_MONOTONIC (so lines can be matched with
 * the trace file) when stamped, else "who: message". */
void duet_vlog(const char *who, bool stamped, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif
