/* The scene: stacked textured rectangles with damage tracking and
 * occlusion culling, so an unchanged screen costs no GPU work and covered
 * content is never drawn. Views show parts of one scene (the compositor's
 * outputs side by side): each keeps the damage of its own rectangle, so
 * one output's change repaints that output only. The scene itself is the
 * view of its own 0,0 width x height. */
#include <math.h>
#include <stdlib.h>

#include "render-private.h"

struct render_scene_view {
	struct render_scene *scene;
	struct duet_list link;  /* render_scene.views */
	int x, y, width, height;  /* scene coordinates */
	pixman_region32_t damage; /* scene coordinates, within the view, not yet repainted */
};

struct render_scene {
	struct renderer *renderer;
	struct duet_list link; /* renderer.scenes */
	uint32_t background;
	struct duet_list nodes; /* bottom first: nodes.next is the lowest */
	struct render_scene_view self; /* 0,0 at the scene's size (render_scene_paint) */
	struct duet_list views;      /* self and render_scene_view_create's */
};

struct render_node {
	struct render_scene *scene;
	struct duet_list link;
	struct render_texture *tex;
	bool visible;
	int x, y;
	int width, height;            /* 0x0 = texture size */
	float src_x, src_y, src_w, src_h; /* src_w <= 0: whole texture */
	float alpha;
	int transform;                /* render_quad.transform */
	bool has_opaque;
	pixman_region32_t opaque;     /* node-local */
	pixman_region32_t paint_clip; /* scratch of render_scene_paint */
};

struct render_scene *render_scene_from_link(struct duet_list *link)
{
	return duet_container_of(link, struct render_scene, link);
}

static struct render_node *node_from_link(struct duet_list *link)
{
	return duet_container_of(link, struct render_node, link);
}

static void node_size(const struct render_node *n, int *w, int *h)
{
	if (n->width > 0 && n->height > 0) {
		*w = n->width;
		*h = n->height;
	} else if (n->tex) {
		*w = n->tex->width;
		*h = n->tex->height;
	} else {
		*w = 0;
		*h = 0;
	}
}

/* Positions and sizes come from clients (through the servers); clamping
 * keeps x + w from overflowing and within what pixman regions can hold. */
static int clamp_coord(int64_t v)
{
	return v < -2 * RENDER_COORD_LIMIT ? -2 * RENDER_COORD_LIMIT :
	       v > 2 * RENDER_COORD_LIMIT ? 2 * RENDER_COORD_LIMIT : (int)v;
}

void render_node_get_box(const struct render_node *n, pixman_box32_t *box)
{
	int w, h;

	node_size(n, &w, &h);
	box->x1 = clamp_coord(n->x);
	box->y1 = clamp_coord(n->y);
	box->x2 = clamp_coord((int64_t)n->x + w);
	box->y2 = clamp_coord((int64_t)n->y + h);
}

/* Whether the node puts any pixel on screen. */
static bool node_shown(const struct render_node *n)
{
	int w, h;

	node_size(n, &w, &h);
	/* Absurd geometry is not drawn (and so occludes nothing), rather
	 * than drawn wrongly. */
	if (n->x < -RENDER_COORD_LIMIT || n->x > RENDER_COORD_LIMIT ||
	    n->y < -RENDER_COORD_LIMIT || n->y > RENDER_COORD_LIMIT ||
	    w > RENDER_COORD_LIMIT || h > RENDER_COORD_LIMIT)
		return false;
	return n->visible && n->tex && w > 0 && h > 0 && n->alpha > 0.0f;
}

static struct render_scene_view *view_from_link(struct duet_list *link)
{
	return duet_container_of(link, struct render_scene_view, link);
}

/* A view's damage of more rectangles than this is kept as their bounding
 * box: a repaint draws each node once per rectangle of the damage, so a
 * client damaging thousands of scattered pixels between two frames would
 * have every frame drawn in thousands of draw calls (and merging more
 * rectangles into the region costs more with each). wlroots' damage ring
 * keeps 20. */
