/* The Wayland platform: binds what a toolkit binds (wl_compositor,
 * wl_subcompositor, wl_shm, xdg_wm_base, wl_seat with its pointer, keyboard
 * and data device, wl_data_device_manager, wl_output, wp_presentation), one
 * xdg_toplevel per window with title and app_id, a wp_presentation
 * feedback per frame, and a wayland-egl window as the native window. Its
 * shared-memory buffers are in tk-wayland-shm.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client.h>
#include <wayland-egl.h>

#include "duet-test-client-protocol.h"
#include "presentation-time-client-protocol.h"
#include "tk-wayland.h"
#include "xdg-shell-client-protocol.h"

/* One frame's presentation: wp_presentation feedback, or where the server
 * has none (Enlightenment's) the frame callback requested with it. */
struct feedback {
	struct tk_window *win;
	struct wp_presentation_feedback *fb;
	struct wl_callback *cb;
	struct tk_frame_info info;
	struct feedback *next;
};

static void feedback_free(struct feedback *fb)
{
	struct wayland_win *ww = fb->win->platform_data;
	for (struct feedback **p = &ww->feedbacks; *p; p = &(*p)->next)
		if (*p == fb) {
			*p = fb->next;
			break;
		}
	if (fb->fb)
		wp_presentation_feedback_destroy(fb->fb);
	if (fb->cb)
		wl_callback_destroy(fb->cb);
	free(fb);
}

/* ------------------------------------------------------------ seat */
/* A toolkit listens to input; the apps ignore it, but binding it is part
 * of a real client's start-up cost. */
static void pointer_enter(void *d, struct wl_pointer *p, uint32_t serial, struct wl_surface *s,
                          wl_fixed_t x, wl_fixed_t y) {}
static void pointer_leave(void *d, struct wl_pointer *p, uint32_t serial, struct wl_surface *s) {}
static void pointer_motion(void *d, struct wl_pointer *p, uint32_t t, wl_fixed_t x, wl_fixed_t y) {}
static void pointer_button(void *d, struct wl_pointer *p, uint32_t serial, uint32_t t, uint32_t b,
                           uint32_t state) {}
static void pointer_axis(void *d, struct wl_pointer *p, uint32_t t, uint32_t axis, wl_fixed_t v) {}

static const struct wl_pointer_listener pointer_listener = {
	.enter = pointer_enter,
	.leave = pointer_leave,
	.motion = pointer_motion,
	.button = pointer_button,
	.axis = pointer_axis,
};

static void keyboard_keymap(void *d, struct wl_keyboard *k, uint32_t format, int32_t fd,
                            uint32_t size)
{
	close(fd);
}
static void keyboard_enter(void *d, struct wl_keyboard *k, uint32_t serial, struct wl_surface *s,
                           struct wl_array *keys)
{
	((struct wayland_app *)d)->key_focus = s;
}

static void keyboard_leave(void *d, struct wl_keyboard *k, uint32_t serial, struct wl_surface *s)
{
	((struct wayland_app *)d)->key_focus = NULL;
}

static void keyboard_key(void *d, struct wl_keyboard *k, uint32_t serial, uint32_t t, uint32_t key,
                         uint32_t state)
{
	struct wayland_app *wa = d;
	struct tk_app *app = wa->app;
	if (!wa->key_focus)
		return;
	for (size_t i = 0; i < sizeof(app->windows) / sizeof(app->windows[0]); i++) {
		struct tk_window *win = app->windows[i];
		if (win && win->platform_data && win_data(win)->surface == wa->key_focus) {
			tk_window_emit_key(win, key, state == WL_KEYBOARD_KEY_STATE_PRESSED);
			return;
		}
	}
}
static void keyboard_modifiers(void *d, struct wl_keyboard *k, uint32_t serial, uint32_t dep,
                               uint32_t lat, uint32_t lock, uint32_t group) {}

static void keyboard_repeat_info(void *d, struct wl_keyboard *k, int32_t rate, int32_t delay) {}

