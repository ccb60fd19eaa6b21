/* duet-xwm's window model: the ICCCM/EWMH window manager without the
 * compositing (libxwm-model). It tracks the root's children, manages the
 * client windows and publishes what the ICCCM and the EWMH ask of a WM;
 * whatever draws the windows (duet-xwm's compositing half, xwm.h) plugs in
 * through struct xwm_host, so that nothing here calls up into it and the
 * model can serve another host (an Xwayland inside duet-compositor).
 *
 * The files of the model, each using only those above it:
 *   log.c        logging and the intrusive list
 *   hints.c      pure parsing of client properties (hints.h)
 *   wintable.c   window lookup by id (a hash table)
 *   window.c     windows' life: creation, lookup, client part, freeing
 *   props.c      ICCCM/EWMH properties: reading client hints, publishing
 *                _NET_CLIENT_LIST and friends, WM_STATE, _NET_WM_STATE
 *   actions.c    what the policy asks of the X server: configure, raise,
 *                hide, focus, close, kill (under a grab)
 *   sync-proto.c _NET_WM_SYNC_REQUEST and _NET_WM_FRAME_DRAWN on the wire
 *   policy.c     placement, focus and stacking rules (side by side with
 *                compositor/policy/policy.c)
 *   messages.c   client messages: EWMH requests and duet's control
 *                messages (docs/xwm-control.md)
 *   wm.c         becoming the WM, adopting windows, the core X events
 */
#ifndef DUET_XWM_MODEL_H
#define DUET_XWM_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xcb/xcb.h>
#include <xcb/xcb_ewmh.h>
#include <xcb/sync.h>

#include "duet-list.h"
#include "hints.h"


struct xwm;
struct xwm_window;
struct xwm_prop_reads;
/* The host's part of a window (duet-xwm: its contents, xwm.h). */
struct xwm_content;

/* Windows by id (wintable.c): chained buckets, a power of two of them. */
struct xwm_wintable {
	struct xwm_window **buckets;
	size_t nbuckets, count;
};

/* How many client properties props.c watches at most. */
#define XWM_PROPS_WATCHED 16

/* What a client asked of the WM and what the WM made of it: only windows
 * a client may have managed have one (not override-redirect ones). */
struct xwm_client {
	bool managed;           /* a client window we manage */
	uint64_t manage_order;  /* for _NET_CLIENT_LIST (initial mapping order) */
	bool button_grabbed;
	bool mapped;            /* the client asked to be shown and we showed it */
	bool minimized, maximized, fullscreen;
	int saved_x, saved_y, saved_width, saved_height;
	int ignore_unmaps;      /* UnmapNotify caused by us (minimize) */
	/* ConfigureRequests merged until the event queue is drained (wm.c),
	 * applied once the property reads sent before the first of them are
	 * in (cfg_reads, the newest then, if cfg_reads_set). */
	bool cfg_pending, cfg_reads_set;
	uint32_t cfg_reads;
	uint16_t cfg_mask;
	int cfg_x, cfg_y, cfg_width, cfg_height;
	struct xwm_size_hints hints;
	bool accepts_input;     /* WM_HINTS input */
	bool initial_iconic;    /* WM_HINTS initial_state IconicState */
	xcb_window_t transient_for; /* WM_TRANSIENT_FOR, 0 none */
	bool take_focus;        /* WM_PROTOCOLS has WM_TAKE_FOCUS */
	bool delete_window;     /* WM_PROTOCOLS has WM_DELETE_WINDOW */
	bool sync_request;      /* WM_PROTOCOLS has _NET_WM_SYNC_REQUEST */
	/* _NET_WM_SYNC_REQUEST_COUNTER: basic and extended, 0 none. */
	xcb_sync_counter_t sync_counter, ext_counter;
	xcb_atom_t type;        /* first _NET_WM_WINDOW_TYPE, 0 = none */
	char name[128];
	bool name_is_net;       /* name came from _NET_WM_NAME */
	/* _NET_WM_STATE as we last wrote it (-1 entries: unknown, write
	 * again), and how many of our writes' PropertyNotify are still to
	 * come: those are not re-read (props.c). */
	xcb_atom_t net_state[5];
	int net_state_len;
	int own_net_state_writes;
	char instance[64], class_name[64];
	uint32_t pid;           /* _NET_WM_PID, 0 if unset */
	/* The request sequence of our latest read of each property we watch
	 * (props.c), those with a bit in read_seq_set: a change the server
	 * made before it took that read needs no read of its own. */
	uint32_t read_seq[XWM_PROPS_WATCHED];
	uint32_t read_seq_set;
};

