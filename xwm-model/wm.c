/* Window management: becoming the WM, adopting windows, and the core X
 * events, dispatched through a table indexed by response type (2bwm's
 * way). Extension events (Damage, Sync) have codes chosen by the server at
 * run time and are the host's: it is asked first.
 *
 * Every top-level window (child of the root) has a struct xwm_window
 * (window.c); "managed" marks the client windows the WM manages.
 *
 * Windows vanish whenever their client likes, so a request about a window
 * may fail with BadWindow (or BadMatch, BadDrawable, BadDamage...). Such
 * requests are sent unchecked on purpose: their errors arrive as events
 * and are logged at debug level by handle_error, and the DestroyNotify that
 * follows cleans up. The only requests whose failure matters (becoming WM,
 * redirecting) are checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xcb/xcbext.h> /* xcb_poll_for_reply */

#include "model.h"

/* ---------------------------------------------------- windows' geometry */

static struct xwm_window *window_at_top(struct xwm *xwm)
{
	if (xwm->stack.prev == &xwm->stack)
		return NULL;
	return duet_container_of(xwm->stack.prev, struct xwm_window, link);
}


/* Attributes the host needs (depth, visual, class). */
static void window_read_attributes(struct xwm_window *w)
{
	xcb_connection_t *c = w->xwm->conn;
	xcb_get_window_attributes_cookie_t ac = xcb_get_window_attributes(c, w->id);
	xcb_get_geometry_cookie_t gc = xcb_get_geometry(c, w->id);
	xcb_get_window_attributes_reply_t *a = xcb_get_window_attributes_reply(c, ac, NULL);
	xcb_get_geometry_reply_t *g = xcb_get_geometry_reply(c, gc, NULL);

	if (a) {
		w->input_only = a->_class == XCB_WINDOW_CLASS_INPUT_ONLY;
		w->visual = a->visual;
		w->override_redirect = a->override_redirect;
	}
	if (g)
		w->depth = g->depth;
	free(a);
	free(g);
}

/* A new window's depth, asked at its CreateNotify without waiting: the
 * X server allocates ids for the client and the client maps soon after,
 * so the reply is normally in long before anything needs it. Until then
 * the window has no node and no Damage; the events that need them (its
 * MapRequest, its MapNotify) wait for the reply if it is still out, which
 * costs what the blocking read at CreateNotify cost every window. An
 * InputOnly window has depth 0 (GetGeometry), so one request tells both
 * the depth and the class. */
static void ask_geometry(struct xwm_window *w)
{
	w->geometry_sequence = xcb_get_geometry(w->xwm->conn, w->id).sequence;
	w->geometry_pending = true;
	w->xwm->geometries_pending++;
}

static bool resolve_geometry(struct xwm_window *w, bool wait)
{
	struct xwm *xwm = w->xwm;
	void *reply = NULL;

	if (!w->geometry_pending)
		return true;
	if (!xcb_poll_for_reply(xwm->conn, w->geometry_sequence, &reply, NULL)) {
		if (!wait)
			return false;
		reply = xcb_wait_for_reply(xwm->conn, w->geometry_sequence, NULL);
	}
	xwm->host->processed(xwm->host_data, w->geometry_sequence);
	w->geometry_pending = false;
	xwm->geometries_pending--;
	xcb_get_geometry_reply_t *g = reply;
	if (g) {
		w->depth = g->depth;
		w->input_only = g->depth == 0;
	}
	free(reply);
	/* A NULL reply: the window is already gone (its DestroyNotify
	 * follows); depth 0 keeps it out of compositing. */
	xwm->host->created(xwm->host_data, w);
	return true;
}

/* The window whose geometry request is the oldest still out. Windows are
 * restacked after creation, so the stacking order says nothing of it. */
static struct xwm_window *oldest_geometry(struct xwm *xwm)
{
	struct xwm_window *oldest = NULL;

	if (xwm->geometries_pending == 0)
		return NULL;
	for (struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_window *w = duet_container_of(l, struct xwm_window, link);
		if (w->geometry_pending &&
		    (!oldest || (int32_t)(w->geometry_sequence - oldest->geometry_sequence) < 0))
			oldest = w;
	}
	return oldest;
}

bool xwm_wm_oldest_reply(struct xwm *xwm, unsigned int *sequence)
{
	struct xwm_window *w = oldest_geometry(xwm);
	if (w)
		*sequence = w->geometry_sequence;
	return w != NULL;
}

