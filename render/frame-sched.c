/* The frame scheduler both servers repaint by (duet-compositor's output,
 * duet-xwm's overlay): when to repaint, and which tick of the refresh grid
 * a frame belongs to.
 *
 * The grid stands in for vblank on outputs that have none (headless,
 * Xvfb): tick k is at anchor + k * period. Like a display's vblank it runs
 * on while frames come, and a frame's seq is its tick number: it advances
 * by the periods that passed, as an MSC does. Such an output has nothing
 * to wait for once it has been idle through a whole tick, though: no
 * scanout reads it, and its peers show damage that ends an idle spell at
 * once (weston's headless output starts its repaint loop on it, xcompmgr
 * composites every damage event). So damage that finds it idle moves
 * the grid's phase: the next tick is one repaint window after the request,
 * and the repaint starts at once. Periods keep being counted (seq goes on
 * from the old grid's count), and frames stay at most one per tick. A
 * display that reports its flips (KMS) is never moved: its vblanks are
 * real.
 *
 * A frame is for the first free tick ahead. Its repaint starts one repaint
 * window before that tick (weston's repaint window: half a period, at most
 * 7 ms), so a frame that takes less is finished by its tick and is
 * presented on it; one that finishes later is presented on the first tick
 * after it finished, as a page flip queued after a vblank is. So the
 * presentation time is always on the grid and never before the pixels
 * exist (the servers trace that earlier time as "composited"), and the
 * compositor sends the presentation events at that tick, as a display
 * server does on the flip's completion. Without a grid (refresh 0) a frame
 * is painted as soon as it is asked for and is presented when it is
 * finished; seq then counts frames.
 *
 * On KMS the display says when a frame was shown (the page flip's event,
 * render_frame_sched_flipped): its time is the presentation time, and
 * where the device counts vblanks its counter is the seq and re-anchors
 * the grid at every flip, so the ticks become the display's vblanks.
 *
 * The servers say what they need (new damage, or only frame callbacks /
 * sync answers that are due) and their repaint loop (repaint-loop.c) arms
 * a timer for the deadline asked;
 * a repaint without damage paints nothing: it only tells clients that a
 * frame went by. Such a frame does not use up its tick for damage that
 * comes before the tick: nothing was flipped, so a frame painted now can
 * still be shown on it (a frame that only answered a client's frame
 * callbacks or sync counter would otherwise hold back the damage that
 * follows it a whole period). Callbacks due again still
 * wait for the next tick, and only damage restarts an idle grid, so frame
 * callbacks keep the refresh rate. Time is always an argument, never read
 * here, so a unit test drives the scheduler with a fake clock.
 */
#include "render-private.h"

/* Longest head start a repaint gets before its tick (weston's default). */
#define REPAINT_WINDOW_MAX_NS 7000000ull

void render_frame_sched_init(struct render_frame_sched *s, int refresh_mhz, uint64_t now_ns)
{
	*s = (struct render_frame_sched){ 0 };
	/* mHz, as wl_output and the presentation protocol count refresh. */
	s->period_ns = refresh_mhz > 0 ? 1000000000000ull / (uint64_t)refresh_mhz : 0;
	s->window_ns = s->period_ns / 2 < REPAINT_WINDOW_MAX_NS ? s->period_ns / 2
	                                                        : REPAINT_WINDOW_MAX_NS;
	s->anchor_ns = now_ns;
}

static uint64_t tick_ns(const struct render_frame_sched *s, uint64_t seq)
{
	/* Ticks before the anchor are never asked for: next_seq is past it. */
	uint64_t n = seq > s->anchor_seq ? seq - s->anchor_seq : 0;
	return s->anchor_ns + n * s->period_ns;
}

uint64_t render_frame_sched_tick_ns(const struct render_frame_sched *s, uint64_t seq)
{
	return tick_ns(s, seq);
}

/* The first tick at or after t (never before the anchor's). */
static uint64_t tick_at_or_after(const struct render_frame_sched *s, uint64_t t)
{
	if (t <= s->anchor_ns)
		return s->anchor_seq;
	return s->anchor_seq + (t - s->anchor_ns + s->period_ns - 1) / s->period_ns;
}

/* The first tick still ahead of now_ns that no frame is presented on. */
static void schedule_target(struct render_frame_sched *s, uint64_t now_ns)
{
	uint64_t seq = tick_at_or_after(s, now_ns + 1);
	uint64_t free_seq = s->damage ? s->paint_seq : s->next_seq;
	if (seq < free_seq)
		seq = free_seq;
	uint64_t tick = tick_ns(s, seq);
	s->target_seq = seq;
	s->deadline_ns = tick - s->window_ns > now_ns ? tick - s->window_ns : now_ns;
}

/* On a grid nothing scans out, a request that finds the output idle puts
 * the next tick one repaint window ahead, so its repaint starts now. Idle:
 * no frame in flight, the last frame's tick has passed, and so has the
 * tick after the last painted one (a frame that painted nothing, such as
 * one that only answered a client, does not keep the output busy: the
 * content that follows it would otherwise wait for the phase it set). */
