/* Where a detection method found changes, on one grid for every method
 * and layout: strips of 32 x 1 pixels (128 bytes), the finest unit any
 * method reports (a linear page starts on a 32-pixel boundary when the
 * width is a multiple of 32; a tile is 32 strips). Precision and recall
 * are measured in strips. */
#ifndef DUET_VFB_MARKS_H
#define DUET_VFB_MARKS_H

#include <stdint.h>

#include "vfb-layout.h"

#define VFB_STRIP 32u

struct vfb_marks {
	uint32_t cols, rows; /* strips across, pixel rows */
	uint8_t *m;          /* cols * rows, 1 = changed */
};

int vfb_marks_init(struct vfb_marks *k, uint32_t width, uint32_t height);
void vfb_marks_fini(struct vfb_marks *k);
void vfb_marks_clear(struct vfb_marks *k);
/* Marks every strip a pixel rectangle touches (clipped). */
void vfb_marks_rect(struct vfb_marks *k, int32_t x1, int32_t y1, int32_t x2, int32_t y2);
/* Marks the strips holding page `page` of the pixel area of geometry g. */
void vfb_marks_page(struct vfb_marks *k, const struct vfb_geom *g, size_t page);
uint64_t vfb_marks_count(const struct vfb_marks *k);
/* Strips marked in both. */
uint64_t vfb_marks_both(const struct vfb_marks *a, const struct vfb_marks *b);

#endif
