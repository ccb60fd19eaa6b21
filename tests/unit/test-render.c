/* Draws known quads into a surfaceless offscreen target and compares the
 * pixels read back with values computed here. */
#include <png.h>
#include <unistd.h>

#include "render-private.h" /* white box: the y_up flag of targets */
#include "unit.h"

#define W 64
#define H 48

static struct renderer *r;
static struct render_target *t;
static uint32_t fb[W * H];

static void read_all(void)
{
	pixman_box32_t box = { 0, 0, W, H };

	memset(fb, 0xa5, sizeof(fb));
	CHECK(render_target_read_pixels(t, &box, fb, W * 4) == 0, "read_pixels failed");
}

/* One frame that draws tex through q alone, then the read-back. */
static void draw_and_read(struct render_texture *tex, const struct render_quad *q)
{
	render_begin(r, t, NULL);
	render_draw_texture(r, tex, q);
	render_end(r);
	read_all();
}

static uint32_t px(int x, int y)
{
	return fb[y * W + x];
}

/* Fills the whole target with one colour, no clip. */
static void clear_to(uint32_t argb)
{
	pixman_box32_t all = { 0, 0, W, H };

	render_begin(r, t, NULL);
	render_fill(r, &all, argb);
	render_end(r);
}

static struct render_texture *make_texture(enum render_format f, int w, int h,
                                           const uint32_t *pixels)
{
	struct render_texture *tex = render_texture_create(r, f, w, h);

	CHECK(tex != NULL, "texture %dx%d", w, h);
	if (tex)
		CHECK(render_texture_upload(tex, pixels, w * 4, NULL) == 0, "upload");
	return tex;
}

/* A texture of at most 8x8 texels, each argb. */
static struct render_texture *solid_texture(enum render_format f, int w, int h, uint32_t argb)
{
	uint32_t pix[8 * 8];

	for (int i = 0; i < w * h; i++)
		pix[i] = argb;
	return make_texture(f, w, h, pix);
}

static struct render_quad quad_at(int x, int y, int w, int h)
{
	struct render_quad q = {
		.x = x, .y = y, .width = w, .height = h,
		.src_w = 0, .alpha = 1.0f, .opaque = false, .nearest = true,
	};
	return q;
}

static void expect_rect(int x1, int y1, int x2, int y2, uint32_t want, int tol,
                        const char *what)
{
	int bad = 0;

	for (int y = y1; y < y2; y++)
		for (int x = x1; x < x2; x++)
			if (!unit_pixel_near(px(x, y), want, tol) && bad++ < 3)
				CHECK(false, "%s: pixel %d,%d is %08x, want %08x", what, x, y,
				      px(x, y), want);
}

static void check_orientation(void)
{
	/* XRGB with a zero X byte: must still read back opaque. */
	uint32_t pix[4 * 4];
	struct render_texture *tex;
	struct render_quad q = quad_at(10, 5, 4, 4);

	unit_say("XRGB texture drawn 1:1, top row at the top of the read-back, alpha forced to 1");
	for (int i = 0; i < 16; i++)
		pix[i] = i < 4 ? 0x00ff0000 : 0x0000ff00;
	tex = make_texture(RENDER_FORMAT_XRGB8888, 4, 4, pix);
	clear_to(0xff000000);
	draw_and_read(tex, &q);
	expect_rect(10, 5, 14, 6, 0xffff0000, 0, "top row red");
	expect_rect(10, 6, 14, 9, 0xff00ff00, 0, "rows below green");
	expect_rect(0, 0, W, 5, 0xff000000, 0, "above the quad untouched");
	expect_rect(9, 5, 10, 9, 0xff000000, 0, "left of the quad untouched");
	expect_rect(14, 5, 15, 9, 0xff000000, 0, "right of the quad untouched");
	expect_rect(10, 9, 14, 10, 0xff000000, 0, "below the quad untouched");
	render_texture_destroy(tex);
}

