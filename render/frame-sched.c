/* The frame scheduler both servers repaint by (duet-compositor's output,
 * duet-xwm's overlay): when to repaint, and which tick of the refresh grid
 * a frame belongs to.
 *
 * The grid stands in for vblank on outputs that have none (headless,
 * Xvfb): tick k is at anchor + k * period, anchored once when the output
 * starts. Like a display's vblank it runs on whether or not anything is
 * drawn, so an idle period never moves it, and a frame's seq is its tick
 * number: it advances by the periods that passed, as an MSC does.
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
 * The servers say what they need (new damage, or only frame callbacks /
 * sync answers that are due) and arm a timer for the deadline asked;
 * a repaint without damage paints nothing: it only tells clients that a
 * frame went by. Time is always an argument, never read here, so a unit
 * test drives the scheduler with a fake clock.
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
	return s->anchor_ns + seq * s->period_ns;
}

/* The first tick at or after t (never before tick 0). */
static uint64_t tick_at_or_after(const struct render_frame_sched *s, uint64_t t)
{
	if (t <= s->anchor_ns)
		return 0;
	return (t - s->anchor_ns + s->period_ns - 1) / s->period_ns;
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
	/* The first tick still ahead that no frame is presented on; its
	 * repaint starts now if its window has already begun. */
	uint64_t seq = tick_at_or_after(s, now_ns + 1);
	if (seq < s->next_seq)
		seq = s->next_seq;
	uint64_t tick = tick_ns(s, seq);
	s->target_seq = seq;
	s->deadline_ns = tick - s->window_ns > now_ns ? tick - s->window_ns : now_ns;
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
		s->next_seq = s->target_seq + 1;
	}
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
	if (done_ns > frame->tick_ns) {
		/* Missed its tick: presented on the first one after it was
		 * finished, which no later frame may claim. */
		frame->seq = tick_at_or_after(s, done_ns);
		frame->tick_ns = tick_ns(s, frame->seq);
		if (s->next_seq <= frame->seq)
			s->next_seq = frame->seq + 1;
	}
	return frame->tick_ns;
}
