/* wp_single_pixel_buffer_manager_v1: 1x1 wl_buffers of one colour, which a
 * client scales with wp_viewport to fill an area (a background, a video's
 * black bars) without allocating shm for it. surface.c takes them like a
 * 1x1 ARGB8888 shm buffer whose pixel comes from
 * comp_single_pixel_buffer_get.
 */
#include <stdlib.h>

#include "comp.h"
#include "single-pixel-buffer-v1-server-protocol.h"

#define SINGLE_PIXEL_BUFFER_VERSION 1

struct comp_single_pixel_buffer {
	uint32_t argb; /* premultiplied, as a little-endian ARGB8888 texel */
};

static void buffer_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static const struct wl_buffer_interface buffer_impl = {
	.destroy = buffer_handle_destroy,
};

static void buffer_resource_destroy(struct wl_resource *resource)
{
	free(wl_resource_get_user_data(resource));
}

bool comp_single_pixel_buffer_get(struct wl_resource *buffer, uint32_t *argb)
{
	if (!wl_resource_instance_of(buffer, &wl_buffer_interface, &buffer_impl))
		return false;
	const struct comp_single_pixel_buffer *b = wl_resource_get_user_data(buffer);
	*argb = b->argb;
	return true;
}

/* A channel's 32-bit value (0 to UINT32_MAX) to 8 bits, rounded. */
static uint32_t channel8(uint32_t v)
{
	return (uint32_t)(((uint64_t)v * 255 + UINT32_MAX / 2) / UINT32_MAX);
}

static void manager_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void manager_handle_create_u32_rgba_buffer(struct wl_client *client,
                                                  struct wl_resource *resource, uint32_t id,
                                                  uint32_t r, uint32_t g, uint32_t b, uint32_t a)
{
	struct comp_single_pixel_buffer *buf = calloc(1, sizeof(*buf));
	struct wl_resource *buffer = buf ? wl_resource_create(client, &wl_buffer_interface, 1, id)
	                                 : NULL;
	if (!buffer) {
		free(buf);
		wl_client_post_no_memory(client);
		return;
	}
	buf->argb = channel8(a) << 24 | channel8(r) << 16 | channel8(g) << 8 | channel8(b);
	wl_resource_set_implementation(buffer, &buffer_impl, buf, buffer_resource_destroy);
}

static const struct wp_single_pixel_buffer_manager_v1_interface manager_impl = {
	.destroy = manager_handle_destroy,
	.create_u32_rgba_buffer = manager_handle_create_u32_rgba_buffer,
};

static void bind_manager(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	comp_resource_create(client, &wp_single_pixel_buffer_manager_v1_interface, (int)version, id,
	                     &manager_impl, data, NULL);
}

void comp_single_pixel_buffer_create(struct comp_server *server)
{
	comp_global_create(server, &wp_single_pixel_buffer_manager_v1_interface,
	                   SINGLE_PIXEL_BUFFER_VERSION, server, bind_manager);
}
