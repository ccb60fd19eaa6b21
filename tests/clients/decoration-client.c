/* duet-decoration-client: asks for server-side decorations on a new
 * toplevel and prints the mode the compositor answers with, once the
 * configure sequence (decoration configure, then xdg_surface.configure)
 * has arrived:
 *
 *   decoration-mode client_side|server_side
 *
 * Exit status: 0 after printing, 3 if the compositor has no
 * zxdg_decoration_manager_v1, 1 on any other failure. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <wayland-client.h>

#include "xdg-decoration-unstable-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

struct state {
	struct wl_compositor *compositor;
	struct xdg_wm_base *wm_base;
	struct zxdg_decoration_manager_v1 *manager;
	int mode;         /* -1 until the decoration's configure */
	bool configured;  /* xdg_surface.configure after it */
};

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
                            const char *interface, uint32_t version)
{
	struct state *st = data;
	if (strcmp(interface, wl_compositor_interface.name) == 0)
		st->compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 4);
	else if (strcmp(interface, xdg_wm_base_interface.name) == 0)
		st->wm_base = wl_registry_bind(registry, name, &xdg_wm_base_interface, 1);
	else if (strcmp(interface, zxdg_decoration_manager_v1_interface.name) == 0)
		st->manager = wl_registry_bind(registry, name,
		                               &zxdg_decoration_manager_v1_interface, 1);
}

static void registry_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_global_remove,
};

static void decoration_configure(void *data, struct zxdg_toplevel_decoration_v1 *deco,
                                 uint32_t mode)
{
	struct state *st = data;
	st->mode = (int)mode;
}

static const struct zxdg_toplevel_decoration_v1_listener decoration_listener = {
	.configure = decoration_configure,
};

static void xdg_surface_configure(void *data, struct xdg_surface *xdg_surface, uint32_t serial)
{
	struct state *st = data;
	if (st->mode >= 0)
		st->configured = true;
	xdg_surface_ack_configure(xdg_surface, serial);
}

static const struct xdg_surface_listener xdg_surface_listener = {
	.configure = xdg_surface_configure,
};

int main(void)
{
	struct wl_display *display = wl_display_connect(NULL);
	if (!display) {
		fprintf(stderr, "duet-decoration-client: cannot connect\n");
		return 1;
	}
	struct state st = { .mode = -1 };
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, &st);
	if (wl_display_roundtrip(display) < 0 || !st.compositor || !st.wm_base) {
		fprintf(stderr, "duet-decoration-client: no wl_compositor or xdg_wm_base\n");
		return 1;
	}
	if (!st.manager) {
		printf("no zxdg_decoration_manager_v1\n");
		return 3;
	}
	struct wl_surface *surface = wl_compositor_create_surface(st.compositor);
	struct xdg_surface *xdg_surface = xdg_wm_base_get_xdg_surface(st.wm_base, surface);
	xdg_surface_add_listener(xdg_surface, &xdg_surface_listener, &st);
	struct xdg_toplevel *toplevel = xdg_surface_get_toplevel(xdg_surface);
	struct zxdg_toplevel_decoration_v1 *deco =
		zxdg_decoration_manager_v1_get_toplevel_decoration(st.manager, toplevel);
	zxdg_toplevel_decoration_v1_add_listener(deco, &decoration_listener, &st);
	zxdg_toplevel_decoration_v1_set_mode(deco, ZXDG_TOPLEVEL_DECORATION_V1_MODE_SERVER_SIDE);
	wl_surface_commit(surface);
	while (!st.configured) {
		if (wl_display_dispatch(display) < 0) {
			fprintf(stderr, "duet-decoration-client: connection lost (protocol error?)\n");
			return 1;
		}
	}
	printf("decoration-mode %s\n", st.mode == ZXDG_TOPLEVEL_DECORATION_V1_MODE_CLIENT_SIDE
	       ? "client_side" : st.mode == ZXDG_TOPLEVEL_DECORATION_V1_MODE_SERVER_SIDE
	       ? "server_side" : "unknown");
	zxdg_toplevel_decoration_v1_destroy(deco);
	xdg_toplevel_destroy(toplevel);
	xdg_surface_destroy(xdg_surface);
	wl_surface_destroy(surface);
	wl_display_roundtrip(display);
	wl_display_disconnect(display);
	return 0;
}
