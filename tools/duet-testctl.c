/* duet-testctl: drive duet-compositor through the duet_test protocol from
 * shell scripts (tests, bench). One command per run; see usage().
 *
 * Exit status: 0 success, 1 failure (cannot connect, no duet_test global,
 * protocol error, timeout), 2 bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <wayland-client.h>

#define CTL_PROG "duet-testctl"
#include "ctl-args.h"
#include "ctl-test.h"
#include "duet-test-client-protocol.h"

#define DEFAULT_WAIT_S 10.0
#define POLL_INTERVAL_NS 20000000L

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: duet-testctl [--socket NAME] COMMAND [ARGS...]\n"
	        "       duet-testctl [--socket NAME] -\n"
	        "\n"
	        "Controls duet-compositor through its private duet_test protocol,\n"
	        "which it offers only when started with --test-protocol and only on its\n"
	        "test socket. Connects to --socket NAME, else to $DUET_TEST_DISPLAY, else\n"
	        "to $WAYLAND_DISPLAY-test (the test socket beside the clients' socket).\n"
	        "\n"
	        "commands:\n"
	        "  sync                      wait until everything sent before is handled\n"
	        "                            and any pending repaint is presented\n"
	        "  windows                   one line per window, topmost first:\n"
	        "                            id pid x y w h focused app_id<TAB>title\n"
	        "                            (app_id '-' when unset)\n"
	        "  wait-window APP_ID [TIMEOUT_S]\n"
	        "                            wait for a window with that app_id (default %.0f s)\n"
	        "                            and print its line; exit 1 on timeout\n"
	        "  screenshot FILE.png [OUTPUT]\n"
	        "                            write the last presented frame of the first\n"
	        "                            output, or of OUTPUT (a name such as\n"
	        "                            HEADLESS-2, or an index from 0, left to right)\n"
	        "  resize ID W H             configure window ID to W x H\n"
	        "  move ID X Y               move window ID's top-left to X, Y (layout\n"
	        "                            coordinates, as a pager)\n"
	        "  close ID                  ask window ID to close\n"
	        "  activate ID               raise and focus window ID\n"
	        "  motion X Y                move the pointer to layout coordinates (outputs\n"
	        "                            side by side, the first at 0,0)\n"
	        "  button BTN 0|1            release/press a button (evdev code, or\n"
	        "                            left, right, middle)\n"
	        "  key KEY 0|1               release/press a key (evdev keycode)\n"
	        "  touch down|motion ID X Y  touch point ID goes down or moves to layout\n"
	        "                            coordinates X, Y (the first touch command\n"
	        "                            plugs a touchscreen into the seat)\n"
	        "  touch up ID               touch point ID goes up\n"
	        "  touch frame               end a group of touch events (wl_touch.frame)\n"
	        "  globals                   print every global: interface version\n"
	        "\n"
	        "Keys, buttons and touch points still down when duet-testctl exits are\n"
	        "let go (a lone 'touch down' is followed by its up). With '-' as the\n"
	        "command, it reads commands from stdin, one a line, on one connection,\n"
	        "and prints 'ok' once each is done, so they stay down between lines.\n"
	        "\n"
	        "exit status: 0 success, 1 failure, 2 bad usage\n",
	        DEFAULT_WAIT_S);
}

/* ------------------------------------------------------------ helpers */

/* Reports a dead connection (protocol error or lost server) and returns 1. */
static int connection_failed(struct ctl_test *ctl)
{
	int err = wl_display_get_error(ctl->display);
	if (err == EPROTO) {
		const struct wl_interface *iface = NULL;
		uint32_t id = 0;
		uint32_t code = wl_display_get_protocol_error(ctl->display, &iface, &id);
		fprintf(stderr, "duet-testctl: protocol error %u on %s@%u (the compositor's message "
		        "is above)\n", code, iface ? iface->name : "?", id);
	} else {
		fprintf(stderr, "duet-testctl: connection to the compositor failed: %s\n",
		        strerror(err ? err : EPIPE));
	}
	return 1;
}

/* Dispatches until *flag is set; 0 on success, 1 if the connection died. */
static int dispatch_until(struct ctl_test *ctl, const bool *flag)
{
	while (!*flag) {
		if (wl_display_dispatch(ctl->display) < 0)
			return connection_failed(ctl);
	}
	return 0;
}

static int roundtrip(struct ctl_test *ctl)
{
	return wl_display_roundtrip(ctl->display) < 0 ? connection_failed(ctl) : 0;
}

