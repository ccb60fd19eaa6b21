/* The Damage extension on the root window (vfb-xdamage.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xcb/damage.h>
#include <xcb/xcb.h>

#include "vfb-xdamage.h"

struct vfb_xdamage {
	xcb_connection_t *c;
	xcb_damage_damage_t damage;
	uint8_t notify; /* the DamageNotify event code */
	xcb_generic_event_t *held; /* read by pending(), not yet marked */
};

struct vfb_xdamage *vfb_xdamage_open(const char *display, char *why, size_t len)
{
	if (!display) {
		snprintf(why, len, "no X display given (--display)");
		return NULL;
	}
	struct vfb_xdamage *xd = calloc(1, sizeof(*xd));
	if (!xd) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	int screen_no = 0;
	xd->c = xcb_connect(display, &screen_no);
	if (xcb_connection_has_error(xd->c)) {
		snprintf(why, len, "cannot connect to X display %s", display);
		goto fail;
	}
	const xcb_query_extension_reply_t *ext = xcb_get_extension_data(xd->c, &xcb_damage_id);
	if (!ext || !ext->present) {
		snprintf(why, len, "X display %s has no DAMAGE extension", display);
		goto fail;
	}
	xd->notify = ext->first_event + XCB_DAMAGE_NOTIFY;
	xcb_damage_query_version_reply_t *v = xcb_damage_query_version_reply(
		xd->c, xcb_damage_query_version(xd->c, 1, 1), NULL);
	if (!v) {
		snprintf(why, len, "DamageQueryVersion failed on %s", display);
		goto fail;
	}
	free(v);
	xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(xd->c));
	for (int i = 0; i < screen_no && it.rem; i++)
		xcb_screen_next(&it);
	xd->damage = xcb_generate_id(xd->c);
	xcb_void_cookie_t ck = xcb_damage_create_checked(
		xd->c, xd->damage, it.data->root, XCB_DAMAGE_REPORT_LEVEL_RAW_RECTANGLES);
	xcb_generic_error_t *err = xcb_request_check(xd->c, ck);
	if (err) {
		snprintf(why, len, "DamageCreate on the root window of %s: X error %u", display,
		         err->error_code);
		free(err);
		goto fail;
	}
	/* The check was a round trip: what the server reported until now (the
	 * whole screen at first) is before the reader's time. */
	xcb_generic_event_t *ev;
	while ((ev = xcb_poll_for_event(xd->c)))
		free(ev);
	return xd;
fail:
	if (xd->c)
		xcb_disconnect(xd->c);
	free(xd);
	return NULL;
}

static uint64_t mark(struct vfb_xdamage *xd, xcb_generic_event_t *ev, struct vfb_marks *k)
{
	if ((ev->response_type & 0x7f) != xd->notify)
		return 0;
	const xcb_damage_notify_event_t *n = (const xcb_damage_notify_event_t *)ev;
	/* Raw rectangles on the root: area is in screen coordinates. */
	vfb_marks_rect(k, n->area.x, n->area.y, n->area.x + n->area.width,
	               n->area.y + n->area.height);
	return sizeof(*n);
}

uint64_t vfb_xdamage_drain(struct vfb_xdamage *xd, struct vfb_marks *k)
{
	uint64_t bytes = 0;
	if (xd->held) {
		bytes += mark(xd, xd->held, k);
		free(xd->held);
		xd->held = NULL;
	}
	xcb_generic_event_t *ev;
	while ((ev = xcb_poll_for_event(xd->c))) {
		bytes += mark(xd, ev, k);
		free(ev);
	}
	return bytes;
}

bool vfb_xdamage_pending(struct vfb_xdamage *xd)
{
	if (!xd->held)
		xd->held = xcb_poll_for_event(xd->c);
	return xd->held != NULL;
}

void vfb_xdamage_close(struct vfb_xdamage *xd)
{
	if (!xd)
		return;
	free(xd->held);
	xcb_disconnect(xd->c);
	free(xd);
}