static const struct wl_keyboard_listener keyboard_listener = {
	.keymap = keyboard_keymap,
	.enter = keyboard_enter,
	.leave = keyboard_leave,
	.key = keyboard_key,
	.modifiers = keyboard_modifiers,
	.repeat_info = keyboard_repeat_info,
};

static void seat_capabilities(void *data, struct wl_seat *seat, uint32_t caps)
{
	struct wayland_app *wa = data;
	if ((caps & WL_SEAT_CAPABILITY_POINTER) && !wa->pointer) {
		wa->pointer = wl_seat_get_pointer(seat);
		wl_pointer_add_listener(wa->pointer, &pointer_listener, wa);
	}
	if ((caps & WL_SEAT_CAPABILITY_KEYBOARD) && !wa->keyboard) {
		wa->keyboard = wl_seat_get_keyboard(seat);
		wl_keyboard_add_listener(wa->keyboard, &keyboard_listener, wa);
	}
}

static void seat_name(void *data, struct wl_seat *seat, const char *name) {}

static const struct wl_seat_listener seat_listener = {
	.capabilities = seat_capabilities,
	.name = seat_name,
};

static void output_geometry(void *d, struct wl_output *o, int32_t x, int32_t y, int32_t pw,
                            int32_t ph, int32_t subpixel, const char *make, const char *model,
                            int32_t transform) {}
static void output_mode(void *d, struct wl_output *o, uint32_t flags, int32_t w, int32_t h,
                        int32_t refresh) {}
static void output_done(void *d, struct wl_output *o) {}
static void output_scale(void *d, struct wl_output *o, int32_t factor) {}

static const struct wl_output_listener output_listener = {
	.geometry = output_geometry,
	.mode = output_mode,
	.done = output_done,
	.scale = output_scale,
};

/* Clipboard and drag-and-drop: a toolkit keeps the current selection's
 * offer; the apps never paste, so other offers are dropped at once. */
static void dd_data_offer(void *data, struct wl_data_device *dd, struct wl_data_offer *offer) {}
static void dd_enter(void *data, struct wl_data_device *dd, uint32_t serial, struct wl_surface *s,
                     wl_fixed_t x, wl_fixed_t y, struct wl_data_offer *offer)
{
	if (offer)
		wl_data_offer_destroy(offer);
}
static void dd_leave(void *data, struct wl_data_device *dd) {}
static void dd_motion(void *data, struct wl_data_device *dd, uint32_t t, wl_fixed_t x,
                      wl_fixed_t y) {}
static void dd_drop(void *data, struct wl_data_device *dd) {}
static void dd_selection(void *data, struct wl_data_device *dd, struct wl_data_offer *offer)
{
	struct wayland_app *wa = data;
	if (wa->selection)
		wl_data_offer_destroy(wa->selection);
	wa->selection = offer;
}

static const struct wl_data_device_listener data_device_listener = {
	.data_offer = dd_data_offer,
	.enter = dd_enter,
	.leave = dd_leave,
	.motion = dd_motion,
	.drop = dd_drop,
	.selection = dd_selection,
};

/* ------------------------------------------------------------ globals */

static void wm_base_ping(void *data, struct xdg_wm_base *base, uint32_t serial)
{
	xdg_wm_base_pong(base, serial);
}

static const struct xdg_wm_base_listener wm_base_listener = { .ping = wm_base_ping };

static void presentation_clock_id(void *data, struct wp_presentation *p, uint32_t clk_id)
{
	struct wayland_app *wa = data;
	wa->presentation_clock = clk_id;
}

