/* Unit tests of xwm-model/policy.c: the same rules as compositor/policy/policy.c,
 * checked against stubs of the X calls of actions.c that record what the policy
 * asked for. No X server needed. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "model.h"

/* ---------------------------------------------- stubs of the X side */

static int screen_w = 1920, screen_h = 1080;
static int configures, closes;
static struct xwm_window *last_closed;

void xwm_policy_screen_size(const struct xwm *xwm, int *w, int *h)
{
	(void)xwm;
	*w = screen_w;
	*h = screen_h;
}
void xwm_window_move_resize(struct xwm_window *w, int x, int y, int width, int height)
{
	configures++;
	w->x = x;
	w->y = y;
	w->width = width;
	w->height = height;
}
void xwm_window_resize(struct xwm_window *w, int width, int height)
{
	xwm_window_move_resize(w, w->x, w->y, width, height);
}
void xwm_window_raise(struct xwm_window *w)
{
	duet_list_remove(&w->link);
	duet_list_insert_after(w->xwm->stack.prev, &w->link);
}
void xwm_window_set_hidden(struct xwm_window *w, bool hidden) { (void)w; (void)hidden; }
void xwm_set_focus(struct xwm *xwm, struct xwm_window *w) { xwm->focused = w; }
void xwm_window_send_close(struct xwm_window *w)
{
	closes++;
	last_closed = w;
}

/* ------------------------------------------------------------ helpers */

static struct xwm xwm;
static struct xwm_window windows[4];
static struct xwm_client clients[4];

struct xwm_window *xwm_window_lookup(struct xwm *x, xcb_window_t id)
{
	(void)x;
	for (int i = 0; i < 4; i++)
		if (windows[i].xwm && windows[i].id == id)
			return &windows[i];
	return NULL;
}

static struct xwm_window *new_window(int i, int width, int height)
{
	struct xwm_window *w = &windows[i];
	memset(w, 0, sizeof(*w));
	memset(&clients[i], 0, sizeof(clients[i]));
	w->client = &clients[i];
	w->xwm = &xwm;
	w->id = (xcb_window_t)(0x100 + i);
	w->client->managed = true;
	w->width = width;
	w->height = height;
	duet_list_insert_after(xwm.stack.prev, &w->link);
	return w;
}

static struct xwm_window *top(void)
{
	return duet_container_of(xwm.stack.prev, struct xwm_window, link);
}

static void map(struct xwm_window *w)
{
	w->client->mapped = true;
	xwm_policy_window_place(w);
	xwm_policy_window_mapped(w);
}

static void unmap(struct xwm_window *w)
{
	w->client->mapped = false;
	xwm_policy_window_unmapped(w);
}

static void reset(void)
{
	memset(&xwm, 0, sizeof(xwm));
	duet_list_init(&xwm.stack);
	configures = closes = 0;
	last_closed = NULL;
}

/* -------------------------------------------------------------- tests */

static void test_place(void)
{
	int x, y;
	puts("rule 1: centered, clamped to the top-left when too large");
	xwm_policy_place(1920, 1080, 800, 600, &x, &y);
	CHECK(x == 560 && y == 240);
	xwm_policy_place(1920, 1080, 3000, 500, &x, &y);
	CHECK(x == 0 && y == 290);
	xwm_policy_place(1920, 1080, 1921, 1081, &x, &y);
	CHECK(x == 0 && y == 0);
}

static void test_map_focus(void)
{
	reset();
	puts("rule 2: a mapped window is placed, raised and focused");
	struct xwm_window *a = new_window(0, 400, 300);
	struct xwm_window *b = new_window(1, 200, 100);
	map(b);
	map(a);
	CHECK(a->x == 760 && a->y == 390);
	CHECK(top() == a && xwm.focused == a);

	puts("rule 3: unmapping the focused window focuses the topmost visible one");
	unmap(a);
	CHECK(xwm.focused == b);
	unmap(b);
	CHECK(xwm.focused == NULL);

	puts("rule 3: unmapping an unfocused window keeps the focus");
	map(a);
	map(b);
	unmap(a);
	CHECK(xwm.focused == b);
}

