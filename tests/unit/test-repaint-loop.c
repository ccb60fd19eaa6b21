/* The repaint loop both servers run (render/repaint-loop.c) on a fake
 * clock: a repaint whose deadline has come is due now (no timer), one
 * ahead arms the timer; duet-compositor's way (frames delivered on their
 * tick, the timer the tick's while a frame waits for it, a frame with
 * nothing to paint started on its tick, damage bringing the deadline
 * back); duet-xwm's way (delivered when finished, a repaint asked for
 * while a frame paints is armed, one the frame answered is withdrawn);
 * page flips; refresh 0; stop and resume. The timer is a real timerfd
 * armed for fake (long past) times: the test reads armed_ns instead of
 * waiting for it. */
#include "unit.h"

#define P 16666666ull /* 60 Hz */
#define W 7000000ull  /* its repaint window */

static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

/* What the callbacks saw, and what they are to do. */
struct probe {
	struct render_repaint_loop *loop;
	int painted, finished, delivered, due_calls;
	struct render_frame last_paint, last_delivered;
	uint64_t last_done;
	bool work;         /* has_work's answer */
	bool finish_empty; /* paint finishes at once, having painted nothing */
	bool refuse_due;   /* due cannot arrange a run */
};

static bool has_work(void *data)
{
	return ((struct probe *)data)->work;
}

static void paint(void *data, const struct render_frame *frame)
{
	struct probe *p = data;
	p->painted++;
	p->last_paint = *frame;
	if (p->finish_empty) {
		uint64_t t = fake_now < frame->tick_ns ? fake_now : frame->tick_ns;
		render_repaint_loop_finish(p->loop, false, t, NULL);
	}
}

static void finished(void *data, const struct render_frame *frame, uint64_t done_ns)
{
	(void)frame;
	(void)done_ns;
	((struct probe *)data)->finished++;
}

static void deliver(void *data, const struct render_frame *frame, uint64_t done_ns)
{
	struct probe *p = data;
	p->delivered++;
	p->last_delivered = *frame;
	p->last_done = done_ns;
}

static bool due(void *data)
{
	struct probe *p = data;
	p->due_calls++;
	return !p->refuse_due;
}

static const struct render_repaint_ops compositor_ops = {
	.paint = paint, .finished = finished, .deliver = deliver, .due = due,
};
static const struct render_repaint_ops xwm_ops = {
	.has_work = has_work, .paint = paint, .deliver = deliver,
};

static void start(struct render_repaint_loop *l, struct probe *p, int refresh_mhz,
                  unsigned int flags, const struct render_repaint_ops *ops)
{
	*p = (struct probe){ .loop = l, .work = true };
	CHECK(render_repaint_loop_init(l, refresh_mhz, flags, ops, p) == 0, "no timer");
	/* The grid is anchored on the fake clock, not the real one. */
	l->now = fake_clock;
	render_frame_sched_init(&l->sched, refresh_mhz, fake_now);
}

