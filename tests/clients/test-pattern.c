/* duet-test-pattern: a well-behaved xdg-shell toplevel that draws a known,
 * static XRGB8888 pattern in wl_shm, so tests can compare screenshots with
 * exact pixels. It reports on stdout what the tests wait for:
 *   mapped W H     the first frame callback arrived (the frame was shown)
 *   resized W H    the first frame callback after a compositor resize
 *   frame N        with --frames: the N-th redraw was presented
 * With --input it binds the seat and reports its pointer and keyboard
 * events as duet-input-probe does (client-input.c's lines: key KEY STATE,
 * pointer-button BUTTON STATE, ...), so that one well-behaved client
 * shows both its frames and its input (test_isolation.py).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "client-args.h"
#include "client-common.h"
#include "xdg-shell-client-protocol.h"

#define MAX_SIDE 16384
#define NUM_BUFFERS 3

struct pattern_buffer {
	struct pattern_app *app;
	struct wl_buffer *wl;
	uint32_t *pixels;
	size_t size;
	int width, height;
	bool busy; /* attached and not yet released by the compositor */
};

struct pattern_app {
	struct wl_display *display;
	struct test_globals g;
	struct test_toplevel top;
	struct wl_callback *frame;

	int width, height;            /* size of the last drawn frame */
	int want_width, want_height;  /* size to draw next */
	bool drawn, mapped_reported, resize_to_report;
	bool done; /* --exit-after-first-frame: that frame came */

	struct pattern_buffer buffers[NUM_BUFFERS];

	/* --size is the size to draw without a configured one; --frames N
	 * redraws, 0 = draw once and idle. */
	struct pattern_args args;
	long frames_done;
	bool draw_on_release; /* a draw found every buffer busy */

	bool input; /* --input: the seat's events reported */
	struct wl_seat *seat;
	struct test_input in;
};

static void draw(struct pattern_app *app);

static void buffer_release(void *data, struct wl_buffer *wl)
{
	struct pattern_buffer *buffer = data;
	buffer->busy = false;
	if (buffer->app->draw_on_release) {
		buffer->app->draw_on_release = false;
		draw(buffer->app);
	}
}

static const struct wl_buffer_listener buffer_listener = {
	.release = buffer_release,
};

static void buffer_free(struct pattern_buffer *buffer)
{
	if (buffer->wl)
		wl_buffer_destroy(buffer->wl);
	if (buffer->pixels)
		munmap(buffer->pixels, buffer->size);
	memset(buffer, 0, sizeof(*buffer));
}

static bool buffer_init(struct pattern_app *app, struct pattern_buffer *buffer, int w, int h)
{
	int stride = w * 4;
	size_t size = (size_t)stride * (size_t)h;
	uint32_t *pixels;
	struct wl_shm_pool *pool = test_shm_pool(app->g.shm, size, &pixels, NULL);
	if (!pool) {
		fprintf(stderr, "duet-test-pattern: shm pool: %s\n", strerror(errno));
		return false;
	}
	buffer->wl = wl_shm_pool_create_buffer(pool, 0, w, h, stride, WL_SHM_FORMAT_XRGB8888);
	wl_buffer_add_listener(buffer->wl, &buffer_listener, buffer);
	/* The buffer keeps the pool's memory alive on the server side. */
	wl_shm_pool_destroy(pool);

	buffer->app = app;
	buffer->pixels = pixels;
	buffer->size = size;
	buffer->width = w;
	buffer->height = h;
	test_pattern_fill(buffer->pixels, w, h);
	return true;
}

/* A free buffer of the wanted size, creating one if needed. Buffers of a
 * stale size are dropped once the compositor has released them. */