/* A child of the root: its geometry and place in the stacking order. */
struct xwm_window {
	struct xwm *xwm;
	struct duet_list link; /* xwm.stack: X stacking order, bottom first */
	struct xwm_window *hash_next; /* xwm.windows bucket chain */
	xcb_window_t id;

	/* As the server last reported it (CreateNotify/ConfigureNotify). */
	int x, y, width, height, border;
	bool override_redirect;
	bool input_only;
	bool viewable;          /* mapped on the server */
	uint8_t depth;
	xcb_visualid_t visual;  /* known for windows adopted or reparented to the root */
	/* The GetGeometry sent at CreateNotify for the depth, whose reply is
	 * not applied yet (wm.c): the host hears of it (created) once it is. */
	bool geometry_pending;
	unsigned int geometry_sequence;
	/* Sequence of our last ConfigureWindow of it: a ConfigureNotify
	 * older than that shows a state before it and is not applied (wm.c). */
	uint32_t configure_seq;
	bool configure_sent;

	struct xwm_client *client;   /* NULL: override-redirect */
	struct xwm_content *content; /* the host's (attach) */
};

/* What the model tells the host, the program that draws its windows, as
 * things happen; every entry is required. data is xwm.host_data. */
struct xwm_host {
	/* A window is tracked from now on: w->content is the host's to set.
	 * false (out of memory) leaves the window untracked. */
	bool (*attach)(void *data, struct xwm_window *w);
	/* Its depth and class are known (the reply of the GetGeometry sent
	 * at its CreateNotify, or adoption). */
	void (*created)(void *data, struct xwm_window *w);
	/* Right before our MapWindow of a managed window. */
	void (*mapping)(void *data, struct xwm_window *w);
	/* MapNotify; has_content: the window was drawn before we saw it
	 * mapped (adopted at start). */
	void (*mapped)(void *data, struct xwm_window *w, bool has_content);
	void (*unmapped)(void *data, struct xwm_window *w);
	void (*configured)(void *data, struct xwm_window *w, bool resized);
	void (*restacked)(void *data, struct xwm_window *w);
	/* Before w is freed: w->content is to be let go. */
	void (*destroyed)(void *data, struct xwm_window *w);
	/* Right before our configure that resizes a mapped window. */
	void (*resizing)(void *data, struct xwm_window *w);
	/* The client changed its _NET_WM_SYNC_REQUEST_COUNTER. */
	void (*counters_changed)(void *data, struct xwm_window *w);
	/* Its WM_NAME, _NET_WM_NAME or WM_CLASS was read again (a title
	 * set after mapping: xterm's OSC 2, a GTK app's page). Optional: NULL
	 * for a host that reads client->name and class_name where it shows
	 * them (duet-xwm); one that copies them at map must follow. */
	void (*named)(void *data, struct xwm_window *w);
	/* An event of an extension the host set up (Damage, SYNC): true if
	 * it was one, which the model then ignores. Asked first. */
	bool (*event)(void *data, xcb_generic_event_t *ev);
	/* The server has processed every request up to sequence (a reply
	 * carrying it arrived). */
	void (*processed)(void *data, uint32_t sequence);
	/* _DUET_SCREENSHOT: a new file name in the host's screenshot
	 * directory, for the frame on screen; 0 when written. */
	int (*screenshot)(void *data, const char *name);
};

/* The model's window-management decisions: policy.c's rules by default
 * (xwm_default_policy). A host with a policy of its own gives its table as
 * xwm.policy (duet-compositor, whose X windows share its one policy with
 * its Wayland windows); every entry is then required. The model calls
 * them where duet-xwm calls policy.c, and nothing else changes. */