bool xwm_wm_poll_oldest(struct xwm *xwm)
{
	struct xwm_window *w = oldest_geometry(xwm);
	return w && resolve_geometry(w, false);
}

void xwm_wm_finish(struct xwm *xwm)
{
	xwm_kills_finish(xwm);
	while (xwm->stack.next != &xwm->stack)
		xwm_window_free(duet_container_of(xwm->stack.next, struct xwm_window, link));
	xwm_wintable_finish(&xwm->windows);
	xwm_props_finish(xwm);
	xwm_flood_finish(xwm);
}

/* ------------------------------------------------------------ managing */

static void grab_buttons(struct xwm_window *w)
{
	/* Click to activate: a synchronous passive grab freezes the pointer
	 * until handle_button_press replays the click to the client. The
	 * keyboard too: keys typed right after the click wait in the server
	 * until we have moved the focus, whatever our lag (a client flooding
	 * us), instead of reaching the window focused before. */
	if (w->client->button_grabbed)
		return;
	xcb_grab_button(w->xwm->conn, 0, w->id, XCB_EVENT_MASK_BUTTON_PRESS,
	                XCB_GRAB_MODE_SYNC, XCB_GRAB_MODE_SYNC, XCB_NONE, XCB_NONE,
	                XCB_BUTTON_INDEX_ANY, XCB_MOD_MASK_ANY);
	w->client->button_grabbed = true;
}

/* false: out of memory for its client part, not managed. */
static bool manage(struct xwm_window *w)
{
	struct xwm *xwm = w->xwm;
	struct xwm_client *c = xwm_window_client(w);
	uint32_t mask = XCB_EVENT_MASK_PROPERTY_CHANGE;

	if (!c)
		return false;
	if (!c->managed) {
		c->managed = true;
		c->manage_order = ++xwm->manage_counter;
		xwm_props_reset_window(w);
		xcb_change_window_attributes(xwm->conn, w->id, XCB_CW_EVENT_MASK, &mask);
		xwm_props_read_all(w);
		grab_buttons(w);
		xwm_log("managing 0x%x \"%s\" (%s/%s) %dx%d", w->id, c->name, c->instance,
		        c->class_name, w->width, w->height);
	}
	return true;
}

static void show(struct xwm_window *w)
{
	w->client->mapped = true;
	w->client->minimized = false;
	/* Placed and raised while still unmapped: the client's first Expose
	 * comes at its final place, and the server damages a mapped
	 * window it moves, which must not pass for the client's drawing. */
	xwm_policy_of(w->xwm)->window_place(w);
	if (w->client->initial_iconic) {
		/* ICCCM 4.1.4: a client whose WM_HINTS initial_state is
		 * IconicState starts iconic: managed and listed, not mapped,
		 * WM_STATE Iconic, until activated (as a minimized window). */
		w->client->minimized = true;
		xwm_props_set_wm_state(w, XWM_WM_STATE_ICONIC);
		xwm_props_update_net_state(w);
		xwm_props_update_client_lists(w->xwm);
		return;
	}
	w->xwm->host->mapping(w->xwm->host_data, w);
	xcb_map_window(w->xwm->conn, w->id);
	xwm_props_set_wm_state(w, XWM_WM_STATE_NORMAL);
	xwm_policy_of(w->xwm)->window_mapped(w);
	xwm_props_update_net_state(w);
	xwm_props_update_client_lists(w->xwm);
}

/* The client withdrew the window (unmap or destroy): it is no longer ours
 * to manage until it maps again. */
static void withdraw(struct xwm_window *w, bool destroyed)
{
	struct xwm_client *c = w->client;

	if (!c || !c->managed)
		return;
	bool was_mapped = c->mapped;
	c->mapped = false;
	c->minimized = false;
	c->managed = false;
	if (!destroyed)
		xwm_props_set_wm_state(w, XWM_WM_STATE_WITHDRAWN);
	if (was_mapped || w->xwm->focused == w)
		xwm_policy_of(w->xwm)->window_unmapped(w);
	if (w->xwm->focused == w)
		xwm_set_focus(w->xwm, NULL);
	xwm_props_update_client_lists(w->xwm);
}

/* Restacks w just above the window above (NONE = bottom), as the server
 * reported it. */
