/* tk: duet's small window-system abstraction for its test apps, in the
 * spirit of EFL's Ecore_Evas. One app binary runs on Wayland and on X11 and
 * draws through one of two engines (GLES2 on EGL, or software into shared
 * memory), so the bench compares window systems, not apps.
 *
 * It behaves like a real toolkit at start-up (globals and ICCCM/EWMH
 * properties a toolkit sets) and takes no shortcut a toolkit would not take.
 * Everything runs on one thread: tk_app_dispatch() reads the connection and
 * calls the window's listener. */
#ifndef DUET_TK_H
#define DUET_TK_H

#include <stdbool.h>
#include <stdint.h>

enum tk_backend_kind { TK_BACKEND_AUTO, TK_BACKEND_WAYLAND, TK_BACKEND_X11 };
enum tk_engine_kind { TK_ENGINE_GL, TK_ENGINE_SW };

struct tk_options {
	enum tk_backend_kind backend;
	enum tk_engine_kind engine;
};

struct tk_app;
struct tk_window;
struct tk_draw;
struct tk_image;

/* Takes --backend wayland|x11 and --engine gl|sw (also --opt=value) out of
 * argv, leaving the app's own options. Returns 0, or -1 after printing why
 * to stderr. */
int tk_parse_options(int *argc, char **argv, struct tk_options *opts);
/* One line for --help texts. */
#define TK_OPTIONS_HELP \
	"  --backend wayland|x11  window system (default: WAYLAND_DISPLAY, then DISPLAY)\n" \
	"  --engine gl|sw         GLES2 on EGL (default) or software into shared memory\n"

/* Connects to the display. app_id is the Wayland app_id and the X11
 * WM_CLASS. NULL after printing why to stderr (no display, no EGL, ...). */
struct tk_app *tk_app_create(const struct tk_options *opts, const char *app_id);
void tk_app_destroy(struct tk_app *app);

const char *tk_app_backend_name(const struct tk_app *app);  /* "wayland" | "x11" */
const char *tk_app_engine_name(const struct tk_app *app);   /* "gl" | "sw" */
/* How "presented" is known: "wp_presentation", "frame-drawn" (the X11 WM's
 * _NET_WM_FRAME_DRAWN) or "roundtrip-fallback" (a round trip to the X
 * server after the swap: the server has the pixels, a compositing manager
 * may not have shown them yet). Valid once a window is shown. */
const char *tk_app_presentation_name(const struct tk_app *app);
/* Free-form detail of the path, e.g. "mit-shm" or "put-image" for sw on X11. */
const char *tk_app_path_detail(const struct tk_app *app);

/* Waits up to timeout_ms (-1: forever, 0: poll) for events and handles
 * them. Returns 0, or -1 if the connection is lost. */
int tk_app_dispatch(struct tk_app *app, int timeout_ms);

/* CLOCK_MONOTONIC when the display connection came up (the socket
 * connected and the server accepted us, before any request of ours). */
uint64_t tk_app_connected_ns(const struct tk_app *app);
/* One round trip (wl_display_sync / GetInputFocus): when it returns the
 * server has read and handled every request sent before. Returns
 * CLOCK_MONOTONIC at the reply, 0 if the connection is lost. Wayland
 * events that arrive meanwhile are dispatched; X11 events are queued for
 * the next tk_app_dispatch. */
uint64_t tk_app_roundtrip(struct tk_app *app);

/* X11 only: X requests sent on the app's connection so far (from XCB
 * sequence numbers, EGL's requests included, the probes themselves not)
 * and events received. False on Wayland, whose messages duet-compositor's
 * protocol logger counts. */
bool tk_app_protocol_counts(struct tk_app *app, uint64_t *requests, uint64_t *events);

/* Whether the server offers a server-initiated resize (duet_test on
 * Wayland, duet-xwm's _DUET_RESIZE on X11); why not in *why. */
bool tk_app_can_server_resize(struct tk_app *app, const char **why);

struct tk_frame_info {
	uint64_t seq;          /* tk_window_end_frame()'s return value */
	int width, height;     /* the frame's buffer size */
	uint64_t commit_ns;    /* CLOCK_MONOTONIC when the frame was handed over */
	uint64_t presented_ns; /* CLOCK_MONOTONIC when shown; 0 if discarded */
	bool discarded;        /* replaced before it was shown */
};

