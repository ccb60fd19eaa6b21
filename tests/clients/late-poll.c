/* libduet-late-poll: an LD_PRELOAD fault injector that makes every poll()
 * on a single descriptor start DUET_LATE_POLL_US microseconds late, as on a
 * loaded machine where the caller is preempted just before it polls.
 *
 * xcb polls one descriptor whenever it writes or waits for a reply, and
 * reads whatever the server sent meanwhile into its event queue; a program
 * whose main loop then polls the socket without first taking those queued
 * events sleeps on them. Widening that moment from microseconds to a
 * millisecond turns a one-in-thousands race into a likely one, so a test
 * can show the loop handles it. Loops polling several descriptors (duet-xwm's
 * main loop) are left on time.
 *
 * DUET_LATE_WRITEV_US likewise makes every writev() start that late: a
 * peer that goes away in between is met by the write itself (EPIPE and
 * SIGPIPE), not by the poll() xcb makes before it, which would report the
 * hang-up and spare the write. Tests of how a client takes a dead server
 * use it to meet that case every time instead of once in a while.
 */
#include <dlfcn.h>
#include <poll.h>
#include <sys/uio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((visibility("default"))) int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	static int (*real_poll)(struct pollfd *, nfds_t, int);
	static long late_us = -1;

	if (!real_poll)
		real_poll = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
	if (late_us < 0) {
		const char *v = getenv("DUET_LATE_POLL_US");
		late_us = v ? atol(v) : 0;
	}
	if (nfds == 1 && late_us > 0) {
		struct timespec ts = { late_us / 1000000, (late_us % 1000000) * 1000 };
		nanosleep(&ts, NULL);
	}
	return real_poll(fds, nfds, timeout);
}

__attribute__((visibility("default"))) ssize_t writev(int fd, const struct iovec *iov, int n)
{
	static ssize_t (*real_writev)(int, const struct iovec *, int);
	static long late_us = -1;

	if (!real_writev)
		real_writev = (ssize_t (*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
	if (late_us < 0) {
		const char *v = getenv("DUET_LATE_WRITEV_US");
		late_us = v ? atol(v) : 0;
	}
	if (late_us > 0) {
		struct timespec ts = { late_us / 1000000, (late_us % 1000000) * 1000 };
		nanosleep(&ts, NULL);
	}
	return real_writev(fd, iov, n);
}
