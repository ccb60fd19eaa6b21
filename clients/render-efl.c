/* duet-render-efl: duet-render's idea written with Evas (EFL 1.26), after
 * the study's expedite tests: scenes of image blending (smooth and nearest
 * scaling), translucent rectangles and text, each redrawn as fast as EFL
 * goes for --duration-ms. A scene changes its objects once per finished
 * frame (Evas' RENDER_FLUSH_POST, through an Ecore job), so the frame rate
 * is what Evas, Ecore_Evas' own throttling (on Wayland it waits for the
 * frame callback of the previous commit) and the window system allow.
 *
 * Output (duet-render's line names): "scene" per scene (scene, frames,
 * fps, duration_ns, flush_mean_ns / flush_max_ns = RENDER_FLUSH_PRE ->
 * RENDER_FLUSH_POST, presented = frame callbacks read on Wayland, null on
 * X11), then "render_done" (scenes, score_fps). */
#define EFL_BETA_API_SUPPORT 1 /* Ecore_Wl2.h is beta API as a whole in EFL 1.26 */
#include <Ecore_Wl2.h>
#include <Elementary.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app-args.h"
#include "render.h"
#include "tk-trace.h"

#define N_IMAGES 24
#define N_RECTS 64
#define N_TEXTS 40
#define IMG 128

static const char usage[] =
	"usage: duet-render-efl [options]\n"
	"Runs Evas scenes unthrottled and prints a scene JSON line per scene.\n"
	"  --backend wayland|x11  sets ELM_DISPLAY (default: Elementary's choice)\n"
	"  --engine gl|sw         sets ELM_ACCEL to gl or none (default: Elementary's)\n"
	"  --size WxH             window size (default 800x600)\n"
	"  --duration-ms MS       per scene (default 2000)\n"
	"  --min-frames N         a scene also lasts until N frames are drawn (default 0)\n"
	"  --scenes A,B           which scenes (default all; --list names them)\n"
	"Output goes to $DUET_TRACE if set, else stdout.\n";

struct app;
struct scene {
	const char *name;
	void (*setup)(struct app *a);
	void (*step)(struct app *a, int frame);
};

struct app {
	Evas_Object *win;
	Evas *evas;
	int w, h;
	bool wayland;
	const char *engine, *evas_engine;
	const struct scene *scenes[8];
	int n_scenes, cur;
	uint64_t duration_ns;
	int min_frames;
	Evas_Object *objs[N_RECTS];
	int n_objs;
	uint32_t *pixels;
	/* the running scene */
	bool running;
	int frames, presented;
	uint64_t start_ns, flush_pre_ns, flush_sum_ns, flush_max_ns;
	double fps_sum;
	int scenes_done;
	Ecore_Job *job;
	Ecore_Timer *watchdog;
	uint64_t last_flush_ns;
	Ecore_Wl2_Frame_Cb_Handle *frame_cb;
	int status;
};

/* A 128x128 premultiplied "photo": colour fields with an alpha vignette. */
static uint32_t *photo_pixels(void)
{
	uint32_t *p = malloc(IMG * IMG * sizeof(*p));
	if (!p)
		return NULL;
	for (int y = 0; y < IMG; y++)
		for (int x = 0; x < IMG; x++) {
			float dx = (x - IMG / 2.0f) / (IMG / 2.0f), dy = (y - IMG / 2.0f) / (IMG / 2.0f);
			float a = 1.0f - 0.6f * (dx * dx + dy * dy);
			a = a < 0 ? 0 : a > 1 ? 1 : a;
			unsigned A = (unsigned)(a * 255 + 0.5f);
			unsigned r = (unsigned)(x * 2) * A / 255, g = (unsigned)(y * 2) * A / 255,
				 b = (unsigned)((x + y) & 255) * A / 255;
			p[y * IMG + x] = (A << 24) | (r << 16) | (g << 8) | b;
		}
	return p;
}

static void clear_objs(struct app *a)
{
	for (int i = 0; i < a->n_objs; i++)
		evas_object_del(a->objs[i]);
	a->n_objs = 0;
}

