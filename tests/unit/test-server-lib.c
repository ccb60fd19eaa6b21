/* duet-compositor as a library: servers made, used by a real client and
 * destroyed one after another in one process, each leaving no fd behind
 * (and, in the ASan build, no memory), each offering its clients exactly
 * the globals it notes in server->offered (what the wlcs module reports),
 * each with a protocol log of its own that counts its own client; then,
 * where Xwayland is installed, servers with --xwayland-now, each of which
 * gets its X window manager running and leaves no Xwayland, fd, lock file
 * or socket file behind (nor, in the ASan build, the window manager's
 * memory).
 *
 * The client runs on this thread too, through wl_display_connect_to_fd on
 * one end of a socketpair whose other end is the server's wl_client: each
 * step flushes one side and dispatches the other until the answer came. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wayland-client.h>

#include "comp.h"
#include "unit.h"
#include "xwayland.h"

#define SERVERS 3

struct registry {
	char names[COMP_MAX_GLOBALS * 2][64];
	uint32_t versions[COMP_MAX_GLOBALS * 2];
	int n;
	bool done;
};

static void on_global(void *data, struct wl_registry *reg, uint32_t name, const char *interface,
                      uint32_t version)
{
	struct registry *r = data;
	for (int i = 0; i < r->n; i++) {
		if (strcmp(r->names[i], interface) == 0) {
			if (version > r->versions[i])
				r->versions[i] = version;
			return;
		}
	}
	if (r->n < (int)(sizeof(r->names) / sizeof(r->names[0]))) {
		snprintf(r->names[r->n], sizeof(r->names[0]), "%s", interface);
		r->versions[r->n++] = version;
	}
}

static void on_global_remove(void *data, struct wl_registry *reg, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = { on_global, on_global_remove };

static void on_done(void *data, struct wl_callback *cb, uint32_t serial)
{
	((struct registry *)data)->done = true;
}

static const struct wl_callback_listener done_listener = { on_done };

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Turns the crank of both ends until the client saw its sync answered. */
static bool pump(struct comp_server *server, struct wl_display *display, bool *done)
{
	for (int i = 0; i < 1000 && !*done; i++) {
		if (wl_display_flush(display) < 0)
			return false;
		wl_event_loop_dispatch(server->loop, 10);
		wl_display_flush_clients(server->display);
		while (wl_display_prepare_read(display) != 0)
			wl_display_dispatch_pending(display);
		if (wl_display_read_events(display) < 0 && errno != EAGAIN)
			return false;
		wl_display_dispatch_pending(display);
	}
	return *done;
}

/* The protocol log's count of one message, -1 where it is not there. */
static long logged(const char *path, const char *message)
{
	char text[8192] = "", key[128];
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	snprintf(key, sizeof(key), "\"%s\":", message);
	const char *at = strstr(text, key);
	return at ? strtol(at + strlen(key), NULL, 10) : -1;
}

static void one_server(const struct comp_options *shared, int round)
{
	struct comp_options options = *shared;
	char log_path[] = "/tmp/duet-test-server-lib-XXXXXX";
	int log_fd = mkstemp(log_path);
	CHECK(log_fd >= 0, "mkstemp");
	if (log_fd >= 0)
		close(log_fd);
	options.protocol_log = log_path;
	struct comp_server server;
	CHECK(comp_server_init(&server, &options) == 0, "server %d started", round);
	if (!server.display)
		return;
	int fds[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0, "socketpair");
	CHECK(wl_client_create(server.display, fds[0]) != NULL, "wl_client_create");
	struct wl_display *display = wl_display_connect_to_fd(fds[1]);
	CHECK(display != NULL, "client connected");
	if (display) {
		struct registry reg = { .n = 0 };
		struct wl_registry *registry = wl_display_get_registry(display);
		wl_registry_add_listener(registry, &registry_listener, &reg);
		struct wl_callback *cb = wl_display_sync(display);
		wl_callback_add_listener(cb, &done_listener, &reg);
		CHECK(pump(&server, display, &reg.done), "server %d answered the client", round);
		CHECK(reg.n == server.n_offered, "the client saw %d interfaces, the server noted %d",
		      reg.n, server.n_offered);
		for (int i = 0; i < server.n_offered; i++) {
			int k;
			for (k = 0; k < reg.n && strcmp(reg.names[k], server.offered[i].name); k++)
				;
			CHECK(k < reg.n && reg.versions[k] == (uint32_t)server.offered[i].version,
			      "%s v%d noted, the client saw %s v%u", server.offered[i].name,
			      server.offered[i].version, k < reg.n ? reg.names[k] : "nothing",
			      k < reg.n ? reg.versions[k] : 0);
		}
		wl_callback_destroy(cb);
		wl_registry_destroy(registry);
		/* The server still holds the client when it is destroyed. */
		comp_server_finish(&server);
		wl_display_disconnect(display);
	} else {
		comp_server_finish(&server);
	}
	CHECK(logged(log_path, "wl_display.get_registry") == 1,
	      "server %d's protocol log counted %ld get_registry, want its client's 1", round,
	      logged(log_path, "wl_display.get_registry"));
	unlink(log_path);
}