static struct pattern_buffer *buffer_get(struct pattern_app *app, int w, int h, bool *fresh)
{
	struct pattern_buffer *empty = NULL;
	for (int i = 0; i < NUM_BUFFERS; i++) {
		struct pattern_buffer *b = &app->buffers[i];
		if (b->wl && !b->busy && (b->width != w || b->height != h))
			buffer_free(b);
		if (b->wl && !b->busy) {
			*fresh = false;
			return b;
		}
		if (!b->wl && !empty)
			empty = b;
	}
	if (!empty || !buffer_init(app, empty, w, h))
		return NULL;
	*fresh = true;
	return empty;
}

static const struct wl_callback_listener frame_listener;

static void draw(struct pattern_app *app)
{
	int w = app->want_width, h = app->want_height;
	bool fresh = false;
	struct pattern_buffer *buffer = buffer_get(app, w, h, &fresh);
	if (!buffer) {
		/* All buffers are still held by the compositor: draw again when
		 * one comes back. */
		app->draw_on_release = true;
		return;
	}
	bool size_changed = !app->drawn || w != app->width || h != app->height;
	if (app->args.frames > 0) {
		/* The counter pixel makes every frame differ, so the compositor
		 * really has something to upload and present. */
		buffer->pixels[0] = 0xff000000u | ((uint32_t)app->frames_done & 0xffffffu);
	} else {
		buffer->pixels[0] = test_pattern_pixel(0, 0);
	}

	wl_surface_attach(app->top.surface, buffer->wl, 0, 0);
	if (fresh || size_changed)
		wl_surface_damage_buffer(app->top.surface, 0, 0, w, h);
	else
		wl_surface_damage_buffer(app->top.surface, 0, 0, 1, 1);
	if (app->frame)
		wl_callback_destroy(app->frame);
	app->frame = wl_surface_frame(app->top.surface);
	wl_callback_add_listener(app->frame, &frame_listener, app);
	wl_surface_commit(app->top.surface);
	buffer->busy = true;

	if (app->drawn && size_changed)
		app->resize_to_report = true;
	app->drawn = true;
	app->width = w;
	app->height = h;
}

static void frame_done(void *data, struct wl_callback *callback, uint32_t time)
{
	struct pattern_app *app = data;
	wl_callback_destroy(callback);
	app->frame = NULL;

	if (!app->mapped_reported) {
		app->mapped_reported = true;
		printf("mapped %d %d\n", app->width, app->height);
		if (app->args.exit_after_first_frame) {
			app->done = true;
			return;
		}
	} else if (app->resize_to_report) {
		printf("resized %d %d\n", app->width, app->height);
	}
	app->resize_to_report = false;

	if (app->frames_done < app->args.frames) {
		app->frames_done++;
		printf("frame %ld\n", app->frames_done);
		draw(app);
	} else if (app->want_width != app->width || app->want_height != app->height) {
		draw(app);
	}
}

static const struct wl_callback_listener frame_listener = {
	.done = frame_done,
};

static void toplevel_configure(void *data, struct wl_array *states)
{
	struct pattern_app *app = data;
	int32_t width = app->top.width, height = app->top.height;
	/* 0 means "pick your own size"; keep ours then. */
	app->want_width = width > 0 && width <= MAX_SIDE ? width : app->args.size[0];
	app->want_height = height > 0 && height <= MAX_SIDE ? height : app->args.size[1];
}

/* After each configure, acked: a new size is drawn, an old one committed. */
static void configure(void *data)
{
	struct pattern_app *app = data;
	if (!app->drawn || app->want_width != app->width || app->want_height != app->height) {
		/* While a frame is in flight a redraw waits for its callback,
		 * unless nothing was drawn yet. */
		if (!app->frame || !app->drawn)
			draw(app);
	} else {
		/* Same size: commit so the ack takes effect. */
		wl_surface_commit(app->top.surface);
	}
}

static void report_input(void *data, const char *line)
{
	printf("%s\n", line);
}

