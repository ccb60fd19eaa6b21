/* duet-mailbox-client: commits several shm buffers faster than the output
 * shows them, to check that a compositor copies only what it shows.
 *
 * It maps a 256x256 XRGB8888 toplevel, waits until it is shown, then sends
 * N more commits (each a different buffer, whole-buffer damage) in one
 * flush, a frame callback on the last only, and waits for that callback.
 * Lines on stdout, for tests/integration/test_latch.py:
 *   mapped                  the first frame was shown
 *   burst N                 the N commits were sent
 *   shown RELEASED          the last commit's frame callback came; RELEASED
 *                           buffers of the burst were released by then
 *   released ALL            after a round trip: how many of the N + 1
 *                           buffers were released (all, once copied)
 *   idle-frames M           with --idle-frames M (below): M frames done
 * Buffer i is filled with colour 0xff000000 | (i * 0x1f) << 8, so a
 * screenshot tells which one is shown.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client-common.h"

#define SIDE 256
#define MAX_BUFFERS 16

struct mb_buffer {
	struct wl_buffer *wl;
	bool busy;
};

struct mb_app {
	struct wl_display *display;
	struct test_globals g;
	struct test_toplevel top;
	struct mb_buffer buffers[MAX_BUFFERS];
	bool frame_done;
};

static bool make_buffers(struct mb_app *app, int n)
{
	size_t one = (size_t)SIDE * SIDE * 4;
	uint32_t *pixels;
	struct wl_shm_pool *pool = test_shm_pool(app->g.shm, one * (size_t)n, &pixels, NULL);
	if (!pool)
		return false;
	for (int i = 0; i < n; i++) {
		uint32_t colour = 0xff000000u | (uint32_t)(i * 0x1f) << 8;
		for (size_t p = 0; p < (size_t)SIDE * SIDE; p++)
			pixels[(size_t)i * SIDE * SIDE + p] = colour;
		app->buffers[i].wl = wl_shm_pool_create_buffer(pool, (int32_t)(one * (size_t)i), SIDE,
		                                               SIDE, SIDE * 4, WL_SHM_FORMAT_XRGB8888);
		test_buffer_track(app->buffers[i].wl, &app->buffers[i].busy);
	}
	wl_shm_pool_destroy(pool);
	munmap(pixels, one * (size_t)n);
	return true;
}

static void commit_buffer(struct mb_app *app, int i, bool frame)
{
	struct wl_surface *surface = app->top.surface;
	wl_surface_attach(surface, app->buffers[i].wl, 0, 0);
	wl_surface_damage_buffer(surface, 0, 0, SIDE, SIDE);
	if (frame)
		test_frame_request(surface, &app->frame_done);
	app->buffers[i].busy = true;
	wl_surface_commit(surface);
}

static int count_released(struct mb_app *app, int from, int to)
{
	int n = 0;
	for (int i = from; i < to; i++)
		n += !app->buffers[i].busy;
	return n;
}

int main(int argc, char **argv)
{
	struct mb_app app = { 0 };
	int burst = 6, idle_frames = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--idle-frames") == 0 && i + 1 < argc)
			idle_frames = atoi(argv[++i]);
		else
			burst = atoi(argv[i]);
	}
	if (burst < 2 || burst >= MAX_BUFFERS || idle_frames < 0) {
		fprintf(stderr, "usage: duet-mailbox-client [N: 2..%d] [--idle-frames M]\n",
		        MAX_BUFFERS - 1);
		return 2;
	}
	app.display = test_connect("duet-mailbox-client", &app.g, NULL);
	if (!app.display)
		return 1;
	if (!make_buffers(&app, burst + 1)) {
		fprintf(stderr, "duet-mailbox-client: cannot make buffers\n");
		return 1;
	}
	if (!test_toplevel_map(app.display, &app.g, &app.top, "duet-mailbox"))
		return 1;

	commit_buffer(&app, 0, true);
	if (!test_frame_wait(app.display, &app.frame_done))
		return 1;
	printf("mapped\n");
	fflush(stdout);

	/* One flush: the compositor reads all of them before it can repaint. */
	for (int i = 1; i <= burst; i++)
		commit_buffer(&app, i, i == burst);
	printf("burst %d\n", burst);
	fflush(stdout);
	if (!test_frame_wait(app.display, &app.frame_done))
		return 1;
	printf("shown %d\n", count_released(&app, 1, burst));
	fflush(stdout);
	if (wl_display_roundtrip(app.display) < 0)
		return 1;
	printf("released %d\n", count_released(&app, 0, burst + 1));
	fflush(stdout);

	/* --idle-frames M: M frame callbacks with commits that change
	 * nothing, as a toolkit's animator asks while it idles; after a
	 * second's pause, so a tracer can attach first. */
	if (idle_frames > 0) {
		sleep(1);
		for (int i = 0; i < idle_frames; i++) {
			test_frame_request(app.top.surface, &app.frame_done);
			wl_surface_commit(app.top.surface);
			if (!test_frame_wait(app.display, &app.frame_done))
				return 1;
		}
		printf("idle-frames %d\n", idle_frames);
		fflush(stdout);
	}

	/* Stay until the test has looked at the screen. */
	while (wl_display_dispatch(app.display) >= 0)
		;
	return 0;
}