static void setup_images(struct app *a, bool smooth)
{
	for (int i = 0; i < N_IMAGES; i++) {
		Evas_Object *o = evas_object_image_filled_add(a->evas);
		evas_object_image_alpha_set(o, EINA_TRUE);
		evas_object_image_size_set(o, IMG, IMG);
		evas_object_image_data_copy_set(o, a->pixels);
		evas_object_image_data_update_add(o, 0, 0, IMG, IMG);
		evas_object_image_smooth_scale_set(o, smooth);
		evas_object_show(o);
		a->objs[a->n_objs++] = o;
	}
}

static void setup_smooth(struct app *a)
{
	setup_images(a, true);
}

static void setup_nearest(struct app *a)
{
	setup_images(a, false);
}

/* Expedite's "Image Blend ... Scaled": each image at its own size, moving. */
static void step_images(struct app *a, int f)
{
	for (int i = 0; i < a->n_objs; i++) {
		double t = (f + i * 7) * 0.05;
		int s = (int)(IMG * (0.5 + 0.75 * (1 + sin(t * 0.7 + i)) / 2));
		int x = (int)((a->w - s) * (1 + sin(t + i * 0.3)) / 2);
		int y = (int)((a->h - s) * (1 + cos(t * 1.3 + i * 0.5)) / 2);
		evas_object_move(a->objs[i], x, y);
		evas_object_resize(a->objs[i], s, s);
	}
}

static void setup_rects(struct app *a)
{
	for (int i = 0; i < N_RECTS; i++) {
		Evas_Object *o = evas_object_rectangle_add(a->evas);
		int r = (i * 37) & 255, g = (i * 91) & 255, b = (i * 53) & 255;
		/* Evas colours are premultiplied: alpha 128. */
		evas_object_color_set(o, r / 2, g / 2, b / 2, 128);
		evas_object_show(o);
		a->objs[a->n_objs++] = o;
	}
}

static void step_rects(struct app *a, int f)
{
	for (int i = 0; i < a->n_objs; i++) {
		double t = (f + i * 5) * 0.04;
		int w = 40 + (i * 13) % 120, h = 30 + (i * 29) % 100;
		evas_object_move(a->objs[i], (int)((a->w - w) * (1 + sin(t + i)) / 2),
		                 (int)((a->h - h) * (1 + cos(t * 0.9 + i)) / 2));
		evas_object_resize(a->objs[i], w, h);
	}
}

static void setup_text(struct app *a)
{
	for (int i = 0; i < N_TEXTS; i++) {
		Evas_Object *o = evas_object_text_add(a->evas);
		evas_object_text_font_set(o, "Sans", 10 + i % 14);
		evas_object_text_text_set(o, "The quick brown fox jumps over the lazy dog");
		evas_object_color_set(o, 20, 20, 20, 255);
		evas_object_show(o);
		a->objs[a->n_objs++] = o;
	}
}

static void step_text(struct app *a, int f)
{
	for (int i = 0; i < a->n_objs; i++) {
		double t = (f + i * 3) * 0.03;
		evas_object_move(a->objs[i], (int)(a->w / 3 * (1 + sin(t + i))),
		                 (int)((a->h - 24) * (1 + cos(t * 0.7 + i * 0.4)) / 2));
	}
}

static const struct scene all_scenes[] = {
	{ "image_blend_smooth_scaled", setup_smooth, step_images },
	{ "image_blend_nearest_scaled", setup_nearest, step_images },
	{ "rect_blend", setup_rects, step_rects },
	{ "text", setup_text, step_text },
};
#define N_SCENES (int)(sizeof(all_scenes) / sizeof(all_scenes[0]))

static void next_scene(struct app *a);
static void end_scene(struct app *a);


static void end_scene(struct app *a)
{
	uint64_t d = tk_now_ns() - a->start_ns;
	double fps = a->frames / (d / 1e9);
	char presented[32];
	if (a->wayland)
		snprintf(presented, sizeof(presented), "%d", a->presented);
	else
		snprintf(presented, sizeof(presented), "null");
	tk_trace("scene",
	      "\"scene\":\"%s\",\"frames\":%d,\"fps\":%.2f,\"duration_ns\":%llu,"
	      "\"flush_mean_ns\":%llu,\"flush_max_ns\":%llu,\"presented\":%s,\"discarded\":null,"
	      "\"backend\":\"%s\",\"engine\":\"%s\",\"presentation\":\"%s\",\"path\":\"%s\","
	      "\"toolkit\":\"elementary %d.%d\"",
	      a->scenes[a->cur]->name, a->frames, fps, (unsigned long long)d,
	      (unsigned long long)(a->frames ? a->flush_sum_ns / (uint64_t)a->frames : 0),
	      (unsigned long long)a->flush_max_ns, presented, a->wayland ? "wayland" : "x11",
	      a->engine, a->wayland ? "frame-callback" : "none", a->evas_engine, ELM_VERSION_MAJOR,
	      ELM_VERSION_MINOR);
	a->fps_sum += fps;
	a->scenes_done++;
	a->running = false;
	clear_objs(a);
	a->cur++;
	next_scene(a);
}

