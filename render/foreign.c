/* Foreign engines (render.h): the scene's draws handed to a caller's engine
 * that draws where render/ cannot reach, such as duet-xwm's XRender engine
 * inside the X server. Every call of struct render_engine has its answer
 * here, so renderer.c and texture.c treat a foreign renderer like the two
 * of their own: the clip, the checks of a quad and the stats stay theirs,
 * and a foreign texture refuses uploads as an imported dmabuf does. */
#include <stdlib.h>

#include "render-private.h"

struct renderer *renderer_create_foreign(const struct render_foreign_engine *engine, void *data)
{
	struct renderer *r;

	if (!engine || !engine->name || !engine->begin || !engine->end || !engine->fill ||
	    !engine->draw_texture) {
		render_log("a foreign engine needs a name and all of its calls");
		return NULL;
	}
	r = render_renderer_alloc(&render_foreign_engine, NULL);
	if (!r)
		return NULL;
	r->name = engine->name;
	r->foreign = engine;
	r->foreign_data = data;
	render_log("renderer: %s (foreign)", engine->name);
	return r;
}

struct render_texture *render_texture_create_foreign(struct renderer *r,
                                                     enum render_format format,
                                                     int width, int height, void *handle)
{
	struct render_texture *tex;

	if (!r->foreign || !handle) {
		render_log("a foreign texture needs a foreign renderer and a handle");
		return NULL;
	}
	tex = render_texture_alloc(r, format, width, height);
	if (tex)
		tex->foreign = handle;
	return tex;
}

static void fg_destroy(struct renderer *r)
{
	(void)r;
}

static void fg_begin(struct renderer *r, struct render_target *t)
{
	r->foreign->begin(r->foreign_data, t->foreign);
}

static void fg_end(struct renderer *r)
{
	r->foreign->end(r->foreign_data);
}

static void fg_fill(struct renderer *r, const pixman_box32_t *box, uint32_t argb, bool blend)
{
	pixman_region32_t region;
	int n;
	const pixman_box32_t *rects = render_clip_box(r, box, &region, &n);

	if (n > 0)
		r->foreign->fill(r->foreign_data, rects, n, argb, blend);
	pixman_region32_fini(&region);
}

static void fg_draw_texture(struct renderer *r, struct render_texture *tex,
                            const struct render_draw *d)
{
	pixman_region32_t region;
	int n;
	const pixman_box32_t *rects = render_clip_box(r, &d->dst, &region, &n);

	if (n > 0 && d->alpha >= 1.0f)
		r->stats.copy_quads += (uint64_t)n;
	if (n > 0)
		r->foreign->draw_texture(r->foreign_data, tex->foreign, rects, n, d);
	pixman_region32_fini(&region);
}

/* Textures come only from render_texture_create_foreign. */
static bool fg_texture_init(struct render_texture *tex)
{
	(void)tex;
	render_log("a %s renderer's textures are its owner's: render_texture_create_foreign",
	           tex->renderer->name);
	return false;
}

static bool fg_texture_wrap(struct render_texture *tex, void *data, int stride)
{
	(void)data;
	(void)stride;
	render_log("a %s texture cannot wrap memory", tex->renderer->name);
	return false;
}

static bool fg_texture_unwrap(struct render_texture *tex)
{
	(void)tex;
	return false;
}

static void fg_texture_fini(struct render_texture *tex)
{
	struct renderer *r = tex->renderer;

	if (tex->foreign && r->foreign->texture_destroy)
		r->foreign->texture_destroy(r->foreign_data, tex->foreign);
}

/* Never reached: texture.c refuses uploads into a foreign texture first. */
static void fg_upload_begin(struct render_texture *tex)
{
	(void)tex;
}

static int fg_upload_box(struct render_texture *tex, const char *pixels, int stride,
                         int x, int y, int w, int h)
{
	(void)tex, (void)pixels, (void)stride, (void)x, (void)y, (void)w, (void)h;
	return -1;
}

static int fg_upload_end(struct render_texture *tex, int ret)
{
	(void)tex;
	return ret;
}

const struct render_engine render_foreign_engine = {
	.name = "foreign",
	.destroy = fg_destroy,
	.begin = fg_begin,
	.end = fg_end,
	.fill = fg_fill,
	.draw_texture = fg_draw_texture,
	.texture_init = fg_texture_init,
	.texture_wrap = fg_texture_wrap,
	.texture_unwrap = fg_texture_unwrap,
	.texture_fini = fg_texture_fini,
	.upload_begin = fg_upload_begin,
	.upload_box = fg_upload_box,
	.upload_end = fg_upload_end,
};

/* ------------------------------------------------------------- targets */

struct foreign_target {
	struct render_target base;
	struct render_target_impl impl; /* its engine's name is the renderer's */
	const struct render_foreign_target_ops *ops;
};

static struct foreign_target *foreign_target(struct render_target *t)
{
	return duet_container_of(t, struct foreign_target, base);
}

static int ft_present(struct render_target *t, const pixman_region32_t *damage)
{
	return foreign_target(t)->ops->present(t->foreign, damage);
}

static int ft_flush(struct render_target *t)
{
	const struct render_foreign_target_ops *ops = foreign_target(t)->ops;

	return ops->flush ? ops->flush(t->foreign) : 0;
}

/* The owner's drawing is ordered after flush returns (the X server runs
 * requests in order): nothing is left to wait for on this side. */
static bool ft_frame_done(struct render_target *t)
{
	(void)t;
	return true;
}

static int ft_read_pixels(struct render_target *t, int x, int y, int w, int h, uint32_t *first,
                          int dst_stride_bytes)
{
	return foreign_target(t)->ops->read_pixels(t->foreign, x, y, w, h, first,
	                                           dst_stride_bytes);
}

static void ft_destroy(struct render_target *t)
{
	struct foreign_target *f = foreign_target(t);

	f->ops->destroy(t->foreign);
	free(f);
}

struct render_target *render_target_create_foreign(struct renderer *r, int width, int height,
                                                   const struct render_foreign_target_ops *ops,
                                                   void *data)
{
	struct foreign_target *f;

	if (!r->foreign || !ops || !ops->present || !ops->read_pixels || !ops->destroy ||
	    width <= 0 || height <= 0) {
		render_log("a foreign target needs a foreign renderer, a size and its calls");
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->impl = (struct render_target_impl){
		.engine = r->name,
		.present = ft_present,
		.flush = ft_flush,
		.frame_done = ft_frame_done,
		.read_pixels = ft_read_pixels,
		.destroy = ft_destroy,
	};
	f->ops = ops;
	f->base.impl = &f->impl;
	f->base.width = width;
	f->base.height = height;
	f->base.repaint_path = ops->repaint_path ? ops->repaint_path : "foreign";
	f->base.foreign = data;
	return &f->base;
}
