/* Memory targets: the pixman engine's output, a pixman image in ordinary
 * memory. Nothing runs behind the caller's back, so a frame exists once
 * render_end returns: present and flush have nothing to wait for, and
 * read-back is a copy of rows. A target may also be drawn in memory the
 * caller owns (render_target_create_memory_on): duet-xwm's output segment,
 * which the X server reads its PutImages from, so its frames need no
 * read-back at all. */
#include <stdlib.h>
#include <string.h>

#include "render-private.h"

/* The same bound as GL's renderbuffers on llvmpipe. */
#define MAX_TARGET_SIZE 16384

static const struct render_target_impl memory_impl;

static struct render_target *create(int width, int height, void *data, int stride_bytes)
{
	struct render_target *t;

	if (width <= 0 || height <= 0 || width > MAX_TARGET_SIZE || height > MAX_TARGET_SIZE) {
		render_log("memory target %dx%d out of range (max %d)", width, height,
		           MAX_TARGET_SIZE);
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->impl = &memory_impl;
	t->width = width;
	t->height = height;
	t->repaint_path = "memory";
	/* a8r8g8b8 like GL's RGBA framebuffer: an opaque quad drawn without
	 * blending keeps its alpha, and read-back shows it. With data, pixman
	 * draws into the caller's memory and never frees it. */
	t->memory = pixman_image_create_bits(PIXMAN_a8r8g8b8, width, height, data, stride_bytes);
	if (!t->memory) {
		render_log("cannot allocate a %dx%d memory target", width, height);
		free(t);
		return NULL;
	}
	return t;
}

struct render_target *render_target_create_memory(int width, int height)
{
	return create(width, height, NULL, 0);
}

struct render_target *render_target_create_memory_on(void *data, int width, int height,
                                                     int stride_bytes)
{
	/* pixman's own checks are asserts; these are the caller's mistakes. */
	if (!data || ((uintptr_t)data & 3) || stride_bytes % 4 ||
	    (width > 0 && stride_bytes < width * 4)) {
		render_log("memory target on %p: stride %d for width %d (needs 4-byte alignment "
		           "and stride >= width * 4)", data, stride_bytes, width);
		return NULL;
	}
	return create(width, height, data, stride_bytes);
}

static void memory_destroy(struct render_target *t)
{
	pixman_image_unref(t->memory);
	free(t);
}

/* Drawn by the CPU before render_end returned: the pixels exist already,
 * there is nothing to wait for. */
static int memory_nothing_to_wait_for(struct render_target *t)
{
	(void)t;
	return 0;
}

static int memory_present(struct render_target *t, const pixman_region32_t *damage)
{
	(void)damage;
	return memory_nothing_to_wait_for(t);
}

static bool memory_frame_done(struct render_target *t)
{
	(void)t;
	return true;
}

static int memory_read_pixels(struct render_target *t, int x, int y, int w, int h,
                              uint32_t *first, int dst_stride_bytes)
{
	int stride = pixman_image_get_stride(t->memory);
	const char *src = (const char *)pixman_image_get_data(t->memory) + (size_t)y * stride +
	                  (size_t)x * 4;

	for (int row = 0; row < h; row++)
		memcpy((char *)first + (size_t)row * dst_stride_bytes, src + (size_t)row * stride,
		       (size_t)w * 4);
	return 0;
}

static const struct render_target_impl memory_impl = {
	.engine = "pixman",
	.present = memory_present,
	.flush = memory_nothing_to_wait_for,
	.frame_done = memory_frame_done,
	.read_pixels = memory_read_pixels,
	.destroy = memory_destroy,
};
