/* The stack: the scene's surfaces bottom to top. Core owns the order and
 * the scene's node order; which surfaces there are comes from the layers
 * above it (the shell's windows, Xwayland's menus), each a walk. */
#include "comp.h"

void comp_stack_add_layer(struct comp_server *server, const struct comp_stack_layer *layer)
{
	if (server->n_stack_layers < COMP_MAX_STACK_LAYERS)
		server->stack_layers[server->n_stack_layers++] = layer;
}

void comp_stack_for_each(struct comp_server *server, comp_surface_iter_t fn, void *data)
{
	for (int i = 0; i < server->n_stack_layers; i++)
		server->stack_layers[i]->for_each_surface(server, fn, data);
}

struct restack {
	struct render_node *below;
};

static void restack_surface(struct comp_surface *surface, void *data)
{
	struct restack *r = data;
	if (!surface->mapped)
		return;
	if (r->below)
		render_node_place_above(surface->node, r->below);
	else
		render_node_lower_to_bottom(surface->node);
	r->below = surface->node;
}

void comp_stack_update(struct comp_server *server)
{
	struct restack r = { NULL };
	comp_stack_for_each(server, restack_surface, &r);
	server->surface_listener->scene_damaged(server);
	server->surface_listener->pointer_scene_changed(server);
}
