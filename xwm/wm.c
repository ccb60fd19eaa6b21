/* Window management: becoming the WM, adopting windows, and the core X
 * events, dispatched through a table indexed by response type (2bwm's
 * way). Extension events (Damage, Sync) have codes chosen by the server at
 * run time and are dispatched before the table.
 *
 * Every top-level window (child of the root) gets a struct xwm_window, kept
 * in X stacking order, because the compositor must paint override-redirect
 * windows (menus, tooltips) too; "managed" marks the client windows the WM
 * manages.
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

#include <xcb/xcbext.h> /* xcb_poll_for_reply, xcb_discard_reply */

#include "xwm.h"

/* --------------------------------------------------------------- windows */

struct xwm_window *xwm_window_lookup(struct xwm *xwm, xcb_window_t id)
{
	return xwm_wintable_lookup(&xwm->windows, id);
}

static struct xwm_window *window_at_top(struct xwm *xwm)
{
	if (xwm->stack.prev == &xwm->stack)
		return NULL;
	return xwm_container_of(xwm->stack.prev, struct xwm_window, link);
}

static struct xwm_window *window_create(struct xwm *xwm, xcb_window_t id, int x, int y,
                                        int width, int height, int border,
                                        bool override_redirect)
{
	struct xwm_window *w = calloc(1, sizeof(*w));
	if (!w) {
		xwm_log("out of memory for window 0x%x", id);
		return NULL;
	}
	w->net_state_len = -1; /* nothing written yet */
	w->xwm = xwm;
	w->id = id;
	w->x = x;
	w->y = y;
	w->width = width;
	w->height = height;
	w->border = border;
	w->override_redirect = override_redirect;
	w->accepts_input = true;
	if (!xwm_wintable_insert(&xwm->windows, w)) {
		xwm_log("out of memory for window 0x%x", id);
		free(w);
		return NULL;
	}
	/* New windows are created on top of their siblings. */
	xwm_list_insert_after(xwm->stack.prev, &w->link);
	return w;
}

/* Attributes the composite side needs (depth, visual, class). */
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
	xwm_note_processed(xwm, w->geometry_sequence);
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
	xwm_composite_window_created(w);
	return true;
}

/* The window whose geometry request is the oldest still out. Windows are
 * restacked after creation, so the stacking order says nothing of it. */
static struct xwm_window *oldest_geometry(struct xwm *xwm)
{
	struct xwm_window *oldest = NULL;

