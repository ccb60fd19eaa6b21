/* duet-paint-count: counts a compositing manager's paints on an X display,
 * for the X11 stacks whose CM tells nobody when it paints (xcompmgr, picom,
 * mutter --x11, Enlightenment), so that their painted Hz can be read as
 * duet's servers, weston and sway give theirs.
 *
 * What it watches. The CM is whoever owns _NET_WM_CM_S<screen> (exit 2 if
 * nobody does). A DAMAGE object at ReportNonEmpty on the root window, and
 * one on the Composite overlay window when the CM holds it: xcompmgr paints
 * onto the root window, picom onto the overlay, mutter and Enlightenment
 * onto a window inside it. Apps' windows are redirected, so their drawing
 * lands in their pixmaps and damages neither: what raises a notify here is
 * what reaches the screen, the CM's paints. A window the CM leaves
 * unredirected draws onto the screen itself where it shows, and is counted
 * as well (target root).
 *
 * A window's damage covers what is drawn into its inferiors, and the
 * overlay is the root's child: a paint onto the overlay damages both, in
 * one request. After each notify both damages are emptied at once, so they
 * stay in step: the next paint onto the overlay raises one notify on each,
 * the overlay's first (its damage is made last, and the server reports the
 * newest first), with no request of this client between them (the same
 * sequence). The root's is that paint again and is not counted ("merged").
 *
 * The overlay is only taken from a CM that holds it. GetOverlayWindow
 * creates and maps it when no client holds one: a screen-sized window
 * above all others, which xcompmgr then composites as one more window,
 * painting without end (over 1000 paints a second with nothing drawing,
 * 2026-12-07). X-Resource says whether the CM's client holds one
 * (CompositeClientOverlay); without X-Resource only the root is watched,
 * which still sees every paint, the overlay's too. The reference taken is
 * released before exit, and as soon as the CM's selection window goes,
 * else it would keep the overlay up after the CM.
 *
 * Counting: a notify (ReportNonEmpty) comes when a damage goes from empty
 * to not empty; DamageSubtract(damage, None, None) on each, in answer,
 * empties them so that the next paint raises the next. Paints closer
 * together than that round trip merge into one: the count is a lower
 * bound. Its cost to the display: one DamageNotify per paint to this client
 * (two on the overlay), the subtracts back, and the server's bookkeeping of
 * the two regions.
 *
 * Output, JSON lines on stdout (CLOCK_MONOTONIC ns, jsonl.h), each
 * flushed as written:
 *   {"name":"paint_count_ready","ns":..,"root":"0x..","overlay":"0x..",
 *    "cm_owner":"0x.."}  counting from here; overlay "0x0": not watched
 *   {"name":"paint","ns":..,"target":"root"|"overlay"}  one per paint, ns
 *       when its notify was read
 *   {"name":"paint_count_cm_gone","ns":..}  the CM's selection window was
 *       destroyed; the root is still watched
 *   {"name":"paint_count_done","ns":..,"paints":N,"merged":N,"cpu_ns":..}
 * done comes on SIGTERM/SIGINT or --timeout-ms (exit 0), or when the
 * display is lost (exit 1). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <xcb/composite.h>
#include <xcb/damage.h>
#include <xcb/res.h>
#include <xcb/xcb.h>

#include "jsonl.h"

static const char usage[] =
	"Usage: duet-paint-count [--display :N] [--timeout-ms T]\n"
	"\n"
	"Counts the paints of the compositing manager (the owner of _NET_WM_CM_S0) on\n"
	"the X display (default $DISPLAY) with DAMAGE on the root window and on the\n"
	"Composite overlay window if the CM holds it, and prints JSON lines:\n"
	"paint_count_ready, one paint line per paint, paint_count_done (paints, own\n"
	"CPU time) on SIGTERM/SIGINT or after T ms.\n"
	"\n"
	"Exit status: 0 stopped, 1 cannot connect, an X error or the display lost,\n"
	"2 usage or nothing to count (no compositing manager, no DAMAGE or Composite).\n";

enum target { ROOT, OVERLAY, N_TARGETS };
static const char *const target_name[N_TARGETS] = { "root", "overlay" };

struct counter {
	xcb_connection_t *c;
	xcb_window_t root, overlay, cm_owner; /* overlay: XCB_NONE if not held */
	xcb_damage_damage_t damage[N_TARGETS];
	uint8_t notify; /* DamageNotify's event code */
	bool counting;  /* past the ready line */
	uint64_t paints, merged;
	/* The last notify answered, to know the root's copy of an overlay paint. */
	bool last_valid;
	enum target last_target;
	uint16_t last_sequence;
};

