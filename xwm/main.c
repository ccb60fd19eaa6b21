/* duet-xwm's command line, signals and event loop: the window model
 * (model.h) hosted by the compositing manager (xwm.h).
 *
 * The loop drains X events, repaints when render/'s repaint loop says a
 * repaint is due (repaint.c), then sleeps in poll on the X connection, the
 * repaint timer, the sync-timeout timer and a signalfd (SIGINT/SIGTERM:
 * exit cleanly, SIGUSR1: screenshot). A frame in flight waits for its
 * window contents without blocking the loop (fetch.c).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <X11/Xlib.h>
#include <X11/Xlib-xcb.h>

#include "xwm.h"

static const char usage[] =
	"Usage: duet-xwm [OPTIONS]\n"
	"An X11 window manager and compositing manager drawing through duet's\n"
	"shared renderer into the composite overlay window.\n"
	"\n"
	"  --display :N         X display to manage (default: $DISPLAY)\n"
	"  --screenshot FILE    write the last composited frame to FILE (PNG) on exit\n"
	"                       and on SIGUSR1\n"
	"  --screenshot-dir DIR answer _DUET_SCREENSHOT (off without it): X clients\n"
	"                       may have the frame written as a new file in DIR\n"
	"  --refresh HZ         rate of the frame clock (default 60; 0 = paint as\n"
	"                       soon as there is damage)\n"
	"  --present egl|shm|auto  how frames reach the screen: EGL swap, or MIT-SHM\n"
	"                       PutImage of the damaged rectangles (default auto: EGL\n"
	"                       when the server has DRI3 and EGL a damage-aware swap)\n"
	"  --renderer gl|pixman|xrender  drawing engine: 'gl' (the default), GLES2\n"
	"                       through EGL (Mesa's llvmpipe without a GPU); 'pixman',\n"
	"                       on the CPU in duet-xwm, window contents fetched with\n"
	"                       MIT-SHM and frames sent back with PutImage; 'xrender',\n"
	"                       drawn inside the X server with RENDER, as xcompmgr and\n"
	"                       picom's xrender backend draw (no pixel leaves the\n"
	"                       server). pixman has no --present egl, xrender no\n"
	"                       --present at all\n"
	"  --texture-budget MIB texture memory for all windows (default 384); a window\n"
	"                       whose texture would pass it is not composited\n"
	"  --window-texture-budget MIB  the same for one window (default 64)\n"
	"  --debug              log every X error and WM decision\n"
	"  -h, --help           show this help and exit\n"
	"\n"
	"Environment: DUET_TRACE=FILE writes JSON-lines trace events;\n"
	"DUET_PROTOCOL_LOG=FILE writes X protocol counts at exit and on SIGUSR2;\n"
	"DUET_XWM_DEBUG=1 is --debug.\n";

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "duet-xwm: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'duet-xwm --help'.\n");
	return 2;
}

/* Returns -1 to continue, else an exit status. */
static int parse_options(int argc, char **argv, struct xwm_cm *cm)
{
	static const struct option longopts[] = {
		{ "display", required_argument, NULL, 'd' },
		{ "screenshot", required_argument, NULL, 's' },
		{ "screenshot-dir", required_argument, NULL, 'S' },
		{ "refresh", required_argument, NULL, 'r' },
		{ "present", required_argument, NULL, 'p' },
		{ "renderer", required_argument, NULL, 'R' },
		{ "texture-budget", required_argument, NULL, 'T' },
		{ "window-texture-budget", required_argument, NULL, 'W' },
		{ "debug", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c;

	cm->options.refresh_mhz = 60000;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			cm->options.display = optarg;
			break;
		case 's':
			if (!optarg[0])
				return bad_usage("bad --screenshot '%s': empty path", optarg);
			cm->options.screenshot = optarg;
			break;
		case 'S':
			if (!optarg[0])
				return bad_usage("bad --screenshot-dir '%s': empty path", optarg);
			cm->options.screenshot_dir = optarg;
			break;
		case 'r': {
			char *end;
			double hz = strtod(optarg, &end);
			if (end == optarg || *end || !(hz >= 0 && hz <= 1000))
				return bad_usage("bad --refresh '%s': expected 0 to 1000 Hz", optarg);
			cm->options.refresh_mhz = (int)(hz * 1000 + 0.5);
			break;
		}
		case 'p':
			if (strcmp(optarg, "egl") && strcmp(optarg, "shm") && strcmp(optarg, "auto"))
				return bad_usage("bad --present '%s': expected egl, shm or auto", optarg);
			cm->options.present = optarg;
			break;
		case 'R':
			if (strcmp(optarg, "gl") && strcmp(optarg, "pixman") && strcmp(optarg, "xrender"))
				return bad_usage("bad --renderer '%s': expected gl, pixman or xrender",
				                 optarg);
			cm->options.pixman = strcmp(optarg, "pixman") == 0;
			cm->options.xrender = strcmp(optarg, "xrender") == 0;
			break;
		case 'T':
		case 'W': {
			char *end;
			long mib = strtol(optarg, &end, 10);
			if (end == optarg || *end || mib < 1 || mib > 1 << 20)
				return bad_usage("bad texture budget '%s': expected 1 to 1048576 MiB",
				                 optarg);
			if (c == 'T')
				cm->options.texture_budget_mib = (unsigned)mib;
			else
				cm->options.window_texture_budget_mib = (unsigned)mib;
			break;
		}
		case 'D':
			cm->wm->debug = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fprintf(stderr, "Try 'duet-xwm --help'.\n");
			return 2;
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'", argv[optind]);
	if (cm->options.pixman && cm->options.present && strcmp(cm->options.present, "egl") == 0)
		return bad_usage("--present %s needs --renderer gl (pixman draws into memory, "
		                 "presented with shm)", cm->options.present);
	if (cm->options.xrender && cm->options.present && strcmp(cm->options.present, "auto") != 0)
		return bad_usage("--present %s needs --renderer gl or pixman (xrender draws into a "
		                 "pixmap in the X server and composites it onto the overlay)",
		                 cm->options.present);
	return -1;
}

/* ---------------------------------------------------------- event loop */

/* Applies the replies that are in, oldest request first, across all that
 * duet-xwm collects without waiting (geometry, properties, contents).
 * Each check of a reply may read the socket, and a read brings every reply
 * that came, whichever check asked: checking the sources one after the
 * other would leave a reply of one, read in during another's check, in
 * xcb's queue while poll() sleeps (until some later wake-up). Replies come
 * in request order, so checking only the globally oldest request each
 * time, and stopping at the first not in, leaves none behind: once the
 * oldest is not in after a read, no later one can be. */
static bool poll_replies(struct xwm_cm *cm)
{
	struct xwm *xwm = cm->wm;
	bool applied = false;

	for (;;) {
		unsigned int seq[3], best = 0;
		bool has[3] = {
			xwm_wm_oldest_reply(xwm, &seq[0]),
			xwm_props_oldest_reply(xwm, &seq[1]),
			xwm_contents_oldest_reply(cm, &seq[2]),
		};
		int pick = -1;
		for (int i = 0; i < 3; i++)
			if (has[i] && (pick < 0 || (int32_t)(seq[i] - best) < 0)) {
				pick = i;
				best = seq[i];
			}
		if (pick < 0)
			return applied;
		bool in = pick == 0 ? xwm_wm_poll_oldest(xwm) :
		          pick == 1 ? xwm_props_poll_oldest(xwm) : xwm_contents_poll_oldest(cm);
		if (!in)
			return applied;
		applied = true;
	}
}

static void handle_signal(struct xwm_cm *cm, int fd)
{
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGUSR2) {
			xwm_protolog_write();
		} else if (si.ssi_signo == SIGUSR1) {
			if (cm->options.screenshot)
				xwm_screenshot(cm, cm->options.screenshot);
			else
				xwm_log("SIGUSR1 without --screenshot: nothing to write");
		} else {
			xwm_log("signal %u: exiting", si.ssi_signo);
			cm->wm->quit = true;
		}
	}
}

