/* duet-xwm: an X11 window manager and compositing manager in one process
 * (like Enlightenment), drawing through render/ on EGL's X11 platform.
 *
 * Internal contract between the files of xwm/:
 *   main.c       command line, signals, the event loop and the repaint cycle
 *   wm.c         the event table and window management (adopt, map,
 *                configure, unmap, destroy, focus, stacking)
 *   props.c      ICCCM/EWMH properties: reading client hints, publishing
 *                _NET_CLIENT_LIST and friends, WM_STATE, _NET_WM_STATE
 *   messages.c   client messages: EWMH requests and duet's control
 *                messages (docs/xwm-control.md)
 *   screenshot.c screenshots, confined to --screenshot-dir for clients
 *   policy.c     placement, focus and stacking rules (side by side with
 *                compositor/policy.c)
 *   composite.c  Composite/Damage/XFixes setup, windows' damage
 *   fetch.c      window contents: fetched without waiting for the server
 *   rects.c      which rectangles of a damage to transfer (fetch, output)
 *   dri3.c       window contents zero-copy: the pixmap's dmabuf (DRI3)
 *   sync.c       _NET_WM_SYNC_REQUEST and _NET_WM_FRAME_DRAWN/TIMINGS
 *   output.c     how frames reach the overlay: EGL swap or MIT-SHM PutImage
 *   protolog.c   X protocol counts for the bench ($DUET_PROTOCOL_LOG)
 *   hints.c      pure parsing of client properties (hints.h)
 *   wintable.c   window lookup by id (a hash table)
 */
#ifndef DUET_XWM_H
#define DUET_XWM_H

#include <stdbool.h>
#include <stdint.h>

#include <xcb/xcb.h>
#include <xcb/xcb_ewmh.h>
#include <xcb/damage.h>
#include <xcb/sync.h>

#include "hints.h"
#include "render.h"

/* Intrusive list (xwm/ links no Wayland library). */
struct xwm_list {
	struct xwm_list *prev, *next;
};
void xwm_list_init(struct xwm_list *head);
void xwm_list_insert_after(struct xwm_list *pos, struct xwm_list *elm);
void xwm_list_remove(struct xwm_list *elm);
#define xwm_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

struct xwm;
struct xwm_window;
struct xwm_contents;
struct xwm_prop_reads;

/* Windows by id (wintable.c): chained buckets, a power of two of them. */
struct xwm_wintable {
	struct xwm_window **buckets;
	size_t nbuckets, count;
};

struct xwm_window {
	struct xwm *xwm;
	struct xwm_list link; /* xwm.stack: X stacking order, bottom first */
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
	 * not applied yet (wm.c): no node or Damage until it is. */
	bool geometry_pending;
	unsigned int geometry_sequence;

	/* Window management; meaningful when managed. */
	bool managed;           /* a client window we manage (not override-redirect) */
	uint64_t manage_order;  /* for _NET_CLIENT_LIST (initial mapping order) */
	bool button_grabbed;
	bool mapped;            /* the client asked to be shown and we showed it */
	bool minimized, maximized, fullscreen;
	int saved_x, saved_y, saved_width, saved_height;
	int ignore_unmaps;      /* UnmapNotify caused by us (minimize) */
	/* ConfigureRequests merged until the event queue is drained (wm.c). */
	bool cfg_pending;
	uint16_t cfg_mask;
	int cfg_x, cfg_y, cfg_width, cfg_height;
	struct xwm_size_hints hints;
	bool accepts_input;     /* WM_HINTS input */
	bool initial_iconic;    /* WM_HINTS initial_state IconicState */
	xcb_window_t transient_for; /* WM_TRANSIENT_FOR, 0 none */
	/* Sequence of our last ConfigureWindow of it: a ConfigureNotify
	 * older than that shows a state before it and is not applied (wm.c). */
	uint32_t configure_seq;
	bool configure_sent;
	bool take_focus;        /* WM_PROTOCOLS has WM_TAKE_FOCUS */
	bool delete_window;     /* WM_PROTOCOLS has WM_DELETE_WINDOW */
	bool sync_request;      /* WM_PROTOCOLS has _NET_WM_SYNC_REQUEST */
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