static int say(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(int status, const char *fmt, ...)
{
	va_list ap;
	fputs("duet-paint-count: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

static int parse_args(int argc, char **argv, const char **display, long *timeout_ms)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage, stdout);
			return 0;
		}
		if (!v || (strcmp(a, "--display") && strcmp(a, "--timeout-ms")))
			return say(2, "%s: %s\nTry 'duet-paint-count --help'.", a,
			           v ? "unknown option" : "missing value or unknown option");
		i++;
		if (a[2] == 'd') {
			*display = v;
			continue;
		}
		char *end;
		errno = 0;
		long n = strtol(v, &end, 10);
		if (errno || end == v || *end || n < 1 || n > LONG_MAX / 1000000)
			return say(2, "bad --timeout-ms: %s", v);
		*timeout_ms = n;
	}
	return -1;
}

static xcb_atom_t intern_reply(xcb_connection_t *c, xcb_intern_atom_cookie_t ck)
{
	xcb_intern_atom_reply_t *r = xcb_intern_atom_reply(c, ck, NULL);
	xcb_atom_t atom = r ? r->atom : XCB_NONE;
	free(r);
	return atom;
}

static xcb_intern_atom_cookie_t intern(xcb_connection_t *c, const char *name)
{
	return xcb_intern_atom(c, 0, (uint16_t)strlen(name), name);
}

/* Whether the client that made window holds a reference to the overlay,
 * which X-Resource lists as a resource of type CompositeClientOverlay. */
static bool holds_overlay(xcb_connection_t *c, xcb_window_t window, xcb_atom_t type)
{
	xcb_res_query_client_resources_reply_t *r = xcb_res_query_client_resources_reply(
		c, xcb_res_query_client_resources(c, window), NULL);
	bool holds = false;
	if (!r)
		return false;
	for (xcb_res_type_iterator_t it = xcb_res_query_client_resources_types_iterator(r);
	     it.rem; xcb_res_type_next(&it))
		holds |= it.data->resource_type == type && it.data->count > 0;
	free(r);
	return holds;
}

static bool make_damage(struct counter *k, enum target t, xcb_window_t window)
{
	k->damage[t] = xcb_generate_id(k->c);
	xcb_generic_error_t *err = xcb_request_check(k->c, xcb_damage_create_checked(
		k->c, k->damage[t], window, XCB_DAMAGE_REPORT_LEVEL_NON_EMPTY));
	if (!err)
		return true;
	say(1, "DamageCreate on the %s window 0x%" PRIx32 ": X error %u", target_name[t],
	    window, err->error_code);
	free(err);
	k->damage[t] = XCB_NONE;
	return false;
}

/* Connects and sets the watch up; -1 when ready, else the exit status
 * (the reason said on stderr). */
