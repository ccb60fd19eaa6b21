/* wl_touch on seat0: touch points from libinput's touchscreens
 * (input-libinput.c) and from the test protocol (test-protocol.c).
 *
 * The capability follows the devices, as in weston: the seat has touch
 * only while a touchscreen is plugged in, so that clients which pick
 * their input mode from wl_seat.capabilities (GTK, Qt, EFL) do not wait
 * for touch that cannot come. The headless output has no touchscreen; the
 * test protocol plugs a virtual one in at its first touch request and
 * never unplugs it (a lone touch_frame does it without touching anything,
 * so that a test can let its clients bind wl_touch first). Always
 * advertising touch would change what every client of the headless
 * compositor sees, and the bench's stacks are meant to match.
 *
 * Each touch point has its own focus: the surface under it at down (the
 * pointer's hit test, comp_surface_at, so input regions and popups count
 * alike), kept until up even when the point leaves it, with coordinates
 * relative to that surface. Events go to every wl_touch of the client
 * owning the point's surface (a client may bind the seat several times).
 * A destroyed surface drops its points' focus through the wl_surface
 * resource's destroy listener, as the pointer's focus does (seat.c): the
 * client gets an up (and a frame) for each, as if the points had lifted
 * (wl_touch.up: "the touch point has disappeared"), and nothing more for
 * them; other points go on.
 *
 * Frames: wl_touch.frame goes, at comp_seat_touch_frame, to each client
 * that got an event since the last one. A point that went up stays listed
 * (ended) until that frame so that its client still gets it.
 *
 * A down raises and focuses the window like a click (policy rule 4) and
 * counts as a press for xdg_popup.grab; while a popup grab lasts, points
 * on other clients' surfaces go nowhere and dismiss it, like the pointer.
 */
#include <stdlib.h>
#include <wayland-server-protocol.h>

#include "comp.h"
#include "seat-types.h"

struct touch_point {
	struct wl_list link;          /* seat_touch.points */
	int32_t id;
	bool ended;                   /* up was sent: freed at the next frame */
	bool pending;                 /* got an event since the last frame */
	struct comp_surface *surface; /* focus; NULL: none, or it was destroyed */
	struct wl_listener surface_destroy;
};

static struct wl_client *point_client(const struct touch_point *point)
{
	return point->surface ? wl_resource_get_client(point->surface->resource) : NULL;
}

static void point_drop_surface(struct touch_point *point)
{
	if (point->surface) {
		wl_list_remove(&point->surface_destroy.link);
		wl_list_init(&point->surface_destroy.link);
	}
	point->surface = NULL;
}

static void point_free(struct touch_point *point)
{
	point_drop_surface(point);
	wl_list_remove(&point->link);
	free(point);
}

static void send_to_client(struct comp_seat *seat, struct wl_client *client, int32_t id,
                           uint32_t serial, uint32_t time_ms, bool up)
{
	struct wl_resource *touch;
	wl_resource_for_each(touch, &seat->touch.resources) {
		if (wl_resource_get_client(touch) != client)
			continue;
		if (up)
			wl_touch_send_up(touch, serial, time_ms, id);
		else
			wl_touch_send_frame(touch);
	}
}

static void handle_surface_destroy(struct wl_listener *listener, void *data)
{
	struct touch_point *point = wl_container_of(listener, point, surface_destroy);
	struct comp_server *server = point->surface->server;
	if (!point->ended && server->seat) {
		struct wl_client *client = point_client(point);
		send_to_client(server->seat, client, point->id,
		               wl_display_next_serial(server->display),
		               (uint32_t)(render_now_ns() / 1000000u), true);
		send_to_client(server->seat, client, 0, 0, 0, false);
	}
	point_drop_surface(point);
}

/* The point down with this id (not one that is up and awaits its frame). */
static struct touch_point *point_find(struct comp_seat *seat, int32_t id)
{
	struct touch_point *point;
	wl_list_for_each(point, &seat->touch.points, link) {
		if (point->id == id && !point->ended)
			return point;
	}
	return NULL;
}

static struct comp_seat *touch_seat(struct comp_server *server)
{
	return server->seat;
}

