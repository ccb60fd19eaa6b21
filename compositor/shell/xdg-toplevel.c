/* xdg_toplevel: the window a toplevel xdg_surface becomes, its requests,
 * configures, map and unmap, and its comp_window_impl (what policy.c's
 * comp_window_* calls do to it).
 * Every decision is policy.c's; this file checks the protocol. */
#include <stdlib.h>
#include <string.h>

#include "xdg-types.h"

/* ------------------------------------------- the window's impl (window.c) */

static void toplevel_moved(struct comp_window *window)
{
	struct comp_xdg_toplevel *toplevel = comp_xdg_toplevel_from_window(window);
	if (toplevel->xdg)
		comp_xdg_surface_update_position(toplevel->xdg);
}

static void toplevel_move_on_ack(struct comp_window *window, int x, int y)
{
	struct comp_xdg_toplevel *toplevel = comp_xdg_toplevel_from_window(window);
	if (!toplevel->xdg || wl_list_empty(&toplevel->xdg->configures)) {
		comp_window_set_position(window, x, y);
		return;
	}
	struct comp_xdg_configure *last =
		wl_container_of(toplevel->xdg->configures.prev, last, link);
	toplevel->move_pending = true;
	toplevel->move_acked = false;
	toplevel->move_serial = last->serial;
	toplevel->move_x = x;
	toplevel->move_y = y;
}

void comp_xdg_toplevel_acked(struct comp_xdg_toplevel *toplevel, uint32_t serial)
{
	if (toplevel->move_pending && serial == toplevel->move_serial)
		toplevel->move_acked = true;
}

static void toplevel_set_hidden(struct comp_window *window, bool hidden)
{
	struct comp_xdg_toplevel *toplevel = comp_xdg_toplevel_from_window(window);
	if (!window->surface || !window->mapped)
		return;
	if (hidden) {
		if (toplevel->xdg)
			comp_xdg_surface_dismiss_popups(toplevel->xdg);
		comp_surface_unmap(window->surface);
	} else {
		struct comp_box g = toplevel->xdg ? comp_xdg_surface_geometry(toplevel->xdg)
		                                  : (struct comp_box){ 0, 0, 0, 0 };
		comp_surface_map(window->surface, window->x - g.x, window->y - g.y);
		comp_stack_update(window->server);
	}
}

static void add_state(struct wl_array *states, uint32_t state)
{
	uint32_t *s = wl_array_add(states, sizeof(*s));
	if (s)
		*s = state;
}

static void toplevel_configure(struct comp_window *window, int width, int height)
{
	struct comp_xdg_toplevel *toplevel = comp_xdg_toplevel_from_window(window);
	if (!window->xdg_toplevel || !toplevel->xdg || !window->surface)
		return;
	toplevel->configured_w = width;
	toplevel->configured_h = height;

	struct wl_array states;
	wl_array_init(&states);
	if (window->maximized)
		add_state(&states, XDG_TOPLEVEL_STATE_MAXIMIZED);
	if (window->fullscreen)
		add_state(&states, XDG_TOPLEVEL_STATE_FULLSCREEN);
	if (window->activated)
		add_state(&states, XDG_TOPLEVEL_STATE_ACTIVATED);
	if (window->resizing)
		add_state(&states, XDG_TOPLEVEL_STATE_RESIZING);
	if (wl_resource_get_version(window->xdg_toplevel) >=
	    XDG_TOPLEVEL_CONFIGURE_BOUNDS_SINCE_VERSION) {
		struct comp_output *output = window->server->policy->window_output(window);
		xdg_toplevel_send_configure_bounds(window->xdg_toplevel, output->width,
		                                   output->height);
	}
	xdg_toplevel_send_configure(window->xdg_toplevel, width, height, &states);
	wl_array_release(&states);
	comp_xdg_surface_send_configure(toplevel->xdg);
}

static void toplevel_send_state(struct comp_window *window)
{
	struct comp_xdg_toplevel *toplevel = comp_xdg_toplevel_from_window(window);
	toplevel_configure(window, toplevel->configured_w, toplevel->configured_h);
}

static void toplevel_send_close(struct comp_window *window)
{
	if (window->xdg_toplevel)
		xdg_toplevel_send_close(window->xdg_toplevel);
}

static void toplevel_for_each_popup_surface(struct comp_window *window, comp_surface_iter_t fn,
                                            void *data)
{
	struct comp_xdg_toplevel *toplevel = comp_xdg_toplevel_from_window(window);
	if (toplevel->xdg)
		comp_xdg_surface_for_each_popup_surface(toplevel->xdg, fn, data);
}

