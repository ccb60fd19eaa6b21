/* wl_subcompositor and wl_subsurface.
 *
 * A subsurface is placed relative to its parent; its position and its
 * stacking among siblings are parent state (applied when the parent
 * commits). In synchronized mode its own commits are cached and applied on
 * the parent's commit, so a parent and its children change on screen
 * together.
 *
 * Any of the three objects (child surface, parent surface, wl_subsurface) may
 * go first: each one's destroy path unhooks it from the others, and requests
 * on a wl_subsurface whose surfaces are gone are ignored.
 */
#include <stdlib.h>

#include <wayland-server-protocol.h>

#include "comp.h"

struct comp_subsurface {
	struct wl_resource *resource;
	struct comp_surface *surface; /* NULL once the child surface is destroyed */
	struct comp_surface *parent;  /* NULL once the parent is destroyed */
	struct wl_list parent_link;   /* parent->subsurfaces */
	struct wl_list pending_link;  /* parent->subsurfaces_pending */
	struct wl_listener surface_destroy, parent_destroy;

	int x, y;                 /* applied offset from the parent */
	int pending_x, pending_y; /* set_position, applied on the parent's commit */
	bool synchronized;
	bool has_cache;
	struct comp_surface_state cache; /* commits waiting for the parent */
};

static void subsurface_role_commit(struct comp_surface *surface);
static bool subsurface_hold_commit(struct comp_surface *surface);

static const struct comp_surface_role subsurface_role = {
	.name = "wl_subsurface",
	.commit = subsurface_role_commit,
	.hold_commit = subsurface_hold_commit,
};

static struct comp_subsurface *subsurface_from_surface(struct comp_surface *surface)
{
	if (surface->role != &subsurface_role)
		return NULL;
	return surface->role_data;
}

/* ---------------------------------------------------------- tree helpers */

/* Iterative, so that no client's tree can exhaust our stack: descend into
 * a child's list, climb back through its wl_subsurface to the link after it
 * in the parent's. fn must not change the tree. */
void comp_surface_tree_for_each(struct comp_surface *root, comp_surface_iter_t fn, void *data)
{
	struct comp_surface *surface = root;
	struct wl_list *l = root->subsurfaces.next;
	for (;;) {
		if (l == &surface->subsurfaces) {
			if (surface == root)
				return;
			struct comp_subsurface *up = surface->role_data;
			l = up->parent_link.next;
			surface = up->parent;
			continue;
		}
		if (l == &surface->subsurface_self_link) {
			fn(surface, data);
			l = l->next;
			continue;
		}
		struct comp_subsurface *sub = wl_container_of(l, sub, parent_link);
		if (sub->surface) {
			surface = sub->surface;
			l = surface->subsurfaces.next;
		} else {
			l = l->next;
		}
	}
}

/* How many levels of subsurfaces hang below root (0: none); iterative as
 * above. */
static int subtree_height(struct comp_surface *root)
{
	struct comp_surface *surface = root;
	struct wl_list *l = root->subsurfaces.next;
	int depth = 0, height = 0;
	for (;;) {
		if (l == &surface->subsurfaces) {
			if (surface == root)
				return height;
			struct comp_subsurface *up = surface->role_data;
			l = up->parent_link.next;
			surface = up->parent;
			depth--;
			continue;
		}
		struct comp_subsurface *sub = l == &surface->subsurface_self_link ? NULL :
			wl_container_of(l, sub, parent_link);
		if (sub && sub->surface) {
			surface = sub->surface;
			l = surface->subsurfaces.next;
			if (++depth > height)
				height = depth;
		} else {
			l = l->next;
		}
	}
}

struct comp_surface *comp_subsurface_get_root(struct comp_surface *surface)
{
	struct comp_subsurface *sub;
	while ((sub = subsurface_from_surface(surface)) && sub->parent)
		surface = sub->parent;
	return surface;
}

struct comp_window *comp_window_from_surface(struct comp_surface *surface)
{
	if (!surface)
		return NULL;
	/* Subsurfaces and popups belong to the window at the root. */
	struct comp_surface *root = comp_subsurface_get_root(surface);
	return root->role && root->role->window ? root->role->window(root) : NULL;
}

bool comp_subsurface_is_synchronized(struct comp_surface *surface)
{
	struct comp_subsurface *sub;
	while ((sub = subsurface_from_surface(surface)) && sub->parent) {
		if (sub->synchronized)
			return true;
		surface = sub->parent; /* a desync child of a sync parent is sync too */
	}
	return false;
}

