/* duet-xwm's command line, signals, event loop and repaint cycle.
 *
 * The loop drains X events, repaints when render/'s repaint loop says a
 * repaint is due (its next tick, a timerfd, as on duet-compositor's
 * outputs; an idle screen arms no timer), then sleeps in poll on the X
 * connection, the repaint timer, the sync-timeout timer and a signalfd
 * (SIGINT/SIGTERM: exit cleanly, SIGUSR1: screenshot). A repaint sends the
 * requests that fetch the frame's window contents and returns to the
 * loop; the frame is painted once their replies are in (fetch.c), so
 * the loop never blocks on the X server while clients draw.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
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
	"  --renderer gl|pixman drawing engine (render/): 'gl' (the default), GLES2\n"
	"                       through EGL (Mesa's llvmpipe without a GPU), or\n"
	"                       'pixman', on the CPU into memory, as xcompmgr's\n"
	"                       XRender is drawn inside Xvfb; pixman presents with\n"
	"                       shm (egl needs gl) and fetches contents with MIT-SHM\n"
	"                       (no DRI3 zero-copy)\n"
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
static int parse_options(int argc, char **argv, struct xwm *xwm)
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

	xwm->options.refresh_mhz = 60000;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			xwm->options.display = optarg;
			break;
		case 's':
			if (!optarg[0])
				return bad_usage("bad --screenshot '%s': empty path", optarg);
			xwm->options.screenshot = optarg;
			break;
		case 'S':
			if (!optarg[0])
				return bad_usage("bad --screenshot-dir '%s': empty path", optarg);
			xwm->options.screenshot_dir = optarg;
			break;
		case 'r': {
			char *end;
			double hz = strtod(optarg, &end);
			if (end == optarg || *end || !(hz >= 0 && hz <= 1000))
				return bad_usage("bad --refresh '%s': expected 0 to 1000 Hz", optarg);
			xwm->options.refresh_mhz = (int)(hz * 1000 + 0.5);
			break;
		}
		case 'p':
			if (strcmp(optarg, "egl") && strcmp(optarg, "shm") && strcmp(optarg, "auto"))
				return bad_usage("bad --present '%s': expected egl, shm or auto", optarg);
			xwm->options.present = optarg;
			break;
		case 'R':
			if (strcmp(optarg, "gl") && strcmp(optarg, "pixman"))
				return bad_usage("bad --renderer '%s': expected gl or pixman", optarg);
			xwm->options.pixman = strcmp(optarg, "pixman") == 0;
			break;
		case 'T':
		case 'W': {
			char *end;
			long mib = strtol(optarg, &end, 10);
			if (end == optarg || *end || mib < 1 || mib > 1 << 20)
				return bad_usage("bad texture budget '%s': expected 1 to 1048576 MiB",
				                 optarg);
			if (c == 'T')
				xwm->options.texture_budget_mib = (unsigned)mib;
			else
				xwm->options.window_texture_budget_mib = (unsigned)mib;
			break;
		}
		case 'D':
			xwm->debug = true;
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
	if (xwm->options.pixman && xwm->options.present &&
	    strcmp(xwm->options.present, "egl") == 0)
		return bad_usage("--present %s needs --renderer gl (pixman draws into memory, "
		                 "presented with shm)", xwm->options.present);
	return -1;
}

/* ------------------------------------------------------------- repaint */

/* Paints what the textures hold now (contents uploaded before) and sends
 * it; the pixels are on their way to the X server (not yet flushed).
 * Returns whether anything was painted. */
static bool paint(struct xwm *xwm)
{
	pixman_region32_t repainted;

	pixman_region32_init(&repainted);
	if (render_scene_has_damage(xwm->scene))
		xwm_output_before_paint(xwm);
	bool painted = render_scene_paint(xwm->scene, xwm->target, &repainted);
	if (painted)
		xwm_output_present(xwm, &repainted);
	xwm->last_paint_area = 0;
	int n;
	const pixman_box32_t *b = pixman_region32_rectangles(&repainted, &n);
	for (int i = 0; i < n; i++)
		xwm->last_paint_area += (uint64_t)(b[i].x2 - b[i].x1) * (uint64_t)(b[i].y2 - b[i].y1);
	pixman_region32_fini(&repainted);
	return painted;
}

