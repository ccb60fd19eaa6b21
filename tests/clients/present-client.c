/* duet-present-client: asks wp_presentation feedback for every frame and
 * prints what the compositor says, so a test can check the flags, seq,
 * refresh and times a display reports.
 *
 * It maps a 256x256 XRGB8888 toplevel and draws N frames (default 30), one
 * per frame callback, each a different colour with whole-buffer damage and
 * a feedback request. Lines on stdout:
 *   clock ID                    wp_presentation.clock_id
 *   presented I seq=S flags=0xF refresh=R t=T
 *                               frame I's feedback (S: 64-bit seq, R: ns,
 *                               T: ns in the compositor's clock)
 *   discarded I                 frame I was never shown
 *   done P D                    after N frames: P presented, D discarded
 * Then it stays mapped until killed, so the test can look at the screen.
 * Exit status 1 if the compositor lacks a global or the connection fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client-common.h"
#include "presentation-time-client-protocol.h"

#define SIDE 256
#define BUFFERS 2

struct pc_app {
	struct wl_display *display;
	struct test_globals g;
	struct wp_presentation *presentation;
	struct test_toplevel top;
	struct wl_buffer *buffers[BUFFERS];
	bool busy[BUFFERS];
	uint32_t *pixels[BUFFERS];
	bool frame_done;
	int presented, discarded;
};

struct pc_feedback {
	struct pc_app *app;
	int frame;
};

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
                            const char *interface, uint32_t version)
{
	struct pc_app *app = data;
	if (strcmp(interface, wp_presentation_interface.name) == 0)
		app->presentation = wl_registry_bind(registry, name, &wp_presentation_interface, 1);
}

static void presentation_clock_id(void *data, struct wp_presentation *p, uint32_t clock)
{
	printf("clock %u\n", clock);
	fflush(stdout);
}

static const struct wp_presentation_listener presentation_listener = {
	.clock_id = presentation_clock_id,
};

static void feedback_sync_output(void *data, struct wp_presentation_feedback *f,
                                 struct wl_output *output)
{
}

static void feedback_presented(void *data, struct wp_presentation_feedback *f, uint32_t sec_hi,
                               uint32_t sec_lo, uint32_t nsec, uint32_t refresh,
                               uint32_t seq_hi, uint32_t seq_lo, uint32_t flags)
{
	struct pc_feedback *fb = data;
	unsigned long long t = (((unsigned long long)sec_hi << 32 | sec_lo) * 1000000000ull) + nsec;
	unsigned long long seq = (unsigned long long)seq_hi << 32 | seq_lo;
	printf("presented %d seq=%llu flags=0x%x refresh=%u t=%llu\n", fb->frame, seq, flags,
	       refresh, t);
	fflush(stdout);
	fb->app->presented++;
	wp_presentation_feedback_destroy(f);
	free(fb);
}

static void feedback_discarded(void *data, struct wp_presentation_feedback *f)
{
	struct pc_feedback *fb = data;
	printf("discarded %d\n", fb->frame);
	fflush(stdout);
	fb->app->discarded++;
	wp_presentation_feedback_destroy(f);
	free(fb);
}

static const struct wp_presentation_feedback_listener feedback_listener = {
	.sync_output = feedback_sync_output,
	.presented = feedback_presented,
	.discarded = feedback_discarded,
};

static bool make_buffers(struct pc_app *app)
{
	size_t one = (size_t)SIDE * SIDE * 4;
	uint32_t *pixels;
	struct wl_shm_pool *pool = test_shm_pool(app->g.shm, one * BUFFERS, &pixels, NULL);
	if (!pool)
		return false;
	for (int i = 0; i < BUFFERS; i++) {
		app->pixels[i] = pixels + (size_t)i * SIDE * SIDE;
		app->buffers[i] = wl_shm_pool_create_buffer(pool, (int32_t)(one * (size_t)i), SIDE,
		                                            SIDE, SIDE * 4, WL_SHM_FORMAT_XRGB8888);
		test_buffer_track(app->buffers[i], &app->busy[i]);
	}
	wl_shm_pool_destroy(pool);
	return true;
}

/* Frame i: a solid colour that differs from the frame before. */
static bool draw_frame(struct pc_app *app, int i)
{
	int b = -1;
	while (b < 0) {
		for (int k = 0; k < BUFFERS && b < 0; k++)
			if (!app->busy[k])
				b = k;
		if (b < 0 && wl_display_dispatch(app->display) < 0)
			return false;
	}
	uint32_t colour = 0xff000000u | (uint32_t)(40 + (i * 53) % 200) << 16 |
	                  (uint32_t)(200 - (i * 31) % 160) << 8 | 0x80u;
	for (size_t p = 0; p < (size_t)SIDE * SIDE; p++)
		app->pixels[b][p] = colour;
	struct wl_surface *surface = app->top.surface;
	wl_surface_attach(surface, app->buffers[b], 0, 0);
	wl_surface_damage_buffer(surface, 0, 0, SIDE, SIDE);
	struct pc_feedback *fb = calloc(1, sizeof(*fb));
	if (!fb)
		return false;
	fb->app = app;
	fb->frame = i;
	struct wp_presentation_feedback *f = wp_presentation_feedback(app->presentation, surface);
	wp_presentation_feedback_add_listener(f, &feedback_listener, fb);
	test_frame_request(surface, &app->frame_done);
	app->busy[b] = true;
	wl_surface_commit(surface);
	return test_frame_wait(app->display, &app->frame_done);
}

int main(int argc, char **argv)
{
	struct pc_app app = { 0 };
	int frames = 30;
	if (argc > 1)
		frames = atoi(argv[1]);
	if (argc > 2 || frames < 1 || frames > 100000) {
		fprintf(stderr, "usage: duet-present-client [FRAMES: 1..100000]\n");
		return 2;
	}
	struct test_extra_globals extra = { registry_global, &app };
	app.display = test_connect("duet-present-client", &app.g, &extra);
	if (!app.display)
		return 1;
	if (!app.presentation) {
		fprintf(stderr, "duet-present-client: no wp_presentation\n");
		return 1;
	}
	wp_presentation_add_listener(app.presentation, &presentation_listener, &app);
	if (!make_buffers(&app)) {
		fprintf(stderr, "duet-present-client: cannot make buffers\n");
		return 1;
	}
	if (!test_toplevel_map(app.display, &app.g, &app.top, "duet-present"))
		return 1;

	for (int i = 0; i < frames; i++)
		if (!draw_frame(&app, i))
			return 1;
	/* The last frame's feedback may come after its callback. */
	while (app.presented + app.discarded < frames)
		if (wl_display_dispatch(app.display) < 0)
			return 1;
	printf("done %d %d\n", app.presented, app.discarded);
	fflush(stdout);
	while (wl_display_dispatch(app.display) >= 0)
		;
	return 0;
}
