#include "client-common.h"

#include <stdlib.h>

#include "xdg-shell-client-protocol.h"

static void toplevel_configure(void *data, struct xdg_toplevel *toplevel, int32_t w, int32_t h,
                               struct wl_array *states)
{
	struct test_toplevel *t = data;
	t->width = w;
	t->height = h;
	if (t->toplevel_configure)
		t->toplevel_configure(t->data, states);
}

/* A client that asks for it runs until the test kills it or closes the
 * window; either is a clean end. */
static void toplevel_close(void *data, struct xdg_toplevel *toplevel)
{
	struct test_toplevel *t = data;
	t->closed = true;
	if (t->exit_on_close)
		exit(0);
}

static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure,
	.close = toplevel_close,
};

static void xdg_surface_configure(void *data, struct xdg_surface *xdg_surface, uint32_t serial)
{
	struct test_toplevel *t = data;
	t->serial = serial;
	t->configured = true;
	if (!t->manual_ack)
		xdg_surface_ack_configure(xdg_surface, serial);
	if (t->configure)
		t->configure(t->data);
}

static const struct xdg_surface_listener xdg_surface_listener = {
	.configure = xdg_surface_configure,
};

void test_toplevel_create(struct test_globals *g, struct test_toplevel *t, const char *app_id)
{
	t->configured = false;
	t->closed = false;
	t->surface = wl_compositor_create_surface(g->compositor);
	t->xdg_surface = xdg_wm_base_get_xdg_surface(g->wm_base, t->surface);
	xdg_surface_add_listener(t->xdg_surface, &xdg_surface_listener, t);
	t->toplevel = xdg_surface_get_toplevel(t->xdg_surface);
	xdg_toplevel_add_listener(t->toplevel, &toplevel_listener, t);
	xdg_toplevel_set_app_id(t->toplevel, app_id);
}

bool test_toplevel_map(struct wl_display *display, struct test_globals *g,
                       struct test_toplevel *t, const char *app_id)
{
	t->exit_on_close = true;
	test_toplevel_create(g, t, app_id);
	wl_surface_commit(t->surface);
	while (!t->configured)
		if (wl_display_dispatch(display) < 0)
			return false;
	return true;
}

/* The three go together: test_toplevel_create makes them all. */
void test_toplevel_destroy(struct test_toplevel *t)
{
	if (!t->surface)
		return;
	xdg_toplevel_destroy(t->toplevel);
	xdg_surface_destroy(t->xdg_surface);
	wl_surface_destroy(t->surface);
	t->toplevel = NULL;
	t->xdg_surface = NULL;
	t->surface = NULL;
}

static void frame_done(void *data, struct wl_callback *cb, uint32_t time)
{
	bool *done = data;
	*done = true;
	wl_callback_destroy(cb);
}

static const struct wl_callback_listener frame_listener = {
	.done = frame_done,
};

void test_frame_request(struct wl_surface *surface, bool *done)
{
	struct wl_callback *cb = wl_surface_frame(surface);
	wl_callback_add_listener(cb, &frame_listener, done);
	*done = false;
}

bool test_frame_wait(struct wl_display *display, const bool *done)
{
	while (!*done)
		if (wl_display_dispatch(display) < 0)
			return false;
	return true;
}

static void frame_commit_done(void *data, struct wl_callback *cb, uint32_t time)
{
	struct test_frame *f = data;
	test_frame_cancel(f);
	f->done = true;
	if (f->hook)
		f->hook(f->data);
}

static const struct wl_callback_listener frame_commit_listener = {
	.done = frame_commit_done,
};

void test_frame_commit(struct test_frame *f, struct wl_surface *surface,
                       struct wl_buffer *buffer, int w, int h)
{
	wl_surface_attach(surface, buffer, 0, 0);
	wl_surface_damage_buffer(surface, 0, 0, w, h);
	test_frame_cancel(f);
	f->callback = wl_surface_frame(surface);
	wl_callback_add_listener(f->callback, &frame_commit_listener, f);
	f->done = false;
	wl_surface_commit(surface);
}

void test_frame_cancel(struct test_frame *f)
{
	if (f->callback)
		wl_callback_destroy(f->callback);
	f->callback = NULL;
}
