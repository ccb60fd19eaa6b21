/* wl_data_device_manager: the clipboard (selection), no drag and drop.
 *
 * One selection per seat: a wl_data_source from some client. The client
 * with keyboard focus gets a fresh wl_data_offer describing it on every
 * focus change and every new selection; receive on an offer is forwarded to
 * the source as send (the fd goes from one client to the other; the
 * compositor never reads the data). Only the focused client may set the
 * selection, with a serial from its time in focus (comp_seat_focus_serial_ok).
 * Drags are refused by cancelling their
 * source at once, which toolkits handle as a drag that ended without a drop.
 *
 * The state is found from the display through our destroy listener, so that
 * comp_server needs no field for it.
 *
 * A source may also be the compositor's own (comp_data_source_create: the
 * X window manager's, holding what an X client copied): no wl_resource,
 * its send and cancelled go to a function table instead, so a Wayland
 * client cannot tell it from another client's. Whoever bridges the
 * clipboard elsewhere listens for selection changes
 * (comp_data_device_add_selection_listener).
 *
 * Focus changes are applied from an idle callback, not at once: focus can
 * move while a client is being torn down (its window is destroyed, the
 * policy focuses its next one), and creating a wl_data_offer for a client
 * in the middle of wl_client_destroy would add to the object map libwayland
 * is iterating. At idle time no client is half destroyed and the seat's
 * focus says who really has it.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <wayland-server-protocol.h>

#include "comp.h"

#define DATA_DEVICE_MANAGER_VERSION 3

#define ALL_DND_ACTIONS (WL_DATA_DEVICE_MANAGER_DND_ACTION_COPY | \
                         WL_DATA_DEVICE_MANAGER_DND_ACTION_MOVE | \
                         WL_DATA_DEVICE_MANAGER_DND_ACTION_ASK)

struct data_manager {
	struct comp_server *server;
	struct wl_global *global;
	struct wl_listener display_destroy;
	struct wl_list devices;           /* wl_data_device resources */
	struct data_source *selection;    /* NULL: no selection */
	/* The client that was last given the selection, kept equal to the
	 * keyboard focus's client from an idle callback (see set_focus). */
	struct wl_client *focus;
	struct wl_listener focus_destroy;
	struct wl_event_source *focus_idle;
	struct wl_listener keyboard_client;  /* comp_server.keyboard_client_changed */
	struct wl_signal selection_changed;
};

struct data_source {
	struct wl_resource *resource;     /* NULL: the compositor's own (ops) */
	const struct comp_data_source_ops *ops;
	void *ops_data;
	struct wl_array mime_types;       /* char * */
	bool actions_set;                 /* set_actions seen: a drag-only source */
	bool used;                        /* given to set_selection or start_drag */
	struct wl_list offers;            /* wl_data_offer resources */
};

static const struct wl_data_offer_interface offer_impl;
static const struct wl_data_source_interface source_impl;
static const struct wl_data_device_interface device_impl;

static void handle_display_destroy(struct wl_listener *listener, void *data);

static struct data_manager *manager_from_display(struct wl_display *display)
{
	struct wl_listener *l = wl_display_get_destroy_listener(display, handle_display_destroy);
	if (!l)
		return NULL;
	struct data_manager *manager = wl_container_of(l, manager, display_destroy);
	return manager;
}

static struct data_manager *manager_from_client(struct wl_client *client)
{
	return manager_from_display(wl_client_get_display(client));
}

static void unlink_resource(struct wl_resource *resource)
{
	wl_list_remove(wl_resource_get_link(resource));
}

/* ------------------------------------------------------------- offer */

/* Takes fd: a client's source gets a copy in the send event. */
static void source_send(struct data_source *source, const char *mime_type, int fd)
{
	if (source->resource) {
		wl_data_source_send_send(source->resource, mime_type, fd);
		close(fd);
	} else {
		source->ops->send(source->ops_data, mime_type, fd);
	}
}

static void source_cancel(struct data_source *source)
{
	if (source->resource)
		wl_data_source_send_cancelled(source->resource);
	else
		source->ops->cancelled(source->ops_data);
}

static struct data_source *offer_source(struct wl_resource *offer)
{
	return wl_resource_get_user_data(offer);
}

static void offer_handle_accept(struct wl_client *client, struct wl_resource *resource,
                                uint32_t serial, const char *mime_type)
{
	/* Only meaningful during a drag; selections never have one. */
}

static void offer_handle_receive(struct wl_client *client, struct wl_resource *resource,
                                 const char *mime_type, int32_t fd)
{
	struct data_source *source = offer_source(resource);
	/* An offer outliving its source reads nothing: the client sees EOF. */
	if (source)
		source_send(source, mime_type, fd);
	else
		close(fd);
}

