/* duet-x11-test-pattern: the X11 twin of duet-test-pattern. A well-behaved
 * ICCCM/EWMH client with a 24-bit window that shows the same pattern
 * (pattern.h), drawn with PutImage, so screenshots of duet-xwm and of
 * duet-compositor can be compared pixel for pixel. It reports on stdout:
 *   mapped W H     first Expose after the map; the pattern is drawn and the
 *                  X server has processed it (a round trip followed)
 *   resized W H    redrawn at a new size after a ConfigureNotify
 *   frame N        with --frames: the N-th redraw reached the X server
 * With --strips the --frames redraws also put back part of the pattern
 * (same pixels, so the picture does not change) at a place that moves:
 * odd ones a 2-pixel-wide column of all rows but the first (a tall narrow
 * damage), every fourth (2, 6, ...) two rows but for their first and last
 * pixel (a wide one).
 *   window ID      its X window's id, before it is mapped
 *   sent LINE      with --commands: the request LINE asked for is sent
 *   key CODE       a key pressed while it had the focus (X keycode)
 * and exits 0 when the window manager sends WM_DELETE_WINDOW. With
 * --override-redirect X,Y its window is override-redirect at X,Y, as a
 * menu or a tooltip is: placed by the client, not managed. The window
 * manager's ICCCM/EWMH side is driven with --transient-for ID (a dialog),
 * --iconic (WM_HINTS initial_state IconicState), --no-delete-window (a
 * client the WM can only kill) and --commands: stdin lines
 * "add|remove|toggle fullscreen|maximized" send the _NET_WM_STATE client
 * message an application sends, "iconify" ICCCM's WM_CHANGE_STATE. With
 * --draw-on-command it leaves its mapped window undrawn (X gives it no
 * pixels, so Xwayland shows nothing of it) until the stdin line "draw".
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xcb/xcb.h>

#include "client-args.h"
#include "pattern.h"
#include "x11-common.h"

#define MAX_SIDE 16384

struct x11_pattern {
	xcb_connection_t *conn;
	xcb_screen_t *screen;
	xcb_window_t window;
	xcb_gcontext_t gc;
	xcb_visualid_t visual;
	uint8_t depth;
	xcb_atom_t wm_protocols, wm_delete_window;

	int width, height;          /* size of the window, from ConfigureNotify */
	int drawn_width, drawn_height;
	bool mapped_reported;

	uint32_t *pixels; /* pattern at drawn size, counter pixel included */
	size_t pixels_size;

	struct pattern_args args; /* --size is the window's size at its creation */
	long frames_done;
	long frame_interval_ms;
	bool strips;
	/* The ICCCM/EWMH options (see the top). */
	const char *transient_for;
	bool iconic, no_delete_window, commands;
	bool draw_on_command, draw_allowed; /* --draw-on-command; "draw" came */
};

/* A 24-bit TrueColor visual: the screen's own when it is one (Xvfb with
 * -screen 0 WxHx24), else the first one found. */
static bool find_visual(struct x11_pattern *app)
{
	if (app->screen->root_depth == 24) {
		app->visual = app->screen->root_visual;
		app->depth = 24;
		return true;
	}
	xcb_depth_iterator_t d = xcb_screen_allowed_depths_iterator(app->screen);
	for (; d.rem; xcb_depth_next(&d)) {
		if (d.data->depth != 24)
			continue;
		xcb_visualtype_iterator_t v = xcb_depth_visuals_iterator(d.data);
		for (; v.rem; xcb_visualtype_next(&v)) {
			if (v.data->_class == XCB_VISUAL_CLASS_TRUE_COLOR) {
				app->visual = v.data->visual_id;
				app->depth = 24;
				return true;
			}
		}
	}
	return false;
}

static void set_string(struct x11_pattern *app, xcb_atom_t prop, xcb_atom_t type,
                       const char *s, size_t len)
{
	xcb_change_property(app->conn, XCB_PROP_MODE_REPLACE, app->window, prop, type, 8,
	                    (uint32_t)len, s);
}

