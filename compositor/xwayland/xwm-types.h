/* The types of the X window manager inside duet-compositor, and each of
 * its files' functions. One manager per Xwayland process:
 * xwm/'s window model (model.h) on Xwayland's -wm connection, hosted on
 * the server's event loop. xwayland-wm.c holds the connection, the
 * model's host and the policy table that hands the model's decisions to
 * policy.c; xwayland-window.c makes X windows compositor windows (managed
 * ones) or surfaces shown where X put them (override-redirect ones). */
#ifndef DUET_COMP_XWM_TYPES_H
#define DUET_COMP_XWM_TYPES_H

#include "comp.h"
#include "model.h"

/* Texture budgets kept per X client (xwayland-budget.c). */
struct comp_xbudget {
	struct comp_budget_payer payer; /* server->budget_payer while the WM runs */
	uint32_t id_mask;               /* the connection setup's resource_id_mask */
	bool has_res;                   /* X-Resource: a killed client's pid */
	/* Commits of Xwayland's surfaces with no X window (yet) refused over
	 * a budget (xbudget_refusal.link), and kills whose log line waits for
	 * X-Resource's answer (xbudget_report.link). */
	struct wl_list refused, reports;
	/* Windows of a client just killed are still shown: hidden at the
	 * next dispatch, outside the commit that found it over. */
	bool hide_doomed;
};

struct comp_xwm {
	struct comp_server *server;
	struct wl_client *client;       /* Xwayland's Wayland connection; NULL once gone */
	struct wl_listener client_destroy;
	struct xwm xwm;                 /* the model, on the -wm connection */
	struct wl_event_source *source; /* the X connection's fd */
	struct wl_event_source *idle;   /* a dispatch due before the loop sleeps */
	struct wl_event_source *more;   /* a timer: the events one dispatch left, or
	                                 * a flooder's priority to give back */
	/* What that idle source runs: xwayland-wm.c's dispatch, which the
	 * files below it reach only through here (comp_xwm_schedule). */
	wl_event_loop_idle_func_t idle_dispatch;
	struct wl_listener new_surface; /* server->new_surface */
	xcb_atom_t wl_surface_id;       /* WL_SURFACE_ID */
	struct comp_xsel *selection;    /* the clipboard's bridge, xwayland-selection.c */
	struct wl_list contents;        /* xwm_content.link: every X window tracked */
	struct wl_list unmanaged;       /* xwm_content.unmanaged_link: shown, bottom first */
	/* No more X requests: the connection broke, or the WM is going. */
	bool quiet;
	/* Frame synchronization (xwayland-sync.c): SYNC's first event (0:
	 * no SYNC, nothing listed), _XWAYLAND_ALLOW_COMMITS, the timer of
	 * its timeouts, every output's presented frames. */
	uint8_t sync_event;
	xcb_atom_t allow_commits;
	struct wl_event_source *sync_timer;
	struct wl_listener output_presented;
	struct comp_xbudget budget;
};

/* A window's _NET_WM_SYNC_REQUEST and frame timing (xwayland-sync.c). */
struct comp_xsync {
	xcb_sync_alarm_t alarm;      /* on the extended counter, else the basic */
	/* The extended counter's alarm is one-shot (xwayland-sync.c): armed
	 * (at armed_at; INT64_MIN: at its creation, relative) or not; the
	 * last value it reported. */
	bool one_shot, armed;
	int64_t armed_at, last_value;
	/* Resize: the last serial asked for, while waiting for it since
	 * wait_ns with Xwayland's commits of the window held back. */
	int64_t serial;
	bool waiting, commits_held;
	uint64_t wait_ns, timeout_ns;
	/* After the wait the surface moves to the window's place with the
	 * first commit (the new content), or at place_ns at the latest. */
	bool place_pending;
	uint64_t place_ns;
	/* Finished frames (even extended values) owed _NET_WM_FRAME_DRAWN.
	 * The latest one whose commit has not come yet (awaiting, finished
	 * at await_ns); and those whose commit came, oldest first, each
	 * answered by the first presented frame of its output painted after
	 * it (repaint count > need_repaint). One replaced before that is
	 * never answered: the client counts it discarded when a later value
	 * is answered. */
	int64_t await_serial, latest_frame;
	bool awaiting;
	uint64_t await_ns, released_ns;
	struct comp_xsync_frame {
		int64_t serial;
		uint64_t need_repaint, finished_ns;
	} claimed[4];
	int nclaimed;
	/* Commits of its surface, how many frames have claimed, and the
	 * frame output's repaint count at the last one and at its last
	 * presented frame. */
	uint64_t commits, claimed_commits, commit_repaint, presented_repaint;
	uint64_t presented_ns;
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
	/* Its X client went over a texture budget and was killed: never
	 * shown again, nothing more charged (xwayland-budget.c). */
	bool doomed;
	struct wl_list unmanaged_link;
	struct comp_xsync sync;
};

/* X requests made outside the X dispatch (from the compositor's policy)
 * are flushed, and what they make xcb read handled, before the loop
 * sleeps. */
static inline void comp_xwm_schedule(struct comp_xwm *wm)
{
	if (!wm->idle && !wm->quiet)
		wm->idle = wl_event_loop_add_idle(wm->server->loop, wm->idle_dispatch, wm);
}

/* xwayland-sync.c: _NET_WM_SYNC_REQUEST before the policy's resizes and
 * _NET_WM_FRAME_DRAWN / _NET_WM_FRAME_TIMINGS once frames are presented. */
/* Sets it up on a new WM (false: no SYNC; windows are then never waited
 * for and nothing is listed). */
bool comp_xsync_init(struct comp_xwm *wm);
void comp_xsync_finish(struct comp_xwm *wm);
/* The model's host hooks: counters read again, a resize about to go out. */
void comp_xsync_counters_changed(struct xwm_content *c);
void comp_xsync_resizing(struct xwm_content *c);
/* An AlarmNotify of ours: true if it was one. */
bool comp_xsync_handle_event(struct comp_xwm *wm, xcb_generic_event_t *ev);
/* Xwayland committed the window's surface. */
void comp_xsync_committed(struct xwm_content *c);
/* The surface stays where it is: the new size is not drawn yet. */
static inline bool comp_xsync_holds_place(const struct xwm_content *c)
{
	return c->sync.waiting || c->sync.place_pending;
}
void comp_xsync_window_destroyed(struct xwm_content *c);

/* xwayland-budget.c: the texture budgets of docs/security.md kept per X
 * client (the client part of its XIDs) for Xwayland's surfaces, whose
 * charges budget.c hands over (struct comp_budget_payer). */
/* Becomes the server's payer for wm->client: needs the X connection. */
void comp_xbudget_init(struct comp_xwm *wm);
/* No longer the payer; logs the kills still waiting for their pid. */
void comp_xbudget_finish(struct comp_xwm *wm);
/* Xwayland is gone: its surfaces are nobody's to pay for here. */
void comp_xbudget_client_gone(struct comp_xwm *wm);
/* c was just paired with its surface: the surface's texture, charged
 * while no X window was known, is its client's from now on. false: its
 * client is over a budget (killed now, or before): c is doomed. */
bool comp_xbudget_paired(struct xwm_content *c);
/* The X dispatch: X-Resource's answers for the kills' log lines. */
void comp_xbudget_dispatch(struct comp_xwm *wm);

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
