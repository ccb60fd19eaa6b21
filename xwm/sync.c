/* Frame timing for X clients, the counterpart of wp_presentation and
 * frame callbacks, as mutter implements it for GTK (the "_NET_WM_SYNC
 * extended" frame synchronization of the EWMH):
 *
 * - Basic counter: before a WM-initiated resize we send _NET_WM_SYNC_REQUEST
 *   with a serial; the client sets its counter to that serial once it has
 *   redrawn at the new size. Until then (or a 100 ms timeout, for clients
 *   that never answer) we keep showing the old contents rather than a
 *   half-drawn window.
 * - Extended counter: the client makes it odd when it starts a frame and
 *   even when the frame is done. Once a frame with that update has been
 *   presented, we send _NET_WM_FRAME_DRAWN (serial, time drawn) and
 *   _NET_WM_FRAME_TIMINGS (serial, presentation offset, refresh interval,
 *   frame delay), which pace the client like a frame callback.
 * Counter changes arrive as SYNC AlarmNotify events from one alarm per
 * counter that fires on every increase.
 *
 * A finished frame's content is the damage reported before its even
 * value: the client's drawing and its counter update go through its one
 * connection in that order, so the DamageNotify comes first. Damage that
 * comes after it is a later frame's. A client that draws without waiting
 * for our answers (duet-render) ends frame N and starts N+1 at once, so
 * N+1's damage often arrives while the frame that answers N is in flight
 * (waiting for the X server to finish with the last frame's pixels):
 * it must not hold N's answer back, which would make that frame paint
 * nothing and answer nothing. So a finished frame is owed in one of two
 * slots: fetched (its damage already taken by a fetch, or none: answered
 * after the next frame) or unfetched (answered after the frame whose
 * fetch takes it, xwm_sync_content_taken).
 */
#include <stdlib.h>

#include "xwm.h"

#define SYNC_TIMEOUT_NS 100000000ull /* 100 ms */

/* A window's frame timing. */
struct xwm_sync {
	xcb_sync_alarm_t ext_alarm;
	int64_t sync_serial;     /* last value sent in _NET_WM_SYNC_REQUEST */
	bool sync_waiting;       /* content held back until the client draws */
	uint64_t sync_sent_ns;
	/* Finished frames (even extended counter values). A frame's content
	 * is the damage reported before its value (the client's drawing
	 * precedes its counter update on its connection): frame_serial is
	 * the latest whose content a fetch has taken (or that had none),
	 * answered by _NET_WM_FRAME_DRAWN after the next frame;
	 * unfetched_serial the latest whose damage no fetch has taken yet,
	 * which becomes frame_serial when one does (xwm_sync_content_taken).
	 * Damage reported after a frame's value is a later frame's and never
	 * holds its answer back. */
	int64_t frame_serial;
	bool frame_pending;      /* frame_serial is owed */
	int64_t unfetched_serial;
	bool unfetched_pending;  /* unfetched_serial is owed once fetched */
};

static struct xwm_sync *sync_of(const struct xwm_window *w)
{
	return w->content->sync;
}

struct xwm_sync *xwm_sync_window_new(void)
{
	return calloc(1, sizeof(struct xwm_sync));
}

static void destroy_alarm(struct xwm_window *w)
{
	struct xwm_sync *s = sync_of(w);

	if (s->ext_alarm)
		xcb_sync_destroy_alarm(w->xwm->conn, s->ext_alarm);
	s->ext_alarm = XCB_NONE;
}

void xwm_sync_window_counters_changed(struct xwm_window *w)
{
	struct xwm *xwm = w->xwm;
	struct xwm_sync *s = sync_of(w);
	const struct xwm_client *c = w->client;

	destroy_alarm(w);
	s->sync_waiting = false;
	s->frame_pending = s->unfetched_pending = false;
	if (!w->content->cm->sync_event)
		return;
	/* The basic counter needs no alarm of its own: its value is read
	 * when the extended one moves or the timeout passes; clients with
	 * only a basic counter are released by the timeout or an alarm on
	 * it when there is no extended one. */
	xcb_sync_counter_t watched = c->ext_counter ? c->ext_counter : c->sync_counter;
	if (watched)
		s->ext_alarm = xwm_sync_alarm_create(xwm, watched, false);
	xwm_debug(xwm, "0x%x: sync counters basic 0x%x extended 0x%x", w->id, c->sync_counter,
	          c->ext_counter);
}

/* The sync timer fires when the earliest unanswered request times out:
 * a timer of its own, so waiting never repaints or moves the frame grid. */
static void rearm_timeout(struct xwm_cm *cm)
{
	struct xwm *xwm = cm->wm;
	uint64_t first = 0;
	for (struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		const struct xwm_sync *s = sync_of(duet_container_of(l, struct xwm_window, link));
		if (s->sync_waiting && (!first || s->sync_sent_ns + SYNC_TIMEOUT_NS < first))
			first = s->sync_sent_ns + SYNC_TIMEOUT_NS;
	}
	render_timer_arm(cm->sync_timer_fd, first);
}

/* Content held back while waiting, to show now. */
static bool content_pending(const struct xwm_window *w)
{
	const struct xwm_content *c = w->content;

	return c->damaged || c->full_damage || c->needs_rename;
}

void xwm_sync_request(struct xwm_window *w)
{
	struct xwm_sync *s = sync_of(w);
	const struct xwm_client *c = w->client;

	if (!c->sync_request || !c->sync_counter || !w->content->cm->sync_event)
		return;
	int64_t latest_frame = s->frame_serial;
	if (s->unfetched_pending && s->unfetched_serial > latest_frame)
		latest_frame = s->unfetched_serial;
	s->sync_serial = xwm_sync_next_serial(s->sync_serial, latest_frame, c->ext_counter != 0);
	xwm_sync_send_request(w, s->sync_serial, c->ext_counter != 0);
	s->sync_waiting = true;
	s->sync_sent_ns = render_now_ns();
	rearm_timeout(w->content->cm);
}