static uint32_t blend(uint32_t src, uint32_t dst)
{
	/* Premultiplied OVER: src + dst * (1 - src.a), per channel. */
	int sa = unit_channel(src, 24);
	uint32_t out = 0;

	for (int s = 0; s < 32; s += 8) {
		int v = unit_channel(src, s) + (unit_channel(dst, s) * (255 - sa) + 127) / 255;
		out |= (uint32_t)(v > 255 ? 255 : v) << s;
	}
	return out;
}

static void check_premultiplied_blend(void)
{
	struct render_texture *tex;
	struct render_quad q = quad_at(20, 10, 8, 8);
	const uint32_t bg = 0xff0000ff, src = 0x80800000; /* half-covered red */

	unit_say("premultiplied ARGB with alpha 0.5 blends over the background (+-1)");
	tex = solid_texture(RENDER_FORMAT_ARGB8888, 8, 8, src);
	CHECK(render_texture_has_alpha(tex), "ARGB texture has alpha");
	clear_to(bg);
	draw_and_read(tex, &q);
	expect_rect(20, 10, 28, 18, blend(src, bg), 1, "blended quad");
	expect_rect(0, 0, 20, H, bg, 0, "background left");

	unit_say("quad.opaque draws ARGB without blending");
	q.opaque = true;
	draw_and_read(tex, &q);
	expect_rect(20, 10, 28, 18, src, 0, "replaced, not blended");
	render_texture_destroy(tex);
}

static void check_node_alpha(void)
{
	struct render_texture *tex;
	struct render_quad q = quad_at(30, 20, 4, 4);
	const uint32_t bg = 0xff0000ff;

	unit_say("XRGB quad with alpha 0.5 gives half of each (+-1)");
	tex = solid_texture(RENDER_FORMAT_XRGB8888, 4, 4, 0xff00ff00);
	CHECK(!render_texture_has_alpha(tex), "XRGB texture has no alpha");
	clear_to(bg);
	q.alpha = 0.5f;
	draw_and_read(tex, &q);
	expect_rect(30, 20, 34, 24, 0xff007f80, 1, "half green over blue");
	render_texture_destroy(tex);
}

static uint32_t texel(int x, int y)
{
	return 0xff000000u | (uint32_t)(x * 60 + 15) << 16 | (uint32_t)(y * 60 + 15) << 8 | 0x33;
}

/* A texture of at most 4x4 texels, texel(x, y) each: every one differs,
 * so a check can tell which one shows where. */
static struct render_texture *texel_texture(enum render_format f, int w, int h)
{
	uint32_t pix[4 * 4];

	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			pix[y * w + x] = texel(x, y);
	return make_texture(f, w, h, pix);
}

static void check_crop_and_scale(void)
{
	struct render_texture *tex;
	struct render_quad q;

	tex = texel_texture(RENDER_FORMAT_ARGB8888, 4, 4);
	clear_to(0xff000000);

	unit_say("source crop (1,2 2x2) picks exactly those texels");
	q = quad_at(40, 2, 2, 2);
	q.src_x = 1;
	q.src_y = 2;
	q.src_w = 2;
	q.src_h = 2;
	q.opaque = true;
	render_begin(r, t, NULL);
	render_draw_texture(r, tex, &q);

	unit_say("4x4 texture scaled to 16x12 with nearest: each texel a 4x3 block");
	q = quad_at(2, 30, 16, 12);
	q.opaque = true;
	render_draw_texture(r, tex, &q);
	render_end(r);
	read_all();
	for (int y = 0; y < 2; y++)
		for (int x = 0; x < 2; x++)
			CHECK(px(40 + x, 2 + y) == texel(1 + x, 2 + y), "crop %d,%d: %08x want %08x",
			      x, y, px(40 + x, 2 + y), texel(1 + x, 2 + y));
	expect_rect(42, 2, 44, 4, 0xff000000, 0, "nothing right of the crop");
	for (int y = 0; y < 12; y++)
		for (int x = 0; x < 16; x++)
			CHECK(px(2 + x, 30 + y) == texel(x / 4, y / 3), "scaled %d,%d: %08x want %08x",
			      x, y, px(2 + x, 30 + y), texel(x / 4, y / 3));
	render_texture_destroy(tex);
}

