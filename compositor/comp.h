/* duet-compositor: a small Wayland display server, window manager and
 * compositor in one process, written directly on libwayland-server.
 *
 * One struct comp_server holds the globals. Per-object structs carry their
 * own wl_list links and wl_listeners and are recovered with wl_container_of.
 * Each protocol object or concern lives in its own file, in a folder per
 * layer (core/, output/, seat/, shell/, policy/, backend/headless/,
 * backend/drm/, xwayland/, testing/: each folder's README.md); this header
 * is the contract between them.
 */
#ifndef DUET_COMP_H
#define DUET_COMP_H

#include <pixman.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <wayland-server-core.h>

#include "render.h"

struct comp_server;
struct comp_output;
struct comp_surface;
struct comp_window;
struct comp_seat;
struct comp_xwayland;

/* ------------------------------------------------------------- logging */

void comp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* -------------------------------------------------------------- server */

/* Outputs a layout holds at most (a surface records the outputs it is on
 * as bits of a uint32_t). */
#define COMP_MAX_OUTPUTS 8

struct comp_output_config {
	int width, height, refresh_mhz;
};

struct comp_options {
	int width, height;     /* output size, default 1920x1080 */
	int refresh_mhz;       /* default 60000; 0 = repaint as soon as damaged */
	/* Headless --output WxH[@Hz], repeatable: the outputs, left to right;
	 * none: one output of width x height at refresh_mhz. */
	struct comp_output_config outputs[COMP_MAX_OUTPUTS];
	int n_outputs;
	const char *socket;    /* NULL = wl_display_add_socket_auto */
	bool no_listen;        /* no socket: clients come by wl_client_create (wlcs) */
	/* xdg_surface buffers attached or committed before the first
	 * configure is acked, even before the initial commit, are taken (a
	 * first commit with a buffer is the initial commit and maps), not the
	 * spec's unconfigured_buffer error: for wlcs 1.5.0 alone, whose
	 * helpers do both (wlcs fixed that after 1.5.0). */
	bool early_buffer_ok;
	const char *screenshot_path; /* written on exit if set */
	const char *backend;   /* "headless" or "drm" */
	bool pixman;           /* --renderer pixman: render/'s pixman engine (headless) */
	const char *vfb_path;  /* --vfb: headless frames copied into this file, or NULL */
	const char *vfb_layout; /* --vfb-layout: "linear" (default) or "tiled" */
	/* --mode WxH[@Hz]: the KMS mode to set (headless: size and refresh);
	 * mode_width 0 = the connector's preferred mode, mode_mhz 0 = any. */
	int mode_width, mode_height, mode_mhz;
	const char *drm_device; /* --drm-device: a card node, NULL = first usable */
	bool test_protocol;    /* --test-protocol: duet_test for the test socket's clients */
	const char *protocol_log; /* protocol-log.c's file, or NULL ($DUET_PROTOCOL_LOG) */
	const char *trace_path; /* the frame trace's file (render_trace), or NULL ($DUET_TRACE) */
	/* Texture memory (docs/security.md), bytes; 0 = the default. */
	uint64_t texture_budget, client_texture_budget;
	/* --xwayland: an X display for X clients, served by Xwayland
	 * (xwayland.c), started on its first X connection, or at once and
	 * kept with xwayland_now; the binary is xwayland_path (NULL:
	 * "Xwayland" in PATH) and the display the first free one from
	 * xwayland_display on. */
	bool xwayland;
	bool xwayland_now;
	const char *xwayland_path;
	int xwayland_display;
	/* How long a resized X window's old content waits for the client's
	 * _NET_WM_SYNC_REQUEST answer (ms; 0: 100, xwayland-sync.c). */
	int xwayland_sync_timeout_ms;
};

#define COMP_MAX_GLOBALS 32
#define COMP_MAX_STACK_LAYERS 4
#define COMP_DEFAULT_TEXTURE_BUDGET (1024ull << 20)
#define COMP_DEFAULT_CLIENT_TEXTURE_BUDGET (256ull << 20)
/* MIME types one wl_data_source may offer. */
#define COMP_MAX_MIME_TYPES 128

struct comp_server {
	struct wl_display *display;
	struct wl_event_loop *loop;
	const char *socket_name;
	const char *test_socket_name; /* NAME-test with --test-protocol, else NULL */
	struct comp_options options;

	struct render_egl *egl;
	struct renderer *renderer;
	/* One scene in layout coordinates; each output shows its part of it
	 * through its own view (output-layout.c). */
	struct render_scene *scene;
	struct wl_list outputs;    /* comp_output.link, left to right */
	const struct comp_backend *backend;
	void *backend_data;        /* the backend's device state (comp_backend.init) */
	struct comp_seat *seat;
	/* The window policy's callbacks (struct comp_policy_listener), set by
	 * comp_server_init: how seat and shell tell the policy what happened. */
	const struct comp_policy_listener *policy;
	/* What core's surfaces tell the outputs and the seat above them
	 * (struct comp_surface_listener), set by comp_server_init. */
	const struct comp_surface_listener *surface_listener;
	/* The stack's layers, bottom first (core/stack.c): the shell's
	 * windows, then Xwayland's override-redirect windows. */
	const struct comp_stack_layer *stack_layers[COMP_MAX_STACK_LAYERS];
	int n_stack_layers;
	/* The xdg_popup grab, as the seat sees it (struct comp_popup_grab),
	 * set by comp_xdg_shell_create; NULL: no shell. */
	const struct comp_popup_grab *popup_grab;
	/* What a surface's changes do to its subsurfaces (subsurface.c). */
	const struct comp_subsurface_parent *subsurface_parent;
	/* Touchscreens plugged in (seat-touch.c): counted here, not in the
	 * seat, since the backend's devices are added before the seat exists. */
	int touch_devices;
	/* The DRM device the renderer draws on (the KMS card), where known:
	 * linux-dmabuf's main device. */
	bool has_render_device;
	dev_t render_device;
	struct comp_dmabuf *dmabuf; /* linux-dmabuf.c; NULL where it is not offered */
	/* The interfaces offered to clients, each once, at the highest
	 * version offered (resource.c). */
	struct comp_offered {
		const char *name;
		int version;
	} offered[COMP_MAX_GLOBALS];
	int n_offered;
	struct render_trace *trace; /* options.trace_path's; NULL: not tracing */