/* A server that starts Xwayland at once and serves it a while (it binds
 * globals, makes surfaces), then is destroyed with Xwayland running. */
static void one_xwayland_server(const struct comp_options *shared, int round)
{
	struct comp_options options = *shared;
	options.xwayland = true;
	options.xwayland_now = true;
	/* Any base: the first free display from it is taken. */
	options.xwayland_display = 600 + (int)(getpid() % 200);
	struct comp_server server;
	CHECK(comp_server_init(&server, &options) == 0, "xwayland server %d started", round);
	if (!server.display)
		return;
	pid_t pid = comp_xwayland_pid(server.xwayland);
	int n = comp_xwayland_display(server.xwayland);
	CHECK(pid > 0 && kill(pid, 0) == 0, "Xwayland runs (pid %d) on :%d", (int)pid, n);
	/* Its X window manager connects once it is ready (within 10 s). */
	int ticks = 0;
	for (; ticks < 1000 && !comp_xwayland_wm_running(server.xwayland); ticks++) {
		wl_event_loop_dispatch(server.loop, 10);
		wl_display_flush_clients(server.display);
	}
	CHECK(comp_xwayland_wm_running(server.xwayland),
	      "the X window manager of Xwayland (pid %d) runs (after %d ticks)", (int)pid, ticks);
	for (int i = 0; i < 50; i++) {
		wl_event_loop_dispatch(server.loop, 10);
		wl_display_flush_clients(server.display);
	}
	CHECK(comp_xwayland_client(server.xwayland) != NULL,
	      "Xwayland (pid %d) is still this server's Wayland client", (int)pid);
	comp_server_finish(&server);
	char lock[32], sock[40];
	snprintf(lock, sizeof(lock), "/tmp/.X%d-lock", n);
	snprintf(sock, sizeof(sock), "/tmp/.X11-unix/X%d", n);
	CHECK(access(lock, F_OK) != 0 && access(sock, F_OK) != 0,
	      "server %d removed %s and %s", round, lock, sock);
	CHECK(kill(pid, 0) != 0 && errno == ESRCH, "Xwayland (pid %d) was reaped", (int)pid);
}

int main(void)
{
	struct comp_options options = {
		.width = 640,
		.height = 480,
		.refresh_mhz = 60000,
		.backend = "headless",
		.no_listen = true,
		.pixman = getenv("DUET_TEST_ENGINE") && strcmp(getenv("DUET_TEST_ENGINE"), "pixman") == 0,
	};
	if (!options.pixman) /* skip or fail as every GL unit test does */
		render_egl_destroy(unit_egl_or_skip());
	/* The first server loads the drivers (Mesa keeps fds open for the
	 * process): fds are counted from the second on. */
	unit_say("%d servers one after another, a client on each", SERVERS);
	one_server(&options, 0);
	int before = open_fds();
	for (int round = 1; round < SERVERS; round++)
		one_server(&options, round);
	int after = open_fds();
	CHECK(before > 0 && after == before, "open fds %d after the first server, %d at the end",
	      before, after);

	char *xwayland = comp_xwayland_find(NULL);
	if (xwayland) {
		unit_say("%d servers with Xwayland (%s) one after another", SERVERS, xwayland);
		for (int round = 0; round < SERVERS; round++)
			one_xwayland_server(&options, round);
		int with_xwayland = open_fds();
		CHECK(with_xwayland == before, "open fds %d before the Xwayland servers, %d after",
		      before, with_xwayland);
	} else {
		unit_say("skipped: the --xwayland servers (no Xwayland; Debian package xwayland)");
	}
	free(xwayland);
	return unit_finish("test-server-lib");
}
