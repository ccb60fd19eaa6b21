/* The XRender engine (--renderer xrender): the scene drawn inside the X
 * server, as the X compositing managers' xrender backends draw it
 * (xcompmgr, picom --backend xrender).
 *
 * Without DRI3 (Xvfb), the other engines read every damaged window
 * rectangle out of the server (ShmGetImage), composite it in duet-xwm and
 * send the frame back (ShmPutImage): two copies across the process
 * boundary per damaged pixel. Here a window's texture is a Picture on its
 * named pixmap, a draw is a RenderComposite from it into a back-buffer
 * pixmap the size of the screen, a fill is RenderFillRectangles, and a
 * frame is shown by one RenderComposite of its damage from the back buffer
 * to the overlay window. No pixel leaves the server; what duet-xwm sends
 * per frame is a few small requests. In Xvfb the server's Render is
 * pixman, the same drawing code as the pixman engine.
 *
 * The scene, its damage and clip, and which quads a frame draws are
 * render/'s (a foreign engine, render.h), so the three engines make the
 * same draws: each rectangle render/ hands over is one Composite (or
 * one rectangle of a FillRectangles) here.
 *
 * No wait is needed anywhere on the frame's path: the server runs
 * requests in order, so a Composite sent after a window's DamageNotify
 * reads what its client drew before it, and the overlay's Composite comes
 * after the frame's draws. Screenshots read the back buffer with GetImage
 * (a round trip, off the repaint path). */
#include <stdlib.h>
#include <string.h>

#include <xcb/render.h>

#include "xwm.h"

/* A window's Picture: the foreign texture's handle, freed with it. */
struct xwm_picture {
	xcb_render_picture_t id;
	int width, height;
	bool transformed; /* a transform, filter and repeat are set on it */
};

struct xwm_xrender {
	struct xwm_cm *cm;
	xcb_render_pictformat_t rgb24, argb32, screen_format;
	/* The frame's target: a back buffer of the root's depth and the
	 * overlay it is shown on. */
	xcb_pixmap_t back;
	xcb_render_picture_t back_picture, overlay_picture;
	int width, height;
	int root_depth;
};

/* ------------------------------------------------------------ formats */

/* The direct format of depth with 8-bit channels at the usual shifts
 * (alpha_mask 0: none), or XCB_NONE. */
static xcb_render_pictformat_t find_format(const xcb_render_query_pict_formats_reply_t *r,
                                           uint8_t depth, uint16_t alpha_mask)
{
	for (xcb_render_pictforminfo_iterator_t it =
	             xcb_render_query_pict_formats_formats_iterator(r);
	     it.rem; xcb_render_pictforminfo_next(&it)) {
		const xcb_render_pictforminfo_t *f = it.data;
		const xcb_render_directformat_t *d = &f->direct;
		if (f->type == XCB_RENDER_PICT_TYPE_DIRECT && f->depth == depth &&
		    d->red_shift == 16 && d->red_mask == 0xff && d->green_shift == 8 &&
		    d->green_mask == 0xff && d->blue_shift == 0 && d->blue_mask == 0xff &&
		    d->alpha_mask == alpha_mask && (alpha_mask == 0 || d->alpha_shift == 24))
			return f->id;
	}
	return XCB_NONE;
}

static xcb_render_pictformat_t visual_format(const xcb_render_query_pict_formats_reply_t *r,
                                             xcb_visualid_t visual)
{
	for (xcb_render_pictscreen_iterator_t s = xcb_render_query_pict_formats_screens_iterator(r);
	     s.rem; xcb_render_pictscreen_next(&s))
		for (xcb_render_pictdepth_iterator_t d = xcb_render_pictscreen_depths_iterator(s.data);
		     d.rem; xcb_render_pictdepth_next(&d))
			for (xcb_render_pictvisual_iterator_t v =
			             xcb_render_pictdepth_visuals_iterator(d.data);
			     v.rem; xcb_render_pictvisual_next(&v))
				if (v.data->visual == visual)
					return v.data->format;
	return XCB_NONE;
}

/* ------------------------------------------------------------- engine */

static void xr_begin(void *data, void *target)
{
	(void)data;
	(void)target;
}

static void xr_end(void *data)
{
	(void)data;
}

