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
 * windows' textures without the event loop waiting for the server, and
 * content.c, which names the pixmaps and makes the textures.
 *
 * The window model (model.h) knows nothing of this: it tells its host
 * (xwm_composite_host, at the end) of each window's life, and the host
 * hangs each window's content part on it.
 */
#include <stdio.h>
#include <stdlib.h>

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

static bool check_extension(struct xwm_cm *cm, xcb_extension_t *ext, const char *name,
                            uint8_t *first_event)
{
	const xcb_query_extension_reply_t *r = xcb_get_extension_data(cm->wm->conn, ext);
	if (!r || !r->present) {
		xwm_log("the X server lacks the %s extension", name);
		return false;
	}
	if (first_event)
		*first_event = r->first_event;
	return true;
}

static int claim_cm_selection(struct xwm_cm *cm)
{
	struct xwm *xwm = cm->wm;
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
	xcb_set_selection_owner(c, xwm->check_window, xwm->atoms._NET_WM_CM_S0,
	                        xwm->claim_time);
	return 0;
}

/* has_shm, has_sync: whether the server has them. A request of an
 * extension the server lacks makes xcb shut the connection down, so those
 * are asked only where present. */
static bool query_versions(struct xwm_cm *cm, bool has_shm, bool has_sync)
{
	xcb_connection_t *c = cm->wm->conn;
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
	cm->has_shm_fd = sr && (sr->major_version > 1 ||
	                        (sr->major_version == 1 && sr->minor_version >= 2));
	if (!yr)
		cm->sync_event = 0; /* no frame timing without SYNC */
	free(cr);
	free(dr);
	free(fr);
	free(sr);
	free(yr);
	return ok;
}

int xwm_composite_start(struct xwm_cm *cm)
{
	struct xwm *xwm = cm->wm;
	xcb_connection_t *c = xwm->conn;

	if (!check_extension(cm, &xcb_composite_id, "Composite", NULL) ||
	    !check_extension(cm, &xcb_damage_id, "DAMAGE", &cm->damage_event) ||
	    !check_extension(cm, &xcb_xfixes_id, "XFIXES", &cm->xfixes_event) ||
	    !check_extension(cm, &xcb_shape_id, "SHAPE", NULL))
		return -1;
	bool has_shm = check_extension(cm, &xcb_shm_id, "MIT-SHM", NULL);
	if (!has_shm)
		xwm_log("no MIT-SHM: window contents will travel in GetImage replies");
	bool has_sync = check_extension(cm, &xcb_sync_id, "SYNC", &cm->sync_event);
	if (!has_sync)
		cm->sync_event = 0;
	if (!query_versions(cm, has_shm, has_sync))
		return -1;
	if (claim_cm_selection(cm) < 0)
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
	if (cm->options.xrender) {
		if (!xwm_xrender_init(cm))
			return -1;
		xwm_log("rendering with XRender in the X server (no EGL)");
	} else if (cm->options.pixman) {
		xwm_log("rendering with pixman %s (no EGL)", pixman_version_string());
		cm->renderer = renderer_create_pixman();
	} else {
		/* The overlay window has the root's visual: EGL's config must
		 * match it (output.c draws into the overlay on egl-swap). */
		cm->egl = render_egl_create(RENDER_EGL_X11, cm->xlib_display,
		                            xwm->screen->root_visual);
		if (!cm->egl)
			return -1;
		cm->renderer = renderer_create(cm->egl);
	}
	if (!cm->renderer)
		return -1;
	cm->scene = render_scene_create(cm->renderer, sw, sh, BACKGROUND_ARGB);
	if (!cm->scene)
		return -1;
	if (xwm_output_start(cm, sw, sh) < 0)
		return -1;
	if (xwm_repaint_start(cm) < 0)
		return -1;
	cm->texture_budget = (uint64_t)(cm->options.texture_budget_mib ?
	                                cm->options.texture_budget_mib :
	                                DEFAULT_TOTAL_BUDGET_MIB) << 20;
	cm->window_texture_budget = (uint64_t)(cm->options.window_texture_budget_mib ?
	                                       cm->options.window_texture_budget_mib :
	                                       DEFAULT_WINDOW_BUDGET_MIB) << 20;

	char why[160];
	if (cm->xrender) {
		cm->content_path = "in-server";
		cm->dri3_minor = -1;
		cm->dri3_why = "window pixmaps are drawn from where they are (--renderer xrender)";
		snprintf(why, sizeof(why), "a RENDER Picture on each named pixmap");
	} else if (xwm_dri3_init(cm, has_sync && cm->sync_event != 0)) {
		cm->content_path = "zero-copy";
		snprintf(why, sizeof(why), "DRI3 1.%d pixmaps as dmabufs into EGLImages; "
		         "MIT-SHM for a window whose import fails", cm->dri3_minor);
	} else {
		cm->content_path = "shm-copy";
		snprintf(why, sizeof(why), "MIT-SHM ShmGetImage; no zero-copy: %s", cm->dri3_why);
	}
	xwm_log("content path: %s (%s); output path: %s, repaint path: %s", cm->content_path,
	        why, xwm_output_path(cm), xwm_output_repaint_path(cm));
	render_trace(cm->trace, "xwm_paths",
	             "\"content\":\"%s\",\"output\":\"%s\",\"repaint\":\"%s\",\"egl\":\"%s\","
	             "\"renderer\":\"%s\"",
	             cm->content_path, xwm_output_path(cm), xwm_output_repaint_path(cm),
	             cm->egl ? render_egl_describe(cm->egl) : "none",
	             renderer_engine_name(cm->renderer));
	return 0;
}