struct xwm_policy_ops {
	/* A managed window is about to be mapped (MapRequest): place, raise. */
	void (*window_place)(struct xwm_window *w);
	void (*window_mapped)(struct xwm_window *w);   /* we mapped it: focus */
	void (*window_unmapped)(struct xwm_window *w); /* withdrawn: refocus */
	void (*activate)(struct xwm_window *w);
	void (*close)(struct xwm_window *w);
	void (*resize)(struct xwm_window *w, int width, int height); /* _DUET_RESIZE */
	void (*configure_request)(struct xwm_window *w, uint16_t mask, int x, int y, int width,
	                          int height);
	void (*request_maximize)(struct xwm_window *w, bool maximize);
	void (*request_fullscreen)(struct xwm_window *w, bool fullscreen);
	void (*request_minimize)(struct xwm_window *w);
	/* _NET_WM_MOVERESIZE: an interactive move or resize the client
	 * starts with a button held (a GTK header bar dragged); direction as
	 * the EWMH numbers it. Optional: NULL for a host with no interactive
	 * moves (duet-xwm), which then does not list _NET_WM_MOVERESIZE in
	 * _NET_SUPPORTED, so clients move themselves (ConfigureRequest). */
	void (*begin_move)(struct xwm_window *w, uint32_t direction);
};

/* What the host hears of a kill it asked for (xwm_window_kill): w is the
 * window, still there with the server grabbed, its client killed right
 * after this returns (requests made now come before the KillClient, for
 * the same client); NULL: it went before the kill, whose client is not
 * killed. */
typedef void (*xwm_kill_func)(void *data, struct xwm_window *w, xcb_window_t id);

/* A kill waiting for its marker (actions.c), oldest first in xwm.kills. */
struct xwm_kill {
	struct xwm_kill *next;
	struct xwm_window *w;   /* NULL once the window is gone (window.c) */
	xcb_window_t id;
	unsigned int marker;    /* the marker's request sequence */
	xwm_kill_func decided;  /* NULL: nothing to tell */
	void *data;
};

struct xwm_atoms {
	xcb_atom_t WM_DELETE_WINDOW, WM_TAKE_FOCUS, WM_STATE, WM_CHANGE_STATE,
		WM_NAME, WM_CLASS, WM_HINTS, WM_NORMAL_HINTS, WM_PROTOCOLS,
		WM_S0, MANAGER, WM_TRANSIENT_FOR,
		_NET_WM_FRAME_DRAWN, _NET_WM_FRAME_TIMINGS, _NET_WM_CM_S0,
		_NET_WM_STATE_FOCUSED,
		_DUET_SYNC, _DUET_RESIZE, _DUET_SCREENSHOT, _DUET_SCREENSHOT_PATH,
		_DUET_SCREENSHOT_DIR, _DUET_KILL, _DUET_FLOOD_PROBE;
};

/* Distinct windows whose frame-extents requests one batch merges. */
#define XWM_EXTENTS_MERGED 16

struct xwm {
	xcb_connection_t *conn;
	xcb_screen_t *screen;
	xcb_window_t root;
	xcb_ewmh_connection_t ewmh;
	struct xwm_atoms atoms;
	xcb_window_t check_window;   /* _NET_SUPPORTING_WM_CHECK and CM selection owner */
	xcb_timestamp_t last_time;   /* latest server time seen in an event */
	xcb_timestamp_t claim_time;  /* when we took WM_S0 (and _NET_WM_CM_S0) */
	xcb_sync_counter_t servertime; /* SYNC's SERVERTIME counter, 0 none */
	xcb_timestamp_t event_time;  /* of the event being handled, if it has one */
	/* The host's own child of the root (the composite overlay), set by
	 * the host: no client's, and above everything drawn. */
	xcb_window_t overlay;

