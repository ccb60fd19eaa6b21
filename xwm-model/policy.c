/* Window-management policy of duet-xwm. compositor/policy/policy.c implements the
 * same rules for Wayland; keep the two readable side by side and equal.
 *
 * The rules:
 *  1. Placement: a new window is centered on the screen; if it is larger
 *     than the screen its top-left corner is clamped to stay on screen.
 *  2. A newly mapped window is raised to the top and gets the focus.
 *  3. Focus: exactly one window, the focused one, is _NET_ACTIVE_WINDOW and
 *     has the input focus (SetInputFocus and/or WM_TAKE_FOCUS as its hints
 *     say). When it unmaps, closes or is minimized, focus goes to the
 *     topmost remaining visible window (or nobody).
 *  4. Activate (a button press on a window, or a request): raise + focus;
 *     a minimized window is shown again first. A window raised (here or by
 *     rule 2) takes its visible dialogs (rule 11's WM_TRANSIENT_FOR
 *     children, and theirs) up with it, above it in their order, as
 *     openbox, i3 and weston keep transients above their parents.
 *  5. Maximize / fullscreen: the window is configured to the screen size at
 *     0,0 and its previous position and size are saved; un-maximize and
 *     un-fullscreen restore them. Fullscreen takes precedence over maximize.
 *  6. Minimize hides the window (ICCCM Iconic: unmapped by us, WM_STATE 3)
 *     and focus moves on as in 3.
 *  7. Resize (WM-initiated, e.g. by the bench): a configure with the size
 *     constrained to the window's min/max hints (and, X only, its resize
 *     increments, which the ICCCM asks a WM to honour). The window keeps
 *     its top-left corner.
 *  8. Close sends the client a close request (WM_DELETE_WINDOW); the client
 *     decides. A client without WM_DELETE_WINDOW cannot be asked: it is
 *     disconnected (XKillClient), as ICCCM window managers do (openbox, i3,
 *     weston), so that closing a window never silently does nothing.
 *  9. Initial size: the client's own (X clients choose it before mapping,
 *     through ConfigureRequest), or the screen size if it asked for
 *     maximized or fullscreen (_NET_WM_STATE) before mapping.
 * 10. X only (Wayland clients cannot ask for it): ConfigureRequest: before the window is mapped everything is honoured
 *     (sizes constrained); once mapped, only the size, constrained, and
 *     not while maximized or fullscreen. Position and stacking requests of
 *     mapped windows are refused, as a Wayland client cannot move or raise
 *     itself. Every request gets the ICCCM synthetic ConfigureNotify.
 * 11. A dialog (_NET_WM_WINDOW_TYPE_DIALOG or WM_TRANSIENT_FOR) is
 *     centered over its WM_TRANSIENT_FOR parent when that is a visible
 *     managed window (clamped to the screen), else placed as rule 1.
 *     duet-compositor's rule 11 does the same for xdg_toplevel.set_parent.
 */
#include "model.h"

/* Rule 3's candidates: what xdg-shell calls mapped and not minimized. */
bool xwm_window_visible(const struct xwm_window *w)
{
	const struct xwm_client *c = w->client;

	return c && c->managed && c->mapped && !c->minimized;
}

static void set_focus(struct xwm *xwm, struct xwm_window *w)
{
	if (xwm->focused == w)
		return;
	xwm_set_focus(xwm, w);
}

static void focus_topmost(struct xwm *xwm, struct xwm_window *except)
{
	/* xwm->stack is bottom first: walk it from the top. */
	for (struct duet_list *l = xwm->stack.prev; l != &xwm->stack; l = l->prev) {
		struct xwm_window *w = duet_container_of(l, struct xwm_window, link);
		if (w != except && xwm_window_visible(w)) {
			set_focus(xwm, w);
			return;
		}
	}
	set_focus(xwm, NULL);
}

/* Rule 4's raise. The dialogs are gathered before any is raised (raising
 * reorders the stack), bottom first so that they keep their order; depth
 * bounds a loop of WM_TRANSIENT_FOR, which clients can make. */
static void raise_with_dialogs(struct xwm_window *w, int depth)
{
	xwm_window_raise(w);
	if (depth >= 8)
		return;
	struct xwm_window *children[16];
	size_t n = 0;
	/* (A 17th open dialog of one window stays where it is.) */
	for (struct duet_list *l = w->xwm->stack.next; l != &w->xwm->stack; l = l->next) {
		struct xwm_window *child = duet_container_of(l, struct xwm_window, link);
		if (n < sizeof(children) / sizeof(children[0]) && child != w && child->client &&
		    child->client->transient_for == w->id && xwm_window_visible(child))
			children[n++] = child;
	}
	for (size_t i = 0; i < n; i++)
		raise_with_dialogs(children[i], depth + 1);
}

void xwm_policy_place(int screen_w, int screen_h, int width, int height, int *x, int *y)
{
	int px = (screen_w - width) / 2;
	int py = (screen_h - height) / 2;
	*x = px < 0 ? 0 : px;
	*y = py < 0 ? 0 : py;
}

void xwm_policy_place_over(int px, int py, int pw, int ph, int screen_w, int screen_h,
                           int width, int height, int *x, int *y)
{
	int cx = px + (pw - width) / 2, cy = py + (ph - height) / 2;
	cx = cx > screen_w - width ? screen_w - width : cx;
	cy = cy > screen_h - height ? screen_h - height : cy;
	*x = cx < 0 ? 0 : cx;
	*y = cy < 0 ? 0 : cy;
}