static int setup(struct counter *k, const char *display)
{
	int screen_no = 0;
	k->c = xcb_connect(display, &screen_no);
	if (xcb_connection_has_error(k->c))
		return say(1, "cannot connect to X display %s", display ? display : "($DISPLAY)");
	const xcb_query_extension_reply_t *damage = xcb_get_extension_data(k->c, &xcb_damage_id);
	const xcb_query_extension_reply_t *comp = xcb_get_extension_data(k->c, &xcb_composite_id);
	const xcb_query_extension_reply_t *res = xcb_get_extension_data(k->c, &xcb_res_id);
	if (!damage || !damage->present || !comp || !comp->present)
		return say(2, "the X display has no %s extension",
		           !damage || !damage->present ? "DAMAGE" : "Composite");
	k->notify = damage->first_event + XCB_DAMAGE_NOTIFY;
	xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(k->c));
	for (int i = 0; i < screen_no && it.rem; i++)
		xcb_screen_next(&it);
	k->root = it.data->root;

	char selection[32];
	snprintf(selection, sizeof(selection), "_NET_WM_CM_S%d", screen_no);
	xcb_intern_atom_cookie_t cm_ck = intern(k->c, selection);
	xcb_intern_atom_cookie_t type_ck = intern(k->c, "CompositeClientOverlay");
	/* The server refuses DAMAGE requests from a client that has not said
	 * which version it speaks. */
	free(xcb_damage_query_version_reply(k->c, xcb_damage_query_version(k->c, 1, 1), NULL));
	free(xcb_composite_query_version_reply(k->c, xcb_composite_query_version(k->c, 0, 4),
	                                       NULL));
	xcb_atom_t cm_atom = intern_reply(k->c, cm_ck), overlay_type = intern_reply(k->c, type_ck);
	xcb_get_selection_owner_reply_t *owner = xcb_get_selection_owner_reply(
		k->c, xcb_get_selection_owner(k->c, cm_atom), NULL);
	k->cm_owner = owner ? owner->owner : XCB_NONE;
	free(owner);
	if (k->cm_owner == XCB_NONE)
		return say(2, "nobody owns %s: no compositing manager runs on this display",
		           selection);
	/* Its DestroyNotify: the CM has gone, and the overlay must go with it. */
	uint32_t mask = XCB_EVENT_MASK_STRUCTURE_NOTIFY;
	xcb_generic_error_t *err = xcb_request_check(k->c, xcb_change_window_attributes_checked(
		k->c, k->cm_owner, XCB_CW_EVENT_MASK, &mask));
	if (err) {
		free(err);
		return say(2, "the owner of %s (0x%" PRIx32 ") went away", selection, k->cm_owner);
	}
	if (!res || !res->present)
		say(0, "no X-Resource extension: watching the root window only");
	else if (holds_overlay(k->c, k->cm_owner, overlay_type)) {
		xcb_composite_get_overlay_window_reply_t *o = xcb_composite_get_overlay_window_reply(
			k->c, xcb_composite_get_overlay_window(k->c, k->root), NULL);
		k->overlay = o ? o->overlay_win : XCB_NONE;
		free(o);
	}
	/* The overlay's last: its notify then comes before the root's. */
	if (!make_damage(k, ROOT, k->root) || (k->overlay && !make_damage(k, OVERLAY, k->overlay)))
		return 1;
	return -1;
}

static void release_overlay(struct counter *k)
{
	if (!k->overlay)
		return;
	xcb_damage_destroy(k->c, k->damage[OVERLAY]);
	xcb_composite_release_overlay_window(k->c, k->root);
	k->damage[OVERLAY] = XCB_NONE;
	k->overlay = XCB_NONE;
	k->last_valid = false;
}

static void on_notify(struct counter *k, const xcb_damage_notify_event_t *n)
{
	enum target t = n->damage == k->damage[OVERLAY] && k->overlay ? OVERLAY : ROOT;
	if (n->damage != k->damage[t])
		return; /* the overlay's, released since */
	if (k->last_valid && k->last_target != t && k->last_sequence == n->sequence) {
		/* The same request drew onto both: one paint, whose damage the
		 * subtracts sent for the first notify cleared. */
		k->merged++;
		k->last_valid = false;
		return;
	}
	/* Both at once, so that the two stay in step: the next paint onto the
	 * overlay raises one notify on each, from one request. */
	for (int i = 0; i < N_TARGETS; i++)
		if (k->damage[i])
			xcb_damage_subtract(k->c, k->damage[i], XCB_NONE, XCB_NONE);
	k->last_valid = true;
	k->last_target = t;
	k->last_sequence = n->sequence;
	if (!k->counting)
		return;
	k->paints++;
	emit("{\"name\":\"paint\",\"ns\":%" PRIu64 ",\"target\":\"%s\"}", now_ns(),
	     target_name[t]);
}

