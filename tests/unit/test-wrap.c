/* render_texture_create_wrapped: a pixman texture samples the caller's
 * memory in place (what duet-compositor does with wl_shm buffers on the
 * pixman engine): what is drawn is what the memory holds at the draw,
 * nothing is uploaded, re-pointing and unwrapping keep the right pixels,
 * and the access hooks bracket exactly the draws that read the memory.
 * On the GL engine wrapping is refused (NULL), so callers copy instead. */
#include <stdint.h>

#include "unit.h"

#define W 24
#define H 16

static struct renderer *r;
static struct render_target *t;
static uint32_t fb[64 * 64];

struct hook_log {
	int begins, ends;
	void *data;   /* what begin returns */
	bool inside;  /* between begin and end */
};

static void *hook_begin(void *data)
{
	struct hook_log *log = data;
	log->begins++;
	CHECK(!log->inside, "begin nested in another begin");
	log->inside = log->data != NULL;
	return log->data;
}

static void hook_end(void *data)
{
	struct hook_log *log = data;
	log->ends++;
	CHECK(log->inside, "end without a begin that returned memory");
	log->inside = false;
}

static uint32_t value(int seed, int x, int y)
{
	uint32_t v = (uint32_t)(seed * 7919 + x * 131 + y * 8191);
	/* Opaque: drawn with or without blending, the texel lands as is. */
	return ((v * 2654435761u) ^ (v << 13)) | 0xff000000u;
}

/* A W x H image at seed in memory with stride bytes per row, padding
 * filled with garbage that must never show. */
static uint32_t *make_pixels(int seed, int stride)
{
	uint32_t *p = malloc((size_t)stride * H);
	if (!p)
		abort();
	memset(p, 0xee, (size_t)stride * H);
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			p[(size_t)y * (stride / 4) + x] = value(seed, x, y);
	return p;
}

static void draw(struct render_texture *tex)
{
	struct render_quad q = {
		.x = 0, .y = 0, .width = W, .height = H, .alpha = 1.0f, .opaque = true,
		.nearest = true,
	};
	render_begin(r, t, NULL);
	render_draw_texture(r, tex, &q);
	render_end(r);
}

/* The target's W x H corner against seed's image, or (seed 0) colour. */
static void expect_either(int seed, uint32_t colour, const char *what)
{
	pixman_box32_t box = { 0, 0, W, H };
	int bad = 0;

	memset(fb, 0, sizeof(fb));
	CHECK(render_target_read_pixels(t, &box, fb, W * 4) == 0, "%s: read back", what);
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			uint32_t want = seed ? value(seed, x, y) : colour;
			if (fb[y * W + x] != want && bad++ < 3)
				CHECK(false, "%s: pixel %d,%d is %08x, want %08x", what, x, y,
				      fb[y * W + x], want);
		}
}

static void expect(int seed, const char *what)
{
	expect_either(seed, 0, what);
}

static void expect_colour(uint32_t colour, const char *what)
{
	expect_either(0, colour, what);
}

static void clear_target(uint32_t argb)
{
	pixman_box32_t all = { 0, 0, 64, 64 };
	render_begin(r, t, NULL);
	render_fill(r, &all, argb); /* opaque: replaces */
	render_end(r);
}

static void check_gl_refuses(void)
{
	uint32_t *p = make_pixels(1, W * 4);

	unit_say("the GL engine does not wrap: callers fall back to a copy");
	CHECK(!render_texture_wrap_supported(r), "GL says it can wrap");
	CHECK(render_texture_create_wrapped(r, W, H, p, W * 4, true) == NULL,
	      "GL returned a wrapped texture");
	free(p);
}

