/* xdg-shell's types and each xdg file's functions, shared by the xdg-*.c
 * files of shell/ only. */
#ifndef DUET_COMP_XDG_TYPES_H
#define DUET_COMP_XDG_TYPES_H

#include <wayland-server-protocol.h>

#include "comp.h"
#include "xdg-shell-server-protocol.h"

struct comp_box {
	int x, y, width, height;
};

/* A box from a client, its position clamped as comp_clamp_coord does and
 * its (non-negative) size to at most COMP_MAX_COORD. */
static inline struct comp_box comp_clamp_box(int32_t x, int32_t y, int32_t width,
                                             int32_t height)
{
	return (struct comp_box){ comp_clamp_coord(x), comp_clamp_coord(y),
	                          comp_clamp_coord(width), comp_clamp_coord(height) };
}

/* A copy of an xdg_positioner's state (popups keep their own copy, the
 * positioner object may be destroyed right after get_popup). */
struct comp_positioner {
	int width, height;          /* 0 = not set */
	struct comp_box anchor_rect;
	bool has_anchor_rect;
	uint32_t anchor, gravity, constraint_adjustment;
	int offset_x, offset_y;
	bool reactive;
};

void comp_positioner_create(struct wl_client *client, uint32_t version, uint32_t id);
/* NULL if the resource's positioner is gone. */
const struct comp_positioner *comp_positioner_from_resource(struct wl_resource *resource);
bool comp_positioner_is_complete(const struct comp_positioner *p);
/* The popup's box relative to the parent's window geometry, moved, flipped
 * or resized as the constraint adjustments allow so that it stays inside
 * bounds (also relative to the parent's window geometry). */
struct comp_box comp_positioner_place(const struct comp_positioner *p, struct comp_box bounds);

enum comp_xdg_role {
	COMP_XDG_ROLE_NONE,
	COMP_XDG_ROLE_TOPLEVEL,
	COMP_XDG_ROLE_POPUP,
};

struct comp_xdg_wm_base {
	struct wl_resource *resource;
	struct comp_server *server;
	struct wl_list surfaces; /* comp_xdg_surface.wm_base_link */
};

struct comp_xdg_configure {
	struct wl_list link;
	uint32_t serial;
	uint32_t generation; /* comp_xdg_surface.generation when sent */
};

struct comp_xdg_popup;

struct comp_xdg_surface {
	struct comp_server *server;
	struct wl_resource *resource;
	struct comp_xdg_wm_base *wm_base; /* NULL once the wm_base is gone */
	struct wl_list wm_base_link;
	struct comp_surface *surface;     /* NULL once the wl_surface is gone */
	struct wl_listener surface_destroy;

	enum comp_xdg_role role;
	struct comp_window *window;       /* role TOPLEVEL, while the object lives */
	struct comp_xdg_popup *popup;     /* role POPUP, while the object lives */
	struct wl_list popups;            /* comp_xdg_popup.parent_link, bottom to top */

	bool configure_sent;  /* initial configure sent since the last unmap */
	bool configured;      /* a configure was acked since the last unmap */
	struct wl_list configures; /* sent and not yet acked, oldest first */
	int n_configures;
	/* Bumped on each unmap: configures sent before it may still be acked
	 * (they crossed the unmap on the wire) but do not configure the
	 * surface for its next mapping. */
	uint32_t generation;

	bool has_geometry, pending_has_geometry;
	struct comp_box geometry, pending_geometry;
};

struct comp_xdg_popup {
	struct comp_xdg_surface *xdg;
	struct wl_resource *resource;
	struct comp_xdg_surface *parent;  /* NULL once dismissed or orphaned */
	struct wl_list parent_link;
	struct comp_positioner positioner;
	struct comp_box box;              /* relative to the parent's window geometry */
	int depth;                        /* 1 on a toplevel, parent's + 1 on a popup */
	bool mapped;
	bool grabbed;
	struct wl_list grab_link;         /* comp_server.popup_grabs while grabbed */
};

