#include "client-common.h"

#include <stdio.h>
#include <string.h>

#include "viewporter-client-protocol.h"
#include "xdg-shell-client-protocol.h"

static void wm_base_ping(void *data, struct xdg_wm_base *wm_base, uint32_t serial)
{
	xdg_wm_base_pong(wm_base, serial);
}

static const struct xdg_wm_base_listener wm_base_listener = {
	.ping = wm_base_ping,
};

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
                            const char *interface, uint32_t version)
{
	struct test_globals *g = data;

	/* Bind the lowest version that has what we use, so the clients keep
	 * working against servers that advertise less. */
	if (strcmp(interface, wl_compositor_interface.name) == 0 && version >= 4) {
		g->compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 4);
	} else if (strcmp(interface, wl_subcompositor_interface.name) == 0) {
		g->subcompositor = wl_registry_bind(registry, name, &wl_subcompositor_interface, 1);
	} else if (strcmp(interface, wl_shm_interface.name) == 0) {
		g->shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
	} else if (strcmp(interface, xdg_wm_base_interface.name) == 0) {
		g->wm_base = wl_registry_bind(registry, name, &xdg_wm_base_interface, 1);
		xdg_wm_base_add_listener(g->wm_base, &wm_base_listener, g);
	} else if (strcmp(interface, wl_data_device_manager_interface.name) == 0) {
		g->data_device_manager = wl_registry_bind(registry, name,
		                                          &wl_data_device_manager_interface, 1);
	} else if (strcmp(interface, wp_viewporter_interface.name) == 0) {
		g->viewporter = wl_registry_bind(registry, name, &wp_viewporter_interface, 1);
	}
	if (g->extra.global)
		g->extra.global(g->extra.data, registry, name, interface, version);
}

static void registry_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_global_remove,
};

bool test_bind_globals_and(struct wl_display *display, struct test_globals *g,
                           const struct test_extra_globals *extra)
{
	memset(g, 0, sizeof(*g));
	if (extra)
		g->extra = *extra;
	g->registry = wl_display_get_registry(display);
	wl_registry_add_listener(g->registry, &registry_listener, g);
	return wl_display_roundtrip(display) >= 0;
}

bool test_bind_globals(struct wl_display *display, struct test_globals *g)
{
	return test_bind_globals_and(display, g, NULL);
}

struct wl_display *test_connect(const char *prog, struct test_globals *g,
                                const struct test_extra_globals *extra)
{
	struct wl_display *display = wl_display_connect(NULL);
	if (!display) {
		fprintf(stderr, "%s: cannot connect to a Wayland display\n", prog);
		return NULL;
	}
	if (!test_bind_globals_and(display, g, extra) || !g->compositor || !g->shm ||
	    !g->wm_base) {
		fprintf(stderr, "%s: wl_compositor v4, wl_shm or xdg_wm_base missing\n", prog);
		return NULL;
	}
	return display;
}

void test_globals_destroy(struct test_globals *g)
{
	if (g->viewporter)
		wp_viewporter_destroy(g->viewporter);
	if (g->data_device_manager)
		wl_data_device_manager_destroy(g->data_device_manager);
	if (g->wm_base)
		xdg_wm_base_destroy(g->wm_base);
	if (g->shm)
		wl_shm_destroy(g->shm);
	if (g->subcompositor)
		wl_subcompositor_destroy(g->subcompositor);
	if (g->compositor)
		wl_compositor_destroy(g->compositor);
	if (g->registry)
		wl_registry_destroy(g->registry);
	memset(g, 0, sizeof(*g));
}