/* A synchronized subsurface's commit is merged into its cache until the
 * parent commits; a desynchronized one with a cache left (its parent became
 * desynchronized) is merged into it and applied as a whole, so an older
 * cached state never lands over a newer one. False: apply the pending
 * state as usual. */
static bool subsurface_hold_commit(struct comp_surface *surface)
{
	struct comp_subsurface *sub = subsurface_from_surface(surface);
	if (!sub)
		return false;
	if (comp_subsurface_is_synchronized(surface)) {
		comp_surface_state_merge(&sub->cache, &surface->pending);
		sub->has_cache = true;
		return true;
	}
	if (!sub->has_cache)
		return false;
	comp_surface_state_merge(&sub->cache, &surface->pending);
	sub->has_cache = false;
	comp_surface_apply_state(surface, &sub->cache);
	return true;
}

static void subsurface_place(struct comp_subsurface *sub)
{
	if (sub->surface && sub->parent)
		comp_surface_set_position(sub->surface, sub->parent->x + sub->x,
		                          sub->parent->y + sub->y);
}

/* Child of parent at list link l, or NULL for the parent's own entry. */
static struct comp_subsurface *child_at(struct comp_surface *parent, struct wl_list *l)
{
	if (l == &parent->subsurface_self_link)
		return NULL;
	struct comp_subsurface *sub = wl_container_of(l, sub, parent_link);
	return sub;
}

static struct wl_list *current_link_of_pending(struct comp_surface *parent, struct wl_list *l)
{
	if (l == &parent->subsurface_self_pending_link)
		return &parent->subsurface_self_link;
	struct comp_subsurface *sub = wl_container_of(l, sub, pending_link);
	return &sub->parent_link;
}

static void parent_moved(struct comp_surface *parent)
{
	for (struct wl_list *l = parent->subsurfaces.next; l != &parent->subsurfaces; l = l->next) {
		struct comp_subsurface *sub = child_at(parent, l);
		if (sub)
			subsurface_place(sub);
	}
}

static void parent_committed(struct comp_surface *parent)
{
	/* Apply the stacking asked for since the last commit: rebuild the
	 * current order from the pending one. */
	bool restacked = false;
	struct wl_list *cur = parent->subsurfaces.next, *l;
	for (l = parent->subsurfaces_pending.next; l != &parent->subsurfaces_pending; l = l->next) {
		if (current_link_of_pending(parent, l) != cur) {
			restacked = true;
			break;
		}
		cur = cur->next;
	}
	if (restacked) {
		for (l = parent->subsurfaces_pending.next; l != &parent->subsurfaces_pending;
		     l = l->next) {
			struct wl_list *link = current_link_of_pending(parent, l);
			wl_list_remove(link);
			wl_list_insert(parent->subsurfaces.prev, link);
		}
	}

	struct wl_list *next;
	for (l = parent->subsurfaces.next; l != &parent->subsurfaces; l = next) {
		next = l->next;
		struct comp_subsurface *sub = child_at(parent, l);
		if (!sub)
			continue;
		sub->x = sub->pending_x;
		sub->y = sub->pending_y;
		subsurface_place(sub);
		if (sub->has_cache && sub->surface) {
			sub->has_cache = false;
			comp_surface_apply_state(sub->surface, &sub->cache);
		}
	}
	if (restacked && parent->mapped)
		comp_stack_update(parent->server);
}

static void parent_mapped(struct comp_surface *parent, bool mapped)
{
	struct wl_list *l, *next;
	for (l = parent->subsurfaces.next; l != &parent->subsurfaces; l = next) {
		next = l->next;
		struct comp_subsurface *sub = child_at(parent, l);
		if (!sub || !sub->surface)
			continue;
		if (mapped && sub->surface->texture)
			comp_surface_map(sub->surface, parent->x + sub->x, parent->y + sub->y);
		else if (!mapped)
			comp_surface_unmap(sub->surface);
	}
}

/* The child's own commit was applied: it shows iff it has content and its
 * parent is shown. */
static void subsurface_role_commit(struct comp_surface *surface)
{
	struct comp_subsurface *sub = surface->role_data;
	if (!sub->parent)
		return;
	/* wl_surface.offset moves the child relative to its parent, from
	 * where it is; a later set_position places it afresh. */
	int dx = surface->current.dx, dy = surface->current.dy;
	if (dx || dy) {
		sub->x = comp_clamp_coord((int64_t)sub->x + dx);
		sub->y = comp_clamp_coord((int64_t)sub->y + dy);
		sub->pending_x = comp_clamp_coord((int64_t)sub->pending_x + dx);
		sub->pending_y = comp_clamp_coord((int64_t)sub->pending_y + dy);
		subsurface_place(sub);
	}
	bool want = sub->parent->mapped && surface->texture;
	if (want && !surface->mapped) {
		comp_surface_map(surface, sub->parent->x + sub->x, sub->parent->y + sub->y);
		comp_stack_update(surface->server);
	} else if (!want && surface->mapped) {
		comp_surface_unmap(surface);
	}
}

