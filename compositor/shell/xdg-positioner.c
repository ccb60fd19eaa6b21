/* xdg_positioner: where a popup goes relative to its parent, and how it
 * may be moved to stay on the output. The placement follows the xdg-shell
 * rules: the anchor picks a point on the anchor rectangle, the gravity says
 * in which direction from that point the popup extends, then per axis:
 * flip (mirror anchor and gravity) if that fits, else slide, else resize. */
#include <stdlib.h>

#include "xdg-types.h"

static void positioner_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static struct comp_positioner *positioner(struct wl_resource *resource)
{
	return wl_resource_get_user_data(resource);
}

static void positioner_set_size(struct wl_client *client, struct wl_resource *resource,
                                int32_t width, int32_t height)
{
	if (width < 1 || height < 1) {
		wl_resource_post_error(resource, XDG_POSITIONER_ERROR_INVALID_INPUT,
		                       "xdg_positioner.set_size: %dx%d is not a positive size",
		                       width, height);
		return;
	}
	/* The spec allows any positive size; clamp it as the anchor rectangle
	 * and offset are, so that the placement arithmetic (position + size,
	 * a flip's position - size, summed over nested popups) stays far from
	 * int overflow (docs/security.md). */
	positioner(resource)->width = comp_clamp_coord(width);
	positioner(resource)->height = comp_clamp_coord(height);
}

static void positioner_set_anchor_rect(struct wl_client *client, struct wl_resource *resource,
                                       int32_t x, int32_t y, int32_t width, int32_t height)
{
	if (width < 0 || height < 0) {
		wl_resource_post_error(resource, XDG_POSITIONER_ERROR_INVALID_INPUT,
		                       "xdg_positioner.set_anchor_rect: negative size %dx%d",
		                       width, height);
		return;
	}
	/* Bound coordinates so that the placement arithmetic cannot overflow. */
	struct comp_positioner *p = positioner(resource);
	p->anchor_rect = comp_clamp_box(x, y, width, height);
	p->has_anchor_rect = true;
}

/* set_anchor and set_gravity take a value of the protocol's enum; false
 * after invalid_input for any other. */
static bool known_value(struct wl_resource *resource, const char *what, uint32_t value,
                        uint32_t last)
{
	if (value <= last)
		return true;
	wl_resource_post_error(resource, XDG_POSITIONER_ERROR_INVALID_INPUT,
	                       "xdg_positioner.set_%s: unknown %s %u", what, what, value);
	return false;
}

static void positioner_set_anchor(struct wl_client *client, struct wl_resource *resource,
                                  uint32_t anchor)
{
	if (known_value(resource, "anchor", anchor, XDG_POSITIONER_ANCHOR_BOTTOM_RIGHT))
		positioner(resource)->anchor = anchor;
}

static void positioner_set_gravity(struct wl_client *client, struct wl_resource *resource,
                                   uint32_t gravity)
{
	if (known_value(resource, "gravity", gravity, XDG_POSITIONER_GRAVITY_BOTTOM_RIGHT))
		positioner(resource)->gravity = gravity;
}

static void positioner_set_constraint_adjustment(struct wl_client *client,
                                                 struct wl_resource *resource,
                                                 uint32_t adjustment)
{
	positioner(resource)->constraint_adjustment = adjustment;
}

static void positioner_set_offset(struct wl_client *client, struct wl_resource *resource,
                                  int32_t x, int32_t y)
{
	positioner(resource)->offset_x = comp_clamp_coord(x);
	positioner(resource)->offset_y = comp_clamp_coord(y);
}

static void positioner_set_reactive(struct wl_client *client, struct wl_resource *resource)
{
	positioner(resource)->reactive = true;
}

static void positioner_set_parent_size(struct wl_client *client, struct wl_resource *resource,
                                       int32_t width, int32_t height)
{
	/* Only meaningful with reactive popups and parent resizes, which this
	 * compositor does not do while a popup is open. */
}

static void positioner_set_parent_configure(struct wl_client *client,
                                            struct wl_resource *resource, uint32_t serial)
{
}

static const struct xdg_positioner_interface positioner_impl = {
	.destroy = positioner_destroy,
	.set_size = positioner_set_size,
	.set_anchor_rect = positioner_set_anchor_rect,
	.set_anchor = positioner_set_anchor,
	.set_gravity = positioner_set_gravity,
	.set_constraint_adjustment = positioner_set_constraint_adjustment,
	.set_offset = positioner_set_offset,
	.set_reactive = positioner_set_reactive,
	.set_parent_size = positioner_set_parent_size,
	.set_parent_configure = positioner_set_parent_configure,
};

static void positioner_resource_destroy(struct wl_resource *resource)
{
	free(wl_resource_get_user_data(resource));
}