void xwm_composite_finish(struct xwm_cm *cm)
{
	struct xwm *xwm = cm->wm;

	xwm_contents_finish(cm);
	xwm_dri3_finish(cm);
	if (cm->scene)
		render_scene_destroy(cm->scene);
	cm->scene = NULL;
	xwm_output_finish(cm);
	render_repaint_loop_fini(&cm->repaint);
	if (cm->renderer)
		renderer_destroy(cm->renderer);
	cm->renderer = NULL;
	xwm_xrender_finish(cm);
	if (cm->egl)
		render_egl_destroy(cm->egl);
	cm->egl = NULL;
	if (xwm->overlay)
		xcb_composite_release_overlay_window(xwm->conn, xwm->root);
	xwm->overlay = XCB_NONE;
}


/* ------------------------------------------------------------ windows */

static bool attach(void *data, struct xwm_window *w)
{
	struct xwm_content *c = calloc(1, sizeof(*c));
	struct xwm_sync *sync = xwm_sync_window_new();

	if (!c || !sync) {
		xwm_log("out of memory for window 0x%x", w->id);
		free(c);
		free(sync);
		return false;
	}
	c->window = w;
	c->cm = data;
	c->sync = sync;
	/* Finished by destroyed, whatever happens in between (an empty
	 * region owns no memory). */
	pixman_region32_init(&c->damage_region);
	w->content = c;
	return true;
}

static void create_damage(struct xwm_window *w)
{
	struct xwm_content *c = w->content;

	if (c->damage)
		return;
	c->damage = xcb_generate_id(w->xwm->conn);
	xcb_damage_create(w->xwm->conn, c->damage, w->id,
	                  XCB_DAMAGE_REPORT_LEVEL_DELTA_RECTANGLES);
}

static void restacked(void *data, struct xwm_window *w)
{
	(void)data;
	if (!w->content->node)
		return;
	/* Just above the nearest lower window that has a node. */
	for (struct duet_list *l = w->link.prev; l != &w->xwm->stack; l = l->prev) {
		struct xwm_window *below = duet_container_of(l, struct xwm_window, link);
		if (below->content->node) {
			render_node_place_above(w->content->node, below->content->node);
			return;
		}
	}
	render_node_lower_to_bottom(w->content->node);
}

static void created(void *data, struct xwm_window *w)
{
	struct xwm_cm *cm = data;
	struct xwm_content *c = w->content;

	if (c->node || w->input_only || !cm->scene)
		return;
	c->node = render_node_create(cm->scene);
	if (!c->node)
		return;
	render_node_set_position(c->node, w->x, w->y);
	restacked(cm, w);
	/* Damage from creation on, so that it reports all drawing after the
	 * map: our MapWindow of a managed window is sent after this, so even
	 * a client that draws at once on its first Expose is seen. */
	if (xwm_window_composited(w))
		create_damage(w);
}

/* A window we map holds nothing its client drew yet (the server just
 * allocated its pixmap): showing it would put the parent's pixels or
 * garbage on screen and claim a frame the client has not drawn. It waits
 * for the first damage after our MapWindow, which is the client's drawing:
 * the map paints nothing into a window without background (duet's
 * toolkit, GTK; one with a background pixel is shown with it), and the
 * model places and raises the window before mapping it, as moving a
 * mapped one damages it. The window's Damage exists since its
 * CreateNotify, and its region was emptied at its last unmap, so nothing
 * drawn after the map goes unreported, however fast the client draws. */
static void mapping(void *data, struct xwm_window *w)
{
	(void)data;
	if (w->content->damage && xwm_window_composited(w))
		w->content->awaiting_content = true;
}

static void mapped(void *data, struct xwm_window *w, bool has_content)
{
	struct xwm_content *c = w->content;

	if (!c->node)
		return;
	if (!xwm_window_composited(w)) {
		if (!c->unsupported_logged)
			xwm_log("window 0x%x has depth %u: not composited", w->id, w->depth);
		c->unsupported_logged = true;
		return;
	}
	/* Only windows we mapped ourselves wait (mapping() above); an
	 * override-redirect window maps itself, maybe before our
	 * DamageCreate of its CreateNotify reached the server, so its first
	 * drawing may have gone unreported: it is fetched at once. */
	bool wait = !has_content && c->awaiting_content && c->damage;
	create_damage(w);
	c->needs_rename = true;
	c->full_damage = true;
	c->composited = false;
	c->awaiting_content = wait;
	render_trace(c->cm->trace, "window_mapped", "\"window\":%u,\"awaiting_content\":%s", w->id,
	             wait ? "true" : "false");
	if (!wait)
		xwm_schedule_repaint(data);
}

