/* duet-resize: the study's resize table, N runs in order, each step timed
 * from the resize request to the first presented frame at the new size.
 * Client mode: the app resizes itself (X11 ConfigureWindow, which the WM
 * intercepts; Wayland: a buffer of the new size). Server mode: the
 * compositor (duet_test resize_window) or WM (_DUET_RESIZE) sends the size;
 * on servers without either, client mode runs and the output says so.
 * Every frame carries size tags (draw_size_tags) for the bench's observer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app-common.h"

static const int sizes[][2] = {
	{ 100, 100 }, { 1000, 240 }, { 850, 900 }, { 400, 1000 },
	{ 1800, 500 }, { 999, 999 }, { 333, 999 }, { 1920, 1080 },
};
#define N_SIZES (int)(sizeof(sizes) / sizeof(sizes[0]))

static const char usage[] =
	"usage: duet-resize [options]\n"
	"Resizes its window through the study's 8 sizes (100x100 ... 1920x1080), N runs,\n"
	"printing one JSON line per step with the request -> presented latency.\n"
	TK_OPTIONS_HELP
	"  --runs N               runs of the 8 sizes (default 10, 1..1000)\n"
	"  --mode client|server   who initiates the resize (default client)\n"
	"  --size WxH             initial window size (default 640x480)\n"
	"  --timeout-ms MS        give up on a step after MS (default 10000)\n"
	"  --settle-ms MS         handle events for MS before each request and after the\n"
	"                         last step (default 0), so every request meets an idle\n"
	"                         stack and each step's frame is composited even where\n"
	"                         presented precedes the composite (openbox)\n"
	"  --stay                 keep the window after the last step until closed\n"
	"Output goes to $DUET_TRACE if set, else stdout.\n";

struct state {
	struct tk_window *win;
	bool resized;
	/* The frame waited for: the first presented at (want_w, want_h). */
	int want_w, want_h;
	uint64_t want_seq;
	bool got, discarded;
	struct tk_frame_info info;
	/* Of the frame last drawn by present_at: handed over, and the server's
	 * answer to a mark sent with it ("received"). */
	uint64_t submitted_ns, received_ns;
};

static void on_resized(void *data, struct tk_window *win, int w, int h)
{
	((struct state *)data)->resized = true;
}

static void on_presented(void *data, struct tk_window *win, const struct tk_frame_info *info)
{
	struct state *s = data;
	if (s->got || info->seq < s->want_seq || info->width != s->want_w ||
	    info->height != s->want_h)
		return;
	if (info->discarded) {
		if (info->seq == s->want_seq)
			s->discarded = true;
		return;
	}
	s->info = *info;
	s->got = true;
}

static const struct tk_window_listener listener = {
	.resized = on_resized,
	.presented = on_presented,
};

/* Size tags, for the bench's framebuffer observer (bench/probes/observe.c,
 * --sizes): they tell from the screen alone which size of this window is
 * shown. At the top-left corner a 32x8 block of magenta (255,0,255), then
 * an 8x8 code cell, (w & 255, h & 255, (w >> 8) << 4 | h >> 8) as 8-bit
 * RGB, and an 8x8 check cell of its complement; at the bottom-right corner
 * the code and check cells again (the observer checks them when that
 * corner is on screen: the whole window was drawn). 5 opaque rects, the
 * same on every stack and engine (both write round(v * 255)). */
#define TAG_MAGIC_W 32
#define TAG_CELL 8

static struct tk_color byte_rgb(unsigned r, unsigned g, unsigned b)
{
	return (struct tk_color){ (float)r / 255.0f, (float)g / 255.0f, (float)b / 255.0f, 1 };
}

static void draw_size_tags(struct tk_draw *d, int w, int h)
{
	if (w < TAG_MAGIC_W + 2 * TAG_CELL || h < 2 * TAG_CELL || w > 4095 || h > 4095)
		return; /* too small (or too large) to carry a tag */
	unsigned r = (unsigned)w & 255, g = (unsigned)h & 255;
	unsigned b = ((unsigned)w >> 8) << 4 | ((unsigned)h >> 8);
	struct tk_color code = byte_rgb(r, g, b), check = byte_rgb(255 - r, 255 - g, 255 - b);
	const float c = TAG_CELL;
	tk_draw_rect(d, 0, 0, TAG_MAGIC_W, c, byte_rgb(255, 0, 255));
	tk_draw_rect(d, TAG_MAGIC_W, 0, c, c, code);
	tk_draw_rect(d, TAG_MAGIC_W + c, 0, c, c, check);
	tk_draw_rect(d, (float)w - 2 * c, (float)h - c, c, c, code);
	tk_draw_rect(d, (float)w - c, (float)h - c, c, c, check);
}