/* Where xdg_wm_base errors about xdg go: its wm_base, or fallback once
 * the client destroyed that. */
static inline struct wl_resource *comp_xdg_wm_base_resource(const struct comp_xdg_surface *xdg,
                                                            struct wl_resource *fallback)
{
	return xdg->wm_base ? xdg->wm_base->resource : fallback;
}

/* Effective window geometry (set_window_geometry, else the surface's size). */
struct comp_box comp_xdg_surface_geometry(const struct comp_xdg_surface *xdg);
/* Output position of the window geometry's origin. */
void comp_xdg_surface_origin(const struct comp_xdg_surface *xdg, int *x, int *y);
/* Puts the surface where its role says and moves its popups along. */
void comp_xdg_surface_update_position(struct comp_xdg_surface *xdg);
/* Sends xdg_surface.configure with a new serial and remembers it. */
void comp_xdg_surface_send_configure(struct comp_xdg_surface *xdg);
/* A first commit that brings a buffer also maps: only where
 * comp_options.early_buffer_ok allows buffers before the first ack. */
bool comp_xdg_surface_early_map(const struct comp_xdg_surface *xdg);
/* The role object is gone or unmapped: back to the unconfigured state. */
void comp_xdg_surface_reset(struct comp_xdg_surface *xdg);
/* Sends popup_done to every popup of xdg (and theirs) and hides them. */
void comp_xdg_surface_dismiss_popups(struct comp_xdg_surface *xdg);
/* Calls fn for the popups' surface trees above xdg, bottom to top. */
void comp_xdg_surface_for_each_popup_surface(struct comp_xdg_surface *xdg,
                                             comp_surface_iter_t fn, void *data);

void comp_xdg_surface_clear_configures(struct comp_xdg_surface *xdg);

/* A toplevel: the public comp_window plus what only xdg-shell needs. */
struct comp_xdg_toplevel {
	struct comp_window window;
	struct comp_xdg_surface *xdg;   /* NULL once the xdg_surface is gone */
	int pending_min_w, pending_min_h, pending_max_w, pending_max_h;
	int configured_w, configured_h; /* size of the last configure sent */
	/* comp_window_move_on_ack: where the window goes once the configure
	 * with move_serial (or a later one) is acked and a commit follows. */
	bool move_pending, move_acked;
	uint32_t move_serial;
	int move_x, move_y;
};

static inline struct comp_xdg_toplevel *comp_xdg_toplevel_from_window(struct comp_window *window)
{
	struct comp_xdg_toplevel *toplevel = wl_container_of(window, toplevel, window);
	return toplevel;
}

/* xdg-toplevel.c */
void comp_xdg_toplevel_create(struct comp_xdg_surface *xdg, uint32_t id);
void comp_xdg_toplevel_commit(struct comp_xdg_toplevel *toplevel);
void comp_xdg_toplevel_unmap(struct comp_xdg_toplevel *toplevel);
/* The client acked the configure with this serial (older ones included). */
void comp_xdg_toplevel_acked(struct comp_xdg_toplevel *toplevel, uint32_t serial);
/* Tears the toplevel down (its resource becomes inert). */
void comp_xdg_toplevel_destroy_object(struct comp_xdg_toplevel *toplevel);

void comp_xdg_popup_create(struct comp_xdg_surface *xdg, uint32_t id,
                           struct comp_xdg_surface *parent,
                           const struct comp_positioner *positioner);
void comp_xdg_popup_commit(struct comp_xdg_popup *popup);
/* The popup's wl_surface is gone: hide it, keep the object. */
void comp_xdg_popup_orphan(struct comp_xdg_popup *popup);
/* Tears the popup down (its resource becomes inert). */
void comp_xdg_popup_destroy_object(struct comp_xdg_popup *popup);
/* The grab as the seat asks it (comp_server.popup_grab). */
extern const struct comp_popup_grab comp_xdg_popup_grab;

#endif
