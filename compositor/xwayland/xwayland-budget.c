/* The texture budgets of docs/security.md ("Budgets") kept per X client.
 *
 * Xwayland is one Wayland client standing for every X client: charging
 * its surfaces to its own connection, as budget.c does for a Wayland
 * client, would have one X client's huge window cut Xwayland off, and
 * every X client with it. While the window manager runs it is the payer
 * of Xwayland's surfaces (struct comp_budget_payer): a surface paired with
 * an X window (WL_SURFACE_ID, xwayland-window.c) is charged to that
 * window's X client, under the client budget and the total a Wayland
 * client has. An X client whose commit would go over either is
 * disconnected alone (KillClient on its window) with a log line; its
 * windows are hidden and nothing more of theirs is charged or shown.
 *
 * An X client is the client part of its window's XID (id & ~the setup's
 * resource_id_mask), not X-Resource's QueryClientIds: every XID carries
 * it, so finding it takes no round trip in the middle of a Wayland commit
 * (a blocking one there would stall the compositor on Xwayland); a client
 * makes XIDs only in its own range, so it cannot charge another; and it
 * is what KillClient acts on. X-Resource is asked only for the pid of a
 * client being killed, for the log line, under the grab the kill waits
 * for (xwm_window_kill), so that it is the client the kill reaches.
 *
 * A surface whose X window is not known yet: WL_SURFACE_ID comes on the X
 * connection and the surface's commits on the Wayland one, in no fixed
 * order (Xwayland 22.1 flushes both from its block handler), and
 * Xwayland's own surfaces (its cursor) never get an X window. Those are
 * charged to an Xwayland-wide pool limited by the total budget, which
 * keeps the compositor safe whoever ends up paying, and each of them by
 * the client budget (no X client may have more; a cursor is never that
 * large). A window's charge becomes its X client's at pairing, checked
 * against its budget then. Refusing them until paired would drop a new
 * window's first commit and the frame callback Xwayland waits for before
 * it commits that window again (it would stay blank); holding them would
 * keep Xwayland's buffers and need a role before Xwayland gives one.
 * Xwayland's connection is never cut either way. A commit over those
 * limits while the X window is unknown is refused (there is no one to
 * blame yet) and remembered: the X client the pairing names is killed
 * then, as a Wayland client whose commit would go over is disconnected.
 */
#include <stdio.h>
#include <stdlib.h>

#include <xcb/res.h>
#include <xcb/xcbext.h> /* xcb_poll_for_reply */

#include "xwm-types.h"

#define MIB (1024ull * 1024ull)

/* A commit of a surface without an X window, refused over a budget. */
struct xbudget_refusal {
	struct wl_list link; /* comp_xbudget.refused */
	struct comp_surface *surface;
	struct wl_listener surface_destroy;
	char what[128];
};

/* A kill whose log line waits for X-Resource's pid of the client. */
struct xbudget_report {
	struct wl_list link; /* comp_xbudget.reports */
	unsigned int sequence; /* the QueryClientIds' */
	uint32_t client, window;
	uint32_t net_wm_pid; /* the client's own word for it; 0: none */
	char what[128];
};

static uint32_t client_of(const struct comp_xwm *wm, xcb_window_t id)
{
	return id & ~wm->budget.id_mask;
}

static struct xwm_content *content_of(struct comp_xwm *wm, struct comp_surface *surface)
{
	struct xwm_content *c;
	wl_list_for_each(c, &wm->contents, link)
		if (c->surface == surface)
			return c;
	return NULL;
}

/* The texture bytes of client's windows' surfaces, but for except's. */
static uint64_t client_bytes(struct comp_xwm *wm, uint32_t client, struct comp_surface *except)
{
	uint64_t bytes = 0;
	struct xwm_content *c;
	wl_list_for_each(c, &wm->contents, link)
		if (c->surface && c->surface != except && client_of(wm, c->x->id) == client)
			bytes += c->surface->texture_charge;
	return bytes;
}

/* c's client was killed: c was marked then, or, made while the kill was
 * on its way, one of its client's windows was. */