static void check_clip(void)
{
	pixman_region32_t clip;
	pixman_box32_t all = { 0, 0, W, H };
	uint64_t quads;

	unit_say("fill clipped to a two-rectangle region touches only those, one quad each");
	clear_to(0xff000000);
	pixman_region32_init_rect(&clip, 50, 30, 4, 4);
	pixman_region32_union_rect(&clip, &clip, 58, 40, 3, 3);
	quads = renderer_stats(r)->quads;
	render_begin(r, t, &clip);
	render_fill(r, &all, 0xffff0000);
	render_end(r);
	CHECK(renderer_stats(r)->quads - quads == 2, "quads drawn %llu, want 2",
	      (unsigned long long)(renderer_stats(r)->quads - quads));
	read_all();
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			bool in = pixman_region32_contains_point(&clip, x, y, NULL);
			uint32_t want = in ? 0xffff0000 : 0xff000000;
			CHECK(px(x, y) == want, "clip %d,%d: %08x want %08x", x, y, px(x, y), want);
		}
	pixman_region32_fini(&clip);
}

static void check_read_box_clipping(void)
{
	uint32_t small[4 * 4];
	pixman_box32_t box = { -2, -2, 2, 2 };

	unit_say("read_pixels of a box half outside fills only the inside part");
	clear_to(0xff112233);
	for (int i = 0; i < 16; i++)
		small[i] = 0xdeadbeef;
	CHECK(render_target_read_pixels(t, &box, small, 16) == 0, "read");
	for (int y = 0; y < 4; y++)
		for (int x = 0; x < 4; x++) {
			uint32_t want = x >= 2 && y >= 2 ? 0xff112233 : 0xdeadbeef;
			CHECK(small[y * 4 + x] == want, "%d,%d: %08x want %08x", x, y,
			      small[y * 4 + x], want);
		}
}

static void check_screenshot(void)
{
	char path[] = "/tmp/duet-test-render-XXXXXX";
	int fd = mkstemp(path);
	png_image img;
	uint32_t *png_px;
	struct render_texture *tex;
	struct render_quad q = quad_at(5, 5, 4, 4);

	unit_say("render_target_write_png writes what read_pixels returns (alpha opaque)");
	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return;
	close(fd);
	tex = solid_texture(RENDER_FORMAT_ARGB8888, 4, 4, 0x80402010);
	q.opaque = true; /* replace: the target then holds alpha 0x80 there */
	clear_to(0xff000000);
	render_begin(r, t, NULL);
	render_draw_texture(r, tex, &q);
	render_end(r);
	render_texture_destroy(tex);
	read_all();
	CHECK(px(5, 5) == 0x80402010, "translucent pixel in the target: %08x", px(5, 5));
	CHECK(render_target_write_png(t, path) == 0, "write_png");
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	CHECK(png_image_begin_read_from_file(&img, path), "png read: %s", img.message);
	CHECK(img.width == W && img.height == H, "png size %ux%u", img.width, img.height);
	img.format = PNG_FORMAT_BGRA; /* = ARGB8888 words on little endian */
	png_px = calloc(W * H, 4);
	if (img.width == W && img.height == H &&
	    png_image_finish_read(&img, NULL, png_px, W * 4, NULL)) {
		for (int i = 0; i < W * H; i++) {
			uint32_t want = fb[i] | 0xff000000u;
			if (png_px[i] != want) {
				CHECK(false, "png pixel %d: %08x want %08x", i, png_px[i], want);
				break;
			}
		}
	}
	png_image_free(&img);
	free(png_px);
	unlink(path);
}

/* A flushed frame is fenced, not waited for: frame_done turns true (at
 * once on llvmpipe, whose flush rasterises before it returns) and the
 * pixels are then there. */
