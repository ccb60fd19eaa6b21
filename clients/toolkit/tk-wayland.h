/* The Wayland platform's state, shared by its two files: tk-wayland.c
 * (connection, windows, frames, native window) and tk-wayland-shm.c
 * (shared-memory buffers). */
#ifndef DUET_TK_WAYLAND_H
#define DUET_TK_WAYLAND_H

#include <wayland-client.h>

#include "tk-private.h"

struct wayland_app {
	struct wl_display *display;
	struct wl_registry *registry;
	struct wl_compositor *compositor;
	struct wl_shm *shm;
	struct xdg_wm_base *wm_base;
	struct wl_subcompositor *subcompositor;
	struct wl_data_device_manager *ddm;
	struct wl_data_device *data_device;
	struct wl_data_offer *selection;
	struct wl_seat *seat;
	struct wl_pointer *pointer;
	struct wl_keyboard *keyboard;
	struct wl_surface *key_focus; /* the surface keyboard.enter named, NULL after leave */
	struct tk_app *app;
	struct wl_output *output;
	struct wp_presentation *presentation;
	uint32_t presentation_clock;
	bool no_presentation; /* DUET_PRESENTATION=frame-callback */
	uint32_t duet_test_name, duet_test_version;
	struct duet_test *duet_test;
};

struct wayland_win {
	struct wl_surface *surface;
	struct xdg_surface *xdg_surface;
	struct xdg_toplevel *toplevel;
	struct wl_egl_window *egl_window;
	struct wayland_shm *shm; /* tk-wayland-shm.c's buffers */
	int pending_w, pending_h;
	uint32_t ack_serial;
	bool need_ack;
	int geometry_w, geometry_h; /* last set_window_geometry */
	uint32_t server_id;         /* duet_test window id, 0 unknown */
	bool listing;
	struct feedback *feedbacks; /* outstanding, freed with the window */
	struct wl_callback *mark;   /* tk_window_mark_received's sync, until done */
};

static inline struct wayland_app *app_data(struct tk_app *app)
{
	return app->platform_data;
}

static inline struct wayland_win *win_data(struct tk_window *win)
{
	return win->platform_data;
}

/* tk-wayland-shm.c */
int tk_wayland_shm_init(struct tk_app *app);
int tk_wayland_shm_acquire(struct tk_window *win, int width, int height, void **pixels,
                           int *stride);
int tk_wayland_shm_present(struct tk_window *win);
void tk_wayland_shm_destroy(struct tk_window *win);

#endif
