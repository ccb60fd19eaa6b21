/* Textures from client pixels (wl_shm, X images), uploaded only where they
 * were damaged, or (pixman engine) sampled in place: wrapped. */
#include <stdlib.h>
#include <string.h>

#include "render-private.h"

GLuint render_gl_texture_new(GLint filter)
{
	GLuint id;

	glGenTextures(1, &id);
	glBindTexture(GL_TEXTURE_2D, id);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
	/* Non-power-of-two textures in GLES2 need clamping and no mipmaps. */
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
	return id;
}

#ifndef GL_UNPACK_ROW_LENGTH_EXT
#define GL_UNPACK_ROW_LENGTH_EXT 0x0CF2
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

/* Larger than any output or window either engine is asked to show, and
 * llvmpipe's GL_MAX_TEXTURE_SIZE; GL checks its own limit too. */
#define MAX_TEXTURE_SIZE 16384

struct render_texture *render_texture_alloc(struct renderer *r, enum render_format format,
                                            int width, int height)
{
	struct render_texture *tex;

	if (width <= 0 || height <= 0 || width > MAX_TEXTURE_SIZE || height > MAX_TEXTURE_SIZE ||
	    (format != RENDER_FORMAT_ARGB8888 && format != RENDER_FORMAT_XRGB8888)) {
		render_log("texture %dx%d format %d not supported", width, height, (int)format);
		return NULL;
	}
	tex = calloc(1, sizeof(*tex));
	if (!tex)
		return NULL;
	tex->renderer = r;
	tex->format = format;
	tex->width = width;
	tex->height = height;
	return tex;
}

struct render_texture *render_texture_create(struct renderer *r,
                                             enum render_format format,
                                             int width, int height)
{
	struct render_texture *tex = render_texture_alloc(r, format, width, height);

	if (tex && !r->engine->texture_init(tex)) {
		free(tex);
		return NULL;
	}
	return tex;
}

bool render_texture_wrap_supported(const struct renderer *r)
{
	return r->engine->texture_wrap != NULL;
}

static bool wrap_layout_ok(int width, void *data, int stride_bytes)
{
	return data && ((uintptr_t)data & 3) == 0 && stride_bytes % 4 == 0 &&
	       stride_bytes / 4 >= width;
}

struct render_texture *render_texture_create_wrapped(struct renderer *r, int width, int height,
                                                     void *data, int stride_bytes,
                                                     bool has_alpha)
{
	struct render_texture *tex;

	if (!r->engine->texture_wrap || width <= 0 || height <= 0 || width > MAX_TEXTURE_SIZE ||
	    height > MAX_TEXTURE_SIZE || !wrap_layout_ok(width, data, stride_bytes))
		return NULL;
	tex = calloc(1, sizeof(*tex));
	if (!tex)
		return NULL;
	tex->renderer = r;
	tex->format = has_alpha ? RENDER_FORMAT_ARGB8888 : RENDER_FORMAT_XRGB8888;
	tex->width = width;
	tex->height = height;
	if (!r->engine->texture_wrap(tex, data, stride_bytes)) {
		free(tex);
		return NULL;
	}
	return tex;
}

bool render_texture_is_wrapped(const struct render_texture *tex)
{
	return tex->wrapped;
}

int render_texture_rewrap(struct render_texture *tex, void *data, int stride_bytes)
{
	if (!tex->wrapped || !wrap_layout_ok(tex->width, data, stride_bytes))
		return -1;
	if (data == tex->wrap_data && stride_bytes == pixman_image_get_stride(tex->pixels))
		return 0;
	return tex->renderer->engine->texture_wrap(tex, data, stride_bytes) ? 0 : -1;
}

int render_texture_unwrap(struct render_texture *tex)
{
	if (!tex->wrapped)
		return 0;
	if (!tex->renderer->engine->texture_unwrap(tex))
		return -1;
	tex->renderer->stats.uploaded_bytes += (uint64_t)tex->width * tex->height * 4;
	return 0;
}

void render_texture_set_access(struct render_texture *tex, void *(*begin)(void *data),
                               void (*end)(void *data), void *data)
{
	tex->access_begin = begin;
	tex->access_end = begin ? end : NULL;
	tex->access_data = begin ? data : NULL;
}

