/* The X window manager of one Xwayland: xwm/'s window model (the one
 * duet-xwm hosts, linked, not copied) on the compositor's end of -wm,
 * dispatched on the server's event loop. It owns WM_S0 (Xwayland 22.1
 * listens for X clients only from then on) and _NET_WM_CM_S0 (the
 * compositor composites every X window). The model's decisions go to
 * policy.c through struct xwm_policy_ops, so X windows and Wayland windows
 * are placed, stacked and focused by the one policy; what is X-only (rule
 * 10, ConfigureRequest) stays the model's. WL_SURFACE_ID pairs an X window
 * with the wl_surface Xwayland made for it, whichever of the two comes
 * first (xwayland-window.c shows it). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <wayland-server-protocol.h>
#include <xcb/composite.h>

#include "xwayland-selection.h"
#include "xwm-types.h"
#include "xwayland.h"

/* ------------------------------------------------------------ dispatch */

/* Replies the model collects without waiting (new windows' geometry,
 * property reads), oldest request first, as duet-xwm's loop does: true
 * if any was applied. */
static bool poll_replies(struct xwm *xwm)
{
	bool applied = false;
	for (;;) {
		unsigned int geometry, props;
		bool has_geometry = xwm_wm_oldest_reply(xwm, &geometry);
		bool has_props = xwm_props_oldest_reply(xwm, &props);
		if (!has_geometry && !has_props)
			return applied;
		bool first = has_geometry && (!has_props || (int32_t)(geometry - props) < 0);
		if (!(first ? xwm_wm_poll_oldest(xwm) : xwm_props_poll_oldest(xwm)))
			return applied;
		applied = true;
	}
}

static void handle_event(struct comp_xwm *wm, xcb_generic_event_t *ev)
{
	xwm_wm_handle_event(&wm->xwm, ev);
	free(ev);
}

/* Windows of X clients killed over a texture budget leave the screen now,
 * not when Xwayland destroys them (the kill was found inside a commit). */
static void hide_doomed(struct comp_xwm *wm)
{
	if (!wm->budget.hide_doomed)
		return;
	wm->budget.hide_doomed = false;
	struct xwm_content *c;
	wl_list_for_each(c, &wm->contents, link)
		if (c->doomed)
			comp_xwindow_update(c);
}

/* X events at most in one dispatch: an X client flooding Xwayland with
 * what the window manager reads would otherwise keep the compositor here
 * for good, every Wayland client (Xwayland's own connection too) unread.
 * The rest waits for the next turn of the event loop (wm->more). */
#define EVENT_BATCH 256

static void dispatch(struct comp_xwm *wm)
{
	xcb_connection_t *conn = wm->xwm.conn;
	hide_doomed(wm);
	if (wm->quiet)
		return;
	int handled = 0;
	for (;;) {
		xcb_generic_event_t *ev;
		while (handled < EVENT_BATCH && (ev = xcb_poll_for_event(conn))) {
			handle_event(wm, ev);
			handled++;
		}
		xwm_wm_flush_merged(&wm->xwm);
		bool applied = poll_replies(&wm->xwm);
		/* X-Resource's pids for the kill lines: its reply check reads
		 * the socket too, so it comes before the queue's last look. */
		comp_xbudget_dispatch(wm);
		xcb_flush(conn);
		if (handled >= EVENT_BATCH) {
			wl_event_source_timer_update(wm->more, 1);
			break;
		}
		/* A flush or a reply check may have read events into xcb's
		 * queue: the loop would sleep on them. */
		if ((ev = xcb_poll_for_queued_event(conn))) {
			handle_event(wm, ev);
			handled++;
			continue;
		}
		if (!applied)
			break;
	}
	/* A flooder served after the others gets its priority back once calm,
	 * even if nothing else comes. */
	if (handled < EVENT_BATCH && xwm_flood_lowered(&wm->xwm))
		wl_event_source_timer_update(wm->more, XWM_FLOOD_SWEEP_MS);
	if (wm->xwm.quit)
		comp_log("xwayland: another X window manager took over; X windows are no longer "
		         "managed");
	int err = xcb_connection_has_error(conn);
	if (err || wm->xwm.quit) {
		if (err)
			comp_log("xwayland: the window manager's X connection broke (xcb error %d)",
			         err);
		wm->quiet = true;
		if (wm->source)
			wl_event_source_remove(wm->source);
		wm->source = NULL;
	}
}