static void offer_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void offer_handle_finish(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_post_error(resource, WL_DATA_OFFER_ERROR_INVALID_FINISH,
	                       "wl_data_offer.finish: not a drag-and-drop offer");
}

static void offer_handle_set_actions(struct wl_client *client, struct wl_resource *resource,
                                     uint32_t dnd_actions, uint32_t preferred_action)
{
	wl_resource_post_error(resource, WL_DATA_OFFER_ERROR_INVALID_OFFER,
	                       "wl_data_offer.set_actions: not a drag-and-drop offer");
}

static const struct wl_data_offer_interface offer_impl = {
	.accept = offer_handle_accept,
	.receive = offer_handle_receive,
	.destroy = offer_handle_destroy,
	.finish = offer_handle_finish,
	.set_actions = offer_handle_set_actions,
};

/* Introduces a new offer for source (NULL: no selection) on one device. */
static void device_send_selection(struct wl_resource *device, struct data_source *source)
{
	if (!source) {
		wl_data_device_send_selection(device, NULL);
		return;
	}
	struct wl_resource *offer = comp_resource_create(wl_resource_get_client(device),
	                                                 &wl_data_offer_interface,
	                                                 wl_resource_get_version(device), 0,
	                                                 &offer_impl, source, unlink_resource);
	if (!offer)
		return;
	wl_list_insert(&source->offers, wl_resource_get_link(offer));
	wl_data_device_send_data_offer(device, offer);
	char **mime;
	wl_array_for_each(mime, &source->mime_types)
		wl_data_offer_send_offer(offer, *mime);
	wl_data_device_send_selection(device, offer);
}

static void send_selection_to_client(struct data_manager *manager, struct wl_client *client)
{
	if (!client)
		return;
	struct wl_resource *device;
	wl_resource_for_each(device, &manager->devices) {
		if (wl_resource_get_client(device) == client)
			device_send_selection(device, manager->selection);
	}
}

/* ------------------------------------------------------------ source */

static struct data_source *source_from_resource(struct wl_resource *resource)
{
	return wl_resource_get_user_data(resource);
}

static void source_handle_offer(struct wl_client *client, struct wl_resource *resource,
                                const char *mime_type)
{
	struct data_source *source = source_from_resource(resource);
	if (source->mime_types.size / sizeof(char *) >= COMP_MAX_MIME_TYPES) {
		comp_client_post_over_budget(client, "wl_data_source@%u: more than %d MIME types",
		                             wl_resource_get_id(resource), COMP_MAX_MIME_TYPES);
		return;
	}
	char **slot = wl_array_add(&source->mime_types, sizeof(*slot));
	if (!slot || !(*slot = strdup(mime_type))) {
		if (slot)
			source->mime_types.size -= sizeof(*slot);
		wl_client_post_no_memory(client);
	}
}

static void source_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void source_handle_set_actions(struct wl_client *client, struct wl_resource *resource,
                                      uint32_t dnd_actions)
{
	struct data_source *source = source_from_resource(resource);
	if (dnd_actions & ~ALL_DND_ACTIONS) {
		wl_resource_post_error(resource, WL_DATA_SOURCE_ERROR_INVALID_ACTION_MASK,
		                       "wl_data_source.set_actions: invalid action mask 0x%x",
		                       dnd_actions);
		return;
	}
	if (source->actions_set || source->used) {
		wl_resource_post_error(resource, WL_DATA_SOURCE_ERROR_INVALID_SOURCE,
		                       "wl_data_source.set_actions: must be sent once, before "
		                       "start_drag");
		return;
	}
	source->actions_set = true;
}

static const struct wl_data_source_interface source_impl = {
	.offer = source_handle_offer,
	.destroy = source_handle_destroy,
	.set_actions = source_handle_set_actions,
};

static void source_free(struct data_source *source, struct data_manager *manager)
{
	/* Offers stay alive (the client owns them) but lead nowhere. */
	struct wl_resource *offer, *tmp;
	wl_resource_for_each_safe(offer, tmp, &source->offers) {
		wl_resource_set_user_data(offer, NULL);
		wl_list_remove(wl_resource_get_link(offer));
		wl_list_init(wl_resource_get_link(offer));
	}
	if (manager && manager->selection == source) {
		manager->selection = NULL;
		send_selection_to_client(manager, manager->focus);
		wl_signal_emit(&manager->selection_changed, NULL);
	}
	char **mime;
	wl_array_for_each(mime, &source->mime_types)
		free(*mime);
	wl_array_release(&source->mime_types);
	free(source);
}

static void source_resource_destroy(struct wl_resource *resource)
{
	source_free(source_from_resource(resource),
	            manager_from_client(wl_resource_get_client(resource)));
}

