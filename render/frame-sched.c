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
 * A frame for tick k is painted at tick k and presented on it: the
 * timestamp clients get is the tick (on the grid, as the presentation
 * protocol wants with a constant refresh), the pixels exist a paint time
 * later (the servers trace that time as "composited"). A frame started
 * late (a busy event loop) belongs to the last tick that passed. Without a
 * grid (refresh 0) a frame is painted as soon as it is asked for and is
 * presented when it is finished; seq then counts frames.
 *
 * The servers say what they need (new damage, or only frame callbacks /
 * sync answers that are due) and arm a timer for the deadline asked;
 * a repaint without damage paints nothing: it only tells clients that a
 * frame went by. Time is always an argument, never read here, so a unit
 * test drives the scheduler with a fake clock.
 */
#include "render-private.h"

void render_frame_sched_init(struct render_frame_sched *s, int refresh_mhz, uint64_t now_ns)
{
	*s = (struct render_frame_sched){ 0 };
	/* mHz, as wl_output and the presentation protocol count refresh. */
	s->period_ns = refresh_mhz > 0 ? 1000000000000ull / (uint64_t)refresh_mhz : 0;
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
	/* The next tick no frame has been for yet: one frame per tick. */
	uint64_t seq = tick_at_or_after(s, now_ns);
	if (seq < s->next_seq)
		seq = s->next_seq;
	s->target_seq = seq;
	s->deadline_ns = tick_ns(s, seq);
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
		/* Late (a busy loop): the frame is for the last tick passed. */
		uint64_t seq = (now_ns - s->anchor_ns) / s->period_ns;
		if (seq < s->target_seq)
			seq = s->target_seq;
		frame->seq = seq;
		frame->tick_ns = tick_ns(s, seq);
		s->next_seq = seq + 1;
	}
	s->scheduled = s->damage = s->due = false;
	return true;
}

uint64_t render_frame_sched_finish(const struct render_frame_sched *s,
                                   struct render_frame *frame, uint64_t done_ns)
{
	if (s->period_ns == 0)
		frame->tick_ns = done_ns;
	return frame->tick_ns;
}
