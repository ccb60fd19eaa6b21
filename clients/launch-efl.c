/* duet-launch-efl: duet-launch written with Elementary (EFL 1.26), the
 * toolkit of the study's apps. It shows one window (an Elementary window
 * cleared to duet-launch's 237,237,242 under a 48-pixel bar, with a label
 * and a button, so Elementary's theme and fonts load as in a real app) and
 * prints duet-launch's first_frame line with the same timeline points:
 *
 *   exec       main() entered
 *   connected  the display connection is up: on Wayland elm_init() opens
 *              it (ecore_wl2_display_connect); on X11 the window's engine
 *              would open it in elm_win_add(), so the app calls ecore_x_init()
 *              itself right after elm_init() (the same connection, opened
 *              a moment earlier; strace -k shows both)
 *   submitted  Evas' first EVAS_CALLBACK_RENDER_FLUSH_POST: the engine's
 *              output flush returned (wayland_shm: wl_surface.commit and
 *              wl_display_flush; wayland_egl: eglSwapBuffers; software_x11:
 *              the (Shm)PutImage and XSync; opengl_x11: glXSwapBuffers).
 *              With the software engines Evas flushes in its render thread
 *              and the callback reaches the main loop after it.
 *   received   the server answered a mark sent after the frame
 *              (wl_display.sync; on X11 XSync's GetInputFocus round trip)
 *   presented  Wayland: the first frame callback (wl_surface.frame, which
 *              ecore_wl2 asks for with every commit) read after the frame's
 *              flush began; X11: EFL has no _NET_WM_FRAME_DRAWN, so the round
 *              trip above (as duet-launch's roundtrip-fallback)
 *
 * The window system and engine are Elementary's own choice from
 * ELM_DISPLAY (wl|x11) and ELM_ACCEL (gl|none); --backend and --engine set
 * them, so the bench's command line for duet-launch works unchanged. */
#define EFL_BETA_API_SUPPORT 1 /* Ecore_Wl2.h is beta API as a whole in EFL 1.26 */
#include <Ecore_Wl2.h>
#include <Ecore_X.h>
#include <Elementary.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wayland-client.h>

#include "app-args.h"
#include "render.h"
#include "tk-trace.h"

#define BAR_H 48

static const char usage[] =
	"usage: duet-launch-efl [options]\n"
	"Shows one Elementary window and prints a first_frame JSON line when its first\n"
	"frame was presented (since_t0_ns relative to $DUET_T0_NS, CLOCK_MONOTONIC ns).\n"
	"  --backend wayland|x11  sets ELM_DISPLAY (default: Elementary's choice)\n"
	"  --engine gl|sw         sets ELM_ACCEL to gl or none (default: Elementary's)\n"
	"  --size WxH             window size (default 800x600)\n"
	"  --stay                 keep running after the first frame until closed\n"
	"  --timeout-ms MS        give up after MS without a presented frame (default 20000)\n"
	"Output goes to $DUET_TRACE if set, else stdout.\n";

struct launch {
	Evas_Object *win, *bar, *label, *button;
	bool wayland;
	bool stay;
	int status;
	uint64_t t0, exec_ns, connected_ns;
	uint64_t flush_pre_ns, submitted_ns, received_ns, presented_ns;
	int width, height;
	const char *evas_engine, *engine;
	struct wl_callback *sync;
	Ecore_Wl2_Frame_Cb_Handle *frame_cb;
	Ecore_Timer *timer;
	bool reported;
};