#define MAX_DAMAGE_RECTS 32

/* Damage in scene coordinates goes to every view it falls in. */
static void scene_add_damage(struct render_scene *s, const pixman_region32_t *damage)
{
	pixman_region32_t part;

	pixman_region32_init(&part);
	for (struct duet_list *l = s->views.next; l != &s->views; l = l->next) {
		struct render_scene_view *v = view_from_link(l);
		pixman_region32_intersect_rect(&part, (pixman_region32_t *)damage, v->x, v->y,
		                               (unsigned)v->width, (unsigned)v->height);
		pixman_region32_union(&v->damage, &v->damage, &part);
		if (pixman_region32_n_rects(&v->damage) > MAX_DAMAGE_RECTS) {
			pixman_box32_t e = *pixman_region32_extents(&v->damage);
			pixman_region32_fini(&v->damage);
			pixman_region32_init_rect(&v->damage, e.x1, e.y1, (unsigned)(e.x2 - e.x1),
			                          (unsigned)(e.y2 - e.y1));
		}
	}
	pixman_region32_fini(&part);
}

static void scene_add_damage_box(struct render_scene *s, const pixman_box32_t *b)
{
	pixman_region32_t r;

	pixman_region32_init_rect(&r, b->x1, b->y1, (unsigned)(b->x2 - b->x1),
	                          (unsigned)(b->y2 - b->y1));
	scene_add_damage(s, &r);
	pixman_region32_fini(&r);
}

/* Damages everything the node shows now; setters call it before and after
 * a change so both the old and the new look get repainted. */
static void node_damage_shown(struct render_node *n)
{
	pixman_box32_t box;

	if (!node_shown(n))
		return;
	render_node_get_box(n, &box);
	scene_add_damage_box(n->scene, &box);
}

/* The part of the output this node covers with fully opaque pixels. */
static void node_opaque_output(const struct render_node *n, pixman_region32_t *out)
{
	pixman_box32_t box;

	pixman_region32_clear(out);
	if (!node_shown(n) || n->alpha < 1.0f)
		return;
	render_node_get_box(n, &box);
	if (n->tex->format == RENDER_FORMAT_XRGB8888) {
		pixman_region32_union_rect(out, out, box.x1, box.y1,
		                           (unsigned)(box.x2 - box.x1), (unsigned)(box.y2 - box.y1));
		return;
	}
	if (!n->has_opaque)
		return;
	pixman_region32_copy(out, &n->opaque);
	pixman_region32_translate(out, n->x, n->y);
	pixman_region32_intersect_rect(out, out, box.x1, box.y1,
	                               (unsigned)(box.x2 - box.x1), (unsigned)(box.y2 - box.y1));
}

struct render_scene *render_scene_create(struct renderer *r, int width, int height,
                                         uint32_t background_argb)
{
	struct render_scene *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->renderer = r;
	s->background = background_argb;
	duet_list_init(&s->nodes);
	duet_list_init(&s->views);
	s->self.scene = s;
	s->self.width = width;
	s->self.height = height;
	pixman_region32_init_rect(&s->self.damage, 0, 0, (unsigned)width, (unsigned)height);
	duet_list_insert_after(&s->views, &s->self.link);
	duet_list_insert_after(&r->scenes, &s->link);
	return s;
}

struct render_scene_view *render_scene_view_create(struct render_scene *s, int x, int y,
                                                   int width, int height)
{
	struct render_scene_view *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->scene = s;
	v->x = x;
	v->y = y;
	v->width = width;
	v->height = height;
	pixman_region32_init_rect(&v->damage, x, y, (unsigned)width, (unsigned)height);
	duet_list_insert_after(s->views.prev, &v->link);
	return v;
}

