/* Shared bits of duet's test clients: binding globals and making shm
 * buffers. Kept tiny on purpose; each client's behaviour is in its own file. */
#ifndef DUET_TEST_CLIENT_COMMON_H
#define DUET_TEST_CLIENT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wayland-client.h>

struct test_globals {
	struct wl_registry *registry;
	struct wl_compositor *compositor;
	struct wl_subcompositor *subcompositor;
	struct wl_shm *shm;
	struct xdg_wm_base *wm_base;
	struct wp_viewporter *viewporter;
	struct wl_data_device_manager *data_device_manager;
};

/* Binds the globals the test clients use (those missing stay NULL) with one
 * roundtrip. Returns false if the roundtrip itself failed. */
bool test_bind_globals(struct wl_display *display, struct test_globals *g);

/* Destroys every proxy test_bind_globals made. */
void test_globals_destroy(struct test_globals *g);

/* An anonymous memfd of size bytes; -1 on failure (errno set). */
int test_create_memfd(size_t size);

/* The deterministic pattern tests compare screenshots against, shared
 * with the X11 test clients. */
#include "pattern.h"

#endif
