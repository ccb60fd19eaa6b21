/* wl_seat "seat0" with a pointer, a keyboard and, while a touchscreen is
 * plugged in, touch (wl_touch is in seat-touch.c; the state both share is
 * in seat-types.h).
 *
 * There is no input hardware on the headless output: events come from the
 * test protocol and, on --backend drm, from libinput (input-libinput.c)
 * through comp_seat_pointer_motion, comp_seat_pointer_button,
 * comp_seat_pointer_axis, comp_seat_key and comp_seat_touch_*. Each
 * wl_pointer/wl_keyboard/wl_touch resource sits in one list per device;
 * events go to the resources whose client owns the focused surface (for
 * touch, the surface each touch point went down on), since a client may
 * bind the seat (and ask for a keyboard) more than once.
 *
 * Focus is dropped when the focused wl_surface resource is destroyed, through
 * the resource's own destroy listener rather than comp_surface.destroy_signal:
 * libwayland emits it before the surface's destructor, so the focus is gone
 * before the core's destroy handlers run the policy (which moves focus and
 * would otherwise unlink our listener from the very signal being emitted).
 *
 * A popup grab (xdg-popup.c) confines the pointer to the grabbing client;
 * the seat remembers the last button press, key press and touch down
 * (serial and client) so that xdg_popup.grab can be checked against them.
 *
 * The keymap is compiled once and handed to every client as the same sealed
 * memfd: sealing lets clients map it without being able to change what other
 * clients see.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-server-protocol.h>
#include <xkbcommon/xkbcommon.h>

#include "comp.h"
#include "seat-types.h"

#define SEAT_VERSION 8
#define REPEAT_RATE 25   /* keys per second */
#define REPEAT_DELAY 600 /* ms */

static const struct wl_seat_interface seat_impl;
static const struct wl_pointer_interface pointer_impl;
static const struct wl_keyboard_interface keyboard_impl;

static uint32_t next_serial(struct comp_seat *seat)
{
	return wl_display_next_serial(seat->server->display);
}

static struct wl_client *surface_client(struct comp_surface *surface)
{
	return surface ? wl_resource_get_client(surface->resource) : NULL;
}

bool comp_seat_grab_serial_ok(struct comp_server *server, struct wl_client *client,
                              uint32_t serial)
{
	struct comp_seat *seat = server->seat;
	/* Only the latest press of each device counts, as in weston: a grab
	 * answers the click, key or touch the user just gave this client, not
	 * any event it ever got. */
	return seat && (seat_grab_press_matches(&seat->pointer_press, client, serial) ||
	                seat_grab_press_matches(&seat->key_press, client, serial) ||
	                seat_grab_press_matches(&seat->touch.press, client, serial));
}

/* ------------------------------------------------------------ keymap */

static int keymap_memfd(const char *text, uint32_t *size)
{
	size_t len = strlen(text) + 1; /* clients expect the NUL inside the map */
	int fd = memfd_create("duet-keymap", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		close(fd);
		return -1;
	}
	*size = (uint32_t)len;
	return fd;
}

static const char *env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);
	return v && *v ? v : fallback;
}

/* XKB_DEFAULT_* from the environment, else evdev/pc105/us; if the
 * environment names a layout that does not compile, fall back to us so that
 * a typo does not leave clients without a keyboard. */
static bool keymap_init(struct comp_seat *seat)
{
	seat->keymap_fd = -1;
	seat->xkb = xkb_context_new(XKB_CONTEXT_NO_ENVIRONMENT_NAMES);
	if (!seat->xkb)
		return false;
	struct xkb_rule_names names = {
		.rules = env_or("XKB_DEFAULT_RULES", "evdev"),
		.model = env_or("XKB_DEFAULT_MODEL", "pc105"),
		.layout = env_or("XKB_DEFAULT_LAYOUT", "us"),
		.variant = getenv("XKB_DEFAULT_VARIANT"),
		.options = getenv("XKB_DEFAULT_OPTIONS"),
	};
	seat->keymap = xkb_keymap_new_from_names(seat->xkb, &names, XKB_KEYMAP_COMPILE_NO_FLAGS);
	if (!seat->keymap) {
		comp_log("seat: keymap %s/%s/%s failed to compile, using evdev/pc105/us",
		         names.rules, names.model, names.layout);
		struct xkb_rule_names us = { .rules = "evdev", .model = "pc105", .layout = "us" };
		seat->keymap = xkb_keymap_new_from_names(seat->xkb, &us, XKB_KEYMAP_COMPILE_NO_FLAGS);
	}
	if (!seat->keymap)
		return false;
	seat->xkb_state = xkb_state_new(seat->keymap);
	char *text = xkb_keymap_get_as_string(seat->keymap, XKB_KEYMAP_FORMAT_TEXT_V1);
	if (!seat->xkb_state || !text) {
		free(text);
		return false;
	}
	seat->keymap_fd = keymap_memfd(text, &seat->keymap_size);
	free(text);
	if (seat->keymap_fd < 0) {
		comp_log("seat: cannot create keymap memfd: %s", strerror(errno));
		return false;
	}
	return true;
}

