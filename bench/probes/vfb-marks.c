/* The strip grid of vfb-marks.h. */
#include <stdlib.h>
#include <string.h>

#include "vfb-marks.h"

int vfb_marks_init(struct vfb_marks *k, uint32_t width, uint32_t height)
{
	k->cols = (width + VFB_STRIP - 1) / VFB_STRIP;
	k->rows = height;
	k->m = calloc((size_t)k->cols * k->rows, 1);
	return k->m ? 0 : -1;
}

void vfb_marks_fini(struct vfb_marks *k)
{
	free(k->m);
	k->m = NULL;
}

void vfb_marks_clear(struct vfb_marks *k)
{
	memset(k->m, 0, (size_t)k->cols * k->rows);
}

void vfb_marks_rect(struct vfb_marks *k, int32_t x1, int32_t y1, int32_t x2, int32_t y2)
{
	int64_t w = (int64_t)k->cols * VFB_STRIP;
	if (x1 < 0) x1 = 0;
	if (y1 < 0) y1 = 0;
	if (x2 > w) x2 = (int32_t)w;
	if (y2 > (int64_t)k->rows) y2 = (int32_t)k->rows;
	if (x1 >= x2 || y1 >= y2)
		return;
	uint32_t c1 = (uint32_t)x1 / VFB_STRIP, c2 = ((uint32_t)x2 + VFB_STRIP - 1) / VFB_STRIP;
	for (int32_t y = y1; y < y2; y++)
		memset(k->m + (size_t)y * k->cols + c1, 1, c2 - c1);
}

void vfb_marks_page(struct vfb_marks *k, const struct vfb_geom *g, size_t page)
{
	if (g->layout == VFB_TILED) {
		uint32_t tx = (uint32_t)(page % g->tiles_x), ty = (uint32_t)(page / g->tiles_x);
		vfb_marks_rect(k, (int32_t)(tx * VFB_TILE), (int32_t)(ty * VFB_TILE),
		               (int32_t)((tx + 1) * VFB_TILE), (int32_t)((ty + 1) * VFB_TILE));
		return;
	}
	/* A linear page is a run of bytes: the rows it crosses, partly. */
	size_t b0 = page * VFB_PAGE, b1 = b0 + VFB_PAGE;
	for (size_t row = b0 / g->stride; row < g->height && row * g->stride < b1; row++) {
		size_t r0 = row * g->stride, r1 = r0 + (size_t)g->width * 4;
		size_t s = b0 > r0 ? b0 : r0, e = b1 < r1 ? b1 : r1;
		if (s >= e)
			continue;
		vfb_marks_rect(k, (int32_t)((s - r0) / 4), (int32_t)row,
		               (int32_t)((e - r0 + 3) / 4), (int32_t)row + 1);
	}
}

uint64_t vfb_marks_count(const struct vfb_marks *k)
{
	uint64_t n = 0;
	size_t all = (size_t)k->cols * k->rows;
	for (size_t i = 0; i < all; i++)
		n += k->m[i];
	return n;
}

uint64_t vfb_marks_both(const struct vfb_marks *a, const struct vfb_marks *b)
{
	uint64_t n = 0;
	size_t all = (size_t)a->cols * a->rows;
	for (size_t i = 0; i < all; i++)
		n += a->m[i] & b->m[i];
	return n;
}
