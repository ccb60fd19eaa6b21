/* ICCCM and EWMH properties: what clients tell us (read here, parsed by
 * the pure functions of hints.c) and what we publish for them and for
 * pagers and tests (_NET_CLIENT_LIST, _NET_ACTIVE_WINDOW, WM_STATE...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <xcb/xcb_icccm.h>
#include <xcb/xcbext.h> /* xcb_poll_for_reply */

#include "model.h"

/* Longest property we read, in 32-bit units: enough for any hint, names
 * are cut at 127 bytes anyway. */
#define PROP_MAX_LONGS 64

/* hints.h spells the ICCCM states without xcb; they must agree. */
_Static_assert((int)XWM_WM_STATE_NORMAL == (int)XCB_ICCCM_WM_STATE_NORMAL &&
               (int)XWM_WM_STATE_ICONIC == (int)XCB_ICCCM_WM_STATE_ICONIC &&
               (int)XWM_WM_STATE_WITHDRAWN == (int)XCB_ICCCM_WM_STATE_WITHDRAWN,
               "WM_STATE values");

void xwm_props_init_root(struct xwm *xwm, const char *screenshot_dir, bool frame_sync)
{
	xcb_connection_t *c = xwm->conn;
	xcb_ewmh_connection_t *e = &xwm->ewmh;

	/* The supporting-WM check window (made by xwm_wm_claim) doubles as
	 * the owner of the WM_S0 and _NET_WM_CM_S0 selections. */
	/* The root's _NET_SUPPORTING_WM_CHECK comes later (announce). */
	xcb_ewmh_set_supporting_wm_check(e, xwm->check_window, xwm->check_window);
	xcb_ewmh_set_wm_name(e, xwm->check_window, strlen("duet-xwm"), "duet-xwm");
	/* Where _DUET_SCREENSHOT writes, for duet-xctl (docs/xwm-control.md). */
	if (screenshot_dir)
		xcb_change_property(c, XCB_PROP_MODE_REPLACE, xwm->check_window,
		                    xwm->atoms._DUET_SCREENSHOT_DIR, e->UTF8_STRING, 8,
		                    (uint32_t)strlen(screenshot_dir), screenshot_dir);

	const xcb_atom_t always[] = {
		e->_NET_SUPPORTED, e->_NET_SUPPORTING_WM_CHECK, e->_NET_CLIENT_LIST,
		e->_NET_CLIENT_LIST_STACKING, e->_NET_ACTIVE_WINDOW, e->_NET_CLOSE_WINDOW,
		e->_NET_MOVERESIZE_WINDOW, e->_NET_WM_NAME, e->_NET_WM_STATE,
		e->_NET_WM_STATE_FULLSCREEN, e->_NET_WM_STATE_MAXIMIZED_VERT,
		e->_NET_WM_STATE_MAXIMIZED_HORZ, e->_NET_WM_STATE_HIDDEN,
		xwm->atoms._NET_WM_STATE_FOCUSED, e->_NET_WM_WINDOW_TYPE,
		e->_NET_WM_WINDOW_TYPE_NORMAL, e->_NET_WM_WINDOW_TYPE_DIALOG,
		e->_NET_REQUEST_FRAME_EXTENTS, e->_NET_FRAME_EXTENTS,
	};
	/* Then only what the host answers. */
	xcb_atom_t supported[sizeof(always) / sizeof(always[0]) + 5];
	uint32_t n;
	for (n = 0; n < sizeof(always) / sizeof(always[0]); n++)
		supported[n] = always[n];
	if (frame_sync) {
		supported[n++] = e->_NET_WM_SYNC_REQUEST;
		supported[n++] = e->_NET_WM_SYNC_REQUEST_COUNTER;
		supported[n++] = xwm->atoms._NET_WM_FRAME_DRAWN;
		supported[n++] = xwm->atoms._NET_WM_FRAME_TIMINGS;
	}
	if (xwm_policy_of(xwm)->begin_move)
		supported[n++] = e->_NET_WM_MOVERESIZE;
	xcb_ewmh_set_supported(e, 0, n, supported);
	xcb_ewmh_set_active_window(e, 0, XCB_NONE);
}