bool render_gl_texture_init(struct render_texture *tex)
{
	struct renderer *r = tex->renderer;
	GLint max_size = 0;
	GLenum gl_format = r->has_bgra ? GL_BGRA_EXT : GL_RGBA;

	glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size);
	if (tex->width > max_size || tex->height > max_size) {
		render_log("texture %dx%d larger than GL's %d", tex->width, tex->height,
		           (int)max_size);
		return false;
	}
	tex->filter = GL_LINEAR;
	while (glGetError() != GL_NO_ERROR)
		;
	tex->id = render_gl_texture_new(GL_LINEAR);
	/* With BGRA8888 the internal format must equal the format (GLES2 has
	 * no conversion at upload). */
	glTexImage2D(GL_TEXTURE_2D, 0, (GLint)gl_format, tex->width, tex->height, 0, gl_format,
	             GL_UNSIGNED_BYTE, NULL);
	glBindTexture(GL_TEXTURE_2D, 0);
	if (glGetError() != GL_NO_ERROR) {
		render_log("cannot allocate texture %dx%d", tex->width, tex->height);
		glDeleteTextures(1, &tex->id);
		return false;
	}
	return true;
}

/* An imported dmabuf's EGLImage (texture-dmabuf.c) goes with its texture:
 * the image is released here, where every GL texture ends, so the import
 * needs nothing back from this file but render_texture_destroy. */
static void release_image(struct render_texture *tex)
{
	PFNEGLDESTROYIMAGEKHRPROC destroy_image;

	if (!tex->image)
		return;
	destroy_image = (PFNEGLDESTROYIMAGEKHRPROC)eglGetProcAddress("eglDestroyImageKHR");
	if (destroy_image)
		destroy_image(tex->renderer->egl->display, tex->image);
	tex->image = NULL;
}

void render_gl_texture_fini(struct render_texture *tex)
{
	glDeleteTextures(1, &tex->id);
	release_image(tex);
}

