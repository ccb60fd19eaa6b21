/* The clipboard between X clients (through Xwayland) and Wayland clients:
 * Xwayland 22.1 does not bridge selections itself, so its window manager
 * does (xwayland-selection.c), as weston's and wlroots' do. Text only, the
 * CLIPBOARD selection only. */
#ifndef DUET_COMP_XWAYLAND_SELECTION_H
#define DUET_COMP_XWAYLAND_SELECTION_H

#include <stdbool.h>
#include <xcb/xcb.h>

struct comp_xwm;
struct comp_xsel;

/* After the window manager is running; NULL (logged) if XFIXES is
 * missing: the clipboard is then not bridged, windows still are. */
struct comp_xsel *comp_xsel_create(struct comp_xwm *wm);
/* Closes every transfer; a Wayland selection made from X is cleared. */
void comp_xsel_destroy(struct comp_xsel *sel);
/* true: the event was the clipboard's alone (the model must not see it). */
bool comp_xsel_handle_event(struct comp_xsel *sel, xcb_generic_event_t *ev);

#endif
