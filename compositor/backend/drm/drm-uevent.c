/* Hotplug events of one DRM device, read from the kernel's uevent netlink
 * socket directly rather than through libudev's monitor: libudev hears
 * what udevd rebroadcasts, and a guest or a minimal board (virtme-ng's
 * guest among them) often runs no udevd; the kernel's own messages come
 * everywhere, to any user. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <wayland-server-core.h>

#include "comp.h"
#include "drm-uevent.h"

struct drm_uevent {
	int fd;
	struct wl_event_source *source;
	unsigned int major, minor;
	void (*changed)(void *data);
	void *data;
};

/* A message is "ACTION@DEVPATH\0KEY=VALUE\0...": is it a hotplug of our
 * device? The kernel's say HOTPLUG=1; any other "change" of the card is
 * taken as one too: drivers whose connectors are forced through sysfs
 * send none, and an administrator (or a test) then asks for a re-probe
 * with `udevadm trigger -c change` or by writing "change" to the card's
 * uevent file, which weston and mutter would ignore. */
static bool is_our_hotplug(const struct drm_uevent *u, const char *msg, size_t len)
{
	bool drm = false, hotplug = strncmp(msg, "change@", 7) == 0;
	int major = -1, minor = -1;
	for (size_t i = 0; i < len; i += strlen(msg + i) + 1) {
		const char *kv = msg + i;
		if (strcmp(kv, "SUBSYSTEM=drm") == 0)
			drm = true;
		else if (strcmp(kv, "HOTPLUG=1") == 0)
			hotplug = true;
		else if (strncmp(kv, "MAJOR=", 6) == 0)
			major = atoi(kv + 6);
		else if (strncmp(kv, "MINOR=", 6) == 0)
			minor = atoi(kv + 6);
	}
	return drm && hotplug && major == (int)u->major && minor == (int)u->minor;
}

static int uevent_readable(int fd, uint32_t mask, void *data)
{
	struct drm_uevent *u = data;
	char buf[8192];
	bool changed = false;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				comp_log("drm: reading hotplug events: %s", strerror(errno));
			break;
		}
		buf[n] = '\0';
		/* udevd's rebroadcasts start with "libudev": not ours to read. */
		if (n > 0 && strncmp(buf, "libudev", 7) != 0 && is_our_hotplug(u, buf, (size_t)n))
			changed = true;
	}
	if (changed)
		u->changed(u->data);
	return 0;
}

struct drm_uevent *drm_uevent_create(struct wl_event_loop *loop, dev_t device,
                                     void (*changed)(void *data), void *data)
{
	struct drm_uevent *u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->major = major(device);
	u->minor = minor(device);
	u->changed = changed;
	u->data = data;
	u->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	               NETLINK_KOBJECT_UEVENT);
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1 /* the kernel's */ };
	if (u->fd < 0 || bind(u->fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		comp_log("drm: cannot hear hotplug events (uevent netlink socket: %s): a "
		         "connector unplugged is noticed only when a frame fails", strerror(errno));
		if (u->fd >= 0)
			close(u->fd);
		free(u);
		return NULL;
	}
	u->source = wl_event_loop_add_fd(loop, u->fd, WL_EVENT_READABLE, uevent_readable, u);
	if (!u->source) {
		close(u->fd);
		free(u);
		return NULL;
	}
	return u;
}

void drm_uevent_destroy(struct drm_uevent *u)
{
	if (!u)
		return;
	wl_event_source_remove(u->source);
	close(u->fd);
	free(u);
}
