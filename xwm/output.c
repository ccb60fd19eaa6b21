/* How composited frames reach the screen (the composite overlay window).
 *
 * With --renderer xrender, "xrender": the server draws each frame into a
 * back-buffer pixmap and composites its damage onto the overlay
 * (xrender.c). Otherwise two paths, chosen at start (docs: duet-xwm
 * --help, --present):
 *  - "egl-swap": the scene paints into an EGL window surface on the
 *    overlay and eglSwapBuffers shows it (render/target-window.c). Right
 *    when the driver presents zero-copy or damage-limited: DRI3 on the
 *    server plus EGL_KHR_swap_buffers_with_damage or EGL_EXT_buffer_age.
 *  - "shm-put": the scene paints into an offscreen framebuffer and we send
 *    only the damaged pixels: one MIT-SHM PutImage per damaged rectangle
 *    (merged as the content fetches are), from one shared segment reused
 *    every frame. With --renderer pixman the framebuffer IS the segment
 *    (a memory target over it, render_target_create_memory_on; repaint
 *    path "memory-shm"): the frame is drawn where the server reads it and
 *    each rectangle is a sub-rectangle (src_x, src_y) of the whole-screen
 *    image, so nothing is read back. With GL the damaged rectangles are
 *    read back (glReadPixels), packed one after the other into the
 *    segment. Mesa's software EGL on an X server without DRI3 (Xvfb)
 *    instead sends a GetGeometry round trip and a PutImage of the WHOLE
 *    buffer (8 MB at 1920x1080) per swap whatever the damage, an artefact
 *    a lean compositing manager on such a server would not pay, and that
 *    duet-compositor's headless output has no counterpart of. Without
 *    MIT-SHM the pixels travel inside plain PutImage requests.
 *
 * PutImage with send_event = 0 is ordered before every later request of
 * the connection, so the frame-timing messages sent after it (sync.c)
 * reach clients after the pixels are in the server, with no round trip.
 * Reusing the segment needs the server to have executed the previous
 * frame's PutImages: every event and reply carries the sequence number of
 * the last request the server processed, and the main loop and the
 * content fetches report those (xwm_note_processed). When nothing newer
 * arrived since the last frame (two frames in a row with no event and no
 * fetch in between), the repaint sends a GetInputFocus and paints only
 * once its reply is in, as it does for a fetch (fetch.c): the event loop
 * never waits for the server. With pixman, painting is the reuse, so the
 * check comes before the paint (xwm_output_before_paint), not before the
 * PutImages; the repaint has already made it true, and the blocking wait
 * there is only a safety net (counted: the frame trace's output_waits).
 *
 * One segment, not two (double buffering with buffer age): the server
 * executes requests in order, so a frame's ShmGetImage replies prove the
 * last frame's PutImages done. A frame that fetches (nearly all) therefore
 * never waits for the segment; one that fetches nothing (a window moved)
 * waits for one GetInputFocus reply, in the event loop, as it would for
 * a fetch. A second buffer would save only that round trip, at the cost
 * of a second screen-sized segment and of copying the other buffer's
 * damage into it every frame.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <X11/Xlib.h>
#include <xcb/shm.h>

#include "xwm.h"

struct xwm_output {
	const char *path;            /* "shm-put", "egl-swap" or "xrender" */
	const char *repaint_path;    /* the target's repaint path, for the trace */
	/* shm-put: PutImage from the segment, or of plain rows without it. */
	xcb_gcontext_t gc;
	uint32_t shm_seg;
	void *shm_data;              /* NULL: plain PutImage */
	size_t shm_size;
	void *buf;                   /* plain PutImage rows */
	size_t buf_size;
	bool direct;                 /* the target draws in the segment (pixman) */
	int width, height;           /* of the segment's image */
	uint32_t put_seq;            /* last PutImage from the segment */
	bool put_pending;            /* it may not have been executed yet */
	uint64_t requests, waits;
	/* The last paint's PutImages (rectangles: the first XWM_MAX_RECTS)
	 * and bytes read back for them, for the frame trace. */
	unsigned int frame_puts;
	pixman_box32_t frame_put[XWM_MAX_RECTS];
	uint64_t frame_readback;
	/* Latest request the server is known to have processed (from the
	 * sequence numbers of events and replies). */
	uint32_t processed_seq;
	bool processed_known;
};