void xwm_props_announce(struct xwm *xwm)
{
	xcb_ewmh_set_supporting_wm_check(&xwm->ewmh, xwm->root, xwm->check_window);
}

/* ------------------------------------------------------------- reading */

struct prop_request {
	xcb_atom_t atom;
	xcb_get_property_cookie_t cookie;
};

static xcb_get_property_cookie_t prop_get(struct xwm_window *w, xcb_atom_t atom)
{
	return xcb_get_property(w->xwm->conn, 0, w->id, atom, XCB_GET_PROPERTY_TYPE_ANY, 0,
	                        PROP_MAX_LONGS);
}

/* Applies one property reply (NULL or empty = property deleted). */
static void prop_apply(struct xwm_window *w, xcb_atom_t atom, xcb_get_property_reply_t *r)
{
	struct xwm_client *c = w->client;
	struct xwm *xwm = w->xwm;
	xcb_ewmh_connection_t *e = &xwm->ewmh;
	const void *data = r ? xcb_get_property_value(r) : NULL;
	int format = r ? r->format : 0;
	size_t n = r ? (size_t)r->value_len : 0;
	bool named = false; /* the name or the class was read */

	if (atom == xwm->atoms.WM_NAME) {
		/* _NET_WM_NAME (UTF-8) wins when the client sets both. */
		if (!c->name[0] || !c->name_is_net) {
			xwm_hints_parse_text(data, n, format, c->name, sizeof(c->name));
			named = true;
		}
	} else if (atom == e->_NET_WM_NAME) {
		char name[sizeof(c->name)];
		if (xwm_hints_parse_text(data, n, format, name, sizeof(name)) && name[0]) {
			memcpy(c->name, name, sizeof(name));
			c->name_is_net = true;
		} else {
			c->name_is_net = false; /* WM_NAME, if any, applies again */
		}
		named = true;
	} else if (atom == xwm->atoms.WM_CLASS) {
		xwm_hints_parse_class(data, n, format, c->instance, sizeof(c->instance),
		                      c->class_name, sizeof(c->class_name));
		named = true;
	} else if (atom == xwm->atoms.WM_HINTS) {
		c->accepts_input = xwm_hints_parse_input(data, n, format);
		c->initial_iconic = xwm_hints_parse_iconic(data, n, format);
	} else if (atom == xwm->atoms.WM_TRANSIENT_FOR) {
		c->transient_for = 0;
		if (format == 32 && n >= 1)
			memcpy(&c->transient_for, data, 4);
	} else if (atom == xwm->atoms.WM_NORMAL_HINTS) {
		if (!xwm_hints_parse_normal(data, n, format, &c->hints) && r && r->type != XCB_NONE)
			xwm_debug(xwm, "0x%x: unusable WM_NORMAL_HINTS (format %d, %zu items)",
			          w->id, format, n);
	} else if (atom == xwm->atoms.WM_PROTOCOLS) {
		c->delete_window = xwm_hints_atom_list_has(data, n, format,
		                                           xwm->atoms.WM_DELETE_WINDOW);
		c->take_focus = xwm_hints_atom_list_has(data, n, format, xwm->atoms.WM_TAKE_FOCUS);
		c->sync_request = xwm_hints_atom_list_has(data, n, format, e->_NET_WM_SYNC_REQUEST);
	} else if (atom == e->_NET_WM_WINDOW_TYPE) {
		uint32_t first = 0;
		if (format == 32 && n >= 1)
			memcpy(&first, data, 4);
		c->type = first;
	} else if (atom == e->_NET_WM_STATE) {
		/* Only read before mapping: states the client wants initially
		 * (policy rule 9). Later changes come as client messages. */
		if (!c->mapped) {
			c->fullscreen = xwm_hints_atom_list_has(data, n, format,
			                                        e->_NET_WM_STATE_FULLSCREEN);
			c->maximized = xwm_hints_atom_list_has(data, n, format,
			                                       e->_NET_WM_STATE_MAXIMIZED_VERT) &&
			               xwm_hints_atom_list_has(data, n, format,
			                                       e->_NET_WM_STATE_MAXIMIZED_HORZ);
		}
	} else if (atom == e->_NET_WM_PID) {
		/* Only for the trace: whose window a frame showed. */
		c->pid = 0;
		if (format == 32 && n >= 1)
			memcpy(&c->pid, data, 4);
	} else if (atom == e->_NET_WM_SYNC_REQUEST_COUNTER) {
		uint32_t basic, extended;
		xwm_hints_parse_sync_counters(data, n, format, &basic, &extended);
		if (basic != c->sync_counter || extended != c->ext_counter) {
			c->sync_counter = basic;
			c->ext_counter = extended;
			xwm->host->counters_changed(xwm->host_data, w);
		}
	}
	if (named && xwm->host->named)
		xwm->host->named(xwm->host_data, w);
}

