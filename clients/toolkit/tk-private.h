/* Internals shared by the toolkit's files: the app and window structs and
 * the helpers tk-app.c offers the platforms and engines. A window system
 * is a platform (tk-platform.h), a way of drawing an engine
 * (tk-engine.h); tk-app.c joins one of each. */
#ifndef DUET_TK_PRIVATE_H
#define DUET_TK_PRIVATE_H

#include <stddef.h>

#include "tk-draw.h"
#include "tk-engine.h"
#include "tk-platform.h"
#include "tk.h"

/* A presented event waiting to be delivered from tk_app_dispatch (the X11
 * round-trip fallback knows it inside end_frame, where calling back into
 * the app would re-enter it). */
struct tk_pending_present {
	struct tk_window *win;
	struct tk_frame_info info;
};

#define TK_MAX_PENDING 64

struct tk_app {
	const struct tk_platform *platform;
	const struct tk_engine *engine;
	char *app_id;
	const char *presentation;  /* see tk_app_presentation_name */
	const char *path_detail;
	void *platform_data;
	void *engine_data;
	uint64_t connected_ns; /* set by the platform's connect */
	struct tk_window *windows[8];
	struct tk_pending_present pending[TK_MAX_PENDING];
	int n_pending;
};

struct tk_window {
	struct tk_app *app;
	const struct tk_window_listener *listener;
	void *data;
	void *platform_data;
	void *engine_data;
	int width, height;  /* size the next frame is drawn at */
	bool ready;
	bool close_requested;
	bool feedback;
	bool in_frame;
	uint64_t seq;
	uint64_t submitted_ns; /* see tk_window_submitted_ns; platforms set it after their flush */
	/* tk_window_mark_received: want_mark until the next frame's post_commit
	 * sends the mark; mark_sent until tk_window_wait_received has its reply. */
	bool want_mark, mark_sent;
	uint64_t mark_ns;     /* when the platform saw the mark's reply, 0 before */
	int frame_width, frame_height; /* size of the frame being drawn */
	/* Drawing */
	struct tk_draw *draw;
	struct tk_image *images;
};

/* tk-app.c */
void tk_window_set_size(struct tk_window *win, int width, int height);
void tk_window_emit_presented(struct tk_window *win, const struct tk_frame_info *info);
void tk_window_queue_presented(struct tk_window *win, const struct tk_frame_info *info);
void tk_window_emit_close(struct tk_window *win);
void tk_window_emit_key(struct tk_window *win, uint32_t keycode, bool pressed);
/* Frees the window's images and draw state (the gl engine calls it with
 * its context current: they live in it). */
void tk_window_free_drawing(struct tk_window *win);
/* poll() on fd for POLLIN up to timeout_ms; 1 readable, 0 timeout, -1 error. */
int tk_poll_fd(int fd, int timeout_ms);

#endif