/* Whether a frame started now would paint or answer anything: the scene
 * has damage, a window has contents to fetch, or a client's finished
 * frame can be answered (_NET_WM_FRAME_DRAWN). A repaint asked for by a
 * change that turned out to show nothing (a window placed before its map
 * or destroyed after its unmap, a change the frame in flight painted, a
 * sync counter's frame the frame in flight answered) is withdrawn: it
 * would paint nothing and answer nothing, and cost a round trip where the
 * output is still busy with the last frame's pixels. */
static bool frame_has_work(void *data)
{
	struct xwm *xwm = data;
	return render_scene_has_damage(xwm->scene) || xwm_contents_pending(xwm) ||
	       xwm_sync_frames_drawn(xwm) > 0;
}

/* The frame's PutImage rectangles as a JSON array [[x,y,w,h],...] (the
 * first XWM_MAX_RECTS; "puts" counts them all). shm-put only. */
static void trace_puts(const struct xwm *xwm, bool painted, char *buf, size_t size)
{
	size_t len = 0;
	unsigned int n = painted ? xwm->out_frame_puts : 0;

	if (n > XWM_MAX_RECTS)
		n = XWM_MAX_RECTS;
	len += (size_t)snprintf(buf, size, "[");
	for (unsigned int i = 0; i < n && len < size; i++) {
		const pixman_box32_t *b = &xwm->out_frame_put[i];
		len += (size_t)snprintf(buf + len, size - len, "%s[%d,%d,%d,%d]", i ? "," : "",
		                        b->x1, b->y1, b->x2 - b->x1, b->y2 - b->y1);
	}
	if (len < size)
		snprintf(buf + len, size - len, "]");
}

/* The frame is finished (drawn_ns: its pixels have left for the X
 * server): its trace, and the frame-timing messages it answers. */
static void frame_drawn(void *data, const struct render_frame *frame, uint64_t drawn_ns)
{
	struct xwm *xwm = data;
	bool painted = frame->paint;

	if (render_trace_enabled()) {
		char puts[XWM_MAX_RECTS * 56 + 4];
		trace_puts(xwm, painted, puts, sizeof(puts));
		render_trace("frame", "\"seq\":%" PRIu64 ",\"painted\":%s,\"damage\":%" PRIu64
		             ",\"tick_ns\":%" PRIu64 ",\"done_ns\":%" PRIu64 ",\"puts\":%u,"
		             "\"put_rects\":%s,\"readback\":%" PRIu64 ",\"output_waits\":%" PRIu64
		             ",\"fetch_in_place\":%" PRIu64 ",\"fetch_copied\":%" PRIu64
		             ",\"frames_drawn\":%u",
		             frame->seq, painted ? "true" : "false",
		             painted ? xwm->last_paint_area : 0, frame->tick_ns, drawn_ns,
		             painted ? xwm->out_frame_puts : 0, puts,
		             painted ? xwm->out_frame_readback : 0, xwm->out_waits,
		             xwm->fetch_in_place, xwm->fetch_copied, xwm_sync_frames_drawn(xwm));
		xwm_composite_trace_shown(xwm, frame->seq, drawn_ns);
	}
	xwm_sync_frame_presented(xwm, drawn_ns);
}

/* The second half of a frame, once its contents are in: upload, paint
 * and send them (nothing when only frame-timing messages were due), then
 * those messages. "Drawn" is when the pixels have left for the X server,
 * not when they were read back: the flush is part of the frame's cost.
 * The repaint loop then withdraws a repaint asked for meanwhile that this
 * frame did (a client that finished a frame this one showed asked for a
 * frame to answer it, and this one did), or arms it. */
static void repaint_finish(struct xwm *xwm)
{
	xwm_contents_upload(xwm);
	bool painted = paint(xwm);
	xcb_flush(xwm->conn);
	render_repaint_loop_finish(&xwm->repaint, painted, render_now_ns(), NULL);
	xcb_flush(xwm->conn);
}

/* The first half of a frame: take the damage and send the requests that
 * fetch it; the frame goes on in repaint_finish once their replies are in
 * (run() checks without blocking), or at once when there was nothing to
 * fetch. */
static void repaint_start(void *data, const struct render_frame *frame)
{
	struct xwm *xwm = data;
	(void)frame;
	if (xwm_contents_fetch(xwm)) {
		xcb_flush(xwm->conn);
		return;
	}
	repaint_finish(xwm);
}

static bool frame_in_flight(const struct xwm *xwm)
{
	return xwm->repaint.state == RENDER_REPAINT_PAINTING;
}