static void restack(struct xwm *xwm, struct xwm_window *w, xcb_window_t above)
{
	struct xwm_window *sibling = above ? xwm_window_lookup(xwm, above) : NULL;

	if (above && !sibling) {
		/* A window we do not track. Above the composite overlay
		 * (a client can stack itself there) is above all we draw;
		 * anything else keeps its place rather than drop to the
		 * bottom. */
		if (above != xwm->overlay || window_at_top(xwm) == w) {
			xwm_debug(xwm, "0x%x restacked above unknown 0x%x: kept in place", w->id,
			          above);
			return;
		}
		sibling = window_at_top(xwm);
	}
	if (sibling == w)
		return;
	duet_list_remove(&w->link);
	duet_list_insert_after(sibling ? &sibling->link : &xwm->stack, &w->link);
	xwm->host->restacked(xwm->host_data, w);
}

/* ------------------------------------------------------ event handlers */

static void handle_error(struct xwm *xwm, xcb_generic_event_t *ev)
{
	xcb_generic_error_t *e = (xcb_generic_error_t *)ev;
	/* Expected whenever a window vanishes under a request about it. */
	xwm_debug(xwm, "X error %u (request %u.%u, resource 0x%x, seq %u)", e->error_code,
	          e->major_code, e->minor_code, e->resource_id, e->sequence);
}

static void handle_create_notify(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xcb_create_notify_event_t *ev = (xcb_create_notify_event_t *)generic;
	/* The overlay is ours, not a window to composite (that would feed
	 * our own frames back into the scene). */
	if (ev->parent != xwm->root || ev->window == xwm->overlay ||
	    xwm_window_lookup(xwm, ev->window))
		return;
	struct xwm_window *w = xwm_window_create(xwm, ev->window, ev->x, ev->y, ev->width,
	                                     ev->height, ev->border_width,
	                                     ev->override_redirect);
	if (!w)
		return;
	ask_geometry(w);
}

static void handle_destroy_notify(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xcb_destroy_notify_event_t *ev = (xcb_destroy_notify_event_t *)generic;
	struct xwm_window *w = xwm_window_lookup(xwm, ev->window);
	if (!w)
		return;
	withdraw(w, true);
	xwm_window_free(w);
}

static void handle_map_request(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xcb_map_request_event_t *ev = (xcb_map_request_event_t *)generic;
	struct xwm_window *w = xwm_window_lookup(xwm, ev->window);
	if (!w) {
		/* Not a child of the root we know of: let it map. */
		xcb_map_window(xwm->conn, ev->window);
		return;
	}
	resolve_geometry(w, true);
	if (xwm_window_managed(w) && w->client->mapped) {
		/* Already shown (e.g. a repeated request while minimized). */
		xwm_policy_of(xwm)->activate(w);
		return;
	}
	if (!manage(w)) {
		xcb_map_window(xwm->conn, ev->window);
		return;
	}
	show(w);
}

static void handle_map_notify(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xcb_map_notify_event_t *ev = (xcb_map_notify_event_t *)generic;
	struct xwm_window *w = xwm_window_lookup(xwm, ev->window);
	if (!w || ev->event != xwm->root)
		return;
	resolve_geometry(w, true);
	w->viewable = true;
	xwm->host->mapped(xwm->host_data, w, false);
}

static void handle_unmap_notify(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xcb_unmap_notify_event_t *ev = (xcb_unmap_notify_event_t *)generic;
	struct xwm_window *w = xwm_window_lookup(xwm, ev->window);
	if (!w)
		return;
	/* A synthetic UnmapNotify (ICCCM 4.1.4) withdraws a window that the
	 * client had left iconic; a real one arrives through the root. */
	if (ev->event == xwm->root || (ev->response_type & 0x80)) {
		if (!(ev->response_type & 0x80)) {
			w->viewable = false;
			xwm->host->unmapped(xwm->host_data, w);
		}
		if (!(ev->response_type & 0x80) && w->client && w->client->ignore_unmaps > 0) {
			w->client->ignore_unmaps--;
			return;
		}
		withdraw(w, false);
	}
}

