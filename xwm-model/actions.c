/* What the policy asks of the X server, on managed windows: configure,
 * raise, hide and show, focus, close, kill. Our model follows each request at
 * once (the policy reads it back before the server's notify confirms
 * it), and the host hears of each change as the server's notify would
 * tell it. Requests about a window that is gone fail with an error event
 * the event loop ignores (wm.c). */
#include <stdlib.h>
#include <string.h>

#include "model.h"

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
	if (resized && w->client && w->client->mapped)
		w->xwm->host->resizing(w->xwm->host_data, w);

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
	w->xwm->host->configured(w->xwm->host_data, w, resized);
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
	duet_list_remove(&w->link);
	duet_list_insert_after(w->xwm->stack.prev, &w->link);
	w->xwm->host->restacked(w->xwm->host_data, w);
	xwm_props_update_client_lists(w->xwm);
}

void xwm_window_set_hidden(struct xwm_window *w, bool hidden)
{
	if (hidden) {
		/* The UnmapNotify this causes is ours, not a withdrawal. */
		w->client->ignore_unmaps++;
		xcb_unmap_window(w->xwm->conn, w->id);
		xwm_props_set_wm_state(w, XWM_WM_STATE_ICONIC);
	} else {
		w->xwm->host->mapping(w->xwm->host_data, w);
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

void xwm_set_focus(struct xwm *xwm, struct xwm_window *w)
{
	struct xwm_window *old = xwm->focused;
	xcb_timestamp_t time = focus_time(xwm);

	xwm->focused = w;
	if (w) {
		/* ICCCM 4.1.7: "passive" and "locally active" clients get
		 * SetInputFocus; "locally/globally active" ones WM_TAKE_FOCUS. */
		if (w->client->accepts_input)
			xcb_set_input_focus(xwm->conn, XCB_INPUT_FOCUS_POINTER_ROOT, w->id,
			                    time);
		if (w->client->take_focus) {
			const uint32_t data[5] = { xwm->atoms.WM_TAKE_FOCUS, time };
			xwm_window_send_message(w, xwm->atoms.WM_PROTOCOLS, data);
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

/* KillClient names a client by one of its resources, and the ids of a
 * client that is gone are a new client's next: a kill decided on a
 * window whose client disconnected since would kill whoever got its ids
 * (the X fuzzer's next client was). So a kill waits: the server is
 * grabbed, so that no other client does anything from then on, and a
 * marker property written on the check window; its PropertyNotify comes
 * after every event from before the grab, so by then the model has seen
 * the window destroyed (or leave the root) if it was. Only if not is its
 * client killed, still under the grab, released once no kill waits. */
bool xwm_window_kill(struct xwm_window *w, xwm_kill_func decided, void *data)
{
	struct xwm *xwm = w->xwm;
	struct xwm_kill *k = calloc(1, sizeof(*k));
	if (!k)
		return false;
	k->w = w;
	k->id = w->id;
	k->decided = decided;
	k->data = data;
	struct xwm_kill **tail = &xwm->kills;
	while (*tail)
		tail = &(*tail)->next;
	/* Grabbed already while an earlier kill waits. */
	if (tail == &xwm->kills)
		xcb_grab_server(xwm->conn);
	*tail = k;
	k->marker = xcb_change_property(xwm->conn, XCB_PROP_MODE_REPLACE, xwm->check_window,
	                                xwm->atoms._DUET_KILL, XCB_ATOM_WINDOW, 32, 1,
	                                &k->id).sequence;
	return true;
}

void xwm_kill_marker(struct xwm *xwm, uint32_t sequence)
{
	struct xwm_kill *k = xwm->kills;
	/* Any client may write the property: only our own write's notify,
	 * which carries our request's sequence, is the marker. */
	if (!k || (uint32_t)k->marker != sequence)
		return;
	xwm->kills = k->next;
	if (k->decided)
		k->decided(k->data, k->w, k->id);
	if (k->w)
		xcb_kill_client(xwm->conn, k->id);
	else
		xwm_debug(xwm, "0x%x went before its client's kill: not killed", k->id);
	if (!xwm->kills)
		xcb_ungrab_server(xwm->conn);
	free(k);
}

void xwm_kills_finish(struct xwm *xwm)
{
	while (xwm->kills) {
		struct xwm_kill *k = xwm->kills;
		xwm->kills = k->next;
		if (k->decided)
			k->decided(k->data, NULL, k->id);
		free(k);
	}
}

static void close_decided(void *data, struct xwm_window *w, xcb_window_t id)
{
	if (!w)
		xwm_log("0x%x went before its client was killed: not killed", id);
}

void xwm_window_send_close(struct xwm_window *w)
{
	struct xwm *xwm = w->xwm;

	if (!w->client->delete_window) {
		/* Its every window and resource go with the connection. */
		xwm_log("window 0x%x has no WM_DELETE_WINDOW; killing its client", w->id);
		if (!xwm_window_kill(w, close_decided, NULL))
			xwm_log("out of memory: the client of 0x%x is not killed", w->id);
		return;
	}
	const uint32_t data[5] = { xwm->atoms.WM_DELETE_WINDOW, xwm->last_time };
	xwm_window_send_message(w, xwm->atoms.WM_PROTOCOLS, data);
}

void xwm_window_send_message(struct xwm_window *w, xcb_atom_t type, const uint32_t data[5])
{
	xcb_client_message_event_t ev = {
		.response_type = XCB_CLIENT_MESSAGE,
		.format = 32,
		.window = w->id,
		.type = type,
	};
	for (int i = 0; i < 5; i++)
		ev.data.data32[i] = data[i];
	xcb_send_event(w->xwm->conn, 0, w->id, XCB_EVENT_MASK_NO_EVENT, (const char *)&ev);
}