void render_scene_view_destroy(struct render_scene_view *v)
{
	if (!v)
		return;
	duet_list_remove(&v->link);
	pixman_region32_fini(&v->damage);
	free(v);
}

void render_scene_view_damage_all(struct render_scene_view *v)
{
	pixman_region32_union_rect(&v->damage, &v->damage, v->x, v->y, (unsigned)v->width,
	                           (unsigned)v->height);
}

bool render_scene_view_has_damage(const struct render_scene_view *v)
{
	return pixman_region32_not_empty((pixman_region32_t *)&v->damage);
}

static void node_free(struct render_node *n)
{
	duet_list_remove(&n->link);
	pixman_region32_fini(&n->opaque);
	pixman_region32_fini(&n->paint_clip);
	free(n);
}

void render_scene_destroy(struct render_scene *s)
{
	if (!s)
		return;
	while (s->nodes.next != &s->nodes)
		node_free(node_from_link(s->nodes.next));
	while (s->views.next != &s->views) {
		struct render_scene_view *v = view_from_link(s->views.next);
		if (v == &s->self) {
			duet_list_remove(&v->link);
			pixman_region32_fini(&v->damage);
		} else {
			render_scene_view_destroy(v);
		}
	}
	duet_list_remove(&s->link);
	free(s);
}

void render_scene_forget_texture(struct render_scene *s, struct render_texture *tex)
{
	for (struct duet_list *l = s->nodes.next; l != &s->nodes; l = l->next) {
		struct render_node *n = node_from_link(l);
		if (n->tex == tex)
			render_node_set_texture(n, NULL);
	}
}

struct render_node *render_node_create(struct render_scene *s)
{
	struct render_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->scene = s;
	n->alpha = 1.0f;
	pixman_region32_init(&n->opaque);
	pixman_region32_init(&n->paint_clip);
	duet_list_insert_after(s->nodes.prev, &n->link);
	return n;
}

void render_node_destroy(struct render_node *n)
{
	if (!n)
		return;
	node_damage_shown(n);
	node_free(n);
}

void render_node_set_texture(struct render_node *n, struct render_texture *tex)
{
	if (n->tex == tex)
		return;
	node_damage_shown(n);
	n->tex = tex;
	node_damage_shown(n);
}

void render_node_set_visible(struct render_node *n, bool visible)
{
	if (n->visible == visible)
		return;
	node_damage_shown(n);
	n->visible = visible;
	node_damage_shown(n);
}

void render_node_set_position(struct render_node *n, int x, int y)
{
	if (n->x == x && n->y == y)
		return;
	node_damage_shown(n);
	n->x = x;
	n->y = y;
	node_damage_shown(n);
}

void render_node_set_size(struct render_node *n, int width, int height)
{
	if (width < 0 || height < 0)
		width = height = 0;
	if (n->width == width && n->height == height)
		return;
	node_damage_shown(n);
	n->width = width;
	n->height = height;
	node_damage_shown(n);
}

void render_node_set_transform(struct render_node *n, int transform)
{
	if (n->transform == transform)
		return;
	n->transform = transform;
	render_node_damage(n, NULL);
}

void render_node_set_source(struct render_node *n, float x, float y, float w, float h)
{
	if (!(w > 0) || !(h > 0))
		x = y = w = h = 0;
	if (n->src_x == x && n->src_y == y && n->src_w == w && n->src_h == h)
		return;
	node_damage_shown(n);
	n->src_x = x;
	n->src_y = y;
	n->src_w = w;
	n->src_h = h;
	node_damage_shown(n);
}

void render_node_set_alpha(struct render_node *n, float alpha)
{
	if (!(alpha > 0.0f)) /* also catches NaN */
		alpha = 0.0f;
	if (alpha > 1.0f)
		alpha = 1.0f;
	if (n->alpha == alpha)
		return;
	node_damage_shown(n);
	n->alpha = alpha;
	node_damage_shown(n);
}