static const struct wp_presentation_listener presentation_listener = {
	.clock_id = presentation_clock_id,
};

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static void registry_global(void *data, struct wl_registry *reg, uint32_t name,
                            const char *iface, uint32_t version)
{
	struct wayland_app *wa = data;
	if (strcmp(iface, wl_compositor_interface.name) == 0 && !wa->compositor) {
		wa->compositor = wl_registry_bind(reg, name, &wl_compositor_interface,
		                                  min_u32(version, 4));
	} else if (strcmp(iface, wl_subcompositor_interface.name) == 0 && !wa->subcompositor) {
		wa->subcompositor = wl_registry_bind(reg, name, &wl_subcompositor_interface, 1);
	} else if (strcmp(iface, wl_data_device_manager_interface.name) == 0 && !wa->ddm) {
		wa->ddm = wl_registry_bind(reg, name, &wl_data_device_manager_interface,
		                           min_u32(version, 1));
	} else if (strcmp(iface, wl_shm_interface.name) == 0 && !wa->shm) {
		wa->shm = wl_registry_bind(reg, name, &wl_shm_interface, 1);
	} else if (strcmp(iface, xdg_wm_base_interface.name) == 0 && !wa->wm_base) {
		wa->wm_base = wl_registry_bind(reg, name, &xdg_wm_base_interface, 1);
		xdg_wm_base_add_listener(wa->wm_base, &wm_base_listener, wa);
	} else if (strcmp(iface, wl_seat_interface.name) == 0 && !wa->seat) {
		wa->seat = wl_registry_bind(reg, name, &wl_seat_interface, min_u32(version, 4));
		wl_seat_add_listener(wa->seat, &seat_listener, wa);
	} else if (strcmp(iface, wl_output_interface.name) == 0 && !wa->output) {
		wa->output = wl_registry_bind(reg, name, &wl_output_interface, min_u32(version, 2));
		wl_output_add_listener(wa->output, &output_listener, wa);
	} else if (strcmp(iface, wp_presentation_interface.name) == 0 && !wa->presentation &&
	           !wa->no_presentation) {
		wa->presentation = wl_registry_bind(reg, name, &wp_presentation_interface, 1);
		wp_presentation_add_listener(wa->presentation, &presentation_listener, wa);
	} else if (strcmp(iface, duet_test_interface.name) == 0) {
		/* Not bound at start: an ordinary toolkit would not. */
		wa->duet_test_name = name;
		wa->duet_test_version = version;
	}
}

static void registry_global_remove(void *data, struct wl_registry *reg, uint32_t name) {}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_global_remove,
};

static void wl_disconnect(struct tk_app *app);

static int wl_connect(struct tk_app *app)
{
	struct wayland_app *wa = calloc(1, sizeof(*wa));
	if (!wa)
		return -1;
	app->platform_data = wa;
	wa->app = app;
	wa->presentation_clock = (uint32_t)-1;
	/* DUET_PRESENTATION=frame-callback: a server whose wp_presentation
	 * never says "presented" (wlroots 0.15's headless output discards
	 * every feedback) would leave a frame unreported for ever; the frame
	 * callback is what such a server tells. */
	const char *how = getenv("DUET_PRESENTATION");
	wa->no_presentation = how && strcmp(how, "frame-callback") == 0;
	wa->display = wl_display_connect(NULL);
	if (!wa->display) {
		const char *name = getenv("WAYLAND_DISPLAY");
		fprintf(stderr, "cannot connect to Wayland display '%s'%s\n", name ? name : "wayland-0",
		        getenv("XDG_RUNTIME_DIR") ? "" : " (XDG_RUNTIME_DIR is not set)");
		free(wa);
		app->platform_data = NULL;
		return -1;
	}
	app->connected_ns = tk_now_ns();
	wa->registry = wl_display_get_registry(wa->display);
	wl_registry_add_listener(wa->registry, &registry_listener, wa);
	/* One round trip for the globals. What is bound answers (seat caps,
	 * shm formats, the presentation clock) in the same write as the first
	 * configure: nothing here needs those events before the window exists,
	 * and a second round trip would cost the launch a write and a read on
	 * each side. */
	if (wl_display_roundtrip(wa->display) < 0) {
		fprintf(stderr, "Wayland connection failed during start-up\n");
		goto fail;
	}
	if (wa->ddm && wa->seat) {
		wa->data_device = wl_data_device_manager_get_data_device(wa->ddm, wa->seat);
		wl_data_device_add_listener(wa->data_device, &data_device_listener, wa);
	}
	/* wl_shm is the sw engine's to ask for (tk_wayland_shm_init). */
	if (!wa->compositor || !wa->wm_base) {
		fprintf(stderr, "the Wayland server lacks %s\n",
		        !wa->compositor ? "wl_compositor" : "xdg_wm_base");
		goto fail;
	}
	/* Another clock (weston: CLOCK_MONOTONIC_RAW) is mapped onto
	 * CLOCK_MONOTONIC when each event arrives; see feedback_presented. */
	app->presentation = wa->presentation ? "wp_presentation" : "frame-callback";
	return 0;
fail:
	wl_disconnect(app);
	return -1;
}

