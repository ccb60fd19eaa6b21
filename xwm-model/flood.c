/* An X client that floods what the window manager reads is served after
 * the others.
 *
 * X gives a window manager no way to refuse events: a client changing its
 * properties, asking for configures or sending client messages as fast as
 * the server takes them makes the server write an event to us for each,
 * and the server's own scheduler shares its time so evenly that every
 * other client's requests then wait (a round trip of 0.3 ms takes 100 ms
 * to 1 s on Xvfb under such a client, window manager or not). What X does
 * offer is the SYNC extension's client priority, which the server's
 * scheduler puts before its own fairness: a client below the others is
 * served only when no other client has a request waiting. So each X
 * client's events are counted by the window they name; one that passes
 * FLOOD_EVENTS in a FLOOD_PERIOD_MS period gets priority -1 at once, with
 * a line naming it, and 0 again after a period of fewer than a tenth of
 * that (seen at its next event, or at the next batch of anyone's:
 * xwm_flood_sweep). A tenth, as a flooder served last still has the
 * server whenever the others wait (in the emulated guest, 700-800 events
 * a second: with one limit it went up and down each second). Events are
 * counted as we handle them: a window manager behind on the flood counts
 * it until it has caught up.
 *
 * Served after the others, it still has the server whenever they wait,
 * and a window manager slower at reading events than the server is at
 * making them (an ASan build: libxcb's memmove of its read buffer for
 * each event) would fall behind for good. So while it floods, the
 * window manager also stops listening to its windows' properties (half
 * of what a flood of titles, hints, configures and messages makes us
 * read), and reads them again once it is calm.
 *
 * That may still not be enough (ASan builds on a loaded machine, the
 * emulated guest): so while a client is lowered we measure how far
 * behind we are, with a probe, a property written on our own check
 * window every XWM_FLOOD_SWEEP_MS, whose PropertyNotify comes after
 * every event from before it. A probe not back after FLOOD_BEHIND_MS
 * means the flood outruns us even served last, and the lowered clients
 * that still flood since they were lowered (an event of theirs made
 * after our SetPriority, by its sequence) are killed (KillClient, through xwm_window_kill: its grab stops the
 * flood at once, and the kill waits for the backlog). A client that
 * stops costs us nothing more, and one that does not costs only itself,
 * as a Wayland client that does not read its socket is cut off. A
 * period's calm is believed only once we are caught up (the probe back
 * in under FLOOD_CAUGHT_UP_MS): a window manager stuck on a round trip
 * behind the flood handles few events, which is no calm.
 *
 * The count is by window, and any X client may change any window's
 * properties or ask to configure it: one client could make another look
 * like the flooder. X gives its clients that power in many other ways
 * (KillClient among them); the threat this answers is a client flooding
 * with its own windows, a bug or a runaway loop. */
#include <stdlib.h>
#include <time.h>

#include "model.h"

#define FLOOD_EVENTS 1000
#define FLOOD_CALM_EVENTS (FLOOD_EVENTS / 10)
#define FLOOD_PERIOD_MS 1000
#define FLOOD_PRIORITY (-1)
#define FLOOD_BEHIND_MS 1000
#define FLOOD_CAUGHT_UP_MS XWM_FLOOD_SWEEP_MS
/* XIDs carry the client's index above the resource id mask, below these
 * bits (the server's RESOURCE_ID_MASK). */
#define XID_BITS 29

struct flood_client {
	uint64_t period_start_ms;
	uint32_t count;
	bool lowered;
	bool unkillable;     /* lowered, and no window of its known to kill by */
	/* Our SetPriority's sequence, and whether an event of its came that
	 * the server made after it: it floods even served last. A burst sent
	 * before (thousands of requests at once, then nothing) may leave us
	 * seconds behind, but has ended: no reason to kill. */
	uint32_t lowered_sequence;
	bool after_lowered;
	bool killed;         /* until a probe sent after the kill is back */
	uint64_t killed_ms;
	xcb_window_t window; /* the latest counted: names the client */
};

