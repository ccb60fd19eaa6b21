/* duet-x11-sync-client: an X client that answers _NET_WM_SYNC_REQUEST
 * (basic counter) slowly, or never, to test that a window manager shows a
 * resized window only once it has been redrawn. Its window's background
 * is red, so the X server's own fill after a resize is red; the client
 * paints all of it in a colour of its width (red 0, green W mod 256, blue
 * 255), --delay-ms after it learnt of the new size, and only then sets its
 * counter to the serial the WM asked for. A screen showing red, or one
 * size's colour beyond that size, shows the window at a size its client
 * has not drawn yet. It reports on stdout:
 *   mapped W H          the first size drawn and on the server
 *   sync-request N      the WM's _NET_WM_SYNC_REQUEST with serial N
 *   answered N          the counter set to N (never with --never-answer),
 *                       right after the drawing at the new size
 *   drawn W H           that drawing has reached the server
 * and exits 0 on WM_DELETE_WINDOW. */
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xcb/sync.h>
#include <xcb/xcb.h>

#include "client-args.h"
#include "x11-common.h"

#define RED 0xff0000u

struct sync_client {
	xcb_connection_t *conn;
	xcb_window_t window;
	xcb_gcontext_t gc;
	xcb_sync_counter_t counter;
	xcb_atom_t wm_protocols, wm_delete_window, net_wm_sync_request;
	int width, height, drawn_w, drawn_h;
	int64_t pending_serial; /* asked for, not answered yet (0 none) */
	uint64_t redraw_at_ns;  /* a redraw due (0 none) */
	long delay_ms;
	bool never_answer, mapped;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fill(struct sync_client *sc, uint32_t colour)
{
	xcb_change_gc(sc->conn, sc->gc, XCB_GC_FOREGROUND, &colour);
	xcb_rectangle_t r = { 0, 0, (uint16_t)sc->width, (uint16_t)sc->height };
	xcb_poly_fill_rectangle(sc->conn, sc->window, sc->gc, 1, &r);
}

/* Redraws at the current size, then answers the request it had: the
 * drawing goes first on the connection, so the WM sees it before the
 * counter. */
static void redraw(struct sync_client *sc)
{
	fill(sc, 0x0000ffu | ((uint32_t)sc->width & 0xff) << 8);
	sc->redraw_at_ns = 0;
	if (sc->pending_serial && !sc->never_answer) {
		int64_t v = sc->pending_serial;
		xcb_sync_int64_t value = { .hi = (int32_t)(v >> 32), .lo = (uint32_t)v };
		xcb_sync_set_counter(sc->conn, sc->counter, value);
		printf("answered %lld\n", (long long)v);
	}
	sc->pending_serial = 0;
	xcb_flush(sc->conn);
	if (sc->drawn_w != sc->width || sc->drawn_h != sc->height) {
		sc->drawn_w = sc->width;
		sc->drawn_h = sc->height;
		if (sc->mapped) {
			x11_round_trip(sc->conn);
			printf("drawn %d %d\n", sc->width, sc->height);
		}
	}
	fflush(stdout);
}

static void schedule_redraw(struct sync_client *sc)
{
	if (!sc->redraw_at_ns)
		sc->redraw_at_ns = now_ns() + (uint64_t)sc->delay_ms * 1000000ull;
}

/* false: the WM asked it to close. */
static bool handle_event(struct sync_client *sc, xcb_generic_event_t *ev)
{
	switch (ev->response_type & 0x7f) {
	case XCB_EXPOSE:
		if (!sc->mapped) {
			redraw(sc);
			x11_round_trip(sc->conn);
			sc->mapped = true;
			printf("mapped %d %d\n", sc->width, sc->height);
			fflush(stdout);
		} else if (!sc->redraw_at_ns) {
			redraw(sc);
		}
		break;
	case XCB_CONFIGURE_NOTIFY: {
		xcb_configure_notify_event_t *c = (xcb_configure_notify_event_t *)ev;
		if (c->window == sc->window && (c->width != sc->width || c->height != sc->height)) {
			sc->width = c->width;
			sc->height = c->height;
			schedule_redraw(sc);
		}
		break;
	}
	case XCB_CLIENT_MESSAGE: {
		xcb_client_message_event_t *m = (xcb_client_message_event_t *)ev;
		if (m->type != sc->wm_protocols || m->format != 32)
			break;
		if (m->data.data32[0] == sc->wm_delete_window)
			return false;
		if (m->data.data32[0] == sc->net_wm_sync_request) {
			sc->pending_serial = (int64_t)((uint64_t)m->data.data32[3] << 32 |
			                               m->data.data32[2]);
			printf("sync-request %lld\n", (long long)sc->pending_serial);
			fflush(stdout);
			/* Answered by the redraw its ConfigureNotify brings (or
			 * at once, when the size does not change). */
			schedule_redraw(sc);
		}
		break;
	}
	}
	return true;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: duet-x11-sync-client [--size WxH] [--delay-ms N] [--never-answer]\n");
}

int main(int argc, char **argv)
{
	struct sync_client sc = { .delay_ms = 0 };
	int size[2] = { 200, 150 };
	const struct test_option options[] = {
		{ "--size", TEST_OPT_SIZE, size, 4096 },
		{ "--delay-ms", TEST_OPT_COUNT, &sc.delay_ms, 0 },
		{ "--never-answer", TEST_OPT_FLAG, &sc.never_answer, 0 },
	};
	int status = test_parse_options("duet-x11-sync-client", argc, argv, options,
	                                sizeof(options) / sizeof(options[0]), usage);
	if (status >= 0)
		return status;
	sc.width = size[0];
	sc.height = size[1];
	xcb_screen_t *screen;
	sc.conn = x11_connect(NULL, &screen, NULL);
	if (!sc.conn) {
		fprintf(stderr, "duet-x11-sync-client: cannot connect to the X display\n");
		return 1;
	}
	xcb_sync_initialize_reply_t *init = xcb_sync_initialize_reply(sc.conn,
		xcb_sync_initialize(sc.conn, 3, 1), NULL);
	if (!init) {
		fprintf(stderr, "duet-x11-sync-client: no SYNC extension\n");
		xcb_disconnect(sc.conn);
		return 1;
	}
	free(init);
	sc.wm_protocols = x11_intern(sc.conn, "WM_PROTOCOLS");
	sc.wm_delete_window = x11_intern(sc.conn, "WM_DELETE_WINDOW");
	sc.net_wm_sync_request = x11_intern(sc.conn, "_NET_WM_SYNC_REQUEST");
	xcb_atom_t counter_atom = x11_intern(sc.conn, "_NET_WM_SYNC_REQUEST_COUNTER");

	sc.window = xcb_generate_id(sc.conn);
	uint32_t values[] = { RED, XCB_EVENT_MASK_EXPOSURE | XCB_EVENT_MASK_STRUCTURE_NOTIFY };
	xcb_create_window(sc.conn, XCB_COPY_FROM_PARENT, sc.window, screen->root, 0, 0,
	                  (uint16_t)sc.width, (uint16_t)sc.height, 0,
	                  XCB_WINDOW_CLASS_INPUT_OUTPUT, screen->root_visual,
	                  XCB_CW_BACK_PIXEL | XCB_CW_EVENT_MASK, values);
	sc.gc = xcb_generate_id(sc.conn);
	xcb_create_gc(sc.conn, sc.gc, sc.window, 0, NULL);
	sc.counter = xcb_generate_id(sc.conn);
	xcb_sync_int64_t zero = { 0, 0 };
	xcb_sync_create_counter(sc.conn, sc.counter, zero);
	xcb_atom_t protocols[] = { sc.wm_delete_window, sc.net_wm_sync_request };
	xcb_change_property(sc.conn, XCB_PROP_MODE_REPLACE, sc.window, sc.wm_protocols,
	                    XCB_ATOM_ATOM, 32, 2, protocols);
	xcb_change_property(sc.conn, XCB_PROP_MODE_REPLACE, sc.window, counter_atom,
	                    XCB_ATOM_CARDINAL, 32, 1, &sc.counter);
	static const char class[] = "duet-sync\0duet-sync";
	xcb_change_property(sc.conn, XCB_PROP_MODE_REPLACE, sc.window, XCB_ATOM_WM_CLASS,
	                    XCB_ATOM_STRING, 8, sizeof(class), class);
	xcb_change_property(sc.conn, XCB_PROP_MODE_REPLACE, sc.window, XCB_ATOM_WM_NAME,
	                    XCB_ATOM_STRING, 8, 9, "duet-sync");
	xcb_map_window(sc.conn, sc.window);
	xcb_flush(sc.conn);

	struct pollfd pfd = { .fd = xcb_get_file_descriptor(sc.conn), .events = POLLIN };
	for (;;) {
		xcb_generic_event_t *ev;
		bool go_on = true;
		while (go_on && (ev = xcb_poll_for_event(sc.conn))) {
			go_on = handle_event(&sc, ev);
			free(ev);
		}
		if (!go_on) {
			status = 0;
			break;
		}
		if (xcb_connection_has_error(sc.conn)) {
			fprintf(stderr, "duet-x11-sync-client: X connection lost\n");
			status = 1;
			break;
		}
		if (sc.redraw_at_ns && now_ns() >= sc.redraw_at_ns) {
			redraw(&sc);
			continue;
		}
		xcb_flush(sc.conn);
		int timeout = -1;
		if (sc.redraw_at_ns) {
			uint64_t now = now_ns();
			timeout = sc.redraw_at_ns > now ? (int)((sc.redraw_at_ns - now) / 1000000 + 1) : 0;
		}
		poll(&pfd, 1, timeout);
	}
	xcb_disconnect(sc.conn);
	return status;
}
