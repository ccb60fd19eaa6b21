/* Window targets: an EGL window surface that shows each frame while
 * repainting only its damage, on whatever platform the EGL display is
 * (egl.c). The caller makes the platform's window and passes it as
 * eglCreatePlatformWindowSurface takes it, as weston's gl-renderer is
 * given its output's window: duet-xwm the address of its composite
 * overlay window's XID, duet-compositor's KMS output a gbm_surface whose
 * front buffers it scans out itself (compositor/backend/drm/drm-gbm.c).
 *
 * After eglSwapBuffers the back buffer is normally undefined, which would
 * force a full repaint every frame. Three ways around it, best first:
 *  - "preserved": the config has EGL_SWAP_BEHAVIOR_PRESERVED_BIT; the scene
 *    paints straight into the back buffer, which keeps the last frame
 *    (Mesa's software X11 path has it: its back buffer is an XImage).
 *  - "buffer-age": EGL_EXT_buffer_age tells how many frames old the back
 *    buffer is; the scene paints into an offscreen framebuffer and present
 *    copies this frame's damage plus that of the frames the back buffer
 *    missed.
 *  - "fbo-copy": neither; the scene paints into the framebuffer and present
 *    copies all of it (correct, but costs a full-screen copy per frame).
 * The path is logged and can be queried, because the bench reports it.
 * $DUET_RENDER_DISABLE may name EGL_SWAP_BEHAVIOR_PRESERVED or
 * EGL_EXT_buffer_age to force the later paths for testing.
 *
 * The window target is a struct render_target (base first) of its own
 * kind: present is its swap, and every other render_target_* call works
 * on it as on an offscreen target (target-gl.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl-program.h"
#include "render-private.h"

#ifndef EGL_BUFFER_AGE_EXT
#define EGL_BUFFER_AGE_EXT 0x313D
#endif

#define HISTORY 4 /* frames of damage kept for buffer age */

enum window_path { PATH_PRESERVED, PATH_BUFFER_AGE, PATH_FBO_COPY };

struct window_target {
	struct render_target base;
	enum window_path path;
	PFNEGLSWAPBUFFERSWITHDAMAGEEXTPROC swap_with_damage;
	GLuint blit_program;
	GLint blit_u_tex;
	pixman_region32_t history[HISTORY]; /* [0] = last frame's damage */
	int history_len;
};

static const struct render_target_impl window_impl;
static void window_destroy(struct render_target *t);

static struct window_target *window_target(struct render_target *t)
{
	return duet_container_of(t, struct window_target, base);
}

static bool disabled(const char *name)
{
	const char *env = getenv("DUET_RENDER_DISABLE");
	char list[512];

	if (!env)
		return false;
	snprintf(list, sizeof(list), "%s", env);
	for (char *c = list; *c; c++)
		if (*c == ',')
			*c = ' ';
	return render_extension_in_list(list, name);
}

/* A full-screen copy of the framebuffer texture; scissoring limits it to
 * the damage. Texture rows are output rows top-down and the window shows GL
 * rows bottom-up, hence the flipped t coordinate. */
static bool create_blit_program(struct window_target *w)
{
	static const char *vs_src =
		"attribute vec2 a_pos;\n"
		"varying vec2 v_tex;\n"
		"void main() {\n"
		"  v_tex = vec2(a_pos.x * 0.5 + 0.5, 0.5 - a_pos.y * 0.5);\n"
		"  gl_Position = vec4(a_pos, 0.0, 1.0);\n"
		"}\n";
	static const char *fs_src =
		"precision mediump float;\n"
		"uniform sampler2D u_tex;\n"
		"varying vec2 v_tex;\n"
		"void main() { gl_FragColor = texture2D(u_tex, v_tex); }\n";
	static const char *const attribs[] = { "a_pos", NULL };
	char why[1200];

	w->blit_program = render_gl_program(vs_src, fs_src, attribs, why, sizeof(why));
	if (!w->blit_program) {
		render_log("window blit %s", why);
		return false;
	}
	w->blit_u_tex = glGetUniformLocation(w->blit_program, "u_tex");
	return true;
}

/* The scene's framebuffer for the copy paths: an offscreen target whose
 * FBO and texture the window target adopts. */
static bool adopt_offscreen(struct window_target *w)
{
	struct render_target *off = render_target_create_offscreen(w->base.egl, w->base.width,
	                                                           w->base.height);
	if (!off)
		return false;
	if (!off->texture) {
		/* A renderbuffer-only framebuffer cannot be sampled for the copy. */
		render_target_destroy(off);
		return false;
	}
	w->base.fbo = off->fbo;
	w->base.texture = off->texture;
	w->base.y_up = false;
	off->fbo = 0;
	off->texture = 0; /* the GL objects now belong to the window target */
	render_target_destroy(off);
	return true;
}

