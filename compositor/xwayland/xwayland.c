/* Xwayland as a child of the server: started when an X client first
 * connects to the display (or at once with options.xwayland_now), given
 * the display's listening sockets and one end of a socketpair that is its
 * Wayland connection, watched through a pidfd, reaped, and started again
 * by the next X connection after it exits. X clients of an Xwayland that
 * dies get their own connection errors; the server and its Wayland
 * clients go on. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "comp.h"
#include "xwm-types.h"
#include "xwayland.h"

#define XWAYLAND_DEFAULT "Xwayland"
/* An Xwayland that fails sooner than this after its start is not started
 * again by the connection still waiting in the listen queue until this
 * long has passed: a binary that cannot start must not spin. */
#define QUICK_EXIT_MS 1000
/* How long Xwayland has to exit on SIGTERM when the server stops. */
#define STOP_GRACE_MS 2000

extern char **environ;

struct comp_xwayland {
	struct comp_server *server;
	char *path;                          /* the Xwayland binary */
	struct comp_xdisplay display;
	/* While Xwayland is not running: the listening sockets, watched for
	 * the X connection that starts it (Xwayland accepts it). */
	struct wl_event_source *listen_source[2];
	struct wl_event_source *rearm_timer; /* after a quick exit */

	pid_t pid;                           /* 0: not running */
	int pidfd;                           /* readable once it exited */
	struct wl_event_source *exit_source;
	uint64_t started_ns;
	struct wl_client *client;            /* its Wayland connection, while it lasts */
	struct wl_listener client_destroy;
	/* The X window manager's end of -wm, until Xwayland says (-displayfd)
	 * it is ready: then the window manager connects over it (Xwayland
	 * 22.1 given -wm serves X clients only once that connection owns
	 * WM_S0; connecting earlier would wait on Xwayland's start, which
	 * waits on this server's answers). */
	int wm_fd;
	int ready_fd;                        /* -displayfd's read end */
	struct wl_event_source *ready_source;
	struct comp_xwm *wm;                 /* while its connection lasts */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool executable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

char *comp_xwayland_find(const char *wanted)
{
	const char *name = wanted && *wanted ? wanted : XWAYLAND_DEFAULT;
	if (strchr(name, '/')) {
		if (executable(name))
			return strdup(name);
		comp_log("--xwayland: cannot run Xwayland: %s is not an executable file (install "
		         "the Debian package xwayland, or give --xwayland-path the binary)", name);
		return NULL;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *dir = path; *dir;) {
		size_t len = strcspn(dir, ":");
		char *file;
		/* An empty PATH entry is the current directory, as for execvp. */
		if (asprintf(&file, "%.*s%s%s", (int)len, len ? dir : ".", len ? "/" : "./",
		             name) < 0)
			return NULL;
		if (executable(file))
			return file;
		free(file);
		dir += len;
		if (*dir == ':')
			dir++;
	}
	comp_log("--xwayland: cannot run Xwayland: no %s in PATH (install the Debian package "
	         "xwayland, or give --xwayland-path the binary)", name);
	return NULL;
}

/* --------------------------------------------------------- listen fds */

static int handle_x_connection(int fd, uint32_t mask, void *data);

static void watch_listen_fds(struct comp_xwayland *xw)
{
	for (int i = 0; i < 2; i++) {
		if (xw->listen_source[i])
			continue;
		xw->listen_source[i] = wl_event_loop_add_fd(xw->server->loop, xw->display.fd[i],
		                                            WL_EVENT_READABLE,
		                                            handle_x_connection, xw);
		if (!xw->listen_source[i])
			comp_log("xwayland: cannot watch the X socket: X clients wait unanswered");
	}
}

static void unwatch_listen_fds(struct comp_xwayland *xw)
{
	for (int i = 0; i < 2; i++) {
		if (xw->listen_source[i])
			wl_event_source_remove(xw->listen_source[i]);
		xw->listen_source[i] = NULL;
	}
}

static int handle_rearm(void *data)
{
	struct comp_xwayland *xw = data;
	wl_event_source_remove(xw->rearm_timer);
	xw->rearm_timer = NULL;
	watch_listen_fds(xw);
	return 0;
}

/* Waits for the next X connection, after a pause when Xwayland did not
 * last (QUICK_EXIT_MS). */
static void rearm(struct comp_xwayland *xw, bool quick)
{
	if (xw->rearm_timer)
		return; /* already pausing */
	if (!quick) {
		watch_listen_fds(xw);
		return;
	}
	xw->rearm_timer = wl_event_loop_add_timer(xw->server->loop, handle_rearm, xw);
	if (!xw->rearm_timer || wl_event_source_timer_update(xw->rearm_timer, QUICK_EXIT_MS) != 0)
		watch_listen_fds(xw);
}

/* ------------------------------------------------------------ process */

static void handle_client_destroy(struct wl_listener *listener, void *data)
{
	struct comp_xwayland *xw = wl_container_of(listener, xw, client_destroy);
	wl_list_remove(&xw->client_destroy.link);
	xw->client = NULL;
}

/* Forgets the process, which was reaped: its connection, fds, watch. */
static void forget_process(struct comp_xwayland *xw)
{
	if (xw->exit_source)
		wl_event_source_remove(xw->exit_source);
	xw->exit_source = NULL;
	if (xw->pidfd >= 0)
		close(xw->pidfd);
	xw->pidfd = -1;
	xw->pid = 0;
	/* Before its Wayland client: the X windows' surfaces are let go. */
	comp_xwm_destroy(xw->wm);
	xw->wm = NULL;
	if (xw->ready_source)
		wl_event_source_remove(xw->ready_source);
	xw->ready_source = NULL;
	if (xw->ready_fd >= 0)
		close(xw->ready_fd);
	xw->ready_fd = -1;
	if (xw->client) {
		/* Its socket's hang-up may not have been read yet. */
		struct wl_client *client = xw->client;
		handle_client_destroy(&xw->client_destroy, NULL);
		wl_client_destroy(client);
	}
	if (xw->wm_fd >= 0)
		close(xw->wm_fd);
	xw->wm_fd = -1;
}

static void log_exit(pid_t pid, int status, bool reaped)
{
	if (!reaped)
		comp_log("xwayland: Xwayland (pid %d) exited (reaped by someone else)", (int)pid);
	else if (WIFSIGNALED(status))
		comp_log("xwayland: Xwayland (pid %d) was killed by signal %d (%s)", (int)pid,
		         WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		comp_log("xwayland: Xwayland (pid %d) exited with status %d", (int)pid,
		         WEXITSTATUS(status));
}

static int handle_exit(int fd, uint32_t mask, void *data)
{
	struct comp_xwayland *xw = data;
	int status = 0;
	pid_t r = waitpid(xw->pid, &status, WNOHANG);
	if (r == 0)
		return 0; /* not yet (a pidfd is readable only once it exited) */
	log_exit(xw->pid, status, r == xw->pid);
	bool failed = r != xw->pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	bool quick = failed && now_ns() - xw->started_ns < QUICK_EXIT_MS * 1000000ull;
	forget_process(xw);
	comp_log("xwayland: the next X client on :%d starts it again%s", xw->display.number,
	         quick ? " (in a second: it failed right after its start)" : "");
	rearm(xw, quick);
	return 0;
}

/* The child's side of fork: only async-signal-safe calls from here on
 * (the compositor has threads, Mesa's among them). */
static void exec_child(const char *path, char **argv, char **envp, const int *keep, int n_keep)
{
	/* The server blocks signals for its signalfds and ignores SIGPIPE;
	 * both would carry over to Xwayland through exec. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigaction(SIGPIPE, &dfl, NULL);
	for (int i = 0; i < n_keep; i++)
		fcntl(keep[i], F_SETFD, 0); /* these are Xwayland's: not closed on exec */
	/* The server's stdout carries its announcements (DISPLAY=,
	 * WAYLAND_DISPLAY=) that launchers read: Xwayland's output is log. */
	dup2(STDERR_FILENO, STDOUT_FILENO);
	execve(path, argv, envp);
	static const char msg[] = "duet-compositor: cannot run Xwayland\n";
	ssize_t ignored = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)ignored;
	_exit(127);
}

/* The environment with WAYLAND_SOCKET set to fd (and none of ours). */
static char **child_env(int fd, char *socket_var, size_t size)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **envp = calloc(n + 2, sizeof(*envp));
	if (!envp)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(environ[i], "WAYLAND_SOCKET=", 15) != 0)
			envp[k++] = environ[i];
	}
	snprintf(socket_var, size, "WAYLAND_SOCKET=%d", fd);
	envp[k] = socket_var;
	return envp;
}

