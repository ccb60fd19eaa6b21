/* The compositing manager: windows are redirected offscreen (Composite,
 * manual mode), each one's contents become a texture on a render_node of
 * one render_scene, and the scene is painted into the composite overlay
 * window through EGL.
 *
 * Damage: one Damage object per mapped window at level NonEmpty. The
 * server sends one DamageNotify when a window's damage goes from empty to
 * non-empty and nothing more until we take the region (DamageSubtract into
 * an XFixes region, then FetchRegion), which we do once per frame. That is
 * one event per window per frame however many rectangles a client draws,
 * where RawRectangles would send one event per drawing request (xterm
 * draws text a few glyphs at a time) and wake us for each.
 *
 * Contents: EGL_KHR_image_pixmap would bind the named pixmap zero-copy,
 * but render/ has no EGLImage import yet and Xvfb (no DRI3) cannot offer
 * it anyway, so the path here is MIT-SHM: ShmGetImage of exactly each
 * damaged rectangle of the named pixmap into a shared memory segment, and
 * render_texture_upload of that rectangle. The segment holds a window-sized
 * image (the layout render_texture_upload reads) and a scratch half: a
 * full-width rectangle is fetched straight into the image, a narrower one
 * (GetImage packs its rows) into the scratch half and copied row by row.
 * An upload call taking a rectangle's own stride would save that copy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xcb/composite.h>
#include <xcb/shape.h>
#include <xcb/shm.h>
#include <xcb/xfixes.h>

#include "xwm.h"

#define BACKGROUND_ARGB 0xff202020u /* as duet-compositor's output */
/* Windows larger than this many bytes of pixels are not composited. */
#define MAX_WINDOW_BYTES (256u << 20)
/* Above this many damage rectangles one bounding box is cheaper. */
#define MAX_RECTS 8

/* ----------------------------------------------------------- setup */

static bool check_extension(struct xwm *xwm, xcb_extension_t *ext, const char *name,
                            uint8_t *first_event)
{
	const xcb_query_extension_reply_t *r = xcb_get_extension_data(xwm->conn, ext);
	if (!r || !r->present) {
		xwm_log("the X server lacks the %s extension", name);
		return false;
	}
	if (first_event)
		*first_event = r->first_event;
	return true;
}

static int claim_cm_selection(struct xwm *xwm)
{
	xcb_connection_t *c = xwm->conn;
	xcb_get_selection_owner_reply_t *r = xcb_get_selection_owner_reply(c,
		xcb_get_selection_owner(c, xwm->atoms._NET_WM_CM_S0), NULL);
	if (r && r->owner != XCB_NONE) {
		xwm_log("another compositing manager owns _NET_WM_CM_S0 (window 0x%x)", r->owner);
		free(r);
		return -1;
	}
	free(r);
	xcb_set_selection_owner(c, xwm->check_window, xwm->atoms._NET_WM_CM_S0,
	                        XCB_CURRENT_TIME);
	return 0;
}

static bool query_versions(struct xwm *xwm)
{
	xcb_connection_t *c = xwm->conn;
	/* Damage and XFixes require a version handshake before use. */
	xcb_composite_query_version_cookie_t cc = xcb_composite_query_version(c, 0, 4);
	xcb_damage_query_version_cookie_t dc = xcb_damage_query_version(c, 1, 1);
	xcb_xfixes_query_version_cookie_t fc = xcb_xfixes_query_version(c, 5, 0);
	xcb_shm_query_version_cookie_t sc = xcb_shm_query_version(c);
	xcb_sync_initialize_cookie_t yc = xcb_sync_initialize(c, 3, 1);
	xcb_composite_query_version_reply_t *cr = xcb_composite_query_version_reply(c, cc, NULL);
	xcb_damage_query_version_reply_t *dr = xcb_damage_query_version_reply(c, dc, NULL);
	xcb_xfixes_query_version_reply_t *fr = xcb_xfixes_query_version_reply(c, fc, NULL);
	xcb_shm_query_version_reply_t *sr = xcb_shm_query_version_reply(c, sc, NULL);
	xcb_sync_initialize_reply_t *yr = xcb_sync_initialize_reply(c, yc, NULL);
	bool ok = cr && dr && fr && (cr->major_version > 0 || cr->minor_version >= 3);

	if (!ok)
		xwm_log("Composite >= 0.3, Damage and XFixes are required");
	xwm->has_shm_fd = sr && (sr->major_version > 1 ||
	                         (sr->major_version == 1 && sr->minor_version >= 2));
	if (!yr)
		xwm->sync_event = 0; /* no frame timing without SYNC */
	free(cr);
	free(dr);
	free(fr);
	free(sr);
	free(yr);
	return ok;
}

