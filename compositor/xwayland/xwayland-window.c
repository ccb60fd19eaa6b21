/* Xwayland's X windows on the compositor's screen. Each X window of the
 * model (xwm/) has an xwm_content; once WL_SURFACE_ID has paired it with
 * its wl_surface (role xwayland_surface), it shows when both are ready:
 * X has it mapped and the surface has a buffer.
 *  - A managed window is a compositor window (struct comp_window with
 *    the impl below), placed, stacked and focused by policy.c as an
 *    xdg_toplevel is; what the policy does to it goes back to X as
 *    ConfigureWindow, SetInputFocus / WM_TAKE_FOCUS, _NET_WM_STATE.
 *  - An override-redirect window (menu, tooltip) is shown where X put it,
 *    above every window, and never focused.
 * X root coordinates are the layout's, so that what X clients place
 * relative to their windows lands where they meant it. */
#include <stdlib.h>
#include <string.h>

#include "xdg-shell-server-protocol.h"
#include "xwm-types.h"

static void role_commit(struct comp_surface *surface);
static struct comp_window *xwayland_role_window(struct comp_surface *surface);

static const struct comp_surface_role xwayland_role = {
	.name = "xwayland_surface",
	.commit = role_commit,
	.window = xwayland_role_window,
};

static struct xwm_content *content_of(struct comp_window *window)
{
	struct xwm_content *c = wl_container_of(window, c, window);
	return c;
}

/* X requests are still to be made about it. */
static bool x_live(const struct xwm_content *c)
{
	return c->x && !c->wm->quiet && xwm_window_managed(c->x);
}

/* The policy's states, as the model publishes them (_NET_WM_STATE). */
static void sync_states(struct xwm_content *c)
{
	struct xwm_client *client = c->x ? c->x->client : NULL;
	if (!client)
		return;
	client->maximized = c->window.maximized;
	client->fullscreen = c->window.fullscreen;
	client->minimized = c->window.minimized;
	if (x_live(c))
		xwm_props_update_net_state(c->x);
}

/* The X input focus follows the compositor's: on the focused window when
 * it is an X window, else on none. */
static void sync_focus(struct xwm_content *c)
{
	if (!x_live(c))
		return;
	struct xwm *xwm = &c->wm->xwm;
	bool focused = c->window.server->focused == &c->window && c->window.mapped;
	if (focused && xwm->focused != c->x)
		xwm_set_focus(xwm, c->x);
	else if (!focused && xwm->focused == c->x)
		xwm_set_focus(xwm, NULL);
}

/* ------------------------------------------------- the window's impl */

static void xwindow_configure(struct comp_window *window, int width, int height)
{
	struct xwm_content *c = content_of(window);
	sync_states(c);
	/* 0x0: the client's own size, which an X client has already chosen. */
	if (x_live(c) && width > 0 && height > 0)
		xwm_window_move_resize(c->x, window->x, window->y, width, height);
	comp_xwm_schedule(c->wm);
}

static void xwindow_send_state(struct comp_window *window)
{
	struct xwm_content *c = content_of(window);
	sync_states(c);
	sync_focus(c);
	comp_xwm_schedule(c->wm);
}

static void xwindow_send_close(struct comp_window *window)
{
	struct xwm_content *c = content_of(window);
	if (x_live(c))
		xwm_window_send_close(c->x);
	comp_xwm_schedule(c->wm);
}

static void xwindow_moved(struct comp_window *window)
{
	struct xwm_content *c = content_of(window);
	if (c->surface && window->mapped && !comp_xsync_holds_place(c))
		comp_surface_set_position(c->surface, window->x, window->y);
	if (x_live(c) && (c->x->x != window->x || c->x->y != window->y))
		xwm_window_move_resize(c->x, window->x, window->y, c->x->width, c->x->height);
	comp_xwm_schedule(c->wm);
}

static void xwindow_move_on_ack(struct comp_window *window, int x, int y)
{
	/* X has no acks: the ConfigureWindow with the new size went first. */
	comp_window_set_position(window, x, y);
}

