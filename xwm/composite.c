/* The compositing manager: windows are redirected offscreen (Composite,
 * manual mode), each one's contents become a texture on a render_node of
 * one render_scene, and the scene is painted into the composite overlay
 * window through EGL.
 *
 * Damage: one Damage object per mapped window at level DeltaRectangles.
 * The server sends a DamageNotify only for area that is not yet in the
 * window's damage region, carrying that area; we collect the rectangles
 * here and, once per frame, DamageSubtract(None, None) empties the server's
 * region so the next drawing is reported again. The alternatives cost more
 * for the updates that dominate a desktop (an xterm cursor blink: one or
 * two small rectangles):
 *   - NonEmpty, then DamageSubtract into an XFixes region and FetchRegion:
 *     the same one event, plus a FetchRegion request whose reply has to be
 *     waited for before any GetImage can be sent: 3 requests and 2 round
 *     trips per frame, 56 + 8 per rectangle more bytes on the wire;
 *   - NonEmpty, DamageSubtract(None, None) and a GetImage of the whole
 *     window: 2 requests and 1 round trip, but a 600 KiB copy and upload
 *     (an 80x24 xterm) for a cursor of a few hundred bytes;
 *   - RawRectangles: an event per drawing request even inside an area
 *     already damaged (xterm draws text a few glyphs at a time).
 * DeltaRectangles needs 1 + (rectangles fetched) requests, 1 round trip
 * (which duet-xwm does not wait in: fetch.c),
 * and one 32-byte event per new rectangle: for the cursor blink (measured
 * with xtrace under Xvfb) one event, DamageSubtract and one ShmGetImage.
 * A redraw of a whole window is one event for its first drawing request
 * and none for the rest. The case it loses on bytes: a client drawing many
 * disjoint pieces, e.g. xterm jump-scrolling, which redraws every line as
 * two requests (text, then clearing the rest of the line): about 48
 * events (1.5 KiB) in a frame where FetchRegion would have answered in
 * one 40-byte reply; still one request and one round trip fewer, and the
 * events mostly share the server's socket writes.
 *
 * The damage is coalesced to the frame: events only grow a region, and the
 * DamageSubtract and the fetch happen once per frame for each window that
 * has damage (fetch.c), however many events came since.
 *
 * Contents: fetch.c, which copies the damaged rectangles into the
 * windows' textures without the event loop waiting for the server.
 */
#include <errno.h>
#include <inttypes.h>
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
/* Texture memory budgets (--texture-budget, --window-texture-budget):
 * any client can create windows up to 32767x32767, and each composited one
 * costs a texture of its size (8192x8192 is 256 MiB). A window whose
 * texture would pass either budget is not composited, with one log line
 * per map or resize; the others keep theirs. */
#define DEFAULT_WINDOW_BUDGET_MIB 64   /* 4096x4096 */
#define DEFAULT_TOTAL_BUDGET_MIB 384

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
	/* ICCCM 2.8: a selection is taken with a real timestamp. */
	xcb_set_selection_owner(c, xwm->check_window, xwm->atoms._NET_WM_CM_S0, xwm->claim_time);
	return 0;
}

/* has_shm, has_sync: whether the server has them. A request of an
 * extension the server lacks makes xcb shut the connection down, so those
 * are asked only where present. */
