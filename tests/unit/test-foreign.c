/* Foreign engines (render.h): a scene drawn through one gives the pixman
 * engine's pixels, so duet-xwm's XRender engine (pixman inside Xvfb) is
 * handed the same draws as the others.
 *
 * The engine here draws with pixman into an image of its own, from what
 * render/ hands it alone (the clipped rectangles and struct render_draw,
 * sampled through render_draw_source_transform), as xwm/xrender.c turns
 * them into Render requests. The same scene (opaque and blended windows,
 * one at half alpha, one scaled, one turned, a partial repaint) is painted
 * by render/'s pixman engine, and the two frames must be identical. Also:
 * uploads into a foreign texture are refused, a foreign renderer makes no
 * textures of its own, destroying a texture hands its handle back, and a
 * foreign target is refused to the other engines. */
#include "unit.h"

#define W 96
#define H 72

struct image_texture {
	pixman_image_t *image;
	int destroyed;
};

struct engine_state {
	pixman_image_t *target; /* begin's */
	int begins, ends, fills, draws;
	struct image_texture *last_destroyed;
};

static void e_begin(void *data, void *target)
{
	struct engine_state *s = data;

	s->target = target;
	s->begins++;
}

static void e_end(void *data)
{
	((struct engine_state *)data)->ends++;
}

static pixman_color_t color_of(uint32_t argb)
{
	return (pixman_color_t){ (uint16_t)(((argb >> 16) & 0xff) * 0x101),
	                         (uint16_t)(((argb >> 8) & 0xff) * 0x101),
	                         (uint16_t)((argb & 0xff) * 0x101),
	                         (uint16_t)((argb >> 24) * 0x101) };
}

static void e_fill(void *data, const pixman_box32_t *rects, int n, uint32_t argb, bool blend)
{
	struct engine_state *s = data;
	pixman_color_t c = color_of(argb);

	pixman_image_fill_boxes(blend ? PIXMAN_OP_OVER : PIXMAN_OP_SRC, s->target, &c, n, rects);
	s->fills++;
}

static void e_draw(void *data, void *texture, const pixman_box32_t *rects, int n,
                   const struct render_draw *d)
{
	struct engine_state *s = data;
	struct image_texture *t = texture;
	pixman_image_t *src = t->image, *mask = NULL;
	pixman_transform_t m;
	int dx, dy;

	if (render_draw_source_transform(d, pixman_image_get_width(src),
	                                 pixman_image_get_height(src), &m, &dx, &dy)) {
		pixman_image_set_transform(src, &m);
		pixman_image_set_filter(src, d->nearest ? PIXMAN_FILTER_NEAREST
		                                        : PIXMAN_FILTER_BILINEAR, NULL, 0);
		pixman_image_set_repeat(src, PIXMAN_REPEAT_PAD);
	} else {
		pixman_image_set_transform(src, NULL);
		pixman_image_set_filter(src, PIXMAN_FILTER_NEAREST, NULL, 0);
		pixman_image_set_repeat(src, PIXMAN_REPEAT_NONE);
	}
	if (d->alpha < 1.0f) {
		pixman_color_t c = { 0, 0, 0, (uint16_t)(d->alpha * 0xffff + 0.5f) };
		mask = pixman_image_create_solid_fill(&c);
	}
	for (int i = 0; i < n; i++)
		pixman_image_composite32(d->opaque ? PIXMAN_OP_SRC : PIXMAN_OP_OVER, src, mask,
		                         s->target, rects[i].x1 + dx, rects[i].y1 + dy, 0, 0,
		                         rects[i].x1, rects[i].y1, rects[i].x2 - rects[i].x1,
		                         rects[i].y2 - rects[i].y1);
	if (mask)
		pixman_image_unref(mask);
	s->draws++;
}

static void e_texture_destroy(void *data, void *texture)
{
	struct image_texture *t = texture;

	((struct engine_state *)data)->last_destroyed = t;
	t->destroyed++;
}

static const struct render_foreign_engine engine = {
	.name = "test-foreign",
	.begin = e_begin,
	.end = e_end,
	.fill = e_fill,
	.draw_texture = e_draw,
	.texture_destroy = e_texture_destroy,
};

/* The foreign target: the image itself. */
static int t_present(void *data, const pixman_region32_t *damage)
{
	(void)data;
	(void)damage;
	return 0;
}

static int t_read(void *data, int x, int y, int w, int h, uint32_t *first, int stride)
{
	pixman_image_t *img = data;
	int src_stride = pixman_image_get_stride(img);
	const char *src = (const char *)pixman_image_get_data(img) + (size_t)y * src_stride +
	                  (size_t)x * 4;

	for (int row = 0; row < h; row++)
		memcpy((char *)first + (size_t)row * stride, src + (size_t)row * src_stride,
		       (size_t)w * 4);
	return 0;
}

