/* xdg_popup: a surface placed by a positioner relative to its parent's
 * window geometry, kept on the output, stacked above its parent, and
 * dismissed (popup_done) when the parent goes away or unmaps. Only the
 * topmost popup may be destroyed: one with child popups still open is
 * xdg_wm_base.not_the_topmost_popup.
 *
 * Grabs: a popup that asks for one before it maps, with the serial of the
 * last button or key press this client got (else it is dismissed at
 * once), joins the server's grab chain (its parent must be a toplevel or
 * the chain's topmost popup) and keeps the keyboard focus while mapped,
 * even when the policy focuses another of the client's windows. While
 * the chain lasts the pointer is confined to the grabbing client (seat.c:
 * other clients' surfaces get no enter, motion or button); a button press
 * outside the client's surfaces, which nobody receives, or the focus
 * given to another client's window, dismisses the chain. */
#include <stdlib.h>

#include "xdg-types.h"

static struct comp_box popup_bounds(const struct comp_xdg_popup *popup)
{
	/* The output the parent's origin is on, in the parent's
	 * window-geometry coordinates. */
	int px = 0, py = 0;
	if (popup->parent)
		comp_xdg_surface_origin(popup->parent, &px, &py);
	struct comp_output *output = comp_layout_output_for_box(popup->xdg->server, px, py, 1, 1);
	return (struct comp_box){ output->x - px, output->y - py, output->width, output->height };
}

static void popup_send_configure(struct comp_xdg_popup *popup)
{
	popup->box = comp_positioner_place(&popup->positioner, popup_bounds(popup));
	xdg_popup_send_configure(popup->resource, popup->box.x, popup->box.y, popup->box.width,
	                         popup->box.height);
	comp_xdg_surface_send_configure(popup->xdg);
}

/* The topmost mapped popup of the grab chain, which has the keyboard
 * focus, or NULL. */
static struct comp_surface *grab_focus_surface(struct comp_server *server)
{
	struct comp_xdg_popup *popup;
	wl_list_for_each_reverse(popup, &server->popup_grabs, grab_link) {
		if (popup->mapped && popup->xdg->surface)
			return popup->xdg->surface;
	}
	return NULL;
}

/* The popup leaves the grab chain; the keyboard focus it had goes back to
 * the popup below it in the chain, or to the focused window. */
static void popup_ungrab(struct comp_xdg_popup *popup)
{
	if (!popup->grabbed)
		return;
	struct comp_server *server = popup->xdg->server;
	popup->grabbed = false;
	wl_list_remove(&popup->grab_link);
	wl_list_init(&popup->grab_link);
	if (wl_list_empty(&server->popup_grabs))
		comp_seat_pointer_refresh(server); /* other clients may have it again */
	if (!popup->mapped || !popup->xdg->surface)
		return;
	struct comp_surface *next = grab_focus_surface(server);
	if (!next && server->focused)
		next = server->focused->surface;
	comp_seat_set_keyboard_focus(server, next);
}

static void popup_unmap(struct comp_xdg_popup *popup)
{
	popup_ungrab(popup);
	if (!popup->mapped)
		return;
	popup->mapped = false;
	comp_xdg_surface_dismiss_popups(popup->xdg);
	if (popup->xdg->surface)
		comp_surface_unmap(popup->xdg->surface);
	comp_stack_update(popup->xdg->server);
}

static void popup_dismiss(struct comp_xdg_popup *popup)
{
	popup_unmap(popup);
	if (popup->parent) {
		wl_list_remove(&popup->parent_link);
		wl_list_init(&popup->parent_link);
		popup->parent = NULL;
	}
	xdg_popup_send_popup_done(popup->resource);
}

void comp_xdg_surface_dismiss_popups(struct comp_xdg_surface *xdg)
{
	struct comp_xdg_popup *popup, *tmp;
	wl_list_for_each_safe(popup, tmp, &xdg->popups, parent_link)
		popup_dismiss(popup);
}

void comp_xdg_surface_for_each_popup_surface(struct comp_xdg_surface *xdg,
                                             comp_surface_iter_t fn, void *data)
{
	struct comp_xdg_popup *popup;
	wl_list_for_each(popup, &xdg->popups, parent_link) {
		if (!popup->mapped || !popup->xdg->surface)
			continue;
		comp_surface_tree_for_each(popup->xdg->surface, fn, data);
		comp_xdg_surface_for_each_popup_surface(popup->xdg, fn, data);
	}
}

