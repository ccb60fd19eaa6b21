/* duet-input: the app of the input experiment (input-to-photon latency).
 * Shows a window with a patch whose colour flips between two colours on
 * every key press, drawing and committing the new frame right away, and
 * logs each press's timeline: when the toolkit read the key event
 * ("received"), when the frame was handed over ("submitted") and, from
 * presentation feedback, when it was shown ("presented"). The bench injects
 * the keys and watches the screen for the patch's colour ("composited"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app-common.h"

static const char usage[] =
	"usage: duet-input [options]\n"
	"Shows a patch that changes colour on every key press and prints JSON lines:\n"
	"input_ready once the first frame was presented (patch in colour a), then per\n"
	"press input_key (the press's timeline, CLOCK_MONOTONIC ns) once its frame was\n"
	"presented. Runs until closed, SIGTERM/SIGINT or --timeout-ms.\n"
	TK_OPTIONS_HELP
	"  --size WxH             window size (default 400x300)\n"
	"  --timeout-ms MS        exit after MS (default: run until closed)\n"
	"Output goes to $DUET_TRACE if set, else stdout.\n";

/* The patch's two colours, 8-bit RGB: neither is duet-launch's clear
 * colour (the launch observer's) nor in this window's background, so a
 * run of one of them on screen is this patch. Keep in step with
 * bench/duet_bench/inputlat.py. */
static const unsigned char patch_rgb[2][3] = { { 32, 96, 224 }, { 240, 128, 16 } };
#define PATCH_W 256
#define PATCH_H 96

#define MAX_IN_FLIGHT 64

struct press {
	uint64_t n, seq, received_ns, submitted_ns;
	uint32_t key;
	int colour;
};

struct input_app {
	struct tk_window *win;
	bool redraw;
	int colour;           /* index into patch_rgb shown by the last frame */
	uint64_t presses;
	uint64_t ready_seq;   /* the first frame's */
	bool ready_presented;
	struct tk_frame_info ready_info;
	struct press flight[MAX_IN_FLIGHT]; /* presses whose frame is not yet presented */
	int n_flight;
};

static uint64_t draw_frame(struct input_app *a)
{
	struct tk_draw *d = tk_window_begin_frame(a->win);
	if (!d)
		return 0;
	int w, h;
	tk_window_get_size(a->win, &w, &h);
	const unsigned char *c = patch_rgb[a->colour];
	tk_draw_clear(d, (struct tk_color){ 0.5f, 0.5f, 0.5f, 1 });
	tk_draw_rect(d, (float)(w - PATCH_W) / 2, (float)(h - PATCH_H) / 2, PATCH_W, PATCH_H,
	             (struct tk_color){ c[0] / 255.0f, c[1] / 255.0f, c[2] / 255.0f, 1 });
	return tk_window_end_frame(a->win, NULL);
}

static void report(const struct press *p, const struct tk_frame_info *info)
{
	tk_trace("input_key",
	         "\"press\":%llu,\"key\":%u,\"colour\":\"%c\",\"seq\":%llu,\"discarded\":%s,"
	         "\"timeline\":{\"received\":%llu,\"submitted\":%llu,\"presented\":%llu}",
	         (unsigned long long)p->n, p->key, "ab"[p->colour], (unsigned long long)p->seq,
	         info && info->discarded ? "true" : "false", (unsigned long long)p->received_ns,
	         (unsigned long long)p->submitted_ns,
	         (unsigned long long)(info ? info->presented_ns : 0));
}

static void on_key(void *data, struct tk_window *win, uint32_t key, bool pressed, uint64_t t_ns)
{
	struct input_app *a = data;
	if (!pressed || !a->ready_presented)
		return;
	a->colour ^= 1;
	uint64_t seq = draw_frame(a);
	struct press p = { .n = ++a->presses, .seq = seq, .received_ns = t_ns,
	                   .submitted_ns = tk_window_submitted_ns(win), .key = key,
	                   .colour = a->colour };
	if (!seq) {
		fprintf(stderr, "duet-input: drawing press %llu's frame failed\n",
		        (unsigned long long)p.n);
		return;
	}
	if (a->n_flight == MAX_IN_FLIGHT) {
		/* Presentation stopped answering: say so rather than keep it. */
		report(&a->flight[0], NULL);
		memmove(&a->flight[0], &a->flight[1], (MAX_IN_FLIGHT - 1) * sizeof(a->flight[0]));
		a->n_flight--;
	}
	a->flight[a->n_flight++] = p;
}

