/* Internals shared by the toolkit's files: the app and window structs, the
 * backend vtable (Wayland, X11) and the engine glue (EGL, shared memory). */
#ifndef DUET_TK_PRIVATE_H
#define DUET_TK_PRIVATE_H

#include <EGL/egl.h>
#include <GLES2/gl2.h>
#include <stddef.h>

#include "tk.h"

struct tk_window;

/* One per window system. Every function gets the app or window; backend
 * state hangs off app->backend_data / win->backend_data. */
struct tk_backend {
	const char *name;
	int (*connect)(struct tk_app *app);
	void (*disconnect)(struct tk_app *app);
	int (*dispatch)(struct tk_app *app, int timeout_ms);
	bool (*can_server_resize)(struct tk_app *app, const char **why);
	bool (*protocol_counts)(struct tk_app *app, uint64_t *requests, uint64_t *events);
	int (*roundtrip)(struct tk_app *app);
	/* Waits for the reply to the mark a frame's post_commit sent (see
	 * tk_window_mark_received) and sets win->mark_ns; -1 if the
	 * connection is lost. */
	int (*wait_mark)(struct tk_window *win);

	int (*window_create)(struct tk_window *win);
	void (*window_destroy)(struct tk_window *win);
	void (*set_title)(struct tk_window *win, const char *title);
	int (*show)(struct tk_window *win);
	void (*request_resize)(struct tk_window *win, int width, int height);
	int (*server_resize)(struct tk_window *win, int width, int height);

	/* Around every frame: begin (before drawing), pre_commit (just before
	 * the swap/commit that carries the frame) and post_commit. */
	void (*frame_begin)(struct tk_window *win);
	void (*frame_pre_commit)(struct tk_window *win, uint64_t seq);
	void (*frame_post_commit)(struct tk_window *win, uint64_t seq);

	/* EGL glue: platform enum + native display, native window. */
	EGLenum egl_platform;
	void *(*egl_native_display)(struct tk_app *app);
	void *(*egl_native_window)(struct tk_window *win, int width, int height);
	void (*egl_window_resize)(struct tk_window *win, int width, int height);
	void (*egl_window_destroy)(struct tk_window *win);
	/* Optional: true once the connection the EGL display uses is broken;
	 * no EGL call that talks to the server is made after that. */
	bool (*egl_connection_broken)(struct tk_app *app);

	/* Software glue (tk-shm.c): a buffer of this size to draw into, and
	 * handing it to the server. */
	int (*sw_acquire)(struct tk_window *win, int width, int height, void **pixels, int *stride);
	int (*sw_present)(struct tk_window *win);
	void (*sw_destroy)(struct tk_window *win);
};

extern const struct tk_backend tk_backend_wayland;
extern const struct tk_backend tk_backend_x11;

struct tk_egl {
	EGLDisplay display;
	EGLConfig config;
	EGLContext context;
};

/* A presented event waiting to be delivered from tk_app_dispatch (the X11
 * round-trip fallback knows it inside end_frame, where calling back into
 * the app would re-enter it). */
struct tk_pending_present {
	struct tk_window *win;
	struct tk_frame_info info;
};

#define TK_MAX_PENDING 64

struct tk_app {
	const struct tk_backend *backend;
	enum tk_engine_kind engine;
	char *app_id;
	const char *presentation;  /* see tk_app_presentation_name */
	const char *path_detail;
	void *backend_data;
	struct tk_egl egl;
	bool egl_ready;
	int egl_screen; /* X11 screen number for EGL_PLATFORM_XCB_SCREEN_EXT */
	uint64_t connected_ns; /* set by the backend's connect */
	struct tk_window *windows[8];
	struct tk_pending_present pending[TK_MAX_PENDING];
	int n_pending;
};

