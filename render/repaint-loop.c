/* The repaint cycle of duet-compositor's outputs and duet-xwm's overlay,
 * on the frame scheduler (frame-sched.c), which decides when; this file
 * turns its decisions into a timer, a repaint run before the event loop
 * sleeps, and the delivery of what each frame owes clients.
 *
 * A frame goes IDLE -> PAINTING (ops->paint; the caller paints, now or
 * once its contents arrive) -> finished (render_repaint_loop_finish: the
 * scheduler gives it its presentation time) -> PRESENTING until its tick
 * (RENDER_REPAINT_DELIVER_ON_TICK) or delivered at once -> IDLE, and the
 * repaint asked for meanwhile is armed. One timer serves both the
 * repaints' deadlines and the ticks frames wait for: a frame waiting for
 * its tick owns it, so requests then only tell the scheduler.
 *
 * A deadline that has come is not armed: the repaint is "due now" and
 * runs before the caller's loop next sleeps (duet-compositor's idle
 * source, duet-xwm's loop), which at refresh 0 is every repaint: a timer
 * set to fire at once would cost a timerfd_settime, a wakeup and a read
 * per frame. A timer left armed for an earlier deadline may still fire:
 * the scheduler then finds nothing due.
 */
#include <unistd.h>

#include "render-private.h"

static void arm(struct render_repaint_loop *l, uint64_t at_ns)
{
	render_timer_arm(l->timer_fd, at_ns);
	l->armed_ns = at_ns;
}

/* The scheduled repaint: the timer for its deadline, or due now. A frame
 * with nothing to paint whose delivery waits for its tick anyway is run on
 * its tick itself (the on-tick shortcut); damage that comes meanwhile
 * brings the deadline back (render_repaint_loop_request). */
static void arm_repaint(struct render_repaint_loop *l)
{
	const struct render_frame_sched *s = &l->sched;
	uint64_t next = s->deadline_ns;
	bool was_on_tick = l->on_tick;

	l->on_tick = false;
	if ((l->flags & RENDER_REPAINT_DELIVER_ON_TICK) && !s->damage && s->period_ns) {
		uint64_t tick = render_frame_sched_tick_ns(s, s->target_seq);
		if (tick > next) {
			next = tick;
			l->on_tick = true;
		}
	}
	if (next > l->now()) {
		arm(l, next);
		return;
	}
	if (was_on_tick)
		arm(l, 0); /* the repaint runs now instead */
	if (l->due_now)
		return;
	l->due_now = true;
	if (l->ops->due && !l->ops->due(l->data)) {
		/* Asked again by the next change. */
		l->due_now = false;
		render_frame_sched_withdraw(&l->sched);
	}
}

/* A repaint asked for that would paint and answer nothing is dropped;
 * true if there is one worth running. */
static bool worth_a_frame(struct render_repaint_loop *l)
{
	if (!l->sched.scheduled)
		return false;
	if (l->ops->has_work && !l->ops->has_work(l->data)) {
		render_frame_sched_withdraw(&l->sched);
		return false;
	}
	return true;
}

static void repaint(struct render_repaint_loop *l)
{
	if (l->stopped || l->state != RENDER_REPAINT_IDLE)
		return;
	if (!worth_a_frame(l) || !render_frame_sched_start(&l->sched, l->now(), &l->frame))
		return;
	l->state = RENDER_REPAINT_PAINTING;
	l->ops->paint(l->data, &l->frame);
}

static void deliver(struct render_repaint_loop *l)
{
	l->state = RENDER_REPAINT_IDLE;
	l->ops->deliver(l->data, &l->frame, l->done_ns);
	/* What asked for a frame while this one was on its way may have been
	 * done by it (duet-xwm: a client's finished frame it answered). */
	if (!l->stopped && l->state == RENDER_REPAINT_IDLE && worth_a_frame(l))
		arm_repaint(l);
}

