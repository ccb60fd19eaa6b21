/* See app-args.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "app-args.h"

bool app_parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

bool app_parse_size(const char *s, int *w, int *h)
{
	char buf[64];
	const char *x = strchr(s, 'x');
	long a, b;
	if (!x || (size_t)(x - s) >= sizeof(buf))
		return false;
	memcpy(buf, s, (size_t)(x - s));
	buf[x - s] = '\0';
	if (!app_parse_long(buf, 1, 16384, &a) || !app_parse_long(x + 1, 1, 16384, &b))
		return false;
	*w = (int)a;
	*h = (int)b;
	return true;
}
