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

#include <xcb/composite.h>
#include <xcb/xcb.h>

#include "x11-common.h"

#define CHECK_CLASS "duet-wm-check"

struct check {
	xcb_connection_t *conn;
	xcb_screen_t *screen;
	xcb_window_t root;
};

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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
static int mode_screenshot(struct check *c, char **args)
{
	const char *path = args[0];
	xcb_window_t reply = xcb_generate_id(c->conn);
	xcb_create_window(c->conn, XCB_COPY_FROM_PARENT, reply, c->root, -1, -1, 1, 1, 0,
	                  XCB_WINDOW_CLASS_INPUT_ONLY, XCB_COPY_FROM_PARENT, 0, NULL);
	xcb_change_property(c->conn, XCB_PROP_MODE_REPLACE, reply,
	                    x11_intern(c->conn, "_DUET_SCREENSHOT_PATH"), XCB_ATOM_STRING, 8,
	                    (uint32_t)strlen(path), path);
	struct answer a = { x11_intern(c->conn, "_DUET_SYNC"), reply, 0x5eed };
	xcb_client_message_event_t ev = {
		.response_type = XCB_CLIENT_MESSAGE,
		.format = 32,
		.window = c->root,
		.type = x11_intern(c->conn, "_DUET_SCREENSHOT"),
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


/* ------------------------------------------------------------ helpers */

/* _DUET_SYNC: every event the WM got before this one is handled. */
static bool wm_sync(struct check *c)
{
	xcb_window_t reply = xcb_generate_id(c->conn);
	xcb_create_window(c->conn, XCB_COPY_FROM_PARENT, reply, c->root, -1, -1, 1, 1, 0,
	                  XCB_WINDOW_CLASS_INPUT_ONLY, XCB_COPY_FROM_PARENT, 0, NULL);
	struct answer a = { x11_intern(c->conn, "_DUET_SYNC"), reply, 0x51c };
	xcb_client_message_event_t ev = {
		.response_type = XCB_CLIENT_MESSAGE, .format = 32, .window = c->root,
		.type = a.type, .data.data32 = { reply, a.cookie, 0, 0, 0 },
	};
	x11_round_trip(c->conn); /* our earlier requests reach the WM's queue first */
	xcb_send_event(c->conn, 0, c->root,
	               XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
	               (const char *)&ev);
	xcb_generic_event_t *got = wait_event(c, 10, is_answer, &a);
	free(got);
	xcb_destroy_window(c->conn, reply);
	return got != NULL;
}

static xcb_window_t make_window(struct check *c, int x, int y, int w, int h, uint32_t pixel,
                                bool override, uint32_t event_mask)
{
	xcb_window_t win = xcb_generate_id(c->conn);
	uint32_t values[] = { pixel, override, event_mask };
	xcb_create_window(c->conn, XCB_COPY_FROM_PARENT, win, c->root, (int16_t)x, (int16_t)y,
	                  (uint16_t)w, (uint16_t)h, 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
	                  XCB_COPY_FROM_PARENT,
	                  XCB_CW_BACK_PIXEL | XCB_CW_OVERRIDE_REDIRECT | XCB_CW_EVENT_MASK, values);
	static const char cls[] = CHECK_CLASS "\0" CHECK_CLASS;
	xcb_change_property(c->conn, XCB_PROP_MODE_REPLACE, win, XCB_ATOM_WM_CLASS,
	                    XCB_ATOM_STRING, 8, sizeof(cls), cls);
	return win;
}

static uint32_t prop32(struct check *c, xcb_window_t w, xcb_atom_t prop, int index)
{
	xcb_get_property_reply_t *r = xcb_get_property_reply(c->conn,
		xcb_get_property(c->conn, 0, w, prop, XCB_GET_PROPERTY_TYPE_ANY, 0, 64), NULL);
	uint32_t v = 0;
	if (r && r->format == 32 && xcb_get_property_value_length(r) >= 4 * (index + 1))
		v = ((uint32_t *)xcb_get_property_value(r))[index];
	free(r);
	return v;
}

static bool list_has(struct check *c, xcb_window_t w, xcb_atom_t prop, uint32_t value)
{
	xcb_get_property_reply_t *r = xcb_get_property_reply(c->conn,
		xcb_get_property(c->conn, 0, w, prop, XCB_GET_PROPERTY_TYPE_ANY, 0, 1024), NULL);
	bool has = false;
	if (r && r->format == 32) {
		const uint32_t *v = xcb_get_property_value(r);
		for (int i = 0; i < xcb_get_property_value_length(r) / 4; i++)
			has = has || v[i] == value;
	}
	free(r);
	return has;
}

static uint8_t map_state(struct check *c, xcb_window_t w)
{
	xcb_get_window_attributes_reply_t *a = xcb_get_window_attributes_reply(c->conn,
		xcb_get_window_attributes(c->conn, w), NULL);
	uint8_t s = a ? a->map_state : 0xff;
	free(a);
	return s;
}

static bool root_position(struct check *c, xcb_window_t w, int *x, int *y)
{
	xcb_translate_coordinates_reply_t *t = xcb_translate_coordinates_reply(c->conn,
		xcb_translate_coordinates(c->conn, w, c->root, 0, 0), NULL);
	if (!t)
		return false;
	*x = t->dst_x;
	*y = t->dst_y;
	free(t);
	return true;
}

/* ------------------------------------------------------------- modes */

/* ICCCM 2.8: the WM owns WM_S0 (and, compositing, _NET_WM_CM_S0). */
static int mode_selections(struct check *c, char **args)
{
	const char *names[] = { "WM_S0", "_NET_WM_CM_S0" };
	for (int i = 0; i < 2; i++) {
		xcb_get_selection_owner_reply_t *r = xcb_get_selection_owner_reply(c->conn,
			xcb_get_selection_owner(c->conn, x11_intern(c->conn, names[i])), NULL);
		xcb_window_t owner = r ? r->owner : XCB_NONE;
		free(r);
		printf("%s owner 0x%x\n", names[i], owner);
		if (owner == XCB_NONE)
			return fail("nobody owns %s", names[i]);
	}
	return 0;
}

/* ICCCM 4.1.4: WM_HINTS initial_state IconicState keeps the window
 * unmapped with WM_STATE Iconic; activating it maps it, WM_STATE Normal. */
static int mode_iconic(struct check *c, char **args)
{
	xcb_window_t w = make_window(c, 0, 0, 120, 90, 0x3060c0, false, 0);
	uint32_t hints[9] = { 2 /* StateHint */, 0, 3 /* IconicState */ };
	xcb_change_property(c->conn, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_HINTS,
	                    XCB_ATOM_WM_HINTS, 32, 9, hints);
	xcb_map_window(c->conn, w);
	if (!wm_sync(c))
		return fail("no _DUET_SYNC answer");
	xcb_atom_t wm_state = x11_intern(c->conn, "WM_STATE");
	uint8_t ms = map_state(c, w);
	uint32_t state = prop32(c, w, wm_state, 0);
	bool listed = list_has(c, c->root, x11_intern(c->conn, "_NET_CLIENT_LIST"), w);
	printf("iconic: map_state %u WM_STATE %u listed %d\n", ms, state, listed);
	if (ms != XCB_MAP_STATE_UNMAPPED || state != 3 || !listed)
		return fail("a window asking to start iconic has map state %u, WM_STATE %u, "
		            "listed %d (want unmapped, 3, listed)", ms, state, listed);
	xcb_client_message_event_t ev = {
		.response_type = XCB_CLIENT_MESSAGE, .format = 32, .window = w,
		.type = x11_intern(c->conn, "_NET_ACTIVE_WINDOW"), .data.data32 = { 2, 0, 0, 0, 0 },
	};
	xcb_send_event(c->conn, 0, c->root,
	               XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
	               (const char *)&ev);
	if (!wm_sync(c))
		return fail("no _DUET_SYNC answer");
	x11_round_trip(c->conn);
	ms = map_state(c, w);
	state = prop32(c, w, wm_state, 0);
	printf("activated: map_state %u WM_STATE %u\n", ms, state);
	if (ms != XCB_MAP_STATE_VIEWABLE || state != 1)
		return fail("activating the iconic window left map state %u, WM_STATE %u", ms, state);
	return 0;
}

struct take_focus {
	xcb_window_t window;
	xcb_atom_t protocols, take_focus;
};

static bool is_take_focus(xcb_generic_event_t *ev, void *data)
{
	struct take_focus *t = data;
	xcb_client_message_event_t *cm = (xcb_client_message_event_t *)ev;
	return (ev->response_type & 0x7f) == XCB_CLIENT_MESSAGE && cm->window == t->window &&
	       cm->type == t->protocols && cm->data.data32[0] == t->take_focus;
}

static bool is_property_notify(xcb_generic_event_t *ev, void *data)
{
	return (ev->response_type & 0x7f) == XCB_PROPERTY_NOTIFY &&
	       ((xcb_property_notify_event_t *)ev)->window == *(xcb_window_t *)data;
}

/* ICCCM 4.1.7: focus is given with the time of the event that caused it,
 * never CurrentTime; for a map, the server's time then: no earlier than a
 * time the server reported to us before we mapped. */
static int mode_focus_time(struct check *c, char **args)
{
	xcb_window_t w = make_window(c, 0, 0, 120, 90, 0x40a040, false,
	                             XCB_EVENT_MASK_PROPERTY_CHANGE);
	struct take_focus t = { w, x11_intern(c->conn, "WM_PROTOCOLS"),
	                        x11_intern(c->conn, "WM_TAKE_FOCUS") };
	xcb_change_property(c->conn, XCB_PROP_MODE_REPLACE, w, t.protocols, XCB_ATOM_ATOM, 32, 1,
	                    &t.take_focus);
	/* Let the server's clock move past anything the WM saw. */
	usleep(300000);
	xcb_change_property(c->conn, XCB_PROP_MODE_APPEND, w, XCB_ATOM_WM_NAME, XCB_ATOM_STRING,
	                    8, 0, NULL);
	xcb_generic_event_t *pn = wait_event(c, 10, is_property_notify, &w);
	if (!pn)
		return fail("no PropertyNotify for our own window");
	xcb_timestamp_t before = ((xcb_property_notify_event_t *)pn)->time;
	free(pn);
	xcb_map_window(c->conn, w);
	xcb_generic_event_t *got = wait_event(c, 10, is_take_focus, &t);
	if (!got)
		return fail("no WM_TAKE_FOCUS after the map");
	xcb_timestamp_t time = ((xcb_client_message_event_t *)got)->data.data32[1];
	free(got);
	printf("WM_TAKE_FOCUS time %u, server time before the map %u\n", time, before);
	if (time == XCB_CURRENT_TIME)
		return fail("focus given with CurrentTime");
	if ((int32_t)(time - before) < 0)
		return fail("focus given with time %u, older than %u the server reported before "
		            "the map: a stale timestamp", time, before);
	return 0;
}

/* A dialog (_NET_WM_WINDOW_TYPE_DIALOG, WM_TRANSIENT_FOR) is centered
 * over its parent, moved off the screen's center first. */
static int mode_dialog(struct check *c, char **args)
{
	xcb_window_t parent = make_window(c, 0, 0, 400, 300, 0x808080, false, 0);
	xcb_map_window(c->conn, parent);
	if (!wm_sync(c))
		return fail("no _DUET_SYNC answer");
	xcb_client_message_event_t mv = {
		.response_type = XCB_CLIENT_MESSAGE, .format = 32, .window = parent,
		.type = x11_intern(c->conn, "_NET_MOVERESIZE_WINDOW"),
		.data.data32 = { (1u << 8) | (1u << 9) | (2u << 12), 10, 20, 0, 0 },
	};
	xcb_send_event(c->conn, 0, c->root,
	               XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
	               (const char *)&mv);
	if (!wm_sync(c))
		return fail("no _DUET_SYNC answer");
	int px, py;
	x11_round_trip(c->conn);
	if (!root_position(c, parent, &px, &py) || px != 10 || py != 20)
		return fail("the parent did not move to 10,20");
	xcb_window_t dialog = make_window(c, 0, 0, 100, 80, 0xc0c040, false, 0);
	xcb_atom_t type = x11_intern(c->conn, "_NET_WM_WINDOW_TYPE_DIALOG");
	xcb_change_property(c->conn, XCB_PROP_MODE_REPLACE, dialog,
	                    x11_intern(c->conn, "_NET_WM_WINDOW_TYPE"), XCB_ATOM_ATOM, 32, 1,
	                    &type);
	xcb_change_property(c->conn, XCB_PROP_MODE_REPLACE, dialog, XCB_ATOM_WM_TRANSIENT_FOR,
	                    XCB_ATOM_WINDOW, 32, 1, &parent);
	xcb_map_window(c->conn, dialog);
	if (!wm_sync(c))
		return fail("no _DUET_SYNC answer");
	x11_round_trip(c->conn);
	int dx, dy;
	if (!root_position(c, dialog, &dx, &dy))
		return fail("the dialog is gone");
	printf("parent at %d,%d 400x300, dialog at %d,%d 100x80\n", px, py, dx, dy);
	if (dx != 10 + 150 || dy != 20 + 110)
		return fail("the dialog is at %d,%d, not centered over its parent (%d,%d)", dx, dy,
		            160, 130);
	return 0;
}

/* A window restacked relative to a sibling the WM does not track: an
 * override-redirect window (red, 100x100, centered) over a managed one
 * (grey, 400x300) stacks itself above the composite overlay window, which
 * is above everything the WM draws: it must stay on top, not drop to the
 * bottom. Prints "ready" and holds the windows until killed. */
static int mode_above_overlay(struct check *c, char **args)
{
	int sw = c->screen->width_in_pixels, sh = c->screen->height_in_pixels;
	xcb_window_t m = make_window(c, 0, 0, 400, 300, 0x808080, false, 0);
	xcb_map_window(c->conn, m);
	if (!wm_sync(c))
		return fail("no _DUET_SYNC answer");
	xcb_window_t r = make_window(c, sw / 2 - 50, sh / 2 - 50, 100, 100, 0xff0000, true, 0);
	xcb_map_window(c->conn, r);
	if (!wm_sync(c))
		return fail("no _DUET_SYNC answer");
	xcb_composite_get_overlay_window_reply_t *ov = xcb_composite_get_overlay_window_reply(
		c->conn, xcb_composite_get_overlay_window(c->conn, c->root), NULL);
	if (!ov)
		return fail("no composite overlay window");
	uint32_t values[] = { ov->overlay_win, XCB_STACK_MODE_ABOVE };
	xcb_void_cookie_t ck = xcb_configure_window_checked(c->conn, r,
		XCB_CONFIG_WINDOW_SIBLING | XCB_CONFIG_WINDOW_STACK_MODE, values);
	xcb_generic_error_t *err = xcb_request_check(c->conn, ck);
	if (err) {
		free(err);
		return fail("stacking above the overlay window 0x%x failed", ov->overlay_win);
	}
	free(ov);
	if (!wm_sync(c))
		return fail("no _DUET_SYNC answer");
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* Windows reparented to the root by their own client are top-level
 * windows like any other: a normal one (green, 80x60) is managed and
 * composited, an override-redirect one (blue, 60x40 at 20,20) composited
 * where it is. Both start as mapped children of a managed grey window.
 * Prints "ready" and holds the windows until killed. */
static int mode_reparent_root(struct check *c, char **args)
{
	xcb_window_t p = make_window(c, 0, 0, 400, 300, 0x808080, false, 0);
	xcb_window_t kids[2];
	uint32_t pixels[2] = { 0x00ff00, 0x0000ff };
	for (int i = 0; i < 2; i++) {
		kids[i] = xcb_generate_id(c->conn);
		uint32_t values[] = { pixels[i], (uint32_t)i };
		xcb_create_window(c->conn, XCB_COPY_FROM_PARENT, kids[i], p, 10, 10,
		                  (uint16_t)(i ? 60 : 80), (uint16_t)(i ? 40 : 60), 0,
		                  XCB_WINDOW_CLASS_INPUT_OUTPUT, XCB_COPY_FROM_PARENT,
		                  XCB_CW_BACK_PIXEL | XCB_CW_OVERRIDE_REDIRECT, values);
		xcb_map_window(c->conn, kids[i]);
	}
	xcb_map_window(c->conn, p);
	if (!wm_sync(c))
		return fail("no _DUET_SYNC answer");
	xcb_reparent_window(c->conn, kids[0], c->root, 0, 0);
	xcb_reparent_window(c->conn, kids[1], c->root, 20, 20);
	if (!wm_sync(c))
		return fail("no _DUET_SYNC answer");
	x11_round_trip(c->conn);
	printf("ready 0x%x 0x%x\n", kids[0], kids[1]);
	fflush(stdout);
	for (;;)
		pause();
}

/* n managed windows of w x h (up to 32767 a side) with a background, for
 * the texture budgets; prints "mapped N" once the WM has handled them and
 * holds them until killed. */
static int mode_windows(struct check *c, char **args)
{
	const char *count = args[0], *size = args[1];
	int n = atoi(count), w = 0, h = 0;
	if (n < 1 || n > 64 || sscanf(size, "%dx%d", &w, &h) != 2 || w < 1 || h < 1 ||
	    w > 32767 || h > 32767)
		return fail("bad windows arguments '%s' '%s'", count, size);
	for (int i = 0; i < n; i++) {
		xcb_window_t win = make_window(c, 0, 0, w, h, 0x202080 + (uint32_t)i * 0x10, false, 0);
		xcb_map_window(c->conn, win);
	}
	if (!wm_sync(c))
		return fail("no _DUET_SYNC answer");
	printf("mapped %d\n", n);
	fflush(stdout);
	for (;;)
		pause();
}

static void send_resize(struct check *c, xcb_window_t w, uint32_t width, uint32_t height)
{
	xcb_client_message_event_t ev = {
		.response_type = XCB_CLIENT_MESSAGE, .format = 32, .window = w,
		.type = x11_intern(c->conn, "_DUET_RESIZE"),
		.data.data32 = { width, height, 0, 0, 0 },
	};
	xcb_send_event(c->conn, 0, c->root,
	               XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
	               (const char *)&ev);
}

/* A ConfigureNotify the server sent before it processed the WM's latest
 * configure must not overwrite the size the WM asked for. In one batch:
 * resize to 300x200 (the WM configures A), a title change (the WM reads
 * it), resize to 400x300 (the WM first waits for that read, which lets
 * A's ConfigureNotify in behind it, then configures B), and a
 * ConfigureRequest for the height only (250), merged by the WM with the
 * width it holds: 400 unless A's stale notify replaced it. */
static int mode_stale_configure(struct check *c, char **args)
{
	xcb_window_t w = make_window(c, 0, 0, 200, 150, 0x806040, false, 0);
	xcb_map_window(c->conn, w);
	if (!wm_sync(c))
		return fail("no _DUET_SYNC answer");
	x11_intern(c->conn, "_DUET_RESIZE");
	send_resize(c, w, 300, 200);
	xcb_change_property(c->conn, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_NAME, XCB_ATOM_STRING,
	                    8, 5, "title");
	send_resize(c, w, 400, 300);
	uint32_t height = 250;
	xcb_configure_window(c->conn, w, XCB_CONFIG_WINDOW_HEIGHT, &height);
	xcb_flush(c->conn);
	usleep(200000);
	if (!wm_sync(c))
		return fail("no _DUET_SYNC answer");
	x11_round_trip(c->conn);
	xcb_get_geometry_reply_t *g = xcb_get_geometry_reply(c->conn,
		xcb_get_geometry(c->conn, w), NULL);
	if (!g)
		return fail("the window is gone");
	printf("size %ux%u\n", g->width, g->height);
	int gw = g->width, gh = g->height;
	free(g);
	if (gw != 400 || gh != 250)
		return fail("the window is %dx%d, want 400x250: a stale ConfigureNotify replaced "
		            "the size the WM had asked for", gw, gh);
	return 0;
}

/* ----------------------------------------------------------------- main */

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: duet-x11-wm-check MODE [ARG]\n"
	        "  screenshot PATH   send _DUET_SCREENSHOT naming PATH; print the answer\n"
	        "  selections        someone owns WM_S0 and _NET_WM_CM_S0\n"
	        "  iconic            WM_HINTS IconicState: unmapped, WM_STATE Iconic, until\n"
	        "                    activated\n"
	        "  focus-time        WM_TAKE_FOCUS carries a current server time\n"
	        "  dialog            a dialog is centered over its transient-for parent\n"
	        "  stale-configure   a ConfigureNotify older than the WM's configure does not\n"
	        "                    undo it\n"
	        "  windows N WxH     N managed windows of WxH; prints mapped N, holds\n"
	        "  reparent-root     windows reparented to the root by their client; prints\n"
	        "                    ready, holds until killed\n"
	        "  above-overlay     an override-redirect window stacks itself above the\n"
	        "                    composite overlay; prints ready, holds until killed\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	struct check c = { 0 };
	c.conn = x11_connect(NULL, &c.screen, NULL);
	if (!c.conn) {
		fprintf(stderr, "duet-x11-wm-check: cannot connect to the X display\n");
		return 1;
	}
	c.root = c.screen->root;

	/* Each mode gets the words after its name, nargs of them; those
	 * without any ignore what follows. */
	static const struct mode {
		const char *name;
		int nargs;
		int (*run)(struct check *c, char **args);
	} modes[] = {
		{ "screenshot", 1, mode_screenshot },
		{ "selections", 0, mode_selections },
		{ "iconic", 0, mode_iconic },
		{ "focus-time", 0, mode_focus_time },
		{ "stale-configure", 0, mode_stale_configure },
		{ "windows", 2, mode_windows },
		{ "reparent-root", 0, mode_reparent_root },
		{ "above-overlay", 0, mode_above_overlay },
		{ "dialog", 0, mode_dialog },
	};
	const struct mode *m = NULL;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]) && !m; i++)
		if (strcmp(argv[1], modes[i].name) == 0 &&
		    (!modes[i].nargs || argc == 2 + modes[i].nargs))
			m = &modes[i];
	int ret = 2;
	if (m)
		ret = m->run(&c, argv + 2);
	else
		usage(stderr);
	x11_round_trip(c.conn);
	xcb_disconnect(c.conn);
	return ret;
}