void render_node_set_opaque_region(struct render_node *n, const pixman_region32_t *opaque)
{
	bool has = opaque && pixman_region32_not_empty(opaque);

	if (has == n->has_opaque && (!has || pixman_region32_equal(&n->opaque, opaque)))
		return;
	/* What is drawn does not change, but what is culled below it does:
	 * the content under a shrinking opaque region was never drawn. */
	node_damage_shown(n);
	if (has)
		pixman_region32_copy(&n->opaque, opaque);
	else
		pixman_region32_clear(&n->opaque);
	n->has_opaque = has;
}

void render_node_damage(struct render_node *n, const pixman_region32_t *damage)
{
	pixman_region32_t r;
	pixman_box32_t box;

	if (!node_shown(n))
		return;
	if (!damage) {
		node_damage_shown(n);
		return;
	}
	render_node_get_box(n, &box);
	pixman_region32_init(&r);
	pixman_region32_copy(&r, damage);
	pixman_region32_translate(&r, n->x, n->y);
	pixman_region32_intersect_rect(&r, &r, box.x1, box.y1, (unsigned)(box.x2 - box.x1),
	                               (unsigned)(box.y2 - box.y1));
	scene_add_damage(n->scene, &r);
	pixman_region32_fini(&r);
}

static void node_restack(struct render_node *n, struct duet_list *after)
{
	duet_list_remove(&n->link);
	duet_list_insert_after(after, &n->link);
	node_damage_shown(n);
}

void render_node_raise_to_top(struct render_node *n)
{
	if (n->link.next != &n->scene->nodes)
		node_restack(n, n->scene->nodes.prev);
}

void render_node_lower_to_bottom(struct render_node *n)
{
	if (n->link.prev != &n->scene->nodes)
		node_restack(n, &n->scene->nodes);
}

void render_node_place_above(struct render_node *n, struct render_node *sibling)
{
	if (n == sibling || sibling->scene != n->scene || sibling->link.next == &n->link)
		return;
	node_restack(n, &sibling->link);
}

void render_node_place_below(struct render_node *n, struct render_node *sibling)
{
	if (n == sibling || sibling->scene != n->scene || n->link.next == &sibling->link)
		return;
	/* Removing n first keeps sibling->link.prev valid as the anchor. */
	duet_list_remove(&n->link);
	duet_list_insert_after(sibling->link.prev, &n->link);
	node_damage_shown(n);
}

void render_scene_damage_all(struct render_scene *s)
{
	render_scene_view_damage_all(&s->self);
}

bool render_scene_has_damage(const struct render_scene *s)
{
	return render_scene_view_has_damage(&s->self);
}

static uint64_t region_area(const pixman_region32_t *region)
{
	const pixman_box32_t *b;
	uint64_t area = 0;
	int n;

	b = pixman_region32_rectangles(region, &n);
	for (int i = 0; i < n; i++)
		area += (uint64_t)(b[i].x2 - b[i].x1) * (uint64_t)(b[i].y2 - b[i].y1);
	return area;
}

/* Draws one node inside clip. The part under its opaque region is drawn
 * without blending: nothing was drawn below it (culled), so blending would
 * mix in stale pixels from the last frame. */
