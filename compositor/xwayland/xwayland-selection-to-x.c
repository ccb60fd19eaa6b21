/* Wayland -> X: while a Wayland client's source is the selection, the
 * window manager owns CLIPBOARD (xwayland-selection.c). An X client's
 * SelectionRequest for text makes the source write into a pipe, read from
 * the event loop; once the source closes it the bytes go on the
 * requestor's property, in one piece or, above CHUNK, with INCR (ICCCM
 * 2.7.2), then SelectionNotify. The whole text is read before X is
 * answered (up to MAX_BYTES). A requestor that goes away makes our
 * requests on its window fail (BadWindow, which the model logs at debug
 * level); its transfer then times out. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "xsel-types.h"

/* One SelectionRequest answered from a Wayland source. */
struct outgoing {
	struct comp_xsel *sel;
	struct wl_list link;
	xcb_selection_request_event_t req;
	int fd;                         /* the pipe's read end, -1 once read */
	struct wl_event_source *fd_source, *timer;
	struct wl_array data;
	size_t sent;
	bool incr;                      /* waiting for the requestor's deletes */
	bool mask_set;                  /* we selected PropertyChange on the requestor */
};

static void send_notify(struct comp_xsel *sel, const xcb_selection_request_event_t *req,
                        xcb_atom_t property)
{
	xcb_selection_notify_event_t ev = {
		.response_type = XCB_SELECTION_NOTIFY,
		.time = req->time,
		.requestor = req->requestor,
		.selection = req->selection,
		.target = req->target,
		.property = property,
	};
	/* A requestor gone by now is a BadWindow the model logs at debug. */
	xcb_send_event(sel->conn, 0, req->requestor, XCB_EVENT_MASK_NO_EVENT, (const char *)&ev);
}

static bool requestor_managed(struct comp_xsel *sel, xcb_window_t w)
{
	/* The model already selects PropertyChange on its clients' windows;
	 * an event mask is per connection, so ours must not replace it. */
	struct xwm_window *win = xwm_window_lookup(&sel->wm->xwm, w);
	return win && xwm_window_managed(win);
}

/* Whether another INCR transfer to the same window still needs its
 * PropertyChange events. */
static bool requestor_watched(struct outgoing *o)
{
	struct outgoing *other;
	wl_list_for_each(other, &o->sel->outgoing, link) {
		if (other != o && other->mask_set && other->req.requestor == o->req.requestor)
			return true;
	}
	return false;
}

static void outgoing_free(struct outgoing *o)
{
	if (o->mask_set && !requestor_managed(o->sel, o->req.requestor) &&
	    !requestor_watched(o)) {
		uint32_t none = 0;
		xcb_change_window_attributes(o->sel->conn, o->req.requestor, XCB_CW_EVENT_MASK,
		                             &none);
	}
	if (o->fd_source)
		wl_event_source_remove(o->fd_source);
	if (o->fd >= 0)
		close(o->fd);
	if (o->timer)
		wl_event_source_remove(o->timer);
	wl_array_release(&o->data);
	wl_list_remove(&o->link);
	o->sel->outgoing_count--;
	xsel_flush_soon(o->sel);
	free(o);
}

/* The target names the type of the text the requestor gets (TEXT is
 * answered as UTF8_STRING; STRING gets the UTF-8 bytes as they are). */
static xcb_atom_t reply_type(struct comp_xsel *sel, xcb_atom_t target)
{
	return target == atom(sel, ATOM_TEXT) ? atom(sel, ATOM_UTF8_STRING) : target;
}

static void outgoing_put(struct outgoing *o, size_t offset, size_t n)
{
	xcb_change_property(o->sel->conn, XCB_PROP_MODE_REPLACE, o->req.requestor,
	                    o->req.property, reply_type(o->sel, o->req.target), 8, (uint32_t)n,
	                    (const char *)o->data.data + offset);
}