void render_texture_destroy(struct render_texture *tex)
{
	struct duet_list *l;

	if (!tex)
		return;
	for (l = tex->renderer->scenes.next; l != &tex->renderer->scenes; l = l->next)
		render_scene_forget_texture(render_scene_from_link(l), tex);
	tex->renderer->engine->texture_fini(tex);
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

/* Copies w x h texels (rows stride bytes apart) into the renderer's scratch
 * as tight rows, turning 0xAARRGGBB words into R,G,B,A bytes when GL cannot
 * take BGRA. memcpy per pixel keeps this safe for strides that are not a
 * multiple of 4. */
static const void *pack_rect(struct renderer *r, const char *pixels, int stride,
                             int w, int h)
{
	uint8_t *out = render_scratch(r, (size_t)w * h * 4);

	if (!out)
		return NULL;
	for (int y = 0; y < h; y++) {
		const char *src = pixels + (size_t)y * stride;
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

/* The one upload path: w x h texels at (x, y) of the bound texture from
 * pixels (the box's top-left texel, rows stride bytes apart). GL reads the
 * caller's memory directly when it can: tight rows always, any stride that
 * is a whole number of texels with GL_EXT_unpack_subimage. Only the other
 * cases (no BGRA upload, or a padded stride without unpack_subimage) pay a
 * CPU copy into the scratch; one glTexSubImage2D of a tight copy is
 * cheaper than one call per row on drivers where each call has a fixed
 * cost (a validation and, on some, a flush). */
int render_gl_upload_box(struct render_texture *tex, const char *pixels, int stride,
                         int x, int y, int w, int h)
{
	struct renderer *r = tex->renderer;
	GLenum gl_format = r->has_bgra ? GL_BGRA_EXT : GL_RGBA;
	const void *data = pixels;
	bool row_length = false;

	if (!r->has_bgra || (stride != w * 4 &&
	                     !(r->has_unpack_subimage && stride % 4 == 0))) {
		data = pack_rect(r, pixels, stride, w, h);
		if (!data)
			return -1;
	} else if (stride != w * 4) {
		glPixelStorei(GL_UNPACK_ROW_LENGTH_EXT, stride / 4);
		row_length = true;
	}
	glTexSubImage2D(GL_TEXTURE_2D, 0, x, y, w, h, gl_format, GL_UNSIGNED_BYTE, data);
	if (row_length)
		glPixelStorei(GL_UNPACK_ROW_LENGTH_EXT, 0);
	return 0;
}

static bool upload_refused(const struct render_texture *tex)
{
	if (tex->image)
		render_log("upload into an imported dmabuf's texture refused");
	if (tex->wrapped)
		render_log("upload into a wrapped texture refused (it samples the caller's memory)");
	if (tex->foreign)
		render_log("upload into a foreign texture refused (its owner draws it)");
	return tex->image != NULL || tex->wrapped || tex->foreign != NULL;
}

void render_gl_upload_begin(struct render_texture *tex)
{
	while (glGetError() != GL_NO_ERROR)
		;
	glBindTexture(GL_TEXTURE_2D, tex->id);
	glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
}

int render_gl_upload_end(struct render_texture *tex, int ret)
{
	(void)tex;
	glBindTexture(GL_TEXTURE_2D, 0);
	if (glGetError() != GL_NO_ERROR) {
		render_log("texture upload failed");
		ret = -1;
	}
	return ret;
}

/* One box through the engine, counted in uploaded_bytes. */
static int upload_box(struct render_texture *tex, const char *pixels, int stride,
                      int x, int y, int w, int h)
{
	struct renderer *r = tex->renderer;
	int ret = r->engine->upload_box(tex, pixels, stride, x, y, w, h);

	if (ret == 0)
		r->stats.uploaded_bytes += (uint64_t)w * h * 4;
	return ret;
}

int render_texture_upload_rect(struct render_texture *tex, const void *pixels,
                               int stride_bytes, const pixman_box32_t *box)
{
	const struct render_engine *e = tex->renderer->engine;
	const char *p = pixels;
	int x1 = box->x1, y1 = box->y1, x2 = box->x2, y2 = box->y2;

	if (x2 - x1 <= 0 || y2 - y1 <= 0)
		return 0;
	if (upload_refused(tex))
		return -1;
	if (stride_bytes < (x2 - x1) * 4) {
		render_log("upload: stride %d too small for width %d", stride_bytes, x2 - x1);
		return -1;
	}
	/* Clip to the texture; pixels still points at the unclipped corner. */
	if (x1 < 0) {
		p += (size_t)-x1 * 4;
		x1 = 0;
	}
	if (y1 < 0) {
		p += (size_t)-y1 * (size_t)stride_bytes;
		y1 = 0;
	}
	if (x2 > tex->width)
		x2 = tex->width;
	if (y2 > tex->height)
		y2 = tex->height;
	if (x2 <= x1 || y2 <= y1)
		return 0;
	e->upload_begin(tex);
	return e->upload_end(tex, upload_box(tex, p, stride_bytes, x1, y1, x2 - x1, y2 - y1));
}

int render_texture_upload(struct render_texture *tex, const void *pixels,
                          int stride_bytes, const pixman_region32_t *damage)
{
	pixman_region32_t region;
	const pixman_box32_t *rects;
	pixman_box32_t extents;
	const struct render_engine *e = tex->renderer->engine;
	int n, ret = 0;

	if (upload_refused(tex))
		return -1;
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
	if (n == 0 || (n == 1 && rects[0].x2 <= rects[0].x1)) {
		pixman_region32_fini(&region);
		return 0;
	}
	e->upload_begin(tex);
	for (int i = 0; i < n && ret == 0; i++) {
		const pixman_box32_t *b = &rects[i];
		const char *corner = (const char *)pixels + (size_t)b->y1 * stride_bytes +
		                     (size_t)b->x1 * 4;
		if (b->x2 > b->x1 && b->y2 > b->y1)
			ret = upload_box(tex, corner, stride_bytes, b->x1, b->y1, b->x2 - b->x1,
			                 b->y2 - b->y1);
	}
	pixman_region32_fini(&region);
	return e->upload_end(tex, ret);
}
