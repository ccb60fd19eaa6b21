/* The one clock of duet's traces and frame scheduling (frame-sched.c
 * takes the time as an argument instead of reading it), and the timers
 * the servers wait on it with: a timerfd, which their event loops poll,
 * at nanosecond precision (60 Hz is 16.67 ms, not a rounded 16 or 17). */
#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "render-private.h"

uint64_t render_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int render_timer_create(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);

	if (fd < 0)
		render_log("timerfd_create: %s", strerror(errno));
	return fd;
}

void render_timer_arm(int fd, uint64_t at_ns)
{
	/* Absolute: a time already passed fires at once; all zero disarms. */
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(at_ns / 1000000000u),
		              .tv_nsec = (long)(at_ns % 1000000000u) },
	};
	if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		render_log("timerfd_settime: %s", strerror(errno));
}

bool render_timer_read(int fd)
{
	uint64_t expirations;
	ssize_t n = read(fd, &expirations, sizeof(expirations));

	if (n < 0 && errno != EAGAIN)
		render_log("timer read: %s", strerror(errno));
	return n == (ssize_t)sizeof(expirations);
}
