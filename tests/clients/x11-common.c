#include "x11-common.h"

#include <stdlib.h>
#include <string.h>

xcb_connection_t *x11_connect(const char *display, xcb_screen_t **screen, int *screen_num)
{
	int num = 0;
	xcb_connection_t *conn = xcb_connect(display, &num);
	if (xcb_connection_has_error(conn)) {
		/* xcb hands back an error object even then: it still needs freeing. */
		xcb_disconnect(conn);
		return NULL;
	}
	xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(conn));
	for (int i = 0; i < num && it.rem; i++)
		xcb_screen_next(&it);
	*screen = it.data;
	if (screen_num)
		*screen_num = num;
	return conn;
}

xcb_atom_t x11_intern(xcb_connection_t *conn, const char *name)
{
	xcb_intern_atom_cookie_t cookie = xcb_intern_atom(conn, 0, (uint16_t)strlen(name), name);
	xcb_intern_atom_reply_t *r = xcb_intern_atom_reply(conn, cookie, NULL);
	xcb_atom_t atom = r ? r->atom : XCB_ATOM_NONE;
	free(r);
	return atom;
}

bool x11_round_trip(xcb_connection_t *conn)
{
	/* GetInputFocus: the cheapest request with a reply. */
	free(xcb_get_input_focus_reply(conn, xcb_get_input_focus(conn), NULL));
	return !xcb_connection_has_error(conn);
}
