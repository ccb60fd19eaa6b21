/* Internals shared by the files of render/; nothing outside render/ may
 * include this. The public contract is render.h. */
#ifndef DUET_RENDER_PRIVATE_H
#define DUET_RENDER_PRIVATE_H

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES2/gl2.h>
#include <GLES2/gl2ext.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "duet-list.h"
#include "render.h"

/* Positions and sizes beyond +-2^29 are not drawn, so that a position
 * plus a size never overflows an int (or what pixman regions hold). */
#define RENDER_COORD_LIMIT (1 << 29)

void render_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A new texture, bound to GL_TEXTURE_2D, with filter both ways and edge
 * clamping. */
GLuint render_gl_texture_new(GLint filter);

/* True if the space-separated extension list contains name as a whole word
 * (a plain strstr would match GL_EXT_foo in GL_EXT_foo_bar). */
bool render_extension_in_list(const char *list, const char *name);
/* GL's BGRA byte order is our 0xAARRGGBB words only on a little-endian CPU. */
static inline bool render_little_endian(void)
{
	const uint16_t one = 1;
	uint8_t first;

	memcpy(&first, &one, 1);
	return first == 1;
}

/* render_egl_has_extension, minus what $DUET_RENDER_DISABLE names. */
bool render_usable_extension(const struct render_egl *egl, const char *name);


struct render_egl {
	EGLDisplay display;
	EGLConfig config;   /* EGL_NO_CONFIG_KHR when the context needs none */
	EGLContext context;
	const char *label;  /* the platform, for logs: "surfaceless", "on X11" */
	char description[256];
	/* EGL_KHR_fence_sync, or NULL: frames are then finished with glFinish. */
	PFNEGLCREATESYNCKHRPROC create_sync;
	PFNEGLDESTROYSYNCKHRPROC destroy_sync;
	PFNEGLCLIENTWAITSYNCKHRPROC client_wait_sync;
	/* eglTerminate at destroy: a GBM display refers to the caller's
	 * gbm_device, which must not outlive it (see render_egl_destroy). */
	bool terminate;
};

/* A kind of target: what each render_target_* call does on it. target.c
 * only dispatches through it, so a call can never run another kind's code
 * (the memory kind's present on a window, a window's destroy on an
 * offscreen framebuffer). */
struct render_target_impl {
	const char *engine; /* renderer_engine_name of the engine drawing into it */
	int (*present)(struct render_target *t, const pixman_region32_t *damage);
	int (*flush)(struct render_target *t);
	bool (*frame_done)(struct render_target *t);
	/* w x h pixels at x, y, inside the target, as ARGB8888 rows top-down
	 * into first, dst_stride_bytes apart. */
	int (*read_pixels)(struct render_target *t, int x, int y, int w, int h, uint32_t *first,
	                   int dst_stride_bytes);
	void (*destroy)(struct render_target *t);
};

struct render_target {
	const struct render_target_impl *impl;
	int width, height;
	const char *repaint_path; /* render_target_repaint_path */
	/* The GL kinds (target-gl.c, target-window.c); egl is NULL on the
	 * memory kind. Offscreen: a framebuffer object, surface
	 * EGL_NO_SURFACE. A window: its EGLSurface, and fbo 0 or the
	 * framebuffer its copy paths paint into. */
	struct render_egl *egl;
	GLuint fbo;
	GLuint texture;
	EGLSurface surface;
	/* How output rows map to GL rows. A window surface is shown with GL's
	 * bottom row at the bottom, so output row 0 must go to the top GL row
	 * (y_up = true). An offscreen target is only read back by us, so it
	 * stores output row 0 in GL row 0 and glReadPixels returns top-down
	 * rows with no flip. */
	bool y_up;
	/* glReadPixels may return BGRA, i.e. our 0xAARRGGBB words on a
	 * little-endian CPU (GL_EXT_read_format_bgra); 0 = not asked yet. */
	signed char read_bgra;
	/* The last flushed frame's fence (render_target_flush), or
	 * EGL_NO_SYNC_KHR once it is known complete. */
	EGLSyncKHR fence;
	/* The memory kind's pixels (pixman-target.c), which the pixman
	 * engine draws into. */
	pixman_image_t *memory;	/* A foreign target's data (foreign.c): what its engine draws into. */
	void *foreign;
};

/* What the GL kinds share (target-gl.c): a window target is presented by
 * a swap of its own and otherwise works as an offscreen one. */
int render_gl_target_flush(struct render_target *t);
bool render_gl_target_frame_done(struct render_target *t);
int render_gl_target_read_pixels(struct render_target *t, int x, int y, int w, int h,
                                 uint32_t *first, int dst_stride_bytes);
/* Deletes the fence, framebuffer and texture (not the target itself). */
void render_gl_target_release(struct render_target *t);

/* Makes the target current and its framebuffer bound, sets the viewport. */
void render_target_bind(struct render_target *t);
/* GL scissor/rectangle y for an output-space box on this target. */
int render_target_gl_y(const struct render_target *t, int y, int height);

enum render_shader_kind {
	RENDER_SHADER_SOLID,
	RENDER_SHADER_RGBA, /* premultiplied texture */
	RENDER_SHADER_RGBX, /* texture drawn with alpha forced to 1 */
	/* The same two at node alpha 1: no multiply per fragment (see
	 * render_draw_texture). */
	RENDER_SHADER_RGBA_COPY,
	RENDER_SHADER_RGBX_COPY,
	RENDER_SHADER_COUNT,
};

struct render_program {
	GLuint program;
	GLint u_proj, u_tex, u_alpha, u_color;
};

/* Vertex attribute locations, bound before linking. */
#define RENDER_ATTR_POS 0
#define RENDER_ATTR_TEXCOORD 1

