/* duet-compositor's command line, signals and the optional child command. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "comp.h"
#include "xwayland.h"

#define DEFAULT_SCREENSHOT "duet-screenshot.png"

static const char usage[] =
	"Usage: duet-compositor [OPTIONS] [-- CMD ARGS...]\n"
	"\n"
	"A Wayland display server, window manager and compositor in one process.\n"
	"\n"
	"Options:\n"
	"  --backend NAME       output backend: 'headless' (the default), an offscreen\n"
	"                       GLES2 framebuffer that nothing displays, or 'drm', a\n"
	"                       display through KMS (a session from seatd or logind,\n"
	"                       through libseat, or root; on a card no other\n"
	"                       compositor or X server uses)\n"
	"  --renderer gl|pixman drawing engine (render/): 'gl' (the default), GLES2\n"
	"                       through EGL (on a machine without a GPU, Mesa's\n"
	"                       llvmpipe), or 'pixman', pixman on the CPU into\n"
	"                       memory, as weston --use-pixman and X's XRender draw;\n"
	"                       pixman is headless only (drm scans out GL buffers)\n"
	"                       and offers no linux-dmabuf\n"
	"  --size WxH           output size in pixels (default 1920x1080; headless)\n"
	"  --refresh HZ         refresh rate of the output's frame clock (default 60);\n"
	"                       0 repaints as soon as there is damage (benchmarks);\n"
	"                       with 'drm' the mode's refresh is the clock\n"
	"  --mode WxH[@HZ]      drm: the mode to set on each connector (default: its\n"
	"                       preferred one); headless: the same as --size WxH\n"
	"                       --refresh HZ\n"
	"  --output WxH[@HZ]    headless: one more output (up to 8), placed right of\n"
	"                       the ones before (HEADLESS-1, HEADLESS-2, ...; refresh\n"
	"                       --refresh's unless given); without it one output of\n"
	"                       --size. drm: every connected connector that gets a\n"
	"                       CRTC is an output, left to right\n"
	"  --drm-device PATH    drm: the card to use (default: the first usable\n"
	"                       /dev/dri/by-path/*-card, then /dev/dri/card*)\n"
	"  --socket NAME        listen on $XDG_RUNTIME_DIR/NAME (default: first free\n"
	"                       wayland-N)\n"
	"  --screenshot FILE    write the first output's last presented frame to FILE\n"
	"                       (PNG) on exit; SIGUSR1 writes it at once (to\n"
	"                       ./" DEFAULT_SCREENSHOT " when this option is not given)\n"
	"  --vfb FILE           also copy every frame's damage into FILE, a virtual\n"
	"                       framebuffer other processes can map and read (off by\n"
	"                       default; costs a read-back per frame): a 4 KiB header\n"
	"                       page (\"DUETVFB2\", geometry, layout, a uint64 frame\n"
	"                       counter stored after the frame's pixels, its\n"
	"                       CLOCK_MONOTONIC ns, and the compositor's own damage\n"
	"                       of the last 8 frames), then the pixels from the next\n"
	"                       page on (compositor/backend/headless/vfb-layout.h);\n"
	"                       with it frames are presented once their pixels are in\n"
	"                       FILE (the first output's, with several)\n"
	"  --vfb-layout linear|tiled\n"
	"                       the pixels of --vfb: rows, top first (default), or\n"
	"                       32x32-pixel tiles of one 4 KiB page each, row-major\n"
	"  --test-protocol      offer the private duet_test protocol (input injection,\n"
	"                       screenshots, window control; for tests and the bench)\n"
	"                       to clients of a second socket, NAME-test, from this\n"
	"                       user only; printed as DUET_TEST_DISPLAY=NAME-test and\n"
	"                       given to CMD in the same variable (docs/security.md)\n"
	"  --texture-budget MIB texture memory all clients may make the compositor\n"
	"                       hold (default 1024); a commit over it is a\n"
	"                       no_memory error for its client (docs/security.md)\n"
	"  --client-texture-budget MIB\n"
	"                       the same for each client alone (default 256)\n"
	"  --xwayland           also serve X11 clients, through Xwayland (off by\n"
	"                       default): an X display :N of this server's, printed\n"
	"                       as DISPLAY=:N before WAYLAND_DISPLAY and given to CMD;\n"
	"                       Xwayland is started on the first X connection and\n"
	"                       runs until the server stops; if it dies, the next X\n"
	"                       connection starts it again. Without the Xwayland\n"
	"                       binary (Debian package xwayland) the compositor does\n"
	"                       not start\n"
	"  --xwayland-now       with --xwayland: start Xwayland at once\n"
	"  --xwayland-path PATH the Xwayland binary (default: Xwayland in PATH)\n"
	"  --xwayland-display N the X display: the first free one from :N on\n"
	"                       (default 0)\n"
	"  --xwayland-sync-timeout MS  how long a resized X window's old content\n"
	"                       stays while the client has not answered the resize\n"
	"                       (_NET_WM_SYNC_REQUEST; default 100)\n"
	"  -- CMD ARGS...       run CMD with WAYLAND_DISPLAY set once the socket\n"
	"                       listens; exit when it exits, with its exit status\n"
	"                       (128+N if killed by signal N)\n"
	"  -h, --help           show this help and exit\n"
	"  -V, --version        show the version and exit\n"
	"\n"
	"The socket name is printed on stdout as WAYLAND_DISPLAY=NAME (after\n"
	"DUET_TEST_DISPLAY= and DISPLAY=, where there are); logs go to\n"
	"stderr. SIGINT and SIGTERM exit cleanly. If XDG_RUNTIME_DIR is unset, a\n"
	"private one is created under /tmp. DUET_TRACE=FILE writes a JSON-lines\n"
	"trace of every frame. DUET_DRM_LEGACY=1 makes the drm backend use legacy\n"
	"modesetting (drmModeSetCrtc/drmModePageFlip) instead of atomic commits.\n";

struct main_state {
	struct comp_server server;
	pid_t child;
	int exit_status;
	const char *usr1_path;
};

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "duet-compositor: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'duet-compositor --help'.\n");
	return 2;
}

static bool parse_size(const char *s, int *w, int *h)
{
	char *end;
	errno = 0;
	long lw = strtol(s, &end, 10);
	if (end == s || (*end != 'x' && *end != 'X') || errno)
		return false;
	const char *hs = end + 1;
	long lh = strtol(hs, &end, 10);
	if (end == hs || *end || errno)
		return false;
	/* GLES2 implementations go up to 8192 or 16384 per side. */
	if (lw < 1 || lh < 1 || lw > 16384 || lh > 16384)
		return false;
	*w = (int)lw;
	*h = (int)lh;
	return true;
}

