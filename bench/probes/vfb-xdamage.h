/* X's own damage for the Xvfb source: the Damage extension on the root
 * window (raw rectangles), read on a connection of the reader's own. What
 * Xvfb draws into its framebuffer is reported as DamageNotify events once
 * the request that drew it was handled; there is no frame boundary, so the
 * reader takes what arrived before each look as that look's truth. Built
 * where xcb-damage is (DUET_HAVE_XDAMAGE). */
#ifndef DUET_VFB_XDAMAGE_H
#define DUET_VFB_XDAMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vfb-marks.h"

struct vfb_xdamage;

/* NULL with why filled when display cannot be watched. */
struct vfb_xdamage *vfb_xdamage_open(const char *display, char *why, size_t len);
/* Marks every damaged rectangle that has arrived; returns the bytes of the
 * events read. */
uint64_t vfb_xdamage_drain(struct vfb_xdamage *xd, struct vfb_marks *k);
/* Whether events are waiting (damage that came during a detection). */
bool vfb_xdamage_pending(struct vfb_xdamage *xd);
void vfb_xdamage_close(struct vfb_xdamage *xd);

#endif