static int handle_fd(int fd, uint32_t mask, void *data)
{
	dispatch(data);
	return 0;
}

static int handle_more(void *data)
{
	dispatch(data);
	return 0;
}

static void handle_idle(void *data)
{
	struct comp_xwm *wm = data;
	wm->idle = NULL;
	dispatch(wm);
}

/* ---------------------------------------------------------------- host */

static bool host_attach(void *data, struct xwm_window *w)
{
	struct xwm_content *c = calloc(1, sizeof(*c));
	if (!c)
		return false;
	c->wm = data;
	c->x = w;
	wl_list_insert(&c->wm->contents, &c->link);
	wl_list_init(&c->unmanaged_link);
	w->content = c;
	return true;
}

static void host_nothing(void *data, struct xwm_window *w)
{
}

static void host_mapped(void *data, struct xwm_window *w, bool has_content)
{
	comp_xwindow_update(w->content);
}

static void host_unmapped(void *data, struct xwm_window *w)
{
	/* Xwayland destroys the window's wl_surface as it unmaps, and makes
	 * a new one (with a new WL_SURFACE_ID) if it maps again. */
	comp_xwindow_unpair(w->content);
	comp_xwindow_update(w->content);
}

static void host_configured(void *data, struct xwm_window *w, bool resized)
{
	comp_xwindow_configured(w->content);
}

static void host_destroyed(void *data, struct xwm_window *w)
{
	struct xwm_content *c = w->content;
	comp_xsync_window_destroyed(c);
	comp_xwindow_destroy(c);
	wl_list_remove(&c->link);
	free(c);
	w->content = NULL;
}

/* WL_SURFACE_ID: the id, in Xwayland's Wayland connection, of the
 * wl_surface of an X window; and the clipboard's events. */
static bool host_event(void *data, xcb_generic_event_t *ev)
{
	struct comp_xwm *wm = data;
	if (comp_xsel_handle_event(wm->selection, ev) || comp_xsync_handle_event(wm, ev))
		return true;
	if ((ev->response_type & 0x7f) != XCB_CLIENT_MESSAGE)
		return false;
	xcb_client_message_event_t *msg = (xcb_client_message_event_t *)ev;
	if (msg->type != wm->wl_surface_id || msg->format != 32)
		return false;
	struct xwm_window *w = xwm_window_lookup(&wm->xwm, msg->window);
	if (!w || !w->content)
		return true;
	uint32_t id = msg->data.data32[0];
	comp_xwindow_unpair(w->content);
	struct wl_resource *resource = wm->client ? wl_client_get_object(wm->client, id) : NULL;
	bool made = resource &&
	            strcmp(wl_resource_get_class(resource), wl_surface_interface.name) == 0;
	xwm_debug(&wm->xwm, "WL_SURFACE_ID %u for 0x%x: %s", id, w->id,
	          made ? "paired" : "its wl_surface is still on its way");
	if (made)
		comp_xwindow_pair(w->content, comp_surface_from_resource(resource));
	else
		w->content->surface_id = id;
	return true;
}

static void host_processed(void *data, uint32_t sequence)
{
}

static void host_counters_changed(void *data, struct xwm_window *w)
{
	if (w->content)
		comp_xsync_counters_changed(w->content);
}

static void host_resizing(void *data, struct xwm_window *w)
{
	if (w->content)
		comp_xsync_resizing(w->content);
}

static void host_named(void *data, struct xwm_window *w)
{
	if (w->content)
		comp_xwindow_named(w->content);
}

