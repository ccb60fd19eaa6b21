/* duet's rendering backend, shared by duet-compositor and duet-xwm.
 *
 * It knows nothing of Wayland or X: it takes pixels (or dmabufs), places
 * them as textured quads on an output target, and repaints only what
 * changed. An output on a window system's window is made from an EGL
 * platform and the caller's native display and window, passed as EGL takes
 * them (weston's gl-renderer is given its outputs so), so no X, Wayland or
 * GBM type or header is used here. Both display stacks draw through exactly
 * this code, so any difference the bench measures comes from the
 * architecture, not from the drawing.
 *
 * GLES2 with GLSL ES 1.00 only (Mali-400 class hardware has nothing newer).
 * All coordinates are integers in output pixels, origin top-left.
 * Pixels in memory are ARGB8888/XRGB8888 as Wayland and X use them: a native
 * endian uint32_t 0xAARRGGBB, i.e. bytes B,G,R,A on little-endian machines.
 * ARGB8888 is premultiplied alpha (as wl_shm and X Composite define it).
 */
#ifndef DUET_RENDER_H
#define DUET_RENDER_H

#include <pixman.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ EGL */

struct render_egl;

/* The EGL platforms an output can be on. */
enum render_egl_platform {
	RENDER_EGL_SURFACELESS, /* Mesa's: headless outputs, tests */
	RENDER_EGL_X11,         /* duet-xwm's overlay window */
	RENDER_EGL_GBM,         /* duet-compositor's KMS outputs */
};

/* EGL on platform with a current GLES2 context. native_display is what
 * eglGetPlatformDisplay takes for the platform (X11: an Xlib Display *,
 * whose connection the caller may share; GBM: the caller's
 * struct gbm_device *, which must outlive the display; surfaceless: NULL).
 * native_visual is the EGL_NATIVE_VISUAL_ID the window targets will need
 * (X11: the window's visual; GBM: the scanout fourcc, DRM_FORMAT_XRGB8888...;
 * 0 = any; unused surfaceless): the context's config is chosen by it. Offscreen
 * targets work on every platform. NULL (with a log line) on failure. */
struct render_egl *render_egl_create(enum render_egl_platform platform, void *native_display,
                                     uint32_t native_visual);
/* render_egl_create(RENDER_EGL_SURFACELESS, NULL, 0). */
struct render_egl *render_egl_create_surfaceless(void);
void render_egl_destroy(struct render_egl *egl);
/* "vendor / renderer / version" of the current GL context, for logs and the
 * bench's record of the rendering path. */
const char *render_egl_describe(const struct render_egl *egl);
bool render_egl_has_extension(const struct render_egl *egl, const char *name);

/* -------------------------------------------------------------- targets */

/* Where a frame goes: an offscreen framebuffer (headless, tests), memory
 * (the pixman engine) or a platform's window surface, behind the same
 * calls: each kind answers every render_target_* call in its own way. */
struct render_target;

struct render_target *render_target_create_offscreen(struct render_egl *egl,
                                                     int width, int height);
/* A target in ordinary memory, drawn by the pixman engine
 * (renderer_create_pixman); needs no EGL. Present and flush return at once
 * (the CPU drew the frame before render_end returned), frame_done is
 * always true; read-back and PNG work as on an offscreen target. */
struct render_target *render_target_create_memory(int width, int height);
/* The same in the caller's memory: height rows of stride_bytes (a
 * multiple of 4, >= width * 4) at data (4-byte aligned), e.g. a segment
 * shared with a display server, so a frame is there without a read-back.
 * data must outlive the target, which never frees it. NULL (logged) on bad
 * arguments. Drawing overwrites data behind the caller's back only between
 * render_begin and render_end. */
struct render_target *render_target_create_memory_on(void *data, int width, int height,
                                                     int stride_bytes);
/* A window surface of egl's platform: native_window is what
 * eglCreatePlatformWindowSurface takes there (X11: the address of the
 * window's XID as an Xlib Window, read during the call; GBM: the
 * caller's struct gbm_surface *, which must outlive the target, created
 * with egl's native visual as its format). Frames repaint only their
 * damage, by one of the paths described in target-window.c
 * ("preserved", "buffer-age", "fbo-copy"); present swaps, which on GBM
 * makes the frame the surface's front buffer for the caller to lock and
 * scan out. */
struct render_target *render_target_create_window(struct render_egl *egl, void *native_window,
                                                  int width, int height);
void render_target_destroy(struct render_target *t);
int render_target_width(const struct render_target *t);
int render_target_height(const struct render_target *t);
/* How a frame gets into the target, for logs and the bench: a window's
 * repaint path (above), "fbo" (offscreen), "memory". */