	struct duet_list stack;       /* xwm_window.link, bottom first */
	struct xwm_wintable windows; /* the same windows by id */
	struct xwm_window *focused;
	uint64_t manage_counter;
	/* _NET_CLIENT_LIST(_STACKING) as last written, to skip rewriting
	 * the same lists (props.c). */
	xcb_window_t *client_list, *client_list_stacking;
	size_t client_list_len, client_list_cap;
	bool client_lists_written;
	int configures_pending;      /* windows with cfg_pending */
	/* Windows that asked for _NET_FRAME_EXTENTS since the last
	 * xwm_wm_flush_merged, each once (messages.c). */
	xcb_window_t extents_asked[XWM_EXTENTS_MERGED];
	int extents_pending;
	int geometries_pending;      /* windows with geometry_pending */
	struct xwm_prop_reads *prop_reads; /* property reads in flight (props.c) */
	struct xwm_kill *kills;      /* KillClients waiting for their marker */
	struct xwm_flood *flood;     /* events per X client (flood.c) */
	bool has_sync;               /* the host initialised SYNC */

	const struct xwm_host *host;
	void *host_data;
	const struct xwm_policy_ops *policy; /* NULL: xwm_default_policy */
	bool quit;
	bool debug;
	bool told_backlog;           /* props.c's line on a backlog, said */
};

