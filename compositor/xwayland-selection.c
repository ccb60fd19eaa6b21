/* The CLIPBOARD selection between X clients and Wayland clients, text only.
 *
 * Wayland -> X: while a Wayland client's source is the selection, the
 * window manager owns CLIPBOARD with a window of its own. An X client's
 * SelectionRequest for text makes the source write into a pipe, read from
 * the event loop; once the source closes it the bytes go on the
 * requestor's property, in one piece or, above CHUNK, with INCR (ICCCM
 * 2.7.2), then SelectionNotify.
 *
 * X -> Wayland: XFixes tells when an X client takes CLIPBOARD; its TARGETS
 * are asked and, if it has UTF-8 text, a compositor source (no client of
 * its own) becomes the Wayland selection. A Wayland client's receive
 * converts UTF8_STRING into a property of our window (INCR when the owner
 * wants), and the bytes go to the client's fd as it takes them. One
 * property serves one conversion at a time, so receives are queued and
 * converted in turn; their writes to the clients' fds run side by side.
 *
 * Nothing here blocks on a Wayland client: fds are non-blocking and on the
 * event loop. Property reads wait for Xwayland's reply, as weston's and
 * wlroots' do (Xwayland answers its window manager without waiting for the
 * compositor). A transfer that makes no progress for TIMEOUT_MS (a source
 * that never writes, an owner that died or never answers, a requestor
 * that is gone, a client that never reads) is dropped: its fd closed and
 * an X requestor still waiting told None. Writes to a pipe nobody reads
 * any more fail with EPIPE, not SIGPIPE: the server ignores SIGPIPE
 * (main.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xcb/xfixes.h>

#include "xwayland-selection.h"
#include "xwayland-wm.h"

/* Bytes per property write to an X requestor; more go with INCR. */
#define CHUNK (64 * 1024)
/* A transfer larger than this is cut off (X -> Wayland) or refused
 * (Wayland -> X): both sides hold the whole text in memory. */
#define MAX_BYTES (64u << 20)
/* A transfer without progress for this long is dropped. */
#define TIMEOUT_MS 5000

#define MIME_UTF8 "text/plain;charset=utf-8"

enum atom {
	ATOM_CLIPBOARD, ATOM_TARGETS, ATOM_TIMESTAMP, ATOM_INCR, ATOM_UTF8_STRING, ATOM_TEXT,
	ATOM_MIME_UTF8, ATOM_MIME_TEXT, ATOM_DATA, ATOM_TARGETS_DATA, ATOM_COUNT
};

static const char *const atom_names[ATOM_COUNT] = {
	"CLIPBOARD", "TARGETS", "TIMESTAMP", "INCR", "UTF8_STRING", "TEXT", MIME_UTF8,
	"text/plain", "_DUET_CLIPBOARD", "_DUET_CLIPBOARD_TARGETS",
};

/* Our Wayland source holding an X owner's text (ops data). */
struct xsource {
	struct comp_xsel *sel;
	struct comp_data_source *source;
};

struct comp_xsel {
	struct comp_xwm *wm;
	xcb_connection_t *conn;
	xcb_window_t window;            /* owns CLIPBOARD for Wayland, receives from X */
	xcb_atom_t atoms[ATOM_COUNT];
	uint8_t xfixes_event;
	struct wl_listener selection_changed;
	/* Wayland -> X */
	bool owner;                     /* we own CLIPBOARD */
	xcb_timestamp_t owner_time;
	struct wl_list outgoing;        /* struct outgoing.link */
	/* X -> Wayland */
	struct xsource *source;         /* the X owner's text as the Wayland selection */
	struct wl_list incoming;        /* struct incoming.link, in the order asked */
};

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

static xcb_atom_t atom(struct comp_xsel *sel, enum atom a)
{
	return sel->atoms[a];
}

static void flush_soon(struct comp_xsel *sel)
{
	/* Requests made from the Wayland side go out before the loop sleeps. */
	comp_xwm_schedule(sel->wm);
}

static bool append(struct wl_array *array, const void *bytes, size_t n)
{
	if (n == 0)
		return true;
	if (array->size + n > MAX_BYTES)
		return false;
	void *to = wl_array_add(array, n);
	if (!to)
		return false;
	memcpy(to, bytes, n);
	return true;
}

static struct wl_event_source *add_timer(struct comp_xsel *sel, wl_event_loop_timer_func_t fn,
                                         void *data)
{
	struct wl_event_source *timer = wl_event_loop_add_timer(sel->wm->server->loop, fn, data);
	if (timer)
		wl_event_source_timer_update(timer, TIMEOUT_MS);
	return timer;
}

/* ------------------------------------------------------ Wayland -> X */

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

