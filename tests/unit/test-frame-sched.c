/* The frame scheduler (render/frame-sched.c) driven by a fake clock: a
 * request after an idle tick starts its repaint at once and sets the
 * grid's phase (never on a display that reports flips, never while a frame
 * is in flight), seq counts the periods that passed, a repaint starts a repaint window before its tick
 * and is presented on the tick (the next one if it missed it, never before
 * it was finished), a repaint asked only for due callbacks paints nothing,
 * one frame per tick, and refresh 0 repaints at once; a repaint the server
 * finds it does not need is withdrawn; page flips (KMS) with and without a
 * vblank counter. */
#include "unit.h"

#define P 16666666ull /* 60 Hz */
#define W 7000000ull  /* repaint window at 60 Hz: min(P / 2, 7 ms) */

/* Runs the repaint the scheduler asked for, as a server does when its
 * timer fires at the deadline: start, then finish after paint_ns. */
static struct render_frame fire(struct render_frame_sched *s, uint64_t paint_ns,
                                uint64_t *presented)
{
	struct render_frame f = { 0 };
	uint64_t at = s->deadline_ns;
	CHECK(render_frame_sched_start(s, at, &f), "no repaint due at its deadline %llu",
	      (unsigned long long)at);
	*presented = render_frame_sched_finish(s, &f, at + paint_ns);
	CHECK(*presented >= at + paint_ns, "presented %llu before the frame was finished %llu",
	      (unsigned long long)*presented, (unsigned long long)(at + paint_ns));
	CHECK(*presented == f.tick_ns, "presented %llu, frame tick %llu",
	      (unsigned long long)*presented, (unsigned long long)f.tick_ns);
	return f;
}

