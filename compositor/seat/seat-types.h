/* The seat's types and each seat file's functions, shared by seat.c
 * (wl_seat, pointer, keyboard), seat-touch.c (wl_touch), seat-resources.c
 * and policy/seat-move.c (the move/resize grab). */
#ifndef DUET_SEAT_TYPES_H
#define DUET_SEAT_TYPES_H

#include <stdbool.h>
#include <stdint.h>
#include <wayland-server-core.h>
#include <wayland-server-protocol.h>

#include "comp.h"

struct xkb_context;
struct xkb_keymap;
struct xkb_state;

/* A press that may start a grab: its serial and the client it went to
 * (NULL when it went to nobody, or once that client is gone, so that a
 * later client at the same address inherits nothing). */
struct grab_press {
	uint32_t serial;
	struct wl_client *client;
	struct wl_listener client_destroy;
};

/* A pointer grab (weston_pointer_grab's model): while one is active the
 * pointer is the compositor's; seat.c hands it the pointer's motion and
 * ends it when the last button goes up, telling the grab's owner through
 * these callbacks rather than calling it by name. */
struct seat_pointer_grab;
struct seat_pointer_grab_interface {
	/* The pointer moved to layout x, y. */
	void (*motion)(struct seat_pointer_grab *grab, double x, double y);
	/* The grab is over (last button up, seat going, or
	 * seat_pointer_grab_end): seat->grab is already NULL. */
	void (*end)(struct seat_pointer_grab *grab);
};
struct seat_pointer_grab {
	const struct seat_pointer_grab_interface *interface;
};

/* An interactive move or resize (policy/seat-move.c, which installs its
 * grab); window NULL: none. */
struct seat_move {
	struct seat_pointer_grab grab;
	struct comp_window *window;
	bool resize;
	uint32_t edges;            /* xdg_toplevel.resize_edge */
	double start_x, start_y;   /* the pointer when it began */
	int window_x, window_y, width, height; /* the window's geometry then */
};

/* The xdg_popup grab, asked through the shell's table
 * (comp_server.popup_grab): the client that holds it (NULL: none), and a
 * press or touch down that went to surface. */
static inline struct wl_client *seat_popup_grab_client(struct comp_server *server)
{
	return server->popup_grab ? server->popup_grab->grabbing_client(server) : NULL;
}

static inline void seat_popup_grab_input(struct comp_server *server, struct comp_surface *surface)
{
	if (server->popup_grab)
		server->popup_grab->input_to(server, surface);
}

/* wl_touch (seat-touch.c). */
struct seat_touch {
	struct wl_list resources; /* wl_touch resources */
	struct wl_list points;    /* struct touch_point: down, or up and awaiting a frame */
	bool ever;                /* it had the capability once: get_touch is allowed */
	struct grab_press press;  /* the last touch down, for xdg_popup.grab */
};

struct comp_seat {
	struct comp_server *server;
	struct wl_global *global;
	struct wl_listener display_destroy;

	struct wl_list seats;     /* wl_seat resources */
	struct wl_list pointers;  /* wl_pointer resources */
	struct wl_list keyboards; /* wl_keyboard resources */

	/* pointer */
	double x, y;                    /* layout coordinates (output-layout.c) */
	struct comp_surface *pointer_focus;
	struct wl_listener pointer_focus_destroy;
	uint32_t pointer_enter_serial;
	double focus_sx, focus_sy;      /* where on pointer_focus it was last said to be */
	struct wl_array buttons;        /* uint32_t buttons held: an implicit grab */

	/* keyboard */
	struct xkb_context *xkb;
	struct xkb_keymap *keymap;
	struct xkb_state *xkb_state;
	int keymap_fd;                  /* sealed memfd, -1 if no keymap */
	uint32_t keymap_size;
	struct wl_array pressed;        /* uint32_t evdev keycodes */
	struct comp_surface *keyboard_focus;
	struct wl_listener keyboard_focus_destroy;
	uint32_t keyboard_focus_serial; /* of the enter that gave it the focus */
	struct {
		uint32_t depressed, latched, locked, group;
	} mods;

	struct seat_touch touch;
	struct seat_move move;
	struct seat_pointer_grab *grab; /* NULL: none */

	/* The last button press and key press (and touch.press), for
	 * xdg_popup.grab's serial check: a grab answers one of them
	 * (comp_seat_grab_serial_ok). */
	struct grab_press pointer_press, key_press;
	/* Pending re-pick of the pointer focus after a popup grab began or
	 * ended (comp_seat_pointer_refresh). */
	struct wl_event_source *pointer_refresh;
};

/* seat-resources.c */
void seat_grab_press_init(struct grab_press *press);
void seat_grab_press_forget(struct grab_press *press);
void seat_grab_press_record(struct grab_press *press, struct wl_client *client, uint32_t serial);
bool seat_grab_press_matches(const struct grab_press *press, struct wl_client *client,
                             uint32_t serial);
/* The resource destructor of the seat's lists: leaves its list. */
void seat_unlink_resource(struct wl_resource *resource);
/* Leaves a list's resources alive but inert (the seat is going). */
void seat_detach_resources(struct wl_list *list);
/* Sends wl_seat.capabilities to every wl_seat (a device came or went). */
void seat_send_capabilities(struct comp_seat *seat);

/* The toplevel a click or touch on surface activates, or NULL: subsurfaces
 * belong to the window at the root of their tree. Popups are not windows
 * and activate nothing, so a click in a menu leaves focus where it is. */
static inline struct comp_window *seat_window_for_input(struct comp_surface *surface)
{
	return comp_window_from_surface(surface);
}

/* WL_SEAT_CAPABILITY_TOUCH while a touchscreen is plugged in, or 0. */
static inline uint32_t seat_touch_capability(struct comp_seat *seat)
{
	return seat && seat->server->touch_devices > 0 ? WL_SEAT_CAPABILITY_TOUCH : 0;
}

/* seat.c */

/* Gives the pointer to surface (NULL: nobody) at surface-local sx, sy:
 * leave to the old one, enter to the new. */
void seat_pointer_set_focus(struct comp_seat *seat, struct comp_surface *surface, double sx,
                            double sy);

/* Gives the pointer to grab (none may be active): motion goes to it, not
 * to clients, until it ends. */
void seat_pointer_grab_start(struct comp_seat *seat, struct seat_pointer_grab *grab);
/* Ends the active grab, if any (its end callback runs). */
void seat_pointer_grab_end(struct comp_seat *seat);

/* seat-touch.c */
void seat_touch_init(struct comp_seat *seat);
void seat_touch_finish(struct comp_seat *seat);
void seat_touch_get_touch(struct comp_seat *seat, struct wl_client *client,
                          struct wl_resource *seat_resource, uint32_t id);

#endif
