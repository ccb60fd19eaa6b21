/* Clients that leave, in the log: a client cut off because it does not
 * read its socket, and any client that had surfaces, by pid and name, so
 * that the log says who went and why (docs/security.md). libwayland's own
 * lines (a client cut off "error in client communication (pid N)") go
 * through comp_log too.
 *
 * libwayland-server 1.21 queues a client's events in a 4 KiB buffer per
 * connection and writes them without blocking; once the socket is full
 * and the buffer too, the next event fails and it destroys the client
 * (destroy_client_with_error). Its destroy listeners run with its socket
 * still open: what the client left unread is then still in the socket
 * (SIOCOUTQ). A client that hung up took its unread bytes with it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>

#include <wayland-server-protocol.h>

#include "comp.h"

struct client_watch {
	struct wl_listener destroy;
	pid_t pid;
	char name[17]; /* /proc/PID/comm at connection */
};

struct client_log {
	struct wl_listener client_created;
	struct wl_listener display_destroy;
};

static enum wl_iterator_result count_surface(struct wl_resource *resource, void *data)
{
	if (strcmp(wl_resource_get_class(resource), wl_surface_interface.name) == 0)
		(*(int *)data)++;
	return WL_ITERATOR_CONTINUE;
}

static void on_client_destroy(struct wl_listener *listener, void *data)
{
	struct client_watch *cw = wl_container_of(listener, cw, destroy);
	struct wl_client *client = data;
	int fd = wl_client_get_fd(client);
	int unread = 0, sndbuf = 0;
	socklen_t len = sizeof(sndbuf);
	if (ioctl(fd, SIOCOUTQ, &unread) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len) < 0)
		unread = sndbuf = 0;
	int surfaces = 0;
	wl_client_for_each_resource(client, count_surface, &surfaces);
	if (sndbuf > 0 && unread >= sndbuf / 2)
		comp_log("client pid %d (%s) cut off: it does not read its socket (%d KiB of events "
		         "unread, %d surface%s)", (int)cw->pid, cw->name, unread / 1024, surfaces,
		         surfaces == 1 ? "" : "s");
	else if (surfaces > 0)
		comp_log("client pid %d (%s) left with %d surface%s", (int)cw->pid, cw->name,
		         surfaces, surfaces == 1 ? "" : "s");
	wl_list_remove(&cw->destroy.link);
	free(cw);
}

static void on_client_created(struct wl_listener *listener, void *data)
{
	struct wl_client *client = data;
	struct client_watch *cw = calloc(1, sizeof(*cw));
	if (!cw)
		return; /* its leaving goes unlogged */
	wl_client_get_credentials(client, &cw->pid, NULL, NULL);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)cw->pid);
	FILE *f = fopen(path, "re");
	if (!f || !fgets(cw->name, sizeof(cw->name), f))
		snprintf(cw->name, sizeof(cw->name), "?");
	if (f)
		fclose(f);
	cw->name[strcspn(cw->name, "\n")] = '\0';
	cw->destroy.notify = on_client_destroy;
	wl_client_add_destroy_listener(client, &cw->destroy);
}

static void on_display_destroy(struct wl_listener *listener, void *data)
{
	struct client_log *cl = wl_container_of(listener, cl, display_destroy);
	wl_list_remove(&cl->client_created.link);
	wl_list_remove(&cl->display_destroy.link);
	free(cl);
}

static void log_libwayland(const char *fmt, va_list ap)
{
	char line[512];
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	comp_log("libwayland: %s", line);
}

void comp_client_log_init(struct comp_server *server)
{
	wl_log_set_handler_server(log_libwayland);
	struct client_log *cl = calloc(1, sizeof(*cl));
	if (!cl) {
		comp_log("client log: out of memory, clients leave unlogged");
		return;
	}
	cl->client_created.notify = on_client_created;
	wl_display_add_client_created_listener(server->display, &cl->client_created);
	cl->display_destroy.notify = on_display_destroy;
	wl_display_add_destroy_listener(server->display, &cl->display_destroy);
}
