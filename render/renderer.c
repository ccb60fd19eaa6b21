/* What both drawing engines share: the renderer's life, its clip region and
 * stats, and the checks that turn a render_quad into what an engine draws
 * (struct render_draw). The drawing itself is the engine's (gles2.c,
 * pixman-draw.c), so a frame costs the same bookkeeping on either. */
#include <math.h>
#include <stdlib.h>

#include "render-private.h"

struct renderer *render_renderer_alloc(const struct render_engine *engine,
                                       struct render_egl *egl)
{
	struct renderer *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->engine = engine;
	r->name = engine->name;
	r->egl = egl;
	duet_list_init(&r->scenes);
	pixman_region32_init(&r->clip);
	r->program = -1;
	return r;
}

void renderer_destroy(struct renderer *r)
{
	if (!r)
		return;
	r->engine->destroy(r);
	pixman_region32_fini(&r->clip);
	free(r->scratch);
	free(r);
}

const struct render_stats *renderer_stats(const struct renderer *r)
{
	return &r->stats;
}

const char *renderer_engine_name(const struct renderer *r)
{
	return r->name;
}

void render_set_clip(struct renderer *r, const pixman_region32_t *clip)
{
	struct render_target *t = r->target;

	if (!t)
		return;
	pixman_region32_fini(&r->clip);
	pixman_region32_init_rect(&r->clip, 0, 0, (unsigned)t->width, (unsigned)t->height);
	if (clip)
		pixman_region32_intersect(&r->clip, &r->clip, clip);
}

const pixman_box32_t *render_clip_box(struct renderer *r, const pixman_box32_t *box,
                                      pixman_region32_t *out, int *n)
{
	pixman_region32_init_rect(out, box->x1, box->y1, (unsigned)(box->x2 - box->x1),
	                          (unsigned)(box->y2 - box->y1));
	pixman_region32_intersect(out, out, &r->clip);
	const pixman_box32_t *rects = pixman_region32_rectangles(out, n);
	r->stats.quads += (uint64_t)*n;
	return rects;
}

/* u,v (0..1 of the texture) = a*s + b*t + c, d*s + e*t + f for s,t (0..1
 * of the quad's source in the transformed texture): gles2.c's
 * transform_coord as coefficients. */
static const double transforms[8][6] = {
	{ 1, 0, 0, 0, 1, 0 },   /* normal */
	{ 0, 1, 0, -1, 0, 1 },  /* 90 */
	{ -1, 0, 1, 0, -1, 1 }, /* 180 */
	{ 0, -1, 1, 1, 0, 0 },  /* 270 */
	{ -1, 0, 1, 0, 1, 0 },  /* flipped */
	{ 0, 1, 0, 1, 0, 0 },   /* flipped 90 */
	{ 1, 0, 0, 0, -1, 1 },  /* flipped 180 */
	{ 0, -1, 1, -1, 0, 1 }, /* flipped 270 */
};

bool render_draw_source_transform(const struct render_draw *d, int tex_w, int tex_h,
                                  pixman_transform_t *t, int *dx, int *dy)
{
	double dw = d->dst.x2 - d->dst.x1, dh = d->dst.y2 - d->dst.y1;

	if (d->transform == 0 && d->sw == (float)dw && d->sh == (float)dh &&
	    d->sx == floorf(d->sx) && d->sy == floorf(d->sy)) {
		*dx = (int)d->sx - d->dst.x1;
		*dy = (int)d->sy - d->dst.y1;
		return false;
	}
	/* s = ks * X + cs, t = kt * Y + ct for output pixel X, Y. */
	double ks = d->sw / (dw * d->tw), cs = (d->sx - d->dst.x1 * d->sw / dw) / d->tw;
	double kt = d->sh / (dh * d->th), ct = (d->sy - d->dst.y1 * d->sh / dh) / d->th;
	const double *m = transforms[d->transform & 7];
	double w = tex_w, h = tex_h;
	pixman_transform_t x = { { {
		pixman_double_to_fixed(w * m[0] * ks), pixman_double_to_fixed(w * m[1] * kt),
		pixman_double_to_fixed(w * (m[0] * cs + m[1] * ct + m[2])),
	}, {
		pixman_double_to_fixed(h * m[3] * ks), pixman_double_to_fixed(h * m[4] * kt),
		pixman_double_to_fixed(h * (m[3] * cs + m[4] * ct + m[5])),
	}, { 0, 0, pixman_fixed_1 } } };

	*t = x;
	*dx = 0;
	*dy = 0;
	return true;
}

void render_begin(struct renderer *r, struct render_target *t,
                  const pixman_region32_t *clip)
{
	/* A GL target bound by the pixman engine, or memory drawn by GL, would
	 * draw nowhere or somewhere else: refused, and each draw until
	 * render_end does nothing. */
	r->target = NULL;
	if (strcmp(t->impl->engine, r->name) != 0) {
		render_log("render_begin: a target of the %s engine cannot be drawn by the %s "
		           "engine", t->impl->engine, r->name);
		return;
	}
	r->engine->begin(r, t);
	r->target = t;
	render_set_clip(r, clip);
}

void render_end(struct renderer *r)
{
	if (r->target)
		r->engine->end(r);
	r->target = NULL;
}

void render_fill(struct renderer *r, const pixman_box32_t *box, uint32_t argb)
{
	uint32_t a = argb >> 24;

	if (!r->target || box->x2 <= box->x1 || box->y2 <= box->y1)
		return;
	if (a == 0 && (argb & 0xffffff) == 0)
		return; /* premultiplied transparent: blending would change nothing */
	r->engine->fill(r, box, argb, a != 0xff);
}

void render_fill_replace(struct renderer *r, const pixman_box32_t *box, uint32_t argb)
{
	if (!r->target || box->x2 <= box->x1 || box->y2 <= box->y1)
		return;
	r->engine->fill(r, box, argb, false);
}

void render_draw_texture(struct renderer *r, struct render_texture *tex,
                         const struct render_quad *q)
{
	struct render_draw d;
	float alpha = q->alpha > 1.0f ? 1.0f : q->alpha;

	if (!r->target || q->width <= 0 || q->height <= 0 || !(alpha > 0.0f) ||
	    q->x < -RENDER_COORD_LIMIT || q->y < -RENDER_COORD_LIMIT ||
	    q->x > RENDER_COORD_LIMIT || q->y > RENDER_COORD_LIMIT ||
	    q->width > RENDER_COORD_LIMIT || q->height > RENDER_COORD_LIMIT)
		return; /* nothing to see, or outside what any output can show */
	d.dst.x1 = q->x;
	d.dst.y1 = q->y;
	d.dst.x2 = q->x + q->width;
	d.dst.y2 = q->y + q->height;
	/* The source rect is in the transformed texture: 90 and 270 degrees
	 * swap its axes. */
	d.tw = (float)(q->transform & 1 ? tex->height : tex->width);
	d.th = (float)(q->transform & 1 ? tex->width : tex->height);
	d.sx = q->src_x;
	d.sy = q->src_y;
	d.sw = q->src_w;
	d.sh = q->src_h;
	if (d.sw <= 0 || d.sh <= 0) {
		d.sx = 0;
		d.sy = 0;
		d.sw = d.tw;
		d.sh = d.th;
	}
	d.alpha = alpha;
	d.opaque = alpha >= 1.0f && (q->opaque || tex->format == RENDER_FORMAT_XRGB8888);
	d.nearest = q->nearest;
	d.transform = q->transform & 7;
	r->engine->draw_texture(r, tex, &d);
}