static void compositor_way(void)
{
	struct render_repaint_loop l;
	struct probe p;

	fake_now = 5000000000ull;
	const uint64_t g = fake_now + W; /* the tick idle damage puts the grid on */
	start(&l, &p, 60000, RENDER_REPAINT_DELIVER_ON_TICK, &compositor_ops);

	unit_say("damage on an idle output is due now: no timer, the caller is told once");
	render_repaint_loop_request(&l, true);
	CHECK(render_repaint_loop_due(&l) && p.due_calls == 1, "due %d, calls %d",
	      render_repaint_loop_due(&l), p.due_calls);
	CHECK(l.armed_ns == 0, "armed for %llu", (unsigned long long)l.armed_ns);
	render_repaint_loop_request(&l, true);
	CHECK(p.due_calls == 1, "told again");

	unit_say("the due run paints; its end before the tick waits for the tick on the timer");
	render_repaint_loop_run(&l);
	CHECK(p.painted == 1 && p.last_paint.paint && p.last_paint.tick_ns == g,
	      "painted %d paint %d tick %llu", p.painted, p.last_paint.paint,
	      (unsigned long long)p.last_paint.tick_ns);
	CHECK(l.state == RENDER_REPAINT_PAINTING, "state %d", l.state);
	fake_now += 3000000;
	CHECK(render_repaint_loop_finish(&l, true, fake_now, NULL), "finish refused");
	CHECK(p.finished == 1 && p.delivered == 0, "finished %d delivered %d", p.finished,
	      p.delivered);
	CHECK(l.state == RENDER_REPAINT_PRESENTING && l.armed_ns == g, "state %d armed %llu",
	      l.state, (unsigned long long)l.armed_ns);

	unit_say("a request while the frame waits for its tick leaves the tick's timer alone");
	render_repaint_loop_request(&l, false);
	CHECK(l.armed_ns == g && p.due_calls == 1, "armed %llu", (unsigned long long)l.armed_ns);

	unit_say("on the tick the frame is delivered, with its tick's time and done_ns; the "
	         "callbacks due next are armed for the next tick itself (nothing to paint)");
	fake_now = g;
	render_repaint_loop_timer(&l);
	CHECK(p.delivered == 1 && p.last_delivered.tick_ns == g &&
	      p.last_done == g - W + 3000000, "delivered %d tick %llu done %llu", p.delivered,
	      (unsigned long long)p.last_delivered.tick_ns, (unsigned long long)p.last_done);
	CHECK(l.state == RENDER_REPAINT_IDLE && l.on_tick && l.armed_ns == g + P,
	      "on tick %d armed %llu", l.on_tick, (unsigned long long)l.armed_ns);

	unit_say("damage meanwhile brings back the repaint window's head start");
	fake_now = g + 1000000;
	render_repaint_loop_request(&l, true);
	CHECK(!l.on_tick && l.armed_ns == g + P - W, "on tick %d armed %llu", l.on_tick,
	      (unsigned long long)l.armed_ns);
	fake_now = g + P - W;
	render_repaint_loop_timer(&l);
	CHECK(p.painted == 2 && p.last_paint.paint && p.last_paint.tick_ns == g + P,
	      "painted %d tick %llu", p.painted, (unsigned long long)p.last_paint.tick_ns);
	CHECK(render_repaint_loop_finish(&l, true, fake_now + 1000000, NULL), "finish");

	unit_say("a finish with no frame painting is refused; delivered on its tick, a frame "
	         "with nothing asked after it leaves the timer unarmed");
	CHECK(!render_repaint_loop_finish(&l, true, fake_now, NULL), "second finish taken");
	CHECK(l.armed_ns == g + P, "armed %llu", (unsigned long long)l.armed_ns);
	fake_now = g + P;
	render_repaint_loop_timer(&l);
	CHECK(p.delivered == 2 && l.state == RENDER_REPAINT_IDLE && l.armed_ns == 0,
	      "delivered %d state %d armed %llu", p.delivered, l.state,
	      (unsigned long long)l.armed_ns);

	unit_say("a frame with nothing to paint runs on its tick and is delivered in the same "
	         "wakeup");
	p.finish_empty = true;
	fake_now = g + P + 2000000;
	render_repaint_loop_request(&l, false);
	CHECK(l.on_tick && l.armed_ns == g + 2 * P, "on tick %d armed %llu", l.on_tick,
	      (unsigned long long)l.armed_ns);
	fake_now = g + 2 * P;
	render_repaint_loop_timer(&l);
	CHECK(p.painted == 3 && !p.last_paint.paint && p.delivered == 3 &&
	      p.last_delivered.tick_ns == g + 2 * P, "painted %d delivered %d tick %llu",
	      p.painted, p.delivered, (unsigned long long)p.last_delivered.tick_ns);
	p.finish_empty = false;

	unit_say("a due run the caller cannot arrange drops the repaint until the next request");
	p.refuse_due = true;
	fake_now = g + 10 * P;
	render_repaint_loop_request(&l, true);
	CHECK(!render_repaint_loop_due(&l) && !l.sched.scheduled, "due %d scheduled %d",
	      render_repaint_loop_due(&l), l.sched.scheduled);
	p.refuse_due = false;

	unit_say("stopped, nothing repaints or is delivered; resumed, seq goes on");
	render_repaint_loop_request(&l, true);
	CHECK(render_repaint_loop_due(&l), "not due");
	render_repaint_loop_run(&l);
	uint64_t seq = p.last_paint.seq;
	render_repaint_loop_stop(&l);
	CHECK(l.state == RENDER_REPAINT_IDLE && l.armed_ns == 0 && !render_repaint_loop_due(&l),
	      "state %d armed %llu", l.state, (unsigned long long)l.armed_ns);
	CHECK(!render_repaint_loop_finish(&l, true, fake_now, NULL), "finished while stopped");
	int painted = p.painted;
	render_repaint_loop_request(&l, true);
	render_repaint_loop_run(&l);
	render_repaint_loop_timer(&l);
	CHECK(p.painted == painted, "painted while stopped");
	fake_now += 100 * P;
	render_repaint_loop_resume(&l, 30000);
	render_repaint_loop_request(&l, true);
	render_repaint_loop_run(&l);
	CHECK(p.painted == painted + 1 && p.last_paint.seq > seq + 50 &&
	      p.last_paint.refresh_ns == 2 * P + 1, "painted %d seq %llu after %llu",
	      p.painted, (unsigned long long)p.last_paint.seq, (unsigned long long)seq);
	render_repaint_loop_fini(&l);
}