void comp_xdg_popup_commit(struct comp_xdg_popup *popup)
{
	struct comp_xdg_surface *xdg = popup->xdg;
	if (!xdg->configure_sent) {
		popup_send_configure(popup);
		if (!comp_xdg_surface_early_map(xdg))
			return;
	}
	bool has_content = xdg->surface->texture != NULL;
	if (has_content && !popup->mapped) {
		/* A popup whose parent is gone or hidden has nothing to open on. */
		if (!popup->parent || !popup->parent->surface || !popup->parent->surface->mapped) {
			if (popup->parent)
				popup_dismiss(popup);
			return;
		}
		popup->mapped = true;
		comp_xdg_surface_update_position(xdg);
		comp_surface_map(xdg->surface, xdg->surface->x, xdg->surface->y);
		comp_stack_update(xdg->server);
		if (popup->grabbed)
			comp_seat_set_keyboard_focus(xdg->server, xdg->surface);
	} else if (!has_content && popup->mapped) {
		popup_unmap(popup);
		comp_xdg_surface_reset(xdg);
	} else if (popup->mapped) {
		/* wl_surface.offset moves the popup as it moves a toplevel. */
		popup->box.x = comp_clamp_coord((int64_t)popup->box.x + xdg->surface->current.dx);
		popup->box.y = comp_clamp_coord((int64_t)popup->box.y + xdg->surface->current.dy);
		comp_xdg_surface_update_position(xdg);
	}
}

void comp_xdg_popup_orphan(struct comp_xdg_popup *popup)
{
	popup_unmap(popup);
}

void comp_xdg_popup_destroy_object(struct comp_xdg_popup *popup)
{
	struct comp_xdg_surface *xdg = popup->xdg;
	popup_unmap(popup);
	/* Children of a destroyed popup cannot stay open on nothing. */
	comp_xdg_surface_dismiss_popups(xdg);
	popup_ungrab(popup);
	if (popup->parent)
		wl_list_remove(&popup->parent_link);
	xdg->popup = NULL;
	xdg->role = COMP_XDG_ROLE_NONE;
	comp_xdg_surface_reset(xdg);
	wl_resource_set_user_data(popup->resource, NULL);
	free(popup);
}

/* ------------------------------------------------------------ requests */

static void popup_resource_destroy(struct wl_resource *resource)
{
	struct comp_xdg_popup *popup = wl_resource_get_user_data(resource);
	if (popup)
		comp_xdg_popup_destroy_object(popup);
}

static void popup_destroy(struct wl_client *client, struct wl_resource *resource)
{
	struct comp_xdg_popup *popup = wl_resource_get_user_data(resource);
	/* xdg_popup.destroy: only the topmost popup may be destroyed, and the
	 * rule is not limited to grabbing popups (weston checks those only,
	 * wlroots any child, as the request's text reads). A child the
	 * compositor dismissed has left its parent and does not count. */
	if (popup && !wl_list_empty(&popup->xdg->popups)) {
		wl_resource_post_error(comp_xdg_wm_base_resource(popup->xdg, resource),
		                       XDG_WM_BASE_ERROR_NOT_THE_TOPMOST_POPUP,
		                       "xdg_popup@%u.destroy while popups of its own are still "
		                       "open on it", wl_resource_get_id(resource));
		return;
	}
	wl_resource_destroy(resource);
}

static void popup_grab(struct wl_client *client, struct wl_resource *resource,
                       struct wl_resource *seat, uint32_t serial)
{
	struct comp_xdg_popup *popup = wl_resource_get_user_data(resource);
	if (!popup)
		return;
	if (popup->mapped) {
		wl_resource_post_error(resource, XDG_POPUP_ERROR_INVALID_GRAB,
		                       "xdg_popup@%u.grab after the popup was mapped",
		                       wl_resource_get_id(resource));
		return;
	}
	if (popup->grabbed)
		return;
	/* Its parent is gone, or is a popup the compositor dismissed (maybe
	 * while this request was on its way): "this popup will be
	 * immediately dismissed", no error. */
	if (!popup->parent || (popup->parent->popup && !popup->parent->popup->parent)) {
		popup_dismiss(popup);
		return;
	}
	struct comp_server *server = popup->xdg->server;
	struct comp_xdg_popup *top = wl_list_empty(&server->popup_grabs) ? NULL :
		wl_container_of(server->popup_grabs.prev, top, grab_link);
	if (popup->parent->popup && popup->parent->popup != top) {
		wl_resource_post_error(comp_xdg_wm_base_resource(popup->xdg, resource),
		                       XDG_WM_BASE_ERROR_NOT_THE_TOPMOST_POPUP,
		                       "xdg_popup@%u.grab: its parent is a popup that is not the "
		                       "topmost grabbing popup", wl_resource_get_id(resource));
		return;
	}
	/* The grab must answer a press the user just gave this client
	 * ("the serial number of the event"); any other serial is a grab
	 * the compositor denies, which dismisses the popup. */
	if (!wl_resource_get_user_data(seat) ||
	    !comp_seat_grab_serial_ok(server, client, serial)) {
		popup_dismiss(popup);
		return;
	}
	/* A grab from another client, or on a toplevel while a chain is
	 * open, starts a chain of its own: the old one is dismissed. */
	if (top && !popup->parent->popup)
		popup_dismiss(wl_container_of(server->popup_grabs.next, top, grab_link));
	popup->grabbed = true;
	wl_list_insert(server->popup_grabs.prev, &popup->grab_link);
	comp_seat_pointer_refresh(server); /* other clients lose the pointer */
}

