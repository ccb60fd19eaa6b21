/* wp_viewporter: crop (source rectangle) and scale (destination size) of a
 * surface, double buffered in surface->pending.viewport like the rest of the
 * surface state; the core applies it on commit and derives the surface size.
 *
 * This file validates the values themselves (bad_value) and the object's
 * lifetime (viewport_exists, no_surface). The checks that need the buffer
 * (bad_size: a non-integer source size without a destination;
 * out_of_buffer: source outside the buffer) belong to the core's commit,
 * which knows the buffer size.
 */
#include <stdlib.h>

#include "comp.h"
#include "viewporter-server-protocol.h"

#define VIEWPORTER_VERSION 1

struct comp_viewport {
	struct wl_resource *resource;
	struct comp_surface *surface; /* NULL once the surface is destroyed */
	struct wl_listener surface_destroy;
};

static const struct wp_viewport_interface viewport_impl;

static struct comp_viewport *viewport_from_resource(struct wl_resource *resource)
{
	return wl_resource_get_user_data(resource);
}

static void viewport_detach(struct comp_viewport *viewport)
{
	if (!viewport->surface)
		return;
	viewport->surface->viewport = NULL;
	wl_list_remove(&viewport->surface_destroy.link);
	viewport->surface = NULL;
}

/* On the wl_surface resource's destroy signal (not comp_surface's), which
 * tolerates listeners leaving during emission; see seat.c. */
static void handle_surface_destroy(struct wl_listener *listener, void *data)
{
	struct comp_viewport *viewport = wl_container_of(listener, viewport, surface_destroy);
	viewport_detach(viewport);
}

static void viewport_resource_destroy(struct wl_resource *resource)
{
	struct comp_viewport *viewport = viewport_from_resource(resource);
	/* Destroying the viewport removes crop and scale on the next commit. */
	if (viewport->surface) {
		struct comp_viewport_state *pending = &viewport->surface->pending.viewport;
		pending->has_src = false;
		pending->dst_w = pending->dst_h = -1;
	}
	viewport_detach(viewport);
	free(viewport);
}

static void viewport_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

/* The surface of a viewport, or NULL after posting no_surface. */
static struct comp_surface *viewport_surface(struct wl_resource *resource, const char *request)
{
	struct comp_viewport *viewport = viewport_from_resource(resource);
	if (!viewport->surface)
		wl_resource_post_error(resource, WP_VIEWPORT_ERROR_NO_SURFACE,
		                       "wp_viewport.%s: the wl_surface was destroyed", request);
	return viewport->surface;
}

static void viewport_handle_set_source(struct wl_client *client, struct wl_resource *resource,
                                       wl_fixed_t x, wl_fixed_t y, wl_fixed_t width,
                                       wl_fixed_t height)
{
	struct comp_surface *surface = viewport_surface(resource, "set_source");
	if (!surface)
		return;
	struct comp_viewport_state *pending = &surface->pending.viewport;
	wl_fixed_t unset = wl_fixed_from_int(-1);
	if (x == unset && y == unset && width == unset && height == unset) {
		pending->has_src = false;
		return;
	}
	if (x < 0 || y < 0 || width <= 0 || height <= 0) {
		wl_resource_post_error(resource, WP_VIEWPORT_ERROR_BAD_VALUE,
		                       "wp_viewport.set_source: invalid rectangle %.2f,%.2f %.2fx%.2f "
		                       "(x, y must be >= 0 and the size > 0, or all -1 to unset)",
		                       wl_fixed_to_double(x), wl_fixed_to_double(y),
		                       wl_fixed_to_double(width), wl_fixed_to_double(height));
		return;
	}
	pending->has_src = true;
	pending->src_x = wl_fixed_to_double(x);
	pending->src_y = wl_fixed_to_double(y);
	pending->src_w = wl_fixed_to_double(width);
	pending->src_h = wl_fixed_to_double(height);
}

static void viewport_handle_set_destination(struct wl_client *client,
                                            struct wl_resource *resource, int32_t width,
                                            int32_t height)
{
	struct comp_surface *surface = viewport_surface(resource, "set_destination");
	if (!surface)
		return;
	struct comp_viewport_state *pending = &surface->pending.viewport;
	if (width == -1 && height == -1) {
		pending->dst_w = pending->dst_h = -1;
		return;
	}
	if (width <= 0 || height <= 0) {
		wl_resource_post_error(resource, WP_VIEWPORT_ERROR_BAD_VALUE,
		                       "wp_viewport.set_destination: invalid size %dx%d "
		                       "(must be > 0, or -1x-1 to unset)", width, height);
		return;
	}
	pending->dst_w = width;
	pending->dst_h = height;
}

static const struct wp_viewport_interface viewport_impl = {
	.destroy = viewport_handle_destroy,
	.set_source = viewport_handle_set_source,
	.set_destination = viewport_handle_set_destination,
};

static void viewporter_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void viewporter_handle_get_viewport(struct wl_client *client, struct wl_resource *resource,
                                           uint32_t id, struct wl_resource *surface_resource)
{
	struct comp_surface *surface = comp_surface_from_resource(surface_resource);
	if (!surface) {
		/* Only possible for a surface the core made inert. */
		wl_resource_post_error(resource, WP_VIEWPORTER_ERROR_VIEWPORT_EXISTS,
		                       "wp_viewporter.get_viewport: surface is no longer usable");
		return;
	}
	if (surface->viewport) {
		wl_resource_post_error(resource, WP_VIEWPORTER_ERROR_VIEWPORT_EXISTS,
		                       "wp_viewporter.get_viewport: wl_surface@%u already has a "
		                       "wp_viewport", wl_resource_get_id(surface_resource));
		return;
	}
	struct comp_viewport *viewport = calloc(1, sizeof(*viewport));
	if (!viewport) {
		wl_client_post_no_memory(client);
		return;
	}
	viewport->resource = comp_resource_create(client, &wp_viewport_interface,
	                                          wl_resource_get_version(resource), id,
	                                          &viewport_impl, viewport,
	                                          viewport_resource_destroy);
	if (!viewport->resource) {
		free(viewport);
		return;
	}
	viewport->surface = surface;
	viewport->surface_destroy.notify = handle_surface_destroy;
	wl_resource_add_destroy_listener(surface->resource, &viewport->surface_destroy);
	surface->viewport = viewport->resource;
}

static const struct wp_viewporter_interface viewporter_impl = {
	.destroy = viewporter_handle_destroy,
	.get_viewport = viewporter_handle_get_viewport,
};

static void viewporter_bind(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	comp_resource_create(client, &wp_viewporter_interface, version, id, &viewporter_impl, data,
	                     NULL);
}

void comp_viewporter_create(struct comp_server *server)
{
	comp_global_create(server, &wp_viewporter_interface, VIEWPORTER_VERSION, server,
	                   viewporter_bind);
}
