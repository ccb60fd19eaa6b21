/* duet-x11-bad-client's shared parts: x11-bad-client.c (the driver and the
 * modes of one misdeed each), x11-bad-traffic.c (flooding, never reading). */
#ifndef DUET_X11_BAD_CLIENT_H
#define DUET_X11_BAD_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include <xcb/xcb.h>

#define BAD_CLASS "duet-x11-bad-client"

struct bad {
	xcb_connection_t *conn;
	xcb_screen_t *screen;
	xcb_atom_t wm_protocols, wm_delete_window;
	uint32_t rng;
	int calm_wait_s; /* flood: how long to wait for its priority to change */
};

/* Deterministic, so a failure can be replayed. */
uint32_t rnd(struct bad *b);
void set_prop(struct bad *b, xcb_window_t w, xcb_atom_t prop, xcb_atom_t type, uint8_t format,
              uint32_t n, const void *data);
/* A plain top-level window with a background (so it shows up in
 * screenshots as something) and our class, not yet mapped. */
xcb_window_t make_window(struct bad *b, int w, int h, const char *title);
/* Prints "client 0xBASE": the client's part of every XID it makes (the
 * connection setup's resource-id base), which the window manager names an
 * X client by. */
void print_client(struct bad *b);

/* x11-bad-traffic.c: each runs until SIGTERM (or 60 s) and returns its
 * exit status: 0 done, 2 the X connection failed. */
int flood(struct bad *b);
int no_read(struct bad *b);

#endif
