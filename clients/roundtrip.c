/* duet-roundtrip: what one round trip costs (issue 14), in groups of
 * round trips timed as a whole, as the Wine/Longene message-passing table
 * did (10 groups of 100).
 *
 *   duet-roundtrip server   the display server: wl_display.sync (Wayland),
 *                           GetInputFocus (X11, a request with a reply that
 *                           touches no window)
 *   duet-roundtrip wm       X11 only: app -> X server -> WM -> X server ->
 *                           app. A _NET_REQUEST_FRAME_EXTENTS ClientMessage
 *                           for an unmapped window of ours, which the WM
 *                           answers by setting _NET_FRAME_EXTENTS on it; the
 *                           trip ends with our PropertyNotify. (On Wayland
 *                           the WM is the server: `server` is that hop.)
 *   duet-roundtrip pipe | unix
 *                           the floor: a one-byte ping-pong between this
 *                           process and a child over two pipes or a Unix
 *                           socket pair; --cpus 1 pins both to CPU 0, --cpus
 *                           2 to CPUs 0 and 1 (default: not pinned)
 *   duet-roundtrip pipe-self
 *                           the same write + read of one byte on a pipe of
 *                           this process alone: pipe's syscalls without its
 *                           two context switches, so (pipe --cpus 1 -
 *                           pipe-self) / 2 is what one switch costs
 *                           (lmbench lat_ctx's way; bench/duet_bench/
 *                           switches.py)
 *
 * Options: --groups N (10), --trips N (100 per group), --backend
 * wayland|x11 (default: WAYLAND_DISPLAY, then DISPLAY).
 * Output ($DUET_TRACE, else stdout): one roundtrip_group line per group
 * {"kind","group","trips","ns"}, then roundtrip_done {"kind","groups",
 * "trips","median_trip_ns","switches"} (this process's voluntary +
 * involuntary context switches during the groups; for the floor then a
 * roundtrip_peer line with the child's over its life). Exit 1 if the display or the WM never
 * answers (wm: 2 s per trip), 2 on bad usage.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wayland-client.h>
#include <xcb/xcb.h>

#include "app-common.h"

struct opts {
	const char *kind;
	const char *backend;
	long groups, trips, cpus;
};

static long switches(int who)
{
	struct rusage ru;
	return getrusage(who, &ru) == 0 ? ru.ru_nvcsw + ru.ru_nivcsw : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Times groups of trips of one(); reports each group and the median. */
static int run_groups(const struct opts *o, int (*one)(void *), void *data)
{
	uint64_t *per_trip = calloc((size_t)o->groups, sizeof(*per_trip));
	if (!per_trip)
		return 1;
	if (one(data) < 0) /* a first trip outside the groups: connection warm */
		return 1;
	long sw0 = switches(RUSAGE_SELF);
	for (long g = 0; g < o->groups && !app_quit; g++) {
		uint64_t t0 = tk_now_ns();
		for (long i = 0; i < o->trips; i++)
			if (one(data) < 0) {
				fprintf(stderr, "duet-roundtrip: %s trip %ld of group %ld failed\n",
				        o->kind, i, g);
				return 1;
			}
		uint64_t ns = tk_now_ns() - t0;
		per_trip[g] = ns / (uint64_t)o->trips;
		tk_trace("roundtrip_group", "\"kind\":\"%s\",\"group\":%ld,\"trips\":%ld,\"ns\":%llu",
		         o->kind, g, o->trips, (unsigned long long)ns);
	}
	long sw = switches(RUSAGE_SELF) - sw0;
	qsort(per_trip, (size_t)o->groups, sizeof(*per_trip), cmp_u64);
	tk_trace("roundtrip_done", "\"kind\":\"%s\",\"groups\":%ld,\"trips\":%ld,"
	         "\"median_trip_ns\":%llu,\"switches\":%ld", o->kind, o->groups, o->trips,
	         (unsigned long long)per_trip[o->groups / 2], sw);
	free(per_trip);
	return 0;
}

