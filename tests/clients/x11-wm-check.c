/* duet-x11-wm-check: asks the window manager for what a client can tell
 * and checks the answers; the X11 side of tests/integration/
 * test_xwm_icccm.py and test_xwm_control.py.
 *
 * Each mode prints what it saw on stdout and exits 0 when the WM behaved
 * as the ICCCM / EWMH (or docs/xwm-control.md) say, 1 when it did not
 * (the reason on stderr), 2 on bad usage. Modes: see usage().
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xcb/xcb.h>

#define CHECK_CLASS "duet-wm-check"

struct check {
	xcb_connection_t *conn;
	xcb_screen_t *screen;
	xcb_window_t root;
};

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));

#include <stdarg.h>
static int fail(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "duet-x11-wm-check: FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static xcb_atom_t intern(struct check *c, const char *name)
{
	xcb_intern_atom_reply_t *r = xcb_intern_atom_reply(
		c->conn, xcb_intern_atom(c->conn, 0, (uint16_t)strlen(name), name), NULL);
	xcb_atom_t atom = r ? r->atom : XCB_ATOM_NONE;
	free(r);
	return atom;
}

static void round_trip(struct check *c)
{
	free(xcb_get_input_focus_reply(c->conn, xcb_get_input_focus(c->conn), NULL));
}

/* Waits up to timeout_s for an event pred accepts (freed by the caller);
 * other events are dropped. */
static xcb_generic_event_t *wait_event(struct check *c, double timeout_s,
                                       bool (*pred)(xcb_generic_event_t *, void *), void *data)
{
	double deadline = now_s() + timeout_s;
	struct pollfd pfd = { .fd = xcb_get_file_descriptor(c->conn), .events = POLLIN };

	xcb_flush(c->conn);
	for (;;) {
		xcb_generic_event_t *ev;
		while ((ev = xcb_poll_for_event(c->conn))) {
			if (pred(ev, data))
				return ev;
			free(ev);
		}
		if (xcb_connection_has_error(c->conn))
			return NULL;
		double left = deadline - now_s();
		if (left <= 0)
			return NULL;
		poll(&pfd, 1, (int)(left * 1000) + 1);
	}
}

/* ------------------------------------------------- _DUET_SCREENSHOT */

struct answer {
	xcb_atom_t type;
	xcb_window_t window;
	uint32_t cookie;
};

static bool is_answer(xcb_generic_event_t *ev, void *data)
{
	struct answer *a = data;
	xcb_client_message_event_t *cm = (xcb_client_message_event_t *)ev;
	return (ev->response_type & 0x7f) == XCB_CLIENT_MESSAGE && cm->type == a->type &&
	       cm->window == a->window && cm->data.data32[1] == a->cookie;
}

/* Sends _DUET_SCREENSHOT with _DUET_SCREENSHOT_PATH set to exactly path,
 * as any X client could, and prints "answer N" (data.l[2]) or
 * "no answer". */
static int mode_screenshot(struct check *c, const char *path)
{
	xcb_window_t reply = xcb_generate_id(c->conn);
	xcb_create_window(c->conn, XCB_COPY_FROM_PARENT, reply, c->root, -1, -1, 1, 1, 0,
	                  XCB_WINDOW_CLASS_INPUT_ONLY, XCB_COPY_FROM_PARENT, 0, NULL);
	xcb_change_property(c->conn, XCB_PROP_MODE_REPLACE, reply,
	                    intern(c, "_DUET_SCREENSHOT_PATH"), XCB_ATOM_STRING, 8,
	                    (uint32_t)strlen(path), path);
	struct answer a = { intern(c, "_DUET_SYNC"), reply, 0x5eed };
	xcb_client_message_event_t ev = {
		.response_type = XCB_CLIENT_MESSAGE,
		.format = 32,
		.window = c->root,
		.type = intern(c, "_DUET_SCREENSHOT"),
		.data.data32 = { reply, a.cookie, 0, 0, 0 },
	};
	xcb_send_event(c->conn, 0, c->root,
	               XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
	               (const char *)&ev);
	xcb_generic_event_t *got = wait_event(c, 10, is_answer, &a);
	if (!got) {
		printf("no answer\n");
		return 0;
	}
	printf("answer %u\n", ((xcb_client_message_event_t *)got)->data.data32[2]);
	free(got);
	return 0;
}

/* ----------------------------------------------------------------- main */

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: duet-x11-wm-check MODE [ARG]\n"
	        "  screenshot PATH   send _DUET_SCREENSHOT naming PATH; print the answer\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	struct check c = { 0 };
	int screen_num = 0;
	c.conn = xcb_connect(NULL, &screen_num);
	if (xcb_connection_has_error(c.conn)) {
		fprintf(stderr, "duet-x11-wm-check: cannot connect to the X display\n");
		return 1;
	}
	xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(c.conn));
	for (int i = 0; i < screen_num && it.rem; i++)
		xcb_screen_next(&it);
	c.screen = it.data;
	c.root = c.screen->root;

	const char *mode = argv[1];
	int ret;
	if (strcmp(mode, "screenshot") == 0 && argc == 3) {
		ret = mode_screenshot(&c, argv[2]);
	} else {
		usage(stderr);
		ret = 2;
	}
	round_trip(&c);
	xcb_disconnect(c.conn);
	return ret;
}