static void handle_configure_request(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xcb_configure_request_event_t *ev = (xcb_configure_request_event_t *)generic;
	struct xwm_window *w = xwm_window_lookup(xwm, ev->window);
	struct xwm_client *c = w && !w->override_redirect ? xwm_window_client(w) : NULL;

	if (c) {
		/* Merged with any request still pending for this window: a
		 * client flooding ConfigureRequests gets one configure per
		 * batch of events instead of making the server reallocate the
		 * window's backing pixmap for each. */
		if (!c->cfg_pending) {
			c->cfg_pending = true;
			c->cfg_mask = 0;
			c->cfg_reads_set = xwm_props_newest_out(xwm, &c->cfg_reads);
			xwm->configures_pending++;
		}
		c->cfg_mask |= ev->value_mask;
		if (ev->value_mask & XCB_CONFIG_WINDOW_X)
			c->cfg_x = ev->x;
		if (ev->value_mask & XCB_CONFIG_WINDOW_Y)
			c->cfg_y = ev->y;
		if (ev->value_mask & XCB_CONFIG_WINDOW_WIDTH)
			c->cfg_width = ev->width;
		if (ev->value_mask & XCB_CONFIG_WINDOW_HEIGHT)
			c->cfg_height = ev->height;
		return;
	}
	/* A window we do not track (not a child of the root): pass it on. */
	uint32_t values[7];
	int n = 0;
	uint16_t mask = ev->value_mask & (XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y |
	                                  XCB_CONFIG_WINDOW_WIDTH | XCB_CONFIG_WINDOW_HEIGHT |
	                                  XCB_CONFIG_WINDOW_BORDER_WIDTH);
	if (mask & XCB_CONFIG_WINDOW_X)
		values[n++] = (uint32_t)ev->x;
	if (mask & XCB_CONFIG_WINDOW_Y)
		values[n++] = (uint32_t)ev->y;
	if (mask & XCB_CONFIG_WINDOW_WIDTH)
		values[n++] = (uint32_t)xwm_hints_clamp_size(ev->width);
	if (mask & XCB_CONFIG_WINDOW_HEIGHT)
		values[n++] = (uint32_t)xwm_hints_clamp_size(ev->height);
	if (mask & XCB_CONFIG_WINDOW_BORDER_WIDTH)
		values[n++] = ev->border_width;
	xcb_configure_window(xwm->conn, ev->window, mask, values);
}

static void handle_configure_notify(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xcb_configure_notify_event_t *ev = (xcb_configure_notify_event_t *)generic;
	if (ev->event != xwm->root)
		return;
	if (ev->window == xwm->root) {
		/* Screen size changes (RandR) are not supported: the output
		 * stays at its start size. */
		return;
	}
	struct xwm_window *w = xwm_window_lookup(xwm, ev->window);
	if (!w)
		return;
	/* Sent before the server processed our last configure of w: it
	 * shows a geometry and stacking we have already replaced (our model
	 * holds what we asked for); the notify of our request follows. */
	if (w->configure_sent && (int32_t)(generic->full_sequence - w->configure_seq) < 0) {
		xwm_debug(xwm, "0x%x: stale ConfigureNotify %dx%d (seq %u < %u) not applied", w->id,
		          ev->width, ev->height, generic->full_sequence, w->configure_seq);
		return;
	}
	bool resized = w->width != ev->width || w->height != ev->height ||
	               w->border != ev->border_width;
	w->x = ev->x;
	w->y = ev->y;
	w->width = ev->width;
	w->height = ev->height;
	w->border = ev->border_width;
	w->override_redirect = ev->override_redirect;
	restack(xwm, w, ev->above_sibling);
	xwm->host->configured(xwm->host_data, w, resized);
}

static void handle_reparent_notify(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xcb_reparent_notify_event_t *ev = (xcb_reparent_notify_event_t *)generic;
	struct xwm_window *w = xwm_window_lookup(xwm, ev->window);

	if (ev->parent == xwm->root && !w && ev->window != xwm->overlay) {
		w = xwm_window_create(xwm, ev->window, ev->x, ev->y, 1, 1, 0, ev->override_redirect);
		if (!w)
			return;
		window_read_attributes(w);
		xcb_get_geometry_reply_t *g =
			xcb_get_geometry_reply(xwm->conn, xcb_get_geometry(xwm->conn, w->id), NULL);
		if (g) {
			w->width = g->width;
			w->height = g->height;
			w->border = g->border_width;
			free(g);
		}
		xwm->host->created(xwm->host_data, w);
	} else if (ev->parent != xwm->root && w) {
		/* Reparented away (e.g. into an embedder): no longer top-level. */
		withdraw(w, false);
		xwm_window_free(w);
	}
}