static xcb_atom_t watched_atom(struct xwm_window *w, int i)
{
	struct xwm *xwm = w->xwm;
	xcb_ewmh_connection_t *e = &xwm->ewmh;
	const xcb_atom_t atoms[] = {
		xwm->atoms.WM_NAME, e->_NET_WM_NAME, xwm->atoms.WM_CLASS, xwm->atoms.WM_HINTS,
		xwm->atoms.WM_NORMAL_HINTS, xwm->atoms.WM_PROTOCOLS, e->_NET_WM_WINDOW_TYPE,
		e->_NET_WM_STATE, e->_NET_WM_SYNC_REQUEST_COUNTER, e->_NET_WM_PID,
		xwm->atoms.WM_TRANSIENT_FOR,
	};
	_Static_assert(sizeof(atoms) / sizeof(atoms[0]) <= XWM_PROPS_WATCHED,
	               "xwm_client.read_seq is too short");
	return i < (int)(sizeof(atoms) / sizeof(atoms[0])) ? atoms[i] : XCB_NONE;
}

/* Our latest read of w's i-th watched atom was request sequence. */
static void note_read(struct xwm_window *w, int i, unsigned int sequence)
{
	w->client->read_seq[i] = (uint32_t)sequence;
	w->client->read_seq_set |= 1u << i;
}

/* Whether our latest read of w's i-th watched atom reached the server
 * after it made an event carrying seen (the sequence of our last request
 * it had processed then): that read sees the change the event tells of,
 * or a later one. */
static bool read_since(struct xwm_window *w, int i, uint32_t seen)
{
	const struct xwm_client *c = w->client;
	return (c->read_seq_set & (1u << i)) && (int32_t)(c->read_seq[i] - seen) > 0;
}

void xwm_props_read_all(struct xwm_window *w)
{
	struct prop_request req[16];
	int n = 0;

	/* All requests, then all replies: one round trip per window. */
	for (xcb_atom_t a; (a = watched_atom(w, n)) != XCB_NONE && n < 16; n++) {
		req[n].atom = a;
		req[n].cookie = prop_get(w, a);
		note_read(w, n, req[n].cookie.sequence);
	}
	for (int i = 0; i < n; i++) {
		xcb_get_property_reply_t *r = xcb_get_property_reply(w->xwm->conn, req[i].cookie,
		                                                      NULL);
		prop_apply(w, req[i].atom, r);
		free(r);
	}
}

void xwm_props_reset_window(struct xwm_window *w)
{
	struct xwm_client *c = w->client;

	c->net_state_len = -1;
	c->own_net_state_writes = 0;
}

/* Reads of properties that changed (PropertyNotify), in request order:
 * the GetProperty is sent when the notify is handled and its reply is
 * applied when it arrives (xwm_props_poll, from the event loop), so a
 * client that retitles itself every frame costs no round trip we wait
 * in. Events whose handling depends on what clients asked (xwm_props_
 * settle, before MapRequest, ConfigureRequest, ClientMessage...) apply
 * every read still pending first, as a blocking read at the notify would
 * have: a client that sets WM_NORMAL_HINTS and then asks for a size gets
 * the size its new hints allow. Replies carry the server's value when it
 * read the property, later changes send new notifies, so applying them in
 * order leaves the latest value. */