static bool seq_after_or_at(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) >= 0;
}

void xwm_note_processed(struct xwm_cm *cm, uint32_t sequence)
{
	struct xwm_output *o = cm->output;

	if (!o)
		return; /* nothing to reuse before the output is up */
	if (!o->processed_known || seq_after_or_at(sequence, o->processed_seq)) {
		o->processed_seq = sequence;
		o->processed_known = true;
	}
}

/* Whether the server's image format for our depth is the renderer's
 * ARGB8888 in host byte order (32 bits per pixel, host endianness), so
 * read-back pixels can be sent unchanged. */
static bool image_format_matches(struct xwm_cm *cm)
{
	struct xwm *xwm = cm->wm;
	const xcb_setup_t *setup = xcb_get_setup(xwm->conn);
	uint16_t probe = 1;
	bool host_lsb = *(uint8_t *)&probe == 1;

	if ((setup->image_byte_order == XCB_IMAGE_ORDER_LSB_FIRST) != host_lsb)
		return false;
	if (xwm->screen->root_depth != 24 && xwm->screen->root_depth != 32)
		return false;
	for (xcb_format_iterator_t it = xcb_setup_pixmap_formats_iterator(setup); it.rem;
	     xcb_format_next(&it))
		if (it.data->depth == xwm->screen->root_depth)
			return it.data->bits_per_pixel == 32;
	return false;
}

static bool server_has_dri3(struct xwm_cm *cm)
{
	struct xwm *xwm = cm->wm;
	xcb_query_extension_reply_t *r = xcb_query_extension_reply(xwm->conn,
		xcb_query_extension(xwm->conn, 4, "DRI3"), NULL);
	bool present = r && r->present;
	free(r);
	return present;
}

