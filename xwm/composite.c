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
 * DeltaRectangles needs 1 + (rectangles fetched) requests, 1 round trip,
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
 * Contents: EGL_KHR_image_pixmap would bind the named pixmap zero-copy,
 * but render/ has no EGLImage import yet and Xvfb (no DRI3) cannot offer
 * it anyway, so the path here is MIT-SHM: one ShmGetImage per damaged
 * rectangle of the named pixmap (nearby rectangles merged when their
 * bounding box wastes little), each into its own packed place in one
 * shared memory segment, and render_texture_upload_rect straight from
 * there: the server's copy into the segment is the only CPU copy. All
 * ShmGetImage requests of a frame, for every window, are sent before the
 * first reply is awaited: one round trip per frame. Without MIT-SHM 1.2
 * (fd passing) plain GetImage replies are uploaded from the reply buffer.
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
/* Windows larger than this many bytes of pixels are not composited. */
#define MAX_WINDOW_BYTES (256u << 20)
/* Above this many rectangles to fetch, one bounding box is cheaper. */
#define MAX_RECTS XWM_MAX_RECTS
/* Regions with more rectangles than this are fetched as their bounding
 * box without trying to merge (the merge below is quadratic or worse). */
#define MAX_MERGE_INPUT 16
/* Merging two rectangles into their bounding box is worth it while it
 * fetches at most this many pixels that are not damaged, plus a quarter
 * of the damaged ones: a separate ShmGetImage costs a request, a reply and
 * a glTexSubImage2D call, which outweigh copying a few KiB twice. */
#define MERGE_SLACK_PIXELS 1024
/* Fetches of a frame share one segment; past this size it is reused by
 * several batches (one round trip each) rather than grown further. */
#define BATCH_BYTES (64u << 20)

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
	xwm->egl = render_egl_create_x11(xwm->xlib_display, xwm->screen->root_visual);
	if (!xwm->egl)
		return -1;
	xwm->renderer = renderer_create(xwm->egl);
	if (!xwm->renderer)
		return -1;
	xwm->scene = render_scene_create(xwm->renderer, sw, sh, BACKGROUND_ARGB);
	if (!xwm->scene)
		return -1;
	if (xwm_output_start(xwm, sw, sh) < 0)
		return -1;
	render_frame_sched_init(&xwm->sched, xwm->options.refresh_mhz, render_now_ns());

	bool image_pixmap = render_egl_has_extension(xwm->egl, "EGL_KHR_image_pixmap");
	xwm->content_path = "shm-copy";
	xwm_log("content path: %s (EGL_KHR_image_pixmap %s%s); output path: %s, repaint "
	        "path: %s", xwm->content_path, image_pixmap ? "offered" : "absent",
	        image_pixmap ? ", zero-copy import not implemented in render/ yet" : "",
	        xwm->output_path, xwm->output_repaint);
	render_trace("xwm_paths",
	             "\"content\":\"%s\",\"output\":\"%s\",\"repaint\":\"%s\",\"egl\":\"%s\"",
	             xwm->content_path, xwm->output_path, xwm->output_repaint,
	             render_egl_describe(xwm->egl));
	return 0;
}

