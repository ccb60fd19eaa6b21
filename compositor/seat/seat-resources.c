/* What seat.c and seat-touch.c both use, below them: the presses that may
 * start a grab, and the seat's resource lists (capabilities, unlinking,
 * making them inert when the seat goes). */
#include <wayland-server-protocol.h>

#include "comp.h"
#include "seat-types.h"

void seat_grab_press_forget(struct grab_press *press)
{
	wl_list_remove(&press->client_destroy.link);
	wl_list_init(&press->client_destroy.link);
	press->client = NULL;
}

static void handle_grab_press_client_destroy(struct wl_listener *listener, void *data)
{
	struct grab_press *press = wl_container_of(listener, press, client_destroy);
	seat_grab_press_forget(press);
}

void seat_grab_press_init(struct grab_press *press)
{
	press->client = NULL;
	press->client_destroy.notify = handle_grab_press_client_destroy;
	wl_list_init(&press->client_destroy.link);
}

/* client NULL: the press went to nobody, and no earlier one counts now. */
void seat_grab_press_record(struct grab_press *press, struct wl_client *client, uint32_t serial)
{
	if (press->client != client) {
		seat_grab_press_forget(press);
		if (client)
			wl_client_add_destroy_listener(client, &press->client_destroy);
		press->client = client;
	}
	press->serial = serial;
}

bool seat_grab_press_matches(const struct grab_press *press, struct wl_client *client,
                             uint32_t serial)
{
	return press->client && press->client == client && press->serial == serial;
}

/* -------------------------------------------------------------- resources */

/* Resource destructor shared by all three lists: the resource leaves its
 * list; a seat already gone has unlinked (and re-initialised) it. */
void seat_unlink_resource(struct wl_resource *resource)
{
	wl_list_remove(wl_resource_get_link(resource));
}

void seat_send_capabilities(struct comp_seat *seat)
{
	struct wl_resource *resource;
	uint32_t caps = WL_SEAT_CAPABILITY_POINTER | WL_SEAT_CAPABILITY_KEYBOARD |
	                seat_touch_capability(seat);
	wl_resource_for_each(resource, &seat->seats)
		wl_seat_send_capabilities(resource, caps);
}

/* Leaves every resource alive but inert, so that clients that outlive the
 * seat (comp_seat_destroy before the clients are gone) touch no freed
 * memory. */
void seat_detach_resources(struct wl_list *list)
{
	struct wl_resource *resource, *tmp;
	wl_resource_for_each_safe(resource, tmp, list) {
		wl_list_remove(wl_resource_get_link(resource));
		wl_list_init(wl_resource_get_link(resource));
		wl_resource_set_user_data(resource, NULL);
	}
}