static void handle_event(struct xwm_cm *cm, xcb_generic_event_t *ev)
{
	/* Every event tells how far the server has got (output.c). */
	xwm_note_processed(cm, ev->full_sequence);
	xwm_protolog_event(ev);
	xwm_wm_handle_event(cm->wm, ev);
	free(ev);
}

/* Events at most in one go: a client flooding the server with what the
 * window manager reads would otherwise keep this loop reading forever,
 * with no frame drawn and no timer or signal seen. true: there may be
 * more. */
#define EVENT_BATCH 256

static bool drain_events(struct xwm_cm *cm)
{
	xcb_generic_event_t *ev;
	for (int n = 0; n < EVENT_BATCH; n++) {
		if (!(ev = xcb_poll_for_event(cm->wm->conn)))
			return false;
		handle_event(cm, ev);
	}
	return true;
}

static int run(struct xwm_cm *cm, int signal_fd)
{
	struct xwm *xwm = cm->wm;

	while (!xwm->quit) {
		xcb_generic_event_t *ev;
		bool more = drain_events(cm);
		xwm_wm_flush_merged(xwm);
		xwm_dri3_after_grab(cm);
		if (xcb_connection_has_error(xwm->conn)) {
			xwm_log("the X connection broke (error %d); exiting",
			        xcb_connection_has_error(xwm->conn));
			return 1;
		}
		xcb_flush(xwm->conn);
		/* A write that has to wait makes xcb read what the server sent
		 * meanwhile into its queue; poll() on the socket would then
		 * sleep on those events (a MapRequest never answered) or on
		 * the replies a frame or a property read waits for. Checking
		 * the replies may read more events into the queue, so it comes
		 * first. */
		bool applied = poll_replies(cm);
		if (xwm_repaint_if_ready(cm) || (applied && !more))
			continue;
		if (!more && (ev = xcb_poll_for_queued_event(xwm->conn))) {
			handle_event(cm, ev);
			continue;
		}
		if (render_repaint_loop_due(&cm->repaint)) {
			/* Every event read so far is in: the frame takes them. */
			render_repaint_loop_run(&cm->repaint);
			continue;
		}

		struct pollfd fds[4] = {
			{ .fd = xcb_get_file_descriptor(xwm->conn), .events = POLLIN },
			{ .fd = cm->repaint.timer_fd, .events = POLLIN },
			{ .fd = signal_fd, .events = POLLIN },
			{ .fd = cm->sync_timer_fd, .events = POLLIN },
		};
		/* More events waiting: a look at the timers and signals only.
		 * A flooder served after the others: its priority back once
		 * calm, even if nothing else comes. */
		int timeout = more ? 0 : xwm_flood_lowered(xwm) ? XWM_FLOOD_SWEEP_MS : -1;
		if (poll(fds, 4, timeout) < 0) {
			if (errno == EINTR)
				continue;
			xwm_log("poll: %s", strerror(errno));
			return 1;
		}
		if (fds[2].revents & POLLIN)
			handle_signal(cm, signal_fd);
		if (fds[3].revents & POLLIN) {
			render_timer_read(cm->sync_timer_fd);
			xwm_sync_timeout(cm);
		}
		if (fds[1].revents & POLLIN) {
			/* Events that came meanwhile go into this frame. */
			drain_events(cm);
			xwm_wm_flush_merged(xwm);
			render_repaint_loop_timer(&cm->repaint);
		}
	}
	return 0;
}

