/* Frame clock arithmetic: refresh period from mHz, next tick on the grid,
 * missed ticks and the unthrottled mode. */
#include "unit.h"

int main(void)
{
	struct render_frame_clock c;
	uint64_t t0 = 5000000000ull, a, b;

	unit_say("60 Hz (60000 mHz) is a 16666666 ns period; 59.94 Hz is 16683350 ns");
	render_frame_clock_init(&c, 60000);
	CHECK(c.refresh_ns == 16666666, "period %llu", (unsigned long long)c.refresh_ns);
	render_frame_clock_init(&c, 59940);
	CHECK(c.refresh_ns == 16683350, "period %llu", (unsigned long long)c.refresh_ns);

	unit_say("before the first presentation a frame may go at once");
	render_frame_clock_init(&c, 60000);
	CHECK(render_frame_clock_next(&c, t0) == t0, "first frame waits");
	CHECK(c.seq == 0, "seq starts at 0");

	unit_say("after a presentation the next frame waits for the next tick");
	render_frame_clock_presented(&c, t0);
	CHECK(c.seq == 1 && c.last_ns == t0, "presented recorded");
	CHECK(render_frame_clock_next(&c, t0) == t0 + 16666666, "same instant");
	CHECK(render_frame_clock_next(&c, t0 + 1000000) == t0 + 16666666, "1 ms later");
	CHECK(render_frame_clock_next(&c, t0 + 16666665) == t0 + 16666666, "1 ns before tick");
	CHECK(render_frame_clock_next(&c, t0 + 16666666) == t0 + 16666666, "on the tick");

	unit_say("a missed tick means now, not one period later");
	CHECK(render_frame_clock_next(&c, t0 + 20000000) == t0 + 20000000, "missed tick");
	CHECK(render_frame_clock_next(&c, t0 + 1000000000) == t0 + 1000000000, "long idle");

	unit_say("steady presentation on the ticks advances by one period and counts frames");
	for (int i = 0; i < 10; i++) {
		uint64_t next = render_frame_clock_next(&c, c.last_ns + 1000);
		CHECK(next == c.last_ns + c.refresh_ns, "tick %d", i);
		render_frame_clock_presented(&c, next);
	}
	CHECK(c.seq == 11, "seq %llu", (unsigned long long)c.seq);
	CHECK(c.last_ns == t0 + 10 * 16666666ull, "last %llu", (unsigned long long)c.last_ns);

	unit_say("refresh 0 is unthrottled: always now");
	render_frame_clock_init(&c, 0);
	CHECK(c.refresh_ns == 0, "period %llu", (unsigned long long)c.refresh_ns);
	render_frame_clock_presented(&c, t0);
	CHECK(render_frame_clock_next(&c, t0) == t0, "unthrottled same instant");
	CHECK(render_frame_clock_next(&c, t0 + 1) == t0 + 1, "unthrottled");

	unit_say("render_now_ns is monotonic and in nanoseconds");
	a = render_now_ns();
	b = render_now_ns();
	CHECK(b >= a, "clock went back");
	CHECK(a > 0, "zero clock");

	return unit_finish("test-clock");
}
