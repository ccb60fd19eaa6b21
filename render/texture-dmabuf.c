/* Textures that are another process's buffer: a dmabuf imported as an
 * EGLImage (EGL_EXT_image_dma_buf_import) and bound to a GL texture
 * (GL_OES_EGL_image). The GPU samples the buffer where it is: nothing is
 * copied, and render_texture_upload* on such a texture is refused (it
 * would write into the other process's buffer). The exporter keeps
 * drawing into it; the caller makes sure that drawing is finished before
 * a frame samples it (duet-xwm: an X Sync fence and a round trip). */
#include <stdlib.h>

#include "render-private.h"

#ifndef EGL_LINUX_DMA_BUF_EXT
#define EGL_LINUX_DMA_BUF_EXT 0x3270
#define EGL_LINUX_DRM_FOURCC_EXT 0x3271
#define EGL_DMA_BUF_PLANE0_FD_EXT 0x3272
#define EGL_DMA_BUF_PLANE0_OFFSET_EXT 0x3273
#define EGL_DMA_BUF_PLANE0_PITCH_EXT 0x3274
#endif
#ifndef EGL_DMA_BUF_PLANE0_MODIFIER_LO_EXT
#define EGL_DMA_BUF_PLANE0_MODIFIER_LO_EXT 0x3443
#define EGL_DMA_BUF_PLANE0_MODIFIER_HI_EXT 0x3444
#endif

/* DRM fourccs, as in drm_fourcc.h (render/ needs no libdrm for these). */
#define FOURCC(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | \
                            (uint32_t)(d) << 24)
#define DRM_FORMAT_XRGB8888 FOURCC('X', 'R', '2', '4')
#define DRM_FORMAT_ARGB8888 FOURCC('A', 'R', '2', '4')
#define DRM_FORMAT_MOD_INVALID 0x00ffffffffffffffULL

#ifndef EGL_EXT_image_dma_buf_import_modifiers
typedef EGLBoolean (*PFNEGLQUERYDMABUFFORMATSEXTPROC)(EGLDisplay dpy, EGLint max_formats,
                                                       EGLint *formats, EGLint *num_formats);
typedef EGLBoolean (*PFNEGLQUERYDMABUFMODIFIERSEXTPROC)(EGLDisplay dpy, EGLint format,
                                                         EGLint max_modifiers,
                                                         EGLuint64KHR *modifiers,
                                                         EGLBoolean *external_only,
                                                         EGLint *num_modifiers);
#endif

bool render_dmabuf_import_supported(struct renderer *r, const char **why)
{
	const char *missing = NULL;

	if (!r->egl)
		missing = "EGL (the pixman engine draws from memory; it cannot sample a dmabuf)";
	else if (!render_usable_extension(r->egl, "EGL_EXT_image_dma_buf_import"))
		missing = "EGL_EXT_image_dma_buf_import";
	else if (!render_usable_extension(r->egl, "GL_OES_EGL_image"))
		missing = "GL_OES_EGL_image";
	else if (!eglGetProcAddress("eglCreateImageKHR") ||
	         !eglGetProcAddress("glEGLImageTargetTexture2DOES"))
		missing = "eglCreateImageKHR";
	if (why)
		*why = missing;
	return !missing;
}

int render_dmabuf_query_modifiers(struct renderer *r, enum render_format format,
                                  uint64_t *modifiers, int max)
{
	if (!render_dmabuf_import_supported(r, NULL))
		return -1;
	/* Without the modifiers extension EGL takes the formats it always
	 * could, in the driver's implicit layout. */
	if (!render_usable_extension(r->egl, "EGL_EXT_image_dma_buf_import_modifiers"))
		return 0;
	PFNEGLQUERYDMABUFFORMATSEXTPROC query_formats = (PFNEGLQUERYDMABUFFORMATSEXTPROC)
		eglGetProcAddress("eglQueryDmaBufFormatsEXT");
	PFNEGLQUERYDMABUFMODIFIERSEXTPROC query_modifiers = (PFNEGLQUERYDMABUFMODIFIERSEXTPROC)
		eglGetProcAddress("eglQueryDmaBufModifiersEXT");
	if (!query_formats || !query_modifiers)
		return 0;
	EGLint fourcc = (EGLint)(format == RENDER_FORMAT_ARGB8888 ? DRM_FORMAT_ARGB8888
	                                                          : DRM_FORMAT_XRGB8888);
	EGLint n = 0;
	if (!query_formats(r->egl->display, 0, NULL, &n) || n <= 0)
		return -1;
	EGLint *formats = calloc((size_t)n, sizeof(*formats));
	if (!formats || !query_formats(r->egl->display, n, formats, &n)) {
		free(formats);
		return -1;
	}
	bool found = false;
	for (EGLint i = 0; i < n; i++)
		found = found || formats[i] == fourcc;
	free(formats);
	if (!found)
		return -1;

	EGLint m = 0;
	if (!query_modifiers(r->egl->display, fourcc, 0, NULL, NULL, &m) || m <= 0)
		return 0;
	EGLuint64KHR *mods = calloc((size_t)m, sizeof(*mods));
	EGLBoolean *external = calloc((size_t)m, sizeof(*external));
	int count = 0;
	if (mods && external && query_modifiers(r->egl->display, fourcc, m, mods, external, &m)) {
		/* External-only layouts need GL_TEXTURE_EXTERNAL_OES, which
		 * the renderer's shaders do not sample. */
		for (EGLint i = 0; i < m; i++) {
			if (external[i] || mods[i] == DRM_FORMAT_MOD_INVALID)
				continue;
			if (count < max)
				modifiers[count] = mods[i];
			count++;
		}
	}
	free(mods);
	free(external);
	return count < max ? count : max;
}

