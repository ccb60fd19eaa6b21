/* Textures from client pixels (wl_shm, X images), uploaded only where they
 * were damaged. */
#include <stdlib.h>
#include <string.h>

#include "render-private.h"

#ifndef GL_UNPACK_ROW_LENGTH_EXT
#define GL_UNPACK_ROW_LENGTH_EXT 0x0CF2
#define GL_UNPACK_SKIP_ROWS_EXT 0x0CF3
#define GL_UNPACK_SKIP_PIXELS_EXT 0x0CF4
#endif
#ifndef GL_BGRA_EXT
#define GL_BGRA_EXT 0x80E1
#endif

/* Past this many rectangles one upload of their bounding box is cheaper
 * than many small GL calls. */
#define MAX_UPLOAD_RECTS 16

void *render_scratch(struct renderer *r, size_t size)
{
	if (size > r->scratch_size) {
		void *p = realloc(r->scratch, size);
		if (!p)
			return NULL;
		r->scratch = p;
		r->scratch_size = size;
	}
	return r->scratch;
}

struct render_texture *render_texture_create(struct renderer *r,
                                             enum render_format format,
                                             int width, int height)
{
	struct render_texture *tex;
	GLint max_size = 0;
	GLenum gl_format = r->has_bgra ? GL_BGRA_EXT : GL_RGBA;

	glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size);
	if (width <= 0 || height <= 0 || width > max_size || height > max_size ||
	    (format != RENDER_FORMAT_ARGB8888 && format != RENDER_FORMAT_XRGB8888)) {
		render_log("texture %dx%d format %d not supported (max %d)", width, height,
		           (int)format, (int)max_size);
		return NULL;
	}
	tex = calloc(1, sizeof(*tex));
	if (!tex)
		return NULL;
	tex->renderer = r;
	tex->format = format;
	tex->width = width;
	tex->height = height;
	tex->filter = GL_LINEAR;

	while (glGetError() != GL_NO_ERROR)
		;
	glGenTextures(1, &tex->id);
	glBindTexture(GL_TEXTURE_2D, tex->id);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
	/* Non-power-of-two textures in GLES2 need clamping and no mipmaps. */
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
	/* With BGRA8888 the internal format must equal the format (GLES2 has
	 * no conversion at upload). */
	glTexImage2D(GL_TEXTURE_2D, 0, (GLint)gl_format, width, height, 0, gl_format,
	             GL_UNSIGNED_BYTE, NULL);
	glBindTexture(GL_TEXTURE_2D, 0);
	if (glGetError() != GL_NO_ERROR) {
		render_log("cannot allocate texture %dx%d", width, height);
		glDeleteTextures(1, &tex->id);
		free(tex);
		return NULL;
	}
	return tex;
}

void render_texture_destroy(struct render_texture *tex)
{
	struct render_link *l;

	if (!tex)
		return;
	for (l = tex->renderer->scenes.next; l != &tex->renderer->scenes; l = l->next)
		render_scene_forget_texture(render_scene_from_link(l), tex);
	glDeleteTextures(1, &tex->id);
	free(tex);
}

int render_texture_width(const struct render_texture *tex)
{
	return tex->width;
}

int render_texture_height(const struct render_texture *tex)
{
	return tex->height;
}

bool render_texture_has_alpha(const struct render_texture *tex)
{
	return tex->format == RENDER_FORMAT_ARGB8888;
}

/* Copies a rectangle into a tight buffer, turning 0xAARRGGBB words into
 * R,G,B,A bytes when GL cannot take BGRA. memcpy per pixel keeps this safe
 * for strides that are not a multiple of 4. */
static const void *pack_rect(struct renderer *r, const char *pixels, int stride,
                             const pixman_box32_t *b)
{
	int w = b->x2 - b->x1, h = b->y2 - b->y1;
	uint8_t *out = render_scratch(r, (size_t)w * h * 4);

	if (!out)
		return NULL;
	for (int y = 0; y < h; y++) {
		const char *src = pixels + (size_t)(b->y1 + y) * stride + (size_t)b->x1 * 4;
		uint8_t *dst = out + (size_t)y * w * 4;
		if (r->has_bgra) {
			memcpy(dst, src, (size_t)w * 4);
			continue;
		}
		for (int x = 0; x < w; x++, src += 4, dst += 4) {
			uint32_t p;
			memcpy(&p, src, 4);
			dst[0] = (uint8_t)(p >> 16);
			dst[1] = (uint8_t)(p >> 8);
			dst[2] = (uint8_t)p;
			dst[3] = (uint8_t)(p >> 24);
		}
	}
	return out;
}

int render_texture_upload(struct render_texture *tex, const void *pixels,
                          int stride_bytes, const pixman_region32_t *damage)
{
	struct renderer *r = tex->renderer;
	GLenum gl_format = r->has_bgra ? GL_BGRA_EXT : GL_RGBA;
	bool subimage = r->has_bgra && r->has_unpack_subimage && stride_bytes % 4 == 0;
	pixman_region32_t region;
	const pixman_box32_t *rects;
	pixman_box32_t extents;
	int n, ret = 0;

	if (stride_bytes < tex->width * 4) {
		render_log("upload: stride %d too small for width %d", stride_bytes, tex->width);
		return -1;
	}
	pixman_region32_init_rect(&region, 0, 0, (unsigned)tex->width, (unsigned)tex->height);
	if (damage)
		pixman_region32_intersect(&region, &region, damage);
	rects = pixman_region32_rectangles(&region, &n);
	if (n > MAX_UPLOAD_RECTS) {
		extents = *pixman_region32_extents(&region);
		rects = &extents;
		n = 1;
	}

	while (glGetError() != GL_NO_ERROR)
		;
	glBindTexture(GL_TEXTURE_2D, tex->id);
	glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
	if (subimage)
		glPixelStorei(GL_UNPACK_ROW_LENGTH_EXT, stride_bytes / 4);
	for (int i = 0; i < n; i++) {
		const pixman_box32_t *b = &rects[i];
		int w = b->x2 - b->x1, h = b->y2 - b->y1;
		const void *data;

		if (w <= 0 || h <= 0)
			continue;
		if (subimage) {
			/* GL reads straight from the client's memory. */
			glPixelStorei(GL_UNPACK_SKIP_PIXELS_EXT, b->x1);
			glPixelStorei(GL_UNPACK_SKIP_ROWS_EXT, b->y1);
			data = pixels;
		} else if (r->has_bgra && w == tex->width && stride_bytes == w * 4) {
			/* Whole rows of a tightly packed image: no copy needed. */
			data = (const char *)pixels + (size_t)b->y1 * stride_bytes;
		} else {
			data = pack_rect(r, pixels, stride_bytes, b);
			if (!data) {
				ret = -1;
				break;
			}
		}
		glTexSubImage2D(GL_TEXTURE_2D, 0, b->x1, b->y1, w, h, gl_format,
		                GL_UNSIGNED_BYTE, data);
		r->stats.uploaded_bytes += (uint64_t)w * h * 4;
	}
	if (subimage) {
		glPixelStorei(GL_UNPACK_ROW_LENGTH_EXT, 0);
		glPixelStorei(GL_UNPACK_SKIP_PIXELS_EXT, 0);
		glPixelStorei(GL_UNPACK_SKIP_ROWS_EXT, 0);
	}
	glBindTexture(GL_TEXTURE_2D, 0);
	pixman_region32_fini(&region);
	if (glGetError() != GL_NO_ERROR) {
		render_log("texture upload failed");
		ret = -1;
	}
	return ret;
}