const char *render_target_repaint_path(const struct render_target *t);

/* Makes the frame visible: a window surface swaps (eglSwapBuffers with
 * the damage where EGL takes it), an offscreen one waits for glFinish so
 * that the timestamp taken after it is the time the pixels exist, memory
 * has nothing to do. damage is in output coordinates, may be NULL. */
int render_target_present(struct render_target *t, const pixman_region32_t *damage);

/* A GL target's frame without the wait of render_target_present:
 * flush submits the frame's GL work and fences it (EGL_KHR_fence_sync;
 * without it, it waits with glFinish); frame_done then says, without
 * blocking, whether the frame's pixels exist, so a caller can take its
 * presentation time after that and go on with other work meanwhile. A
 * driver may still rasterise inside the flush itself (llvmpipe does:
 * its flush waits for its rasteriser threads). */
int render_target_flush(struct render_target *t);
bool render_target_frame_done(struct render_target *t);

/* Reads back pixels of box (output coordinates, clipped to the target) as
 * ARGB8888 rows top-down into dst. dst holds the unclipped box: its first
 * row is box->y1 and its first column box->x1; pixels of the box outside
 * the target are left untouched. Returns 0 on success. */
int render_target_read_pixels(struct render_target *t, const pixman_box32_t *box,
                              uint32_t *dst, int dst_stride_bytes);

/* Writes the whole target as an 8-bit RGBA PNG (alpha forced opaque, as a
 * screen shows it). Returns 0 on success, -1 with errno-style log on error.
 * The path variant writes PATH.tmp.PID and renames it, so a reader never
 * sees a partial file. */
int render_target_write_png(struct render_target *t, const char *path);
int render_target_write_png_fd(struct render_target *t, int fd);

/* PNG writer for any ARGB8888 pixels (used by the above and by tests).
 * fd is written from its current offset and left open: the caller owns it
 * (it may be a pipe or a socket, e.g. for a screenshot request). */
int render_png_write_fd(int fd, const uint32_t *argb, int width, int height,
                        int stride_bytes);
/* The same PNG into memory: *data (malloc'ed, the caller frees it) of *len
 * bytes. For writers that must not block on the reader of an fd. */
int render_png_encode(const uint32_t *argb, int width, int height, int stride_bytes,
                      uint8_t **data, size_t *len);
int render_target_encode_png(struct render_target *t, uint8_t **data, size_t *len);
/* LEN bytes into PATH through PATH.tmp.PID and a rename, so a reader never
 * sees a partial file. 0 or -1 (logged). */
int render_write_file_atomic(const char *path, const uint8_t *data, size_t len);

/* ------------------------------------------------------------- textures */

enum render_format {
	RENDER_FORMAT_ARGB8888, /* premultiplied alpha */
	RENDER_FORMAT_XRGB8888, /* alpha ignored, drawn opaque */
};

struct renderer;
struct render_texture;

struct render_texture *render_texture_create(struct renderer *r,
                                             enum render_format format,
                                             int width, int height);
/* Scene nodes still showing tex lose it (and damage their box). */
void render_texture_destroy(struct render_texture *tex);
int render_texture_width(const struct render_texture *tex);
int render_texture_height(const struct render_texture *tex);
bool render_texture_has_alpha(const struct render_texture *tex);

/* Copies the damaged part of pixels (texture-local coordinates; NULL means
 * all of it) into the texture. pixels points at texel (0,0) with the given
 * stride. Uses GL_EXT_unpack_subimage when present, else uploads row by row
 * or whole damaged rows, never the full texture for a small damage.
 * Returns 0, or -1 if the GL upload failed. */
int render_texture_upload(struct render_texture *tex, const void *pixels,
                          int stride_bytes, const pixman_region32_t *damage);
/* Copies one rectangle, box in texture coordinates (clipped to the
 * texture), from pixels that hold only that rectangle: pixels points at the
 * box's top-left texel (x1, y1) and rows are stride_bytes apart, any stride
 * >= box width * 4. For callers that fetched just a damaged rectangle (X
 * GetImage) and should not lay it out window-sized first. GL reads pixels
 * in place when the rows are tight or GL_EXT_unpack_subimage is present;
 * otherwise one copy into the renderer's scratch. Counts uploaded_bytes
 * like render_texture_upload (which uploads through this path). Returns 0,
 * or -1 on a bad stride or a failed GL upload. */
