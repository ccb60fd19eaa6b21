/* wl_region: a pixman region built by add/subtract, read by
 * wl_surface.set_opaque_region/set_input_region at the time of the call. */
#include <stdlib.h>

#include <wayland-server-protocol.h>

#include "comp.h"
#include "region.h"

static void region_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

/* Clients send int32 x/y/width/height; pixman boxes are int32 corners, so
 * clamp the far corner instead of letting x + width overflow (UB). */
static void rect_to_box(int32_t x, int32_t y, int32_t w, int32_t h, pixman_box32_t *box)
{
	int64_t x2 = (int64_t)x + w, y2 = (int64_t)y + h;
	box->x1 = x;
	box->y1 = y;
	box->x2 = x2 > INT32_MAX ? INT32_MAX : (int32_t)x2;
	box->y2 = y2 > INT32_MAX ? INT32_MAX : (int32_t)y2;
}

static void region_add(struct wl_client *client, struct wl_resource *resource,
                       int32_t x, int32_t y, int32_t w, int32_t h)
{
	pixman_region32_t *region = wl_resource_get_user_data(resource);
	if (w <= 0 || h <= 0)
		return; /* empty rectangle: nothing to add */
	pixman_box32_t box;
	rect_to_box(x, y, w, h, &box);
	pixman_region32_union_rect(region, region, box.x1, box.y1,
	                           (unsigned)(box.x2 - box.x1), (unsigned)(box.y2 - box.y1));
}

static void region_subtract(struct wl_client *client, struct wl_resource *resource,
                            int32_t x, int32_t y, int32_t w, int32_t h)
{
	pixman_region32_t *region = wl_resource_get_user_data(resource);
	if (w <= 0 || h <= 0)
		return;
	pixman_box32_t box;
	rect_to_box(x, y, w, h, &box);
	pixman_region32_t rect;
	pixman_region32_init_rects(&rect, &box, 1);
	pixman_region32_subtract(region, region, &rect);
	pixman_region32_fini(&rect);
}

static const struct wl_region_interface region_impl = {
	.destroy = region_destroy,
	.add = region_add,
	.subtract = region_subtract,
};

static void region_resource_destroy(struct wl_resource *resource)
{
	pixman_region32_t *region = wl_resource_get_user_data(resource);
	pixman_region32_fini(region);
	free(region);
}

void comp_region_create(struct wl_client *client, uint32_t version, uint32_t id)
{
	pixman_region32_t *region = calloc(1, sizeof(*region));
	struct wl_resource *resource = wl_resource_create(client, &wl_region_interface,
	                                                  (int)version, id);
	if (!region || !resource) {
		free(region);
		if (resource)
			wl_resource_destroy(resource);
		wl_client_post_no_memory(client);
		return;
	}
	pixman_region32_init(region);
	wl_resource_set_implementation(resource, &region_impl, region, region_resource_destroy);
}

pixman_region32_t *comp_region_from_resource(struct wl_resource *resource)
{
	return wl_resource_get_user_data(resource);
}

void comp_region_init_infinite(pixman_region32_t *region)
{
	/* Large enough for any surface, small enough that pixman's
	 * width arithmetic cannot overflow. */
	pixman_region32_init_rect(region, INT32_MIN / 2, INT32_MIN / 2, UINT32_MAX / 2,
	                          UINT32_MAX / 2);
}