static void sync_done(void *data, struct wl_callback *cb, uint32_t time)
{
	*(bool *)data = true;
	wl_callback_destroy(cb);
}

static const struct wl_callback_listener sync_listener = { .done = sync_done };

static int do_sync(struct ctl_test *ctl)
{
	bool done = false;
	struct wl_callback *cb = duet_test_sync(ctl->test);
	wl_callback_add_listener(cb, &sync_listener, &done);
	return dispatch_until(ctl, &done);
}

static int list_windows(struct ctl_test *ctl)
{
	ctl_test_windows_clear(ctl);
	duet_test_list_windows(ctl->test);
	return dispatch_until(ctl, &ctl->windows_done);
}

static void print_window(const struct ctl_window *w)
{
	printf("%u %d %d %d %d %d %u %s\t%s\n", w->id, w->pid, w->x, w->y, w->width, w->height,
	       w->focused, w->app_id ? w->app_id : "-", w->title ? w->title : "");
}

/* ----------------------------------------------------------- commands */

static int cmd_windows(struct ctl_test *ctl)
{
	if (list_windows(ctl))
		return 1;
	for (size_t i = 0; i < ctl->n_windows; i++)
		print_window(&ctl->windows[i]);
	return 0;
}

static int cmd_wait_window(struct ctl_test *ctl, const char *app_id, double timeout_s)
{
	double deadline = ctl_now_s() + timeout_s;
	for (;;) {
		if (do_sync(ctl) || list_windows(ctl))
			return 1;
		for (size_t i = 0; i < ctl->n_windows; i++) {
			const struct ctl_window *w = &ctl->windows[i];
			if (w->app_id && strcmp(w->app_id, app_id) == 0) {
				print_window(w);
				return 0;
			}
		}
		if (ctl_now_s() >= deadline)
			break;
		nanosleep(&(struct timespec){ 0, POLL_INTERVAL_NS }, NULL);
	}
	fprintf(stderr, "duet-testctl: no window with app_id '%s' after %g s\n", app_id,
	        timeout_s);
	return 1;
}