bool xwm_sync_content_held(const struct xwm_window *w)
{
	const struct xwm_sync *s = sync_of(w);

	return s->sync_waiting && render_now_ns() - s->sync_sent_ns < SYNC_TIMEOUT_NS;
}

bool xwm_sync_content_ready(struct xwm_window *w)
{
	struct xwm_sync *s = sync_of(w);

	if (!s->sync_waiting)
		return true;
	if (render_now_ns() - s->sync_sent_ns >= SYNC_TIMEOUT_NS) {
		xwm_debug(w->xwm, "0x%x: no answer to _NET_WM_SYNC_REQUEST %lld, showing anyway",
		          w->id, (long long)s->sync_serial);
		s->sync_waiting = false;
		return true;
	}
	/* The sync timer or the answer schedules the repaint that shows it. */
	return false;
}

void xwm_sync_timeout(struct xwm_cm *cm)
{
	struct xwm *xwm = cm->wm;
	uint64_t now = render_now_ns();
	for (struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_window *w = duet_container_of(l, struct xwm_window, link);
		struct xwm_sync *s = sync_of(w);
		if (!s->sync_waiting || now - s->sync_sent_ns < SYNC_TIMEOUT_NS)
			continue;
		xwm_debug(xwm, "0x%x: no answer to _NET_WM_SYNC_REQUEST %lld, showing anyway",
		          w->id, (long long)s->sync_serial);
		s->sync_waiting = false;
		if (content_pending(w))
			xwm_schedule_repaint(cm);
		else if (s->frame_pending)
			xwm_schedule_frame_due(cm);
	}
	rearm_timeout(cm);
}

void xwm_sync_handle_alarm(struct xwm_cm *cm, xcb_sync_alarm_notify_event_t *ev)
{
	struct xwm *xwm = cm->wm;
	for (struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_window *w = duet_container_of(l, struct xwm_window, link);
		struct xwm_sync *s = sync_of(w);
		if (s->ext_alarm != ev->alarm)
			continue;
		/* Only an active alarm reports a new value. One made inactive
		 * (its counter destroyed, as a client does on its way out)
		 * or destroyed repeats the last value: no frame finished. */
		if (ev->state != XCB_SYNC_ALARMSTATE_ACTIVE)
			return;
		int64_t value = xwm_sync_value(ev->counter_value);
		bool answered = false;
		bool ext = w->client && w->client->ext_counter;
		if (s->sync_waiting && value >= s->sync_serial && (!ext || !(value & 1))) {
			s->sync_waiting = false;
			answered = true;
			rearm_timeout(cm);
		}
		if (ext && !(value & 1)) {
			/* A finished frame: FRAME_DRAWN after we show it, that
			 * is after the frame that fetches its damage, all of
			 * which came before this event. */
			if (w->content->damaged) {
				s->unfetched_serial = value;
				s->unfetched_pending = true;
			} else {
				s->frame_serial = value;
				s->frame_pending = true;
				s->unfetched_pending = false;
			}
		}
		/* A frame started (odd value) needs nothing yet. The content
		 * of a finished frame came with its DamageNotify, which
		 * precedes this event and asked for its repaint; one held back
		 * for this answer is asked for now. */
		if (answered && content_pending(w))
			xwm_schedule_repaint(cm);
		else if (s->frame_pending)
			xwm_schedule_frame_due(cm);
		return;
	}
}

/* A frame the client finished is "drawn" once a frame that holds it has
 * been presented, or right away if it changed nothing on screen (no
 * damage to wait for): its fetched slot. */
static bool drawn_now(const struct xwm_window *w)
{
	const struct xwm_sync *s = sync_of(w);

	return s->frame_pending && !s->sync_waiting;
}

void xwm_sync_content_taken(struct xwm_window *w)
{
	struct xwm_sync *s = sync_of(w);

	if (!s->unfetched_pending)
		return;
	s->frame_serial = s->unfetched_serial;
	s->frame_pending = true;
	s->unfetched_pending = false;
}

unsigned int xwm_sync_frames_drawn(const struct xwm_cm *cm)
{
	const struct xwm *xwm = cm->wm;
	unsigned int n = 0;
	for (const struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next)
		n += drawn_now(duet_container_of(l, const struct xwm_window, link));
	return n;
}

void xwm_sync_frame_presented(struct xwm_cm *cm, uint64_t drawn_ns)
{
	struct xwm *xwm = cm->wm;
	uint64_t t_us = drawn_ns / 1000;
	uint32_t refresh_us = (uint32_t)(cm->repaint.sched.period_ns / 1000);

	for (struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_window *w = duet_container_of(l, struct xwm_window, link);
		struct xwm_sync *s = sync_of(w);
		bool answer = drawn_now(w);
		w->content->presented_update = false;
		if (!answer)
			continue;
		s->frame_pending = false;
		/* Drawn is when the frame's pixels were flushed to the X
		 * server, which shows them at once: the offset to presentation
		 * is ~0 (the grid tick the frame was for is earlier still);
		 * GTK reads 0 as "unknown", hence 1 us. */
		xwm_sync_send_frame_drawn(w, s->frame_serial, t_us, 1, refresh_us, 0);
	}
}

void xwm_sync_window_destroyed(struct xwm_window *w)
{
	struct xwm_sync *s = sync_of(w);

	destroy_alarm(w);
	if (s->sync_waiting) {
		s->sync_waiting = false;
		rearm_timeout(w->content->cm);
	}
	free(s);
	w->content->sync = NULL;
}