static void check_flush_fence(void)
{
	unit_say("render_target_flush fences the frame; frame_done says when it exists");
	clear_to(0xff336699);
	CHECK(render_target_flush(t) == 0, "flush");
	int polls = 0;
	while (!render_target_frame_done(t) && polls < 10000000)
		polls++;
	CHECK(render_target_frame_done(t), "frame never done after %d polls", polls);
	read_all();
	CHECK(px(0, 0) == 0xff336699 && px(W - 1, H - 1) == 0xff336699,
	      "flushed frame reads %08x", px(0, 0));
	/* A second flush replaces the first fence (no leak under ASan). */
	clear_to(0xff000000);
	render_target_flush(t);
	render_target_flush(t);
}

/* Node alpha 1 draws with the copy shaders (no multiply per fragment),
 * other alphas with the multiplying ones; switching between them within one
 * frame must leave each draw its own alpha. */
static void check_copy_shaders(void)
{
	struct render_texture *xrgb, *argb;
	struct render_quad q;
	const uint32_t bg = 0xff0000ff;
	uint64_t quads, copies;

	unit_say("alpha 1 draws take the copy shaders, alpha 0.5 the multiplying ones, in one frame");
	/* X byte 0: must still come out opaque. */
	xrgb = solid_texture(RENDER_FORMAT_XRGB8888, 4, 4, 0x0000ff00);
	argb = solid_texture(RENDER_FORMAT_ARGB8888, 4, 4, 0x80800000);
	clear_to(bg);
	quads = renderer_stats(r)->quads;
	copies = renderer_stats(r)->copy_quads;
	render_begin(r, t, NULL);
	q = quad_at(40, 2, 4, 4);
	q.alpha = 0.5f;
	render_draw_texture(r, xrgb, &q);
	q = quad_at(46, 2, 4, 4);
	render_draw_texture(r, xrgb, &q);
	q = quad_at(52, 2, 4, 4);
	q.alpha = 0.5f;
	render_draw_texture(r, xrgb, &q);
	q = quad_at(40, 8, 4, 4);
	render_draw_texture(r, argb, &q);
	q = quad_at(46, 8, 4, 4);
	q.alpha = 0.5f;
	render_draw_texture(r, argb, &q);
	render_end(r);
	read_all();
	CHECK(renderer_stats(r)->quads - quads == 5, "5 quads drawn");
	CHECK(renderer_stats(r)->copy_quads - copies == 2,
	      "the 2 at alpha 1 through the copy shaders (got %llu)",
	      (unsigned long long)(renderer_stats(r)->copy_quads - copies));
	expect_rect(40, 2, 44, 6, 0xff007f80, 1, "XRGB at 0.5: half green over blue");
	expect_rect(46, 2, 50, 6, 0xff00ff00, 0, "XRGB at 1 after 0.5: green, opaque");
	expect_rect(52, 2, 56, 6, 0xff007f80, 1, "XRGB at 0.5 after 1: half again");
	expect_rect(40, 8, 44, 12, blend(0x80800000, bg), 1, "ARGB at 1: blended as is");
	expect_rect(46, 8, 50, 12, blend(0x40400000, bg), 1, "ARGB at 0.5: scaled, then blended");
	render_texture_destroy(argb);
	render_texture_destroy(xrgb);
}

/* Each wl_output_transform of a 2x3 texture drawn 1:1 (nearest) shows
 * the texel the transform puts there: exact on both engines. */
