/* The X window manager inside duet-compositor, one per Xwayland process:
 * xwm/'s window model (model.h) on Xwayland's -wm connection, hosted on
 * the server's event loop. xwayland-wm.c holds the connection, the
 * model's host and the policy table that hands the model's decisions to
 * policy.c; xwayland-window.c makes X windows compositor windows (managed
 * ones) or surfaces shown where X put them (override-redirect ones). */
#ifndef DUET_COMP_XWAYLAND_WM_H
#define DUET_COMP_XWAYLAND_WM_H

#include "comp.h"
#include "model.h"

struct comp_xwm {
	struct comp_server *server;
	struct wl_client *client;       /* Xwayland's Wayland connection */
	struct xwm xwm;                 /* the model, on the -wm connection */
	struct wl_event_source *source; /* the X connection's fd */
	struct wl_event_source *idle;   /* a dispatch due before the loop sleeps */
	struct wl_listener new_surface; /* server->new_surface */
	xcb_atom_t wl_surface_id;       /* WL_SURFACE_ID */
	struct comp_xsel *selection;    /* the clipboard's bridge, xwayland-selection.c */
	struct wl_list contents;        /* xwm_content.link: every X window tracked */
	struct wl_list unmanaged;       /* xwm_content.unmanaged_link: shown, bottom first */
	/* No more X requests: the connection broke, or the WM is going. */
	bool quiet;
};

/* The host's part of an X window (model.h leaves struct xwm_content to
 * its host). */
struct xwm_content {
	struct comp_xwm *wm;
	struct xwm_window *x;
	struct wl_list link;            /* comp_xwm.contents */
	/* WL_SURFACE_ID named this id of Xwayland's before that wl_surface
	 * existed here: paired when it is made (0: none waiting). */
	uint32_t surface_id;
	struct comp_surface *surface;   /* paired, its role xwayland_surface */
	struct wl_listener surface_destroy;
	/* A managed window's compositor window, made when it is first
	 * placed (window.server set from then on). */
	struct comp_window window;
	/* Minimized as ICCCM asks (X unmapped, WM_STATE Iconic), its
	 * compositor window still mapped: iconic until X maps it again,
	 * restoring from then until its new wl_surface shows. */
	bool iconic, restoring;
	/* An override-redirect window while shown: in comp_xwm.unmanaged. */
	bool unmanaged_shown;
	struct wl_list unmanaged_link;
};

/* xwayland-wm.c: X requests made outside the X dispatch (from the
 * compositor's policy) are flushed, and what they make xcb read handled,
 * before the loop sleeps. */
void comp_xwm_schedule(struct comp_xwm *wm);

/* xwayland-window.c */
/* WL_SURFACE_ID met its wl_surface: the window shows once both are ready. */
void comp_xwindow_pair(struct xwm_content *c, struct comp_surface *surface);
/* The surface goes (Xwayland makes a new one at the next map). */
void comp_xwindow_unpair(struct xwm_content *c);
/* Shows or hides the window after its X state or its surface changed. */
void comp_xwindow_update(struct xwm_content *c);
/* Its client renamed it (WM_NAME, _NET_WM_NAME, WM_CLASS): a mapped
 * window is listed under the new title and class. */
void comp_xwindow_named(struct xwm_content *c);
/* Its client asked for an interactive move or resize (_NET_WM_MOVERESIZE
 * direction) while its button is held: the compositor's, as for an
 * xdg_toplevel. */
void comp_xwindow_begin_move(struct xwm_content *c, uint32_t direction);
/* Its X geometry changed: the compositor window and surface follow. */
void comp_xwindow_configured(struct xwm_content *c);
/* A managed window's compositor window, made at the first call. */
struct comp_window *comp_xwindow_window(struct xwm_content *c);
/* A window whose client mapped it iconic (WM_HINTS initial_state): a
 * mapped, minimized compositor window with nothing to show yet. */
void comp_xwindow_map_iconic(struct xwm_content *c);
/* Whether c has a compositor window (a managed window placed once). */
static inline bool comp_xwindow_has_window(const struct xwm_content *c)
{
	return c && c->window.server;
}
/* Before its X window is freed: nothing of it is left shown or listed. */
void comp_xwindow_destroy(struct xwm_content *c);
void comp_xwm_for_each_unmanaged(struct comp_xwm *wm, comp_surface_iter_t fn, void *data);

#endif