/* Applies the replies that are in, oldest request first, across all that
 * duet-xwm collects without waiting (geometry, properties, contents).
 * Each check of a reply may read the socket, and a read brings every reply
 * that came, whichever check asked: checking the sources one after the
 * other would leave a reply of one, read in during another's check, in
 * xcb's queue while poll() sleeps (until some later wake-up). Replies come
 * in request order, so checking only the globally oldest request each
 * time, and stopping at the first not in, leaves none behind: once the
 * oldest is not in after a read, no later one can be. */
static bool poll_replies(struct xwm *xwm)
{
	bool applied = false;

	for (;;) {
		unsigned int seq[3], best = 0;
		bool has[3] = {
			xwm_wm_oldest_reply(xwm, &seq[0]),
			xwm_props_oldest_reply(xwm, &seq[1]),
			xwm_contents_oldest_reply(xwm, &seq[2]),
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
		          pick == 1 ? xwm_props_poll_oldest(xwm) : xwm_contents_poll_oldest(xwm);
		if (!in)
			return applied;
		applied = true;
	}
}

/* The frame in flight, if its contents have arrived (never blocks). */
static bool repaint_if_ready(struct xwm *xwm)
{
	if (!frame_in_flight(xwm) || !xwm_contents_ready(xwm))
		return false;
	repaint_finish(xwm);
	return true;
}

void xwm_repaint_now(struct xwm *xwm)
{
	if (!xwm->scene)
		return;
	/* Off the grid, for screenshots, and allowed to wait for the server:
	 * a frame in flight is finished first, then whatever is still
	 * pending is fetched and painted. The frame bookkeeping (timing
	 * messages, trace) stays with the scheduled repaint. */
	if (frame_in_flight(xwm)) {
		xwm_contents_wait(xwm);
		repaint_finish(xwm);
	}
	if (xwm_contents_fetch(xwm)) {
		xcb_flush(xwm->conn);
		xwm_contents_wait(xwm);
	}
	xwm_contents_upload(xwm);
	if (paint(xwm))
		xcb_flush(xwm->conn);
}

/* A repaint whose deadline has come is not a timer: run() runs it before
 * it sleeps (render_repaint_loop_due), once every event read so far is in. */
static const struct render_repaint_ops repaint_ops = {
	.has_work = frame_has_work,
	.paint = repaint_start,
	.deliver = frame_drawn,
};

int xwm_repaint_start(struct xwm *xwm)
{
	return render_repaint_loop_init(&xwm->repaint, xwm->options.refresh_mhz, 0, &repaint_ops,
	                                xwm);
}

static void request_repaint(struct xwm *xwm, bool damage)
{
	if (xwm->scene)
		render_repaint_loop_request(&xwm->repaint, damage);
}

void xwm_schedule_repaint(struct xwm *xwm)
{
	request_repaint(xwm, true);
}

void xwm_schedule_frame_due(struct xwm *xwm)
{
	request_repaint(xwm, false);
}

void xwm_arm_sync_timer(struct xwm *xwm, uint64_t at)
{
	render_timer_arm(xwm->sync_timer_fd, at);
}

/* ---------------------------------------------------------- event loop */

static void handle_signal(struct xwm *xwm, int fd)
{
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGUSR2) {
			xwm_protolog_write();
		} else if (si.ssi_signo == SIGUSR1) {
			if (xwm->options.screenshot)
				xwm_screenshot(xwm, xwm->options.screenshot);
			else
				xwm_log("SIGUSR1 without --screenshot: nothing to write");
		} else {
			xwm_log("signal %u: exiting", si.ssi_signo);
			xwm->quit = true;
		}
	}
}

static void handle_event(struct xwm *xwm, xcb_generic_event_t *ev)
{
	/* Every event tells how far the server has got (output.c). */
	xwm_note_processed(xwm, ev->full_sequence);
	xwm_protolog_event(ev);
	xwm_wm_handle_event(xwm, ev);
	free(ev);
}

