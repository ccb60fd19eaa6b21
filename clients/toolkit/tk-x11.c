/* The X11 platform (xcb): sets what a toolkit sets on its toplevel
 * (WM_NAME, _NET_WM_NAME, WM_CLASS, WM_CLIENT_MACHINE, _NET_WM_PID,
 * WM_PROTOCOLS with WM_DELETE_WINDOW, _NET_WM_PING and _NET_WM_SYNC_REQUEST,
 * WM_NORMAL_HINTS, WM_HINTS, and two XSync counters in
 * _NET_WM_SYNC_REQUEST_COUNTER as GTK does). Frames are timed with
 * _NET_WM_FRAME_DRAWN when the WM lists it in _NET_SUPPORTED (the extended
 * counter goes odd while drawing and even when done); otherwise a round
 * trip after the swap stands in, labelled "roundtrip-fallback".
 *
 * A server or window manager that goes away is reported, never waited
 * out: SIGPIPE is ignored (xcb writes with writev, which would kill the
 * app by that signal when the X server dies under a write; ignored, the
 * write fails, xcb marks the connection broken and dispatch returns -1),
 * and the WM's _NET_SUPPORTING_WM_CHECK window, watched from show time on,
 * is destroyed with the WM's connection: dispatch then returns -1 too,
 * where the app would otherwise wait out its timeout for a map, a
 * _NET_WM_FRAME_DRAWN or a configure that no one will send. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xcb/sync.h>
#include <xcb/xcb.h>
#include <xcb/xcb_icccm.h>

#include "tk-x11.h"

#include <EGL/eglext.h>

static const char *const atom_names[ATOM_COUNT] = {
	"WM_PROTOCOLS", "WM_DELETE_WINDOW", "_NET_WM_PING", "_NET_WM_SYNC_REQUEST",
	"_NET_WM_SYNC_REQUEST_COUNTER", "_NET_WM_NAME", "UTF8_STRING", "_NET_WM_PID",
	"_NET_SUPPORTED", "_NET_SUPPORTING_WM_CHECK", "_NET_WM_FRAME_DRAWN",
	"_NET_WM_FRAME_TIMINGS", "_DUET_RESIZE",
};

/* Only a default disposition is changed: an app's own handler stays. */
static void ignore_sigpipe(void)
{
	struct sigaction sa;
	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_IGN;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGPIPE, &sa, NULL);
	}
}

static int x11_connect(struct tk_app *app)
{
	ignore_sigpipe();
	struct x11_app *xa = calloc(1, sizeof(*xa));
	if (!xa)
		return -1;
	int screen_num = 0;
	xa->conn = xcb_connect(NULL, &screen_num);
	if (!xa->conn || xcb_connection_has_error(xa->conn)) {
		const char *d = getenv("DISPLAY");
		fprintf(stderr, "cannot connect to X display '%s'\n", d ? d : "(DISPLAY not set)");
		if (xa->conn)
			xcb_disconnect(xa->conn);
		free(xa);
		return -1;
	}
	app->connected_ns = tk_now_ns();
	app->platform_data = xa;
	xa->egl_attribs[0] = EGL_PLATFORM_XCB_SCREEN_EXT;
	xa->egl_attribs[1] = screen_num;
	xa->egl_attribs[2] = EGL_NONE;
	xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(xa->conn));
	for (int i = 0; i < screen_num && it.rem; i++)
		xcb_screen_next(&it);
	xa->screen = it.data;
	xcb_intern_atom_cookie_t cookies[ATOM_COUNT];
	for (int i = 0; i < ATOM_COUNT; i++)
		cookies[i] = xcb_intern_atom(xa->conn, 0, (uint16_t)strlen(atom_names[i]), atom_names[i]);
	for (int i = 0; i < ATOM_COUNT; i++) {
		xcb_intern_atom_reply_t *r = xcb_intern_atom_reply(xa->conn, cookies[i], NULL);
		xa->atoms[i] = r ? r->atom : XCB_ATOM_NONE;
		free(r);
	}
	const xcb_query_extension_reply_t *sync = xcb_get_extension_data(xa->conn, &xcb_sync_id);
	if (sync && sync->present) {
		xcb_sync_initialize_reply_t *r = xcb_sync_initialize_reply(
			xa->conn, xcb_sync_initialize(xa->conn, 3, 1), NULL);
		xa->have_sync = r != NULL;
		free(r);
	}
	return 0;
}

