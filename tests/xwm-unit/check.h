/* The xwm unit tests' checks: each failed one is counted and said with
 * where it is; check_finish gives main's exit status. */
#ifndef DUET_XWM_UNIT_CHECK_H
#define DUET_XWM_UNIT_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                             \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                             \
		}                                                               \
	} while (0)

/* 1 after any failed check, else 0 once passed_line is printed. */
static inline int check_finish(const char *passed_line)
{
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	puts(passed_line);
	return 0;
}

#endif
