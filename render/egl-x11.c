/* EGL on the X11 platform, for duet-xwm's output (the composite overlay
 * window). The caller opens the X connection (an Xlib Display, whose xcb
 * connection it may share) and passes it as void *, so render/ stays free
 * of X headers and libraries: Mesa's X11 platform does all the X talking.
 *
 * The config is chosen to match the visual of the window we will draw into
 * (EGL_NATIVE_VISUAL_ID), preferring one that can preserve the back buffer
 * across swaps, because that lets a frame repaint only its damage (see
 * target-window.c). The context is tied to that config and made current
 * without a surface until a window target binds its surface. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render-private.h"

#ifndef EGL_PLATFORM_X11_KHR
#define EGL_PLATFORM_X11_KHR 0x31D5
#endif

static bool config_matches(EGLDisplay dpy, EGLConfig config, uint32_t visual_id,
                           EGLint *surface_type, EGLint *alpha)
{
	EGLint vid = 0;

	if (!eglGetConfigAttrib(dpy, config, EGL_NATIVE_VISUAL_ID, &vid) ||
	    !eglGetConfigAttrib(dpy, config, EGL_SURFACE_TYPE, surface_type) ||
	    !eglGetConfigAttrib(dpy, config, EGL_ALPHA_SIZE, alpha))
		return false;
	return visual_id == 0 || (uint32_t)vid == visual_id;
}

/* Best config for a window of visual_id: no alpha (the overlay is opaque),
 * with EGL_SWAP_BEHAVIOR_PRESERVED_BIT when one has it. */
static bool choose_window_config(struct render_egl *egl, uint32_t visual_id)
{
	static const EGLint attribs[] = {
		EGL_SURFACE_TYPE, EGL_WINDOW_BIT,
		EGL_RENDERABLE_TYPE, EGL_OPENGL_ES2_BIT,
		EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8,
		EGL_NONE,
	};
	EGLConfig configs[128];
	EGLint n = 0;
	int best = -1, best_score = -1;

	if (!eglChooseConfig(egl->display, attribs, configs, 128, &n) || n < 1) {
		render_log("eglChooseConfig (GLES2 window, RGB888) found nothing: 0x%x",
		           (unsigned)eglGetError());
		return false;
	}
	for (int i = 0; i < n; i++) {
		EGLint surface_type = 0, alpha = 0;
		if (!config_matches(egl->display, configs[i], visual_id, &surface_type, &alpha))
			continue;
		int score = (alpha == 0 ? 2 : 0) +
		            ((surface_type & EGL_SWAP_BEHAVIOR_PRESERVED_BIT) ? 1 : 0);
		if (score > best_score) {
			best = i;
			best_score = score;
		}
	}
	if (best < 0) {
		render_log("no EGL config for X visual 0x%x", (unsigned)visual_id);
		return false;
	}
	egl->config = configs[best];
	return true;
}

struct render_egl *render_egl_create_x11(void *native_display, uint32_t visual_id)
{
	PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display;
	const char *client_exts;
	EGLint major, minor;
	struct render_egl *egl;
	static const EGLint context_attribs[] = {
		EGL_CONTEXT_CLIENT_VERSION, 2,
		EGL_NONE,
	};

	client_exts = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
	if (!render_extension_in_list(client_exts, "EGL_EXT_platform_base") ||
	    (!render_extension_in_list(client_exts, "EGL_KHR_platform_x11") &&
	     !render_extension_in_list(client_exts, "EGL_EXT_platform_x11"))) {
		render_log("EGL lacks the X11 platform (client extensions: %s)",
		           client_exts ? client_exts : "none");
		return NULL;
	}
	get_platform_display = (PFNEGLGETPLATFORMDISPLAYEXTPROC)
		eglGetProcAddress("eglGetPlatformDisplayEXT");
	if (!get_platform_display) {
		render_log("eglGetPlatformDisplayEXT not found");
		return NULL;
	}

	egl = calloc(1, sizeof(*egl));
	if (!egl)
		return NULL;
	egl->context = EGL_NO_CONTEXT;
	/* EGL_PLATFORM_X11_KHR and _EXT are the same enum. */
	egl->display = get_platform_display(EGL_PLATFORM_X11_KHR, native_display, NULL);
	if (egl->display == EGL_NO_DISPLAY) {
		render_log("eglGetPlatformDisplayEXT(X11) failed: 0x%x", (unsigned)eglGetError());
		free(egl);
		return NULL;
	}
	if (!eglInitialize(egl->display, &major, &minor)) {
		render_log("eglInitialize(X11) failed: 0x%x", (unsigned)eglGetError());
		free(egl);
		return NULL;
	}
	if (!render_extension_in_list(eglQueryString(egl->display, EGL_EXTENSIONS),
	                              "EGL_KHR_surfaceless_context")) {
		/* render/ keeps the context current between frames and binds
		 * FBOs for offscreen work, which needs surfaceless contexts. */
		render_log("EGL_KHR_surfaceless_context missing on the X11 display");
		goto fail;
	}
	if (!eglBindAPI(EGL_OPENGL_ES_API)) {
		render_log("eglBindAPI(GLES) failed");
		goto fail;
	}
	if (!choose_window_config(egl, visual_id))
		goto fail;
	egl->context = eglCreateContext(egl->display, egl->config, EGL_NO_CONTEXT,
	                                context_attribs);
	if (egl->context == EGL_NO_CONTEXT) {
		render_log("eglCreateContext(GLES2) failed: 0x%x", (unsigned)eglGetError());
		goto fail;
	}
	if (!eglMakeCurrent(egl->display, EGL_NO_SURFACE, EGL_NO_SURFACE, egl->context)) {
		render_log("eglMakeCurrent(no surface) failed: 0x%x", (unsigned)eglGetError());
		goto fail;
	}
	snprintf(egl->description, sizeof(egl->description), "%s / %s / %s",
	         (const char *)glGetString(GL_VENDOR), (const char *)glGetString(GL_RENDERER),
	         (const char *)glGetString(GL_VERSION));
	render_log("EGL %d.%d on X11: %s", major, minor, egl->description);
	return egl;

fail:
	render_egl_destroy(egl);
	return NULL;
}