static void set_properties(struct x11_pattern *app, const char *wm_class, const char *title,
                           const int *min, const int *max)
{
	xcb_connection_t *c = app->conn;
	/* WM_CLASS is "instance\0class\0"; tests look at the class part. */
	size_t n = strlen(wm_class);
	char *cls = malloc(2 * n + 2);
	if (cls) {
		memcpy(cls, wm_class, n + 1);
		memcpy(cls + n + 1, wm_class, n + 1);
		set_string(app, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, cls, 2 * n + 2);
		free(cls);
	}
	set_string(app, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, title, strlen(title));
	set_string(app, x11_intern(c, "_NET_WM_NAME"), x11_intern(c, "UTF8_STRING"), title,
	           strlen(title));

	/* _NET_WM_PID is only meaningful with WM_CLIENT_MACHINE (EWMH). */
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) == 0)
		set_string(app, XCB_ATOM_WM_CLIENT_MACHINE, XCB_ATOM_STRING, host, strlen(host));
	uint32_t pid = (uint32_t)getpid();
	xcb_change_property(c, XCB_PROP_MODE_REPLACE, app->window, x11_intern(c, "_NET_WM_PID"),
	                    XCB_ATOM_CARDINAL, 32, 1, &pid);

	if (!app->no_delete_window)
		xcb_change_property(c, XCB_PROP_MODE_REPLACE, app->window, app->wm_protocols,
		                    XCB_ATOM_ATOM, 32, 1, &app->wm_delete_window);

	/* WM_HINTS: input true, so the WM gives us the focus; the normal
	 * state, or iconic (ICCCM 4.1.4: managed but not shown). */
	uint32_t wm_hints[9] = { 1u /* InputHint */ | 2u /* StateHint */, 1, app->iconic ? 3 : 1 };
	xcb_change_property(c, XCB_PROP_MODE_REPLACE, app->window, XCB_ATOM_WM_HINTS,
	                    XCB_ATOM_WM_HINTS, 32, 9, wm_hints);

	/* WM_NORMAL_HINTS (ICCCM 4.1.2.3): flags, 4 pad, min, max, inc, aspects,
	 * base, gravity. PSize tells the WM our size is the program's wish. */
	uint32_t hints[18] = { 8u /* PSize */ };
	hints[3] = (uint32_t)app->width;
	hints[4] = (uint32_t)app->height;
	if (min[0] > 0) {
		hints[0] |= 16u; /* PMinSize */
		hints[5] = (uint32_t)min[0];
		hints[6] = (uint32_t)min[1];
	}
	if (max[0] > 0) {
		hints[0] |= 32u; /* PMaxSize */
		hints[7] = (uint32_t)max[0];
		hints[8] = (uint32_t)max[1];
	}
	xcb_change_property(c, XCB_PROP_MODE_REPLACE, app->window, XCB_ATOM_WM_NORMAL_HINTS,
	                    XCB_ATOM_WM_SIZE_HINTS, 32, 18, hints);

	if (app->transient_for) {
		/* A dialog as toolkits make one: both hints, as WMs read either. */
		uint32_t parent = (uint32_t)strtoul(app->transient_for, NULL, 0);
		xcb_change_property(c, XCB_PROP_MODE_REPLACE, app->window, XCB_ATOM_WM_TRANSIENT_FOR,
		                    XCB_ATOM_WINDOW, 32, 1, &parent);
		xcb_atom_t dialog = x11_intern(c, "_NET_WM_WINDOW_TYPE_DIALOG");
		xcb_change_property(c, XCB_PROP_MODE_REPLACE, app->window,
		                    x11_intern(c, "_NET_WM_WINDOW_TYPE"), XCB_ATOM_ATOM, 32, 1,
		                    &dialog);
	}
}

/* A client message to the root about our window, as EWMH and ICCCM
 * requests to the window manager are sent. */
static void send_to_wm(struct x11_pattern *app, const char *type, const uint32_t data[5])
{
	xcb_client_message_event_t ev = {
		.response_type = XCB_CLIENT_MESSAGE,
		.format = 32,
		.window = app->window,
		.type = x11_intern(app->conn, type),
	};
	memcpy(ev.data.data32, data, 5 * sizeof(uint32_t));
	xcb_send_event(app->conn, 0, app->screen->root,
	               XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY | XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT,
	               (const char *)&ev);
}

static int handle_event(struct x11_pattern *app, xcb_generic_event_t *ev);

