/* Window contents: the damaged rectangles of every composited window,
 * copied from its named pixmap into its texture, without the event loop
 * ever waiting for the X server.
 *
 * A window whose pixmap was imported zero-copy (dri3.c: DRI3 on Xorg
 * with glamor) fetches nothing: its damage becomes its node's damage, and
 * the frame waits only for the fence and round trip that make the
 * server's drawing complete (see dri3.c). With --renderer xrender
 * (xrender.c) no window fetches anything either, and the frame waits for
 * nothing: the server draws it, after what it reported. Everywhere else (Xvfb has no
 * DRI3) the path is MIT-SHM: one ShmGetImage per damaged rectangle of the
 * named pixmap (nearby rectangles merged when their bounding box wastes
 * little), each into its own packed place in one shared memory segment,
 * and render_texture_upload_rect straight from there: the server's copy
 * into the segment and GL's upload are the CPU copies. Without MIT-SHM 1.2
 * (fd passing) plain GetImage replies are uploaded from the reply buffer.
 *
 * With the pixman engine a window's texture is its own pixmap-sized
 * segment (content.c: render_texture_create_wrapped), sampled in place
 * by the composite. A damaged rectangle is then fetched as the whole rows
 * it spans (ShmGetImage writes packed rows, which are the segment's own
 * rows only when they are full width), straight to those rows of the
 * window's segment: the server's copy is the only one. A rectangle much
 * narrower than its rows (a tall scrollbar) is fetched alone into the
 * batch segment as above and copied into place by duet-xwm.
 *
 * A frame's repaint (repaint.c) is split at the round trip: xwm_contents_fetch
 * takes every window's damage (DamageSubtract) and sends all the GetImage
 * requests of the frame, for every window, at once; repaint.c then goes back
 * to its loop, which handles events and sleeps in poll() as usual, and
 * xwm_contents_ready checks with xcb_poll_for_reply (no blocking) whether
 * the replies are in: they come in request order, so the last one
 * arriving means all did. Only then are the rectangles uploaded and the
 * frame painted. The server answers a frame's fetch in one go, so the
 * frame costs the same requests and replies as a blocking fetch, but
 * duet-xwm never sits in xcb_wait_for_reply on its repaint path: events
 * that arrive meanwhile (a client's MapRequest, its next DamageNotify) are
 * handled at once. One segment suffices: the next frame's fetch is sent
 * only after this frame's replies came, so the server never writes where
 * an upload reads. The same order keeps a window's own segment still while
 * it is composited: a frame is painted (repaint_finish, in one go) before
 * the next fetch is sent, and no paint runs while a fetch is in flight
 * (xwm_repaint_now finishes it first).
 *
 * A frame whose contents need no fetch but whose output PutImage would
 * reuse a segment the server may still be reading (output.c) sends a
 * GetInputFocus instead and waits for its reply the same way, so the
 * present never blocks either.
 *
 * Windows change while a fetch is in flight: one that is unmapped or
 * destroyed is forgotten (xwm_contents_forget_window) and its rectangles
 * are dropped when they arrive; one that is resized keeps its old pixmap
 * and texture until the next frame renames them, so what arrives still
 * fits where it is uploaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xcb/shm.h>
#include <xcb/xcbext.h> /* xcb_poll_for_reply, xcb_wait_for_reply */

#include "xwm.h"

/* A frame's fetches share one segment; windows that would push it past
 * this size wait for the next frame (a window larger than it alone gets a
 * segment of its size). */
#define BATCH_BYTES (64u << 20)

/* A damaged rectangle is fetched as the whole rows it spans, straight into
 * the window's own segment (in place), while those rows hold at most
 * twice its pixels plus this many: the server then copies a few more
 * pixels and duet-xwm none. A narrower one (a tall scrollbar) is fetched
 * alone into the batch segment and copied into place. */
#define BAND_SLACK_PIXELS 16384

