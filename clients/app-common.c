/* Shared app helpers; see app-common.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app-common.h"

volatile sig_atomic_t app_quit;

static void on_signal(int sig)
{
	app_quit = 1;
}

void app_install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int app_parse_options(const char *prog, const char *usage, int *argc, char **argv,
                      struct tk_options *tk_opts, const struct app_opt *opts)
{
	if (tk_parse_options(argc, argv, tk_opts) < 0) {
		fputs(usage, stderr);
		return 2;
	}
	return app_parse_args(prog, usage, *argc, argv, opts);
}

struct tk_app *app_open(const struct tk_options *opts, const char *prog, struct app_size size,
                        const struct tk_window_listener *listener, void *data,
                        struct tk_window **win)
{
	struct tk_app *app = tk_app_create(opts, prog);
	if (!app)
		return NULL;
	*win = tk_window_create(app, size.width, size.height, listener, data);
	if (!*win) {
		tk_app_destroy(app);
		return NULL;
	}
	tk_window_set_title(*win, prog);
	return app;
}

bool app_should_quit(const struct tk_window *win)
{
	return tk_window_close_requested(win) || app_quit;
}

int app_wait_ready(struct tk_app *app, struct tk_window *win, uint64_t deadline, int poll_ms)
{
	while (!tk_window_ready(win)) {
		if (app_should_quit(win) || tk_now_ns() >= deadline)
			return 0;
		if (tk_app_dispatch(app, poll_ms) < 0)
			return -1;
	}
	return 1;
}

static uint32_t pack(float a, float r, float g, float b)
{
	/* Premultiplied. */
	uint32_t A = (uint32_t)lrintf(a * 255.0f);
	uint32_t R = (uint32_t)lrintf(r * a * 255.0f);
	uint32_t G = (uint32_t)lrintf(g * a * 255.0f);
	uint32_t B = (uint32_t)lrintf(b * a * 255.0f);
	return A << 24 | R << 16 | G << 8 | B;
}

static float clamp01(float v)
{
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

uint32_t *app_photo_pixels(int w, int h, unsigned seed, bool with_alpha)
{
	uint32_t *p = malloc((size_t)w * (size_t)h * 4);
	if (!p)
		return NULL;
	float k = 1.0f + (float)(seed % 7);
	for (int y = 0; y < h; y++) {
		for (int x = 0; x < w; x++) {
			float u = (float)x / (float)w, v = (float)y / (float)h;
			float r = 0.5f + 0.5f * sinf(6.28f * (u * k + v));
			float g = 0.5f + 0.5f * sinf(6.28f * (v * k * 0.7f) + (float)seed);
			float b = 0.5f + 0.5f * cosf(6.28f * (u - v) * 2.0f);
			float a = 1.0f;
			if (with_alpha) {
				float dx = u - 0.5f, dy = v - 0.5f;
				a = clamp01(1.4f - 2.2f * sqrtf(dx * dx + dy * dy));
			}
			p[(size_t)y * (size_t)w + (size_t)x] = pack(a, r, g, b);
		}
	}
	return p;
}

uint32_t *app_icon_pixels(int size, unsigned seed)
{
	uint32_t *p = malloc((size_t)size * (size_t)size * 4);
	if (!p)
		return NULL;
	float hue = (float)(seed % 12) / 12.0f;
	float r = 0.5f + 0.5f * cosf(6.28f * hue), g = 0.5f + 0.5f * cosf(6.28f * (hue - 0.33f));
	float b = 0.5f + 0.5f * cosf(6.28f * (hue - 0.67f));
	float c = ((float)size - 1.0f) / 2.0f;
	for (int y = 0; y < size; y++)
		for (int x = 0; x < size; x++) {
			float d = sqrtf(((float)x - c) * ((float)x - c) + ((float)y - c) * ((float)y - c));
			float a = clamp01(c - d + 0.5f);
			float shade = 1.0f - 0.4f * (float)y / (float)size;
			p[(size_t)y * (size_t)size + (size_t)x] = pack(a, r * shade, g * shade, b * shade);
		}
	return p;
}

/* Each glyph: a few strokes chosen from the character code, antialiased
 * by distance, so text has the texture statistics of real glyphs. */
static float glyph_coverage(int ch, float x, float y)
{
	float cov = 0.0f;
	unsigned bits = (unsigned)ch * 2654435761u;
	for (int s = 0; s < 4; s++, bits >>= 7) {
		float x0 = 2.0f + (float)(bits & 3) * 2.0f, y0 = 3.0f + (float)((bits >> 2) & 3) * 3.0f;
		bool vertical = (bits >> 4) & 1;
		float d = vertical ? fabsf(x - x0) + fmaxf(0.0f, fabsf(y - 8.0f) - 5.0f)
		                   : fabsf(y - y0) + fmaxf(0.0f, fabsf(x - 5.0f) - 3.0f);
		cov = fmaxf(cov, clamp01(1.2f - d));
	}
	return cov;
}

uint32_t *app_glyph_atlas_pixels(int *w, int *h, unsigned seed)
{
	*w = 16 * APP_GLYPH_W;
	*h = 6 * APP_GLYPH_H;
	uint32_t *p = calloc((size_t)*w * (size_t)*h, 4);
	if (!p)
		return NULL;
	for (int ch = 32; ch < 127; ch++) {
		int cx = (ch - 32) % 16 * APP_GLYPH_W, cy = (ch - 32) / 16 * APP_GLYPH_H;
		for (int y = 0; y < APP_GLYPH_H; y++)
			for (int x = 0; x < APP_GLYPH_W; x++) {
				float a = ch == ' ' ? 0.0f :
					glyph_coverage(ch + (int)seed, (float)x + 0.5f, (float)y + 0.5f);
				p[(size_t)(cy + y) * (size_t)*w + (size_t)(cx + x)] = pack(a, 1, 1, 1);
			}
	}
	return p;
}

void app_draw_text(struct tk_draw *d, struct tk_image *atlas, const char *text, float x, float y,
                   float scale, struct tk_color c)
{
	float gw = APP_GLYPH_W * scale, gh = APP_GLYPH_H * scale;
	for (const char *t = text; *t; t++, x += gw) {
		int ch = (unsigned char)*t;
		if (ch < 33 || ch > 126)
			continue;
		float sx = (float)((ch - 32) % 16 * APP_GLYPH_W), sy = (float)((ch - 32) / 16 * APP_GLYPH_H);
		tk_draw_image(d, atlas, sx, sy, APP_GLYPH_W, APP_GLYPH_H, x, y, gw, gh,
		              TK_FILTER_SMOOTH, c);
	}
}

void app_proto_delta(struct tk_app *app, struct app_proto_mark *mark, char *out, size_t size)
{
	uint64_t req, ev;
	out[0] = '\0';
	if (!tk_app_protocol_counts(app, &req, &ev))
		return;
	snprintf(out, size, ",\"x_requests\":%llu,\"x_events\":%llu",
	         (unsigned long long)(req - mark->requests), (unsigned long long)(ev - mark->events));
	mark->requests = req;
	mark->events = ev;
}