struct xwm_prop_read {
	xcb_window_t window;
	xcb_atom_t atom;
	unsigned int sequence;
};

struct xwm_prop_reads {
	struct xwm_prop_read *read;
	size_t head, count, cap;  /* a ring: count reads from head */
};

static bool queue_read(struct xwm *xwm, struct xwm_window *w, xcb_atom_t atom, int i)
{
	struct xwm_prop_reads *q = xwm->prop_reads;

	if (!q && !(q = xwm->prop_reads = calloc(1, sizeof(*q))))
		return false;
	if (q->count == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 16;
		struct xwm_prop_read *r = malloc(cap * sizeof(*r));
		if (!r)
			return false;
		for (size_t i = 0; i < q->count; i++)
			r[i] = q->read[(q->head + i) % q->cap];
		free(q->read);
		q->read = r;
		q->cap = cap;
		q->head = 0;
	}
	unsigned int sequence = prop_get(w, atom).sequence;
	q->read[(q->head + q->count) % q->cap] = (struct xwm_prop_read){
		.window = w->id, .atom = atom, .sequence = sequence,
	};
	q->count++;
	note_read(w, i, sequence);
	return true;
}

/* w's i-th watched atom read without waiting; out of memory for the
 * queue, read now. */
static void read_later(struct xwm_window *w, xcb_atom_t atom, int i)
{
	if (queue_read(w->xwm, w, atom, i))
		return;
	xcb_get_property_reply_t *r = xcb_get_property_reply(w->xwm->conn, prop_get(w, atom), NULL);
	prop_apply(w, atom, r);
	free(r);
}

void xwm_props_read_again(struct xwm_window *w)
{
	for (int i = 0; watched_atom(w, i) != XCB_NONE; i++)
		read_later(w, watched_atom(w, i), i);
}

/* Applies the oldest read if its reply is in (or, wait, once it is). */
static bool apply_oldest(struct xwm *xwm, bool wait)
{
	struct xwm_prop_reads *q = xwm->prop_reads;
	struct xwm_prop_read *rd = &q->read[q->head];
	void *reply = NULL;

	/* An error (the window is gone) goes to the event queue and leaves
	 * a NULL reply, as for a blocking read. */
	if (!xcb_poll_for_reply(xwm->conn, rd->sequence, &reply, NULL)) {
		if (!wait)
			return false;
		reply = xcb_wait_for_reply(xwm->conn, rd->sequence, NULL);
	}
	xwm->host->processed(xwm->host_data, rd->sequence);
	struct xwm_window *w = xwm_window_lookup(xwm, rd->window);
	if (w && xwm_window_managed(w))
		prop_apply(w, rd->atom, reply);
	free(reply);
	q->head = (q->head + 1) % q->cap;
	q->count--;
	return true;
}

bool xwm_props_oldest_reply(struct xwm *xwm, unsigned int *sequence)
{
	struct xwm_prop_reads *q = xwm->prop_reads;
	if (!q || q->count == 0)
		return false;
	*sequence = q->read[q->head].sequence;
	return true;
}

bool xwm_props_newest_out(struct xwm *xwm, uint32_t *sequence)
{
	struct xwm_prop_reads *q = xwm->prop_reads;
	if (!q || q->count == 0)
		return false;
	*sequence = q->read[(q->head + q->count - 1) % q->cap].sequence;
	return true;
}

bool xwm_props_in_up_to(struct xwm *xwm, uint32_t sequence)
{
	unsigned int oldest;
	return !xwm_props_oldest_reply(xwm, &oldest) || (int32_t)((uint32_t)oldest - sequence) > 0;
}

bool xwm_props_poll_oldest(struct xwm *xwm)
{
	return xwm->prop_reads && xwm->prop_reads->count > 0 && apply_oldest(xwm, false);
}