static void handle_circulate_notify(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xcb_circulate_notify_event_t *ev = (xcb_circulate_notify_event_t *)generic;
	struct xwm_window *w = xwm_window_lookup(xwm, ev->window);
	if (!w)
		return;
	if (ev->place == XCB_PLACE_ON_TOP)
		restack(xwm, w, window_at_top(xwm) ? window_at_top(xwm)->id : XCB_NONE);
	else
		restack(xwm, w, XCB_NONE);
}

static void handle_circulate_request(struct xwm *xwm, xcb_generic_event_t *generic)
{
	/* Clients may not restack themselves (policy rule 10); nothing to do. */
	(void)xwm;
	(void)generic;
}

static void handle_property_notify(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xcb_property_notify_event_t *ev = (xcb_property_notify_event_t *)generic;
	xwm->last_time = ev->time;
	if (ev->window == xwm->check_window && ev->atom == xwm->atoms._DUET_KILL) {
		xwm_kill_marker(xwm, generic->full_sequence);
		return;
	}
	if (ev->window == xwm->check_window && ev->atom == xwm->atoms._DUET_FLOOD_PROBE) {
		xwm_flood_probe_back(xwm, generic->full_sequence);
		return;
	}
	struct xwm_window *w = xwm_window_lookup(xwm, ev->window);
	if (w && xwm_window_managed(w))
		xwm_props_changed(w, ev->atom, ev->state, generic->full_sequence);
}

static void handle_client_message(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xwm_handle_client_message(xwm, (xcb_client_message_event_t *)generic);
}

static void handle_button_press(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xcb_button_press_event_t *ev = (xcb_button_press_event_t *)generic;
	xwm->last_time = xwm->event_time = ev->time;
	struct xwm_window *w = xwm_window_lookup(xwm, ev->event);
	if (w && xwm_window_managed(w) && xwm->focused != w)
		xwm_policy_of(xwm)->activate(w);
	/* Always release the frozen pointer, sending the click on. */
	xcb_allow_events(xwm->conn, XCB_ALLOW_REPLAY_POINTER, ev->time);
}

static void handle_selection_clear(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xcb_selection_clear_event_t *ev = (xcb_selection_clear_event_t *)generic;
	if (ev->selection == xwm->atoms._NET_WM_CM_S0 || ev->selection == xwm->atoms.WM_S0) {
		xwm_log("another %s took %s; exiting",
		        ev->selection == xwm->atoms.WM_S0 ? "window manager" : "compositing manager",
		        ev->selection == xwm->atoms.WM_S0 ? "WM_S0" : "_NET_WM_CM_S0");
		xwm->quit = true;
	}
}

static void apply_configure(struct xwm_window *w)
{
	struct xwm_client *c = w->client;

	c->cfg_pending = false;
	w->xwm->configures_pending--;
	xwm_policy_of(w->xwm)->configure_request(w, c->cfg_mask, c->cfg_x, c->cfg_y,
	                                         c->cfg_width, c->cfg_height);
}

/* settled: every property read is in (xwm_props_settle), so every merged
 * request is applied; otherwise only those whose reads are in, the rest
 * at a later batch. A client that sets WM_NORMAL_HINTS and then asks for
 * a size gets the size its new hints allow, and none of this waits: a
 * client flooding both costs no round trip per batch (one batch's
 * requests are merged with the hints read when the first came). */
static void apply_merged(struct xwm *xwm, bool settled)
{
	xwm_answer_frame_extents(xwm);
	for (struct duet_list *l = xwm->stack.next; l != &xwm->stack && xwm->configures_pending > 0;
	     l = l->next) {
		struct xwm_window *w = duet_container_of(l, struct xwm_window, link);
		struct xwm_client *c = w->client;
		if (c && c->cfg_pending &&
		    (settled || !c->cfg_reads_set || xwm_props_in_up_to(xwm, c->cfg_reads)))
			apply_configure(w);
	}
}

void xwm_wm_flush_merged(struct xwm *xwm)
{
	apply_merged(xwm, false);
	xwm_flood_sweep(xwm);
}

typedef void (*xwm_event_handler)(struct xwm *xwm, xcb_generic_event_t *ev);

