/* The virtual framebuffer file of duet-compositor --vfb (version 2), shared
 * by its writer (backend-headless.c), its readers (bench/probes/vfb-reader.c) and
 * the unit test. Layout of the file:
 *
 *   page 0, the header (struct vfb_header; the rest of the page is zero):
 *     0  "DUETVFB2"
 *     8  uint32 width, 12 height, 16 stride, 20 format (0 = XRGB8888
 *        little-endian: bytes B,G,R,X)
 *    24  uint64 frame counter, stored (release) after the frame's pixels
 *        and its damage record are written
 *    32  uint64 CLOCK_MONOTONIC ns when that frame was complete
 *    40  uint32 layout (0 linear, 1 tiled), 44 uint32 pixel offset (4096)
 *    48  uint32 tile width, 52 tile height (32, 32; 0 when linear)
 *    56  uint32 tiles across, 60 tiles down (0 when linear)
 *    64  VFB_DAMAGE_SLOTS damage records, frame N in slot N % slots: the
 *        compositor's own damage of that frame (struct vfb_damage)
 *   page 1 on, the pixels:
 *     linear  rows of stride = width * 4 bytes, top row first
 *     tiled   32 x 32 pixel tiles of one 4 KiB page each, in row-major
 *             tile order; a tile's rows are 128 bytes, top first; edge
 *             tiles are padded to the whole page; stride is the bytes of
 *             one row of tiles (tiles across * 4096)
 *
 * The first 40 bytes are those of version 1 (DUETVFB1, pixels at 64), so a
 * reader of the frame counter finds it in the same place. All fields are
 * native-endian: the file is shared on one machine. */
#ifndef DUET_VFB_LAYOUT_H
#define DUET_VFB_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define VFB_MAGIC "DUETVFB2"
#define VFB_PAGE 4096u
#define VFB_TILE 32u /* pixels: 32 x 32 x 4 bytes = one page */
#define VFB_FORMAT_XRGB8888 0u
#define VFB_DAMAGE_SLOTS 8
#define VFB_DAMAGE_RECTS 30

enum vfb_layout { VFB_LINEAR = 0, VFB_TILED = 1 };

/* flags of a damage record */
#define VFB_DAMAGE_EXTENTS 1u /* more boxes than fit: rects[0] is their extents */

struct vfb_rect {
	int32_t x1, y1, x2, y2;
};

struct vfb_damage {
	uint64_t frame; /* the frame this record is for; rewritten last */
	uint32_t n, flags;
	struct vfb_rect rects[VFB_DAMAGE_RECTS];
};

struct vfb_header {
	char magic[8];
	uint32_t width, height, stride, format;
	uint64_t frame;
	uint64_t ns;
	uint32_t layout, pixel_offset;
	uint32_t tile_width, tile_height;
	uint32_t tiles_x, tiles_y;
	struct vfb_damage damage[VFB_DAMAGE_SLOTS];
};
_Static_assert(sizeof(struct vfb_header) <= VFB_PAGE, "the vfb header fits its page");
_Static_assert(offsetof(struct vfb_header, frame) == 24, "frame counter where DUETVFB1 has it");

/* What the geometry of a layout is; filled by vfb_geometry. */
struct vfb_geom {
	enum vfb_layout layout;
	uint32_t width, height;
	uint32_t stride;        /* linear: bytes per row; tiled: bytes per row of tiles */
	uint32_t tiles_x, tiles_y;
	size_t pixel_bytes;     /* the pixel area, a whole number of pages */
	size_t file_size;       /* header page + pixel area */
};

int vfb_layout_parse(const char *name, enum vfb_layout *out);
const char *vfb_layout_name(enum vfb_layout layout);
void vfb_geometry(struct vfb_geom *g, enum vfb_layout layout, uint32_t width, uint32_t height);

/* Byte offset of pixel (x, y) from the start of the pixel area. */
static inline size_t vfb_pixel_offset(const struct vfb_geom *g, uint32_t x, uint32_t y)
{
	if (g->layout == VFB_LINEAR)
		return (size_t)y * g->stride + (size_t)x * 4;
	size_t tile = (size_t)(y / VFB_TILE) * g->tiles_x + x / VFB_TILE;
	return tile * VFB_PAGE + ((y % VFB_TILE) * VFB_TILE + x % VFB_TILE) * 4;
}

/* The page of the pixel area (0-based) that holds pixel (x, y). */
static inline size_t vfb_pixel_page(const struct vfb_geom *g, uint32_t x, uint32_t y)
{
	return vfb_pixel_offset(g, x, y) / VFB_PAGE;
}

/* Copies a w x h block of tight rows (src, w * 4 bytes each) to (x, y) in
 * the pixel area at base. */
void vfb_write_block(const struct vfb_geom *g, uint8_t *base, uint32_t x, uint32_t y,
                     uint32_t w, uint32_t h, const uint8_t *src);

/* Stores the damage record of frame in its slot: n boxes, or their extents
 * when more than VFB_DAMAGE_RECTS; the frame number goes last (release). */
void vfb_publish_damage(struct vfb_header *hdr, uint64_t frame, const struct vfb_rect *rects,
                        int n);

#endif