static void report(struct launch *l)
{
	if (l->reported || !l->submitted_ns || !l->received_ns || !l->presented_ns)
		return;
	l->reported = true;
	uint64_t base = l->t0 ? l->t0 : l->exec_ns;
	tk_trace("first_frame",
	      "\"since_t0_ns\":%llu,\"t0\":\"%s\",\"presented_ns\":%llu,\"commit_ns\":%llu,"
	      "\"width\":%d,\"height\":%d,\"backend\":\"%s\",\"engine\":\"%s\","
	      "\"presentation\":\"%s\",\"path\":\"%s\",\"toolkit\":\"elementary %d.%d\","
	      "\"timeline\":{\"exec\":%llu,\"connected\":%llu,\"submitted\":%llu,"
	      "\"received\":%llu,\"presented\":%llu}",
	      (unsigned long long)(l->presented_ns - base), l->t0 ? "DUET_T0_NS" : "process-start",
	      (unsigned long long)l->presented_ns, (unsigned long long)l->submitted_ns, l->width,
	      l->height, l->wayland ? "wayland" : "x11", l->engine,
	      l->wayland ? "frame-callback" : "roundtrip-fallback", l->evas_engine,
	      ELM_VERSION_MAJOR, ELM_VERSION_MINOR, (unsigned long long)l->exec_ns,
	      (unsigned long long)l->connected_ns, (unsigned long long)l->submitted_ns,
	      (unsigned long long)l->received_ns, (unsigned long long)l->presented_ns);
	l->status = 0;
	if (l->timer) {
		ecore_timer_del(l->timer);
		l->timer = NULL;
	}
	if (!l->stay)
		elm_exit();
}

static void on_sync_done(void *data, struct wl_callback *cb, uint32_t serial)
{
	struct launch *l = data;
	wl_callback_destroy(cb);
	l->sync = NULL;
	l->received_ns = tk_now_ns();
	report(l);
}

static const struct wl_callback_listener sync_listener = { .done = on_sync_done };

static void on_frame_done(Ecore_Wl2_Window *w, uint32_t timestamp, void *data)
{
	struct launch *l = data;
	/* The first frame's flush may run in Evas' render thread, so its
	 * frame callback can be read before RENDER_FLUSH_POST: count any
	 * callback read after that flush began. */
	if (l->presented_ns || !l->flush_pre_ns)
		return;
	l->presented_ns = tk_now_ns();
	report(l);
}

static void on_flush_pre(void *data, Evas *e, void *info)
{
	struct launch *l = data;
	if (!l->flush_pre_ns)
		l->flush_pre_ns = tk_now_ns();
}

static void on_flush_post(void *data, Evas *e, void *info)
{
	struct launch *l = data;
	if (l->submitted_ns)
		return;
	l->submitted_ns = tk_now_ns();
	evas_output_size_get(e, &l->width, &l->height);
	if (l->wayland) {
		Ecore_Wl2_Window *ww = elm_win_wl_window_get(l->win);
		struct wl_display *dpy = ww ? ecore_wl2_display_get(ecore_wl2_window_display_get(ww))
		                            : NULL;
		if (!dpy) {
			fprintf(stderr, "duet-launch-efl: no Wayland display behind the window\n");
			elm_exit();
			return;
		}
		l->sync = wl_display_sync(dpy);
		wl_callback_add_listener(l->sync, &sync_listener, l);
		wl_display_flush(dpy);
	} else {
		/* XSync: a GetInputFocus round trip behind the frame's requests. */
		ecore_x_sync();
		l->received_ns = l->presented_ns = tk_now_ns();
		report(l);
	}
}

static void on_delete(void *data, Evas_Object *obj, void *info)
{
	elm_exit();
}

static void on_button(void *data, Evas_Object *obj, void *info)
{
	elm_exit();
}

static void on_resize(void *data, Evas *e, Evas_Object *obj, void *info)
{
	struct launch *l = data;
	int w, h;
	evas_object_geometry_get(obj, NULL, NULL, &w, &h);
	evas_object_resize(l->bar, w, BAR_H);
	evas_object_resize(l->label, w > 16 ? w - 16 : 1, BAR_H - 16);
}

