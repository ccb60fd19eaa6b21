/* Logging: the line of common/log.c, as duet-compositor's, so lines can be
 * matched with the trace. */
#include <stdarg.h>

#include "duet-log.h"
#include "model.h"

void xwm_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	duet_vlog("duet-xwm", true, fmt, ap);
	va_end(ap);
}

void xwm_debug(struct xwm *xwm, const char *fmt, ...)
{
	va_list ap;
	if (!xwm->debug)
		return;
	va_start(ap, fmt);
	duet_vlog("duet-xwm", true, fmt, ap);
	va_end(ap);
}
