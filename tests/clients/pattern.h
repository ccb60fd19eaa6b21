/* The deterministic test pattern every duet test client draws, on Wayland
 * (test-pattern.c) and on X11 (x11-test-pattern.c), so screenshots of both
 * stacks can be compared pixel for pixel with each other and with
 * pattern_pixel() in tests/integration/duet.py. Pure C, no window system. */
#ifndef DUET_TEST_PATTERN_H
#define DUET_TEST_PATTERN_H

#include <stdint.h>

/* XRGB8888 (alpha byte set) of the pattern's pixel at x, y. */
static inline uint32_t test_pattern_pixel(uint32_t x, uint32_t y)
{
	return 0xff000000u | ((x * 7u) & 0xffu) << 16 | ((y * 5u) & 0xffu) << 8 |
	       ((x + y) & 0xffu);
}

#endif