static Eina_Bool on_timeout(void *data)
{
	struct launch *l = data;
	l->timer = NULL;
	fprintf(stderr, "duet-launch-efl: no frame was %s within the timeout (engine %s)\n",
	        !l->submitted_ns ? "submitted" : !l->received_ns ? "answered" : "presented",
	        l->evas_engine ? l->evas_engine : "?");
	elm_exit();
	return ECORE_CALLBACK_CANCEL;
}

static void build_window(struct launch *l, int width, int height)
{
	Evas_Object *win = l->win;
	Evas *e = evas_object_evas_get(win);
	elm_win_title_set(win, "duet-launch-efl");
	/* No client-side decorations (Elementary draws them on Wayland, a
	 * 842x670 frame around 800x600): the frame is the window's size on
	 * every stack, as duet-launch's, and the study's Tizen apps had none. */
	elm_win_borderless_set(win, EINA_TRUE);
	/* Not autodel: main() deletes it after dropping its frame callback. */
	elm_win_autodel_set(win, EINA_FALSE);
	evas_object_smart_callback_add(win, "delete,request", on_delete, l);

	/* duet-launch's clear colour: the observer looks for it (observer.py). */
	Evas_Object *bg = evas_object_rectangle_add(e);
	evas_object_color_set(bg, 237, 237, 242, 255);
	evas_object_size_hint_weight_set(bg, EVAS_HINT_EXPAND, EVAS_HINT_EXPAND);
	elm_win_resize_object_add(win, bg);
	evas_object_show(bg);

	l->bar = evas_object_rectangle_add(e);
	evas_object_color_set(l->bar, 38, 57, 122, 255);
	evas_object_move(l->bar, 0, 0);
	evas_object_resize(l->bar, width, BAR_H);
	evas_object_show(l->bar);

	l->label = elm_label_add(win);
	elm_object_text_set(l->label, "<color=#ffffff>duet-launch-efl</color>");
	evas_object_move(l->label, 8, 8);
	evas_object_resize(l->label, width - 16, BAR_H - 16);
	evas_object_show(l->label);

	l->button = elm_button_add(win);
	elm_object_text_set(l->button, "Close");
	evas_object_smart_callback_add(l->button, "clicked", on_button, l);
	evas_object_move(l->button, 8, BAR_H + 8);
	evas_object_resize(l->button, 120, 40);
	evas_object_show(l->button);

	evas_object_event_callback_add(win, EVAS_CALLBACK_RESIZE, on_resize, l);
	evas_event_callback_add(e, EVAS_CALLBACK_RENDER_FLUSH_PRE, on_flush_pre, l);
	evas_event_callback_add(e, EVAS_CALLBACK_RENDER_FLUSH_POST, on_flush_post, l);
	evas_object_resize(win, width, height);
}

/* Whether Elementary will put the window on X11: ELM_DISPLAY, else (as
 * Elementary decides) X11 only where no Wayland display is named. */
static bool x11_chosen(void)
{
	const char *d = getenv("ELM_DISPLAY");
	if (d && *d)
		return strcmp(d, "x11") == 0;
	return !(getenv("WAYLAND_DISPLAY") && *getenv("WAYLAND_DISPLAY")) && getenv("DISPLAY");
}

/* Elementary's engine, as the labels duet's apps use. */
static const char *engine_label(const char *evas_engine, bool *wayland)
{
	*wayland = strncmp(evas_engine, "wayland", 7) == 0;
	if (strcmp(evas_engine, "wayland_shm") == 0 || strcmp(evas_engine, "software_x11") == 0)
		return "sw";
	if (strcmp(evas_engine, "wayland_egl") == 0 || strcmp(evas_engine, "opengl_x11") == 0)
		return "gl";
	return NULL;
}

