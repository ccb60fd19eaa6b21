/* A probe for libduet-ipc-count.so: makes known numbers of IPC calls so
 * test_ipc_count.py can check the dumps. A child connects to the parent
 * over a SOCK_SEQPACKET Unix socket (message boundaries kept, so every
 * call moves exactly one message):
 *   child:  N sendmsg (10 bytes), N writev (20 bytes), 1 recvmsg
 *   parent: N recvmsg, N readv, 1 sendmsg, 2 write + 2 read on a pipe,
 *           3 poll; then SIGUSR2 (a dump) and exit (another).
 * Prints "parent PID child PID" on stdout.
 * With "idle" instead of N: prints "idle PID" and waits in poll() on a
 * pipe that never becomes readable, re-entering after every EINTR as an
 * event loop does, until killed.
 * With "read": prints "read PID", then reads one byte from stdin twice
 * (blocking), and exits 0. */
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void msg_io(int fd, int send, size_t len)
{
	char buf[64];
	memset(buf, 'x', sizeof(buf));
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r = send ? sendmsg(fd, &m, 0) : recvmsg(fd, &m, 0);
	if (r != (ssize_t)len)
		die(send ? "sendmsg" : "recvmsg");
}

_Noreturn static void idle(void)
{
	int p[2];
	if (pipe(p) < 0)
		die("pipe");
	printf("idle %d\n", (int)getpid());
	fflush(stdout);
	struct pollfd pfd = { .fd = p[0], .events = POLLIN };
	for (;;)
		poll(&pfd, 1, -1);
}

static int read_twice(void)
{
	printf("read %d\n", (int)getpid());
	fflush(stdout);
	char c;
	for (int i = 0; i < 2; i++)
		if (read(0, &c, 1) != 1)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "idle") == 0)
		idle();
	if (argc > 1 && strcmp(argv[1], "read") == 0)
		return read_twice();
	int n = argc > 1 ? atoi(argv[1]) : 7;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	/* Abstract namespace: nothing to clean up on disk. */
	snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "duet-ipc-probe-%d", (int)getpid());
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	                             strlen(addr.sun_path + 1));
	int lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, alen) < 0 || listen(lfd, 1) < 0)
		die("listen");
	fflush(stdout);
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		close(lfd);
		int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&addr, alen) < 0)
			die("connect");
		for (int i = 0; i < n; i++)
			msg_io(fd, 1, 10);
		char buf[20];
		memset(buf, 'y', sizeof(buf));
		for (int i = 0; i < n; i++) {
			struct iovec iov = { buf, sizeof(buf) };
			if (writev(fd, &iov, 1) != (ssize_t)sizeof(buf))
				die("writev");
		}
		msg_io(fd, 0, 5);
		exit(0); /* dumps at exit, under the child's own pid */
	}
	int fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	for (int i = 0; i < n; i++)
		msg_io(fd, 0, 10);
	char buf[20];
	for (int i = 0; i < n; i++) {
		struct iovec iov = { buf, sizeof(buf) };
		if (readv(fd, &iov, 1) != (ssize_t)sizeof(buf))
			die("readv");
	}
	msg_io(fd, 1, 5);
	int p[2];
	if (pipe(p) < 0)
		die("pipe");
	for (int i = 0; i < 2; i++)
		if (write(p[1], "abc", 3) != 3)
			die("write");
	for (int i = 0; i < 2; i++)
		if (read(p[0], buf, 3) != 3)
			die("read");
	struct pollfd pfd = { .fd = p[0], .events = POLLIN };
	for (int i = 0; i < 3; i++)
		poll(&pfd, 1, 0);
	int status;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		die("child");
	printf("parent %d child %d\n", (int)getpid(), (int)child);
	fflush(stdout);
	raise(SIGUSR2);
	return 0;
}
