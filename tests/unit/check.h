/* Checks that count failures and say what they check, for unit tests of
 * any part (unit.h adds the renderer's). */
#ifndef DUET_UNIT_CHECK_H
#define DUET_UNIT_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int unit_failures;

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			unit_failures++;                                      \
			fprintf(stderr, "FAIL %s:%d: (%s) ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
		}                                                             \
	} while (0)

static inline void unit_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void unit_say(const char *fmt, ...)
{
	va_list ap;

	printf("check: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline int unit_finish(const char *name)
{
	if (unit_failures) {
		printf("%s: %d check(s) FAILED\n", name, unit_failures);
		return 1;
	}
	printf("%s: all checks passed\n", name);
	return 0;
}

#endif
