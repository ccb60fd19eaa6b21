/* The CLIPBOARD selection between X clients and Wayland clients, text
 * only: who owns it on each side, and the X events of the bridge.
 *
 * While a Wayland client's source is the Wayland selection, the window
 * manager owns CLIPBOARD with a window of its own and answers X clients
 * from that source (xwayland-selection-to-x.c). XFixes tells when an X
 * client takes CLIPBOARD; if it has text, a compositor source becomes the
 * Wayland selection and Wayland clients' receives are converted from it
 * (xwayland-selection-from-x.c).
 *
 * Nothing here blocks on a Wayland client: fds are non-blocking and on the
 * event loop. Property reads wait for Xwayland's reply, as weston's and
 * wlroots' do (Xwayland answers its window manager without waiting for the
 * compositor). A transfer that makes no progress for TIMEOUT_MS (a source
 * that never writes, an owner that died or never answers, a requestor
 * that is gone, a client that never reads) is dropped: its fd closed and
 * an X requestor still waiting told None. */
#include <stdlib.h>

#include <xcb/xfixes.h>

#include "xsel-types.h"

static const char *const atom_names[ATOM_COUNT] = {
	"CLIPBOARD", "TARGETS", "TIMESTAMP", "INCR", "UTF8_STRING", "TEXT", MIME_UTF8,
	"text/plain", "_DUET_CLIPBOARD", "_DUET_CLIPBOARD_TARGETS",
};

/* The Wayland selection changed: X clients see a Wayland client's source
 * as ours; none, or X's own text come back, and we let CLIPBOARD go. */
static void handle_wayland_selection(struct wl_listener *listener, void *data)
{
	struct comp_xsel *sel = wl_container_of(listener, sel, selection_changed);
	struct comp_data_source *current = comp_data_device_get_selection(sel->wm->server);
	if (sel->source && current == sel->source->source)
		return;
	if (current) {
		xcb_set_selection_owner(sel->conn, sel->window, atom(sel, ATOM_CLIPBOARD),
		                        XCB_CURRENT_TIME);
		sel->owner = true;
	} else if (sel->owner) {
		xcb_set_selection_owner(sel->conn, XCB_NONE, atom(sel, ATOM_CLIPBOARD),
		                        sel->owner_time);
		sel->owner = false;
	}
	xsel_flush_soon(sel);
}

static void ask_targets(struct comp_xsel *sel)
{
	/* Only text is bridged: what the X owner has first. */
	xcb_convert_selection(sel->conn, sel->window, atom(sel, ATOM_CLIPBOARD),
	                      atom(sel, ATOM_TARGETS), atom(sel, ATOM_TARGETS_DATA),
	                      XCB_CURRENT_TIME);
}

static void handle_owner_change(struct comp_xsel *sel, xcb_xfixes_selection_notify_event_t *ev)
{
	if (ev->selection != atom(sel, ATOM_CLIPBOARD))
		return;
	if (ev->owner == sel->window) {
		sel->owner_time = ev->selection_timestamp;
		return;
	}
	sel->owner = false;
	if (ev->owner != XCB_NONE) {
		ask_targets(sel);
		return;
	}
	/* The owner let go, or is gone (window destroyed, client closed). */
	comp_xsel_owner_gone(sel, ev->subtype != XCB_XFIXES_SELECTION_EVENT_SET_SELECTION_OWNER);
}

bool comp_xsel_handle_event(struct comp_xsel *sel, xcb_generic_event_t *ev)
{
	if (!sel)
		return false;
	uint8_t type = ev->response_type & 0x7f;
	if (type == sel->xfixes_event + XCB_XFIXES_SELECTION_NOTIFY) {
		handle_owner_change(sel, (xcb_xfixes_selection_notify_event_t *)ev);
		return true;
	}
	switch (type) {
	case XCB_SELECTION_REQUEST: {
		xcb_selection_request_event_t *req = (xcb_selection_request_event_t *)ev;
		if (req->owner != sel->window)
			return false;
		comp_xsel_handle_request(sel, req);
		return true;
	}
	case XCB_SELECTION_NOTIFY: {
		xcb_selection_notify_event_t *n = (xcb_selection_notify_event_t *)ev;
		if (n->requestor != sel->window)
			return false;
		comp_xsel_handle_notify(sel, n);
		return true;
	}
	case XCB_SELECTION_CLEAR: {
		xcb_selection_clear_event_t *c = (xcb_selection_clear_event_t *)ev;
		if (c->owner != sel->window)
			return false;
		if (c->selection == atom(sel, ATOM_CLIPBOARD))
			sel->owner = false;
		return true;
	}
	case XCB_PROPERTY_NOTIFY: {
		xcb_property_notify_event_t *p = (xcb_property_notify_event_t *)ev;
		if (p->window == sel->window) {
			comp_xsel_own_property(sel, p);
			return true;
		}
		/* A requestor's window may be one the model watches too. */
		comp_xsel_requestor_property(sel, p);
		return false;
	}
	case XCB_CREATE_NOTIFY:
		/* Our window is no client's: the model must not track it. */
		return ((xcb_create_notify_event_t *)ev)->window == sel->window;
	default:
		return false;
	}
}

