/* Damage tracking of the scene: an unchanged scene repaints nothing, each
 * change repaints exactly what it changed (damage of many rectangles as
 * their bounding box), covered nodes are not drawn, and incremental
 * repaints give the same image as a full one. */
#include <limits.h>

#include "unit.h"

#define W 64
#define H 48
#define BG 0xff202020u

static struct renderer *r;
static struct render_target *t;
static struct render_scene *s;

struct snap {
	uint64_t frames, skipped, quads, uploaded;
};

static struct snap snap(void)
{
	const struct render_stats *st = renderer_stats(r);
	struct snap v = { st->frames, st->skipped, st->quads, st->uploaded_bytes };
	return v;
}

static void print_region(const char *label, const pixman_region32_t *reg)
{
	int n;
	const pixman_box32_t *b = pixman_region32_rectangles(reg, &n);

	fprintf(stderr, "  %s:", label);
	for (int i = 0; i < n; i++)
		fprintf(stderr, " (%d,%d)-(%d,%d)", b[i].x1, b[i].y1, b[i].x2, b[i].y2);
	fprintf(stderr, "%s\n", n ? "" : " empty");
}

/* Paints and checks that exactly `want` was repainted (NULL: nothing). */
static void paint_expect(const pixman_region32_t *want, const char *what)
{
	pixman_region32_t got;
	bool painted;

	pixman_region32_init(&got);
	painted = render_scene_paint(s, t, &got);
	CHECK(painted == (want != NULL), "%s: paint returned %d", what, painted);
	if (want) {
		bool eq = pixman_region32_equal(&got, want);
		CHECK(eq, "%s: repainted region differs", what);
		if (!eq) {
			print_region("repainted", &got);
			print_region("expected", want);
		}
	} else {
		CHECK(!pixman_region32_not_empty(&got), "%s: repainted something", what);
	}
	CHECK(!render_scene_has_damage(s), "%s: damage left after paint", what);
	pixman_region32_fini(&got);
}

static void paint_expect_rect(int x, int y, int w, int h, const char *what)
{
	pixman_region32_t want;

	pixman_region32_init_rect(&want, x, y, (unsigned)w, (unsigned)h);
	paint_expect(&want, what);
	pixman_region32_fini(&want);
}

static uint32_t pixel(int x, int y)
{
	uint32_t p = 0;
	pixman_box32_t box = { x, y, x + 1, y + 1 };

	render_target_read_pixels(t, &box, &p, 4);
	return p;
}

static void expect_rect(int x1, int y1, int x2, int y2, uint32_t want, const char *what)
{
	for (int y = y1; y < y2; y++)
		for (int x = x1; x < x2; x++)
			if (pixel(x, y) != want) {
				CHECK(false, "%s: %d,%d is %08x want %08x", what, x, y, pixel(x, y), want);
				return;
			}
}

struct image {
	int w, h;
	uint32_t *px;
	struct render_texture *tex;
};

static void image_init(struct image *img, enum render_format f, int w, int h, uint32_t c)
{
	img->w = w;
	img->h = h;
	img->px = malloc((size_t)w * h * 4);
	for (int i = 0; i < w * h; i++)
		img->px[i] = c;
	img->tex = render_texture_create(r, f, w, h);
	CHECK(img->tex != NULL, "texture");
	render_texture_upload(img->tex, img->px, w * 4, NULL);
}

static struct render_node *node(struct render_texture *tex, int x, int y)
{
	struct render_node *n = render_node_create(s);

	render_node_set_texture(n, tex);
	render_node_set_position(n, x, y);
	render_node_set_visible(n, true);
	return n;
}

/* The image after incremental repaints must equal a full repaint. */
static void check_incremental_equals_full(const char *when)
{
	static uint32_t a[W * H], b[W * H];
	pixman_box32_t all = { 0, 0, W, H };

	unit_say("incremental repaints equal a full repaint (%s)", when);
	render_target_read_pixels(t, &all, a, W * 4);
	render_scene_damage_all(s);
	render_scene_paint(s, t, NULL);
	render_target_read_pixels(t, &all, b, W * 4);
	for (int i = 0; i < W * H; i++)
		if (a[i] != b[i]) {
			CHECK(false, "%s: pixel %d,%d incremental %08x full %08x", when, i % W, i / W,
			      a[i], b[i]);
			break;
		}
}

/* Two views side by side on one scene (two outputs): each paints its own
 * part, only its own damage, in its target's coordinates. */