static bool doomed(struct xwm_content *c)
{
	uint32_t client = client_of(c->wm, c->x->id);
	struct xwm_content *o;
	wl_list_for_each(o, &c->wm->contents, link)
		if (o->doomed && client_of(c->wm, o->x->id) == client)
			c->doomed = true;
	return c->doomed;
}

static uint32_t net_wm_pid(struct comp_xwm *wm, uint32_t client)
{
	struct xwm_content *c;
	wl_list_for_each(c, &wm->contents, link)
		if (client_of(wm, c->x->id) == client && xwm_window_pid(c->x))
			return xwm_window_pid(c->x);
	return 0;
}

static void log_kill(uint32_t client, uint32_t pid, uint32_t window, const char *what,
                     const char *done)
{
	char p[16] = "unknown";
	if (pid)
		snprintf(p, sizeof(p), "%u", pid);
	comp_log("X client 0x%x (pid %s) over budget: window 0x%x: %s: %s", client, p, window,
	         what, done);
}

/* A kill on its way (xwm_window_kill): what its log line says. */
struct xbudget_kill {
	struct comp_xwm *wm;
	uint32_t client, pid;
	char what[128];
};

/* The model has the server grabbed and knows whether the window is still
 * the one the kill meant: the pid question, asked now, is about the
 * client the KillClient after it kills. */
static void kill_decided(void *data, struct xwm_window *w, xcb_window_t id)
{
	struct xbudget_kill *k = data;
	struct comp_xwm *wm = k->wm;
	struct xbudget_report *r = w && wm->budget.has_res ? calloc(1, sizeof(*r)) : NULL;
	if (r) {
		xcb_res_client_id_spec_t spec = {
			.client = id,
			.mask = XCB_RES_CLIENT_ID_MASK_LOCAL_CLIENT_PID,
		};
		r->sequence = xcb_res_query_client_ids(wm->xwm.conn, 1, &spec).sequence;
		r->client = k->client;
		r->window = id;
		r->net_wm_pid = k->pid;
		snprintf(r->what, sizeof(r->what), "%s", k->what);
		wl_list_insert(wm->budget.reports.prev, &r->link);
	} else {
		log_kill(k->client, k->pid, id, k->what,
		         w ? "KillClient" : "not killed (the window went first; its ids may "
		                            "be another client's now)");
	}
	free(k);
}

/* KillClient for c's client, once the model is sure the window is still
 * its (xwm_window_kill); its windows doomed now. */
static void kill_client(struct xwm_content *c, const char *what)
{
	struct comp_xwm *wm = c->wm;
	uint32_t client = client_of(wm, c->x->id);
	struct xwm_content *o;
	wl_list_for_each(o, &wm->contents, link)
		if (client_of(wm, o->x->id) == client)
			o->doomed = true;
	wm->budget.hide_doomed = true;
	uint32_t pid = net_wm_pid(wm, client);
	if (client == xcb_get_setup(wm->xwm.conn)->resource_id_base) {
		/* Ours (the WM's own windows draw nothing): never cut ourselves off. */
		log_kill(client, pid, c->x->id, what, "not killed (the window manager's own)");
		return;
	}
	if (wm->quiet) {
		/* Xwayland is going, and its clients with it. */
		log_kill(client, pid, c->x->id, what, "not killed (no X connection)");
		return;
	}
	struct xbudget_kill *k = calloc(1, sizeof(*k));
	if (k) {
		k->wm = wm;
		k->client = client;
		k->pid = pid;
		snprintf(k->what, sizeof(k->what), "%s", what);
	}
	if (!k || !xwm_window_kill(c->x, kill_decided, k)) {
		free(k);
		log_kill(client, pid, c->x->id, what, "not killed (out of memory)");
		return;
	}
	comp_xwm_schedule(wm);
}

/* ------------------------------------------------- refused, no X window */

static void drop_refusal(struct xbudget_refusal *r)
{
	wl_list_remove(&r->link);
	wl_list_remove(&r->surface_destroy.link);
	free(r);
}

static void handle_refused_surface_destroy(struct wl_listener *listener, void *data)
{
	struct xbudget_refusal *r = wl_container_of(listener, r, surface_destroy);
	drop_refusal(r);
}