static uint64_t draw_frame(struct state *s, int step)
{
	struct tk_draw *d = tk_window_begin_frame(s->win);
	if (!d)
		return 0;
	int w, h;
	tk_window_get_size(s->win, &w, &h);
	/* Full repaint at the new size, like a toolkit relayout: a background,
	 * a title bar and a grid of "widgets". */
	tk_draw_clear(d, (struct tk_color){ 0.9f, 0.9f, 0.92f, 1 });
	tk_draw_gradient(d, 0, 0, (float)w, 32, (struct tk_color){ 0.25f, 0.35f, 0.65f, 1 },
	                 (struct tk_color){ 0.12f, 0.18f, 0.4f, 1 }, true);
	for (int y = 40; y + 24 < h; y += 32)
		for (int x = 8; x + 80 < w; x += 88)
			tk_draw_rect(d, (float)x, (float)y, 80, 24,
			             (struct tk_color){ 0.6f + 0.05f * (float)(step % 4), 0.7f, 0.8f, 1 });
	draw_size_tags(d, w, h);
	return tk_window_end_frame(s->win, NULL);
}

/* Draws at the current size until a frame of want_w x want_h is presented. */
static bool present_at(struct tk_app *app, struct state *s, int step, uint64_t deadline)
{
	tk_window_get_size(s->win, &s->want_w, &s->want_h);
	s->got = false;
	while (!s->got) {
		s->discarded = false;
		tk_window_mark_received(s->win);
		s->want_seq = draw_frame(s, step);
		if (!s->want_seq)
			return false;
		s->submitted_ns = tk_window_submitted_ns(s->win);
		s->received_ns = tk_window_wait_received(s->win);
		if (!s->received_ns)
			return false;
		while (!s->got && !s->discarded) {
			if (app_should_quit(s->win) || tk_now_ns() >= deadline)
				return false;
			if (tk_app_dispatch(app, 50) < 0)
				return false;
		}
	}
	return true;
}

/* Handles events for ms (--settle-ms); false if the window or the
 * connection went. */
