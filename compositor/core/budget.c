/* What a client may make the compositor hold (docs/security.md): texture
 * memory per client and in total. A request that would go over is a
 * wl_display.no_memory error for the client that made it, with a message
 * saying which budget; everyone else goes on.
 *
 * A client's usage hangs off a destroy listener of its wl_client (found
 * again through it, as test-access.c marks trusted clients). libwayland
 * runs destroy listeners before it destroys the client's resources, so
 * surfaces released after that find no usage to lower: the client is gone
 * and only the total still counts them.
 *
 * A client that stands for others (Xwayland) names a payer (struct
 * comp_budget_payer, comp.h) that applies both budgets to the party behind
 * each of its surfaces and deals with an offender itself.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <wayland-server-protocol.h>

#include "comp.h"

struct client_usage {
	struct wl_listener destroy;
	uint64_t texture_bytes;
};

static void handle_client_destroy(struct wl_listener *listener, void *data)
{
	struct client_usage *usage = wl_container_of(listener, usage, destroy);
	wl_list_remove(&usage->destroy.link);
	free(usage);
}

static struct client_usage *usage_of(struct wl_client *client, bool create)
{
	struct wl_listener *l = wl_client_get_destroy_listener(client, handle_client_destroy);
	if (l) {
		struct client_usage *usage = wl_container_of(l, usage, destroy);
		return usage;
	}
	if (!create)
		return NULL;
	struct client_usage *usage = calloc(1, sizeof(*usage));
	if (!usage)
		return NULL;
	usage->destroy.notify = handle_client_destroy;
	wl_client_add_destroy_listener(client, &usage->destroy);
	return usage;
}

void comp_client_post_over_budget(struct wl_client *client, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pid_t pid = 0;
	wl_client_get_credentials(client, &pid, NULL, NULL);
	comp_log("client pid %d over budget: %s", (int)pid, msg);
	struct wl_resource *display = wl_client_get_object(client, 1);
	if (display)
		wl_resource_post_error(display, WL_DISPLAY_ERROR_NO_MEMORY, "%s", msg);
	else
		wl_client_post_no_memory(client);
}

bool comp_budget_charge_texture(struct comp_surface *surface, uint64_t bytes)
{
	struct comp_server *server = surface->server;
	struct wl_client *client = wl_resource_get_client(surface->resource);
	struct client_usage *usage = usage_of(client, true);
	if (!usage) {
		wl_client_post_no_memory(client);
		return false;
	}
	uint64_t old = surface->texture_charge;
	uint64_t mine = usage->texture_bytes - old + bytes;
	uint64_t all = server->texture_bytes - old + bytes;
	const uint64_t mib = 1024 * 1024;
	struct comp_budget_payer *payer = server->budget_payer;
	if (payer && payer->client == client) {
		/* Its own usage is still kept (released as any other), but its
		 * budgets are the payer's to apply. */
		if (!payer->charge(payer, surface, bytes, all))
			return false;
	} else if (mine > server->options.client_texture_budget) {
		comp_client_post_over_budget(client, "wl_surface@%u: textures of %llu MiB would "
		                             "exceed the client budget of %llu MiB",
		                             wl_resource_get_id(surface->resource),
		                             (unsigned long long)(mine / mib),
		                             (unsigned long long)(server->options.client_texture_budget /
		                                                  mib));
		return false;
	} else if (all > server->options.texture_budget) {
		comp_client_post_over_budget(client, "wl_surface@%u: textures of %llu MiB in all "
		                             "would exceed the budget of %llu MiB",
		                             wl_resource_get_id(surface->resource),
		                             (unsigned long long)(all / mib),
		                             (unsigned long long)(server->options.texture_budget / mib));
		return false;
	}
	usage->texture_bytes = mine;
	server->texture_bytes = all;
	surface->texture_charge = bytes;
	return true;
}

void comp_budget_release_texture(struct comp_surface *surface)
{
	uint64_t bytes = surface->texture_charge;
	if (!bytes)
		return;
	surface->texture_charge = 0;
	surface->server->texture_bytes -= bytes;
	struct client_usage *usage = usage_of(wl_resource_get_client(surface->resource), false);
	if (usage)
		usage->texture_bytes -= bytes;
}

void comp_budget_texture_failed(struct comp_surface *surface, int width, int height)
{
	struct wl_client *client = wl_resource_get_client(surface->resource);
	struct comp_budget_payer *payer = surface->server->budget_payer;
	if (payer && payer->client == client && payer->refuse) {
		char what[128];
		snprintf(what, sizeof(what), "a %dx%d texture the renderer cannot make", width,
		         height);
		payer->refuse(payer, surface, what);
		return;
	}
	wl_client_post_no_memory(client);
}
