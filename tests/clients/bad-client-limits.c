/* duet-bad-client modes that push the compositor's limits rather than break
 * a rule: nesting deeper than it allows (docs/security.md), values that
 * overflow naive arithmetic, budgets. Each sends its requests in batches
 * with a roundtrip between them, so that the error is read before more
 * requests meet a closed connection (which libwayland-client would report
 * as EPIPE instead of the protocol error). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bad-client.h"

#define DEEP 100000 /* levels a deep mode tries to nest */
#define BATCH 100   /* levels per roundtrip: well inside libwayland's 4 KiB buffer */

struct deep {
	size_t n;
	struct wl_surface **surfaces;
	struct wl_subsurface **subsurfaces;
	struct xdg_surface **xdg_surfaces;
	struct xdg_popup **popups;
	struct xdg_positioner *positioner;
};

static void deep_cleanup(struct bad_client *c)
{
	struct deep *d = c->mode_data;
	destroy_chain(d->n, d->popups, d->xdg_surfaces, d->subsurfaces, d->surfaces);
	if (d->positioner)
		xdg_positioner_destroy(d->positioner);
	free(d->surfaces);
	free(d->subsurfaces);
	free(d->xdg_surfaces);
	free(d->popups);
}

static struct deep *deep_new(struct bad_client *c)
{
	struct deep *d = mode_data(c, sizeof(*d), deep_cleanup);
	if (!d)
		return NULL;
	d->surfaces = calloc(DEEP + 1, sizeof(*d->surfaces));
	d->subsurfaces = calloc(DEEP + 1, sizeof(*d->subsurfaces));
	d->xdg_surfaces = calloc(DEEP + 1, sizeof(*d->xdg_surfaces));
	d->popups = calloc(DEEP + 1, sizeof(*d->popups));
	if (!d->surfaces || !d->subsurfaces || !d->xdg_surfaces || !d->popups)
		return NULL;
	return d;
}

/* A chain of DEEP subsurfaces, each the child of the one before. A
 * compositor without a depth limit then walks it recursively when the root
 * commits (placing each child) and overflows its stack. */
bool run_deep_subsurfaces(struct bad_client *c)
{
	struct deep *d = deep_new(c);
	if (!d || !c->g.subcompositor)
		return false;
	d->surfaces[0] = wl_compositor_create_surface(c->g.compositor);
	d->n = 1;
	for (size_t i = 1; i <= DEEP; i++) {
		d->surfaces[i] = wl_compositor_create_surface(c->g.compositor);
		d->subsurfaces[i] = wl_subcompositor_get_subsurface(c->g.subcompositor,
		                                                    d->surfaces[i], d->surfaces[i - 1]);
		d->n = i + 1;
		if (i % BATCH == 0 && wl_display_roundtrip(c->display) < 0) {
			printf("deep-subsurfaces: error while nesting at most %zu deep\n", i);
			return true;
		}
	}
	printf("deep-subsurfaces: nested %d deep without an error\n", DEEP);
	wl_surface_commit(d->surfaces[0]);
	return true;
}

/* A chain of DEEP popups on a toplevel, each the parent of the next. */
bool run_deep_popups(struct bad_client *c)
{
	struct deep *d = deep_new(c);
	if (!d || !make_toplevel(c, true))
		return false;
	d->positioner = xdg_wm_base_create_positioner(c->g.wm_base);
	xdg_positioner_set_size(d->positioner, 10, 10);
	xdg_positioner_set_anchor_rect(d->positioner, 0, 0, 1, 1);
	struct xdg_surface *parent = c->top.xdg_surface;
	for (size_t i = 0; i < DEEP; i++) {
		d->surfaces[i] = wl_compositor_create_surface(c->g.compositor);
		d->xdg_surfaces[i] = xdg_wm_base_get_xdg_surface(c->g.wm_base, d->surfaces[i]);
		d->popups[i] = xdg_surface_get_popup(d->xdg_surfaces[i], parent, d->positioner);
		parent = d->xdg_surfaces[i];
		d->n = i + 1;
		if ((i + 1) % BATCH == 0 && wl_display_roundtrip(c->display) < 0) {
			printf("deep-popups: error while nesting at most %zu deep\n", i + 1);
			return true;
		}
	}
	printf("deep-popups: nested %d deep without an error\n", DEEP);
	return true;
}

static void popup_configure(void *data, struct xdg_popup *popup, int32_t x, int32_t y,
                            int32_t width, int32_t height)
{
	printf("popup configure %d,%d %dx%d\n", x, y, width, height);
}

static void popup_done(void *data, struct xdg_popup *popup)
{
}

static void popup_repositioned(void *data, struct xdg_popup *popup, uint32_t token)
{
}

static const struct xdg_popup_listener popup_listener = {
	.configure = popup_configure,
	.popup_done = popup_done,
	.repositioned = popup_repositioned,
};

/* A popup as large as xdg_positioner.set_size allows (INT32_MAX), at the
 * far edge of the anchor range, with every constraint adjustment: naive
 * placement arithmetic (pos + size, flipped pos - size) overflows. The
 * compositor may clamp (no error expected). */