static int host_screenshot(void *data, const char *name)
{
	comp_log("xwayland: _DUET_SCREENSHOT is duet-xwm's; use the test protocol's screenshot");
	return -1;
}

static const struct xwm_host host = {
	.attach = host_attach,
	.created = host_nothing,
	.mapping = host_nothing,
	.mapped = host_mapped,
	.unmapped = host_unmapped,
	.configured = host_configured,
	.restacked = host_nothing,
	.destroyed = host_destroyed,
	.resizing = host_resizing,
	.counters_changed = host_counters_changed,
	.named = host_named,
	.event = host_event,
	.processed = host_processed,
	.screenshot = host_screenshot,
};

/* Xwayland's connection went before its process was reaped. */
static void handle_client_destroy(struct wl_listener *listener, void *data)
{
	struct comp_xwm *wm = wl_container_of(listener, wm, client_destroy);
	wl_list_remove(&wm->client_destroy.link);
	wl_list_init(&wm->client_destroy.link);
	comp_xbudget_client_gone(wm);
	wm->client = NULL;
}

static void handle_new_surface(struct wl_listener *listener, void *data)
{
	struct comp_xwm *wm = wl_container_of(listener, wm, new_surface);
	struct comp_surface *surface = data;
	if (wl_resource_get_client(surface->resource) != wm->client)
		return;
	uint32_t id = wl_resource_get_id(surface->resource);
	struct xwm_content *c;
	wl_list_for_each(c, &wm->contents, link) {
		if (c->surface_id == id) {
			xwm_debug(&wm->xwm, "wl_surface@%u made: paired with 0x%x", id, c->x->id);
			comp_xwindow_pair(c, surface);
			comp_xwm_schedule(wm);
			return;
		}
	}
}

/* -------------------------------------------------------------- policy */

/* policy.c decides for windows that have a compositor window; rule 10
 * (ConfigureRequest) is X's alone and stays xwm-model/policy.c's. */
static struct comp_window *window_of(struct xwm_window *w)
{
	return comp_xwindow_has_window(w->content) ? &w->content->window : NULL;
}

static void policy_place(struct xwm_window *w)
{
	/* Placed, raised and focused when its surface shows (policy.c's rule
	 * 1 and 2, comp_policy_window_mapped); now its first configure (rule
	 * 9: the output's size if it asked for maximized or fullscreen). */
	if (!w->content)
		return;
	struct comp_window *window = comp_xwindow_window(w->content);
	window->maximized = w->client->maximized;
	window->fullscreen = w->client->fullscreen;
	comp_policy_window_initial_configure(window);
	/* ICCCM 4.1.4: the model leaves it unmapped in X, iconic; here it is
	 * a minimized window at once, with no surface to wait for. */
	if (w->client->initial_iconic)
		comp_xwindow_map_iconic(w->content);
}

static void policy_nothing(struct xwm_window *w)
{
	/* Focus follows the compositor window's map. */
}

static void policy_withdrawn(struct xwm_window *w)
{
	/* An iconic window withdrawn (the client's synthetic UnmapNotify)
	 * has no unmap of its surface to go by. */
	if (w->content)
		comp_xwindow_update(w->content);
}

static void policy_activate(struct xwm_window *w)
{
	struct comp_window *window = window_of(w);
	if (window)
		comp_policy_activate(window);
}

static void policy_close(struct xwm_window *w)
{
	struct comp_window *window = window_of(w);
	if (window)
		comp_policy_close(window);
	else
		xwm_window_send_close(w);
}

static void policy_resize(struct xwm_window *w, int width, int height)
{
	struct comp_window *window = window_of(w);
	if (window)
		comp_policy_resize(window, width, height);
	else
		xwm_policy_resize(w, width, height);
}

static void policy_maximize(struct xwm_window *w, bool maximize)
{
	struct comp_window *window = window_of(w);
	if (window)
		comp_policy_request_maximize(window, maximize);
	else
		w->client->maximized = maximize;
}