int main(int argc, char **argv)
{
	struct launch l = { .exec_ns = tk_now_ns(), .status = 1 };
	const char *backend = NULL, *want_engine = NULL;
	long timeout_ms = 20000;
	struct app_size size = { 800, 600 };
	const struct app_opt options[] = {
		APP_FLAG("--stay", &l.stay),
		APP_CHOICE("--backend", &backend, app_backend_names),
		APP_CHOICE("--engine", &want_engine, app_engine_names),
		APP_SIZE("--size", &size),
		APP_LONG("--timeout-ms", &timeout_ms, 1, 3600000),
		APP_OPT_END,
	};
	int parsed = app_parse_args("duet-launch-efl", usage, argc, argv, options);
	if (parsed != APP_ARGS_RUN)
		return parsed;
	if (!app_t0_from_env("duet-launch-efl", l.exec_ns, &l.t0))
		return 2;
	app_elm_env(backend, want_engine);

	char *elm_argv[] = { argv[0], NULL };
	if (elm_init(1, elm_argv) <= 0) {
		fprintf(stderr, "duet-launch-efl: elm_init failed (no display?)\n");
		return 1;
	}
	bool x11 = x11_chosen();
	if (x11 && !ecore_x_init(NULL)) {
		fprintf(stderr, "duet-launch-efl: cannot open the X display '%s'\n",
		        getenv("DISPLAY") ? getenv("DISPLAY") : "");
		elm_shutdown();
		return 1;
	}
	l.connected_ns = tk_now_ns();
	/* SIGINT / SIGTERM: Ecore turns them into ECORE_EVENT_SIGNAL_EXIT,
	 * which ends elm_run() cleanly. */
	l.win = elm_win_add(NULL, "duet-launch-efl", ELM_WIN_BASIC);
	if (!l.win) {
		fprintf(stderr, "duet-launch-efl: no window (ELM_DISPLAY=%s ELM_ACCEL=%s)\n",
		        getenv("ELM_DISPLAY") ? getenv("ELM_DISPLAY") : "",
		        getenv("ELM_ACCEL") ? getenv("ELM_ACCEL") : "");
		goto out;
	}
	Ecore_Evas *ee = ecore_evas_ecore_evas_get(evas_object_evas_get(l.win));
	l.evas_engine = ee ? ecore_evas_engine_name_get(ee) : NULL;
	l.engine = l.evas_engine ? engine_label(l.evas_engine, &l.wayland) : NULL;
	if (!l.engine) {
		fprintf(stderr, "duet-launch-efl: unknown Evas engine '%s'\n",
		        l.evas_engine ? l.evas_engine : "(none)");
		goto out;
	}
	if (want_engine && strcmp(want_engine, l.engine) != 0) {
		fprintf(stderr, "duet-launch-efl: asked for the %s engine, Elementary chose %s\n",
		        want_engine, l.evas_engine);
		goto out;
	}
	build_window(&l, size.width, size.height);
	if (l.wayland) {
		Ecore_Wl2_Window *ww = elm_win_wl_window_get(l.win);
		if (ww)
			l.frame_cb = ecore_wl2_window_frame_callback_add(ww, on_frame_done, &l);
		if (!l.frame_cb) {
			fprintf(stderr, "duet-launch-efl: cannot watch the window's frame callbacks\n");
			goto out;
		}
	}
	l.timer = ecore_timer_add((double)timeout_ms / 1000.0, on_timeout, &l);
	evas_object_show(l.win);
	elm_run();
	if (l.timer)
		ecore_timer_del(l.timer);
	if (l.frame_cb)
		ecore_wl2_window_frame_callback_del(l.frame_cb);
	if (l.sync)
		wl_callback_destroy(l.sync);
out:
	/* Evas's GL engine terminates its EGL display with the window, which
	 * dlcloses Mesa's driver, and elm_shutdown unloads Evas's engine
	 * modules; kept loaded, what they still hold stays reachable, and
	 * what LeakSanitizer reports names its library (tests/lsan-efl.supp). */
	render_keep_loaded();
	if (l.win)
		evas_object_del(l.win);
	if (x11)
		ecore_x_shutdown();
	elm_shutdown();
	return l.status;
}
