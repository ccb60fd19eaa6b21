/* The software engine's drawing: the same primitives as tk-draw-gl.c done
 * by pixman straight into the shared-memory buffer (x8r8g8b8), source
 * over with premultiplied colours. */
#include <math.h>
#include <pixman.h>
#include <stdlib.h>

#include "tk-draw.h"

struct sw_draw {
	struct tk_draw base;
	pixman_image_t *dst;
};

static struct sw_draw *sw(struct tk_draw *d)
{
	return (struct sw_draw *)d;
}

/* pixman takes 16-bit channels and keeps the high byte for 8-bit
 * targets, which rounds 0.93 (237.15 of 255) up to 238. Rounding to 8 bits
 * first and widening exactly (x * 257) gives the value GL writes
 * (round(v * 255)), so both engines draw the same pixels and the bench's
 * observer finds the same colour. */
static uint16_t chan(float v)
{
	if (v <= 0.0f)
		return 0;
	if (v >= 1.0f)
		return 0xffff;
	return (uint16_t)(lrintf(v * 255.0f) * 257);
}

static pixman_color_t premul(struct tk_color c)
{
	return (pixman_color_t){ chan(c.r * c.a), chan(c.g * c.a), chan(c.b * c.a), chan(c.a) };
}

static pixman_color_t straight(struct tk_color c)
{
	return (pixman_color_t){ chan(c.r), chan(c.g), chan(c.b), chan(c.a) };
}

/* Pixel-aligned integer box of a float rect; false if empty. */
static bool box(float x, float y, float w, float h, int *bx, int *by, int *bw, int *bh)
{
	int x0 = (int)lrintf(x), y0 = (int)lrintf(y);
	int x1 = (int)lrintf(x + w), y1 = (int)lrintf(y + h);
	*bx = x0;
	*by = y0;
	*bw = x1 - x0;
	*bh = y1 - y0;
	return *bw > 0 && *bh > 0;
}

static void sw_clear(struct tk_draw *d, struct tk_color c)
{
	pixman_color_t pc = premul(c);
	pixman_box32_t all = { 0, 0, d->width, d->height };
	pixman_image_fill_boxes(PIXMAN_OP_SRC, sw(d)->dst, &pc, 1, &all);
}

static void sw_rect(struct tk_draw *d, float x, float y, float w, float h, struct tk_color c)
{
	int bx, by, bw, bh;
	if (!box(x, y, w, h, &bx, &by, &bw, &bh))
		return;
	pixman_color_t pc = premul(c);
	pixman_image_t *src = pixman_image_create_solid_fill(&pc);
	pixman_image_composite32(c.a >= 1.0f ? PIXMAN_OP_SRC : PIXMAN_OP_OVER, src, NULL,
	                         sw(d)->dst, 0, 0, 0, 0, bx, by, bw, bh);
	pixman_image_unref(src);
}

static void sw_image(struct tk_draw *d, struct tk_image *img, float sx, float sy, float sw_,
                     float sh, float x, float y, float w, float h, enum tk_filter filter,
                     struct tk_color tint)
{
	int bx, by, bw, bh;
	if (!box(x, y, w, h, &bx, &by, &bw, &bh) || sw_ <= 0 || sh <= 0)
		return;
	if (!img->pix) {
		img->pix = pixman_image_create_bits(PIXMAN_a8r8g8b8, img->width, img->height,
		                                    img->pixels, img->width * 4);
		if (!img->pix)
			return;
	}
	pixman_image_t *pix = img->pix;
	/* Destination pixel (bx + i, by + j) samples source (s * i + sx, ...):
	 * composite with a zero source origin through this transform. */
	struct pixman_f_transform ft;
	pixman_f_transform_init_scale(&ft, sw_ / (double)bw, sh / (double)bh);
	pixman_f_transform_translate(&ft, NULL, sx, sy);
	pixman_transform_t t;
	pixman_transform_from_pixman_f_transform(&t, &ft);
	pixman_image_set_transform(pix, &t);
	pixman_image_set_filter(pix, filter == TK_FILTER_SMOOTH ? PIXMAN_FILTER_BILINEAR :
	                        PIXMAN_FILTER_NEAREST, NULL, 0);
	pixman_image_set_repeat(pix, PIXMAN_REPEAT_PAD);