static void test_activate_minimize(void)
{
	reset();
	struct xwm_window *a = new_window(0, 100, 100);
	struct xwm_window *b = new_window(1, 100, 100);
	map(a);
	map(b);
	puts("rule 4: activate raises and focuses");
	xwm_policy_activate(a);
	CHECK(top() == a && xwm.focused == a);
	puts("rule 6: minimize hides and moves the focus on");
	xwm_policy_request_minimize(a);
	CHECK(a->client->minimized && xwm.focused == b);
	puts("rule 4: activating a minimized window shows it again");
	xwm_policy_activate(a);
	CHECK(!a->client->minimized && xwm.focused == a && top() == a);
	puts("rule 4: unmapped or unmanaged windows are not activated");
	b->client->mapped = false;
	xwm_policy_activate(b);
	CHECK(xwm.focused == a);
}

static void test_maximize_fullscreen(void)
{
	reset();
	struct xwm_window *a = new_window(0, 400, 300);
	map(a);
	int x = a->x, y = a->y;
	puts("rule 5: maximize fills the screen, unmaximize restores");
	xwm_policy_request_maximize(a, true);
	CHECK(a->client->maximized && a->x == 0 && a->y == 0 && a->width == 1920 && a->height == 1080);
	xwm_policy_request_maximize(a, false);
	CHECK(!a->client->maximized && a->x == x && a->y == y && a->width == 400 && a->height == 300);
	puts("rule 5: fullscreen over maximize, leaving fullscreen keeps maximized");
	xwm_policy_request_maximize(a, true);
	xwm_policy_request_fullscreen(a, true);
	CHECK(a->width == 1920 && a->client->fullscreen);
	xwm_policy_request_fullscreen(a, false);
	CHECK(a->client->maximized && a->width == 1920);
	xwm_policy_request_maximize(a, false);
	CHECK(a->width == 400 && a->height == 300 && a->x == x);
	puts("rule 9: maximized before mapping maps at screen size");
	struct xwm_window *b = new_window(1, 300, 200);
	xwm_policy_request_maximize(b, true);
	CHECK(b->width == 300); /* nothing happens before map */
	map(b);
	CHECK(b->x == 0 && b->y == 0 && b->width == 1920 && b->height == 1080);
	xwm_policy_request_maximize(b, false);
	CHECK(b->width == 300 && b->height == 200 && b->x == 810 && b->y == 440);
}

static void test_resize_configure(void)
{
	reset();
	struct xwm_window *a = new_window(0, 400, 300);
	a->client->hints.min_width = 200;
	a->client->hints.max_height = 500;
	map(a);
	int x = a->x, y = a->y;
	puts("rule 7: resize is constrained and keeps the top-left corner");
	xwm_policy_resize(a, 100, 900);
	CHECK(a->width == 200 && a->height == 500 && a->x == x && a->y == y);
	xwm_policy_resize(a, 640, 480);
	CHECK(a->width == 640 && a->height == 480);

	puts("rule 10: a mapped window may resize itself but not move");
	xwm_policy_configure_request(a, XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_WIDTH |
	                                XCB_CONFIG_WINDOW_HEIGHT, 5, 5, 50, 50);
	CHECK(a->x == x && a->width == 200 && a->height == 50);
	puts("rule 10: before mapping everything is honoured (size constrained)");
	struct xwm_window *b = new_window(1, 10, 10);
	xwm_policy_configure_request(b, XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y |
	                                XCB_CONFIG_WINDOW_WIDTH, 7, 9, 0, 0);
	CHECK(b->x == 7 && b->y == 9 && b->width == 1 && b->height == 10);
	puts("rule 10: maximized windows keep their size, and every request is answered");
	xwm_policy_request_maximize(a, true);
	int before = configures;
	xwm_policy_configure_request(a, XCB_CONFIG_WINDOW_WIDTH, 0, 0, 10, 0);
	CHECK(a->width == 1920 && configures == before + 1);

	puts("rule 8: close asks the client");
	xwm_policy_close(a);
	CHECK(closes == 1 && last_closed == a);
}

/* Rule 11: dialogs over their parent, kept on the screen. */
static void test_place_over(void)
{
	int x, y;
	xwm_policy_place_over(10, 20, 400, 300, 1920, 1080, 100, 80, &x, &y);
	CHECK(x == 160 && y == 130);
	xwm_policy_place_over(1800, 1000, 400, 300, 1920, 1080, 300, 200, &x, &y);
	CHECK(x == 1620 && y == 880);
	xwm_policy_place_over(-50, -50, 60, 60, 1920, 1080, 300, 200, &x, &y);
	CHECK(x == 0 && y == 0);
}

int main(void)
{
	test_place();
	test_place_over();
	test_map_focus();
	test_activate_minimize();
	test_maximize_fullscreen();
	test_resize_configure();
	return check_finish("all policy checks passed");
}
