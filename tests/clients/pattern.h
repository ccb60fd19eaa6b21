/* The deterministic test pattern every duet test client draws, on Wayland
 * (test-pattern.c) and on X11 (x11-test-pattern.c), so screenshots of both
 * stacks can be compared pixel for pixel with each other and with
 * pattern_pixel() in tests/integration/duet.py. Pure C, no window system. */
#ifndef DUET_TEST_PATTERN_H
#define DUET_TEST_PATTERN_H

#include <stddef.h>
#include <stdint.h>

/* XRGB8888 (alpha byte set) of the pattern's pixel at x, y. */
static inline uint32_t test_pattern_pixel(uint32_t x, uint32_t y)
{
	return 0xff000000u | ((x * 7u) & 0xffu) << 16 | ((y * 5u) & 0xffu) << 8 |
	       ((x + y) & 0xffu);
}

/* The pattern's w x h top-left corner, rows packed one after the other. */
static inline void test_pattern_fill(uint32_t *pixels, int w, int h)
{
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			pixels[(size_t)y * (size_t)w + (size_t)x] =
				test_pattern_pixel((uint32_t)x, (uint32_t)y);
}

#endif
