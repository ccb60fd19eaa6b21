/* Frame synchronization for Xwayland's X windows: what duet-xwm's sync.c
 * does for the X11 stack, with the compositor's frames instead of
 * duet-xwm's. The wire side (alarms, serials, the client messages) is the
 * model's (xwm-model/sync-proto.c); when a frame is shown is not: duet-xwm
 * fetches a window's Damage into its own repaint, here Xwayland commits
 * the window's wl_surface and an output's repaint presents it. Holding
 * content back differs too: duet-xwm just does not fetch it, here
 * Xwayland is asked not to commit (_XWAYLAND_ALLOW_COMMITS 0, which
 * Xwayland honours on a toplevel since 1.20, as mutter uses it).
 *
 * - Resize (the policy's configure is the analogue of xdg_toplevel's
 *   configure, the counter reaching its serial that of ack_configure and
 *   the next commit): before the ConfigureWindow, commits are held and
 *   _NET_WM_SYNC_REQUEST goes with a serial. The old content stays on
 *   screen, where it was, until the counter reaches the serial (or 100 ms
 *   pass, for clients that never answer); then commits are allowed and
 *   the first one, the window redrawn at its new size, moves the surface
 *   to the window's new place (xdg's move_on_ack).
 * - Frames (extended counter): an even value is a finished frame. Its
 *   content is the latest commit if one came since the last frame
 *   claimed one (Xwayland commits in the block handler after the
 *   client's requests, so usually before its AlarmNotify reaches us), else
 *   the next commit, waited for a grace period (a frame that changed
 *   nothing on screen has none; a frame finished while another still
 *   waits for its commit replaces it). Claimed frames are answered with
 *   _NET_WM_FRAME_DRAWN and _NET_WM_FRAME_TIMINGS by the first presented
 *   frame of their output painted after their commit, with that frame's
 *   presentation time (drawn is presented here: offset ~0, which GTK
 *   reads as unknown, hence 1 us; the frame delay is from the client's
 *   end of the frame). When several are shown at once only the latest is
 *   answered: the client counts those before it discarded, as they were
 *   replaced before the screen showed them (an unthrottled app at more
 *   than the output's rate).
 * Clients that lie (a counter never reaching the serial), die or destroy
 * their counters (the alarm turns inactive) only ever cost the timeouts;
 * requests about windows already gone fail as ignored X errors. */
#include <stdint.h>
#include <stdlib.h>

#include <xcb/xcb.h>

#include "xwm-types.h"

/* An unanswered resize shows anyway after this; --xwayland-sync-timeout
 * lengthens it (tests that must not depend on the machine's speed). */
#define SYNC_TIMEOUT_NS 100000000ull
#define PLACE_TIMEOUT_NS 100000000ull /* no commit after the wait: move anyway */
#define COMMIT_GRACE_NS 50000000ull   /* a finished frame's commit still to come */
#define FRAME_TIMEOUT_NS 200000000ull /* a frame no output presents (hidden) */

static uint64_t deadline_of(const struct comp_xsync *s)
{
	uint64_t first = UINT64_MAX;
#define EARLIER(t) do { if ((t) < first) first = (t); } while (0)
	if (s->waiting)
		EARLIER(s->wait_ns + s->timeout_ns);
	if (s->place_pending)
		EARLIER(s->place_ns);
	if (s->nclaimed)
		EARLIER(s->claimed[0].finished_ns + FRAME_TIMEOUT_NS);
	if (s->awaiting) {
		EARLIER(s->await_ns + FRAME_TIMEOUT_NS);
		if (!s->waiting) {
			uint64_t from = s->await_ns > s->released_ns ? s->await_ns : s->released_ns;
			EARLIER(from + COMMIT_GRACE_NS);
		}
	}
#undef EARLIER
	return first;
}

static bool x_usable(const struct xwm_content *c)
{
	return c->x && !c->wm->quiet;
}

/* The extended counter's alarm is one-shot: armed at the next even
 * value (a finished frame) while no frame is owed an answer, or while a
 * resize waits for its answer. An unthrottled client finishes many
 * frames per output frame: an alarm on every value cost two
 * AlarmNotify events per client frame, all but one per output frame
 * unused (issue 32's bench: 3.6 calls per client frame at duet-compositor
 * against weston's 0.07, whose window manager offers no frame timings).
 * Armed again once the owed frames are answered, it fires at once if the
 * client is past the value: the latest frame is the one answered, as
 * when several are shown at once. The arm request goes out with the
 * answer's messages. */
static void arm_alarm(struct xwm_content *c)
{
	struct comp_xsync *s = &c->sync;
	if (!s->one_shot || s->armed || !s->alarm || !x_usable(c))
		return;
	if (!s->waiting && (s->awaiting || s->nclaimed))
		return;
	s->armed = true;
	s->armed_at = (s->last_value | 1) + 1;
	xwm_sync_alarm_arm(&c->wm->xwm, s->alarm, s->armed_at);
	comp_xwm_schedule(c->wm);
}

