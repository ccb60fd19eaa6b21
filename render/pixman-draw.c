/* The pixman engine: the same quads as gles2.c, drawn on the CPU into a
 * memory target (pixman-target.c). On a machine without a GPU, GLES2 runs
 * on llvmpipe, whose 800x600 window composite costs ~27x the CPU of
 * pixman's (bench/probes/composite-cost.c); the X peer (xcompmgr through XRender
 * in Xvfb) and weston --use-pixman draw this way, so duet's servers can
 * too, through the one render.h API. Textures are pixman images owning a
 * copy of the client's pixels (the client's buffer is released after the
 * upload, as with GL), or wrapping the caller's memory, read in place at
 * each draw (render_texture_create_wrapped: no copy at all, the client's
 * buffer is held while it is shown, as weston --use-pixman does). */
#include <stdlib.h>
#include <string.h>

#include "render-private.h"

struct renderer *renderer_create_pixman(void)
{
	struct renderer *r = render_renderer_alloc(&render_pixman_engine, NULL);

	if (r)
		render_log("renderer: pixman %s", pixman_version_string());
	return r;
}

static void px_destroy(struct renderer *r)
{
	(void)r;
}

static void px_begin(struct renderer *r, struct render_target *t)
{
	(void)r;
	(void)t;
}

static void px_end(struct renderer *r)
{
	(void)r;
}

static pixman_color_t color_of(uint32_t argb)
{
	pixman_color_t c = {
		.red = (uint16_t)(((argb >> 16) & 0xff) * 0x101),
		.green = (uint16_t)(((argb >> 8) & 0xff) * 0x101),
		.blue = (uint16_t)((argb & 0xff) * 0x101),
		.alpha = (uint16_t)((argb >> 24) * 0x101),
	};
	return c;
}

static void px_fill(struct renderer *r, const pixman_box32_t *box, uint32_t argb, bool blend)
{
	pixman_region32_t region;
	pixman_color_t color = color_of(argb);
	int n;
	const pixman_box32_t *rects = render_clip_box(r, box, &region, &n);

	if (n > 0)
		pixman_image_fill_boxes(blend ? PIXMAN_OP_OVER : PIXMAN_OP_SRC, r->target->memory,
		                        &color, n, rects);
	pixman_region32_fini(&region);
}

/* Sets on src the transform from output coordinates to its texels that the
 * GL quad's texture coordinates give, or none when it is a whole-texel
 * translation: then *dx, *dy is the offset of the source from the output
 * and pixman takes its untransformed fast paths. */
static void set_source_transform(pixman_image_t *src, const struct render_texture *tex,
                                 const struct render_draw *d, int *dx, int *dy)
{
	pixman_transform_t t;

	if (!render_draw_source_transform(d, tex->width, tex->height, &t, dx, dy)) {
		pixman_image_set_transform(src, NULL);
		pixman_image_set_filter(src, PIXMAN_FILTER_NEAREST, NULL, 0);
		pixman_image_set_repeat(src, PIXMAN_REPEAT_NONE);
		return;
	}
	pixman_image_set_transform(src, &t);
	pixman_image_set_filter(src, d->nearest ? PIXMAN_FILTER_NEAREST : PIXMAN_FILTER_BILINEAR,
	                        NULL, 0);
	/* GL's CLAMP_TO_EDGE: the edge texels are repeated, not black. */
	pixman_image_set_repeat(src, PIXMAN_REPEAT_PAD);
}

static bool px_texture_wrap(struct render_texture *tex, void *data, int stride);
static int px_upload_box(struct render_texture *tex, const char *pixels, int stride,
                         int x, int y, int w, int h);