	/* Compositing. */
	xcb_damage_damage_t damage;
	xcb_pixmap_t pixmap;    /* named pixmap, width+2b x height+2b */
	int pixmap_width, pixmap_height;
	bool full_damage;       /* fetch the whole pixmap at the next paint */
	bool needs_rename;      /* (re)name the pixmap at the next paint (map, resize) */
	bool unsupported_logged;
	bool damaged;           /* DamageNotify since the last fetch */
	/* Their rectangles (DeltaRectangles level), pixmap coordinates;
	 * initialised by xwm_composite_window_created, freed by _destroyed. */
	pixman_region32_t damage_region;
	struct render_texture *texture; /* uploaded to, or the pixmap's dmabuf (dri3.c),
	                                 * or wrapped over seg_data (pixman) */
	/* pixman: the window's MIT-SHM segment, pixmap-sized with rows
	 * pixmap_width * 4 apart, which ShmGetImage fills and the texture
	 * samples in place (fetch.c); NULL otherwise. */
	uint32_t seg;
	void *seg_data;
	size_t seg_size;
	uint64_t texture_bytes;  /* its share of xwm.texture_bytes */
	const char *content_path; /* "zero-copy" or "shm-copy" once named (dri3.c) */
	struct render_node *node;
	bool presented_update;  /* an update of this window was in the last frame */
	/* Mapped by us and not drawn by its client since: not fetched, not
	 * shown until its client's first drawing (composite.c). */
	bool awaiting_content;
	/* Size last shown, for the "composited" trace event; composited:
	 * shown since it was last mapped. */
	bool composited;
	int composited_width, composited_height;
	uint32_t pid;           /* _NET_WM_PID, 0 if unset */

	/* Frame timing (sync.c). */
	xcb_sync_counter_t sync_counter, ext_counter;
	xcb_sync_alarm_t ext_alarm;
	int64_t sync_serial;     /* last value sent in _NET_WM_SYNC_REQUEST */
	bool sync_waiting;       /* content held back until the client draws */
	uint64_t sync_sent_ns;
	/* Finished frames (even extended counter values). A frame's content
	 * is the damage reported before its value (the client's drawing
	 * precedes its counter update on its connection): frame_serial is
	 * the latest whose content a fetch has taken (or that had none),
	 * answered by _NET_WM_FRAME_DRAWN after the next frame; unfetched_serial
	 * the latest whose damage no fetch has taken yet, which becomes
	 * frame_serial when one does (xwm_sync_content_taken). Damage
	 * reported after a frame's value is a later frame's and never holds
	 * its answer back. */
	int64_t frame_serial;
	bool frame_pending;      /* frame_serial is owed */
	int64_t unfetched_serial;
	bool unfetched_pending;  /* unfetched_serial is owed once fetched */
	bool frame_drawn_sent;   /* _NET_WM_FRAME_TIMINGS owed */
	uint64_t frame_drawn_ns;
};

struct xwm_atoms {
	xcb_atom_t WM_DELETE_WINDOW, WM_TAKE_FOCUS, WM_STATE, WM_CHANGE_STATE,
		WM_NAME, WM_CLASS, WM_HINTS, WM_NORMAL_HINTS, WM_PROTOCOLS,
		WM_S0, MANAGER, WM_TRANSIENT_FOR,
		_NET_WM_FRAME_DRAWN, _NET_WM_FRAME_TIMINGS, _NET_WM_CM_S0,
		_NET_WM_STATE_FOCUSED,
		_DUET_SYNC, _DUET_RESIZE, _DUET_SCREENSHOT, _DUET_SCREENSHOT_PATH,
		_DUET_SCREENSHOT_DIR;
};

struct xwm_options {
	const char *display;
	const char *screenshot;
	const char *screenshot_dir; /* --screenshot-dir: _DUET_SCREENSHOT on, in there */
	int refresh_mhz;
	const char *present;   /* --present: "auto", "egl" or "shm" */
	bool pixman;           /* --renderer pixman: render/'s pixman engine, no EGL */
	unsigned texture_budget_mib, window_texture_budget_mib; /* 0: default */
};