/* Every entry point ends here: each window's alarm armed where it may be,
 * and the timer at the earliest deadline. */
static void rearm(struct comp_xwm *wm)
{
	uint64_t first = UINT64_MAX;
	struct xwm_content *c;
	wl_list_for_each(c, &wm->contents, link) {
		arm_alarm(c);
		uint64_t t = deadline_of(&c->sync);
		if (t < first)
			first = t;
	}
	if (!wm->sync_timer)
		return;
	if (first == UINT64_MAX) {
		wl_event_source_timer_update(wm->sync_timer, 0);
		return;
	}
	uint64_t now = render_now_ns();
	uint64_t ms = first > now ? (first - now + 999999) / 1000000 : 1;
	wl_event_source_timer_update(wm->sync_timer, ms ? (int)ms : 1);
}


static void set_allow_commits(struct xwm_content *c, bool allow)
{
	uint32_t v = allow;
	c->sync.commits_held = !allow;
	if (x_usable(c))
		xcb_change_property(c->wm->xwm.conn, XCB_PROP_MODE_REPLACE, c->x->id,
		                    c->wm->allow_commits, XCB_ATOM_CARDINAL, 32, 1, &v);
}

/* The wait is over (answered, timed out, or no answer can come): Xwayland
 * commits what the client drew, and the surface moves with that commit. */
static void release(struct xwm_content *c, const char *why)
{
	struct comp_xsync *s = &c->sync;
	if (!s->waiting)
		return;
	xwm_debug(&c->wm->xwm, "0x%x: sync request %lld %s", c->x ? c->x->id : 0,
	          (long long)s->serial, why);
	s->waiting = false;
	s->released_ns = render_now_ns();
	/* Commits made before the wait hold no frame finished since: the
	 * answer's frame comes with the first commit Xwayland may make now. */
	s->claimed_commits = s->commits;
	if (s->commits_held)
		set_allow_commits(c, true);
	s->place_pending = true;
	s->place_ns = s->released_ns + PLACE_TIMEOUT_NS;
	comp_xwm_schedule(c->wm);
}

/* The surface goes where its window is, now that its content came (or
 * the wait is over). */
static void place(struct xwm_content *c)
{
	c->sync.place_pending = false;
	struct comp_window *window = &c->window;
	if (!comp_xwindow_has_window(c) || !c->surface || !window->mapped)
		return;
	comp_surface_set_position(c->surface, window->x, window->y);
	comp_layout_repaint_damaged(window->server);
}

static void send_drawn(struct xwm_content *c, const struct comp_xsync_frame *f,
                       uint64_t t_ns, uint32_t refresh_ns)
{
	if (!x_usable(c))
		return;
	/* The frame delay: from the client's end of the frame to its
	 * presentation, in ms. */
	uint64_t delay_ms = t_ns > f->finished_ns ? (t_ns - f->finished_ns) / 1000000 : 0;
	xwm_sync_send_frame_drawn(c->x, f->serial, t_ns / 1000, 1, refresh_ns / 1000,
	                          delay_ms > 0x7fffffff ? 0x7fffffff : (uint32_t)delay_ms);
	comp_xwm_schedule(c->wm);
}

/* The latest of the first n claimed frames is on screen at t_ns: it is
 * answered; the ones before it were replaced unseen. */
static void answer_claimed(struct xwm_content *c, int n, uint64_t t_ns, uint32_t refresh_ns)
{
	struct comp_xsync *s = &c->sync;
	if (n <= 0)
		return;
	send_drawn(c, &s->claimed[n - 1], t_ns, refresh_ns);
	for (int i = n; i < s->nclaimed; i++)
		s->claimed[i - n] = s->claimed[i];
	s->nclaimed -= n;
}

static struct comp_output *frame_output(const struct xwm_content *c)
{
	return c->surface && c->surface->mapped ? c->surface->frame_output : NULL;
}


/* The awaited frame's content is in the commit made at repaint count r:
 * the first frame painted after it presents it. */
static void claim(struct xwm_content *c, uint64_t r)
{
	struct comp_xsync *s = &c->sync;
	struct comp_output *output = frame_output(c);
	struct comp_xsync_frame f = { s->await_serial, r, s->await_ns };
	s->awaiting = false;
	s->claimed_commits = s->commits;
	if (output && s->presented_repaint > r) {
		/* Its commit went by and was presented already. */
		answer_claimed(c, s->nclaimed, s->presented_ns, output->presenting_info.refresh_ns);
		send_drawn(c, &f, s->presented_ns, output->presenting_info.refresh_ns);
		return;
	}
	if (s->nclaimed == (int)(sizeof(s->claimed) / sizeof(s->claimed[0]))) {
		for (int i = 1; i < s->nclaimed; i++)
			s->claimed[i - 1] = s->claimed[i];
		s->nclaimed--;
	}
	s->claimed[s->nclaimed++] = f;
	if (output)
		comp_output_schedule_repaint(output);
	/* else nothing shows it: FRAME_TIMEOUT_NS answers */
}

