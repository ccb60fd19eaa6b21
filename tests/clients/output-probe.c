/* duet-output-probe: what a client sees of several outputs, for
 * tests/integration/test_outputs.py.
 *
 * Prints each output as "output NAME X Y W H" (wl_output's name and mode,
 * xdg-output's logical position and size), then "outputs-done"; maps a
 * 200x150 red toplevel and prints "enter NAME" / "leave NAME" as its
 * wl_surface enters and leaves outputs. It redraws on every frame callback
 * (damage only, the same pixels) with presentation feedback. On a line
 * "max" read from stdin it asks to be maximized, on any other line it
 * prints "frames N sync NAME": frame callbacks received so far and the
 * sync_output of the last presented feedback. Each configure after the
 * first is printed as "configure W H".
 *
 * Exit status: 0 on end of stdin, 2 on a setup failure or protocol error.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client-common.h"
#include "presentation-time-client-protocol.h"
#include "xdg-output-unstable-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

#define MAX_OUTPUTS 8
#define WIDTH 200
#define HEIGHT 150
#define RED 0xffff0000u

struct probe_output {
	struct wl_output *wl;
	struct zxdg_output_v1 *xdg;
	char name[64];
	int x, y, width, height;
};

struct probe {
	struct wl_display *display;
	struct test_globals g;
	struct zxdg_output_manager_v1 *xdg_output_manager;
	struct wp_presentation *presentation;
	struct probe_output outputs[MAX_OUTPUTS];
	int n_outputs;
	struct test_toplevel top;
	struct wl_callback *frame;
	unsigned frames;
	char sync_name[64];
};

static void die(const char *msg)
{
	fprintf(stderr, "duet-output-probe: %s\n", msg);
	exit(2);
}

static struct probe_output *output_of(struct probe *p, struct wl_output *wl)
{
	for (int i = 0; i < p->n_outputs; i++)
		if (p->outputs[i].wl == wl)
			return &p->outputs[i];
	return NULL;
}

/* ---------------------------------------------------------- wl_output */

static void output_geometry(void *data, struct wl_output *o, int32_t x, int32_t y, int32_t pw,
                            int32_t ph, int32_t subpixel, const char *make, const char *model,
                            int32_t transform)
{
}

static void output_mode(void *data, struct wl_output *o, uint32_t flags, int32_t w, int32_t h,
                        int32_t refresh)
{
}

static void output_done(void *data, struct wl_output *o)
{
}

static void output_scale(void *data, struct wl_output *o, int32_t factor)
{
}

static void output_name(void *data, struct wl_output *o, const char *name)
{
	struct probe_output *out = data;
	snprintf(out->name, sizeof(out->name), "%s", name);
}

static void output_description(void *data, struct wl_output *o, const char *description)
{
}

static const struct wl_output_listener output_listener = {
	.geometry = output_geometry,
	.mode = output_mode,
	.done = output_done,
	.scale = output_scale,
	.name = output_name,
	.description = output_description,
};

/* -------------------------------------------------------- xdg_output */

static void xdg_position(void *data, struct zxdg_output_v1 *x, int32_t px, int32_t py)
{
	struct probe_output *out = data;
	out->x = px;
	out->y = py;
}

static void xdg_size(void *data, struct zxdg_output_v1 *x, int32_t w, int32_t h)
{
	struct probe_output *out = data;
	out->width = w;
	out->height = h;
}

static void xdg_done(void *data, struct zxdg_output_v1 *x)
{
}

static void xdg_name(void *data, struct zxdg_output_v1 *x, const char *name)
{
}

static void xdg_description(void *data, struct zxdg_output_v1 *x, const char *d)
{
}

static const struct zxdg_output_v1_listener xdg_output_listener = {
	.logical_position = xdg_position,
	.logical_size = xdg_size,
	.done = xdg_done,
	.name = xdg_name,
	.description = xdg_description,
};

/* ----------------------------------------------------------- registry */

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
                            const char *interface, uint32_t version)
{
	struct probe *p = data;
	if (strcmp(interface, wl_output_interface.name) == 0 && version >= 4 &&
	    p->n_outputs < MAX_OUTPUTS) {
		struct probe_output *out = &p->outputs[p->n_outputs++];
		out->wl = wl_registry_bind(registry, name, &wl_output_interface, 4);
		wl_output_add_listener(out->wl, &output_listener, out);
	} else if (strcmp(interface, zxdg_output_manager_v1_interface.name) == 0 &&
	           version >= 2) {
		p->xdg_output_manager = wl_registry_bind(registry, name,
		                                         &zxdg_output_manager_v1_interface, 2);
	} else if (strcmp(interface, wp_presentation_interface.name) == 0) {
		p->presentation = wl_registry_bind(registry, name, &wp_presentation_interface, 1);
	}
}

/* ---------------------------------------------------------- surface */

static void surface_enter(void *data, struct wl_surface *s, struct wl_output *wl)
{
	struct probe_output *out = output_of(data, wl);
	printf("enter %s\n", out ? out->name : "?");
	fflush(stdout);
}

static void surface_leave(void *data, struct wl_surface *s, struct wl_output *wl)
{
	struct probe_output *out = output_of(data, wl);
	printf("leave %s\n", out ? out->name : "?");
	fflush(stdout);
}