int render_texture_upload_rect(struct render_texture *tex, const void *pixels,
                               int stride_bytes, const pixman_box32_t *box);

/* A texture over the caller's pixels, sampled in place when it is drawn:
 * nothing is copied or uploaded (as weston's pixman renderer composites
 * straight from a wl_shm buffer). The pixman engine only: on the GL engine
 * render_texture_wrap_supported is false and create_wrapped returns NULL,
 * and the caller uses render_texture_create and uploads instead. data is
 * texel (0,0), rows stride_bytes apart; it must be 4-byte aligned with a
 * stride that is a multiple of 4 and at least width * 4 (else NULL, no
 * log: the caller falls back to a copy). has_alpha: ARGB8888
 * (premultiplied), else XRGB8888. The caller keeps the memory mapped and
 * unchanged while the texture may be drawn, or brackets every read with
 * render_texture_set_access. Uploads into it fail: it is the caller's. */
bool render_texture_wrap_supported(const struct renderer *r);
struct render_texture *render_texture_create_wrapped(struct renderer *r, int width, int height,
                                                     void *data, int stride_bytes,
                                                     bool has_alpha);
bool render_texture_is_wrapped(const struct render_texture *tex);
/* Points a wrapped texture at other memory of its size and format (a newer
 * buffer), same rules; costs a pixman image header, no pixels. Nothing
 * is damaged: the caller damages what differs. 0, or -1 (unchanged). */
int render_texture_rewrap(struct render_texture *tex, void *data, int stride_bytes);
/* Copies what a wrapped texture shows into memory of its own and stops
 * reading the caller's, which may then go (a client destroyed its buffer).
 * The copy reads the caller's memory: bracket it as a draw would be. 0, or
 * -1 (out of memory: still wrapped). Counted in uploaded_bytes. */
int render_texture_unwrap(struct render_texture *tex);
/* Brackets every read of a wrapped texture's memory while drawing: begin
 * is called before an engine reads it (once per render_draw_texture that
 * draws something) and end after, so a caller can make reads of memory
 * another process may truncate safe (wl_shm_buffer_begin/end_access) for
 * exactly as long as they last. begin returns where the memory is now (a
 * mapping that moved, e.g. a resized wl_shm pool: the texture re-points to
 * it, same stride), or NULL to skip the draw (then end is not called).
 * begin NULL removes the hooks. */
void render_texture_set_access(struct render_texture *tex, void *(*begin)(void *data),
                               void (*end)(void *data), void *data);

/* A texture that is a dmabuf, imported as an EGLImage (texture-dmabuf.c):
 * zero-copy, sampled where the exporter draws it. One plane, linear RGB. */
struct render_dmabuf {
	int fd;                   /* borrowed: the caller closes it after import */
	int width, height;
	enum render_format format; /* XRGB8888 (DRM XR24) or ARGB8888 (AR24) */
	uint32_t offset, stride;
	uint64_t modifier;        /* DRM_FORMAT_MOD_INVALID (0x00ffffffffffffff): implicit */
};
/* Whether this renderer can import dmabufs; why: the missing extension. */
bool render_dmabuf_import_supported(struct renderer *r, const char **why);
/* The explicit layouts (DRM format modifiers) EGL imports format in,
 * external-only ones left out: up to max into modifiers, returns how
 * many; 0 when it takes only the driver's implicit layout (no modifiers
 * extension, or none listed), -1 when it cannot import the format at all
 * (or nothing). DRM_FORMAT_MOD_INVALID is never listed: the implicit
 * layout is always importable where the format is. */
int render_dmabuf_query_modifiers(struct renderer *r, enum render_format format,
                                  uint64_t *modifiers, int max);
/* NULL (logged) when the driver refuses the buffer. Upload calls on the
 * texture fail: it is the exporter's buffer. render_texture_destroy
 * releases the EGLImage. */
struct render_texture *render_texture_import_dmabuf(struct renderer *r,
                                                    const struct render_dmabuf *buf);
bool render_texture_is_imported(const struct render_texture *tex);

/* ------------------------------------------------------------- renderer */

struct render_stats {
	uint64_t frames;         /* render_scene_paint calls that drew */
	uint64_t skipped;        /* render_scene_paint calls with no damage */
	uint64_t quads;          /* textured or solid quads drawn */
	uint64_t copy_quads;     /* of those, textures at alpha 1 (no multiply) */
	uint64_t uploaded_bytes; /* bytes sent by render_texture_upload(_rect) */
	uint64_t painted_pixels; /* area of damage repainted */
};

