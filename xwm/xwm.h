/* duet-xwm: an X11 window manager and compositing manager in one process
 * (like Enlightenment), drawing through render/ on EGL's X11 platform.
 * The window manager is the window model of model.h (libxwm-model); this
 * is the compositing half, its host (struct xwm_host, composite.c).
 *
 * The files of the compositing half, each using only those above it (and
 * the model):
 *   rects.c      which rectangles of a damage to transfer (fetch, output)
 *   xrender.c    --renderer xrender: the scene drawn inside the X server
 *   output.c     how frames reach the overlay: EGL swap, MIT-SHM PutImage
 *                or XRender's back buffer
 *   dri3.c       window contents zero-copy: the pixmap's dmabuf (DRI3)
 *   sync.c       _NET_WM_SYNC_REQUEST and _NET_WM_FRAME_DRAWN/TIMINGS
 *   content.c    a window's named pixmap, texture and segment
 *   fetch.c      window contents: fetched without waiting for the server
 *   repaint.c    the repaint cycle: a frame in two halves around the
 *                server's round trip, and its trace
 *   screenshot.c screenshots, confined to --screenshot-dir for clients
 *   composite.c  Composite/Damage/XFixes setup, windows' damage, and the
 *                model's host
 * and of the program:
 *   protolog.c   X protocol counts for the bench ($DUET_PROTOCOL_LOG)
 *   main.c       command line, signals and the event loop
 */
#ifndef DUET_XWM_H
#define DUET_XWM_H

#include <stdbool.h>
#include <stdint.h>

#include <xcb/damage.h>

#include "model.h"
#include "render.h"

struct xwm_cm;
struct xwm_contents;
struct xwm_picture;
struct xwm_xrender;
struct xwm_output;
struct xwm_sync;

struct xwm_options {
	const char *display;
	const char *screenshot;
	const char *screenshot_dir; /* --screenshot-dir: _DUET_SCREENSHOT on, in there */
	int refresh_mhz;
	const char *present;   /* --present: "auto", "egl" or "shm" */
	bool pixman;           /* --renderer pixman: render/'s pixman engine, no EGL */
	bool xrender;          /* --renderer xrender: drawn in the X server (xrender.c) */
	unsigned texture_budget_mib, window_texture_budget_mib; /* 0: default */
};

/* Most rectangles a damage is transferred in (rects.c: xwm_plan_rects). */
#define XWM_MAX_RECTS 8
/* Regions with more rectangles than this are fetched as their bounding
 * box without trying to merge (the merge is quadratic or worse). */
#define XWM_MAX_MERGE_INPUT 16

/* A window's content part (composite.c, content.c, fetch.c, dri3.c):
 * what it shows and how that gets into its texture. */
struct xwm_content {
	struct xwm_window *window;
	struct xwm_cm *cm;
	xcb_damage_damage_t damage;
	xcb_pixmap_t pixmap;    /* named pixmap, width+2b x height+2b */
	int pixmap_width, pixmap_height;
	bool full_damage;       /* fetch the whole pixmap at the next paint */
	bool needs_rename;      /* (re)name the pixmap at the next paint (map, resize) */
	bool unsupported_logged;
	bool damaged;           /* DamageNotify since the last fetch */
	/* Their rectangles (DeltaRectangles level), pixmap coordinates. */
	pixman_region32_t damage_region;
	struct render_texture *texture; /* uploaded to, or the pixmap's dmabuf (dri3.c),
	                                 * or wrapped over seg_data (pixman) */
	/* pixman: the window's MIT-SHM segment, pixmap-sized with rows
	 * pixmap_width * 4 apart, which ShmGetImage fills and the texture
	 * samples in place (fetch.c); NULL otherwise. */
	uint32_t seg;
	void *seg_data;
	size_t seg_size;
	uint64_t texture_bytes;  /* its share of xwm_cm.texture_bytes */
	const char *content_path; /* "zero-copy" or "shm-copy" once named (dri3.c) */
	bool dri3_retry;          /* named on MIT-SHM while we held the server (dri3.c) */
	struct render_node *node;
	bool presented_update;  /* an update of this window was in the last frame */
	/* Mapped by us and not drawn by its client since: not fetched, not
	 * shown until its client's first drawing (composite.c). */
	bool awaiting_content;
	/* Size last shown, for the "composited" trace event; composited:
	 * shown since it was last mapped. */
	bool composited;
	int composited_width, composited_height;
	struct xwm_sync *sync;   /* its frame timing (sync.c's) */
};