static xcb_render_color_t color_of(uint32_t argb)
{
	/* Render's colours are premultiplied, as argb is. */
	return (xcb_render_color_t){
		.red = (uint16_t)(((argb >> 16) & 0xff) * 0x101),
		.green = (uint16_t)(((argb >> 8) & 0xff) * 0x101),
		.blue = (uint16_t)((argb & 0xff) * 0x101),
		.alpha = (uint16_t)((argb >> 24) * 0x101),
	};
}

/* Boxes inside the screen (render/ clipped them to the target) as X
 * rectangles; rects holds n. */
static void to_rectangles(const pixman_box32_t *boxes, int n, xcb_rectangle_t *rects)
{
	for (int i = 0; i < n; i++)
		rects[i] = (xcb_rectangle_t){ (int16_t)boxes[i].x1, (int16_t)boxes[i].y1,
		                              (uint16_t)(boxes[i].x2 - boxes[i].x1),
		                              (uint16_t)(boxes[i].y2 - boxes[i].y1) };
}

static void xr_fill(void *data, const pixman_box32_t *boxes, int n, uint32_t argb, bool blend)
{
	struct xwm_xrender *x = data;
	xcb_rectangle_t stack[16];
	xcb_rectangle_t *rects = n <= 16 ? stack : malloc((size_t)n * sizeof(*rects));

	if (!rects)
		return;
	to_rectangles(boxes, n, rects);
	xcb_render_fill_rectangles(x->cm->wm->conn, blend ? XCB_RENDER_PICT_OP_OVER
	                                                  : XCB_RENDER_PICT_OP_SRC,
	                           x->back_picture, color_of(argb), (uint32_t)n, rects);
	if (rects != stack)
		free(rects);
}

static xcb_render_transform_t to_x_transform(const pixman_transform_t *t)
{
	return (xcb_render_transform_t){
		t->matrix[0][0], t->matrix[0][1], t->matrix[0][2],
		t->matrix[1][0], t->matrix[1][1], t->matrix[1][2],
		t->matrix[2][0], t->matrix[2][1], t->matrix[2][2],
	};
}

/* The picture samples as the pixman engine's image does for d (see
 * render_draw_source_transform): a transform, filter and GL's clamp to
 * edge where the quad scales or turns, none where it is a translation.
 * Returns the offset of the source from the output. */
static void set_source(struct xwm_xrender *x, struct xwm_picture *p,
                       const struct render_draw *d, int *dx, int *dy)
{
	xcb_connection_t *c = x->cm->wm->conn;
	pixman_transform_t t;
	bool transformed = render_draw_source_transform(d, p->width, p->height, &t, dx, dy);

	if (!transformed && !p->transformed)
		return;
	if (!transformed)
		pixman_transform_init_identity(&t);
	xcb_render_set_picture_transform(c, p->id, to_x_transform(&t));
	const char *filter = transformed && !d->nearest ? "bilinear" : "nearest";
	xcb_render_set_picture_filter(c, p->id, (uint16_t)strlen(filter), filter, 0, NULL);
	uint32_t repeat = transformed ? XCB_RENDER_REPEAT_PAD : XCB_RENDER_REPEAT_NONE;
	xcb_render_change_picture(c, p->id, XCB_RENDER_CP_REPEAT, &repeat);
	p->transformed = transformed;
}

static void xr_draw_texture(void *data, void *texture, const pixman_box32_t *rects, int n,
                            const struct render_draw *d)
{
	struct xwm_xrender *x = data;
	struct xwm_picture *p = texture;
	xcb_connection_t *c = x->cm->wm->conn;
	xcb_render_picture_t mask = XCB_NONE;
	int dx, dy;

	if (d->alpha < 1.0f) {
		mask = xcb_generate_id(c);
		xcb_render_create_solid_fill(c, mask, (xcb_render_color_t){
			0, 0, 0, (uint16_t)(d->alpha * 0xffff + 0.5f) });
	}
	set_source(x, p, d, &dx, &dy);
	/* Src where the quad is opaque (no blending, as GL and pixman draw
	 * it); an x8r8g8b8 picture reads as opaque either way. */
	uint8_t op = d->opaque ? XCB_RENDER_PICT_OP_SRC : XCB_RENDER_PICT_OP_OVER;
	for (int i = 0; i < n; i++) {
		const pixman_box32_t *b = &rects[i];
		xcb_render_composite(c, op, p->id, mask, x->back_picture, (int16_t)(b->x1 + dx),
		                     (int16_t)(b->y1 + dy), 0, 0, (int16_t)b->x1, (int16_t)b->y1,
		                     (uint16_t)(b->x2 - b->x1), (uint16_t)(b->y2 - b->y1));
	}
	if (mask)
		xcb_render_free_picture(c, mask);
}