static void test_views(struct render_egl *egl, struct render_texture *tex)
{
	struct render_target *t2 = unit_target(egl, W, H);
	struct render_scene *shared = render_scene_create(r, 0, 0, BG);
	struct render_scene_view *v1 = render_scene_view_create(shared, 0, 0, W, H);
	struct render_scene_view *v2 = render_scene_view_create(shared, W, 0, W, H);
	pixman_region32_t got, want;
	struct render_target *saved = t;

	unit_say("views: a node across two views is drawn on both, in each one's coordinates");
	CHECK(t2 && shared && v1 && v2, "views");
	pixman_region32_init(&got);
	pixman_region32_init(&want);
	CHECK(render_scene_view_paint(v1, t, NULL) && render_scene_view_paint(v2, t2, NULL),
	      "views start damaged");
	struct render_node *n = render_node_create(shared);
	render_node_set_texture(n, tex); /* 16x16, 8 on each side */
	render_node_set_position(n, W - 8, 4);
	render_node_set_visible(n, true);
	render_scene_view_paint(v1, t, &got);
	pixman_region32_init_rect(&want, W - 8, 4, 8, 16);
	CHECK(pixman_region32_equal(&got, &want), "first view repainted another region");
	render_scene_view_paint(v2, t2, &got);
	pixman_region32_fini(&want);
	pixman_region32_init_rect(&want, 0, 4, 8, 16);
	CHECK(pixman_region32_equal(&got, &want), "second view repainted another region");
	expect_rect(W - 8, 4, W, 20, 0xffff00ff, "left half on the first view");
	expect_rect(W - 9, 4, W - 8, 20, BG, "left of the node on the first view");
	t = t2;
	expect_rect(0, 4, 8, 20, 0xffff00ff, "right half on the second view");
	expect_rect(8, 4, 9, 20, BG, "right of the node on the second view");
	t = saved;

	unit_say("views: damage on one view does not repaint the other");
	render_node_set_position(n, W + 20, 4);
	CHECK(render_scene_view_has_damage(v1), "the first view lost what left it");
	render_scene_view_paint(v1, t, NULL);
	render_scene_view_paint(v2, t2, NULL);
	render_node_damage(n, NULL);
	CHECK(!render_scene_view_has_damage(v1), "damage on the second view reached the first");
	CHECK(render_scene_view_has_damage(v2), "the second view has no damage");
	render_scene_view_damage_all(v1);
	render_scene_view_paint(v1, t, NULL);
	expect_rect(W - 8, 4, W, 20, BG, "the first view no longer shows the node");

	pixman_region32_fini(&got);
	pixman_region32_fini(&want);
	render_scene_view_destroy(v1);
	render_scene_destroy(shared); /* and v2 and n with it */
	render_target_destroy(t2);
}