static void x11_disconnect(struct tk_app *app)
{
	struct x11_app *xa = app_data(app);
	if (!xa)
		return;
	xcb_disconnect(xa->conn);
	free(xa);
	app->platform_data = NULL;
}

/* What the running WM offers: read at show time, as the WM may have
 * started after us. */
static void check_wm(struct tk_app *app)
{
	struct x11_app *xa = app_data(app);
	xcb_window_t root = xa->screen->root;
	xa->wm_checked = true;
	xa->frame_drawn = xa->duet_resize = false;
	xa->wm_name[0] = '\0';
	xcb_get_property_reply_t *r = xcb_get_property_reply(xa->conn,
		xcb_get_property(xa->conn, 0, root, xa->atoms[NET_SUPPORTED], XCB_ATOM_ATOM, 0, 4096),
		NULL);
	if (r && r->format == 32) {
		const xcb_atom_t *a = xcb_get_property_value(r);
		int n = xcb_get_property_value_length(r) / 4;
		for (int i = 0; i < n; i++) {
			if (a[i] == xa->atoms[NET_WM_FRAME_DRAWN])
				xa->frame_drawn = true;
			if (a[i] == xa->atoms[DUET_RESIZE])
				xa->duet_resize = true;
		}
	}
	free(r);
	r = xcb_get_property_reply(xa->conn, xcb_get_property(xa->conn, 0, root,
		xa->atoms[NET_SUPPORTING_WM_CHECK], XCB_ATOM_WINDOW, 0, 1), NULL);
	if (r && r->format == 32 && xcb_get_property_value_length(r) == 4) {
		xcb_window_t check = *(xcb_window_t *)xcb_get_property_value(r);
		/* Its DestroyNotify says the WM is gone. A window already gone
		 * (a WM that died and left the root's property) is no WM. */
		uint32_t mask = XCB_EVENT_MASK_STRUCTURE_NOTIFY;
		xcb_generic_error_t *err = xcb_request_check(xa->conn,
			xcb_change_window_attributes_checked(xa->conn, check, XCB_CW_EVENT_MASK,
			                                     &mask));
		if (err) {
			free(err);
			free(r);
			xa->frame_drawn = xa->duet_resize = false;
			app->presentation = "roundtrip-fallback";
			return;
		}
		xa->wm_window = check;
		xcb_get_property_reply_t *n = xcb_get_property_reply(xa->conn,
			xcb_get_property(xa->conn, 0, check, xa->atoms[NET_WM_NAME],
			                 xa->atoms[UTF8_STRING], 0, 16), NULL);
		if (n && n->format == 8) {
			int len = xcb_get_property_value_length(n);
			if (len > (int)sizeof(xa->wm_name) - 1)
				len = (int)sizeof(xa->wm_name) - 1;
			memcpy(xa->wm_name, xcb_get_property_value(n), (size_t)len);
			xa->wm_name[len] = '\0';
		}
		free(n);
	}
	free(r);
	/* duet-xwm implements docs/xwm-control.md, whether or not it lists
	 * _DUET_RESIZE in _NET_SUPPORTED. */
	if (strncmp(xa->wm_name, "duet", 4) == 0)
		xa->duet_resize = true;
	if (!xa->have_sync)
		xa->frame_drawn = false;
	/* DUET_PRESENTATION=roundtrip-fallback: ask no frame timings even of a
	 * WM that offers them, so that a count per frame compares the same
	 * protocol on every X11 stack (the bench's like-for-like runs). */
	const char *how = getenv("DUET_PRESENTATION");
	if (how && strcmp(how, "roundtrip-fallback") == 0)
		xa->frame_drawn = false;
	app->presentation = xa->frame_drawn ? "frame-drawn" : "roundtrip-fallback";
}

