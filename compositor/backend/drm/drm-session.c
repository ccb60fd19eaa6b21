/* The DRM backend's session: libseat where duet was built with it, else
 * (or with no seat to be had, as root) the card opened directly.
 * drm-session.h says what each way gives. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <wayland-server-core.h>

#include "comp.h"
#include "drm-session.h"

#ifdef DUET_HAVE_LIBSEAT
#include <libseat.h>
#endif

/* The card and the input devices (input-libinput.c). */
#define MAX_DEVICES 64

struct drm_session {
	drm_session_activate_fn activate;
	void *data;
	bool active;
#ifdef DUET_HAVE_LIBSEAT
	struct libseat *seat;
	struct wl_event_source *source;
	char kind[64];
	struct {
		int fd, id;
	} devices[MAX_DEVICES];
	/* libseat's own messages while a seat is sought: kept for the one
	 * error line, instead of a line per backend it tried. */
	char seat_messages[512];
	bool seat_verbose;
#endif
};

static int open_direct(const char *path, char *why, size_t why_len)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno == EACCES || errno == EPERM)
		snprintf(why, why_len, "%s (%s: run it as root, or give this user the card's "
		         "permissions)", strerror(errno),
#ifdef DUET_HAVE_LIBSEAT
		         "no seat from libseat, so the card is opened directly"
#else
		         "duet was built without libseat, so the card is opened directly"
#endif
		);
	else
		snprintf(why, why_len, "%s", strerror(errno));
	return -1;
}

#ifdef DUET_HAVE_LIBSEAT
/* libseat's log handler is process-wide and takes no data pointer: the
 * session being opened is named here while open_seat runs, and only then
 * (per thread, so that servers opened on two threads keep their own). */
static _Thread_local struct drm_session *opening;

static void seat_log(enum libseat_log_level level, const char *fmt, va_list args)
{
	char line[256];
	vsnprintf(line, sizeof(line), fmt, args);
	if (!opening || opening->seat_verbose) {
		comp_log("libseat: %s", line);
		return;
	}
	char *msgs = opening->seat_messages;
	size_t used = strlen(msgs);
	if (level == LIBSEAT_LOG_LEVEL_ERROR && used + 3 < sizeof(opening->seat_messages))
		snprintf(msgs + used, sizeof(opening->seat_messages) - used, "%s%s",
		         used ? "; " : "", line);
}

static void seat_enable(struct libseat *seat, void *data)
{
	struct drm_session *session = data;
	bool was = session->active;
	session->active = true;
	if (!was && session->activate)
		session->activate(session->data, true);
}

static void seat_disable(struct libseat *seat, void *data)
{
	struct drm_session *session = data;
	session->active = false;
	if (session->activate)
		session->activate(session->data, false);
	else
		drm_session_ack_pause(session);
}

static const struct libseat_seat_listener seat_listener = {
	.enable_seat = seat_enable,
	.disable_seat = seat_disable,
};

static int seat_dispatch(int fd, uint32_t mask, void *data)
{
	struct drm_session *session = data;
	if (libseat_dispatch(session->seat, 0) < 0) {
		comp_log("drm: the seat's connection failed (%s); the display is no longer "
		         "ours", strerror(errno));
		wl_event_source_remove(session->source);
		session->source = NULL;
	}
	return 0;
}

/* A seat from libseat: 0, or -1 with the reason in why. The session is
 * ours when the seat is enabled, which seatd says at once unless another
 * session holds the seat. */
static int try_open_seat(struct drm_session *session, struct wl_event_loop *loop, char *why,
                         size_t why_len)
{
	const char *seat_messages = session->seat_messages;
	bool seat_verbose = session->seat_verbose;
	libseat_set_log_handler(seat_log);
	libseat_set_log_level(seat_verbose ? LIBSEAT_LOG_LEVEL_DEBUG : LIBSEAT_LOG_LEVEL_ERROR);
	const char *sock = getenv("SEATD_SOCK");
	const char *backend = getenv("LIBSEAT_BACKEND");
	char tried[192];
	snprintf(tried, sizeof(tried), "libseat tried %s%s%s", backend ? "LIBSEAT_BACKEND=" : "seatd at ",
	         backend ? backend : sock ? sock : "/run/seatd.sock",
	         backend ? "" : " and logind");
	if (backend) {
		session->seat = libseat_open_seat(&seat_listener, session);
	} else {
		/* Not libseat's builtin seatd, which it would try last: it
		 * runs in this process and takes the VT's release and acquire
		 * signals (SIGUSR1, SIGUSR2) that duet's event loop already
		 * takes, so a VT switch would hang. As root duet opens the
		 * card itself instead; LIBSEAT_BACKEND=builtin still asks for
		 * it. */
		const char *order[] = { "seatd", "logind" };
		for (size_t i = 0; i < 2 && !session->seat; i++) {
			setenv("LIBSEAT_BACKEND", order[i], 1);
			session->seat = libseat_open_seat(&seat_listener, session);
		}
		unsetenv("LIBSEAT_BACKEND");
	}
	if (!session->seat) {
		snprintf(why, why_len, "%s: none gave a seat (%s)", tried,
		         seat_messages[0] ? seat_messages : strerror(errno));
		why[why_len > 400 ? 400 : why_len - 1] = '\0';
		return -1;
	}
	/* Up to 5 s (an emulated guest is slow) for the seat to be ours. */
	for (int i = 0; i < 50 && !session->active; i++) {
		if (libseat_dispatch(session->seat, 100) < 0) {
			snprintf(why, why_len, "the seat's connection failed: %s", strerror(errno));
			goto fail;
		}
	}
	if (!session->active) {
		snprintf(why, why_len, "%s: seat %s never became ours within 5 s (another "
		         "session holds it, or no VT could be had%s%.300s)", tried,
		         libseat_seat_name(session->seat), seat_messages[0] ? ": " : "",
		         seat_messages);
		goto fail;
	}
	session->source = wl_event_loop_add_fd(loop, libseat_get_fd(session->seat),
	                                       WL_EVENT_READABLE, seat_dispatch, session);
	if (!session->source) {
		snprintf(why, why_len, "cannot watch the seat's connection");
		goto fail;
	}
	/* Which backend libseat took is not in its API: its log says. */
	snprintf(session->kind, sizeof(session->kind), "libseat, seat %s",
	         libseat_seat_name(session->seat));
	libseat_set_log_level(seat_verbose ? LIBSEAT_LOG_LEVEL_DEBUG : LIBSEAT_LOG_LEVEL_SILENT);
	return 0;
fail:
	libseat_close_seat(session->seat);
	session->seat = NULL;
	session->active = false;
	return -1;
}

