/* Window-management policy of duet-compositor. xwm-model/policy.c implements the
 * same rules for X11; keep the two readable side by side and equal (with
 * one output, rule 0 is moot and "its output" is duet-xwm's screen).
 *
 * The rules:
 *  0. Outputs: a window is on the output it is most on; a new window
 *     goes on the output the pointer is on (the first output when the
 *     pointer is on none).
 *  1. Placement: a new window is centered on its output; if it is larger
 *     than the output its top-left corner is clamped to stay on screen.
 *  2. A newly mapped window is raised to the top and gets the focus. (X
 *     windows in X's map order, as duet-xwm maps them: one whose surface
 *     draws after that of the focused window, mapped later in X, maps just
 *     below it, with its dialogs, and the focus stays.)
 *  3. Focus: exactly one window, the focused one, has the "activated" state
 *     and keyboard focus. When it unmaps, closes or is minimized, focus goes
 *     to the topmost remaining visible window (or nobody).
 *  4. Activate (a button press on a window, or a request): raise + focus;
 *     a minimized window is shown again first. A window raised (here or by
 *     rule 2) takes its visible dialogs (rule 11's children, and theirs)
 *     up with it, above it in their order: xdg_toplevel.set_parent stacks
 *     a child above its parent, as window managers keep WM_TRANSIENT_FOR
 *     windows above theirs (openbox, i3, weston).
 *  5. Maximize / fullscreen: the window is configured to its output's size
 *     at that output's top-left corner and its previous position and size are saved; un-maximize and
 *     un-fullscreen restore them. Fullscreen takes precedence over maximize.
 *  6. Minimize hides the window and focus moves on as in 3. An xdg_toplevel
 *     stays mapped for its client; an X window is made iconic as duet-xwm
 *     makes it (unmapped in X, WM_STATE 3), and one its client maps iconic
 *     (WM_HINTS) is a minimized window from the start, placed, not focused.
 *  7. Resize (compositor-initiated, e.g. by the bench): a configure with the
 *     size constrained to the window's min/max hints. The window keeps its
 *     top-left corner.
 *  8. Close sends the client a close request; the client decides. An X
 *     client without WM_DELETE_WINDOW cannot be asked and is disconnected
 *     (XKillClient), as duet-xwm does.
 *  9. Initial size: 0x0 (the client chooses), or the output size if the
 *     client asked for maximized or fullscreen before its first commit.
 *     The first configure already says "activated", since rule 2 focuses
 *     the window as it maps: mapping then costs the client one configure
 *     and one drawing, not a second of each for the focus.
 * 10. (X only, xwm-model/policy.c's: ConfigureRequest.)
 * 11. A dialog (xdg_toplevel.set_parent, or an X window's WM_TRANSIENT_FOR)
 *     is centered over its parent when that is a visible window, kept on
 *     the parent's output; else placed as rule 1. Stacking and focus are
 *     rule 2's: it maps on top and focused, as any new window.
 */
#include "comp.h"

/* Where a new window goes (rule 0). */
static struct comp_output *new_window_output(struct comp_server *server)
{
	double x, y;
	comp_seat_pointer_position(server, &x, &y);
	struct comp_output *output = comp_layout_output_at(server, x, y);
	return output ? output : comp_layout_first_output(server);
}

struct comp_output *comp_policy_window_output(struct comp_window *window)
{
	if (!window->mapped)
		return new_window_output(window->server);
	return comp_layout_output_for_box(window->server, window->x, window->y,
	                                  window->geometry.width, window->geometry.height);
}

static bool window_visible(const struct comp_window *window)
{
	return window->mapped && !window->minimized && window->surface;
}