static void manager_create_data_source(struct wl_client *client, struct wl_resource *resource,
                                       uint32_t id)
{
	struct data_source *source = calloc(1, sizeof(*source));
	if (!source) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_array_init(&source->mime_types);
	wl_list_init(&source->offers);
	source->resource = comp_resource_create(client, &wl_data_source_interface,
	                                        wl_resource_get_version(resource), id, &source_impl,
	                                        source, source_resource_destroy);
	if (!source->resource)
		free(source);
}

/* ------------------------------------------------------------ device */

static void device_handle_start_drag(struct wl_client *client, struct wl_resource *resource,
                                     struct wl_resource *source_resource,
                                     struct wl_resource *origin, struct wl_resource *icon,
                                     uint32_t serial)
{
	/* Not supported: the drag ends at once, without a drop. */
	if (source_resource) {
		source_from_resource(source_resource)->used = true;
		wl_data_source_send_cancelled(source_resource);
	}
}

static void manager_set_selection(struct data_manager *manager, struct data_source *source)
{
	struct data_source *old = manager->selection;
	manager->selection = source;
	/* The replaced source is told; its owner destroys it (a compositor
	 * source may do so inside cancelled: old is not used after). */
	if (old)
		source_cancel(old);
	send_selection_to_client(manager, manager->focus);
	wl_signal_emit(&manager->selection_changed, NULL);
}

static void device_handle_set_selection(struct wl_client *client, struct wl_resource *resource,
                                        struct wl_resource *source_resource, uint32_t serial)
{
	struct data_manager *manager = manager_from_client(client);
	struct data_source *source = source_resource ? source_from_resource(source_resource) : NULL;
	if (!manager)
		return;
	if (source && source->actions_set) {
		wl_resource_post_error(source_resource, WL_DATA_SOURCE_ERROR_INVALID_SOURCE,
		                       "wl_data_device.set_selection: source has drag-and-drop "
		                       "actions set");
		return;
	}
	if (source == manager->selection)
		return;
	if (source)
		source->used = true;
	/* Only the focused client, for an event it got while focused, may set
	 * it; anyone else is ignored (no protocol error, and no log line a
	 * client could flood). The source is cancelled so its client knows it
	 * does not hold the selection. */
	if (!comp_seat_focus_serial_ok(manager->server, client, serial)) {
		if (source)
			wl_data_source_send_cancelled(source_resource);
		return;
	}
	manager_set_selection(manager, source);
}

