/* Command-line options for every duet app, the toolkit's and the EFL ones:
 * no toolkit here, so the EFL apps link it too. */
#ifndef DUET_APP_ARGS_H
#define DUET_APP_ARGS_H

#include <stdbool.h>
#include <stdint.h>

/* "WxH" with both in 1..16384. */
bool app_parse_size(const char *s, int *w, int *h);
/* Decimal in lo..hi. */
bool app_parse_long(const char *s, long lo, long hi, long *out);

struct app_size {
	int width, height;
};

enum app_opt_kind {
	APP_OPT_FLAG,   /* bool, set when given */
	APP_OPT_LONG,   /* long in lo..hi */
	APP_OPT_SIZE,   /* struct app_size, WxH as app_parse_size takes it */
	APP_OPT_STRING, /* const char *, any value (the app checks it) */
	APP_OPT_CHOICE, /* const char *, one of choices */
};

/* One option of an app: its name ("--size"), what it takes and where the
 * value goes. */
struct app_opt {
	const char *name;
	enum app_opt_kind kind;
	void *value;
	long lo, hi;                /* APP_OPT_LONG */
	const char *const *choices; /* APP_OPT_CHOICE, NULL-terminated */
};

/* Table rows; each checks that value points to what its kind stores. */
#define APP_FLAG(n, v) { .name = (n), .kind = APP_OPT_FLAG, .value = (bool *){ (v) } }
#define APP_LONG(n, v, l, h) \
	{ .name = (n), .kind = APP_OPT_LONG, .value = (long *){ (v) }, .lo = (l), .hi = (h) }
#define APP_SIZE(n, v) { .name = (n), .kind = APP_OPT_SIZE, .value = (struct app_size *){ (v) } }
#define APP_STRING(n, v) { .name = (n), .kind = APP_OPT_STRING, .value = (const char **){ (v) } }
#define APP_CHOICE(n, v, c) \
	{ .name = (n), .kind = APP_OPT_CHOICE, .value = (const char **){ (v) }, .choices = (c) }
#define APP_OPT_END { .name = NULL }

/* What app_parse_args returns when the app goes on; otherwise it returns
 * the exit status: 0 after printing usage for --help or -h, 2 after
 * printing what was wrong ("PROG: ...") to stderr. */
#define APP_ARGS_RUN (-1)

/* Parses argv[1..argc) by opts, a table ended by a NULL name. */
int app_parse_args(const char *prog, const char *usage, int argc, char **argv,
                   const struct app_opt *opts);

/* The EFL apps take the toolkit apps' --backend and --engine
 * (APP_CHOICE rows over these) and hand them to Elementary: ELM_DISPLAY
 * wl|x11, ELM_ACCEL gl|none; NULL leaves Elementary's choice. */
extern const char *const app_backend_names[]; /* wayland, x11 */
extern const char *const app_engine_names[];  /* gl, sw */
void app_elm_env(const char *backend, const char *engine);

/* $DUET_T0_NS, the launcher's CLOCK_MONOTONIC just before it forked this
 * app, into *t0 (0 when unset). False after printing why when it is not a
 * time before start_ns (when the app started). */
bool app_t0_from_env(const char *prog, uint64_t start_ns, uint64_t *t0);

#endif