static const xwm_event_handler handlers[XCB_NO_OPERATION] = {
	[0] = handle_error,
	[XCB_BUTTON_PRESS] = handle_button_press,
	[XCB_CREATE_NOTIFY] = handle_create_notify,
	[XCB_DESTROY_NOTIFY] = handle_destroy_notify,
	[XCB_UNMAP_NOTIFY] = handle_unmap_notify,
	[XCB_MAP_NOTIFY] = handle_map_notify,
	[XCB_MAP_REQUEST] = handle_map_request,
	[XCB_REPARENT_NOTIFY] = handle_reparent_notify,
	[XCB_CONFIGURE_NOTIFY] = handle_configure_notify,
	[XCB_CONFIGURE_REQUEST] = handle_configure_request,
	[XCB_CIRCULATE_NOTIFY] = handle_circulate_notify,
	[XCB_CIRCULATE_REQUEST] = handle_circulate_request,
	[XCB_PROPERTY_NOTIFY] = handle_property_notify,
	[XCB_SELECTION_CLEAR] = handle_selection_clear,
	[XCB_CLIENT_MESSAGE] = handle_client_message,
};

/* The window an event that a client's request makes us handle names. */
static xcb_window_t client_window(xcb_generic_event_t *ev, uint8_t type)
{
	switch (type) {
	case XCB_PROPERTY_NOTIFY:
		return ((xcb_property_notify_event_t *)ev)->window;
	case XCB_CONFIGURE_REQUEST:
		return ((xcb_configure_request_event_t *)ev)->window;
	case XCB_MAP_REQUEST:
		return ((xcb_map_request_event_t *)ev)->window;
	case XCB_CIRCULATE_REQUEST:
		return ((xcb_circulate_request_event_t *)ev)->window;
	case XCB_CLIENT_MESSAGE:
		return ((xcb_client_message_event_t *)ev)->window;
	default:
		return XCB_WINDOW_NONE;
	}
}

void xwm_wm_handle_event(struct xwm *xwm, xcb_generic_event_t *ev)
{
	uint8_t type = ev->response_type & 0x7f;

	xwm_flood_note(xwm, client_window(ev, type), ev->full_sequence);
	if (xwm->host->event(xwm->host_data, ev))
		return;
	/* A client asking the same thing again and again (a flood) is
	 * answered once per batch, and costs no wait for its properties. */
	if (type == XCB_CLIENT_MESSAGE &&
	    xwm_client_message_merged(xwm, (xcb_client_message_event_t *)ev))
		return;
	/* Events that make the policy act read what clients asked in their
	 * properties: the values of every PropertyNotify before them first. */
	if (type == XCB_MAP_REQUEST || type == XCB_UNMAP_NOTIFY || type == XCB_DESTROY_NOTIFY ||
	    type == XCB_CLIENT_MESSAGE || type == XCB_BUTTON_PRESS)
		xwm_props_settle(xwm);
	/* Anything else may depend on the geometry a pending request asks
	 * for (a MapRequest places the window, _DUET_SYNC promises that all
	 * is handled): apply them first. */
	if ((xwm->configures_pending > 0 || xwm->extents_pending > 0) &&
	    type != XCB_CONFIGURE_REQUEST && type != XCB_CONFIGURE_NOTIFY &&
	    type != XCB_PROPERTY_NOTIFY) {
		if (xwm->configures_pending > 0)
			xwm_props_settle(xwm);
		apply_merged(xwm, true);
	}
	/* Synthetic events (bit 7) matter only for UnmapNotify (ICCCM
	 * withdrawal) and ClientMessage, which is always sent. */
	if ((ev->response_type & 0x80) && type != XCB_UNMAP_NOTIFY &&
	    type != XCB_CLIENT_MESSAGE)
		return;
	if (type < XCB_NO_OPERATION && handlers[type])
		handlers[type](xwm, ev);
	xwm->event_time = 0;
}

/* ------------------------------------------------------------- startup */

/* Finds SERVERTIME among SYNC's system counters (needs SYNC initialised,
 * by the host).
 * The list is walked by hand: each entry is counter (4), resolution (8),
 * name length (2) and the name, padded to 4 bytes, and libxcb's iterator
 * pads it wrongly (it reads the names 2 bytes off after the first). */
