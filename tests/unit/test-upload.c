/* render_texture_upload_rect: a rectangle given with its own stride lands
 * exactly where it should, nothing else changes, and the byte counter says
 * what was sent. Run by meson with GL_EXT_unpack_subimage (rows read in
 * place), without it (copy of padded rows), and without BGRA (swizzle), so
 * every branch of the one upload path is compared with the same pixels. */
#include "unit.h"

#define TW 40
#define TH 30

static struct renderer *r;
static struct render_target *t;
static uint32_t tex_px[TW * TH]; /* what the texture should hold */
static uint32_t fb[TW * TH];

/* Distinct in every channel, alpha included, so a swizzle or an offset
 * error shows. Premultiplication does not matter: drawn opaque, the
 * texels are written to the target unchanged. */
static uint32_t value(int seed, int x, int y)
{
	uint32_t v = (uint32_t)(seed * 7919 + x * 131 + y * 8191);
	return ((v * 2654435761u) ^ (v << 13)) | 0x01010101u;
}

static uint64_t uploaded(void)
{
	return renderer_stats(r)->uploaded_bytes;
}

/* Draws the texture 1:1 without blending and compares every texel with
 * tex_px. */
static void expect_texture(struct render_texture *tex, const char *what)
{
	struct render_quad q = {
		.x = 0, .y = 0, .width = TW, .height = TH,
		.alpha = 1.0f, .opaque = true, .nearest = true,
	};
	pixman_box32_t all = { 0, 0, TW, TH };
	int bad = 0;

	render_begin(r, t, NULL);
	render_draw_texture(r, tex, &q);
	render_end(r);
	memset(fb, 0x5a, sizeof(fb));
	CHECK(render_target_read_pixels(t, &all, fb, TW * 4) == 0, "%s: read back", what);
	for (int y = 0; y < TH; y++)
		for (int x = 0; x < TW; x++)
			if (fb[y * TW + x] != tex_px[y * TW + x] && bad++ < 3)
				CHECK(false, "%s: texel %d,%d is %08x, want %08x", what, x, y,
				      fb[y * TW + x], tex_px[y * TW + x]);
}

/* Uploads box from a buffer holding only the box with stride bytes per row
 * (padding filled with garbage that must not show) and records the
 * expected texture. */
static void upload_padded(struct render_texture *tex, int seed, pixman_box32_t box,
                          int stride, const char *what)
{
	int w = box.x2 - box.x1, h = box.y2 - box.y1;
	unsigned char *buf = malloc((size_t)stride * h);
	uint64_t before = uploaded();

	CHECK(buf != NULL, "memory");
	if (!buf)
		return;
	memset(buf, 0xee, (size_t)stride * h);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			uint32_t v = value(seed, x, y);
			memcpy(buf + (size_t)y * stride + (size_t)x * 4, &v, 4);
			tex_px[(box.y1 + y) * TW + box.x1 + x] = v;
		}
	CHECK(render_texture_upload_rect(tex, buf, stride, &box) == 0, "%s: upload", what);
	CHECK(uploaded() - before == (uint64_t)w * h * 4, "%s: uploaded %llu bytes, want %d",
	      what, (unsigned long long)(uploaded() - before), w * h * 4);
	free(buf);
	expect_texture(tex, what);
}