static void policy_fullscreen(struct xwm_window *w, bool fullscreen)
{
	struct comp_window *window = window_of(w);
	if (window)
		comp_policy_request_fullscreen(window, fullscreen);
	else
		w->client->fullscreen = fullscreen;
}

static void policy_minimize(struct xwm_window *w)
{
	struct comp_window *window = window_of(w);
	if (window)
		comp_policy_request_minimize(window);
}

static void policy_begin_move(struct xwm_window *w, uint32_t direction)
{
	if (w->content)
		comp_xwindow_begin_move(w->content, direction);
}

static const struct xwm_policy_ops policy = {
	.window_place = policy_place,
	.window_mapped = policy_nothing,
	.window_unmapped = policy_withdrawn,
	.activate = policy_activate,
	.close = policy_close,
	.resize = policy_resize,
	.configure_request = xwm_policy_configure_request,
	.request_maximize = policy_maximize,
	.request_fullscreen = policy_fullscreen,
	.request_minimize = policy_minimize,
	.begin_move = policy_begin_move,
};

/* ------------------------------------------------------------ lifecycle */

static xcb_atom_t intern(xcb_connection_t *conn, const char *name)
{
	xcb_intern_atom_reply_t *r =
		xcb_intern_atom_reply(conn, xcb_intern_atom(conn, 0, (uint16_t)strlen(name), name),
		                      NULL);
	xcb_atom_t atom = r ? r->atom : XCB_ATOM_NONE;
	free(r);
	return atom;
}

/* Xwayland makes a wl_surface only for windows redirected by hand
 * (rootless: the compositor composites them), so every child of the root
 * is; the server never draws them itself. */
static int redirect_windows(struct xwm *xwm)
{
	xcb_composite_query_version_reply_t *v = xcb_composite_query_version_reply(xwm->conn,
		xcb_composite_query_version(xwm->conn, 0, 4), NULL);
	free(v);
	xcb_generic_error_t *err = xcb_request_check(xwm->conn,
		xcb_composite_redirect_subwindows_checked(xwm->conn, xwm->root,
		                                          XCB_COMPOSITE_REDIRECT_MANUAL));
	if (!v || err) {
		comp_log("xwayland: cannot redirect X windows (Composite %s)",
		         v ? "RedirectSubwindows failed" : "missing");
		free(err);
		return -1;
	}
	return 0;
}

static bool init_sync(xcb_connection_t *conn)
{
	xcb_sync_initialize_reply_t *r = xcb_sync_initialize_reply(conn,
		xcb_sync_initialize(conn, XCB_SYNC_MAJOR_VERSION, XCB_SYNC_MINOR_VERSION), NULL);
	free(r);
	return r != NULL;
}

/* _NET_WM_CM_S0: X clients that look for a compositing manager (ARGB
 * visuals, effects) find the compositor. */
static int claim_cm_selection(struct xwm *xwm)
{
	xcb_set_selection_owner(xwm->conn, xwm->check_window, xwm->atoms._NET_WM_CM_S0,
	                        xwm->claim_time);
	xcb_get_selection_owner_reply_t *r = xcb_get_selection_owner_reply(xwm->conn,
		xcb_get_selection_owner(xwm->conn, xwm->atoms._NET_WM_CM_S0), NULL);
	bool ours = r && r->owner == xwm->check_window;
	free(r);
	return ours ? 0 : -1;
}