	bool white = tint.r >= 1.0f && tint.g >= 1.0f && tint.b >= 1.0f;
	if (white && tint.a >= 1.0f) {
		pixman_image_composite32(PIXMAN_OP_OVER, pix, NULL, sw(d)->dst, 0, 0, 0, 0, bx, by,
		                         bw, bh);
	} else if (white) {
		pixman_color_t a = { 0, 0, 0, chan(tint.a) };
		pixman_image_t *mask = pixman_image_create_solid_fill(&a);
		pixman_image_composite32(PIXMAN_OP_OVER, pix, mask, sw(d)->dst, 0, 0, 0, 0, bx, by,
		                         bw, bh);
		pixman_image_unref(mask);
	} else {
		/* A tinted image is a coverage mask (glyphs): colour through it. */
		pixman_color_t pc = premul(tint);
		pixman_image_t *src = pixman_image_create_solid_fill(&pc);
		pixman_image_composite32(PIXMAN_OP_OVER, src, pix, sw(d)->dst, 0, 0, 0, 0, bx, by,
		                         bw, bh);
		pixman_image_unref(src);
	}
}

static void sw_gradient(struct tk_draw *d, float x, float y, float w, float h, struct tk_color c0,
                        struct tk_color c1, bool vertical)
{
	int bx, by, bw, bh;
	if (!box(x, y, w, h, &bx, &by, &bw, &bh))
		return;
	pixman_point_fixed_t p0 = { pixman_int_to_fixed(bx), pixman_int_to_fixed(by) };
	pixman_point_fixed_t p1 = vertical ?
		(pixman_point_fixed_t){ pixman_int_to_fixed(bx), pixman_int_to_fixed(by + bh) } :
		(pixman_point_fixed_t){ pixman_int_to_fixed(bx + bw), pixman_int_to_fixed(by) };
	/* Stops are straight colours; pixman premultiplies as it interpolates. */
	pixman_gradient_stop_t stops[2] = {
		{ pixman_int_to_fixed(0), straight(c0) },
		{ pixman_int_to_fixed(1), straight(c1) },
	};
	pixman_image_t *src = pixman_image_create_linear_gradient(&p0, &p1, stops, 2);
	if (!src)
		return;
	pixman_image_composite32(PIXMAN_OP_OVER, src, NULL, sw(d)->dst, bx, by, 0, 0, bx, by, bw, bh);
	pixman_image_unref(src);
}

static void sw_flush(struct tk_draw *d)
{
	/* pixman draws immediately; nothing is batched. */
}

static void sw_image_release(struct tk_draw *d, struct tk_image *img)
{
	if (img->pix)
		pixman_image_unref(img->pix);
	img->pix = NULL;
}

static void sw_destroy(struct tk_draw *d)
{
	if (sw(d)->dst)
		pixman_image_unref(sw(d)->dst);
	free(d);
}

static const struct tk_draw_ops sw_ops = {
	.clear = sw_clear,
	.rect = sw_rect,
	.image = sw_image,
	.gradient = sw_gradient,
	.flush = sw_flush,
	.destroy = sw_destroy,
	.image_release = sw_image_release,
};

struct tk_draw *tk_draw_sw_create(void)
{
	struct sw_draw *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->base.ops = &sw_ops;
	return &s->base;
}

void tk_draw_sw_begin(struct tk_draw *d, void *pixels, int stride, int width, int height)
{
	struct sw_draw *s = sw(d);
	if (s->dst)
		pixman_image_unref(s->dst);
	s->dst = pixman_image_create_bits(PIXMAN_x8r8g8b8, width, height, pixels, stride);
	d->width = width;
	d->height = height;
}