static void restart_if_idle(struct render_frame_sched *s, uint64_t now_ns)
{
	uint64_t last = s->next_seq ? s->next_seq - 1 : 0;
	if (s->display_clock || s->in_flight || now_ns < tick_ns(s, last) ||
	    now_ns < tick_ns(s, s->paint_seq))
		return;
	/* The old grid's count of the periods that passed goes on, and no
	 * seq is given twice. */
	uint64_t seq = tick_at_or_after(s, now_ns);
	if (seq < s->next_seq)
		seq = s->next_seq;
	s->anchor_seq = seq;
	s->anchor_ns = now_ns + s->window_ns;
	s->next_seq = seq;
	if (s->paint_seq < seq)
		s->paint_seq = seq;
}

bool render_frame_sched_request(struct render_frame_sched *s, uint64_t now_ns, bool damage)
{
	if (damage)
		s->damage = true;
	else
		s->due = true;
	if (s->scheduled)
		return false;
	s->scheduled = true;
	if (s->period_ns == 0) {
		s->deadline_ns = now_ns;
		return true;
	}
	/* Only damage restarts the grid. Callbacks due (a client that asks
	 * for a frame without drawing, as EFL's animator does) keep its
	 * phase: restarted, each such request after the tick it was answered
	 * on would be answered a repaint window later, a callback loop at
	 * 1 / 7 ms instead of the refresh rate. */
	if (damage)
		restart_if_idle(s, now_ns);
	/* Its repaint starts now if its window has already begun. */
	schedule_target(s, now_ns);
	return true;
}

bool render_frame_sched_start(struct render_frame_sched *s, uint64_t now_ns,
                              struct render_frame *frame)
{
	if (!s->scheduled || now_ns < s->deadline_ns)
		return false;
	*frame = (struct render_frame){
		.paint = s->damage,
		.refresh_ns = s->period_ns,
	};
	if (s->period_ns == 0) {
		frame->seq = ++s->frames;
		frame->tick_ns = now_ns;
	} else {
		frame->seq = s->target_seq;
		frame->tick_ns = tick_ns(s, s->target_seq);
		if (s->next_seq <= s->target_seq)
			s->next_seq = s->target_seq + 1;
		s->paint_seq_before = s->paint_seq;
		if (frame->paint)
			s->paint_seq = s->target_seq + 1;
		s->in_flight = true;
	}
	s->scheduled = s->damage = s->due = false;
	return true;
}

bool render_frame_sched_withdraw(struct render_frame_sched *s)
{
	if (!s->scheduled)
		return false;
	/* Nothing else is undone: a grid its request restarted keeps the
	 * new phase, and the next request aims at the first free tick,
	 * which may be the one this repaint was for. */
	s->scheduled = s->damage = s->due = false;
	return true;
}

uint64_t render_frame_sched_finish(struct render_frame_sched *s, struct render_frame *frame,
                                   uint64_t done_ns)
{
	if (s->period_ns == 0) {
		frame->tick_ns = done_ns;
		return done_ns;
	}
	s->in_flight = false;
	if (!frame->paint) {
		/* Nothing painted: the tick stays free for damage, and damage
		 * asked for meanwhile may aim at it again. */
		s->paint_seq = s->paint_seq_before;
		if (done_ns > frame->tick_ns)
			done_ns = frame->tick_ns; /* unchanged pixels are on time */
		if (s->scheduled && s->damage)
			schedule_target(s, done_ns);
	} else if (done_ns > frame->tick_ns) {
		/* Missed its tick: presented on the first one after it was
		 * finished, which no later frame may claim. */
		frame->seq = tick_at_or_after(s, done_ns);
		frame->tick_ns = tick_ns(s, frame->seq);
		if (s->next_seq <= frame->seq)
			s->next_seq = frame->seq + 1;
		if (s->paint_seq <= frame->seq)
			s->paint_seq = frame->seq + 1;
	}
	return frame->tick_ns;
}

uint64_t render_frame_sched_flipped(struct render_frame_sched *s, struct render_frame *frame,
                                    uint64_t t_ns, const uint64_t *msc, uint64_t now_ns)
{
	s->in_flight = false;
	s->display_clock = true; /* its vblanks are real: never restarted */
	if (msc) {
		/* The display's own count of vblanks, and its time: the grid
		 * follows the hardware from here on. */
		frame->seq = *msc;
		if (s->period_ns) {
			s->anchor_ns = t_ns;
			s->anchor_seq = *msc;
		}
	} else if (s->period_ns && t_ns > frame->tick_ns) {
		/* No vblank counter: the grid paces, and a flip that completed
		 * after its tick counts as the first tick after it. Not
		 * re-anchored on the flip, whose completion time is not a
		 * vblank: every frame would move the grid by its latency. */
		uint64_t seq = tick_at_or_after(s, t_ns);
		if (seq > frame->seq)
			frame->seq = seq;
	}
	frame->tick_ns = t_ns;
	/* With a counter, its numbering replaces the grid's (the first flip
	 * changes it): the next vblank is the next free tick. One flip is in
	 * flight at a time, so no later tick was claimed meanwhile. */
	if (msc || s->next_seq <= frame->seq)
		s->next_seq = frame->seq + 1;
	if (msc || s->paint_seq <= frame->seq)
		s->paint_seq = frame->seq + 1; /* a flip was painted */
	/* A repaint asked for while the flip was pending was aimed at the
	 * old grid. */
	if (s->scheduled && s->period_ns)
		schedule_target(s, now_ns);
	return t_ns;
}
