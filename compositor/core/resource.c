#include <string.h>

#include "comp.h"

struct wl_global *comp_global_create(struct comp_server *server,
                                     const struct wl_interface *interface, int version,
                                     void *data, wl_global_bind_func_t bind)
{
	struct wl_global *global = wl_global_create(server->display, interface, version, data, bind);
	if (!global) {
		comp_log("cannot create the %s global", interface->name);
		return NULL;
	}
	comp_server_offers(server, interface->name, version);
	return global;
}

void comp_server_offers(struct comp_server *server, const char *interface, int version)
{
	for (int i = 0; i < server->n_offered; i++) {
		if (strcmp(server->offered[i].name, interface) == 0) {
			if (version > server->offered[i].version)
				server->offered[i].version = version;
			return;
		}
	}
	if (server->n_offered < COMP_MAX_GLOBALS)
		server->offered[server->n_offered++] = (struct comp_offered){ interface, version };
}

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