/* ------------------------------------------------------------ lifetime */

static void subsurface_unlink(struct comp_subsurface *sub)
{
	if (sub->parent) {
		wl_list_remove(&sub->parent_link);
		wl_list_remove(&sub->pending_link);
		wl_list_remove(&sub->parent_destroy.link);
		sub->parent = NULL;
	}
}

static void subsurface_detach_surface(struct comp_subsurface *sub)
{
	if (!sub->surface)
		return;
	comp_surface_unmap(sub->surface);
	sub->surface->role_data = NULL; /* the role stays, the object is gone */
	wl_list_remove(&sub->surface_destroy.link);
	sub->surface = NULL;
}

static void handle_surface_destroy(struct wl_listener *listener, void *data)
{
	struct comp_subsurface *sub = wl_container_of(listener, sub, surface_destroy);
	subsurface_detach_surface(sub);
	subsurface_unlink(sub);
}

static void handle_parent_destroy(struct wl_listener *listener, void *data)
{
	struct comp_subsurface *sub = wl_container_of(listener, sub, parent_destroy);
	if (sub->surface)
		comp_surface_unmap(sub->surface);
	subsurface_unlink(sub);
}

static void subsurface_resource_destroy(struct wl_resource *resource)
{
	struct comp_subsurface *sub = wl_resource_get_user_data(resource);
	subsurface_detach_surface(sub);
	subsurface_unlink(sub);
	comp_surface_cache_finish(&sub->cache);
	free(sub);
}

/* ------------------------------------------------------------ requests */

static void subsurface_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void subsurface_set_position(struct wl_client *client, struct wl_resource *resource,
                                    int32_t x, int32_t y)
{
	struct comp_subsurface *sub = wl_resource_get_user_data(resource);
	/* Keep offsets in a range where adding output positions cannot overflow. */
	sub->pending_x = comp_clamp_coord(x);
	sub->pending_y = comp_clamp_coord(y);
}

/* The pending-list link of sibling (the parent or another child of it), or
 * NULL after posting bad_surface. */
static struct wl_list *sibling_pending_link(struct comp_subsurface *sub,
                                            struct wl_resource *sibling_resource)
{
	struct comp_surface *sibling = comp_surface_from_resource(sibling_resource);
	if (sibling == sub->parent)
		return &sub->parent->subsurface_self_pending_link;
	struct comp_subsurface *other = subsurface_from_surface(sibling);
	if (!other || other->parent != sub->parent || other == sub) {
		wl_resource_post_error(sub->resource, WL_SUBSURFACE_ERROR_BAD_SURFACE,
		                       "wl_surface@%u is neither a sibling nor the parent of "
		                       "wl_subsurface@%u", wl_resource_get_id(sibling_resource),
		                       wl_resource_get_id(sub->resource));
		return NULL;
	}
	return &other->pending_link;
}

/* place_above and place_below: the lists run bottom to top, so "above"
 * goes after the sibling's link and "below" before it. */
static void subsurface_restack(struct wl_resource *resource, struct wl_resource *sibling,
                               bool above)
{
	struct comp_subsurface *sub = wl_resource_get_user_data(resource);
	if (!sub->parent || !sub->surface)
		return;
	struct wl_list *link = sibling_pending_link(sub, sibling);
	if (!link)
		return;
	wl_list_remove(&sub->pending_link);
	wl_list_insert(above ? link : link->prev, &sub->pending_link);
}

static void subsurface_place_above(struct wl_client *client, struct wl_resource *resource,
                                   struct wl_resource *sibling)
{
	subsurface_restack(resource, sibling, true);
}

static void subsurface_place_below(struct wl_client *client, struct wl_resource *resource,
                                   struct wl_resource *sibling)
{
	subsurface_restack(resource, sibling, false);
}

static void subsurface_set_sync(struct wl_client *client, struct wl_resource *resource)
{
	struct comp_subsurface *sub = wl_resource_get_user_data(resource);
	sub->synchronized = true;
}