/* The source closed its end: all the text is here. */
static void outgoing_deliver(struct outgoing *o)
{
	struct comp_xsel *sel = o->sel;
	if (o->data.size <= CHUNK) {
		outgoing_put(o, 0, o->data.size);
		send_notify(sel, &o->req, o->req.property);
		outgoing_free(o);
		return;
	}
	/* INCR: the size first, then a chunk after each delete of the
	 * property by the requestor, then an empty one. */
	if (!requestor_managed(sel, o->req.requestor)) {
		uint32_t mask = XCB_EVENT_MASK_PROPERTY_CHANGE;
		xcb_change_window_attributes(sel->conn, o->req.requestor, XCB_CW_EVENT_MASK, &mask);
		o->mask_set = true;
	}
	uint32_t size = (uint32_t)o->data.size;
	xwm_debug(&sel->wm->xwm, "clipboard: %u bytes to 0x%x with INCR", size,
	          o->req.requestor);
	xcb_change_property(sel->conn, XCB_PROP_MODE_REPLACE, o->req.requestor, o->req.property,
	                    atom(sel, ATOM_INCR), 32, 1, &size);
	send_notify(sel, &o->req, o->req.property);
	o->incr = true;
	wl_event_source_timer_update(o->timer, TIMEOUT_MS);
	xsel_flush_soon(sel);
}

static void outgoing_refuse(struct outgoing *o, const char *why)
{
	comp_log("xwayland: clipboard to X window 0x%x refused: %s", o->req.requestor, why);
	if (!o->incr)
		send_notify(o->sel, &o->req, XCB_ATOM_NONE);
	outgoing_free(o);
}

static int outgoing_readable(int fd, uint32_t mask, void *data)
{
	struct outgoing *o = data;
	char buf[16384];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			if (!xsel_append(&o->data, buf, (size_t)n)) {
				outgoing_refuse(o, "text over the size limit");
				return 0;
			}
			wl_event_source_timer_update(o->timer, TIMEOUT_MS);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		break;
	}
	/* EOF (or a read error: what came is what there is). */
	wl_event_source_remove(o->fd_source);
	o->fd_source = NULL;
	close(o->fd);
	o->fd = -1;
	outgoing_deliver(o);
	return 0;
}

static int outgoing_timeout(void *data)
{
	struct outgoing *o = data;
	outgoing_refuse(o, o->incr ? "the requestor stopped taking the text"
	                           : "the Wayland source did not write it in time");
	return 0;
}

/* The requestor deleted the property: the next chunk, the empty one last. */
static void outgoing_property_deleted(struct outgoing *o)
{
	size_t n = o->data.size - o->sent;
	if (n > CHUNK)
		n = CHUNK;
	outgoing_put(o, o->sent, n);
	o->sent += n;
	wl_event_source_timer_update(o->timer, TIMEOUT_MS);
	if (n == 0)
		outgoing_free(o);
}

static const char *source_text_mime(struct comp_data_source *source)
{
	static const char *const preferred[] = { MIME_UTF8, "UTF8_STRING", "text/plain",
	                                         "TEXT", "STRING" };
	for (size_t i = 0; i < sizeof(preferred) / sizeof(preferred[0]); i++) {
		if (comp_data_source_has_mime(source, preferred[i]))
			return preferred[i];
	}
	return NULL;
}

static bool is_text_target(struct comp_xsel *sel, xcb_atom_t target)
{
	return target == atom(sel, ATOM_UTF8_STRING) || target == atom(sel, ATOM_TEXT) ||
	       target == XCB_ATOM_STRING || target == atom(sel, ATOM_MIME_UTF8) ||
	       target == atom(sel, ATOM_MIME_TEXT);
}