static void next_scene(struct app *a)
{
	if (a->cur >= a->n_scenes) {
		tk_trace("render_done", "\"scenes\":%d,\"score_fps\":%.2f", a->scenes_done,
		      a->scenes_done ? a->fps_sum / a->scenes_done : 0.0);
		a->status = 0;
		elm_exit();
		return;
	}
	a->scenes[a->cur]->setup(a);
	a->scenes[a->cur]->step(a, 0);
	a->frames = a->presented = 0;
	a->flush_sum_ns = a->flush_max_ns = 0;
	a->start_ns = tk_now_ns();
	a->running = true;
}

/* Canvas changes happen here, in the main loop, never inside Evas' render
 * callbacks (with the GL engines those run within the render itself). */
static void on_job(void *data)
{
	struct app *a = data;
	a->job = NULL;
	if (!a->running)
		next_scene(a); /* after the window's first frame */
	else if (tk_now_ns() - a->start_ns >= a->duration_ns && a->frames >= a->min_frames)
		end_scene(a);
	else
		a->scenes[a->cur]->step(a, a->frames);
}

static void on_flush_pre(void *data, Evas *e, void *info)
{
	((struct app *)data)->flush_pre_ns = tk_now_ns();
}

static void on_flush_post(void *data, Evas *e, void *info)
{
	struct app *a = data;
	uint64_t t = tk_now_ns();
	a->last_flush_ns = t;
	if (!a->running) {
		/* The window's first frame: the scenes start after it. */
		if (a->cur == 0 && a->scenes_done == 0 && !a->job)
			a->job = ecore_job_add(on_job, a);
		return;
	}
	uint64_t f = a->flush_pre_ns && t > a->flush_pre_ns ? t - a->flush_pre_ns : 0;
	a->flush_sum_ns += f;
	if (f > a->flush_max_ns)
		a->flush_max_ns = f;
	a->frames++;
	if (!a->job)
		a->job = ecore_job_add(on_job, a);
}

static void on_frame_done(Ecore_Wl2_Window *w, uint32_t timestamp, void *data)
{
	struct app *a = data;
	if (a->running)
		a->presented++;
}

/* Nothing drawn for 10 s: the window system stopped taking frames. */
static Eina_Bool on_watchdog(void *data)
{
	struct app *a = data;
	if (tk_now_ns() - a->last_flush_ns < 10000000000ull)
		return ECORE_CALLBACK_RENEW;
	fprintf(stderr, "duet-render-efl: no frame for 10 s (scene %d, engine %s)\n", a->cur,
	        a->evas_engine);
	a->watchdog = NULL;
	elm_exit();
	return ECORE_CALLBACK_CANCEL;
}

static void on_delete(void *data, Evas_Object *obj, void *info)
{
	elm_exit();
}

static bool parse_scenes(struct app *a, const char *list)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", list);
	a->n_scenes = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int k;
		for (k = 0; k < N_SCENES && strcmp(all_scenes[k].name, t) != 0; k++)
			;
		if (k == N_SCENES || a->n_scenes >= (int)(sizeof(a->scenes) / sizeof(a->scenes[0])))
			return false;
		a->scenes[a->n_scenes++] = &all_scenes[k];
	}
	return a->n_scenes > 0;
}