static bool x11_can_server_resize(struct tk_app *app, const char **why)
{
	struct x11_app *xa = app_data(app);
	if (!xa->wm_checked)
		check_wm(app);
	if (xa->duet_resize)
		return true;
	if (why)
		*why = xa->wm_name[0] ? "the window manager does not implement _DUET_RESIZE" :
		                        "no EWMH window manager is running";
	return false;
}

static void set_counter(struct x11_app *xa, xcb_sync_counter_t counter, uint64_t value)
{
	xcb_sync_int64_t v = { .hi = (int32_t)(value >> 32), .lo = (uint32_t)value };
	xcb_sync_set_counter(xa->conn, counter, v);
}

/* ------------------------------------------------------------ windows */

static int x11_window_create(struct tk_window *win)
{
	struct tk_app *app = win->app;
	struct x11_app *xa = app_data(app);
	struct x11_win *xw = calloc(1, sizeof(*xw));
	if (!xw)
		return -1;
	win->platform_data = xw;
	xcb_connection_t *c = xa->conn;
	xw->window = xcb_generate_id(c);
	/* No background: the server never clears what we draw (as GTK). */
	uint32_t values[] = {
		XCB_BACK_PIXMAP_NONE, 0,
		XCB_EVENT_MASK_EXPOSURE | XCB_EVENT_MASK_STRUCTURE_NOTIFY |
			XCB_EVENT_MASK_PROPERTY_CHANGE | XCB_EVENT_MASK_FOCUS_CHANGE |
			XCB_EVENT_MASK_KEY_PRESS | XCB_EVENT_MASK_KEY_RELEASE |
			XCB_EVENT_MASK_BUTTON_PRESS | XCB_EVENT_MASK_BUTTON_RELEASE |
			XCB_EVENT_MASK_POINTER_MOTION,
	};
	xcb_create_window(c, XCB_COPY_FROM_PARENT, xw->window, xa->screen->root, 0, 0,
	                  (uint16_t)win->width, (uint16_t)win->height, 0,
	                  XCB_WINDOW_CLASS_INPUT_OUTPUT, xa->screen->root_visual,
	                  XCB_CW_BACK_PIXMAP | XCB_CW_BORDER_PIXEL | XCB_CW_EVENT_MASK, values);
	xw->gc = xcb_generate_id(c);
	xcb_create_gc(c, xw->gc, xw->window, 0, NULL);

	/* WM_CLASS is "instance\0class\0". */
	size_t idlen = strlen(app->app_id);
	char *cls = malloc(2 * idlen + 2);
	if (cls) {
		memcpy(cls, app->app_id, idlen + 1);
		memcpy(cls + idlen + 1, app->app_id, idlen + 1);
		xcb_icccm_set_wm_class(c, xw->window, (uint32_t)(2 * idlen + 2), cls);
		free(cls);
	}
	char host[256];
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		xcb_icccm_set_wm_client_machine(c, xw->window, XCB_ATOM_STRING, 8,
		                                (uint32_t)strlen(host), host);
	}
	uint32_t pid = (uint32_t)getpid();
	xcb_change_property(c, XCB_PROP_MODE_REPLACE, xw->window, xa->atoms[NET_WM_PID],
	                    XCB_ATOM_CARDINAL, 32, 1, &pid);
	xcb_atom_t protocols[] = { xa->atoms[WM_DELETE_WINDOW], xa->atoms[NET_WM_PING],
	                           xa->atoms[NET_WM_SYNC_REQUEST] };
	xcb_icccm_set_wm_protocols(c, xw->window, xa->atoms[WM_PROTOCOLS],
	                           xa->have_sync ? 3 : 2, protocols);
	xcb_size_hints_t hints;
	memset(&hints, 0, sizeof(hints));
	xcb_icccm_size_hints_set_size(&hints, 0, win->width, win->height);
	xcb_icccm_size_hints_set_min_size(&hints, 1, 1);
	xcb_icccm_set_wm_normal_hints(c, xw->window, &hints);
	xcb_icccm_wm_hints_t wmh;
	memset(&wmh, 0, sizeof(wmh));
	xcb_icccm_wm_hints_set_input(&wmh, 1);
	xcb_icccm_wm_hints_set_normal(&wmh);
	xcb_icccm_set_wm_hints(c, xw->window, &wmh);
	if (xa->have_sync) {
		xcb_sync_int64_t zero = { 0, 0 };
		xw->basic = xcb_generate_id(c);
		xw->extended = xcb_generate_id(c);
		xcb_sync_create_counter(c, xw->basic, zero);
		xcb_sync_create_counter(c, xw->extended, zero);
		uint32_t counters[] = { xw->basic, xw->extended };
		xcb_change_property(c, XCB_PROP_MODE_REPLACE, xw->window,
		                    xa->atoms[NET_WM_SYNC_REQUEST_COUNTER], XCB_ATOM_CARDINAL, 32, 2,
		                    counters);
	}
	xcb_flush(c);
	return 0;
}