static int setup_signals(void)
{
	sigset_t mask;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGUSR2); /* before EGL starts threads: blocked in all */
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -1;
	return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int connect_display(struct xwm_cm *cm)
{
	struct xwm *xwm = cm->wm;
	Display *dpy = XOpenDisplay(cm->options.display);
	if (!dpy) {
		xwm_log("cannot open display %s", cm->options.display ? cm->options.display
		                                                    : "(from $DISPLAY)");
		return -1;
	}
	/* One connection: our xcb requests and Mesa's (EGL's X11 platform
	 * works on the Display's xcb connection) share it, and xcb owns the
	 * event queue so that no event ends up in Xlib's. */
	XSetEventQueueOwner(dpy, XCBOwnsEventQueue);
	cm->xlib_display = dpy;
	xwm->conn = XGetXCBConnection(dpy);
	xwm->screen = xcb_setup_roots_iterator(xcb_get_setup(xwm->conn)).data;
	for (xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(xwm->conn));
	     it.rem; xcb_screen_next(&it)) {
		if (it.index == DefaultScreen(dpy)) {
			xwm->screen = it.data;
			break;
		}
	}
	if (DefaultScreen(dpy) != 0) {
		xwm_log("only screen 0 is supported");
		return -1;
	}
	xwm->root = xwm->screen->root;
	return 0;
}