struct comp_xwm *comp_xwm_create(struct comp_server *server, int fd, struct wl_client *client)
{
	struct comp_xwm *wm = calloc(1, sizeof(*wm));
	if (!wm) {
		close(fd);
		return NULL;
	}
	wm->server = server;
	wm->client = client;
	wm->idle_dispatch = handle_idle;
	wl_list_init(&wm->contents);
	wl_list_init(&wm->unmanaged);
	wl_list_init(&wm->new_surface.link);
	wl_list_init(&wm->budget.refused);
	wl_list_init(&wm->budget.reports);
	wm->client_destroy.notify = handle_client_destroy;
	wl_client_add_destroy_listener(client, &wm->client_destroy);
	struct xwm *xwm = &wm->xwm;
	duet_list_init(&xwm->stack);
	xwm->host = &host;
	xwm->host_data = wm;
	xwm->policy = &policy;
	const char *debug = getenv("DUET_XWM_DEBUG"); /* as duet-xwm's */
	xwm->debug = debug && debug[0] && strcmp(debug, "0") != 0;
	/* Xwayland is ready (it wrote -displayfd): its answer to the
	 * connection setup does not wait for us. */
	xwm->conn = xcb_connect_to_fd(fd, NULL);
	if (xcb_connection_has_error(xwm->conn)) {
		comp_log("xwayland: the window manager cannot connect to Xwayland (xcb error %d)",
		         xcb_connection_has_error(xwm->conn));
		goto fail;
	}
	xwm->screen = xcb_setup_roots_iterator(xcb_get_setup(xwm->conn)).data;
	xwm->root = xwm->screen->root;
	/* Before WM_S0: no X client draws before its budget is kept. */
	comp_xbudget_init(wm);
	bool has_sync = init_sync(xwm->conn);
	wm->wl_surface_id = intern(xwm->conn, "WL_SURFACE_ID");
	if (!wm->wl_surface_id || xwm_props_intern_atoms(xwm) < 0 || xwm_wm_claim(xwm) < 0)
		goto fail;
	/* _NET_WM_SYNC_REQUEST and frame timings are listed where they work:
	 * with SYNC and an Xwayland that takes _XWAYLAND_ALLOW_COMMITS. */
	bool frame_sync = comp_xsync_init(wm) && has_sync;
	if (!frame_sync)
		wm->sync_event = 0;
	xwm_props_init_root(xwm, NULL, frame_sync);
	if (claim_cm_selection(xwm) < 0) {
		comp_log("xwayland: cannot take _NET_WM_CM_S0");
		goto fail;
	}
	if (redirect_windows(xwm) < 0)
		goto fail;
	if (xwm_wm_start(xwm, has_sync) < 0)
		goto fail;
	xwm_props_announce(xwm);
	/* Without it X windows are still managed. */
	wm->selection = comp_xsel_create(wm);
	xcb_flush(xwm->conn);
	wm->source = wl_event_loop_add_fd(server->loop, xcb_get_file_descriptor(xwm->conn),
	                                  WL_EVENT_READABLE, handle_fd, wm);
	wm->more = wl_event_loop_add_timer(server->loop, handle_more, wm);
	if (!wm->source || !wm->more)
		goto fail;
	wm->new_surface.notify = handle_new_surface;
	wl_signal_add(&server->new_surface, &wm->new_surface);
	comp_log("xwayland: window manager running (WM_S0, _NET_WM_CM_S0)");
	dispatch(wm); /* what came during the setup */
	return wm;

fail:
	comp_xwm_destroy(wm);
	return NULL;
}

void comp_xwm_destroy(struct comp_xwm *wm)
{
	if (!wm)
		return;
	/* Windows go without X requests: Xwayland is gone or going. */
	wm->quiet = true;
	if (wm->idle)
		wl_event_source_remove(wm->idle);
	if (wm->source)
		wl_event_source_remove(wm->source);
	if (wm->more)
		wl_event_source_remove(wm->more);
	wl_list_remove(&wm->new_surface.link);
	wl_list_remove(&wm->client_destroy.link);
	comp_xbudget_finish(wm);
	comp_xsel_destroy(wm->selection);
	struct xwm *xwm = &wm->xwm;
	if (xwm->conn) {
		xwm_wm_finish(xwm);
		if (xwm->ewmh.connection)
			xcb_ewmh_connection_wipe(&xwm->ewmh);
		xcb_disconnect(xwm->conn);
	}
	comp_xsync_finish(wm);
	free(wm);
}