static void device_handle_release(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static const struct wl_data_device_interface device_impl = {
	.start_drag = device_handle_start_drag,
	.set_selection = device_handle_set_selection,
	.release = device_handle_release,
};

static void manager_get_data_device(struct wl_client *client, struct wl_resource *resource,
                                    uint32_t id, struct wl_resource *seat)
{
	struct data_manager *manager = manager_from_client(client);
	struct wl_resource *device = comp_resource_create(client, &wl_data_device_interface,
	                                                  wl_resource_get_version(resource), id,
	                                                  &device_impl, NULL, unlink_resource);
	if (!device)
		return;
	if (!manager) {
		wl_list_init(wl_resource_get_link(device));
		return;
	}
	wl_list_insert(&manager->devices, wl_resource_get_link(device));
	if (client == manager->focus)
		device_send_selection(device, manager->selection);
}

static const struct wl_data_device_manager_interface manager_impl = {
	.create_data_source = manager_create_data_source,
	.get_data_device = manager_get_data_device,
};

static void manager_bind(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	/* No user data: the manager is looked up from the display, so that a
	 * resource outliving it (shutdown) finds nothing rather than freed
	 * memory. */
	comp_resource_create(client, &wl_data_device_manager_interface, version, id, &manager_impl,
	                     NULL, NULL);
}

static void focus_forget(struct data_manager *manager)
{
	if (manager->focus) {
		wl_list_remove(&manager->focus_destroy.link);
		wl_list_init(&manager->focus_destroy.link);
	}
	manager->focus = NULL;
}

static void handle_focus_destroy(struct wl_listener *listener, void *data)
{
	struct data_manager *manager = wl_container_of(listener, manager, focus_destroy);
	focus_forget(manager);
}

static void focus_idle(void *data)
{
	struct data_manager *manager = data;
	manager->focus_idle = NULL;
	struct wl_client *client = comp_seat_get_keyboard_focus_client(manager->server);
	if (client == manager->focus)
		return;
	focus_forget(manager);
	if (!client)
		return;
	manager->focus = client;
	wl_client_add_destroy_listener(client, &manager->focus_destroy);
	send_selection_to_client(manager, client);
}

static void schedule_focus(struct data_manager *manager)
{
	if (manager->focus_idle)
		return;
	manager->focus_idle = wl_event_loop_add_idle(manager->server->loop, focus_idle, manager);
}

/* The selection follows the keyboard focus to another client (the seat's
 * signal). */
static void handle_keyboard_client(struct wl_listener *listener, void *data)
{
	struct data_manager *manager = wl_container_of(listener, manager, keyboard_client);
	schedule_focus(manager);
}

static void handle_display_destroy(struct wl_listener *listener, void *data)
{
	struct data_manager *manager = wl_container_of(listener, manager, display_destroy);
	wl_list_remove(&manager->display_destroy.link);
	wl_list_remove(&manager->keyboard_client.link);
	focus_forget(manager);
	if (manager->focus_idle)
		wl_event_source_remove(manager->focus_idle);
	/* Listeners may outlive the manager (the X window manager goes after
	 * the display at shutdown): their links must not point into it. */
	struct wl_listener *l, *next;
	wl_list_for_each_safe(l, next, &manager->selection_changed.listener_list, link) {
		wl_list_remove(&l->link);
		wl_list_init(&l->link);
	}
	/* Devices of clients still connected become inert; the global goes
	 * with the display. */
	struct wl_resource *device, *tmp;
	wl_resource_for_each_safe(device, tmp, &manager->devices) {
		wl_list_remove(wl_resource_get_link(device));
		wl_list_init(wl_resource_get_link(device));
	}
	free(manager);
}

void comp_data_device_manager_create(struct comp_server *server)
{
	struct data_manager *manager = calloc(1, sizeof(*manager));
	if (!manager) {
		comp_log("data-device: out of memory");
		return;
	}
	manager->server = server;
	wl_list_init(&manager->devices);
	wl_signal_init(&manager->selection_changed);
	wl_list_init(&manager->focus_destroy.link);
	manager->focus_destroy.notify = handle_focus_destroy;
	manager->global = comp_global_create(server, &wl_data_device_manager_interface,
	                                     DATA_DEVICE_MANAGER_VERSION, manager, manager_bind);
	if (!manager->global) {
		free(manager);
		return;
	}
	manager->display_destroy.notify = handle_display_destroy;
	wl_display_add_destroy_listener(server->display, &manager->display_destroy);
	manager->keyboard_client.notify = handle_keyboard_client;
	wl_signal_add(&server->keyboard_client_changed, &manager->keyboard_client);
	schedule_focus(manager);
}

/* ------------------------------------------------- compositor sources */

struct comp_data_source *comp_data_source_create(const struct comp_data_source_ops *ops,
                                                 void *data)
{
	struct data_source *source = calloc(1, sizeof(*source));
	if (!source)
		return NULL;
	wl_array_init(&source->mime_types);
	wl_list_init(&source->offers);
	source->ops = ops;
	source->ops_data = data;
	return (struct comp_data_source *)source;
}

int comp_data_source_offer(struct comp_data_source *public_source, const char *mime_type)
{
	struct data_source *source = (struct data_source *)public_source;
	char **slot = wl_array_add(&source->mime_types, sizeof(*slot));
	if (!slot)
		return -1;
	if (!(*slot = strdup(mime_type))) {
		source->mime_types.size -= sizeof(*slot);
		return -1;
	}
	return 0;
}

void comp_data_source_destroy(struct comp_server *server, struct comp_data_source *source)
{
	if (source)
		source_free((struct data_source *)source, manager_from_display(server->display));
}

void comp_data_device_set_selection(struct comp_server *server, struct comp_data_source *source)
{
	struct data_manager *manager = manager_from_display(server->display);
	if (manager && manager->selection != (struct data_source *)source)
		manager_set_selection(manager, (struct data_source *)source);
}

struct comp_data_source *comp_data_device_get_selection(struct comp_server *server)
{
	struct data_manager *manager = manager_from_display(server->display);
	return manager ? (struct comp_data_source *)manager->selection : NULL;
}

bool comp_data_source_has_mime(struct comp_data_source *public_source, const char *mime_type)
{
	struct data_source *source = (struct data_source *)public_source;
	char **mime;
	wl_array_for_each(mime, &source->mime_types) {
		if (strcmp(*mime, mime_type) == 0)
			return true;
	}
	return false;
}

void comp_data_source_send(struct comp_data_source *source, const char *mime_type, int fd)
{
	source_send((struct data_source *)source, mime_type, fd);
}

void comp_data_device_add_selection_listener(struct comp_server *server,
                                             struct wl_listener *listener)
{
	struct data_manager *manager = manager_from_display(server->display);
	if (manager)
		wl_signal_add(&manager->selection_changed, listener);
	else
		wl_list_init(&listener->link);
}
