/* The frame clock: a fixed refresh grid standing in for vblank on outputs
 * that have none (headless, Xvfb). */
#include <time.h>

#include "render-private.h"

uint64_t render_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void render_frame_clock_init(struct render_frame_clock *c, int refresh_mhz)
{
	/* mHz, as wl_output and the presentation protocol count refresh. */
	c->refresh_ns = refresh_mhz > 0 ? 1000000000000ull / (uint64_t)refresh_mhz : 0;
	c->last_ns = 0;
	c->seq = 0;
}

uint64_t render_frame_clock_next(const struct render_frame_clock *c, uint64_t now_ns)
{
	uint64_t tick;

	/* Unthrottled, or nothing presented yet: there is no grid to wait for. */
	if (c->refresh_ns == 0 || c->seq == 0)
		return now_ns;
	tick = c->last_ns + c->refresh_ns;
	/* A missed tick is not waited for a whole period again: an idle
	 * screen that changes shows the change at once, like a display whose
	 * next vblank is due (the grid restarts from that presentation). */
	return tick > now_ns ? tick : now_ns;
}

void render_frame_clock_presented(struct render_frame_clock *c, uint64_t t_ns)
{
	c->last_ns = t_ns;
	c->seq++;
}
