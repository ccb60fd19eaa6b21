/* Hotplug events of one DRM device (drm-uevent.c). */
#ifndef DUET_DRM_UEVENT_H
#define DUET_DRM_UEVENT_H

#include <sys/types.h>

struct wl_event_loop;
struct drm_uevent;

/* changed(data) runs when the kernel says the device's connectors may
 * have changed (a uevent with HOTPLUG=1). NULL, logged, when the kernel's
 * uevent socket cannot be had. */
struct drm_uevent *drm_uevent_create(struct wl_event_loop *loop, dev_t device,
                                     void (*changed)(void *data), void *data);
void drm_uevent_destroy(struct drm_uevent *u);

#endif