static const char *path_name(enum window_path path)
{
	switch (path) {
	case PATH_PRESERVED: return "preserved";
	case PATH_BUFFER_AGE: return "buffer-age";
	case PATH_FBO_COPY: return "fbo-copy";
	}
	return "?";
}

struct render_target *render_target_create_window(struct render_egl *egl, void *native_window,
                                                  int width, int height)
{
	struct window_target *w;
	EGLint surface_type = 0;
	const char *exts = eglQueryString(egl->display, EGL_EXTENSIONS);

	if (width <= 0 || height <= 0) {
		render_log("window target %dx%d out of range", width, height);
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->base.impl = &window_impl;
	w->base.egl = egl;
	w->base.width = width;
	w->base.height = height;
	w->base.y_up = true;
	w->base.fence = EGL_NO_SYNC_KHR;
	for (int i = 0; i < HISTORY; i++)
		pixman_region32_init(&w->history[i]);

	PFNEGLCREATEPLATFORMWINDOWSURFACEEXTPROC create_surface =
		(PFNEGLCREATEPLATFORMWINDOWSURFACEEXTPROC)
		eglGetProcAddress("eglCreatePlatformWindowSurfaceEXT");
	if (!create_surface) {
		render_log("eglCreatePlatformWindowSurfaceEXT not found");
		goto fail;
	}
	w->base.surface = create_surface(egl->display, egl->config, native_window, NULL);
	if (w->base.surface == EGL_NO_SURFACE) {
		render_log("eglCreatePlatformWindowSurfaceEXT (%s) failed: 0x%x", egl->label,
		           (unsigned)eglGetError());
		goto fail;
	}
	if (!eglMakeCurrent(egl->display, w->base.surface, w->base.surface, egl->context)) {
		render_log("eglMakeCurrent(window) failed: 0x%x", (unsigned)eglGetError());
		goto fail;
	}
	/* Our frame clock paces frames; never block in swap on a vblank. */
	eglSwapInterval(egl->display, 0);

	eglGetConfigAttrib(egl->display, egl->config, EGL_SURFACE_TYPE, &surface_type);
	if ((surface_type & EGL_SWAP_BEHAVIOR_PRESERVED_BIT) &&
	    !disabled("EGL_SWAP_BEHAVIOR_PRESERVED") &&
	    eglSurfaceAttrib(egl->display, w->base.surface, EGL_SWAP_BEHAVIOR,
	                     EGL_BUFFER_PRESERVED)) {
		w->path = PATH_PRESERVED;
	} else if (render_extension_in_list(exts, "EGL_EXT_buffer_age") &&
	           !disabled("EGL_EXT_buffer_age")) {
		w->path = PATH_BUFFER_AGE;
	} else {
		w->path = PATH_FBO_COPY;
	}
	if (w->path != PATH_PRESERVED && (!adopt_offscreen(w) || !create_blit_program(w))) {
		render_log("window target: no framebuffer to paint into");
		goto fail;
	}

	if (render_extension_in_list(exts, "EGL_KHR_swap_buffers_with_damage"))
		w->swap_with_damage = (PFNEGLSWAPBUFFERSWITHDAMAGEEXTPROC)
			eglGetProcAddress("eglSwapBuffersWithDamageKHR");
	else if (render_extension_in_list(exts, "EGL_EXT_swap_buffers_with_damage"))
		w->swap_with_damage = (PFNEGLSWAPBUFFERSWITHDAMAGEEXTPROC)
			eglGetProcAddress("eglSwapBuffersWithDamageEXT");

	/* The first frame must cover everything whatever the path. */
	glBindFramebuffer(GL_FRAMEBUFFER, 0);
	glViewport(0, 0, width, height);
	glClearColor(0, 0, 0, 1);
	glClear(GL_COLOR_BUFFER_BIT);

	w->base.repaint_path = path_name(w->path);
	render_log("window target %s %dx%d: repaint path %s, swap %s", egl->label, width,
	           height, w->base.repaint_path,
	           w->swap_with_damage ? "with damage" : "whole buffer");
	return &w->base;

fail:
	window_destroy(&w->base);
	return NULL;
}

/* Copies region (output coordinates) of the framebuffer to the back
 * buffer, one scissored full-screen quad per rectangle. */
static void blit(struct window_target *w, const pixman_region32_t *region)
{
	static const GLfloat quad[] = { -1, -1, 1, -1, -1, 1, 1, 1 };
	int n;
	const pixman_box32_t *b = pixman_region32_rectangles(region, &n);

	glBindFramebuffer(GL_FRAMEBUFFER, 0);
	glViewport(0, 0, w->base.width, w->base.height);
	glDisable(GL_BLEND);
	glEnable(GL_SCISSOR_TEST);
	glUseProgram(w->blit_program);
	glActiveTexture(GL_TEXTURE0);
	glBindTexture(GL_TEXTURE_2D, w->base.texture);
	glUniform1i(w->blit_u_tex, 0);
	glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, quad);
	glEnableVertexAttribArray(0);
	for (int i = 0; i < n; i++) {
		int h = b[i].y2 - b[i].y1;
		glScissor(b[i].x1, w->base.height - b[i].y1 - h, b[i].x2 - b[i].x1, h);
		glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
	}
	glDisableVertexAttribArray(0);
	glDisable(GL_SCISSOR_TEST);
	glBindTexture(GL_TEXTURE_2D, 0);
	glUseProgram(0);
}

