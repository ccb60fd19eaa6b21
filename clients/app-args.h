/* Command-line numbers for every duet app, the toolkit's and the EFL ones:
 * no toolkit here, so the EFL apps link it too. */
#ifndef DUET_APP_ARGS_H
#define DUET_APP_ARGS_H

#include <stdbool.h>

/* "WxH" with both in 1..16384. */
bool app_parse_size(const char *s, int *w, int *h);
/* Decimal in lo..hi. */
bool app_parse_long(const char *s, long lo, long hi, long *out);

#endif
