/* xdg_wm_base and xdg_surface (toplevels: xdg-toplevel.c, popups:
 * xdg-popup.c, positioners: xdg-positioner.c; what all xdg_surfaces share:
 * xdg-surface.c): the requests, and the role that dispatches a commit to
 * the toplevel or popup under it.
 *
 * Protocol checks live here; every decision (where a window goes, what size
 * a maximized window gets, who has focus) is policy.c's. The life cycle of a
 * toplevel: get_toplevel -> initial commit without buffer -> configure ->
 * ack_configure -> commit with buffer = mapped -> commit without buffer =
 * unmapped, back to the start.
 *
 * The objects may be destroyed in any order (a client that dies loses all of
 * them in id order), so each destroy path unhooks itself from the others and
 * every request checks that what it needs still exists.
 */
#include <stdlib.h>
#include <string.h>

#include "xdg-types.h"

#define WM_BASE_VERSION 5

static void xdg_surface_role_commit(struct comp_surface *surface);
static void xdg_surface_role_attach(struct comp_surface *surface);
static struct comp_window *xdg_surface_role_window(struct comp_surface *surface);

static const struct comp_surface_role xdg_surface_role = {
	.name = "xdg_surface",
	.commit = xdg_surface_role_commit,
	.attach = xdg_surface_role_attach,
	.window = xdg_surface_role_window,
};

/* The role's window: a popup's is its toplevel's (comp_window_from_surface
 * gives the root surface). */
static struct comp_window *xdg_surface_role_window(struct comp_surface *surface)
{
	struct comp_xdg_surface *xdg = surface->role_data;
	while (xdg && xdg->role == COMP_XDG_ROLE_POPUP && xdg->popup)
		xdg = xdg->popup->parent;
	return xdg && xdg->role == COMP_XDG_ROLE_TOPLEVEL ? xdg->window : NULL;
}

/* ---------------------------------------------------------- xdg_surface */

static struct comp_xdg_surface *xdg_from_resource(struct wl_resource *resource)
{
	return wl_resource_get_user_data(resource);
}

/* Before the initial commit no configure exists to ack: a buffer then is
 * the unconfigured_buffer error at once ("Attaching a buffer to an
 * unconfigured surface"). After it, the rule is checked at commit. */
static void xdg_surface_role_attach(struct comp_surface *surface)
{
	struct comp_xdg_surface *xdg = surface->role_data;
	if (!xdg->configured && !xdg->configure_sent && !xdg->server->options.early_buffer_ok)
		wl_resource_post_error(xdg->resource, XDG_SURFACE_ERROR_UNCONFIGURED_BUFFER,
		                       "xdg_surface@%u: buffer attached before the initial commit",
		                       wl_resource_get_id(xdg->resource));
}

/* The xdg_surface of a request that needs a role first, or NULL after the
 * not_constructed error. */
static struct comp_xdg_surface *constructed_xdg(struct wl_resource *resource,
                                                const char *request)
{
	struct comp_xdg_surface *xdg = xdg_from_resource(resource);
	if (xdg->role != COMP_XDG_ROLE_NONE)
		return xdg;
	wl_resource_post_error(resource, XDG_SURFACE_ERROR_NOT_CONSTRUCTED,
	                       "xdg_surface@%u.%s before get_toplevel or get_popup",
	                       wl_resource_get_id(resource), request);
	return NULL;
}

static void xdg_surface_role_commit(struct comp_surface *surface)
{
	struct comp_xdg_surface *xdg = surface->role_data;
	if (surface->texture && !xdg->configured && !xdg->server->options.early_buffer_ok) {
		wl_resource_post_error(xdg->resource, XDG_SURFACE_ERROR_UNCONFIGURED_BUFFER,
		                       "xdg_surface@%u: buffer committed before the first "
		                       "configure was acked", wl_resource_get_id(xdg->resource));
		return;
	}
	if (xdg->pending_has_geometry) {
		xdg->has_geometry = true;
		xdg->geometry = xdg->pending_geometry;
	}
	if (xdg->role == COMP_XDG_ROLE_TOPLEVEL && xdg->window)
		comp_xdg_toplevel_commit(comp_xdg_toplevel_from_window(xdg->window));
	else if (xdg->role == COMP_XDG_ROLE_POPUP && xdg->popup)
		comp_xdg_popup_commit(xdg->popup);
}

