/* duet-wl-probe MODE: plays one protocol scenario whose outcome the spec
 * fixes, for tests/integration/test_wl_protocol.py (issue 10, "protocol
 * correctness").
 *
 * Where the outcome is on screen, the probe prints "step NAME" once the
 * state to check is committed and waits for a line on stdin, while the test
 * looks (duet-testctl windows or a screenshot). Where the client itself can
 * tell (presentation feedback, the selection), the probe checks and prints
 * "ok ..." or "FAIL ...".
 *
 * Exit status: 0 done (and every check passed), 1 a check failed, 2 setup
 * failure or a protocol error.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "client-common.h"
#include "presentation-time-client-protocol.h"
#include "viewporter-client-protocol.h"
#include "xdg-shell-client-protocol.h"

#define RED 0xffff0000u
#define GREEN 0xff00ff00u
#define BLUE 0xff0000ffu
#define YELLOW 0xffffff00u
#define WHITE 0xffffffffu

struct conn {
	struct wl_display *display;
	struct test_globals g;
	struct wl_compositor *compositor5;      /* wl_surface.offset needs v5 */
	struct wp_presentation *presentation;
	struct wl_seat *seat;
	struct test_input input; /* the focus, the serials of enter and presses */
	struct wl_data_device *data_device;
	/* The wl_data_device's last selection offer, and whether its last
	 * offer (of any kind) had TRANSFER_MIME. */
	struct wl_data_offer *selection;
	bool offer_has_mime;
	/* Every proxy made on this connection, freed by conn_close (own). */
	void **owned;
	size_t n_owned, owned_cap;
};

struct window {
	struct conn *conn;
	struct wl_surface *surface;
	struct xdg_surface *xdg;
	struct xdg_toplevel *toplevel;
	struct xdg_popup *popup;
	uint32_t serial;
	bool configured;
	int width, height; /* of the last configure */
	int x, y;          /* a popup's last configure, relative to its parent */
	bool done;         /* xdg_popup.popup_done */
};

_Noreturn static void die(const char *msg)
{
	fprintf(stderr, "duet-wl-probe: %s\n", msg);
	exit(2);
}

/* A connection owns every proxy made on it, the server's (wl_data_offer)
 * included; conn_close frees them all, so nothing of the probe's is left
 * when it ends (the ASan run checks leaks). A proxy destroyed earlier is
 * disowned as it goes. */
static void *own(struct conn *c, void *proxy)
{
	if (!proxy)
		die("no proxy (out of memory?)");
	if (c->n_owned == c->owned_cap) {
		size_t cap = c->owned_cap ? c->owned_cap * 2 : 64;
		void **owned = realloc(c->owned, cap * sizeof(*owned));
		if (!owned)
			die("out of memory");
		c->owned = owned;
		c->owned_cap = cap;
	}
	c->owned[c->n_owned++] = proxy;
	return proxy;
}

static void *disown(struct conn *c, void *proxy)
{
	for (size_t i = 0; i < c->n_owned; i++) {
		if (c->owned[i] == proxy) {
			c->owned[i] = c->owned[--c->n_owned];
			return proxy;
		}
	}
	die("destroying a proxy the connection does not own");
}

static void roundtrip(struct conn *c)
{
	if (wl_display_roundtrip(c->display) < 0)
		die("connection lost (protocol error?)");
}

/* Tells the test the state to check is on its way, and waits for its go. */
static void step(struct conn *c, const char *name)
{
	roundtrip(c);
	printf("step %s\n", name);
	fflush(stdout);
	char line[64];
	if (!fgets(line, sizeof(line), stdin))
		die("stdin closed");
}

/* ------------------------------------------------------------- globals */

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
                            const char *interface, uint32_t version)
{
	struct conn *c = data;
	if (strcmp(interface, wl_compositor_interface.name) == 0 && version >= 5)
		c->compositor5 = own(c, wl_registry_bind(registry, name, &wl_compositor_interface, 5));
	else if (strcmp(interface, wp_presentation_interface.name) == 0)
		c->presentation = own(c, wl_registry_bind(registry, name,
		                                          &wp_presentation_interface, 1));
	else if (strcmp(interface, wl_seat_interface.name) == 0 && !c->seat)
		c->seat = own(c, wl_registry_bind(registry, name, &wl_seat_interface, 1));
}

static void conn_open(struct conn *c)
{
	memset(c, 0, sizeof(*c));
	struct test_extra_globals extra = { registry_global, c };
	c->display = test_connect("duet-wl-probe", &c->g, &extra);
	if (!c->display)
		exit(2);
	if (!c->g.subcompositor)
		die("no wl_subcompositor");
}

/* Frees every proxy of the connection (client side only: the connection
 * closes next, and the server cleans up after a client that is gone). */
