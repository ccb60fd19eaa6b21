/* duet-x11-map-storm: maps and destroys windows in quick succession and
 * checks that the window manager answers every one of them.
 *
 * An X connection that writes reads whatever the server sent meanwhile into
 * its event queue (xcb does, so as never to deadlock), and a window manager
 * that then sleeps in poll() on the socket does not see those events until
 * something else arrives. A client that maps a window and waits is exactly
 * the case where nothing else arrives. Each window is mapped after a delay
 * that sweeps, in microsteps, the time the window manager spends on its
 * CreateNotify, and destroyed as soon as it is mapped, so the MapRequest
 * and DestroyNotify keep landing while the window manager writes.
 *
 * usage: duet-x11-map-storm [--maps N] [--timeout-ms MS]
 * Prints "mapped N" and exits 0 when every map was answered (MapNotify) and
 * every destroyed window left _NET_CLIENT_LIST within the timeout; prints
 * "stalled at map I (delay US us)" or "stalled at destroy I" and exits 1
 * otherwise.
 */
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xcb/xcb.h>

#include "x11-common.h"

#define SWEEP_STEP_US 10
#define SWEEP_END_US 4000

struct storm {
	xcb_connection_t *conn;
	xcb_screen_t *screen;
	xcb_atom_t client_list;
	bool client_list_changed;
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	nanosleep(&ts, NULL);
}

/* Handles what arrived; true once a MapNotify of window came (NONE: never). */
static bool handle_events(struct storm *st, xcb_window_t window)
{
	bool mapped = false;
	xcb_generic_event_t *ev;
	while ((ev = xcb_poll_for_event(st->conn))) {
		uint8_t t = ev->response_type & 0x7f;
		if (t == XCB_MAP_NOTIFY && window != XCB_NONE)
			mapped |= ((xcb_map_notify_event_t *)ev)->window == window;
		else if (t == XCB_PROPERTY_NOTIFY)
			st->client_list_changed |=
				((xcb_property_notify_event_t *)ev)->atom == st->client_list;
		free(ev);
	}
	return mapped;
}

static bool wait_readable(struct storm *st, uint64_t deadline)
{
	if (xcb_connection_has_error(st->conn))
		return false;
	uint64_t t = now_ms();
	if (t >= deadline)
		return false;
	struct pollfd pfd = { xcb_get_file_descriptor(st->conn), POLLIN, 0 };
	poll(&pfd, 1, (int)(deadline - t));
	return true;
}

static bool wait_mapped(struct storm *st, xcb_window_t window, long timeout_ms)
{
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	do {
		if (handle_events(st, window))
			return true;
	} while (wait_readable(st, deadline));
	return false;
}

static bool listed(struct storm *st, xcb_window_t window)
{
	xcb_get_property_reply_t *r = xcb_get_property_reply(st->conn,
		xcb_get_property(st->conn, 0, st->screen->root, st->client_list, XCB_ATOM_WINDOW, 0,
		                 4096), NULL);
	bool found = false;
	if (r) {
		xcb_window_t *ids = xcb_get_property_value(r);
		int n = xcb_get_property_value_length(r) / 4;
		for (int i = 0; i < n && !found; i++)
			found = ids[i] == window;
		free(r);
	}
	return found;
}

/* Until the window manager has taken the destroyed window off its list. */
static bool wait_unlisted(struct storm *st, xcb_window_t window, long timeout_ms)
{
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	do {
		st->client_list_changed = false;
		if (!listed(st, window))
			return true;
		/* The reply may have brought the change's event along. */
		handle_events(st, XCB_NONE);
		while (!st->client_list_changed && wait_readable(st, deadline))
			handle_events(st, XCB_NONE);
	} while (now_ms() < deadline);
	return false;
}

static xcb_window_t create_window(struct storm *st)
{
	xcb_connection_t *c = st->conn;
	xcb_window_t id = xcb_generate_id(c);
	uint32_t values[] = { st->screen->black_pixel, XCB_EVENT_MASK_STRUCTURE_NOTIFY };
	xcb_create_window(c, XCB_COPY_FROM_PARENT, id, st->screen->root, 0, 0, 64, 64, 0,
	                  XCB_WINDOW_CLASS_INPUT_OUTPUT, st->screen->root_visual,
	                  XCB_CW_BACK_PIXEL | XCB_CW_EVENT_MASK, values);
	static const char name[] = "duet-x11-map-storm";
	xcb_change_property(c, XCB_PROP_MODE_REPLACE, id, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8,
	                    sizeof(name) - 1, name);
	return id;
}

int main(int argc, char **argv)
{
	long maps = 400, timeout_ms = 3000;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--maps") && i + 1 < argc && (maps = atol(argv[++i])) > 0)
			continue;
		if (!strcmp(argv[i], "--timeout-ms") && i + 1 < argc &&
		    (timeout_ms = atol(argv[++i])) > 0)
			continue;
		fprintf(stderr, "usage: duet-x11-map-storm [--maps N] [--timeout-ms MS]\n");
		return 2;
	}
	struct storm st = { .conn = xcb_connect(NULL, NULL) };
	if (xcb_connection_has_error(st.conn)) {
		fprintf(stderr, "duet-x11-map-storm: cannot connect to the X server\n");
		return 1;
	}
	st.screen = xcb_setup_roots_iterator(xcb_get_setup(st.conn)).data;
	st.client_list = x11_intern(st.conn, "_NET_CLIENT_LIST");
	if (st.client_list == XCB_ATOM_NONE)
		return 1;
	uint32_t mask = XCB_EVENT_MASK_PROPERTY_CHANGE;
	xcb_change_window_attributes(st.conn, st.screen->root, XCB_CW_EVENT_MASK, &mask);

	for (long i = 0; i < maps; i++) {
		long delay = (i * SWEEP_STEP_US) % SWEEP_END_US;
		xcb_window_t w = create_window(&st);
		xcb_flush(st.conn);
		sleep_us(delay);
		xcb_map_window(st.conn, w);
		xcb_flush(st.conn);
		if (!wait_mapped(&st, w, timeout_ms)) {
			printf("stalled at map %ld (delay %ld us)\n", i, delay);
			return 1;
		}
		xcb_destroy_window(st.conn, w);
		xcb_flush(st.conn);
		if (!wait_unlisted(&st, w, timeout_ms)) {
			printf("stalled at destroy %ld\n", i);
			return 1;
		}
	}
	printf("mapped %ld\n", maps);
	xcb_disconnect(st.conn);
	return 0;
}
