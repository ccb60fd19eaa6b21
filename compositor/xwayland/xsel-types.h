/* The clipboard bridge's parts (xwayland-selection.c: ownership and
 * dispatch; -to-x.c: Wayland -> X; -from-x.c: X -> Wayland). */
#ifndef DUET_COMP_XSEL_TYPES_H
#define DUET_COMP_XSEL_TYPES_H

#include <string.h>

#include "xwayland-selection.h"
#include "xwm-types.h"

/* Bytes per property write to an X requestor; more go with INCR. */
#define CHUNK (64 * 1024)
/* A transfer larger than this is cut off (X -> Wayland) or refused
 * (Wayland -> X): both sides hold the whole text in memory. */
#define MAX_BYTES (64u << 20)
/* A transfer without progress for this long is dropped. */
#define TIMEOUT_MS 5000
/* Transfers open at once each way: each holds two fds (the pipe, its
 * timer) and its text, so a client asking in a loop is refused beyond
 * these rather than exhausting the server's fds. */
#define MAX_TRANSFERS 16

#define MIME_UTF8 "text/plain;charset=utf-8"

enum atom {
	ATOM_CLIPBOARD, ATOM_TARGETS, ATOM_TIMESTAMP, ATOM_INCR, ATOM_UTF8_STRING, ATOM_TEXT,
	ATOM_MIME_UTF8, ATOM_MIME_TEXT, ATOM_DATA, ATOM_TARGETS_DATA, ATOM_COUNT
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
	int outgoing_count;
	/* X -> Wayland */
	struct xsource *source;         /* the X owner's text as the Wayland selection */
	struct wl_list incoming;        /* struct incoming.link, in the order asked */
	int incoming_count;
};

static inline xcb_atom_t atom(struct comp_xsel *sel, enum atom a)
{
	return sel->atoms[a];
}

static inline void xsel_flush_soon(struct comp_xsel *sel)
{
	/* Requests made from the Wayland side go out before the loop sleeps. */
	comp_xwm_schedule(sel->wm);
}

static inline bool xsel_append(struct wl_array *array, const void *bytes, size_t n)
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

static inline struct wl_event_source *xsel_add_timer(struct comp_xsel *sel,
                                                     wl_event_loop_timer_func_t fn, void *data)
{
	struct wl_event_source *timer = wl_event_loop_add_timer(sel->wm->server->loop, fn, data);
	if (timer)
		wl_event_source_timer_update(timer, TIMEOUT_MS);
	return timer;
}

/* xwayland-selection-to-x.c: X clients asking while we own CLIPBOARD. */
void comp_xsel_handle_request(struct comp_xsel *sel, xcb_selection_request_event_t *ev);
/* A requestor's property deleted: the next INCR chunk. */
void comp_xsel_requestor_property(struct comp_xsel *sel, xcb_property_notify_event_t *ev);
/* Drops every transfer, with no X request (the connection is going). */
void comp_xsel_to_x_finish(struct comp_xsel *sel);

/* xwayland-selection-from-x.c: SelectionNotify to our window (TARGETS or
 * a text conversion), and PropertyNotify on it (INCR chunks). */
void comp_xsel_handle_notify(struct comp_xsel *sel, xcb_selection_notify_event_t *ev);
void comp_xsel_own_property(struct comp_xsel *sel, xcb_property_notify_event_t *ev);
/* CLIPBOARD has no X owner any more; died: its client or window went. */
void comp_xsel_owner_gone(struct comp_xsel *sel, bool died);
/* Our source goes (cancelled, or the owner went): freed. */
void comp_xsel_source_destroy(struct xsource *xs);
void comp_xsel_from_x_finish(struct comp_xsel *sel);

#endif
