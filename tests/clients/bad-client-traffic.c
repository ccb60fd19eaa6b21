/* duet-bad-client modes that misbehave with traffic rather than with one
 * request: a client that dies half way through a message, one that floods
 * the compositor with valid requests, one that never reads its socket
 * (tests/integration/test_isolation.py). Each ends itself and says on
 * stdout what it did; its exit status is its own (bad-client.c). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bad-client.h"

#define TRAFFIC_MAX_MS 60000 /* a flood or a fill stops by itself after this */

static volatile sig_atomic_t stop_requested;
static uint64_t traffic_end; /* now_ms() past which a flood or a fill gives up */

static void request_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* SIGTERM (the test's stop) ends a flood in good order: its count is
 * printed and it exits 0. */
static void catch_stop(void)
{
	struct sigaction sa = { .sa_handler = request_stop };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

/* A mapped 128x128 toplevel with a buffer on it and its first frame shown:
 * the window list has it and the window takes part in repaints. */
static bool mapped_window(struct bad_client *c, int side)
{
	if (!make_toplevel(c, true) || !make_buffer(c, side * side * 4, 0, side, side, side * 4))
		return false;
	xdg_surface_ack_configure(c->top.xdg_surface, c->top.serial);
	test_frame_commit(&c->frame, c->top.surface, c->buffer, side, side);
	while (!c->frame.done)
		if (wl_display_dispatch(c->display) < 0)
			return false;
	printf("mapped %d %d\n", side, side);
	return true;
}

/* Writes all of buf on the connection's socket, behind everything
 * libwayland has queued. */
static bool write_raw(struct bad_client *c, const void *buf, size_t size)
{
	if (wl_display_flush(c->display) < 0)
		return false;
	ssize_t n = write(wl_display_get_fd(c->display), buf, size);
	return n == (ssize_t)size;
}

/* A wl_surface.damage (24 bytes) of which only the header and the first
 * argument arrive; then it waits to be killed, the compositor waiting
 * for the other 12 bytes. */
static int die_mid_request(struct bad_client *c)
{
	if (!mapped_window(c, 128))
		return 2;
	uint32_t msg[3] = {
		wl_proxy_get_id((struct wl_proxy *)c->top.surface),
		(24u << 16) | WL_SURFACE_DAMAGE,
		16,
	};
	if (!write_raw(c, msg, sizeof(msg))) {
		perror("duet-bad-client: write");
		return 2;
	}
	printf("partial %zu of 24 bytes\n", sizeof(msg));
	fflush(stdout);
	for (;;)
		pause(); /* SIGKILL ends it */
}

/* The callbacks still to come, destroyed at the end: each proxy the mode
 * makes is let go of (the sanitizer build checks). */
struct pending {
	struct wl_list link;
	struct wl_callback *cb;
	long *count; /* counted when done, if set */
};

static void pending_done(void *data, struct wl_callback *cb, uint32_t value)
{
	struct pending *p = data;
	if (p->count)
		(*p->count)++;
	wl_callback_destroy(cb);
	wl_list_remove(&p->link);
	free(p);
}

static const struct wl_callback_listener pending_listener = { .done = pending_done };

static bool track(struct wl_list *list, struct wl_callback *cb, long *count)
{
	struct pending *p = calloc(1, sizeof(*p));
	if (!p) {
		wl_callback_destroy(cb);
		return false;
	}
	p->cb = cb;
	p->count = count;
	wl_list_insert(list->prev, &p->link);
	wl_callback_add_listener(cb, &pending_listener, p);
	return true;
}

static void drop_pending(struct wl_list *list)
{
	struct pending *p, *tmp;
	wl_list_for_each_safe(p, tmp, list, link) {
		wl_callback_destroy(p->cb);
		wl_list_remove(&p->link);
		free(p);
	}
}

/* Reads and dispatches whatever has come, without blocking; false once the
 * connection failed. */
static bool read_events(struct wl_display *display)
{
	while (wl_display_prepare_read(display) != 0)
		if (wl_display_dispatch_pending(display) < 0)
			return false;
	struct pollfd pfd = { wl_display_get_fd(display), POLLIN, 0 };
	if (poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN)) {
		if (wl_display_read_events(display) < 0)
			return false;
	} else {
		wl_display_cancel_read(display);
	}
	return wl_display_dispatch_pending(display) >= 0;
}

/* Flushes everything libwayland-client holds, waiting while the socket is
 * full and (if events) reading what comes meanwhile: its buffer (4 KiB)
 * must be empty before the next batch, or libwayland-client would fail
 * the connection on EAGAIN. false once the connection failed. */
static bool drain(struct wl_display *display, bool events)
{
	while (wl_display_flush(display) < 0) {
		if (errno != EAGAIN || stop_requested || now_ms() > traffic_end)
			return false;
		struct pollfd pfd = { wl_display_get_fd(display), POLLOUT, 0 };
		poll(&pfd, 1, 100);
		if (pfd.revents & (POLLHUP | POLLERR))
			return false;
		if (events && !read_events(display))
			return false;
	}
	return true;
}

/* Valid requests as fast as the socket takes them until SIGTERM (or
 * TRAFFIC_MAX_MS): each commit of its window with 256 damage rectangles
 * that do not touch, a frame callback and the buffer attached again, and a
 * wl_display.sync every 16 commits; it reads its events all along. */
static int flood(struct bad_client *c)
{
	const int side = 128;
	if (!mapped_window(c, side))
		return 2;
	catch_stop();
	struct wl_list pending;
	wl_list_init(&pending);
	long requests = 0, commits = 0, frames = 0;
	uint64_t start = now_ms(), end = start + TRAFFIC_MAX_MS;
	traffic_end = end;
	printf("flooding\n");
	fflush(stdout);
	bool ok = true;
	while (ok && !stop_requested && now_ms() < end) {
		for (int i = 0; i < 256 && ok; i++) {
			/* Every other pixel of every other row: no two touch. */
			int k = (int)((commits * 257 + i) % ((side / 2) * (side / 2)));
			wl_surface_damage_buffer(c->top.surface, (k % (side / 2)) * 2,
			                         (k / (side / 2)) * 2, 1, 1);
			requests++;
			if (i % 32 == 31)
				ok = drain(c->display, true);
		}
		ok = ok && track(&pending, wl_surface_frame(c->top.surface), &frames);
		wl_surface_attach(c->top.surface, c->buffer, 0, 0);
		wl_surface_commit(c->top.surface);
		requests += 3;
		if (++commits % 16 == 0) {
			ok = ok && track(&pending, wl_display_sync(c->display), NULL);
			requests++;
		}
		ok = ok && drain(c->display, true) && read_events(c->display);
	}
	int status = 0;
	if (!ok && !stop_requested) {
		printf("flood: connection error after %ld requests: %s\n", requests,
		       strerror(wl_display_get_error(c->display)));
		status = 1;
	} else {
		drain(c->display, true);
		wl_display_roundtrip(c->display);
		printf("flooded %ld requests, %ld commits, %ld frames in %llu ms\n", requests,
		       commits, frames, (unsigned long long)(now_ms() - start));
		status = wl_display_get_error(c->display) ? 1 : 0;
	}
	drop_pending(&pending);
	return status;
}

/* Requests that each make the compositor send events (wl_display.sync:
 * a done and a delete_id; get_registry: every global), 64 every 10 ms (a
 * client that hung while the compositor goes on sending to it), never
 * reading a byte, until the compositor hangs up on it (status 0) or
 * TRAFFIC_MAX_MS pass (status 1). */
static int no_read(struct bad_client *c)
{
	if (!mapped_window(c, 128))
		return 2;
	long requests = 0;
	uint64_t start = now_ms(), end = start + TRAFFIC_MAX_MS;
	traffic_end = end;
	printf("not reading\n");
	fflush(stdout);
	int fd = wl_display_get_fd(c->display);
	/* Kept to be destroyed at the end, their events never read. */
	size_t n = 0, cap = 0;
	struct wl_proxy **made = NULL;
	while (now_ms() < end) {
		if (n + 64 > cap) {
			cap = cap ? cap * 2 : 1024;
			struct wl_proxy **more = realloc(made, cap * sizeof(*made));
			if (!more)
				break;
			made = more;
		}
		for (int i = 0; i < 64; i++) {
			if (i % 8 == 0)
				made[n++] = (struct wl_proxy *)wl_display_get_registry(c->display);
			else
				made[n++] = (struct wl_proxy *)wl_display_sync(c->display);
			requests++;
		}
		if (!drain(c->display, false))
			break;
		usleep(10000);
	}
	for (size_t i = 0; i < n; i++)
		wl_proxy_destroy(made[i]);
	free(made);
	uint64_t took = now_ms() - start;
	struct pollfd pfd = { fd, 0, 0 };
	poll(&pfd, 1, 0);
	if (!(pfd.revents & (POLLHUP | POLLERR))) {
		printf("no-read: still connected after %ld requests in %llu ms\n", requests,
		       (unsigned long long)took);
		return 1;
	}
	printf("disconnected after %ld requests in %llu ms\n", requests, (unsigned long long)took);
	return 0;
}

const struct traffic_mode traffic_modes[] = {
	{"die-mid-request", "a mapped window, then half a wl_surface.damage; waits to be "
	 "SIGKILLed", die_mid_request},
	{"flood", "a mapped window committed with 256 damage rectangles, a frame callback and "
	 "a sync per 16, as fast as the socket takes them, until SIGTERM", flood},
	{"no-read", "a mapped window, then wl_display.sync and get_registry (64 every 10 ms) "
	 "without reading a byte, until the compositor hangs up", no_read},
};

const size_t num_traffic_modes = sizeof(traffic_modes) / sizeof(traffic_modes[0]);