static struct wl_client *popup_grab_client(struct comp_server *server)
{
	if (wl_list_empty(&server->popup_grabs))
		return NULL;
	struct comp_xdg_popup *outer = wl_container_of(server->popup_grabs.next, outer, grab_link);
	return wl_resource_get_client(outer->resource);
}

struct comp_surface *comp_xdg_popup_keyboard_target(struct comp_server *server,
                                                    struct comp_surface *surface)
{
	struct comp_surface *popup = grab_focus_surface(server);
	return popup ? popup : surface;
}

void comp_xdg_popup_grab_input(struct comp_server *server, struct comp_surface *surface)
{
	if (wl_list_empty(&server->popup_grabs))
		return;
	struct comp_xdg_popup *outer = wl_container_of(server->popup_grabs.next, outer, grab_link);
	struct wl_client *grabber = wl_resource_get_client(outer->resource);
	if (surface && wl_resource_get_client(surface->resource) == grabber)
		return;
	popup_dismiss(outer); /* and every popup above it */
}

const struct comp_popup_grab comp_xdg_popup_grab = {
	.grabbing_client = popup_grab_client,
	.input_to = comp_xdg_popup_grab_input,
};

static void popup_reposition(struct wl_client *client, struct wl_resource *resource,
                             struct wl_resource *positioner_resource, uint32_t token)
{
	struct comp_xdg_popup *popup = wl_resource_get_user_data(resource);
	if (!popup)
		return;
	const struct comp_positioner *positioner = comp_positioner_from_resource(positioner_resource);
	if (!comp_positioner_is_complete(positioner)) {
		wl_resource_post_error(comp_xdg_wm_base_resource(popup->xdg, resource),
		                       XDG_WM_BASE_ERROR_INVALID_POSITIONER,
		                       "xdg_popup@%u.reposition: positioner has no size or no "
		                       "anchor rectangle", wl_resource_get_id(resource));
		return;
	}
	popup->positioner = *positioner;
	if (!popup->parent)
		return; /* already dismissed */
	xdg_popup_send_repositioned(resource, token);
	popup_send_configure(popup);
}

static const struct xdg_popup_interface popup_impl = {
	.destroy = popup_destroy,
	.grab = popup_grab,
	.reposition = popup_reposition,
};

void comp_xdg_popup_create(struct comp_xdg_surface *xdg, uint32_t id,
                           struct comp_xdg_surface *parent,
                           const struct comp_positioner *positioner)
{
	struct wl_client *client = wl_resource_get_client(xdg->resource);
	struct comp_xdg_popup *popup = calloc(1, sizeof(*popup));
	if (!popup) {
		wl_client_post_no_memory(client);
		return;
	}
	popup->resource = wl_resource_create(client, &xdg_popup_interface,
	                                     wl_resource_get_version(xdg->resource), id);
	if (!popup->resource) {
		free(popup);
		wl_client_post_no_memory(client);
		return;
	}
	popup->xdg = xdg;
	popup->parent = parent;
	wl_list_init(&popup->grab_link);
	popup->depth = parent->popup ? parent->popup->depth + 1 : 1;
	popup->positioner = *positioner;
	wl_list_insert(parent->popups.prev, &popup->parent_link); /* on top of its siblings */
	popup->box = comp_positioner_place(positioner, popup_bounds(popup));
	xdg->role = COMP_XDG_ROLE_POPUP;
	xdg->popup = popup;
	wl_resource_set_implementation(popup->resource, &popup_impl, popup, popup_resource_destroy);
}