/* One rectangle of one window in the frame's fetch. */
struct fetch {
	pixman_box32_t box;     /* pixmap coordinates: the damage it brings */
	pixman_box32_t get;     /* what is fetched: box, or its rows (in_place) */
	bool in_place;          /* into the window's segment (its content's seg) */
	size_t offset;          /* of its packed rows in the segment */
	size_t window;          /* index in xwm_contents.windows */
	unsigned int sequence;  /* of its GetImage request */
	void *reply;            /* once arrived; NULL then = an error */
};

struct fetch_window {
	struct xwm_window *w;   /* NULL: went away while the fetch was in flight */
	bool ok;                /* every rectangle of it came back and uploaded */
};

/* The frame's fetch (at most one at a time); the arrays are kept from
 * frame to frame. */
struct xwm_contents {
	struct fetch *fetch;
	size_t count, cap;
	size_t arrived;         /* replies in, a prefix of fetch[] */
	size_t bytes;           /* segment space they need */
	struct fetch_window *windows;
	size_t nwindows, wcap;
	bool shm;               /* into shm_data, else GetImage replies */
	size_t zero_copy;       /* windows of the batch sampled in place (dri3.c) */
	bool in_flight;
	/* The output's GetInputFocus when nothing is fetched (see above). */
	bool marker, marker_arrived;
	unsigned int marker_sequence;
	/* For the debug line that reports what a frame cost. */
	unsigned int requests;
	uint64_t fetched_bytes, t0;
	/* Bytes the last frame's fetch brought straight into windows'
	 * segments, and those duet-xwm copied into a texture. */
	uint64_t in_place, copied;
	/* The MIT-SHM segment the server writes the batch into. */
	uint32_t shm_seg;
	void *shm_data;
	size_t shm_size;
};

/* --------------------------------------------------------- the segment */

static void shm_release(struct xwm_cm *cm, struct xwm_contents *b)
{
	if (b->shm_data) {
		xcb_shm_detach(cm->wm->conn, b->shm_seg);
		munmap(b->shm_data, b->shm_size);
	}
	b->shm_data = NULL;
	b->shm_size = 0;
}

/* A memfd of at least size bytes shared with the server through MIT-SHM
 * 1.2, for it to write window pixels into. Only called while no fetch is
 * in flight, so no ShmGetImage into the old segment is pending. */