static void seat_capabilities(void *data, struct wl_seat *seat, uint32_t caps)
{
	struct pattern_app *app = data;
	if ((caps & WL_SEAT_CAPABILITY_POINTER) && !app->in.pointer)
		test_input_pointer(&app->in, seat);
	if ((caps & WL_SEAT_CAPABILITY_KEYBOARD) && !app->in.keyboard)
		test_input_keyboard(&app->in, seat);
}

static void seat_name(void *data, struct wl_seat *seat, const char *name)
{
}

static const struct wl_seat_listener seat_listener = {
	.capabilities = seat_capabilities,
	.name = seat_name,
};

static void bind_seat(void *data, struct wl_registry *reg, uint32_t name, const char *iface,
                      uint32_t version)
{
	struct pattern_app *app = data;
	if (app->input && !app->seat && strcmp(iface, wl_seat_interface.name) == 0) {
		app->seat = wl_registry_bind(reg, name, &wl_seat_interface, version < 4 ? version : 4);
		wl_seat_add_listener(app->seat, &seat_listener, app);
	}
}

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: duet-test-pattern [--size WxH] [--app-id ID] [--title T] [--frames N]\n"
	        "                         [--maximized] [--exit-after-first-frame] [--input]\n"
	        "Shows a toplevel with a fixed test pattern; prints 'mapped W H' once shown.\n");
}

int main(int argc, char **argv)
{
	struct pattern_app app = { .args = { .size = { 320, 240 }, .title = "duet test pattern" } };
	const char *app_id = "duet-test-pattern";
	const struct test_option options[] = {
		PATTERN_OPTIONS(&app.args, MAX_SIDE),
		{ "--app-id", TEST_OPT_STRING, &app_id, 0 },
		{ "--input", TEST_OPT_FLAG, &app.input, 0 },
	};
	int status = test_parse_options("duet-test-pattern", argc, argv, options,
	                                sizeof(options) / sizeof(options[0]), usage);
	if (status >= 0)
		return status;
	/* Tests read our stdout through a pipe while we run. */
	setvbuf(stdout, NULL, _IOLBF, 0);

	app.in.report = report_input;
	struct test_extra_globals seat_global = { bind_seat, &app };
	app.display = test_connect("duet-test-pattern", &app.g, &seat_global);
	if (!app.display)
		return 1;
	if (app.input && !app.seat) {
		fprintf(stderr, "duet-test-pattern: --input, and no wl_seat\n");
		return 1;
	}
	app.want_width = app.args.size[0];
	app.want_height = app.args.size[1];

	app.top.toplevel_configure = toplevel_configure;
	app.top.configure = configure;
	app.top.data = &app;
	test_toplevel_create(&app.g, &app.top, app_id);
	xdg_toplevel_set_title(app.top.toplevel, app.args.title);
	if (app.args.maximized)
		xdg_toplevel_set_maximized(app.top.toplevel);
	wl_surface_commit(app.top.surface);

	status = 0;
	while (!app.done && !app.top.closed) {
		if (wl_display_dispatch(app.display) < 0) {
			int err = wl_display_get_error(app.display);
			const struct wl_interface *iface = NULL;
			uint32_t id = 0;
			uint32_t code = err == EPROTO ?
				wl_display_get_protocol_error(app.display, &iface, &id) : 0;
			fprintf(stderr, "duet-test-pattern: display error %s (protocol %s#%u code %u)\n",
			        strerror(err), iface ? iface->name : "-", id, code);
			status = 1;
			break;
		}
	}

	if (app.frame)
		wl_callback_destroy(app.frame);
	for (int i = 0; i < NUM_BUFFERS; i++)
		buffer_free(&app.buffers[i]);
	test_toplevel_destroy(&app.top);
	if (app.in.pointer)
		wl_pointer_destroy(app.in.pointer);
	if (app.in.keyboard)
		wl_keyboard_destroy(app.in.keyboard);
	if (app.seat)
		wl_seat_destroy(app.seat);
	test_globals_destroy(&app.g);
	wl_display_disconnect(app.display);
	return status;
}
