/* The X11 platform's state, shared by its two files: tk-x11.c
 * (connection, ICCCM/EWMH, windows, frames, native window) and
 * tk-x11-shm.c (shared-memory buffers). */
#ifndef DUET_TK_X11_H
#define DUET_TK_X11_H

#include <EGL/egl.h>
#include <xcb/sync.h>
#include <xcb/xcb.h>

#include "tk-private.h"

enum atom_id {
	WM_PROTOCOLS, WM_DELETE_WINDOW, NET_WM_PING, NET_WM_SYNC_REQUEST,
	NET_WM_SYNC_REQUEST_COUNTER, NET_WM_NAME, UTF8_STRING, NET_WM_PID, NET_SUPPORTED,
	NET_SUPPORTING_WM_CHECK, NET_WM_FRAME_DRAWN, NET_WM_FRAME_TIMINGS, DUET_RESIZE,
	ATOM_COUNT
};

#define FRAMES_IN_FLIGHT 16

struct x11_app {
	xcb_connection_t *conn;
	xcb_screen_t *screen;
	xcb_atom_t atoms[ATOM_COUNT];
	bool have_sync;
	bool wm_checked, frame_drawn, duet_resize;
	xcb_window_t wm_window;  /* the WM's check window, watched; 0 none */
	bool wm_gone;            /* it was destroyed: the WM is gone */
	uint64_t events;       /* received */
	uint64_t probes;       /* NoOperation requests sent to read the sequence */
	uint64_t seq_high;     /* wraps of the 32-bit cookie sequence */
	uint32_t last_seq;
	char wm_name[64];
	EGLint egl_attribs[3]; /* EGL_PLATFORM_XCB_SCREEN_EXT: our screen */
};

struct x11_frame {
	uint64_t counter; /* extended counter value that marks it done; 0 free */
	struct tk_frame_info info;
};

struct x11_win {
	xcb_window_t window;
	xcb_gcontext_t gc;
	xcb_sync_counter_t basic, extended;
	uint64_t counter;          /* extended counter's current value */
	uint64_t pending_basic;    /* from a basic _NET_WM_SYNC_REQUEST, 0 none */
	uint64_t pending_extended; /* from an extended one, 0 none */
	bool frame_sync;           /* WM does _NET_WM_FRAME_DRAWN */
	struct x11_frame frames[FRAMES_IN_FLIGHT];
	uint32_t mark_cookie;      /* tk_window_mark_received's GetInputFocus sequence */
	struct x11_shm *shm;       /* tk-x11-shm.c's buffers */
};


static inline struct x11_app *app_data(struct tk_app *app)
{
	return app->platform_data;
}

static inline struct x11_win *win_data(struct tk_window *win)
{
	return win->platform_data;
}

/* tk-x11-shm.c */
int tk_x11_shm_acquire(struct tk_window *win, int width, int height, void **pixels, int *stride);
int tk_x11_shm_present(struct tk_window *win);
void tk_x11_shm_destroy(struct tk_window *win);
/* Takes MIT-SHM's completion events (a buffer is free again); false for
 * any other event. */
bool tk_x11_shm_handle_event(struct tk_app *app, const xcb_generic_event_t *ev);

#endif