static void x11_window_destroy(struct tk_window *win)
{
	struct x11_app *xa = app_data(win->app);
	struct x11_win *xw = win_data(win);
	if (!xw)
		return;
	if (xw->basic) {
		xcb_sync_destroy_counter(xa->conn, xw->basic);
		xcb_sync_destroy_counter(xa->conn, xw->extended);
	}
	xcb_free_gc(xa->conn, xw->gc);
	xcb_destroy_window(xa->conn, xw->window);
	xcb_flush(xa->conn);
	free(xw);
	win->platform_data = NULL;
}

static void x11_set_title(struct tk_window *win, const char *title)
{
	struct x11_app *xa = app_data(win->app);
	xcb_window_t w = win_data(win)->window;
	uint32_t len = (uint32_t)strlen(title);
	xcb_icccm_set_wm_name(xa->conn, w, XCB_ATOM_STRING, 8, len, title);
	xcb_change_property(xa->conn, XCB_PROP_MODE_REPLACE, w, xa->atoms[NET_WM_NAME],
	                    xa->atoms[UTF8_STRING], 8, len, title);
	xcb_flush(xa->conn);
}

static int x11_show(struct tk_window *win)
{
	struct x11_app *xa = app_data(win->app);
	check_wm(win->app);
	win_data(win)->frame_sync = xa->frame_drawn;
	xcb_map_window(xa->conn, win_data(win)->window);
	return xcb_flush(xa->conn) > 0 ? 0 : -1;
}

static void x11_request_resize(struct tk_window *win, int width, int height)
{
	struct x11_app *xa = app_data(win->app);
	/* The WM intercepts this (SubstructureRedirect); the new size holds
	 * when ConfigureNotify says so. */
	uint32_t values[] = { (uint32_t)width, (uint32_t)height };
	xcb_configure_window(xa->conn, win_data(win)->window,
	                     XCB_CONFIG_WINDOW_WIDTH | XCB_CONFIG_WINDOW_HEIGHT, values);
	xcb_flush(xa->conn);
}

static int x11_server_resize(struct tk_window *win, int width, int height)
{
	struct x11_app *xa = app_data(win->app);
	if (!x11_can_server_resize(win->app, NULL))
		return -1;
	/* docs/xwm-control.md: _DUET_RESIZE to the root, window = ours. */
	xcb_client_message_event_t ev;
	memset(&ev, 0, sizeof(ev));
	ev.response_type = XCB_CLIENT_MESSAGE;
	ev.format = 32;
	ev.window = win_data(win)->window;
	ev.type = xa->atoms[DUET_RESIZE];
	ev.data.data32[0] = (uint32_t)width;
	ev.data.data32[1] = (uint32_t)height;
	xcb_send_event(xa->conn, 0, xa->screen->root,
	               XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
	               (const char *)&ev);
	return xcb_flush(xa->conn) > 0 ? 0 : -1;
}

