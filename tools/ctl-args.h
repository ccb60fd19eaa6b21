/* Argument parsing and timing shared by duet-testctl and duet-xctl, so the
 * Wayland and X11 control tools accept numbers the same way. The includer
 * defines CTL_PROG, the tool's name in its messages. */
#ifndef DUET_CTL_ARGS_H
#define DUET_CTL_ARGS_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A whole-string integer (decimal, 0x hex or 0 octal) within [min, max]. */
static inline bool ctl_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* A whole-string number within [min, max]. */
static inline bool ctl_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* One integer argument of a command, with the message bad_usage prints
 * (given the argument) when it is not a whole number within [min, max]. */
struct ctl_arg {
	const char *bad;
	long min, max;
};

/* Parses args[0..n) by spec into out; returns the index of the first bad
 * one, or -1 when all are good. */
static inline int ctl_parse_args(char **args, const struct ctl_arg *spec, int n, long *out)
{
	for (int i = 0; i < n; i++)
		if (!ctl_parse_long(args[i], spec[i].min, spec[i].max, &out[i]))
			return i;
	return -1;
}

/* What both tools accept as a window and a position, so that a command
 * reads the same to both; X window ids are never 0 (min 1 in duet-xctl). */
#define CTL_ARG_ID(min) { "bad window id '%s'", (min), UINT32_MAX }
#define CTL_ARG_X { "bad x '%s' (-32768 to 32767)", -32768, 32767 }
#define CTL_ARG_Y { "bad y '%s' (-32768 to 32767)", -32768, 32767 }
/* A width or height from 1 to max (a literal, as it is in the message). */
#define CTL_ARG_SIZE(what, max) { "bad " what " '%s' (1 to " #max ")", 1, max }

/* Whether argv[*i] is option name, as "NAME VALUE" (then *i moves on to
 * VALUE) or "NAME=VALUE"; *value is NULL when VALUE is missing. */
static inline bool ctl_option(int argc, char **argv, int *i, const char *name,
                              const char **value)
{
	size_t len = strlen(name);
	if (strncmp(argv[*i], name, len) != 0)
		return false;
	if (argv[*i][len] == '=') {
		*value = argv[*i] + len + 1;
		return true;
	}
	if (argv[*i][len] != '\0')
		return false;
	*value = *i + 1 < argc ? argv[++*i] : NULL;
	return true;
}

/* The exit status of bad usage, told before any connection is made. */
#define CTL_EXIT_USAGE 2

static inline int ctl_bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, CTL_PROG ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '" CTL_PROG " --help'.\n");
	return CTL_EXIT_USAGE;
}

/* An option before the command, read by ctl_option into *value; missing
 * is bad_usage's message (given the option) when its VALUE is missing. */
struct ctl_opt {
	const char *name, *missing;
	const char **value;
};

/* Reads the options before COMMAND: the words from argv[1] on that start
 * with '-' ('-' alone is a command), by opts, and -h or --help (usage on
 * stdout). Returns -1 with *command the index of COMMAND, else the status
 * to exit with. */
static inline int ctl_read_options(int argc, char **argv, const struct ctl_opt *opts, size_t n,
                                   void (*usage)(FILE *out), int *command)
{
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		}
		size_t k = 0;
		while (k < n && !ctl_option(argc, argv, &i, opts[k].name, opts[k].value))
			k++;
		if (k == n)
			return ctl_bad_usage("unknown option '%s'", argv[i]);
		if (!*opts[k].value)
			return ctl_bad_usage(opts[k].missing, argv[i]);
	}
	if (i >= argc)
		return ctl_bad_usage("%s", "missing COMMAND");
	*command = i;
	return -1;
}

/* For a command's run function, with its argc and argv (argv[0] the
 * command): exactly n arguments, else the synopsis. */
#define CTL_NEED_ARGS(n, synopsis) \
	do { \
		if (argc != (n) + 1) \
			return ctl_bad_usage("usage: " CTL_PROG " %s", synopsis); \
	} while (0)

/* argv[1..n] by spec into out; a bad one ends the command. */
#define CTL_PARSE_ARGS(spec, n, out) \
	do { \
		int bad_ = ctl_parse_args(argv + 1, spec, n, out); \
		if (bad_ >= 0) \
			return ctl_bad_usage((spec)[bad_].bad, argv[bad_ + 1]); \
	} while (0)

/* A command of exactly n integer arguments: their count, then each by
 * spec into out; when the arguments are only checked (ctl NULL) the
 * command ends there, with success. */
#define CTL_COMMAND_ARGS(n, synopsis, spec, out) \
	do { \
		CTL_NEED_ARGS(n, synopsis); \
		CTL_PARSE_ARGS(spec, n, out); \
		if (!ctl) \
			return 0; \
	} while (0)

static inline double ctl_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
