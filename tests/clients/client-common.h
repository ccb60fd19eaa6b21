/* Shared bits of duet's test clients: connecting and binding globals
 * (client-common.c), shm buffers (client-shm.c), a plain toplevel and its
 * frame callbacks (client-toplevel.c). Kept small on purpose; each
 * client's behaviour is in its own file. */
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

/* A toplevel that needs nothing of its configures but their ack. */
struct test_toplevel {
	struct wl_surface *surface;
	struct xdg_surface *xdg_surface;
	struct xdg_toplevel *toplevel;
	bool configured;
};

/* Makes t with app_id, commits and waits for its first configure (acked,
 * as every later one is). Its close event ends the process with status 0.
 * Returns false if the connection failed. */
bool test_toplevel_map(struct wl_display *display, struct test_globals *g,
                       struct test_toplevel *t, const char *app_id);

/* Destroys what test_toplevel_map made (none of it if already gone). */
void test_toplevel_destroy(struct test_toplevel *t);

/* A frame callback on surface's next commit; *done is set false now and
 * true when it comes. */
void test_frame_request(struct wl_surface *surface, bool *done);

/* Dispatches until *done; false if the connection failed first. */
bool test_frame_wait(struct wl_display *display, const bool *done);

/* The deterministic pattern tests compare screenshots against, shared
 * with the X11 test clients. */
#include "pattern.h"

#endif