const char *render_shader_vertex_source(void);
const char *render_shader_fragment_source(enum render_shader_kind kind);

/* A drawing engine: GLES2 (gles2.c, texture.c) or pixman (pixman-draw.c).
 * renderer.c and texture.c keep what both share (the clip, the checks of a
 * quad, damage of uploads, stats) and call these for the drawing itself.
 * Every rectangle of clip ∩ box an engine draws counts as one quad. */
struct render_engine {
	const char *name;
	void (*destroy)(struct renderer *r);
	/* t is a target of this engine (render_begin checked). */
	void (*begin)(struct renderer *r, struct render_target *t);
	void (*end)(struct renderer *r);
	void (*fill)(struct renderer *r, const pixman_box32_t *box, uint32_t argb, bool blend);
	void (*draw_texture)(struct renderer *r, struct render_texture *tex,
	                     const struct render_draw *d);
	/* Storage for tex (size and format already checked); false, logged. */
	bool (*texture_init)(struct render_texture *tex);
	/* tex samples data (rows stride bytes apart, checked) in place, from
	 * now on; NULL on engines that cannot (GL: only uploads). Also what
	 * re-points a wrapped texture. false, logged. */
	bool (*texture_wrap)(struct render_texture *tex, void *data, int stride);
	/* A wrapped texture takes a copy of what it samples into storage of
	 * its own and stops reading the caller's memory; false, logged. */
	bool (*texture_unwrap)(struct render_texture *tex);
	void (*texture_fini)(struct render_texture *tex);
	/* An upload: begin, w x h texels at (x, y) from pixels per box (rows
	 * stride bytes apart), end, which returns ret or -1 if it failed. */
	void (*upload_begin)(struct render_texture *tex);
	int (*upload_box)(struct render_texture *tex, const char *pixels, int stride,
	                  int x, int y, int w, int h);
	int (*upload_end)(struct render_texture *tex, int ret);
};
extern const struct render_engine render_gl_engine;
extern const struct render_engine render_pixman_engine;
/* Dispatches to the renderer's struct render_foreign_engine (foreign.c). */
extern const struct render_engine render_foreign_engine;

/* r->clip ∩ box into out (initialised here, the caller finis it), its
 * rectangles returned in *n and counted as quads, as gles2.c counts its
 * scissored draws (renderer.c). */
const pixman_box32_t *render_clip_box(struct renderer *r, const pixman_box32_t *box,
                                      pixman_region32_t *out, int *n);

/* A texture's checks and memory, no storage yet (texture.c); NULL,
 * logged, on a size or format no engine takes. */
struct render_texture *render_texture_alloc(struct renderer *r, enum render_format format,
                                            int width, int height);

/* The GL engine's textures (texture.c). */
bool render_gl_texture_init(struct render_texture *tex);
void render_gl_texture_fini(struct render_texture *tex);
void render_gl_upload_begin(struct render_texture *tex);
int render_gl_upload_box(struct render_texture *tex, const char *pixels, int stride,
                         int x, int y, int w, int h);
int render_gl_upload_end(struct render_texture *tex, int ret);

/* Common to both engines' renderer_create (renderer.c): NULL on ENOMEM. */
struct renderer *render_renderer_alloc(const struct render_engine *engine,
                                       struct render_egl *egl);

struct renderer {
	const struct render_engine *engine;
	/* renderer_engine_name: the engine's, or a foreign engine's own. */
	const char *name;
	/* render_foreign_engine's: the caller's engine and its data. */
	const struct render_foreign_engine *foreign;
	void *foreign_data;
	struct render_egl *egl; /* NULL with the pixman engine */
	struct render_program programs[RENDER_SHADER_COUNT];
	struct render_stats stats;
	bool has_bgra;            /* GL_EXT_texture_format_BGRA8888 */
	bool has_unpack_subimage; /* GL_EXT_unpack_subimage */

	/* Scratch memory for CPU swizzles and tight copies of damaged rects. */
	void *scratch;
	size_t scratch_size;

	struct duet_list scenes; /* render_scene.link */

	/* State between render_begin and render_end; target is NULL when
	 * begin refused the target (draws then do nothing). */
	struct render_target *target;
	pixman_region32_t clip;
	bool blending;
	int program; /* index in programs, -1 = none bound */
};

void *render_scratch(struct renderer *r, size_t size);
/* Changes the clip region mid-frame (the scene draws each node with its own
 * visible region). NULL = the whole target. */
void render_set_clip(struct renderer *r, const pixman_region32_t *clip);
/* Fill with blending off: the scene's background replaces what was there. */
void render_fill_replace(struct renderer *r, const pixman_box32_t *box, uint32_t argb);

struct render_texture {
	struct renderer *renderer;
	GLuint id;
	enum render_format format;
	int width, height;
	GLint filter; /* current GL_TEXTURE_MIN/MAG_FILTER, to skip redundant calls */
	EGLImageKHR image; /* an imported dmabuf's (texture-dmabuf.c), or NULL */
	pixman_image_t *pixels; /* the pixman engine's copy, owning its memory */
	/* render_texture_create_wrapped: pixels samples the caller's memory
	 * at wrap_data (not owned); access brackets each read of it. */
	bool wrapped;
	void *wrap_data;
	void *(*access_begin)(void *data);
	void (*access_end)(void *data);
	void *access_data;
	/* render_texture_create_foreign: the caller's handle, whose texels
	 * render/ never reads or writes (NULL on other textures). */
	void *foreign;
};

/* Called by render_texture_destroy so no node keeps a dangling pointer. */
void render_scene_forget_texture(struct render_scene *s, struct render_texture *tex);
struct render_scene *render_scene_from_link(struct duet_list *link);

#endif