static void subsurface_set_desync(struct wl_client *client, struct wl_resource *resource)
{
	struct comp_subsurface *sub = wl_resource_get_user_data(resource);
	sub->synchronized = false;
	/* Leaving synchronized mode applies what was cached, now. */
	if (sub->surface && sub->has_cache && !comp_subsurface_is_synchronized(sub->surface)) {
		sub->has_cache = false;
		comp_surface_apply_state(sub->surface, &sub->cache);
	}
}

static const struct wl_subsurface_interface subsurface_impl = {
	.destroy = subsurface_destroy,
	.set_position = subsurface_set_position,
	.place_above = subsurface_place_above,
	.place_below = subsurface_place_below,
	.set_sync = subsurface_set_sync,
	.set_desync = subsurface_set_desync,
};

/* ------------------------------------------------------ subcompositor */

static void subcompositor_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void subcompositor_get_subsurface(struct wl_client *client, struct wl_resource *resource,
                                         uint32_t id, struct wl_resource *surface_resource,
                                         struct wl_resource *parent_resource)
{
	struct comp_surface *surface = comp_surface_from_resource(surface_resource);
	struct comp_surface *parent = comp_surface_from_resource(parent_resource);

	/* The parent must not be the surface itself or one of its descendants,
	 * or the tree would become a cycle. Every chain is at most
	 * COMP_MAX_SUBSURFACE_DEPTH long, so this walk up is bounded. */
	int depth = 0; /* of parent below its root */
	for (struct comp_surface *p = parent; p; depth++) {
		if (p == surface) {
			wl_resource_post_error(resource, WL_SUBCOMPOSITOR_ERROR_BAD_SURFACE,
			                       "wl_surface@%u cannot be a subsurface of itself or of "
			                       "its own descendant wl_surface@%u",
			                       wl_resource_get_id(surface_resource),
			                       wl_resource_get_id(parent_resource));
			return;
		}
		struct comp_subsurface *ps = subsurface_from_surface(p);
		p = ps ? ps->parent : NULL;
	}
	/* depth counts parent itself: parent's root is at 1. The deepest
	 * surface of the joined tree is surface's own deepest descendant. */
	if (depth + subtree_height(surface) > COMP_MAX_SUBSURFACE_DEPTH) {
		wl_resource_post_error(resource, WL_SUBCOMPOSITOR_ERROR_BAD_SURFACE,
		                       "wl_surface@%u: subsurfaces nest at most %d deep",
		                       wl_resource_get_id(surface_resource),
		                       COMP_MAX_SUBSURFACE_DEPTH);
		return;
	}

	struct comp_subsurface *sub = calloc(1, sizeof(*sub));
	if (!sub) {
		wl_client_post_no_memory(client);
		return;
	}
	if (!comp_surface_set_role(surface, &subsurface_role, sub, resource,
	                           WL_SUBCOMPOSITOR_ERROR_BAD_SURFACE)) {
		free(sub);
		return;
	}
	sub->resource = wl_resource_create(client, &wl_subsurface_interface,
	                                   wl_resource_get_version(resource), id);
	if (!sub->resource) {
		surface->role_data = NULL;
		free(sub);
		wl_client_post_no_memory(client);
		return;
	}
	sub->surface = surface;
	sub->parent = parent;
	sub->synchronized = true;
	comp_surface_cache_init(&sub->cache);
	/* A new child starts on top of its parent and siblings. */
	wl_list_insert(parent->subsurfaces.prev, &sub->parent_link);
	wl_list_insert(parent->subsurfaces_pending.prev, &sub->pending_link);
	sub->surface_destroy.notify = handle_surface_destroy;
	wl_signal_add(&surface->destroy_signal, &sub->surface_destroy);
	sub->parent_destroy.notify = handle_parent_destroy;
	wl_signal_add(&parent->destroy_signal, &sub->parent_destroy);
	wl_resource_set_implementation(sub->resource, &subsurface_impl, sub,
	                               subsurface_resource_destroy);
}

static const struct wl_subcompositor_interface subcompositor_impl = {
	.destroy = subcompositor_destroy,
	.get_subsurface = subcompositor_get_subsurface,
};

static void subcompositor_bind(struct wl_client *client, void *data, uint32_t version,
                               uint32_t id)
{
	comp_resource_create(client, &wl_subcompositor_interface, (int)version, id,
	                     &subcompositor_impl, data, NULL);
}

static const struct comp_subsurface_parent subsurface_parent = {
	.parent_committed = parent_committed,
	.parent_moved = parent_moved,
	.parent_mapped = parent_mapped,
};

void comp_subcompositor_create(struct comp_server *server)
{
	server->subsurface_parent = &subsurface_parent;
	comp_global_create(server, &wl_subcompositor_interface, 1, server, subcompositor_bind);
}