static const struct wl_surface_listener surface_listener = {
	.enter = surface_enter,
	.leave = surface_leave,
};

static void fb_sync_output(void *data, struct wp_presentation_feedback *fb,
                           struct wl_output *wl)
{
	struct probe *p = data;
	struct probe_output *out = output_of(p, wl);
	snprintf(p->sync_name, sizeof(p->sync_name), "%s", out ? out->name : "?");
}

static void fb_presented(void *data, struct wp_presentation_feedback *fb, uint32_t sec_hi,
                         uint32_t sec_lo, uint32_t nsec, uint32_t refresh, uint32_t seq_hi,
                         uint32_t seq_lo, uint32_t flags)
{
	wp_presentation_feedback_destroy(fb);
}

static void fb_discarded(void *data, struct wp_presentation_feedback *fb)
{
	wp_presentation_feedback_destroy(fb);
}

static const struct wp_presentation_feedback_listener feedback_listener = {
	.sync_output = fb_sync_output,
	.presented = fb_presented,
	.discarded = fb_discarded,
};

static void redraw(struct probe *p);

static void frame_done(void *data, struct wl_callback *cb, uint32_t time)
{
	struct probe *p = data;
	wl_callback_destroy(cb);
	p->frame = NULL;
	p->frames++;
	redraw(p);
}

static const struct wl_callback_listener frame_listener = { .done = frame_done };

/* The same pixels again: damage without a new buffer, so each frame is a
 * repaint of the window's outputs and nothing else. */
static void redraw(struct probe *p)
{
	p->frame = wl_surface_frame(p->top.surface);
	wl_callback_add_listener(p->frame, &frame_listener, p);
	if (p->presentation) {
		struct wp_presentation_feedback *fb = wp_presentation_feedback(p->presentation,
		                                                               p->top.surface);
		wp_presentation_feedback_add_listener(fb, &feedback_listener, p);
	}
	wl_surface_damage(p->top.surface, 0, 0, WIDTH, HEIGHT);
	wl_surface_commit(p->top.surface);
}

/* Every configure after the first (which precedes the first
 * xdg_surface.configure). */
static void toplevel_configure(void *data, struct wl_array *states)
{
	struct probe *p = data;
	if (!p->top.configured)
		return;
	printf("configure %d %d\n", p->top.width, p->top.height);
	fflush(stdout);
}

int main(void)
{
	struct probe p = { 0 };
	snprintf(p.sync_name, sizeof(p.sync_name), "none");
	struct test_extra_globals outputs = { registry_global, &p };
	p.display = test_connect("duet-output-probe", &p.g, &outputs);
	if (!p.display)
		exit(2);
	if (!p.xdg_output_manager || p.n_outputs == 0)
		die("no wl_output v4 or zxdg_output_manager_v1");
	for (int i = 0; i < p.n_outputs; i++) {
		struct probe_output *out = &p.outputs[i];
		out->xdg = zxdg_output_manager_v1_get_xdg_output(p.xdg_output_manager, out->wl);
		zxdg_output_v1_add_listener(out->xdg, &xdg_output_listener, out);
	}
	wl_display_roundtrip(p.display);
	for (int i = 0; i < p.n_outputs; i++) {
		struct probe_output *out = &p.outputs[i];
		printf("output %s %d %d %d %d\n", out->name, out->x, out->y, out->width,
		       out->height);
	}
	printf("outputs-done\n");
	fflush(stdout);

	p.top.toplevel_configure = toplevel_configure;
	p.top.data = &p;
	test_toplevel_create(&p.g, &p.top, "duet-output-probe");
	wl_surface_add_listener(p.top.surface, &surface_listener, &p);
	wl_surface_commit(p.top.surface);
	while (!p.top.configured)
		if (wl_display_dispatch(p.display) < 0)
			die("protocol error before the first configure");
	struct wl_buffer *red = test_solid_buffer(p.g.shm, WIDTH, HEIGHT, RED);
	if (!red)
		die("shm buffer");
	wl_surface_attach(p.top.surface, red, 0, 0);
	redraw(&p);

	struct pollfd fds[2] = {
		{ .fd = wl_display_get_fd(p.display), .events = POLLIN },
		{ .fd = STDIN_FILENO, .events = POLLIN },
	};
	char line[64];
	for (;;) {
		while (wl_display_prepare_read(p.display) != 0)
			wl_display_dispatch_pending(p.display);
		if (wl_display_flush(p.display) < 0)
			die("flush failed");
		if (poll(fds, 2, -1) < 0) {
			wl_display_cancel_read(p.display);
			die("poll");
		}
		if (fds[0].revents & POLLIN) {
			if (wl_display_read_events(p.display) < 0)
				die("protocol error");
		} else {
			wl_display_cancel_read(p.display);
		}
		if (wl_display_dispatch_pending(p.display) < 0)
			die("protocol error");
		if (fds[1].revents & (POLLIN | POLLHUP)) {
			if (!fgets(line, sizeof(line), stdin))
				return 0;
			if (strcmp(line, "max\n") == 0) {
				xdg_toplevel_set_maximized(p.top.toplevel);
				continue;
			}
			printf("frames %u sync %s\n", p.frames, p.sync_name);
			fflush(stdout);
		}
	}
}