/* Needs the EGL context current (render/ keeps it so). Textures and scenes
 * must be destroyed before their renderer. $DUET_RENDER_DISABLE may list GL
 * extensions (comma or space separated) to treat as absent, e.g.
 * GL_EXT_unpack_subimage, to run the fallback upload paths. */
struct renderer *renderer_create(struct render_egl *egl);
/* The pixman engine: the same drawing on the CPU with pixman, into memory
 * targets only (render_target_create_memory), no EGL. For machines without
 * a GPU, where GLES2 runs on llvmpipe at many times pixman's CPU cost per
 * composite (render/README.md). Textures hold a copy of what is uploaded,
 * or sample the caller's memory in place (render_texture_create_wrapped);
 * dmabufs cannot be imported. Scaled quads are filtered bilinearly (GL:
 * linear), which may round a little differently from GL. */
struct renderer *renderer_create_pixman(void);
/* "gl", "pixman" or a foreign engine's name, for logs and the bench's record. */
const char *renderer_engine_name(const struct renderer *r);
void renderer_destroy(struct renderer *r);
const struct render_stats *renderer_stats(const struct renderer *r);

/* Immediate-mode drawing. Everything between begin and end is clipped to
 * the clip region given to begin (scissored rectangle by rectangle; NULL =
 * the whole target). render_fill blends a premultiplied colour (no blending
 * when it is opaque). Each scissored rectangle drawn counts as one quad. */
void render_begin(struct renderer *r, struct render_target *t,
                  const pixman_region32_t *clip);
void render_fill(struct renderer *r, const pixman_box32_t *box, uint32_t argb);

struct render_quad {
	int x, y, width, height;      /* destination in output coordinates */
	float src_x, src_y, src_w, src_h; /* source rect in texels; src_w <= 0 = whole */
	float alpha;                  /* 0..1 multiplied into the texture */
	bool opaque;                  /* draw without blending (opaque content) */
	bool nearest;                 /* nearest filtering instead of linear */
	/* How the texture's content was drawn, undone when it is shown; the
	 * values and their meaning are wl_output_transform's (0 normal, 1-3
	 * rotated by 90/180/270 degrees counter-clockwise, 4-7 the same after a
	 * horizontal flip). src_* are in the transformed texture's texels. */
	int transform;
};
void render_draw_texture(struct renderer *r, struct render_texture *tex,
                         const struct render_quad *q);
void render_end(struct renderer *r);

/* ------------------------------------------------------ foreign engines */

/* A quad as render_draw_texture hands it to an engine: checked (positive
 * size inside the coordinate limit, 0 < alpha <= 1), the destination a
 * box, the source rect resolved (never empty) in texels of the transformed
 * texture, which is tw x th. */
struct render_draw {
	pixman_box32_t dst;
	float sx, sy, sw, sh;
	float tw, th;
	float alpha;
	bool opaque;  /* drawn without blending: alpha 1 and opaque content */
	bool nearest;
	int transform; /* render_quad.transform */
};

/* The map from output pixels to the texels of a tex_w x tex_h texture
 * that d draws, as a pixman (and so an X Render) picture transform; false
 * when it is a whole-texel translation, with *dx, *dy the offset of the
 * source from the output: then the composite needs no transform and takes
 * its untransformed fast paths. The pixman engine and duet-xwm's XRender
 * engine sample with it alike, so both round the same way. */
bool render_draw_source_transform(const struct render_draw *d, int tex_w, int tex_h,
                                  pixman_transform_t *t, int *dx, int *dy);

/* An engine whose drawing is done where render/ cannot reach: duet-xwm's
 * XRender engine (xwm/xrender.c) draws inside the X server, as the X
 * compositing managers' xrender backends do. render/ keeps what every
 * engine shares (the scene, its damage and clip, the checks of a quad,
 * the stats) and hands the engine each draw as the rectangles of the clip
 * it covers, so the same scene makes the same draws on every engine. */
struct render_foreign_engine {
	const char *name;  /* renderer_engine_name, e.g. "xrender" */
	/* A frame into target (the data of render_target_create_foreign)
	 * begins and ends. */
	void (*begin)(void *data, void *target);
	void (*end)(void *data);
	/* rects (n > 0): where to fill with argb (premultiplied), blending
	 * when blend, else replacing. */
	void (*fill)(void *data, const pixman_box32_t *rects, int n, uint32_t argb, bool blend);
	/* rects (n > 0): where to draw d from texture (the handle of
	 * render_texture_create_foreign). */
	void (*draw_texture)(void *data, void *texture, const pixman_box32_t *rects, int n,
	                     const struct render_draw *d);
	/* Optional: the texture of handle texture is destroyed (after this,
	 * no draw names it), so the engine may free what it owns. */
	void (*texture_destroy)(void *data, void *texture);
};
/* data is passed to every call; both must outlive the renderer. */
struct renderer *renderer_create_foreign(const struct render_foreign_engine *engine, void *data);
/* A texture of a foreign renderer that is handle (an X Picture): render/
 * never reads or writes its texels, so uploads fail and
 * render_texture_is_imported is true (like a dmabuf's, it is sampled
 * where its owner draws it; node damage says what changed). Destroying the
 * texture calls the engine's texture_destroy with handle. NULL on bad
 * arguments. */