static void find_servertime(struct xwm *xwm)
{
	xcb_sync_list_system_counters_reply_t *r = xcb_sync_list_system_counters_reply(
		xwm->conn, xcb_sync_list_system_counters(xwm->conn), NULL);
	if (!r)
		return;
	const uint8_t *p = (const uint8_t *)(r + 1), *end = p + (size_t)r->length * 4;
	for (uint32_t i = 0; i < r->counters_len && p + 14 <= end; i++) {
		uint32_t counter;
		uint16_t len;
		memcpy(&counter, p, 4);
		memcpy(&len, p + 12, 2);
		if (p + 14 + len > end)
			break;
		if (len == 10 && memcmp(p + 14, "SERVERTIME", 10) == 0)
			xwm->servertime = counter;
		p += (14 + (size_t)len + 3) & ~(size_t)3;
	}
	free(r);
}

static void adopt_existing(struct xwm *xwm)
{
	xcb_connection_t *c = xwm->conn;
	xcb_query_tree_reply_t *tree =
		xcb_query_tree_reply(c, xcb_query_tree(c, xwm->root), NULL);
	if (!tree)
		return;
	xcb_window_t *children = xcb_query_tree_children(tree);
	int n = xcb_query_tree_children_length(tree);
	xcb_get_window_attributes_cookie_t *ac = calloc((size_t)n + 1, sizeof(*ac));
	xcb_get_geometry_cookie_t *gc = calloc((size_t)n + 1, sizeof(*gc));
	if (!ac || !gc) {
		free(ac);
		free(gc);
		free(tree);
		return;
	}
	/* All requests first, then the replies: one round trip in all. */
	for (int i = 0; i < n; i++) {
		ac[i] = xcb_get_window_attributes(c, children[i]);
		gc[i] = xcb_get_geometry(c, children[i]);
	}
	/* QueryTree lists children bottom to top, our stacking order. */
	for (int i = 0; i < n; i++) {
		xcb_get_window_attributes_reply_t *a = xcb_get_window_attributes_reply(c, ac[i], NULL);
		xcb_get_geometry_reply_t *g = xcb_get_geometry_reply(c, gc[i], NULL);
		if (a && g && children[i] != xwm->overlay) {
			struct xwm_window *w = xwm_window_create(xwm, children[i], g->x, g->y, g->width,
			                                     g->height, g->border_width,
			                                     a->override_redirect);
			if (w) {
				w->input_only = a->_class == XCB_WINDOW_CLASS_INPUT_ONLY;
				w->visual = a->visual;
				w->depth = g->depth;
				w->viewable = a->map_state == XCB_MAP_STATE_VIEWABLE;
			}
		}
		free(a);
		free(g);
	}
	free(ac);
	free(gc);
	free(tree);
}

/* A timestamp of the server's clock now: the time of a PropertyNotify of
 * a zero-length append to our own window. Only at start, before any other
 * event is selected, so the wait drops nothing. */
static xcb_timestamp_t server_time_at_start(struct xwm *xwm)
{
	xcb_connection_t *c = xwm->conn;
	xcb_change_property(c, XCB_PROP_MODE_APPEND, xwm->check_window, XCB_ATOM_WM_NAME,
	                    XCB_ATOM_STRING, 8, 0, NULL);
	xcb_flush(c);
	xcb_generic_event_t *ev;
	while ((ev = xcb_wait_for_event(c))) {
		if ((ev->response_type & 0x7f) == XCB_PROPERTY_NOTIFY) {
			xcb_timestamp_t t = ((xcb_property_notify_event_t *)ev)->time;
			free(ev);
			return t;
		}
		free(ev);
	}
	return XCB_CURRENT_TIME;
}

/* ICCCM 2.8: a window manager owns WM_Sn (n: the screen), taken with a
 * real timestamp, then tells the root with a MANAGER client message. */
static int claim_wm_selection(struct xwm *xwm)
{
	xcb_connection_t *c = xwm->conn;
	xcb_get_selection_owner_reply_t *r = xcb_get_selection_owner_reply(c,
		xcb_get_selection_owner(c, xwm->atoms.WM_S0), NULL);
	if (r && r->owner != XCB_NONE) {
		xwm_log("another window manager owns WM_S0 (window 0x%x)", r->owner);
		free(r);
		return -1;
	}
	free(r);
	xcb_set_selection_owner(c, xwm->check_window, xwm->atoms.WM_S0, xwm->claim_time);
	r = xcb_get_selection_owner_reply(c, xcb_get_selection_owner(c, xwm->atoms.WM_S0), NULL);
	bool ours = r && r->owner == xwm->check_window;
	free(r);
	if (!ours) {
		xwm_log("could not take the WM_S0 selection");
		return -1;
	}
	return 0;
}