static void set_focus(struct comp_server *server, struct comp_window *window)
{
	struct comp_window *old = server->focused;
	if (old == window)
		return;
	server->focused = window;
	if (old && old->activated) {
		old->activated = false;
		/* A window that is going away needs no more configures. */
		if (old->mapped)
			comp_window_send_state(old);
	}
	if (window && !window->activated) {
		window->activated = true;
		comp_window_send_state(window);
	}
	/* Another client's window taking the focus ends a popup grab; one of
	 * the grabbing client's own leaves the keyboard on its popup. */
	comp_xdg_popup_grab_input(server, window ? window->surface : NULL);
	comp_seat_set_keyboard_focus(server, comp_xdg_popup_keyboard_target(
		server, window ? window->surface : NULL));
}

static void focus_topmost(struct comp_server *server, struct comp_window *except)
{
	struct comp_window *window;
	wl_list_for_each(window, &server->windows, link) {
		if (window != except && window_visible(window)) {
			set_focus(server, window);
			return;
		}
	}
	set_focus(server, NULL);
}

void comp_policy_window_initial_configure(struct comp_window *window)
{
	struct comp_output *output = new_window_output(window->server);
	/* activated records what the client was told; set_focus at the map
	 * then finds it told and sends nothing more (the focused window
	 * keeps its own state until then: this one is not on screen yet). */
	window->activated = true;
	if (window->maximized || window->fullscreen)
		comp_window_configure(window, output->width, output->height);
	else
		comp_window_configure(window, 0, 0);
}

/* Rule 4's raise. The dialogs are gathered before any is raised (raising
 * reorders the list), bottom first so that they keep their order; depth
 * bounds a loop of parents, which clients can make. */
static void raise_with_dialogs(struct comp_window *window, int depth)
{
	comp_window_raise(window);
	if (depth >= 8)
		return;
	struct comp_window *children[16], *child;
	size_t n = 0;
	/* (A 17th open dialog of one window stays where it is.) */
	wl_list_for_each_reverse(child, &window->server->windows, link) {
		if (n < sizeof(children) / sizeof(children[0]) && child != window &&
		    child->parent_id == window->id && window_visible(child))
			children[n++] = child;
	}
	for (size_t i = 0; i < n; i++)
		raise_with_dialogs(children[i], depth + 1);
}

/* Rule 11's parent: looked up by id at each map, so that a parent gone
 * meanwhile leaves nothing dangling. */
static struct comp_window *visible_parent(struct comp_window *window)
{
	struct comp_window *parent;
	if (!window->parent_id)
		return NULL;
	wl_list_for_each(parent, &window->server->windows, link) {
		if (parent->id == window->parent_id)
			return parent != window && window_visible(parent) ? parent : NULL;
	}
	return NULL;
}

/* Rule 1 (centered on the output) or 11 (centered over the parent); the
 * clamps are xwm_policy_place_over's, on the output's rectangle. */
static void place(struct comp_window *window, struct comp_output *output)
{
	int w = window->geometry.width, h = window->geometry.height;
	struct comp_window *parent = visible_parent(window);
	if (parent)
		output = comp_policy_window_output(parent);
	int x = output->x + (output->width - w) / 2, y = output->y + (output->height - h) / 2;
	if (parent) {
		x = parent->x + (parent->geometry.width - w) / 2;
		y = parent->y + (parent->geometry.height - h) / 2;
		x = x > output->x + output->width - w ? output->x + output->width - w : x;
		y = y > output->y + output->height - h ? output->y + output->height - h : y;
	}
	comp_window_set_position(window, x < output->x ? output->x : x,
	                         y < output->y ? output->y : y);
}

static void place_new(struct comp_window *window)
{
	struct comp_output *output = new_window_output(window->server);
	if (window->maximized || window->fullscreen)
		comp_window_set_position(window, output->x, output->y);
	else
		place(window, output);
}

void comp_policy_window_mapped(struct comp_window *window)
{
	place_new(window);
	raise_with_dialogs(window, 0);
	/* One that maps minimized (an X client's IconicState) is placed and
	 * raised as duet-xwm does, and stays without the focus (rule 3). */
	if (!window->minimized)
		set_focus(window->server, window);
}