int main(int argc, char **argv)
{
	/* static: zeroed, and reachable from gdb */
	static struct xwm xwm;
	static struct xwm_cm cm = { .wm = &xwm };
	int ret;

	duet_list_init(&xwm.stack);
	xwm.host = &xwm_composite_host;
	xwm.host_data = &cm;
	cm.repaint.timer_fd = cm.sync_timer_fd = cm.screenshot_dir_fd = -1;
	const char *env_debug = getenv("DUET_XWM_DEBUG");
	xwm.debug = env_debug && env_debug[0] && strcmp(env_debug, "0") != 0;
	ret = parse_options(argc, argv, &cm);
	if (ret >= 0)
		return ret;

	if (cm.options.screenshot_dir && xwm_screenshot_dir_open(&cm, cm.options.screenshot_dir) < 0)
		return 1;
	render_trace_open(NULL, &cm.trace);
	int signal_fd = setup_signals();
	cm.sync_timer_fd = render_timer_create();
	if (signal_fd < 0 || cm.sync_timer_fd < 0) {
		xwm_log("signalfd/timerfd: %s", strerror(errno));
		return 1;
	}
	ret = 1;
	xwm_protolog_start(&cm);
	if (connect_display(&cm) < 0)
		goto out;
	if (xwm_props_intern_atoms(&xwm) < 0 || xwm_wm_claim(&xwm) < 0)
		goto out;
	xwm_props_init_root(&xwm, cm.screenshot_dir_path, true);
	if (xwm_composite_start(&cm) < 0 || xwm_wm_start(&xwm, cm.sync_event != 0) < 0)
		goto out;
	render_trace(cm.trace, "xwm_start", "\"width\":%d,\"height\":%d", xwm.screen->width_in_pixels,
	             xwm.screen->height_in_pixels);
	/* The renderer and the output are up: from now on a window that
	 * draws is composited, so tools may take us as ready. */
	xwm_props_announce(&xwm);
	xwm_schedule_repaint(&cm);
	xcb_flush(xwm.conn);

	ret = run(&cm, signal_fd);
	if (cm.options.screenshot && ret == 0 && xwm_screenshot(&cm, cm.options.screenshot) < 0)
		ret = 1;
out:
	if (xwm.conn) {
		xwm_wm_finish(&xwm);
		xwm_composite_finish(&cm);
		if (xwm.ewmh.connection)
			xcb_ewmh_connection_wipe(&xwm.ewmh);
		xcb_flush(xwm.conn);
		xwm_protolog_write();
		XCloseDisplay(cm.xlib_display);
	}
	close(cm.sync_timer_fd);
	close(signal_fd);
	xwm_screenshot_dir_close(&cm);
	render_trace_close(cm.trace);
	return ret;
}