static bool settle(struct tk_app *app, struct state *s, long ms)
{
	uint64_t end = tk_now_ns() + (uint64_t)ms * 1000000ull;
	for (uint64_t now = tk_now_ns(); now < end; now = tk_now_ns()) {
		if (app_should_quit(s->win))
			return false;
		if (tk_app_dispatch(app, (int)((end - now + 999999) / 1000000)) < 0)
			return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "client", "server", NULL };
	struct tk_options opts;
	long runs = 10, timeout_ms = 10000, settle_ms = 0;
	struct app_size size = { 640, 480 };
	const char *requested = "client";
	bool stay = false;
	const struct app_opt options[] = {
		APP_FLAG("--stay", &stay),
		APP_LONG("--runs", &runs, 1, 1000),
		APP_CHOICE("--mode", &requested, modes),
		APP_SIZE("--size", &size),
		APP_LONG("--settle-ms", &settle_ms, 0, 10000),
		APP_LONG("--timeout-ms", &timeout_ms, 1, 3600000),
		APP_OPT_END,
	};
	int parsed = app_parse_options("duet-resize", usage, &argc, argv, &opts, options);
	if (parsed != APP_ARGS_RUN)
		return parsed;
	bool server_mode = strcmp(requested, "server") == 0;
	app_install_signals();
	struct state s = { 0 };
	struct tk_app *app = app_open(&opts, "duet-resize", size, &listener, &s, &s.win);
	if (!app)
		return 1;
	int status = 1;
	if (tk_window_show(s.win) < 0)
		goto out;
	uint64_t deadline = tk_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	if (app_wait_ready(app, s.win, deadline, 50) <= 0) {
		fprintf(stderr, "duet-resize: the window was not mapped\n");
		goto out;
	}
	if (!present_at(app, &s, 0, deadline)) {
		fprintf(stderr, "duet-resize: the first frame was not presented\n");
		goto out;
	}
	const char *mode = requested;
	const char *why = NULL;
	if (server_mode && !tk_app_can_server_resize(app, &why)) {
		fprintf(stderr, "duet-resize: server-initiated resize is unsupported here (%s); "
		        "using client mode\n", why);
		tk_trace("resize_mode", "\"requested\":\"server\",\"mode\":\"client\",\"reason\":\"%s\"",
		         why);
		mode = "client";
		server_mode = false;
	}
	struct app_proto_mark mark = { 0, 0 };
	char proto[96];
	app_proto_delta(app, &mark, proto, sizeof(proto));
	for (long run = 0; run < runs; run++) {
		for (int step = 0; step < N_SIZES; step++) {
			int tw = sizes[step][0], th = sizes[step][1];
			int cw, ch;
			if (!settle(app, &s, settle_ms))
				goto out;
			tk_window_get_size(s.win, &cw, &ch);
			deadline = tk_now_ns() + (uint64_t)timeout_ms * 1000000ull;
			s.resized = false;
			app_proto_delta(app, &mark, proto, sizeof(proto));
			uint64_t t0 = tk_now_ns();
			if (server_mode) {
				if (tk_window_server_resize(s.win, tw, th) < 0) {
					fprintf(stderr, "duet-resize: the server resize request failed\n");
					goto out;
				}
			} else {
				tk_window_resize(s.win, tw, th);
			}
			/* The new size holds when the toolkit says so (configure,
			 * ConfigureNotify, or at once for a Wayland client). A WM
			 * may constrain it: the step then reports the size it got. */
			if (cw != tw || ch != th) {
				while (!s.resized) {
					if (app_should_quit(s.win) || tk_now_ns() >= deadline ||
					    tk_app_dispatch(app, 50) < 0) {
						fprintf(stderr, "duet-resize: no resize to %dx%d within %ld ms "
						        "(run %ld step %d)\n", tw, th, timeout_ms, run, step + 1);
						goto out;
					}
				}
			}
			if (!present_at(app, &s, step, deadline)) {
				fprintf(stderr, "duet-resize: no frame at %dx%d presented within %ld ms "
				        "(run %ld step %d, presentation: %s)\n", s.want_w, s.want_h,
				        timeout_ms, run + 1, step + 1, tk_app_presentation_name(app));
				goto out;
			}
			app_proto_delta(app, &mark, proto, sizeof(proto)); /* this step's */
			tk_trace("resize",
			         "\"run\":%ld,\"step\":%d,\"width\":%d,\"height\":%d,\"got_width\":%d,"
			         "\"got_height\":%d,\"latency_ns\":%llu,\"mode\":\"%s\",\"backend\":\"%s\","
			         "\"engine\":\"%s\",\"presentation\":\"%s\",\"path\":\"%s\"%s,"
			         "\"timeline\":{\"requested\":%llu,\"submitted\":%llu,\"received\":%llu,"
			         "\"presented\":%llu}",
			         run + 1, step + 1, tw, th, s.info.width, s.info.height,
			         (unsigned long long)(s.info.presented_ns - t0), mode,
			         tk_app_backend_name(app), tk_app_engine_name(app),
			         tk_app_presentation_name(app), tk_app_path_detail(app), proto,
			         (unsigned long long)t0, (unsigned long long)s.submitted_ns,
			         (unsigned long long)s.received_ns, (unsigned long long)s.info.presented_ns);
		}
	}
	if (!settle(app, &s, settle_ms)) /* the last step's frame, too, is composited */
		goto out;
	tk_trace("resize_done", "\"runs\":%ld,\"steps\":%ld,\"mode\":\"%s\",\"requested_mode\":\"%s\"",
	         runs, runs * N_SIZES, mode, requested);
	status = 0;
	if (stay) {
		tk_window_set_feedback(s.win, false);
		while (!app_should_quit(s.win)) {
			if (tk_app_dispatch(app, 100) < 0)
				break;
			if (s.resized) {
				s.resized = false;
				draw_frame(&s, 0);
			}
		}
	}
out:
	tk_app_destroy(app);
	return status;
}