static bool query_versions(struct xwm *xwm, bool has_shm, bool has_sync)
{
	xcb_connection_t *c = xwm->conn;
	/* Damage and XFixes require a version handshake before use. */
	xcb_composite_query_version_cookie_t cc = xcb_composite_query_version(c, 0, 4);
	xcb_damage_query_version_cookie_t dc = xcb_damage_query_version(c, 1, 1);
	xcb_xfixes_query_version_cookie_t fc = xcb_xfixes_query_version(c, 5, 0);
	xcb_shm_query_version_cookie_t sc = { 0 };
	xcb_sync_initialize_cookie_t yc = { 0 };
	if (has_shm)
		sc = xcb_shm_query_version(c);
	if (has_sync)
		yc = xcb_sync_initialize(c, 3, 1);
	xcb_composite_query_version_reply_t *cr = xcb_composite_query_version_reply(c, cc, NULL);
	xcb_damage_query_version_reply_t *dr = xcb_damage_query_version_reply(c, dc, NULL);
	xcb_xfixes_query_version_reply_t *fr = xcb_xfixes_query_version_reply(c, fc, NULL);
	xcb_shm_query_version_reply_t *sr = has_shm ? xcb_shm_query_version_reply(c, sc, NULL)
	                                            : NULL;
	xcb_sync_initialize_reply_t *yr = has_sync ? xcb_sync_initialize_reply(c, yc, NULL) : NULL;
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
	bool has_shm = check_extension(xwm, &xcb_shm_id, "MIT-SHM", NULL);
	if (!has_shm)
		xwm_log("no MIT-SHM: window contents will travel in GetImage replies");
	bool has_sync = check_extension(xwm, &xcb_sync_id, "SYNC", &xwm->sync_event);
	if (!has_sync)
		xwm->sync_event = 0;
	if (!query_versions(xwm, has_shm, has_sync))
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
	xcb_flush(c);

	int sw = xwm->screen->width_in_pixels, sh = xwm->screen->height_in_pixels;
	if (xwm->options.pixman) {
		xwm_log("rendering with pixman %s (no EGL)", pixman_version_string());
		xwm->renderer = renderer_create_pixman();
	} else {
		/* The overlay window has the root's visual: EGL's config must
		 * match it (output.c draws into the overlay on egl-swap). */
		xwm->egl = render_egl_create(RENDER_EGL_X11, xwm->xlib_display,
		                             xwm->screen->root_visual);
		if (!xwm->egl)
			return -1;
		xwm->renderer = renderer_create(xwm->egl);
	}
	if (!xwm->renderer)
		return -1;
	xwm->scene = render_scene_create(xwm->renderer, sw, sh, BACKGROUND_ARGB);
	if (!xwm->scene)
		return -1;
	if (xwm_output_start(xwm, sw, sh) < 0)
		return -1;
	if (xwm_repaint_start(xwm) < 0)
		return -1;
	xwm->texture_budget = (uint64_t)(xwm->options.texture_budget_mib ?
	                                 xwm->options.texture_budget_mib :
	                                 DEFAULT_TOTAL_BUDGET_MIB) << 20;
	xwm->window_texture_budget = (uint64_t)(xwm->options.window_texture_budget_mib ?
	                                        xwm->options.window_texture_budget_mib :
	                                        DEFAULT_WINDOW_BUDGET_MIB) << 20;

	char why[160];
	if (xwm_dri3_init(xwm, has_sync && xwm->sync_event != 0)) {
		xwm->content_path = "zero-copy";
		snprintf(why, sizeof(why), "DRI3 1.%d pixmaps as dmabufs into EGLImages; "
		         "MIT-SHM for a window whose import fails", xwm->dri3_minor);
	} else {
		xwm->content_path = "shm-copy";
		snprintf(why, sizeof(why), "MIT-SHM ShmGetImage; no zero-copy: %s", xwm->dri3_why);
	}
	xwm_log("content path: %s (%s); output path: %s, repaint path: %s", xwm->content_path,
	        why, xwm->output_path, xwm->output_repaint);
	render_trace("xwm_paths",
	             "\"content\":\"%s\",\"output\":\"%s\",\"repaint\":\"%s\",\"egl\":\"%s\","
	             "\"renderer\":\"%s\"",
	             xwm->content_path, xwm->output_path, xwm->output_repaint,
	             xwm->egl ? render_egl_describe(xwm->egl) : "none",
	             renderer_engine_name(xwm->renderer));
	return 0;
}

