/* duet-launch: starts like an EFL app (optionally loading images and
 * font-like glyph data first), shows a window and reports when its first
 * frame was presented, relative to DUET_T0_NS (CLOCK_MONOTONIC taken by the
 * launcher just before fork), with the launch's timeline: exec (main()
 * entered), connected, submitted (first frame handed over), received (the server
 * answered a mark sent with that frame) and presented, in absolute CLOCK_MONOTONIC ns.
 * Then exits, or stays with --stay. */
#include <stdio.h>
#include <stdlib.h>

#include "app-common.h"

#define MAX_ASSETS 256

static const char usage[] =
	"usage: duet-launch [options]\n"
	"Shows one window and prints a first_frame JSON line when its first frame\n"
	"was presented (since_t0_ns relative to $DUET_T0_NS, CLOCK_MONOTONIC ns).\n"
	TK_OPTIONS_HELP
	"  --load-images N        generate and upload N 256x256 images first (0..256)\n"
	"  --load-fonts N         rasterise N glyph atlases first (0..256)\n"
	"  --size WxH             window size (default 800x600)\n"
	"  --stay                 keep running after the first frame until closed\n"
	"  --timeout-ms MS        give up waiting for the server after MS (default 20000)\n"
	"Output goes to $DUET_TRACE if set, else stdout.\n";

struct launch {
	struct tk_window *win;
	bool presented, discarded;
	uint64_t want_seq;
	struct tk_frame_info first;
	bool redraw;
};

static void on_resized(void *data, struct tk_window *win, int w, int h)
{
	((struct launch *)data)->redraw = true;
}

static void on_presented(void *data, struct tk_window *win, const struct tk_frame_info *info)
{
	struct launch *l = data;
	if (l->presented || info->seq < l->want_seq)
		return;
	if (info->discarded) {
		l->discarded = true;
		return;
	}
	l->first = *info;
	l->presented = true;
}

static const struct tk_window_listener listener = {
	.resized = on_resized,
	.presented = on_presented,
};

static uint32_t *images[MAX_ASSETS], *atlases[MAX_ASSETS];
static struct tk_image *textures[MAX_ASSETS], *atlas_tex[MAX_ASSETS];

static void draw(struct tk_draw *d, struct tk_window *win, long n_images, long n_fonts)
{
	int w, h;
	tk_window_get_size(win, &w, &h);
	tk_draw_clear(d, (struct tk_color){ 0.93f, 0.93f, 0.95f, 1 });
	tk_draw_gradient(d, 0, 0, (float)w, 48, (struct tk_color){ 0.2f, 0.3f, 0.6f, 1 },
	                 (struct tk_color){ 0.1f, 0.15f, 0.35f, 1 }, true);
	/* Thumbnails of every loaded image, then a line per glyph atlas: real
	 * apps show what they loaded, which makes the first frame upload it. */
	int cols = w / 72 > 0 ? w / 72 : 1;
	for (long i = 0; i < n_images; i++)
		if (textures[i])
			tk_draw_image(d, textures[i], 0, 0, 256, 256, 8 + (float)(i % cols) * 72,
			              56 + (float)(i / cols) * 72, 64, 64, TK_FILTER_SMOOTH,
			              (struct tk_color){ 1, 1, 1, 1 });
	float y = 64 + (float)((n_images + cols - 1) / cols) * 72;
	for (long i = 0; i < n_fonts; i++, y += 20)
		if (atlas_tex[i])
			app_draw_text(d, atlas_tex[i], "The quick brown fox jumps over the lazy dog", 8, y, 1,
			              (struct tk_color){ 0.1f, 0.1f, 0.1f, 1 });
}

static uint64_t draw_frame(struct launch *l, long n_images, long n_fonts)
{
	struct tk_draw *d = tk_window_begin_frame(l->win);
	if (!d)
		return 0;
	draw(d, l->win, n_images, n_fonts);
	return tk_window_end_frame(l->win, NULL);
}

