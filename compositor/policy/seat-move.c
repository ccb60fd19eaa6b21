/* Interactive move and resize (xdg_toplevel.move / .resize): a pointer
 * grab that lasts while the button of the press it answers is held.
 *
 * While it lasts the pointer belongs to the compositor: the window's
 * surface gets a leave (no client sees the drag's motion), every motion
 * moves the window by as much as the pointer moved, or asks the client
 * for the size the pointer's travel gives (a configure with the resizing
 * state, within its min/max size; for the top and left edges the window
 * moves with the new size when the client commits it, so the opposite
 * edge stays). Releasing the last button ends it; the pointer's focus is
 * then picked again. A request whose serial is not this client's latest
 * button press, or comes after that button went up, starts nothing
 * (xdg_toplevel.move: "the server may ignore move requests depending on
 * the state of the surface"). */
#include <wayland-server-protocol.h>

#include "seat-types.h"
#include "xdg-shell-server-protocol.h"

static void move_motion(struct seat_pointer_grab *grab, double x, double y);
static void move_end(struct seat_pointer_grab *grab);

static const struct seat_pointer_grab_interface move_grab_interface = {
	.motion = move_motion,
	.end = move_end,
};

bool comp_seat_start_move(struct comp_server *server, struct comp_window *window,
                          struct wl_client *client, uint32_t serial, bool resize,
                          uint32_t edges)
{
	struct comp_seat *seat = server->seat;
	if (!seat || seat->grab || !window->mapped || seat->buttons.size == 0 ||
	    !seat_grab_press_matches(&seat->pointer_press, client, serial))
		return false;
	struct seat_move *move = &seat->move;
	move->grab.interface = &move_grab_interface;
	move->window = window;
	move->resize = resize;
	move->edges = edges;
	move->start_x = seat->x;
	move->start_y = seat->y;
	move->window_x = window->x;
	move->window_y = window->y;
	move->width = window->geometry.width;
	move->height = window->geometry.height;
	if (resize) {
		window->resizing = true;
		comp_window_send_state(window);
	}
	/* The drag is the compositor's: the surface loses the pointer. */
	seat_pointer_set_focus(seat, NULL, 0, 0);
	seat_pointer_grab_start(seat, &move->grab);
	return true;
}

bool comp_seat_start_move_pressed(struct comp_server *server, struct comp_window *window,
                                  struct wl_client *client, bool resize, uint32_t edges)
{
	return server->seat && comp_seat_start_move(server, window, client,
	                                            server->seat->pointer_press.serial, resize,
	                                            edges);
}

static void move_motion(struct seat_pointer_grab *grab, double x, double y)
{
	struct seat_move *move = wl_container_of(grab, move, grab);
	struct comp_window *window = move->window;
	int dx = (int)(x - move->start_x), dy = (int)(y - move->start_y);
	if (!move->resize) {
		comp_window_set_position(window, move->window_x + dx, move->window_y + dy);
		return;
	}
	int w = move->width, h = move->height;
	if (move->edges & XDG_TOPLEVEL_RESIZE_EDGE_LEFT)
		w -= dx;
	else if (move->edges & XDG_TOPLEVEL_RESIZE_EDGE_RIGHT)
		w += dx;
	if (move->edges & XDG_TOPLEVEL_RESIZE_EDGE_TOP)
		h -= dy;
	else if (move->edges & XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM)
		h += dy;
	w = w < 1 ? 1 : w;
	h = h < 1 ? 1 : h;
	comp_window_constrain_size(window, &w, &h);
	comp_window_configure(window, w, h);
	/* The opposite edge stays: the window moves with the new size. */
	if (move->edges & (XDG_TOPLEVEL_RESIZE_EDGE_LEFT | XDG_TOPLEVEL_RESIZE_EDGE_TOP))
		comp_window_move_on_ack(window,
		                        move->edges & XDG_TOPLEVEL_RESIZE_EDGE_LEFT
		                                ? move->window_x + move->width - w
		                                : window->x,
		                        move->edges & XDG_TOPLEVEL_RESIZE_EDGE_TOP
		                                ? move->window_y + move->height - h
		                                : window->y);
}

void comp_seat_window_unmapped(struct comp_server *server, struct comp_window *window)
{
	if (server->seat && server->seat->grab == &server->seat->move.grab &&
	    server->seat->move.window == window)
		seat_pointer_grab_end(server->seat);
}

static void move_end(struct seat_pointer_grab *grab)
{
	struct seat_move *move = wl_container_of(grab, move, grab);
	struct comp_window *window = move->window;
	if (!window)
		return;
	move->window = NULL;
	if (move->resize && window->mapped) {
		window->resizing = false;
		comp_window_send_state(window);
	}
}