void xwm_composite_finish(struct xwm *xwm)
{
	xwm_contents_finish(xwm);
	xwm_dri3_finish(xwm);
	if (xwm->scene)
		render_scene_destroy(xwm->scene);
	xwm->scene = NULL;
	xwm_output_finish(xwm);
	render_repaint_loop_fini(&xwm->repaint);
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

/* ------------------------------------------------------------ windows */

bool xwm_window_composited(const struct xwm_window *w)
{
	return w->node && (w->depth == 24 || w->depth == 32);
}

static void create_damage(struct xwm_window *w)
{
	if (w->damage)
		return;
	w->damage = xcb_generate_id(w->xwm->conn);
	xcb_damage_create(w->xwm->conn, w->damage, w->id,
	                  XCB_DAMAGE_REPORT_LEVEL_DELTA_RECTANGLES);
}

void xwm_composite_window_created(struct xwm_window *w)
{
	if (w->node)
		return;
	/* Before any early return: _destroyed finishes it in every case (an
	 * empty region owns no memory either way). */
	pixman_region32_init(&w->damage_region);
	if (w->input_only || !w->xwm->scene)
		return;
	w->node = render_node_create(w->xwm->scene);
	if (!w->node)
		return;
	render_node_set_position(w->node, w->x, w->y);
	xwm_composite_window_restacked(w);
	/* Damage from creation on, so that it reports all drawing after the
	 * map: our MapWindow of a managed window is sent after this, so even
	 * a client that draws at once on its first Expose is seen. */
	if (xwm_window_composited(w))
		create_damage(w);
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

/* A window we map holds nothing its client drew yet (the server just
 * allocated its pixmap): showing it would put the parent's pixels or
 * garbage on screen and claim a frame the client has not drawn. It waits
 * for the first damage after our MapWindow, which is the client's drawing:
 * the map paints nothing into a window without background (duet's
 * toolkit, GTK; one with a background pixel is shown with it), and wm.c
 * places and raises the window before mapping it, as moving a mapped one
 * damages it. The window's Damage exists since its CreateNotify, and its
 * region was emptied at its last unmap, so nothing drawn after the map
 * goes unreported, however fast the client draws. */
void xwm_composite_window_mapping(struct xwm_window *w)
{
	if (w->damage && xwm_window_composited(w))
		w->awaiting_content = true;
}

void xwm_composite_window_mapped(struct xwm_window *w, bool has_content)
{
	struct xwm *xwm = w->xwm;

	if (!w->node)
		return;
	if (!xwm_window_composited(w)) {
		if (!w->unsupported_logged)
			xwm_log("window 0x%x has depth %u: not composited", w->id, w->depth);
		w->unsupported_logged = true;
		return;
	}
	/* Only windows we mapped ourselves wait (mapping() below); an
	 * override-redirect window maps itself, maybe before our
	 * DamageCreate of its CreateNotify reached the server, so its first
	 * drawing may have gone unreported: it is fetched at once. */
	bool wait = !has_content && w->awaiting_content && w->damage;
	create_damage(w);
	w->needs_rename = true;
	w->full_damage = true;
	w->composited = false;
	w->awaiting_content = wait;
	render_trace("window_mapped", "\"window\":%u,\"awaiting_content\":%s", w->id,
	             wait ? "true" : "false");
	if (!wait)
		xwm_schedule_repaint(xwm);
}

/* The window's texture, and the segment it samples if it has one. */
static void drop_texture(struct xwm_window *w)
{
	if (w->texture)
		render_texture_destroy(w->texture);
	w->texture = NULL;
	xwm_window_segment_release(w);
}

/* With pixman and MIT-SHM: a texture that is the window's own shared
 * segment, which the fetch's ShmGetImage writes into and the composite
 * reads in place (fetch.c), so no copy is made in duet-xwm. NULL where
 * that cannot be (GL, no MIT-SHM 1.2, no memory): the caller uploads. */
static struct render_texture *create_shared_texture(struct xwm_window *w,
                                                    enum render_format format, int pw, int ph)
{
	struct xwm *xwm = w->xwm;

	if (!xwm->has_shm_fd || !render_texture_wrap_supported(xwm->renderer) ||
	    !xwm_window_segment_create(w, (size_t)pw * (size_t)ph * 4))
		return NULL;
	struct render_texture *tex = render_texture_create_wrapped(xwm->renderer, pw, ph,
		w->seg_data, pw * 4, format == RENDER_FORMAT_ARGB8888);
	if (!tex)
		xwm_window_segment_release(w);
	return tex;
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
	xwm_contents_forget_window(w);
	release_pixmap(w);
	/* The Damage stays for the next map; emptying the server's region
	 * makes it report everything drawn from then on. */
	if (w->damage)
		xcb_damage_subtract(w->xwm->conn, w->damage, XCB_NONE, XCB_NONE);
	w->damaged = w->full_damage = w->needs_rename = false;
	xwm_sync_content_taken(w); /* its damage will never be shown */
	w->awaiting_content = w->composited = false;
	pixman_region32_clear(&w->damage_region);
	drop_texture(w);
	w->xwm->texture_bytes -= w->texture_bytes;
	w->texture_bytes = 0;
	xwm_schedule_repaint(w->xwm);
}

void xwm_composite_window_configured(struct xwm_window *w, bool resized)
{
	if (!w->node)
		return;
	render_node_set_position(w->node, w->x, w->y);
	if (w->viewable && xwm_window_composited(w) &&
	    (resized || w->pixmap_width != w->width + 2 * w->border ||
	     w->pixmap_height != w->height + 2 * w->border))
		w->needs_rename = true;
	xwm_schedule_repaint(w->xwm);
}

void xwm_composite_window_destroyed(struct xwm_window *w)
{
	xwm_contents_forget_window(w);
	release_pixmap(w);
	/* The server frees a destroyed window's Damage itself; for a window
	 * reparented away this one is still ours (an error otherwise, which
	 * is ignored). */
	if (w->damage)
		xcb_damage_destroy(w->xwm->conn, w->damage);
	w->damage = XCB_NONE;
	drop_texture(w);
	w->xwm->texture_bytes -= w->texture_bytes;
	w->texture_bytes = 0;
	if (w->node)
		render_node_destroy(w->node);
	w->node = NULL;
	pixman_region32_fini(&w->damage_region);
	pixman_region32_init(&w->damage_region);
	xwm_schedule_repaint(w->xwm);
}

void xwm_composite_handle_damage(struct xwm *xwm, xcb_damage_notify_event_t *ev)
{
	struct xwm_window *w = xwm_window_lookup(xwm, ev->drawable);
	xwm->last_time = ev->timestamp;
	if (!w || !w->damage || ev->damage != w->damage)
		return;
	/* Window-relative; the pixmap includes the border. */
	pixman_region32_union_rect(&w->damage_region, &w->damage_region,
	                           ev->area.x + w->border, ev->area.y + w->border,
	                           ev->area.width, ev->area.height);
	/* A client scattering tiny drawings must not make every later union
	 * slower: past the fetch limit only the bounding box is fetched
	 * anyway. */
	if (pixman_region32_n_rects(&w->damage_region) > XWM_MAX_MERGE_INPUT) {
		pixman_box32_t ext = *pixman_region32_extents(&w->damage_region);
		pixman_region32_reset(&w->damage_region, &ext);
	}
	w->damaged = true;
	if (w->awaiting_content) {
		w->awaiting_content = false;
		render_trace("first_damage", "\"window\":%u,\"x\":%d,\"y\":%d,\"width\":%u,"
		             "\"height\":%u", w->id, ev->area.x, ev->area.y, ev->area.width,
		             ev->area.height);
	}
	if (w->viewable)
		xwm_schedule_repaint(xwm);
}

/* ----------------------------------------------------------- contents */

bool xwm_composite_rename_pixmap(struct xwm_window *w)
{
	struct xwm *xwm = w->xwm;
	int pw = w->width + 2 * w->border, ph = w->height + 2 * w->border;

	release_pixmap(w);
	uint64_t bytes = (uint64_t)pw * (uint64_t)ph * 4u;
	uint64_t others = xwm->texture_bytes - w->texture_bytes;
	const char *over = bytes > xwm->window_texture_budget ? "per-window" :
	                   others + bytes > xwm->texture_budget ? "total" : NULL;
	if (over) {
		xwm_log("window 0x%x of %dx%d (%" PRIu64 " MiB) is over the %s texture budget "
		        "(%" PRIu64 " MiB, %" PRIu64 " MiB used by others): not composited",
		        w->id, pw, ph, bytes >> 20, over,
		        (over[0] == 'p' ? xwm->window_texture_budget : xwm->texture_budget) >> 20,
		        others >> 20);
		drop_texture(w);
		xwm->texture_bytes = others;
		w->texture_bytes = 0;
		render_node_set_visible(w->node, false);
		xwm_schedule_repaint(xwm);
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
	/* Zero-copy where the server exports the pixmap (dri3.c): a new
	 * texture per name, as the pixmap is a new buffer. */
	struct render_texture *imported = xwm_dri3_import(w, format);
	if (imported) {
		drop_texture(w);
		xwm->texture_bytes -= w->texture_bytes;
		w->texture = imported;
		w->texture_bytes = bytes;
		xwm->texture_bytes += bytes;
		render_node_set_visible(w->node, false);
		render_node_set_texture(w->node, w->texture);
		w->full_damage = true;
		return true;
	}
	if (!w->texture || render_texture_is_imported(w->texture) || render_texture_width(w->texture) != pw ||
	    render_texture_height(w->texture) != ph ||
	    render_texture_has_alpha(w->texture) != (format == RENDER_FORMAT_ARGB8888)) {
		drop_texture(w);
		xwm->texture_bytes -= w->texture_bytes;
		w->texture_bytes = 0;
		w->texture = create_shared_texture(w, format, pw, ph);
		if (!w->texture)
			w->texture = render_texture_create(xwm->renderer, format, pw, ph);
		if (!w->texture)
			return false;
		w->texture_bytes = bytes;
		xwm->texture_bytes += bytes;
		/* Shown once its first contents are fetched. */
		render_node_set_visible(w->node, false);
		render_node_set_texture(w->node, w->texture);
	}
	w->full_damage = true;
	return true;
}

void xwm_composite_trace_shown(struct xwm *xwm, uint64_t seq, uint64_t done_ns)
{
	for (struct xwm_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_window *w = xwm_container_of(l, struct xwm_window, link);
		if (!w->managed || !w->presented_update)
			continue;
		int width = w->pixmap_width - 2 * w->border, height = w->pixmap_height - 2 * w->border;
		bool first = !w->composited;
		if (!first && width == w->composited_width && height == w->composited_height)
			continue;
		w->composited = true;
		w->composited_width = width;
		w->composited_height = height;
		render_trace("composited",
		             "\"t_ns\":%" PRIu64 ",\"seq\":%" PRIu64 ",\"client_pid\":%u,"
		             "\"width\":%d,\"height\":%d,\"first\":%s,\"window\":%u",
		             done_ns, seq, w->pid, width, height, first ? "true" : "false", w->id);
	}
}
