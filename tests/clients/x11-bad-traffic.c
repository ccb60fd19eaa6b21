/* duet-x11-bad-client modes that misbehave with traffic: a client that
 * floods the window manager with valid requests, and one that makes the X
 * server send it events and never reads them (test_isolation.py). Both map
 * one window in the bottom-right quarter of the screen (the tests keep
 * their well-behaved windows out of it), print what x11-bad-client.c's
 * modes print ("client 0xBASE", "window 0xID", "mapped 1"), then
 * "flooding" or "not reading", and go on until SIGTERM (at most
 * TRAFFIC_MAX_S), when they print what they sent and exit 0; the flood
 * also prints its SYNC priority then and once it changes. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xcb/sync.h>

#include "x11-bad-client.h"
#include "x11-common.h"

#define TRAFFIC_MAX_S 60

static volatile sig_atomic_t stop_requested;

static void request_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Until SIGTERM; no SA_RESTART, so that a blocked write returns. */
static void catch_stop(void)
{
	struct sigaction sa = { .sa_handler = request_stop };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

/* A managed 160x120 window placed in the bottom-right quarter, mapped
 * and drawn; extra_mask is selected on it besides StructureNotify. */
static xcb_window_t corner_window(struct bad *b, const char *title, uint32_t extra_mask)
{
	print_client(b);
	xcb_window_t w = make_window(b, 160, 120, title);
	uint32_t mask = XCB_EVENT_MASK_STRUCTURE_NOTIFY | extra_mask;
	xcb_change_window_attributes(b->conn, w, XCB_CW_EVENT_MASK, &mask);
	printf("window 0x%x\n", w);
	xcb_map_window(b->conn, w);
	uint32_t at[2] = { b->screen->width_in_pixels * 3u / 4u,
	                   b->screen->height_in_pixels * 3u / 4u };
	xcb_configure_window(b->conn, w, XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y, at);
	if (!x11_round_trip(b->conn))
		return XCB_WINDOW_NONE;
	printf("mapped 1\n");
	return w;
}

/* Somewhere in the bottom-right quarter, for a window of at most 200x140. */
static void corner_place(struct bad *b, uint32_t *x, uint32_t *y)
{
	uint32_t w = b->screen->width_in_pixels, h = b->screen->height_in_pixels;
	*x = w / 2 + rnd(b) % (w / 2 > 200 ? w / 2 - 200 : 1);
	*y = h / 2 + rnd(b) % (h / 2 > 140 ? h / 2 - 140 : 1);
}

static void client_message(struct bad *b, xcb_window_t w, xcb_atom_t type, uint32_t d0,
                           uint32_t d1, uint32_t d2)
{
	xcb_client_message_event_t ev = {
		.response_type = XCB_CLIENT_MESSAGE, .format = 32, .window = w, .type = type,
		.data.data32 = { d0, d1, d2, 1, 0 },
	};
	xcb_send_event(b->conn, 0, b->screen->root,
	               XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
	               (const char *)&ev);
}

/* Our SYNC priority (the X server's, as a window manager may set it);
 * INT32_MIN if the server has no SYNC. */
static int32_t own_priority(struct bad *b)
{
	xcb_sync_get_priority_reply_t *r =
		xcb_sync_get_priority_reply(b->conn, xcb_sync_get_priority(b->conn, XCB_NONE), NULL);
	int32_t p = r ? r->priority : INT32_MIN;
	free(r);
	return p;
}

/* After a flood: the priority the server gives us as it stops, then
 * whether it changes while we send nothing (at most --calm-wait). */
static void report_priority(struct bad *b)
{
	free(xcb_sync_initialize_reply(b->conn, xcb_sync_initialize(b->conn, 3, 1), NULL));
	int32_t first = own_priority(b);
	printf("priority %d when it stopped\n", (int)first);
	double start = now_s();
	int32_t p = first;
	while (p == first && p != INT32_MIN && now_s() - start < b->calm_wait_s) {
		poll(NULL, 0, 50);
		p = own_priority(b);
	}
	printf("priority %d after %.0f ms of calm\n", (int)p, (now_s() - start) * 1000);
}

/* The server closed our connection (a window manager's KillClient), at
 * any point of the flood or after it; main exits 1 on it. */
static int broke(long requests)
{
	printf("flood: the X connection broke after %ld requests\n", requests);
	return 2;
}

/* What a window manager reads, as fast as the X server takes it: its
 * titles (WM_NAME, _NET_WM_NAME) and size hints, ConfigureRequests within
 * the corner, and client messages to the root (_NET_REQUEST_FRAME_EXTENTS,
 * _NET_WM_STATE toggling DEMANDS_ATTENTION), reading its events all along. */
int flood(struct bad *b)
{
	xcb_atom_t net_name = x11_intern(b->conn, "_NET_WM_NAME");
	xcb_atom_t utf8 = x11_intern(b->conn, "UTF8_STRING");
	xcb_atom_t extents = x11_intern(b->conn, "_NET_REQUEST_FRAME_EXTENTS");
	xcb_atom_t state = x11_intern(b->conn, "_NET_WM_STATE");
	xcb_atom_t attention = x11_intern(b->conn, "_NET_WM_STATE_DEMANDS_ATTENTION");
	xcb_window_t w = corner_window(b, "flood", 0);
	if (w == XCB_WINDOW_NONE)
		return 2;
	catch_stop();
	printf("flooding\n");
	fflush(stdout);
	long requests = 0;
	double start = now_s();
	while (!stop_requested && now_s() - start < TRAFFIC_MAX_S) {
		for (int i = 0; i < 64; i++) {
			char title[32];
			int n = snprintf(title, sizeof(title), "flood %ld", requests);
			set_prop(b, w, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8, (uint32_t)n, title);
			set_prop(b, w, net_name, utf8, 8, (uint32_t)n, title);
			/* PMinSize | PMaxSize: 100x80 to 200x140 */
			uint32_t hints[18] = { 16 | 32, 0, 0, 0, 0, 100 + rnd(b) % 8, 80, 200, 140 };
			set_prop(b, w, XCB_ATOM_WM_NORMAL_HINTS, XCB_ATOM_WM_SIZE_HINTS, 32, 18, hints);
			uint32_t geom[4];
			corner_place(b, &geom[0], &geom[1]);
			geom[2] = 100 + rnd(b) % 100;
			geom[3] = 80 + rnd(b) % 60;
			xcb_configure_window(b->conn, w, XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y |
			                     XCB_CONFIG_WINDOW_WIDTH | XCB_CONFIG_WINDOW_HEIGHT, geom);
			client_message(b, w, extents, 0, 0, 0);
			client_message(b, w, state, 2, attention, 0); /* toggle */
			requests += 6;
		}
		xcb_flush(b->conn);
		xcb_generic_event_t *ev;
		while ((ev = xcb_poll_for_event(b->conn)))
			free(ev);
		if (xcb_connection_has_error(b->conn))
			return broke(requests);
	}
	if (!x11_round_trip(b->conn))
		return broke(requests);
	printf("flooded %ld requests in %.0f ms\n", requests, (now_s() - start) * 1000);
	report_priority(b);
	return xcb_connection_has_error(b->conn) ? broke(requests) : 0;
}

/* Writes all of size bytes on xcb's (non-blocking) socket, waiting while
 * it is full, as long as no stop came; false on an error. */
static bool write_all(int fd, const uint8_t *p, size_t size)
{
	while (size > 0 && !stop_requested) {
		ssize_t n = write(fd, p, size);
		if (n < 0 && errno == EAGAIN) {
			struct pollfd pfd = { fd, POLLOUT, 0 };
			poll(&pfd, 1, 100); /* EINTR at SIGTERM: the loop looks */
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		size -= (size_t)n;
	}
	return true;
}

/* Requests that each make the X server send it an event, written straight
 * on the socket so that nothing (not xcb either) ever reads one: a
 * ChangeProperty on a window of its own that it watches (PropertyNotify)
 * and nobody else does (never mapped: no window manager's), and every
 * eighth a ConfigureWindow of its managed window, which the window manager
 * answers with a configure (ConfigureNotify) and, as ICCCM asks, a
 * synthetic ConfigureNotify of its own sending. It also watches the
 * root's properties and substructure (every window's changes). About
 * 10,000 requests a second: what piles up is the X server's, not the
 * window manager's to handle (a flood of what it reads is flood's). */
int no_read(struct bad *b)
{
	xcb_atom_t noise = x11_intern(b->conn, "_DUET_NOISE");
	uint32_t root_mask = XCB_EVENT_MASK_PROPERTY_CHANGE | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY;
	xcb_change_window_attributes(b->conn, b->screen->root, XCB_CW_EVENT_MASK, &root_mask);
	xcb_window_t w = corner_window(b, "no-read", 0);
	if (w == XCB_WINDOW_NONE)
		return 2;
	xcb_window_t quiet = xcb_generate_id(b->conn);
	uint32_t quiet_mask = XCB_EVENT_MASK_PROPERTY_CHANGE;
	xcb_create_window(b->conn, 0, quiet, b->screen->root, 0, 0, 1, 1, 0,
	                  XCB_WINDOW_CLASS_INPUT_ONLY, XCB_COPY_FROM_PARENT, XCB_CW_EVENT_MASK,
	                  &quiet_mask);
	if (!x11_round_trip(b->conn))
		return 2;
	catch_stop();
	printf("not reading\n");
	fflush(stdout);
	/* Nothing of xcb's from here on: its sequence numbers no longer
	 * count what goes out. */
	int fd = xcb_get_file_descriptor(b->conn);
	long requests = 0;
	double start = now_s();
	uint8_t batch[4096];
	while (!stop_requested && now_s() - start < TRAFFIC_MAX_S) {
		size_t used = 0;
		while (used + 40 <= sizeof(batch)) {
			uint8_t *r = batch + used;
			memset(r, 0, 40);
			if (requests % 8 == 7) {
				/* ConfigureWindow: opcode 12, X | Y, 5 units */
				uint32_t at[2];
				corner_place(b, &at[0], &at[1]);
				uint16_t len = 5, mask = XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y;
				r[0] = 12;
				memcpy(r + 2, &len, 2);
				memcpy(r + 4, &w, 4);
				memcpy(r + 8, &mask, 2);
				memcpy(r + 12, at, 8);
				used += 20;
			} else {
				/* ChangeProperty: opcode 18, Replace, 16 bytes of
				 * STRING, 10 units */
				uint16_t len = 10;
				uint32_t type = XCB_ATOM_STRING, count = 16;
				r[0] = 18;
				r[1] = XCB_PROP_MODE_REPLACE;
				memcpy(r + 2, &len, 2);
				memcpy(r + 4, &quiet, 4);
				memcpy(r + 8, &noise, 4);
				memcpy(r + 12, &type, 4);
				r[16] = 8;
				memcpy(r + 20, &count, 4);
				memset(r + 24, 'a' + (int)(requests % 26), 16);
				used += 40;
			}
			requests++;
		}
		if (!write_all(fd, batch, used)) {
			printf("no-read: the X connection broke after %ld requests: %s\n", requests,
			       strerror(errno));
			return 2;
		}
		/* The X server keeps every event for it (32 bytes each),
		 * without end. */
		usleep(10000);
	}
	printf("sent %ld requests in %.0f ms, read no event\n", requests,
	       (now_s() - start) * 1000);
	return 0;
}