static int swap(struct window_target *w, const pixman_region32_t *damage)
{
	EGLDisplay dpy = w->base.egl->display;
	bool ok;

	if (w->swap_with_damage && damage) {
		int n;
		const pixman_box32_t *b = pixman_region32_rectangles(damage, &n);
		EGLint *rects = calloc((size_t)(n > 0 ? n : 1) * 4, sizeof(EGLint));
		if (rects) {
			for (int i = 0; i < n; i++) {
				/* EGL wants bottom-left origin rectangles. */
				rects[i * 4 + 0] = b[i].x1;
				rects[i * 4 + 1] = w->base.height - b[i].y2;
				rects[i * 4 + 2] = b[i].x2 - b[i].x1;
				rects[i * 4 + 3] = b[i].y2 - b[i].y1;
			}
			ok = w->swap_with_damage(dpy, w->base.surface, rects, n);
			free(rects);
			goto done;
		}
	}
	ok = eglSwapBuffers(dpy, w->base.surface);
done:
	if (!ok) {
		render_log("eglSwapBuffers failed: 0x%x", (unsigned)eglGetError());
		return -1;
	}
	return 0;
}

static int window_present(struct render_target *t, const pixman_region32_t *damage)
{
	struct window_target *w = window_target(t);
	pixman_region32_t copy;
	pixman_box32_t all = { 0, 0, t->width, t->height };
	int ret;

	if (eglGetCurrentSurface(EGL_DRAW) != t->surface)
		eglMakeCurrent(t->egl->display, t->surface, t->surface, t->egl->context);

	pixman_region32_init(&copy);
	switch (w->path) {
	case PATH_PRESERVED:
		break;
	case PATH_BUFFER_AGE: {
		EGLint age = 0;
		if (!eglQuerySurface(t->egl->display, t->surface, EGL_BUFFER_AGE_EXT, &age))
			age = 0;
		if (!damage || age <= 0 || age > w->history_len + 1) {
			pixman_region32_init_rects(&copy, &all, 1);
		} else {
			pixman_region32_copy(&copy, damage);
			for (int i = 0; i < age - 1; i++)
				pixman_region32_union(&copy, &copy, &w->history[i]);
		}
		blit(w, &copy);
		/* Shift the history: this frame's damage becomes [0]. */
		pixman_region32_t oldest = w->history[HISTORY - 1];
		memmove(&w->history[1], &w->history[0],
		        sizeof(pixman_region32_t) * (HISTORY - 1));
		w->history[0] = oldest;
		if (damage)
			pixman_region32_copy(&w->history[0], damage);
		else
			pixman_region32_reset(&w->history[0], &all);
		if (w->history_len < HISTORY)
			w->history_len++;
		break;
	}
	case PATH_FBO_COPY:
		pixman_region32_init_rects(&copy, &all, 1);
		blit(w, &copy);
		break;
	}
	ret = swap(w, w->path == PATH_PRESERVED ? damage : NULL);
	pixman_region32_fini(&copy);
	return ret;
}

static void window_destroy(struct render_target *t)
{
	struct window_target *w = window_target(t);
	EGLDisplay dpy = t->egl->display;

	if (w->blit_program)
		glDeleteProgram(w->blit_program);
	render_gl_target_release(t);
	if (t->surface != EGL_NO_SURFACE) {
		/* Keep the context current without the surface we drop. */
		eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, t->egl->context);
		eglDestroySurface(dpy, t->surface);
	}
	for (int i = 0; i < HISTORY; i++)
		pixman_region32_fini(&w->history[i]);
	free(w);
}

static const struct render_target_impl window_impl = {
	.engine = "gl",
	.present = window_present,
	.flush = render_gl_target_flush,
	.frame_done = render_gl_target_frame_done,
	.read_pixels = render_gl_target_read_pixels,
	.destroy = window_destroy,
};
