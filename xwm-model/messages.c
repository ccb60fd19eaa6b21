/* Client messages to the root: the EWMH requests (activate, close,
 * move/resize, state changes), ICCCM WM_CHANGE_STATE, and duet's control
 * messages of docs/xwm-control.md (_DUET_SYNC, _DUET_RESIZE,
 * _DUET_SCREENSHOT). Window ids in them come from any client and may name
 * no window of ours: such messages are ignored. _DUET_SYNC and _DUET_RESIZE
 * give a client nothing the core protocol and the EWMH do not (a round
 * trip; a ConfigureRequest or _NET_MOVERESIZE_WINDOW on any window), so
 * they are always on; _DUET_SCREENSHOT writes a file and is confined to
 * --screenshot-dir (screenshot.c). */
#include <stdlib.h>
#include <string.h>

#include "model.h"

static void reply(struct xwm *xwm, xcb_window_t to, uint32_t cookie, uint32_t result)
{
	xcb_client_message_event_t ev = {
		.response_type = XCB_CLIENT_MESSAGE,
		.format = 32,
		.window = to,
		.type = xwm->atoms._DUET_SYNC,
	};
	ev.data.data32[0] = to;
	ev.data.data32[1] = cookie;
	ev.data.data32[2] = result;
	/* No event mask: delivered to the creator of the reply window. A
	 * vanished reply window just gives an ignored BadWindow. */
	xcb_send_event(xwm->conn, 0, to, XCB_EVENT_MASK_NO_EVENT, (const char *)&ev);
}

static void handle_screenshot(struct xwm *xwm, xcb_window_t reply_window, uint32_t cookie)
{
	xcb_get_property_reply_t *r = xcb_get_property_reply(xwm->conn,
		xcb_get_property(xwm->conn, 0, reply_window, xwm->atoms._DUET_SCREENSHOT_PATH,
		                 XCB_GET_PROPERTY_TYPE_ANY, 0, 1024), NULL);
	char name[4097];
	uint32_t ok = 0;

	/* A file name in --screenshot-dir, never a path (screenshot.c). */
	if (r && r->format == 8 &&
	    (r->type == XCB_ATOM_STRING || r->type == xwm->ewmh.UTF8_STRING)) {
		int len = xcb_get_property_value_length(r);
		if (len > 0 && len < (int)sizeof(name) && !memchr(xcb_get_property_value(r), 0,
		                                                  (size_t)len)) {
			memcpy(name, xcb_get_property_value(r), (size_t)len);
			name[len] = '\0';
			ok = xwm->host->screenshot(xwm->host_data, name) == 0;
		} else {
			xwm_log("_DUET_SCREENSHOT refused: unusable _DUET_SCREENSHOT_PATH");
		}
	} else {
		xwm_log("_DUET_SCREENSHOT: reply window 0x%x has no usable _DUET_SCREENSHOT_PATH",
		        reply_window);
	}
	free(r);
	reply(xwm, reply_window, cookie, ok);
}

static void handle_moveresize(struct xwm_window *w, const uint32_t *l)
{
	uint32_t flags = l[0];
	int x = (flags & (1u << 8)) ? (int32_t)l[1] : w->x;
	int y = (flags & (1u << 9)) ? (int32_t)l[2] : w->y;
	int width = (flags & (1u << 10)) ? (int32_t)l[3] : w->width;
	int height = (flags & (1u << 11)) ? (int32_t)l[4] : w->height;

	/* A pager's request, i.e. the WM side: position honoured (gravity
	 * is NorthWest for us, there are no frames), size constrained. */
	xwm_policy_constrain_size(w, &width, &height);
	xwm_window_move_resize(w, x, y, width, height);
}

static void handle_wm_state(struct xwm_window *w, const uint32_t *l)
{
	struct xwm_client *c = w->client;
	xcb_ewmh_connection_t *e = &w->xwm->ewmh;
	uint32_t action = l[0];
	bool max_asked = false, value;

	for (int i = 1; i <= 2; i++) {
		xcb_atom_t prop = l[i];
		if (prop == e->_NET_WM_STATE_FULLSCREEN) {
			if (xwm_hints_state_action(action, c->fullscreen, &value))
				xwm_policy_of(w->xwm)->request_fullscreen(w, value);
		} else if ((prop == e->_NET_WM_STATE_MAXIMIZED_VERT ||
		            prop == e->_NET_WM_STATE_MAXIMIZED_HORZ) && !max_asked) {
			/* One maximized state: either half asks for both. */
			max_asked = true;
			if (xwm_hints_state_action(action, c->maximized, &value))
				xwm_policy_of(w->xwm)->request_maximize(w, value);
		} else if (prop == e->_NET_WM_STATE_HIDDEN && action == 1) {
			xwm_policy_of(w->xwm)->request_minimize(w);
		}
	}
	xwm_props_update_net_state(w);
}