/* ---------------------------------------------------------------- log */
void xwm_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void xwm_debug(struct xwm *xwm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --------------------------------------------------------- wintable.c */
/* insert: false when out of memory (the window is then not tracked). */
bool xwm_wintable_insert(struct xwm_wintable *t, struct xwm_window *w);
void xwm_wintable_remove(struct xwm_wintable *t, struct xwm_window *w);
struct xwm_window *xwm_wintable_lookup(const struct xwm_wintable *t, xcb_window_t id);
void xwm_wintable_finish(struct xwm_wintable *t);

/* ----------------------------------------------------------- window.c */
/* On top of the stack, tracked by id, attached to the host; NULL when out
 * of memory. */
struct xwm_window *xwm_window_create(struct xwm *xwm, xcb_window_t id, int x, int y,
                                     int width, int height, int border,
                                     bool override_redirect);
void xwm_window_free(struct xwm_window *w);
struct xwm_window *xwm_window_lookup(struct xwm *xwm, xcb_window_t id);
/* w's client part, made if it has none yet (NULL: out of memory). */
struct xwm_client *xwm_window_client(struct xwm_window *w);
bool xwm_window_managed(const struct xwm_window *w);
/* w's client's _NET_WM_PID, 0 unknown (for traces). */
uint32_t xwm_window_pid(const struct xwm_window *w);

/* ------------------------------------------------------------ props.c */
int xwm_props_intern_atoms(struct xwm *xwm);
/* _NET_SUPPORTED, the check window; screenshot_dir: where _DUET_SCREENSHOT
 * writes, published for duet-xctl (NULL: nowhere). frame_sync: the host
 * answers _NET_WM_SYNC_REQUEST and sends _NET_WM_FRAME_DRAWN/TIMINGS
 * (duet-xwm's sync.c); without it they are not listed, as a client that
 * finds them there waits for frames no one will report. */
void xwm_props_init_root(struct xwm *xwm, const char *screenshot_dir, bool frame_sync);
/* Sets _NET_SUPPORTING_WM_CHECK on the root: tools and the bench read it
 * as "the WM is ready", so only once it can composite. */
void xwm_props_announce(struct xwm *xwm);
void xwm_props_read_all(struct xwm_window *w);
/* Every property we watch read again, without waiting (the replies come
 * in as a PropertyNotify's do): after a time of not listening. */
void xwm_props_read_again(struct xwm_window *w);
/* A PropertyNotify of w (state: XCB_PROPERTY_NEW_VALUE or _DELETE; seen:
 * its full_sequence): its new value is read without waiting, applied by
 * poll once it arrived, unless a read asked since the event was made
 * will see it. */
void xwm_props_changed(struct xwm_window *w, xcb_atom_t atom, uint8_t state, uint32_t seen);
/* Property reads in request order (see xwm_wm_oldest_reply). */
bool xwm_props_oldest_reply(struct xwm *xwm, unsigned int *sequence);
bool xwm_props_poll_oldest(struct xwm *xwm);
/* The newest read out (false: none), and whether every read up to the
 * sequence given is in: what an event that depends on them waits for
 * without blocking (a merged ConfigureRequest, wm.c). */
bool xwm_props_newest_out(struct xwm *xwm, uint32_t *sequence);
bool xwm_props_in_up_to(struct xwm *xwm, uint32_t sequence);
/* Applies every pending read, waiting for those still out (before an
 * event whose handling depends on what clients asked). */
void xwm_props_settle(struct xwm *xwm);
/* w is (re)managed: forget what we wrote on it. */
void xwm_props_reset_window(struct xwm_window *w);
void xwm_props_finish(struct xwm *xwm);
void xwm_props_set_wm_state(struct xwm_window *w, int state);
void xwm_props_update_net_state(struct xwm_window *w);
void xwm_props_update_client_lists(struct xwm *xwm);
void xwm_props_set_active(struct xwm *xwm, struct xwm_window *w);

/* ---------------------------------------------------------- actions.c */
/* What policy.c asks of the X side (of managed windows). */
void xwm_window_move_resize(struct xwm_window *w, int x, int y, int width, int height);
void xwm_window_resize(struct xwm_window *w, int width, int height);
void xwm_window_raise(struct xwm_window *w);
void xwm_window_set_hidden(struct xwm_window *w, bool hidden);
void xwm_set_focus(struct xwm *xwm, struct xwm_window *w);
void xwm_window_send_close(struct xwm_window *w);
/* KillClient for w's client, once it is sure to be w's: under a server
 * grab, after every event from before it (decided says which; NULL: no
 * word). false: out of memory, nothing sent. */
bool xwm_window_kill(struct xwm_window *w, xwm_kill_func decided, void *data);
/* A PropertyNotify of _DUET_KILL on the check window (wm.c): the kill
 * whose marker it is, if any, is decided. */
void xwm_kill_marker(struct xwm *xwm, uint32_t sequence);
/* Pending kills dropped, told NULL (the connection is going). */
void xwm_kills_finish(struct xwm *xwm);
/* A client message of type to w's client (WM_PROTOCOLS and the like). */
void xwm_window_send_message(struct xwm_window *w, xcb_atom_t type, const uint32_t data[5]);

/* ------------------------------------------------------- sync-proto.c */
/* The wire side of frame synchronization, for either host: a counter's
 * value; an alarm reporting every increase of counter, or the next one
 * only (one_shot, then again from each xwm_sync_alarm_arm); the serial of the
 * next _NET_WM_SYNC_REQUEST after last (ext: for the extended counter,
 * even and past latest_frame); the request itself; and a frame's
 * _NET_WM_FRAME_DRAWN (drawn_us: CLOCK_MONOTONIC) with its
 * _NET_WM_FRAME_TIMINGS. */
int64_t xwm_sync_value(xcb_sync_int64_t v);
xcb_sync_alarm_t xwm_sync_alarm_create(struct xwm *xwm, xcb_sync_counter_t counter,
                                       bool one_shot);
void xwm_sync_alarm_arm(struct xwm *xwm, xcb_sync_alarm_t alarm, int64_t value);
int64_t xwm_sync_next_serial(int64_t last, int64_t latest_frame, bool ext);
void xwm_sync_send_request(struct xwm_window *w, int64_t serial, bool ext);
void xwm_sync_send_frame_drawn(struct xwm_window *w, int64_t serial, uint64_t drawn_us,
                               int32_t offset_us, uint32_t refresh_us, uint32_t delay_ms);
/* The screen the policy places windows on. */
void xwm_policy_screen_size(const struct xwm *xwm, int *width, int *height);

/* ----------------------------------------------------------- policy.c */
/* Pure decisions, unit-tested without X. */
void xwm_policy_place(int screen_w, int screen_h, int width, int height, int *x, int *y);
/* Rule 11: centered over the parent's rectangle, kept on the screen. */
void xwm_policy_place_over(int px, int py, int pw, int ph, int screen_w, int screen_h,
                           int width, int height, int *x, int *y);
void xwm_policy_constrain_size(const struct xwm_window *w, int *width, int *height);
/* Visible to the policy: managed, mapped, not minimized. */
bool xwm_window_visible(const struct xwm_window *w);
/* Decisions that act through the functions of actions.c above, on
 * managed windows. */
/* Rule 1 and 2 in two steps: place and raise before the window is mapped
 * (so that nothing of ours draws on it once mapped: composite.c waits for
 * its client's first drawing), focus once mapped. */
void xwm_policy_window_place(struct xwm_window *w);    /* place, raise */
void xwm_policy_window_mapped(struct xwm_window *w);   /* focus */
void xwm_policy_window_unmapped(struct xwm_window *w); /* refocus */
void xwm_policy_activate(struct xwm_window *w);        /* raise + focus */
void xwm_policy_close(struct xwm_window *w);
void xwm_policy_resize(struct xwm_window *w, int width, int height);
void xwm_policy_configure_request(struct xwm_window *w, uint16_t mask, int x, int y,
                                  int width, int height);
void xwm_policy_request_maximize(struct xwm_window *w, bool maximize);
void xwm_policy_request_fullscreen(struct xwm_window *w, bool fullscreen);
void xwm_policy_request_minimize(struct xwm_window *w);
/* The functions above as a table, the model's policy unless the host
 * gives another. */
extern const struct xwm_policy_ops xwm_default_policy;
static inline const struct xwm_policy_ops *xwm_policy_of(const struct xwm *xwm)
{
	return xwm->policy ? xwm->policy : &xwm_default_policy;
}

/* --------------------------------------------------------- messages.c */
void xwm_handle_client_message(struct xwm *xwm, xcb_client_message_event_t *ev);
/* Takes a message whose answer needs nothing settled or applied before
 * it and may be merged with the same from the same window (true): a
 * frame-extents request, answered by xwm_answer_frame_extents, or a state
 * change the window manager does not act on. */
bool xwm_client_message_merged(struct xwm *xwm, xcb_client_message_event_t *ev);
void xwm_answer_frame_extents(struct xwm *xwm);

/* ------------------------------------------------------------ flood.c */
/* An event naming window, which makes us work for its X client: a client
 * over the limit is served after the others while it floods. */
void xwm_flood_note(struct xwm *xwm, xcb_window_t window, uint32_t sequence);
/* A client lowered that has stopped gets its priority back, even if it
 * sends nothing the window manager hears of: at each batch of events, and
 * while xwm_flood_lowered, every XWM_FLOOD_SWEEP_MS (the host's timer). */
void xwm_flood_sweep(struct xwm *xwm);
bool xwm_flood_lowered(const struct xwm *xwm);
#define XWM_FLOOD_SWEEP_MS 250
/* A PropertyNotify of _DUET_FLOOD_PROBE on the check window (wm.c): how
 * far behind the server's events we are, while a client floods. */
void xwm_flood_probe_back(struct xwm *xwm, uint32_t sequence);
void xwm_flood_finish(struct xwm *xwm);

/* --------------------------------------------------------------- wm.c */
int xwm_wm_claim(struct xwm *xwm);     /* SubstructureRedirect on the root */
/* Adopts existing windows. has_sync: the host initialised SYNC on the
 * connection, so its SERVERTIME counter can date focus changes. */
int xwm_wm_start(struct xwm *xwm, bool has_sync);
void xwm_wm_handle_event(struct xwm *xwm, xcb_generic_event_t *ev);
/* Applies what a batch of events merged: ConfigureRequests, frame-extents
 * requests; the event loop calls it after each batch. */
void xwm_wm_flush_merged(struct xwm *xwm);
/* Replies collected without waiting, by the event loop in request order
 * (main.c: poll_replies), one source each: new windows' geometry here,
 * property reads (props.c), window contents (fetch.c). oldest_reply gives
 * the sequence of the source's oldest request still out (false: none);
 * poll_oldest applies its reply if it is in (never blocks; true if so). */
bool xwm_wm_oldest_reply(struct xwm *xwm, unsigned int *sequence);
bool xwm_wm_poll_oldest(struct xwm *xwm);
void xwm_wm_finish(struct xwm *xwm);   /* free all windows */

#endif