static bool parse_refresh(const char *s, int *mhz);

/* WxH or WxH@HZ. */
static bool parse_mode(const char *s, int *w, int *h, int *mhz)
{
	char size[32];
	const char *at = strchr(s, '@');
	size_t len = at ? (size_t)(at - s) : strlen(s);
	if (len == 0 || len >= sizeof(size))
		return false;
	memcpy(size, s, len);
	size[len] = 0;
	if (!parse_size(size, w, h))
		return false;
	*mhz = 0;
	return !at || (parse_refresh(at + 1, mhz) && *mhz > 0);
}

static bool parse_refresh(const char *s, int *mhz)
{
	char *end;
	errno = 0;
	double hz = strtod(s, &end);
	if (end == s || *end || errno || !(hz >= 0 && hz <= 1000))
		return false;
	*mhz = (int)(hz * 1000 + 0.5);
	return hz == 0 || *mhz > 0;
}

static bool parse_mib(const char *s, uint64_t *bytes)
{
	char *end;
	errno = 0;
	long mib = strtol(s, &end, 10);
	if (end == s || *end || errno || mib < 1 || mib > 1048576)
		return false;
	*bytes = (uint64_t)mib << 20;
	return true;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct comp_options *opt, char ***cmd)
{
	static const struct option longopts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 's' },
		{ "renderer", required_argument, NULL, 'R' },
		{ "refresh", required_argument, NULL, 'r' },
		{ "socket", required_argument, NULL, 'S' },
		{ "screenshot", required_argument, NULL, 'o' },
		{ "vfb", required_argument, NULL, 'F' },
		{ "vfb-layout", required_argument, NULL, 'L' },
		{ "mode", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'O' },
		{ "drm-device", required_argument, NULL, 'D' },
		{ "test-protocol", no_argument, NULL, 'T' },
		{ "texture-budget", required_argument, NULL, 'B' },
		{ "client-texture-budget", required_argument, NULL, 'C' },
		{ "xwayland", no_argument, NULL, 'X' },
		{ "xwayland-now", no_argument, NULL, 'N' },
		{ "xwayland-path", required_argument, NULL, 'P' },
		{ "xwayland-display", required_argument, NULL, 'd' },
		{ "xwayland-sync-timeout", required_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	opterr = 0;
	int c;
	/* '+': stop at the first non-option, so CMD's own options stay its own. */
	while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (strcmp(optarg, "headless") == 0) {
				opt->backend = optarg;
				break;
			}
#ifdef DUET_HAVE_DRM
			if (strcmp(optarg, "drm") == 0) {
				opt->backend = optarg;
				break;
			}
			return bad_usage("unknown backend '%s' (available: headless, drm)", optarg);
#else
			if (strcmp(optarg, "drm") == 0)
				return bad_usage("backend '%s' is not built in (libdrm or libgbm was "
				                 "missing at build time)", optarg);
			return bad_usage("unknown backend '%s' (available: headless)", optarg);
#endif
		case 'R':
			if (strcmp(optarg, "gl") != 0 && strcmp(optarg, "pixman") != 0)
				return bad_usage("bad --renderer '%s': want gl or pixman", optarg);
			opt->pixman = strcmp(optarg, "pixman") == 0;
			break;
		case 'm':
			if (!parse_mode(optarg, &opt->mode_width, &opt->mode_height, &opt->mode_mhz))
				return bad_usage("bad --mode '%s': expected WxH or WxH@HZ", optarg);
			break;
		case 'O': {
			if (opt->n_outputs == COMP_MAX_OUTPUTS)
				return bad_usage("too many --output (at most 8): '%s'", optarg);
			struct comp_output_config *o = &opt->outputs[opt->n_outputs];
			if (!parse_mode(optarg, &o->width, &o->height, &o->refresh_mhz))
				return bad_usage("bad --output '%s': expected WxH or WxH@HZ", optarg);
			if (!strchr(optarg, '@'))
				o->refresh_mhz = -1; /* --refresh's, known once all options are read */
			opt->n_outputs++;
			break;
		}
		case 'D':
			if (!*optarg)
				return bad_usage("bad --drm-device '%s': empty path", optarg);
			opt->drm_device = optarg;
			break;
		case 's':
			if (!parse_size(optarg, &opt->width, &opt->height))
				return bad_usage("bad --size '%s': expected WxH, each 1..16384", optarg);
			break;
		case 'r':
			if (!parse_refresh(optarg, &opt->refresh_mhz))
				return bad_usage("bad --refresh '%s': expected a rate in Hz from 0 to "
				                 "1000 (0 = unthrottled)", optarg);
			break;
		case 'S':
			if (!*optarg || strchr(optarg, '/'))
				return bad_usage("bad --socket '%s': a plain name, no '/'", optarg);
			opt->socket = optarg;
			break;
		case 'o':
			if (!*optarg)
				return bad_usage("bad --screenshot '%s': empty path", optarg);
			opt->screenshot_path = optarg;
			break;
		case 'F':
			if (!*optarg)
				return bad_usage("bad --vfb '%s': empty path", optarg);
			opt->vfb_path = optarg;
			break;
		case 'L':
			if (strcmp(optarg, "linear") != 0 && strcmp(optarg, "tiled") != 0)
				return bad_usage("bad --vfb-layout '%s': want linear or tiled", optarg);
			opt->vfb_layout = optarg;
			break;
		case 'T':
			opt->test_protocol = true;
			break;
		case 'B':
		case 'C':
			if (!parse_mib(optarg, c == 'B' ? &opt->texture_budget :
			                                 &opt->client_texture_budget))
				return bad_usage("bad texture budget '%s': expected MiB from 1 to "
				                 "1048576", optarg);
			break;
		case 'X':
			opt->xwayland = true;
			break;
		case 'N':
			opt->xwayland_now = true;
			break;
		case 'P':
			if (!*optarg)
				return bad_usage("bad --xwayland-path '%s': empty path", optarg);
			opt->xwayland_path = optarg;
			break;
		case 'd': {
			char *end;
			errno = 0;
			long n = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || n < 0 || n > 32000)
				return bad_usage("bad --xwayland-display '%s': expected a number from 0 "
				                 "to 32000", optarg);
			opt->xwayland_display = (int)n;
			break;
		}
		case 'Y': {
			char *end;
			errno = 0;
			long n = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || n < 1 || n > 600000)
				return bad_usage("bad --xwayland-sync-timeout '%s': expected ms from 1 "
				                 "to 600000", optarg);
			opt->xwayland_sync_timeout_ms = (int)n;
			break;
		}
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			printf("duet-compositor %s\n", DUET_VERSION);
			return 0;
		case ':':
			return bad_usage("option '%s' needs a value", argv[optind - 1]);
		default:
			return bad_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	for (int i = 0; i < opt->n_outputs; i++) {
		if (opt->outputs[i].refresh_mhz < 0)
			opt->outputs[i].refresh_mhz = opt->refresh_mhz;
	}
	if (opt->n_outputs && strcmp(opt->backend, "headless") != 0)
		return bad_usage("--output is for the headless backend (%s)",
		                 "drm has an output per connector");
	if (opt->pixman && strcmp(opt->backend, "headless") != 0)
		return bad_usage("--renderer pixman needs the headless backend: '%s' scans out "
		                 "buffers only GL draws into (use --renderer gl)", opt->backend);
	/* On headless outputs a mode is just a size and a rate. */
	if (opt->mode_width && strcmp(opt->backend, "headless") == 0) {
		opt->width = opt->mode_width;
		opt->height = opt->mode_height;
		if (opt->mode_mhz)
			opt->refresh_mhz = opt->mode_mhz;
	}
	if ((opt->xwayland_now || opt->xwayland_path || opt->xwayland_display ||
	     opt->xwayland_sync_timeout_ms) && !opt->xwayland)
		return bad_usage("%s: --xwayland-now, --xwayland-path, --xwayland-display and "
		                 "--xwayland-sync-timeout are options of --xwayland", "no --xwayland");
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--") != 0)
			return bad_usage("unexpected argument '%s': put the command after --",
			                 argv[optind]);
		*cmd = &argv[optind];
	}
	return -1;
}

