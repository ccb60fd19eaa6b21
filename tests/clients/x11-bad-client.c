/* duet-x11-bad-client: an X11 client that misbehaves on purpose, so tests
 * can check that duet-xwm (and duet-compositor's X window manager) survive
 * it and keep compositing the others.
 *
 * Modes (see usage()): destroy-after-map, bad-normal-hints, bad-properties,
 * configure-flood, die-mid-request, huge-window, big-window, tall-window, huge-menus,
 * huge-cursor;
 * flood and no-read (x11-bad-traffic.c).
 * Each prints what it did on stdout; with --hold the client keeps its
 * windows until it is killed or the window manager sends WM_DELETE_WINDOW,
 * else it exits 0 when done.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xcb/xcb.h>

#include "x11-bad-client.h"
#include "x11-common.h"

/* Deterministic, so a failure can be replayed. */
uint32_t rnd(struct bad *b)
{
	b->rng ^= b->rng << 13;
	b->rng ^= b->rng >> 17;
	b->rng ^= b->rng << 5;
	return b->rng;
}

void set_prop(struct bad *b, xcb_window_t w, xcb_atom_t prop, xcb_atom_t type, uint8_t format,
              uint32_t n, const void *data)
{
	xcb_change_property(b->conn, XCB_PROP_MODE_REPLACE, w, prop, type, format, n, data);
}

xcb_window_t make_window(struct bad *b, int w, int h, const char *title)
{
	xcb_window_t win = xcb_generate_id(b->conn);
	uint32_t values[] = { 0x00c04040, XCB_EVENT_MASK_STRUCTURE_NOTIFY };
	xcb_create_window(b->conn, XCB_COPY_FROM_PARENT, win, b->screen->root, 0, 0, (uint16_t)w,
	                  (uint16_t)h, 0, XCB_WINDOW_CLASS_INPUT_OUTPUT, XCB_COPY_FROM_PARENT,
	                  XCB_CW_BACK_PIXEL | XCB_CW_EVENT_MASK, values);
	static const char cls[] = BAD_CLASS "\0" BAD_CLASS;
	set_prop(b, win, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 8, sizeof(cls), cls);
	set_prop(b, win, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8, (uint32_t)strlen(title), title);
	uint32_t pid = (uint32_t)getpid();
	set_prop(b, win, x11_intern(b->conn, "_NET_WM_PID"), XCB_ATOM_CARDINAL, 32, 1, &pid);
	set_prop(b, win, b->wm_protocols, XCB_ATOM_ATOM, 32, 1, &b->wm_delete_window);
	return win;
}

/* ---------------------------------------------------------------- modes */

/* The WM sees MapRequest (or CreateNotify) for windows that are gone by
 * the time it asks about them: every request it makes fails BadWindow. */
static int destroy_after_map(struct bad *b)
{
	const int rounds = 200;
	for (int i = 0; i < rounds; i++) {
		xcb_window_t w = make_window(b, 100 + i, 80 + i, "destroy-after-map");
		xcb_map_window(b->conn, w);
		switch (i % 4) {
		case 0: /* in the same batch as the map */
			break;
		case 1: /* after the WM had a moment to start managing it */
			xcb_flush(b->conn);
			usleep(rnd(b) % 3000);
			break;
		case 2: /* unmap first, then destroy */
			xcb_unmap_window(b->conn, w);
			break;
		case 3: /* change properties the WM reads, then vanish */
			xcb_flush(b->conn);
			set_prop(b, w, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8, 3, "new");
			break;
		}
		xcb_destroy_window(b->conn, w);
	}
	x11_round_trip(b->conn);
	printf("destroyed %d\n", rounds);
	return 0;
}

struct hints_case {
	const char *name;
	xcb_atom_t type; /* 0: WM_SIZE_HINTS */
	uint8_t format;
	uint32_t n; /* items of format bits */
	uint32_t data[18];
};

/* Windows whose WM_NORMAL_HINTS make no sense. The WM must clamp or ignore
 * them and still manage (and show) the window at a sane size. */
