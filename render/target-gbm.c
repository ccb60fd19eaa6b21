/* GBM targets: frames for a KMS plane. A gbm_surface is the EGL window
 * surface (so damage-only repaints work as on any window target,
 * target-window.c); after each swap its front buffer is locked and handed
 * to the caller, who scans it out and gives it back once the display
 * shows a newer one. render/ never touches KMS itself: the compositor's
 * DRM backend makes framebuffers of the buffers and flips them.
 *
 * Buffers are allocated with the implicit (driver-chosen) layout unless
 * the caller passes the modifiers its plane takes; a buffer without a
 * modifier must then be added to KMS without one (vkms and virtio-gpu
 * reject DRM_FORMAT_MOD_INVALID on a framebuffer). */
#include <gbm.h>
#include <stdio.h>

#include "render-private.h"

struct render_target *render_target_create_gbm(struct render_egl *egl, struct gbm_device *gbm,
                                               int width, int height, uint32_t format,
                                               const uint64_t *modifiers,
                                               unsigned int n_modifiers)
{
	struct gbm_surface *surface = NULL;

	if (width <= 0 || height <= 0) {
		render_log("GBM target %dx%d out of range", width, height);
		return NULL;
	}
	if (modifiers && n_modifiers > 0)
		surface = gbm_surface_create_with_modifiers(gbm, (uint32_t)width, (uint32_t)height,
		                                            format, modifiers, n_modifiers);
	if (!surface)
		surface = gbm_surface_create(gbm, (uint32_t)width, (uint32_t)height, format,
		                             GBM_BO_USE_SCANOUT | GBM_BO_USE_RENDERING);
	if (!surface) {
		render_log("gbm_surface_create(%dx%d, format 0x%08x) failed", width, height,
		           (unsigned)format);
		return NULL;
	}
	char label[48];
	snprintf(label, sizeof(label), "gbm %.4s", (const char *)&format);
	struct render_target *t = render_window_target_create(egl, (uintptr_t)surface, false,
	                                                      width, height, label);
	if (!t) {
		gbm_surface_destroy(surface);
		return NULL;
	}
	t->gbm_surface = surface;
	return t;
}

struct gbm_bo *render_target_gbm_present(struct render_target *t,
                                         const pixman_region32_t *damage)
{
	if (!t->gbm_surface) {
		render_log("render_target_gbm_present on a target that is not GBM's");
		return NULL;
	}
	if (!gbm_surface_has_free_buffers(t->gbm_surface)) {
		/* Every buffer is still scanned out or queued: the caller must
		 * release one first (it flips one frame at a time, so this is
		 * a bug, not a load condition). */
		render_log("GBM target: no free buffer to draw into");
		return NULL;
	}
	if (render_target_window_present(t, damage) != 0)
		return NULL;
	struct gbm_bo *bo = gbm_surface_lock_front_buffer(t->gbm_surface);
	if (!bo)
		render_log("gbm_surface_lock_front_buffer failed");
	return bo;
}

void render_target_gbm_release(struct render_target *t, struct gbm_bo *bo)
{
	if (t && t->gbm_surface && bo)
		gbm_surface_release_buffer(t->gbm_surface, bo);
}

void render_target_gbm_destroy(struct render_target *t)
{
	if (!t)
		return;
	struct gbm_surface *surface = t->gbm_surface;
	/* The EGL surface goes first: it refers to the gbm_surface. */
	render_target_window_destroy(t);
	if (surface)
		gbm_surface_destroy(surface);
}
