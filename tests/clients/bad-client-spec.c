/* duet-bad-client modes for rules of the specs that a compositor can get
 * subtly wrong (issue 10, "protocol correctness"): permanent xdg roles, shm
 * strides, size hints, a scale that the viewport makes irrelevant. */
#include <stdio.h>
#include <stdlib.h>

#include "bad-client.h"
#include "viewporter-client-protocol.h"

/* What the role modes make beyond struct bad_client's own objects. */
struct roles {
	struct wl_surface *surface;
	struct xdg_surface *xdg, *xdg_again;
	struct xdg_toplevel *toplevel;
	struct xdg_popup *popup;
	struct xdg_positioner *positioner;
};

static void roles_cleanup(struct bad_client *c)
{
	struct roles *r = c->mode_data;
	if (r->popup)
		xdg_popup_destroy(r->popup);
	if (r->toplevel)
		xdg_toplevel_destroy(r->toplevel);
	if (r->xdg_again)
		xdg_surface_destroy(r->xdg_again);
	if (r->xdg)
		xdg_surface_destroy(r->xdg);
	if (r->positioner)
		xdg_positioner_destroy(r->positioner);
	if (r->surface)
		wl_surface_destroy(r->surface);
}

/* A wl_surface given one xdg role (a popup of c's toplevel if first_popup,
 * else a toplevel) and committed; once the compositor has seen it, its
 * xdg objects are destroyed and a new xdg_surface gives it the other
 * role: xdg_wm_base.role, whichever way round. */
static bool switch_role(struct bad_client *c, bool first_popup)
{
	struct roles *r = mode_data(c, sizeof(*r), roles_cleanup);
	if (!r)
		return false;
	r->positioner = xdg_wm_base_create_positioner(c->g.wm_base);
	xdg_positioner_set_size(r->positioner, 10, 10);
	xdg_positioner_set_anchor_rect(r->positioner, 0, 0, 1, 1);
	if (!make_toplevel(c, false)) /* the popup's parent */
		return false;
	r->surface = wl_compositor_create_surface(c->g.compositor);
	r->xdg = xdg_wm_base_get_xdg_surface(c->g.wm_base, r->surface);
	if (first_popup)
		r->popup = xdg_surface_get_popup(r->xdg, c->top.xdg_surface, r->positioner);
	else
		r->toplevel = xdg_surface_get_toplevel(r->xdg);
	wl_surface_commit(r->surface);
	if (wl_display_roundtrip(c->display) < 0)
		return false;
	if (r->popup)
		xdg_popup_destroy(r->popup);
	else
		xdg_toplevel_destroy(r->toplevel);
	r->popup = NULL;
	r->toplevel = NULL;
	xdg_surface_destroy(r->xdg);
	r->xdg = NULL;
	r->xdg_again = xdg_wm_base_get_xdg_surface(c->g.wm_base, r->surface);
	if (first_popup)
		r->toplevel = xdg_surface_get_toplevel(r->xdg_again);
	else
		r->popup = xdg_surface_get_popup(r->xdg_again, c->top.xdg_surface, r->positioner);
	return true;
}

bool run_toplevel_to_popup(struct bad_client *c)
{
	return switch_role(c, false);
}

bool run_popup_to_toplevel(struct bad_client *c)
{
	return switch_role(c, true);
}

/* A 64-pixel-wide XRGB buffer whose rows are 64 bytes apart: libwayland
 * accepts it (stride >= width), the compositor must not. */
bool run_short_stride(struct bad_client *c)
{
	const int w = 64, h = 64;
	if (!make_toplevel(c, true) || !make_buffer(c, w * h * 4, 0, w, h, w))
		return false;
	xdg_surface_ack_configure(c->top.xdg_surface, c->top.serial);
	wl_surface_attach(c->top.surface, c->buffer, 0, 0);
	wl_surface_damage_buffer(c->top.surface, 0, 0, w, h);
	wl_surface_commit(c->top.surface);
	return true;
}

/* offset + stride * height four bytes past the end of the pool. */
bool run_offset_past_pool(struct bad_client *c)
{
	if (!make_buffer(c, 4096, 4096 - 64 + 4, 16, 1, 64))
		return false;
	return true;
}

bool run_min_over_max(struct bad_client *c)
{
	if (!make_toplevel(c, true))
		return false;
	xdg_toplevel_set_min_size(c->top.toplevel, 300, 100);
	xdg_toplevel_set_max_size(c->top.toplevel, 200, 200);
	wl_surface_commit(c->top.surface);
	return true;
}

