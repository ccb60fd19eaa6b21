/* The engines' drawing (tk-draw-gl.c, tk-draw-sw.c) behind tk.h's
 * tk_draw_* calls, and the images they draw. */
#ifndef DUET_TK_DRAW_H
#define DUET_TK_DRAW_H

#include <GLES2/gl2.h>
#include <stdint.h>

#include "tk.h"

struct tk_draw_ops {
	void (*clear)(struct tk_draw *d, struct tk_color c);
	void (*rect)(struct tk_draw *d, float x, float y, float w, float h, struct tk_color c);
	void (*image)(struct tk_draw *d, struct tk_image *img, float sx, float sy, float sw,
	              float sh, float x, float y, float w, float h, enum tk_filter filter,
	              struct tk_color tint);
	void (*gradient)(struct tk_draw *d, float x, float y, float w, float h,
	                 struct tk_color c0, struct tk_color c1, bool vertical);
	void (*flush)(struct tk_draw *d);
	void (*destroy)(struct tk_draw *d);
	void (*image_release)(struct tk_draw *d, struct tk_image *img);
};

struct tk_draw {
	const struct tk_draw_ops *ops;
	int width, height;
};

struct tk_image {
	struct tk_window *win;
	int width, height;
	uint32_t *pixels; /* premultiplied ARGB32, tightly packed */
	GLuint texture;   /* GL engine, uploaded on first use */
	int gl_filter;    /* GL engine: the texture's current filter, 0 unset */
	void *pix;        /* sw engine: pixman_image_t, made on first use */
	struct tk_image *next;
};

/* The GL drawing needs its context current for each call. */
struct tk_draw *tk_draw_gl_create(void);
void tk_draw_gl_begin(struct tk_draw *d, int width, int height);
struct tk_draw *tk_draw_sw_create(void);
void tk_draw_sw_begin(struct tk_draw *d, void *pixels, int stride, int width, int height);

#endif