/* One --commands line; false when it is not one. */
static bool run_command(struct x11_pattern *app, const char *line)
{
	char action[16], state[16], tail;
	if (strcmp(line, "draw") == 0 && app->draw_on_command) {
		app->draw_allowed = true;
		/* The Expose it held back: the whole window. */
		xcb_expose_event_t e = { .response_type = XCB_EXPOSE, .window = app->window };
		return handle_event(app, (xcb_generic_event_t *)&e) >= 0;
	}
	if (strcmp(line, "iconify") == 0) {
		const uint32_t data[5] = { 3 /* IconicState */ };
		send_to_wm(app, "WM_CHANGE_STATE", data);
		return true;
	}
	if (sscanf(line, "%15s %15s %c", action, state, &tail) != 2)
		return false;
	static const char *const actions[] = { "remove", "add", "toggle" }; /* EWMH's 0 1 2 */
	uint32_t data[5] = { 3, 0, 0, 1 /* source: an application */ };
	for (uint32_t i = 0; i < 3; i++)
		if (strcmp(action, actions[i]) == 0)
			data[0] = i;
	if (data[0] == 3)
		return false;
	if (strcmp(state, "fullscreen") == 0) {
		data[1] = x11_intern(app->conn, "_NET_WM_STATE_FULLSCREEN");
	} else if (strcmp(state, "maximized") == 0) {
		data[1] = x11_intern(app->conn, "_NET_WM_STATE_MAXIMIZED_VERT");
		data[2] = x11_intern(app->conn, "_NET_WM_STATE_MAXIMIZED_HORZ");
	} else {
		return false;
	}
	send_to_wm(app, "_NET_WM_STATE", data);
	return true;
}

/* Reads what stdin has; false when it is closed or a line is bad. */
static bool read_commands(struct x11_pattern *app, char *buf, size_t size, size_t *len)
{
	ssize_t n = read(STDIN_FILENO, buf + *len, size - 1 - *len);
	if (n <= 0)
		return false;
	*len += (size_t)n;
	buf[*len] = '\0';
	char *nl;
	while ((nl = strchr(buf, '\n'))) {
		*nl = '\0';
		if (!run_command(app, buf)) {
			fprintf(stderr, "duet-x11-test-pattern: bad command '%s'\n", buf);
			return false;
		}
		if (!x11_round_trip(app->conn))
			return false;
		printf("sent %s\n", buf);
		*len -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, *len + 1);
	}
	return *len < size - 1;
}

static bool ensure_pixels(struct x11_pattern *app, int w, int h)
{
	size_t need = (size_t)w * (size_t)h * 4;
	if (need > app->pixels_size) {
		uint32_t *p = realloc(app->pixels, need);
		if (!p)
			return false;
		app->pixels = p;
		app->pixels_size = need;
	}
	test_pattern_fill(app->pixels, w, h);
	return true;
}

/* PutImage in bands of rows, each under the server's maximum request
 * length (BIG-REQUESTS raises it, but a full-screen image may still not
 * fit in one request). Depth 24 ZPixmap is 32 bits per pixel on every
 * server duet runs on (checked at start). */
static void put_rows(struct x11_pattern *app, int y0, int rows)
{
	int w = app->drawn_width;
	uint32_t max_bytes = xcb_get_maximum_request_length(app->conn) * 4u;
	uint32_t row_bytes = (uint32_t)w * 4u;
	int band = (int)((max_bytes - 64u) / row_bytes);
	if (band < 1)
		band = 1;
	for (int y = y0; y < y0 + rows; y += band) {
		int n = y0 + rows - y < band ? y0 + rows - y : band;
		xcb_put_image(app->conn, XCB_IMAGE_FORMAT_Z_PIXMAP, app->window, app->gc,
		              (uint16_t)w, (uint16_t)n, 0, (int16_t)y, 0, app->depth,
		              (uint32_t)n * row_bytes,
		              (const uint8_t *)(app->pixels + (size_t)y * (size_t)w));
	}
}

static bool draw_full(struct x11_pattern *app)
{
	int w = app->width, h = app->height;
	if (!ensure_pixels(app, w, h)) {
		fprintf(stderr, "duet-x11-test-pattern: out of memory for %dx%d\n", w, h);
		return false;
	}
	app->drawn_width = w;
	app->drawn_height = h;
	if (app->args.frames > 0)
		app->pixels[0] = 0xff000000u | ((uint32_t)app->frames_done & 0xffffffu);
	put_rows(app, 0, h);
	return x11_round_trip(app->conn);
}

/* The pattern's w x h rectangle at x, y, again (never the counter
 * pixel: callers keep x or y >= 1). */
