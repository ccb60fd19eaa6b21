/* The repaint cycle. render/'s repaint loop says when a repaint is due
 * (its next tick, a timerfd, as on duet-compositor's outputs; an idle
 * screen arms no timer) and calls back here. A repaint sends the requests
 * that fetch the frame's window contents and returns to the event loop;
 * the frame is painted once their replies are in (fetch.c), so the loop
 * never blocks on the X server while clients draw. */
#include <inttypes.h>
#include <stdio.h>

#include "xwm.h"

/* Paints what the textures hold now (contents uploaded before) and sends
 * it; the pixels are on their way to the X server (not yet flushed).
 * Returns whether anything was painted. */
static bool paint(struct xwm_cm *cm)
{
	pixman_region32_t repainted;

	pixman_region32_init(&repainted);
	if (render_scene_has_damage(cm->scene))
		xwm_output_before_paint(cm);
	bool painted = render_scene_paint(cm->scene, cm->target, &repainted);
	if (painted)
		xwm_output_present(cm, &repainted);
	cm->last_paint_area = 0;
	int n;
	const pixman_box32_t *b = pixman_region32_rectangles(&repainted, &n);
	for (int i = 0; i < n; i++)
		cm->last_paint_area += (uint64_t)(b[i].x2 - b[i].x1) * (uint64_t)(b[i].y2 - b[i].y1);
	pixman_region32_fini(&repainted);
	return painted;
}

/* Whether a frame started now would paint or answer anything: the scene
 * has damage, a window has contents to fetch, or a client's finished
 * frame can be answered (_NET_WM_FRAME_DRAWN). A repaint asked for by a
 * change that turned out to show nothing (a window placed before its map
 * or destroyed after its unmap, a change the frame in flight painted, a
 * sync counter's frame the frame in flight answered) is withdrawn: it
 * would paint nothing and answer nothing, and cost a round trip where the
 * output is still busy with the last frame's pixels. */
static bool frame_has_work(void *data)
{
	struct xwm_cm *cm = data;
	return render_scene_has_damage(cm->scene) || xwm_contents_pending(cm) ||
	       xwm_sync_frames_drawn(cm) > 0;
}

/* The "composited" trace event for windows whose first content or new
 * size this frame (finished at done_ns) showed. */
static void trace_shown(struct xwm_cm *cm, uint64_t seq, uint64_t done_ns)
{
	struct xwm *xwm = cm->wm;

	for (struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_window *w = duet_container_of(l, struct xwm_window, link);
		struct xwm_content *c = w->content;
		if (!xwm_window_managed(w) || !c->presented_update)
			continue;
		int width = c->pixmap_width - 2 * w->border, height = c->pixmap_height - 2 * w->border;
		bool first = !c->composited;
		if (!first && width == c->composited_width && height == c->composited_height)
			continue;
		c->composited = true;
		c->composited_width = width;
		c->composited_height = height;
		render_trace(cm->trace, "composited",
		             "\"t_ns\":%" PRIu64 ",\"seq\":%" PRIu64 ",\"client_pid\":%u,"
		             "\"width\":%d,\"height\":%d,\"first\":%s,\"window\":%u",
		             done_ns, seq, w->client->pid, width, height, first ? "true" : "false",
		             w->id);
	}
}

/* The frame is finished (drawn_ns: its pixels have left for the X
 * server): its trace, and the frame-timing messages it answers. */
static void frame_drawn(void *data, const struct render_frame *frame, uint64_t drawn_ns)
{
	struct xwm_cm *cm = data;
	bool painted = frame->paint;

	if (cm->trace) {
		char output[XWM_MAX_RECTS * 56 + 128];
		uint64_t in_place, copied;
		xwm_output_trace(cm, painted, output, sizeof(output));
		xwm_contents_counts(cm, &in_place, &copied);
		render_trace(cm->trace, "frame", "\"seq\":%" PRIu64 ",\"painted\":%s,\"damage\":%" PRIu64
		             ",\"tick_ns\":%" PRIu64 ",\"done_ns\":%" PRIu64 ",%s"
		             ",\"fetch_in_place\":%" PRIu64 ",\"fetch_copied\":%" PRIu64
		             ",\"frames_drawn\":%u",
		             frame->seq, painted ? "true" : "false",
		             painted ? cm->last_paint_area : 0, frame->tick_ns, drawn_ns, output,
		             in_place, copied, xwm_sync_frames_drawn(cm));
		trace_shown(cm, frame->seq, drawn_ns);
	}
	xwm_sync_frame_presented(cm, drawn_ns);
}

/* The second half of a frame, once its contents are in: upload, paint
 * and send them (nothing when only frame-timing messages were due), then
 * those messages. "Drawn" is when the pixels have left for the X server,
 * not when they were read back: the flush is part of the frame's cost.
 * The repaint loop then withdraws a repaint asked for meanwhile that this
 * frame did (a client that finished a frame this one showed asked for a
 * frame to answer it, and this one did), or arms it. */
static void repaint_finish(struct xwm_cm *cm)
{
	xwm_contents_upload(cm);
	bool painted = paint(cm);
	xcb_flush(cm->wm->conn);
	render_repaint_loop_finish(&cm->repaint, painted, render_now_ns(), NULL);
	xcb_flush(cm->wm->conn);
}

/* The first half of a frame: take the damage and send the requests that
 * fetch it; the frame goes on in repaint_finish once their replies are in
 * (the event loop checks without blocking: xwm_repaint_if_ready), or at
 * once when there was nothing to fetch. */
static void repaint_start(void *data, const struct render_frame *frame)
{
	struct xwm_cm *cm = data;
	(void)frame;
	if (xwm_contents_fetch(cm)) {
		xcb_flush(cm->wm->conn);
		return;
	}
	repaint_finish(cm);
}

static bool frame_in_flight(const struct xwm_cm *cm)
{
	return cm->repaint.state == RENDER_REPAINT_PAINTING;
}

bool xwm_repaint_if_ready(struct xwm_cm *cm)
{
	if (!frame_in_flight(cm) || !xwm_contents_ready(cm))
		return false;
	repaint_finish(cm);
	return true;
}

void xwm_repaint_now(struct xwm_cm *cm)
{
	if (!cm->scene)
		return;
	/* Off the grid, for screenshots, and allowed to wait for the server:
	 * a frame in flight is finished first, then whatever is still
	 * pending is fetched and painted. The frame bookkeeping (timing
	 * messages, trace) stays with the scheduled repaint. */
	if (frame_in_flight(cm)) {
		xwm_contents_wait(cm);
		repaint_finish(cm);
	}
	if (xwm_contents_fetch(cm)) {
		xcb_flush(cm->wm->conn);
		xwm_contents_wait(cm);
	}
	xwm_contents_upload(cm);
	if (paint(cm))
		xcb_flush(cm->wm->conn);
}

/* A repaint whose deadline has come is not a timer: the event loop runs
 * it before it sleeps (render_repaint_loop_due), once every event read so
 * far is in. */
static const struct render_repaint_ops repaint_ops = {
	.has_work = frame_has_work,
	.paint = repaint_start,
	.deliver = frame_drawn,
};

int xwm_repaint_start(struct xwm_cm *cm)
{
	return render_repaint_loop_init(&cm->repaint, cm->options.refresh_mhz, 0, &repaint_ops,
	                                cm);
}