/* Unread bytes on the X connection past which settling stops waiting. A
 * reply comes after every event the server made before it, so with this
 * much still to read a wait would read through all of it first (a client
 * flooding what we read: each wait longer than the last, the backlog
 * growing for good). Then the values already in are used: the window
 * manager stays responsive, a client that set its hints a moment before
 * asking may get the older hints' answer, and the log says so once. */
#define SETTLE_BACKLOG (256 * 1024)

static bool backlogged(struct xwm *xwm)
{
	int unread = 0;
	if (ioctl(xcb_get_file_descriptor(xwm->conn), FIONREAD, &unread) < 0 ||
	    unread < SETTLE_BACKLOG)
		return false;
	if (!xwm->told_backlog)
		xwm_log("X events pile up (%d KiB unread): not waiting for property reads "
		        "while they do", unread / 1024);
	xwm->told_backlog = true;
	return true;
}

void xwm_props_settle(struct xwm *xwm)
{
	if (!xwm->prop_reads || xwm->prop_reads->count == 0)
		return;
	bool wait = !backlogged(xwm);
	while (xwm->prop_reads->count > 0 && apply_oldest(xwm, wait))
		;
}

void xwm_props_changed(struct xwm_window *w, xcb_atom_t atom, uint8_t state, uint32_t seen)
{
	struct xwm_client *c = w->client;

	if (atom == w->xwm->ewmh._NET_WM_STATE) {
		/* Each of our ChangeProperty requests on it causes exactly one
		 * NewValue notify, in order: that value is ours, nothing to
		 * read. Anything else is the client's: read it, and write ours
		 * again at the next update. */
		if (state == XCB_PROPERTY_NEW_VALUE && c->own_net_state_writes > 0) {
			c->own_net_state_writes--;
			return;
		}
		c->net_state_len = -1;
	}
	for (int i = 0; watched_atom(w, i) != XCB_NONE; i++) {
		if (watched_atom(w, i) != atom)
			continue;
		/* A client changing a property over and over (a title a frame,
		 * a flood) costs one read per round trip, not one per change:
		 * the window manager keeps up with whatever the server takes. */
		if (read_since(w, i, seen))
			return;
		read_later(w, atom, i);
		return;
	}
}

/* ---------------------------------------------------------- publishing */

void xwm_props_set_wm_state(struct xwm_window *w, int state)
{
	uint32_t data[2] = { (uint32_t)state, XCB_NONE };
	struct xwm *xwm = w->xwm;

	if (state == XWM_WM_STATE_WITHDRAWN) {
		/* ICCCM 4.1.3.1: the WM may delete it on withdrawal. */
		xcb_delete_property(xwm->conn, w->id, xwm->atoms.WM_STATE);
		xcb_delete_property(xwm->conn, w->id, xwm->ewmh._NET_WM_STATE);
		w->client->net_state_len = -1;
		return;
	}
	xcb_change_property(xwm->conn, XCB_PROP_MODE_REPLACE, w->id, xwm->atoms.WM_STATE,
	                    xwm->atoms.WM_STATE, 32, 2, data);
}

void xwm_props_update_net_state(struct xwm_window *w)
{
	struct xwm_client *c = w->client;
	xcb_ewmh_connection_t *e = &w->xwm->ewmh;
	xcb_atom_t atoms[5];
	uint32_t n = 0;

	if (!xwm_window_managed(w))
		return;
	if (c->fullscreen)
		atoms[n++] = e->_NET_WM_STATE_FULLSCREEN;
	if (c->maximized) {
		atoms[n++] = e->_NET_WM_STATE_MAXIMIZED_VERT;
		atoms[n++] = e->_NET_WM_STATE_MAXIMIZED_HORZ;
	}
	if (c->minimized)
		atoms[n++] = e->_NET_WM_STATE_HIDDEN;
	if (w->xwm->focused == w)
		atoms[n++] = w->xwm->atoms._NET_WM_STATE_FOCUSED;
	/* Focus and map both update it, often to the same value. */
	if (c->net_state_len == (int)n && memcmp(c->net_state, atoms, n * sizeof(*atoms)) == 0)
		return;
	xcb_ewmh_set_wm_state(e, w->id, n, atoms);
	memcpy(c->net_state, atoms, n * sizeof(*atoms));
	c->net_state_len = (int)n;
	c->own_net_state_writes++;
}

