/* Shared bits of duet's test clients: connecting and binding globals
 * (client-common.c), shm buffers (client-shm.c), a plain toplevel and its
 * frame callbacks (client-toplevel.c), pointer and keyboard
 * (client-input.c). Kept small on purpose; each client's behaviour is in
 * its own file. */
#ifndef DUET_TEST_CLIENT_COMMON_H
#define DUET_TEST_CLIENT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wayland-client.h>

/* A client's own registry handler, for the globals test_globals lacks. */
struct test_extra_globals {
	void (*global)(void *data, struct wl_registry *registry, uint32_t name,
	               const char *interface, uint32_t version);
	void *data;
};

struct test_globals {
	struct wl_registry *registry;
	struct wl_compositor *compositor;
	struct wl_subcompositor *subcompositor;
	struct wl_shm *shm;
	struct xdg_wm_base *wm_base;
	struct wp_viewporter *viewporter;
	struct wl_data_device_manager *data_device_manager;
	struct test_extra_globals extra;
};

/* Binds the globals the test clients use (those missing stay NULL) with one
 * roundtrip. Returns false if the roundtrip itself failed. */
bool test_bind_globals(struct wl_display *display, struct test_globals *g);

/* test_bind_globals, also calling extra->global (extra may be NULL) for
 * every global, so that a client binds what struct test_globals lacks in
 * the same roundtrip and on the same registry. */
bool test_bind_globals_and(struct wl_display *display, struct test_globals *g,
                           const struct test_extra_globals *extra);

/* Connects to $WAYLAND_DISPLAY and binds its globals (test_bind_globals_and).
 * Without a display, or without wl_compositor v4, wl_shm and xdg_wm_base,
 * it says so on stderr after "prog: " and returns NULL. */
struct wl_display *test_connect(const char *prog, struct test_globals *g,
                                const struct test_extra_globals *extra);

/* Destroys every proxy test_bind_globals made. */
void test_globals_destroy(struct test_globals *g);

/* An anonymous memfd of size bytes; -1 on failure (errno set). */
int test_create_memfd(size_t size);

/* A wl_shm_pool over a fresh memfd of size bytes, mapped at *pixels. The
 * fd is closed unless fd_out takes it. NULL on failure (errno set). */
struct wl_shm_pool *test_shm_pool(struct wl_shm *shm, size_t size, uint32_t **pixels,
                                  int *fd_out);

/* A w x h XRGB8888 buffer every pixel of which is colour, in a pool of its
 * own that goes with it; the client keeps no mapping. NULL on failure
 * (errno set). */
struct wl_buffer *test_solid_buffer(struct wl_shm *shm, int w, int h, uint32_t colour);

/* Sets *busy false whenever the compositor releases buffer; the client
 * sets it true as it attaches the buffer. */
void test_buffer_track(struct wl_buffer *buffer, bool *busy);

/* An xdg toplevel whose events client-toplevel.c handles for its client:
 * it keeps what the configures say, acks each (unless manual_ack) and
 * notes the compositor's close; the hooks, where set, add the client's
 * own handling with data. */
struct test_toplevel {
	struct wl_surface *surface;
	struct xdg_surface *xdg_surface;
	struct xdg_toplevel *toplevel;
	bool configured;       /* an xdg_surface.configure came */
	uint32_t serial;       /* the last one's serial */
	int32_t width, height; /* the last xdg_toplevel.configure's size */
	bool closed;           /* xdg_toplevel.close came */
	/* Set by the client before test_toplevel_create, or left zero. */
	bool manual_ack;       /* the client acks serial itself */
	bool exit_on_close;    /* close ends the process, status 0 */
	/* After each xdg_toplevel.configure (t's width and height set). */
	void (*toplevel_configure)(void *data, struct wl_array *states);
	/* After each xdg_surface.configure (acked unless manual_ack). */
	void (*configure)(void *data);
	void *data;
};

/* Makes t's surface, xdg_surface and toplevel with app_id. Nothing is
 * committed, so the client can set more state before the first commit. */
void test_toplevel_create(struct test_globals *g, struct test_toplevel *t, const char *app_id);

/* test_toplevel_create, then commits and waits for the first configure;
 * the close event ends the process with status 0. Returns false if the
 * connection failed. */
bool test_toplevel_map(struct wl_display *display, struct test_globals *g,
                       struct test_toplevel *t, const char *app_id);

/* Destroys what test_toplevel_create made (none of it if already gone). */
void test_toplevel_destroy(struct test_toplevel *t);

/* A frame callback on surface's next commit; *done is set false now and
 * true when it comes. */
void test_frame_request(struct wl_surface *surface, bool *done);

/* Dispatches until *done; false if the connection failed first. */
bool test_frame_wait(struct wl_display *display, const bool *done);

/* A frame callback that a client may still hold when it ends, so it
 * keeps the proxy to destroy it (test_frame_cancel). done is set when
 * it comes; hook, if set, then runs with data. */
struct test_frame {
	struct wl_callback *callback;
	bool done;
	void (*hook)(void *data);
	void *data;
};

/* Shows buffer, w x h and all of it damaged, on surface with a new
 * frame callback in f (replacing a pending one). */
void test_frame_commit(struct test_frame *f, struct wl_surface *surface,
                       struct wl_buffer *buffer, int w, int h);

/* Destroys f's pending callback, if there is one. */
void test_frame_cancel(struct test_frame *f);

/* A seat's pointer and keyboard as the test clients follow them: the
 * keyboard focus, the serials a grab or a selection needs and, for a
 * client that reports them, each event as a line (client-input.c). */
struct test_input {
	struct wl_pointer *pointer;
	struct wl_keyboard *keyboard;
	struct wl_surface *keyboard_focus; /* NULL without the focus */
	uint32_t enter_serial;             /* of the keyboard's last enter */
	uint32_t press_serial, key_serial; /* of the last button / key press */
	int presses, key_presses;
	/* If set, gets every event as a line, without its newline. */
	void (*report)(void *data, const char *line);
	void *data;
};

/* Gets seat's pointer (or keyboard) into in, listened to. */
void test_input_pointer(struct test_input *in, struct wl_seat *seat);
void test_input_keyboard(struct test_input *in, struct wl_seat *seat);

/* The deterministic pattern tests compare screenshots against, shared
 * with the X11 test clients. */
#include "pattern.h"

#endif