/* ------------------------------------------------------------- Wayland */
static int wl_one(void *data)
{
	return wl_display_roundtrip(data) < 0 ? -1 : 0;
}

static int wayland_server(const struct opts *o)
{
	struct wl_display *d = wl_display_connect(NULL);
	if (!d) {
		fprintf(stderr, "duet-roundtrip: cannot connect to the Wayland display\n");
		return 1;
	}
	int r = run_groups(o, wl_one, d);
	wl_display_disconnect(d);
	return r;
}

/* ----------------------------------------------------------------- X11 */
struct x11 {
	xcb_connection_t *c;
	xcb_window_t root, win;
	xcb_atom_t request, extents;
};

static int x11_server_one(void *data)
{
	struct x11 *x = data;
	free(xcb_get_input_focus_reply(x->c, xcb_get_input_focus(x->c), NULL));
	return xcb_connection_has_error(x->c) ? -1 : 0;
}

static int x11_wm_one(void *data)
{
	struct x11 *x = data;
	xcb_client_message_event_t ev = {
		.response_type = XCB_CLIENT_MESSAGE, .format = 32, .window = x->win,
		.type = x->request,
	};
	xcb_send_event(x->c, 0, x->root,
	               XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
	               (const char *)&ev);
	xcb_flush(x->c);
	uint64_t deadline = tk_now_ns() + 2000000000ull;
	for (;;) {
		xcb_generic_event_t *e;
		while ((e = xcb_poll_for_event(x->c))) {
			bool done = (e->response_type & 0x7f) == XCB_PROPERTY_NOTIFY &&
			            ((xcb_property_notify_event_t *)e)->atom == x->extents;
			free(e);
			if (done)
				return 0;
		}
		if (xcb_connection_has_error(x->c) || tk_now_ns() > deadline)
			return -1;
		struct pollfd p = { .fd = xcb_get_file_descriptor(x->c), .events = POLLIN };
		poll(&p, 1, 100);
	}
}

static xcb_atom_t intern(xcb_connection_t *c, const char *name)
{
	xcb_intern_atom_reply_t *r =
		xcb_intern_atom_reply(c, xcb_intern_atom(c, 0, (uint16_t)strlen(name), name), NULL);
	xcb_atom_t a = r ? r->atom : XCB_ATOM_NONE;
	free(r);
	return a;
}

static int x11(const struct opts *o, bool wm)
{
	struct x11 x = { 0 };
	int screen_num;
	x.c = xcb_connect(NULL, &screen_num);
	if (xcb_connection_has_error(x.c)) {
		fprintf(stderr, "duet-roundtrip: cannot connect to X display '%s'\n",
		        getenv("DISPLAY") ? getenv("DISPLAY") : "");
		return 1;
	}
	xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(x.c));
	for (int i = 0; i < screen_num && it.rem; i++)
		xcb_screen_next(&it);
	x.root = it.data->root;
	int r;
	if (wm) {
		x.request = intern(x.c, "_NET_REQUEST_FRAME_EXTENTS");
		x.extents = intern(x.c, "_NET_FRAME_EXTENTS");
		x.win = xcb_generate_id(x.c);
		uint32_t mask = XCB_EVENT_MASK_PROPERTY_CHANGE;
		xcb_create_window(x.c, XCB_COPY_FROM_PARENT, x.win, x.root, 0, 0, 100, 100, 0,
		                  XCB_WINDOW_CLASS_INPUT_OUTPUT, XCB_COPY_FROM_PARENT,
		                  XCB_CW_EVENT_MASK, &mask);
		r = run_groups(o, x11_wm_one, &x);
		if (r)
			fprintf(stderr, "duet-roundtrip: the window manager did not answer "
			        "_NET_REQUEST_FRAME_EXTENTS within 2 s\n");
	} else {
		r = run_groups(o, x11_server_one, &x);
	}
	xcb_disconnect(x.c);
	return r;
}

/* ---------------------------------------------------------------- floor */
struct floor_fds {
	int out, in;
};