static int run(struct xwm *xwm, int signal_fd)
{
	while (!xwm->quit) {
		xcb_generic_event_t *ev;
		while ((ev = xcb_poll_for_event(xwm->conn)))
			handle_event(xwm, ev);
		xwm_wm_flush_configures(xwm);
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
		bool applied = poll_replies(xwm);
		if (repaint_if_ready(xwm) || applied)
			continue;
		if ((ev = xcb_poll_for_queued_event(xwm->conn))) {
			handle_event(xwm, ev);
			continue;
		}
		if (render_repaint_loop_due(&xwm->repaint)) {
			/* Every event read so far is in: the frame takes them. */
			render_repaint_loop_run(&xwm->repaint);
			continue;
		}

		struct pollfd fds[4] = {
			{ .fd = xcb_get_file_descriptor(xwm->conn), .events = POLLIN },
			{ .fd = xwm->repaint.timer_fd, .events = POLLIN },
			{ .fd = signal_fd, .events = POLLIN },
			{ .fd = xwm->sync_timer_fd, .events = POLLIN },
		};
		if (poll(fds, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			xwm_log("poll: %s", strerror(errno));
			return 1;
		}
		if (fds[2].revents & POLLIN)
			handle_signal(xwm, signal_fd);
		if (fds[3].revents & POLLIN) {
			render_timer_read(xwm->sync_timer_fd);
			xwm_sync_timeout(xwm);
		}
		if (fds[1].revents & POLLIN) {
			/* Events that came meanwhile go into this frame. */
			while ((ev = xcb_poll_for_event(xwm->conn)))
				handle_event(xwm, ev);
			xwm_wm_flush_configures(xwm);
			render_repaint_loop_timer(&xwm->repaint);
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

static int connect_display(struct xwm *xwm)
{
	Display *dpy = XOpenDisplay(xwm->options.display);
	if (!dpy) {
		xwm_log("cannot open display %s", xwm->options.display ? xwm->options.display
		                                                     : "(from $DISPLAY)");
		return -1;
	}
	/* One connection: our xcb requests and Mesa's (EGL's X11 platform
	 * works on the Display's xcb connection) share it, and xcb owns the
	 * event queue so that no event ends up in Xlib's. */
	XSetEventQueueOwner(dpy, XCBOwnsEventQueue);
	xwm->xlib_display = dpy;
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
	static struct xwm xwm; /* static: zeroed, and reachable from gdb */
	int ret;

	xwm_list_init(&xwm.stack);
	xwm.repaint.timer_fd = xwm.sync_timer_fd = xwm.screenshot_dir_fd = -1;
	const char *env_debug = getenv("DUET_XWM_DEBUG");
	xwm.debug = env_debug && env_debug[0] && strcmp(env_debug, "0") != 0;
	ret = parse_options(argc, argv, &xwm);
	if (ret >= 0)
		return ret;

	if (xwm.options.screenshot_dir && xwm_screenshot_dir_open(&xwm, xwm.options.screenshot_dir) < 0)
		return 1;
	render_trace_open(NULL);
	int signal_fd = setup_signals();
	xwm.sync_timer_fd = render_timer_create();
	if (signal_fd < 0 || xwm.sync_timer_fd < 0) {
		xwm_log("signalfd/timerfd: %s", strerror(errno));
		return 1;
	}
	ret = 1;
	xwm_protolog_start(&xwm);
	if (connect_display(&xwm) < 0)
		goto out;
	if (xwm_props_intern_atoms(&xwm) < 0 || xwm_wm_claim(&xwm) < 0)
		goto out;
	xwm_props_init_root(&xwm);
	if (xwm_composite_start(&xwm) < 0 || xwm_wm_start(&xwm) < 0)
		goto out;
	render_trace("xwm_start", "\"width\":%d,\"height\":%d", xwm.screen->width_in_pixels,
	             xwm.screen->height_in_pixels);
	/* The renderer and the output are up: from now on a window that
	 * draws is composited, so tools may take us as ready. */
	xwm_props_announce(&xwm);
	xwm_schedule_repaint(&xwm);
	xcb_flush(xwm.conn);

	ret = run(&xwm, signal_fd);
	if (xwm.options.screenshot && ret == 0 && xwm_screenshot(&xwm, xwm.options.screenshot) < 0)
		ret = 1;
out:
	if (xwm.conn) {
		xwm_wm_finish(&xwm);
		xwm_composite_finish(&xwm);
		if (xwm.ewmh.connection)
			xcb_ewmh_connection_wipe(&xwm.ewmh);
		xcb_flush(xwm.conn);
		xwm_protolog_write();
		XCloseDisplay(xwm.xlib_display);
	}
	close(xwm.sync_timer_fd);
	close(signal_fd);
	xwm_screenshot_dir_close(&xwm);
	render_trace_close();
	return ret;
}
