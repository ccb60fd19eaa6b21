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

static bool choose_for_visual(struct render_egl *egl, void *data)
{
	return choose_window_config(egl, *(const uint32_t *)data);
}

struct render_egl *render_egl_create_x11(void *native_display, uint32_t visual_id)
{
	const char *client_exts = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
	if (!render_extension_in_list(client_exts, "EGL_EXT_platform_base") ||
	    (!render_extension_in_list(client_exts, "EGL_KHR_platform_x11") &&
	     !render_extension_in_list(client_exts, "EGL_EXT_platform_x11"))) {
		render_log("EGL lacks the X11 platform (client extensions: %s)",
		           client_exts ? client_exts : "none");
		return NULL;
	}
	/* EGL_PLATFORM_X11_KHR and _EXT are the same enum. */
	return render_egl_open(EGL_PLATFORM_X11_KHR, native_display, "on X11",
	                       choose_for_visual, &visual_id);
}