static int compare_manage_order(const void *a, const void *b)
{
	const struct xwm_window *wa = *(struct xwm_window *const *)a;
	const struct xwm_window *wb = *(struct xwm_window *const *)b;
	return wa->client->manage_order < wb->client->manage_order ? -1 :
	       wa->client->manage_order > wb->client->manage_order;
}

typedef xcb_void_cookie_t (*set_list_fn)(xcb_ewmh_connection_t *, int, uint32_t,
                                         xcb_window_t *);

/* Writes one of the two root lists, of the windows of list in its order,
 * unless copy (what we last wrote: only we write these root properties,
 * so it is what the server has) says the same. Without room for the
 * copies (keep false, client_lists_written too) it just writes. */
static void write_client_list(struct xwm *xwm, set_list_fn set, struct xwm_window **list,
                              size_t n, xcb_window_t *ids, xcb_window_t *copy, bool keep)
{
	for (size_t i = 0; i < n; i++)
		ids[i] = list[i]->id;
	/* n may be 0 with no copies allocated yet: memcmp/memcpy must not see
	 * their NULL pointers even for zero bytes. */
	if (xwm->client_lists_written && n == xwm->client_list_len &&
	    (!n || memcmp(ids, copy, n * sizeof(*ids)) == 0))
		return;
	set(&xwm->ewmh, 0, (uint32_t)n, ids);
	if (keep && n)
		memcpy(copy, ids, n * sizeof(*ids));
}

void xwm_props_update_client_lists(struct xwm *xwm)
{
	size_t count = 0, n = 0;
	bool copies = true;

	for (struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next)
		count++;
	struct xwm_window **list = calloc(count + 1, sizeof(*list));
	xcb_window_t *ids = calloc(count + 1, sizeof(*ids));
	if (!list || !ids) {
		free(list);
		free(ids);
		return;
	}
	/* Stacking order, bottom to top: only managed windows the client
	 * has mapped (minimized ones stay listed, as EWMH wants). */
	for (struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_window *w = duet_container_of(l, struct xwm_window, link);
		if (xwm_window_managed(w) && w->client->mapped)
			list[n++] = w;
	}
	/* A map raises (which updates the lists) and then lists the
	 * window (updating them again): write only what changed. */
	if (n > xwm->client_list_cap) {
		xcb_window_t *a = realloc(xwm->client_list, n * sizeof(*a));
		xcb_window_t *b = a ? realloc(xwm->client_list_stacking, n * sizeof(*b)) : NULL;
		if (a)
			xwm->client_list = a;
		if (b)
			xwm->client_list_stacking = b;
		copies = a && b;
		xwm->client_list_cap = copies ? n : 0;
		if (!copies)
			xwm->client_lists_written = false;
	}
	write_client_list(xwm, xcb_ewmh_set_client_list_stacking, list, n, ids,
	                  xwm->client_list_stacking, copies);
	qsort(list, n, sizeof(*list), compare_manage_order);
	write_client_list(xwm, xcb_ewmh_set_client_list, list, n, ids, xwm->client_list, copies);
	if (copies) {
		xwm->client_list_len = n;
		xwm->client_lists_written = true;
	}
	free(list);
	free(ids);
}

void xwm_props_finish(struct xwm *xwm)
{
	if (xwm->prop_reads) {
		/* Replies never collected stay in xcb's queue: drop them. */
		for (size_t i = 0; i < xwm->prop_reads->count; i++) {
			struct xwm_prop_reads *q = xwm->prop_reads;
			xcb_discard_reply(xwm->conn, q->read[(q->head + i) % q->cap].sequence);
		}
		free(xwm->prop_reads->read);
		free(xwm->prop_reads);
		xwm->prop_reads = NULL;
	}
	free(xwm->client_list);
	free(xwm->client_list_stacking);
	xwm->client_list = xwm->client_list_stacking = NULL;
	xwm->client_list_cap = xwm->client_list_len = 0;
	xwm->client_lists_written = false;
}