static struct xbudget_refusal *refusal_of(struct comp_xwm *wm, struct comp_surface *surface)
{
	struct xbudget_refusal *r;
	wl_list_for_each(r, &wm->budget.refused, link)
		if (r->surface == surface)
			return r;
	return NULL;
}

/* A commit of a surface without an X window (yet) was refused for what:
 * one log line a surface, however often it tries again; the X client the
 * pairing names is killed then (comp_xbudget_paired). */
static void remember_refusal(struct comp_xwm *wm, struct comp_surface *surface,
                             const char *what)
{
	struct xbudget_refusal *r = refusal_of(wm, surface);
	if (!r)
		comp_log("xwayland: wl_surface@%u without an X window (yet) over budget: %s: "
		         "refused; the X client is killed if an X window pairs with it",
		         wl_resource_get_id(surface->resource), what);
	if (!r && (r = calloc(1, sizeof(*r)))) {
		r->surface = surface;
		r->surface_destroy.notify = handle_refused_surface_destroy;
		wl_signal_add(&surface->destroy_signal, &r->surface_destroy);
		wl_list_insert(&wm->budget.refused, &r->link);
	}
	if (r)
		snprintf(r->what, sizeof(r->what), "%s", what);
}

/* A surface without an X window: one of them may take what one client
 * may (no X client has a window larger), all of them together what the
 * total leaves. */
static bool charge_unknown(struct comp_xwm *wm, struct comp_surface *surface, uint64_t bytes,
                           uint64_t all)
{
	const struct comp_options *opt = &wm->server->options;
	char what[128];
	if (bytes > opt->client_texture_budget) {
		snprintf(what, sizeof(what), "textures of %llu MiB would exceed the client budget "
		         "of %llu MiB", (unsigned long long)(bytes / MIB),
		         (unsigned long long)(opt->client_texture_budget / MIB));
	} else if (all > opt->texture_budget) {
		snprintf(what, sizeof(what), "textures of %llu MiB in all would exceed the budget "
		         "of %llu MiB", (unsigned long long)(all / MIB),
		         (unsigned long long)(opt->texture_budget / MIB));
	} else {
		struct xbudget_refusal *r = refusal_of(wm, surface);
		if (r)
			drop_refusal(r);
		xwm_debug(&wm->xwm, "wl_surface@%u: %llu KiB charged before its X window is known",
		          wl_resource_get_id(surface->resource), (unsigned long long)(bytes / 1024));
		return true;
	}
	remember_refusal(wm, surface, what);
	return false;
}

/* ---------------------------------------------------------------- payer */

static bool charge(struct comp_budget_payer *payer, struct comp_surface *surface,
                   uint64_t bytes, uint64_t all)
{
	struct comp_xwm *wm = wl_container_of(payer, wm, budget.payer);
	struct xwm_content *c = content_of(wm, surface);
	if (!c)
		return charge_unknown(wm, surface, bytes, all);
	if (doomed(c))
		return false;
	const struct comp_options *opt = &wm->server->options;
	uint64_t mine = client_bytes(wm, client_of(wm, c->x->id), surface) + bytes;
	char what[128];
	if (mine > opt->client_texture_budget)
		snprintf(what, sizeof(what), "textures of %llu MiB would exceed the client budget "
		         "of %llu MiB", (unsigned long long)(mine / MIB),
		         (unsigned long long)(opt->client_texture_budget / MIB));
	else if (all > opt->texture_budget)
		snprintf(what, sizeof(what), "textures of %llu MiB in all would exceed the budget "
		         "of %llu MiB", (unsigned long long)(all / MIB),
		         (unsigned long long)(opt->texture_budget / MIB));
	else
		return true;
	kill_client(c, what);
	return false;
}

/* A texture the renderer cannot make (a window past its size limit) is
 * its X client's doing as a budget it went over is: that client is
 * killed, not Xwayland. */
static void refuse(struct comp_budget_payer *payer, struct comp_surface *surface,
                   const char *what)
{
	struct comp_xwm *wm = wl_container_of(payer, wm, budget.payer);
	struct xwm_content *c = content_of(wm, surface);
	if (!c)
		remember_refusal(wm, surface, what);
	else if (!doomed(c))
		kill_client(c, what);
}