int xwm_composite_start(struct xwm *xwm)
{
	xcb_connection_t *c = xwm->conn;

	if (!check_extension(xwm, &xcb_composite_id, "Composite", NULL) ||
	    !check_extension(xwm, &xcb_damage_id, "DAMAGE", &xwm->damage_event) ||
	    !check_extension(xwm, &xcb_xfixes_id, "XFIXES", &xwm->xfixes_event) ||
	    !check_extension(xwm, &xcb_shape_id, "SHAPE", NULL))
		return -1;
	if (!check_extension(xwm, &xcb_shm_id, "MIT-SHM", NULL))
		xwm_log("no MIT-SHM: window contents will travel in GetImage replies");
	if (!check_extension(xwm, &xcb_sync_id, "SYNC", &xwm->sync_event))
		xwm->sync_event = 0;
	if (!query_versions(xwm))
		return -1;
	if (claim_cm_selection(xwm) < 0)
		return -1;

	xcb_generic_error_t *err = xcb_request_check(c,
		xcb_composite_redirect_subwindows_checked(c, xwm->root,
		                                          XCB_COMPOSITE_REDIRECT_MANUAL));
	if (err) {
		xwm_log("cannot redirect the root's children (X error %u): another compositing "
		        "manager is running", err->error_code);
		free(err);
		return -1;
	}

	xcb_composite_get_overlay_window_reply_t *ov = xcb_composite_get_overlay_window_reply(c,
		xcb_composite_get_overlay_window(c, xwm->root), NULL);
	if (!ov) {
		xwm_log("cannot get the composite overlay window");
		return -1;
	}
	xwm->overlay = ov->overlay_win;
	free(ov);
	/* Clicks must reach the windows under the overlay: empty input shape. */
	xcb_xfixes_region_t empty = xcb_generate_id(c);
	xcb_xfixes_create_region(c, empty, 0, NULL);
	xcb_xfixes_set_window_shape_region(c, xwm->overlay, XCB_SHAPE_SK_INPUT, 0, 0, empty);
	xcb_xfixes_destroy_region(c, empty);
	xwm->scratch_region = xcb_generate_id(c);
	xcb_xfixes_create_region(c, xwm->scratch_region, 0, NULL);
	xcb_flush(c);

	int sw = xwm->screen->width_in_pixels, sh = xwm->screen->height_in_pixels;
	xwm->egl = render_egl_create_x11(xwm->xlib_display, xwm->screen->root_visual);
	if (!xwm->egl)
		return -1;
	xwm->renderer = renderer_create(xwm->egl);
	if (!xwm->renderer)
		return -1;
	xwm->target = render_target_create_window(xwm->egl, xwm->overlay, sw, sh);
	if (!xwm->target)
		return -1;
	xwm->scene = render_scene_create(xwm->renderer, sw, sh, BACKGROUND_ARGB);
	if (!xwm->scene)
		return -1;
	render_frame_clock_init(&xwm->clock, xwm->options.refresh_mhz);

	bool image_pixmap = render_egl_has_extension(xwm->egl, "EGL_KHR_image_pixmap");
	xwm->content_path = "shm-copy";
	xwm_log("content path: %s (EGL_KHR_image_pixmap %s%s); output repaint path: %s",
	        xwm->content_path, image_pixmap ? "offered" : "absent",
	        image_pixmap ? ", zero-copy import not implemented in render/ yet" : "",
	        render_target_window_path(xwm->target));
	render_trace("xwm_paths", "\"content\":\"%s\",\"repaint\":\"%s\",\"egl\":\"%s\"",
	             xwm->content_path, render_target_window_path(xwm->target),
	             render_egl_describe(xwm->egl));
	return 0;
}

static void shm_release(struct xwm *xwm)
{
	if (xwm->shm_data && xwm->has_shm_fd) {
		xcb_shm_detach(xwm->conn, xwm->shm_seg);
		munmap(xwm->shm_data, xwm->shm_size);
	} else {
		free(xwm->shm_data);
	}
	xwm->shm_data = NULL;
	xwm->shm_size = 0;
}