static const struct comp_window_impl toplevel_window_impl = {
	.configure = toplevel_configure,
	.send_state = toplevel_send_state,
	.send_close = toplevel_send_close,
	.moved = toplevel_moved,
	.move_on_ack = toplevel_move_on_ack,
	.set_hidden = toplevel_set_hidden,
	.for_each_popup_surface = toplevel_for_each_popup_surface,
};

/* --------------------------------------------------------- map / unmap */

static void toplevel_map(struct comp_xdg_toplevel *toplevel)
{
	struct comp_window *window = &toplevel->window;
	window->mapped = true;
	window->server->policy->window_mapped(window); /* places, raises, focuses */
	if (!window->minimized) {
		struct comp_box g = comp_xdg_surface_geometry(toplevel->xdg);
		comp_surface_map(window->surface, window->x - g.x, window->y - g.y);
	}
	comp_stack_update(window->server);
	wl_signal_emit_mutable(&window->server->window_mapped, window);
}

void comp_xdg_toplevel_unmap(struct comp_xdg_toplevel *toplevel)
{
	struct comp_window *window = &toplevel->window;
	if (!window->mapped)
		return;
	if (toplevel->xdg)
		comp_xdg_surface_dismiss_popups(toplevel->xdg);
	if (window->surface)
		comp_surface_unmap(window->surface);
	window->mapped = false;
	window->minimized = false;
	toplevel->move_pending = false;
	window->server->policy->window_unmapped(window); /* refocuses */
	if (window->server->focused == window)
		window->server->focused = NULL;
	comp_stack_update(window->server);
	wl_signal_emit_mutable(&window->server->window_unmapped, window);
}

void comp_xdg_toplevel_commit(struct comp_xdg_toplevel *toplevel)
{
	struct comp_window *window = &toplevel->window;
	struct comp_xdg_surface *xdg = toplevel->xdg;

	/* Checked here, not per request: a client may set them in either
	 * order before the commit that applies both. */
	if ((toplevel->pending_max_w > 0 && toplevel->pending_min_w > toplevel->pending_max_w) ||
	    (toplevel->pending_max_h > 0 && toplevel->pending_min_h > toplevel->pending_max_h)) {
		wl_resource_post_error(window->xdg_toplevel, XDG_TOPLEVEL_ERROR_INVALID_SIZE,
		                       "xdg_toplevel: min size %dx%d is larger than max size %dx%d",
		                       toplevel->pending_min_w, toplevel->pending_min_h,
		                       toplevel->pending_max_w, toplevel->pending_max_h);
		return;
	}
	window->min_width = toplevel->pending_min_w;
	window->min_height = toplevel->pending_min_h;
	window->max_width = toplevel->pending_max_w;
	window->max_height = toplevel->pending_max_h;

	if (!xdg->configure_sent) {
		/* The initial commit: now the client waits for our configure. */
		window->server->policy->window_initial_configure(window);
		if (!comp_xdg_surface_early_map(xdg))
			return;
	}
	struct comp_box g = comp_xdg_surface_geometry(xdg);
	window->geometry.x = g.x;
	window->geometry.y = g.y;
	window->geometry.width = g.width;
	window->geometry.height = g.height;

	if (xdg->surface->texture && !window->mapped) {
		toplevel_map(toplevel);
	} else if (!xdg->surface->texture && window->mapped) {
		comp_xdg_toplevel_unmap(toplevel);
		comp_xdg_surface_reset(xdg);
	} else if (window->mapped) {
		if (toplevel->move_pending && toplevel->move_acked) {
			toplevel->move_pending = false;
			window->x = toplevel->move_x;
			window->y = toplevel->move_y;
		}
		/* wl_surface.offset moves the window, like attach's x,y did. */
		if (xdg->surface->current.dx || xdg->surface->current.dy) {
			/* Clamped: a client moving itself commit after commit. */
			window->x = comp_clamp_coord((int64_t)window->x + xdg->surface->current.dx);
			window->y = comp_clamp_coord((int64_t)window->y + xdg->surface->current.dy);
		}
		comp_xdg_surface_update_position(xdg);
	}
}

/* ----------------------------------------------------------- xdg_toplevel */

static struct comp_xdg_toplevel *toplevel_from_resource(struct wl_resource *resource)
{
	return wl_resource_get_user_data(resource);
}

void comp_xdg_toplevel_destroy_object(struct comp_xdg_toplevel *toplevel)
{
	struct comp_window *window = &toplevel->window;
	comp_xdg_toplevel_unmap(toplevel);
	if (window->server->focused == window)
		window->server->focused = NULL;
	wl_list_remove(&window->link);
	if (toplevel->xdg) {
		/* Popups of an unmapped toplevel too: their depth was counted
		 * from this role, which the xdg_surface may now trade for another. */
		comp_xdg_surface_dismiss_popups(toplevel->xdg);
		comp_xdg_surface_reset(toplevel->xdg);
		toplevel->xdg->window = NULL;
		toplevel->xdg->role = COMP_XDG_ROLE_NONE;
	}
	wl_resource_set_user_data(window->xdg_toplevel, NULL);
	free(window->title);
	free(window->app_id);
	free(toplevel);
}