int main(void)
{
	struct render_frame_sched s;
	struct render_frame f;
	const uint64_t t0 = 5000000000ull; /* the anchor */
	uint64_t presented;

	unit_say("60 Hz (60000 mHz) is a 16666666 ns period; 59.94 Hz is 16683350 ns");
	render_frame_sched_init(&s, 60000, t0);
	CHECK(s.period_ns == P, "period %llu", (unsigned long long)s.period_ns);
	CHECK(s.window_ns == W, "repaint window %llu", (unsigned long long)s.window_ns);
	render_frame_sched_init(&s, 59940, t0);
	CHECK(s.period_ns == 16683350, "period %llu", (unsigned long long)s.period_ns);
	render_frame_sched_init(&s, 144000, t0);
	CHECK(s.window_ns == s.period_ns / 2, "window at 144 Hz %llu",
	      (unsigned long long)s.window_ns);

	unit_say("nothing asked, nothing to do: an idle output arms no timer");
	render_frame_sched_init(&s, 60000, t0);
	CHECK(!render_frame_sched_start(&s, t0 + 10 * P, &f), "repaint without a request");

	unit_say("the first request finds the output idle: its repaint starts at once, for a "
	         "tick one repaint window later (g), which sets the grid");
	const uint64_t g = t0 + W;
	CHECK(render_frame_sched_request(&s, t0, true), "first request must arm the timer");
	CHECK(s.deadline_ns == t0, "deadline %llu, now %llu", (unsigned long long)s.deadline_ns,
	      (unsigned long long)t0);
	f = fire(&s, 3000000, &presented);
	CHECK(f.paint, "damage must be painted");
	CHECK(f.seq == 0 && presented == g, "seq %llu presented %llu",
	      (unsigned long long)f.seq, (unsigned long long)presented);
	CHECK(f.refresh_ns == P, "refresh %llu", (unsigned long long)f.refresh_ns);

	unit_say("damage after a tick waits for the next one, and later requests join the "
	         "scheduled repaint");
	CHECK(render_frame_sched_request(&s, g + 1000, true), "arm");
	CHECK(s.deadline_ns == g + P - W, "deadline %llu", (unsigned long long)s.deadline_ns);
	CHECK(!render_frame_sched_request(&s, g + 2000, false), "second request re-armed");
	CHECK(!render_frame_sched_start(&s, s.deadline_ns - 1, &f), "started before its deadline");
	f = fire(&s, 1000000, &presented);
	CHECK(f.seq == 1 && presented == g + P, "seq %llu presented %llu",
	      (unsigned long long)f.seq, (unsigned long long)presented);

	unit_say("damage inside a tick's repaint window starts at once, for that tick");
	uint64_t now = g + 2 * P - 1000000;
	CHECK(render_frame_sched_request(&s, now, true), "arm");
	CHECK(s.deadline_ns == now, "deadline %llu, now %llu", (unsigned long long)s.deadline_ns,
	      (unsigned long long)now);
	f = fire(&s, 500000, &presented);
	CHECK(f.seq == 2 && presented == g + 2 * P, "seq %llu presented %llu",
	      (unsigned long long)f.seq, (unsigned long long)presented);

	unit_say("one frame per tick: asked again before that tick, the next frame is for "
	         "the following one");
	CHECK(render_frame_sched_request(&s, now + 600000, true), "arm");
	CHECK(s.deadline_ns == g + 3 * P - W, "deadline %llu", (unsigned long long)s.deadline_ns);
	f = fire(&s, 0, &presented);
	CHECK(f.seq == 3, "seq %llu", (unsigned long long)f.seq);

	unit_say("after idle ticks (8.5 periods with nothing) a request starts its repaint at "
	         "once, for a tick one repaint window later, not on the old grid");
	uint64_t later = g + 12 * P + P / 2;
	CHECK(render_frame_sched_request(&s, later, true), "arm");
	CHECK(s.deadline_ns == later, "deadline %llu, now %llu (the old grid's window starts "
	      "at %llu)", (unsigned long long)s.deadline_ns, (unsigned long long)later,
	      (unsigned long long)(g + 13 * P - W));
	f = fire(&s, 2000000, &presented);
	unit_say("seq goes on by the elapsed periods (3 -> 13), the time is the new tick");
	CHECK(f.seq == 13, "seq %llu after the idle periods", (unsigned long long)f.seq);
	CHECK(presented == later + W, "presented %llu, want %llu", (unsigned long long)presented,
	      (unsigned long long)(later + W));
	const uint64_t g2 = presented; /* tick 13 of the new phase */

	unit_say("a frame that misses its tick is presented on the next one, which the next "
	         "frame may not claim");
	render_frame_sched_request(&s, g2 + 10, true);
	f = fire(&s, W + 2000000, &presented);
	CHECK(f.seq == 15 && presented == g2 + 2 * P, "seq %llu presented %llu",
	      (unsigned long long)f.seq, (unsigned long long)presented);
	render_frame_sched_request(&s, g2 + P + W + 2000001, true);
	CHECK(s.deadline_ns == g2 + 3 * P - W, "deadline %llu", (unsigned long long)s.deadline_ns);
	f = fire(&s, 0, &presented);
	CHECK(f.seq == 16, "seq %llu", (unsigned long long)f.seq);

	unit_say("after a long idle (an hour) too, and seq counts the hour's periods");
	later = g2 + 3600ull * 1000000000ull + 123;
	render_frame_sched_request(&s, later, true);
	CHECK(s.deadline_ns == later, "deadline %llu, now %llu", (unsigned long long)s.deadline_ns,
	      (unsigned long long)later);
	f = fire(&s, 0, &presented);
	CHECK(presented == later + W, "presented %llu", (unsigned long long)presented);
	CHECK(f.seq == 13 + (later - g2 + P - 1) / P, "seq %llu", (unsigned long long)f.seq);

	unit_say("a frame that painted nothing does not keep the output busy: damage after its "
	         "tick starts at once (an X map's empty frame would otherwise set the phase "
	         "the window's content waits for), with the next seq");
	{
		struct render_frame_sched q;
		struct render_frame empty;
		uint64_t shown;
		render_frame_sched_init(&q, 60000, t0);
		CHECK(render_frame_sched_request(&q, t0, true), "arm");
		CHECK(render_frame_sched_start(&q, t0, &empty), "map frame");
		empty.paint = false; /* the window had no content yet */
		shown = render_frame_sched_finish(&q, &empty, t0 + 1000);
		CHECK(shown == g, "empty frame presented %llu", (unsigned long long)shown);
		uint64_t dmg = g + 2000000;
		CHECK(render_frame_sched_request(&q, dmg, true), "arm");
		CHECK(q.deadline_ns == dmg && q.target_seq == 1, "deadline %llu (now %llu) target %llu",
		      (unsigned long long)q.deadline_ns, (unsigned long long)dmg,
		      (unsigned long long)q.target_seq);
		CHECK(render_frame_sched_start(&q, dmg, &empty), "start");
		CHECK(render_frame_sched_finish(&q, &empty, dmg + 1000) == dmg + W && empty.seq == 1,
		      "presented at %llu seq %llu", (unsigned long long)empty.tick_ns,
		      (unsigned long long)empty.seq);
	}

	unit_say("no restart while a frame is in flight: a request a whole tick after an "
	         "unfinished frame's tick waits for the grid");
	{
		struct render_frame_sched q;
		struct render_frame busy;
		render_frame_sched_init(&q, 60000, t0);
		render_frame_sched_request(&q, t0, true);
		CHECK(render_frame_sched_start(&q, t0, &busy) && busy.seq == 0, "start");
		uint64_t late = g + 3 * P + 1000;
		CHECK(render_frame_sched_request(&q, late, true), "arm");
		CHECK(q.deadline_ns == g + 4 * P - W && q.target_seq == 4,
		      "deadline %llu (now %llu) target %llu", (unsigned long long)q.deadline_ns,
		      (unsigned long long)late, (unsigned long long)q.target_seq);
	}

	unit_say("a repaint with no new damage (frame callbacks or sync answers due) "
	         "paints nothing, still on the grid");
	uint64_t base = presented, base_seq = f.seq;
	CHECK(render_frame_sched_request(&s, base + 5, false), "arm");
	f = fire(&s, 0, &presented);
	CHECK(!f.paint, "painting asked with no damage");
	CHECK(presented == base + P && f.seq == base_seq + 1, "seq %llu presented %llu",
	      (unsigned long long)f.seq, (unsigned long long)presented);
	unit_say("damage reported after a due-only request makes that repaint paint");
	render_frame_sched_request(&s, base + P + 5, false);
	render_frame_sched_request(&s, base + P + 6, true);
	f = fire(&s, 0, &presented);
	CHECK(f.paint, "damage lost");
	unit_say("the next repaint after a painted one does not paint again without damage");
	render_frame_sched_request(&s, base + 2 * P + 5, false);
	f = fire(&s, 0, &presented);
	CHECK(!f.paint, "damage painted twice");

	unit_say("a frame that painted nothing leaves its tick to damage that comes before "
	         "the tick (an X map asks for a repaint before the window has content), but "
	         "not to callbacks due again");
	base = presented;
	CHECK(render_frame_sched_request(&s, base + 5, true), "arm");
	uint64_t at = s.deadline_ns;
	CHECK(render_frame_sched_start(&s, at, &f) && f.paint, "damage repaint not started");
	uint64_t tick = f.tick_ns, seq = f.seq;
	f.paint = false; /* the server found nothing to paint */
	presented = render_frame_sched_finish(&s, &f, at + 1000);
	CHECK(presented == tick, "unpainted frame presented %llu, its tick %llu",
	      (unsigned long long)presented, (unsigned long long)tick);
	CHECK(render_frame_sched_request(&s, at + 2000, true), "arm");
	CHECK(s.deadline_ns == at + 2000 && s.target_seq == seq,
	      "damage after an unpainted frame: deadline %llu (now %llu), seq %llu (free %llu)",
	      (unsigned long long)s.deadline_ns, (unsigned long long)(at + 2000),
	      (unsigned long long)s.target_seq, (unsigned long long)seq);
	f = fire(&s, 1000000, &presented);
	CHECK(f.paint && f.seq == seq && presented == tick, "painted seq %llu presented %llu",
	      (unsigned long long)f.seq, (unsigned long long)presented);
	unit_say("once painted, the tick is taken: more damage waits for the next one");
	CHECK(render_frame_sched_request(&s, at + 1002000, true), "arm");
	CHECK(s.target_seq == seq + 1 && s.deadline_ns == tick + P - W, "seq %llu deadline %llu",
	      (unsigned long long)s.target_seq, (unsigned long long)s.deadline_ns);
	f = fire(&s, 0, &presented);
	base = presented;
	CHECK(render_frame_sched_request(&s, base + 5, false), "arm");
	at = s.deadline_ns;
	CHECK(render_frame_sched_start(&s, at, &f) && !f.paint, "due-only repaint");
	seq = f.seq;
	render_frame_sched_finish(&s, &f, at + 1000);
	CHECK(render_frame_sched_request(&s, at + 2000, false), "arm");
	CHECK(s.target_seq == seq + 1, "callbacks due again aimed at seq %llu, the last %llu",
	      (unsigned long long)s.target_seq, (unsigned long long)seq);
	f = fire(&s, 0, &presented);

	unit_say("callbacks asked for again just after each answer (a client's frame loop "
	         "that draws nothing) are answered once per period, not a repaint window "
	         "after each request");
	for (int i = 0; i < 5; i++) {
		uint64_t before = presented;
		CHECK(render_frame_sched_request(&s, presented + 300000, false), "arm");
		f = fire(&s, 1000, &presented);
		CHECK(!f.paint && presented == before + P,
		      "loop frame %d presented %llu ns after the last (period %llu)", i,
		      (unsigned long long)(presented - before), (unsigned long long)P);
	}
	unit_say("damage after such a loop still restarts the idle grid: repaint at once");
	uint64_t dmg_at = presented + 2 * P + 100;
	CHECK(render_frame_sched_request(&s, dmg_at, true), "arm");
	CHECK(s.deadline_ns == dmg_at, "deadline %llu, now %llu", (unsigned long long)s.deadline_ns,
	      (unsigned long long)dmg_at);
	f = fire(&s, 1000, &presented);
	CHECK(f.paint && presented == dmg_at + W, "presented %llu", (unsigned long long)presented);

	unit_say("refresh 0: no grid, a repaint at once, presented when finished, seq "
	         "counts frames");
	render_frame_sched_init(&s, 0, t0);
	CHECK(s.period_ns == 0, "period %llu", (unsigned long long)s.period_ns);
	for (uint64_t i = 1; i <= 3; i++) {
		now = t0 + i * 1234567;
		CHECK(render_frame_sched_request(&s, now, true), "arm");
		CHECK(s.deadline_ns == now, "deadline %llu, now %llu",
		      (unsigned long long)s.deadline_ns, (unsigned long long)now);
		f = fire(&s, 500, &presented);
		CHECK(f.seq == i, "seq %llu", (unsigned long long)f.seq);
		CHECK(presented == now + 500, "presented %llu", (unsigned long long)presented);
		CHECK(f.refresh_ns == 0, "refresh %llu", (unsigned long long)f.refresh_ns);
	}
	render_frame_sched_request(&s, t0 + 9000000, false);
	f = fire(&s, 0, &presented);
	CHECK(!f.paint, "painting asked with no damage");

	unit_say("KMS: a flip with the display's vblank counter gives the frame that seq "
	         "and time, and the grid follows the display from there");
	render_frame_sched_init(&s, 60000, t0);
	render_frame_sched_request(&s, t0, true);
	CHECK(render_frame_sched_start(&s, s.deadline_ns, &f), "start");
	uint64_t msc = 5000, flip_ns = t0 + W + 300000;
	presented = render_frame_sched_flipped(&s, &f, flip_ns, &msc, flip_ns + 10);
	CHECK(presented == flip_ns && f.tick_ns == flip_ns && f.seq == 5000,
	      "presented %llu seq %llu", (unsigned long long)presented, (unsigned long long)f.seq);
	CHECK(render_frame_sched_request(&s, flip_ns + 1000, true), "arm");
	CHECK(s.deadline_ns == flip_ns + P - W, "deadline %llu, want a window before the "
	      "vblank after the flip", (unsigned long long)s.deadline_ns);
	CHECK(render_frame_sched_start(&s, s.deadline_ns, &f) && f.seq == 5001, "seq %llu",
	      (unsigned long long)f.seq);
	unit_say("a repaint asked for while a flip is pending moves to the display's grid");
	CHECK(render_frame_sched_request(&s, flip_ns + P - 1000, true), "arm while in flight");
	msc = 5001;
	uint64_t flip2_ns = flip_ns + P + 2000000; /* the display's vblank, later than ours */
	render_frame_sched_flipped(&s, &f, flip2_ns, &msc, flip2_ns + 10);
	CHECK(f.seq == 5001 && f.tick_ns == flip2_ns, "seq %llu", (unsigned long long)f.seq);
	CHECK(s.target_seq == 5002 && s.deadline_ns == flip2_ns + P - W,
	      "target %llu deadline %llu", (unsigned long long)s.target_seq,
	      (unsigned long long)s.deadline_ns);
	unit_say("a display that reported flips keeps its vblank grid through idle ticks");
	CHECK(render_frame_sched_start(&s, s.deadline_ns, &f) && f.seq == 5002, "start");
	msc = 5002;
	uint64_t flip3_ns = flip2_ns + P;
	render_frame_sched_flipped(&s, &f, flip3_ns, &msc, flip3_ns + 10);
	now = flip3_ns + 10 * P + P / 2;
	CHECK(render_frame_sched_request(&s, now, true), "arm");
	CHECK(s.deadline_ns == flip3_ns + 11 * P - W && s.target_seq == 5013,
	      "deadline %llu (now %llu) target %llu: moved off the display's vblanks",
	      (unsigned long long)s.deadline_ns, (unsigned long long)now,
	      (unsigned long long)s.target_seq);

	unit_say("the first flip's counter replaces the grid's numbering, even a smaller "
	         "one: the next frame is for the next vblank, not the grid's old tick");
	render_frame_sched_init(&s, 60000, t0);
	render_frame_sched_request(&s, t0 + 100 * P + 5, true);
	CHECK(render_frame_sched_start(&s, s.deadline_ns, &f) && f.seq == 101, "seq %llu",
	      (unsigned long long)f.seq);
	msc = 3;
	flip_ns = t0 + 101 * P + 100;
	render_frame_sched_flipped(&s, &f, flip_ns, &msc, flip_ns);
	render_frame_sched_request(&s, flip_ns + 1000, true);
	CHECK(s.target_seq == 4 && s.deadline_ns == flip_ns + P - W, "target %llu deadline %llu",
	      (unsigned long long)s.target_seq, (unsigned long long)s.deadline_ns);

	unit_say("KMS without a vblank counter: the grid paces and is not moved by flips; "
	         "a late flip counts as the first tick after it, seq never repeats");
	render_frame_sched_init(&s, 60000, t0);
	render_frame_sched_request(&s, t0, true);
	CHECK(render_frame_sched_start(&s, s.deadline_ns, &f) && f.seq == 0, "seq %llu",
	      (unsigned long long)f.seq);
	flip_ns = g - 1000; /* completed before its tick */
	presented = render_frame_sched_flipped(&s, &f, flip_ns, NULL, flip_ns);
	CHECK(presented == flip_ns && f.seq == 0, "presented %llu seq %llu",
	      (unsigned long long)presented, (unsigned long long)f.seq);
	render_frame_sched_request(&s, flip_ns + 10, true);
	CHECK(s.target_seq == 1 && s.deadline_ns == g + P - W, "target %llu deadline %llu",
	      (unsigned long long)s.target_seq, (unsigned long long)s.deadline_ns);
	CHECK(render_frame_sched_start(&s, s.deadline_ns, &f), "start");
	flip_ns = g + P + 5000; /* completed after its tick */
	render_frame_sched_flipped(&s, &f, flip_ns, NULL, flip_ns);
	CHECK(f.seq == 2 && f.tick_ns == flip_ns, "seq %llu", (unsigned long long)f.seq);
	render_frame_sched_request(&s, flip_ns + 10, true);
	CHECK(s.target_seq == 3, "target %llu", (unsigned long long)s.target_seq);

	unit_say("a repaint the server finds it does not need is withdrawn, damage or not; a "
	         "request after it arms the timer again and is painted");
	render_frame_sched_init(&s, 0, t0);
	CHECK(!render_frame_sched_withdraw(&s), "nothing scheduled, nothing to withdraw");
	CHECK(render_frame_sched_request(&s, t0, false), "due request must arm the timer");
	CHECK(render_frame_sched_withdraw(&s), "a due-only repaint was not withdrawn");
	CHECK(!s.scheduled && !render_frame_sched_start(&s, t0 + 1, &f),
	      "a withdrawn repaint still starts");
	CHECK(render_frame_sched_request(&s, t0 + 2, true), "a request after a withdrawal "
	      "must arm the timer again");
	render_frame_sched_request(&s, t0 + 3, false);
	CHECK(render_frame_sched_withdraw(&s) && !s.scheduled && !s.damage && !s.due,
	      "a repaint with damage was not withdrawn");
	CHECK(!render_frame_sched_start(&s, t0 + 4, &f), "a withdrawn repaint with damage "
	      "still starts");
	CHECK(render_frame_sched_request(&s, t0 + 5, true), "a request after a withdrawal "
	      "must arm the timer again");
	CHECK(render_frame_sched_start(&s, t0 + 6, &f) && f.paint && f.seq == 1,
	      "the damage was not painted as the first frame: seq %llu", (unsigned long long)f.seq);
	CHECK(!render_frame_sched_withdraw(&s), "nothing scheduled, nothing to withdraw");

	unit_say("on a grid, damage that restarted an idle output and was withdrawn leaves the "
	         "new phase: the next request is painted at once for the same tick");
	render_frame_sched_init(&s, 60000, t0);
	uint64_t idle = t0 + 10 * P;
	CHECK(render_frame_sched_request(&s, idle, true) && s.deadline_ns == idle,
	      "deadline %llu, now %llu", (unsigned long long)s.deadline_ns,
	      (unsigned long long)idle);
	uint64_t wtick = render_frame_sched_tick_ns(&s, s.target_seq), wseq = s.target_seq;
	CHECK(wtick == idle + W, "restarted tick %llu, request %llu", (unsigned long long)wtick,
	      (unsigned long long)idle);
	CHECK(render_frame_sched_withdraw(&s), "the repaint was not withdrawn");
	CHECK(render_frame_sched_request(&s, idle + 1000, true), "request after the withdrawal");
	CHECK(s.target_seq == wseq && s.deadline_ns == idle + 1000, "target %llu (was %llu) "
	      "deadline %llu", (unsigned long long)s.target_seq, (unsigned long long)wseq,
	      (unsigned long long)s.deadline_ns);
	f = fire(&s, 1000000, &presented);
	CHECK(f.paint && f.seq == wseq && presented == wtick, "seq %llu presented %llu, tick %llu",
	      (unsigned long long)f.seq, (unsigned long long)presented, (unsigned long long)wtick);

	unit_say("render_now_ns is monotonic and in nanoseconds");
	uint64_t a = render_now_ns(), b = render_now_ns();
	CHECK(b >= a, "clock went back");
	CHECK(a > 0, "zero clock");

	return unit_finish("test-frame-sched");
}