static void answer_targets(struct comp_xsel *sel, const xcb_selection_request_event_t *req,
                           bool text)
{
	xcb_atom_t targets[] = {
		atom(sel, ATOM_TARGETS), atom(sel, ATOM_TIMESTAMP), atom(sel, ATOM_UTF8_STRING),
		atom(sel, ATOM_TEXT), XCB_ATOM_STRING, atom(sel, ATOM_MIME_UTF8),
		atom(sel, ATOM_MIME_TEXT),
	};
	xcb_change_property(sel->conn, XCB_PROP_MODE_REPLACE, req->requestor, req->property,
	                    XCB_ATOM_ATOM, 32, text ? 7 : 2, targets);
	send_notify(sel, req, req->property);
}

void comp_xsel_handle_request(struct comp_xsel *sel, xcb_selection_request_event_t *ev)
{
	xcb_selection_request_event_t req = *ev;
	/* ICCCM 2.2: an obsolete requestor gives no property. */
	if (req.property == XCB_ATOM_NONE)
		req.property = req.target;
	struct comp_data_source *source = comp_data_device_get_selection(sel->wm->server);
	const char *mime = sel->owner && source && req.selection == atom(sel, ATOM_CLIPBOARD)
	                   ? source_text_mime(source) : NULL;
	if (!sel->owner || req.selection != atom(sel, ATOM_CLIPBOARD)) {
		send_notify(sel, &req, XCB_ATOM_NONE);
	} else if (req.target == atom(sel, ATOM_TARGETS)) {
		answer_targets(sel, &req, mime != NULL);
	} else if (req.target == atom(sel, ATOM_TIMESTAMP)) {
		xcb_change_property(sel->conn, XCB_PROP_MODE_REPLACE, req.requestor, req.property,
		                    XCB_ATOM_INTEGER, 32, 1, &sel->owner_time);
		send_notify(sel, &req, req.property);
	} else if (!mime || !is_text_target(sel, req.target)) {
		send_notify(sel, &req, XCB_ATOM_NONE);
	} else if (sel->outgoing_count >= MAX_TRANSFERS) {
		comp_log("xwayland: clipboard to X window 0x%x refused: %d transfers open",
		         req.requestor, MAX_TRANSFERS);
		send_notify(sel, &req, XCB_ATOM_NONE);
	} else {
		struct outgoing *o = calloc(1, sizeof(*o));
		int p[2] = { -1, -1 };
		/* Only our end is non-blocking: the source's client may write
		 * with plain blocking writes. */
		if (!o || pipe2(p, O_CLOEXEC) < 0 || fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
			if (p[0] >= 0) {
				close(p[0]);
				close(p[1]);
			}
			comp_log("xwayland: clipboard to X: %s", o ? "no pipe" : "out of memory");
			free(o);
			send_notify(sel, &req, XCB_ATOM_NONE);
			return;
		}
		o->sel = sel;
		o->req = req;
		o->fd = p[0];
		wl_array_init(&o->data);
		wl_list_insert(sel->outgoing.prev, &o->link);
		sel->outgoing_count++;
		o->fd_source = wl_event_loop_add_fd(sel->wm->server->loop, o->fd, WL_EVENT_READABLE,
		                                    outgoing_readable, o);
		o->timer = xsel_add_timer(sel, outgoing_timeout, o);
		/* The source's client gets a copy of the write end. */
		comp_data_source_send(source, mime, p[1]);
		if (!o->fd_source || !o->timer)
			outgoing_refuse(o, "out of memory");
	}
}

void comp_xsel_requestor_property(struct comp_xsel *sel, xcb_property_notify_event_t *ev)
{
	if (ev->state != XCB_PROPERTY_DELETE)
		return;
	struct outgoing *o;
	wl_list_for_each(o, &sel->outgoing, link) {
		if (o->incr && o->req.requestor == ev->window && o->req.property == ev->atom) {
			outgoing_property_deleted(o);
			return;
		}
	}
}

void comp_xsel_to_x_finish(struct comp_xsel *sel)
{
	struct outgoing *o, *tmp;
	wl_list_for_each_safe(o, tmp, &sel->outgoing, link) {
		o->mask_set = false;
		outgoing_free(o);
	}
}