static bool shm_setup(struct xwm_cm *cm, size_t size)
{
	struct xwm_output *o = cm->output;

	int fd = memfd_create("duet-xwm-output", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		xwm_log("memfd for the output: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	/* Pages are only backed once written: a frame touches its damage. */
	void *data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (data == MAP_FAILED) {
		xwm_log("mmap for the output: %s", strerror(errno));
		close(fd);
		return false;
	}
	o->shm_seg = xcb_generate_id(cm->wm->conn);
	xcb_shm_attach_fd(cm->wm->conn, o->shm_seg, fd, 0); /* xcb closes fd */
	o->shm_data = data;
	o->shm_size = size;
	return true;
}

int xwm_output_start(struct xwm_cm *cm, int width, int height)
{
	struct xwm *xwm = cm->wm;
	struct xwm_output *o = cm->output = calloc(1, sizeof(*cm->output));
	const char *want = cm->options.present ? cm->options.present : "auto";
	bool egl_good = false, dri3 = false;

	if (!o) {
		xwm_log("out of memory for the output");
		return -1;
	}
	if (cm->xrender) {
		/* Screenshots read the back buffer as host-order words. */
		if (!image_format_matches(cm)) {
			xwm_log("screen depth %u has no 32-bit host-order image format: use "
			        "--renderer gl", xwm->screen->root_depth);
			return -1;
		}
		cm->target = xwm_xrender_target(cm, width, height);
		if (!cm->target)
			return -1;
		o->path = "xrender";
		o->repaint_path = render_target_repaint_path(cm->target);
		render_scene_damage_all(cm->scene);
		xwm_log("output path: xrender (frames drawn into a pixmap in the server, their "
		        "damage composited onto the overlay)");
		return 0;
	}
	if (cm->options.pixman) {
		/* A memory target reaches the screen only by PutImage. */
		if (strcmp(want, "egl") == 0) {
			xwm_log("--present egl needs --renderer gl");
			return -1;
		}
		want = "shm";
	}
	if (strcmp(want, "auto") == 0) {
		dri3 = server_has_dri3(cm);
		egl_good = dri3 &&
			(render_egl_has_extension(cm->egl, "EGL_KHR_swap_buffers_with_damage") ||
			 render_egl_has_extension(cm->egl, "EGL_EXT_swap_buffers_with_damage") ||
			 render_egl_has_extension(cm->egl, "EGL_EXT_buffer_age"));
	}
	bool shm = strcmp(want, "shm") == 0 || (strcmp(want, "auto") == 0 && !egl_good);
	if (shm && !image_format_matches(cm) && cm->options.pixman) {
		xwm_log("screen depth %u has no 32-bit host-order image format, and pixman "
		        "frames cannot be swapped by EGL: use --renderer gl", xwm->screen->root_depth);
		return -1;
	}
	if (shm && !image_format_matches(cm)) {
		xwm_log("screen depth %u has no 32-bit host-order image format: using EGL swap",
		        xwm->screen->root_depth);
		shm = false;
	}

	if (!shm) {
		/* EGL's X11 platform takes the address of an Xlib Window. */
		Window overlay = xwm->overlay;
		cm->target = render_target_create_window(cm->egl, &overlay, width, height);
		if (!cm->target)
			return -1;
		o->path = "egl-swap";
		o->repaint_path = render_target_repaint_path(cm->target);
	} else {
		bool seg = cm->has_shm_fd && shm_setup(cm, (size_t)width * (size_t)height * 4);
		if (!seg)
			xwm_log("no MIT-SHM for the output: pixels travel in PutImage requests");
		if (cm->egl) {
			cm->target = render_target_create_offscreen(cm->egl, width, height);
		} else if (seg) {
			/* pixman draws the frame where the server reads it. */
			cm->target = render_target_create_memory_on(o->shm_data, width, height,
			                                             width * 4);
			o->direct = cm->target != NULL;
		} else {
			cm->target = render_target_create_memory(width, height);
		}
		if (!cm->target)
			return -1;
		o->path = "shm-put";
		o->repaint_path = o->direct ? "memory-shm" : render_target_repaint_path(cm->target);
		o->width = width;
		o->height = height;
		o->gc = xcb_generate_id(xwm->conn);
		xcb_create_gc(xwm->conn, o->gc, xwm->overlay, 0, NULL);
		/* The overlay starts unpainted: the first frame is all damage. */
		render_scene_damage_all(cm->scene);
	}
	xwm_log("output path: %s (%s%s)", o->path,
	        cm->options.pixman ? "the pixman renderer" :
	        strcmp(want, "auto") ? "forced by --present" :
	        egl_good ? "DRI3 and a damage-aware EGL swap" :
	        dri3 ? "no damage-aware EGL swap" : "no DRI3: software EGL swaps whole buffers",
	        shm && !o->shm_data ? ", without MIT-SHM" : "");
	return 0;
}

void xwm_output_finish(struct xwm_cm *cm)
{
	struct xwm *xwm = cm->wm;
	struct xwm_output *o = cm->output;

	if (!o)
		return;
	cm->output = NULL;
	if (!cm->target) {
		free(o);
		return;
	}
	render_target_destroy(cm->target);
	/* shm-put's segment and GC (egl-swap has neither). */
	if (o->shm_data) {
		xcb_shm_detach(xwm->conn, o->shm_seg);
		munmap(o->shm_data, o->shm_size);
	}
	if (o->gc)
		xcb_free_gc(xwm->conn, o->gc);
	free(o->buf);
	free(o);
	cm->target = NULL;
}

const char *xwm_output_path(const struct xwm_cm *cm)
{
	return cm->output->path;
}

const char *xwm_output_repaint_path(const struct xwm_cm *cm)
{
	return cm->output->repaint_path;
}

bool xwm_output_busy(const struct xwm_cm *cm)
{
	const struct xwm_output *o = cm->output;

	return o->put_pending &&
	       (!o->processed_known || !seq_after_or_at(o->processed_seq, o->put_seq));
}

/* Before overwriting the segment: the server must have read the last
 * frame's pixels out of it. Every repaint makes sure it has before it
 * paints (fetch.c), so this never waits unless that broke; waits
 * counts it if it did (the frame trace's "output_waits"). */
static void wait_segment_free(struct xwm_cm *cm)
{
	struct xwm *xwm = cm->wm;
	struct xwm_output *o = cm->output;

	if (!o->put_pending)
		return;
	if (xwm_output_busy(cm)) {
		xcb_get_input_focus_cookie_t ck = xcb_get_input_focus(xwm->conn);
		free(xcb_get_input_focus_reply(xwm->conn, ck, NULL));
		xwm_note_processed(cm, ck.sequence);
		o->waits++;
	}
	o->put_pending = false;
}

void xwm_output_before_paint(struct xwm_cm *cm)
{
	struct xwm_output *o = cm->output;

	o->frame_puts = 0;
	o->frame_readback = 0;
	/* Painting is what reuses a segment the target lives in. */
	if (o->direct)
		wait_segment_free(cm);
}

/* The frame's PutImages, for its trace line (the first few rectangles). */
static void note_put(struct xwm_cm *cm, const pixman_box32_t *b)
{
	struct xwm_output *o = cm->output;

	if (o->frame_puts < XWM_MAX_RECTS)
		o->frame_put[o->frame_puts] = *b;
	o->frame_puts++;
}

/* Without MIT-SHM: the rectangle inside PutImage requests, split in bands
 * of rows that fit the server's maximum request length. */
static void put_plain(struct xwm_cm *cm, const pixman_box32_t *b)
{
	struct xwm *xwm = cm->wm;
	struct xwm_output *o = cm->output;
	int w = b->x2 - b->x1, h = b->y2 - b->y1;
	size_t row = (size_t)w * 4;
	size_t max_bytes = (size_t)xcb_get_maximum_request_length(xwm->conn) * 4;
	int band = max_bytes > 24 + row ? (int)((max_bytes - 24) / row) : 1;

	if (band > h)
		band = h;
	if (!o->buf || o->buf_size < row * (size_t)band) {
		free(o->buf);
		o->buf_size = row * (size_t)band;
		o->buf = malloc(o->buf_size);
		if (!o->buf) {
			o->buf_size = 0;
			return;
		}
	}
	for (int y = b->y1; y < b->y2; y += band) {
		int bh = b->y2 - y < band ? b->y2 - y : band;
		pixman_box32_t part = { b->x1, y, b->x2, y + bh };
		if (render_target_read_pixels(cm->target, &part, o->buf, (int)row) < 0)
			return;
		o->frame_readback += row * (size_t)bh;
		note_put(cm, &part);
		xcb_put_image(xwm->conn, XCB_IMAGE_FORMAT_Z_PIXMAP, xwm->overlay, o->gc,
		              (uint16_t)w, (uint16_t)bh, (int16_t)b->x1, (int16_t)y, 0,
		              xwm->screen->root_depth, (uint32_t)(row * (size_t)bh), o->buf);
		o->requests++;
	}
}

static void present_shm(struct xwm_cm *cm, const pixman_region32_t *damage)
{
	struct xwm *xwm = cm->wm;
	struct xwm_output *o = cm->output;
	pixman_box32_t boxes[XWM_MAX_RECTS];
	int n = xwm_plan_rects(damage, boxes);
	size_t need = 0;

	for (int i = 0; i < n; i++)
		need += (size_t)(boxes[i].x2 - boxes[i].x1) * (size_t)(boxes[i].y2 - boxes[i].y1) * 4;
	if (n > 1 && need > o->shm_size) {
		/* Merged boxes may overlap; their bounds always fit. */
		boxes[0] = *pixman_region32_extents(damage);
		n = 1;
	}
	if (!o->shm_data) {
		for (int i = 0; i < n; i++)
			put_plain(cm, &boxes[i]);
		return;
	}
	if (o->direct) {
		/* The frame is already in the segment (drawn there after
		 * xwm_output_before_paint): each rectangle is sent from its own
		 * place in the whole-screen image. Merged boxes may take in
		 * undamaged pixels; those are the current frame's too. */
		for (int i = 0; i < n; i++) {
			const pixman_box32_t *b = &boxes[i];
			int w = b->x2 - b->x1, h = b->y2 - b->y1;
			if (w <= 0 || h <= 0)
				continue;
			o->put_seq = xcb_shm_put_image(xwm->conn, xwm->overlay, o->gc,
				(uint16_t)o->width, (uint16_t)o->height,
				(uint16_t)b->x1, (uint16_t)b->y1, (uint16_t)w, (uint16_t)h,
				(int16_t)b->x1, (int16_t)b->y1, xwm->screen->root_depth,
				XCB_IMAGE_FORMAT_Z_PIXMAP, 0, o->shm_seg, 0).sequence;
			o->put_pending = true;
			o->requests++;
			note_put(cm, b);
		}
		return;
	}
	wait_segment_free(cm);
	size_t offset = 0;
	for (int i = 0; i < n; i++) {
		const pixman_box32_t *b = &boxes[i];
		int w = b->x2 - b->x1, h = b->y2 - b->y1;
		if (w <= 0 || h <= 0)
			continue;
		char *dst = (char *)o->shm_data + offset;
		if (render_target_read_pixels(cm->target, b, (uint32_t *)(void *)dst, w * 4) < 0)
			continue;
		o->frame_readback += (uint64_t)w * (uint64_t)h * 4;
		note_put(cm, b);
		o->put_seq = xcb_shm_put_image(xwm->conn, xwm->overlay, o->gc,
			(uint16_t)w, (uint16_t)h, 0, 0, (uint16_t)w, (uint16_t)h,
			(int16_t)b->x1, (int16_t)b->y1, xwm->screen->root_depth,
			XCB_IMAGE_FORMAT_Z_PIXMAP, 0, o->shm_seg, (uint32_t)offset).sequence;
		o->put_pending = true;
		o->requests++;
		offset += (size_t)w * (size_t)h * 4;
	}
}

void xwm_output_present(struct xwm_cm *cm, const pixman_region32_t *damage)
{
	struct xwm_output *o = cm->output;

	if (strcmp(o->path, "egl-swap") == 0) {
		render_target_present(cm->target, damage);
		return;
	}
	if (strcmp(o->path, "xrender") == 0) {
		int n;
		const pixman_box32_t *b = pixman_region32_rectangles(damage, &n);
		for (int i = 0; i < n; i++)
			note_put(cm, &b[i]);
		o->requests += 2; /* the overlay's clip and the Composite */
		render_target_present(cm->target, damage);
		return;
	}
	present_shm(cm, damage);
}

void xwm_output_trace(const struct xwm_cm *cm, bool painted, char *buf, size_t size)
{
	const struct xwm_output *o = cm->output;
	unsigned int n = painted ? o->frame_puts : 0;
	size_t len = (size_t)snprintf(buf, size, "\"puts\":%u,\"put_rects\":[", n);

	/* [x,y,w,h] each, the first XWM_MAX_RECTS ("puts" counts them all). */
	if (n > XWM_MAX_RECTS)
		n = XWM_MAX_RECTS;
	for (unsigned int i = 0; i < n && len < size; i++) {
		const pixman_box32_t *b = &o->frame_put[i];
		len += (size_t)snprintf(buf + len, size - len, "%s[%d,%d,%d,%d]", i ? "," : "",
		                        b->x1, b->y1, b->x2 - b->x1, b->y2 - b->y1);
	}
	if (len < size)
		snprintf(buf + len, size - len, "],\"readback\":%" PRIu64 ",\"output_waits\":%" PRIu64,
		         painted ? o->frame_readback : 0, o->waits);
}