/* --------------------------------------------------------- keyboard */

static void keyboard_send_modifiers(struct comp_seat *seat, struct wl_resource *kbd,
                                    uint32_t serial)
{
	wl_keyboard_send_modifiers(kbd, serial, seat->mods.depressed, seat->mods.latched,
	                           seat->mods.locked, seat->mods.group);
}

static void keyboard_send_enter(struct comp_seat *seat, struct wl_resource *kbd, uint32_t serial)
{
	wl_keyboard_send_enter(kbd, serial, seat->keyboard_focus->resource, &seat->pressed);
	keyboard_send_modifiers(seat, kbd, serial);
}

static void keyboard_handle_release(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static const struct wl_keyboard_interface keyboard_impl = {
	.release = keyboard_handle_release,
};

static void seat_get_keyboard(struct wl_client *client, struct wl_resource *seat_resource,
                              uint32_t id)
{
	struct comp_seat *seat = wl_resource_get_user_data(seat_resource);
	struct wl_resource *kbd = comp_resource_create(client, &wl_keyboard_interface,
	                                               wl_resource_get_version(seat_resource), id,
	                                               &keyboard_impl, seat, seat_unlink_resource);
	if (!kbd)
		return;
	if (!seat) {
		/* Seat already torn down: an inert keyboard. */
		wl_list_init(wl_resource_get_link(kbd));
		return;
	}
	wl_list_insert(&seat->keyboards, wl_resource_get_link(kbd));

	if (seat->keymap_fd >= 0)
		wl_keyboard_send_keymap(kbd, WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1, seat->keymap_fd,
		                        seat->keymap_size);
	else
		wl_keyboard_send_keymap(kbd, WL_KEYBOARD_KEYMAP_FORMAT_NO_KEYMAP, -1, 0);
	if (wl_resource_get_version(kbd) >= WL_KEYBOARD_REPEAT_INFO_SINCE_VERSION)
		wl_keyboard_send_repeat_info(kbd, REPEAT_RATE, REPEAT_DELAY);
	/* The client may already have focus (it asked for the keyboard late). */
	if (seat->keyboard_focus && surface_client(seat->keyboard_focus) == client)
		keyboard_send_enter(seat, kbd, next_serial(seat));
}

static void keyboard_focus_clear(struct comp_seat *seat)
{
	if (seat->keyboard_focus) {
		wl_list_remove(&seat->keyboard_focus_destroy.link);
		wl_list_init(&seat->keyboard_focus_destroy.link);
	}
	seat->keyboard_focus = NULL;
}

/* A destroyed surface gets no leave: its resource is going away and
 * clients drop focus with it. The policy moves focus elsewhere. */
static void handle_keyboard_focus_destroy(struct wl_listener *listener, void *data)
{
	struct comp_seat *seat = wl_container_of(listener, seat, keyboard_focus_destroy);
	keyboard_focus_clear(seat);
	wl_signal_emit(&seat->server->keyboard_client_changed, NULL);
}

bool comp_seat_focus_serial_ok(struct comp_server *server, struct wl_client *client,
                               uint32_t serial)
{
	struct comp_seat *seat = server->seat;
	if (!seat || !seat->keyboard_focus || surface_client(seat->keyboard_focus) != client)
		return false;
	/* Every event the focused client got since its enter carries a serial
	 * in [enter, last sent]; unsigned differences keep that right across
	 * the serials' wrap-around. */
	uint32_t since = serial - seat->keyboard_focus_serial;
	return since <= wl_display_get_serial(server->display) - seat->keyboard_focus_serial;
}

void comp_seat_set_keyboard_focus(struct comp_server *server, struct comp_surface *surface)
{
	struct comp_seat *seat = server->seat;
	if (!seat || seat->keyboard_focus == surface)
		return;
	struct wl_client *old_client = surface_client(seat->keyboard_focus);
	struct wl_client *new_client = surface_client(surface);
	struct wl_resource *kbd;

	if (seat->keyboard_focus) {
		uint32_t serial = next_serial(seat);
		wl_resource_for_each(kbd, &seat->keyboards) {
			if (wl_resource_get_client(kbd) == old_client)
				wl_keyboard_send_leave(kbd, serial, seat->keyboard_focus->resource);
		}
		keyboard_focus_clear(seat);
	}
	if (surface) {
		seat->keyboard_focus = surface;
		wl_resource_add_destroy_listener(surface->resource, &seat->keyboard_focus_destroy);
		uint32_t serial = next_serial(seat);
		seat->keyboard_focus_serial = serial;
		wl_resource_for_each(kbd, &seat->keyboards) {
			if (wl_resource_get_client(kbd) == new_client)
				keyboard_send_enter(seat, kbd, serial);
		}
	}
	if (old_client != new_client)
		wl_signal_emit(&server->keyboard_client_changed, new_client);
}

struct wl_client *comp_seat_get_keyboard_focus_client(struct comp_server *server)
{
	return server->seat ? surface_client(server->seat->keyboard_focus) : NULL;
}

/* Keeps a set of pressed keys or buttons; returns false for a press of one
 * already down or a release of one not down, which clients must not see. */
static bool pressed_update(struct wl_array *pressed, uint32_t key, bool down)
{
	uint32_t *k;
	wl_array_for_each(k, pressed) {
		if (*k != key)
			continue;
		if (down)
			return false;
		uint32_t *last = (uint32_t *)((char *)pressed->data + pressed->size) - 1;
		*k = *last;
		pressed->size -= sizeof(uint32_t);
		return true;
	}
	if (!down)
		return false;
	uint32_t *slot = wl_array_add(pressed, sizeof(*slot));
	if (!slot)
		return false;
	*slot = key;
	return true;
}

void comp_seat_key(struct comp_server *server, uint32_t key, bool pressed, uint32_t time_ms)
{
	struct comp_seat *seat = server->seat;
	if (!seat || !pressed_update(&seat->pressed, key, pressed))
		return;

	bool mods_changed = false;
	if (seat->xkb_state) {
		/* evdev keycodes are XKB keycodes minus 8 */
		xkb_state_update_key(seat->xkb_state, key + 8, pressed ? XKB_KEY_DOWN : XKB_KEY_UP);
		uint32_t d = xkb_state_serialize_mods(seat->xkb_state, XKB_STATE_MODS_DEPRESSED);
		uint32_t la = xkb_state_serialize_mods(seat->xkb_state, XKB_STATE_MODS_LATCHED);
		uint32_t lo = xkb_state_serialize_mods(seat->xkb_state, XKB_STATE_MODS_LOCKED);
		uint32_t g = xkb_state_serialize_layout(seat->xkb_state, XKB_STATE_LAYOUT_EFFECTIVE);
		mods_changed = d != seat->mods.depressed || la != seat->mods.latched ||
		               lo != seat->mods.locked || g != seat->mods.group;
		seat->mods.depressed = d;
		seat->mods.latched = la;
		seat->mods.locked = lo;
		seat->mods.group = g;
	}
	if (!seat->keyboard_focus) {
		if (pressed)
			seat_grab_press_record(&seat->key_press, NULL, 0);
		return;
	}

	struct wl_client *client = surface_client(seat->keyboard_focus);
	uint32_t serial = next_serial(seat);
	if (pressed)
		seat_grab_press_record(&seat->key_press, client, serial);
	struct wl_resource *kbd;
	wl_resource_for_each(kbd, &seat->keyboards) {
		if (wl_resource_get_client(kbd) != client)
			continue;
		wl_keyboard_send_key(kbd, serial, time_ms, key,
		                     pressed ? WL_KEYBOARD_KEY_STATE_PRESSED
		                             : WL_KEYBOARD_KEY_STATE_RELEASED);
		if (mods_changed)
			keyboard_send_modifiers(seat, kbd, serial);
	}
}

/* ----------------------------------------------------------- pointer */

/* Cursor surfaces get a role so that they cannot become windows too; the
 * headless output does not draw a cursor. */
static void cursor_commit(struct comp_surface *surface)
{
}

static const struct comp_surface_role cursor_role = {
	.name = "wl_pointer-cursor",
	.commit = cursor_commit,
};

static void pointer_handle_set_cursor(struct wl_client *client, struct wl_resource *resource,
                                      uint32_t serial, struct wl_resource *surface_resource,
                                      int32_t hotspot_x, int32_t hotspot_y)
{
	/* Nothing draws a cursor yet, so the serial check that decides whether
	 * the image changes has nothing to guard; what remains observable is
	 * the role, and a role clash is an error in any case. */
	if (!surface_resource)
		return;
	struct comp_surface *surface = comp_surface_from_resource(surface_resource);
	if (surface)
		comp_surface_set_role(surface, &cursor_role, NULL, resource, WL_POINTER_ERROR_ROLE);
}

static void pointer_handle_release(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static const struct wl_pointer_interface pointer_impl = {
	.set_cursor = pointer_handle_set_cursor,
	.release = pointer_handle_release,
};

static void pointer_send_frame(struct wl_resource *ptr)
{
	if (wl_resource_get_version(ptr) >= WL_POINTER_FRAME_SINCE_VERSION)
		wl_pointer_send_frame(ptr);
}

static void seat_get_pointer(struct wl_client *client, struct wl_resource *seat_resource,
                             uint32_t id)
{
	struct comp_seat *seat = wl_resource_get_user_data(seat_resource);
	struct wl_resource *ptr = comp_resource_create(client, &wl_pointer_interface,
	                                               wl_resource_get_version(seat_resource), id,
	                                               &pointer_impl, seat, seat_unlink_resource);
	if (!ptr)
		return;
	if (!seat) {
		wl_list_init(wl_resource_get_link(ptr));
		return;
	}
	wl_list_insert(&seat->pointers, wl_resource_get_link(ptr));
	/* Like the keyboard: a late pointer of the focused client gets enter. */
	struct comp_surface *focus = seat->pointer_focus;
	if (focus && surface_client(focus) == client) {
		double sx, sy;
		if (comp_surface_at(seat->server, seat->x, seat->y, &sx, &sy) == focus) {
			wl_pointer_send_enter(ptr, seat->pointer_enter_serial, focus->resource,
			                      wl_fixed_from_double(sx), wl_fixed_from_double(sy));
			pointer_send_frame(ptr);
		}
	}
}

static void pointer_focus_clear(struct comp_seat *seat)
{
	if (seat->pointer_focus) {
		wl_list_remove(&seat->pointer_focus_destroy.link);
		wl_list_init(&seat->pointer_focus_destroy.link);
	}
	seat->pointer_focus = NULL;
}

/* The client destroyed the surface under the pointer: it hears the leave
 * (its surface argument already gone on its side) before any enter. */
static void handle_pointer_focus_destroy(struct wl_listener *listener, void *data)
{
	struct comp_seat *seat = wl_container_of(listener, seat, pointer_focus_destroy);
	seat_pointer_set_focus(seat, NULL, 0, 0);
}

/* Moves pointer focus to whatever is under the pointer now (leave, enter)
 * or, if it stayed on the same surface and send_motion is set, sends
 * motion. Every group of events ends with a frame on v5+. */
void seat_pointer_set_focus(struct comp_seat *seat, struct comp_surface *surface, double sx,
                            double sy)
{
	struct wl_resource *ptr;
	if (seat->pointer_focus) {
		struct wl_client *old = surface_client(seat->pointer_focus);
		uint32_t serial = next_serial(seat);
		wl_resource_for_each(ptr, &seat->pointers) {
			if (wl_resource_get_client(ptr) != old)
				continue;
			wl_pointer_send_leave(ptr, serial, seat->pointer_focus->resource);
			pointer_send_frame(ptr);
		}
		pointer_focus_clear(seat);
	}
	if (!surface)
		return;
	seat->pointer_focus = surface;
	wl_resource_add_destroy_listener(surface->resource, &seat->pointer_focus_destroy);
	seat->pointer_enter_serial = next_serial(seat);
	seat->focus_sx = sx;
	seat->focus_sy = sy;
	struct wl_client *client = surface_client(surface);
	wl_resource_for_each(ptr, &seat->pointers) {
		if (wl_resource_get_client(ptr) != client)
			continue;
		wl_pointer_send_enter(ptr, seat->pointer_enter_serial, surface->resource,
		                      wl_fixed_from_double(sx), wl_fixed_from_double(sy));
		pointer_send_frame(ptr);
	}
}

static void pointer_update(struct comp_seat *seat, uint32_t time_ms, bool send_motion)
{
	double sx = 0, sy = 0;
	struct comp_surface *surface;
	struct wl_resource *ptr;

	if (seat->grab) {
		/* A grab (a move or resize) has the pointer: no client hears of it. */
		if (send_motion)
			seat->grab->interface->motion(seat->grab, seat->x, seat->y);
		return;
	}
	if (seat->buttons.size > 0) {
		/* Implicit grab: while a button is held the surface that got the
		 * press keeps the pointer, even outside it (drags, selections);
		 * a press on the background grabs nothing and enters nothing. */
		surface = seat->pointer_focus;
		if (!surface)
			return;
		sx = seat->x - surface->x;
		sy = seat->y - surface->y;
	} else {
		surface = comp_surface_at(seat->server, seat->x, seat->y, &sx, &sy);
	}
	/* A popup grab confines the pointer to the grabbing client: its
	 * surfaces get events as usual (owner-events), others none, not even
	 * an implicit grab that began before it. */
	struct wl_client *grabber = seat_popup_grab_client(seat->server);
	if (surface && grabber && surface_client(surface) != grabber)
		surface = NULL;

	if (surface != seat->pointer_focus) {
		seat_pointer_set_focus(seat, surface, sx, sy);
		return;
	}
	if (!surface)
		return;
	if (!send_motion) {
		/* The pointer stayed and the surface moved under it: the client
		 * hears where on the surface it now is. */
		if (sx == seat->focus_sx && sy == seat->focus_sy)
			return;
		time_ms = (uint32_t)(render_now_ns() / 1000000u);
	}
	seat->focus_sx = sx;
	seat->focus_sy = sy;
	struct wl_client *client = surface_client(surface);
	wl_resource_for_each(ptr, &seat->pointers) {
		if (wl_resource_get_client(ptr) != client)
			continue;
		wl_pointer_send_motion(ptr, time_ms, wl_fixed_from_double(sx),
		                       wl_fixed_from_double(sy));
		pointer_send_frame(ptr);
	}
}

static void handle_pointer_refresh(void *data)
{
	struct comp_seat *seat = data;
	seat->pointer_refresh = NULL;
	pointer_update(seat, 0, false); /* no motion of the device */
}

void comp_seat_pointer_refresh(struct comp_server *server)
{
	struct comp_seat *seat = server->seat;
	if (!seat || seat->pointer_refresh)
		return;
	/* From an idle callback rather than at once: a grab ends in the
	 * middle of teardowns (a dying client's popups) where the stack is
	 * half gone and enter must not go out yet. */
	seat->pointer_refresh = wl_event_loop_add_idle(wl_display_get_event_loop(server->display),
	                                               handle_pointer_refresh, seat);
}

void comp_seat_pointer_motion(struct comp_server *server, double x, double y, uint32_t time_ms)
{
	struct comp_seat *seat = server->seat;
	if (!seat)
		return;
	/* The pointer stays on the outputs, across the whole layout. */
	comp_layout_clamp(server, &x, &y);
	seat->x = x;
	seat->y = y;
	pointer_update(seat, time_ms, true);
}

void comp_seat_pointer_position(struct comp_server *server, double *x, double *y)
{
	struct comp_seat *seat = server->seat;
	*x = seat ? seat->x : 0;
	*y = seat ? seat->y : 0;
}

void comp_seat_pointer_axis(struct comp_server *server, const struct comp_axis_event *event,
                            uint32_t time_ms)
{
	struct comp_seat *seat = server->seat;
	if (!seat)
		return;
	pointer_update(seat, time_ms, false);
	if (!seat->pointer_focus)
		return;
	bool stop_kind = event->source == WL_POINTER_AXIS_SOURCE_FINGER ||
	                 event->source == WL_POINTER_AXIS_SOURCE_CONTINUOUS;
	struct wl_client *client = surface_client(seat->pointer_focus);
	struct wl_resource *ptr;
	wl_resource_for_each(ptr, &seat->pointers) {
		if (wl_resource_get_client(ptr) != client)
			continue;
		int version = wl_resource_get_version(ptr);
		if (version >= WL_POINTER_AXIS_SOURCE_SINCE_VERSION)
			wl_pointer_send_axis_source(ptr, event->source);
		for (uint32_t axis = 0; axis < 2; axis++) {
			if (!event->has[axis])
				continue;
			if (stop_kind && event->value[axis] == 0) {
				if (version >= WL_POINTER_AXIS_STOP_SINCE_VERSION)
					wl_pointer_send_axis_stop(ptr, time_ms, axis);
				continue;
			}
			/* Wheel clicks: value120 from v8, whole clicks before. */
			if (event->value120[axis] && version >= WL_POINTER_AXIS_VALUE120_SINCE_VERSION)
				wl_pointer_send_axis_value120(ptr, axis, event->value120[axis]);
			else if (event->value120[axis] && event->value120[axis] % 120 == 0 &&
			         version >= WL_POINTER_AXIS_DISCRETE_SINCE_VERSION)
				wl_pointer_send_axis_discrete(ptr, axis, event->value120[axis] / 120);
			wl_pointer_send_axis(ptr, time_ms, axis, wl_fixed_from_double(event->value[axis]));
		}
		pointer_send_frame(ptr);
	}
}

void seat_pointer_grab_start(struct comp_seat *seat, struct seat_pointer_grab *grab)
{
	seat->grab = grab;
}

void seat_pointer_grab_end(struct comp_seat *seat)
{
	struct seat_pointer_grab *grab = seat->grab;
	if (!grab)
		return;
	seat->grab = NULL;
	grab->interface->end(grab);
}

/* The last button up ends a grab (a move or resize); the press went to the
 * client, its release does not (it had a leave when the grab began). */
static bool grab_button(struct comp_seat *seat, uint32_t button, bool pressed, uint32_t time_ms)
{
	if (!seat->grab)
		return false;
	if (pressed_update(&seat->buttons, button, pressed) && seat->buttons.size == 0) {
		seat_pointer_grab_end(seat);
		pointer_update(seat, time_ms, false);
	}
	return true;
}

void comp_seat_pointer_button(struct comp_server *server, uint32_t button, bool pressed,
                              uint32_t time_ms)
{
	struct comp_seat *seat = server->seat;
	if (!seat)
		return;
	if (grab_button(seat, button, pressed, time_ms))
		return;
	/* Windows may have been mapped, moved or closed under a pointer that
	 * did not move since: refresh the focus before the click lands (a no-op
	 * during a grab). */
	pointer_update(seat, time_ms, false);
	if (!pressed_update(&seat->buttons, button, pressed))
		return;
	struct comp_surface *surface = seat->pointer_focus;
	if (pressed)
		seat_popup_grab_input(seat->server, surface);
	surface = seat->pointer_focus; /* re-read after the call out */
	if (!surface) {
		if (pressed)
			seat_grab_press_record(&seat->pointer_press, NULL, 0);
		else
			pointer_update(seat, time_ms, false);
		return;
	}
	if (pressed) {
		struct comp_window *window = seat_window_for_input(surface);
		if (window)
			window->server->policy->activate(window);
		/* The policy only restacks and refocuses, but re-read the
		 * focus rather than trust a pointer across a call out. */
		surface = seat->pointer_focus;
		if (!surface) {
			seat_grab_press_record(&seat->pointer_press, NULL, 0);
			return;
		}
	}
	struct wl_client *client = surface_client(surface);
	uint32_t serial = next_serial(seat);
	if (pressed)
		seat_grab_press_record(&seat->pointer_press, client, serial);
	struct wl_resource *ptr;
	wl_resource_for_each(ptr, &seat->pointers) {
		if (wl_resource_get_client(ptr) != client)
			continue;
		wl_pointer_send_button(ptr, serial, time_ms, button,
		                       pressed ? WL_POINTER_BUTTON_STATE_PRESSED
		                               : WL_POINTER_BUTTON_STATE_RELEASED);
		pointer_send_frame(ptr);
	}
	/* The grab ended: the pointer may be over another surface by now. */
	if (!pressed && seat->buttons.size == 0)
		pointer_update(seat, time_ms, false);
}


/* -------------------------------------------------------------- seat */

static void seat_get_touch(struct wl_client *client, struct wl_resource *resource, uint32_t id)
{
	seat_touch_get_touch(wl_resource_get_user_data(resource), client, resource, id);
}

static void seat_release(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static const struct wl_seat_interface seat_impl = {
	.get_pointer = seat_get_pointer,
	.get_keyboard = seat_get_keyboard,
	.get_touch = seat_get_touch,
	.release = seat_release,
};

static void seat_bind(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	struct comp_seat *seat = data;
	struct wl_resource *resource = comp_resource_create(client, &wl_seat_interface, version, id,
	                                                    &seat_impl, seat, seat_unlink_resource);
	if (!resource)
		return;
	wl_list_insert(&seat->seats, wl_resource_get_link(resource));
	wl_seat_send_capabilities(resource, WL_SEAT_CAPABILITY_POINTER | WL_SEAT_CAPABILITY_KEYBOARD |
	                                    seat_touch_capability(seat));
	if (version >= WL_SEAT_NAME_SINCE_VERSION)
		wl_seat_send_name(resource, "seat0");
}

static void seat_free(struct comp_seat *seat)
{
	seat->server->seat = NULL;
	wl_list_remove(&seat->display_destroy.link);
	if (seat->global)
		wl_global_destroy(seat->global);
	seat_detach_resources(&seat->seats);
	seat_detach_resources(&seat->pointers);
	seat_detach_resources(&seat->keyboards);
	seat_touch_finish(seat);
	pointer_focus_clear(seat);
	keyboard_focus_clear(seat);
	seat_grab_press_forget(&seat->pointer_press);
	seat_grab_press_forget(&seat->key_press);
	if (seat->pointer_refresh)
		wl_event_source_remove(seat->pointer_refresh);
	wl_array_release(&seat->pressed);
	wl_array_release(&seat->buttons);
	if (seat->keymap_fd >= 0)
		close(seat->keymap_fd);
	xkb_state_unref(seat->xkb_state);
	xkb_keymap_unref(seat->keymap);
	xkb_context_unref(seat->xkb);
	free(seat);
}

static void handle_display_destroy(struct wl_listener *listener, void *data)
{
	struct comp_seat *seat = wl_container_of(listener, seat, display_destroy);
	/* wl_display_destroy destroys the globals itself. */
	seat->global = NULL;
	seat_free(seat);
}

void comp_seat_create(struct comp_server *server)
{
	struct comp_seat *seat = calloc(1, sizeof(*seat));
	if (!seat) {
		comp_log("seat: out of memory");
		return;
	}
	seat->server = server;
	wl_list_init(&seat->seats);
	wl_list_init(&seat->pointers);
	wl_list_init(&seat->keyboards);
	wl_list_init(&seat->pointer_focus_destroy.link);
	wl_list_init(&seat->keyboard_focus_destroy.link);
	seat->pointer_focus_destroy.notify = handle_pointer_focus_destroy;
	seat->keyboard_focus_destroy.notify = handle_keyboard_focus_destroy;
	wl_array_init(&seat->pressed);
	wl_array_init(&seat->buttons);
	seat_grab_press_init(&seat->pointer_press);
	seat_grab_press_init(&seat->key_press);
	seat_touch_init(seat);
	if (!keymap_init(seat))
		comp_log("seat: no keymap, clients get wl_keyboard without one");

	seat->global = comp_global_create(server, &wl_seat_interface, SEAT_VERSION, seat,
	                                  seat_bind);
	seat->display_destroy.notify = handle_display_destroy;
	wl_display_add_destroy_listener(server->display, &seat->display_destroy);
	server->seat = seat;
	if (!seat->global) {
		comp_log("seat: cannot create the wl_seat global");
		seat_free(seat);
	}
}

void comp_seat_destroy(struct comp_server *server)
{
	if (server->seat) {
		seat_pointer_grab_end(server->seat);
		seat_free(server->seat);
	}
}