/* ------------------------------------------------------------ frames */

static void x11_frame_begin(struct tk_window *win)
{
	struct x11_win *xw = win_data(win);
	if (!xw->frame_sync)
		return;
	/* Odd: "drawing", so the compositor does not show a half frame. */
	if (xw->counter % 2 == 0) {
		xw->counter++;
		set_counter(app_data(win->app), xw->extended, xw->counter);
	}
}

/* The frame's requests (the image, the counters) leave in one write, with
 * the "received" mark behind them when one was asked for. "Submitted" is
 * taken as they leave, before the write: a compositing manager that
 * composites at once can show the frame before this process runs again
 * after its write, and nothing caused by the frame may be stamped earlier
 * than the frame. */
static void flush_frame(struct tk_window *win)
{
	xcb_connection_t *c = app_data(win->app)->conn;
	if (win->want_mark) {
		win_data(win)->mark_cookie = xcb_get_input_focus(c).sequence;
		win->want_mark = false;
		win->mark_sent = true;
	}
	win->submitted_ns = tk_now_ns();
	xcb_flush(c);
}

static int x11_wait_mark(struct tk_window *win)
{
	xcb_connection_t *c = app_data(win->app)->conn;
	xcb_get_input_focus_cookie_t cookie = { win_data(win)->mark_cookie };
	xcb_get_input_focus_reply_t *r = xcb_get_input_focus_reply(c, cookie, NULL);
	free(r);
	if (!r)
		return -1;
	win->mark_ns = tk_now_ns();
	return 0;
}

static void x11_frame_post_commit(struct tk_window *win, uint64_t seq)
{
	struct x11_app *xa = app_data(win->app);
	struct x11_win *xw = win_data(win);
	struct tk_frame_info info = {
		.seq = seq, .width = win->frame_width, .height = win->frame_height,
		.commit_ns = tk_now_ns(),
	};
	/* A basic sync request is answered by the first frame drawn after it. */
	if (xw->pending_basic) {
		set_counter(xa, xw->basic, xw->pending_basic);
		xw->pending_basic = 0;
	}
	if (xw->frame_sync) {
		if (xw->pending_extended) {
			xw->counter = xw->pending_extended;
			xw->pending_extended = 0;
		} else {
			xw->counter++;
		}
		if (xw->counter % 2)
			xw->counter++;
		set_counter(xa, xw->extended, xw->counter);
		flush_frame(win);
		if (!win->feedback)
			return;
		/* Remember the frame until _NET_WM_FRAME_DRAWN names its value;
		 * the oldest is dropped if the WM never answers. */
		struct x11_frame *slot = &xw->frames[0];
		for (int i = 0; i < FRAMES_IN_FLIGHT; i++) {
			if (!xw->frames[i].counter) {
				slot = &xw->frames[i];
				break;
			}
			if (xw->frames[i].counter < slot->counter)
				slot = &xw->frames[i];
		}
		slot->counter = xw->counter;
		slot->info = info;
		return;
	}
	flush_frame(win);
	if (!win->feedback)
		return;
	/* Fallback: once the server answers, it has processed the frame's
	 * requests; a compositing manager may show it later. A "received"
	 * mark sent with the frame is that answer already. */
	if (win->mark_sent)
		x11_wait_mark(win);
	else
		free(xcb_get_input_focus_reply(xa->conn, xcb_get_input_focus(xa->conn), NULL));
	info.presented_ns = tk_now_ns();
	tk_window_queue_presented(win, &info);
}

static struct tk_window *window_for(struct tk_app *app, xcb_window_t w)
{
	for (size_t i = 0; i < sizeof(app->windows) / sizeof(app->windows[0]); i++)
		if (app->windows[i] && win_data(app->windows[i])->window == w)
			return app->windows[i];
	return NULL;
}