static void check_transforms(void)
{
	struct render_texture *tex = texel_texture(RENDER_FORMAT_XRGB8888, 2, 3);

	for (int tr = 0; tr < 8; tr++) {
		/* 90 and 270 degrees show the texture 3 wide, 2 high. */
		int w = tr & 1 ? 3 : 2, h = tr & 1 ? 2 : 3;
		struct render_quad q = quad_at(10, 10, w, h);

		unit_say("transform %d: each shown pixel is the texel it undoes to", tr);
		q.transform = tr;
		clear_to(0xff000000);
		draw_and_read(tex, &q);
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				/* Quad-normalised s,t of the pixel centre, through
				 * gles2.c's mapping, to a texel. */
				float s = (x + 0.5f) / w, tt = (y + 0.5f) / h, u = s, v = tt;
				switch (tr) {
				case 1: u = tt; v = 1 - s; break;
				case 2: u = 1 - s; v = 1 - tt; break;
				case 3: u = 1 - tt; v = s; break;
				case 4: u = 1 - s; break;
				case 5: u = tt; v = s; break;
				case 6: v = 1 - tt; break;
				case 7: u = 1 - tt; v = 1 - s; break;
				}
				uint32_t want = texel((int)(u * 2), (int)(v * 3));
				CHECK(px(10 + x, 10 + y) == want, "transform %d at %d,%d: %08x want %08x",
				      tr, x, y, px(10 + x, 10 + y), want);
			}
		expect_rect(10 + w, 10, 10 + w + 1, 10 + h, 0xff000000, 0, "right of it untouched");
	}
	render_texture_destroy(tex);
}

/* Linear filtering (GL) and bilinear (pixman) of a 2x upscale: each output
 * pixel is the weighted mean of the texels around it, which this computes
 * here; the engines round differently, so only here a tolerance of 2. */
static void check_linear_scale(void)
{
	struct render_texture *tex;
	struct render_quad q = quad_at(4, 4, 8, 8);

	unit_say("4x4 texture scaled to 8x8 with linear filtering: texel means (+-2), edges clamped");
	tex = texel_texture(RENDER_FORMAT_XRGB8888, 4, 4);
	q.nearest = false;
	clear_to(0xff000000);
	draw_and_read(tex, &q);
	for (int y = 0; y < 8; y++)
		for (int x = 0; x < 8; x++) {
			/* Texel-space sample point, clamped to the edge texels'
			 * centres (CLAMP_TO_EDGE / PIXMAN_REPEAT_PAD). */
			float u = (x + 0.5f) / 2 - 0.5f, v = (y + 0.5f) / 2 - 0.5f;
			u = u < 0 ? 0 : u > 3 ? 3 : u;
			v = v < 0 ? 0 : v > 3 ? 3 : v;
			int x0 = (int)u, y0 = (int)v;
			int x1 = x0 < 3 ? x0 + 1 : 3, y1 = y0 < 3 ? y0 + 1 : 3;
			float fx = u - x0, fy = v - y0;
			uint32_t want = 0xff000000u;
			for (int sh = 0; sh < 24; sh += 8) {
				float c = (1 - fx) * (1 - fy) * unit_channel(texel(x0, y0), sh) +
				          fx * (1 - fy) * unit_channel(texel(x1, y0), sh) +
				          (1 - fx) * fy * unit_channel(texel(x0, y1), sh) +
				          fx * fy * unit_channel(texel(x1, y1), sh);
				want |= (uint32_t)(c + 0.5f) << sh;
			}
			CHECK(unit_pixel_near(px(4 + x, 4 + y), want, 2), "linear %d,%d: %08x want %08x",
			      x, y, px(4 + x, 4 + y), want);
		}
	render_texture_destroy(tex);
}

/* A target of the other engine is refused at render_begin, and draws until
 * render_end then do nothing (no crash, no pixels). */
static void check_engine_mismatch(struct render_egl *egl)
{
	struct renderer *other;
	struct render_target *mine = t;
	pixman_box32_t all = { 0, 0, W, H };
	const char *why = NULL;

	unit_say("%s renderer refuses the other engine's target; dmabuf import %s",
	         egl ? "a pixman" : "the pixman", egl ? "unaffected" : "unsupported with a reason");
	if (!egl) {
		CHECK(!render_dmabuf_import_supported(r, &why) && why != NULL,
		      "pixman: no dmabuf import, and why");
		return;
	}
	other = renderer_create_pixman();
	CHECK(other != NULL, "pixman renderer beside GL");
	clear_to(0xff000000);
	render_begin(other, mine, NULL);
	render_fill(other, &all, 0xffffffff);
	render_end(other);
	read_all();
	CHECK(px(0, 0) == 0xff000000, "GL target drawn by pixman: %08x", px(0, 0));
	CHECK(renderer_stats(other)->quads == 0, "no quads counted");
	renderer_destroy(other);
}

