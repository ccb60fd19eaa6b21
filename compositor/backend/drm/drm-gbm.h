/* A KMS output's render target (drm-gbm.c). */
#ifndef DUET_DRM_GBM_H
#define DUET_DRM_GBM_H

#include <pixman.h>
#include <stdint.h>

struct gbm_bo;
struct gbm_device;
struct gbm_surface;
struct render_egl;
struct render_target;

/* A target drawing into a new gbm_surface (*surface) of width x height in
 * format (the EGL display's native visual). modifiers: those the plane
 * takes, or NULL for the driver's implicit layout (the buffers then have
 * DRM_FORMAT_MOD_INVALID). NULL, logged, on failure. */
struct render_target *drm_gbm_target_create(struct render_egl *egl, struct gbm_device *gbm,
                                            int width, int height, uint32_t format,
                                            const uint64_t *modifiers,
                                            unsigned int n_modifiers,
                                            struct gbm_surface **surface);
/* Presents the painted frame (damage only, as any window target) and
 * returns the surface's new front buffer locked for scanout; NULL on
 * failure. The caller gives it back with drm_gbm_release once a newer
 * buffer is on screen, and gives back every buffer before destroying the
 * target. */
struct gbm_bo *drm_gbm_present(struct gbm_surface *surface, struct render_target *t,
                               const pixman_region32_t *damage);
void drm_gbm_release(struct gbm_surface *surface, struct gbm_bo *bo);
void drm_gbm_target_destroy(struct render_target *t, struct gbm_surface *surface);

#endif