static void px_draw_texture(struct renderer *r, struct render_texture *tex,
                            const struct render_draw *d)
{
	pixman_region32_t region;
	pixman_image_t *mask = NULL;
	int n, dx, dy;
	const pixman_box32_t *rects = render_clip_box(r, &d->dst, &region, &n);

	if (n == 0) {
		pixman_region32_fini(&region);
		return;
	}
	if (d->alpha >= 1.0f) {
		r->stats.copy_quads += (uint64_t)n;
	} else {
		pixman_color_t c = { 0, 0, 0, (uint16_t)(d->alpha * 0xffff + 0.5f) };
		mask = pixman_image_create_solid_fill(&c);
	}
	/* The caller's memory is read from here to the end of the
	 * composites, and only then (a truncated wl_shm pool is safe to read
	 * only inside wl_shm_buffer_begin/end_access). */
	if (tex->access_begin) {
		void *data = tex->access_begin(tex->access_data);
		if (!data || (data != tex->wrap_data &&
		              !px_texture_wrap(tex, data, pixman_image_get_stride(tex->pixels)))) {
			if (data && tex->access_end)
				tex->access_end(tex->access_data);
			if (mask)
				pixman_image_unref(mask);
			pixman_region32_fini(&region);
			return;
		}
	}
	set_source_transform(tex->pixels, tex, d, &dx, &dy);
	/* SRC where gles2.c draws without blending; x8r8g8b8 reads as opaque. */
	pixman_op_t op = d->opaque ? PIXMAN_OP_SRC : PIXMAN_OP_OVER;
	for (int i = 0; i < n; i++) {
		const pixman_box32_t *b = &rects[i];
		pixman_image_composite32(op, tex->pixels, mask, r->target->memory, b->x1 + dx,
		                         b->y1 + dy, 0, 0, b->x1, b->y1, b->x2 - b->x1,
		                         b->y2 - b->y1);
	}
	if (tex->access_begin && tex->access_end)
		tex->access_end(tex->access_data);
	if (mask)
		pixman_image_unref(mask);
	pixman_region32_fini(&region);
}

static bool px_texture_init(struct render_texture *tex)
{
	pixman_format_code_t format = tex->format == RENDER_FORMAT_XRGB8888 ? PIXMAN_x8r8g8b8
	                                                                     : PIXMAN_a8r8g8b8;

	/* Zeroed, as GL leaves an unwritten texture undefined but llvmpipe's
	 * reads as 0. */
	tex->pixels = pixman_image_create_bits(format, tex->width, tex->height, NULL, 0);
	if (!tex->pixels)
		render_log("cannot allocate a %dx%d pixman texture", tex->width, tex->height);
	return tex->pixels != NULL;
}

static void px_texture_fini(struct render_texture *tex)
{
	pixman_image_unref(tex->pixels);
}

/* A new image header over data; the old one (if any) goes. pixman has no
 * call to re-point an image's bits, and a header is a small malloc. */
static bool px_texture_wrap(struct render_texture *tex, void *data, int stride)
{
	pixman_format_code_t format = tex->format == RENDER_FORMAT_XRGB8888 ? PIXMAN_x8r8g8b8
	                                                                     : PIXMAN_a8r8g8b8;
	pixman_image_t *image = pixman_image_create_bits(format, tex->width, tex->height, data,
	                                                 stride);

	if (!image) {
		render_log("cannot wrap a %dx%d pixman texture", tex->width, tex->height);
		return false;
	}
	if (tex->pixels)
		pixman_image_unref(tex->pixels);
	tex->pixels = image;
	tex->wrapped = true;
	tex->wrap_data = data;
	return true;
}

static bool px_texture_unwrap(struct render_texture *tex)
{
	pixman_image_t *wrapped = tex->pixels;

	tex->pixels = NULL;
	if (!px_texture_init(tex)) {
		tex->pixels = wrapped;
		return false;
	}
	px_upload_box(tex, (const char *)tex->wrap_data, pixman_image_get_stride(wrapped), 0, 0,
	              tex->width, tex->height);
	pixman_image_unref(wrapped);
	tex->wrapped = false;
	tex->wrap_data = NULL;
	return true;
}

static void px_upload_begin(struct render_texture *tex)
{
	(void)tex;
}

static int px_upload_box(struct render_texture *tex, const char *pixels, int stride,
                         int x, int y, int w, int h)
{
	int dst_stride = pixman_image_get_stride(tex->pixels);
	char *dst = (char *)pixman_image_get_data(tex->pixels) + (size_t)y * dst_stride +
	            (size_t)x * 4;

	for (int row = 0; row < h; row++)
		memcpy(dst + (size_t)row * dst_stride, pixels + (size_t)row * stride, (size_t)w * 4);
	return 0;
}

static int px_upload_end(struct render_texture *tex, int ret)
{
	(void)tex;
	return ret;
}

const struct render_engine render_pixman_engine = {
	.name = "pixman",
	.destroy = px_destroy,
	.begin = px_begin,
	.end = px_end,
	.fill = px_fill,
	.draw_texture = px_draw_texture,
	.texture_init = px_texture_init,
	.texture_wrap = px_texture_wrap,
	.texture_unwrap = px_texture_unwrap,
	.texture_fini = px_texture_fini,
	.upload_begin = px_upload_begin,
	.upload_box = px_upload_box,
	.upload_end = px_upload_end,
};
