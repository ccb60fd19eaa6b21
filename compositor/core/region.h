/* wl_region helpers shared by surface.c (compositor core internal). */
#ifndef DUET_COMP_REGION_H
#define DUET_COMP_REGION_H

#include <pixman.h>
#include <wayland-server-core.h>

void comp_region_create(struct wl_client *client, uint32_t version, uint32_t id);
pixman_region32_t *comp_region_from_resource(struct wl_resource *resource);
/* The region that means "everywhere" (default input region). */
void comp_region_init_infinite(pixman_region32_t *region);

#endif
