/* The render_target_* calls every kind of target answers (offscreen
 * framebuffers: target-gl.c; window surfaces: target-window.c; memory:
 * pixman-target.c), dispatched through the kind's function table, and the
 * PNG screenshots made from any of them by reading it back. */
#include <stdlib.h>

#include "render-private.h"

void render_target_destroy(struct render_target *t)
{
	if (t)
		t->impl->destroy(t);
}

int render_target_width(const struct render_target *t)
{
	return t->width;
}

int render_target_height(const struct render_target *t)
{
	return t->height;
}

const char *render_target_repaint_path(const struct render_target *t)
{
	return t->repaint_path;
}

int render_target_present(struct render_target *t, const pixman_region32_t *damage)
{
	return t->impl->present(t, damage);
}

int render_target_flush(struct render_target *t)
{
	return t->impl->flush(t);
}

bool render_target_frame_done(struct render_target *t)
{
	return t->impl->frame_done(t);
}

int render_target_read_pixels(struct render_target *t, const pixman_box32_t *box,
                              uint32_t *dst, int dst_stride_bytes)
{
	int x1 = box->x1 < 0 ? 0 : box->x1;
	int y1 = box->y1 < 0 ? 0 : box->y1;
	int x2 = box->x2 > t->width ? t->width : box->x2;
	int y2 = box->y2 > t->height ? t->height : box->y2;
	int w = x2 - x1, h = y2 - y1;

	if (w <= 0 || h <= 0)
		return 0; /* nothing of the box is on the target */
	uint32_t *first = (uint32_t *)(void *)((char *)dst +
	                                       (size_t)(y1 - box->y1) * dst_stride_bytes) +
	                  (x1 - box->x1);
	return t->impl->read_pixels(t, x1, y1, w, h, first, dst_stride_bytes);
}

/* The whole target, read back as ARGB8888 rows of width * 4 bytes
 * (malloc'ed), or NULL. */
static uint32_t *read_whole(struct render_target *t)
{
	pixman_box32_t box = { 0, 0, t->width, t->height };
	uint32_t *pixels = malloc((size_t)t->width * t->height * 4);

	if (pixels && render_target_read_pixels(t, &box, pixels, t->width * 4) != 0) {
		free(pixels);
		return NULL;
	}
	return pixels;
}

int render_target_write_png_fd(struct render_target *t, int fd)
{
	uint32_t *pixels = read_whole(t);
	int ret = pixels ? render_png_write_fd(fd, pixels, t->width, t->height, t->width * 4) : -1;

	free(pixels);
	return ret;
}

int render_target_encode_png(struct render_target *t, uint8_t **data, size_t *len)
{
	uint32_t *pixels = read_whole(t);
	int ret = pixels ? render_png_encode(pixels, t->width, t->height, t->width * 4, data, len)
	                 : -1;

	free(pixels);
	return ret;
}

int render_target_write_png(struct render_target *t, const char *path)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int ret = render_target_encode_png(t, &data, &len);

	if (ret == 0)
		ret = render_write_file_atomic(path, data, len);
	free(data);
	return ret;
}