static void handle_timer_content(struct xwm_content *c, uint64_t now)
{
	struct comp_xsync *s = &c->sync;
	if (s->waiting && now - s->wait_ns >= s->timeout_ns)
		release(c, "unanswered, shown anyway");
	if (s->place_pending && now >= s->place_ns)
		place(c);
	struct comp_output *output = frame_output(c);
	uint32_t refresh_ns = output ? output->presenting_info.refresh_ns : 0;
	/* Frames no output presents (a hidden window): answered late rather
	 * than never, so that a client pacing on them goes on. */
	if (s->nclaimed && now - s->claimed[0].finished_ns >= FRAME_TIMEOUT_NS)
		answer_claimed(c, s->nclaimed, now, refresh_ns);
	if (!s->awaiting)
		return;
	uint64_t from = s->await_ns > s->released_ns ? s->await_ns : s->released_ns;
	if (now - s->await_ns >= FRAME_TIMEOUT_NS || !output) {
		struct comp_xsync_frame f = { s->await_serial, 0, s->await_ns };
		s->awaiting = false;
		answer_claimed(c, s->nclaimed, now, refresh_ns);
		send_drawn(c, &f, now, refresh_ns);
	} else if (!s->waiting && now - from >= COMMIT_GRACE_NS) {
		/* No commit came: the frame changed nothing, or its commit
		 * went by already; the next presented frame answers it. */
		claim(c, output->repaints);
	}
}

static int handle_timer(void *data)
{
	struct comp_xwm *wm = data;
	uint64_t now = render_now_ns();
	struct xwm_content *c, *tmp;
	wl_list_for_each_safe(c, tmp, &wm->contents, link)
		handle_timer_content(c, now);
	rearm(wm);
	return 0;
}

static void handle_output_presented(struct wl_listener *listener, void *data)
{
	struct comp_xwm *wm = wl_container_of(listener, wm, output_presented);
	struct comp_output *output = data;
	const struct comp_frame_info *info = &output->presenting_info;
	struct xwm_content *c;
	wl_list_for_each(c, &wm->contents, link) {
		struct comp_xsync *s = &c->sync;
		if (frame_output(c) != output)
			continue;
		s->presented_repaint = info->repaint;
		s->presented_ns = info->t_ns;
		int n = 0;
		while (n < s->nclaimed && info->repaint > s->claimed[n].need_repaint)
			n++;
		answer_claimed(c, n, info->t_ns, info->refresh_ns);
	}
	rearm(wm);
}

void comp_xsync_committed(struct xwm_content *c)
{
	struct comp_xsync *s = &c->sync;
	struct comp_output *output = frame_output(c);
	s->commits++;
	s->commit_repaint = output ? output->repaints : 0;
	if (s->place_pending)
		place(c);
	if (s->awaiting && !s->waiting)
		claim(c, s->commit_repaint);
	arm_alarm(c);
}

static void destroy_alarm(struct xwm_content *c)
{
	if (c->sync.alarm && x_usable(c))
		xcb_sync_destroy_alarm(c->wm->xwm.conn, c->sync.alarm);
	c->sync.alarm = XCB_NONE;
}

static void alarm_fired(struct xwm_content *c, const xcb_sync_alarm_notify_event_t *ev)
{
	struct comp_xsync *s = &c->sync;
	int64_t value = xwm_sync_value(ev->counter_value);
	/* Only an active alarm reports a new value. One made inactive (its
	 * counter destroyed, as a client does on its way out) will report
	 * nothing more: no answer can come. A one-shot alarm turns inactive
	 * when it fires too; then it was armed and the value is past both
	 * its test value and the last one (a counter destroyed reports its
	 * value, short of the test, or comes while the alarm is unarmed). */
	bool fired = s->one_shot ? s->armed && value > s->last_value && value >= s->armed_at
	                         : ev->state == XCB_SYNC_ALARMSTATE_ACTIVE;
	if (!fired) {
		release(c, "cannot be answered: the counter is gone");
		s->awaiting = false;
		s->nclaimed = 0;
		if (s->one_shot)
			destroy_alarm(c);
		return;
	}
	s->armed = false;
	s->last_value = value;
	xwm_debug(&c->wm->xwm, "0x%x: alarm at %lld", c->x->id, (long long)value);
	bool ext = c->x->client && c->x->client->ext_counter;
	if (s->waiting && value >= s->serial && (!ext || !(value & 1)))
		release(c, "answered");
	if (!ext || (value & 1))
		return; /* a frame started: nothing to do yet */
	/* A frame awaited still is merged into this one: never shown alone. */
	s->awaiting = true;
	s->await_serial = s->latest_frame = value;
	s->await_ns = render_now_ns();
	/* Held commits: the frame's content comes after the release. */
	if (!s->waiting && s->commits > s->claimed_commits)
		claim(c, s->commit_repaint);
}