static void handle_frame_drawn(struct tk_window *win, const xcb_client_message_event_t *ev)
{
	struct x11_win *xw = win_data(win);
	uint64_t value = ev->data.data32[0] | ((uint64_t)ev->data.data32[1] << 32);
	uint64_t drawn_us = ev->data.data32[2] | ((uint64_t)ev->data.data32[3] << 32);
	uint64_t now = tk_now_ns();
	for (int i = 0; i < FRAMES_IN_FLIGHT; i++) {
		struct x11_frame *f = &xw->frames[i];
		if (!f->counter || f->counter > value)
			continue;
		struct tk_frame_info info = f->info;
		if (f->counter == value) {
			/* The drawn time is the WM's CLOCK_MONOTONIC in µs. */
			uint64_t t = drawn_us ? drawn_us * 1000 : now;
			info.presented_ns = t > now || t < info.commit_ns ? now : t;
		} else {
			info.discarded = true; /* an older frame replaced unseen */
		}
		f->counter = 0;
		tk_window_emit_presented(win, &info);
	}
}

static void handle_client_message(struct tk_app *app, const xcb_client_message_event_t *ev)
{
	struct x11_app *xa = app_data(app);
	struct tk_window *win = window_for(app, ev->window);
	if (!win)
		return;
	struct x11_win *xw = win_data(win);
	if (ev->type == xa->atoms[NET_WM_FRAME_DRAWN]) {
		handle_frame_drawn(win, ev);
		return;
	}
	if (ev->type != xa->atoms[WM_PROTOCOLS] || ev->format != 32)
		return;
	xcb_atom_t proto = ev->data.data32[0];
	if (proto == xa->atoms[WM_DELETE_WINDOW]) {
		tk_window_emit_close(win);
	} else if (proto == xa->atoms[NET_WM_PING]) {
		xcb_client_message_event_t reply = *ev;
		reply.response_type = XCB_CLIENT_MESSAGE;
		reply.window = xa->screen->root;
		xcb_send_event(xa->conn, 0, xa->screen->root,
		               XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
		               (const char *)&reply);
		xcb_flush(xa->conn);
	} else if (proto == xa->atoms[NET_WM_SYNC_REQUEST]) {
		uint64_t value = ev->data.data32[2] | ((uint64_t)ev->data.data32[3] << 32);
		/* data.l[4] != 0: the value is for the extended counter. */
		if (ev->data.data32[4] && xw->frame_sync)
			xw->pending_extended = value;
		else
			xw->pending_basic = value;
	}
}

static bool x11_protocol_counts(struct tk_app *app, uint64_t *requests, uint64_t *events)
{
	struct x11_app *xa = app_data(app);
	/* A NoOperation's cookie carries the number of requests sent so far
	 * (itself included); it costs 4 bytes and no reply. */
	uint32_t seq = xcb_no_operation(xa->conn).sequence;
	xa->probes++;
	if (seq < xa->last_seq)
		xa->seq_high += 1ull << 32;
	xa->last_seq = seq;
	*requests = xa->seq_high + seq - xa->probes;
	*events = xa->events;
	return true;
}

static int x11_roundtrip(struct tk_app *app)
{
	xcb_connection_t *c = app_data(app)->conn;
	/* GetInputFocus is the cheapest request with a reply (as XSync). */
	xcb_get_input_focus_reply_t *r = xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL);
	free(r);
	return r ? 0 : -1;
}