static bool shm_reserve(struct xwm_cm *cm, struct xwm_contents *b, size_t size)
{
	if (size <= b->shm_size)
		return true;
	shm_release(cm, b);
	size = (size + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
	if (!xwm_segment_new(cm, size, "duet-xwm-contents", &b->shm_seg, &b->shm_data))
		return false;
	b->shm_size = size;
	return true;
}

/* ---------------------------------------------------------- the batch */

static bool grow_array(void **array, size_t *cap, size_t need, size_t size)
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

static struct xwm_contents *contents(struct xwm_cm *cm)
{
	if (!cm->contents)
		cm->contents = calloc(1, sizeof(*cm->contents));
	return cm->contents;
}

/* What of c's pixmap is damaged (initialises region). */
static void damaged_region(const struct xwm_content *c, pixman_region32_t *region)
{
	pixman_region32_init_rect(region, 0, 0, (unsigned)c->pixmap_width,
	                          (unsigned)c->pixmap_height);
	if (!c->full_damage)
		pixman_region32_intersect(region, region, &c->damage_region);
}

/* Whether box (of a window with a segment) is fetched as its rows. */
static bool in_place(const struct xwm_window *w, const pixman_box32_t *box)
{
	const struct xwm_content *c = w->content;

	return c->seg_data &&
	       (int64_t)c->pixmap_width * (box->y2 - box->y1) <= 2 * xwm_box_area(box) + BAND_SLACK_PIXELS;
}

/* The rectangles to fetch of w and the batch segment bytes of those not
 * fetched in place (64-byte aligned starts: whole cache lines for the
 * upload). */
static int plan_window(struct xwm_window *w, pixman_box32_t *boxes, size_t *bytes)
{
	struct xwm_content *c = w->content;
	pixman_region32_t region;

	damaged_region(c, &region);
	int n = xwm_plan_rects(&region, boxes);
	xwm_debug(w->xwm, "0x%x: fetch %d rectangle(s) for %d damaged%s", w->id, n,
	          pixman_region32_n_rects(&region), c->full_damage ? " (all)" : "");
	pixman_region32_fini(&region);
	*bytes = 0;
	for (int i = 0; i < n; i++)
		if (!in_place(w, &boxes[i]))
			*bytes += ((size_t)xwm_box_area(&boxes[i]) * 4 + 63) & ~(size_t)63;
	return n;
}

/* Takes w's damage: the server reports what is drawn from now on anew,
 * and a finished frame that waited for it is answered after this one. */
static void take_damage(struct xwm_cm *cm, struct xwm_contents *b, struct xwm_window *w)
{
	struct xwm_content *c = w->content;

	if (c->damaged) {
		xcb_damage_subtract(cm->wm->conn, c->damage, XCB_NONE, XCB_NONE);
		b->requests++;
		c->damaged = false;
		xwm_sync_content_taken(w);
	}
}

/* A zero-copy window: its damage goes to its node now (painted once the
 * frame's round trip is in); nothing is fetched. */
static bool queue_imported(struct xwm_cm *cm, struct xwm_contents *b, struct xwm_window *w)
{
	struct xwm_content *c = w->content;
	pixman_region32_t region;

	if (!grow_array((void **)&b->windows, &b->wcap, b->nwindows + 1, sizeof(*b->windows)))
		return false;
	take_damage(cm, b, w);
	damaged_region(c, &region);
	render_node_damage(c->node, &region);
	pixman_region32_fini(&region);
	pixman_region32_clear(&c->damage_region);
	c->full_damage = false;
	b->windows[b->nwindows++] = (struct fetch_window){ .w = w, .ok = true };
	/* A dmabuf waits for the server's GPU (dri3.c); a Picture is drawn
	 * by the server itself, after what it reported (xrender.c). */
	if (!cm->xrender)
		b->zero_copy++;
	return true;
}

/* Takes w's damage (re-arming the server's reports) and queues its
 * rectangles. Returns false when w must wait for the next frame (the
 * batch is full, or out of memory); its damage is then left as it was. */
static bool queue_window(struct xwm_cm *cm, struct xwm_contents *b, struct xwm_window *w)
{
	struct xwm_content *c = w->content;
	pixman_box32_t boxes[XWM_MAX_RECTS];
	size_t bytes;
	int n = plan_window(w, boxes, &bytes);

	if (n > 0 && b->count > 0 && b->bytes + bytes > BATCH_BYTES)
		return false;
	if (!grow_array((void **)&b->fetch, &b->cap, b->count + (size_t)n, sizeof(*b->fetch)) ||
	    !grow_array((void **)&b->windows, &b->wcap, b->nwindows + 1, sizeof(*b->windows)))
		return false;
	take_damage(cm, b, w);
	pixman_region32_clear(&c->damage_region);
	c->full_damage = false;
	if (n == 0)
		return true;
	for (int i = 0; i < n; i++) {
		struct fetch *f = &b->fetch[b->count++];
		*f = (struct fetch){ .box = boxes[i], .get = boxes[i], .window = b->nwindows };
		if (in_place(w, &boxes[i])) {
			f->in_place = true;
			f->get.x1 = 0;
			f->get.x2 = c->pixmap_width;
			f->offset = (size_t)f->get.y1 * (size_t)c->pixmap_width * 4;
		} else {
			f->offset = b->bytes;
			b->bytes += ((size_t)xwm_box_area(&boxes[i]) * 4 + 63) & ~(size_t)63;
		}
	}
	b->windows[b->nwindows++] = (struct fetch_window){ .w = w, .ok = true };
	return true;
}

static void send_requests(struct xwm_cm *cm, struct xwm_contents *b)
{
	xcb_connection_t *c = cm->wm->conn;

	b->shm = cm->has_shm_fd && shm_reserve(cm, b, b->bytes);
	if (cm->has_shm_fd && !b->shm)
		xwm_log("no shared memory for window contents: using GetImage replies");
	for (size_t i = 0; i < b->count; i++) {
		struct fetch *f = &b->fetch[i];
		const struct xwm_content *wc = b->windows[f->window].w->content;
		int16_t x = (int16_t)f->get.x1, y = (int16_t)f->get.y1;
		uint16_t bw = (uint16_t)(f->get.x2 - f->get.x1), bh = (uint16_t)(f->get.y2 - f->get.y1);
		if (f->in_place)
			f->sequence = xcb_shm_get_image(c, wc->pixmap, x, y, bw, bh, ~0u,
			                                XCB_IMAGE_FORMAT_Z_PIXMAP, wc->seg,
			                                (uint32_t)f->offset).sequence;
		else if (b->shm)
			f->sequence = xcb_shm_get_image(c, wc->pixmap, x, y, bw, bh, ~0u,
			                                XCB_IMAGE_FORMAT_Z_PIXMAP, b->shm_seg,
			                                (uint32_t)f->offset).sequence;
		else
			f->sequence = xcb_get_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, wc->pixmap, x, y, bw,
			                            bh, ~0u).sequence;
		f->reply = NULL;
		b->requests++;
	}
}

