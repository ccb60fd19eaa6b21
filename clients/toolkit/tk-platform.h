/* A platform is a window system: the connection and its events, windows,
 * the hooks around each frame, and what the engines draw through, the
 * native display and window (EGL) and shared-memory buffers (sw). One
 * table per platform (tk-wayland.c, tk-x11.c), as glmark2's native
 * states; its state hangs off app->platform_data / win->platform_data. */
#ifndef DUET_TK_PLATFORM_H
#define DUET_TK_PLATFORM_H

#include <EGL/egl.h>
#include <stdbool.h>
#include <stdint.h>

struct tk_app;
struct tk_window;

struct tk_platform {
	const char *name; /* tk_app_backend_name */
	int (*connect)(struct tk_app *app);
	void (*disconnect)(struct tk_app *app);
	int (*dispatch)(struct tk_app *app, int timeout_ms);
	bool (*can_server_resize)(struct tk_app *app, const char **why);
	/* Optional: false without it (see tk_app_protocol_counts). */
	bool (*protocol_counts)(struct tk_app *app, uint64_t *requests, uint64_t *events);
	int (*roundtrip)(struct tk_app *app);
	/* Waits for the reply to the mark a frame's post_commit sent (see
	 * tk_window_mark_received) and sets win->mark_ns; -1 if the
	 * connection is lost. */
	int (*wait_mark)(struct tk_window *win);
	/* Optional: true once the connection is broken; an engine then makes
	 * no call that would talk to the server (tk-engine-gl.c says why). */
	bool (*connection_broken)(struct tk_app *app);

	int (*window_create)(struct tk_window *win);
	void (*window_destroy)(struct tk_window *win);
	void (*set_title)(struct tk_window *win, const char *title);
	int (*show)(struct tk_window *win);
	void (*request_resize)(struct tk_window *win, int width, int height);
	int (*server_resize)(struct tk_window *win, int width, int height);

	/* Around every frame: begin (before drawing; optional), pre_commit
	 * (just before the engine's present carries the frame; optional) and
	 * post_commit (after it). */
	void (*frame_begin)(struct tk_window *win);
	void (*frame_pre_commit)(struct tk_window *win, uint64_t seq);
	void (*frame_post_commit)(struct tk_window *win, uint64_t seq);

	/* For the gl engine: the EGL platform, its native display (and the
	 * attributes eglGetPlatformDisplay takes with it, or NULL) and a
	 * native window of the window's surface. The window follows a new
	 * size through native_window_resize where it does not by itself
	 * (optional, as is native_window_destroy). */
	EGLenum egl_platform;
	void *(*native_display)(struct tk_app *app, const EGLint **attribs);
	void *(*native_window)(struct tk_window *win, int width, int height);
	void (*native_window_resize)(struct tk_window *win, int width, int height);
	void (*native_window_destroy)(struct tk_window *win);

	/* For the sw engine: shared-memory buffers. shm_init (optional) says
	 * whether the server takes them, once, after connect; shm_acquire
	 * gives a buffer of this size to draw into, shm_present hands it to
	 * the server (sent by frame_post_commit's flush), shm_destroy frees
	 * the window's buffers. -1 on failure. */
	int (*shm_init)(struct tk_app *app);
	int (*shm_acquire)(struct tk_window *win, int width, int height, void **pixels, int *stride);
	int (*shm_present)(struct tk_window *win);
	void (*shm_destroy)(struct tk_window *win);
};

extern const struct tk_platform tk_platform_wayland;
extern const struct tk_platform tk_platform_x11;

#endif