static void conn_close(struct conn *c)
{
	for (size_t i = 0; i < c->n_owned; i++)
		wl_proxy_destroy(c->owned[i]);
	free(c->owned);
	test_globals_destroy(&c->g);
	wl_display_disconnect(c->display);
	memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------------- buffers */

/* A w x h XRGB buffer: colours[0] fills it, or with four colours its
 * quadrants (top-left, top-right, bottom-left, bottom-right). */
static struct wl_buffer *make_buffer(struct conn *c, int w, int h, const uint32_t *colours,
                                     int n)
{
	size_t size = (size_t)w * (size_t)h * 4;
	uint32_t *px;
	struct wl_shm_pool *pool = test_shm_pool(c->g.shm, size, &px, NULL);
	if (!pool)
		die("shm pool");
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			px[y * w + x] = n == 4 ? colours[(y >= h / 2) * 2 + (x >= w / 2)] : colours[0];
	munmap(px, size);
	struct wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, w, h, w * 4,
	                                                     WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool_destroy(pool);
	return own(c, buffer);
}

static struct wl_buffer *solid(struct conn *c, int w, int h, uint32_t colour)
{
	return make_buffer(c, w, h, &colour, 1);
}

static void show(struct wl_surface *surface, struct wl_buffer *buffer)
{
	wl_surface_attach(surface, buffer, 0, 0);
	wl_surface_damage_buffer(surface, 0, 0, INT32_MAX, INT32_MAX);
	wl_surface_commit(surface);
}

/* ------------------------------------------------------------- windows */

static void xdg_surface_configure(void *data, struct xdg_surface *xdg, uint32_t serial)
{
	struct window *w = data;
	w->serial = serial;
	w->configured = true;
}

static const struct xdg_surface_listener xdg_surface_listener = {
	.configure = xdg_surface_configure,
};

static void toplevel_configure(void *data, struct xdg_toplevel *toplevel, int32_t width,
                               int32_t height, struct wl_array *states)
{
	struct window *w = data;
	w->width = width;
	w->height = height;
}

static void toplevel_close(void *data, struct xdg_toplevel *toplevel)
{
}

static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure,
	.close = toplevel_close,
};

static void popup_configure(void *data, struct xdg_popup *popup, int32_t x, int32_t y,
                            int32_t width, int32_t height)
{
	struct window *w = data;
	w->x = x;
	w->y = y;
	w->width = width;
	w->height = height;
}

static void popup_done(void *data, struct xdg_popup *popup)
{
	struct window *w = data;
	w->done = true;
}

static const struct xdg_popup_listener popup_listener = {
	.configure = popup_configure,
	.popup_done = popup_done,
};

static void wait_configure(struct window *w)
{
	w->configured = false;
	while (!w->configured)
		if (wl_display_dispatch(w->conn->display) < 0)
			die("connection lost waiting for a configure");
}

static struct wl_surface *new_surface(struct conn *c)
{
	return own(c, wl_compositor_create_surface(c->compositor5 ? c->compositor5
	                                                         : c->g.compositor));
}

/* A toplevel showing buffer (mapped once this returns). */
/* A toplevel, a dialog of parent unless that is NULL, mapped with buffer. */
static void map_child(struct conn *c, struct window *w, const char *app_id,
                      struct wl_buffer *buffer, int32_t transform, struct window *parent)
{
	memset(w, 0, sizeof(*w));
	w->conn = c;
	w->surface = new_surface(c);
	w->xdg = own(c, xdg_wm_base_get_xdg_surface(c->g.wm_base, w->surface));
	xdg_surface_add_listener(w->xdg, &xdg_surface_listener, w);
	w->toplevel = own(c, xdg_surface_get_toplevel(w->xdg));
	xdg_toplevel_add_listener(w->toplevel, &toplevel_listener, w);
	xdg_toplevel_set_app_id(w->toplevel, app_id);
	if (parent)
		xdg_toplevel_set_parent(w->toplevel, parent->toplevel);
	wl_surface_commit(w->surface);
	wait_configure(w);
	xdg_surface_ack_configure(w->xdg, w->serial);
	if (transform)
		wl_surface_set_buffer_transform(w->surface, transform);
	show(w->surface, buffer);
	roundtrip(c);
}

static void map_toplevel(struct conn *c, struct window *w, const char *app_id,
                         struct wl_buffer *buffer, int32_t transform)
{
	map_child(c, w, app_id, buffer, transform, NULL);
}

/* A popup of parent, size w x h at x,y of the parent's geometry; with
 * grab_serial (non-zero) it takes a grab before it maps. */
static void map_popup_grab(struct conn *c, struct window *w, struct window *parent, int x,
                           int y, struct wl_buffer *buffer, int width, int height,
                           uint32_t grab_serial)
{
	memset(w, 0, sizeof(*w));
	w->conn = c;
	w->surface = new_surface(c);
	w->xdg = own(c, xdg_wm_base_get_xdg_surface(c->g.wm_base, w->surface));
	xdg_surface_add_listener(w->xdg, &xdg_surface_listener, w);
	struct xdg_positioner *pos = xdg_wm_base_create_positioner(c->g.wm_base);
	xdg_positioner_set_size(pos, width, height);
	xdg_positioner_set_anchor_rect(pos, x, y, 1, 1);
	xdg_positioner_set_anchor(pos, XDG_POSITIONER_ANCHOR_TOP_LEFT);
	xdg_positioner_set_gravity(pos, XDG_POSITIONER_GRAVITY_BOTTOM_RIGHT);
	w->popup = own(c, xdg_surface_get_popup(w->xdg, parent->xdg, pos));
	xdg_positioner_destroy(pos);
	xdg_popup_add_listener(w->popup, &popup_listener, w);
	if (grab_serial)
		xdg_popup_grab(w->popup, c->seat, grab_serial);
	wl_surface_commit(w->surface);
	wait_configure(w);
	xdg_surface_ack_configure(w->xdg, w->serial);
	show(w->surface, buffer);
	roundtrip(c);
}

static void map_popup(struct conn *c, struct window *w, struct window *parent, int x, int y,
                      struct wl_buffer *buffer, int width, int height)
{
	map_popup_grab(c, w, parent, x, y, buffer, width, height, 0);
}