/* Xwayland wrote its display number to -displayfd: it is ready for the
 * window manager. A hang-up without it: it died (handle_exit follows).
 * The pipe stays open until Xwayland is reaped: it writes the number and
 * the newline in two writes, and a pipe closed between them is fatal. */
static int handle_ready(int fd, uint32_t mask, void *data)
{
	struct comp_xwayland *xw = data;
	char buf[32];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	wl_event_source_remove(xw->ready_source);
	xw->ready_source = NULL;
	int wm_fd = xw->wm_fd;
	xw->wm_fd = -1;
	if (n <= 0 || !xw->client) {
		close(wm_fd);
		return 0;
	}
	xw->wm = comp_xwm_create(xw->server, wm_fd, xw->client);
	if (!xw->wm) {
		/* Its X clients would wait for WM_S0 for ever: stop it, and the
		 * next X client starts another (handle_exit). */
		comp_log("xwayland: no window manager; stopping Xwayland (pid %d)", (int)xw->pid);
		kill(xw->pid, SIGKILL);
	}
	return 0;
}

static void close_pair(int fd[2])
{
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

static int start(struct comp_xwayland *xw)
{
	int wl[2] = { -1, -1 }, wm[2] = { -1, -1 }, ready[2] = { -1, -1 };
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, wl) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, wm) != 0 ||
	    pipe2(ready, O_CLOEXEC) != 0) {
		comp_log("xwayland: socketpair/pipe: %s", strerror(errno));
		close_pair(wl);
		close_pair(wm);
		return -1;
	}
	/* Everything the child needs is made before fork: it may not allocate. */
	char display[16], fd0[16], fd1[16], wm_arg[16], ready_arg[16], socket_var[32];
	snprintf(display, sizeof(display), ":%d", xw->display.number);
	snprintf(fd0, sizeof(fd0), "%d", xw->display.fd[0]);
	snprintf(fd1, sizeof(fd1), "%d", xw->display.fd[1]);
	snprintf(wm_arg, sizeof(wm_arg), "%d", wm[1]);
	snprintf(ready_arg, sizeof(ready_arg), "%d", ready[1]);
	char *argv[16];
	int argc = 0;
	argv[argc++] = xw->path;
	argv[argc++] = display;
	argv[argc++] = "-rootless";
	/* Once started it stays until it dies or the server stops, as
	 * weston's does: its window manager is a client, so -terminate would
	 * never fire, and polling for X clients would put a round trip a
	 * second into every measurement. No reset either: an X server resets
	 * when its last client leaves, and Xwayland's reset connects to
	 * Wayland again, which its one WAYLAND_SOCKET cannot (it dies with
	 * "Couldn't add screen"). */
	argv[argc++] = "-noreset";
	argv[argc++] = "-listenfd";
	argv[argc++] = fd0;
	argv[argc++] = "-listenfd";
	argv[argc++] = fd1;
	argv[argc++] = "-wm";
	argv[argc++] = wm_arg;
	argv[argc++] = "-displayfd";
	argv[argc++] = ready_arg;
	argv[argc] = NULL;
	char **envp = child_env(wl[1], socket_var, sizeof(socket_var));
	int keep[] = { wl[1], xw->display.fd[0], xw->display.fd[1], wm[1], ready[1] };
	pid_t pid = envp ? fork() : -1;
	if (pid == 0)
		exec_child(xw->path, argv, envp, keep, 5);
	int err = errno;
	free(envp);
	close(wl[1]);
	close(wm[1]);
	close(ready[1]);
	if (pid < 0) {
		comp_log("xwayland: cannot start Xwayland: %s", strerror(err));
		close(wl[0]);
		close(wm[0]);
		close(ready[0]);
		return -1;
	}
	xw->wm_fd = wm[0];
	xw->ready_fd = ready[0];
	xw->ready_source = wl_event_loop_add_fd(xw->server->loop, ready[0], WL_EVENT_READABLE,
	                                        handle_ready, xw);
	xw->pid = pid;
	xw->started_ns = now_ns();
	/* A pidfd, not SIGCHLD: the process that hosts the server (main.c, or
	 * wlcs) has its own children and its own use of that signal. */
	xw->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (xw->pidfd >= 0)
		xw->exit_source = wl_event_loop_add_fd(xw->server->loop, xw->pidfd,
		                                       WL_EVENT_READABLE, handle_exit, xw);
	if (!xw->exit_source || !xw->ready_source) {
		comp_log("xwayland: cannot watch Xwayland (pid %d): %s; stopping it", (int)pid,
		         strerror(errno));
		close(wl[0]);
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		forget_process(xw);
		return -1;
	}
	xw->client = wl_client_create(xw->server->display, wl[0]);
	if (!xw->client) {
		/* Whether libwayland closed wl[0] depends on where it failed:
		 * it is left alone, and Xwayland stopped (handle_exit). */
		comp_log("xwayland: cannot make Xwayland's Wayland client; stopping it");
		kill(pid, SIGKILL);
	} else {
		xw->client_destroy.notify = handle_client_destroy;
		wl_client_add_destroy_listener(xw->client, &xw->client_destroy);
	}
	comp_log("xwayland: started %s (pid %d) on :%d", xw->path, (int)pid, xw->display.number);
	return 0;
}