static int open_seat(struct drm_session *session, struct wl_event_loop *loop, char *why,
                     size_t why_len)
{
	const char *env = getenv("DUET_SEAT_DEBUG");
	session->seat_verbose = env && *env && strcmp(env, "0") != 0;
	opening = session;
	int ret = try_open_seat(session, loop, why, why_len);
	opening = NULL;
	return ret;
}
#endif

struct drm_session *drm_session_create(struct wl_event_loop *loop,
                                       drm_session_activate_fn activate, void *data)
{
	struct drm_session *session = calloc(1, sizeof(*session));
	if (!session)
		return NULL;
	session->activate = activate;
	session->data = data;
#ifdef DUET_HAVE_LIBSEAT
	for (int i = 0; i < MAX_DEVICES; i++)
		session->devices[i].fd = -1;
	char why[768];
	const char *no = getenv("DUET_NO_LIBSEAT");
	if (no && *no && strcmp(no, "0") != 0) {
		snprintf(why, sizeof(why), "libseat not tried (DUET_NO_LIBSEAT is set)");
	} else if (open_seat(session, loop, why, sizeof(why)) == 0) {
		comp_log("drm: session: %s", session->kind);
		return session;
	}
	if (geteuid() != 0) {
		comp_log("drm: no session to open a display with: %s; and duet is not root, so "
		         "it cannot open the card directly (start seatd, e.g. `seatd-launch -- "
		         "duet-compositor --backend drm`, or run as root)", why);
		free(session);
		return NULL;
	}
	comp_log("drm: session: direct, as root (%s); no VT switching", why);
#else
	(void)loop;
	comp_log("drm: session: direct (built without libseat); no VT switching");
#endif
	session->active = true;
	return session;
}

void drm_session_destroy(struct drm_session *session)
{
	if (!session)
		return;
#ifdef DUET_HAVE_LIBSEAT
	if (session->source)
		wl_event_source_remove(session->source);
	if (session->seat)
		libseat_close_seat(session->seat);
#endif
	free(session);
}

const char *drm_session_kind(const struct drm_session *session)
{
#ifdef DUET_HAVE_LIBSEAT
	if (session->seat)
		return session->kind;
#endif
	return "direct";
}

bool drm_session_active(const struct drm_session *session)
{
	return session->active;
}

int drm_session_open(struct drm_session *session, const char *path, char *why, size_t why_len)
{
#ifdef DUET_HAVE_LIBSEAT
	if (session->seat) {
		int slot = -1;
		for (int i = 0; i < MAX_DEVICES && slot < 0; i++)
			if (session->devices[i].fd < 0)
				slot = i;
		if (slot < 0) {
			snprintf(why, why_len, "too many devices open");
			return -1;
		}
		int fd = -1;
		int id = libseat_open_device(session->seat, path, &fd);
		if (id < 0) {
			int err = errno;
			/* seatd opens only DRM and input nodes: a plain open
			 * says better what the path is. */
			int probe = open(path, O_RDONLY | O_CLOEXEC);
			if (probe < 0) {
				snprintf(why, why_len, "%s", strerror(errno));
				return -1;
			}
			close(probe);
			snprintf(why, why_len, "the seat would not open it: %s", strerror(err));
			return -2; /* it exists: the caller may say what it is */
		}
		session->devices[slot].fd = fd;
		session->devices[slot].id = id;
		return fd;
	}
#endif
	(void)session;
	return open_direct(path, why, why_len);
}

void drm_session_close(struct drm_session *session, int fd)
{
	if (fd < 0)
		return;
#ifdef DUET_HAVE_LIBSEAT
	for (int i = 0; session->seat && i < MAX_DEVICES; i++) {
		if (session->devices[i].fd == fd) {
			libseat_close_device(session->seat, session->devices[i].id);
			session->devices[i].fd = -1;
		}
	}
#endif
	close(fd);
}

void drm_session_ack_pause(struct drm_session *session)
{
#ifdef DUET_HAVE_LIBSEAT
	if (session->seat)
		libseat_disable_seat(session->seat);
#endif
	(void)session;
}