void comp_positioner_create(struct wl_client *client, uint32_t version, uint32_t id)
{
	struct comp_positioner *p = calloc(1, sizeof(*p));
	struct wl_resource *resource = wl_resource_create(client, &xdg_positioner_interface,
	                                                  (int)version, id);
	if (!p || !resource) {
		free(p);
		if (resource)
			wl_resource_destroy(resource);
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(resource, &positioner_impl, p, positioner_resource_destroy);
}

const struct comp_positioner *comp_positioner_from_resource(struct wl_resource *resource)
{
	return wl_resource_get_user_data(resource);
}

bool comp_positioner_is_complete(const struct comp_positioner *p)
{
	return p->width > 0 && p->height > 0 && p->has_anchor_rect;
}

/* ------------------------------------------------------------- placement */

/* Per axis: -1 towards left/top, +1 towards right/bottom, 0 centered.
 * Anchor and gravity share their enum values. */
static int dir_x(uint32_t v)
{
	switch (v) {
	case XDG_POSITIONER_ANCHOR_LEFT:
	case XDG_POSITIONER_ANCHOR_TOP_LEFT:
	case XDG_POSITIONER_ANCHOR_BOTTOM_LEFT: return -1;
	case XDG_POSITIONER_ANCHOR_RIGHT:
	case XDG_POSITIONER_ANCHOR_TOP_RIGHT:
	case XDG_POSITIONER_ANCHOR_BOTTOM_RIGHT: return 1;
	default: return 0;
	}
}

static int dir_y(uint32_t v)
{
	switch (v) {
	case XDG_POSITIONER_ANCHOR_TOP:
	case XDG_POSITIONER_ANCHOR_TOP_LEFT:
	case XDG_POSITIONER_ANCHOR_TOP_RIGHT: return -1;
	case XDG_POSITIONER_ANCHOR_BOTTOM:
	case XDG_POSITIONER_ANCHOR_BOTTOM_LEFT:
	case XDG_POSITIONER_ANCHOR_BOTTOM_RIGHT: return 1;
	default: return 0;
	}
}

/* One axis of the unconstrained placement: rect_pos/rect_len is the anchor
 * rectangle, anchor and gravity directions as above. */
static int place_axis(int rect_pos, int rect_len, int anchor, int gravity, int size, int offset)
{
	int point = anchor < 0 ? rect_pos : anchor > 0 ? rect_pos + rect_len : rect_pos + rect_len / 2;
	int pos = gravity < 0 ? point - size : gravity > 0 ? point : point - size / 2;
	return pos + offset;
}

static bool fits(int pos, int size, int lo, int len)
{
	return pos >= lo && pos + size <= lo + len;
}

/* Constrains one axis. flip/slide/resize are the allowed adjustments. */
static void constrain_axis(int *pos, int *size, int rect_pos, int rect_len, int anchor,
                           int gravity, int offset, int lo, int len, bool flip, bool slide,
                           bool resize)
{
	if (fits(*pos, *size, lo, len))
		return;
	if (flip) {
		int flipped = place_axis(rect_pos, rect_len, -anchor, -gravity, *size, -offset);
		if (fits(flipped, *size, lo, len)) {
			*pos = flipped;
			return;
		}
	}
	if (slide) {
		/* Slide back on screen; if it is larger than the screen, keep the
		 * left/top edge visible. */
		if (*pos + *size > lo + len)
			*pos = lo + len - *size;
		if (*pos < lo)
			*pos = lo;
		if (fits(*pos, *size, lo, len))
			return;
	}
	if (resize) {
		int start = *pos < lo ? lo : *pos;
		int end = *pos + *size > lo + len ? lo + len : *pos + *size;
		if (end > start) {
			*pos = start;
			*size = end - start;
		}
	}
}

struct comp_box comp_positioner_place(const struct comp_positioner *p, struct comp_box bounds)
{
	int ax = dir_x(p->anchor), ay = dir_y(p->anchor);
	int gx = dir_x(p->gravity), gy = dir_y(p->gravity);
	const struct comp_box *r = &p->anchor_rect;
	struct comp_box box = {
		place_axis(r->x, r->width, ax, gx, p->width, p->offset_x),
		place_axis(r->y, r->height, ay, gy, p->height, p->offset_y),
		p->width, p->height,
	};
	uint32_t adj = p->constraint_adjustment;
	constrain_axis(&box.x, &box.width, r->x, r->width, ax, gx, p->offset_x, bounds.x,
	               bounds.width, adj & XDG_POSITIONER_CONSTRAINT_ADJUSTMENT_FLIP_X,
	               adj & XDG_POSITIONER_CONSTRAINT_ADJUSTMENT_SLIDE_X,
	               adj & XDG_POSITIONER_CONSTRAINT_ADJUSTMENT_RESIZE_X);
	constrain_axis(&box.y, &box.height, r->y, r->height, ay, gy, p->offset_y, bounds.y,
	               bounds.height, adj & XDG_POSITIONER_CONSTRAINT_ADJUSTMENT_FLIP_Y,
	               adj & XDG_POSITIONER_CONSTRAINT_ADJUSTMENT_SLIDE_Y,
	               adj & XDG_POSITIONER_CONSTRAINT_ADJUSTMENT_RESIZE_Y);
	return box;
}
