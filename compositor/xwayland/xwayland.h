/* Xwayland hosted by duet-compositor (--xwayland): an X display this
 * server owns, and Xwayland started on it when an X client first
 * connects, as a Wayland client of this server. */
#ifndef DUET_COMP_XWAYLAND_H
#define DUET_COMP_XWAYLAND_H

#include <stdbool.h>
#include <sys/types.h>

struct comp_server;
struct comp_xwayland;
struct wl_client;

/* An X display in the X servers' own terms: the lock file /tmp/.XN-lock
 * and the sockets X clients connect to for ":N", abstract and in
 * /tmp/.X11-unix (xwayland-display.c). */
struct comp_xdisplay {
	int number;          /* N of ":N"; -1 when none is held */
	int fd[2];           /* listening: abstract socket, socket file */
	char lock_path[32];
	char socket_path[40];
};

/* Takes the first free display from first on (a number whose lock file is
 * absent or left by a dead process, and whose sockets can be bound):
 * 0, or -1 after a log line. */
int comp_xdisplay_open(struct comp_xdisplay *d, int first);
/* Closes the sockets and removes the socket file and the lock file. */
void comp_xdisplay_close(struct comp_xdisplay *d);

/* The Xwayland binary: options.xwayland_path (a path, or a name looked up
 * in PATH), by default "Xwayland" in PATH; NULL after one log line that
 * names it and the Debian package. The caller frees the path. */
char *comp_xwayland_find(const char *wanted);

/* The X display and its sockets (no process yet): NULL after a log line. */
struct comp_xwayland *comp_xwayland_create(struct comp_server *server);
/* Once the server is up: starts Xwayland now (options.xwayland_now), or
 * waits for the first X connection. */
void comp_xwayland_run(struct comp_xwayland *xw);
/* Stops Xwayland (SIGTERM, then SIGKILL), reaps it, closes every fd and
 * removes the socket and lock files. */
void comp_xwayland_destroy(struct comp_xwayland *xw);

int comp_xwayland_display(const struct comp_xwayland *xw);
/* Xwayland's process and its Wayland connection while it runs, else 0
 * and NULL: the X window manager pairs X windows with this client's
 * surfaces (WL_SURFACE_ID). */
pid_t comp_xwayland_pid(const struct comp_xwayland *xw);
struct wl_client *comp_xwayland_client(const struct comp_xwayland *xw);
/* Whether the X window manager of the running Xwayland is up (it owns
 * WM_S0: Xwayland serves X clients from then on). */
bool comp_xwayland_wm_running(const struct comp_xwayland *xw);

/* The X window manager of one Xwayland (xwayland-wm.c), on fd, the
 * compositor's end of -wm (taken, closed on failure); client is that
 * Xwayland's Wayland connection. NULL after a log line. */
struct comp_xwm;
struct comp_xwm *comp_xwm_create(struct comp_server *server, int fd, struct wl_client *client);
/* Unmanages every X window (no X requests: Xwayland is gone or going)
 * and closes the connection. */
void comp_xwm_destroy(struct comp_xwm *wm);

#endif