int main(void)
{
	struct render_egl *egl;
	struct render_texture *tex;

	r = unit_renderer(&egl);
	t = unit_target(egl, TW, TH);
	CHECK(r && t, "renderer and target");
	if (!r || !t)
		return unit_finish("test-upload");
	tex = render_texture_create(r, RENDER_FORMAT_ARGB8888, TW, TH);
	CHECK(tex != NULL, "texture");
	if (!tex)
		return unit_finish("test-upload");

	unit_say("a whole-texture upload sets every texel (baseline)");
	for (int y = 0; y < TH; y++)
		for (int x = 0; x < TW; x++)
			tex_px[y * TW + x] = value(1, x, y);
	CHECK(render_texture_upload(tex, tex_px, TW * 4, NULL) == 0, "upload");
	expect_texture(tex, "baseline");

	unit_say("a rectangle with tight rows lands at its box, the rest is unchanged");
	upload_padded(tex, 2, (pixman_box32_t){ 3, 4, 15, 11 }, 12 * 4, "tight");

	unit_say("a rectangle with a padded stride (a whole number of texels)");
	upload_padded(tex, 3, (pixman_box32_t){ 20, 2, 33, 19 }, 13 * 4 + 28, "padded");

	unit_say("a rectangle with a stride that is not a multiple of 4 bytes");
	upload_padded(tex, 4, (pixman_box32_t){ 1, 15, 8, 29 }, 7 * 4 + 3, "odd stride");

	unit_say("a one-texel rectangle (a cursor-sized update) at the far corner");
	upload_padded(tex, 5, (pixman_box32_t){ TW - 1, TH - 1, TW, TH }, 64, "one texel");

	unit_say("a full-width band with padding");
	upload_padded(tex, 6, (pixman_box32_t){ 0, 20, TW, 23 }, TW * 4 + 4, "band");

	unit_say("a box partly outside the texture is clipped, pixels still at its corner");
	{
		pixman_box32_t box = { -2, TH - 3, 4, TH + 5 }; /* 6x8, 3x... inside: 4x3 */
		int stride = 6 * 4 + 8;
		unsigned char buf[(6 * 4 + 8) * 8];
		uint64_t before = uploaded();

		memset(buf, 0xee, sizeof(buf));
		for (int y = 0; y < 8; y++)
			for (int x = 0; x < 6; x++) {
				uint32_t v = value(7, x, y);
				memcpy(buf + y * stride + x * 4, &v, 4);
				if (box.x1 + x >= 0 && box.y1 + y < TH)
					tex_px[(box.y1 + y) * TW + box.x1 + x] = v;
			}
		CHECK(render_texture_upload_rect(tex, buf, stride, &box) == 0, "upload");
		CHECK(uploaded() - before == 4 * 3 * 4, "clipped: uploaded %llu bytes, want 48",
		      (unsigned long long)(uploaded() - before));
		expect_texture(tex, "clipped");
	}

	unit_say("a stride below the box width is refused and changes nothing");
	{
		uint32_t junk[8] = { 0 };
		pixman_box32_t box = { 0, 0, 4, 2 };
		uint64_t before = uploaded();

		CHECK(render_texture_upload_rect(tex, junk, 3 * 4, &box) == -1, "short stride");
		CHECK(uploaded() == before, "no bytes counted");
		expect_texture(tex, "refused");
	}

	unit_say("an empty or fully outside box uploads nothing");
	{
		uint32_t junk[4] = { 0 };
		pixman_box32_t empty = { 5, 5, 5, 9 }, outside = { TW, 0, TW + 2, 2 };
		uint64_t before = uploaded();

		CHECK(render_texture_upload_rect(tex, junk, 8, &empty) == 0, "empty");
		CHECK(render_texture_upload_rect(tex, junk, 8, &outside) == 0, "outside");
		CHECK(uploaded() == before, "no bytes counted");
		expect_texture(tex, "empty");
	}

	unit_say("render_texture_upload of a two-rectangle region goes through the same path");
	{
		pixman_region32_t reg;
		uint64_t before = uploaded();

		for (int y = 0; y < TH; y++)
			for (int x = 0; x < TW; x++) {
				bool in = (x >= 2 && x < 10 && y >= 1 && y < 4) ||
				          (x >= 30 && x < 39 && y >= 25 && y < 27);
				if (in)
					tex_px[y * TW + x] = value(8, x, y);
			}
		pixman_region32_init_rect(&reg, 2, 1, 8, 3);
		pixman_region32_union_rect(&reg, &reg, 30, 25, 9, 2);
		CHECK(render_texture_upload(tex, tex_px, TW * 4, &reg) == 0, "upload");
		CHECK(uploaded() - before == (8 * 3 + 9 * 2) * 4,
		      "region: uploaded %llu bytes, want %d",
		      (unsigned long long)(uploaded() - before), (8 * 3 + 9 * 2) * 4);
		pixman_region32_fini(&reg);
		expect_texture(tex, "region");
	}

	render_texture_destroy(tex);
	render_target_destroy(t);
	renderer_destroy(r);
	render_egl_destroy(egl);
	return unit_finish("test-upload");
}
