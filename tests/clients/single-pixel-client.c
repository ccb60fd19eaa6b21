/* duet-single-pixel-client: a toplevel whose only buffer is a
 * wp_single_pixel_buffer_v1 of opaque magenta, scaled by wp_viewport to
 * 200x150. Prints "mapped 200 150" after its first commit with the buffer
 * and stays until killed (or the connection ends).
 *
 * Exit status: 3 if the compositor lacks wp_single_pixel_buffer_manager_v1
 * or wp_viewporter, 1 on any other failure. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <wayland-client.h>

#include "single-pixel-buffer-v1-client-protocol.h"
#include "viewporter-client-protocol.h"
#include "xdg-shell-client-protocol.h"

#define WIDTH 200
#define HEIGHT 150

struct state {
	struct wl_compositor *compositor;
	struct xdg_wm_base *wm_base;
	struct wp_viewporter *viewporter;
	struct wp_single_pixel_buffer_manager_v1 *manager;
	bool configured;
};

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
                            const char *interface, uint32_t version)
{
	struct state *st = data;
	if (strcmp(interface, wl_compositor_interface.name) == 0)
		st->compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 4);
	else if (strcmp(interface, xdg_wm_base_interface.name) == 0)
		st->wm_base = wl_registry_bind(registry, name, &xdg_wm_base_interface, 1);
	else if (strcmp(interface, wp_viewporter_interface.name) == 0)
		st->viewporter = wl_registry_bind(registry, name, &wp_viewporter_interface, 1);
	else if (strcmp(interface, wp_single_pixel_buffer_manager_v1_interface.name) == 0)
		st->manager = wl_registry_bind(registry, name,
		                               &wp_single_pixel_buffer_manager_v1_interface, 1);
}

static void registry_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_global_remove,
};

static void wm_base_ping(void *data, struct xdg_wm_base *wm_base, uint32_t serial)
{
	xdg_wm_base_pong(wm_base, serial);
}

static const struct xdg_wm_base_listener wm_base_listener = {
	.ping = wm_base_ping,
};

static void xdg_surface_configure(void *data, struct xdg_surface *xdg_surface, uint32_t serial)
{
	struct state *st = data;
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
		fprintf(stderr, "duet-single-pixel-client: cannot connect\n");
		return 1;
	}
	struct state st = { 0 };
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, &st);
	if (wl_display_roundtrip(display) < 0 || !st.compositor || !st.wm_base) {
		fprintf(stderr, "duet-single-pixel-client: no wl_compositor or xdg_wm_base\n");
		return 1;
	}
	if (!st.manager || !st.viewporter) {
		printf("no wp_single_pixel_buffer_manager_v1 or wp_viewporter\n");
		return 3;
	}
	xdg_wm_base_add_listener(st.wm_base, &wm_base_listener, NULL);
	struct wl_surface *surface = wl_compositor_create_surface(st.compositor);
	struct xdg_surface *xdg_surface = xdg_wm_base_get_xdg_surface(st.wm_base, surface);
	xdg_surface_add_listener(xdg_surface, &xdg_surface_listener, &st);
	struct xdg_toplevel *toplevel = xdg_surface_get_toplevel(xdg_surface);
	xdg_toplevel_set_app_id(toplevel, "duet-single-pixel-client");
	wl_surface_commit(surface);
	while (!st.configured) {
		if (wl_display_dispatch(display) < 0)
			return 1;
	}
	/* Opaque magenta: full red and blue, no green. */
	struct wl_buffer *buffer = wp_single_pixel_buffer_manager_v1_create_u32_rgba_buffer(
		st.manager, UINT32_MAX, 0, UINT32_MAX, UINT32_MAX);
	struct wp_viewport *viewport = wp_viewporter_get_viewport(st.viewporter, surface);
	wp_viewport_set_destination(viewport, WIDTH, HEIGHT);
	wl_surface_attach(surface, buffer, 0, 0);
	wl_surface_damage(surface, 0, 0, WIDTH, HEIGHT);
	wl_surface_commit(surface);
	if (wl_display_roundtrip(display) < 0) {
		fprintf(stderr, "duet-single-pixel-client: connection lost (protocol error?)\n");
		return 1;
	}
	printf("mapped %d %d\n", WIDTH, HEIGHT);
	fflush(stdout);
	while (wl_display_dispatch(display) >= 0)
		;
	return 0;
}