static void wl_disconnect(struct tk_app *app)
{
	struct wayland_app *wa = app_data(app);
	if (!wa)
		return;
	if (wa->duet_test)
		duet_test_destroy(wa->duet_test);
	if (wa->presentation)
		wp_presentation_destroy(wa->presentation);
	if (wa->selection)
		wl_data_offer_destroy(wa->selection);
	if (wa->data_device)
		wl_data_device_destroy(wa->data_device);
	if (wa->ddm)
		wl_data_device_manager_destroy(wa->ddm);
	if (wa->subcompositor)
		wl_subcompositor_destroy(wa->subcompositor);
	if (wa->pointer)
		wl_pointer_destroy(wa->pointer);
	if (wa->keyboard)
		wl_keyboard_destroy(wa->keyboard);
	if (wa->seat)
		wl_seat_destroy(wa->seat);
	if (wa->output)
		wl_output_destroy(wa->output);
	if (wa->wm_base)
		xdg_wm_base_destroy(wa->wm_base);
	if (wa->shm)
		wl_shm_destroy(wa->shm);
	if (wa->compositor)
		wl_compositor_destroy(wa->compositor);
	wl_registry_destroy(wa->registry);
	wl_display_flush(wa->display);
	wl_display_disconnect(wa->display);
	free(wa);
	app->platform_data = NULL;
}

static int wl_dispatch(struct tk_app *app, int timeout_ms)
{
	struct wl_display *d = app_data(app)->display;
	while (wl_display_prepare_read(d) != 0)
		if (wl_display_dispatch_pending(d) < 0)
			goto error;
	wl_display_flush(d);
	int r = tk_poll_fd(wl_display_get_fd(d), timeout_ms);
	if (r > 0) {
		if (wl_display_read_events(d) < 0)
			goto error;
	} else {
		wl_display_cancel_read(d);
		if (r < 0)
			goto error;
	}
	if (wl_display_dispatch_pending(d) < 0)
		goto error;
	/* What the handlers asked (a pong, the seat's devices) leaves with the
	 * next frame or before the next wait, whichever comes first: one write
	 * per state change, not one per batch of events. */
	return 0;
error:
	fprintf(stderr, "Wayland connection lost (error %d)\n", wl_display_get_error(d));
	return -1;
}

/* ------------------------------------------------------------ windows */

static void xdg_surface_configure(void *data, struct xdg_surface *xs, uint32_t serial)
{
	struct tk_window *win = data;
	struct wayland_win *ww = win_data(win);
	ww->ack_serial = serial;
	ww->need_ack = true;
	win->ready = true;
	if (ww->pending_w > 0 && ww->pending_h > 0)
		tk_window_set_size(win, ww->pending_w, ww->pending_h);
	ww->pending_w = ww->pending_h = 0;
}

static const struct xdg_surface_listener xdg_surface_listener = {
	.configure = xdg_surface_configure,
};

static void toplevel_configure(void *data, struct xdg_toplevel *t, int32_t w, int32_t h,
                               struct wl_array *states)
{
	struct tk_window *win = data;
	/* 0x0 leaves the size to us; applied with the xdg_surface configure. */
	win_data(win)->pending_w = w;
	win_data(win)->pending_h = h;
}

static void toplevel_close(void *data, struct xdg_toplevel *t)
{
	tk_window_emit_close(data);
}