static int target_destroyed;

static void t_destroy(void *data)
{
	pixman_image_unref(data);
	target_destroyed++;
}

static const struct render_foreign_target_ops target_ops = {
	.repaint_path = "test-image",
	.present = t_present,
	.read_pixels = t_read,
	.destroy = t_destroy,
};

/* A texture's pixels: seeded gradients, premultiplied where it has alpha. */
static uint32_t *pixels(int w, int h, int seed, bool alpha)
{
	uint32_t *p = malloc((size_t)w * h * 4);

	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			uint32_t a = alpha ? (uint32_t)((x * 7 + y * 3 + seed) % 256) : 255;
			uint32_t r = (uint32_t)((x * 11 + seed * 5) % 256) * a / 255;
			uint32_t g = (uint32_t)((y * 13 + seed * 3) % 256) * a / 255;
			uint32_t b = (uint32_t)((x + y + seed) % 256) * a / 255;
			p[y * w + x] = a << 24 | r << 16 | g << 8 | b;
		}
	return p;
}

struct window {
	int w, h, seed;
	bool alpha;
	int x, y, dw, dh; /* dw 0: unscaled */
	float opacity;
	int transform;
};

static const struct window windows[] = {
	{ 40, 30, 1, false, 4, 6, 0, 0, 1.0f, 0 },
	{ 32, 24, 2, true, 30, 20, 0, 0, 1.0f, 0 },
	{ 20, 20, 3, false, 50, 10, 0, 0, 0.5f, 0 },
	{ 16, 12, 4, false, 10, 40, 48, 30, 1.0f, 0 },   /* scaled */
	{ 24, 16, 5, true, 60, 40, 0, 0, 1.0f, 1 },      /* turned 90 */
};
#define NWINDOWS (sizeof(windows) / sizeof(windows[0]))

/* Paints the scene twice (all, then a part after moving one window) into
 * t through r, and returns the final frame, read back. handles: the
 * foreign textures' (NULL: the pixman engine's own textures). */
static uint32_t *paint(struct renderer *r, struct render_target *t,
                       struct image_texture *handles, uint32_t **data)
{
	struct render_scene *scene = render_scene_create(r, W, H, 0xff202830);
	struct render_texture *tex[NWINDOWS];
	struct render_node *node[NWINDOWS];

	for (size_t i = 0; i < NWINDOWS; i++) {
		const struct window *w = &windows[i];
		enum render_format f = w->alpha ? RENDER_FORMAT_ARGB8888 : RENDER_FORMAT_XRGB8888;
		if (handles) {
			tex[i] = render_texture_create_foreign(r, f, w->w, w->h, &handles[i]);
		} else {
			tex[i] = render_texture_create(r, f, w->w, w->h);
			render_texture_upload(tex[i], data[i], w->w * 4, NULL);
		}
		node[i] = render_node_create(scene);
		render_node_set_texture(node[i], tex[i]);
		render_node_set_position(node[i], w->x, w->y);
		if (w->dw)
			render_node_set_size(node[i], w->dw, w->dh);
		render_node_set_alpha(node[i], w->opacity);
		render_node_set_transform(node[i], w->transform);
		render_node_set_visible(node[i], true);
	}
	render_scene_paint(scene, t, NULL);
	render_node_set_position(node[0], 12, 14);
	render_scene_paint(scene, t, NULL);

	uint32_t *out = malloc(W * H * 4);
	pixman_box32_t all = { 0, 0, W, H };
	CHECK(render_target_read_pixels(t, &all, out, W * 4) == 0, "read back");
	render_scene_destroy(scene);
	for (size_t i = 0; i < NWINDOWS; i++)
		render_texture_destroy(tex[i]);
	return out;
}

