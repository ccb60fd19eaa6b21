/* An engine draws a window's frames and hands them to the platform: gl
 * (EGL + GLES2, tk-engine-gl.c) or sw (pixman into the platform's
 * shared-memory buffers, tk-engine-sw.c). One table per engine, as
 * glmark2's gl-states; its state hangs off app->engine_data /
 * win->engine_data. */
#ifndef DUET_TK_ENGINE_H
#define DUET_TK_ENGINE_H

#include <stdbool.h>

struct tk_app;
struct tk_window;
struct tk_draw;

struct tk_engine {
	const char *name; /* tk_app_engine_name */
	const char *path; /* tk_app_path_detail until the platform knows more */
	/* present writes the frame to the server itself (EGL flushes its
	 * swap); otherwise it is still queued when frame_post_commit runs,
	 * whose flush sends it. */
	bool present_sends;
	/* After the platform's connect; -1 after printing why. */
	int (*init)(struct tk_app *app);
	void (*fini)(struct tk_app *app); /* optional */
	/* The window's drawing interface for a frame at its current size. */
	struct tk_draw *(*begin_frame)(struct tk_window *win);
	/* Hands the drawn frame over: swap, or the shm buffer presented. */
	int (*present)(struct tk_window *win);
	/* Frees what the engine holds for the window, its images' and draw
	 * state included (tk_window_free_drawing). */
	void (*window_fini)(struct tk_window *win);
};

extern const struct tk_engine tk_engine_gl;
extern const struct tk_engine tk_engine_sw;

#endif
