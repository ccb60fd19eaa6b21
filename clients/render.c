/* duet-render: expedite-like scenes drawn unthrottled (eglSwapInterval(0),
 * or shm buffers as fast as the server releases them). Per scene: frames,
 * frames per second and the mean time spent in the flush/swap call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app-common.h"

struct assets {
	struct tk_image *logo;     /* 128x128 with alpha, for the blend scenes */
	struct tk_image *icons[8]; /* 32x32 */
	struct tk_image *atlas;
	struct tk_image *page;     /* tall content for scrolling */
	int page_h;
};

typedef void (*scene_fn)(struct tk_draw *d, const struct assets *a, int w, int h, int frame);

static const struct tk_color white = { 1, 1, 1, 1 };
static const struct tk_color backdrop = { 0.15f, 0.15f, 0.18f, 1 };

/* 64 alpha-blended logos, scaled and moving: logo i's size and position
 * each swing on a wave (sinf or cosf) at its own speed and phase, and all
 * the scene's parameters are these. */
struct logo_swarm {
	int stagger; /* frames between neighbouring logos' clocks */
	float size, grow; /* size + grow * (0.5 + 0.5 * wave) */
	float (*size_wave)(float), (*x_wave)(float), (*y_wave)(float);
	float x_speed, x_phase, y_speed, y_phase;
	enum tk_filter filter;
};

static void logo_swarm(struct tk_draw *d, const struct assets *a, int w, int h, int f,
                       const struct logo_swarm *m)
{
	tk_draw_clear(d, backdrop);
	for (int i = 0; i < 64; i++) {
		float t = (float)(f + i * m->stagger) * 0.05f;
		float s = m->size + m->grow * (0.5f + 0.5f * m->size_wave(t + (float)i));
		float x = (float)(w - 40) *
		          (0.5f + 0.5f * m->x_wave(t * m->x_speed + (float)i * m->x_phase)) - s / 2;
		float y = (float)(h - 40) *
		          (0.5f + 0.5f * m->y_wave(t * m->y_speed + (float)i * m->y_phase)) - s / 2;
		tk_draw_image(d, a->logo, 0, 0, 128, 128, x, y, s, s, m->filter, white);
	}
}

/* With a bilinear filter: the study's "Image Blend Smooth Scaled" (its
 * average-score test). */
static void image_blend_smooth_scaled(struct tk_draw *d, const struct assets *a, int w, int h,
                                      int f)
{
	static const struct logo_swarm m = { 7, 40.0f, 100.0f, sinf, sinf, cosf,
	                                     0.7f, 1.3f, 0.9f, 0.7f, TK_FILTER_SMOOTH };
	logo_swarm(d, a, w, h, f, &m);
}

static void image_blend_nearest(struct tk_draw *d, const struct assets *a, int w, int h, int f)
{
	static const struct logo_swarm m = { 11, 48.0f, 96.0f, cosf, cosf, sinf,
	                                     0.6f, 1.1f, 0.8f, 0.9f, TK_FILTER_NEAREST };
	logo_swarm(d, a, w, h, f, &m);
}

static void rect_blend(struct tk_draw *d, const struct assets *a, int w, int h, int f)
{
	tk_draw_clear(d, backdrop);
	for (int i = 0; i < 128; i++) {
		float t = (float)(f + i * 3) * 0.03f;
		float rw = 30.0f + (float)(i % 7) * 20.0f, rh = 20.0f + (float)(i % 5) * 25.0f;
		float x = (float)w * (0.5f + 0.5f * sinf(t + (float)i)) - rw / 2;
		float y = (float)h * (0.5f + 0.5f * cosf(t * 1.3f + (float)i * 0.5f)) - rh / 2;
		struct tk_color c = { (float)(i % 3) / 2.0f, (float)(i % 5) / 4.0f,
		                      (float)(i % 7) / 6.0f, 0.5f };
		tk_draw_rect(d, x, y, rw, rh, c);
	}
}