static void on_event(struct counter *k, xcb_generic_event_t *ev)
{
	uint8_t type = ev->response_type & 0x7f;
	if (type == k->notify) {
		on_notify(k, (const xcb_damage_notify_event_t *)ev);
	} else if (type == XCB_DESTROY_NOTIFY &&
	           ((const xcb_destroy_notify_event_t *)ev)->window == k->cm_owner) {
		release_overlay(k);
		emit("{\"name\":\"paint_count_cm_gone\",\"ns\":%" PRIu64 "}", now_ns());
	} else if (type == 0) {
		const xcb_generic_error_t *e = (const xcb_generic_error_t *)ev;
		say(0, "X error %u (request %u.%u)", e->error_code, e->major_code, e->minor_code);
	}
}

/* Handles every event read so far without reading more; whether any was. */
static bool drain_queued(struct counter *k)
{
	bool any = false;
	xcb_generic_event_t *ev;
	while ((ev = xcb_poll_for_queued_event(k->c))) {
		on_event(k, ev);
		free(ev);
		any = true;
	}
	return any;
}

/* Until a stop signal, the deadline or the display lost: 0, 0, 1. */
static int count(struct counter *k, int sigfd, uint64_t deadline)
{
	struct pollfd fds[2] = {
		{ .fd = xcb_get_file_descriptor(k->c), .events = POLLIN },
		{ .fd = sigfd, .events = POLLIN },
	};
	for (;;) {
		xcb_generic_event_t *ev;
		while ((ev = xcb_poll_for_event(k->c))) {
			on_event(k, ev);
			free(ev);
		}
		if (xcb_connection_has_error(k->c))
			return say(1, "lost the X display");
		/* A flush that has to wait also reads: those events are queued,
		 * and poll() would not wake for them. */
		do
			xcb_flush(k->c);
		while (drain_queued(k));
		int timeout = -1;
		if (deadline) {
			uint64_t now = now_ns();
			if (now >= deadline)
				return 0;
			uint64_t ms = (deadline - now + 999999u) / 1000000u;
			timeout = ms > INT_MAX ? INT_MAX : (int)ms;
		}
		if (poll(fds, 2, timeout) < 0 && errno != EINTR)
			return say(1, "poll: %s", strerror(errno));
		if (fds[1].revents)
			return 0;
	}
}

int main(int argc, char **argv)
{
	const char *display = NULL;
	long timeout_ms = 0;
	int status = parse_args(argc, argv, &display, &timeout_ms);
	if (status >= 0)
		return status;
	/* Blocked from the start: a stop during the setup's round trips is
	 * read from the signalfd at the first poll. */
	sigset_t stops;
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	sigprocmask(SIG_BLOCK, &stops, NULL);
	int sigfd = signalfd(-1, &stops, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0)
		return say(1, "signalfd: %s", strerror(errno));

	struct counter k = { 0 };
	status = setup(&k, display);
	if (status < 0) {
		/* The round trip puts the damage made so far (the whole window, at
		 * DamageCreate) before the ready line: those notifies are subtracted,
		 * not counted. */
		free(xcb_get_input_focus_reply(k.c, xcb_get_input_focus(k.c), NULL));
		drain_queued(&k);
		xcb_flush(k.c);
		k.counting = true;
		const uint64_t start = now_ns();
		emit("{\"name\":\"paint_count_ready\",\"ns\":%" PRIu64 ",\"root\":\"0x%" PRIx32
		     "\",\"overlay\":\"0x%" PRIx32 "\",\"cm_owner\":\"0x%" PRIx32 "\"}",
		     start, k.root, k.overlay, k.cm_owner);
		status = count(&k, sigfd, timeout_ms ? start + (uint64_t)timeout_ms * 1000000u : 0);
		if (!xcb_connection_has_error(k.c)) {
			/* Released and seen done before the done line says so. */
			release_overlay(&k);
			free(xcb_get_input_focus_reply(k.c, xcb_get_input_focus(k.c), NULL));
		}
		emit("{\"name\":\"paint_count_done\",\"ns\":%" PRIu64 ",\"paints\":%" PRIu64
		     ",\"merged\":%" PRIu64 ",\"cpu_ns\":%" PRIu64 "}",
		     now_ns(), k.paints, k.merged, cpu_ns());
	}
	xcb_disconnect(k.c);
	close(sigfd);
	return status;
}
