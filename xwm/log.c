/* Logging (stderr, monotonic timestamps as in duet-compositor's log, so
 * lines can be matched with the trace) and the intrusive list. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "model.h"

static void vlog(const char *fmt, va_list ap)
{
	struct timespec ts;
	char line[1024];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	vsnprintf(line, sizeof(line), fmt, ap);
	/* One fprintf per line: stderr is shared with the clients we run. */
	fprintf(stderr, "[duet-xwm %5lld.%03ld] %s\n", (long long)ts.tv_sec,
	        ts.tv_nsec / 1000000, line);
}

void xwm_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void xwm_debug(struct xwm *xwm, const char *fmt, ...)
{
	va_list ap;
	if (!xwm->debug)
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void xwm_list_init(struct xwm_list *head)
{
	head->prev = head;
	head->next = head;
}

void xwm_list_insert_after(struct xwm_list *pos, struct xwm_list *elm)
{
	elm->prev = pos;
	elm->next = pos->next;
	pos->next->prev = elm;
	pos->next = elm;
}

void xwm_list_remove(struct xwm_list *elm)
{
	elm->prev->next = elm->next;
	elm->next->prev = elm->prev;
	elm->prev = elm->next = elm;
}