static void announce_manager(struct xwm *xwm)
{
	xcb_client_message_event_t ev = {
		.response_type = XCB_CLIENT_MESSAGE,
		.format = 32,
		.window = xwm->root,
		.type = xwm->atoms.MANAGER,
		.data.data32 = { xwm->claim_time, xwm->atoms.WM_S0, xwm->check_window, 0, 0 },
	};
	xcb_send_event(xwm->conn, 0, xwm->root, XCB_EVENT_MASK_STRUCTURE_NOTIFY, (const char *)&ev);
}

int xwm_wm_claim(struct xwm *xwm)
{
	xcb_connection_t *c = xwm->conn;

	/* The check window: owner of the selections, and the window tools
	 * and toolkits watch to tell the WM is alive (props.c). */
	xwm->check_window = xcb_generate_id(c);
	uint32_t values[] = { 1, XCB_EVENT_MASK_PROPERTY_CHANGE };
	xcb_create_window(c, XCB_COPY_FROM_PARENT, xwm->check_window, xwm->root, -1, -1, 1, 1,
	                  0, XCB_WINDOW_CLASS_INPUT_ONLY, XCB_COPY_FROM_PARENT,
	                  XCB_CW_OVERRIDE_REDIRECT | XCB_CW_EVENT_MASK, values);
	xwm->claim_time = server_time_at_start(xwm);
	xwm->last_time = xwm->claim_time;
	uint32_t mask = XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT |
	                XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY |
	                XCB_EVENT_MASK_STRUCTURE_NOTIFY |
	                XCB_EVENT_MASK_PROPERTY_CHANGE;

	/* First thing after connecting: tools (duet-xctl wait-wm) take the
	 * redirect on the root as "the WM is there" and may send requests at
	 * once; none of them may go unseen while EGL starts. Events queue up
	 * meanwhile and are handled after xwm_wm_start adopts the windows.
	 * Before WM_S0, as weston's XWM does: Xwayland given -wm accepts X
	 * clients once WM_S0 is owned, and a client's MapWindow processed
	 * before the redirect would map its window past us (adopted, its
	 * WM_HINTS initial state lost, never placed). */
	xcb_generic_error_t *err = xcb_request_check(c,
		xcb_change_window_attributes_checked(c, xwm->root, XCB_CW_EVENT_MASK, &mask));
	if (err) {
		xwm_log("another window manager is running on this display (X error %u "
		        "selecting SubstructureRedirect on the root)", err->error_code);
		free(err);
		return -1;
	}
	if (claim_wm_selection(xwm) < 0)
		return -1;
	announce_manager(xwm);
	return 0;
}

int xwm_wm_start(struct xwm *xwm, bool has_sync)
{
	xcb_connection_t *c = xwm->conn;

	/* One atomic step under the grab: list the windows and their
	 * attributes consistently. Windows created since xwm_wm_claim are
	 * also announced by queued CreateNotify events, which find them
	 * already known. */
	xwm->has_sync = has_sync;
	if (has_sync)
		find_servertime(xwm);
	xcb_grab_server(c);
	adopt_existing(xwm);
	xcb_ungrab_server(c);
	xcb_flush(c);

	/* Now manage what was mapped, and composite everything. */
	for (struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_window *w = duet_container_of(l, struct xwm_window, link);
		xwm->host->created(xwm->host_data, w);
		if (w->viewable)
			xwm->host->mapped(xwm->host_data, w, true);
	}
	struct xwm_window *top_mapped = NULL;
	for (struct duet_list *l = xwm->stack.next, *next; l != &xwm->stack; l = next) {
		next = l->next;
		struct xwm_window *w = duet_container_of(l, struct xwm_window, link);
		if (w->override_redirect || !w->viewable || w->input_only)
			continue;
		if (!manage(w))
			continue;
		/* Adopted windows keep their place; ours is only focus. */
		w->client->mapped = true;
		xwm_props_set_wm_state(w, XWM_WM_STATE_NORMAL);
		xwm_props_update_net_state(w);
		top_mapped = w;
	}
	xwm_props_update_client_lists(xwm);
	if (top_mapped)
		xwm_set_focus(xwm, top_mapped);
	xwm_log("window manager started, %d x %d screen",
	        xwm->screen->width_in_pixels, xwm->screen->height_in_pixels);
	return 0;
}