bool run_negative_min_size(struct bad_client *c)
{
	if (!make_toplevel(c, true))
		return false;
	xdg_toplevel_set_min_size(c->top.toplevel, -1, 10);
	return true;
}

/* Scale 2 and a 33x33 buffer, which alone is invalid_size; a viewport
 * destination makes the surface 50x50 whatever the scale. */
bool run_scale_viewport(struct bad_client *c)
{
	const int w = 33, h = 33;
	if (!c->g.viewporter) {
		fprintf(stderr, "duet-bad-client: no wp_viewporter\n");
		return false;
	}
	if (!make_toplevel(c, true) || !make_buffer(c, w * h * 4, 0, w, h, w * 4))
		return false;
	c->viewport = wp_viewporter_get_viewport(c->g.viewporter, c->top.surface);
	wp_viewport_set_destination(c->viewport, 50, 50);
	wl_surface_set_buffer_scale(c->top.surface, 2);
	xdg_surface_ack_configure(c->top.xdg_surface, c->top.serial);
	wl_surface_attach(c->top.surface, c->buffer, 0, 0);
	wl_surface_damage_buffer(c->top.surface, 0, 0, w, h);
	wl_surface_commit(c->top.surface);
	return true;
}

/* Two popups nested on a mapped toplevel, both mapped, neither grabbing,
 * and the lower one destroyed first: xdg_wm_base.not_the_topmost_popup.
 * xdg_popup.destroy's rule ("if this xdg_popup is not the topmost popup")
 * is not limited to grabbing popups, though weston 10 checks only those. */
struct nested {
	struct wl_surface *surface[2];
	struct xdg_surface *xdg[2];
	struct xdg_popup *popup[2];
	struct xdg_positioner *positioner;
	uint32_t serial[2];
	bool configured[2];
};

static void nested_cleanup(struct bad_client *c)
{
	struct nested *n = c->mode_data;
	destroy_chain(2, n->popup, n->xdg, NULL, n->surface);
	if (n->positioner)
		xdg_positioner_destroy(n->positioner);
}

static void nested_configure(void *data, struct xdg_surface *xdg, uint32_t serial)
{
	struct nested *n = data;
	int i = xdg == n->xdg[1];
	n->serial[i] = serial;
	n->configured[i] = true;
}

static const struct xdg_surface_listener nested_listener = {
	.configure = nested_configure,
};

bool run_popup_destroy_order(struct bad_client *c)
{
	const int size = 16;
	struct nested *n = mode_data(c, sizeof(*n), nested_cleanup);
	if (!n || !make_toplevel(c, true) ||
	    !make_buffer(c, size * size * 4, 0, size, size, size * 4))
		return false;
	xdg_surface_ack_configure(c->top.xdg_surface, c->top.serial);
	wl_surface_attach(c->top.surface, c->buffer, 0, 0);
	wl_surface_commit(c->top.surface);
	n->positioner = xdg_wm_base_create_positioner(c->g.wm_base);
	xdg_positioner_set_size(n->positioner, size, size);
	xdg_positioner_set_anchor_rect(n->positioner, 0, 0, 1, 1);
	struct xdg_surface *parent = c->top.xdg_surface;
	for (int i = 0; i < 2; i++) {
		n->surface[i] = wl_compositor_create_surface(c->g.compositor);
		n->xdg[i] = xdg_wm_base_get_xdg_surface(c->g.wm_base, n->surface[i]);
		xdg_surface_add_listener(n->xdg[i], &nested_listener, n);
		n->popup[i] = xdg_surface_get_popup(n->xdg[i], parent, n->positioner);
		wl_surface_commit(n->surface[i]);
		uint64_t deadline = now_ms() + 5000;
		while (!n->configured[i] && now_ms() < deadline) {
			if (wl_display_roundtrip(c->display) < 0)
				return false;
		}
		if (!n->configured[i])
			return false;
		xdg_surface_ack_configure(n->xdg[i], n->serial[i]);
		wl_surface_attach(n->surface[i], c->buffer, 0, 0);
		wl_surface_commit(n->surface[i]);
		parent = n->xdg[i];
	}
	if (wl_display_roundtrip(c->display) < 0)
		return false;
	xdg_popup_destroy(n->popup[0]); /* popup[1] is still open on it */
	n->popup[0] = NULL;
	return true;
}
