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
 */
#include <dlfcn.h>
#include <poll.h>
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