/* Most rectangles a damage is transferred in (rects.c: xwm_plan_rects). */
#define XWM_MAX_RECTS 8
/* Regions with more rectangles than this are fetched as their bounding
 * box without trying to merge (the merge is quadratic or worse). */
#define XWM_MAX_MERGE_INPUT 16

struct xwm {
	struct xwm_options options;
	void *xlib_display;          /* Display *, also the EGL native display */
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
	int screenshot_dir_fd;       /* --screenshot-dir, -1 without (screenshot.c) */
	char *screenshot_dir_path;   /* its absolute path */

	uint8_t damage_event, sync_event, xfixes_event;
	bool has_shm_fd;

	struct xwm_list stack;       /* xwm_window.link, bottom first */
	struct xwm_wintable windows; /* the same windows by id */
	struct xwm_window *focused;
	uint64_t manage_counter;
	/* _NET_CLIENT_LIST(_STACKING) as last written, to skip rewriting
	 * the same lists (props.c). */
	xcb_window_t *client_list, *client_list_stacking;
	size_t client_list_len, client_list_cap;
	bool client_lists_written;
	int configures_pending;      /* windows with cfg_pending */
	int geometries_pending;      /* windows with geometry_pending */
	struct xwm_prop_reads *prop_reads; /* property reads in flight (props.c) */

	/* Compositing output. */
	xcb_window_t overlay;
	xcb_xfixes_region_t scratch_region;
	struct render_egl *egl;
	struct renderer *renderer;
	struct render_target *target;
	struct render_scene *scene;
	/* Texture memory of all windows, and the budgets (composite.c). */
	uint64_t texture_bytes, texture_budget, window_texture_budget;
	/* When to repaint, and the frame on its way from its start to its
	 * paint, waiting for its contents (render/repaint-loop.c, main.c). */
	struct render_repaint_loop repaint;
	const char *content_path;    /* "shm-copy" or "zero-copy" (where DRI3 imports) */
	/* DRI3 (dri3.c): the minor version the server speaks, -1 none; why
	 * windows cannot go zero-copy (NULL: they can); the X Sync fence
	 * triggered before a frame samples imported textures. */
	int dri3_minor;
	const char *dri3_why;
	uint32_t dri3_fence;
	bool dri3_fence_triggered;
	const char *output_path;     /* "shm-put" or "egl-swap" (output.c) */
	const char *output_repaint;  /* the target's repaint path, for the trace */

	/* Output present by PutImage (output.c). */
	xcb_gcontext_t out_gc;
	uint32_t out_shm_seg;
	void *out_shm_data;          /* NULL: plain PutImage */
	size_t out_shm_size;
	void *out_buf;               /* plain PutImage rows */
	size_t out_buf_size;
	bool out_direct;             /* the target draws in the segment (pixman) */
	int out_width, out_height;   /* of the segment's image */
	uint32_t out_put_seq;        /* last PutImage from the segment */
	bool out_put_pending;        /* it may not have been executed yet */
	uint64_t out_requests, out_waits;
	/* The last paint's PutImages (rectangles: the first XWM_MAX_RECTS)
	 * and bytes read back for them, for the frame trace. */
	unsigned int out_frame_puts;
	pixman_box32_t out_frame_put[XWM_MAX_RECTS];
	uint64_t out_frame_readback;
	/* Latest request the server is known to have processed (from the
	 * sequence numbers of events and replies). */
	uint32_t processed_seq;
	bool processed_known;

	/* Window contents (fetch.c): the frame's fetch, and the MIT-SHM
	 * segment the server writes them into. */
	struct xwm_contents *contents;
	/* Bytes the last frame's fetch brought straight into windows'
	 * segments, and those duet-xwm copied into a texture (fetch.c). */
	uint64_t fetch_in_place, fetch_copied;
	uint32_t shm_seg;
	void *shm_data;
	size_t shm_size;

	int sync_timer_fd;           /* the earliest _NET_WM_SYNC_REQUEST timeout */
	uint64_t last_paint_area;    /* pixels repainted by the last paint, for the trace */
	bool quit;
	bool debug;
};