static int handle_x_connection(int fd, uint32_t mask, void *data)
{
	struct comp_xwayland *xw = data;
	/* Xwayland accepts this connection and every later one; ours are
	 * watched again only once it has gone. */
	unwatch_listen_fds(xw);
	if (start(xw) != 0)
		rearm(xw, true);
	return 0;
}

/* ---------------------------------------------------------- lifecycle */

struct comp_xwayland *comp_xwayland_create(struct comp_server *server)
{
	char *path = comp_xwayland_find(server->options.xwayland_path);
	if (!path)
		return NULL;
	struct comp_xwayland *xw = calloc(1, sizeof(*xw));
	if (!xw) {
		free(path);
		return NULL;
	}
	xw->server = server;
	xw->path = path;
	xw->pidfd = -1;
	xw->wm_fd = -1;
	xw->ready_fd = -1;
	if (comp_xdisplay_open(&xw->display, server->options.xwayland_display) != 0) {
		free(path);
		free(xw);
		return NULL;
	}
	comp_log("xwayland: DISPLAY=:%d (%s)", xw->display.number,
	         server->options.xwayland_now ? "Xwayland starts now"
	                                      : "Xwayland starts on the first X connection");
	return xw;
}

void comp_xwayland_run(struct comp_xwayland *xw)
{
	if (!xw->server->options.xwayland_now || start(xw) != 0)
		watch_listen_fds(xw);
}