/* The compositing manager. */
struct xwm_cm {
	struct xwm *wm;
	struct xwm_options options;
	void *xlib_display;          /* Display *, also the EGL native display */
	uint8_t damage_event, sync_event, xfixes_event;
	bool has_shm_fd;
	int screenshot_dir_fd;       /* --screenshot-dir, -1 without (screenshot.c) */
	char *screenshot_dir_path;   /* its absolute path */

	struct render_trace *trace;  /* $DUET_TRACE's, NULL: not tracing */
	struct render_egl *egl;
	struct renderer *renderer;
	struct render_target *target;
	struct render_scene *scene;
	/* Texture memory of all windows, and the budgets (content.c). */
	uint64_t texture_bytes, texture_budget, window_texture_budget;
	/* When to repaint, and the frame on its way from its start to its
	 * paint, waiting for its contents (render/repaint-loop.c, repaint.c). */
	struct render_repaint_loop repaint;
	uint64_t last_paint_area;    /* pixels repainted by the last paint, for the trace */
	const char *content_path;    /* "shm-copy" or "zero-copy" (where DRI3 imports) */
	/* DRI3 (dri3.c): the minor version the server speaks, -1 none; why
	 * windows cannot go zero-copy (NULL: they can); the X Sync fence
	 * triggered before a frame samples imported textures. */
	int dri3_minor;
	const char *dri3_why;
	xcb_connection_t *dri3_conn; /* the exports' own connection (dri3.c) */
	bool dri3_retry_any;           /* some window has dri3_retry */
	uint32_t dri3_fence;
	bool dri3_fence_triggered;
	struct xwm_output *output;     /* output.c's */
	struct xwm_xrender *xrender;   /* xrender.c's, NULL on the other engines */
	struct xwm_contents *contents; /* the frame's fetch (fetch.c's) */
	int sync_timer_fd;           /* the earliest _NET_WM_SYNC_REQUEST timeout (sync.c) */
};

/* A repaint on the frame scheduler's next tick (the repaint loop calls
 * repaint.c back), for new damage or (frame_due) only for frame-timing
 * messages that are due. Nothing before the compositing output is up. */
static inline void xwm_schedule_repaint(struct xwm_cm *cm)
{
	if (cm->scene)
		render_repaint_loop_request(&cm->repaint, true);
}

static inline void xwm_schedule_frame_due(struct xwm_cm *cm)
{
	if (cm->scene)
		render_repaint_loop_request(&cm->repaint, false);
}

/* ------------------------------------------------------------ rects.c */
/* Damage rectangles to transfer: region's boxes merged while that wastes
 * little; fills out[XWM_MAX_RECTS], returns how many. */
int xwm_plan_rects(const pixman_region32_t *region, pixman_box32_t *out);
int64_t xwm_box_area(const pixman_box32_t *b);

/* ----------------------------------------------------------- output.c */
/* Creates cm->target on the overlay (needs cm->egl and cm->scene). */
int xwm_output_start(struct xwm_cm *cm, int width, int height);
/* "egl-swap" or "shm-put", and the target's repaint path (for the logs). */
const char *xwm_output_path(const struct xwm_cm *cm);
const char *xwm_output_repaint_path(const struct xwm_cm *cm);
/* Before painting into the target: for a target that is the output's
 * segment, the server must be done with the last frame's PutImages
 * (waits, counted in output_waits, only if the repaint did not see to it). */