int render_repaint_loop_init(struct render_repaint_loop *l, int refresh_mhz,
                             unsigned int flags, const struct render_repaint_ops *ops,
                             void *data)
{
	*l = (struct render_repaint_loop){
		.flags = flags,
		.ops = ops,
		.data = data,
		.now = render_now_ns,
	};
	render_frame_sched_init(&l->sched, refresh_mhz, l->now());
	l->timer_fd = render_timer_create();
	return l->timer_fd < 0 ? -1 : 0;
}

void render_repaint_loop_fini(struct render_repaint_loop *l)
{
	if (l->timer_fd >= 0)
		close(l->timer_fd);
	l->timer_fd = -1;
}

void render_repaint_loop_request(struct render_repaint_loop *l, bool damage)
{
	if (l->stopped)
		return;
	bool presenting = l->state == RENDER_REPAINT_PRESENTING;
	if (render_frame_sched_request(&l->sched, l->now(), damage)) {
		if (!presenting)
			arm_repaint(l);
	} else if (damage && l->on_tick && !presenting) {
		/* Damage for a frame that was to paint nothing: it needs its
		 * head start again. */
		arm_repaint(l);
	}
}

void render_repaint_loop_timer(struct render_repaint_loop *l)
{
	/* Readable when the caller's poll returned, but re-armed since (a
	 * frame finished by another source of the same wakeup now waits for
	 * its tick: timerfd_settime cleared the expiry): not this timer's
	 * time yet. */
	if (!render_timer_read(l->timer_fd))
		return;
	l->armed_ns = 0;
	if (l->stopped)
		return;
	if (l->state == RENDER_REPAINT_PRESENTING)
		deliver(l);
	else if (!l->due_now) /* else the due run takes it, after every event read */
		repaint(l);
}

bool render_repaint_loop_due(const struct render_repaint_loop *l)
{
	return l->due_now;
}

void render_repaint_loop_run(struct render_repaint_loop *l)
{
	if (!l->due_now)
		return;
	l->due_now = false;
	repaint(l);
}

bool render_repaint_loop_finish(struct render_repaint_loop *l, bool painted, uint64_t t_ns,
                                const uint64_t *msc)
{
	if (l->state != RENDER_REPAINT_PAINTING)
		return false;
	uint64_t at;
	l->frame.paint = painted;
	l->done_ns = t_ns;
	if (painted && (l->flags & RENDER_REPAINT_DISPLAY_FLIPS))
		at = render_frame_sched_flipped(&l->sched, &l->frame, t_ns, msc, l->now());
	else
		at = render_frame_sched_finish(&l->sched, &l->frame, t_ns);
	if (l->ops->finished)
		l->ops->finished(l->data, &l->frame, t_ns);
	if ((l->flags & RENDER_REPAINT_DELIVER_ON_TICK) && at > l->now()) {
		l->state = RENDER_REPAINT_PRESENTING;
		arm(l, at);
	} else {
		deliver(l);
	}
	return true;
}

void render_repaint_loop_stop(struct render_repaint_loop *l)
{
	l->stopped = true;
	l->state = RENDER_REPAINT_IDLE;
	l->on_tick = false;
	l->due_now = false;
	arm(l, 0);
}

void render_repaint_loop_resume(struct render_repaint_loop *l, int refresh_mhz)
{
	const struct render_frame_sched old = l->sched;
	uint64_t now = l->now();
	uint64_t seq = old.next_seq;

	if (old.period_ns && now > old.anchor_ns &&
	    old.anchor_seq + (now - old.anchor_ns) / old.period_ns > seq)
		seq = old.anchor_seq + (now - old.anchor_ns) / old.period_ns;
	render_frame_sched_init(&l->sched, refresh_mhz, now);
	l->sched.anchor_seq = l->sched.next_seq = l->sched.paint_seq = seq;
	l->sched.frames = old.frames;
	l->stopped = false;
}
