/* The GL kinds of target: offscreen framebuffers (headless outputs, tests,
 * duet-xwm's shm-put output), and what window surfaces (target-window.c)
 * share with them: binding, fenced flushes, read-back. */
#include <stdlib.h>

#include "render-private.h"

#ifndef GL_RGBA8_OES
#define GL_RGBA8_OES 0x8058
#endif
#ifndef GL_BGRA_EXT
#define GL_BGRA_EXT 0x80E1
#endif

static const struct render_target_impl offscreen_impl;

static bool attach_color_texture(struct render_target *t)
{
	t->texture = render_gl_texture_new(GL_NEAREST);
	glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, t->width, t->height, 0, GL_RGBA,
	             GL_UNSIGNED_BYTE, NULL);
	glBindTexture(GL_TEXTURE_2D, 0);
	glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D,
	                       t->texture, 0);
	return glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
}

/* GLES2 does not promise that an RGBA/UNSIGNED_BYTE texture is renderable;
 * GL_OES_rgb8_rgba8 renderbuffers are the portable 8-bit fallback. */
static bool attach_color_renderbuffer(struct render_target *t, GLuint *rb)
{
	glGenRenderbuffers(1, rb);
	glBindRenderbuffer(GL_RENDERBUFFER, *rb);
	glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8_OES, t->width, t->height);
	glBindRenderbuffer(GL_RENDERBUFFER, 0);
	glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, *rb);
	return glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
}

struct render_target *render_target_create_offscreen(struct render_egl *egl,
                                                     int width, int height)
{
	struct render_target *t;
	GLint max_size = 0;
	GLuint rb = 0;

	glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &max_size);
	if (width <= 0 || height <= 0 || width > max_size || height > max_size) {
		render_log("offscreen target %dx%d out of range (max %d)", width, height,
		           (int)max_size);
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->impl = &offscreen_impl;
	t->egl = egl;
	t->width = width;
	t->height = height;
	t->repaint_path = "fbo";
	t->surface = EGL_NO_SURFACE;
	t->y_up = false;
	t->fence = EGL_NO_SYNC_KHR;

	glGenFramebuffers(1, &t->fbo);
	glBindFramebuffer(GL_FRAMEBUFFER, t->fbo);
	if (!attach_color_texture(t)) {
		glDeleteTextures(1, &t->texture);
		t->texture = 0;
		if (!render_extension_in_list((const char *)glGetString(GL_EXTENSIONS),
		                              "GL_OES_rgb8_rgba8") ||
		    !attach_color_renderbuffer(t, &rb)) {
			render_log("no 8-bit RGBA framebuffer of %dx%d", width, height);
			if (rb)
				glDeleteRenderbuffers(1, &rb);
			glBindFramebuffer(GL_FRAMEBUFFER, 0);
			glDeleteFramebuffers(1, &t->fbo);
			free(t);
			return NULL;
		}
		/* The framebuffer keeps the renderbuffer alive until it is
		 * deleted itself, so our name can go now. */
		glDeleteRenderbuffers(1, &rb);
	}
	glBindFramebuffer(GL_FRAMEBUFFER, 0);
	return t;
}

static void drop_fence(struct render_target *t)
{
	if (t->fence != EGL_NO_SYNC_KHR)
		t->egl->destroy_sync(t->egl->display, t->fence);
	t->fence = EGL_NO_SYNC_KHR;
}

void render_gl_target_release(struct render_target *t)
{
	drop_fence(t);
	if (t->fbo)
		glDeleteFramebuffers(1, &t->fbo);
	t->fbo = 0;
	if (t->texture)
		glDeleteTextures(1, &t->texture);
	t->texture = 0;
}

static void offscreen_destroy(struct render_target *t)
{
	render_gl_target_release(t);
	free(t);
}

void render_target_bind(struct render_target *t)
{
	struct render_egl *egl = t->egl;

	if (eglGetCurrentContext() != egl->context ||
	    eglGetCurrentSurface(EGL_DRAW) != t->surface)
		eglMakeCurrent(egl->display, t->surface, t->surface, egl->context);
	glBindFramebuffer(GL_FRAMEBUFFER, t->fbo);
	glViewport(0, 0, t->width, t->height);
}