void comp_policy_window_mapped_below(struct comp_window *window, struct comp_window *above)
{
	place_new(window);
	raise_with_dialogs(window, 0);
	raise_with_dialogs(above, 0);
}

void comp_policy_window_unmapped(struct comp_window *window)
{
	comp_seat_window_unmapped(window->server, window);
	if (window->server->focused == window)
		focus_topmost(window->server, window);
}

void comp_policy_activate(struct comp_window *window)
{
	if (!window || !window->mapped)
		return;
	if (window->minimized) {
		window->minimized = false;
		comp_window_set_hidden(window, false);
	}
	raise_with_dialogs(window, 0);
	set_focus(window->server, window);
}

void comp_policy_window_surface_changed(struct comp_window *window)
{
	struct comp_server *server = window->server;
	if (server->focused == window)
		comp_seat_set_keyboard_focus(server, comp_xdg_popup_keyboard_target(server,
		                                                                    window->surface));
}

void comp_policy_close(struct comp_window *window)
{
	comp_window_send_close(window);
}

void comp_policy_resize(struct comp_window *window, int width, int height)
{
	comp_window_constrain_size(window, &width, &height);
	comp_window_configure(window, width, height);
}

static void save_geometry(struct comp_window *window)
{
	window->saved_x = window->x;
	window->saved_y = window->y;
	window->saved_width = window->geometry.width;
	window->saved_height = window->geometry.height;
}

/* The window moves when the client has acked the configure and drawn
 * for it, not before (rule 5 takes effect with the client's new content). */
static void restore_geometry(struct comp_window *window)
{
	comp_window_configure(window, window->saved_width, window->saved_height);
	if (window->mapped)
		comp_window_move_on_ack(window, window->saved_x, window->saved_y);
}

static void fill_output(struct comp_window *window)
{
	struct comp_output *output = comp_policy_window_output(window);
	comp_window_configure(window, output->width, output->height);
	if (window->mapped)
		comp_window_move_on_ack(window, output->x, output->y);
}

/* What maximize and fullscreen requests share: a request for the state
 * the window is in still gets a configure (the spec wants one even when
 * nothing changes), and the first of the two states to be entered saves
 * the geometry to go back to. True when the window is mapped and so must
 * change its size now; an unmapped one's initial configure will carry the
 * state. */
static bool set_size_state(struct comp_window *window, bool *state, bool other, bool on)
{
	if (*state == on) {
		if (window->mapped)
			comp_window_send_state(window);
		return false;
	}
	if (on && !other && window->mapped)
		save_geometry(window);
	*state = on;
	return window->mapped;
}

void comp_policy_request_maximize(struct comp_window *window, bool maximize)
{
	if (!set_size_state(window, &window->maximized, window->fullscreen, maximize))
		return;
	if (window->fullscreen)
		comp_window_send_state(window); /* fullscreen size stays */
	else if (maximize)
		fill_output(window);
	else
		restore_geometry(window);
}

void comp_policy_request_fullscreen(struct comp_window *window, bool fullscreen)
{
	if (!set_size_state(window, &window->fullscreen, window->maximized, fullscreen))
		return;
	if (fullscreen || window->maximized)
		fill_output(window);
	else
		restore_geometry(window);
}

void comp_policy_request_minimize(struct comp_window *window)
{
	if (!window->mapped || window->minimized)
		return;
	window->minimized = true;
	comp_window_set_hidden(window, true);
	if (window->server->focused == window)
		focus_topmost(window->server, window);
	comp_stack_update(window->server);
}

const struct comp_policy_listener comp_policy_listener = {
	.window_initial_configure = comp_policy_window_initial_configure,
	.window_mapped = comp_policy_window_mapped,
	.window_unmapped = comp_policy_window_unmapped,
	.window_output = comp_policy_window_output,
	.activate = comp_policy_activate,
	.request_maximize = comp_policy_request_maximize,
	.request_fullscreen = comp_policy_request_fullscreen,
	.request_minimize = comp_policy_request_minimize,
	.request_move = comp_seat_start_move,
};