static void toplevel_resource_destroy(struct wl_resource *resource)
{
	struct comp_xdg_toplevel *toplevel = toplevel_from_resource(resource);
	if (toplevel)
		comp_xdg_toplevel_destroy_object(toplevel);
}

static void toplevel_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void toplevel_set_parent(struct wl_client *client, struct wl_resource *resource,
                                struct wl_resource *parent)
{
	/* Placement over the parent is policy.c's rule 11; a parent that is
	 * this very window would be a loop. */
	struct comp_xdg_toplevel *toplevel = toplevel_from_resource(resource);
	struct comp_xdg_toplevel *p = parent ? toplevel_from_resource(parent) : NULL;
	if (toplevel && p == toplevel) {
		wl_resource_post_error(resource, XDG_TOPLEVEL_ERROR_INVALID_PARENT,
		                       "xdg_toplevel cannot be its own parent");
		return;
	}
	if (toplevel)
		toplevel->window.parent_id = p ? p->window.id : 0;
}

static char *dup_string(const char *s)
{
	/* Bounded: a title is shown in lists, not stored as a document. */
	return strndup(s, 4096);
}

static void toplevel_set_title(struct wl_client *client, struct wl_resource *resource,
                               const char *title)
{
	struct comp_xdg_toplevel *toplevel = toplevel_from_resource(resource);
	if (!toplevel)
		return;
	free(toplevel->window.title);
	toplevel->window.title = dup_string(title);
}

static void toplevel_set_app_id(struct wl_client *client, struct wl_resource *resource,
                                const char *app_id)
{
	struct comp_xdg_toplevel *toplevel = toplevel_from_resource(resource);
	if (!toplevel)
		return;
	free(toplevel->window.app_id);
	toplevel->window.app_id = dup_string(app_id);
}

static void toplevel_show_window_menu(struct wl_client *client, struct wl_resource *resource,
                                      struct wl_resource *seat, uint32_t serial, int32_t x,
                                      int32_t y)
{
	/* No window menu (not advertised in wm_capabilities). */
}

/* A maximized or fullscreen window keeps its place and size. */
static void grab(struct wl_resource *resource, uint32_t serial, bool resize, uint32_t edges)
{
	struct comp_xdg_toplevel *toplevel = toplevel_from_resource(resource);
	struct comp_window *window = toplevel ? &toplevel->window : NULL;
	if (window && !window->maximized && !window->fullscreen)
		window->server->policy->request_move(window->server, window,
		                                     wl_resource_get_client(resource), serial,
		                                     resize, edges);
}

static void toplevel_move(struct wl_client *client, struct wl_resource *resource,
                          struct wl_resource *seat, uint32_t serial)
{
	grab(resource, serial, false, 0);
}

static void toplevel_resize(struct wl_client *client, struct wl_resource *resource,
                            struct wl_resource *seat, uint32_t serial, uint32_t edges)
{
	switch (edges) {
	case XDG_TOPLEVEL_RESIZE_EDGE_NONE:
	case XDG_TOPLEVEL_RESIZE_EDGE_TOP:
	case XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM:
	case XDG_TOPLEVEL_RESIZE_EDGE_LEFT:
	case XDG_TOPLEVEL_RESIZE_EDGE_TOP_LEFT:
	case XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM_LEFT:
	case XDG_TOPLEVEL_RESIZE_EDGE_RIGHT:
	case XDG_TOPLEVEL_RESIZE_EDGE_TOP_RIGHT:
	case XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM_RIGHT:
		grab(resource, serial, true, edges);
		break;
	default:
		wl_resource_post_error(resource, XDG_TOPLEVEL_ERROR_INVALID_RESIZE_EDGE,
		                       "xdg_toplevel.resize: invalid edge %u", edges);
	}
}

static void toplevel_set_size_hint(struct wl_resource *resource, int32_t w, int32_t h,
                                   bool max)
{
	struct comp_xdg_toplevel *toplevel = toplevel_from_resource(resource);
	if (!toplevel)
		return;
	if (w < 0 || h < 0) {
		wl_resource_post_error(resource, XDG_TOPLEVEL_ERROR_INVALID_SIZE,
		                       "xdg_toplevel.set_%s_size: negative size %dx%d",
		                       max ? "max" : "min", w, h);
		return;
	}
	if (max) {
		toplevel->pending_max_w = w;
		toplevel->pending_max_h = h;
	} else {
		toplevel->pending_min_w = w;
		toplevel->pending_min_h = h;
	}
}