/* Contents the fetch takes (unless held for a sync answer). */
static bool has_contents(const struct xwm_window *w)
{
	const struct xwm_content *c = w->content;

	return w->viewable && xwm_window_composited(w) && c->damage && !c->awaiting_content &&
	       (c->damaged || c->full_damage || c->needs_rename);
}

bool xwm_contents_pending(const struct xwm_cm *cm)
{
	const struct xwm *xwm = cm->wm;

	for (const struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		const struct xwm_window *w = duet_container_of(l, const struct xwm_window, link);
		if (has_contents(w) && !xwm_sync_content_held(w))
			return true;
	}
	return false;
}

bool xwm_contents_fetch(struct xwm_cm *cm)
{
	struct xwm *xwm = cm->wm;
	struct xwm_contents *b = contents(cm);
	bool deferred = false;

	if (!b || b->in_flight)
		return b && b->in_flight;
	b->count = b->nwindows = b->arrived = b->bytes = b->zero_copy = 0;
	b->requests = 0;
	b->in_place = b->copied = 0;
	b->fetched_bytes = 0;
	b->marker = b->marker_arrived = false;
	b->t0 = xwm->debug ? render_now_ns() : 0;
	for (struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_window *w = duet_container_of(l, struct xwm_window, link);
		struct xwm_content *c = w->content;
		if (!has_contents(w) || !xwm_sync_content_ready(w))
			continue;
		c->presented_update = false;
		if (c->needs_rename) {
			c->needs_rename = false;
			if (!xwm_content_rename_pixmap(w))
				continue;
		}
		if (!c->pixmap || !c->texture)
			continue;
		if (render_texture_is_imported(c->texture) ? !queue_imported(cm, b, w)
		                                           : !queue_window(cm, b, w))
			deferred = true;
	}
	if (deferred)
		xwm_schedule_repaint(cm); /* the rest next frame */
	/* Before the requests whose replies end the frame's wait. */
	if (b->zero_copy > 0)
		xwm_dri3_fence(cm);
	if (b->count > 0) {
		send_requests(cm, b);
	} else if (b->zero_copy > 0 || xwm_output_busy(cm)) {
		b->marker = true;
		b->marker_sequence = xcb_get_input_focus(xwm->conn).sequence;
	} else if (b->nwindows > 0) {
		/* Windows drawn where they are (--renderer xrender): nothing
		 * to wait for; the upload half only shows them. */
		b->in_flight = true;
		return false;
	} else {
		return false;
	}
	b->in_flight = true;
	return true;
}