struct render_texture *render_texture_create_foreign(struct renderer *r,
                                                     enum render_format format,
                                                     int width, int height, void *handle);
/* A target a foreign engine draws into (data is its begin's target). The
 * caller's calls answer render_target_present, _flush (NULL: nothing to
 * wait for), _read_pixels (as render_target_impl's: w x h pixels at x, y
 * into first, rows dst_stride_bytes apart; 0 or -1) and _destroy (after
 * which render/ frees its own part); frame_done is true once flush
 * returned. ops must outlive the target. */
struct render_foreign_target_ops {
	const char *repaint_path; /* render_target_repaint_path */
	int (*present)(void *data, const pixman_region32_t *damage);
	int (*flush)(void *data);
	int (*read_pixels)(void *data, int x, int y, int w, int h, uint32_t *first,
	                   int dst_stride_bytes);
	void (*destroy)(void *data);
};
struct render_target *render_target_create_foreign(struct renderer *r, int width, int height,
                                                   const struct render_foreign_target_ops *ops,
                                                   void *data);

/* ---------------------------------------------------------------- scene */

/* A flat, stacked list of textured rectangles with damage tracking, so the
 * compositor and the window manager both repaint only what changed, skip
 * what is covered by opaque content above it, and do no GPU work at all for
 * an unchanged screen. Nodes are stacked bottom to top in creation order
 * unless restacked. */
struct render_scene;
struct render_node;

struct render_scene *render_scene_create(struct renderer *r, int width, int height,
                                         uint32_t background_argb);
void render_scene_destroy(struct render_scene *s); /* destroys remaining nodes */

struct render_node *render_node_create(struct render_scene *s); /* on top, hidden, no texture */
void render_node_destroy(struct render_node *n);
/* Every setter damages what it changes on screen, and nothing if the value
 * is unchanged. */
void render_node_set_texture(struct render_node *n, struct render_texture *tex);
void render_node_set_visible(struct render_node *n, bool visible);
void render_node_set_position(struct render_node *n, int x, int y);
/* Destination size; 0x0 (default) means the texture's size. */
void render_node_set_size(struct render_node *n, int width, int height);
/* Source crop in texels (viewporter); w <= 0 clears it. */
void render_node_set_source(struct render_node *n, float x, float y, float w, float h);
void render_node_set_alpha(struct render_node *n, float alpha);
/* render_quad.transform for the node's texture (0 = none). */
void render_node_set_transform(struct render_node *n, int transform);
/* Region in node-local destination coordinates known to be fully opaque;
 * NULL = none (ARGB) . XRGB textures are opaque whatever this says. */
void render_node_set_opaque_region(struct render_node *n, const pixman_region32_t *opaque);
/* Content changed in this node-local region (NULL = whole node), in
 * destination coordinates (after scaling), clipped to the node. */
void render_node_damage(struct render_node *n, const pixman_region32_t *damage);
void render_node_raise_to_top(struct render_node *n);
void render_node_lower_to_bottom(struct render_node *n);
void render_node_place_above(struct render_node *n, struct render_node *sibling);
void render_node_place_below(struct render_node *n, struct render_node *sibling);
void render_node_get_box(const struct render_node *n, pixman_box32_t *box);

void render_scene_damage_all(struct render_scene *s);
bool render_scene_has_damage(const struct render_scene *s);
/* Repaints the accumulated damage into t and clears it. Returns false
 * without any GL call if there was no damage. When repainted is not NULL it
 * receives the repainted region (output coordinates). Does not present. */
bool render_scene_paint(struct render_scene *s, struct render_target *t,
                        pixman_region32_t *repainted);

/* A view shows the scene's rectangle at x,y (scene coordinates) of
 * width x height in a target of that size, and keeps the damage that falls
 * in it: one per output of a layout, each repainting only its own part.
 * Created fully damaged; destroyed with the scene at the latest. The
 * render_scene_ calls above are those of the view at 0,0 of the scene's size. */