bool run_positioner_huge_size(struct bad_client *c)
{
	struct deep *d = deep_new(c);
	if (!d || !make_toplevel(c, true))
		return false;
	d->positioner = xdg_wm_base_create_positioner(c->g.wm_base);
	xdg_positioner_set_size(d->positioner, INT32_MAX, INT32_MAX);
	xdg_positioner_set_anchor_rect(d->positioner, INT32_MAX - 1, INT32_MAX - 1, 1, 1);
	xdg_positioner_set_anchor(d->positioner, XDG_POSITIONER_ANCHOR_BOTTOM_RIGHT);
	xdg_positioner_set_gravity(d->positioner, XDG_POSITIONER_GRAVITY_BOTTOM_RIGHT);
	xdg_positioner_set_offset(d->positioner, INT32_MAX, INT32_MAX);
	xdg_positioner_set_constraint_adjustment(d->positioner, 0x3f); /* all of them */
	d->surfaces[0] = wl_compositor_create_surface(c->g.compositor);
	d->xdg_surfaces[0] = xdg_wm_base_get_xdg_surface(c->g.wm_base, d->surfaces[0]);
	d->popups[0] = xdg_surface_get_popup(d->xdg_surfaces[0], c->top.xdg_surface, d->positioner);
	xdg_popup_add_listener(d->popups[0], &popup_listener, c);
	d->n = 1;
	wl_surface_commit(d->surfaces[0]); /* asks for the popup's configure */
	return true;
}

/* wl_surface.attach's x,y (wl_surface.offset since v5) move a toplevel by
 * that much at each commit, and add up in a synchronized subsurface's
 * cached commits: INT32_MAX a few times over overflows naive sums. The
 * compositor may clamp (no error expected). */
bool run_offset_overflow(struct bad_client *c)
{
	const int w = 16, h = 16;
	struct deep *d = deep_new(c);
	if (!d || !c->g.subcompositor || !make_toplevel(c, true) ||
	    !make_buffer(c, w * h * 4, 0, w, h, w * 4))
		return false;
	xdg_surface_ack_configure(c->top.xdg_surface, c->top.serial);
	wl_surface_attach(c->top.surface, c->buffer, 0, 0);
	wl_surface_commit(c->top.surface);
	d->surfaces[0] = wl_compositor_create_surface(c->g.compositor);
	d->subsurfaces[0] = wl_subcompositor_get_subsurface(c->g.subcompositor, d->surfaces[0],
	                                                    c->top.surface);
	d->n = 1;
	for (int i = 0; i < 4; i++) {
		/* Cached until the parent commits: their offsets add up. */
		for (int j = 0; j < 2; j++) {
			wl_surface_attach(d->surfaces[0], c->buffer, INT32_MAX, INT32_MAX);
			wl_surface_commit(d->surfaces[0]);
		}
		wl_surface_attach(c->top.surface, c->buffer, INT32_MAX, INT32_MAX);
		wl_surface_commit(c->top.surface);
		if (wl_display_roundtrip(c->display) < 0)
			return true;
	}
	return true;
}

/* A 4x4 buffer shown at scale 1, then set_buffer_scale(INT32_MAX) and
 * damage committed without a new buffer: the committed buffer is no
 * multiple of the scale, and naive damage scaling overflows. */
bool run_huge_buffer_scale(struct bad_client *c)
{
	const int w = 4, h = 4;
	if (!make_buffer(c, w * h * 4, 0, w, h, w * 4))
		return false;
	c->other_surface = wl_compositor_create_surface(c->g.compositor);
	wl_surface_attach(c->other_surface, c->buffer, 0, 0);
	wl_surface_damage_buffer(c->other_surface, 0, 0, w, h);
	wl_surface_commit(c->other_surface);
	if (wl_display_roundtrip(c->display) < 0)
		return false;
	wl_surface_set_buffer_scale(c->other_surface, INT32_MAX);
	wl_surface_commit(c->other_surface);
	/* The size changed above, so that commit damaged everything; this one
	 * scales its damage. */
	wl_surface_damage(c->other_surface, 0, 0, 1, 1);
	wl_surface_damage_buffer(c->other_surface, 0, 0, w, h);
	wl_surface_commit(c->other_surface);
	return true;
}

/* Eight 4096x4096 surfaces (64 MiB of texture each, 512 MiB in all) from
 * one sparse memfd the client never touches: over the compositor's
 * per-client texture budget (256 MiB by default), or its total one. */
bool run_texture_budget(struct bad_client *c)
{
	const int side = 4096, count = 8;
	struct deep *d = deep_new(c);
	if (!d || !make_buffer(c, side * side * 4, 0, side, side, side * 4))
		return false;
	for (int i = 0; i < count; i++) {
		d->surfaces[i] = wl_compositor_create_surface(c->g.compositor);
		d->n = (size_t)i + 1;
		wl_surface_attach(d->surfaces[i], c->buffer, 0, 0);
		wl_surface_commit(d->surfaces[i]);
		if (wl_display_roundtrip(c->display) < 0) {
			printf("texture-budget: error at surface %d of %d\n", i + 1, count);
			return true;
		}
	}
	printf("texture-budget: %d surfaces of %dx%d without an error\n", count, side, side);
	return true;
}

struct mime_flood {
	struct wl_data_source *source;
};

static void mime_cleanup(struct bad_client *c)
{
	struct mime_flood *m = c->mode_data;
	if (m->source)
		wl_data_source_destroy(m->source);
}

bool run_mime_flood(struct bad_client *c)
{
	struct mime_flood *m = mode_data(c, sizeof(*m), mime_cleanup);
	if (!m || !c->g.data_device_manager)
		return false;
	m->source = wl_data_device_manager_create_data_source(c->g.data_device_manager);
	for (int i = 0; i < DEEP; i++) {
		char mime[32];
		snprintf(mime, sizeof(mime), "text/x-duet-%06d", i);
		wl_data_source_offer(m->source, mime);
		if ((i + 1) % BATCH == 0 && wl_display_roundtrip(c->display) < 0) {
			printf("mime-flood: error after at most %d types\n", i + 1);
			return true;
		}
	}
	printf("mime-flood: %d types without an error\n", DEEP);
	return true;
}