/* --------------------------------------------------------- wl_touch */

static void touch_handle_release(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static const struct wl_touch_interface touch_impl = {
	.release = touch_handle_release,
};

void seat_touch_get_touch(struct comp_seat *seat, struct wl_client *client,
                          struct wl_resource *seat_resource, uint32_t id)
{
	/* wl_seat: asking for touch is an error only on a seat that never had
	 * it; one unplugged since gets a wl_touch that stays quiet. */
	if (seat && !seat->touch.ever) {
		wl_resource_post_error(seat_resource, WL_SEAT_ERROR_MISSING_CAPABILITY,
		                       "wl_seat.get_touch: seat0 has no touch capability");
		return;
	}
	struct wl_resource *touch = comp_resource_create(client, &wl_touch_interface,
	                                                 wl_resource_get_version(seat_resource), id,
	                                                 &touch_impl, seat, seat_unlink_resource);
	if (!touch)
		return;
	if (!seat) {
		/* Seat already torn down: an inert wl_touch. */
		wl_list_init(wl_resource_get_link(touch));
		return;
	}
	/* A point already down on this client's surface is not announced to
	 * it: a down has a serial of its own and is not repeated (weston
	 * does the same). */
	wl_list_insert(&seat->touch.resources, wl_resource_get_link(touch));
}

/* Sends wl_touch.cancel to client and forgets its points: the protocol's
 * cancel ends every touch sequence the client has. */
static void cancel_client(struct comp_seat *seat, struct wl_client *client)
{
	struct wl_resource *touch;
	wl_resource_for_each(touch, &seat->touch.resources) {
		if (wl_resource_get_client(touch) == client)
			wl_touch_send_cancel(touch);
	}
	struct touch_point *point, *tmp;
	wl_list_for_each_safe(point, tmp, &seat->touch.points, link) {
		if (point_client(point) == client)
			point_free(point);
	}
}

/* ------------------------------------------------------------ devices */

void comp_seat_touch_device_add(struct comp_server *server)
{
	struct comp_seat *seat = touch_seat(server);
	if (server->touch_devices++ > 0 || !seat)
		return; /* no seat yet: seat_touch_init reads the count */
	seat->touch.ever = true;
	seat_send_capabilities(seat);
}

void comp_seat_touch_device_remove(struct comp_server *server)
{
	struct comp_seat *seat = touch_seat(server);
	if (server->touch_devices == 0 || --server->touch_devices > 0 || !seat)
		return;
	/* The last touchscreen went with fingers on it: those touches will
	 * never end, so their clients are told to drop them. */
	struct touch_point *point;
	while (!wl_list_empty(&seat->touch.points)) {
		point = wl_container_of(seat->touch.points.next, point, link);
		struct wl_client *client = point_client(point);
		if (client)
			cancel_client(seat, client);
		else
			point_free(point);
	}
	seat_send_capabilities(seat);
}

/* ------------------------------------------------------------- events */

void comp_seat_touch_down(struct comp_server *server, int32_t id, double x, double y,
                          uint32_t time_ms)
{
	struct comp_seat *seat = touch_seat(server);
	if (!seat || point_find(seat, id))
		return; /* a second down of a point that is down: not a new touch */
	struct touch_point *point = calloc(1, sizeof(*point));
	if (!point) {
		comp_log("seat: out of memory for a touch point");
		return;
	}
	point->id = id;
	point->surface_destroy.notify = handle_surface_destroy;
	wl_list_init(&point->surface_destroy.link);
	wl_list_insert(seat->touch.points.prev, &point->link);

	double sx, sy;
	struct comp_surface *surface = comp_surface_at(server, x, y, &sx, &sy);
	struct wl_client *grabber = seat_popup_grab_client(server);
	if (surface && grabber && wl_resource_get_client(surface->resource) != grabber)
		surface = NULL;
	if (surface) {
		point->surface = surface;
		wl_resource_add_destroy_listener(surface->resource, &point->surface_destroy);
	}
	/* As a button press: a touch outside a popup grab's client ends it,
	 * a touch on a window raises and focuses it. Both call out, so the
	 * point's surface is read again after them. */
	seat_popup_grab_input(server, point->surface);
	struct comp_window *window = point->surface ? seat_window_for_input(point->surface) : NULL;
	if (window)
		window->server->policy->activate(window);
	surface = point->surface;
	if (!surface) {
		seat_grab_press_record(&seat->touch.press, NULL, 0);
		return;
	}
	struct wl_client *client = point_client(point);
	uint32_t serial = wl_display_next_serial(server->display);
	seat_grab_press_record(&seat->touch.press, client, serial);
	sx = x - surface->x;
	sy = y - surface->y;
	struct wl_resource *touch;
	wl_resource_for_each(touch, &seat->touch.resources) {
		if (wl_resource_get_client(touch) == client)
			wl_touch_send_down(touch, serial, time_ms, surface->resource, id,
			                   wl_fixed_from_double(sx), wl_fixed_from_double(sy));
	}
	point->pending = true;
}

void comp_seat_touch_motion(struct comp_server *server, int32_t id, double x, double y,
                            uint32_t time_ms)
{
	struct comp_seat *seat = touch_seat(server);
	struct touch_point *point = seat ? point_find(seat, id) : NULL;
	if (!point || !point->surface)
		return;
	/* Relative to the surface it went down on, wherever it is now:
	 * outside it too (negative, or past its size), as a drag needs. */
	struct wl_client *client = point_client(point);
	wl_fixed_t sx = wl_fixed_from_double(x - point->surface->x);
	wl_fixed_t sy = wl_fixed_from_double(y - point->surface->y);
	struct wl_resource *touch;
	wl_resource_for_each(touch, &seat->touch.resources) {
		if (wl_resource_get_client(touch) == client)
			wl_touch_send_motion(touch, time_ms, id, sx, sy);
	}
	point->pending = true;
}

void comp_seat_touch_up(struct comp_server *server, int32_t id, uint32_t time_ms)
{
	struct comp_seat *seat = touch_seat(server);
	struct touch_point *point = seat ? point_find(seat, id) : NULL;
	if (!point)
		return;
	if (!point->surface) {
		point_free(point);
		return;
	}
	send_to_client(seat, point_client(point), id, wl_display_next_serial(server->display),
	               time_ms, true);
	point->ended = true;
	point->pending = true;
}

void comp_seat_touch_frame(struct comp_server *server)
{
	struct comp_seat *seat = touch_seat(server);
	if (!seat)
		return;
	struct touch_point *point, *tmp, *earlier;
	wl_list_for_each(point, &seat->touch.points, link) {
		struct wl_client *client = point_client(point);
		if (!point->pending || !client)
			continue;
		/* One frame per client, however many of its points moved. */
		bool sent = false;
		wl_list_for_each(earlier, &seat->touch.points, link) {
			if (earlier == point)
				break;
			if (earlier->pending && point_client(earlier) == client)
				sent = true;
		}
		if (!sent)
			send_to_client(seat, client, 0, 0, 0, false);
	}
	wl_list_for_each_safe(point, tmp, &seat->touch.points, link) {
		point->pending = false;
		if (point->ended)
			point_free(point);
	}
}

void comp_seat_touch_cancel(struct comp_server *server, int32_t id)
{
	struct comp_seat *seat = touch_seat(server);
	struct touch_point *point = seat ? point_find(seat, id) : NULL;
	if (!point)
		return;
	struct wl_client *client = point_client(point);
	if (client)
		cancel_client(seat, client);
	else
		point_free(point);
}

/* --------------------------------------------------------------- seat */

void seat_touch_init(struct comp_seat *seat)
{
	wl_list_init(&seat->touch.resources);
	wl_list_init(&seat->touch.points);
	seat_grab_press_init(&seat->touch.press);
	/* The backend starts first: its touchscreens are already counted. */
	seat->touch.ever = seat->server->touch_devices > 0;
}

void seat_touch_finish(struct comp_seat *seat)
{
	seat_detach_resources(&seat->touch.resources);
	struct touch_point *point, *tmp;
	wl_list_for_each_safe(point, tmp, &seat->touch.points, link)
		point_free(point);
	seat_grab_press_forget(&seat->touch.press);
}