struct render_scene_view;
struct render_scene_view *render_scene_view_create(struct render_scene *s, int x, int y,
                                                   int width, int height);
void render_scene_view_destroy(struct render_scene_view *v);
void render_scene_view_damage_all(struct render_scene_view *v);
bool render_scene_view_has_damage(const struct render_scene_view *v);
/* render_scene_paint for the view: repainted gets target coordinates. */
bool render_scene_view_paint(struct render_scene_view *v, struct render_target *t,
                             pixman_region32_t *repainted);

/* ------------------------------------------------------ frame scheduler */

uint64_t render_now_ns(void); /* CLOCK_MONOTONIC in ns */
/* A timer on that clock the caller's event loop polls: a non-blocking
 * timerfd (-1, logged, on failure), armed for an absolute time at_ns (one
 * already passed fires at once; 0 disarms), and read once it fired (true
 * when it had). */
int render_timer_create(void);
void render_timer_arm(int fd, uint64_t at_ns);
bool render_timer_read(int fd);

/* When duet-compositor's output and duet-xwm's overlay repaint
 * (frame-sched.c): a refresh grid standing in for vblank on outputs that
 * have none (headless, Xvfb), whose phase the first request after an idle
 * tick sets (its repaint starts at once); on KMS, page flips anchor it on
 * the display's vblanks and nothing else moves it. refresh_mhz 0 means no grid: a frame is painted as soon as
 * it is asked for (benchmark mode). Times are arguments (CLOCK_MONOTONIC
 * ns), never read inside, so tests can drive it with a fake clock. */
struct render_frame_sched {
	uint64_t period_ns;   /* 0 = no grid */
	uint64_t window_ns;   /* a repaint starts this long before its tick */
	uint64_t anchor_ns;   /* tick anchor_seq */
	uint64_t anchor_seq;  /* 0, until a display's vblank counter anchors it */
	uint64_t next_seq;    /* lowest tick a new frame may be presented on */
	uint64_t paint_seq;   /* lowest tick new damage may be painted for: a
	                       * tick whose frame painted nothing stays free */
	uint64_t paint_seq_before; /* paint_seq before the frame in progress */
	uint64_t frames;      /* frames started (the seq without a grid) */
	bool scheduled;       /* a repaint is asked for */
	bool damage, due;     /* what for: new damage / only callbacks or answers */
	uint64_t target_seq;  /* tick of the scheduled repaint */
	uint64_t deadline_ns; /* when to start it: the caller's timer */
	bool in_flight;       /* started, not yet finished or flipped */
	bool display_clock;   /* a display reported a flip: its grid is real */
};

/* One repaint, as render_frame_sched_start hands it out. */
struct render_frame {
	bool paint;           /* new damage was reported: paint and present it;
	                       * false: nothing new, only callbacks/answers due.
	                       * Set false before finishing a frame that
	                       * turned out to paint nothing (the repaint loop
	                       * does, from render_repaint_loop_finish). */
	uint64_t seq;         /* grid periods since the anchor (MSC); frames
	                       * without a grid */
	uint64_t tick_ns;     /* the tick the frame is for (after finish: the one
	                       * it is presented on) */
	uint64_t refresh_ns;  /* the period, 0 without a grid */
};

void render_frame_sched_init(struct render_frame_sched *s, int refresh_mhz, uint64_t now_ns);
/* New damage (damage true) or something due at the next frame (frame
 * callbacks, sync answers). Returns true when a repaint was not yet
 * scheduled: a timer is to be armed for s->deadline_ns (at once when
 * that is not after now_ns). */
bool render_frame_sched_request(struct render_frame_sched *s, uint64_t now_ns, bool damage);
/* The timer fired: true, with *frame, when the scheduled repaint is due at
 * now_ns; false when nothing is scheduled or it is too early. */
bool render_frame_sched_start(struct render_frame_sched *s, uint64_t now_ns,
                              struct render_frame *frame);
/* The frame is finished (pixels drawn and handed over) at done_ns; returns
 * its presentation time: its tick, or the first tick after done_ns if it
 * missed it (frame->seq and tick_ns follow), or done_ns without a grid.
 * Never earlier than done_ns. */
uint64_t render_frame_sched_finish(struct render_frame_sched *s, struct render_frame *frame,
                                   uint64_t done_ns);
/* The caller found that the scheduled repaint would paint nothing and
 * answer nothing (what asked for it changed nothing on screen, or the
 * frame that just finished painted or answered it): it is dropped, damage
 * or not. Returns whether one was (the caller's timer may still fire:
 * start then finds nothing to do). */