static void on_presented(void *data, struct tk_window *win, const struct tk_frame_info *info)
{
	struct input_app *a = data;
	if (!a->ready_presented) {
		if (info->seq >= a->ready_seq && !info->discarded) {
			a->ready_info = *info;
			a->ready_presented = true;
		} else if (info->seq >= a->ready_seq) {
			a->redraw = true; /* discarded: draw the first frame again */
		}
		return;
	}
	int keep = 0;
	for (int i = 0; i < a->n_flight; i++) {
		if (a->flight[i].seq == info->seq)
			report(&a->flight[i], info);
		else
			a->flight[keep++] = a->flight[i];
	}
	a->n_flight = keep;
}

static void on_resized(void *data, struct tk_window *win, int w, int h)
{
	((struct input_app *)data)->redraw = true;
}

static const struct tk_window_listener listener = {
	.resized = on_resized,
	.presented = on_presented,
	.key = on_key,
};

int main(int argc, char **argv)
{
	struct tk_options opts;
	struct app_size size = { 400, 300 };
	long timeout_ms = 0;
	const struct app_opt options[] = {
		APP_SIZE("--size", &size),
		APP_LONG("--timeout-ms", &timeout_ms, 1, 86400000),
		APP_OPT_END,
	};
	int parsed = app_parse_options("duet-input", usage, &argc, argv, &opts, options);
	if (parsed != APP_ARGS_RUN)
		return parsed;
	if (size.width < PATCH_W || size.height < PATCH_H) {
		fprintf(stderr, "duet-input: bad size %dx%d (want at least %dx%d)\n", size.width,
		        size.height, PATCH_W, PATCH_H);
		return 2;
	}
	app_install_signals();
	struct input_app a = { 0 };
	struct tk_app *app = app_open(&opts, "duet-input", size, &listener, &a, &a.win);
	if (!app)
		return 1;
	int status = 1;
	uint64_t deadline = timeout_ms ? tk_now_ns() + (uint64_t)timeout_ms * 1000000ull : UINT64_MAX;
	if (tk_window_show(a.win) < 0)
		goto out;
	if (app_wait_ready(app, a.win, deadline, 100) < 0)
		goto out;
	a.redraw = true;
	while (!app_should_quit(a.win) && tk_now_ns() < deadline) {
		if (a.redraw && tk_window_ready(a.win)) {
			a.redraw = false;
			uint64_t seq = draw_frame(&a);
			if (!a.ready_presented)
				a.ready_seq = seq;
		}
		bool was_ready = a.ready_presented;
		if (tk_app_dispatch(app, 100) < 0)
			goto out;
		if (!was_ready && a.ready_presented)
			tk_trace("input_ready",
			         "\"presented_ns\":%llu,\"width\":%d,\"height\":%d,\"backend\":\"%s\","
			         "\"engine\":\"%s\",\"presentation\":\"%s\",\"path\":\"%s\","
			         "\"colours\":[[%u,%u,%u],[%u,%u,%u]]",
			         (unsigned long long)a.ready_info.presented_ns, a.ready_info.width,
			         a.ready_info.height, tk_app_backend_name(app), tk_app_engine_name(app),
			         tk_app_presentation_name(app), tk_app_path_detail(app), patch_rgb[0][0],
			         patch_rgb[0][1], patch_rgb[0][2], patch_rgb[1][0], patch_rgb[1][1],
			         patch_rgb[1][2]);
	}
	status = app_should_quit(a.win) || timeout_ms ? 0 : 1;
out:
	tk_app_destroy(app);
	return status;
}