static bool init_xfixes(struct comp_xsel *sel)
{
	const xcb_query_extension_reply_t *ext = xcb_get_extension_data(sel->conn, &xcb_xfixes_id);
	if (!ext || !ext->present)
		return false;
	xcb_xfixes_query_version_reply_t *v = xcb_xfixes_query_version_reply(sel->conn,
		xcb_xfixes_query_version(sel->conn, 1, 0), NULL);
	free(v);
	sel->xfixes_event = ext->first_event;
	return v != NULL;
}

static bool intern_atoms(struct comp_xsel *sel)
{
	xcb_intern_atom_cookie_t cookies[ATOM_COUNT];
	for (int i = 0; i < ATOM_COUNT; i++)
		cookies[i] = xcb_intern_atom(sel->conn, 0, (uint16_t)strlen(atom_names[i]),
		                             atom_names[i]);
	bool ok = true;
	for (int i = 0; i < ATOM_COUNT; i++) {
		xcb_intern_atom_reply_t *r = xcb_intern_atom_reply(sel->conn, cookies[i], NULL);
		sel->atoms[i] = r ? r->atom : XCB_ATOM_NONE;
		ok &= sel->atoms[i] != XCB_ATOM_NONE;
		free(r);
	}
	return ok;
}

struct comp_xsel *comp_xsel_create(struct comp_xwm *wm)
{
	struct comp_xsel *sel = calloc(1, sizeof(*sel));
	if (!sel)
		return NULL;
	sel->wm = wm;
	sel->conn = wm->xwm.conn;
	wl_list_init(&sel->outgoing);
	wl_list_init(&sel->incoming);
	wl_list_init(&sel->selection_changed.link);
	if (!init_xfixes(sel) || !intern_atoms(sel)) {
		comp_log("xwayland: no XFIXES: the clipboard is not shared with X clients");
		free(sel);
		return NULL;
	}
	sel->window = xcb_generate_id(sel->conn);
	uint32_t mask = XCB_EVENT_MASK_PROPERTY_CHANGE;
	xcb_create_window(sel->conn, XCB_COPY_FROM_PARENT, sel->window, wm->xwm.root, -1, -1, 1, 1,
	                  0, XCB_WINDOW_CLASS_INPUT_ONLY, XCB_COPY_FROM_PARENT, XCB_CW_EVENT_MASK,
	                  &mask);
	xcb_xfixes_select_selection_input(sel->conn, sel->window, atom(sel, ATOM_CLIPBOARD),
		XCB_XFIXES_SELECTION_EVENT_MASK_SET_SELECTION_OWNER |
		XCB_XFIXES_SELECTION_EVENT_MASK_SELECTION_WINDOW_DESTROY |
		XCB_XFIXES_SELECTION_EVENT_MASK_SELECTION_CLIENT_CLOSE);
	sel->selection_changed.notify = handle_wayland_selection;
	comp_data_device_add_selection_listener(wm->server, &sel->selection_changed);
	/* X clients are served from WM_S0 on, before this: the first one may
	 * have copied already (XFixes tells only of later changes). That
	 * copy is newer than a Wayland selection made before this Xwayland
	 * started, which X clients see otherwise. */
	xcb_get_selection_owner_reply_t *r = xcb_get_selection_owner_reply(sel->conn,
		xcb_get_selection_owner(sel->conn, atom(sel, ATOM_CLIPBOARD)), NULL);
	bool x_owned = r && r->owner != XCB_NONE;
	free(r);
	if (x_owned) {
		xwm_debug(&wm->xwm, "clipboard: an X client copied as Xwayland started");
		ask_targets(sel);
	} else
		handle_wayland_selection(&sel->selection_changed, NULL);
	return sel;
}

void comp_xsel_destroy(struct comp_xsel *sel)
{
	if (!sel)
		return;
	/* First: our source's destruction changes the Wayland selection. */
	wl_list_remove(&sel->selection_changed.link);
	comp_xsel_to_x_finish(sel);
	comp_xsel_from_x_finish(sel);
	free(sel);
}