static struct wl_subsurface *add_subsurface(struct conn *c, struct wl_surface *surface,
                                            struct wl_surface *parent, int x, int y)
{
	struct wl_subsurface *sub = own(c, wl_subcompositor_get_subsurface(c->g.subcompositor,
	                                                                 surface, parent));
	wl_subsurface_set_position(sub, x, y);
	return sub;
}

/* --------------------------------------------------------------- modes */

/* T (red 200x150) > P (sync, green 100x100 at 20,20) > C (desync, at
 * 10,10). C's commit of blue is cached (P is synchronized); P turns
 * desynchronized; C commits yellow, which is now applied at once, and
 * must not be undone by the stale blue when P commits next. */
static int mode_subsurface_merge(struct conn *c)
{
	struct window t;
	map_toplevel(c, &t, "duet-probe", solid(c, 200, 150, RED), 0);
	struct wl_surface *p = new_surface(c), *ch = new_surface(c);
	struct wl_subsurface *psub = add_subsurface(c, p, t.surface, 20, 20);
	show(p, solid(c, 100, 100, GREEN));
	struct wl_subsurface *csub = add_subsurface(c, ch, p, 10, 10);
	wl_subsurface_set_desync(csub);
	wl_surface_commit(p);       /* C's position */
	wl_surface_commit(t.surface); /* P's position and content, C's position */
	show(ch, solid(c, 40, 40, BLUE)); /* cached: P is synchronized */
	wl_subsurface_set_desync(psub);
	show(ch, solid(c, 40, 40, YELLOW));
	wl_surface_commit(p);
	step(c, "check");
	return 0;
}

struct feedback {
	struct conn *conn;
	int state; /* 0 waiting, 1 presented, 2 discarded */
};

static void fb_sync_output(void *data, struct wp_presentation_feedback *fb,
                           struct wl_output *output)
{
}

static void fb_presented(void *data, struct wp_presentation_feedback *fb, uint32_t sec_hi,
                         uint32_t sec_lo, uint32_t nsec, uint32_t refresh, uint32_t seq_hi,
                         uint32_t seq_lo, uint32_t flags)
{
	struct feedback *f = data;
	f->state = 1;
	wp_presentation_feedback_destroy(disown(f->conn, fb));
}

static void fb_discarded(void *data, struct wp_presentation_feedback *fb)
{
	struct feedback *f = data;
	f->state = 2;
	wp_presentation_feedback_destroy(disown(f->conn, fb));
}

static const struct wp_presentation_feedback_listener feedback_listener = {
	.sync_output = fb_sync_output,
	.presented = fb_presented,
	.discarded = fb_discarded,
};

static void ask_feedback(struct conn *c, struct wl_surface *surface, struct feedback *f)
{
	f->conn = c;
	f->state = 0;
	wp_presentation_feedback_add_listener(own(c, wp_presentation_feedback(c->presentation,
	                                                                      surface)),
	                                      &feedback_listener, f);
}

/* Two commits of a synchronized subsurface, each with presentation
 * feedback, then the parent's commit: the first update was replaced
 * before it could be shown, so its feedback is discarded; the second is
 * presented. */