static int bad_normal_hints(struct bad *b, bool hold)
{
	/* flags: 16 PMinSize, 32 PMaxSize, 64 PResizeInc, 128 PAspect,
	 * 256 PBaseSize */
	static const struct hints_case cases[] = {
		{ "min-gt-max", 0, 32, 18, { 16 | 32, 0, 0, 0, 0, 800, 600, 100, 50 } },
		{ "zero", 0, 32, 18, { 16 | 32 | 64 | 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 } },
		{ "huge", 0, 32, 18,
		  { 16 | 32 | 64, 0, 0, 0, 0, 0x7fffffff, 0x7fffffff, 0xffffffff, 0xffffffff,
		    0x7fffffff, 0x7fffffff } },
		{ "negative", 0, 32, 18,
		  { 16 | 32 | 256, 0, 0, 0, 0, (uint32_t)-50, (uint32_t)-50, (uint32_t)-1,
		    (uint32_t)-1, 0, 0, 0, 0, 0, 0, (uint32_t)-400, (uint32_t)-400 } },
		{ "bad-aspect", 0, 32, 18,
		  { 128 | 64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 1, 0, 0, 0 } },
		{ "short", 0, 32, 3, { 16 | 32, 0, 0 } },
		{ "format8", 0, 8, 72, { 0xffffffff, 0xffffffff, 0x01010101, 0x10101010 } },
		{ "format16", 0, 16, 36, { 0x00300030, 0x7fff7fff, 0x00010001 } },
		{ "wrong-type", XCB_ATOM_STRING, 8, 18, { 0x41414141, 0x41414141 } },
	};
	const int n = (int)(sizeof(cases) / sizeof(cases[0]));
	for (int i = 0; i < n; i++) {
		const struct hints_case *c = &cases[i];
		char title[64];
		snprintf(title, sizeof(title), "bad-hints %s", c->name);
		xcb_window_t w = make_window(b, 150, 100, title);
		set_prop(b, w, XCB_ATOM_WM_NORMAL_HINTS, c->type ? c->type : XCB_ATOM_WM_SIZE_HINTS,
		         c->format, c->n, c->data);
		xcb_map_window(b->conn, w);
	}
	x11_round_trip(b->conn);
	printf("mapped %d\n", n);
	fflush(stdout);
	return hold ? 1 : 0;
}

/* Other ill-formed properties a WM reads: wrong formats, no terminators,
 * invalid UTF-8, truncated WM_HINTS, protocols in 8-bit format. */
static int bad_properties(struct bad *b, bool hold)
{
	xcb_window_t w = make_window(b, 160, 120, "bad-properties");
	static const char no_nul_class[] = { 'x', 'y', 'z' };
	set_prop(b, w, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 8, sizeof(no_nul_class), no_nul_class);
	static const unsigned char bad_utf8[] = { 0xff, 0xfe, 0xc0, 0x80, 'x', 0xe2, 0x82 };
	set_prop(b, w, x11_intern(b->conn, "_NET_WM_NAME"), x11_intern(b->conn, "UTF8_STRING"), 8,
	         sizeof(bad_utf8), bad_utf8);
	uint32_t one = 1;
	set_prop(b, w, XCB_ATOM_WM_HINTS, XCB_ATOM_WM_HINTS, 32, 1, &one);
	set_prop(b, w, b->wm_protocols, XCB_ATOM_ATOM, 8, 4, "abcd");
	set_prop(b, w, x11_intern(b->conn, "_NET_WM_PID"), XCB_ATOM_CARDINAL, 16, 1, &one);
	uint32_t bogus_atoms[3] = { 0xdeadbeef, 0, 0xffffffff };
	set_prop(b, w, x11_intern(b->conn, "_NET_WM_WINDOW_TYPE"), XCB_ATOM_ATOM, 32, 3,
	         bogus_atoms);
	set_prop(b, w, x11_intern(b->conn, "_NET_WM_STATE"), XCB_ATOM_ATOM, 32, 3, bogus_atoms);
	set_prop(b, w, XCB_ATOM_WM_TRANSIENT_FOR, XCB_ATOM_WINDOW, 32, 1, &w); /* itself */
	xcb_map_window(b->conn, w);
	x11_round_trip(b->conn);
	printf("mapped 1\n");
	fflush(stdout);
	return hold ? 1 : 0;
}