void xwm_props_set_active(struct xwm *xwm, struct xwm_window *w)
{
	xcb_ewmh_set_active_window(&xwm->ewmh, 0, w ? w->id : XCB_NONE);
}

/* Interns duet's and the ICCCM atoms xcb-ewmh does not carry. */
int xwm_props_intern_atoms(struct xwm *xwm)
{
	static const char *names[] = {
		"WM_DELETE_WINDOW", "WM_TAKE_FOCUS", "WM_STATE", "WM_CHANGE_STATE",
		"WM_NAME", "WM_CLASS", "WM_HINTS", "WM_NORMAL_HINTS", "WM_PROTOCOLS",
		"WM_S0", "MANAGER", "WM_TRANSIENT_FOR", "_NET_WM_FRAME_DRAWN", "_NET_WM_FRAME_TIMINGS", "_NET_WM_CM_S0",
		"_NET_WM_STATE_FOCUSED",
		"_DUET_SYNC", "_DUET_RESIZE", "_DUET_SCREENSHOT", "_DUET_SCREENSHOT_PATH",
		"_DUET_SCREENSHOT_DIR", "_DUET_KILL", "_DUET_FLOOD_PROBE",
	};
	xcb_atom_t *out[] = {
		&xwm->atoms.WM_DELETE_WINDOW, &xwm->atoms.WM_TAKE_FOCUS, &xwm->atoms.WM_STATE,
		&xwm->atoms.WM_CHANGE_STATE, &xwm->atoms.WM_NAME, &xwm->atoms.WM_CLASS,
		&xwm->atoms.WM_HINTS, &xwm->atoms.WM_NORMAL_HINTS, &xwm->atoms.WM_PROTOCOLS,
		&xwm->atoms.WM_S0, &xwm->atoms.MANAGER, &xwm->atoms.WM_TRANSIENT_FOR,
		&xwm->atoms._NET_WM_FRAME_DRAWN, &xwm->atoms._NET_WM_FRAME_TIMINGS,
		&xwm->atoms._NET_WM_CM_S0, &xwm->atoms._NET_WM_STATE_FOCUSED,
		&xwm->atoms._DUET_SYNC, &xwm->atoms._DUET_RESIZE, &xwm->atoms._DUET_SCREENSHOT,
		&xwm->atoms._DUET_SCREENSHOT_PATH, &xwm->atoms._DUET_SCREENSHOT_DIR,
		&xwm->atoms._DUET_KILL, &xwm->atoms._DUET_FLOOD_PROBE,
	};
	enum { N = sizeof(names) / sizeof(names[0]) };
	xcb_intern_atom_cookie_t cookies[N];

	_Static_assert(sizeof(out) / sizeof(out[0]) == N, "atom tables differ");
	for (int i = 0; i < N; i++)
		cookies[i] = xcb_intern_atom(xwm->conn, 0, (uint16_t)strlen(names[i]), names[i]);
	xcb_intern_atom_cookie_t *ewmh_cookies = xcb_ewmh_init_atoms(xwm->conn, &xwm->ewmh);
	int ok = 0;
	for (int i = 0; i < N; i++) {
		xcb_intern_atom_reply_t *r = xcb_intern_atom_reply(xwm->conn, cookies[i], NULL);
		if (!r) {
			xwm_log("cannot intern atom %s", names[i]);
			ok = -1;
			continue;
		}
		*out[i] = r->atom;
		free(r);
	}
	if (!ewmh_cookies || !xcb_ewmh_init_atoms_replies(&xwm->ewmh, ewmh_cookies, NULL)) {
		xwm_log("cannot intern the EWMH atoms");
		return -1;
	}
	return ok;
}
