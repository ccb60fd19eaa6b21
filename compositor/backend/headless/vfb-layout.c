/* Geometry and writing of the --vfb file's two layouts (vfb-layout.h). */
#include <string.h>

#include "vfb-layout.h"

int vfb_layout_parse(const char *name, enum vfb_layout *out)
{
	if (strcmp(name, "linear") == 0)
		*out = VFB_LINEAR;
	else if (strcmp(name, "tiled") == 0)
		*out = VFB_TILED;
	else
		return -1;
	return 0;
}

const char *vfb_layout_name(enum vfb_layout layout)
{
	return layout == VFB_TILED ? "tiled" : "linear";
}

static size_t round_page(size_t n)
{
	return (n + VFB_PAGE - 1) / VFB_PAGE * VFB_PAGE;
}

void vfb_geometry(struct vfb_geom *g, enum vfb_layout layout, uint32_t width, uint32_t height)
{
	memset(g, 0, sizeof(*g));
	g->layout = layout;
	g->width = width;
	g->height = height;
	if (layout == VFB_TILED) {
		g->tiles_x = (width + VFB_TILE - 1) / VFB_TILE;
		g->tiles_y = (height + VFB_TILE - 1) / VFB_TILE;
		g->stride = g->tiles_x * VFB_PAGE;
		g->pixel_bytes = (size_t)g->tiles_x * g->tiles_y * VFB_PAGE;
	} else {
		g->stride = width * 4;
		g->pixel_bytes = round_page((size_t)g->stride * height);
	}
	g->file_size = VFB_PAGE + g->pixel_bytes;
}

void vfb_write_block(const struct vfb_geom *g, uint8_t *base, uint32_t x, uint32_t y,
                     uint32_t w, uint32_t h, const uint8_t *src)
{
	size_t src_row = (size_t)w * 4;
	for (uint32_t r = 0; r < h; r++) {
		const uint8_t *s = src + r * src_row;
		if (g->layout == VFB_LINEAR) {
			memcpy(base + vfb_pixel_offset(g, x, y + r), s, src_row);
			continue;
		}
		/* A row of the block crosses tiles: one copy per tile it touches. */
		for (uint32_t cx = x; cx < x + w;) {
			uint32_t run = VFB_TILE - cx % VFB_TILE;
			if (run > x + w - cx)
				run = x + w - cx;
			memcpy(base + vfb_pixel_offset(g, cx, y + r), s + (size_t)(cx - x) * 4,
			       (size_t)run * 4);
			cx += run;
		}
	}
}

void vfb_publish_damage(struct vfb_header *hdr, uint64_t frame, const struct vfb_rect *rects,
                        int n)
{
	struct vfb_damage *d = &hdr->damage[frame % VFB_DAMAGE_SLOTS];
	/* A reader copying the slot meanwhile sees its frame change and drops it. */
	__atomic_store_n(&d->frame, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (n <= VFB_DAMAGE_RECTS) {
		if (n > 0)
			memcpy(d->rects, rects, (size_t)n * sizeof(*rects));
		d->n = (uint32_t)n;
		d->flags = 0;
	} else {
		struct vfb_rect e = rects[0];
		for (int i = 1; i < n; i++) {
			if (rects[i].x1 < e.x1) e.x1 = rects[i].x1;
			if (rects[i].y1 < e.y1) e.y1 = rects[i].y1;
			if (rects[i].x2 > e.x2) e.x2 = rects[i].x2;
			if (rects[i].y2 > e.y2) e.y2 = rects[i].y2;
		}
		d->rects[0] = e;
		d->n = 1;
		d->flags = VFB_DAMAGE_EXTENTS;
	}
	__atomic_store_n(&d->frame, frame, __ATOMIC_RELEASE);
}