	if (xwm->geometries_pending == 0)
		return NULL;
	for (struct xwm_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_window *w = xwm_container_of(l, struct xwm_window, link);
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

static void window_free(struct xwm_window *w)
{
	struct xwm *xwm = w->xwm;

	if (w->geometry_pending) {
		/* Nobody will collect it: xcb would keep it forever. */
		xcb_discard_reply(xwm->conn, w->geometry_sequence);
		w->geometry_pending = false;
		xwm->geometries_pending--;
	}

	if (xwm->focused == w)
		xwm->focused = NULL;
	if (w->cfg_pending)
		xwm->configures_pending--;
	xwm_sync_window_destroyed(w);
	xwm_composite_window_destroyed(w);
	xwm_wintable_remove(&xwm->windows, w);
	xwm_list_remove(&w->link);
	free(w);
}

void xwm_wm_finish(struct xwm *xwm)
{
	while (xwm->stack.next != &xwm->stack)
		window_free(xwm_container_of(xwm->stack.next, struct xwm_window, link));
	xwm_wintable_finish(&xwm->windows);
	xwm_props_finish(xwm);
}

/* ----------------------------------------------- what policy.c asks of X */

void xwm_policy_screen_size(const struct xwm *xwm, int *width, int *height)
{
	*width = xwm->screen->width_in_pixels;
	*height = xwm->screen->height_in_pixels;
}

static void send_synthetic_configure(struct xwm_window *w)
{
	/* ICCCM 4.1.5: the client learns its root-relative geometry from a
	 * synthetic ConfigureNotify. xcb_send_event copies 32 bytes. */
	union {
		xcb_configure_notify_event_t ev;
		char bytes[32];
	} u;
	memset(&u, 0, sizeof(u));
	u.ev.response_type = XCB_CONFIGURE_NOTIFY;
	u.ev.event = w->id;
	u.ev.window = w->id;
	u.ev.above_sibling = XCB_NONE;
	u.ev.x = (int16_t)w->x;
	u.ev.y = (int16_t)w->y;
	u.ev.width = (uint16_t)w->width;
	u.ev.height = (uint16_t)w->height;
	u.ev.border_width = 0;
	u.ev.override_redirect = 0;
	xcb_send_event(w->xwm->conn, 0, w->id, XCB_EVENT_MASK_STRUCTURE_NOTIFY, u.bytes);
}

void xwm_window_move_resize(struct xwm_window *w, int x, int y, int width, int height)
{
	x = xwm_hints_clamp_pos(x);
	y = xwm_hints_clamp_pos(y);
	width = xwm_hints_clamp_size(width);
	height = xwm_hints_clamp_size(height);
	bool resized = width != w->width || height != w->height;
	if (resized && w->mapped)
		xwm_sync_request(w);

	uint32_t values[] = { (uint32_t)x, (uint32_t)y, (uint32_t)width, (uint32_t)height, 0 };
	w->configure_seq = xcb_configure_window(w->xwm->conn, w->id,
	                     XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y |
	                     XCB_CONFIG_WINDOW_WIDTH | XCB_CONFIG_WINDOW_HEIGHT |
	                     XCB_CONFIG_WINDOW_BORDER_WIDTH, values).sequence;
	w->configure_sent = true;
	/* Optimistic: the policy reads the geometry before the server's
	 * ConfigureNotify comes back, which then confirms it. */
	w->x = x;
	w->y = y;
	w->width = width;
	w->height = height;
	w->border = 0;
	send_synthetic_configure(w);
	xwm_composite_window_configured(w, resized);
	xwm_debug(w->xwm, "configure 0x%x to %d,%d %dx%d", w->id, x, y, width, height);
}

void xwm_window_resize(struct xwm_window *w, int width, int height)
{
	xwm_window_move_resize(w, w->x, w->y, width, height);
}

void xwm_window_raise(struct xwm_window *w)
{
	uint32_t mode = XCB_STACK_MODE_ABOVE;
	w->configure_seq = xcb_configure_window(w->xwm->conn, w->id, XCB_CONFIG_WINDOW_STACK_MODE,
	                                        &mode).sequence;
	w->configure_sent = true;
	/* Our model follows at once; the ConfigureNotify agrees later. */
	xwm_list_remove(&w->link);
	xwm_list_insert_after(w->xwm->stack.prev, &w->link);
	xwm_composite_window_restacked(w);
	xwm_props_update_client_lists(w->xwm);
}

void xwm_window_set_hidden(struct xwm_window *w, bool hidden)
{
	if (hidden) {
		/* The UnmapNotify this causes is ours, not a withdrawal. */
		w->ignore_unmaps++;
		xcb_unmap_window(w->xwm->conn, w->id);
		xwm_props_set_wm_state(w, XWM_WM_STATE_ICONIC);
	} else {
		xwm_composite_window_mapping(w);
		xcb_map_window(w->xwm->conn, w->id);
		xwm_props_set_wm_state(w, XWM_WM_STATE_NORMAL);
	}
	xwm_props_update_net_state(w);
}

/* The timestamp a focus change carries (ICCCM 4.1.7 wants the time of
 * the event that caused it, never CurrentTime): the event's own, or for
 * a focus no timed event caused (a map, a window going away) the server's
 * time now, read from SYNC's SERVERTIME counter (one round trip). The last
 * event time we saw would do only while nothing else changed the focus
 * since: the server ignores a SetInputFocus older than the last one. */
static xcb_timestamp_t focus_time(struct xwm *xwm)
{
	if (xwm->event_time)
		return xwm->event_time;
	if (xwm->servertime) {
		xcb_sync_query_counter_reply_t *r = xcb_sync_query_counter_reply(xwm->conn,
			xcb_sync_query_counter(xwm->conn, xwm->servertime), NULL);
		if (r) {
			xwm->last_time = r->counter_value.lo;
			free(r);
		}
		xwm_debug(xwm, "server time %u (SERVERTIME)", xwm->last_time);
	}
	return xwm->last_time;
}

/* Finds SERVERTIME among SYNC's system counters (needs SYNC initialised).
 * The list is walked by hand: each entry is counter (4), resolution (8),
 * name length (2) and the name, padded to 4 bytes, and libxcb's iterator
 * pads it wrongly (it reads the names 2 bytes off after the first). */
static void find_servertime(struct xwm *xwm)
{
	if (!xwm->sync_event)
		return;
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

void xwm_set_focus(struct xwm *xwm, struct xwm_window *w)
{
	struct xwm_window *old = xwm->focused;
	xcb_timestamp_t time = focus_time(xwm);

	xwm->focused = w;
	if (w) {
		/* ICCCM 4.1.7: "passive" and "locally active" clients get
		 * SetInputFocus; "locally/globally active" ones WM_TAKE_FOCUS. */
		if (w->accepts_input)
			xcb_set_input_focus(xwm->conn, XCB_INPUT_FOCUS_POINTER_ROOT, w->id,
			                    time);
		if (w->take_focus) {
			xcb_client_message_event_t ev = {
				.response_type = XCB_CLIENT_MESSAGE,
				.format = 32,
				.window = w->id,
				.type = xwm->atoms.WM_PROTOCOLS,
			};
			ev.data.data32[0] = xwm->atoms.WM_TAKE_FOCUS;
			ev.data.data32[1] = time;
			xcb_send_event(xwm->conn, 0, w->id, XCB_EVENT_MASK_NO_EVENT,
			               (const char *)&ev);
		}
	} else {
		xcb_set_input_focus(xwm->conn, XCB_INPUT_FOCUS_POINTER_ROOT,
		                    XCB_INPUT_FOCUS_POINTER_ROOT, time);
	}
	if (old && old != w)
		xwm_props_update_net_state(old);
	if (w)
		xwm_props_update_net_state(w);
	xwm_props_set_active(xwm, w);
	xwm_debug(xwm, "focus 0x%x", w ? w->id : 0);
}

void xwm_window_send_close(struct xwm_window *w)
{
	struct xwm *xwm = w->xwm;

	if (!w->delete_window) {
		xwm_log("window 0x%x has no WM_DELETE_WINDOW; not closing it", w->id);
		return;
	}
	xcb_client_message_event_t ev = {
		.response_type = XCB_CLIENT_MESSAGE,
		.format = 32,
		.window = w->id,
		.type = xwm->atoms.WM_PROTOCOLS,
	};
	ev.data.data32[0] = xwm->atoms.WM_DELETE_WINDOW;
	ev.data.data32[1] = xwm->last_time;
	xcb_send_event(xwm->conn, 0, w->id, XCB_EVENT_MASK_NO_EVENT, (const char *)&ev);
}

/* ------------------------------------------------------------ managing */

static void grab_buttons(struct xwm_window *w)
{
	/* Click to activate: a synchronous passive grab freezes the pointer
	 * until handle_button_press replays the click to the client. */
	if (w->button_grabbed)
		return;
	xcb_grab_button(w->xwm->conn, 0, w->id, XCB_EVENT_MASK_BUTTON_PRESS,
	                XCB_GRAB_MODE_SYNC, XCB_GRAB_MODE_ASYNC, XCB_NONE, XCB_NONE,
	                XCB_BUTTON_INDEX_ANY, XCB_MOD_MASK_ANY);
	w->button_grabbed = true;
}

static void manage(struct xwm_window *w)
{
	struct xwm *xwm = w->xwm;
	uint32_t mask = XCB_EVENT_MASK_PROPERTY_CHANGE;

	if (!w->managed) {
		w->managed = true;
		w->manage_order = ++xwm->manage_counter;
		xwm_props_reset_window(w);
		xcb_change_window_attributes(xwm->conn, w->id, XCB_CW_EVENT_MASK, &mask);
		xwm_props_read_all(w);
		grab_buttons(w);
		xwm_log("managing 0x%x \"%s\" (%s/%s) %dx%d", w->id, w->name, w->instance,
		        w->class_name, w->width, w->height);
	}
}

static void show(struct xwm_window *w)
{
	w->mapped = true;
	w->minimized = false;
	/* Placed and raised while still unmapped: the client's first Expose
	 * comes at its final place, and the server damages a mapped
	 * window it moves, which must not pass for the client's drawing. */
	xwm_policy_window_place(w);
	if (w->initial_iconic) {
		/* ICCCM 4.1.4: a client whose WM_HINTS initial_state is
		 * IconicState starts iconic: managed and listed, not mapped,
		 * WM_STATE Iconic, until activated (as a minimized window). */
		w->minimized = true;
		xwm_props_set_wm_state(w, XWM_WM_STATE_ICONIC);
		xwm_props_update_net_state(w);
		xwm_props_update_client_lists(w->xwm);
		return;
	}
	xwm_composite_window_mapping(w);
	xcb_map_window(w->xwm->conn, w->id);
	xwm_props_set_wm_state(w, XWM_WM_STATE_NORMAL);
	xwm_policy_window_mapped(w);
	xwm_props_update_net_state(w);
	xwm_props_update_client_lists(w->xwm);
}

/* The client withdrew the window (unmap or destroy): it is no longer ours
 * to manage until it maps again. */
static void withdraw(struct xwm_window *w, bool destroyed)
{
	if (!w->managed)
		return;
	bool was_mapped = w->mapped;
	w->mapped = false;
	w->minimized = false;
	w->managed = false;
	if (!destroyed)
		xwm_props_set_wm_state(w, XWM_WM_STATE_WITHDRAWN);
	if (was_mapped || w->xwm->focused == w)
		xwm_policy_window_unmapped(w);
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
	xwm_list_remove(&w->link);
	xwm_list_insert_after(sibling ? &sibling->link : &xwm->stack, &w->link);
	xwm_composite_window_restacked(w);
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
	struct xwm_window *w = window_create(xwm, ev->window, ev->x, ev->y, ev->width,
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
	window_free(w);
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
	if (w->managed && w->mapped) {
		/* Already shown (e.g. a repeated request while minimized). */
		xwm_policy_activate(w);
		return;
	}
	manage(w);
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
	xwm_composite_window_mapped(w, false);
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
			xwm_composite_window_unmapped(w);
		}
		if (!(ev->response_type & 0x80) && w->ignore_unmaps > 0) {
			w->ignore_unmaps--;
			return;
		}
		withdraw(w, false);
	}
}

static void handle_configure_request(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xcb_configure_request_event_t *ev = (xcb_configure_request_event_t *)generic;
	struct xwm_window *w = xwm_window_lookup(xwm, ev->window);

	if (w && !w->override_redirect) {
		/* Merged with any request still pending for this window: a
		 * client flooding ConfigureRequests gets one configure per
		 * batch of events instead of making the server reallocate the
		 * window's backing pixmap for each. */
		if (!w->cfg_pending) {
			w->cfg_pending = true;
			w->cfg_mask = 0;
			xwm->configures_pending++;
		}
		w->cfg_mask |= ev->value_mask;
		if (ev->value_mask & XCB_CONFIG_WINDOW_X)
			w->cfg_x = ev->x;
		if (ev->value_mask & XCB_CONFIG_WINDOW_Y)
			w->cfg_y = ev->y;
		if (ev->value_mask & XCB_CONFIG_WINDOW_WIDTH)
			w->cfg_width = ev->width;
		if (ev->value_mask & XCB_CONFIG_WINDOW_HEIGHT)
			w->cfg_height = ev->height;
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
	xwm_composite_window_configured(w, resized);
}

static void handle_reparent_notify(struct xwm *xwm, xcb_generic_event_t *generic)
{
	xcb_reparent_notify_event_t *ev = (xcb_reparent_notify_event_t *)generic;
	struct xwm_window *w = xwm_window_lookup(xwm, ev->window);

	if (ev->parent == xwm->root && !w && ev->window != xwm->overlay) {
		w = window_create(xwm, ev->window, ev->x, ev->y, 1, 1, 0, ev->override_redirect);
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
		xwm_composite_window_created(w);
	} else if (ev->parent != xwm->root && w) {
		/* Reparented away (e.g. into an embedder): no longer top-level. */
		withdraw(w, false);
		window_free(w);
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
	struct xwm_window *w = xwm_window_lookup(xwm, ev->window);
	if (w && w->managed)
		xwm_props_changed(w, ev->atom, ev->state);
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
	if (w && w->managed && xwm->focused != w)
		xwm_policy_activate(w);
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
	if (!w->cfg_pending)
		return;
	w->cfg_pending = false;
	w->xwm->configures_pending--;
	xwm_policy_configure_request(w, w->cfg_mask, w->cfg_x, w->cfg_y, w->cfg_width,
	                             w->cfg_height);
}

void xwm_wm_flush_configures(struct xwm *xwm)
{
	/* The size hints a client set before asking apply to its request. */
	if (xwm->configures_pending > 0)
		xwm_props_settle(xwm);
	for (struct xwm_list *l = xwm->stack.next; l != &xwm->stack && xwm->configures_pending > 0;
	     l = l->next)
		apply_configure(xwm_container_of(l, struct xwm_window, link));
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

void xwm_wm_handle_event(struct xwm *xwm, xcb_generic_event_t *ev)
{
	uint8_t type = ev->response_type & 0x7f;

	if (xwm->damage_event && type == xwm->damage_event + XCB_DAMAGE_NOTIFY) {
		xwm_composite_handle_damage(xwm, (xcb_damage_notify_event_t *)ev);
		return;
	}
	if (xwm->sync_event && type == xwm->sync_event + XCB_SYNC_ALARM_NOTIFY) {
		xwm_sync_handle_alarm(xwm, (xcb_sync_alarm_notify_event_t *)ev);
		return;
	}
	/* Events that make the policy act read what clients asked in their
	 * properties: the values of every PropertyNotify before them first. */
	if (type == XCB_MAP_REQUEST || type == XCB_UNMAP_NOTIFY || type == XCB_DESTROY_NOTIFY ||
	    type == XCB_CLIENT_MESSAGE || type == XCB_BUTTON_PRESS)
		xwm_props_settle(xwm);
	/* Anything else may depend on the geometry a pending request asks
	 * for (a MapRequest places the window, _DUET_SYNC promises that all
	 * is handled): apply them first. */
	if (xwm->configures_pending > 0 && type != XCB_CONFIGURE_REQUEST &&
	    type != XCB_CONFIGURE_NOTIFY && type != XCB_PROPERTY_NOTIFY)
		xwm_wm_flush_configures(xwm);
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
			struct xwm_window *w = window_create(xwm, children[i], g->x, g->y, g->width,
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
	if (claim_wm_selection(xwm) < 0)
		return -1;
	uint32_t mask = XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT |
	                XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY |
	                XCB_EVENT_MASK_STRUCTURE_NOTIFY |
	                XCB_EVENT_MASK_PROPERTY_CHANGE;

	/* First thing after connecting: tools (duet-xctl wait-wm) take the
	 * redirect on the root as "the WM is there" and may send requests at
	 * once; none of them may go unseen while EGL starts. Events queue up
	 * meanwhile and are handled after xwm_wm_start adopts the windows. */
	xcb_generic_error_t *err = xcb_request_check(c,
		xcb_change_window_attributes_checked(c, xwm->root, XCB_CW_EVENT_MASK, &mask));
	if (err) {
		xwm_log("another window manager is running on this display (X error %u "
		        "selecting SubstructureRedirect on the root)", err->error_code);
		free(err);
		return -1;
	}
	announce_manager(xwm);
	return 0;
}

int xwm_wm_start(struct xwm *xwm)
{
	xcb_connection_t *c = xwm->conn;

	/* One atomic step under the grab: list the windows and their
	 * attributes consistently. Windows created since xwm_wm_claim are
	 * also announced by queued CreateNotify events, which find them
	 * already known. */
	find_servertime(xwm);
	xcb_grab_server(c);
	adopt_existing(xwm);
	xcb_ungrab_server(c);
	xcb_flush(c);

	/* Now manage what was mapped, and composite everything. */
	for (struct xwm_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_window *w = xwm_container_of(l, struct xwm_window, link);
		xwm_composite_window_created(w);
		if (w->viewable)
			xwm_composite_window_mapped(w, true);
	}
	struct xwm_window *top_mapped = NULL;
	for (struct xwm_list *l = xwm->stack.next, *next; l != &xwm->stack; l = next) {
		next = l->next;
		struct xwm_window *w = xwm_container_of(l, struct xwm_window, link);
		if (w->override_redirect || !w->viewable || w->input_only)
			continue;
		manage(w);
		/* Adopted windows keep their place; ours is only focus. */
		w->mapped = true;
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