static int cmd_screenshot(struct ctl_test *ctl, const char *path, const char *output)
{
	if (output && ctl->version < 3) {
		fprintf(stderr, "duet-testctl: this compositor's duet_test (version %u) has no "
		        "screenshot of another output\n", ctl->version);
		return 1;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "duet-testctl: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	/* A script may take several: each waits for its own answer. */
	ctl->shot.done = false;
	/* libwayland duplicates the fd when it queues the request. */
	if (output)
		duet_test_screenshot_output(ctl->test, fd, output);
	else
		duet_test_screenshot(ctl->test, fd);
	close(fd);
	if (dispatch_until(ctl, &ctl->shot.done)) {
		unlink(path);
		return 1;
	}
	return 0;
}

/* An evdev button code, or its name: left, right, middle
 * (linux/input-event-codes.h: BTN_LEFT 0x110, BTN_RIGHT, BTN_MIDDLE). */
static bool parse_button(const char *s, long *code)
{
	static const char *const names[] = { "left", "right", "middle" };
	for (long i = 0; i < 3; i++) {
		if (strcmp(s, names[i]) == 0) {
			*code = 0x110 + i;
			return true;
		}
	}
	return ctl_parse_long(s, 0, UINT32_MAX, code);
}

/* With ctl NULL only checks the arguments, so that bad usage is reported
 * (exit 2) before any connection is attempted. */
static int run_command(struct ctl_test *ctl, int argc, char **argv)
{
	const char *cmd = argv[0];
	long a, b, v[3];
	double x, y;
	static const struct ctl_arg id_args[] = { CTL_ARG_ID(0) };
	static const struct ctl_arg resize_args[] = { CTL_ARG_ID(0), CTL_ARG_SIZE("width", 32768),
	                                               CTL_ARG_SIZE("height", 32768) };
	static const struct ctl_arg move_args[] = { CTL_ARG_ID(0), CTL_ARG_X, CTL_ARG_Y };

	if (strcmp(cmd, "globals") == 0) {
		CTL_NEED_ARGS(0, "globals");
		return 0; /* printed while binding */
	}
	if (strcmp(cmd, "sync") == 0) {
		CTL_NEED_ARGS(0, "sync");
		return ctl ? do_sync(ctl) : 0;
	}
	if (strcmp(cmd, "windows") == 0) {
		CTL_NEED_ARGS(0, "windows");
		return ctl ? cmd_windows(ctl) : 0;
	}
	if (strcmp(cmd, "wait-window") == 0) {
		double timeout = DEFAULT_WAIT_S;
		if (argc != 2 && argc != 3)
			return ctl_bad_usage("usage: duet-testctl %s", "wait-window APP_ID [TIMEOUT_S]");
		if (argc == 3 && !ctl_parse_double(argv[2], 0, 1e9, &timeout))
			return ctl_bad_usage("bad timeout '%s' (seconds, >= 0)", argv[2]);
		return ctl ? cmd_wait_window(ctl, argv[1], timeout) : 0;
	}
	if (strcmp(cmd, "screenshot") == 0) {
		if (argc != 2 && argc != 3)
			return ctl_bad_usage("usage: duet-testctl %s", "screenshot FILE.png [OUTPUT]");
		return ctl ? cmd_screenshot(ctl, argv[1], argc == 3 ? argv[2] : NULL) : 0;
	}
	if (strcmp(cmd, "resize") == 0) {
		CTL_COMMAND_ARGS(3, "resize ID W H", resize_args, v);
		duet_test_resize_window(ctl->test, (uint32_t)v[0], (int32_t)v[1], (int32_t)v[2]);
		return roundtrip(ctl);
	}
	if (strcmp(cmd, "move") == 0) {
		CTL_COMMAND_ARGS(3, "move ID X Y", move_args, v);
		if (ctl->version < 2) {
			fprintf(stderr, "duet-testctl: this compositor's duet_test (version %u) "
			        "cannot move windows\n", ctl->version);
			return 1;
		}
		duet_test_move_window(ctl->test, (uint32_t)v[0], (int32_t)v[1], (int32_t)v[2]);
		return roundtrip(ctl);
	}
	if (strcmp(cmd, "close") == 0 || strcmp(cmd, "activate") == 0) {
		CTL_COMMAND_ARGS(1, strcmp(cmd, "close") == 0 ? "close ID" : "activate ID", id_args, v);
		if (strcmp(cmd, "close") == 0)
			duet_test_close_window(ctl->test, (uint32_t)v[0]);
		else
			duet_test_activate_window(ctl->test, (uint32_t)v[0]);
		return roundtrip(ctl);
	}
	if (strcmp(cmd, "motion") == 0) {
		CTL_NEED_ARGS(2, "motion X Y");
		/* wl_fixed_t holds 24 integer bits */
		if (!ctl_parse_double(argv[1], -8388608, 8388607, &x))
			return ctl_bad_usage("bad X '%s'", argv[1]);
		if (!ctl_parse_double(argv[2], -8388608, 8388607, &y))
			return ctl_bad_usage("bad Y '%s'", argv[2]);
		if (!ctl)
			return 0;
		duet_test_pointer_motion(ctl->test, wl_fixed_from_double(x), wl_fixed_from_double(y));
		return roundtrip(ctl);
	}
	if (strcmp(cmd, "button") == 0 || strcmp(cmd, "key") == 0) {
		bool key = strcmp(cmd, "key") == 0;
		CTL_NEED_ARGS(2, key ? "key KEY 0|1" : "button BTN 0|1");
		if (key ? !ctl_parse_long(argv[1], 0, UINT32_MAX - 8, &a) : !parse_button(argv[1], &a))
			return ctl_bad_usage(key ? "bad keycode '%s'" : "bad button '%s'", argv[1]);
		if (!ctl_parse_long(argv[2], 0, 1, &b))
			return ctl_bad_usage("bad state '%s' (0 release, 1 press)", argv[2]);
		if (!ctl)
			return 0;
		if (key)
			duet_test_key(ctl->test, (uint32_t)a, (uint32_t)b);
		else
			duet_test_pointer_button(ctl->test, (uint32_t)a, (uint32_t)b);
		return roundtrip(ctl);
	}
	if (strcmp(cmd, "touch") == 0) {
		static const char synopsis[] = "touch down|motion ID X Y, touch up ID, touch frame";
		uint32_t kind = DUET_TEST_TOUCH_KIND_DOWN;
		if (argc < 2)
			return ctl_bad_usage("usage: duet-testctl %s", synopsis);
		if (strcmp(argv[1], "frame") == 0) {
			if (argc != 2)
				return ctl_bad_usage("usage: duet-testctl %s", synopsis);
		} else {
			if (strcmp(argv[1], "down") == 0)
				kind = DUET_TEST_TOUCH_KIND_DOWN;
			else if (strcmp(argv[1], "motion") == 0)
				kind = DUET_TEST_TOUCH_KIND_MOTION;
			else if (strcmp(argv[1], "up") == 0)
				kind = DUET_TEST_TOUCH_KIND_UP;
			else
				return ctl_bad_usage("bad touch kind '%s' (down, motion, up, frame)", argv[1]);
			if (argc != (kind == DUET_TEST_TOUCH_KIND_UP ? 3 : 5))
				return ctl_bad_usage("usage: duet-testctl %s", synopsis);
			if (!ctl_parse_long(argv[2], INT32_MIN, INT32_MAX, &a))
				return ctl_bad_usage("bad touch id '%s'", argv[2]);
			x = y = 0;
			if (argc == 5 && !ctl_parse_double(argv[3], -8388608, 8388607, &x))
				return ctl_bad_usage("bad X '%s'", argv[3]);
			if (argc == 5 && !ctl_parse_double(argv[4], -8388608, 8388607, &y))
				return ctl_bad_usage("bad Y '%s'", argv[4]);
		}
		if (!ctl)
			return 0;
		if (ctl->version < 4) {
			fprintf(stderr, "duet-testctl: this compositor's duet_test (version %u) has no "
			        "touch\n", ctl->version);
			return 1;
		}
		if (argc == 2)
			duet_test_touch_frame(ctl->test);
		else
			duet_test_touch(ctl->test, (int32_t)a, wl_fixed_from_double(x),
			                wl_fixed_from_double(y), kind);
		return roundtrip(ctl);
	}
	return ctl_bad_usage("unknown command '%s'", cmd);
}

/* '-': commands from stdin on one connection, so that what one holds down
 * stays down between them (a touch held while a test looks at a client).
 * A bad line or a failed command ends the run with its status. */
static int run_script(struct ctl_test *ctl)
{
	char line[4096];
	while (fgets(line, sizeof(line), stdin)) {
		char *args[16];
		int n = 0;
		for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
			if (n == (int)(sizeof(args) / sizeof(args[0])))
				return ctl_bad_usage("%s", "too many words on a line");
			args[n++] = tok;
		}
		if (n == 0)
			continue;
		int ret = run_command(NULL, n, args);
		if (ret == 0 && ctl)
			ret = run_command(ctl, n, args);
		if (ret)
			return ret;
		printf("ok\n");
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *socket = NULL;
	const struct ctl_opt opts[] = { { "--socket", "%s needs a NAME", &socket } };
	int i = 0, ret = ctl_read_options(argc, argv, opts, 1, usage, &i);
	if (ret >= 0)
		return ret;
	bool script = strcmp(argv[i], "-") == 0;
	if (script && argc - i != 1)
		return ctl_bad_usage("%s", "'-' takes no arguments (the commands come from stdin)");
	ret = script ? 0 : run_command(NULL, argc - i, argv + i);
	if (ret)
		return ret;

	char derived[4096];
	if (!socket || !*socket)
		socket = getenv("DUET_TEST_DISPLAY");
	if (!socket || !*socket) {
		const char *display = getenv("WAYLAND_DISPLAY");
		if (snprintf(derived, sizeof(derived), "%s-test",
		             display && *display ? display : "wayland-0") >= (int)sizeof(derived))
			return ctl_bad_usage("%s", "WAYLAND_DISPLAY is too long");
		socket = derived;
	}
	struct ctl_test ctl = { .list_globals = strcmp(argv[i], "globals") == 0 };
	ctl.display = wl_display_connect(socket);
	if (!ctl.display) {
		fprintf(stderr, "duet-testctl: cannot connect to Wayland display '%s': %s "
		        "(is duet-compositor running with --test-protocol?)\n", socket,
		        strerror(errno));
		return 1;
	}
	/* move_window is version 2, screenshot_output 3, touch and
	 * touch_frame 4; every other request is 1's. */
	ret = ctl_test_bind(&ctl, 4) < 0 ? connection_failed(&ctl) : 0;
	if (ret == 0 && !ctl.list_globals) {
		if (!ctl.test) {
			fprintf(stderr, "duet-testctl: the compositor does not advertise duet_test "
			        "(is it duet-compositor with --test-protocol, and this its test socket?)\n");
			ret = 1;
		} else {
			ret = script ? run_script(&ctl) : run_command(&ctl, argc - i, argv + i);
		}
	}
	fflush(stdout);
	ctl_test_close(&ctl);
	return ret;
}