int main(int argc, char **argv)
{
	uint64_t start_ns = tk_now_ns();
	struct tk_options opts;
	long n_images = 0, n_fonts = 0, timeout_ms = 20000;
	struct app_size size = { 800, 600 };
	bool stay = false;
	uint64_t t0;
	const struct app_opt options[] = {
		APP_FLAG("--stay", &stay),
		APP_LONG("--load-images", &n_images, 0, MAX_ASSETS),
		APP_LONG("--load-fonts", &n_fonts, 0, MAX_ASSETS),
		APP_SIZE("--size", &size),
		APP_LONG("--timeout-ms", &timeout_ms, 1, 3600000),
		APP_OPT_END,
	};
	int parsed = app_parse_options("duet-launch", usage, &argc, argv, &opts, options);
	if (parsed != APP_ARGS_RUN)
		return parsed;
	if (!app_t0_from_env("duet-launch", start_ns, &t0))
		return 2;
	app_install_signals();

	/* Start-up work, before talking to the display, like an app reading
	 * its theme, images and fonts. */
	for (long i = 0; i < n_images; i++)
		images[i] = app_photo_pixels(256, 256, (unsigned)i, false);
	int aw = 0, ah = 0;
	for (long i = 0; i < n_fonts; i++)
		atlases[i] = app_glyph_atlas_pixels(&aw, &ah, (unsigned)i);

	struct launch l = { 0 };
	struct tk_app *app = app_open(&opts, "duet-launch", size, &listener, &l, &l.win);
	if (!app)
		return 1;
	for (long i = 0; i < n_images; i++)
		if (images[i])
			textures[i] = tk_image_create(l.win, 256, 256, images[i], 256 * 4);
	for (long i = 0; i < n_fonts; i++)
		if (atlases[i])
			atlas_tex[i] = tk_image_create(l.win, aw, ah, atlases[i], aw * 4);
	int status = 1;
	if (tk_window_show(l.win) < 0)
		goto out;
	uint64_t deadline = tk_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	int ready = app_wait_ready(app, l.win, deadline, 100);
	if (ready <= 0) {
		if (ready == 0)
			fprintf(stderr, "duet-launch: the window was not mapped within %ld ms\n",
			        timeout_ms);
		goto out;
	}
	/* Redraw until a frame is presented (a compositor may discard one). */
	uint64_t submitted = 0, received = 0;
	for (int attempt = 0; attempt < 10 && !l.presented; attempt++) {
		l.discarded = false;
		tk_window_mark_received(l.win);
		l.want_seq = draw_frame(&l, n_images, n_fonts);
		if (!l.want_seq) {
			fprintf(stderr, "duet-launch: drawing the first frame failed\n");
			goto out;
		}
		/* "received": the server's reply to a mark sent in the frame's
		 * own write, so it costs the frame nothing; later frames (--stay)
		 * skip it. */
		submitted = tk_window_submitted_ns(l.win);
		received = tk_window_wait_received(l.win);
		if (!received) {
			fprintf(stderr, "duet-launch: the display connection was lost after the first "
			        "frame\n");
			goto out;
		}
		while (!l.presented && !l.discarded && !app_should_quit(l.win) &&
		       tk_now_ns() < deadline)
			if (tk_app_dispatch(app, 100) < 0)
				goto out;
		if (app_should_quit(l.win) || tk_now_ns() >= deadline)
			break;
	}
	if (!l.presented) {
		fprintf(stderr, "duet-launch: no frame was presented within %ld ms (presentation: %s)\n",
		        timeout_ms, tk_app_presentation_name(app));
		goto out;
	}
	uint64_t since = t0 ? l.first.presented_ns - t0 : l.first.presented_ns - start_ns;
	struct app_proto_mark mark = { 0, 0 };
	char proto[96];
	app_proto_delta(app, &mark, proto, sizeof(proto)); /* everything since connecting */
	tk_trace("first_frame",
	         "\"since_t0_ns\":%llu,\"t0\":\"%s\",\"presented_ns\":%llu,\"commit_ns\":%llu,"
	         "\"width\":%d,\"height\":%d,\"backend\":\"%s\",\"engine\":\"%s\","
	         "\"presentation\":\"%s\",\"path\":\"%s\",\"images\":%ld,\"fonts\":%ld%s,"
	         "\"timeline\":{\"exec\":%llu,\"connected\":%llu,\"submitted\":%llu,"
	         "\"received\":%llu,\"presented\":%llu}",
	         (unsigned long long)since, t0 ? "DUET_T0_NS" : "process-start",
	         (unsigned long long)l.first.presented_ns, (unsigned long long)l.first.commit_ns,
	         l.first.width, l.first.height, tk_app_backend_name(app), tk_app_engine_name(app),
	         tk_app_presentation_name(app), tk_app_path_detail(app), n_images, n_fonts, proto,
	         (unsigned long long)start_ns, (unsigned long long)tk_app_connected_ns(app),
	         (unsigned long long)submitted, (unsigned long long)received,
	         (unsigned long long)l.first.presented_ns);
	status = 0;
	if (stay) {
		tk_window_set_feedback(l.win, false);
		while (!app_should_quit(l.win)) {
			if (tk_app_dispatch(app, 100) < 0) {
				status = 1;
				break;
			}
			if (l.redraw) {
				l.redraw = false;
				draw_frame(&l, n_images, n_fonts);
			}
		}
	}
out:
	tk_app_destroy(app);
	for (long i = 0; i < n_images; i++)
		free(images[i]);
	for (long i = 0; i < n_fonts; i++)
		free(atlases[i]);
	return status;
}
