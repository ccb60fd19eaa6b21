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

#include "render.h"

struct gbm_surface;

/* Positions and sizes beyond +-2^29 are not drawn, so that a position
 * plus a size never overflows an int (or what pixman regions hold). */
#define RENDER_COORD_LIMIT (1 << 29)

void render_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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

/* Intrusive doubly linked list, so that render/ needs nothing from Wayland. */
struct render_link {
	struct render_link *prev, *next;
};
void render_link_init(struct render_link *head);
void render_link_insert_after(struct render_link *pos, struct render_link *elm);
void render_link_remove(struct render_link *elm);
#define render_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

struct render_egl {
	EGLDisplay display;
	EGLConfig config;   /* EGL_NO_CONFIG_KHR when the context needs none */
	EGLContext context;
	char description[256];
	/* EGL_KHR_fence_sync, or NULL: frames are then finished with glFinish. */
	PFNEGLCREATESYNCKHRPROC create_sync;
	PFNEGLDESTROYSYNCKHRPROC destroy_sync;
	PFNEGLCLIENTWAITSYNCKHRPROC client_wait_sync;
	/* eglTerminate at destroy: a GBM display refers to the caller's
	 * gbm_device, which must not outlive it (see render_egl_destroy). */
	bool terminate;
};

struct render_target {
	struct render_egl *egl;
	int width, height;
	/* Offscreen: a framebuffer object, surface EGL_NO_SURFACE. Window
	 * targets (later backends) use fbo 0 and their EGLSurface. */
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
	/* A GBM target's surface (target-gbm.c), NULL on other targets. */
	struct gbm_surface *gbm_surface;
};

/* The EGL bring-up every platform shares: display, GLES2 context made
 * current without a surface. choose sets egl->config. label goes in logs. */
struct render_egl *render_egl_open(EGLenum platform, void *native_display,
                                   const char *label,
                                   bool (*choose)(struct render_egl *egl, void *data),
                                   void *choose_data);

/* Chooses egl->config for window surfaces of a native visual (egl.c). */
bool render_egl_choose_window_config(struct render_egl *egl, uint32_t visual_id);

/* An EGL window surface target on any platform (target-window.c): native
 * is the platform's window (passed as is, or by address when
 * native_by_address: X11 wants a Window *); label names it in logs. */
struct render_target *render_window_target_create(struct render_egl *egl, uintptr_t native,
                                                  bool native_by_address, int width,
                                                  int height, const char *label);

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

struct renderer {
	struct render_egl *egl;
	struct render_program programs[RENDER_SHADER_COUNT];
	struct render_stats stats;
	bool has_bgra;            /* GL_EXT_texture_format_BGRA8888 */
	bool has_unpack_subimage; /* GL_EXT_unpack_subimage */

	/* Scratch memory for CPU swizzles and tight copies of damaged rects. */
	void *scratch;
	size_t scratch_size;

	struct render_link scenes; /* render_scene.link */

	/* State between render_begin and render_end. */
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
};
void render_texture_release_image(struct render_texture *tex);

/* Called by render_texture_destroy so no node keeps a dangling pointer. */
void render_scene_forget_texture(struct render_scene *s, struct render_texture *tex);
struct render_scene *render_scene_from_link(struct render_link *link);

#endif