struct xwm_flood {
	int shift;        /* bits of the resource id mask */
	uint32_t clients; /* entries in client[] */
	uint32_t own;     /* our own index, never counted */
	uint32_t lowered; /* clients lowered */
	uint64_t swept_ms;
	/* The probe: out since sent_ms, request sequence; lag_ms, the last
	 * one's way back. */
	bool probe_out;
	uint32_t probe_sequence;
	uint64_t probe_sent_ms;
	uint64_t lag_ms;
	uint32_t killed;  /* clients killed, their backlog still coming */
	struct flood_client client[];
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static struct xwm_flood *table(struct xwm *xwm)
{
	if (xwm->flood)
		return xwm->flood;
	const xcb_setup_t *setup = xcb_get_setup(xwm->conn);
	int shift = 0;
	while (shift < XID_BITS && (setup->resource_id_mask >> shift) & 1u)
		shift++;
	uint32_t clients = 1u << (XID_BITS - shift);
	struct xwm_flood *f = calloc(1, sizeof(*f) + clients * sizeof(f->client[0]));
	if (!f)
		return NULL;
	f->shift = shift;
	f->clients = clients;
	f->own = setup->resource_id_base >> shift;
	return xwm->flood = f;
}

static uint32_t set_priority(struct xwm *xwm, xcb_window_t window, int32_t priority)
{
	/* The window names its client; if it is gone by the time the
	 * server reads this, a BadMatch the event loop ignores. */
	return xcb_sync_set_priority(xwm->conn, window, priority).sequence;
}

/* Property changes of the client's managed windows heard, or not. */
static void listen_to_properties(struct xwm *xwm, struct xwm_flood *f, uint32_t index, bool on)
{
	uint32_t mask = on ? XCB_EVENT_MASK_PROPERTY_CHANGE : 0;
	for (struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_window *w = duet_container_of(l, struct xwm_window, link);
		if (((w->id >> f->shift) & (f->clients - 1)) != index || !xwm_window_managed(w))
			continue;
		xcb_change_window_attributes(xwm->conn, w->id, XCB_CW_EVENT_MASK, &mask);
		if (on)
			xwm_props_read_again(w);
	}
}

static void log_lowered(struct xwm *xwm, xcb_window_t window, uint32_t base, uint32_t count,
                        uint64_t ms)
{
	struct xwm_window *w = xwm_window_lookup(xwm, window);
	const char *name = w && w->client ? w->client->name : "";
	xwm_log("X client 0x%x floods the window manager (%u events for its windows in %u ms, "
	        "the latest for 0x%x \"%s\"): served after the other clients (SYNC priority %d), "
	        "its properties unheard, while it does", base, count, (unsigned)ms, window, name, FLOOD_PRIORITY);
}

/* Every event from before the last FLOOD_CAUGHT_UP_MS handled. */
static bool caught_up(const struct xwm_flood *f, uint64_t now)
{
	return f->lag_ms < FLOOD_CAUGHT_UP_MS &&
	       (!f->probe_out || now - f->probe_sent_ms < FLOOD_CAUGHT_UP_MS);
}

/* A period of c's ended by now: a client lowered that stayed under the
 * limit gets its priority back, if we are not behind on its events. */
static void roll_period(struct xwm *xwm, struct xwm_flood *f, uint32_t index, uint64_t now)
{
	struct flood_client *c = &f->client[index];
	if (now - c->period_start_ms < FLOOD_PERIOD_MS)
		return;
	if (c->lowered && c->count < FLOOD_CALM_EVENTS && caught_up(f, now)) {
		set_priority(xwm, c->window, 0);
		listen_to_properties(xwm, f, index, true);
		c->lowered = false;
		c->unkillable = false;
		f->lowered--;
		xwm_log("X client 0x%x no longer floods (%u events in its last %u ms): priority 0 "
		        "again", index << f->shift, c->count, FLOOD_PERIOD_MS);
	}
	c->period_start_ms = now;
	c->count = 0;
}

void xwm_flood_note(struct xwm *xwm, xcb_window_t window, uint32_t sequence)
{
	if (!xwm->has_sync || window == XCB_WINDOW_NONE)
		return;
	struct xwm_flood *f = table(xwm);
	if (!f)
		return;
	uint32_t index = (window >> f->shift) & (f->clients - 1);
	/* 0: the server's own (the root); ours: the check window. */
	if (index == 0 || index == f->own)
		return;
	struct flood_client *c = &f->client[index];
	/* What it queued before its kill. */
	if (c->killed)
		return;
	uint64_t now = now_ms();
	roll_period(xwm, f, index, now);
	c->window = window;
	/* An event's sequence is that of our last request the server had
	 * read when it made the event. */
	if (c->lowered && (int32_t)(sequence - c->lowered_sequence) >= 0)
		c->after_lowered = true;
	if (++c->count != FLOOD_EVENTS)
		return;
	/* Again each period it floods: the index may belong to a new client
	 * since, whose priority the server set back to 0. */
	uint32_t lowered_sequence = set_priority(xwm, window, FLOOD_PRIORITY);
	listen_to_properties(xwm, f, index, false);
	if (!c->lowered) {
		c->lowered_sequence = lowered_sequence;
		c->after_lowered = false;
		log_lowered(xwm, window, index << f->shift, c->count, now - c->period_start_ms);
		c->lowered = true;
		f->lowered++;
	}
}

/* A window of the client at index, to name it in KillClient: the one it
 * flooded with last, or any other of its we know. */
static struct xwm_window *window_of(struct xwm *xwm, struct xwm_flood *f, uint32_t index)
{
	struct xwm_window *w = xwm_window_lookup(xwm, f->client[index].window);
	if (w)
		return w;
	for (struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		w = duet_container_of(l, struct xwm_window, link);
		if (((w->id >> f->shift) & (f->clients - 1)) == index)
			return w;
	}
	return NULL;
}

static void kill_lowered(struct xwm *xwm, struct xwm_flood *f, uint64_t now)
{
	unsigned behind = (unsigned)(now - f->probe_sent_ms);
	for (uint32_t i = 1; i < f->clients; i++) {
		struct flood_client *c = &f->client[i];
		if (!c->lowered || c->unkillable || !c->after_lowered)
			continue;
		struct xwm_window *w = window_of(xwm, f, i);
		if (!w || !xwm_window_kill(w, NULL, NULL)) {
			/* KillClient by an id we do not know the window of could
			 * kill whoever has it now: it stays served last. */
			c->unkillable = true;
			xwm_log("X client 0x%x floods faster than the window manager reads, served "
			        "last (%u ms behind), with no window of its we know to kill it by",
			        i << f->shift, behind);
			continue;
		}
		c->lowered = false;
		f->lowered--;
		c->killed = true;
		c->killed_ms = now;
		f->killed++;
		xwm_log("X client 0x%x floods faster than the window manager reads, served last "
		        "(%u ms behind): killed (KillClient)", i << f->shift, behind);
	}
}

static void send_probe(struct xwm *xwm, struct xwm_flood *f, uint64_t now)
{
	uint32_t v = (uint32_t)now;
	f->probe_sequence = xcb_change_property(xwm->conn, XCB_PROP_MODE_REPLACE,
	                                        xwm->check_window, xwm->atoms._DUET_FLOOD_PROBE,
	                                        XCB_ATOM_CARDINAL, 32, 1, &v).sequence;
	f->probe_out = true;
	f->probe_sent_ms = now;
}

void xwm_flood_probe_back(struct xwm *xwm, uint32_t sequence)
{
	struct xwm_flood *f = xwm->flood;
	/* Only our own write's notify, which carries its sequence. */
	if (!f || !f->probe_out || f->probe_sequence != sequence)
		return;
	f->probe_out = false;
	f->lag_ms = now_ms() - f->probe_sent_ms;
	/* Every event of the killed from before their kill is handled. */
	for (uint32_t i = 1; i < f->clients && f->killed > 0; i++) {
		struct flood_client *c = &f->client[i];
		if (c->killed && c->killed_ms <= f->probe_sent_ms) {
			c->killed = false;
			c->count = 0;
			f->killed--;
		}
	}
}

void xwm_flood_sweep(struct xwm *xwm)
{
	struct xwm_flood *f = xwm->flood;
	if (!f || (f->lowered == 0 && f->killed == 0))
		return;
	uint64_t now = now_ms();
	if (f->probe_out && now - f->probe_sent_ms >= FLOOD_BEHIND_MS && f->lowered > 0)
		kill_lowered(xwm, f, now);
	if (now - f->swept_ms < XWM_FLOOD_SWEEP_MS)
		return;
	f->swept_ms = now;
	if (!f->probe_out)
		send_probe(xwm, f, now);
	for (uint32_t i = 1; i < f->clients && f->lowered > 0; i++)
		if (f->client[i].lowered)
			roll_period(xwm, f, i, now);
}

bool xwm_flood_lowered(const struct xwm *xwm)
{
	return xwm->flood && (xwm->flood->lowered > 0 || xwm->flood->killed > 0);
}

void xwm_flood_finish(struct xwm *xwm)
{
	free(xwm->flood);
	xwm->flood = NULL;
}