/* Minimize is ICCCM's iconic state, as duet-xwm makes it: the X window
 * unmapped (its client stops drawing; Xwayland drops its wl_surface) with
 * WM_STATE Iconic, while its compositor window stays mapped and minimized.
 * Shown again, X maps it and the new wl_surface shows once it has drawn. */
static void xwindow_set_hidden(struct comp_window *window, bool hidden)
{
	struct xwm_content *c = content_of(window);
	sync_states(c);
	if (hidden && c->surface)
		comp_surface_unmap(c->surface);
	if (x_live(c) && window->mapped && hidden != (c->iconic && !c->restoring)) {
		/* Hidden again while restoring: X has it mapped, so unmap it. */
		c->iconic = true;
		c->restoring = !hidden;
		xwm_window_set_hidden(c->x, hidden);
	} else if (!hidden && c->surface && window->mapped && !c->iconic) {
		/* The X side is gone (quiet): the surface is all there is. */
		comp_surface_map(c->surface, window->x, window->y);
		comp_stack_update(window->server);
	}
	comp_xwm_schedule(c->wm);
}

static void xwindow_raised(struct comp_window *window)
{
	struct xwm_content *c = content_of(window);
	if (x_live(c))
		xwm_window_raise(c->x);
	comp_xwm_schedule(c->wm);
}

static const struct comp_window_impl xwindow_impl = {
	.configure = xwindow_configure,
	.send_state = xwindow_send_state,
	.send_close = xwindow_send_close,
	.moved = xwindow_moved,
	.move_on_ack = xwindow_move_on_ack,
	.set_hidden = xwindow_set_hidden,
	.raised = xwindow_raised,
};

/* _NET_WM_MOVERESIZE's directions 0..7 (top-left, then clockwise) and 8
 * (move); the keyboard ones (9, 10) and cancel (11) are not taken. */
void comp_xwindow_begin_move(struct xwm_content *c, uint32_t direction)
{
	static const uint32_t edges[] = {
		XDG_TOPLEVEL_RESIZE_EDGE_TOP_LEFT, XDG_TOPLEVEL_RESIZE_EDGE_TOP,
		XDG_TOPLEVEL_RESIZE_EDGE_TOP_RIGHT, XDG_TOPLEVEL_RESIZE_EDGE_RIGHT,
		XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM_RIGHT, XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM,
		XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM_LEFT, XDG_TOPLEVEL_RESIZE_EDGE_LEFT,
	};
	if (!comp_xwindow_has_window(c) || direction > 8 || !c->wm->client)
		return;
	bool resize = direction < 8;
	if (!comp_seat_start_move_pressed(c->wm->server, &c->window, c->wm->client, resize,
	                                  resize ? edges[direction] : 0))
		xwm_debug(&c->wm->xwm, "0x%x: _NET_WM_MOVERESIZE %u without a held press of ours",
		          c->x->id, direction);
}

struct comp_window *comp_xwindow_window(struct xwm_content *c)
{
	struct comp_window *window = &c->window;
	if (window->server)
		return window;
	struct comp_server *server = c->wm->server;
	window->server = server;
	window->impl = &xwindow_impl;
	window->id = ++server->next_window_id;
	window->surface = c->surface;
	/* New windows start at the bottom; mapping raises them. */
	wl_list_insert(server->windows.prev, &window->link);
	return window;
}

/* The X window's window, where it is a managed one. */
static struct comp_window *xwayland_role_window(struct comp_surface *surface)
{
	struct xwm_content *c = surface->role_data;
	return c && comp_xwindow_has_window(c) ? &c->window : NULL;
}

/* ------------------------------------------------- showing and hiding */

