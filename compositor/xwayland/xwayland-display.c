/* An X display number for Xwayland, held the way X servers hold theirs, so
 * that X clients find it as ":N" and other X servers (Xvfb, Xorg, the test
 * harness's display picker) see it taken: the lock file /tmp/.XN-lock with
 * the holder's pid, the abstract socket "\0/tmp/.X11-unix/XN" (what libxcb
 * tries first on Linux) and the socket file /tmp/.X11-unix/XN. Xwayland is
 * given the listening sockets (-listenfd), so with them it makes no lock
 * or socket of its own, and the display stays ours while it restarts. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "comp.h"
#include "xwayland.h"

#define X_SOCKET_DIR "/tmp/.X11-unix"
/* Display numbers tried from the first one on. */
#define DISPLAYS_TRIED 32

/* A lock left by a process that is gone (a crashed X server) may be taken
 * over. An unreadable or half-written one (a server writing it right now)
 * is not. Two takers of one stale lock can race here; X servers share
 * that race. */
static bool remove_stale_lock(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	char buf[16];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	char *end;
	long pid = strtol(buf, &end, 10);
	if (end == buf || pid <= 0 || (*end && *end != '\n'))
		return false;
	if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return false;
	comp_log("xwayland: removing %s, left by pid %ld, which is gone", path, pid);
	return unlink(path) == 0 || errno == ENOENT;
}

/* The lock file appears whole or not at all: written under a private name,
 * then linked to its own name, which fails if another server has it. The
 * format is the X servers': the pid in 10 columns and a newline. */
static int take_lock(const char *path)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		char tmp[] = "/tmp/.duet-xlock-XXXXXX";
		int fd = mkostemp(tmp, O_CLOEXEC);
		if (fd < 0)
			return -1;
		char text[16];
		int len = snprintf(text, sizeof(text), "%10d\n", (int)getpid());
		bool written = write(fd, text, (size_t)len) == len && fchmod(fd, 0444) == 0;
		close(fd);
		int r = written ? link(tmp, path) : -1;
		int err = written ? errno : EIO;
		unlink(tmp);
		if (r == 0)
			return 0;
		if (err != EEXIST || !remove_stale_lock(path)) {
			errno = err;
			return -1;
		}
	}
	errno = EEXIST;
	return -1;
}

static int listen_on(const struct sockaddr_un *addr, socklen_t len)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (const struct sockaddr *)addr, len) != 0 || listen(fd, 16) != 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* The socket directory is shared by every user's X servers: world-writable
 * and sticky, as X servers make it. */
static void make_socket_dir(void)
{
	if (mkdir(X_SOCKET_DIR, 01777) == 0)
		chmod(X_SOCKET_DIR, 01777); /* mkdir's mode went through the umask */
}

/* Both sockets of display n, with its lock already held; -1 and errno. */
static int open_sockets(struct comp_xdisplay *d, int n)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int len = snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, X_SOCKET_DIR "/X%d", n);
	d->fd[0] = listen_on(&addr, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len));
	if (d->fd[0] < 0)
		return -1;
	make_socket_dir();
	/* We hold the lock: a socket file there is a dead server's. */
	unlink(d->socket_path);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", d->socket_path);
	d->fd[1] = listen_on(&addr, sizeof(addr));
	if (d->fd[1] < 0) {
		int err = errno;
		close(d->fd[0]);
		d->fd[0] = -1;
		errno = err;
		return -1;
	}
	return 0;
}

int comp_xdisplay_open(struct comp_xdisplay *d, int first)
{
	*d = (struct comp_xdisplay){ .number = -1, .fd = { -1, -1 } };
	int err = 0;
	for (int n = first; n < first + DISPLAYS_TRIED; n++) {
		snprintf(d->lock_path, sizeof(d->lock_path), "/tmp/.X%d-lock", n);
		snprintf(d->socket_path, sizeof(d->socket_path), X_SOCKET_DIR "/X%d", n);
		if (take_lock(d->lock_path) != 0) {
			if (errno != EEXIST)
				err = errno;
			continue;
		}
		if (open_sockets(d, n) == 0) {
			d->number = n;
			return 0;
		}
		/* EADDRINUSE: an X server without a lock file we can see (one
		 * in another mount namespace) has the abstract socket. */
		err = errno;
		unlink(d->lock_path);
	}
	comp_log("xwayland: no free X display from :%d to :%d%s%s", first,
	         first + DISPLAYS_TRIED - 1, err ? ", last error: " : " (all taken)",
	         err ? strerror(err) : "");
	return -1;
}

void comp_xdisplay_close(struct comp_xdisplay *d)
{
	if (d->number < 0)
		return;
	for (int i = 0; i < 2; i++) {
		if (d->fd[i] >= 0)
			close(d->fd[i]);
		d->fd[i] = -1;
	}
	unlink(d->socket_path);
	unlink(d->lock_path);
	d->number = -1;
}