static void unmapped(void *data, struct xwm_window *w)
{
	struct xwm_content *c = w->content;

	if (!c->node)
		return;
	render_node_set_visible(c->node, false);
	xwm_contents_forget_window(w);
	xwm_content_release_pixmap(w);
	/* The Damage stays for the next map; emptying the server's region
	 * makes it report everything drawn from then on. */
	if (c->damage)
		xcb_damage_subtract(w->xwm->conn, c->damage, XCB_NONE, XCB_NONE);
	c->damaged = c->full_damage = c->needs_rename = false;
	xwm_sync_content_taken(w); /* its damage will never be shown */
	c->awaiting_content = c->composited = false;
	pixman_region32_clear(&c->damage_region);
	xwm_content_drop_texture(w);
	xwm_schedule_repaint(data);
}

static void configured(void *data, struct xwm_window *w, bool resized)
{
	struct xwm_content *c = w->content;

	if (!c->node)
		return;
	render_node_set_position(c->node, w->x, w->y);
	if (w->viewable && xwm_window_composited(w) &&
	    (resized || c->pixmap_width != w->width + 2 * w->border ||
	     c->pixmap_height != w->height + 2 * w->border))
		c->needs_rename = true;
	xwm_schedule_repaint(data);
}

static void destroyed(void *data, struct xwm_window *w)
{
	struct xwm_content *c = w->content;

	xwm_sync_window_destroyed(w);
	xwm_contents_forget_window(w);
	xwm_content_release_pixmap(w);
	/* The server frees a destroyed window's Damage itself; for a window
	 * reparented away this one is still ours (an error otherwise, which
	 * is ignored). */
	if (c->damage)
		xcb_damage_destroy(w->xwm->conn, c->damage);
	xwm_content_drop_texture(w);
	if (c->node)
		render_node_destroy(c->node);
	pixman_region32_fini(&c->damage_region);
	free(c);
	w->content = NULL;
	xwm_schedule_repaint(data);
}

static void handle_damage(struct xwm_cm *cm, xcb_damage_notify_event_t *ev)
{
	struct xwm_window *w = xwm_window_lookup(cm->wm, ev->drawable);
	struct xwm_content *c = w ? w->content : NULL;

	cm->wm->last_time = ev->timestamp;
	if (!c || !c->damage || ev->damage != c->damage)
		return;
	/* Window-relative; the pixmap includes the border. */
	pixman_region32_union_rect(&c->damage_region, &c->damage_region,
	                           ev->area.x + w->border, ev->area.y + w->border,
	                           ev->area.width, ev->area.height);
	/* A client scattering tiny drawings must not make every later union
	 * slower: past the fetch limit only the bounding box is fetched
	 * anyway. */
	if (pixman_region32_n_rects(&c->damage_region) > XWM_MAX_MERGE_INPUT) {
		pixman_box32_t ext = *pixman_region32_extents(&c->damage_region);
		pixman_region32_reset(&c->damage_region, &ext);
	}
	c->damaged = true;
	if (c->awaiting_content) {
		c->awaiting_content = false;
		render_trace(cm->trace, "first_damage", "\"window\":%u,\"x\":%d,\"y\":%d,\"width\":%u,"
		             "\"height\":%u", w->id, ev->area.x, ev->area.y, ev->area.width,
		             ev->area.height);
	}
	if (w->viewable)
		xwm_schedule_repaint(cm);
}

/* ------------------------------------------------------ the model's host */

/* Extension events have codes the server chose at run time. */
static bool event(void *data, xcb_generic_event_t *ev)
{
	struct xwm_cm *cm = data;
	uint8_t type = ev->response_type & 0x7f;

	if (cm->damage_event && type == cm->damage_event + XCB_DAMAGE_NOTIFY) {
		handle_damage(cm, (xcb_damage_notify_event_t *)ev);
		return true;
	}
	if (cm->sync_event && type == cm->sync_event + XCB_SYNC_ALARM_NOTIFY) {
		xwm_sync_handle_alarm(cm, (xcb_sync_alarm_notify_event_t *)ev);
		return true;
	}
	return false;
}

static void resizing(void *data, struct xwm_window *w)
{
	(void)data;
	xwm_sync_request(w);
}

static void counters_changed(void *data, struct xwm_window *w)
{
	(void)data;
	xwm_sync_window_counters_changed(w);
}

static void processed(void *data, uint32_t sequence)
{
	xwm_note_processed(data, sequence);
}

static int screenshot(void *data, const char *name)
{
	return xwm_screenshot_to_dir(data, name);
}

const struct xwm_host xwm_composite_host = {
	.attach = attach,
	.created = created,
	.mapping = mapping,
	.mapped = mapped,
	.unmapped = unmapped,
	.configured = configured,
	.restacked = restacked,
	.destroyed = destroyed,
	.resizing = resizing,
	.counters_changed = counters_changed,
	.event = event,
	.processed = processed,
	.screenshot = screenshot,
};
