/* X -> Wayland: when an X client takes CLIPBOARD (xwayland-selection.c
 * sees it through XFixes), its TARGETS are asked and, if it has UTF-8
 * text, a compositor source (no client of its own) becomes the Wayland
 * selection. A Wayland client's receive converts UTF8_STRING into a
 * property of our window (INCR when the owner wants), and the bytes go to
 * the client's fd as it takes them. One property serves one conversion
 * at a time, so receives are queued and converted in turn; their writes
 * to the clients' fds run side by side. Writes to a pipe nobody reads any
 * more fail with EPIPE, not SIGPIPE: the server ignores SIGPIPE (main.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "xsel-types.h"

/* One Wayland receive served from the X owner. */
struct incoming {
	struct comp_xsel *sel;
	struct wl_list link;
	int fd;                         /* the client's, -1 once it failed */
	struct wl_event_source *fd_source, *timer;
	struct wl_array data;
	size_t written;
	bool asked, incr, x_done;
};

static struct incoming *converting(struct comp_xsel *sel)
{
	struct incoming *in;
	wl_list_for_each(in, &sel->incoming, link) {
		if (!in->x_done)
			return in;
	}
	return NULL;
}

static void convert_next(struct comp_xsel *sel)
{
	struct incoming *in = converting(sel);
	if (!in || in->asked)
		return;
	in->asked = true;
	wl_event_source_timer_update(in->timer, TIMEOUT_MS);
	xcb_delete_property(sel->conn, sel->window, atom(sel, ATOM_DATA));
	xcb_convert_selection(sel->conn, sel->window, atom(sel, ATOM_CLIPBOARD),
	                      atom(sel, ATOM_UTF8_STRING), atom(sel, ATOM_DATA), XCB_CURRENT_TIME);
	xsel_flush_soon(sel);
}

static void incoming_free(struct incoming *in)
{
	struct comp_xsel *sel = in->sel;
	if (in->fd_source)
		wl_event_source_remove(in->fd_source);
	if (in->fd >= 0)
		close(in->fd);
	if (in->timer)
		wl_event_source_remove(in->timer);
	wl_array_release(&in->data);
	wl_list_remove(&in->link);
	sel->incoming_count--;
	free(in);
	convert_next(sel);
}

/* The client's fd failed or timed out: what X still sends is dropped. */
static void incoming_drop_fd(struct incoming *in)
{
	if (in->fd_source)
		wl_event_source_remove(in->fd_source);
	in->fd_source = NULL;
	if (in->fd >= 0)
		close(in->fd);
	in->fd = -1;
	in->data.size = in->written = 0;
	if (in->x_done)
		incoming_free(in);
}

static int incoming_writable(int fd, uint32_t mask, void *data)
{
	struct incoming *in = data;
	while (in->written < in->data.size) {
		ssize_t n = write(in->fd, (const char *)in->data.data + in->written,
		                  in->data.size - in->written);
		if (n > 0) {
			in->written += (size_t)n;
			wl_event_source_timer_update(in->timer, TIMEOUT_MS);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			wl_event_source_fd_update(in->fd_source, WL_EVENT_WRITABLE);
			return 0;
		}
		incoming_drop_fd(in); /* EPIPE: the client closed its end */
		return 0;
	}
	in->data.size = in->written = 0;
	if (in->x_done)
		incoming_free(in);
	else
		wl_event_source_fd_update(in->fd_source, 0);
	return 0;
}

/* Bytes (or the end) came from X. */
static void incoming_got(struct incoming *in, const void *bytes, size_t n, bool done)
{
	wl_event_source_timer_update(in->timer, TIMEOUT_MS);
	if (done)
		in->x_done = true;
	if (in->fd < 0) {
		if (done)
			incoming_free(in);
		return;
	}
	if (!xsel_append(&in->data, bytes, n)) {
		/* The owner's INCR goes on into our property: it is drained
		 * (and dropped) before the next conversion uses it. */
		comp_log("xwayland: clipboard from X over %u bytes: cut off", MAX_BYTES);
		incoming_drop_fd(in);
		return;
	}
	if (in->x_done)
		convert_next(in->sel);
	incoming_writable(in->fd, WL_EVENT_WRITABLE, in);
}

static int incoming_timeout(void *data)
{
	struct incoming *in = data;
	comp_log("xwayland: clipboard from X: no progress in %d ms, dropped", TIMEOUT_MS);
	in->x_done = true;
	incoming_drop_fd(in);
	return 0;
}

static void source_send(void *data, const char *mime_type, int fd)
{
	struct xsource *xs = data;
	struct comp_xsel *sel = xs->sel;
	struct incoming *in = sel->incoming_count < MAX_TRANSFERS ? calloc(1, sizeof(*in)) : NULL;
	if (!in) {
		/* The client reads nothing (EOF). */
		comp_log("xwayland: clipboard from X: a receive refused (%d open, or no memory)",
		         sel->incoming_count);
		close(fd);
		return;
	}
	in->sel = sel;
	in->fd = fd;
	wl_array_init(&in->data);
	wl_list_insert(sel->incoming.prev, &in->link);
	sel->incoming_count++;
	int flags = fcntl(fd, F_GETFL);
	/* Its time runs from when it is converted (convert_next), not while
	 * it waits for the ones before it. */
	in->timer = wl_event_loop_add_timer(sel->wm->server->loop, incoming_timeout, in);
	in->fd_source = wl_event_loop_add_fd(sel->wm->server->loop, fd, 0, incoming_writable, in);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 || !in->timer ||
	    !in->fd_source) {
		in->x_done = true;
		incoming_free(in);
		return;
	}
	convert_next(sel);
}