static void put_part(struct x11_pattern *app, int x, int y, int w, int h)
{
	uint32_t *part = malloc((size_t)w * (size_t)h * 4);
	if (!part)
		return;
	for (int r = 0; r < h; r++)
		memcpy(part + (size_t)r * (size_t)w,
		       app->pixels + (size_t)(y + r) * (size_t)app->drawn_width + (size_t)x,
		       (size_t)w * 4);
	uint32_t max_rows = (xcb_get_maximum_request_length(app->conn) * 4u - 64u) /
	                    ((uint32_t)w * 4u);
	if (max_rows < 1)
		max_rows = 1;
	for (int r = 0; r < h; r += (int)max_rows) {
		int n = h - r < (int)max_rows ? h - r : (int)max_rows;
		xcb_put_image(app->conn, XCB_IMAGE_FORMAT_Z_PIXMAP, app->window, app->gc,
		              (uint16_t)w, (uint16_t)n, (int16_t)x, (int16_t)(y + r), 0, app->depth,
		              (uint32_t)n * (uint32_t)w * 4u,
		              (const uint8_t *)(part + (size_t)r * (size_t)w));
	}
	free(part);
}

/* One --frames step: only the counter pixel changes, as on Wayland. */
static bool draw_counter(struct x11_pattern *app)
{
	app->frames_done++;
	app->pixels[0] = 0xff000000u | ((uint32_t)app->frames_done & 0xffffffu);
	xcb_put_image(app->conn, XCB_IMAGE_FORMAT_Z_PIXMAP, app->window, app->gc, 1, 1, 0, 0, 0,
	              app->depth, 4, (const uint8_t *)app->pixels);
	int w = app->drawn_width, h = app->drawn_height;
	if (app->strips && app->frames_done % 2 == 1 && w > 3 && h > 1)
		put_part(app, 1 + (int)((app->frames_done * 37) % (w - 3)), 1, 2, h - 1);
	if (app->strips && app->frames_done % 4 == 2 && w > 2 && h > 3)
		put_part(app, 1, 1 + (int)((app->frames_done * 13) % (h - 3)), w - 2, 2);
	if (!x11_round_trip(app->conn))
		return false;
	printf("frame %ld\n", app->frames_done);
	return true;
}

/* Returns 1 to keep going, 0 to exit successfully, -1 on error. */
static int handle_event(struct x11_pattern *app, xcb_generic_event_t *ev)
{
	switch (ev->response_type & 0x7f) {
	case XCB_EXPOSE: {
		xcb_expose_event_t *e = (xcb_expose_event_t *)ev;
		if (e->window != app->window || (app->draw_on_command && !app->draw_allowed))
			return 1;
		if (!app->mapped_reported || app->drawn_width != app->width ||
		    app->drawn_height != app->height) {
			if (!draw_full(app))
				return -1;
		} else {
			/* Re-expose of an area we already drew: put back just
			 * those rows (the server keeps no backing store). */
			int y0 = e->y, rows = e->height;
			if (y0 + rows > app->drawn_height)
				rows = app->drawn_height - y0;
			if (rows > 0)
				put_rows(app, y0, rows);
		}
		if (!app->mapped_reported) {
			app->mapped_reported = true;
			printf("mapped %d %d\n", app->drawn_width, app->drawn_height);
			if (app->args.exit_after_first_frame)
				return 0;
		}
		return 1;
	}
	case XCB_CONFIGURE_NOTIFY: {
		xcb_configure_notify_event_t *e = (xcb_configure_notify_event_t *)ev;
		if (e->window != app->window || e->width == 0 || e->height == 0)
			return 1;
		if (e->width == app->width && e->height == app->height)
			return 1;
		app->width = e->width;
		app->height = e->height;
		/* Before the first Expose the window is not shown: the Expose
		 * draws at the new size. */
		if (!app->mapped_reported)
			return 1;
		if (!draw_full(app))
			return -1;
		printf("resized %d %d\n", app->drawn_width, app->drawn_height);
		return 1;
	}
	case XCB_KEY_PRESS:
		/* Where the keyboard went, for tests of the focus. */
		printf("key %u\n", ((xcb_key_press_event_t *)ev)->detail);
		return 1;
	case XCB_CLIENT_MESSAGE: {
		xcb_client_message_event_t *e = (xcb_client_message_event_t *)ev;
		if (e->type == app->wm_protocols && e->format == 32 &&
		    e->data.data32[0] == app->wm_delete_window)
			return 0;
		return 1;
	}
	case 0: {
		xcb_generic_error_t *err = (xcb_generic_error_t *)ev;
		fprintf(stderr, "duet-x11-test-pattern: X error %u (request %u)\n", err->error_code,
		        err->major_code);
		return -1;
	}
	default:
		return 1;
	}
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: duet-x11-test-pattern [--size WxH] [--class CLASS] [--title T]\n"
	        "                             [--frames N] [--interval-ms MS] [--min WxH] [--max WxH]\n"
	        "                             [--maximized] [--exit-after-first-frame] [--strips]\n"
	        "                             [--override-redirect X,Y] [--transient-for ID]\n"
	        "                             [--iconic] [--no-delete-window] [--commands]\n"
	        "                             [--draw-on-command]\n"
	        "Shows an X11 window with duet's fixed test pattern; prints 'window ID' before\n"
	        "mapping, 'mapped W H' once drawn, 'resized W H' after a resize, 'frame N' per\n"
	        "--frames redraw; exits 0 on WM_DELETE_WINDOW. --override-redirect: an\n"
	        "override-redirect window (a menu's kind) at X,Y. --transient-for: a dialog of\n"
	        "window ID. --iconic: mapped iconic. --no-delete-window: no WM_DELETE_WINDOW in\n"
	        "WM_PROTOCOLS. --commands: stdin lines 'add|remove|toggle fullscreen|maximized'\n"
	        "send _NET_WM_STATE requests, 'iconify' WM_CHANGE_STATE, with --draw-on-command\n"
	        "'draw' the first drawing (none until then); 'sent LINE' follows.\n"
	        "Connects to $DISPLAY.\n");
}