static void many_small_images(struct tk_draw *d, const struct assets *a, int w, int h, int f)
{
	tk_draw_clear(d, backdrop);
	int cols = w / 36 > 0 ? w / 36 : 1;
	for (int i = 0; i < 512; i++) {
		int col = i % cols, row = i / cols;
		float x = (float)(col * 36 + (f * 2 + row * 5) % 36) - 18;
		float y = (float)(row * 36 + 2);
		if (y > (float)h)
			break;
		tk_draw_image(d, a->icons[(i + f / 4) % 8], 0, 0, 32, 32, x, y, 32, 32,
		              TK_FILTER_NEAREST, white);
	}
}

static void text_glyphs(struct tk_draw *d, const struct assets *a, int w, int h, int f)
{
	static const char *lines[] = {
		"Wayland and X11 compared: the same app, the same engine, two stacks.",
		"EFL's Ecore_Evas hides the window system; duet's toolkit does the same.",
		"0123456789 !\"#$%&'()*+,-./:;<=>?@ [\\]^_`{|}~ ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	};
	tk_draw_clear(d, (struct tk_color){ 0.97f, 0.97f, 0.95f, 1 });
	int line = 0;
	for (float y = (float)(-(f % 16)); y < (float)h; y += 16, line++)
		app_draw_text(d, a->atlas, lines[(line + f / 16) % 3], 4, y, 1,
		              (struct tk_color){ 0.1f, 0.1f + 0.2f * (float)(line % 3), 0.2f, 1 });
}

static void gradient(struct tk_draw *d, const struct assets *a, int w, int h, int f)
{
	int bands = 16;
	float bh = (float)h / (float)bands;
	for (int i = 0; i < bands; i++) {
		float t = (float)(f + i * 5) * 0.04f;
		struct tk_color c0 = { 0.5f + 0.5f * sinf(t), 0.5f + 0.5f * sinf(t + 2), 0.5f + 0.5f * sinf(t + 4), 1 };
		struct tk_color c1 = { c0.b, c0.r, c0.g, 1 };
		tk_draw_gradient(d, 0, (float)i * bh, (float)w, bh + 1, c0, c1, i % 2 == 0);
	}
}

static void scrolling(struct tk_draw *d, const struct assets *a, int w, int h, int f)
{
	int range = a->page_h - h > 1 ? a->page_h - h : 1;
	int pos = (f * 6) % (2 * range);
	int off = pos < range ? pos : 2 * range - pos; /* down, then back up */
	tk_draw_image(d, a->page, 0, (float)off, 512, (float)h, 0, 0, (float)w, (float)h,
	              TK_FILTER_NEAREST, white);
	tk_draw_rect(d, 0, 0, (float)w, 28, (struct tk_color){ 0.2f, 0.25f, 0.4f, 0.9f });
}

static const struct {
	const char *name;
	scene_fn fn;
} scenes[] = {
	{ "image_blend_smooth_scaled", image_blend_smooth_scaled },
	{ "image_blend_nearest", image_blend_nearest },
	{ "rect_blend", rect_blend },
	{ "many_small_images", many_small_images },
	{ "text_glyphs", text_glyphs },
	{ "gradient", gradient },
	{ "scrolling", scrolling },
};
#define N_SCENES (int)(sizeof(scenes) / sizeof(scenes[0]))

static const char usage[] =
	"usage: duet-render [options]\n"
	"Draws expedite-like scenes unthrottled and prints one JSON line per scene\n"
	"(frames, fps, mean flush/swap time), then a render_done line.\n"
	TK_OPTIONS_HELP
	"  --duration-ms MS       time per scene (default 2000, 1..600000)\n"
	"  --min-frames N         a scene also lasts until N frames are drawn (default 0)\n"
	"  --size WxH             window size (default 800x600)\n"
	"  --scenes A,B,...       scenes to run (default all; --list shows them)\n"
	"  --no-feedback          do not ask for presentation feedback per frame\n"
	"  --list                 print the scene names and exit\n"
	"Output goes to $DUET_TRACE if set, else stdout.\n";

struct state {
	/* Feedback counts for the frames of the current scene only: late
	 * feedback of the previous scene's frames is not this scene's. */
	uint64_t first_seq;
	uint64_t presented, discarded;
};

static void on_presented(void *data, struct tk_window *win, const struct tk_frame_info *info)
{
	struct state *s = data;
	if (!s->first_seq || info->seq < s->first_seq)
		return;
	if (info->discarded)
		s->discarded++;
	else
		s->presented++;
}

static const struct tk_window_listener listener = {
	.presented = on_presented,
};

static struct tk_image *image_from(struct tk_window *win, uint32_t *px, int w, int h)
{
	struct tk_image *img = px ? tk_image_create(win, w, h, px, w * 4) : NULL;
	free(px);
	return img;
}

static bool make_assets(struct tk_window *win, struct assets *a)
{
	a->logo = image_from(win, app_photo_pixels(128, 128, 3, true), 128, 128);
	for (int i = 0; i < 8; i++)
		a->icons[i] = image_from(win, app_icon_pixels(32, (unsigned)i), 32, 32);
	int aw = 0, ah = 0;
	uint32_t *atlas = app_glyph_atlas_pixels(&aw, &ah, 0); /* sets aw, ah */
	a->atlas = image_from(win, atlas, aw, ah);
	a->page_h = 2048;
	a->page = image_from(win, app_photo_pixels(512, a->page_h, 5, false), 512, a->page_h);
	for (int i = 0; i < 8; i++)
		if (!a->icons[i])
			return false;
	return a->logo && a->atlas && a->page;
}

static int find_scene(const char *name, size_t len)
{
	for (int i = 0; i < N_SCENES; i++)
		if (strlen(scenes[i].name) == len && strncmp(scenes[i].name, name, len) == 0)
			return i;
	return -1;
}

/* Marks the scenes named in list (A,B,...); false after printing why. */
static bool select_scenes(const char *list, bool selected[N_SCENES])
{
	for (int k = 0; k < N_SCENES; k++)
		selected[k] = false;
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		int k = find_scene(p, len);
		if (k < 0) {
			fprintf(stderr, "duet-render: unknown scene '%.*s' (see --list)\n", (int)len, p);
			return false;
		}
		selected[k] = true;
		p += len;
		if (*p == ',')
			p++;
	}
	return true;
}