void xwm_composite_finish(struct xwm *xwm)
{
	shm_release(xwm);
	if (xwm->scene)
		render_scene_destroy(xwm->scene);
	xwm->scene = NULL;
	if (xwm->target)
		render_target_window_destroy(xwm->target);
	xwm->target = NULL;
	if (xwm->renderer)
		renderer_destroy(xwm->renderer);
	xwm->renderer = NULL;
	if (xwm->egl)
		render_egl_destroy(xwm->egl);
	xwm->egl = NULL;
	if (xwm->overlay)
		xcb_composite_release_overlay_window(xwm->conn, xwm->root);
	xwm->overlay = XCB_NONE;
}

/* A buffer of at least size bytes that the server can write window
 * pixels into: a memfd shared through MIT-SHM 1.2, else plain memory that
 * GetImage replies are copied into. */
static bool shm_reserve(struct xwm *xwm, size_t size)
{
	if (size <= xwm->shm_size)
		return true;
	shm_release(xwm);
	size = (size + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
	if (!xwm->has_shm_fd) {
		xwm->shm_data = malloc(size);
		if (!xwm->shm_data)
			return false;
		xwm->shm_size = size;
		return true;
	}
	int fd = memfd_create("duet-xwm-contents", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		xwm_log("memfd for window contents: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	void *data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (data == MAP_FAILED) {
		xwm_log("mmap for window contents: %s", strerror(errno));
		close(fd);
		return false;
	}
	xwm->shm_seg = xcb_generate_id(xwm->conn);
	/* xcb closes the fd once sent. */
	xcb_shm_attach_fd(xwm->conn, xwm->shm_seg, fd, 0);
	xwm->shm_data = data;
	xwm->shm_size = size;
	return true;
}

/* ------------------------------------------------------------ windows */

static bool window_composited(const struct xwm_window *w)
{
	return w->node && (w->depth == 24 || w->depth == 32);
}

void xwm_composite_window_created(struct xwm_window *w)
{
	if (w->input_only || w->node || !w->xwm->scene)
		return;
	w->node = render_node_create(w->xwm->scene);
	if (!w->node)
		return;
	render_node_set_position(w->node, w->x, w->y);
	xwm_composite_window_restacked(w);
}

void xwm_composite_window_restacked(struct xwm_window *w)
{
	if (!w->node)
		return;
	/* Just above the nearest lower window that has a node. */
	for (struct xwm_list *l = w->link.prev; l != &w->xwm->stack; l = l->prev) {
		struct xwm_window *below = xwm_container_of(l, struct xwm_window, link);
		if (below->node) {
			render_node_place_above(w->node, below->node);
			return;
		}
	}
	render_node_lower_to_bottom(w->node);
}

void xwm_composite_window_mapped(struct xwm_window *w)
{
	struct xwm *xwm = w->xwm;

	if (!w->node)
		return;
	if (!window_composited(w)) {
		if (!w->unsupported_logged)
			xwm_log("window 0x%x has depth %u: not composited", w->id, w->depth);
		w->unsupported_logged = true;
		return;
	}
	if (!w->damage) {
		w->damage = xcb_generate_id(xwm->conn);
		xcb_damage_create(xwm->conn, w->damage, w->id, XCB_DAMAGE_REPORT_LEVEL_NON_EMPTY);
	}
	w->needs_rename = true;
	w->full_damage = true;
	xwm_schedule_repaint(xwm);
}

static void release_pixmap(struct xwm_window *w)
{
	if (w->pixmap)
		xcb_free_pixmap(w->xwm->conn, w->pixmap);
	w->pixmap = XCB_NONE;
	w->pixmap_width = w->pixmap_height = 0;
}

void xwm_composite_window_unmapped(struct xwm_window *w)
{
	if (!w->node)
		return;
	render_node_set_visible(w->node, false);
	release_pixmap(w);
	if (w->damage)
		xcb_damage_destroy(w->xwm->conn, w->damage);
	w->damage = XCB_NONE;
	w->damaged = w->full_damage = w->needs_rename = false;
	if (w->texture)
		render_texture_destroy(w->texture);
	w->texture = NULL;
	xwm_schedule_repaint(w->xwm);
}

void xwm_composite_window_configured(struct xwm_window *w, bool resized)
{
	if (!w->node)
		return;
	render_node_set_position(w->node, w->x, w->y);
	if (w->viewable && window_composited(w) &&
	    (resized || w->pixmap_width != w->width + 2 * w->border ||
	     w->pixmap_height != w->height + 2 * w->border))
		w->needs_rename = true;
	xwm_schedule_repaint(w->xwm);
}

void xwm_composite_window_destroyed(struct xwm_window *w)
{
	release_pixmap(w);
	/* The server frees a destroyed window's Damage itself; for a window
	 * reparented away this one is still ours (an error otherwise, which
	 * is ignored). */
	if (w->damage)
		xcb_damage_destroy(w->xwm->conn, w->damage);
	w->damage = XCB_NONE;
	if (w->texture)
		render_texture_destroy(w->texture);
	w->texture = NULL;
	if (w->node)
		render_node_destroy(w->node);
	w->node = NULL;
	xwm_schedule_repaint(w->xwm);
}

void xwm_composite_handle_damage(struct xwm *xwm, xcb_damage_notify_event_t *ev)
{
	struct xwm_window *w = xwm_window_lookup(xwm, ev->drawable);
	xwm->last_time = ev->timestamp;
	if (!w || !w->damage)
		return;
	w->damaged = true;
	xwm_schedule_repaint(xwm);
}

/* ----------------------------------------------------------- contents */

/* Names the window's current pixmap and gives it a texture of its size. */
static bool rename_pixmap(struct xwm_window *w)
{
	struct xwm *xwm = w->xwm;
	int pw = w->width + 2 * w->border, ph = w->height + 2 * w->border;

	release_pixmap(w);
	if ((uint64_t)pw * (uint64_t)ph * 4u > MAX_WINDOW_BYTES) {
		xwm_log("window 0x%x of %dx%d is too large to composite", w->id, pw, ph);
		return false;
	}
	w->pixmap = xcb_generate_id(xwm->conn);
	/* Fails (ignored) if the window was unmapped meanwhile; its
	 * UnmapNotify follows. */
	xcb_composite_name_window_pixmap(xwm->conn, w->id, w->pixmap);
	w->pixmap_width = pw;
	w->pixmap_height = ph;
	enum render_format format = w->depth == 32 ? RENDER_FORMAT_ARGB8888
	                                           : RENDER_FORMAT_XRGB8888;
	if (!w->texture || render_texture_width(w->texture) != pw ||
	    render_texture_height(w->texture) != ph ||
	    render_texture_has_alpha(w->texture) != (format == RENDER_FORMAT_ARGB8888)) {
		if (w->texture)
			render_texture_destroy(w->texture);
		w->texture = render_texture_create(xwm->renderer, format, pw, ph);
		if (!w->texture)
			return false;
		/* Shown once its first contents are fetched. */
		render_node_set_visible(w->node, false);
		render_node_set_texture(w->node, w->texture);
	}
	w->full_damage = true;
	return true;
}

/* Fetches box (pixmap coordinates, inside it) into the texture. */
static bool fetch_rect(struct xwm_window *w, const pixman_box32_t *b)
{
	struct xwm *xwm = w->xwm;
	int bw = b->x2 - b->x1, bh = b->y2 - b->y1;
	size_t stride = (size_t)w->pixmap_width * 4;
	size_t image_bytes = stride * (size_t)w->pixmap_height;
	size_t dst_offset = (size_t)b->y1 * stride + (size_t)b->x1 * 4;
	size_t row = (size_t)bw * 4;
	/* Full-width rectangles land in place; others go to the scratch half
	 * and are copied row by row into the image (GetImage packs rows). */
	bool in_place = bw == w->pixmap_width;
	size_t offset = in_place ? dst_offset : image_bytes;
	pixman_region32_t region;
	int ret;

	if (!shm_reserve(xwm, image_bytes * 2))
		return false;
	char *base = xwm->shm_data;
	if (xwm->has_shm_fd) {
		xcb_shm_get_image_reply_t *r = xcb_shm_get_image_reply(xwm->conn,
			xcb_shm_get_image(xwm->conn, w->pixmap, (int16_t)b->x1, (int16_t)b->y1,
			                  (uint16_t)bw, (uint16_t)bh, ~0u,
			                  XCB_IMAGE_FORMAT_Z_PIXMAP, xwm->shm_seg, (uint32_t)offset),
			NULL);
		if (!r)
			return false; /* pixmap gone: the window is going away */
		free(r);
	} else {
		xcb_get_image_reply_t *r = xcb_get_image_reply(xwm->conn,
			xcb_get_image(xwm->conn, XCB_IMAGE_FORMAT_Z_PIXMAP, w->pixmap,
			              (int16_t)b->x1, (int16_t)b->y1, (uint16_t)bw, (uint16_t)bh, ~0u),
			NULL);
		if (!r)
			return false;
		if ((size_t)xcb_get_image_data_length(r) >= row * (size_t)bh)
			memcpy(base + offset, xcb_get_image_data(r), row * (size_t)bh);
		free(r);
	}
	if (!in_place)
		for (int y = 0; y < bh; y++)
			memcpy(base + dst_offset + (size_t)y * stride, base + offset + (size_t)y * row,
			       row);
	pixman_region32_init_rect(&region, b->x1, b->y1, (unsigned)bw, (unsigned)bh);
	ret = render_texture_upload(w->texture, base, (int)stride, &region);
	render_node_damage(w->node, &region);
	pixman_region32_fini(&region);
	return ret == 0;
}

struct pending_fetch {
	struct xwm_window *w;
	xcb_xfixes_fetch_region_cookie_t cookie;
	bool has_cookie;
};

static void fetch_window(struct xwm_window *w, xcb_xfixes_fetch_region_reply_t *damage)
{
	pixman_region32_t region;
	pixman_box32_t all = { 0, 0, w->pixmap_width, w->pixmap_height };

	pixman_region32_init(&region);
	if (w->full_damage) {
		pixman_region32_reset(&region, &all);
	} else if (damage) {
		xcb_rectangle_t *r = xcb_xfixes_fetch_region_rectangles(damage);
		int n = xcb_xfixes_fetch_region_rectangles_length(damage);
		for (int i = 0; i < n; i++)
			/* Damage is window-relative; the pixmap includes the border. */
			pixman_region32_union_rect(&region, &region, r[i].x + w->border,
			                           r[i].y + w->border, r[i].width, r[i].height);
		pixman_region32_intersect_rect(&region, &region, 0, 0,
		                               (unsigned)w->pixmap_width,
		                               (unsigned)w->pixmap_height);
	}
	int n;
	const pixman_box32_t *boxes = pixman_region32_rectangles(&region, &n);
	bool ok = true;
	xwm_debug(w->xwm, "0x%x: fetch %d rectangle(s)%s", w->id, n, w->full_damage ? " (all)" : "");
	if (n > MAX_RECTS) {
		const pixman_box32_t *ext = pixman_region32_extents(&region);
		ok = fetch_rect(w, ext);
	} else {
		for (int i = 0; i < n && ok; i++)
			ok = fetch_rect(w, &boxes[i]);
	}
	pixman_region32_fini(&region);
	w->full_damage = false;
	if (ok && n > 0) {
		render_node_set_visible(w->node, true);
		w->presented_update = true;
	}
}

void xwm_composite_update_contents(struct xwm *xwm)
{
	size_t count = 0, n = 0;

	for (struct xwm_list *l = xwm->stack.next; l != &xwm->stack; l = l->next)
		count++;
	struct pending_fetch *pending = calloc(count + 1, sizeof(*pending));
	if (!pending)
		return;
	/* Requests for every window first, replies after: one round trip for
	 * all the damage regions of the frame. */
	for (struct xwm_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_window *w = xwm_container_of(l, struct xwm_window, link);
		if (!w->viewable || !window_composited(w) || !w->damage)
			continue;
		if (!(w->damaged || w->full_damage || w->needs_rename) ||
		    !xwm_sync_content_ready(w))
			continue;
		if (w->needs_rename) {
			w->needs_rename = false;
			if (!rename_pixmap(w))
				continue;
		}
		pending[n].w = w;
		if (w->damaged) {
			/* Takes the damage and re-arms the NonEmpty report. */
			xcb_damage_subtract(xwm->conn, w->damage, XCB_NONE, xwm->scratch_region);
			pending[n].cookie = xcb_xfixes_fetch_region(xwm->conn, xwm->scratch_region);
			pending[n].has_cookie = true;
			w->damaged = false;
		}
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		xcb_xfixes_fetch_region_reply_t *r = pending[i].has_cookie ?
			xcb_xfixes_fetch_region_reply(xwm->conn, pending[i].cookie, NULL) : NULL;
		pending[i].w->presented_update = false;
		if (pending[i].w->pixmap && pending[i].w->texture)
			fetch_window(pending[i].w, r);
		free(r);
	}
	free(pending);
}
