/* The apps' trace and clock, apart from the rest of the toolkit so that
 * apps written on another toolkit (the EFL ones) share them: JSON lines
 * exactly as render/'s render_trace documents,
 * {"name":..,"ns":..,"pid":..,<fields>}, to $DUET_TRACE if set, else to
 * stdout. fields is a printf format of the remaining members, or NULL. */
#ifndef DUET_TK_TRACE_H
#define DUET_TK_TRACE_H

#include <stdint.h>

void tk_trace(const char *name, const char *fields, ...) __attribute__((format(printf, 2, 3)));
/* CLOCK_MONOTONIC in ns, the clock of every trace event. */
uint64_t tk_now_ns(void);

#endif