static void xdg_surface_destroy(struct wl_client *client, struct wl_resource *resource)
{
	struct comp_xdg_surface *xdg = xdg_from_resource(resource);
	if (xdg->window || xdg->popup) {
		wl_resource_post_error(resource, XDG_SURFACE_ERROR_DEFUNCT_ROLE_OBJECT,
		                       "xdg_surface@%u destroyed before its %s",
		                       wl_resource_get_id(resource),
		                       xdg->window ? "xdg_toplevel" : "xdg_popup");
		return;
	}
	wl_resource_destroy(resource);
}

static bool check_role_free(struct comp_xdg_surface *xdg, struct wl_resource *resource,
                            enum comp_xdg_role want)
{
	if (xdg->window || xdg->popup) {
		wl_resource_post_error(resource, XDG_SURFACE_ERROR_ALREADY_CONSTRUCTED,
		                       "xdg_surface@%u already has a role object",
		                       wl_resource_get_id(resource));
		return false;
	}
	if (!xdg->surface) {
		wl_resource_post_error(resource, XDG_SURFACE_ERROR_NOT_CONSTRUCTED,
		                       "xdg_surface@%u: its wl_surface was destroyed",
		                       wl_resource_get_id(resource));
		return false;
	}
	if (xdg->surface->xdg_role != COMP_XDG_ROLE_NONE && xdg->surface->xdg_role != (int)want) {
		wl_resource_post_error(comp_xdg_wm_base_resource(xdg, resource),
		                       XDG_WM_BASE_ERROR_ROLE,
		                       "wl_surface@%u was an %s, it cannot become an %s",
		                       wl_resource_get_id(xdg->surface->resource),
		                       want == COMP_XDG_ROLE_POPUP ? "xdg_toplevel" : "xdg_popup",
		                       want == COMP_XDG_ROLE_POPUP ? "xdg_popup" : "xdg_toplevel");
		return false;
	}
	return true;
}

static void xdg_surface_get_toplevel(struct wl_client *client, struct wl_resource *resource,
                                     uint32_t id)
{
	struct comp_xdg_surface *xdg = xdg_from_resource(resource);
	if (!check_role_free(xdg, resource, COMP_XDG_ROLE_TOPLEVEL))
		return;
	comp_xdg_toplevel_create(xdg, id);
	if (xdg->window)
		xdg->surface->xdg_role = COMP_XDG_ROLE_TOPLEVEL;
}

static void xdg_surface_get_popup(struct wl_client *client, struct wl_resource *resource,
                                  uint32_t id, struct wl_resource *parent_resource,
                                  struct wl_resource *positioner_resource)
{
	struct comp_xdg_surface *xdg = xdg_from_resource(resource);
	if (!check_role_free(xdg, resource, COMP_XDG_ROLE_POPUP))
		return;
	const struct comp_positioner *positioner = comp_positioner_from_resource(positioner_resource);
	struct wl_resource *wm_base = comp_xdg_wm_base_resource(xdg, resource);
	if (!comp_positioner_is_complete(positioner)) {
		wl_resource_post_error(wm_base, XDG_WM_BASE_ERROR_INVALID_POSITIONER,
		                       "xdg_surface@%u.get_popup: positioner has no size or no "
		                       "anchor rectangle", wl_resource_get_id(resource));
		return;
	}
	struct comp_xdg_surface *parent = parent_resource ? xdg_from_resource(parent_resource) : NULL;
	/* A parent given later through another protocol (layer-shell) is
	 * allowed by the spec, but no such protocol exists here; and the
	 * parent must be a toplevel or a popup (xdg_popup's description), so
	 * a popup's depth is fixed when it is made. */
	if (!parent || !parent->surface || parent == xdg ||
	    !(parent->window || parent->popup)) {
		wl_resource_post_error(wm_base, XDG_WM_BASE_ERROR_INVALID_POPUP_PARENT,
		                       "xdg_surface@%u.get_popup: a popup needs a live parent "
		                       "toplevel or popup", wl_resource_get_id(resource));
		return;
	}
	if (parent->popup && parent->popup->depth >= COMP_MAX_POPUP_DEPTH) {
		wl_resource_post_error(wm_base, XDG_WM_BASE_ERROR_INVALID_POPUP_PARENT,
		                       "xdg_surface@%u.get_popup: popups nest at most %d deep",
		                       wl_resource_get_id(resource), COMP_MAX_POPUP_DEPTH);
		return;
	}
	comp_xdg_popup_create(xdg, id, parent, positioner);
	if (xdg->popup)
		xdg->surface->xdg_role = COMP_XDG_ROLE_POPUP;
}