static void shm_release(struct xwm *xwm)
{
	if (xwm->shm_data) {
		xcb_shm_detach(xwm->conn, xwm->shm_seg);
		munmap(xwm->shm_data, xwm->shm_size);
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
	xwm_output_finish(xwm);
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

/* A memfd of at least size bytes shared with the server through MIT-SHM
 * 1.2, for it to write window pixels into. Only called between frames'
 * fetches, when no ShmGetImage into the old segment is in flight. */
static bool shm_reserve(struct xwm *xwm, size_t size)
{
	if (size <= xwm->shm_size)
		return true;
	shm_release(xwm);
	size = (size + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
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
	if (window_composited(w))
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
	if (w->damage && window_composited(w))
		w->awaiting_content = true;
}

void xwm_composite_window_mapped(struct xwm_window *w, bool has_content)
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
	/* The Damage stays for the next map; emptying the server's region
	 * makes it report everything drawn from then on. */
	if (w->damage)
		xcb_damage_subtract(w->xwm->conn, w->damage, XCB_NONE, XCB_NONE);
	w->damaged = w->full_damage = w->needs_rename = false;
	w->awaiting_content = w->composited = false;
	pixman_region32_clear(&w->damage_region);
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
	if (pixman_region32_n_rects(&w->damage_region) > MAX_MERGE_INPUT) {
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

static int64_t box_area(const pixman_box32_t *b)
{
	return (int64_t)(b->x2 - b->x1) * (b->y2 - b->y1);
}

static bool boxes_overlap(const pixman_box32_t *a, const pixman_box32_t *b)
{
	return a->x1 < b->x2 && b->x1 < a->x2 && a->y1 < b->y2 && b->y1 < a->y2;
}

static void box_extend(pixman_box32_t *a, const pixman_box32_t *b)
{
	a->x1 = a->x1 < b->x1 ? a->x1 : b->x1;
	a->y1 = a->y1 < b->y1 ? a->y1 : b->y1;
	a->x2 = a->x2 > b->x2 ? a->x2 : b->x2;
	a->y2 = a->y2 > b->y2 ? a->y2 : b->y2;
}

/* The bounding box of boxes i and j grown until it overlaps no other box
 * partly; *members gets the bit set of the boxes it covers, the return
 * value their damaged area. Boxes stay pairwise disjoint, so no pixel is
 * fetched twice. */
static int64_t merged_box(const pixman_box32_t *box, const int64_t *covered, int n,
                          int i, int j, pixman_box32_t *m, uint32_t *members)
{
	int64_t sum = covered[i] + covered[j];
	bool grew = true;

	*m = box[i];
	box_extend(m, &box[j]);
	*members = 1u << i | 1u << j;
	while (grew) {
		grew = false;
		for (int k = 0; k < n; k++)
			if (!(*members & 1u << k) && boxes_overlap(m, &box[k])) {
				box_extend(m, &box[k]);
				*members |= 1u << k;
				sum += covered[k];
				grew = true;
			}
	}
	return sum;
}

/* The rectangles to fetch for region (pixmap coordinates): its own boxes,
 * pairs merged greedily (least waste first) while their bounding box
 * wastes little, and one bounding box if that still leaves too many.
 * pixman splits an L-shaped damage (a cursor and its underline) into
 * bands; this puts them back together. Returns how many, <= MAX_RECTS. */
int xwm_plan_rects(const pixman_region32_t *region, pixman_box32_t *out)
{
	pixman_box32_t box[MAX_MERGE_INPUT];
	int64_t covered[MAX_MERGE_INPUT];
	int n;
	const pixman_box32_t *rects = pixman_region32_rectangles(region, &n);

	if (n == 0)
		return 0;
	if (n > MAX_MERGE_INPUT) {
		out[0] = *pixman_region32_extents(region);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		box[i] = rects[i];
		covered[i] = box_area(&rects[i]);
	}
	for (;;) {
		int64_t best_waste = -1, best_sum = 0;
		pixman_box32_t best_box = { 0, 0, 0, 0 };
		uint32_t best_members = 0;

		for (int i = 0; i < n; i++)
			for (int j = i + 1; j < n; j++) {
				pixman_box32_t m;
				uint32_t members;
				int64_t sum = merged_box(box, covered, n, i, j, &m, &members);
				int64_t waste = box_area(&m) - sum;
				if (waste > MERGE_SLACK_PIXELS + sum / 4)
					continue;
				if (best_waste < 0 || waste < best_waste) {
					best_waste = waste;
					best_sum = sum;
					best_box = m;
					best_members = members;
				}
			}
		if (best_waste < 0)
			break;
		/* Replace the members by the merged box, keeping the rest. */
		int kept = 0;
		for (int k = 0; k < n; k++)
			if (!(best_members & 1u << k)) {
				box[kept] = box[k];
				covered[kept] = covered[k];
				kept++;
			}
		box[kept] = best_box;
		covered[kept] = best_sum;
		n = kept + 1;
	}
	if (n > MAX_RECTS) {
		out[0] = *pixman_region32_extents(region);
		return 1;
	}
	memcpy(out, box, (size_t)n * sizeof(*box));
	return n;
}

/* One rectangle of one window to fetch in the current batch. */
struct fetch {
	struct xwm_window *w;
	pixman_box32_t box;     /* pixmap coordinates */
	size_t offset;          /* of its packed rows in the segment */
	size_t window;          /* index in batch.windows */
	unsigned int sequence;  /* of its GetImage request */
};

struct batch_window {
	struct xwm_window *w;
	bool ok;                /* every fetch of it came back and uploaded */
};

/* The windows and rectangles of one frame's batch. */
struct batch {
	struct fetch *fetch;
	size_t count, cap;
	size_t bytes;           /* segment space they need */
	struct batch_window *windows;
	size_t nwindows, wcap;
	/* For the debug line that reports what a frame cost. */
	unsigned int requests, round_trips;
	uint64_t fetched_bytes;
};

static bool batch_grow(void **array, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap * 2 : 16;
	while (n < need)
		n *= 2;
	void *p = realloc(*array, n * size);
	if (!p)
		return false;
	*array = p;
	*cap = n;
	return true;
}

/* Sends every GetImage of the batch, then collects the replies in order
 * and uploads each rectangle where it landed: one round trip. */
static void batch_run(struct xwm *xwm, struct batch *b)
{
	xcb_connection_t *c = xwm->conn;
	bool shm = xwm->has_shm_fd && b->bytes > 0 && shm_reserve(xwm, b->bytes);

	if (b->count > 0 && xwm->has_shm_fd && !shm)
		xwm_log("no shared memory for window contents: using GetImage replies");
	for (size_t i = 0; i < b->count; i++) {
		struct fetch *f = &b->fetch[i];
		int16_t x = (int16_t)f->box.x1, y = (int16_t)f->box.y1;
		uint16_t bw = (uint16_t)(f->box.x2 - f->box.x1), bh = (uint16_t)(f->box.y2 - f->box.y1);
		if (shm)
			f->sequence = xcb_shm_get_image(c, f->w->pixmap, x, y, bw, bh, ~0u,
			                                XCB_IMAGE_FORMAT_Z_PIXMAP, xwm->shm_seg,
			                                (uint32_t)f->offset).sequence;
		else
			f->sequence = xcb_get_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, f->w->pixmap,
			                            x, y, bw, bh, ~0u).sequence;
		b->requests++;
	}
	if (b->count > 0)
		b->round_trips++;
	for (size_t i = 0; i < b->count; i++) {
		struct fetch *f = &b->fetch[i];
		int bw = f->box.x2 - f->box.x1, bh = f->box.y2 - f->box.y1;
		size_t bytes = (size_t)bw * (size_t)bh * 4;
		const void *pixels = NULL;
		void *reply;
		bool ok = false;

		/* A NULL reply means the pixmap is gone: the window is going
		 * away and its events follow. */
		if (shm) {
			xcb_shm_get_image_cookie_t ck = { f->sequence };
			xcb_shm_get_image_reply_t *r = xcb_shm_get_image_reply(c, ck, NULL);
			if (r)
				xwm_note_processed(xwm, f->sequence);
			if (r && r->size >= bytes)
				pixels = (const char *)xwm->shm_data + f->offset;
			reply = r;
		} else {
			xcb_get_image_cookie_t ck = { f->sequence };
			xcb_get_image_reply_t *r = xcb_get_image_reply(c, ck, NULL);
			if (r)
				xwm_note_processed(xwm, f->sequence);
			if (r && (size_t)xcb_get_image_data_length(r) >= bytes)
				pixels = xcb_get_image_data(r);
			reply = r;
		}
		if (pixels && f->w->texture &&
		    render_texture_upload_rect(f->w->texture, pixels, bw * 4, &f->box) == 0) {
			pixman_region32_t region;
			pixman_region32_init_rect(&region, f->box.x1, f->box.y1, (unsigned)bw,
			                          (unsigned)bh);
			render_node_damage(f->w->node, &region);
			pixman_region32_fini(&region);
			b->fetched_bytes += bytes;
			ok = true;
		}
		free(reply);
		if (!ok)
			b->windows[f->window].ok = false;
	}
	/* Windows are queued only with at least one rectangle. */
	for (size_t k = 0; k < b->nwindows; k++)
		if (b->windows[k].ok) {
			render_node_set_visible(b->windows[k].w->node, true);
			b->windows[k].w->presented_update = true;
		}
	b->count = b->nwindows = 0;
	b->bytes = 0;
}

/* Takes w's damage (re-arming the server's reports) and queues its
 * rectangles in the batch, running the batch first if w would push it
 * past BATCH_BYTES. */
static bool queue_window(struct xwm *xwm, struct batch *b, struct xwm_window *w)
{
	pixman_box32_t boxes[MAX_RECTS];
	pixman_region32_t region;
	size_t bytes = 0;
	int n;

	if (w->damaged) {
		xcb_damage_subtract(xwm->conn, w->damage, XCB_NONE, XCB_NONE);
		b->requests++;
		w->damaged = false;
	}
	pixman_region32_init_rect(&region, 0, 0, (unsigned)w->pixmap_width,
	                          (unsigned)w->pixmap_height);
	if (!w->full_damage)
		pixman_region32_intersect(&region, &region, &w->damage_region);
	pixman_region32_clear(&w->damage_region);
	n = xwm_plan_rects(&region, boxes);
	xwm_debug(xwm, "0x%x: fetch %d rectangle(s) for %d damaged%s", w->id, n,
	          pixman_region32_n_rects(&region), w->full_damage ? " (all)" : "");
	pixman_region32_fini(&region);
	w->full_damage = false;
	if (n == 0)
		return true;

	for (int i = 0; i < n; i++)
		bytes += (size_t)box_area(&boxes[i]) * 4;
	if (b->count > 0 && b->bytes + bytes > BATCH_BYTES)
		batch_run(xwm, b);
	if (!batch_grow((void **)&b->fetch, &b->cap, b->count + (size_t)n, sizeof(*b->fetch)) ||
	    !batch_grow((void **)&b->windows, &b->wcap, b->nwindows + 1, sizeof(*b->windows)))
		return false;
	for (int i = 0; i < n; i++) {
		b->fetch[b->count++] = (struct fetch){
			.w = w, .box = boxes[i], .offset = b->bytes, .window = b->nwindows,
		};
		/* 64-byte aligned starts: whole cache lines for the upload. */
		b->bytes += ((size_t)box_area(&boxes[i]) * 4 + 63) & ~(size_t)63;
	}
	b->windows[b->nwindows++] = (struct batch_window){ .w = w, .ok = true };
	return true;
}

void xwm_composite_update_contents(struct xwm *xwm)
{
	struct batch b = { 0 };
	uint64_t t0 = xwm->debug ? render_now_ns() : 0;

	for (struct xwm_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_window *w = xwm_container_of(l, struct xwm_window, link);
		if (!w->viewable || !window_composited(w) || !w->damage || w->awaiting_content)
			continue;
		if (!(w->damaged || w->full_damage || w->needs_rename) ||
		    !xwm_sync_content_ready(w))
			continue;
		w->presented_update = false;
		if (w->needs_rename) {
			w->needs_rename = false;
			if (!rename_pixmap(w))
				continue;
		}
		if (!w->pixmap || !w->texture)
			continue;
		if (!queue_window(xwm, &b, w)) {
			w->full_damage = true; /* out of memory: try again next frame */
			break;
		}
	}
	if (b.count > 0)
		batch_run(xwm, &b);
	if (b.requests > 0)
		xwm_debug(xwm, "contents: %u request(s), %u round trip(s), %llu bytes in %.3f ms",
		          b.requests, b.round_trips, (unsigned long long)b.fetched_bytes,
		          (double)(render_now_ns() - t0) / 1e6);
	free(b.fetch);
	free(b.windows);
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