bool comp_xbudget_paired(struct xwm_content *c)
{
	struct comp_xwm *wm = c->wm;
	struct xbudget_refusal *r = refusal_of(wm, c->surface);
	char what[128] = "";
	if (r) {
		snprintf(what, sizeof(what), "%s", r->what);
		drop_refusal(r);
	}
	if (doomed(c))
		return false;
	if (!what[0]) {
		uint64_t budget = wm->server->options.client_texture_budget;
		uint64_t mine = client_bytes(wm, client_of(wm, c->x->id), NULL);
		if (!c->surface->texture_charge || mine <= budget)
			return true;
		snprintf(what, sizeof(what), "textures of %llu MiB would exceed the client budget "
		         "of %llu MiB", (unsigned long long)(mine / MIB),
		         (unsigned long long)(budget / MIB));
	}
	kill_client(c, what);
	return false;
}

/* -------------------------------------------------------- the log lines */

static uint32_t reply_pid(xcb_res_query_client_ids_reply_t *reply)
{
	xcb_res_client_id_value_iterator_t it = xcb_res_query_client_ids_ids_iterator(reply);
	for (; it.rem; xcb_res_client_id_value_next(&it))
		if ((it.data->spec.mask & XCB_RES_CLIENT_ID_MASK_LOCAL_CLIENT_PID) &&
		    it.data->length >= 4)
			return *xcb_res_client_id_value_value(it.data);
	return 0;
}

/* The server's pid of the client (its socket's peer) over _NET_WM_PID,
 * which the client writes itself. */
static void report(struct xbudget_report *r, xcb_res_query_client_ids_reply_t *reply)
{
	uint32_t pid = reply ? reply_pid(reply) : 0;
	log_kill(r->client, pid ? pid : r->net_wm_pid, r->window, r->what, "KillClient");
	wl_list_remove(&r->link);
	free(r);
}

void comp_xbudget_dispatch(struct comp_xwm *wm)
{
	struct xbudget_report *r, *tmp;
	wl_list_for_each_safe(r, tmp, &wm->budget.reports, link) {
		void *reply = NULL;
		xcb_generic_error_t *err = NULL;
		if (!xcb_poll_for_reply(wm->xwm.conn, r->sequence, &reply, &err))
			continue;
		report(r, reply);
		free(reply);
		free(err);
	}
}

/* ------------------------------------------------------------ lifecycle */

void comp_xbudget_init(struct comp_xwm *wm)
{
	struct comp_xbudget *b = &wm->budget;
	xcb_connection_t *conn = wm->xwm.conn;
	b->id_mask = xcb_get_setup(conn)->resource_id_mask;
	/* QueryClientIds is X-Resource 1.2's. */
	const xcb_query_extension_reply_t *ext = xcb_get_extension_data(conn, &xcb_res_id);
	if (ext && ext->present) {
		xcb_res_query_version_reply_t *v = xcb_res_query_version_reply(conn,
			xcb_res_query_version(conn, 1, 2), NULL);
		b->has_res = v && (v->server_major > 1 ||
		                   (v->server_major == 1 && v->server_minor >= 2));
		free(v);
	}
	if (!wm->client)
		return;
	b->payer.client = wm->client;
	b->payer.charge = charge;
	b->payer.refuse = refuse;
	wm->server->budget_payer = &b->payer;
}

void comp_xbudget_client_gone(struct comp_xwm *wm)
{
	if (wm->server->budget_payer == &wm->budget.payer)
		wm->server->budget_payer = NULL;
	wm->budget.payer.client = NULL;
}

void comp_xbudget_finish(struct comp_xwm *wm)
{
	comp_xbudget_client_gone(wm);
	struct xbudget_report *r, *rtmp;
	wl_list_for_each_safe(r, rtmp, &wm->budget.reports, link)
		report(r, NULL);
	struct xbudget_refusal *f, *ftmp;
	wl_list_for_each_safe(f, ftmp, &wm->budget.refused, link)
		drop_refusal(f);
}