int render_target_gl_y(const struct render_target *t, int y, int height)
{
	return t->y_up ? t->height - y - height : y;
}

static int offscreen_present(struct render_target *t, const pixman_region32_t *damage)
{
	(void)t;
	(void)damage;
	/* The frame "exists" once the GPU has finished it, so the caller's
	 * timestamp after this call is an honest presentation time. */
	glFinish();
	return 0;
}

int render_gl_target_flush(struct render_target *t)
{
	struct render_egl *egl = t->egl;

	drop_fence(t);
	if (egl->create_sync)
		t->fence = egl->create_sync(egl->display, EGL_SYNC_FENCE_KHR, NULL);
	if (t->fence == EGL_NO_SYNC_KHR) {
		/* No fence to ask later: finished now, as present does. */
		glFinish();
		return 0;
	}
	/* The fence only signals once the work before it was submitted. */
	glFlush();
	return 0;
}

bool render_gl_target_frame_done(struct render_target *t)
{
	if (t->fence == EGL_NO_SYNC_KHR)
		return true;
	EGLint r = t->egl->client_wait_sync(t->egl->display, t->fence, 0, 0);
	if (r == EGL_TIMEOUT_EXPIRED_KHR)
		return false;
	if (r != EGL_CONDITION_SATISFIED_KHR) {
		/* A fence that cannot be asked must not hold frames back forever. */
		render_log("eglClientWaitSyncKHR failed (0x%x): finishing with glFinish",
		           (unsigned)eglGetError());
		glFinish();
	}
	drop_fence(t);
	return true;
}

static bool can_read_bgra(struct render_target *t)
{
	if (t->read_bgra == 0) {
		t->read_bgra = render_little_endian() &&
			render_usable_extension(t->egl, "GL_EXT_read_format_bgra") ? 1 : -1;
		render_log("readback: %s", t->read_bgra > 0 ? "BGRA straight into the caller's rows"
		                                           : "RGBA, swizzled on the CPU");
	}
	return t->read_bgra > 0;
}

int render_gl_target_read_pixels(struct render_target *t, int x1, int y1, int w, int h,
                                 uint32_t *first, int dst_stride_bytes)
{
	uint8_t *rgba;

	render_target_bind(t);
	glPixelStorei(GL_PACK_ALIGNMENT, 4);
	/* Straight into dst when GL's rows are ours: top-down (not y_up) and
	 * tight, since GLES2 has no GL_PACK_ROW_LENGTH. This is the xwm's
	 * per-frame readback, so it is worth skipping the copy below. */
	if (!t->y_up && dst_stride_bytes == w * 4 && can_read_bgra(t)) {
		glReadPixels(x1, y1, w, h, GL_BGRA_EXT, GL_UNSIGNED_BYTE, first);
		if (glGetError() == GL_NO_ERROR)
			return 0;
		render_log("glReadPixels of BGRA failed; reading RGBA from now on");
		t->read_bgra = -1;
	}
	rgba = malloc((size_t)w * h * 4);
	if (!rgba)
		return -1;
	/* GL_RGBA/UNSIGNED_BYTE is the one read format GLES2 always allows. */
	glReadPixels(x1, render_target_gl_y(t, y1, h), w, h, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
	if (glGetError() != GL_NO_ERROR) {
		render_log("glReadPixels failed");
		free(rgba);
		return -1;
	}
	for (int row = 0; row < h; row++) {
		/* GL returns rows bottom-up in GL terms; on a y_up target that is
		 * the output's bottom row first. */
		int src_row = t->y_up ? h - 1 - row : row;
		const uint8_t *s = rgba + (size_t)src_row * w * 4;
		uint32_t *d = (uint32_t *)(void *)((char *)first + (size_t)row * dst_stride_bytes);
		for (int x = 0; x < w; x++, s += 4)
			d[x] = (uint32_t)s[3] << 24 | (uint32_t)s[0] << 16 |
			       (uint32_t)s[1] << 8 | s[2];
	}
	free(rgba);
	return 0;
}

static const struct render_target_impl offscreen_impl = {
	.engine = "gl",
	.present = offscreen_present,
	.flush = render_gl_target_flush,
	.frame_done = render_gl_target_frame_done,
	.read_pixels = render_gl_target_read_pixels,
	.destroy = offscreen_destroy,
};
