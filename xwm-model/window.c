/* Windows' life in the model: every child of the root gets a struct
 * xwm_window, kept in X stacking order and by id, because the host draws
 * override-redirect windows (menus, tooltips) too; the client part is
 * only for windows a client may have managed. */
#include <stdlib.h>

#include <xcb/xcbext.h> /* xcb_discard_reply */

#include "model.h"

struct xwm_window *xwm_window_lookup(struct xwm *xwm, xcb_window_t id)
{
	return xwm_wintable_lookup(&xwm->windows, id);
}

struct xwm_client *xwm_window_client(struct xwm_window *w)
{
	if (w->client)
		return w->client;
	w->client = calloc(1, sizeof(*w->client));
	if (!w->client) {
		xwm_log("out of memory for window 0x%x", w->id);
		return NULL;
	}
	w->client->net_state_len = -1; /* nothing written yet */
	w->client->accepts_input = true;
	return w->client;
}

bool xwm_window_managed(const struct xwm_window *w)
{
	return w->client && w->client->managed;
}

uint32_t xwm_window_pid(const struct xwm_window *w)
{
	return w->client ? w->client->pid : 0;
}

struct xwm_window *xwm_window_create(struct xwm *xwm, xcb_window_t id, int x, int y,
                                     int width, int height, int border,
                                     bool override_redirect)
{
	struct xwm_window *w = calloc(1, sizeof(*w));
	if (!w) {
		xwm_log("out of memory for window 0x%x", id);
		return NULL;
	}
	w->xwm = xwm;
	w->id = id;
	w->x = x;
	w->y = y;
	w->width = width;
	w->height = height;
	w->border = border;
	w->override_redirect = override_redirect;
	if (!override_redirect && !xwm_window_client(w))
		goto fail;
	if (!xwm_wintable_insert(&xwm->windows, w)) {
		xwm_log("out of memory for window 0x%x", id);
		goto fail;
	}
	if (!xwm->host->attach(xwm->host_data, w)) {
		xwm_wintable_remove(&xwm->windows, w);
		goto fail;
	}
	/* New windows are created on top of their siblings. */
	duet_list_insert_after(xwm->stack.prev, &w->link);
	return w;

fail:
	free(w->client);
	free(w);
	return NULL;
}

void xwm_window_free(struct xwm_window *w)
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
	/* A kill of its client not decided yet is not to be done. */
	for (struct xwm_kill *k = xwm->kills; k; k = k->next)
		if (k->w == w)
			k->w = NULL;
	if (w->client && w->client->cfg_pending)
		xwm->configures_pending--;
	xwm->host->destroyed(xwm->host_data, w);
	xwm_wintable_remove(&xwm->windows, w);
	duet_list_remove(&w->link);
	free(w->client);
	free(w);
}