static void toplevel_set_max_size(struct wl_client *client, struct wl_resource *resource,
                                  int32_t width, int32_t height)
{
	toplevel_set_size_hint(resource, width, height, true);
}

static void toplevel_set_min_size(struct wl_client *client, struct wl_resource *resource,
                                  int32_t width, int32_t height)
{
	toplevel_set_size_hint(resource, width, height, false);
}

static void toplevel_set_maximized(struct wl_client *client, struct wl_resource *resource)
{
	struct comp_xdg_toplevel *toplevel = toplevel_from_resource(resource);
	if (toplevel)
		toplevel->window.server->policy->request_maximize(&toplevel->window, true);
}

static void toplevel_unset_maximized(struct wl_client *client, struct wl_resource *resource)
{
	struct comp_xdg_toplevel *toplevel = toplevel_from_resource(resource);
	if (toplevel)
		toplevel->window.server->policy->request_maximize(&toplevel->window, false);
}

static void toplevel_set_fullscreen(struct wl_client *client, struct wl_resource *resource,
                                    struct wl_resource *output)
{
	struct comp_xdg_toplevel *toplevel = toplevel_from_resource(resource);
	if (toplevel)
		toplevel->window.server->policy->request_fullscreen(&toplevel->window, true);
}

static void toplevel_unset_fullscreen(struct wl_client *client, struct wl_resource *resource)
{
	struct comp_xdg_toplevel *toplevel = toplevel_from_resource(resource);
	if (toplevel)
		toplevel->window.server->policy->request_fullscreen(&toplevel->window, false);
}

static void toplevel_set_minimized(struct wl_client *client, struct wl_resource *resource)
{
	struct comp_xdg_toplevel *toplevel = toplevel_from_resource(resource);
	if (toplevel)
		toplevel->window.server->policy->request_minimize(&toplevel->window);
}

static const struct xdg_toplevel_interface toplevel_impl = {
	.destroy = toplevel_destroy,
	.set_parent = toplevel_set_parent,
	.set_title = toplevel_set_title,
	.set_app_id = toplevel_set_app_id,
	.show_window_menu = toplevel_show_window_menu,
	.move = toplevel_move,
	.resize = toplevel_resize,
	.set_max_size = toplevel_set_max_size,
	.set_min_size = toplevel_set_min_size,
	.set_maximized = toplevel_set_maximized,
	.unset_maximized = toplevel_unset_maximized,
	.set_fullscreen = toplevel_set_fullscreen,
	.unset_fullscreen = toplevel_unset_fullscreen,
	.set_minimized = toplevel_set_minimized,
};

void comp_xdg_toplevel_create(struct comp_xdg_surface *xdg, uint32_t id)
{
	struct wl_client *client = wl_resource_get_client(xdg->resource);
	struct wl_resource *resource = xdg->resource;
	struct comp_xdg_toplevel *toplevel = calloc(1, sizeof(*toplevel));
	if (!toplevel) {
		wl_client_post_no_memory(client);
		return;
	}
	struct comp_window *window = &toplevel->window;
	window->xdg_toplevel = wl_resource_create(client, &xdg_toplevel_interface,
	                                          wl_resource_get_version(resource), id);
	if (!window->xdg_toplevel) {
		free(toplevel);
		wl_client_post_no_memory(client);
		return;
	}
	window->server = xdg->server;
	window->impl = &toplevel_window_impl;
	window->id = ++xdg->server->next_window_id;
	window->surface = xdg->surface;
	window->xdg_surface = xdg->resource;
	toplevel->xdg = xdg;
	/* New windows start at the bottom; mapping raises them. */
	wl_list_insert(xdg->server->windows.prev, &window->link);
	xdg->role = COMP_XDG_ROLE_TOPLEVEL;
	xdg->window = window;
	wl_resource_set_implementation(window->xdg_toplevel, &toplevel_impl, toplevel,
	                               toplevel_resource_destroy);

	if (wl_resource_get_version(window->xdg_toplevel) >=
	    XDG_TOPLEVEL_WM_CAPABILITIES_SINCE_VERSION) {
		struct wl_array caps;
		wl_array_init(&caps);
		add_state(&caps, XDG_TOPLEVEL_WM_CAPABILITIES_MAXIMIZE);
		add_state(&caps, XDG_TOPLEVEL_WM_CAPABILITIES_FULLSCREEN);
		add_state(&caps, XDG_TOPLEVEL_WM_CAPABILITIES_MINIMIZE);
		xdg_toplevel_send_wm_capabilities(window->xdg_toplevel, &caps);
		wl_array_release(&caps);
	}
}