int main(int argc, char **argv)
{
	struct app a = { .status = 1 };
	const char *backend = NULL, *want_engine = NULL, *scene_list = NULL;
	long duration_ms = 2000, min_frames = 0;
	struct app_size size = { 800, 600 };
	bool list = false;
	const struct app_opt options[] = {
		APP_FLAG("--list", &list),
		APP_CHOICE("--backend", &backend, app_backend_names),
		APP_CHOICE("--engine", &want_engine, app_engine_names),
		APP_LONG("--duration-ms", &duration_ms, 1, 3600000),
		APP_LONG("--min-frames", &min_frames, 0, 1000000),
		APP_SIZE("--size", &size),
		APP_STRING("--scenes", &scene_list),
		APP_OPT_END,
	};
	int parsed = app_parse_args("duet-render-efl", usage, argc, argv, options);
	if (parsed != APP_ARGS_RUN)
		return parsed;
	if (list) {
		for (int k = 0; k < N_SCENES; k++)
			puts(all_scenes[k].name);
		return 0;
	}
	for (int k = 0; k < N_SCENES; k++)
		a.scenes[a.n_scenes++] = &all_scenes[k];
	if (scene_list && !parse_scenes(&a, scene_list)) {
		fprintf(stderr, "duet-render-efl: unknown scene in '%s' (--list)\n", scene_list);
		return 2;
	}
	a.w = size.width;
	a.h = size.height;
	a.duration_ns = (uint64_t)duration_ms * 1000000ull;
	a.min_frames = (int)min_frames;
	app_elm_env(backend, want_engine);
	char *elm_argv[] = { argv[0], NULL };
	if (elm_init(1, elm_argv) <= 0) {
		fprintf(stderr, "duet-render-efl: elm_init failed (no display?)\n");
		return 1;
	}
	a.pixels = photo_pixels();
	a.win = elm_win_add(NULL, "duet-render-efl", ELM_WIN_BASIC);
	if (!a.win || !a.pixels) {
		fprintf(stderr, "duet-render-efl: no window\n");
		goto out;
	}
	Ecore_Evas *ee = ecore_evas_ecore_evas_get(evas_object_evas_get(a.win));
	a.evas_engine = ee ? ecore_evas_engine_name_get(ee) : "";
	a.wayland = strncmp(a.evas_engine, "wayland", 7) == 0;
	a.engine = strcmp(a.evas_engine, "wayland_egl") == 0 || strcmp(a.evas_engine, "opengl_x11") == 0
	                   ? "gl"
	                   : "sw";
	if (want_engine && strcmp(want_engine, a.engine) != 0) {
		fprintf(stderr, "duet-render-efl: asked for the %s engine, Elementary chose %s\n",
		        want_engine, a.evas_engine);
		goto out;
	}
	a.evas = evas_object_evas_get(a.win);
	elm_win_title_set(a.win, "duet-render-efl");
	elm_win_borderless_set(a.win, EINA_TRUE); /* as duet-launch-efl: no client-side frame */
	elm_win_autodel_set(a.win, EINA_FALSE);
	evas_object_smart_callback_add(a.win, "delete,request", on_delete, &a);
	Evas_Object *bg = evas_object_rectangle_add(a.evas);
	evas_object_color_set(bg, 237, 237, 242, 255);
	evas_object_size_hint_weight_set(bg, EVAS_HINT_EXPAND, EVAS_HINT_EXPAND);
	elm_win_resize_object_add(a.win, bg);
	evas_object_show(bg);
	evas_event_callback_add(a.evas, EVAS_CALLBACK_RENDER_FLUSH_PRE, on_flush_pre, &a);
	evas_event_callback_add(a.evas, EVAS_CALLBACK_RENDER_FLUSH_POST, on_flush_post, &a);
	if (a.wayland && elm_win_wl_window_get(a.win))
		a.frame_cb = ecore_wl2_window_frame_callback_add(elm_win_wl_window_get(a.win),
		                                                 on_frame_done, &a);
	evas_object_resize(a.win, a.w, a.h);
	a.last_flush_ns = tk_now_ns();
	a.watchdog = ecore_timer_add(1.0, on_watchdog, &a);
	evas_object_show(a.win);
	elm_run();
	if (a.watchdog)
		ecore_timer_del(a.watchdog);
	if (a.job)
		ecore_job_del(a.job);
	if (a.frame_cb)
		ecore_wl2_window_frame_callback_del(a.frame_cb);
	clear_objs(&a);
out:
	/* As in launch-efl.c: the GL driver and Evas's modules stay loaded,
	 * so their own leaks are named and none of ours is hidden. */
	render_keep_loaded();
	if (a.win)
		evas_object_del(a.win);
	free(a.pixels);
	elm_shutdown();
	return a.status;
}
