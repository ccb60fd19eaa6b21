/* What every xdg_surface has, whichever role it took (toplevel or popup):
 * its window geometry and place in the layout, and its configure
 * sequence. Below xdg-toplevel.c and xdg-popup.c, which call it; the
 * requests are xdg-shell.c's. */
#include <stdlib.h>

#include "xdg-types.h"

#define MAX_UNACKED_CONFIGURES 64

bool comp_xdg_surface_early_map(const struct comp_xdg_surface *xdg)
{
	return xdg->surface->texture && xdg->server->options.early_buffer_ok;
}

/* ------------------------------------------------------------- geometry */

struct comp_box comp_xdg_surface_geometry(const struct comp_xdg_surface *xdg)
{
	if (xdg->has_geometry)
		return xdg->geometry;
	struct comp_box box = { 0, 0, 0, 0 };
	if (xdg->surface) {
		box.width = xdg->surface->width;
		box.height = xdg->surface->height;
	}
	return box;
}

void comp_xdg_surface_origin(const struct comp_xdg_surface *xdg, int *x, int *y)
{
	*x = *y = 0;
	if (xdg->role == COMP_XDG_ROLE_TOPLEVEL && xdg->window) {
		*x = xdg->window->x;
		*y = xdg->window->y;
	} else if (xdg->role == COMP_XDG_ROLE_POPUP && xdg->popup && xdg->popup->parent) {
		comp_xdg_surface_origin(xdg->popup->parent, x, y);
		*x += xdg->popup->box.x;
		*y += xdg->popup->box.y;
	}
}

void comp_xdg_surface_update_position(struct comp_xdg_surface *xdg)
{
	if (!xdg->surface)
		return;
	int x, y;
	comp_xdg_surface_origin(xdg, &x, &y);
	struct comp_box g = comp_xdg_surface_geometry(xdg);
	comp_surface_set_position(xdg->surface, x - g.x, y - g.y);
	struct comp_xdg_popup *popup;
	wl_list_for_each(popup, &xdg->popups, parent_link)
		comp_xdg_surface_update_position(popup->xdg);
}

/* ------------------------------------------------------------ configure */

void comp_xdg_surface_send_configure(struct comp_xdg_surface *xdg)
{
	struct comp_xdg_configure *c = calloc(1, sizeof(*c));
	if (!c) {
		wl_client_post_no_memory(wl_resource_get_client(xdg->resource));
		return;
	}
	c->serial = wl_display_next_serial(xdg->server->display);
	c->generation = xdg->generation;
	wl_list_insert(xdg->configures.prev, &c->link);
	/* A client that never acks must not make us grow without bound; the
	 * oldest serials are forgotten (acking one of them is then an error,
	 * as acking anything that old would be out of order anyway). */
	if (++xdg->n_configures > MAX_UNACKED_CONFIGURES) {
		struct comp_xdg_configure *old = wl_container_of(xdg->configures.next, old, link);
		wl_list_remove(&old->link);
		free(old);
		xdg->n_configures--;
	}
	xdg->configure_sent = true;
	xdg_surface_send_configure(xdg->resource, c->serial);
}

void comp_xdg_surface_clear_configures(struct comp_xdg_surface *xdg)
{
	struct comp_xdg_configure *c, *tmp;
	wl_list_for_each_safe(c, tmp, &xdg->configures, link) {
		wl_list_remove(&c->link);
		free(c);
	}
	xdg->n_configures = 0;
}

void comp_xdg_surface_reset(struct comp_xdg_surface *xdg)
{
	xdg->generation++;
	xdg->configure_sent = false;
	xdg->configured = false;
}