static int mode_subsurface_feedback(struct conn *c)
{
	if (!c->presentation)
		die("no wp_presentation");
	struct window t;
	map_toplevel(c, &t, "duet-probe", solid(c, 200, 150, RED), 0);
	struct wl_surface *s = new_surface(c);
	add_subsurface(c, s, t.surface, 10, 10);
	struct feedback f1, f2;
	ask_feedback(c, s, &f1);
	show(s, solid(c, 50, 50, GREEN));
	ask_feedback(c, s, &f2);
	show(s, solid(c, 50, 50, BLUE));
	wl_surface_commit(t.surface);
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		roundtrip(c);
		usleep(10000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((!f1.state || !f2.state) && now.tv_sec - start.tv_sec < 5);
	static const char *names[] = {"nothing", "presented", "discarded"};
	printf("feedback of the replaced update: %s\n", names[f1.state]);
	printf("feedback of the shown update: %s\n", names[f2.state]);
	bool ok = f1.state == 2 && f2.state == 1;
	printf("%s\n", ok ? "ok" : "FAIL: want discarded, then presented");
	return ok ? 0 : 1;
}

/* Maximize, unmaximize, fullscreen: each request gets a configure at
 * once, but the window moves only with the ack and the commit. */
static void state_round(struct conn *c, struct window *t, void (*request)(struct xdg_toplevel *),
                        const char *requested, const char *applied)
{
	request(t->toplevel);
	wait_configure(t);
	step(c, requested);
	int w = t->width ? t->width : 200, h = t->height ? t->height : 150;
	xdg_surface_ack_configure(t->xdg, t->serial);
	show(t->surface, solid(c, w, h, RED));
	step(c, applied);
}

static void unset_fullscreen(struct xdg_toplevel *toplevel)
{
	xdg_toplevel_unset_fullscreen(toplevel);
}

static void set_fullscreen(struct xdg_toplevel *toplevel)
{
	xdg_toplevel_set_fullscreen(toplevel, NULL);
}

static int mode_maximize_ack(struct conn *c)
{
	struct window t;
	map_toplevel(c, &t, "duet-probe", solid(c, 200, 150, RED), 0);
	step(c, "mapped");
	state_round(c, &t, xdg_toplevel_set_maximized, "maximize-asked", "maximized");
	state_round(c, &t, xdg_toplevel_unset_maximized, "restore-asked", "restored");
	state_round(c, &t, set_fullscreen, "fullscreen-asked", "fullscreen");
	state_round(c, &t, unset_fullscreen, "unfullscreen-asked", "unfullscreen");
	return 0;
}

/* One 100x60 four-colour buffer shown rotated by 90 degrees, then (in a
 * window of its own, the first one gone) flipped and rotated by 270. */
static int mode_buffer_transform(struct conn *c)
{
	static const uint32_t quads[4] = {RED, GREEN, BLUE, WHITE};
	struct window w;
	map_toplevel(c, &w, "duet-probe-90", make_buffer(c, 100, 60, quads, 4),
	             WL_OUTPUT_TRANSFORM_90);
	step(c, "check-90");
	xdg_toplevel_destroy(disown(c, w.toplevel));
	xdg_surface_destroy(disown(c, w.xdg));
	wl_surface_destroy(disown(c, w.surface));
	map_toplevel(c, &w, "duet-probe-flipped-270", make_buffer(c, 100, 60, quads, 4),
	             WL_OUTPUT_TRANSFORM_FLIPPED_270);
	step(c, "check-flipped-270");
	return 0;
}

/* wl_surface.offset on a subsurface and on a popup moves them by the
 * offset, as it moves a toplevel. */
static int mode_offset(struct conn *c)
{
	if (!c->compositor5)
		die("no wl_compositor v5");
	struct window t, p;
	map_toplevel(c, &t, "duet-probe", solid(c, 200, 150, RED), 0);
	struct wl_surface *s = new_surface(c);
	struct wl_subsurface *sub = add_subsurface(c, s, t.surface, 10, 10);
	wl_subsurface_set_desync(sub);
	struct wl_buffer *green = solid(c, 20, 20, GREEN);
	show(s, green);
	wl_surface_commit(t.surface);
	struct wl_buffer *blue = solid(c, 30, 30, BLUE);
	map_popup(c, &p, &t, 100, 50, blue, 30, 30);
	step(c, "placed");
	wl_surface_offset(s, 30, 20);
	show(s, green);
	wl_surface_offset(p.surface, 20, 10);
	show(p.surface, blue);
	step(c, "offset");
	return 0;
}

/* T red 200x150 with two desynchronized subsurfaces: A green 60x60 at
 * 20,20, B blue 60x60 at 50,50 (B above A: made later). Restacking is
 * the parent's state: it takes effect when T commits. */
static int mode_subsurface_restack(struct conn *c)
{
	struct window t;
	map_toplevel(c, &t, "duet-probe", solid(c, 200, 150, RED), 0);
	struct wl_surface *a = new_surface(c), *b = new_surface(c);
	struct wl_subsurface *sa = add_subsurface(c, a, t.surface, 20, 20);
	struct wl_subsurface *sb = add_subsurface(c, b, t.surface, 50, 50);
	wl_subsurface_set_desync(sa);
	wl_subsurface_set_desync(sb);
	show(a, solid(c, 60, 60, GREEN));
	show(b, solid(c, 60, 60, BLUE));
	wl_surface_commit(t.surface);
	step(c, "initial");
	wl_subsurface_place_below(sb, a);
	step(c, "pending"); /* not yet: T has not committed */
	wl_surface_commit(t.surface);
	step(c, "b-below-a");
	wl_subsurface_place_below(sa, t.surface);
	wl_surface_commit(t.surface);
	step(c, "a-below-parent");
	return 0;
}

/* A 40x30 buffer in four quadrants (red, green / blue, white) shown at
 * 200x150 by a wp_viewport destination, then with a source crop of its
 * top-right quadrant. */
static int mode_viewport_scale(struct conn *c)
{
	if (!c->g.viewporter)
		die("no wp_viewporter");
	const uint32_t quads[4] = { RED, GREEN, BLUE, WHITE };
	struct wl_buffer *buffer = make_buffer(c, 40, 30, quads, 4);
	struct window t;
	memset(&t, 0, sizeof(t));
	t.conn = c;
	t.surface = new_surface(c);
	struct wp_viewport *vp = own(c, wp_viewporter_get_viewport(c->g.viewporter, t.surface));
	wp_viewport_set_destination(vp, 200, 150);
	t.xdg = own(c, xdg_wm_base_get_xdg_surface(c->g.wm_base, t.surface));
	xdg_surface_add_listener(t.xdg, &xdg_surface_listener, &t);
	t.toplevel = own(c, xdg_surface_get_toplevel(t.xdg));
	xdg_toplevel_add_listener(t.toplevel, &toplevel_listener, &t);
	xdg_toplevel_set_app_id(t.toplevel, "duet-probe");
	wl_surface_commit(t.surface);
	wait_configure(&t);
	xdg_surface_ack_configure(t.xdg, t.serial);
	show(t.surface, buffer);
	step(c, "scaled");
	wp_viewport_set_source(vp, wl_fixed_from_int(20), 0, wl_fixed_from_int(20),
	                       wl_fixed_from_int(15));
	wl_surface_commit(t.surface);
	step(c, "cropped");
	return 0;
}

/* A 500x40 popup anchored at the right edge of a 200x150 toplevel, its
 * gravity to the right: it does not fit on the output. With FLIP_X it
 * must open to the left instead; with SLIDE_X it must slide left until it
 * fits. Prints "popup ADJ X Y W H" (the configure, parent-relative). */
static int mode_positioner_constrain(struct conn *c)
{
	struct window t;
	map_toplevel(c, &t, "duet-probe", solid(c, 200, 150, RED), 0);
	const struct { const char *name; uint32_t adj; } cases[] = {
		{"flip-x", XDG_POSITIONER_CONSTRAINT_ADJUSTMENT_FLIP_X},
		{"slide-x", XDG_POSITIONER_CONSTRAINT_ADJUSTMENT_SLIDE_X},
		{"none", XDG_POSITIONER_CONSTRAINT_ADJUSTMENT_NONE},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct window p;
		memset(&p, 0, sizeof(p));
		p.conn = c;
		p.surface = new_surface(c);
		p.xdg = xdg_wm_base_get_xdg_surface(c->g.wm_base, p.surface);
		xdg_surface_add_listener(p.xdg, &xdg_surface_listener, &p);
		struct xdg_positioner *pos = xdg_wm_base_create_positioner(c->g.wm_base);
		xdg_positioner_set_size(pos, 500, 40);
		xdg_positioner_set_anchor_rect(pos, 190, 10, 10, 10);
		xdg_positioner_set_anchor(pos, XDG_POSITIONER_ANCHOR_RIGHT);
		xdg_positioner_set_gravity(pos, XDG_POSITIONER_GRAVITY_RIGHT);
		xdg_positioner_set_constraint_adjustment(pos, cases[i].adj);
		p.popup = xdg_surface_get_popup(p.xdg, t.xdg, pos);
		xdg_positioner_destroy(pos);
		xdg_popup_add_listener(p.popup, &popup_listener, &p);
		wl_surface_commit(p.surface);
		wait_configure(&p);
		printf("popup %s %d %d %d %d\n", cases[i].name, p.x, p.y, p.width, p.height);
		xdg_popup_destroy(p.popup);
		xdg_surface_destroy(p.xdg);
		wl_surface_destroy(disown(c, p.surface));
		roundtrip(c);
	}
	step(c, "measured");
	return 0;
}

/* ----------------------------------------------------------- selection */

struct source {
	struct wl_data_source *source;
	bool cancelled;
};

static void source_target(void *data, struct wl_data_source *s, const char *mime)
{
}

static void source_send(void *data, struct wl_data_source *s, const char *mime, int32_t fd)
{
	close(fd);
}

static void source_cancelled(void *data, struct wl_data_source *s)
{
	((struct source *)data)->cancelled = true;
}

static const struct wl_data_source_listener source_listener = {
	.target = source_target,
	.send = source_send,
	.cancelled = source_cancelled,
};

static void new_source(struct conn *c, struct source *s, const char *mime)
{
	s->cancelled = false;
	s->source = own(c, wl_data_device_manager_create_data_source(c->g.data_device_manager));
	wl_data_source_add_listener(s->source, &source_listener, s);
	wl_data_source_offer(s->source, mime);
}

#define TRANSFER_MIME "text/plain;charset=utf-8"

static void offer_offer(void *data, struct wl_data_offer *offer, const char *mime)
{
	if (strcmp(mime, TRANSFER_MIME) == 0)
		((struct conn *)data)->offer_has_mime = true;
}

static const struct wl_data_offer_listener offer_listener = { .offer = offer_offer };

/* Each offer is a new proxy of the server's making: the connection owns it. */
static void dd_data_offer(void *data, struct wl_data_device *dd, struct wl_data_offer *offer)
{
	struct conn *c = data;
	c->offer_has_mime = false;
	wl_data_offer_add_listener(own(c, offer), &offer_listener, c);
}

static void dd_enter(void *data, struct wl_data_device *dd, uint32_t serial,
                     struct wl_surface *s, wl_fixed_t x, wl_fixed_t y, struct wl_data_offer *o)
{
}

static void dd_leave(void *data, struct wl_data_device *dd) {}

static void dd_motion(void *data, struct wl_data_device *dd, uint32_t t, wl_fixed_t x,
                      wl_fixed_t y)
{
}

static void dd_drop(void *data, struct wl_data_device *dd) {}

static void dd_selection(void *data, struct wl_data_device *dd, struct wl_data_offer *offer)
{
	((struct conn *)data)->selection = offer;
}

static const struct wl_data_device_listener dd_listener = {
	.data_offer = dd_data_offer,
	.enter = dd_enter,
	.leave = dd_leave,
	.motion = dd_motion,
	.drop = dd_drop,
	.selection = dd_selection,
};

static void seat_keyboard(struct conn *c)
{
	if (!c->seat || !c->g.data_device_manager)
		die("no wl_seat or wl_data_device_manager");
	test_input_keyboard(&c->input, c->seat);
	own(c, c->input.keyboard);
	test_input_pointer(&c->input, c->seat);
	own(c, c->input.pointer);
	c->data_device = own(c, wl_data_device_manager_get_data_device(c->g.data_device_manager,
	                                                               c->seat));
	wl_data_device_add_listener(c->data_device, &dd_listener, c);
}

static bool check(bool ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	return ok;
}

/* B maps and gets the focus, then A does. A's selection (with its enter
 * serial) stands; B, now unfocused, cannot replace it, nor can A with a
 * serial older than its focus; A with its own serial can. */
static int mode_selection_focus(struct conn *a)
{
	struct conn b;
	conn_open(&b);
	seat_keyboard(a);
	seat_keyboard(&b);
	struct window wb, wa;
	map_toplevel(&b, &wb, "duet-probe-b", solid(&b, 100, 100, GREEN), 0);
	roundtrip(&b);
	map_toplevel(a, &wa, "duet-probe-a", solid(a, 100, 100, RED), 0);
	roundtrip(a);
	roundtrip(&b);
	if (!a->input.keyboard_focus || b.input.keyboard_focus)
		die("A should have the keyboard focus, B not");
	struct source sa, sb, stale, again;
	new_source(a, &sa, "text/x-duet-a");
	wl_data_device_set_selection(a->data_device, sa.source, a->input.enter_serial);
	roundtrip(a);
	new_source(&b, &sb, "text/x-duet-b");
	wl_data_device_set_selection(b.data_device, sb.source, b.input.enter_serial);
	roundtrip(&b);
	roundtrip(a);
	bool ok = check(!sa.cancelled, "an unfocused client cannot replace the selection");
	new_source(a, &stale, "text/x-duet-stale");
	wl_data_device_set_selection(a->data_device, stale.source, b.input.enter_serial);
	roundtrip(a);
	ok &= check(!sa.cancelled, "a serial older than the focus does not replace it");
	new_source(a, &again, "text/x-duet-again");
	wl_data_device_set_selection(a->data_device, again.source, a->input.enter_serial);
	roundtrip(a);
	ok &= check(sa.cancelled, "the focused client replaces it with its own serial");
	conn_close(&b);
	return ok ? 0 : 1;
}

/* A (red) and B (green) of one size, so B, mapped last, covers A. B asks
 * to be minimized: hidden, and the focus goes to A (policy rule 6). The
 * test then activates B, which is shown again (rule 4). */
static int mode_minimize(struct conn *c)
{
	struct window a, b;
	map_toplevel(c, &a, "duet-probe-a", solid(c, 100, 100, RED), 0);
	map_toplevel(c, &b, "duet-probe-b", solid(c, 100, 100, GREEN), 0);
	step(c, "mapped");
	xdg_toplevel_set_minimized(b.toplevel);
	step(c, "minimized");
	step(c, "activated");
	return 0;
}

/* A dialog (xdg_toplevel.set_parent) of A, which the test has moved off
 * the output's centre: it maps centred over A (policy rule 11). */
static int mode_dialog(struct conn *c)
{
	/* Static: the test activates A after the last step, and the
	 * configures that brings are dispatched after this returns. */
	static struct window a, b;
	map_toplevel(c, &a, "duet-probe-a", solid(c, 300, 200, RED), 0);
	step(c, "parent");
	map_child(c, &b, "duet-probe-b", solid(c, 100, 80, GREEN), 0, &a);
	step(c, "dialog");
	return 0;
}

/* ------------------------------------------------- selection transfer */

#define TRANSFER_TEXT "duet selection, 7 bytes and more"

static void transfer_send(void *data, struct wl_data_source *s, const char *mime, int32_t fd)
{
	if (strcmp(mime, TRANSFER_MIME) == 0 &&
	    write(fd, TRANSFER_TEXT, strlen(TRANSFER_TEXT)) != (ssize_t)strlen(TRANSFER_TEXT))
		perror("duet-wl-probe: writing the selection");
	close(fd);
}

static const struct wl_data_source_listener transfer_source_listener = {
	.target = source_target,
	.send = transfer_send,
	.cancelled = source_cancelled,
};

/* A (focused) sets the selection; B maps, takes the focus, gets the offer
 * with A's MIME type, and receives A's bytes through a pipe. */
static int mode_selection_transfer(struct conn *a)
{
	struct conn b;
	conn_open(&b);
	seat_keyboard(a);
	seat_keyboard(&b);
	struct window wa, wb;
	map_toplevel(a, &wa, "duet-probe-a", solid(a, 100, 100, RED), 0);
	roundtrip(a);
	if (!a->input.keyboard_focus)
		die("A should have the keyboard focus");
	struct source sa = { NULL, false };
	sa.source = own(a, wl_data_device_manager_create_data_source(a->g.data_device_manager));
	wl_data_source_add_listener(sa.source, &transfer_source_listener, &sa);
	wl_data_source_offer(sa.source, TRANSFER_MIME);
	wl_data_device_set_selection(a->data_device, sa.source, a->input.enter_serial);
	roundtrip(a);
	map_toplevel(&b, &wb, "duet-probe-b", solid(&b, 100, 100, GREEN), 0);
	roundtrip(&b);
	bool ok = check(b.input.keyboard_focus != NULL, "B has the focus");
	ok &= check(b.selection && b.offer_has_mime, "B got the selection offer with A's type");
	if (!ok) {
		conn_close(&b);
		return 1;
	}
	int p[2];
	if (pipe(p) < 0)
		die("pipe");
	wl_data_offer_receive(b.selection, TRANSFER_MIME, p[1]);
	close(p[1]);
	roundtrip(&b);
	roundtrip(a); /* A writes in its send handler */
	char buf[128];
	size_t got = 0;
	ssize_t r;
	while (got < sizeof(buf) - 1 && (r = read(p[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)r;
	close(p[0]);
	buf[got] = 0;
	ok &= check(strcmp(buf, TRANSFER_TEXT) == 0, "B read A's bytes");
	conn_close(&b);
	return ok ? 0 : 1;
}

/* ---------------------------------------------------------- popup grab */

/* Lets the test click (or press a key), then waits for the press: its
 * serial is the one a grab must give. */
static void wait_press(struct conn *c, const char *name, int *count)
{
	int before = *count;
	step(c, name);
	for (int i = 0; i < 100 && *count == before; i++) {
		roundtrip(c);
		usleep(10000);
	}
	if (*count == before)
		die("the test's press never arrived");
}

static void wait_done(struct conn *c, struct window *w)
{
	for (int i = 0; i < 100 && !w->done; i++) {
		roundtrip(c);
		usleep(10000);
	}
}

/* A popup at 10,10 of parent, size 10x10, whose grab is denied or taken
 * with serial: mapped (if it may) once this returns. */
static void small_popup(struct conn *c, struct window *w, struct window *parent, uint32_t serial)
{
	map_popup_grab(c, w, parent, 10, 10, solid(c, 10, 10, BLUE), 10, 10, serial);
	roundtrip(c);
}

/* The test clicks the toplevel (step "click-1"): a grabbing popup on it,
 * a grabbing popup on that, with the click's serial: each takes the
 * keyboard focus. The test clicks outside (step "grabbed"): both get
 * popup_done and the focus goes back to the toplevel. Another click and
 * grab, and the test focuses another client's window (step "regrabbed"):
 * popup_done again. Last, a grab on a popup that is not the topmost
 * grabbing one: not_the_topmost_popup. */
static int mode_popup_grab(struct conn *c)
{
	seat_keyboard(c);
	struct window t, p1, p2, p3, p4;
	map_toplevel(c, &t, "duet-probe", solid(c, 200, 150, RED), 0);
	roundtrip(c);
	bool ok = check(c->input.keyboard_focus == t.surface,
	                "the toplevel has the keyboard focus");
	wait_press(c, "click-1", &c->input.presses);
	map_popup_grab(c, &p1, &t, 20, 20, solid(c, 60, 60, GREEN), 60, 60, c->input.press_serial);
	roundtrip(c);
	ok &= check(c->input.keyboard_focus == p1.surface,
	            "a grabbing popup takes the keyboard focus");
	map_popup_grab(c, &p2, &p1, 10, 10, solid(c, 30, 30, BLUE), 30, 30, c->input.press_serial);
	roundtrip(c);
	ok &= check(c->input.keyboard_focus == p2.surface, "a nested grabbing popup takes it next");
	step(c, "grabbed");
	wait_done(c, &p1);
	wait_done(c, &p2);
	ok &= check(p1.done && p2.done, "a click outside dismisses the grabbing popups");
	ok &= check(c->input.keyboard_focus == t.surface, "the focus goes back to the toplevel");
	struct window p5;
	wait_press(c, "click-2", &c->input.presses);
	map_popup_grab(c, &p5, &t, 20, 20, solid(c, 60, 60, GREEN), 60, 60, c->input.press_serial);
	step(c, "regrabbed"); /* the test activates another client's window */
	wait_done(c, &p5);
	ok &= check(p5.done, "another client's window taking the focus dismisses the grab");
	/* The test clicks the toplevel: on top again, and a press to grab with. */
	wait_press(c, "reactivated", &c->input.presses);
	map_popup_grab(c, &p3, &t, 20, 20, solid(c, 60, 60, GREEN), 60, 60, c->input.press_serial);
	map_popup(c, &p4, &p3, 10, 10, solid(c, 30, 30, BLUE), 30, 30);
	ok &= check(!p3.done, "a grab with the click's serial is taken");
	/* A grab on a child of p4, which took none: p3 is the topmost. */
	struct wl_surface *s = new_surface(c);
	struct xdg_surface *xdg = own(c, xdg_wm_base_get_xdg_surface(c->g.wm_base, s));
	struct xdg_positioner *pos = own(c, xdg_wm_base_create_positioner(c->g.wm_base));
	xdg_positioner_set_size(pos, 10, 10);
	xdg_positioner_set_anchor_rect(pos, 0, 0, 1, 1);
	struct xdg_popup *bad = own(c, xdg_surface_get_popup(xdg, p4.xdg, pos));
	xdg_popup_grab(bad, c->seat, c->input.press_serial);
	wl_display_roundtrip(c->display);
	const struct wl_interface *iface = NULL;
	uint32_t code = wl_display_get_protocol_error(c->display, &iface, NULL);
	ok &= check(iface && strcmp(iface->name, "xdg_wm_base") == 0 &&
	            code == XDG_WM_BASE_ERROR_NOT_THE_TOPMOST_POPUP,
	            "a grab on a popup above a non-grabbing one is not_the_topmost_popup");
	printf("done\n");
	conn_close(c);
	exit(ok ? 0 : 1); /* the connection is gone */
}

/* xdg_popup.grab's serial must be that of the user's press to this
 * client. A (big, red) and B (small, green, in A's middle) each get a
 * click (steps "click-b", "click-a"). A's grabs with its keyboard enter
 * serial (a real serial, no press) and with B's click serial are denied:
 * popup_done at once, the keyboard stays on A; a grabbing popup on such
 * a dismissed one is dismissed too, no error. With its own click's
 * serial the grab is taken; a key press's serial (step "key") serves for
 * a nested one. After a click on nothing (step "click-nowhere", which
 * dismisses them), A's old click serial no longer serves. */
static int mode_popup_grab_serial(struct conn *a)
{
	struct conn b;
	conn_open(&b);
	seat_keyboard(a);
	seat_keyboard(&b);
	struct window ta, tb, denied1, denied2, p1, p2, late;
	map_toplevel(a, &ta, "duet-probe-a", solid(a, 300, 200, RED), 0);
	map_toplevel(&b, &tb, "duet-probe-b", solid(&b, 100, 80, GREEN), 0);
	wait_press(&b, "click-b", &b.input.presses);
	wait_press(a, "click-a", &a->input.presses);
	roundtrip(a);
	bool ok = check(a->input.keyboard_focus == ta.surface, "A has the keyboard focus");
	ok &= check(a->input.enter_serial != a->input.press_serial,
	            "the enter and the click differ");
	small_popup(a, &denied1, &ta, a->input.enter_serial);
	ok &= check(denied1.done, "a grab with a serial that is no press is dismissed");
	ok &= check(a->input.keyboard_focus == ta.surface, "a denied grab takes no keyboard focus");
	small_popup(a, &denied2, &ta, b.input.press_serial);
	ok &= check(denied2.done, "a grab with another client's press serial is dismissed");
	struct window orphan;
	small_popup(a, &orphan, &denied1, a->input.press_serial); /* dies on a protocol error */
	ok &= check(orphan.done, "a grab on a dismissed popup is dismissed, not an error");
	small_popup(a, &p1, &ta, a->input.press_serial);
	ok &= check(!p1.done && a->input.keyboard_focus == p1.surface,
	            "a grab with the client's own click serial is taken");
	wait_press(a, "key", &a->input.key_presses);
	small_popup(a, &p2, &p1, a->input.key_serial);
	ok &= check(!p2.done && a->input.keyboard_focus == p2.surface,
	            "a nested grab with a key press's serial is taken");
	step(a, "click-nowhere");
	wait_done(a, &p1);
	ok &= check(p1.done && p2.done, "the click on nothing dismissed the grab");
	small_popup(a, &late, &ta, a->input.press_serial);
	ok &= check(late.done, "a click serial older than the last press is dismissed");
	roundtrip(&b);
	conn_close(&b);
	return ok ? 0 : 1;
}

/* During a grab the pointer is confined to the grabbing client. With the
 * pointer on another client's window, the test presses a key (step
 * "key"), the probe grabs with it: the other client loses the pointer
 * (step "key-grabbed"; the test checks, then clicks there to dismiss).
 * The test clicks the toplevel (step "click"), the probe grabs; the test
 * moves the pointer onto the other client's window and clicks there (step
 * "grabbed"): the other client gets neither enter nor button until the
 * grab is over (tests/integration checks that), the popup is dismissed.
 * Then a second toplevel of this client, a grab on it (step "click-2"),
 * and the test activates the first toplevel (step "own-activated"): the
 * keyboard stays on the grabbing popup. */
static int mode_popup_grab_pointer(struct conn *c)
{
	seat_keyboard(c);
	struct window t, t2, p0, p1, p2;
	map_toplevel(c, &t, "duet-probe", solid(c, 200, 150, RED), 0);
	wait_press(c, "key", &c->input.key_presses);
	map_popup_grab(c, &p0, &t, 20, 20, solid(c, 60, 60, GREEN), 60, 60, c->input.key_serial);
	roundtrip(c);
	bool ok = check(!p0.done && c->input.keyboard_focus == p0.surface,
	                "the key's grab is taken");
	step(c, "key-grabbed");
	wait_done(c, &p0);
	ok &= check(p0.done, "a click on another client's window dismisses it");
	wait_press(c, "click", &c->input.presses);
	map_popup_grab(c, &p1, &t, 20, 20, solid(c, 60, 60, GREEN), 60, 60, c->input.press_serial);
	roundtrip(c);
	ok &= check(!p1.done && c->input.keyboard_focus == p1.surface, "the click's grab is taken");
	step(c, "grabbed");
	wait_done(c, &p1);
	ok &= check(p1.done, "a click on another client's window dismisses the grab");
	map_toplevel(c, &t2, "duet-probe-2", solid(c, 100, 80, YELLOW), 0);
	wait_press(c, "click-2", &c->input.presses);
	map_popup_grab(c, &p2, &t2, 10, 10, solid(c, 40, 40, BLUE), 40, 40, c->input.press_serial);
	roundtrip(c);
	ok &= check(!p2.done && c->input.keyboard_focus == p2.surface, "the second grab is taken");
	step(c, "own-activated");
	roundtrip(c);
	ok &= check(!p2.done, "the client's own window taking the focus keeps the grab");
	ok &= check(c->input.keyboard_focus == p2.surface,
	            "the grabbing popup keeps the keyboard focus meanwhile");
	return ok ? 0 : 1;
}

static const struct {
	const char *name;
	int (*run)(struct conn *c);
} modes[] = {
	{"popup-grab", mode_popup_grab},
	{"popup-grab-serial", mode_popup_grab_serial},
	{"popup-grab-pointer", mode_popup_grab_pointer},
	{"subsurface-merge", mode_subsurface_merge},
	{"subsurface-feedback", mode_subsurface_feedback},
	{"maximize-ack", mode_maximize_ack},
	{"buffer-transform", mode_buffer_transform},
	{"offset", mode_offset},
	{"selection-focus", mode_selection_focus},
	{"subsurface-restack", mode_subsurface_restack},
	{"viewport-scale", mode_viewport_scale},
	{"positioner-constrain", mode_positioner_constrain},
	{"selection-transfer", mode_selection_transfer},
	{"minimize", mode_minimize},
	{"dialog", mode_dialog},
};

int main(int argc, char **argv)
{
	size_t n = sizeof(modes) / sizeof(modes[0]);
	for (size_t i = 0; argc == 2 && i < n; i++) {
		if (strcmp(argv[1], modes[i].name) != 0)
			continue;
		setvbuf(stdout, NULL, _IOLBF, 0);
		struct conn c;
		conn_open(&c);
		int status = modes[i].run(&c);
		roundtrip(&c);
		printf("done\n");
		conn_close(&c);
		return status;
	}
	fprintf(stderr, "usage: duet-wl-probe MODE\nmodes:");
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, " %s", modes[i].name);
	fprintf(stderr, "\n");
	return 2;
}