/* A _NET_WM_STATE change naming only states handle_wm_state does not act
 * on (demands-attention, sticky...): it changes nothing. */
static bool state_ignored(struct xwm *xwm, const uint32_t *l)
{
	xcb_ewmh_connection_t *e = &xwm->ewmh;
	for (int i = 1; i <= 2; i++) {
		xcb_atom_t prop = l[i];
		if (prop == e->_NET_WM_STATE_FULLSCREEN || prop == e->_NET_WM_STATE_MAXIMIZED_VERT ||
		    prop == e->_NET_WM_STATE_MAXIMIZED_HORZ ||
		    (prop == e->_NET_WM_STATE_HIDDEN && l[0] == 1))
			return false;
	}
	return true;
}

void xwm_answer_frame_extents(struct xwm *xwm)
{
	/* EWMH: answered for any window, usually one not mapped yet, with
	 * the frame it would get: none, duet-xwm draws no decorations. (A
	 * window that is gone costs a BadWindow the event loop ignores.) */
	for (int i = 0; i < xwm->extents_pending; i++)
		xcb_ewmh_set_frame_extents(&xwm->ewmh, xwm->extents_asked[i], 0, 0, 0, 0);
	xwm->extents_pending = 0;
}

bool xwm_client_message_merged(struct xwm *xwm, xcb_client_message_event_t *ev)
{
	if (ev->format != 32)
		return false;
	if (ev->type == xwm->ewmh._NET_WM_STATE)
		return state_ignored(xwm, ev->data.data32);
	if (ev->type != xwm->ewmh._NET_REQUEST_FRAME_EXTENTS)
		return false;
	for (int i = 0; i < xwm->extents_pending; i++)
		if (xwm->extents_asked[i] == ev->window)
			return true;
	if (xwm->extents_pending == XWM_EXTENTS_MERGED)
		xwm_answer_frame_extents(xwm);
	xwm->extents_asked[xwm->extents_pending++] = ev->window;
	return true;
}

void xwm_handle_client_message(struct xwm *xwm, xcb_client_message_event_t *ev)
{
	xcb_ewmh_connection_t *e = &xwm->ewmh;
	const uint32_t *l = ev->data.data32;

	if (ev->format != 32)
		return;
	xwm_debug(xwm, "client message %u for 0x%x (%u %u %u)", ev->type, ev->window, l[0], l[1],
	          l[2]);
	if (ev->type == xwm->atoms._DUET_SYNC) {
		/* Events are handled in order, so everything before this
		 * message has been handled by now. */
		if (ev->window == xwm->root)
			reply(xwm, l[0], l[1], 0);
		return;
	}
	if (ev->type == xwm->atoms._DUET_SCREENSHOT) {
		if (ev->window == xwm->root)
			handle_screenshot(xwm, l[0], l[1]);
		return;
	}
	struct xwm_window *w = xwm_window_lookup(xwm, ev->window);
	if (!w || !xwm_window_managed(w)) {
		xwm_debug(xwm, "client message %u for unmanaged window 0x%x", ev->type,
		          ev->window);
		return;
	}
	if (ev->type == xwm->atoms._DUET_RESIZE) {
		xwm_policy_of(xwm)->resize(w, (int32_t)l[0], (int32_t)l[1]);
	} else if (ev->type == e->_NET_ACTIVE_WINDOW) {
		if (l[1])
			xwm->last_time = xwm->event_time = l[1];
		xwm_policy_of(xwm)->activate(w);
	} else if (ev->type == e->_NET_CLOSE_WINDOW) {
		xwm_policy_of(xwm)->close(w);
	} else if (ev->type == e->_NET_MOVERESIZE_WINDOW) {
		handle_moveresize(w, l);
	} else if (ev->type == e->_NET_WM_MOVERESIZE) {
		if (xwm_policy_of(xwm)->begin_move)
			xwm_policy_of(xwm)->begin_move(w, l[2]);
	} else if (ev->type == e->_NET_WM_STATE) {
		handle_wm_state(w, l);
	} else if (ev->type == xwm->atoms.WM_CHANGE_STATE) {
		if (l[0] == XWM_WM_STATE_ICONIC)
			xwm_policy_of(xwm)->request_minimize(w);
	}
}
