/* Command-line options of the test clients, read alike by the Wayland and
 * the X11 twins so that a test hands both the same words. Header-only: the
 * X11 clients link no Wayland code. */
#ifndef DUET_TEST_CLIENT_ARGS_H
#define DUET_TEST_CLIENT_ARGS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "WxH", nothing after it, each side from 1 to max. */
static inline bool test_parse_size(const char *s, int max, int *w, int *h)
{
	char tail;
	if (sscanf(s, "%dx%d%c", w, h, &tail) != 2)
		return false;
	return *w > 0 && *h > 0 && *w <= max && *h <= max;
}

/* A whole decimal number >= 0. */
static inline bool test_parse_count(const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		return false;
	*out = v;
	return true;
}

enum test_option_kind {
	TEST_OPT_FLAG,   /* --NAME: value is a bool, set true */
	TEST_OPT_STRING, /* --NAME S: value is a const char * */
	TEST_OPT_SIZE,   /* --NAME WxH: value is an int[2], each side up to max_side */
	TEST_OPT_COUNT,  /* --NAME N: value is a long, N >= 0 */
};

struct test_option {
	const char *name;
	enum test_option_kind kind;
	void *value;
	int max_side;
};

/* Reads argv[1..] by options. Returns -1 when every word was good, else
 * the status to exit with: 0 after -h or --help (usage on stdout), 2 for
 * anything else (usage, or the bad value, on stderr). */
static inline int test_parse_options(const char *prog, int argc, char **argv,
                                     const struct test_option *options, size_t n,
                                     void (*usage)(FILE *out))
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		}
		const struct test_option *o = NULL;
		for (size_t k = 0; k < n && !o; k++)
			if (strcmp(argv[i], options[k].name) == 0)
				o = &options[k];
		if (o && o->kind == TEST_OPT_FLAG) {
			*(bool *)o->value = true;
			continue;
		}
		if (!o || i + 1 >= argc) {
			usage(stderr);
			return 2;
		}
		const char *value = argv[++i];
		int *wh = o->value;
		bool ok = true;
		if (o->kind == TEST_OPT_STRING)
			*(const char **)o->value = value;
		else if (o->kind == TEST_OPT_SIZE)
			ok = test_parse_size(value, o->max_side, &wh[0], &wh[1]);
		else
			ok = test_parse_count(value, o->value);
		if (!ok) {
			fprintf(stderr, "%s: bad value '%s' for %s\n", prog, value, o->name);
			return 2;
		}
	}
	return -1;
}

/* What both pattern clients (test-pattern.c, x11-test-pattern.c) take. */
struct pattern_args {
	int size[2];
	const char *title;
	long frames; /* redraws after the first */
	bool maximized, exit_after_first_frame;
};

/* struct pattern_args' entries of a client's option table. */
#define PATTERN_OPTIONS(args, max_side) \
	{ "--size", TEST_OPT_SIZE, (args)->size, (max_side) }, \
	{ "--title", TEST_OPT_STRING, &(args)->title, 0 }, \
	{ "--frames", TEST_OPT_COUNT, &(args)->frames, 0 }, \
	{ "--maximized", TEST_OPT_FLAG, &(args)->maximized, 0 }, \
	{ "--exit-after-first-frame", TEST_OPT_FLAG, &(args)->exit_after_first_frame, 0 }

#endif