struct tk_window_listener {
	/* The size the next frame must be drawn at changed: by the server
	 * (configure, WM) or because the client's own resize took effect. */
	void (*resized)(void *data, struct tk_window *win, int width, int height);
	void (*presented)(void *data, struct tk_window *win, const struct tk_frame_info *info);
	void (*close_requested)(void *data, struct tk_window *win);
	/* A key was pressed or released while the window had keyboard focus.
	 * keycode is the evdev code (linux/input-event-codes.h) on both window
	 * systems (X11's keycode - 8); t_ns is CLOCK_MONOTONIC when the toolkit
	 * read the event. Optional (NULL: keys are ignored). */
	void (*key)(void *data, struct tk_window *win, uint32_t keycode, bool pressed,
	            uint64_t t_ns);
};

struct tk_window *tk_window_create(struct tk_app *app, int width, int height,
                                   const struct tk_window_listener *listener, void *data);
void tk_window_destroy(struct tk_window *win);
void tk_window_set_title(struct tk_window *win, const char *title);
/* Maps the window. It may be drawn once tk_window_ready() is true. */
int tk_window_show(struct tk_window *win);
bool tk_window_ready(const struct tk_window *win);
void tk_window_get_size(const struct tk_window *win, int *width, int *height);
/* Client-initiated resize. Wayland: the next frame is simply committed at
 * the new size; X11: ConfigureWindow, which the WM may change; either way
 * the resized event tells when the new size holds. */
void tk_window_resize(struct tk_window *win, int width, int height);
/* Server-initiated resize (see tk_app_can_server_resize); -1 if unsupported. */
int tk_window_server_resize(struct tk_window *win, int width, int height);
/* Whether the window was asked to close (close_requested was emitted);
 * once true it stays true. */
bool tk_window_close_requested(const struct tk_window *win);
/* Ask for (default) or stop asking for presentation feedback per frame. */
void tk_window_set_feedback(struct tk_window *win, bool on);

/* Drawing: begin_frame returns the engine's drawing interface for the
 * window's current size; end_frame swaps (GL) or attaches and commits /
 * puts the image (sw) and returns the frame's sequence number (0 on
 * error). *flush_ns gets the time spent in the swap/commit call. */
struct tk_draw *tk_window_begin_frame(struct tk_window *win);
uint64_t tk_window_end_frame(struct tk_window *win, uint64_t *flush_ns);
/* CLOCK_MONOTONIC when the last frame was handed over: its swap/commit
 * returned and the connection was flushed (before the X11 round-trip
 * fallback waits for the server). 0 before the first frame. */
uint64_t tk_window_submitted_ns(const struct tk_window *win);
/* Asks that the next frame carry a "received" mark: a request with a
 * reply (wl_display_sync / GetInputFocus) sent in the same write as the
 * frame, so confirming that the server handled the frame costs no write
 * of its own (with the GL engine, EGL writes the frame itself and the
 * mark follows in a write of its own). tk_window_wait_received then waits
 * for the reply and returns CLOCK_MONOTONIC when it arrived (0 when the
 * connection is lost or no mark was sent); Wayland events that arrive
 * meanwhile are dispatched, X11 events queued as in tk_app_roundtrip. */
void tk_window_mark_received(struct tk_window *win);
uint64_t tk_window_wait_received(struct tk_window *win);

/* ------------------------------------------------------------ drawing */
/* Colours are straight (not premultiplied) RGBA in 0..1; the engines blend
 * premultiplied, source over. */
struct tk_color { float r, g, b, a; };

enum tk_filter { TK_FILTER_NEAREST, TK_FILTER_SMOOTH };

/* Pixels are premultiplied ARGB32 (0xAARRGGBB in a uint32_t), stride in
 * bytes. The image belongs to the window's engine. */
struct tk_image *tk_image_create(struct tk_window *win, int width, int height,
                                 const uint32_t *pixels, int stride);
void tk_image_destroy(struct tk_image *img);
void tk_image_get_size(const struct tk_image *img, int *width, int *height);

void tk_draw_clear(struct tk_draw *d, struct tk_color c);
void tk_draw_rect(struct tk_draw *d, float x, float y, float w, float h, struct tk_color c);
/* Source rect (sx, sy, sw, sh) of img scaled to (x, y, w, h). The image is
 * modulated by tint: white with alpha a blends the image at opacity a; any
 * other colour treats the image as a coverage mask (glyphs). */
void tk_draw_image(struct tk_draw *d, struct tk_image *img, float sx, float sy, float sw,
                   float sh, float x, float y, float w, float h, enum tk_filter filter,
                   struct tk_color tint);
/* Linear gradient from c0 at the top to c1 at the bottom (vertical) or
 * left to right. */
void tk_draw_gradient(struct tk_draw *d, float x, float y, float w, float h, struct tk_color c0,
                      struct tk_color c1, bool vertical);

/* ------------------------------------------------------------ trace */
#include "tk-trace.h"

#endif