static void xdg_surface_set_window_geometry(struct wl_client *client,
                                            struct wl_resource *resource, int32_t x, int32_t y,
                                            int32_t width, int32_t height)
{
	struct comp_xdg_surface *xdg = constructed_xdg(resource, "set_window_geometry");
	if (!xdg)
		return;
	if (width <= 0 || height <= 0) {
		wl_resource_post_error(resource, XDG_SURFACE_ERROR_INVALID_SIZE,
		                       "xdg_surface@%u.set_window_geometry: %dx%d is not a positive "
		                       "size", wl_resource_get_id(resource), width, height);
		return;
	}
	xdg->pending_has_geometry = true;
	xdg->pending_geometry = comp_clamp_box(x, y, width, height);
}

static void xdg_surface_ack_configure(struct wl_client *client, struct wl_resource *resource,
                                      uint32_t serial)
{
	struct comp_xdg_surface *xdg = constructed_xdg(resource, "ack_configure");
	if (!xdg)
		return;
	struct comp_xdg_configure *c, *tmp;
	bool found = false;
	wl_list_for_each(c, &xdg->configures, link) {
		if (c->serial == serial) {
			found = true;
			break;
		}
	}
	if (!found) {
		wl_resource_post_error(resource, XDG_SURFACE_ERROR_INVALID_SERIAL,
		                       "xdg_surface@%u.ack_configure: serial %u was not sent or "
		                       "was already acked", wl_resource_get_id(resource), serial);
		return;
	}
	if (c->generation == xdg->generation)
		xdg->configured = true;
	/* Acking a configure implicitly acks the older ones. */
	wl_list_for_each_safe(c, tmp, &xdg->configures, link) {
		bool last = c->serial == serial;
		if (xdg->role == COMP_XDG_ROLE_TOPLEVEL && xdg->window)
			comp_xdg_toplevel_acked(comp_xdg_toplevel_from_window(xdg->window), c->serial);
		wl_list_remove(&c->link);
		free(c);
		xdg->n_configures--;
		if (last)
			break;
	}
}

static const struct xdg_surface_interface xdg_surface_impl = {
	.destroy = xdg_surface_destroy,
	.get_toplevel = xdg_surface_get_toplevel,
	.get_popup = xdg_surface_get_popup,
	.set_window_geometry = xdg_surface_set_window_geometry,
	.ack_configure = xdg_surface_ack_configure,
};

static void xdg_surface_detach_surface(struct comp_xdg_surface *xdg)
{
	if (!xdg->surface)
		return;
	xdg->surface->role_data = NULL;
	wl_list_remove(&xdg->surface_destroy.link);
	xdg->surface = NULL;
}

static void handle_surface_destroy(struct wl_listener *listener, void *data)
{
	struct comp_xdg_surface *xdg = wl_container_of(listener, xdg, surface_destroy);
	/* The role objects stay (the client still holds them) but show nothing. */
	if (xdg->window) {
		comp_xdg_toplevel_unmap(comp_xdg_toplevel_from_window(xdg->window));
		xdg->window->surface = NULL;
	}
	if (xdg->popup)
		comp_xdg_popup_orphan(xdg->popup);
	comp_xdg_surface_dismiss_popups(xdg);
	xdg_surface_detach_surface(xdg);
}

static void xdg_surface_resource_destroy(struct wl_resource *resource)
{
	struct comp_xdg_surface *xdg = xdg_from_resource(resource);
	/* Only on client teardown can the role object still be here. */
	if (xdg->window)
		comp_xdg_toplevel_destroy_object(comp_xdg_toplevel_from_window(xdg->window));
	if (xdg->popup)
		comp_xdg_popup_destroy_object(xdg->popup);
	comp_xdg_surface_dismiss_popups(xdg);
	xdg_surface_detach_surface(xdg);
	if (xdg->wm_base)
		wl_list_remove(&xdg->wm_base_link);
	comp_xdg_surface_clear_configures(xdg);
	free(xdg);
}

/* ---------------------------------------------------------- xdg_wm_base */