static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure,
	.close = toplevel_close,
};

static int wl_window_create(struct tk_window *win)
{
	struct wayland_app *wa = app_data(win->app);
	struct wayland_win *ww = calloc(1, sizeof(*ww));
	if (!ww)
		return -1;
	win->platform_data = ww;
	ww->surface = wl_compositor_create_surface(wa->compositor);
	ww->xdg_surface = xdg_wm_base_get_xdg_surface(wa->wm_base, ww->surface);
	xdg_surface_add_listener(ww->xdg_surface, &xdg_surface_listener, win);
	ww->toplevel = xdg_surface_get_toplevel(ww->xdg_surface);
	xdg_toplevel_add_listener(ww->toplevel, &toplevel_listener, win);
	xdg_toplevel_set_app_id(ww->toplevel, win->app->app_id);
	return 0;
}

static void wl_window_destroy(struct tk_window *win)
{
	struct wayland_win *ww = win_data(win);
	if (!ww)
		return;
	while (ww->feedbacks)
		feedback_free(ww->feedbacks);
	if (ww->mark)
		wl_callback_destroy(ww->mark);
	xdg_toplevel_destroy(ww->toplevel);
	xdg_surface_destroy(ww->xdg_surface);
	wl_surface_destroy(ww->surface);
	wl_display_flush(app_data(win->app)->display);
	free(ww);
	win->platform_data = NULL;
}

static void wl_set_title(struct tk_window *win, const char *title)
{
	xdg_toplevel_set_title(win_data(win)->toplevel, title);
}

static int wl_show(struct tk_window *win)
{
	/* The initial commit without a buffer asks for the first configure;
	 * the window is ready to draw when it arrives (tk_window_ready). */
	wl_surface_commit(win_data(win)->surface);
	wl_display_flush(app_data(win->app)->display);
	return 0;
}

static void wl_request_resize(struct tk_window *win, int width, int height)
{
	/* A Wayland client owns its size: the next commit simply carries a
	 * buffer of the new size (and the matching window geometry). */
	tk_window_set_size(win, width, height);
}

static void test_window(void *data, struct duet_test *t, uint32_t id, int32_t pid, int32_t x,
                        int32_t y, int32_t w, int32_t h, uint32_t focused, const char *app_id,
                        const char *title)
{
	struct tk_window *win = data;
	struct wayland_win *ww = win_data(win);
	if (ww->listing && !ww->server_id && pid == (int32_t)getpid() && app_id &&
	    strcmp(app_id, win->app->app_id) == 0)
		ww->server_id = id;
}

static void test_windows_done(void *data, struct duet_test *t)
{
	win_data((struct tk_window *)data)->listing = false;
}

static void test_screenshot_done(void *data, struct duet_test *t, int32_t w, int32_t h) {}

static const struct duet_test_listener test_listener = {
	.window = test_window,
	.windows_done = test_windows_done,
	.screenshot_done = test_screenshot_done,
};

static bool wl_can_server_resize(struct tk_app *app, const char **why)
{
	if (app_data(app)->duet_test_name)
		return true;
	if (why)
		*why = "the Wayland server offers no duet_test global";
	return false;
}

static int wl_server_resize(struct tk_window *win, int width, int height)
{
	struct wayland_app *wa = app_data(win->app);
	struct wayland_win *ww = win_data(win);
	if (!wa->duet_test_name)
		return -1;
	if (!wa->duet_test) {
		wa->duet_test = wl_registry_bind(wa->registry, wa->duet_test_name,
		                                 &duet_test_interface, 1);
		duet_test_add_listener(wa->duet_test, &test_listener, win);
	}
	if (!ww->server_id) {
		/* Find our own window once: it keeps its id while mapped. */
		ww->listing = true;
		duet_test_list_windows(wa->duet_test);
		while (ww->listing)
			if (wl_display_roundtrip(wa->display) < 0)
				return -1;
		if (!ww->server_id) {
			fprintf(stderr, "duet_test lists no window of pid %d with app_id %s\n",
			        (int)getpid(), win->app->app_id);
			return -1;
		}
	}
	duet_test_resize_window(wa->duet_test, ww->server_id, width, height);
	wl_display_flush(wa->display);
	return 0;
}