	struct wl_list surfaces;   /* comp_surface.link */
	struct wl_list windows;    /* comp_window.link, stacking order, topmost first */
	uint32_t next_window_id;
	struct comp_window *focused; /* window with keyboard focus, or NULL */
	/* xdg_popups that took a grab, outermost first: the last one is the
	 * topmost and has the keyboard focus once mapped (xdg-popup.c). */
	struct wl_list popup_grabs;

	uint64_t texture_bytes;    /* all surfaces' textures, budget.c */
	/* A client standing for others, who pay for its surfaces (Xwayland's
	 * X window manager while it runs); NULL: none. */
	struct comp_budget_payer *budget_payer;
	uint64_t traced_uploaded;  /* renderer's uploaded_bytes at the last traced frame */

	struct wl_signal new_surface;     /* data: struct comp_surface *, once made */
	struct wl_signal window_mapped;   /* data: struct comp_window * */
	struct wl_signal window_unmapped; /* data: struct comp_window * */
	/* An output's frame is on screen (its presenting_info says when):
	 * data: struct comp_output *. */
	struct wl_signal output_presented;
	/* The keyboard focus moved to another client (data: struct wl_client *,
	 * NULL: none), seat.c: the data device's selection follows it. */
	struct wl_signal keyboard_client_changed;

	struct comp_xwayland *xwayland;   /* with options.xwayland, xwayland.h */
};

int comp_server_init(struct comp_server *server, const struct comp_options *options);
void comp_server_finish(struct comp_server *server);
/* resource.c: wl_resource_create and wl_resource_set_implementation, or
 * NULL after posting wl_display.no_memory to client, as every request and
 * bind that makes an object answers a failed allocation. */
struct wl_resource *comp_resource_create(struct wl_client *client,
                                         const struct wl_interface *interface, int version,
                                         uint32_t id, const void *implementation, void *data,
                                         wl_resource_destroy_func_t destroy);
/* wl_global_create for every client's global, noted in server->offered
 * (NULL and a log line when it fails); comp_server_offers notes one that
 * libwayland made (wl_shm). The test-only duet_test global is not noted. */
struct wl_global *comp_global_create(struct comp_server *server,
                                     const struct wl_interface *interface, int version,
                                     void *data, wl_global_bind_func_t bind);
void comp_server_offers(struct comp_server *server, const char *interface, int version);
/* budget.c: charges a surface's texture (bytes replaces its current
 * charge) to its client and the total; false after posting the error, or
 * after its payer refused it. */
bool comp_budget_charge_texture(struct comp_surface *surface, uint64_t bytes);
/* Xwayland is one Wayland client standing for many X clients: cutting it
 * off for what one of them did would end them all. For the surfaces of
 * payer->client, budget.c leaves both budgets to charge(), which applies
 * them to whoever stands behind each surface (xwayland-budget.c,
 * docs/security.md). all: every client's texture bytes with this one.
 * true: charged; false: refused (the commit is dropped, nothing is
 * allocated, and the client is not told: the payer dealt with the party
 * behind it). */
struct comp_budget_payer {
	struct wl_client *client;
	bool (*charge)(struct comp_budget_payer *payer, struct comp_surface *surface,
	               uint64_t bytes, uint64_t all);
	/* The renderer could not make surface's texture (what says why): the
	 * party behind it is dealt with as for a budget it went over. */
	void (*refuse)(struct comp_budget_payer *payer, struct comp_surface *surface,
	               const char *what);
};
void comp_budget_release_texture(struct comp_surface *surface);
/* budget.c: the renderer could not make (or keep) a width x height
 * texture for surface: a no_memory error for its client, or, where a
 * payer stands for the client, the payer's refuse (its commit dropped). */