bool comp_xsync_handle_event(struct comp_xwm *wm, xcb_generic_event_t *ev)
{
	if (!wm->sync_event ||
	    (ev->response_type & 0x7f) != wm->sync_event + XCB_SYNC_ALARM_NOTIFY)
		return false;
	const xcb_sync_alarm_notify_event_t *an = (const xcb_sync_alarm_notify_event_t *)ev;
	struct xwm_content *c;
	wl_list_for_each(c, &wm->contents, link) {
		if (c->sync.alarm == an->alarm && c->x) {
			alarm_fired(c, an);
			break;
		}
	}
	rearm(wm);
	return true;
}


void comp_xsync_counters_changed(struct xwm_content *c)
{
	struct comp_xsync *s = &c->sync;
	const struct xwm_client *client = c->x->client;
	destroy_alarm(c);
	release(c, "dropped: the counters changed");
	s->awaiting = false;
	s->nclaimed = 0;
	if (!c->wm->sync_event || !client || c->wm->quiet)
		return;
	/* The basic counter needs no alarm of its own when there is an
	 * extended one: a sync request then names the extended one. */
	xcb_sync_counter_t watched = client->ext_counter ? client->ext_counter
	                                                 : client->sync_counter;
	s->one_shot = client->ext_counter != 0;
	s->armed = true;
	s->armed_at = s->last_value = INT64_MIN;
	if (watched)
		s->alarm = xwm_sync_alarm_create(&c->wm->xwm, watched, s->one_shot);
	xwm_debug(&c->wm->xwm, "0x%x: sync counters basic 0x%x extended 0x%x", c->x->id,
	          client->sync_counter, client->ext_counter);
	rearm(c->wm);
}

void comp_xsync_resizing(struct xwm_content *c)
{
	struct comp_xsync *s = &c->sync;
	const struct xwm_client *client = c->x->client;
	if (!client || !client->sync_request || !client->sync_counter || !s->alarm ||
	    !x_usable(c))
		return;
	bool ext = client->ext_counter != 0;
	s->serial = xwm_sync_next_serial(s->serial, s->latest_frame, ext);
	/* A drag sends one request per step: the wait (and its timeout)
	 * runs from the first unanswered one, so the screen follows at
	 * least every 100 ms whatever the client does. */
	if (!s->waiting) {
		s->waiting = true;
		s->wait_ns = render_now_ns();
		int ms = c->wm->server->options.xwayland_sync_timeout_ms;
		s->timeout_ns = ms > 0 ? (uint64_t)ms * 1000000ull : SYNC_TIMEOUT_NS;
	}
	if (!s->commits_held)
		set_allow_commits(c, false);
	xwm_sync_send_request(c->x, s->serial, ext);
	rearm(c->wm);
}

void comp_xsync_window_destroyed(struct xwm_content *c)
{
	destroy_alarm(c);
	c->sync.waiting = c->sync.place_pending = c->sync.awaiting = false;
	c->sync.nclaimed = 0;
	rearm(c->wm);
}

bool comp_xsync_init(struct comp_xwm *wm)
{
	xcb_connection_t *conn = wm->xwm.conn;
	const xcb_query_extension_reply_t *ext = xcb_get_extension_data(conn, &xcb_sync_id);
	xcb_intern_atom_reply_t *r = xcb_intern_atom_reply(conn,
		xcb_intern_atom(conn, 0, 23, "_XWAYLAND_ALLOW_COMMITS"), NULL);
	wm->allow_commits = r ? r->atom : XCB_ATOM_NONE;
	free(r);
	wm->output_presented.notify = handle_output_presented;
	wl_signal_add(&wm->server->output_presented, &wm->output_presented);
	wm->sync_timer = wl_event_loop_add_timer(wm->server->loop, handle_timer, wm);
	if (!ext || !ext->present || !wm->allow_commits || !wm->sync_timer)
		return false;
	wm->sync_event = ext->first_event;
	return true;
}

void comp_xsync_finish(struct comp_xwm *wm)
{
	if (wm->output_presented.notify)
		wl_list_remove(&wm->output_presented.link);
	wm->output_presented.notify = NULL;
	if (wm->sync_timer)
		wl_event_source_remove(wm->sync_timer);
	wm->sync_timer = NULL;
}
