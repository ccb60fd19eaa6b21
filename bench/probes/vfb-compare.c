/* compare: byte comparison of the framebuffer with the reader's previous
 * copy. Tiled: one memcmp per tile (page); a changed tile is marked whole
 * and copied. Linear: one memcmp per row; a changed row is compared again
 * per 32-pixel strip, and changed strips are marked and copied. It needs
 * nothing from the kernel and reads the whole framebuffer every frame. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfb-method.h"

struct compare {
	uint8_t *copy; /* the pixel area as last seen, same layout */
};

static int compare_open(struct vfb_method *m, const struct vfb_source *src, pid_t writer,
                        char *why, size_t len)
{
	(void)writer;
	(void)why;
	(void)len;
	struct compare *c = calloc(1, sizeof(*c));
	if (c)
		c->copy = malloc(src->geom.pixel_bytes);
	if (!c || !c->copy) {
		free(c);
		snprintf(why, len, "out of memory for a %zu-byte copy", src->geom.pixel_bytes);
		return -1;
	}
	memcpy(c->copy, vfb_source_pixels(src), src->geom.pixel_bytes);
	m->priv = c;
	return 0;
}

static uint64_t compare_tiled(struct compare *c, const struct vfb_geom *g, const uint8_t *fb,
                              struct vfb_marks *k)
{
	uint64_t bytes = g->pixel_bytes;
	size_t tiles = (size_t)g->tiles_x * g->tiles_y;
	for (size_t t = 0; t < tiles; t++) {
		size_t at = t * VFB_PAGE;
		if (memcmp(fb + at, c->copy + at, VFB_PAGE) != 0) {
			memcpy(c->copy + at, fb + at, VFB_PAGE);
			bytes += VFB_PAGE;
			vfb_marks_page(k, g, t);
		}
	}
	return bytes;
}

static uint64_t compare_linear(struct compare *c, const struct vfb_geom *g, const uint8_t *fb,
                               struct vfb_marks *k)
{
	size_t row = (size_t)g->width * 4, strip = VFB_STRIP * 4;
	uint64_t bytes = (uint64_t)row * g->height;
	for (uint32_t y = 0; y < g->height; y++) {
		size_t at = (size_t)y * g->stride;
		if (memcmp(fb + at, c->copy + at, row) == 0)
			continue;
		bytes += row;
		for (size_t x = 0; x < row; x += strip) {
			size_t n = row - x < strip ? row - x : strip;
			if (memcmp(fb + at + x, c->copy + at + x, n) != 0) {
				memcpy(c->copy + at + x, fb + at + x, n);
				bytes += n;
				k->m[(size_t)y * k->cols + x / strip] = 1;
			}
		}
	}
	return bytes;
}

static uint64_t compare_detect(struct vfb_method *m, const struct vfb_source *src,
                               struct vfb_marks *k, uint64_t seen, uint64_t now)
{
	(void)seen;
	(void)now;
	struct compare *c = m->priv;
	const uint8_t *fb = vfb_source_pixels(src);
	if (src->geom.layout == VFB_TILED)
		return compare_tiled(c, &src->geom, fb, k);
	return compare_linear(c, &src->geom, fb, k);
}

static void compare_close(struct vfb_method *m)
{
	struct compare *c = m->priv;
	if (c)
		free(c->copy);
	free(c);
	m->priv = NULL;
}

const struct vfb_method_ops vfb_compare_ops = {
	.name = "compare",
	.open = compare_open,
	.detect = compare_detect,
	.close = compare_close,
};