static void xr_texture_destroy(void *data, void *texture)
{
	struct xwm_xrender *x = data;
	struct xwm_picture *p = texture;

	xcb_render_free_picture(x->cm->wm->conn, p->id);
	free(p);
}

static const struct render_foreign_engine xrender_engine = {
	.name = "xrender",
	.begin = xr_begin,
	.end = xr_end,
	.fill = xr_fill,
	.draw_texture = xr_draw_texture,
	.texture_destroy = xr_texture_destroy,
};

/* ------------------------------------------------------------- target */

/* The frame's damage, and only it, from the back buffer to the overlay:
 * one clip and one Composite. */
static int xr_present(void *data, const pixman_region32_t *damage)
{
	struct xwm_xrender *x = data;
	xcb_connection_t *c = x->cm->wm->conn;
	int n;
	const pixman_box32_t *boxes = pixman_region32_rectangles(damage, &n);
	const pixman_box32_t *ext = pixman_region32_extents(damage);
	xcb_rectangle_t stack[16];
	xcb_rectangle_t *rects = n <= 16 ? stack : malloc((size_t)n * sizeof(*rects));

	if (n == 0 || !rects)
		return n == 0 ? 0 : -1;
	to_rectangles(boxes, n, rects);
	xcb_render_set_picture_clip_rectangles(c, x->overlay_picture, 0, 0, (uint32_t)n, rects);
	xcb_render_composite(c, XCB_RENDER_PICT_OP_SRC, x->back_picture, XCB_NONE,
	                     x->overlay_picture, (int16_t)ext->x1, (int16_t)ext->y1, 0, 0,
	                     (int16_t)ext->x1, (int16_t)ext->y1, (uint16_t)(ext->x2 - ext->x1),
	                     (uint16_t)(ext->y2 - ext->y1));
	if (rects != stack)
		free(rects);
	return 0;
}

static int xr_flush(void *data)
{
	struct xwm_xrender *x = data;

	xcb_flush(x->cm->wm->conn);
	return 0;
}

/* The back buffer, which holds the last frame whole. A depth-24 pixmap's
 * pad byte is undefined: read as opaque, as the other targets' alpha is
 * for what they draw opaque. */
static int xr_read_pixels(void *data, int x0, int y0, int w, int h, uint32_t *first,
                          int dst_stride_bytes)
{
	struct xwm_xrender *x = data;
	xcb_connection_t *c = x->cm->wm->conn;

	for (int y = y0; y < y0 + h;) {
		/* Bands that fit a reply (a long one is fine, but be modest). */
		int band = h - (y - y0);
		if ((int64_t)band * w * 4 > (16 << 20))
			band = (int)((16 << 20) / ((int64_t)w * 4));
		if (band < 1)
			band = 1;
		xcb_get_image_reply_t *r = xcb_get_image_reply(c,
			xcb_get_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, x->back, (int16_t)x0, (int16_t)y,
			              (uint16_t)w, (uint16_t)band, ~0u), NULL);
		if (!r || xcb_get_image_data_length(r) < band * w * 4) {
			free(r);
			return -1;
		}
		const uint32_t *src = (const uint32_t *)(const void *)xcb_get_image_data(r);
		for (int row = 0; row < band; row++) {
			uint32_t *dst = (uint32_t *)(void *)((char *)first +
			                                     (size_t)(y - y0 + row) * dst_stride_bytes);
			for (int col = 0; col < w; col++)
				dst[col] = x->root_depth == 32 ? src[(size_t)row * w + col]
				                               : src[(size_t)row * w + col] | 0xff000000u;
		}
		free(r);
		y += band;
	}
	return 0;
}

static void xr_target_destroy(void *data)
{
	struct xwm_xrender *x = data;
	xcb_connection_t *c = x->cm->wm->conn;

	if (x->back_picture)
		xcb_render_free_picture(c, x->back_picture);
	if (x->overlay_picture)
		xcb_render_free_picture(c, x->overlay_picture);
	if (x->back)
		xcb_free_pixmap(c, x->back);
	x->back_picture = x->overlay_picture = XCB_NONE;
	x->back = XCB_NONE;
}