static bool pixmap_format_ok(const xcb_setup_t *setup)
{
	xcb_format_iterator_t f = xcb_setup_pixmap_formats_iterator(setup);
	for (; f.rem; xcb_format_next(&f))
		if (f.data->depth == 24)
			return f.data->bits_per_pixel == 32;
	return false;
}

int main(int argc, char **argv)
{
	struct x11_pattern app = {
		.args = { .size = { 320, 240 }, .title = "duet x11 test pattern" },
		.frame_interval_ms = 16,
	};
	const char *wm_class = "duet-x11-test-pattern";
	int min[2] = { 0, 0 }, max[2] = { 0, 0 };
	const char *override_at = NULL;
	const struct test_option options[] = {
		PATTERN_OPTIONS(&app.args, MAX_SIDE),
		{ "--class", TEST_OPT_STRING, &wm_class, 0 },
		{ "--min", TEST_OPT_SIZE, min, MAX_SIDE },
		{ "--max", TEST_OPT_SIZE, max, MAX_SIDE },
		{ "--interval-ms", TEST_OPT_COUNT, &app.frame_interval_ms, 0 },
		{ "--strips", TEST_OPT_FLAG, &app.strips, 0 },
		{ "--override-redirect", TEST_OPT_STRING, &override_at, 0 },
		{ "--transient-for", TEST_OPT_STRING, &app.transient_for, 0 },
		{ "--iconic", TEST_OPT_FLAG, &app.iconic, 0 },
		{ "--no-delete-window", TEST_OPT_FLAG, &app.no_delete_window, 0 },
		{ "--commands", TEST_OPT_FLAG, &app.commands, 0 },
		{ "--draw-on-command", TEST_OPT_FLAG, &app.draw_on_command, 0 },
	};
	int status = test_parse_options("duet-x11-test-pattern", argc, argv, options,
	                                sizeof(options) / sizeof(options[0]), usage);
	if (status >= 0)
		return status;
	app.width = app.args.size[0];
	app.height = app.args.size[1];
	app.commands = app.commands || app.draw_on_command;
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A menu's way: the window at X,Y, no window manager asked. */
	int at[2] = { 0, 0 };
	bool override_redirect = override_at != NULL;
	char tail;
	if (override_at && (sscanf(override_at, "%d,%d%c", &at[0], &at[1], &tail) != 2 ||
	                    at[0] < -MAX_SIDE || at[0] > MAX_SIDE || at[1] < -MAX_SIDE ||
	                    at[1] > MAX_SIDE)) {
		usage(stderr);
		return 2;
	}

	app.conn = x11_connect(NULL, &app.screen, NULL);
	if (!app.conn) {
		fprintf(stderr, "duet-x11-test-pattern: cannot connect to X display '%s'\n",
		        getenv("DISPLAY") ? getenv("DISPLAY") : "");
		return 1;
	}
	if (!find_visual(&app) || !pixmap_format_ok(xcb_get_setup(app.conn))) {
		fprintf(stderr, "duet-x11-test-pattern: no 24-bit TrueColor visual with 32-bit "
		        "pixels (start the X server with a 24-bit screen)\n");
		xcb_disconnect(app.conn);
		return 1;
	}
	app.wm_protocols = x11_intern(app.conn, "WM_PROTOCOLS");
	app.wm_delete_window = x11_intern(app.conn, "WM_DELETE_WINDOW");

	xcb_colormap_t colormap = app.screen->default_colormap;
	if (app.visual != app.screen->root_visual) {
		colormap = xcb_generate_id(app.conn);
		xcb_create_colormap(app.conn, XCB_COLORMAP_ALLOC_NONE, colormap, app.screen->root,
		                    app.visual);
	}
	app.window = xcb_generate_id(app.conn);
	/* No background: the first Expose paints every pixel, and a resize
	 * must not flash a fill colour the screenshot could catch. */
	uint32_t values[] = { 0 /* border pixel */, override_redirect ? 1 : 0,
	                      XCB_EVENT_MASK_EXPOSURE | XCB_EVENT_MASK_STRUCTURE_NOTIFY |
	                              XCB_EVENT_MASK_KEY_PRESS,
	                      colormap };
	xcb_create_window(app.conn, app.depth, app.window, app.screen->root, (int16_t)at[0],
	                  (int16_t)at[1], (uint16_t)app.width, (uint16_t)app.height, 0,
	                  XCB_WINDOW_CLASS_INPUT_OUTPUT, app.visual,
	                  XCB_CW_BORDER_PIXEL | XCB_CW_OVERRIDE_REDIRECT | XCB_CW_EVENT_MASK |
	                  XCB_CW_COLORMAP, values);
	app.gc = xcb_generate_id(app.conn);
	xcb_create_gc(app.conn, app.gc, app.window, 0, NULL);
	set_properties(&app, wm_class, app.args.title, min, max);
	if (app.args.maximized) {
		/* Before mapping, a client states its own _NET_WM_STATE (EWMH). */
		xcb_atom_t states[] = { x11_intern(app.conn, "_NET_WM_STATE_MAXIMIZED_VERT"),
		                        x11_intern(app.conn, "_NET_WM_STATE_MAXIMIZED_HORZ") };
		xcb_change_property(app.conn, XCB_PROP_MODE_REPLACE, app.window,
		                    x11_intern(app.conn, "_NET_WM_STATE"), XCB_ATOM_ATOM, 32, 2,
		                    states);
	}
	printf("window 0x%x\n", app.window);
	xcb_map_window(app.conn, app.window);
	xcb_flush(app.conn);

	status = 0;
	bool running = true;
	long next_frame_ms = 0;
	char commands[256];
	size_t commands_len = 0;
	struct pollfd pfd[2] = { { .fd = xcb_get_file_descriptor(app.conn), .events = POLLIN },
	                         { .fd = app.commands ? STDIN_FILENO : -1, .events = POLLIN } };
	while (running) {
		xcb_generic_event_t *ev;
		while ((ev = xcb_poll_for_event(app.conn))) {
			int r = handle_event(&app, ev);
			free(ev);
			if (r <= 0) {
				status = r < 0 ? 1 : 0;
				running = false;
				break;
			}
		}
		if (!running)
			break;
		if (xcb_connection_has_error(app.conn)) {
			fprintf(stderr, "duet-x11-test-pattern: X connection lost\n");
			status = 1;
			break;
		}
		bool animating = app.mapped_reported && app.frames_done < app.args.frames;
		int timeout = -1;
		if (animating) {
			/* A steady frame rate whatever events arrive meanwhile. */
			long left = next_frame_ms - now_ms();
			if (left <= 0) {
				if (!draw_counter(&app)) {
					status = 1;
					break;
				}
				next_frame_ms = now_ms() + app.frame_interval_ms;
				continue;
			}
			timeout = (int)left;
		}
		xcb_flush(app.conn);
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR) {
			perror("duet-x11-test-pattern: poll");
			status = 1;
			break;
		}
		/* Stdin closed ends the commands, not the window (the test
		 * may still close it). */
		if (pfd[1].revents && !read_commands(&app, commands, sizeof(commands), &commands_len)) {
			if (commands_len > 0) {
				status = 1;
				break;
			}
			pfd[1].fd = -1;
		}
	}
	free(app.pixels);
	xcb_disconnect(app.conn);
	return status;
}
