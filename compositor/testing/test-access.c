/* Who may use duet_test (--test-protocol only; docs/security.md).
 *
 * duet_test injects input, closes and resizes any window and reads the
 * screen, so ordinary clients must not have it. With --test-protocol the
 * compositor listens on a second socket, $XDG_RUNTIME_DIR/NAME-test beside
 * the clients' NAME, and only clients that connected through it, from the
 * compositor's own uid (SO_PEERCRED), see the global; a global filter hides
 * it from everyone else, and libwayland refuses a bind to a global the
 * filter hides. Whoever starts the compositor decides who gets the second
 * socket's name (the harness gives it to duet-testctl and to the apps it
 * wants to drive, the compositor to its `-- CMD` child as
 * DUET_TEST_DISPLAY); an app given only WAYLAND_DISPLAY, or a sandbox that
 * mounts only that socket, never sees the protocol.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "comp.h"
#include "duet-test-server-protocol.h"

struct test_access {
	struct comp_server *server;
	int fd;
	struct wl_event_source *source;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char name[256];
	struct wl_listener display_destroy;
};

/* A trusted client carries this destroy listener; its presence is the mark. */
static void handle_trusted_destroy(struct wl_listener *listener, void *data)
{
	wl_list_remove(&listener->link);
	free(listener);
}

bool comp_test_access_allowed(struct wl_client *client)
{
	return wl_client_get_destroy_listener(client, handle_trusted_destroy) != NULL;
}

static bool global_filter(const struct wl_client *client, const struct wl_global *global,
                          void *data)
{
	if (wl_global_get_interface(global) != &duet_test_interface)
		return true;
	/* libwayland passes a const client to filters but takes a mutable one
	 * in the lookup, which does not modify it. */
	return comp_test_access_allowed((struct wl_client *)client);
}

static int handle_connection(int fd, uint32_t mask, void *data)
{
	struct test_access *access = data;
	int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	if (cfd < 0) {
		if (errno != EAGAIN && errno != EINTR)
			comp_log("test socket: accept: %s", strerror(errno));
		return 0;
	}
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != geteuid()) {
		comp_log("test socket: refused a connection from uid %d (not ours)",
		         len == sizeof(cred) ? (int)cred.uid : -1);
		close(cfd);
		return 0;
	}
	struct wl_listener *mark = calloc(1, sizeof(*mark));
	if (!mark) {
		close(cfd);
		return 0;
	}
	struct wl_client *client = wl_client_create(access->server->display, cfd);
	if (!client) {
		comp_log("test socket: cannot create a client (pid %d)", (int)cred.pid);
		free(mark); /* wl_client_create closed cfd */
		return 0;
	}
	mark->notify = handle_trusted_destroy;
	wl_client_add_destroy_listener(client, mark);
	return 0;
}

static void handle_display_destroy(struct wl_listener *listener, void *data)
{
	struct test_access *access = wl_container_of(listener, access, display_destroy);
	wl_list_remove(&access->display_destroy.link);
	if (access->source)
		wl_event_source_remove(access->source);
	close(access->fd);
	unlink(access->path);
	free(access);
}

const char *comp_test_access_init(struct comp_server *server)
{
	const char *dir = getenv("XDG_RUNTIME_DIR");
	struct test_access *access = calloc(1, sizeof(*access));
	if (!access || !dir)
		goto fail;
	access->server = server;
	access->fd = -1;
	if (snprintf(access->name, sizeof(access->name), "%s-test", server->socket_name) >=
	            (int)sizeof(access->name) ||
	    snprintf(access->path, sizeof(access->path), "%s/%s", dir, access->name) >=
	            (int)sizeof(access->path)) {
		comp_log("test socket: path too long");
		goto fail;
	}
	access->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (access->fd < 0)
		goto fail_errno;
	/* The lock libwayland holds on NAME makes NAME-test ours as well: a
	 * socket left there is a crashed run's. */
	unlink(access->path);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	memcpy(addr.sun_path, access->path, strlen(access->path) + 1);
	mode_t old = umask(0077); /* owner only, whatever the directory allows */
	int ret = bind(access->fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old);
	if (ret != 0 || listen(access->fd, 16) != 0)
		goto fail_errno;
	access->source = wl_event_loop_add_fd(server->loop, access->fd, WL_EVENT_READABLE,
	                                      handle_connection, access);
	if (!access->source)
		goto fail_errno;
	wl_display_set_global_filter(server->display, global_filter, NULL);
	access->display_destroy.notify = handle_display_destroy;
	wl_display_add_destroy_listener(server->display, &access->display_destroy);
	return access->name;

fail_errno:
	comp_log("test socket %s: %s", access->path, strerror(errno));
	unlink(access->path);
fail:
	if (access && access->fd >= 0)
		close(access->fd);
	free(access);
	return NULL;
}