static void handle_event(struct tk_app *app, xcb_generic_event_t *ev)
{
	uint8_t type = ev->response_type & 0x7f;
	struct tk_window *win;
	switch (type) {
	case 0: /* an error for a request we did not check: nothing to undo */
		break;
	case XCB_CONFIGURE_NOTIFY: {
		xcb_configure_notify_event_t *ce = (xcb_configure_notify_event_t *)ev;
		win = window_for(app, ce->window);
		if (win && ce->event == ce->window)
			tk_window_set_size(win, ce->width, ce->height);
		break;
	}
	case XCB_DESTROY_NOTIFY: {
		xcb_destroy_notify_event_t *de = (xcb_destroy_notify_event_t *)ev;
		struct x11_app *xa = app_data(app);
		if (xa->wm_window && de->window == xa->wm_window)
			xa->wm_gone = true;
		break;
	}
	case XCB_MAP_NOTIFY: {
		xcb_map_notify_event_t *me = (xcb_map_notify_event_t *)ev;
		win = window_for(app, me->window);
		if (win)
			win->ready = true;
		break;
	}
	case XCB_CLIENT_MESSAGE:
		handle_client_message(app, (xcb_client_message_event_t *)ev);
		break;
	case XCB_KEY_PRESS:
	case XCB_KEY_RELEASE: {
		/* Press and release share one layout; X keycodes are evdev + 8. */
		xcb_key_press_event_t *ke = (xcb_key_press_event_t *)ev;
		win = window_for(app, ke->event);
		if (win && ke->detail >= 8)
			tk_window_emit_key(win, ke->detail - 8u, type == XCB_KEY_PRESS);
		break;
	}
	default:
		tk_x11_shm_handle_event(app, ev);
		break;
	}
}

static int x11_dispatch(struct tk_app *app, int timeout_ms)
{
	xcb_connection_t *c = app_data(app)->conn;
	xcb_flush(c);
	/* Replies read earlier may have queued events: handle those without
	 * blocking, since the socket may stay quiet. */
	xcb_generic_event_t *ev = xcb_poll_for_queued_event(c);
	if (!ev && tk_poll_fd(xcb_get_file_descriptor(c), timeout_ms) < 0)
		goto lost;
	if (!ev)
		ev = xcb_poll_for_event(c);
	while (ev) {
		if (ev->response_type != 0)
			app_data(app)->events++;
		handle_event(app, ev);
		free(ev);
		ev = xcb_poll_for_event(c);
	}
	if (xcb_connection_has_error(c))
		goto lost;
	if (app_data(app)->wm_gone) {
		fprintf(stderr, "the window manager went away (its _NET_SUPPORTING_WM_CHECK "
		        "window 0x%x was destroyed)\n", app_data(app)->wm_window);
		return -1;
	}
	xcb_flush(c);
	return 0;
lost:
	fprintf(stderr, "X connection lost\n");
	return -1;
}

/* ------------------------------------------------------------ native display and window */

static void *x11_native_display(struct tk_app *app, const EGLint **attribs)
{
	*attribs = app_data(app)->egl_attribs;
	return app_data(app)->conn;
}

static void *x11_native_window(struct tk_window *win, int width, int height)
{
	/* EGL_EXT_platform_xcb takes a pointer to the xcb_window_t. */
	return &win_data(win)->window;
}

static bool x11_connection_broken(struct tk_app *app)
{
	return xcb_connection_has_error(app_data(app)->conn) != 0;
}

const struct tk_platform tk_platform_x11 = {
	.name = "x11",
	.connect = x11_connect,
	.disconnect = x11_disconnect,
	.dispatch = x11_dispatch,
	.can_server_resize = x11_can_server_resize,
	.protocol_counts = x11_protocol_counts,
	.roundtrip = x11_roundtrip,
	.wait_mark = x11_wait_mark,
	.connection_broken = x11_connection_broken,
	.window_create = x11_window_create,
	.window_destroy = x11_window_destroy,
	.set_title = x11_set_title,
	.show = x11_show,
	.request_resize = x11_request_resize,
	.server_resize = x11_server_resize,
	.frame_begin = x11_frame_begin,
	.frame_post_commit = x11_frame_post_commit,
	.egl_platform = EGL_PLATFORM_XCB_EXT,
	.native_display = x11_native_display,
	.native_window = x11_native_window,
	.shm_acquire = tk_x11_shm_acquire,
	.shm_present = tk_x11_shm_present,
	.shm_destroy = tk_x11_shm_destroy,
};