void xwm_output_before_paint(struct xwm_cm *cm);
void xwm_output_present(struct xwm_cm *cm, const pixman_region32_t *damage);
void xwm_output_finish(struct xwm_cm *cm);
/* The server may still be reading the last frame's pixels from the
 * output segment (a present now would have to wait for it). */
bool xwm_output_busy(const struct xwm_cm *cm);
/* The server has processed every request up to sequence (an event or a
 * reply carrying it arrived). */
void xwm_note_processed(struct xwm_cm *cm, uint32_t sequence);
/* The frame trace's "puts", "put_rects", "readback" and "output_waits"
 * for the last paint (painted: it presented anything). */
void xwm_output_trace(const struct xwm_cm *cm, bool painted, char *buf, size_t size);

/* ---------------------------------------------------------- xrender.c */
/* --renderer xrender: cm->renderer, drawing inside the X server; false
 * (logged) without RENDER 0.10 and the formats it draws in. */
bool xwm_xrender_init(struct xwm_cm *cm);
void xwm_xrender_finish(struct xwm_cm *cm);
/* A back buffer of the screen's size, shown on the overlay. */
struct render_target *xwm_xrender_target(struct xwm_cm *cm, int width, int height);
/* w's named pixmap as a texture (a Picture on it, freed with it), or NULL. */
struct render_texture *xwm_xrender_import(struct xwm_window *w, enum render_format format);

/* ------------------------------------------------------------- dri3.c */
/* After the renderer exists: whether windows can be imported zero-copy
 * (cm->dri3_why says why not). has_sync: SYNC 3.1 for the fence. */
bool xwm_dri3_init(struct xwm_cm *cm, bool has_sync);
void xwm_dri3_finish(struct xwm_cm *cm);
/* w's named pixmap as a texture (two round trips), or NULL: w stays on
 * the MIT-SHM copy. Logs and traces w's path when it changes. */
struct render_texture *xwm_dri3_import(struct xwm_window *w, enum render_format format);
/* Windows named while a kill held the server are named again once it is
 * released (each turn of the main loop). */
void xwm_dri3_after_grab(struct xwm_cm *cm);
/* Before the round trip of a frame that samples imported textures. */
void xwm_dri3_fence(struct xwm_cm *cm);

/* ------------------------------------------------------------- sync.c */
/* The sync part of a window, and its end. */
struct xwm_sync *xwm_sync_window_new(void);
void xwm_sync_window_destroyed(struct xwm_window *w);
void xwm_sync_window_counters_changed(struct xwm_window *w);
/* Before a WM-initiated configure of w. */
void xwm_sync_request(struct xwm_window *w);
void xwm_sync_handle_alarm(struct xwm_cm *cm, xcb_sync_alarm_notify_event_t *ev);
/* After each frame; drawn_ns: when its pixels were flushed to the X
 * server (the _NET_WM_FRAME_DRAWN time). Answers every window whose
 * finished frame's content was fetched by this frame or before. */
void xwm_sync_frame_presented(struct xwm_cm *cm, uint64_t drawn_ns);
/* How many windows xwm_sync_frame_presented would answer now. */
unsigned int xwm_sync_frames_drawn(const struct xwm_cm *cm);
/* w's damage so far was taken by a fetch (the frame that shows it is the
 * next to finish) or dropped (unmapped): a finished frame that waited for
 * it is answered after that frame. */
void xwm_sync_content_taken(struct xwm_window *w);
/* w's content is held back for a _NET_WM_SYNC_REQUEST answer that has
 * not come and has not timed out (what xwm_sync_content_ready says
 * without its side effects). */
bool xwm_sync_content_held(const struct xwm_window *w);
/* Whether w's content may be shown now (false while a resize awaits the
 * client's redraw, for at most a short timeout). */
bool xwm_sync_content_ready(struct xwm_window *w);
/* cm->sync_timer_fd fired: windows whose client did not answer in time
 * are shown anyway. */
