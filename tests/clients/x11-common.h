/* The xcb steps every X11 test client (and duet-xctl) takes the same way:
 * connecting to a screen, interning an atom, waiting for the server. */
#ifndef DUET_X11_COMMON_H
#define DUET_X11_COMMON_H

#include <stdbool.h>

#include <xcb/xcb.h>

/* Connects to display (NULL: $DISPLAY) and finds its screen; *screen_num
 * (may be NULL) gets the screen's number. NULL, and nothing left open,
 * when the connection fails; the caller says so in its own words. */
xcb_connection_t *x11_connect(const char *display, xcb_screen_t **screen, int *screen_num);

/* The atom of name (made if new), XCB_ATOM_NONE on an X error. */
xcb_atom_t x11_intern(xcb_connection_t *conn, const char *name);

/* Waits until the server has processed every request sent so far, so
 * that what is printed next is true of the server. False if the
 * connection has failed. */
bool x11_round_trip(xcb_connection_t *conn);

#endif