/* pixman: a target in the caller's memory (duet-xwm's output segment) is
 * drawn right there, row by row at the caller's stride, leaves the padding
 * alone, reads back like any target, and is not freed with the target. */
static void check_memory_on(struct render_egl *egl)
{
	enum { MW = 5, MH = 3, STRIDE = 8 }; /* pixels: 3 of padding per row */
	static uint32_t mem[MH * STRIDE];
	pixman_box32_t box = { 1, 1, 4, 3 };
	uint32_t back[3 * 2];

	if (egl)
		return;
	unit_say("a memory target over the caller's memory draws into it at its stride");
	CHECK(render_target_create_memory_on((char *)mem + 2, MW, MH, STRIDE * 4) == NULL,
	      "unaligned memory refused");
	CHECK(render_target_create_memory_on(mem, MW, MH, MW * 4 - 4) == NULL,
	      "stride below the width refused");
	CHECK(render_target_create_memory_on(mem, MW, MH, MW * 4 + 2) == NULL,
	      "stride not a multiple of 4 refused");
	CHECK(render_target_create_memory_on(NULL, MW, MH, STRIDE * 4) == NULL, "NULL refused");
	for (size_t i = 0; i < MH * STRIDE; i++)
		mem[i] = 0x12345678u;
	struct render_target *m = render_target_create_memory_on(mem, MW, MH, STRIDE * 4);
	CHECK(m != NULL, "memory target on the caller's memory");
	if (!m)
		return;
	render_begin(r, m, NULL);
	render_fill(r, &(pixman_box32_t){ 0, 0, MW, MH }, 0xff000000u);
	render_fill(r, &box, 0xff00ff00u);
	render_end(r);
	for (int y = 0; y < MH; y++)
		for (int x = 0; x < STRIDE; x++) {
			uint32_t want = x >= MW ? 0x12345678u :
			                x >= 1 && x < 4 && y >= 1 ? 0xff00ff00u : 0xff000000u;
			CHECK(mem[y * STRIDE + x] == want, "memory at %d,%d: %08x, want %08x", x, y,
			      mem[y * STRIDE + x], want);
		}
	CHECK(render_target_read_pixels(m, &box, back, 3 * 4) == 0 && back[0] == 0xff00ff00u &&
	      back[5] == 0xff00ff00u, "read back from the caller's memory");
	render_target_destroy(m);
	CHECK(mem[0] == 0xff000000u, "the caller's memory outlives the target");
}

int main(void)
{
	struct render_egl *egl;

	r = unit_renderer(&egl);
	CHECK(r != NULL, "renderer_create");
	t = r ? unit_target(egl, W, H) : NULL;
	CHECK(t != NULL, "offscreen target");
	if (!r || !t)
		return 1;
	CHECK(render_target_width(t) == W && render_target_height(t) == H, "target size");
	CHECK(unit_target(egl, 0, 10) == NULL, "0-wide target refused");
	CHECK(render_texture_create(r, RENDER_FORMAT_ARGB8888, -1, 4) == NULL,
	      "negative texture refused");
	check_engine_mismatch(egl);
	check_memory_on(egl);

	/* GL only: a second pass where the target stores rows bottom-up as a
	 * window surface does; drawing and read-back must give the same. A
	 * memory target has one layout. */
	for (int pass = 0; pass < (egl ? 2 : 1); pass++) {
		t->y_up = pass == 1;
		unit_say("--- target rows stored %s", t->y_up ? "bottom-up (window-like)" :
		         "top-down (offscreen)");
		check_orientation();
		check_premultiplied_blend();
		check_node_alpha();
		check_copy_shaders();
		check_crop_and_scale();
		check_transforms();
		check_linear_scale();
		check_clip();
		check_read_box_clipping();
		check_screenshot();
	}
	check_flush_fence();

	render_target_destroy(t);
	renderer_destroy(r);
	render_egl_destroy(egl);
	return unit_finish("test-render");
}