static void paint_node(struct renderer *r, struct render_node *n,
                       const pixman_region32_t *opaque, int ox, int oy)
{
	struct render_quad q;
	pixman_region32_t part;
	int w, h;
	float sw = n->src_w > 0 ? n->src_w : (float)n->tex->width;
	float sh = n->src_w > 0 ? n->src_h : (float)n->tex->height;

	node_size(n, &w, &h);
	q.x = n->x - ox;
	q.y = n->y - oy;
	q.width = w;
	q.height = h;
	q.src_x = n->src_x;
	q.src_y = n->src_y;
	q.src_w = n->src_w;
	q.src_h = n->src_h;
	q.alpha = n->alpha;
	q.transform = n->transform;
	/* Unscaled with whole-texel offsets: nearest gives the exact texels
	 * and is cheaper; scaled content gets linear filtering. */
	q.nearest = sw == (float)w && sh == (float)h &&
		n->src_x == floorf(n->src_x) && n->src_y == floorf(n->src_y);

	/* Regions are in scene coordinates, the target's origin is the view's. */
	pixman_region32_init(&part);
	pixman_region32_intersect(&part, &n->paint_clip, opaque);
	if (pixman_region32_not_empty(&part)) {
		q.opaque = true;
		pixman_region32_translate(&part, -ox, -oy);
		render_set_clip(r, &part);
		render_draw_texture(r, n->tex, &q);
	}
	pixman_region32_subtract(&part, &n->paint_clip, opaque);
	if (pixman_region32_not_empty(&part)) {
		q.opaque = false;
		pixman_region32_translate(&part, -ox, -oy);
		render_set_clip(r, &part);
		render_draw_texture(r, n->tex, &q);
	}
	pixman_region32_fini(&part);
}

bool render_scene_paint(struct render_scene *s, struct render_target *t,
                        pixman_region32_t *repainted)
{
	return render_scene_view_paint(&s->self, t, repainted);
}

bool render_scene_view_paint(struct render_scene_view *v, struct render_target *t,
                             pixman_region32_t *repainted)
{
	struct render_scene *s = v->scene;
	struct renderer *r = s->renderer;
	pixman_region32_t damage, covered, opaque, background;
	pixman_box32_t full = { 0, 0, v->width, v->height };
	struct duet_list *l;

	pixman_region32_init(&damage);
	pixman_region32_copy(&damage, &v->damage);
	pixman_region32_clear(&v->damage);
	if (repainted) {
		pixman_region32_copy(repainted, &damage);
		pixman_region32_translate(repainted, -v->x, -v->y);
	}
	if (!pixman_region32_not_empty(&damage)) {
		r->stats.skipped++;
		pixman_region32_fini(&damage);
		return false;
	}

	/* Top to bottom: each node gets the damage not yet covered by opaque
	 * content above it. */
	pixman_region32_init(&covered);
	pixman_region32_init(&opaque);
	for (l = s->nodes.prev; l != &s->nodes; l = l->prev) {
		struct render_node *n = node_from_link(l);
		pixman_box32_t box;

		pixman_region32_clear(&n->paint_clip);
		if (!node_shown(n))
			continue;
		render_node_get_box(n, &box);
		pixman_region32_intersect_rect(&n->paint_clip, &damage, box.x1, box.y1,
		                               (unsigned)(box.x2 - box.x1),
		                               (unsigned)(box.y2 - box.y1));
		pixman_region32_subtract(&n->paint_clip, &n->paint_clip, &covered);
		node_opaque_output(n, &opaque);
		pixman_region32_union(&covered, &covered, &opaque);
	}
	pixman_region32_init(&background);
	pixman_region32_subtract(&background, &damage, &covered);
	pixman_region32_translate(&background, -v->x, -v->y);
	r->stats.painted_pixels += region_area(&damage);
	pixman_region32_translate(&damage, -v->x, -v->y);

	render_begin(r, t, &damage);
	if (pixman_region32_not_empty(&background)) {
		render_set_clip(r, &background);
		render_fill_replace(r, &full, s->background);
	}
	for (l = s->nodes.next; l != &s->nodes; l = l->next) {
		struct render_node *n = node_from_link(l);
		if (!pixman_region32_not_empty(&n->paint_clip))
			continue;
		node_opaque_output(n, &opaque);
		paint_node(r, n, &opaque, v->x, v->y);
	}
	render_end(r);

	r->stats.frames++;
	pixman_region32_fini(&background);
	pixman_region32_fini(&opaque);
	pixman_region32_fini(&covered);
	pixman_region32_fini(&damage);
	return true;
}