void xwm_sync_timeout(struct xwm_cm *cm);

/* ---------------------------------------------------------- content.c */
/* Composited at all (a node, and a depth render/ takes). */
bool xwm_window_composited(const struct xwm_window *w);
/* Names the window's current pixmap and gives it a texture of its size. */
bool xwm_content_rename_pixmap(struct xwm_window *w);
/* Lets go of the named pixmap, and of the texture with its segment. */
void xwm_content_release_pixmap(struct xwm_window *w);
void xwm_content_drop_texture(struct xwm_window *w);
/* A memfd of size bytes, mapped, and attached to the server as a new
 * MIT-SHM segment: *seg, *data (name: the memfd's). */
bool xwm_segment_new(struct xwm_cm *cm, size_t size, const char *name, uint32_t *seg,
                     void **data);

/* ------------------------------------------------------------ fetch.c */
/* A repaint in two halves around the server's round trip (repaint.c):
 * fetch takes the damage of every window and sends the requests for it,
 * returning true when the frame must wait for replies; ready tells,
 * without blocking, whether they are in; upload puts them into the
 * textures. wait blocks for them (screenshots only, off the repaint path). */
bool xwm_contents_fetch(struct xwm_cm *cm);
/* Whether a window has contents that a fetch started now would take. */
bool xwm_contents_pending(const struct xwm_cm *cm);
/* Whether every reply of the frame's fetch is in, without reading the
 * socket: they are collected by poll_oldest (see xwm_wm_oldest_reply). */
bool xwm_contents_ready(struct xwm_cm *cm);
bool xwm_contents_oldest_reply(struct xwm_cm *cm, unsigned int *sequence);
bool xwm_contents_poll_oldest(struct xwm_cm *cm);
void xwm_contents_wait(struct xwm_cm *cm);
void xwm_contents_upload(struct xwm_cm *cm);
/* Bytes the last frame's fetch brought straight into windows' segments,
 * and those duet-xwm copied into a texture. */
void xwm_contents_counts(const struct xwm_cm *cm, uint64_t *in_place, uint64_t *copied);
/* w is unmapped or destroyed: what arrives for it is dropped. */
void xwm_contents_forget_window(struct xwm_window *w);
void xwm_contents_finish(struct xwm_cm *cm);

/* ---------------------------------------------------------- repaint.c */
/* The repaint loop on the overlay, at --refresh; 0 or -1. */
int xwm_repaint_start(struct xwm_cm *cm);
/* Finishes the frame in flight if its contents have arrived (never
 * blocks); true if it did. */
bool xwm_repaint_if_ready(struct xwm_cm *cm);
/* Paints pending contents at once, off the grid (screenshots). */
void xwm_repaint_now(struct xwm_cm *cm);

/* ------------------------------------------------------- screenshot.c */
/* A file name _DUET_SCREENSHOT may create in the screenshot directory. */
bool xwm_screenshot_name_ok(const char *name);
int xwm_screenshot_dir_open(struct xwm_cm *cm, const char *dir);
void xwm_screenshot_dir_close(struct xwm_cm *cm);
/* path: the command line's --screenshot. */
int xwm_screenshot(struct xwm_cm *cm, const char *path);
/* name: a client's, created in --screenshot-dir or refused (logged). */
int xwm_screenshot_to_dir(struct xwm_cm *cm, const char *name);

/* -------------------------------------------------------- composite.c */
/* What the model tells the compositing manager (host_data: the cm). */
extern const struct xwm_host xwm_composite_host;
int xwm_composite_start(struct xwm_cm *cm);
void xwm_composite_finish(struct xwm_cm *cm);

/* --------------------------------------------------------- protolog.c */
/* X protocol counts into $DUET_PROTOCOL_LOG (nothing without it). */
void xwm_protolog_start(const struct xwm_cm *cm);
void xwm_protolog_event(const xcb_generic_event_t *ev);
void xwm_protolog_write(void);

#endif
