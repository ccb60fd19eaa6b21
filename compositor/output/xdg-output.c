/* zxdg_output_manager_v1: an output's position and size in the global
 * compositor space. GTK 3 and 4, Qt 5, SDL 2 and foot bind it (WAYLAND_DEBUG,
 * the client matrix's apps) to place and name screens; weston offers it, so
 * duet does too.
 *
 * duet-compositor has one output at 0,0 with scale 1 and no transform, so
 * the logical size is the mode's size. Its name and description repeat
 * wl_output's. From version 3 on the xdg_output's done is deprecated and
 * wl_output.done ends the sequence instead.
 */
#include <stdio.h>

#include "comp.h"
#include "xdg-output-unstable-v1-server-protocol.h"

#define XDG_OUTPUT_MANAGER_VERSION 3

static void xdg_output_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static const struct zxdg_output_v1_interface xdg_output_impl = {
	.destroy = xdg_output_handle_destroy,
};

static void manager_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void manager_handle_get_xdg_output(struct wl_client *client, struct wl_resource *resource,
                                          uint32_t id, struct wl_resource *wl_output)
{
	struct comp_output *output = wl_resource_get_user_data(wl_output);
	int version = wl_resource_get_version(resource);
	struct wl_resource *xdg_output = comp_resource_create(client, &zxdg_output_v1_interface,
	                                                      version, id, &xdg_output_impl, NULL,
	                                                      NULL);
	if (!xdg_output)
		return;
	zxdg_output_v1_send_logical_position(xdg_output, output->x, output->y);
	zxdg_output_v1_send_logical_size(xdg_output, output->width, output->height);
	if (version >= ZXDG_OUTPUT_V1_NAME_SINCE_VERSION) {
		zxdg_output_v1_send_name(xdg_output, output->name);
		char desc[96];
		snprintf(desc, sizeof(desc), "duet %s output %dx%d", output->backend->name,
		         output->width, output->height);
		zxdg_output_v1_send_description(xdg_output, desc);
	}
	if (version < 3)
		zxdg_output_v1_send_done(xdg_output);
	else if (wl_resource_get_version(wl_output) >= WL_OUTPUT_DONE_SINCE_VERSION)
		wl_output_send_done(wl_output);
}

static const struct zxdg_output_manager_v1_interface manager_impl = {
	.destroy = manager_handle_destroy,
	.get_xdg_output = manager_handle_get_xdg_output,
};

static void bind_manager(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	comp_resource_create(client, &zxdg_output_manager_v1_interface, (int)version, id,
	                     &manager_impl, data, NULL);
}

void comp_xdg_output_create(struct comp_server *server)
{
	comp_global_create(server, &zxdg_output_manager_v1_interface,
	                   XDG_OUTPUT_MANAGER_VERSION, server, bind_manager);
}