bool render_frame_sched_withdraw(struct render_frame_sched *s);
/* The time of tick seq of the grid. */
uint64_t render_frame_sched_tick_ns(const struct render_frame_sched *s, uint64_t seq);
/* Instead of finish, on a display that reports its flips (KMS): the frame
 * was shown at t_ns, the time of the flip's completion event. With msc (the
 * display's vblank counter at that flip) the frame's seq is msc and the
 * grid is re-anchored on that vblank, so later ticks are the display's;
 * without (a device that counts no vblanks, e.g. virtio-gpu) the grid stays
 * the pacing and seq is the frame's tick, or the first tick after t_ns if
 * it was shown later. Either way frame->tick_ns becomes t_ns, seq never
 * goes back, and a repaint already asked for is moved onto the new grid
 * (now_ns: the current time). Returns t_ns. */
uint64_t render_frame_sched_flipped(struct render_frame_sched *s, struct render_frame *frame,
                                    uint64_t t_ns, const uint64_t *msc, uint64_t now_ns);

/* ---------------------------------------------------------- repaint loop */

/* The repaint cycle both servers run on the frame scheduler
 * (repaint-loop.c): a repaint is asked for (new damage, or only callbacks
 * or answers due), the loop arms its timer for the scheduler's deadline or,
 * when that has come, marks the repaint due now, to be run before the
 * caller's event loop next sleeps (a timer set to fire at once would cost a
 * wakeup per frame); the repaint starts a frame (paint), the caller ends it
 * (render_repaint_loop_finish, at once or once its pixels are out), and
 * what the frame owes clients goes out (deliver) on its tick or at once.
 * Then the next repaint asked for meanwhile is armed. The caller polls
 * timer_fd and calls render_repaint_loop_timer when it is readable. */
enum render_repaint_flags {
	/* What a frame owes is delivered on its tick, the presentation time
	 * the grid gives it, as a display server sends it on a page flip's
	 * completion (duet-compositor); without, as soon as the frame is
	 * finished (duet-xwm: its pixels have reached the X server then). A
	 * frame with nothing to paint, whose delivery waits for the tick
	 * anyway, then needs no head start: it is started on its tick itself,
	 * one wakeup instead of a repaint and then a flip. */
	RENDER_REPAINT_DELIVER_ON_TICK = 1 << 0,
	/* A display says when a painted frame was shown (a KMS page flip's
	 * event): render_repaint_loop_finish then takes that time and the
	 * display's vblank count (render_frame_sched_flipped). Without, it
	 * takes when the frame's pixels exist and the grid presents the frame
	 * on its next tick (render_frame_sched_finish). A frame that painted
	 * nothing showed nothing new: the grid places it either way. */
	RENDER_REPAINT_DISPLAY_FLIPS = 1 << 1,
};

struct render_repaint_ops {
	/* Optional: whether a frame started now would paint or answer
	 * anything. A repaint asked for that would not is withdrawn
	 * (render_frame_sched_withdraw) before it starts and once the frame
	 * before it is delivered. NULL: every request is worth a frame. */
	bool (*has_work)(void *data);
	/* The frame starts: paint it, or start painting it. The caller ends
	 * it with render_repaint_loop_finish, from here or later. */
	void (*paint)(void *data, const struct render_frame *frame);
	/* Optional: the frame is finished and its presentation time is known
	 * (frame->tick_ns; done_ns is when its pixels existed, on a display
	 * the flip's time), before it is delivered: for its trace. */
	void (*finished)(void *data, const struct render_frame *frame, uint64_t done_ns);
	/* The frame is presented: send what it owes clients. */
	void (*deliver)(void *data, const struct render_frame *frame, uint64_t done_ns);
	/* Optional: a repaint has become due now; the caller arranges for
	 * render_repaint_loop_run before its event loop next sleeps (an idle
	 * source) and returns false if it cannot (the repaint is then dropped
	 * until the next request). NULL: the caller asks
	 * render_repaint_loop_due before every sleep instead. */
	bool (*due)(void *data);
};

enum render_repaint_state {
	RENDER_REPAINT_IDLE,       /* no frame on its way */
	RENDER_REPAINT_PAINTING,   /* started, not yet finished */
	RENDER_REPAINT_PRESENTING, /* finished, waiting for its tick */
};