static int floor_one(void *data)
{
	struct floor_fds *f = data;
	char b = 'p';
	if (write(f->out, &b, 1) != 1 || read(f->in, &b, 1) != 1)
		return -1;
	return 0;
}

static void pin(long cpus, int which)
{
	if (cpus <= 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpus == 1 ? 0 : which, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		perror("duet-roundtrip: sched_setaffinity");
}

static int floor_run(const struct opts *o, bool unix_socket)
{
	/* Pipes: we write a[1] and read b[0], the child the other ends. A
	 * socket pair: we use a[0], the child a[1]. */
	int a[2], b[2] = { -1, -1 };
	if (unix_socket ? socketpair(AF_UNIX, SOCK_STREAM, 0, a) < 0 : pipe(a) < 0 || pipe(b) < 0)
		return 1;
	struct floor_fds me = { unix_socket ? a[0] : a[1], unix_socket ? a[0] : b[0] };
	int child_in = unix_socket ? a[1] : a[0], child_out = unix_socket ? a[1] : b[1];
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		/* Only its own ends, so our close is its end of file. */
		close(me.out);
		if (me.in != me.out)
			close(me.in);
		pin(o->cpus, 1);
		char c;
		while (read(child_in, &c, 1) == 1)
			if (write(child_out, &c, 1) != 1)
				break;
		_exit(0);
	}
	close(child_in);
	if (child_out != child_in)
		close(child_out);
	pin(o->cpus, 0);
	int r = run_groups(o, floor_one, &me);
	close(me.out);
	if (!unix_socket)
		close(me.in);
	waitpid(pid, NULL, 0);
	tk_trace("roundtrip_peer", "\"kind\":\"%s\",\"switches\":%ld", o->kind,
	         switches(RUSAGE_CHILDREN));
	return r;
}

/* No peer: the one-byte write lands in our own pipe and the read takes it
 * straight back, so nothing blocks and nothing switches. */
static int floor_self(const struct opts *o)
{
	int a[2];
	if (pipe(a) < 0)
		return 1;
	pin(o->cpus, 0);
	struct floor_fds me = { a[1], a[0] };
	int r = run_groups(o, floor_one, &me);
	close(a[0]);
	close(a[1]);
	return r;
}

static const char usage[] =
	"usage: duet-roundtrip server|wm|pipe|unix|pipe-self [--groups N] [--trips N] "
	"[--cpus 1|2] [--backend wayland|x11]\n";

int main(int argc, char **argv)
{
	struct opts o = { .groups = 10, .trips = 100 };
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	o.kind = argv[1];
	const struct app_opt options[] = {
		APP_LONG("--groups", &o.groups, 1, 100000),
		APP_LONG("--trips", &o.trips, 1, 1000000),
		APP_LONG("--cpus", &o.cpus, 1, 2),
		APP_CHOICE("--backend", &o.backend, app_backend_names),
		APP_OPT_END,
	};
	/* The options follow the kind. */
	int parsed = app_parse_args("duet-roundtrip", usage, argc - 1, argv + 1, options);
	if (parsed != APP_ARGS_RUN)
		return parsed;
	app_install_signals();
	if (strcmp(o.kind, "pipe-self") == 0)
		return floor_self(&o);
	if (strcmp(o.kind, "pipe") == 0 || strcmp(o.kind, "unix") == 0)
		return floor_run(&o, o.kind[0] == 'u');
	bool wayland = o.backend ? strcmp(o.backend, "wayland") == 0 : getenv("WAYLAND_DISPLAY") != NULL;
	if (strcmp(o.kind, "server") == 0)
		return wayland ? wayland_server(&o) : x11(&o, false);
	if (strcmp(o.kind, "wm") == 0) {
		if (wayland) {
			fprintf(stderr, "duet-roundtrip: wm is X11's hop; on Wayland the window manager "
			        "is the server (use server)\n");
			return 2;
		}
		return x11(&o, true);
	}
	fputs(usage, stderr);
	return 2;
}