void comp_xsel_source_destroy(struct xsource *xs)
{
	if (xs->sel->source == xs)
		xs->sel->source = NULL;
	comp_data_source_destroy(xs->sel->wm->server, xs->source);
	free(xs);
}

static void source_cancelled(void *data)
{
	/* A Wayland client's selection replaced the X owner's. */
	comp_xsel_source_destroy(data);
}

static const struct comp_data_source_ops source_ops = {
	.send = source_send,
	.cancelled = source_cancelled,
};

/* The new X owner has text: it becomes the Wayland selection. */
static void offer_x_text(struct comp_xsel *sel)
{
	struct xsource *xs = calloc(1, sizeof(*xs));
	if (!xs)
		return;
	xs->sel = sel;
	xs->source = comp_data_source_create(&source_ops, xs);
	if (!xs->source || comp_data_source_offer(xs->source, MIME_UTF8) < 0 ||
	    comp_data_source_offer(xs->source, "text/plain") < 0 ||
	    comp_data_source_offer(xs->source, "UTF8_STRING") < 0) {
		if (xs->source)
			comp_data_source_destroy(sel->wm->server, xs->source);
		free(xs);
		return;
	}
	/* The previous X owner's source, the selection until now, is
	 * cancelled (and freed) by this: one change for Wayland clients. */
	sel->source = xs;
	comp_data_device_set_selection(sel->wm->server, xs->source);
}

static xcb_get_property_reply_t *take_property(struct comp_xsel *sel, xcb_atom_t property)
{
	/* Deleting it as it is read is INCR's go-ahead for the next chunk. */
	return xcb_get_property_reply(sel->conn,
		xcb_get_property(sel->conn, 1, sel->window, property, XCB_GET_PROPERTY_TYPE_ANY, 0,
		                 MAX_BYTES / 4), NULL);
}

static void handle_targets(struct comp_xsel *sel, xcb_atom_t property)
{
	xcb_get_property_reply_t *r = property ? take_property(sel, property) : NULL;
	bool text = false;
	if (r && r->type == XCB_ATOM_ATOM && r->format == 32) {
		const xcb_atom_t *targets = xcb_get_property_value(r);
		int n = xcb_get_property_value_length(r) / 4;
		for (int i = 0; i < n; i++)
			text |= targets[i] == atom(sel, ATOM_UTF8_STRING);
	}
	free(r);
	xwm_debug(&sel->wm->xwm, "clipboard: the X owner %s", text ? "has text" : "has no text");
	/* A Wayland copy made since the X owner took CLIPBOARD is newer. */
	if (sel->owner)
		return;
	if (text)
		offer_x_text(sel);
	else if (sel->source)
		comp_xsel_source_destroy(sel->source); /* the Wayland selection is cleared */
}

void comp_xsel_handle_notify(struct comp_xsel *sel, xcb_selection_notify_event_t *ev)
{
	if (ev->selection != atom(sel, ATOM_CLIPBOARD))
		return;
	if (ev->target == atom(sel, ATOM_TARGETS)) {
		handle_targets(sel, ev->property);
		return;
	}
	struct incoming *in = converting(sel);
	if (!in || !in->asked || in->incr)
		return;
	xcb_get_property_reply_t *r =
		ev->property == XCB_ATOM_NONE ? NULL : take_property(sel, ev->property);
	if (r && r->type == atom(sel, ATOM_INCR)) {
		xwm_debug(&sel->wm->xwm, "clipboard: from X with INCR");
		in->incr = true; /* chunks come as PropertyNotify NewValue */
		wl_event_source_timer_update(in->timer, TIMEOUT_MS);
	} else if (r) {
		incoming_got(in, xcb_get_property_value(r),
		             (size_t)xcb_get_property_value_length(r), true);
	} else {
		/* Refused: the client reads nothing. */
		incoming_got(in, NULL, 0, true);
	}
	free(r);
}

void comp_xsel_own_property(struct comp_xsel *sel, xcb_property_notify_event_t *ev)
{
	struct incoming *in = converting(sel);
	if (ev->atom != atom(sel, ATOM_DATA) || ev->state != XCB_PROPERTY_NEW_VALUE || !in ||
	    !in->incr)
		return;
	xcb_get_property_reply_t *r = take_property(sel, ev->atom);
	size_t n = r ? (size_t)xcb_get_property_value_length(r) : 0;
	incoming_got(in, r ? xcb_get_property_value(r) : NULL, n, n == 0);
	free(r);
}

void comp_xsel_owner_gone(struct comp_xsel *sel, bool died)
{
	/* What it had is gone, and a conversion it was serving will not
	 * finish if it died. */
	if (sel->source)
		comp_xsel_source_destroy(sel->source);
	struct incoming *in = converting(sel);
	if (in && in->asked && died) {
		in->x_done = true;
		incoming_drop_fd(in);
	}
}

void comp_xsel_from_x_finish(struct comp_xsel *sel)
{
	/* incoming_free starts the next conversion: none are left to start. */
	struct incoming *in, *tmp;
	wl_list_for_each(in, &sel->incoming, link)
		in->asked = true;
	wl_list_for_each_safe(in, tmp, &sel->incoming, link)
		incoming_free(in);
	if (sel->source)
		comp_xsel_source_destroy(sel->source);
}
