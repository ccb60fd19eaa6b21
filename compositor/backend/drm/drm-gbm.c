/* A KMS output's render target: a gbm_surface is the EGL window surface
 * (render/'s window target on the GBM platform, so damage-only repaints
 * work as on any window), and after each frame its front buffer is locked
 * and handed to the DRM backend, which makes it a framebuffer, flips it
 * and gives it back once the display shows a newer one. render/ knows
 * nothing of GBM: as weston's DRM backend does for its gl-renderer, the
 * backend makes the native window and scans out what EGL put in it.
 *
 * Buffers are allocated with the implicit (driver-chosen) layout unless
 * the caller passes the modifiers its plane takes; a buffer without a
 * modifier must then be added to KMS without one (vkms and virtio-gpu
 * reject DRM_FORMAT_MOD_INVALID on a framebuffer). */
#include <gbm.h>

#include "comp.h"
#include "drm-gbm.h"

struct render_target *drm_gbm_target_create(struct render_egl *egl, struct gbm_device *gbm,
                                            int width, int height, uint32_t format,
                                            const uint64_t *modifiers,
                                            unsigned int n_modifiers,
                                            struct gbm_surface **surface)
{
	struct gbm_surface *s = NULL;

	if (width <= 0 || height <= 0) {
		comp_log("drm: GBM surface %dx%d out of range", width, height);
		return NULL;
	}
	if (modifiers && n_modifiers > 0)
		s = gbm_surface_create_with_modifiers(gbm, (uint32_t)width, (uint32_t)height,
		                                      format, modifiers, n_modifiers);
	if (!s)
		s = gbm_surface_create(gbm, (uint32_t)width, (uint32_t)height, format,
		                       GBM_BO_USE_SCANOUT | GBM_BO_USE_RENDERING);
	if (!s) {
		comp_log("drm: gbm_surface_create(%dx%d, format %.4s) failed", width, height,
		         (const char *)&format);
		return NULL;
	}
	struct render_target *t = render_target_create_window(egl, s, width, height);
	if (!t) {
		gbm_surface_destroy(s);
		return NULL;
	}
	*surface = s;
	return t;
}

struct gbm_bo *drm_gbm_present(struct gbm_surface *surface, struct render_target *t,
                               const pixman_region32_t *damage)
{
	if (!gbm_surface_has_free_buffers(surface)) {
		/* Every buffer is still scanned out or queued: the caller must
		 * release one first (it flips one frame at a time, so this is
		 * a bug, not a load condition). */
		comp_log("drm: GBM surface: no free buffer to draw into");
		return NULL;
	}
	if (render_target_present(t, damage) != 0)
		return NULL;
	struct gbm_bo *bo = gbm_surface_lock_front_buffer(surface);
	if (!bo)
		comp_log("drm: gbm_surface_lock_front_buffer failed");
	return bo;
}

void drm_gbm_release(struct gbm_surface *surface, struct gbm_bo *bo)
{
	if (surface && bo)
		gbm_surface_release_buffer(surface, bo);
}

void drm_gbm_target_destroy(struct render_target *t, struct gbm_surface *surface)
{
	/* The EGL surface goes first: it refers to the gbm_surface. */
	render_target_destroy(t);
	if (surface)
		gbm_surface_destroy(surface);
}