int main(void)
{
	struct render_egl *egl;

	r = unit_renderer(&egl);
	CHECK(r != NULL, "renderer");
	if (!r)
		return unit_finish("test-wrap");
	t = unit_target(egl, 64, 64);
	CHECK(t != NULL, "target");
	if (!t)
		return unit_finish("test-wrap");
	if (egl) {
		check_gl_refuses();
		render_target_destroy(t);
		renderer_destroy(r);
		render_egl_destroy(egl);
		return unit_finish("test-wrap");
	}

	const int stride = (W + 5) * 4; /* padded rows */
	uint32_t *a = make_pixels(1, stride);
	uint64_t up0 = renderer_stats(r)->uploaded_bytes;

	unit_say("the pixman engine wraps; refuses layouts pixman cannot read");
	CHECK(render_texture_wrap_supported(r), "pixman says it cannot wrap");
	CHECK(!render_texture_create_wrapped(r, W, H, a, W * 4 - 4, true), "stride < width");
	CHECK(!render_texture_create_wrapped(r, W, H, a, W * 4 + 2, true), "stride not x4");
	CHECK(!render_texture_create_wrapped(r, W, H, (char *)a + 1, stride, true), "misaligned");
	CHECK(!render_texture_create_wrapped(r, W, H, NULL, stride, true), "NULL memory");

	unit_say("a wrapped texture draws the memory as it is at the draw, uploading nothing");
	struct render_texture *tex = render_texture_create_wrapped(r, W, H, a, stride, true);
	CHECK(tex != NULL, "create_wrapped");
	if (!tex)
		return unit_finish("test-wrap");
	CHECK(render_texture_is_wrapped(tex), "is_wrapped");
	CHECK(render_texture_width(tex) == W && render_texture_height(tex) == H, "size");
	CHECK(render_texture_has_alpha(tex), "ARGB wrapped without alpha");
	draw(tex);
	expect(1, "first draw");
	uint32_t *b = make_pixels(2, stride);
	memcpy(a, b, (size_t)stride * H); /* the client draws into its buffer */
	draw(tex);
	expect(2, "memory changed in place");
	CHECK(renderer_stats(r)->uploaded_bytes == up0, "wrapped draws uploaded %llu bytes",
	      (unsigned long long)(renderer_stats(r)->uploaded_bytes - up0));
	CHECK(render_texture_upload(tex, b, stride, NULL) == -1, "upload into a wrapped texture");

	unit_say("rewrap points it at another buffer, with another stride");
	uint32_t *c = make_pixels(3, W * 4);
	CHECK(render_texture_rewrap(tex, c, W * 4) == 0, "rewrap");
	CHECK(render_texture_rewrap(tex, c, W * 4 + 2) == -1, "rewrap to a bad stride");
	draw(tex);
	expect(3, "after rewrap");

	unit_say("the access hooks bracket each draw that reads the memory, and only those");
	struct hook_log log = { .data = c };
	render_texture_set_access(tex, hook_begin, hook_end, &log);
	draw(tex);
	expect(3, "drawn inside the hooks");
	CHECK(log.begins == 1 && log.ends == 1, "one draw: %d begins, %d ends", log.begins,
	      log.ends);
	struct render_quad off = { .x = 100, .y = 100, .width = W, .height = H, .alpha = 1.0f };
	render_begin(r, t, NULL);
	render_draw_texture(r, tex, &off);
	render_end(r);
	CHECK(log.begins == 1, "a draw outside the target read the memory");

	unit_say("begin may say the memory moved (a resized pool): the draw reads the new place");
	uint32_t *moved = make_pixels(3, W * 4);
	memset(c, 0, (size_t)W * 4 * H); /* the old place must not be read */
	log.data = moved;
	draw(tex);
	expect(3, "moved memory");
	CHECK(log.begins == 2 && log.ends == 2, "%d begins, %d ends", log.begins, log.ends);

	unit_say("begin NULL skips the draw, and end is not called");
	clear_target(0xff102030u);
	log.data = NULL;
	draw(tex);
	expect_colour(0xff102030u, "skipped");
	CHECK(log.begins == 3 && log.ends == 2, "%d begins, %d ends", log.begins, log.ends);

	unit_say("XRGB: the fourth byte is ignored, the texture drawn opaque");
	uint32_t x[W * H];
	for (int i = 0; i < W * H; i++)
		x[i] = 0x00405060u;
	struct render_texture *xt = render_texture_create_wrapped(r, W, H, x, W * 4, false);
	CHECK(xt && !render_texture_has_alpha(xt), "XRGB wrapped");
	if (xt) {
		struct render_quad q = { .x = 0, .y = 0, .width = W, .height = H, .alpha = 1.0f };
		clear_target(0xffffffffu);
		render_begin(r, t, NULL);
		render_draw_texture(r, xt, &q);
		render_end(r);
		expect_colour(0xff405060u, "XRGB drawn opaque");
		render_texture_destroy(xt);
	}

	unit_say("unwrap copies the pixels: the memory may then go");
	log.data = moved;
	render_texture_set_access(tex, NULL, NULL, NULL);
	uint64_t up1 = renderer_stats(r)->uploaded_bytes;
	CHECK(render_texture_unwrap(tex) == 0, "unwrap");
	CHECK(!render_texture_is_wrapped(tex), "still wrapped");
	CHECK(renderer_stats(r)->uploaded_bytes - up1 == (uint64_t)W * H * 4,
	      "unwrap counted %llu bytes", (unsigned long long)(renderer_stats(r)->uploaded_bytes -
	                                                         up1));
	memset(moved, 0, (size_t)W * 4 * H);
	free(moved);
	draw(tex);
	expect(3, "after unwrap, memory gone");
	CHECK(render_texture_rewrap(tex, c, W * 4) == -1, "rewrap of an owned texture");
	CHECK(render_texture_upload(tex, b, stride, NULL) == 0, "upload after unwrap");
	draw(tex);
	expect(2, "uploaded after unwrap");

	unit_say("in a scene: damage plus changed memory repaints from the memory");
	struct render_scene *s = render_scene_create(r, 64, 64, 0xff000000u);
	struct render_node *n = render_node_create(s);
	uint32_t *d = make_pixels(4, W * 4);
	struct render_texture *st = render_texture_create_wrapped(r, W, H, d, W * 4, false);
	render_node_set_texture(n, st);
	render_node_set_visible(n, true);
	render_scene_paint(s, t, NULL);
	expect(4, "scene, first paint");
	uint32_t *e = make_pixels(5, W * 4);
	memcpy(d, e, (size_t)W * 4 * H);
	CHECK(!render_scene_paint(s, t, NULL), "painted without damage");
	render_node_damage(n, NULL);
	render_scene_paint(s, t, NULL);
	expect(5, "scene, after damage");
	render_texture_destroy(st);
	render_scene_destroy(s);

	render_texture_destroy(tex);
	free(a);
	free(b);
	free(c);
	free(d);
	free(e);
	render_target_destroy(t);
	renderer_destroy(r);
	return unit_finish("test-wrap");
}