void comp_budget_texture_failed(struct comp_surface *surface, int width, int height);
/* A wl_display.no_memory error naming the budget, and a log line. */
void comp_client_post_over_budget(struct wl_client *client, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* protocol-log.c: with options.protocol_log set, counts Wayland messages
 * per client into that file (bench/); a no-op otherwise. Freed with the
 * display. */
void comp_protocol_log_init(struct comp_server *server);
/* client-log.c: a log line for each client that leaves with surfaces or
 * is cut off for not reading; libwayland's lines through comp_log. Freed
 * with the display. */
void comp_client_log_init(struct comp_server *server);

/* Client coordinates and offsets are clamped to +-COMP_MAX_COORD where the
 * specs allow any int32, so that sums of them (nested surfaces, moves that
 * add up) stay far from int overflow (docs/security.md). */
#define COMP_MAX_COORD (1 << 24)
static inline int comp_clamp_coord(int64_t v)
{
	return v < -COMP_MAX_COORD ? -COMP_MAX_COORD : v > COMP_MAX_COORD ? COMP_MAX_COORD : (int)v;
}

/* A surface's damage of more rectangles is taken as their bounding box
 * (surface.c), per commit and between repaints. */
#define COMP_MAX_DAMAGE_RECTS 64

/* -------------------------------------------------------------- output */

/* What the output reports after each presentation (or each tick on which
 * frame callbacks were due but nothing needed painting). */
struct comp_frame_info {
	uint64_t t_ns;        /* CLOCK_MONOTONIC time the frame became visible */
	uint64_t seq;         /* output frame counter (MSC) */
	uint32_t refresh_ns;  /* 0 when unthrottled */
	bool painted;         /* false: nothing changed, no GPU work was done */
	uint32_t flags;       /* wp_presentation_feedback kind: what the time is */
	uint64_t repaint;     /* the output's repaint count when the frame started */
};

/* A backend presents frames: headless reads nothing and just finishes GL
 * work; DRM page-flips (backend-drm.c). Kept to a handful of functions.
 * Every backend finishes a frame the same way: comp_output_finish_frame,
 * once the frame it was given by submit is out. */
struct comp_backend {
	const char *name;
	/* Optional: opens the device and creates server->egl (and
	 * server->backend_data); without it, EGL is Mesa's surfaceless
	 * platform. finish undoes it after the EGL display is gone. */
	int (*init)(struct comp_server *server);
	void (*finish)(struct comp_server *server);
	/* How many outputs there are (headless: --output's; KMS: the
	 * connected connectors that got a CRTC); at least one. */
	int (*output_count)(struct comp_server *server);
	/* Create the render target for output->index; called once per
	 * output. It sets the output's width, height, refresh_mhz and name
	 * (a KMS mode, a headless --output). */
	struct render_target *(*create_target)(struct comp_output *output);
	/* Start the just-painted frame on its way without waiting for it;
	 * the backend calls comp_output_finish_frame once it is out. */
	void (*submit)(struct comp_output *output, const pixman_region32_t *damage);
	void (*destroy)(struct comp_output *output);
	/* Optional: a PNG of what the display shows, read from the scanned
	 * out buffer; without it, the render target is read. */
	int (*encode_png)(struct comp_output *output, uint8_t **data, size_t *len);
	/* What the time a backend finishes a frame with is: false, when the
	 * frame's pixels exist, and the refresh grid standing in for a vblank
	 * presents it on its next tick (headless); true, when a display showed
	 * it (a page flip's event), whose vblanks then pace the output (drm;
	 * RENDER_REPAINT_DISPLAY_FLIPS). */
	bool display_clock;
};

struct comp_output {
	struct comp_server *server;
	struct wl_list link;              /* comp_server.outputs */
	int index;                        /* place in the layout: its bit in a surface's outputs */
	int x, y;                         /* position in the layout */
	struct render_scene_view *view;   /* its part of the server's scene */
	struct wl_global *global;         /* NULL while unplugged */
	struct wl_global *removed_global; /* removed, destroyed once clients had time to see it */
	/* false while the display is gone (unplugged) or not ours (session
	 * paused): no repaints, no frames (comp_output_disable). */
	bool enabled;
	int width, height;
	int refresh_mhz;
	char name[32];                    /* wl_output.name: "HEADLESS-1", a connector's */

	const struct comp_backend *backend;
	void *backend_data;
	struct render_target *target;
	/* When to repaint, and the frame on its way (render/repaint-loop.c):
	 * painted, then submitted until the backend finishes it, then held
	 * until its tick. */
	struct render_repaint_loop loop;
	struct wl_event_source *repaint_timer; /* the loop's timer */
	struct wl_event_source *idle_repaint;  /* a repaint due now, before the loop sleeps */

	struct wl_signal frame_presented; /* data: struct comp_frame_info * */

	struct wl_list resources;         /* wl_output resources (wl_resource links) */
	/* The frame on its way: its damage, and its presentation flags
	 * (comp_output_finish_frame). On its tick, what it shows clients, and
	 * the frame callbacks and feedback it owes. */
	pixman_region32_t flight_damage;
	uint32_t flight_flags;
	uint64_t repaints;                /* frames started (painted or not) */
	struct comp_frame_info presenting_info;
	struct wl_list presenting_feedbacks; /* wl_resource links */
	struct wl_list presenting_callbacks; /* wl_resource links */
};

/* The output at this index of the layout (the backend's numbering), placed
 * right of the outputs already in server->outputs. */
struct comp_output *comp_output_create(struct comp_server *server,
                                       const struct comp_backend *backend, int index);
void comp_output_destroy(struct comp_output *output);
/* Ask for a repaint on the next tick of the frame clock (or at once when
 * unthrottled). Cheap and idempotent: call it whenever something changed or
 * frame callbacks are waiting. */
void comp_output_schedule_repaint(struct comp_output *output);
/* Sends wl_surface.enter (or leave) for the output to the surface's client. */
void comp_output_surface_enter(struct comp_output *output, struct comp_surface *surface,
                               bool enter);
/* The submitted frame is out, every backend's one way to say so (weston's
 * weston_output_finish_frame): t_ns as the backend's display_clock says
 * (when its pixels exist, or when a display showed it), msc the display's
 * vblank counter at that flip (NULL if it counts none), flags the
 * wp_presentation kinds that are true of t_ns. */
void comp_output_finish_frame(struct comp_output *output, uint64_t t_ns, const uint64_t *msc,
                              uint32_t flags);
/* The display is gone (unplugged: the wl_output global is removed too)
 * or not ours for now (a paused session): repaints stop, the frame in
 * flight is dropped, every presentation feedback waiting is discarded,
 * and frame callbacks wait for the first frame after comp_output_enable.
 * Clients stay connected. The backend has no frame in flight for it. */
void comp_output_disable(struct comp_output *output, bool unplugged);
/* The display is back, at this refresh (same size: a mode of another
 * size is the backend's to refuse): the grid restarts, the global is
 * back, and the whole scene is repainted. */
void comp_output_enable(struct comp_output *output, int refresh_mhz);
/* PNG of the last presented frame, in memory (malloc'd) or into a file. */
int comp_output_encode_png(struct comp_output *output, uint8_t **data, size_t *len);
int comp_output_write_png(struct comp_output *output, const char *path);

/* output-layout.c: the outputs side by side, left to right, in one
 * coordinate space (the layout's, which surfaces, windows and the pointer
 * use), and which outputs each surface is on. */
struct comp_output *comp_layout_first_output(struct comp_server *server);
/* By name (wl_output.name) or by index in the layout as a decimal
 * number; NULL if there is none. */
struct comp_output *comp_layout_find_output(struct comp_server *server, const char *name);
/* The output that shows point x,y, or NULL. */
struct comp_output *comp_layout_output_at(struct comp_server *server, double x, double y);
/* The output a box (layout coordinates) is most on; the first output when
 * it is on none. */
struct comp_output *comp_layout_output_for_box(struct comp_server *server, int x, int y,
                                               int width, int height);
/* The box that holds every output. */
void comp_layout_bounds(struct comp_server *server, int *x, int *y, int *width, int *height);
/* Clamps a point (the pointer) to the outputs: into the nearest one. */
void comp_layout_clamp(struct comp_server *server, double *x, double *y);
/* comp_output_schedule_repaint for every output that has damage. */
void comp_layout_repaint_damaged(struct comp_server *server);
/* The surface moved, resized, was mapped or unmapped, or an output came
 * or went: sends wl_surface.enter/leave for the outputs it now overlaps
 * and picks its frame output (comp_surface.frame_output). */
void comp_layout_update_surface(struct comp_surface *surface);
/* The same for every surface (an output was enabled or disabled). */
void comp_layout_update_surfaces(struct comp_server *server);

extern const struct comp_backend comp_backend_headless;
#ifdef DUET_HAVE_DRM
extern const struct comp_backend comp_backend_drm;
#endif

/* ------------------------------------------------------------- surface */

struct comp_viewport_state {
	bool has_src;
	double src_x, src_y, src_w, src_h; /* surface-local, before scale */
	int dst_w, dst_h;                  /* -1,-1 = unset */
};

struct comp_surface_state {
	bool buffer_attached;          /* wl_surface.attach seen (buffer may be NULL) */
	struct wl_resource *buffer;    /* NULL after attach(NULL) */
	struct wl_listener buffer_destroy;
	int32_t dx, dy;
	pixman_region32_t damage;        /* surface coordinates */
	pixman_region32_t buffer_damage; /* buffer coordinates */
	pixman_region32_t opaque;
	pixman_region32_t input;
	int32_t scale;
	int32_t transform;
	struct comp_viewport_state viewport;
	struct wl_list frame_callbacks;  /* wl_resource links */
	struct wl_list feedbacks;        /* presentation feedback, see presentation.c */
};

/* A role (xdg_toplevel, xdg_popup, subsurface) gets called at each commit of
 * its surface, after the new state has been applied. */
struct comp_surface_role {
	const char *name;
	void (*commit)(struct comp_surface *surface);
	/* wl_surface.attach of a buffer (not NULL), where the role has a rule
	 * for it; NULL: none. */
	void (*attach)(struct comp_surface *surface);
	/* wl_surface.commit, before the pending state is applied: true when the
	 * role holds it back (a synchronized subsurface caches it); NULL: never. */
	bool (*hold_commit)(struct comp_surface *surface);
	/* The window the surface is the root of (its popups' windows too), or
	 * NULL; NULL: the role has no windows. */
	struct comp_window *(*window)(struct comp_surface *surface);
};

/* What core's surfaces tell the layers above them, which core never calls
 * by name (docs/architecture.md, compositor/): the outputs' layout and the
 * seat. server.c fills it in. */
struct comp_surface_listener {
	/* The surface moved, resized, was mapped or unmapped: the outputs it
	 * is on, and its frame output (comp_layout_update_surface). */
	void (*surface_placed)(struct comp_surface *surface);
	/* The scene changed: outputs that have damage repaint. */
	void (*scene_damaged)(struct comp_server *server);
	/* What is under the pointer may have changed (comp_seat_pointer_refresh). */
	void (*pointer_scene_changed)(struct comp_server *server);
	/* Frame callbacks or feedback wait for this output's next frame (the
	 * surface's frame output, maybe NULL). */
	void (*frames_wanted)(struct comp_output *output);
};

struct comp_surface {
	struct comp_server *server;
	struct wl_resource *resource;
	struct wl_list link;            /* comp_server.surfaces */

	struct comp_surface_state pending, current;

	/* The texture is sized for the last committed buffer at commit, but
	 * its pixels are copied only when a repaint shows them (latching,
	 * comp_surface_latch): latch_buffer is the committed buffer still to
	 * copy and latch_damage (buffer coordinates) what changed in it since
	 * the last copy. A buffer replaced before a repaint showed it is
	 * released uncopied (mailbox). */
	struct render_texture *texture;
	/* Set when texture is a dmabuf's (linux-dmabuf.c), borrowed from this
	 * image (the surface holds a reference) instead of owned. shown is the
	 * wl_buffer the repaints sample in place, kept (no release) while
	 * frames read it: a dmabuf until a repaint latches a newer buffer, or
	 * (pixman engine) the wl_shm buffer the texture wraps until a newer
	 * one is committed. */
	struct comp_dmabuf_image *image;
	struct wl_resource *shown;
	struct wl_listener shown_destroy;
	uint64_t texture_charge;        /* its bytes, counted in the budgets */
	int buffer_width, buffer_height;
	struct wl_resource *latch_buffer;
	struct wl_listener latch_buffer_destroy;
	pixman_region32_t latch_damage;
	int width, height;              /* surface size after scale and viewport */
	struct render_node *node;       /* on the server's scene while mapped */
	bool mapped;
	bool damage_bounded;            /* its damage was taken as a bounding box (logged) */
	/* The outputs it overlaps (bits of comp_output.index), told to the
	 * client with wl_surface.enter/leave; and the one output whose frames
	 * answer its frame callbacks and presentation feedback, the one it is
	 * most on (output-layout.c). NULL while unmapped. */
	uint32_t outputs;
	struct comp_output *frame_output;

	const struct comp_surface_role *role;
	void *role_data;
	/* xdg_toplevel or xdg_popup (enum comp_xdg_role, xdg-shell.c): the
	 * xdg_surface role is shared, but the two roles under it are
	 * distinct and, once given, the surface's for life. */
	int xdg_role;

	struct wl_resource *viewport;   /* wp_viewport, at most one */
	struct wl_list subsurfaces;     /* comp_subsurface.parent_link, bottom to top */

	struct wl_signal destroy_signal; /* data: struct comp_surface * */
	struct wl_signal commit_signal;  /* data: struct comp_surface * */

	int x, y;                       /* layout position of the surface origin */
	/* subsurfaces also holds subsurface_self_link, this surface's own place
	 * among its children (they may be stacked below it); subsurfaces_pending
	 * is the order asked by place_above/below, applied on this surface's
	 * commit. Walk them with comp_surface_tree_for_each. */
	struct wl_list subsurfaces_pending;
	struct wl_list subsurface_self_link, subsurface_self_pending_link;
};

void comp_compositor_create(struct comp_server *server);   /* wl_compositor */
void comp_subcompositor_create(struct comp_server *server); /* wl_subcompositor */
static inline struct comp_surface *comp_surface_from_resource(struct wl_resource *resource)
{
	return wl_resource_get_user_data(resource);
}
/* Gives a surface a role; posts the right protocol error on error_resource
 * and returns false if it already has another one. */
bool comp_surface_set_role(struct comp_surface *surface,
                           const struct comp_surface_role *role, void *role_data,
                           struct wl_resource *error_resource, uint32_t error_code);
/* Show or hide the surface (and its subsurfaces) at layout position x,y. */
void comp_surface_map(struct comp_surface *surface, int x, int y);
void comp_surface_unmap(struct comp_surface *surface);
void comp_surface_set_position(struct comp_surface *surface, int x, int y);
/* The topmost mapped surface whose input region contains layout point x,y;
 * sx, sy get surface-local coordinates. */
struct comp_surface *comp_surface_at(struct comp_server *server, double x, double y,
                                     double *sx, double *sy);

/* Double-buffered state helpers (surface.c), shared with subsurface.c's
 * cache of synchronized commits. */
void comp_surface_state_init(struct comp_surface_state *state);
void comp_surface_state_finish(struct comp_surface_state *state);
/* A subsurface's cache: it holds its buffer (no release while it waits). */
void comp_surface_cache_init(struct comp_surface_state *cache);
void comp_surface_cache_finish(struct comp_surface_state *cache);
/* Moves what src accumulated since the last commit into dst (a newer buffer
 * replaces an older one, damage and callbacks add up) and resets src's
 * per-commit parts; src keeps its sticky values (scale, regions, viewport). */
void comp_surface_state_merge(struct comp_surface_state *dst, struct comp_surface_state *src);
/* Makes state the surface's current state: takes the buffer for the next
 * repaint (sizing the texture), updates the scene node, runs the role's
 * commit and the children's pending state. */
void comp_surface_apply_state(struct comp_surface *surface, struct comp_surface_state *state);
/* The repaint shows the surface: copies the damaged part of its latched
 * buffer into the texture and releases the buffer, or (a dmabuf) makes
 * the texture sample it and releases the one it sampled before. (A wl_shm
 * buffer the pixman engine samples in place is taken at commit.) With
 * queue_release the release waits in the client's queue for the next
 * event that is sent (the frame's callbacks), instead of waking the
 * client on its own. */
void comp_surface_latch(struct comp_surface *surface, bool queue_release);

/* subsurface.c */
/* Nesting limits (docs/security.md): a root surface's subsurfaces go at
 * most this many levels deep, and popups on popups at most this many;
 * past them the client gets a protocol error. They bound every walk of a
 * tree, and with the clamped offsets keep output positions in int range. */
#define COMP_MAX_SUBSURFACE_DEPTH 32
#define COMP_MAX_POPUP_DEPTH 16
typedef void (*comp_surface_iter_t)(struct comp_surface *surface, void *data);
/* Calls fn for surface and its subsurfaces, recursively, bottom to top. */
void comp_surface_tree_for_each(struct comp_surface *surface, comp_surface_iter_t fn,
                                void *data);
bool comp_subsurface_is_synchronized(struct comp_surface *surface);
/* What a surface's commit, map and move do to its children: subsurface.c's
 * table (comp_server.subsurface_parent, set by comp_subcompositor_create),
 * which surface.c calls, as subsurface.c sits above it. */
struct comp_subsurface_parent {
	/* The parent's state was applied: apply children's positions,
	 * stacking and cached commits. */
	void (*parent_committed)(struct comp_surface *parent);
	/* The parent moved in the layout: its children follow. */
	void (*parent_moved)(struct comp_surface *parent);
	/* Map (at the parent's position + offset) or unmap the children that
	 * have content. */
	void (*parent_mapped)(struct comp_surface *parent, bool mapped);
};
/* The surface at the root of a subsurface tree (surface itself if none). */
struct comp_surface *comp_subsurface_get_root(struct comp_surface *surface);
/* The window of the surface's tree (its root's role's), or NULL. */
struct comp_window *comp_window_from_surface(struct comp_surface *surface);

/* stack.c: every visible surface, bottom to top, walked through the layers
 * the layers above core put on it (server.c adds them in order). */
struct comp_stack_layer {
	/* Calls fn for each surface of the layer, bottom to top. */
	void (*for_each_surface)(struct comp_server *server, comp_surface_iter_t fn, void *data);
};
void comp_stack_add_layer(struct comp_server *server, const struct comp_stack_layer *layer);
/* Walks every visible surface in stacking order, bottom to top: windows,
 * their subsurfaces and popups, then X menus and tooltips. */
void comp_stack_for_each(struct comp_server *server, comp_surface_iter_t fn, void *data);
/* Brings the scene's node order in line with the stack (after a raise, a map
 * or a subsurface restack); damages only what moved. */
void comp_stack_update(struct comp_server *server);

/* -------------------------------------------------------------- window */

/* What the policy's requests do to a window of each kind: an xdg_toplevel
 * (xdg-toplevel.c) or a managed X window of Xwayland (xwayland-window.c).
 * The comp_window_* functions below call them. */
struct comp_window_impl {
	void (*configure)(struct comp_window *window, int width, int height);
	void (*send_state)(struct comp_window *window);
	void (*send_close)(struct comp_window *window);
	/* window->x, y changed: its surfaces (and the client) follow. */
	void (*moved)(struct comp_window *window);
	void (*move_on_ack)(struct comp_window *window, int x, int y);
	void (*set_hidden)(struct comp_window *window, bool hidden);
	/* Optional: it went on top of the stack. */
	void (*raised)(struct comp_window *window);
	/* Optional: its popups' surface trees, bottom to top. */
	void (*for_each_popup_surface)(struct comp_window *window, comp_surface_iter_t fn,
	                               void *data);
};

struct comp_window {
	struct comp_server *server;
	const struct comp_window_impl *impl;
	struct wl_list link;            /* comp_server.windows, topmost first */
	uint32_t id;
	struct comp_surface *surface;
	struct wl_resource *xdg_surface;  /* an xdg_toplevel's; NULL for an X window */
	struct wl_resource *xdg_toplevel;
	char *title, *app_id;

	int x, y;                       /* window geometry origin in the layout */
	struct { int x, y, width, height; } geometry; /* xdg_surface.set_window_geometry */
	int min_width, min_height, max_width, max_height; /* 0 = unbounded */
	bool mapped, maximized, fullscreen, minimized, activated;
	bool resizing; /* an interactive resize lasts (seat-move.c) */
	int saved_x, saved_y, saved_width, saved_height; /* before maximize/fullscreen */
	/* xdg_toplevel.set_parent or WM_TRANSIENT_FOR: the parent's id (0:
	 * none), not a pointer, as the parent may go first (policy rule 11). */
	uint32_t parent_id;
	/* The client's process where the window names it (an X window's
	 * _NET_WM_PID: Xwayland's connection is the compositor's own
	 * socketpair); 0: the surface's client's; -1: not known. */
	int pid;
	/* Buffer size in the last painted frame that showed the window, for
	 * the "composited" trace event (output.c); composited: shown since
	 * it was last mapped. */
	bool composited;
	int composited_width, composited_height;
};

void comp_xdg_shell_create(struct comp_server *server);
/* The xdg_popup grab as the seat asks it (comp_server.popup_grab): seat/
 * is below the shell and never calls it by name. */
struct comp_popup_grab {
	/* The client whose popups hold the grab, or NULL: while there is one,
	 * only its surfaces get pointer and touch events. */
	struct wl_client *(*grabbing_client)(struct comp_server *server);
	/* A press or touch down goes to surface (NULL: to none): outside the
	 * grabbing client's surfaces, that dismisses its popups. */
	void (*input_to)(struct comp_server *server, struct comp_surface *surface);
};
/* Input goes to surface (NULL: to none): a button press there, or the
 * keyboard focus given to it. Outside the grabbing client's surfaces, that
 * dismisses its grabbing popups. */
void comp_xdg_popup_grab_input(struct comp_server *server, struct comp_surface *surface);
/* Where the keyboard focus goes when the policy gives it to surface: the
 * topmost mapped grabbing popup while a grab lasts (xdg_popup.grab: it
 * always has the keyboard focus), else surface. */
struct comp_surface *comp_xdg_popup_keyboard_target(struct comp_server *server,
                                                    struct comp_surface *surface);
/* window.c: what follows calls the window's impl. */
/* Sends a configure with this size and the window's current states
 * (0x0 lets the client choose). */
void comp_window_configure(struct comp_window *window, int width, int height);
void comp_window_send_close(struct comp_window *window);
/* Sends a configure with the last configured size and the current states
 * (after focus, maximize or fullscreen changes). */
void comp_window_send_state(struct comp_window *window);
/* Moves the window's geometry origin to layout position x,y (its popups follow). */
void comp_window_set_position(struct comp_window *window, int x, int y);
/* The same, but only once the client has acked the configure just sent
 * and committed (maximize, fullscreen and their undoing: the window moves
 * with its new content, xdg_toplevel's text). */
void comp_window_move_on_ack(struct comp_window *window, int x, int y);
/* Clamps a size to the window's min/max hints (policy rule 7, and an
 * interactive resize's every step). */
void comp_window_constrain_size(const struct comp_window *window, int *width, int *height);
/* Puts the window on top of the stack. */
void comp_window_raise(struct comp_window *window);
/* Hides (minimize) or shows the window's surfaces without unmapping it. */
void comp_window_set_hidden(struct comp_window *window, bool hidden);
/* The stack's layer of mapped windows with their popups (xdg-shell.c). */
extern const struct comp_stack_layer comp_shell_windows_layer;
/* Xwayland's override-redirect windows shown (menus, tooltips), above
 * every window (xwayland.c). */
extern const struct comp_stack_layer comp_xwayland_unmanaged_layer;

/* -------------------------------------------------------------- policy */

/* All window-management decisions, in policy.c, so they can be read side by
 * side with xwm-model/policy.c and kept equal. */
void comp_policy_window_mapped(struct comp_window *window);   /* place, raise, focus */
/* Rule 2 for a window that maps late: placed and raised, then above raised
 * again over it, the focus left where it is. */
void comp_policy_window_mapped_below(struct comp_window *window, struct comp_window *above);
/* The output the window is on (rule 0), or, not mapped yet, goes on. */
struct comp_output *comp_policy_window_output(struct comp_window *window);
/* The first configure of a new toplevel (size and states). */
void comp_policy_window_initial_configure(struct comp_window *window);
void comp_policy_window_unmapped(struct comp_window *window); /* refocus */
void comp_policy_activate(struct comp_window *window);        /* raise + focus */
/* window->surface is a new one (an X window shown again after iconic:
 * Xwayland made it a new wl_surface): the keyboard focus follows. */
void comp_policy_window_surface_changed(struct comp_window *window);
void comp_policy_close(struct comp_window *window);
void comp_policy_resize(struct comp_window *window, int width, int height);
void comp_policy_request_maximize(struct comp_window *window, bool maximize);
void comp_policy_request_fullscreen(struct comp_window *window, bool fullscreen);
void comp_policy_request_minimize(struct comp_window *window);

/* What the protocol objects (seat/, shell/) tell the policy: they sit below
 * it and never call it by name, only through this table, which the server
 * holds (comp_server.policy); the policy calls down into them (as
 * libweston-desktop's shell tells weston's shell through its API table).
 * xwayland/ and testing/ sit above the policy and call comp_policy_* by name. */
struct comp_policy_listener {
	/* A toplevel's first commit: send its first configure (rule 9). */
	void (*window_initial_configure)(struct comp_window *window);
	/* It mapped: place, raise, focus (rules 0-2). */
	void (*window_mapped)(struct comp_window *window);
	/* It unmapped: end its move or resize, refocus (rule 3). */
	void (*window_unmapped)(struct comp_window *window);
	/* The output the window is on, or, not mapped yet, goes on (rule 0). */
	struct comp_output *(*window_output)(struct comp_window *window);
	/* A button press or touch down on it: raise + focus (rule 4). */
	void (*activate)(struct comp_window *window);
	/* The client's requests (rules 5 and 6). */
	void (*request_maximize)(struct comp_window *window, bool maximize);
	void (*request_fullscreen)(struct comp_window *window, bool fullscreen);
	void (*request_minimize)(struct comp_window *window);
	/* xdg_toplevel.move / .resize: as comp_seat_start_move. */
	bool (*request_move)(struct comp_server *server, struct comp_window *window,
	                     struct wl_client *client, uint32_t serial, bool resize,
	                     uint32_t edges);
};
/* policy.c's table; comp_server_init installs it. */
extern const struct comp_policy_listener comp_policy_listener;

/* ---------------------------------------------------------------- seat */

void comp_seat_create(struct comp_server *server);
void comp_seat_destroy(struct comp_server *server);
/* Moves keyboard focus (enter/leave, modifiers) to surface, or clears it. */
void comp_seat_set_keyboard_focus(struct comp_server *server, struct comp_surface *surface);
/* Input from the test protocol and, on --backend drm, from libinput
 * (input-libinput.c). time_ms as wl_pointer uses; key and button are
 * evdev codes. */
void comp_seat_pointer_motion(struct comp_server *server, double x, double y, uint32_t time_ms);
void comp_seat_pointer_button(struct comp_server *server, uint32_t button, bool pressed,
                              uint32_t time_ms);
void comp_seat_key(struct comp_server *server, uint32_t key, bool pressed, uint32_t time_ms);
/* Where the pointer is, in layout coordinates (relative motion adds to it). */
void comp_seat_pointer_position(struct comp_server *server, double *x, double *y);
/* One scroll event: for each axis (wl_pointer.axis: 0 vertical, 1
 * horizontal) that has[] marks, value in surface pixels (positive: down,
 * right), value120 the wheel's clicks in 1/120ths (0 for finger and
 * continuous sources). A finger or continuous value of 0 ends a scroll
 * (axis_stop). source: wl_pointer.axis_source. */
struct comp_axis_event {
	uint32_t source;
	bool has[2];
	double value[2];
	int32_t value120[2];
};
void comp_seat_pointer_axis(struct comp_server *server, const struct comp_axis_event *event,
                            uint32_t time_ms);

/* Touch (seat-touch.c). A touchscreen plugged in (libinput's, or the test
 * protocol's, which plugs itself in at its first touch request) gives the
 * seat the touch capability while any is there; the last one unplugged
 * cancels the touch points still down. id names a touch point while it is
 * down (libinput's seat slot, the test's id); x, y are layout
 * coordinates. A point goes to the surface under it at down and stays
 * with it until up. frame ends a group of events that belong together
 * (one sample of the device); cancel ends every point of the client that
 * point id went to (wl_touch.cancel). */
void comp_seat_touch_device_add(struct comp_server *server);
void comp_seat_touch_device_remove(struct comp_server *server);
void comp_seat_touch_down(struct comp_server *server, int32_t id, double x, double y,
                          uint32_t time_ms);
void comp_seat_touch_motion(struct comp_server *server, int32_t id, double x, double y,
                            uint32_t time_ms);
void comp_seat_touch_up(struct comp_server *server, int32_t id, uint32_t time_ms);
void comp_seat_touch_frame(struct comp_server *server);
void comp_seat_touch_cancel(struct comp_server *server, int32_t id);

/* xdg_toplevel.move and .resize (seat-move.c): starts the compositor's
 * pointer grab when serial is client's latest button press and a button
 * is still held; false (nothing started) otherwise. edges: resize only. */
bool comp_seat_start_move(struct comp_server *server, struct comp_window *window,
                          struct wl_client *client, uint32_t serial, bool resize,
                          uint32_t edges);
/* The same for a client with no serial to give: Xwayland's X window
 * manager, for an X client's _NET_WM_MOVERESIZE. The latest button press
 * stands for it, if it went to client and is still held. */
bool comp_seat_start_move_pressed(struct comp_server *server, struct comp_window *window,
                                  struct wl_client *client, bool resize, uint32_t edges);
/* Ends a move or resize of window (it is going away). */
void comp_seat_window_unmapped(struct comp_server *server, struct comp_window *window);

/* The client whose surface has keyboard focus, or NULL. */
struct wl_client *comp_seat_get_keyboard_focus_client(struct comp_server *server);
/* Whether client has the keyboard focus and serial is one of an event it
 * got while it had it (wl_data_device.set_selection's rule). */
bool comp_seat_focus_serial_ok(struct comp_server *server, struct wl_client *client,
                               uint32_t serial);
/* Whether serial is that of the last button press, key press or touch
 * down and that press went to client (xdg_popup.grab's rule). */
bool comp_seat_grab_serial_ok(struct comp_server *server, struct wl_client *client,
                              uint32_t serial);
/* Re-picks the pointer focus soon (a popup grab began or ended: which
 * surfaces may have it changed, not the pointer). */
void comp_seat_pointer_refresh(struct comp_server *server);

/* The selection follows the keyboard focus: the manager listens to
 * comp_server.keyboard_client_changed. */
void comp_data_device_manager_create(struct comp_server *server);

/* A data source of the compositor's own (the X window manager's bridge,
 * xwayland-selection.c), offered to Wayland clients like a client's. */
struct comp_data_source;
struct comp_data_source_ops {
	/* A client receives mime_type: write it to fd (yours to close). */
	void (*send)(void *data, const char *mime_type, int fd);
	/* No longer the selection; the owner destroys it (may do so here). */
	void (*cancelled)(void *data);
};
struct comp_data_source *comp_data_source_create(const struct comp_data_source_ops *ops,
                                                 void *data);
int comp_data_source_offer(struct comp_data_source *source, const char *mime_type);
/* Clears the selection first if it is source (no cancelled then). */
void comp_data_source_destroy(struct comp_server *server, struct comp_data_source *source);
bool comp_data_source_has_mime(struct comp_data_source *source, const char *mime_type);
/* Asks source (a client's or the compositor's) for mime_type; takes fd. */
void comp_data_source_send(struct comp_data_source *source, const char *mime_type, int fd);
/* Sets the selection with no focus rule (NULL: none); the old is cancelled. */
void comp_data_device_set_selection(struct comp_server *server, struct comp_data_source *source);
struct comp_data_source *comp_data_device_get_selection(struct comp_server *server);
/* Notified (data NULL) after every change of the selection. */
void comp_data_device_add_selection_listener(struct comp_server *server,
                                             struct wl_listener *listener);

/* --------------------------------------------- presentation, viewporter */

void comp_presentation_create(struct comp_server *server);
/* Sends presented (with sync_output) for every feedback in the list, the
 * content they belong to having been shown in this frame, and empties it. */
void comp_presentation_send_presented(struct comp_output *output, struct wl_list *feedbacks,
                                      const struct comp_frame_info *frame);
/* Sends discarded for every feedback in the list and empties it. */
void comp_presentation_discard(struct wl_list *feedbacks);

void comp_viewporter_create(struct comp_server *server);
/* zxdg_output_manager_v1: the output's logical position, size and name (xdg-output.c). */
void comp_xdg_output_create(struct comp_server *server);
/* wp_single_pixel_buffer_manager_v1 (single-pixel-buffer.c); _get tells
 * whether a wl_buffer is one of its buffers and gives its pixel. */
void comp_single_pixel_buffer_create(struct comp_server *server);
bool comp_single_pixel_buffer_get(struct wl_resource *buffer, uint32_t *argb);

/* zwp_linux_dmabuf_v1 (linux-dmabuf.c): offered where the renderer can
 * import dmabufs. Its wl_buffers carry an image (an imported texture,
 * refcounted: the buffer and every surface showing it hold a reference,
 * so a surface keeps its content after the client destroys the buffer). */
struct comp_dmabuf_image;
void comp_linux_dmabuf_create(struct comp_server *server);
void comp_linux_dmabuf_finish(struct comp_server *server); /* after its clients are gone */
/* The image of one of its wl_buffers, or NULL for any other buffer. */
struct comp_dmabuf_image *comp_dmabuf_buffer_get(struct wl_resource *buffer);
void comp_dmabuf_image_ref(struct comp_dmabuf_image *image);
void comp_dmabuf_image_unref(struct comp_dmabuf_image *image); /* NULL: nothing */
struct render_texture *comp_dmabuf_image_texture(const struct comp_dmabuf_image *image,
                                                 int *width, int *height,
                                                 enum render_format *format);
/* The node transform (render_quad.transform) that shows the image of a
 * surface with this buffer transform: the same, composed with a vertical
 * flip for a y-inverted buffer. image NULL: transform. */
int comp_dmabuf_image_transform(const struct comp_dmabuf_image *image, int transform);

/* ------------------------------------------------------- test protocol */

void comp_test_protocol_create(struct comp_server *server);
/* test-access.c: listens on $XDG_RUNTIME_DIR/<socket_name>-test and hides
 * duet_test from every client that did not connect through it; returns
 * that socket's name, or NULL on failure. */
const char *comp_test_access_init(struct comp_server *server);
bool comp_test_access_allowed(struct wl_client *client);
/* test-screenshot.c: writes a PNG of the output's last frame to fd (taken)
 * without blocking, then sends duet_test.screenshot_done on resource, or
 * posts bad_fd; jobs is the resource's list of writes in flight. */
void comp_test_screenshot_start(struct wl_resource *resource, struct wl_list *jobs,
                                struct comp_output *output, int fd);
void comp_test_screenshot_cancel_all(struct wl_list *jobs);

#endif