static void outgoing_free(struct outgoing *o)
{
	if (o->mask_set && !requestor_managed(o->sel, o->req.requestor)) {
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
	flush_soon(o->sel);
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
	flush_soon(sel);
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
			if (!append(&o->data, buf, (size_t)n)) {
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

static void handle_selection_request(struct comp_xsel *sel, xcb_selection_request_event_t *ev)
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
	} else {
		struct outgoing *o = calloc(1, sizeof(*o));
		int p[2] = { -1, -1 };
		if (!o || pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
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
		o->fd_source = wl_event_loop_add_fd(sel->wm->server->loop, o->fd, WL_EVENT_READABLE,
		                                    outgoing_readable, o);
		o->timer = add_timer(sel, outgoing_timeout, o);
		/* The source's client gets a copy of the write end. */
		comp_data_source_send(source, mime, p[1]);
		if (!o->fd_source || !o->timer)
			outgoing_refuse(o, "out of memory");
	}
}

static void handle_requestor_property(struct comp_xsel *sel, xcb_property_notify_event_t *ev)
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
	flush_soon(sel);
}

/* ------------------------------------------------------ X -> Wayland */

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
	flush_soon(sel);
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
	if (!append(&in->data, bytes, n)) {
		comp_log("xwayland: clipboard from X over %u bytes: cut off", MAX_BYTES);
		in->x_done = true;
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
	struct incoming *in = calloc(1, sizeof(*in));
	if (!in) {
		close(fd);
		return;
	}
	in->sel = sel;
	in->fd = fd;
	wl_array_init(&in->data);
	wl_list_insert(sel->incoming.prev, &in->link);
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

static void xsource_destroy(struct xsource *xs)
{
	if (xs->sel->source == xs)
		xs->sel->source = NULL;
	comp_data_source_destroy(xs->sel->wm->server, xs->source);
	free(xs);
}

static void source_cancelled(void *data)
{
	/* A Wayland client's selection replaced the X owner's. */
	xsource_destroy(data);
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
	if (text)
		offer_x_text(sel);
	else if (sel->source)
		xsource_destroy(sel->source); /* the Wayland selection is cleared */
}

static void handle_selection_notify(struct comp_xsel *sel, xcb_selection_notify_event_t *ev)
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

static void handle_own_property(struct comp_xsel *sel, xcb_property_notify_event_t *ev)
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
		/* Its TARGETS first: only text is bridged. */
		xcb_convert_selection(sel->conn, sel->window, atom(sel, ATOM_CLIPBOARD),
		                      atom(sel, ATOM_TARGETS), atom(sel, ATOM_TARGETS_DATA),
		                      XCB_CURRENT_TIME);
		return;
	}
	/* The owner let go or is gone (window destroyed, client closed): what
	 * it had is gone, and a conversion it was serving will not finish. */
	if (sel->source)
		xsource_destroy(sel->source);
	struct incoming *in = converting(sel);
	if (in && in->asked && ev->subtype != XCB_XFIXES_SELECTION_EVENT_SET_SELECTION_OWNER) {
		in->x_done = true;
		incoming_drop_fd(in);
	}
}

/* ---------------------------------------------------------- dispatch */

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
		handle_selection_request(sel, req);
		return true;
	}
	case XCB_SELECTION_NOTIFY: {
		xcb_selection_notify_event_t *n = (xcb_selection_notify_event_t *)ev;
		if (n->requestor != sel->window)
			return false;
		handle_selection_notify(sel, n);
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
			handle_own_property(sel, p);
			return true;
		}
		/* A requestor's window may be one the model watches too. */
		handle_requestor_property(sel, p);
		return false;
	}
	case XCB_CREATE_NOTIFY:
		/* Our window is no client's: the model must not track it. */
		return ((xcb_create_notify_event_t *)ev)->window == sel->window;
	default:
		return false;
	}
}

/* --------------------------------------------------------- lifecycle */

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
	/* A Wayland selection made before this Xwayland started. */
	handle_wayland_selection(&sel->selection_changed, NULL);
	return sel;
}

void comp_xsel_destroy(struct comp_xsel *sel)
{
	if (!sel)
		return;
	wl_list_remove(&sel->selection_changed.link);
	struct outgoing *o, *otmp;
	wl_list_for_each_safe(o, otmp, &sel->outgoing, link) {
		o->mask_set = false; /* no X requests now */
		outgoing_free(o);
	}
	/* incoming_free starts the next conversion: none are left to start. */
	struct incoming *in, *itmp;
	wl_list_for_each_safe(in, itmp, &sel->incoming, link)
		in->asked = true;
	wl_list_for_each_safe(in, itmp, &sel->incoming, link)
		incoming_free(in);
	if (sel->source)
		xsource_destroy(sel->source);
	free(sel);
}