/* Thousands of ConfigureRequests, sane and absurd, without reading a
 * single event meanwhile. */
static int configure_flood(struct bad *b, bool hold)
{
	const int requests = 5000;
	xcb_window_t w = make_window(b, 200, 150, "configure-flood");
	xcb_map_window(b->conn, w);
	xcb_flush(b->conn);
	for (int i = 0; i < requests; i++) {
		uint32_t r = rnd(b);
		uint32_t values[5];
		int32_t x = (int32_t)(r % 4000) - 1000, y = (int32_t)((r >> 12) % 3000) - 1000;
		uint32_t width = 1 + rnd(b) % 2500, height = 1 + rnd(b) % 2500;
		if (i % 97 == 0) { /* the protocol's extremes */
			x = i % 2 ? -32768 : 32767;
			width = 65535;
			height = i % 3 ? 65535 : 1;
		}
		values[0] = (uint32_t)x;
		values[1] = (uint32_t)y;
		values[2] = width;
		values[3] = height;
		values[4] = i % 5 ? XCB_STACK_MODE_ABOVE : XCB_STACK_MODE_BELOW;
		xcb_configure_window(b->conn, w,
		                     XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y |
		                     XCB_CONFIG_WINDOW_WIDTH | XCB_CONFIG_WINDOW_HEIGHT |
		                     XCB_CONFIG_WINDOW_STACK_MODE,
		                     values);
	}
	x11_round_trip(b->conn);
	printf("flooded %d\n", requests);
	fflush(stdout);
	return hold ? 1 : 0;
}

/* Maps a window, then dies half way through sending a request: the X
 * server sees a truncated request and EOF, the WM a DestroyNotify for a
 * window it manages. With hold it does not exit after the partial
 * request but waits to be killed (SIGKILL), the X server waiting for
 * the rest meanwhile. */
static int die_mid_request(struct bad *b, bool hold)
{
	print_client(b);
	xcb_window_t w = make_window(b, 180, 140, "die-mid-request");
	printf("window 0x%x\n", w);
	xcb_map_window(b->conn, w);
	x11_round_trip(b->conn);
	printf("dying\n");
	fflush(stdout);
	/* A ChangeProperty(WM_NAME) announcing 4 KiB of data, cut off after a
	 * few bytes. xcb has flushed everything before, so the partial request
	 * is what the server reads last. */
	uint8_t req[24 + 16];
	memset(req, 'A', sizeof(req));
	uint32_t len_units = (24 + 4096) / 4;
	req[0] = 18; /* ChangeProperty */
	req[1] = XCB_PROP_MODE_REPLACE;
	req[2] = (uint8_t)(len_units & 0xff);
	req[3] = (uint8_t)(len_units >> 8);
	memcpy(req + 4, &w, 4);
	uint32_t prop = XCB_ATOM_WM_NAME, type = XCB_ATOM_STRING, count = 4096;
	memcpy(req + 8, &prop, 4);
	memcpy(req + 12, &type, 4);
	req[16] = 8; /* format */
	memcpy(req + 20, &count, 4);
	ssize_t unused = write(xcb_get_file_descriptor(b->conn), req, sizeof(req));
	(void)unused;
	if (hold) {
		printf("partial %zu of %u bytes\n", sizeof(req), len_units * 4);
		fflush(stdout);
		for (;;)
			pause(); /* SIGKILL ends it */
	}
	_exit(0);
}

void print_client(struct bad *b)
{
	printf("client 0x%x\n", xcb_get_setup(b->conn)->resource_id_base);
}

/* One managed window of w x h, drawn (its background) as soon as it maps. */
static int one_window(struct bad *b, bool hold, uint16_t w, uint16_t h, const char *name)
{
	print_client(b);
	xcb_window_t win = make_window(b, w, h, name);
	printf("window 0x%x\n", win);
	xcb_map_window(b->conn, win);
	if (!x11_round_trip(b->conn))
		return 1;
	printf("mapped 1\n");
	return hold ? 1 : 0;
}