static void xwm_way(void)
{
	struct render_repaint_loop l;
	struct probe p;

	fake_now = 7000000000ull;
	start(&l, &p, 60000, 0, &xwm_ops);

	unit_say("without a due hook the caller asks before it sleeps");
	render_repaint_loop_request(&l, true);
	CHECK(render_repaint_loop_due(&l) && l.armed_ns == 0, "due %d",
	      render_repaint_loop_due(&l));
	render_repaint_loop_run(&l);
	CHECK(p.painted == 1 && l.state == RENDER_REPAINT_PAINTING, "painted %d", p.painted);

	unit_say("a request while the frame paints arms its deadline; the timer firing "
	         "meanwhile starts nothing");
	fake_now += 500000;
	render_repaint_loop_request(&l, false);
	uint64_t deadline = l.sched.deadline_ns;
	CHECK(l.armed_ns == deadline && deadline > fake_now, "armed %llu deadline %llu",
	      (unsigned long long)l.armed_ns, (unsigned long long)deadline);
	render_repaint_loop_timer(&l);
	CHECK(p.painted == 1, "painted %d", p.painted);

	unit_say("the frame is delivered as soon as it is finished, with that time");
	uint64_t done = fake_now + 1000000;
	fake_now = done;
	render_repaint_loop_finish(&l, true, done, NULL);
	CHECK(p.delivered == 1 && p.last_done == done && l.state == RENDER_REPAINT_IDLE,
	      "delivered %d done %llu", p.delivered, (unsigned long long)p.last_done);
	CHECK(l.sched.scheduled && l.armed_ns == deadline, "scheduled %d armed %llu",
	      l.sched.scheduled, (unsigned long long)l.armed_ns);

	unit_say("the repaint it asked for finds nothing to do at its deadline: withdrawn, "
	         "nothing painted");
	p.work = false;
	fake_now = deadline;
	render_repaint_loop_timer(&l);
	CHECK(p.painted == 1 && !l.sched.scheduled, "painted %d scheduled %d", p.painted,
	      l.sched.scheduled);

	unit_say("a request the frame in flight answered is withdrawn once it is delivered");
	p.work = true;
	fake_now += P;
	render_repaint_loop_request(&l, true);
	fake_now = l.sched.deadline_ns;
	if (render_repaint_loop_due(&l))
		render_repaint_loop_run(&l);
	else
		render_repaint_loop_timer(&l);
	CHECK(p.painted == 2, "painted %d", p.painted);
	render_repaint_loop_request(&l, false);
	p.work = false;
	render_repaint_loop_finish(&l, true, fake_now + 1000000, NULL);
	CHECK(p.delivered == 2 && !l.sched.scheduled, "delivered %d scheduled %d", p.delivered,
	      l.sched.scheduled);
	render_repaint_loop_fini(&l);
}

static void flips_and_unthrottled(void)
{
	struct render_repaint_loop l;
	struct probe p;

	fake_now = 9000000000ull;
	start(&l, &p, 60000, RENDER_REPAINT_DELIVER_ON_TICK | RENDER_REPAINT_DISPLAY_FLIPS,
	      &compositor_ops);
	unit_say("a flip's time and vblank count are the painted frame's");
	render_repaint_loop_request(&l, true);
	render_repaint_loop_run(&l);
	uint64_t msc = 1234, flip = fake_now + 5000000;
	fake_now = flip + 100000;
	render_repaint_loop_finish(&l, true, flip, &msc);
	CHECK(p.delivered == 1 && p.last_delivered.seq == msc &&
	      p.last_delivered.tick_ns == flip && p.last_done == flip,
	      "delivered %d seq %llu tick %llu", p.delivered,
	      (unsigned long long)p.last_delivered.seq,
	      (unsigned long long)p.last_delivered.tick_ns);
	CHECK(l.sched.display_clock, "the grid does not follow the display");
	render_repaint_loop_fini(&l);

	unit_say("refresh 0: due at once, delivered when finished");
	start(&l, &p, 0, RENDER_REPAINT_DELIVER_ON_TICK, &compositor_ops);
	for (int i = 1; i <= 3; i++) {
		render_repaint_loop_request(&l, true);
		CHECK(render_repaint_loop_due(&l) && l.armed_ns == 0, "frame %d not due now", i);
		render_repaint_loop_run(&l);
		fake_now += 1000000;
		render_repaint_loop_finish(&l, true, fake_now, NULL);
		CHECK(p.delivered == i && p.last_delivered.seq == (uint64_t)i &&
		      p.last_delivered.tick_ns == fake_now, "frame %d: delivered %d seq %llu", i,
		      p.delivered, (unsigned long long)p.last_delivered.seq);
	}
	render_repaint_loop_fini(&l);
}

int main(void)
{
	compositor_way();
	xwm_way();
	flips_and_unthrottled();
	return unit_finish("test-repaint-loop");
}