/* Collects what has arrived; wait: block for the rest (screenshots). */
static bool collect(struct xwm_cm *cm, bool wait)
{
	struct xwm_contents *b = cm->contents;
	xcb_connection_t *c = cm->wm->conn;

	if (!b || !b->in_flight)
		return true;
	if (b->marker) {
		void *reply = NULL;
		if (b->marker_arrived)
			return true;
		if (wait)
			reply = xcb_wait_for_reply(c, b->marker_sequence, NULL);
		else if (!xcb_poll_for_reply(c, b->marker_sequence, &reply, NULL))
			return false;
		free(reply);
		xwm_note_processed(cm, b->marker_sequence);
		b->marker_arrived = true;
		return true;
	}
	while (b->arrived < b->count) {
		struct fetch *f = &b->fetch[b->arrived];
		xcb_generic_error_t *error = NULL;
		void *reply = NULL;
		/* A NULL reply means the pixmap is gone: the window is going
		 * away and its events follow. */
		if (wait)
			reply = xcb_wait_for_reply(c, f->sequence, &error);
		else if (!xcb_poll_for_reply(c, f->sequence, &reply, &error))
			return false;
		free(error);
		f->reply = reply;
		xwm_note_processed(cm, f->sequence);
		b->arrived++;
	}
	return true;
}

bool xwm_contents_ready(struct xwm_cm *cm)
{
	struct xwm_contents *b = cm->contents;
	if (!b || !b->in_flight)
		return true;
	return b->marker ? b->marker_arrived : b->arrived == b->count;
}

bool xwm_contents_oldest_reply(struct xwm_cm *cm, unsigned int *sequence)
{
	struct xwm_contents *b = cm->contents;
	if (!b || !b->in_flight || xwm_contents_ready(cm))
		return false;
	*sequence = b->marker ? b->marker_sequence : b->fetch[b->arrived].sequence;
	return true;
}

bool xwm_contents_poll_oldest(struct xwm_cm *cm)
{
	struct xwm_contents *b = cm->contents;
	void *reply = NULL;
	xcb_generic_error_t *error = NULL;

	if (!b || !b->in_flight || xwm_contents_ready(cm))
		return false;
	unsigned int seq = b->marker ? b->marker_sequence : b->fetch[b->arrived].sequence;
	if (!xcb_poll_for_reply(cm->wm->conn, seq, &reply, &error))
		return false;
	free(error);
	xwm_note_processed(cm, seq);
	if (b->marker) {
		free(reply);
		b->marker_arrived = true;
	} else {
		/* NULL: the pixmap is gone (see collect). */
		b->fetch[b->arrived++].reply = reply;
	}
	return true;
}

void xwm_contents_wait(struct xwm_cm *cm)
{
	collect(cm, true);
}

static const void *fetched_pixels(const struct xwm_contents *b, const struct fetch *f,
                                  size_t bytes)
{
	if (!f->reply)
		return NULL;
	if (f->in_place) {
		const xcb_shm_get_image_reply_t *r = f->reply;
		const struct xwm_window *w = b->windows[f->window].w;
		return r->size >= bytes && w ? (const char *)w->content->seg_data + f->offset : NULL;
	}
	if (b->shm) {
		const xcb_shm_get_image_reply_t *r = f->reply;
		return r->size >= bytes ? (const char *)b->shm_data + f->offset : NULL;
	}
	xcb_get_image_reply_t *r = f->reply;
	return (size_t)xcb_get_image_data_length(r) >= bytes ? xcb_get_image_data(r) : NULL;
}

