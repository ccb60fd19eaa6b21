/* The one clock of duet's traces and frame scheduling (frame-sched.c
 * takes the time as an argument instead of reading it). */
#include <time.h>

#include "render-private.h"

uint64_t render_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