int main(void)
{
	struct render_egl *egl;
	struct image A, B, C, D, E;
	struct render_node *nA, *nB, *nC, *nD, *nE;
	pixman_region32_t reg;
	pixman_box32_t box;
	struct snap before;

	r = unit_renderer(&egl);
	t = unit_target(egl, W, H);
	s = r ? render_scene_create(r, W, H, BG) : NULL;
	CHECK(r && t && s, "renderer, target, scene");
	if (!r || !t || !s)
		return 1;

	image_init(&A, RENDER_FORMAT_XRGB8888, 16, 16, 0xffff0000);
	image_init(&B, RENDER_FORMAT_ARGB8888, 12, 12, 0x80008000);
	image_init(&C, RENDER_FORMAT_XRGB8888, 8, 8, 0xff0000ff);
	image_init(&D, RENDER_FORMAT_XRGB8888, 8, 8, 0xffffff00);
	image_init(&E, RENDER_FORMAT_ARGB8888, 16, 16, 0xffff00ff);
	nA = node(A.tex, 4, 4);
	nB = node(B.tex, 12, 12);
	nC = node(C.tex, 40, 8);
	render_node_get_box(nB, &box);
	CHECK(box.x1 == 12 && box.y1 == 12 && box.x2 == 24 && box.y2 == 24, "node box");

	unit_say("first paint repaints the whole output");
	before = snap();
	paint_expect_rect(0, 0, W, H, "first paint");
	CHECK(snap().frames == before.frames + 1, "one frame counted");
	expect_rect(0, 0, 4, 4, BG, "background");
	expect_rect(4, 4, 12, 12, 0xffff0000, "node A");
	expect_rect(40, 8, 48, 16, 0xff0000ff, "node C");

	unit_say("paint of an unchanged scene returns false and draws nothing");
	before = snap();
	paint_expect(NULL, "unchanged");
	CHECK(snap().frames == before.frames, "no frame counted");
	CHECK(snap().quads == before.quads, "no quads drawn");
	CHECK(snap().skipped == before.skipped + 1, "skipped counted");

	unit_say("setters that change nothing add no damage");
	render_node_set_position(nA, 4, 4);
	render_node_set_visible(nA, true);
	render_node_set_alpha(nA, 1.0f);
	render_node_set_texture(nA, A.tex);
	render_node_set_size(nA, 0, 0);
	render_node_set_source(nA, 0, 0, 0, 0);
	render_node_set_opaque_region(nB, NULL);
	render_node_raise_to_top(nC);
	render_node_lower_to_bottom(nA);
	render_node_place_above(nB, nA);
	render_node_place_below(nA, nB);
	CHECK(!render_scene_has_damage(s), "no-op setters damaged the scene");
	paint_expect(NULL, "after no-op setters");

	unit_say("a small content change uploads and repaints only that damage");
	for (int y = 3; y < 8; y++)
		for (int x = 2; x < 6; x++)
			A.px[y * 16 + x] = 0xffffffff;
	pixman_region32_init_rect(&reg, 2, 3, 4, 5);
	before = snap();
	CHECK(render_texture_upload(A.tex, A.px, 16 * 4, &reg) == 0, "upload");
	CHECK(snap().uploaded - before.uploaded == 4 * 5 * 4, "uploaded %llu bytes, want 80",
	      (unsigned long long)(snap().uploaded - before.uploaded));
	render_node_damage(nA, &reg);
	paint_expect_rect(6, 7, 4, 5, "content damage");
	CHECK(snap().quads - before.quads == 1, "one quad for one damaged rect, got %llu",
	      (unsigned long long)(snap().quads - before.quads));
	expect_rect(6, 7, 10, 12, 0xffffffff, "new content");
	expect_rect(4, 4, 6, 7, 0xffff0000, "old content kept");
	pixman_region32_fini(&reg);

	unit_say("upload of a two-rectangle damage sends only those bytes; NULL sends all");
	pixman_region32_init_rect(&reg, 0, 0, 2, 2);
	pixman_region32_union_rect(&reg, &reg, 10, 10, 3, 1);
	before = snap();
	render_texture_upload(A.tex, A.px, 16 * 4, &reg);
	CHECK(snap().uploaded - before.uploaded == (4 + 3) * 4, "two rects: %llu bytes",
	      (unsigned long long)(snap().uploaded - before.uploaded));
	before = snap();
	render_texture_upload(A.tex, A.px, 16 * 4, NULL);
	CHECK(snap().uploaded - before.uploaded == 16 * 16 * 4, "full: %llu bytes",
	      (unsigned long long)(snap().uploaded - before.uploaded));
	pixman_region32_fini(&reg);
	CHECK(!render_scene_has_damage(s), "upload alone does not damage the scene");

	unit_say("moving a node damages its old and new boxes");
	render_node_set_position(nC, 44, 12);
	pixman_region32_init_rect(&reg, 40, 8, 8, 8);
	pixman_region32_union_rect(&reg, &reg, 44, 12, 8, 8);
	paint_expect(&reg, "move");
	pixman_region32_fini(&reg);
	expect_rect(40, 8, 44, 12, BG, "old place shows background");
	expect_rect(44, 12, 52, 20, 0xff0000ff, "new place shows the node");

	unit_say("a node fully under an opaque node draws zero quads");
	nD = node(D.tex, 20, 30);
	nE = node(E.tex, 16, 26); /* created later: above D, covers it */
	pixman_region32_init_rect(&reg, 0, 0, 16, 16);
	render_node_set_opaque_region(nE, &reg);
	pixman_region32_fini(&reg);
	render_scene_paint(s, t, NULL);
	render_node_damage(nD, NULL);
	before = snap();
	paint_expect_rect(20, 30, 8, 8, "damage under an opaque node");
	CHECK(snap().quads - before.quads == 1, "only the top node drawn: %llu quads",
	      (unsigned long long)(snap().quads - before.quads));
	expect_rect(20, 30, 28, 38, 0xffff00ff, "top node visible");

	unit_say("without its opaque region the same node is drawn under a blended one");
	render_node_set_opaque_region(nE, NULL);
	paint_expect_rect(16, 26, 16, 16, "opaque region dropped");
	render_node_damage(nD, NULL);
	before = snap();
	render_scene_paint(s, t, NULL);
	CHECK(snap().quads - before.quads == 2, "D and E drawn: %llu quads",
	      (unsigned long long)(snap().quads - before.quads));
	check_incremental_equals_full("after occlusion changes");

	unit_say("hiding, alpha, restacking and destroying damage the node's box");
	render_node_set_visible(nC, false);
	paint_expect_rect(44, 12, 8, 8, "hide");
	expect_rect(44, 12, 52, 20, BG, "hidden node gone");
	render_node_set_alpha(nB, 0.5f);
	paint_expect_rect(12, 12, 12, 12, "alpha");
	render_node_raise_to_top(nD);
	paint_expect_rect(20, 30, 8, 8, "raise");
	expect_rect(20, 30, 28, 38, 0xffffff00, "raised node on top");
	render_node_lower_to_bottom(nD);
	paint_expect_rect(20, 30, 8, 8, "lower");
	render_node_place_above(nD, nE);
	paint_expect_rect(20, 30, 8, 8, "place above");
	render_node_place_below(nD, nE);
	paint_expect_rect(20, 30, 8, 8, "place below");
	render_node_set_size(nA, 8, 8); /* scaled down: box shrinks */
	paint_expect_rect(4, 4, 16, 16, "resize");
	render_node_set_source(nA, 4, 4, 8, 8);
	paint_expect_rect(4, 4, 8, 8, "source crop");
	check_incremental_equals_full("after restacking");

	unit_say("destroying a texture in use detaches it and damages the node");
	render_node_set_visible(nC, true);
	render_scene_paint(s, t, NULL);
	render_texture_destroy(C.tex);
	C.tex = NULL;
	paint_expect_rect(44, 12, 8, 8, "texture destroyed");
	expect_rect(44, 12, 52, 20, BG, "node without texture draws nothing");

	unit_say("destroying a node damages its box");
	render_node_destroy(nB);
	paint_expect_rect(12, 12, 12, 12, "node destroyed");
	check_incremental_equals_full("at the end");

	unit_say("painted_pixels counts the repainted area");
	before = snap();
	{
		uint64_t px0 = renderer_stats(r)->painted_pixels;
		render_node_damage(nA, NULL);
		render_scene_paint(s, t, NULL);
		CHECK(renderer_stats(r)->painted_pixels - px0 == 64, "painted %llu px, want 64",
		      (unsigned long long)(renderer_stats(r)->painted_pixels - px0));
	}

	unit_say("damage of many scattered pixels repaints their bounding box, in a few quads");
	render_node_get_box(nA, &box);
	render_node_set_size(nA, 16, 16);
	render_scene_paint(s, t, NULL);
	pixman_region32_init(&reg);
	for (int i = 0; i < 50; i++) /* 50 pixels, no two touching */
		pixman_region32_union_rect(&reg, &reg, (i % 8) * 2, (i / 8) * 2, 1, 1);
	render_node_damage(nA, &reg);
	pixman_region32_fini(&reg);
	before = snap();
	paint_expect_rect(box.x1, box.y1, 15, 13, "50 scattered pixels");
	CHECK(snap().quads - before.quads <= 4, "50 scattered pixels drawn in %llu quads",
	      (unsigned long long)(snap().quads - before.quads));
	render_node_set_size(nA, box.x2 - box.x1, box.y2 - box.y1);
	render_scene_paint(s, t, NULL);

	unit_say("absurd positions and sizes do not overflow and are not drawn");
	render_node_set_position(nD, INT_MAX - 1, INT_MIN + 1);
	render_node_set_size(nD, INT_MAX, INT_MAX);
	render_node_get_box(nD, &box);
	CHECK(box.x2 >= box.x1 && box.y2 >= box.y1, "box inverted");
	paint_expect_rect(20, 30, 8, 8, "node moved far away");
	render_node_set_position(nD, 0, 0);
	render_node_damage(nD, NULL);
	paint_expect(NULL, "a giant node is not drawn");
	render_node_set_size(nD, 0, 0);
	paint_expect_rect(0, 0, 8, 8, "back to its texture size");
	expect_rect(0, 0, 8, 8, 0xffffff00, "drawn again");

	render_node_destroy(nA);
	render_node_destroy(nD);
	(void)nE; /* left for render_scene_destroy */
	render_scene_destroy(s);
	test_views(egl, E.tex);
	render_texture_destroy(A.tex);
	render_texture_destroy(B.tex);
	render_texture_destroy(D.tex);
	render_texture_destroy(E.tex);
	free(A.px);
	free(B.px);
	free(C.px);
	free(D.px);
	free(E.px);
	render_target_destroy(t);
	renderer_destroy(r);
	render_egl_destroy(egl);
	return unit_finish("test-damage");
}