/* Menus' kind of windows (override-redirect: no window manager decides
 * on them), 2048x2048 (16 MiB) each, 32 of them (512 MiB) in one batch
 * without waiting for anything, as a client flooding the screen with
 * popups would. */
static int huge_menus(struct bad *b, bool hold)
{
	const int n = 32;
	print_client(b);
	for (int i = 0; i < n; i++) {
		xcb_window_t w = xcb_generate_id(b->conn);
		uint32_t values[] = { 0x004040c0u + (uint32_t)i, 1 };
		xcb_create_window(b->conn, XCB_COPY_FROM_PARENT, w, b->screen->root,
		                  (int16_t)(i * 8), (int16_t)(i * 8), 2048, 2048, 0,
		                  XCB_WINDOW_CLASS_INPUT_OUTPUT, XCB_COPY_FROM_PARENT,
		                  XCB_CW_BACK_PIXEL | XCB_CW_OVERRIDE_REDIRECT, values);
		xcb_map_window(b->conn, w);
		printf("window 0x%x\n", w);
	}
	if (!x11_round_trip(b->conn))
		return 1;
	printf("mapped %d\n", n);
	return hold ? 1 : 0;
}

/* A small window whose cursor is 8400x8400: Xwayland shows it on a
 * wl_surface of its own, no X window's (as a 32-bit image, 269 MiB: over
 * the client budget of 256 MiB), once the pointer is over the window. */
static int huge_cursor(struct bad *b, bool hold)
{
	const uint16_t side = 8400;
	print_client(b);
	xcb_pixmap_t bits = xcb_generate_id(b->conn);
	xcb_create_pixmap(b->conn, 1, bits, b->screen->root, side, side);
	xcb_gcontext_t gc = xcb_generate_id(b->conn);
	uint32_t one = 1;
	xcb_create_gc(b->conn, gc, bits, XCB_GC_FOREGROUND, &one);
	xcb_rectangle_t all = { 0, 0, side, side };
	xcb_poly_fill_rectangle(b->conn, bits, gc, 1, &all);
	xcb_cursor_t cursor = xcb_generate_id(b->conn);
	xcb_create_cursor(b->conn, cursor, bits, bits, 0, 0, 0, 0xffff, 0xffff, 0xffff, 0, 0);
	xcb_window_t w = make_window(b, 200, 150, "huge-cursor");
	xcb_change_window_attributes(b->conn, w, XCB_CW_CURSOR, &cursor);
	printf("window 0x%x\n", w);
	xcb_map_window(b->conn, w);
	if (!x11_round_trip(b->conn))
		return 1;
	printf("mapped 1\n");
	return hold ? 1 : 0;
}

/* ----------------------------------------------------------------- main */

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: duet-x11-bad-client [--hold] [--calm-wait S] MODE\n"
	        "modes:\n"
	        "  destroy-after-map  200 windows destroyed right after (or while) mapping\n"
	        "  bad-normal-hints   windows with malformed WM_NORMAL_HINTS (min > max, zero,\n"
	        "                     huge, negative, short, format 8/16, wrong type)\n"
	        "  bad-properties     ill-formed WM_CLASS, _NET_WM_NAME, WM_HINTS, protocols...\n"
	        "  configure-flood    5000 ConfigureRequests, events unread\n"
	        "  die-mid-request    map a window, then exit in the middle of a request\n"
	        "                     (--hold: wait to be SIGKILLed after it instead)\n"
	        "  flood              a window, then properties the WM reads, configures and\n"
	        "                     client messages to the root as fast as the server takes\n"
	        "                     them, until SIGTERM; then its SYNC priority, at once\n"
	        "                     and once it changes (--calm-wait) (x11-bad-traffic.c)\n"
	        "  no-read            a window, then requests that each send it an event,\n"
	        "                     never reading one, until SIGTERM (x11-bad-traffic.c)\n"
	        "  huge-window        one managed 16000x16000 window (976 MiB of texture)\n"
	        "  big-window         one managed 2048x2048 window (16 MiB of texture)\n"
	        "  tall-window        one managed 100x20000 window (inside the budgets, past\n"
	        "                     the renderer's texture size)\n"
	        "  huge-menus         32 override-redirect 2048x2048 windows at once (16 MiB\n"
	        "                     each)\n"
	        "  huge-cursor        a 200x150 window whose cursor is 8400x8400 (269 MiB)\n"
	        "                     (each *-window, huge-* mode prints its client's XID base\n"
	        "                     first)\n"
	        "--hold keeps the windows until killed or closed by WM_DELETE_WINDOW.\n"
	        "--calm-wait S: how long flood waits for its priority to change (10)\n");
}