static void wm_base_destroy(struct wl_client *client, struct wl_resource *resource)
{
	struct comp_xdg_wm_base *base = wl_resource_get_user_data(resource);
	if (!wl_list_empty(&base->surfaces)) {
		wl_resource_post_error(resource, XDG_WM_BASE_ERROR_DEFUNCT_SURFACES,
		                       "xdg_wm_base destroyed while xdg_surfaces still exist");
		return;
	}
	wl_resource_destroy(resource);
}

static void wm_base_create_positioner(struct wl_client *client, struct wl_resource *resource,
                                      uint32_t id)
{
	comp_positioner_create(client, (uint32_t)wl_resource_get_version(resource), id);
}

static void wm_base_get_xdg_surface(struct wl_client *client, struct wl_resource *resource,
                                    uint32_t id, struct wl_resource *surface_resource)
{
	struct comp_xdg_wm_base *base = wl_resource_get_user_data(resource);
	struct comp_surface *surface = comp_surface_from_resource(surface_resource);
	struct comp_xdg_surface *xdg = calloc(1, sizeof(*xdg));
	if (!xdg) {
		wl_client_post_no_memory(client);
		return;
	}
	if (!comp_surface_set_role(surface, &xdg_surface_role, xdg, resource,
	                           XDG_WM_BASE_ERROR_ROLE)) {
		free(xdg);
		return;
	}
	xdg->resource = wl_resource_create(client, &xdg_surface_interface,
	                                   wl_resource_get_version(resource), id);
	if (!xdg->resource) {
		surface->role_data = NULL;
		free(xdg);
		wl_client_post_no_memory(client);
		return;
	}
	xdg->server = base->server;
	xdg->wm_base = base;
	wl_list_insert(&base->surfaces, &xdg->wm_base_link);
	xdg->surface = surface;
	xdg->surface_destroy.notify = handle_surface_destroy;
	wl_signal_add(&surface->destroy_signal, &xdg->surface_destroy);
	wl_list_init(&xdg->popups);
	wl_list_init(&xdg->configures);
	wl_resource_set_implementation(xdg->resource, &xdg_surface_impl, xdg,
	                               xdg_surface_resource_destroy);

	/* The spec names no error for it; the request at fault is
	 * get_xdg_surface, and xdg_wm_base's invalid_surface_state fits
	 * (wlcs 1.5.0 expects it there). */
	if (surface->texture || (surface->pending.buffer_attached && surface->pending.buffer))
		wl_resource_post_error(resource, XDG_WM_BASE_ERROR_INVALID_SURFACE_STATE,
		                       "wl_surface@%u already has a buffer; an xdg_surface must "
		                       "start without one", wl_resource_get_id(surface_resource));
}

static void wm_base_pong(struct wl_client *client, struct wl_resource *resource,
                         uint32_t serial)
{
	/* We never ping (no unresponsive-client handling), so nothing waits. */
}

static const struct xdg_wm_base_interface wm_base_impl = {
	.destroy = wm_base_destroy,
	.create_positioner = wm_base_create_positioner,
	.get_xdg_surface = wm_base_get_xdg_surface,
	.pong = wm_base_pong,
};

static void wm_base_resource_destroy(struct wl_resource *resource)
{
	struct comp_xdg_wm_base *base = wl_resource_get_user_data(resource);
	struct comp_xdg_surface *xdg, *tmp;
	wl_list_for_each_safe(xdg, tmp, &base->surfaces, wm_base_link) {
		wl_list_remove(&xdg->wm_base_link);
		xdg->wm_base = NULL;
	}
	free(base);
}

static void wm_base_bind(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	struct comp_xdg_wm_base *base = calloc(1, sizeof(*base));
	struct wl_resource *resource = wl_resource_create(client, &xdg_wm_base_interface,
	                                                  (int)version, id);
	if (!base || !resource) {
		free(base);
		if (resource)
			wl_resource_destroy(resource);
		wl_client_post_no_memory(client);
		return;
	}
	base->resource = resource;
	base->server = data;
	wl_list_init(&base->surfaces);
	wl_resource_set_implementation(resource, &wm_base_impl, base, wm_base_resource_destroy);
}

void comp_xdg_shell_create(struct comp_server *server)
{
	wl_list_init(&server->popup_grabs);
	server->popup_grab = &comp_xdg_popup_grab;
	comp_global_create(server, &xdg_wm_base_interface, WM_BASE_VERSION, server, wm_base_bind);
}
