/* The sw engine: pixman (tk-draw-sw.c) draws each frame straight into a
 * shared-memory buffer of the platform's, which the platform then hands
 * to the server. */
#include "tk-private.h"

static int sw_init(struct tk_app *app)
{
	return app->platform->shm_init ? app->platform->shm_init(app) : 0;
}

static struct tk_draw *sw_begin_frame(struct tk_window *win)
{
	void *pixels;
	int stride;
	if (win->app->platform->shm_acquire(win, win->width, win->height, &pixels, &stride) < 0)
		return NULL;
	if (!win->draw)
		win->draw = tk_draw_sw_create();
	if (!win->draw)
		return NULL;
	tk_draw_sw_begin(win->draw, pixels, stride, win->width, win->height);
	return win->draw;
}

static int sw_present(struct tk_window *win)
{
	return win->app->platform->shm_present(win);
}

static void sw_window_fini(struct tk_window *win)
{
	/* The draw state points into the buffers: it goes first. */
	tk_window_free_drawing(win);
	win->app->platform->shm_destroy(win);
}

const struct tk_engine tk_engine_sw = {
	.name = "sw",
	.path = "shm",
	.present_sends = false,
	.init = sw_init,
	.begin_frame = sw_begin_frame,
	.present = sw_present,
	.window_fini = sw_window_fini,
};