struct render_repaint_loop {
	struct render_frame_sched sched;
	struct render_frame frame;     /* the frame on its way */
	uint64_t done_ns;              /* when it was finished */
	enum render_repaint_state state;
	unsigned int flags;            /* enum render_repaint_flags */
	int timer_fd;
	uint64_t armed_ns;             /* what the timer is armed for, 0 = nothing */
	bool on_tick;                  /* it waits for the tick: nothing to paint */
	bool due_now;                  /* a repaint waits for render_repaint_loop_run */
	bool stopped;                  /* render_repaint_loop_stop'ped */
	const struct render_repaint_ops *ops;
	void *data;
	uint64_t (*now)(void);         /* render_now_ns; a test's fake clock */
};

/* refresh_mhz as render_frame_sched_init. 0, or -1 (logged) without a
 * timer. */
int render_repaint_loop_init(struct render_repaint_loop *l, int refresh_mhz,
                             unsigned int flags, const struct render_repaint_ops *ops,
                             void *data);
void render_repaint_loop_fini(struct render_repaint_loop *l);
/* Something changed on screen (damage true) or is due at the next frame
 * (frame callbacks, sync answers): a repaint is scheduled. While a frame
 * is painting the timer is armed as usual (if it fires meanwhile it is
 * ignored: the frame's end arms it again); while one waits for its tick
 * the timer is the tick's, and the delivery arms the repaint. */
void render_repaint_loop_request(struct render_repaint_loop *l, bool damage);
/* timer_fd is readable: a frame's tick, or a repaint's deadline. */
void render_repaint_loop_timer(struct render_repaint_loop *l);
/* Whether a repaint is due now (ops->due NULL: asked before each sleep). */
bool render_repaint_loop_due(const struct render_repaint_loop *l);
/* Runs the repaint that is due now, if one is. */
void render_repaint_loop_run(struct render_repaint_loop *l);
/* The frame being painted is finished: painted whether it changed pixels,
 * t_ns as RENDER_REPAINT_DISPLAY_FLIPS says (when its pixels exist, or when
 * a display showed it), msc the display's vblank count at that flip (NULL:
 * none). It is delivered on its tick or at once. false (nothing done)
 * when no frame is painting (stopped meanwhile). */
bool render_repaint_loop_finish(struct render_repaint_loop *l, bool painted, uint64_t t_ns,
                                const uint64_t *msc);
/* The output is gone for now: nothing is repainted or delivered, the
 * frame on its way is dropped and the timer disarmed; requests are
 * ignored until resume. */
void render_repaint_loop_stop(struct render_repaint_loop *l);
/* Back at refresh_mhz: a new grid whose tick count goes on from where the
 * old one's would be now (seq never goes back for clients), and repaints
 * are asked for again. */
void render_repaint_loop_resume(struct render_repaint_loop *l, int refresh_mhz);

/* Keeps every shared object loaded now in the process until it exits
 * (RTLD_NODELETE), whoever dlcloses it later; returns how many, or -1 if
 * it ran out of memory. Called before a GL stack is torn down:
 * eglTerminate (and gbm_device_destroy) make Mesa dlclose its DRI driver,
 * and what the driver keeps in its static state once per process (llvmpipe:
 * 240 bytes allocated at eglInitialize) would then be reachable from
 * nowhere. LeakSanitizer reports such memory from an "<unknown module>",
 * which no suppression can name (tests/lsan.supp); with the driver kept,
 * its globals still point at that state and only real leaks are reported.
 * For a process about to end nothing else changes: exit unmaps it all. */
int render_keep_loaded(void);

/* ---------------------------------------------------------------- trace */

/* JSON lines, one event per line:
 *   {"name":"frame","ns":123456789,"pid":42,<fields>}
 * ns is CLOCK_MONOTONIC. The bench and the client apps share this format.
 * A trace belongs to its opener (a server, a window manager, an app), not
 * to the process. render_trace_open(NULL, &t) uses $DUET_TRACE if set;
 * with no file t is NULL, and tracing into NULL is a cheap no-op (-1, t
 * NULL and a log line when the file cannot be opened). fields is a printf
 * format producing the remaining JSON members without braces, e.g.
 * "\"seq\":%u", or NULL. */
struct render_trace;
int render_trace_open(const char *path, struct render_trace **trace);
/* Traces to an open fd instead (the apps default to stdout); takes it.
 * NULL when out of memory. */
struct render_trace *render_trace_from_fd(int fd);
void render_trace_close(struct render_trace *trace); /* NULL: nothing */
void render_trace(struct render_trace *trace, const char *name, const char *fields, ...)
	__attribute__((format(printf, 3, 4)));
void render_tracev(struct render_trace *trace, const char *name, const char *fields,
                   va_list args) __attribute__((format(printf, 3, 0)));

#endif