/* ---------------------------------------------------------------- log */
void xwm_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void xwm_debug(struct xwm *xwm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --------------------------------------------------------------- wm.c */
int xwm_wm_claim(struct xwm *xwm);     /* SubstructureRedirect on the root */
int xwm_wm_start(struct xwm *xwm);     /* adopt existing windows */
void xwm_wm_handle_event(struct xwm *xwm, xcb_generic_event_t *ev);
/* Applies merged ConfigureRequests; main.c calls it once the queue is empty. */
void xwm_wm_flush_configures(struct xwm *xwm);
/* Replies collected without waiting, by the event loop in request order
 * (main.c: poll_replies), one source each: new windows' geometry here,
 * property reads (props.c), window contents (fetch.c). oldest_reply gives
 * the sequence of the source's oldest request still out (false: none);
 * poll_oldest applies its reply if it is in (never blocks; true if so). */
bool xwm_wm_oldest_reply(struct xwm *xwm, unsigned int *sequence);
bool xwm_wm_poll_oldest(struct xwm *xwm);
struct xwm_window *xwm_window_lookup(struct xwm *xwm, xcb_window_t id);
void xwm_wm_finish(struct xwm *xwm);   /* free all windows */
/* What policy.c asks of the X side. */
void xwm_window_move_resize(struct xwm_window *w, int x, int y, int width, int height);
void xwm_window_resize(struct xwm_window *w, int width, int height);
void xwm_window_raise(struct xwm_window *w);
void xwm_window_set_hidden(struct xwm_window *w, bool hidden);
void xwm_set_focus(struct xwm *xwm, struct xwm_window *w);
void xwm_window_send_close(struct xwm_window *w);
/* Visible to the policy: managed, mapped, not minimized. */
bool xwm_window_visible(const struct xwm_window *w);

/* ------------------------------------------------------------- dri3.c */
/* After the renderer exists: whether windows can be imported zero-copy
 * (xwm->dri3_why says why not). has_sync: SYNC 3.1 for the fence. */
bool xwm_dri3_init(struct xwm *xwm, bool has_sync);
void xwm_dri3_finish(struct xwm *xwm);
/* w's named pixmap as a texture (one round trip), or NULL: w stays on the
 * MIT-SHM copy. Logs and traces w's path when it changes. */
struct render_texture *xwm_dri3_import(struct xwm_window *w, enum render_format format);
/* Before the round trip of a frame that samples imported textures. */
void xwm_dri3_fence(struct xwm *xwm);

/* ------------------------------------------------------------ props.c */
int xwm_props_intern_atoms(struct xwm *xwm);
void xwm_props_init_root(struct xwm *xwm);   /* _NET_SUPPORTED, check window */
/* Sets _NET_SUPPORTING_WM_CHECK on the root: tools and the bench read it
 * as "the WM is ready", so only once it can composite. */
void xwm_props_announce(struct xwm *xwm);
void xwm_props_read_all(struct xwm_window *w);
/* A PropertyNotify of w (state: XCB_PROPERTY_NEW_VALUE or _DELETE): its
 * new value is read without waiting, applied by poll once it arrived. */
void xwm_props_changed(struct xwm_window *w, xcb_atom_t atom, uint8_t state);
/* Property reads in request order (see xwm_wm_oldest_reply). */
bool xwm_props_oldest_reply(struct xwm *xwm, unsigned int *sequence);
bool xwm_props_poll_oldest(struct xwm *xwm);
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

/* --------------------------------------------------------- messages.c */
void xwm_handle_client_message(struct xwm *xwm, xcb_client_message_event_t *ev);

/* ------------------------------------------------------- screenshot.c */
/* A file name _DUET_SCREENSHOT may create in the screenshot directory. */
bool xwm_screenshot_name_ok(const char *name);
int xwm_screenshot_dir_open(struct xwm *xwm, const char *dir);
void xwm_screenshot_dir_close(struct xwm *xwm);
/* path: the command line's --screenshot. */
int xwm_screenshot(struct xwm *xwm, const char *path);
/* name: a client's, created in --screenshot-dir or refused (logged). */
int xwm_screenshot_to_dir(struct xwm *xwm, const char *name);

/* ----------------------------------------------------------- policy.c */
/* Pure decisions, unit-tested without X. */
void xwm_policy_place(int screen_w, int screen_h, int width, int height, int *x, int *y);
/* Rule 11: centered over the parent's rectangle, kept on the screen. */
void xwm_policy_place_over(int px, int py, int pw, int ph, int screen_w, int screen_h,
                           int width, int height, int *x, int *y);
void xwm_policy_constrain_size(const struct xwm_window *w, int *width, int *height);
/* Decisions that act through the functions of wm.c above. */
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
/* The screen the policy places windows on. */
void xwm_policy_screen_size(const struct xwm *xwm, int *width, int *height);

/* -------------------------------------------------------- composite.c */
int xwm_composite_start(struct xwm *xwm);
void xwm_composite_finish(struct xwm *xwm);
void xwm_composite_window_created(struct xwm_window *w);
/* Right before our MapWindow of a managed window: it is shown once its
 * client draws (see composite.c). */
void xwm_composite_window_mapping(struct xwm_window *w);
/* MapNotify; has_content: the window was drawn before we saw it mapped
 * (adopted at start). */
void xwm_composite_window_mapped(struct xwm_window *w, bool has_content);
void xwm_composite_window_unmapped(struct xwm_window *w);
void xwm_composite_window_configured(struct xwm_window *w, bool resized);
void xwm_composite_window_restacked(struct xwm_window *w);
void xwm_composite_window_destroyed(struct xwm_window *w);
void xwm_composite_handle_damage(struct xwm *xwm, xcb_damage_notify_event_t *ev);
/* main.c: a repaint on the frame scheduler's next tick, for new damage or
 * (frame_due) only for frame-timing messages that are due. Nothing before
 * the compositing output is up (xwm_repaint_start). */
void xwm_schedule_repaint(struct xwm *xwm);
void xwm_schedule_frame_due(struct xwm *xwm);
/* Paints pending contents at once, off the grid (screenshots). */
void xwm_repaint_now(struct xwm *xwm);
/* Arms xwm->sync_timer_fd for at (0 disarms it). */
void xwm_arm_sync_timer(struct xwm *xwm, uint64_t at);
/* The repaint loop on the overlay, at --refresh (main.c); 0 or -1. */
int xwm_repaint_start(struct xwm *xwm);
/* Emits the "composited" trace event for windows whose first content or
 * new size this frame (finished at done_ns) showed. */
void xwm_composite_trace_shown(struct xwm *xwm, uint64_t seq, uint64_t done_ns);

/* Composited at all (a node, and a depth render/ takes). */
bool xwm_window_composited(const struct xwm_window *w);
/* Names the window's current pixmap and gives it a texture of its size. */
bool xwm_composite_rename_pixmap(struct xwm_window *w);

/* ------------------------------------------------------------ rects.c */
/* Damage rectangles to transfer: region's boxes merged while that wastes
 * little; fills out[XWM_MAX_RECTS] (defined above struct xwm), returns how
 * many. */
int xwm_plan_rects(const pixman_region32_t *region, pixman_box32_t *out);
int64_t xwm_box_area(const pixman_box32_t *b);

/* ------------------------------------------------------------ fetch.c */
/* A repaint in two halves around the server's round trip (main.c):
 * fetch takes the damage of every window and sends the requests for it,
 * returning true when the frame must wait for replies; ready tells,
 * without blocking, whether they are in; upload puts them into the
 * textures. wait blocks for them (screenshots only, off the repaint path). */
bool xwm_contents_fetch(struct xwm *xwm);
/* A pixmap-sized segment for w (w->seg_data) shared with the server
 * (only while no fetch is in flight), and its release (no-op without one;
 * at any time: a ShmGetImage still in flight writes the server's mapping,
 * its detach comes after it, and the window is forgotten by the fetch). */
bool xwm_window_segment_create(struct xwm_window *w, size_t size);
void xwm_window_segment_release(struct xwm_window *w);
bool xwm_contents_in_flight(const struct xwm *xwm);
/* Whether a window has contents that a fetch started now would take. */
bool xwm_contents_pending(const struct xwm *xwm);
/* Whether every reply of the frame's fetch is in, without reading the
 * socket: they are collected by poll_oldest (see xwm_wm_oldest_reply). */
bool xwm_contents_ready(struct xwm *xwm);
bool xwm_contents_oldest_reply(struct xwm *xwm, unsigned int *sequence);
bool xwm_contents_poll_oldest(struct xwm *xwm);
void xwm_contents_wait(struct xwm *xwm);
void xwm_contents_upload(struct xwm *xwm);
/* w is unmapped or destroyed: what arrives for it is dropped. */
void xwm_contents_forget_window(struct xwm_window *w);
void xwm_contents_finish(struct xwm *xwm);

/* ----------------------------------------------------------- output.c */
/* Creates xwm->target on the overlay (needs xwm->egl and xwm->scene). */
int xwm_output_start(struct xwm *xwm, int width, int height);
/* Before painting into the target: for a target that is the output's
 * segment, the server must be done with the last frame's PutImages
 * (waits, counted in out_waits, only if the repaint did not see to it). */
void xwm_output_before_paint(struct xwm *xwm);
void xwm_output_present(struct xwm *xwm, const pixman_region32_t *damage);
void xwm_output_finish(struct xwm *xwm);
/* The server may still be reading the last frame's pixels from the
 * output segment (a present now would have to wait for it). */
bool xwm_output_busy(const struct xwm *xwm);
/* The server has processed every request up to sequence (an event or a
 * reply carrying it arrived). */
void xwm_note_processed(struct xwm *xwm, uint32_t sequence);

/* --------------------------------------------------------- wintable.c */
/* insert: false when out of memory (the window is then not tracked). */
bool xwm_wintable_insert(struct xwm_wintable *t, struct xwm_window *w);
void xwm_wintable_remove(struct xwm_wintable *t, struct xwm_window *w);
struct xwm_window *xwm_wintable_lookup(const struct xwm_wintable *t, xcb_window_t id);
void xwm_wintable_finish(struct xwm_wintable *t);

/* --------------------------------------------------------- protolog.c */
/* X protocol counts into $DUET_PROTOCOL_LOG (nothing without it). */
void xwm_protolog_start(const struct xwm *xwm);
void xwm_protolog_event(const xcb_generic_event_t *ev);
void xwm_protolog_write(void);

/* ------------------------------------------------------------- sync.c */
void xwm_sync_window_counters_changed(struct xwm_window *w);
/* Before a WM-initiated configure of w. */
void xwm_sync_request(struct xwm_window *w);
void xwm_sync_handle_alarm(struct xwm *xwm, xcb_sync_alarm_notify_event_t *ev);
/* After each frame; drawn_ns: when its pixels were flushed to the X
 * server (the _NET_WM_FRAME_DRAWN time). Answers every window whose
 * finished frame's content was fetched by this frame or before. */
void xwm_sync_frame_presented(struct xwm *xwm, uint64_t drawn_ns);
/* How many windows xwm_sync_frame_presented would answer now. */
unsigned int xwm_sync_frames_drawn(const struct xwm *xwm);
/* w's damage so far was taken by a fetch (the frame that shows it is the
 * next to finish) or dropped (unmapped): a finished frame that waited for
 * it is answered after that frame. */
void xwm_sync_content_taken(struct xwm_window *w);
/* w's content is held back for a _NET_WM_SYNC_REQUEST answer that has
 * not come and has not timed out (what xwm_sync_content_ready says
 * without its side effects). */
bool xwm_sync_content_held(const struct xwm_window *w);
void xwm_sync_window_destroyed(struct xwm_window *w);
/* Whether w's content may be shown now (false while a resize awaits the
 * client's redraw, for at most a short timeout). */
bool xwm_sync_content_ready(struct xwm_window *w);
/* xwm->sync_timer_fd fired: windows whose client did not answer in time
 * are shown anyway. */
void xwm_sync_timeout(struct xwm *xwm);

#endif