static const struct render_foreign_target_ops target_ops = {
	.repaint_path = "back-pixmap",
	.present = xr_present,
	.flush = xr_flush,
	.read_pixels = xr_read_pixels,
	.destroy = xr_target_destroy,
};

struct render_target *xwm_xrender_target(struct xwm_cm *cm, int width, int height)
{
	struct xwm_xrender *x = cm->xrender;
	struct xwm *xwm = cm->wm;
	xcb_connection_t *c = xwm->conn;

	x->width = width;
	x->height = height;
	x->back = xcb_generate_id(c);
	xcb_create_pixmap(c, xwm->screen->root_depth, x->back, xwm->root, (uint16_t)width,
	                  (uint16_t)height);
	x->back_picture = xcb_generate_id(c);
	xcb_render_create_picture(c, x->back_picture, x->back, x->screen_format, 0, NULL);
	x->overlay_picture = xcb_generate_id(c);
	xcb_render_create_picture(c, x->overlay_picture, xwm->overlay, x->screen_format, 0, NULL);
	struct render_target *t = render_target_create_foreign(cm->renderer, width, height,
	                                                       &target_ops, x);
	if (!t)
		xr_target_destroy(x);
	return t;
}

/* ------------------------------------------------------------ windows */

struct render_texture *xwm_xrender_import(struct xwm_window *w, enum render_format format)
{
	struct xwm_content *content = w->content;
	struct xwm_cm *cm = content->cm;
	struct xwm_xrender *x = cm->xrender;
	xcb_connection_t *c = cm->wm->conn;
	struct xwm_picture *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->width = content->pixmap_width;
	p->height = content->pixmap_height;
	p->id = xcb_generate_id(c);
	/* Fails (an error, ignored) if the pixmap could not be named: the
	 * window is going away and its UnmapNotify follows. */
	xcb_render_create_picture(c, p->id, content->pixmap,
	                          format == RENDER_FORMAT_ARGB8888 ? x->argb32 : x->rgb24, 0, NULL);
	struct render_texture *tex = render_texture_create_foreign(cm->renderer, format, p->width,
	                                                           p->height, p);
	if (!tex) {
		xcb_render_free_picture(c, p->id);
		free(p);
		return NULL;
	}
	return tex;
}

/* ---------------------------------------------------------------- setup */

bool xwm_xrender_init(struct xwm_cm *cm)
{
	struct xwm *xwm = cm->wm;
	xcb_connection_t *c = xwm->conn;
	const xcb_query_extension_reply_t *ext = xcb_get_extension_data(c, &xcb_render_id);

	if (!ext || !ext->present) {
		xwm_log("--renderer xrender: the X server lacks the RENDER extension");
		return false;
	}
	xcb_render_query_version_reply_t *v = xcb_render_query_version_reply(c,
		xcb_render_query_version(c, 0, 11), NULL);
	/* 0.10: solid fills (alpha masks); 0.6: transforms and filters. */
	bool recent = v && (v->major_version > 0 || v->minor_version >= 10);
	free(v);
	if (!recent) {
		xwm_log("--renderer xrender: RENDER 0.10 or newer is needed");
		return false;
	}
	xcb_render_query_pict_formats_reply_t *f = xcb_render_query_pict_formats_reply(c,
		xcb_render_query_pict_formats(c), NULL);
	struct xwm_xrender *x = calloc(1, sizeof(*x));
	if (!f || !x) {
		free(f);
		free(x);
		xwm_log("--renderer xrender: no picture formats");
		return false;
	}
	x->cm = cm;
	x->root_depth = xwm->screen->root_depth;
	x->rgb24 = find_format(f, 24, 0);
	x->argb32 = find_format(f, 32, 0xff);
	x->screen_format = visual_format(f, xwm->screen->root_visual);
	free(f);
	if (!x->rgb24 || !x->argb32 || !x->screen_format) {
		xwm_log("--renderer xrender: the server lacks x8r8g8b8, a8r8g8b8 or the root "
		        "visual's picture format");
		free(x);
		return false;
	}
	cm->renderer = renderer_create_foreign(&xrender_engine, x);
	if (!cm->renderer) {
		free(x);
		return false;
	}
	cm->xrender = x;
	return true;
}

void xwm_xrender_finish(struct xwm_cm *cm)
{
	free(cm->xrender);
	cm->xrender = NULL;
}