/* Waits, answering nothing, until the connection ends or the WM asks us to
 * close; the windows stay as they are. */
static int hold_windows(struct bad *b)
{
	for (;;) {
		xcb_generic_event_t *ev = xcb_wait_for_event(b->conn);
		if (!ev)
			return 1;
		if ((ev->response_type & 0x7f) == XCB_CLIENT_MESSAGE) {
			xcb_client_message_event_t *e = (xcb_client_message_event_t *)ev;
			if (e->type == b->wm_protocols && e->data.data32[0] == b->wm_delete_window) {
				free(ev);
				return 0;
			}
		}
		free(ev);
	}
}

int main(int argc, char **argv)
{
	bool hold = false;
	int calm_wait_s = 10;
	const char *mode = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--hold") == 0) {
			hold = true;
		} else if (strcmp(argv[i], "--calm-wait") == 0 && i + 1 < argc &&
		           atoi(argv[i + 1]) > 0) {
			calm_wait_s = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (!mode && argv[i][0] != '-') {
			mode = argv[i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!mode) {
		usage(stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	struct bad b = { .rng = 0x2545f491u, .calm_wait_s = calm_wait_s };
	b.conn = x11_connect(NULL, &b.screen, NULL);
	if (!b.conn) {
		fprintf(stderr, "duet-x11-bad-client: cannot connect to the X display\n");
		return 1;
	}
	b.wm_protocols = x11_intern(b.conn, "WM_PROTOCOLS");
	b.wm_delete_window = x11_intern(b.conn, "WM_DELETE_WINDOW");

	int r;
	if (strcmp(mode, "destroy-after-map") == 0) {
		r = destroy_after_map(&b);
	} else if (strcmp(mode, "bad-normal-hints") == 0) {
		r = bad_normal_hints(&b, hold);
	} else if (strcmp(mode, "bad-properties") == 0) {
		r = bad_properties(&b, hold);
	} else if (strcmp(mode, "configure-flood") == 0) {
		r = configure_flood(&b, hold);
	} else if (strcmp(mode, "die-mid-request") == 0) {
		r = die_mid_request(&b, hold);
	} else if (strcmp(mode, "flood") == 0) {
		r = flood(&b);
	} else if (strcmp(mode, "no-read") == 0) {
		r = no_read(&b);
	} else if (strcmp(mode, "huge-window") == 0) {
		/* Too large for any texture budget of duet-compositor's: 976 MiB
		 * at 4 bytes a pixel (the defaults: 256 MiB a client, 1024 MiB in
		 * all). */
		r = one_window(&b, hold, 16000, 16000, "huge-window");
	} else if (strcmp(mode, "big-window") == 0) {
		/* 16 MiB of texture: over the small budgets the isolation
		 * tests give the servers, light on the X server's memory. */
		r = one_window(&b, hold, 2048, 2048, "big-window");
	} else if (strcmp(mode, "tall-window") == 0) {
		/* Inside every budget (7.6 MiB), taller than any texture render/
		 * makes (16384 a side). */
		r = one_window(&b, hold, 100, 20000, "tall-window");
	} else if (strcmp(mode, "huge-menus") == 0) {
		r = huge_menus(&b, hold);
	} else if (strcmp(mode, "huge-cursor") == 0) {
		r = huge_cursor(&b, hold);
	} else {
		fprintf(stderr, "duet-x11-bad-client: unknown mode '%s'\n", mode);
		xcb_disconnect(b.conn);
		return 2;
	}
	if (r == 1)
		r = hold_windows(&b);
	if (xcb_connection_has_error(b.conn)) {
		fprintf(stderr, "duet-x11-bad-client: X connection error\n");
		r = 1;
	}
	xcb_disconnect(b.conn);
	return r;
}