/* ------------------------------------------------------------- signals */

static int handle_terminate(int sig, void *data)
{
	struct main_state *m = data;
	comp_log("%s: exiting", strsignal(sig));
	wl_display_terminate(m->server.display);
	return 0;
}

static int handle_usr1(int sig, void *data)
{
	struct main_state *m = data;
	if (comp_output_write_png(comp_layout_first_output(&m->server), m->usr1_path) == 0)
		comp_log("screenshot written to %s", m->usr1_path);
	else
		comp_log("cannot write screenshot to %s", m->usr1_path);
	return 0;
}

static int handle_child(int sig, void *data)
{
	struct main_state *m = data;
	int status;
	/* Only the command's: Xwayland is the server's own child, reaped by
	 * xwayland.c through its pidfd. */
	if (m->child > 0 && waitpid(m->child, &status, WNOHANG) == m->child) {
		m->child = 0;
		if (WIFEXITED(status))
			m->exit_status = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			m->exit_status = 128 + WTERMSIG(status);
		comp_log("command exited with status %d", m->exit_status);
		wl_display_terminate(m->server.display);
	}
	return 0;
}

static pid_t spawn(char **cmd, const char *socket_name, const char *test_socket_name,
                   int x_display)
{
	char display[16];
	snprintf(display, sizeof(display), ":%d", x_display);
	pid_t pid = fork();
	if (pid < 0) {
		comp_log("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* The compositor blocks these for its signalfd; the child must
		 * get ordinary signal behaviour back. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setenv("WAYLAND_DISPLAY", socket_name, 1);
		if (test_socket_name)
			setenv("DUET_TEST_DISPLAY", test_socket_name, 1);
		else
			unsetenv("DUET_TEST_DISPLAY");
		if (x_display >= 0)
			setenv("DISPLAY", display, 1);
		execvp(cmd[0], cmd);
		fprintf(stderr, "duet-compositor: cannot run '%s': %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	comp_log("started '%s' (pid %d)", cmd[0], (int)pid);
	return pid;
}

/* libwayland needs XDG_RUNTIME_DIR for its socket; root shells and
 * containers often have none. */
static char *ensure_runtime_dir(void)
{
	const char *dir = getenv("XDG_RUNTIME_DIR");
	if (dir && *dir)
		return NULL;
	char tmpl[] = "/tmp/duet-runtime-XXXXXX";
	char *made = mkdtemp(tmpl);
	if (!made) {
		comp_log("XDG_RUNTIME_DIR is unset and mkdtemp failed: %s", strerror(errno));
		return NULL;
	}
	chmod(made, 0700);
	setenv("XDG_RUNTIME_DIR", made, 1);
	comp_log("XDG_RUNTIME_DIR was unset; using private %s (set it for clients)", made);
	return strdup(made);
}

int main(int argc, char **argv)
{
	static struct main_state m; /* static: large, and signal sources point at it */
	struct comp_options opt = {
		.width = 1920,
		.height = 1080,
		.refresh_mhz = 60000,
		.backend = "headless",
	};
	char **cmd = NULL;
	int status = parse_args(argc, argv, &opt, &cmd);
	if (status >= 0)
		return status;
	m.usr1_path = opt.screenshot_path ? opt.screenshot_path : DEFAULT_SCREENSHOT;
	opt.protocol_log = getenv("DUET_PROTOCOL_LOG");
	opt.trace_path = getenv("DUET_TRACE");

	/* Block before any thread exists (Mesa starts some): a signalfd only
	 * sees signals that are blocked in every thread. */
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	/* A client that disconnects while we write to it must not kill us. */
	signal(SIGPIPE, SIG_IGN);

	char *runtime_dir = ensure_runtime_dir();

	if (comp_server_init(&m.server, &opt) != 0) {
		comp_log("startup failed");
		if (runtime_dir)
			rmdir(runtime_dir);
		free(runtime_dir);
		return 1;
	}
	struct wl_event_loop *loop = m.server.loop;
	struct wl_event_source *sources[] = {
		wl_event_loop_add_signal(loop, SIGINT, handle_terminate, &m),
		wl_event_loop_add_signal(loop, SIGTERM, handle_terminate, &m),
		wl_event_loop_add_signal(loop, SIGUSR1, handle_usr1, &m),
		wl_event_loop_add_signal(loop, SIGCHLD, handle_child, &m),
	};

	/* The test socket first: a reader that waits for WAYLAND_DISPLAY
	 * finds both sockets listening. */
	if (m.server.test_socket_name)
		printf("DUET_TEST_DISPLAY=%s\n", m.server.test_socket_name);
	/* Likewise the X display, which listens from the start. */
	if (m.server.xwayland)
		printf("DISPLAY=:%d\n", comp_xwayland_display(m.server.xwayland));
	printf("WAYLAND_DISPLAY=%s\n", m.server.socket_name);
	fflush(stdout);
	struct comp_output *output;
	wl_list_for_each(output, &m.server.outputs, link) {
		if (output->index == 0)
			comp_log("listening on %s, %s output %s %dx%d, refresh %s%.3f Hz",
			         m.server.socket_name, m.server.backend->name, output->name,
			         output->width, output->height,
			         output->refresh_mhz ? "" : "unthrottled ",
			         output->refresh_mhz / 1000.0);
		else
			comp_log("%s output %s %dx%d at %d,%d, refresh %s%.3f Hz",
			         m.server.backend->name, output->name, output->width,
			         output->height, output->x, output->y,
			         output->refresh_mhz ? "" : "unthrottled ",
			         output->refresh_mhz / 1000.0);
	}

	if (cmd) {
		m.child = spawn(cmd, m.server.socket_name, m.server.test_socket_name,
		                m.server.xwayland ? comp_xwayland_display(m.server.xwayland) : -1);
		if (m.child < 0) {
			m.exit_status = 127;
			m.child = 0;
			wl_display_terminate(m.server.display);
		}
	}

	wl_display_run(m.server.display);

	if (opt.screenshot_path) {
		if (comp_output_write_png(comp_layout_first_output(&m.server),
		                          opt.screenshot_path) == 0)
			comp_log("screenshot written to %s", opt.screenshot_path);
		else
			comp_log("cannot write screenshot to %s", opt.screenshot_path);
	}
	if (m.child > 0) {
		/* We were told to stop while the command still runs. */
		kill(m.child, SIGTERM);
	}
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (sources[i])
			wl_event_source_remove(sources[i]);
	comp_server_finish(&m.server);
	if (runtime_dir)
		rmdir(runtime_dir);
	free(runtime_dir);
	return m.exit_status;
}