int main(int argc, char **argv)
{
	struct tk_options opts;
	long duration_ms = 2000, min_frames = 0;
	struct app_size size = { 800, 600 };
	bool list = false, no_feedback = false;
	const char *scene_list = NULL;
	bool selected[N_SCENES];
	for (int i = 0; i < N_SCENES; i++)
		selected[i] = true;
	const struct app_opt options[] = {
		APP_FLAG("--list", &list),
		APP_FLAG("--no-feedback", &no_feedback),
		APP_LONG("--duration-ms", &duration_ms, 1, 600000),
		APP_LONG("--min-frames", &min_frames, 0, 1000000),
		APP_SIZE("--size", &size),
		APP_STRING("--scenes", &scene_list),
		APP_OPT_END,
	};
	int parsed = app_parse_options("duet-render", usage, &argc, argv, &opts, options);
	if (parsed != APP_ARGS_RUN)
		return parsed;
	if (list) {
		for (int k = 0; k < N_SCENES; k++)
			puts(scenes[k].name);
		return 0;
	}
	if (scene_list && !select_scenes(scene_list, selected))
		return 2;
	bool feedback = !no_feedback;
	app_install_signals();
	struct state s = { 0 };
	struct tk_window *win;
	struct tk_app *app = app_open(&opts, "duet-render", size, &listener, &s, &win);
	if (!app)
		return 1;
	struct assets assets = { 0 };
	int status = 1;
	tk_window_set_feedback(win, feedback);
	if (!make_assets(win, &assets)) {
		fprintf(stderr, "duet-render: out of memory making the scene images\n");
		goto out;
	}
	if (tk_window_show(win) < 0)
		goto out;
	if (app_wait_ready(app, win, tk_now_ns() + 20000000000ull, 50) <= 0) {
		fprintf(stderr, "duet-render: the window was not mapped\n");
		goto out;
	}
	double fps_sum = 0;
	int n_run = 0;
	for (int k = 0; k < N_SCENES; k++) {
		if (!selected[k])
			continue;
		int w, h;
		/* One untimed frame first: texture uploads are not the scene's. */
		struct tk_draw *d = tk_window_begin_frame(win);
		if (!d)
			goto draw_failed;
		tk_window_get_size(win, &w, &h);
		scenes[k].fn(d, &assets, w, h, 0);
		if (!tk_window_end_frame(win, NULL))
			goto draw_failed;
		/* A server lost during this frame ends the app here, as in the
		 * timed loop below: drawing on after the toolkit said "X
		 * connection lost" is what hung apps-x11-server-dies-gl under
		 * qemu-user (tk-engine-gl.c, gl_present, says how). */
		if (tk_app_dispatch(app, 0) < 0)
			goto out;
		s.presented = s.discarded = 0;
		s.first_seq = 0;
		struct app_proto_mark mark = { 0, 0 };
		char proto[96];
		app_proto_delta(app, &mark, proto, sizeof(proto));
		uint64_t frames = 0, flush_total = 0, flush_max = 0;
		uint64_t t0 = tk_now_ns(), end = t0 + (uint64_t)duration_ms * 1000000ull, now = t0;
		while ((now < end || frames < (uint64_t)min_frames) && !app_should_quit(win)) {
			d = tk_window_begin_frame(win);
			if (!d)
				goto draw_failed;
			tk_window_get_size(win, &w, &h);
			scenes[k].fn(d, &assets, w, h, (int)frames + 1);
			uint64_t flush = 0;
			uint64_t seq = tk_window_end_frame(win, &flush);
			if (!seq)
				goto draw_failed;
			if (!s.first_seq)
				s.first_seq = seq;
			frames++;
			flush_total += flush;
			if (flush > flush_max)
				flush_max = flush;
			/* Handle releases, feedback and configures, never wait. */
			if (tk_app_dispatch(app, 0) < 0)
				goto out;
			now = tk_now_ns();
		}
		if (app_should_quit(win))
			goto out;
		app_proto_delta(app, &mark, proto, sizeof(proto)); /* this scene's */
		double secs = (double)(now - t0) / 1e9;
		double fps = secs > 0 ? (double)frames / secs : 0;
		fps_sum += fps;
		n_run++;
		tk_trace("scene",
		         "\"scene\":\"%s\",\"frames\":%llu,\"fps\":%.3f,\"duration_ns\":%llu,"
		         "\"flush_mean_ns\":%llu,\"flush_max_ns\":%llu,\"presented\":%llu,"
		         "\"discarded\":%llu,\"width\":%d,\"height\":%d,\"backend\":\"%s\","
		         "\"engine\":\"%s\",\"presentation\":\"%s\",\"path\":\"%s\"%s",
		         scenes[k].name, (unsigned long long)frames, fps,
		         (unsigned long long)(now - t0),
		         (unsigned long long)(frames ? flush_total / frames : 0),
		         (unsigned long long)flush_max, (unsigned long long)s.presented,
		         (unsigned long long)s.discarded, w, h, tk_app_backend_name(app),
		         tk_app_engine_name(app), feedback ? tk_app_presentation_name(app) : "off",
		         tk_app_path_detail(app), proto);
	}
	tk_trace("render_done", "\"scenes\":%d,\"score_fps\":%.3f,\"backend\":\"%s\",\"engine\":\"%s\"",
	         n_run, n_run ? fps_sum / n_run : 0.0, tk_app_backend_name(app),
	         tk_app_engine_name(app));
	status = 0;
	goto out;
draw_failed:
	fprintf(stderr, "duet-render: drawing a frame failed\n");
out:
	tk_app_destroy(app);
	return status;
}