struct tk_draw;
struct tk_draw_ops {
	void (*clear)(struct tk_draw *d, struct tk_color c);
	void (*rect)(struct tk_draw *d, float x, float y, float w, float h, struct tk_color c);
	void (*image)(struct tk_draw *d, struct tk_image *img, float sx, float sy, float sw,
	              float sh, float x, float y, float w, float h, enum tk_filter filter,
	              struct tk_color tint);
	void (*gradient)(struct tk_draw *d, float x, float y, float w, float h,
	                 struct tk_color c0, struct tk_color c1, bool vertical);
	void (*flush)(struct tk_draw *d);
	void (*destroy)(struct tk_draw *d);
	void (*image_release)(struct tk_draw *d, struct tk_image *img);
};

struct tk_draw {
	const struct tk_draw_ops *ops;
	int width, height;
};

struct tk_image {
	struct tk_window *win;
	int width, height;
	uint32_t *pixels; /* premultiplied ARGB32, tightly packed */
	GLuint texture;   /* GL engine, uploaded on first use */
	int gl_filter;    /* GL engine: the texture's current filter, 0 unset */
	void *pix;        /* sw engine: pixman_image_t, made on first use */
	struct tk_image *next;
};

struct tk_window {
	struct tk_app *app;
	const struct tk_window_listener *listener;
	void *data;
	void *backend_data;
	int width, height;  /* size the next frame is drawn at */
	bool ready;
	bool feedback;
	bool in_frame;
	uint64_t seq;
	uint64_t submitted_ns; /* see tk_window_submitted_ns; backends set it after their flush */
	/* tk_window_mark_received: want_mark until the next frame's post_commit
	 * sends the mark; mark_sent until tk_window_wait_received has its reply. */
	bool want_mark, mark_sent;
	uint64_t mark_ns;     /* when the backend saw the mark's reply, 0 before */
	uint32_t mark_cookie; /* X11: the GetInputFocus sequence number */
	int frame_width, frame_height; /* size of the frame being drawn */
	/* GL engine */
	EGLSurface egl_surface;
	int egl_width, egl_height;
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
/* poll() on fd for POLLIN up to timeout_ms; 1 readable, 0 timeout, -1 error. */
int tk_poll_fd(int fd, int timeout_ms);

/* tk-egl.c */
int tk_egl_init(struct tk_app *app);
void tk_egl_fini(struct tk_app *app);
struct tk_draw *tk_egl_begin(struct tk_window *win);
int tk_egl_swap(struct tk_window *win);
void tk_egl_window_fini(struct tk_window *win);

/* tk-draw-gl.c / tk-draw-sw.c */
struct tk_draw *tk_draw_gl_create(void);
void tk_draw_gl_begin(struct tk_draw *d, int width, int height);
struct tk_draw *tk_draw_sw_create(void);
void tk_draw_sw_begin(struct tk_draw *d, void *pixels, int stride, int width, int height);

/* tk-shm.c: both backends' software paths */
int tk_shm_wl_acquire(struct tk_window *win, int width, int height, void **pixels, int *stride);
int tk_shm_wl_present(struct tk_window *win);
void tk_shm_wl_destroy(struct tk_window *win);
int tk_shm_x11_acquire(struct tk_window *win, int width, int height, void **pixels, int *stride);
int tk_shm_x11_present(struct tk_window *win);
void tk_shm_x11_destroy(struct tk_window *win);

/* Each backend exposes what tk-shm.c needs. */
struct wl_shm;
struct wl_surface;
struct wl_display;
struct xcb_connection_t;
struct wl_shm *tk_wayland_shm(struct tk_app *app);
struct wl_display *tk_wayland_display(struct tk_app *app);
struct wl_surface *tk_wayland_surface(struct tk_window *win);
void **tk_wayland_shm_slot(struct tk_window *win);
struct xcb_connection_t *tk_x11_connection(struct tk_app *app);
uint32_t tk_x11_window_id(struct tk_window *win);
uint32_t tk_x11_gc(struct tk_window *win);
void **tk_x11_shm_slot(struct tk_window *win);
bool tk_x11_handle_shm_event(struct tk_app *app, void *event);

#endif
