/* duet-single-pixel-client: a toplevel whose only buffer is a
 * wp_single_pixel_buffer_v1 of opaque magenta, scaled by wp_viewport to
 * 200x150. Prints "mapped 200 150" after its first commit with the buffer
 * and stays until killed, closed or the connection ends.
 *
 * Exit status: 3 if the compositor lacks wp_single_pixel_buffer_manager_v1
 * or wp_viewporter, 1 on any other failure. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "client-common.h"
#include "single-pixel-buffer-v1-client-protocol.h"
#include "viewporter-client-protocol.h"

#define WIDTH 200
#define HEIGHT 150

struct state {
	struct test_globals g;
	struct wp_single_pixel_buffer_manager_v1 *manager;
	struct test_toplevel top;
};

static void bind_manager(void *data, struct wl_registry *registry, uint32_t name,
                         const char *interface, uint32_t version)
{
	struct state *st = data;
	if (strcmp(interface, wp_single_pixel_buffer_manager_v1_interface.name) == 0)
		st->manager = wl_registry_bind(registry, name,
		                               &wp_single_pixel_buffer_manager_v1_interface, 1);
}

int main(void)
{
	struct state st = { 0 };
	struct test_extra_globals extra = { bind_manager, &st };
	struct wl_display *display = test_connect("duet-single-pixel-client", &st.g, &extra);
	if (!display)
		return 1;
	if (!st.manager || !st.g.viewporter) {
		printf("no wp_single_pixel_buffer_manager_v1 or wp_viewporter\n");
		return 3;
	}
	if (!test_toplevel_map(display, &st.g, &st.top, "duet-single-pixel-client"))
		return 1;
	struct wl_surface *surface = st.top.surface;
	/* Opaque magenta: full red and blue, no green. */
	struct wl_buffer *buffer = wp_single_pixel_buffer_manager_v1_create_u32_rgba_buffer(
		st.manager, UINT32_MAX, 0, UINT32_MAX, UINT32_MAX);
	struct wp_viewport *viewport = wp_viewporter_get_viewport(st.g.viewporter, surface);
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