struct render_texture *render_texture_import_dmabuf(struct renderer *r,
                                                    const struct render_dmabuf *buf)
{
	PFNEGLCREATEIMAGEKHRPROC create_image;
	PFNEGLDESTROYIMAGEKHRPROC destroy_image;
	PFNGLEGLIMAGETARGETTEXTURE2DOESPROC target_texture;
	EGLint attribs[20];
	int n = 0;
	const char *why = NULL;

	if (!render_dmabuf_import_supported(r, &why)) {
		render_log("dmabuf import: unsupported, no %s", why);
		return NULL;
	}
	if (buf->width <= 0 || buf->height <= 0 || buf->fd < 0 ||
	    (buf->format != RENDER_FORMAT_ARGB8888 && buf->format != RENDER_FORMAT_XRGB8888)) {
		render_log("dmabuf import: bad buffer %dx%d fd %d", buf->width, buf->height, buf->fd);
		return NULL;
	}
	create_image = (PFNEGLCREATEIMAGEKHRPROC)eglGetProcAddress("eglCreateImageKHR");
	destroy_image = (PFNEGLDESTROYIMAGEKHRPROC)eglGetProcAddress("eglDestroyImageKHR");
	target_texture = (PFNGLEGLIMAGETARGETTEXTURE2DOESPROC)
		eglGetProcAddress("glEGLImageTargetTexture2DOES");

	attribs[n++] = EGL_WIDTH;
	attribs[n++] = buf->width;
	attribs[n++] = EGL_HEIGHT;
	attribs[n++] = buf->height;
	attribs[n++] = EGL_LINUX_DRM_FOURCC_EXT;
	attribs[n++] = (EGLint)(buf->format == RENDER_FORMAT_ARGB8888 ? DRM_FORMAT_ARGB8888
	                                                              : DRM_FORMAT_XRGB8888);
	attribs[n++] = EGL_DMA_BUF_PLANE0_FD_EXT;
	attribs[n++] = buf->fd;
	attribs[n++] = EGL_DMA_BUF_PLANE0_OFFSET_EXT;
	attribs[n++] = (EGLint)buf->offset;
	attribs[n++] = EGL_DMA_BUF_PLANE0_PITCH_EXT;
	attribs[n++] = (EGLint)buf->stride;
	/* An invalid modifier means "the driver's implicit layout": then the
	 * attribute must be left out. */
	if (buf->modifier != DRM_FORMAT_MOD_INVALID) {
		attribs[n++] = EGL_DMA_BUF_PLANE0_MODIFIER_LO_EXT;
		attribs[n++] = (EGLint)(buf->modifier & 0xffffffffu);
		attribs[n++] = EGL_DMA_BUF_PLANE0_MODIFIER_HI_EXT;
		attribs[n++] = (EGLint)(buf->modifier >> 32);
	}
	attribs[n++] = EGL_NONE;

	EGLImageKHR image = create_image(r->egl->display, EGL_NO_CONTEXT, EGL_LINUX_DMA_BUF_EXT,
	                                 NULL, attribs);
	if (image == EGL_NO_IMAGE_KHR) {
		render_log("dmabuf import of %dx%d (stride %u, modifier 0x%llx): eglCreateImageKHR "
		           "failed (0x%x)", buf->width, buf->height, buf->stride,
		           (unsigned long long)buf->modifier, (unsigned)eglGetError());
		return NULL;
	}
	struct render_texture *tex = calloc(1, sizeof(*tex));
	if (!tex) {
		destroy_image(r->egl->display, image);
		return NULL;
	}
	tex->renderer = r;
	tex->format = buf->format;
	tex->width = buf->width;
	tex->height = buf->height;
	tex->filter = GL_LINEAR;
	tex->image = image;
	while (glGetError() != GL_NO_ERROR)
		;
	tex->id = render_gl_texture_new(GL_LINEAR);
	target_texture(GL_TEXTURE_2D, (GLeglImageOES)image);
	glBindTexture(GL_TEXTURE_2D, 0);
	if (glGetError() != GL_NO_ERROR) {
		render_log("dmabuf import: glEGLImageTargetTexture2DOES failed");
		render_texture_destroy(tex);
		return NULL;
	}
	return tex;
}

bool render_texture_is_imported(const struct render_texture *tex)
{
	/* A foreign texture (foreign.c) is its owner's buffer too. */
	return tex->image != NULL || tex->foreign != NULL;
}
