/* See app-args.h: the apps' options, parsed from a table each. */
#include <errno.h>
#include <stdio.h>
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

static const struct app_opt *find_opt(const struct app_opt *opts, const char *name)
{
	for (const struct app_opt *o = opts; o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

/* "a or b", "a, b or c" into buf. */
static const char *choice_list(const char *const *choices, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; choices[i] && len < size; i++) {
		const char *sep = i == 0 ? "" : choices[i + 1] ? ", " : " or ";
		int n = snprintf(buf + len, size - len, "%s%s", sep, choices[i]);
		len += n > 0 ? (size_t)n : 0;
	}
	return buf;
}

/* Takes value for o; false after printing why. */
static bool take(const char *prog, const struct app_opt *o, const char *value)
{
	switch (o->kind) {
	case APP_OPT_FLAG:
		*(bool *)o->value = true;
		return true;
	case APP_OPT_LONG:
		if (app_parse_long(value, o->lo, o->hi, o->value))
			return true;
		fprintf(stderr, "%s: %s wants %ld..%ld, got '%s'\n", prog, o->name, o->lo, o->hi, value);
		return false;
	case APP_OPT_SIZE: {
		struct app_size *size = o->value;
		if (app_parse_size(value, &size->width, &size->height))
			return true;
		fprintf(stderr, "%s: impossible size '%s' (want WxH, 1..16384)\n", prog, value);
		return false;
	}
	case APP_OPT_STRING:
		*(const char **)o->value = value;
		return true;
	case APP_OPT_CHOICE:
		for (int i = 0; o->choices[i]; i++)
			if (strcmp(value, o->choices[i]) == 0) {
				*(const char **)o->value = o->choices[i];
				return true;
			}
		char want[128];
		fprintf(stderr, "%s: %s wants %s, got '%s'\n", prog, o->name,
		        choice_list(o->choices, want, sizeof(want)), value);
		return false;
	}
	return false;
}

int app_parse_args(const char *prog, const char *usage, int argc, char **argv,
                   const struct app_opt *opts)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		}
		const struct app_opt *o = find_opt(opts, a);
		bool flag = o && o->kind == APP_OPT_FLAG;
		if (!o || (!flag && !v)) {
			fprintf(stderr, "%s: unknown option or missing value: '%s'\n%s", prog, a, usage);
			return 2;
		}
		if (!take(prog, o, v))
			return 2;
		if (!flag)
			i++;
	}
	return APP_ARGS_RUN;
}

bool app_t0_from_env(const char *prog, uint64_t start_ns, uint64_t *t0)
{
	const char *env = getenv("DUET_T0_NS");
	*t0 = 0;
	if (!env || !*env)
		return true;
	char *end;
	unsigned long long v = strtoull(env, &end, 10);
	if (*end || end == env || v == 0 || v > start_ns) {
		fprintf(stderr, "%s: DUET_T0_NS='%s' is not a CLOCK_MONOTONIC time in ns before this "
		        "process started\n", prog, env);
		return false;
	}
	*t0 = v;
	return true;
}

const char *const app_backend_names[] = { "wayland", "x11", NULL };
const char *const app_engine_names[] = { "gl", "sw", NULL };

void app_elm_env(const char *backend, const char *engine)
{
	if (backend)
		setenv("ELM_DISPLAY", strcmp(backend, "wayland") == 0 ? "wl" : "x11", 1);
	if (engine)
		setenv("ELM_ACCEL", strcmp(engine, "gl") == 0 ? "gl" : "none", 1);
}