/* Puts a fetched rectangle where c's texture reads it: nothing to do for
 * one fetched in place; a copy into the segment the texture wraps; or an
 * upload. */
static int place(struct xwm_content *c, const struct fetch *f, const void *pixels)
{
	int bw = f->box.x2 - f->box.x1, bh = f->box.y2 - f->box.y1;

	if (f->in_place)
		return c->seg_data ? 0 : -1;
	if (!c->seg_data)
		return render_texture_upload_rect(c->texture, pixels, bw * 4, &f->box);
	size_t stride = (size_t)c->pixmap_width * 4;
	char *dst = (char *)c->seg_data + (size_t)f->box.y1 * stride + (size_t)f->box.x1 * 4;
	for (int row = 0; row < bh; row++)
		memcpy(dst + (size_t)row * stride, (const char *)pixels + (size_t)row * bw * 4,
		       (size_t)bw * 4);
	return 0;
}

void xwm_contents_upload(struct xwm_cm *cm)
{
	struct xwm_contents *b = cm->contents;

	if (!b || !b->in_flight || b->arrived < b->count)
		return;
	for (size_t i = 0; i < b->count; i++) {
		struct fetch *f = &b->fetch[i];
		struct fetch_window *fw = &b->windows[f->window];
		struct xwm_content *c = fw->w ? fw->w->content : NULL;
		int bw = f->box.x2 - f->box.x1, bh = f->box.y2 - f->box.y1;
		size_t bytes = (size_t)(f->get.x2 - f->get.x1) * (size_t)bh * 4;
		const void *pixels = fetched_pixels(b, f, bytes);
		bool ok = false;

		if (pixels && c && c->texture && place(c, f, pixels) == 0) {
			if (f->in_place)
				b->in_place += bytes;
			else
				b->copied += (uint64_t)bw * (uint64_t)bh * 4;
			pixman_region32_t region;
			pixman_region32_init_rect(&region, f->box.x1, f->box.y1, (unsigned)bw,
			                          (unsigned)bh);
			render_node_damage(c->node, &region);
			pixman_region32_fini(&region);
			b->fetched_bytes += bytes;
			ok = true;
		}
		free(f->reply);
		f->reply = NULL;
		if (!ok)
			fw->ok = false;
	}
	/* Windows are queued only with at least one rectangle. */
	for (size_t k = 0; k < b->nwindows; k++)
		if (b->windows[k].ok && b->windows[k].w) {
			struct xwm_content *c = b->windows[k].w->content;
			render_node_set_visible(c->node, true);
			c->presented_update = true;
		}
	if (b->requests > 0)
		xwm_debug(cm->wm, "contents: %u request(s), %llu bytes in %.3f ms", b->requests,
		          (unsigned long long)b->fetched_bytes,
		          (double)(render_now_ns() - b->t0) / 1e6);
	b->count = b->nwindows = b->arrived = 0;
	b->in_flight = false;
}

void xwm_contents_counts(const struct xwm_cm *cm, uint64_t *in_place, uint64_t *copied)
{
	*in_place = cm->contents ? cm->contents->in_place : 0;
	*copied = cm->contents ? cm->contents->copied : 0;
}

void xwm_contents_forget_window(struct xwm_window *w)
{
	struct xwm_contents *b = w->content->cm->contents;

	if (!b || !b->in_flight)
		return;
	for (size_t k = 0; k < b->nwindows; k++)
		if (b->windows[k].w == w)
			b->windows[k].w = NULL;
}

void xwm_contents_finish(struct xwm_cm *cm)
{
	struct xwm_contents *b = cm->contents;

	if (b) {
		/* Those that never arrived are NULL (send_requests). */
		for (size_t i = 0; i < b->count; i++)
			free(b->fetch[i].reply);
		free(b->fetch);
		free(b->windows);
		shm_release(cm, b);
		free(b);
	}
	cm->contents = NULL;
}