int main(void)
{
	uint32_t *data[NWINDOWS];
	struct image_texture handles[NWINDOWS];
	struct engine_state state = { 0 };

	for (size_t i = 0; i < NWINDOWS; i++) {
		const struct window *w = &windows[i];
		data[i] = pixels(w->w, w->h, w->seed, w->alpha);
		handles[i] = (struct image_texture){
			pixman_image_create_bits(w->alpha ? PIXMAN_a8r8g8b8 : PIXMAN_x8r8g8b8, w->w,
			                         w->h, data[i], w->w * 4), 0 };
	}

	unit_say("a scene through a foreign engine gives the pixman engine's pixels");
	struct renderer *px = renderer_create_pixman();
	struct render_target *pt = render_target_create_memory(W, H);
	uint32_t *want = paint(px, pt, NULL, data);

	struct renderer *fr = renderer_create_foreign(&engine, &state);
	CHECK(fr != NULL, "renderer_create_foreign");
	CHECK(strcmp(renderer_engine_name(fr), "test-foreign") == 0, "engine name %s",
	      renderer_engine_name(fr));
	pixman_image_t *img = pixman_image_create_bits(PIXMAN_a8r8g8b8, W, H, NULL, 0);
	struct render_target *ft = render_target_create_foreign(fr, W, H, &target_ops, img);
	CHECK(ft != NULL, "render_target_create_foreign");
	CHECK(strcmp(render_target_repaint_path(ft), "test-image") == 0, "repaint path");
	uint32_t *got = paint(fr, ft, handles, NULL);
	int differ = 0, first = -1;
	for (int i = 0; i < W * H; i++)
		if (got[i] != want[i]) {
			differ++;
			if (first < 0)
				first = i;
		}
	CHECK(differ == 0, "%d pixels differ, first at %d,%d: 0x%08x, pixman 0x%08x", differ,
	      first % W, first / W, first >= 0 ? got[first] : 0, first >= 0 ? want[first] : 0);
	CHECK(state.begins == 2 && state.ends == 2, "begin/end %d/%d for two frames",
	      state.begins, state.ends);
	CHECK(state.draws > (int)NWINDOWS && state.fills > 0, "%d draws, %d fills", state.draws,
	      state.fills);
	const struct render_stats *fs = renderer_stats(fr), *ps = renderer_stats(px);
	CHECK(fs->quads == ps->quads, "quads %llu, pixman's %llu",
	      (unsigned long long)fs->quads, (unsigned long long)ps->quads);

	unit_say("destroying a foreign texture hands its handle to the engine");
	for (size_t i = 0; i < NWINDOWS; i++)
		CHECK(handles[i].destroyed == 1, "texture %zu destroyed %d times", i,
		      handles[i].destroyed);

	unit_say("a foreign texture takes no uploads; a foreign renderer makes none of its own");
	struct image_texture extra = { handles[0].image, 0 };
	struct render_texture *tex = render_texture_create_foreign(fr, RENDER_FORMAT_XRGB8888,
	                                                           40, 30, &extra);
	CHECK(tex && render_texture_is_imported(tex), "a foreign texture is its owner's");
	CHECK(render_texture_upload(tex, data[0], 40 * 4, NULL) == -1, "upload refused");
	pixman_box32_t box = { 0, 0, 4, 4 };
	CHECK(render_texture_upload_rect(tex, data[0], 40 * 4, &box) == -1, "rect refused");
	render_texture_destroy(tex);
	CHECK(extra.destroyed == 1 && state.last_destroyed == &extra, "handle handed back");
	CHECK(render_texture_create(fr, RENDER_FORMAT_XRGB8888, 8, 8) == NULL,
	      "render_texture_create on a foreign renderer");
	CHECK(render_texture_create_foreign(px, RENDER_FORMAT_XRGB8888, 8, 8, &extra) == NULL,
	      "a foreign texture of the pixman engine");
	CHECK(render_texture_create_foreign(fr, RENDER_FORMAT_XRGB8888, 0, 8, &extra) == NULL,
	      "a foreign texture of no size");

	unit_say("the other engines refuse a foreign target, and it refuses them");
	int draws = state.draws, fills = state.fills;
	render_begin(px, ft, NULL);
	render_fill(px, &(pixman_box32_t){ 0, 0, W, H }, 0xffff0000);
	render_end(px);
	uint32_t corner = 0;
	render_target_read_pixels(ft, &(pixman_box32_t){ 0, 0, 1, 1 }, &corner, 4);
	CHECK(corner == got[0], "the pixman engine drew on a foreign target: 0x%08x", corner);
	render_begin(fr, pt, NULL);
	render_fill(fr, &(pixman_box32_t){ 0, 0, W, H }, 0xffff0000);
	render_end(fr);
	CHECK(state.draws == draws && state.fills == fills, "the foreign engine drew on a memory "
	      "target");

	render_target_destroy(ft);
	CHECK(target_destroyed == 1, "the target's destroy called once");
	render_target_destroy(pt);
	renderer_destroy(fr);
	renderer_destroy(px);
	free(want);
	free(got);
	for (size_t i = 0; i < NWINDOWS; i++) {
		pixman_image_unref(handles[i].image);
		free(data[i]);
	}
	return unit_finish("test-foreign");
}
