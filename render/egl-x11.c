/* EGL on the X11 platform, for duet-xwm's output (the composite overlay
 * window). The caller opens the X connection (an Xlib Display, whose xcb
 * connection it may share) and passes it as void *, so render/ stays free
 * of X headers and libraries: Mesa's X11 platform does all the X talking.
 *
 * The config is chosen to match the visual of the window we will draw into
 * (render_egl_choose_window_config in egl.c). The context is tied to that
 * config and made current without a surface until a window target binds
 * its surface. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render-private.h"

#ifndef EGL_PLATFORM_X11_KHR
#define EGL_PLATFORM_X11_KHR 0x31D5
#endif

static bool choose_for_visual(struct render_egl *egl, void *data)
{
	return render_egl_choose_window_config(egl, *(const uint32_t *)data);
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
