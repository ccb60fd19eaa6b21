/* zxdg_decoration_manager_v1: duet-compositor draws no window decorations,
 * so every toplevel is told to draw its own (client_side), whatever mode it
 * asks for. Without this global GTK, Qt and kitty also decorate themselves,
 * but a client that can only live with server-side decorations (or asks
 * and waits for the answer) learns where it stands.
 *
 * A decoration object follows its xdg_toplevel's resource: one per
 * toplevel (already_constructed), found through the toplevel resource's
 * destroy listener, and made inert when the toplevel goes first.
 */
#include <stdlib.h>

#include "comp.h"
#include "xdg-decoration-unstable-v1-server-protocol.h"
#include "xdg-shell-internal.h"

#define DECORATION_MANAGER_VERSION 1

struct comp_decoration {
	struct wl_resource *resource;
	struct wl_resource *toplevel;   /* NULL once the toplevel's resource is gone */
	struct wl_listener toplevel_destroy;
};

static void handle_toplevel_destroy(struct wl_listener *listener, void *data)
{
	struct comp_decoration *deco = wl_container_of(listener, deco, toplevel_destroy);
	wl_list_remove(&deco->toplevel_destroy.link);
	deco->toplevel = NULL;
}

static void decoration_resource_destroy(struct wl_resource *resource)
{
	struct comp_decoration *deco = wl_resource_get_user_data(resource);
	if (deco->toplevel)
		wl_list_remove(&deco->toplevel_destroy.link);
	free(deco);
}

/* Tells the client its mode; a configure sequence ends with
 * xdg_surface.configure, which the toplevel's initial configure sends if it
 * has not been sent yet. */
static void decoration_send_mode(struct comp_decoration *deco)
{
	zxdg_toplevel_decoration_v1_send_configure(deco->resource,
	                                           ZXDG_TOPLEVEL_DECORATION_V1_MODE_CLIENT_SIDE);
	struct comp_xdg_toplevel *toplevel =
		deco->toplevel ? wl_resource_get_user_data(deco->toplevel) : NULL;
	if (toplevel && toplevel->xdg && toplevel->xdg->configure_sent)
		comp_window_send_state(&toplevel->window);
}

static void decoration_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

/* Any mode asked for, even one this version does not know, gets the
 * only answer there is. */
static void decoration_handle_set_mode(struct wl_client *client, struct wl_resource *resource,
                                       uint32_t mode)
{
	decoration_send_mode(wl_resource_get_user_data(resource));
}

static void decoration_handle_unset_mode(struct wl_client *client, struct wl_resource *resource)
{
	decoration_send_mode(wl_resource_get_user_data(resource));
}

static const struct zxdg_toplevel_decoration_v1_interface decoration_impl = {
	.destroy = decoration_handle_destroy,
	.set_mode = decoration_handle_set_mode,
	.unset_mode = decoration_handle_unset_mode,
};

static void manager_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void manager_handle_get_toplevel_decoration(struct wl_client *client,
                                                   struct wl_resource *resource, uint32_t id,
                                                   struct wl_resource *toplevel)
{
	if (wl_resource_get_destroy_listener(toplevel, handle_toplevel_destroy)) {
		wl_resource_post_error(resource, ZXDG_TOPLEVEL_DECORATION_V1_ERROR_ALREADY_CONSTRUCTED,
		                       "xdg_toplevel@%u already has a decoration object",
		                       wl_resource_get_id(toplevel));
		return;
	}
	struct comp_decoration *deco = calloc(1, sizeof(*deco));
	if (!deco) {
		wl_client_post_no_memory(client);
		return;
	}
	deco->resource = wl_resource_create(client, &zxdg_toplevel_decoration_v1_interface,
	                                    wl_resource_get_version(resource), id);
	if (!deco->resource) {
		free(deco);
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(deco->resource, &decoration_impl, deco,
	                               decoration_resource_destroy);
	deco->toplevel = toplevel;
	deco->toplevel_destroy.notify = handle_toplevel_destroy;
	wl_resource_add_destroy_listener(toplevel, &deco->toplevel_destroy);
	decoration_send_mode(deco);
}

static const struct zxdg_decoration_manager_v1_interface manager_impl = {
	.destroy = manager_handle_destroy,
	.get_toplevel_decoration = manager_handle_get_toplevel_decoration,
};

static void bind_manager(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	struct wl_resource *resource = wl_resource_create(client,
	                                                  &zxdg_decoration_manager_v1_interface,
	                                                  (int)version, id);
	if (!resource) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(resource, &manager_impl, data, NULL);
}

void comp_xdg_decoration_create(struct comp_server *server)
{
	wl_global_create(server->display, &zxdg_decoration_manager_v1_interface,
	                 DECORATION_MANAGER_VERSION, server, bind_manager);
}