void xwm_policy_window_place(struct xwm_window *w)
{
	struct xwm_client *c = w->client;
	int sw, sh;
	xwm_policy_screen_size(w->xwm, &sw, &sh);
	if (c->maximized || c->fullscreen) {
		c->saved_width = w->width;
		c->saved_height = w->height;
		xwm_policy_place(sw, sh, w->width, w->height, &c->saved_x, &c->saved_y);
		xwm_window_move_resize(w, 0, 0, sw, sh);
	} else {
		int x, y;
		struct xwm_window *parent = c->transient_for ?
			xwm_window_lookup(w->xwm, c->transient_for) : NULL;
		if (parent && parent != w && xwm_window_visible(parent)) {
			xwm_policy_place_over(parent->x, parent->y, parent->width, parent->height,
			                      sw, sh, w->width, w->height, &x, &y);
		} else {
			xwm_policy_place(sw, sh, w->width, w->height, &x, &y);
		}
		xwm_window_move_resize(w, x, y, w->width, w->height);
	}
	raise_with_dialogs(w, 0);
}

void xwm_policy_window_mapped(struct xwm_window *w)
{
	set_focus(w->xwm, w);
}

void xwm_policy_window_unmapped(struct xwm_window *w)
{
	if (w->xwm->focused == w)
		focus_topmost(w->xwm, w);
}

void xwm_policy_activate(struct xwm_window *w)
{
	if (!w || !w->client || !w->client->managed || !w->client->mapped)
		return;
	if (w->client->minimized) {
		w->client->minimized = false;
		xwm_window_set_hidden(w, false);
	}
	raise_with_dialogs(w, 0);
	set_focus(w->xwm, w);
}

void xwm_policy_close(struct xwm_window *w)
{
	xwm_window_send_close(w);
}

void xwm_policy_constrain_size(const struct xwm_window *w, int *width, int *height)
{
	xwm_hints_constrain(&w->client->hints, width, height);
}

void xwm_policy_resize(struct xwm_window *w, int width, int height)
{
	xwm_policy_constrain_size(w, &width, &height);
	xwm_window_resize(w, width, height);
}

void xwm_policy_configure_request(struct xwm_window *w, uint16_t mask, int x, int y,
                                  int width, int height)
{
	struct xwm_client *c = w->client;
	int nx = w->x, ny = w->y;
	int nw = (mask & XCB_CONFIG_WINDOW_WIDTH) ? width : w->width;
	int nh = (mask & XCB_CONFIG_WINDOW_HEIGHT) ? height : w->height;

	if (c->mapped && (c->maximized || c->fullscreen)) {
		/* The screen-sized configure stands; the synthetic notify
		 * (sent by move_resize) tells the client so. */
		xwm_window_move_resize(w, w->x, w->y, w->width, w->height);
		return;
	}
	if (!c->mapped) {
		if (mask & XCB_CONFIG_WINDOW_X)
			nx = x;
		if (mask & XCB_CONFIG_WINDOW_Y)
			ny = y;
	}
	xwm_policy_constrain_size(w, &nw, &nh);
	xwm_window_move_resize(w, nx, ny, nw, nh);
}

static void save_geometry(struct xwm_window *w)
{
	struct xwm_client *c = w->client;

	c->saved_x = w->x;
	c->saved_y = w->y;
	c->saved_width = w->width;
	c->saved_height = w->height;
}

static void restore_geometry(struct xwm_window *w)
{
	struct xwm_client *c = w->client;

	xwm_window_move_resize(w, c->saved_x, c->saved_y, c->saved_width, c->saved_height);
}

static void fill_screen(struct xwm_window *w)
{
	int sw, sh;
	xwm_policy_screen_size(w->xwm, &sw, &sh);
	xwm_window_move_resize(w, 0, 0, sw, sh);
}

void xwm_policy_request_maximize(struct xwm_window *w, bool maximize)
{
	struct xwm_client *c = w->client;

	if (c->maximized == maximize)
		return; /* X needs no reply when nothing changes */
	if (maximize && !c->fullscreen && c->mapped)
		save_geometry(w);
	c->maximized = maximize;
	if (!c->mapped)
		return; /* applied at map (rule 9) */
	if (c->fullscreen)
		return; /* fullscreen size stays */
	else if (maximize)
		fill_screen(w);
	else
		restore_geometry(w);
}

void xwm_policy_request_fullscreen(struct xwm_window *w, bool fullscreen)
{
	struct xwm_client *c = w->client;

	if (c->fullscreen == fullscreen)
		return;
	if (fullscreen && !c->maximized && c->mapped)
		save_geometry(w);
	c->fullscreen = fullscreen;
	if (!c->mapped)
		return;
	if (fullscreen || c->maximized)
		fill_screen(w);
	else
		restore_geometry(w);
}

void xwm_policy_request_minimize(struct xwm_window *w)
{
	struct xwm_client *c = w->client;

	if (!c->mapped || c->minimized)
		return;
	c->minimized = true;
	xwm_window_set_hidden(w, true);
	if (w->xwm->focused == w)
		focus_topmost(w->xwm, w);
}

const struct xwm_policy_ops xwm_default_policy = {
	.window_place = xwm_policy_window_place,
	.window_mapped = xwm_policy_window_mapped,
	.window_unmapped = xwm_policy_window_unmapped,
	.activate = xwm_policy_activate,
	.close = xwm_policy_close,
	.resize = xwm_policy_resize,
	.configure_request = xwm_policy_configure_request,
	.request_maximize = xwm_policy_request_maximize,
	.request_fullscreen = xwm_policy_request_fullscreen,
	.request_minimize = xwm_policy_request_minimize,
};