/* ------------------------------------------------------------ frames */

static void feedback_sync_output(void *data, struct wp_presentation_feedback *f,
                                 struct wl_output *o) {}

static void feedback_presented(void *data, struct wp_presentation_feedback *f, uint32_t sec_hi,
                               uint32_t sec_lo, uint32_t nsec, uint32_t refresh, uint32_t seq_hi,
                               uint32_t seq_lo, uint32_t flags)
{
	struct feedback *fb = data;
	uint64_t sec = ((uint64_t)sec_hi << 32) | sec_lo;
	uint64_t t = sec * 1000000000ull + nsec;
	clockid_t clock = (clockid_t)app_data(fb->win->app)->presentation_clock;
	if (clock != CLOCK_MONOTONIC) {
		/* Shift by the clocks' current offset: both tick at the same
		 * rate over a frame's lifetime (RAW only lacks NTP slewing). */
		struct timespec ts;
		if (clock_gettime(clock, &ts) == 0) {
			int64_t other = (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
			t = (uint64_t)((int64_t)t + ((int64_t)tk_now_ns() - other));
		}
	}
	fb->info.presented_ns = t;
	struct tk_frame_info info = fb->info;
	struct tk_window *win = fb->win;
	feedback_free(fb);
	tk_window_emit_presented(win, &info);
}

static void feedback_discarded(void *data, struct wp_presentation_feedback *f)
{
	struct feedback *fb = data;
	struct tk_frame_info info = fb->info;
	struct tk_window *win = fb->win;
	info.discarded = true;
	feedback_free(fb);
	tk_window_emit_presented(win, &info);
}

static const struct wp_presentation_feedback_listener feedback_listener = {
	.sync_output = feedback_sync_output,
	.presented = feedback_presented,
	.discarded = feedback_discarded,
};

/* The fallback's "presented": when the app read the server's go-ahead for
 * the next frame. The frame was shown no later than that, if at all: a
 * frame callback cannot tell a discarded frame from a shown one. */
static void frame_callback_done(void *data, struct wl_callback *cb, uint32_t time_ms)
{
	struct feedback *fb = data;
	fb->info.presented_ns = tk_now_ns();
	struct tk_frame_info info = fb->info;
	struct tk_window *win = fb->win;
	feedback_free(fb);
	tk_window_emit_presented(win, &info);
}

static const struct wl_callback_listener frame_callback_listener = {
	.done = frame_callback_done,
};

static void wl_frame_pre_commit(struct tk_window *win, uint64_t seq)
{
	struct wayland_app *wa = app_data(win->app);
	struct wayland_win *ww = win_data(win);
	if (ww->need_ack) {
		xdg_surface_ack_configure(ww->xdg_surface, ww->ack_serial);
		ww->need_ack = false;
	}
	if (ww->geometry_w != win->frame_width || ww->geometry_h != win->frame_height) {
		xdg_surface_set_window_geometry(ww->xdg_surface, 0, 0, win->frame_width,
		                                win->frame_height);
		ww->geometry_w = win->frame_width;
		ww->geometry_h = win->frame_height;
	}
	if (win->feedback) {
		struct feedback *fb = calloc(1, sizeof(*fb));
		if (!fb)
			return;
		fb->win = win;
		fb->info.seq = seq;
		fb->info.width = win->frame_width;
		fb->info.height = win->frame_height;
		fb->info.commit_ns = tk_now_ns();
		if (wa->presentation) {
			fb->fb = wp_presentation_feedback(wa->presentation, ww->surface);
			wp_presentation_feedback_add_listener(fb->fb, &feedback_listener, fb);
		} else {
			fb->cb = wl_surface_frame(ww->surface);
			wl_callback_add_listener(fb->cb, &frame_callback_listener, fb);
		}
		fb->next = ww->feedbacks;
		ww->feedbacks = fb;
	}
}

static void mark_done(void *data, struct wl_callback *cb, uint32_t serial)
{
	struct tk_window *win = data;
	win->mark_ns = tk_now_ns();
	win_data(win)->mark = NULL;
	wl_callback_destroy(cb);
}

static const struct wl_callback_listener mark_listener = { .done = mark_done };

static void wl_frame_post_commit(struct tk_window *win, uint64_t seq)
{
	struct wayland_app *wa = app_data(win->app);
	struct wayland_win *ww = win_data(win);
	/* One write for the commit and, when asked for, the mark behind it
	 * (the sw engine's commit is not flushed before this; EGL flushes its
	 * own). */
	if (win->want_mark && !ww->mark) {
		ww->mark = wl_display_sync(wa->display);
		wl_callback_add_listener(ww->mark, &mark_listener, win);
		win->want_mark = false;
		win->mark_sent = true;
	}
	/* sw: the commit leaves in this write, so "submitted" is stamped as
	 * it leaves (tk-x11.c's flush_frame says why); EGL's swap sent its
	 * commit itself, and tk-app stamped the swap's return. */
	if (!win->app->engine->present_sends)
		win->submitted_ns = tk_now_ns();
	if (wl_display_flush(wa->display) < 0 && errno != EAGAIN)
		fprintf(stderr, "Wayland connection lost while sending a frame\n");
}

static int wl_wait_mark(struct tk_window *win)
{
	struct wl_display *d = app_data(win->app)->display;
	while (win_data(win)->mark)
		if (wl_display_dispatch(d) < 0)
			return -1;
	return 0;
}

static int wl_roundtrip(struct tk_app *app)
{
	return wl_display_roundtrip(app_data(app)->display) < 0 ? -1 : 0;
}

/* ------------------------------------------------------------ native display and window */

static void *wl_native_display(struct tk_app *app, const EGLint **attribs)
{
	*attribs = NULL;
	return app_data(app)->display;
}

static void *wl_native_window(struct tk_window *win, int width, int height)
{
	struct wayland_win *ww = win_data(win);
	if (!ww->egl_window)
		ww->egl_window = wl_egl_window_create(ww->surface, width, height);
	return ww->egl_window;
}

static void wl_native_window_resize(struct tk_window *win, int width, int height)
{
	wl_egl_window_resize(win_data(win)->egl_window, width, height, 0, 0);
}

static void wl_native_window_destroy(struct tk_window *win)
{
	struct wayland_win *ww = win_data(win);
	if (ww->egl_window)
		wl_egl_window_destroy(ww->egl_window);
	ww->egl_window = NULL;
}

#ifndef EGL_PLATFORM_WAYLAND_KHR
#define EGL_PLATFORM_WAYLAND_KHR 0x31D8
#endif

const struct tk_platform tk_platform_wayland = {
	.name = "wayland",
	.connect = wl_connect,
	.disconnect = wl_disconnect,
	.dispatch = wl_dispatch,
	.can_server_resize = wl_can_server_resize,
	.roundtrip = wl_roundtrip,
	.wait_mark = wl_wait_mark,
	.window_create = wl_window_create,
	.window_destroy = wl_window_destroy,
	.set_title = wl_set_title,
	.show = wl_show,
	.request_resize = wl_request_resize,
	.server_resize = wl_server_resize,
	.frame_pre_commit = wl_frame_pre_commit,
	.frame_post_commit = wl_frame_post_commit,
	.egl_platform = EGL_PLATFORM_WAYLAND_KHR,
	.native_display = wl_native_display,
	.native_window = wl_native_window,
	.native_window_resize = wl_native_window_resize,
	.native_window_destroy = wl_native_window_destroy,
	.shm_init = tk_wayland_shm_init,
	.shm_acquire = tk_wayland_shm_acquire,
	.shm_present = tk_wayland_shm_present,
	.shm_destroy = tk_wayland_shm_destroy,
};
