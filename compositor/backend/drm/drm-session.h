/* The session the DRM backend runs in (drm-session.c): who opens the card
 * and hands DRM master over when the user switches to another VT.
 *
 * With libseat (built with it, where libseat-dev is installed): seatd or
 * logind open the card and pause the session on a VT switch (libseat's
 * builtin seatd only when LIBSEAT_BACKEND=builtin asks for it). Without a seat from libseat, as root, the
 * card is opened directly (no VT switching); not root, there is no way
 * in, and the error says what was tried. Built without libseat, the card
 * is always opened directly, which needs root or the card's permissions. */
#ifndef DUET_DRM_SESSION_H
#define DUET_DRM_SESSION_H

#include <stdbool.h>
#include <stddef.h>

struct wl_event_loop;
struct drm_session;

/* active false: the session was paused (switched away from): stop using
 * the card, then call drm_session_ack_pause. active true: it is ours
 * again, with DRM master. */
typedef void (*drm_session_activate_fn)(void *data, bool active);

/* NULL, with one log line saying what was tried, when there is no way to
 * reach a card. */
struct drm_session *drm_session_create(struct wl_event_loop *loop,
                                       drm_session_activate_fn activate, void *data);
void drm_session_destroy(struct drm_session *session);
/* "libseat (seatd)", "direct (root)", ...: for the log. */
const char *drm_session_kind(const struct drm_session *session);
bool drm_session_active(const struct drm_session *session);
/* Opens a card node read-write; -1 with why filled. */
int drm_session_open(struct drm_session *session, const char *path, char *why, size_t why_len);
void drm_session_close(struct drm_session *session, int fd);
void drm_session_ack_pause(struct drm_session *session);

#endif
