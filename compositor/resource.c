#include "comp.h"

struct wl_resource *comp_resource_create(struct wl_client *client,
                                         const struct wl_interface *interface, int version,
                                         uint32_t id, const void *implementation, void *data,
                                         wl_resource_destroy_func_t destroy)
{
	struct wl_resource *resource = wl_resource_create(client, interface, version, id);
	if (!resource) {
		wl_client_post_no_memory(client);
		return NULL;
	}
	wl_resource_set_implementation(resource, implementation, data, destroy);
	return resource;
}