static char *dup_name(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

static void copy_names(struct xwm_content *c)
{
	struct comp_window *window = &c->window;
	free(window->title);
	free(window->app_id);
	window->title = dup_name(c->x->client->name);
	window->app_id = dup_name(c->x->client->class_name);
	uint32_t pid = xwm_window_pid(c->x);
	window->pid = pid > 0 && pid <= INT32_MAX ? (int)pid : -1;
}

void comp_xwindow_named(struct xwm_content *c)
{
	/* Before its map, map_window copies them. */
	if (comp_xwindow_has_window(c) && c->window.mapped && c->x && c->x->client)
		copy_names(c);
}

/* WM_TRANSIENT_FOR as a compositor window's id (rule 11), 0 when it names
 * no managed window placed by the policy. */
static uint32_t transient_parent_id(struct xwm_content *c)
{
	xcb_window_t id = c->x->client->transient_for;
	struct xwm_window *parent = id ? xwm_window_lookup(&c->wm->xwm, id) : NULL;
	return parent && comp_xwindow_has_window(parent->content) ? parent->content->window.id
	                                                          : 0;
}

/* Whether window is an X window that X mapped after c: Xwayland draws
 * windows' first frames in its own order, and X's is the order its
 * clients and duet-xwm follow (policy rule 2). */
static bool mapped_later_in_x(struct comp_window *window, struct xwm_content *c)
{
	if (!window || window->impl != &xwindow_impl)
		return false;
	struct xwm_content *other = wl_container_of(window, other, window);
	return other->x && other->x->client && c->x->client &&
	       other->x->client->manage_order > c->x->client->manage_order;
}

static void map_window(struct xwm_content *c)
{
	struct comp_window *window = &c->window;
	struct xwm_client *client = c->x->client;
	window->mapped = true;
	window->geometry.x = window->geometry.y = 0;
	window->geometry.width = c->x->width;
	window->geometry.height = c->x->height;
	copy_names(c);
	window->min_width = client->hints.min_width;
	window->min_height = client->hints.min_height;
	window->max_width = client->hints.max_width;
	window->max_height = client->hints.max_height;
	window->parent_id = transient_parent_id(c);
	struct comp_window *focused = window->server->focused;
	if (!window->minimized && mapped_later_in_x(focused, c))
		comp_policy_window_mapped_below(window, focused);
	else
		comp_policy_window_mapped(window); /* places, raises, focuses */
	if (!window->minimized && c->surface)
		comp_surface_map(c->surface, window->x, window->y);
	comp_stack_update(window->server);
	sync_focus(c);
	comp_xwm_schedule(c->wm);
	wl_signal_emit_mutable(&window->server->window_mapped, window);
}

void comp_xwindow_map_iconic(struct xwm_content *c)
{
	if (!comp_xwindow_has_window(c) || c->window.mapped)
		return;
	c->iconic = true;
	c->restoring = false;
	c->window.minimized = true; /* placed and listed, not focused */
	map_window(c);
}

/* A restored window's new wl_surface has drawn: it shows where it was. */
static void show_restored(struct xwm_content *c)
{
	struct comp_window *window = &c->window;
	c->iconic = c->restoring = false;
	window->geometry.width = c->x->width;
	window->geometry.height = c->x->height;
	comp_surface_map(c->surface, window->x, window->y);
	comp_stack_update(window->server);
	/* Focused at the restore, when it had no surface to type into. */
	comp_policy_window_surface_changed(window);
	sync_focus(c);
	comp_xwm_schedule(c->wm);
}

static void unmap_window(struct xwm_content *c)
{
	struct comp_window *window = &c->window;
	c->iconic = c->restoring = false;
	if (!window->mapped)
		return;
	if (c->surface)
		comp_surface_unmap(c->surface);
	window->mapped = false;
	window->minimized = false;
	comp_policy_window_unmapped(window); /* refocuses */
	if (window->server->focused == window)
		window->server->focused = NULL;
	comp_stack_update(window->server);
	wl_signal_emit_mutable(&window->server->window_unmapped, window);
}

static void show_unmanaged(struct xwm_content *c)
{
	c->unmanaged_shown = true;
	wl_list_insert(c->wm->unmanaged.prev, &c->unmanaged_link);
	comp_surface_map(c->surface, c->x->x, c->x->y);
	comp_stack_update(c->wm->server);
}

static void hide_unmanaged(struct xwm_content *c)
{
	if (!c->unmanaged_shown)
		return;
	c->unmanaged_shown = false;
	wl_list_remove(&c->unmanaged_link);
	wl_list_init(&c->unmanaged_link);
	if (c->surface)
		comp_surface_unmap(c->surface);
	comp_stack_update(c->wm->server);
}

void comp_xwindow_update(struct xwm_content *c)
{
	bool ready = c->x && c->x->viewable && c->surface && c->surface->texture && !c->doomed;
	if (c->x && c->x->override_redirect) {
		if (ready && !c->unmanaged_shown)
			show_unmanaged(c);
		else if (!ready)
			hide_unmanaged(c);
	} else if (comp_xwindow_has_window(c)) {
		if (!c->x || !xwm_window_managed(c->x)) {
			unmap_window(c); /* withdrawn, iconic or not */
		} else if (c->iconic) {
			/* Our unmap, or our map still waiting for its surface. */
			if (c->restoring && ready)
				show_restored(c);
		} else if (ready && !c->window.mapped) {
			map_window(c);
		} else if (!ready) {
			unmap_window(c);
		}
	}
}

void comp_xwindow_configured(struct xwm_content *c)
{
	struct xwm_window *x = c->x;
	if (comp_xwindow_has_window(c)) {
		struct comp_window *window = &c->window;
		window->geometry.width = x->width;
		window->geometry.height = x->height;
		window->x = x->x;
		window->y = x->y;
		/* Resized with a sync request: the old content stays where it
		 * was until the new one comes (xwayland-sync.c). */
		if (c->surface && window->mapped && !comp_xsync_holds_place(c)) {
			comp_surface_set_position(c->surface, x->x, x->y);
			comp_layout_repaint_damaged(window->server);
		}
	} else if (c->unmanaged_shown) {
		comp_surface_set_position(c->surface, x->x, x->y);
		comp_layout_repaint_damaged(c->wm->server);
	}
}

/* --------------------------------------------------------- pairing */

static void role_commit(struct comp_surface *surface)
{
	struct xwm_content *c = surface->role_data;
	comp_xwindow_update(c);
	comp_xsync_committed(c);
}

static void handle_surface_destroy(struct wl_listener *listener, void *data)
{
	struct xwm_content *c = wl_container_of(listener, c, surface_destroy);
	comp_xwindow_unpair(c);
}

void comp_xwindow_pair(struct xwm_content *c, struct comp_surface *surface)
{
	c->surface_id = 0;
	if ((surface->role && surface->role != &xwayland_role) || surface->role_data) {
		comp_log("xwayland: X window 0x%x: wl_surface@%u already has the role %s",
		         c->x->id, wl_resource_get_id(surface->resource),
		         surface->role ? surface->role->name : "xwayland_surface");
		return;
	}
	comp_surface_set_role(surface, &xwayland_role, c, surface->resource, 0);
	c->surface = surface;
	c->surface_destroy.notify = handle_surface_destroy;
	wl_signal_add(&surface->destroy_signal, &c->surface_destroy);
	if (comp_xwindow_has_window(c))
		c->window.surface = surface;
	/* Its texture, charged before the X window was known, is its X
	 * client's now: one over its budget is killed, not shown. */
	comp_xbudget_paired(c);
	comp_xwindow_update(c);
}

void comp_xwindow_unpair(struct xwm_content *c)
{
	c->surface_id = 0;
	if (!c->surface)
		return;
	if (!c->iconic) /* an iconic window stays, minimized, without it */
		unmap_window(c);
	hide_unmanaged(c);
	c->surface->role_data = NULL;
	wl_list_remove(&c->surface_destroy.link);
	c->surface = NULL;
	c->window.surface = NULL;
}

void comp_xwindow_destroy(struct xwm_content *c)
{
	comp_xwindow_unpair(c);
	hide_unmanaged(c);
	struct comp_window *window = &c->window;
	if (!window->server)
		return;
	unmap_window(c);
	if (window->server->focused == window)
		window->server->focused = NULL;
	wl_list_remove(&window->link);
	free(window->title);
	free(window->app_id);
	window->title = window->app_id = NULL;
	window->server = NULL;
}

void comp_xwm_for_each_unmanaged(struct comp_xwm *wm, comp_surface_iter_t fn, void *data)
{
	struct xwm_content *c;
	wl_list_for_each(c, &wm->unmanaged, unmanaged_link)
		comp_surface_tree_for_each(c->surface, fn, data);
}