static void stop_process(struct comp_xwayland *xw)
{
	if (!xw->pid)
		return;
	kill(xw->pid, SIGTERM);
	struct pollfd p = { .fd = xw->pidfd, .events = POLLIN };
	int r;
	while ((r = poll(&p, 1, STOP_GRACE_MS)) < 0 && errno == EINTR)
		;
	if (r == 0) {
		comp_log("xwayland: Xwayland (pid %d) still runs %d ms after SIGTERM: SIGKILL",
		         (int)xw->pid, STOP_GRACE_MS);
		kill(xw->pid, SIGKILL);
	}
	int status = 0;
	pid_t w;
	while ((w = waitpid(xw->pid, &status, 0)) < 0 && errno == EINTR)
		;
	log_exit(xw->pid, status, w == xw->pid);
	forget_process(xw);
}

void comp_xwayland_destroy(struct comp_xwayland *xw)
{
	if (!xw)
		return;
	unwatch_listen_fds(xw);
	if (xw->rearm_timer)
		wl_event_source_remove(xw->rearm_timer);
	stop_process(xw);
	comp_xdisplay_close(&xw->display);
	free(xw->path);
	free(xw);
}

int comp_xwayland_display(const struct comp_xwayland *xw)
{
	return xw->display.number;
}

pid_t comp_xwayland_pid(const struct comp_xwayland *xw)
{
	return xw->pid;
}

struct wl_client *comp_xwayland_client(const struct comp_xwayland *xw)
{
	return xw->client;
}

bool comp_xwayland_wm_running(const struct comp_xwayland *xw)
{
	return xw->wm && !xw->wm->quiet;
}

static void unmanaged_for_each_surface(struct comp_server *server, comp_surface_iter_t fn,
                                       void *data)
{
	if (server->xwayland && server->xwayland->wm)
		comp_xwm_for_each_unmanaged(server->xwayland->wm, fn, data);
}

const struct comp_stack_layer comp_xwayland_unmanaged_layer = {
	.for_each_surface = unmanaged_for_each_surface,
};
