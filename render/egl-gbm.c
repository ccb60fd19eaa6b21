/* EGL on the GBM platform, for duet-compositor's KMS output. The caller
 * opens the DRM device and its gbm_device (the compositor's DRM backend
 * does); render/ includes GBM's header but links no DRM code of its own.
 *
 * The config is the window config whose native visual is the scanout
 * format (a GBM/DRM fourcc such as XRGB8888), so the gbm_surface's buffers
 * can be put on a plane as they are. */
#include <gbm.h>

#include "render-private.h"

#ifndef EGL_PLATFORM_GBM_KHR
#define EGL_PLATFORM_GBM_KHR 0x31D7
#endif

static bool choose_for_format(struct render_egl *egl, void *data)
{
	return render_egl_choose_window_config(egl, *(const uint32_t *)data);
}

struct render_egl *render_egl_create_gbm(struct gbm_device *gbm, uint32_t format)
{
	const char *client_exts = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
	if (!render_extension_in_list(client_exts, "EGL_EXT_platform_base") ||
	    (!render_extension_in_list(client_exts, "EGL_KHR_platform_gbm") &&
	     !render_extension_in_list(client_exts, "EGL_MESA_platform_gbm"))) {
		render_log("EGL lacks the GBM platform (client extensions: %s)",
		           client_exts ? client_exts : "none");
		return NULL;
	}
	/* EGL_PLATFORM_GBM_KHR and _MESA are the same enum. */
	struct render_egl *egl = render_egl_open(EGL_PLATFORM_GBM_KHR, gbm, "on GBM",
	                                         choose_for_format, &format);
	if (egl)
		egl->terminate = true;
	return egl;
}
