/* The comp_window functions policy.c uses, whatever the window's kind:
 * what they share is here, the rest is the window's impl (an xdg_toplevel,
 * xdg-toplevel.c; an X window, xwayland-window.c). */
#include "comp.h"

void comp_window_configure(struct comp_window *window, int width, int height)
{
	window->impl->configure(window, width, height);
}

void comp_window_send_state(struct comp_window *window)
{
	window->impl->send_state(window);
}

void comp_window_send_close(struct comp_window *window)
{
	window->impl->send_close(window);
}

void comp_window_set_position(struct comp_window *window, int x, int y)
{
	window->x = x;
	window->y = y;
	window->impl->moved(window);
	/* A move alone (no commit follows it, as after a pager's move) must
	 * still reach the screen: the old and the new place are damaged. */
	if (window->mapped)
		comp_layout_repaint_damaged(window->server);
}

void comp_window_move_on_ack(struct comp_window *window, int x, int y)
{
	window->impl->move_on_ack(window, x, y);
}

void comp_window_raise(struct comp_window *window)
{
	wl_list_remove(&window->link);
	wl_list_insert(&window->server->windows, &window->link);
	if (window->impl->raised)
		window->impl->raised(window);
	comp_stack_update(window->server);
}

void comp_window_set_hidden(struct comp_window *window, bool hidden)
{
	window->impl->set_hidden(window, hidden);
}

void comp_window_constrain_size(const struct comp_window *window, int *width, int *height)
{
	if (window->min_width > 0 && *width < window->min_width)
		*width = window->min_width;
	if (window->min_height > 0 && *height < window->min_height)
		*height = window->min_height;
	if (window->max_width > 0 && *width > window->max_width)
		*width = window->max_width;
	if (window->max_height > 0 && *height > window->max_height)
		*height = window->max_height;
}

static void windows_for_each_surface(struct comp_server *server, comp_surface_iter_t fn,
                                     void *data)
{
	struct comp_window *window;
	wl_list_for_each_reverse(window, &server->windows, link) {
		if (!window->mapped || window->minimized || !window->surface)
			continue;
		comp_surface_tree_for_each(window->surface, fn, data);
		if (window->impl->for_each_popup_surface)
			window->impl->for_each_popup_surface(window, fn, data);
	}
}

const struct comp_stack_layer comp_shell_windows_layer = {
	.for_each_surface = windows_for_each_surface,
};
