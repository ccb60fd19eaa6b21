/* Tiny helpers shared by the unit tests: checks that count failures and
 * say what they check (check.h), and EGL setup with the CI skip/fail rule. */
#ifndef DUET_UNIT_H
#define DUET_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "render.h"

/* Surfaceless EGL or, when the machine has none: exit 77 (meson's skip)
 * on a developer machine, but fail under CI=true, where a missing EGL means
 * the renderer was not tested at all. */
static inline struct render_egl *unit_egl_or_skip(void)
{
	struct render_egl *egl;
	const char *ci = getenv("CI");

	setenv("GALLIUM_DRIVER", "llvmpipe", 0);
	setenv("LIBGL_ALWAYS_SOFTWARE", "1", 0);
	egl = render_egl_create_surfaceless();
	if (egl)
		return egl;
	if (ci && strcmp(ci, "true") == 0) {
		fprintf(stderr, "FAIL: no surfaceless EGL/GLES2 and CI=true\n");
		exit(1);
	}
	fprintf(stderr, "SKIP: no surfaceless EGL/GLES2 (Mesa's EGL_MESA_platform_surfaceless) "
	        "on this machine\n");
	exit(77);
}

/* The drawing engine under test: $DUET_TEST_ENGINE "pixman", or GL
 * (surfaceless EGL, skipped as above where there is none). *egl is NULL
 * with pixman. tests/unit/meson.build runs each render test on both. */
static inline struct renderer *unit_renderer(struct render_egl **egl)
{
	const char *engine = getenv("DUET_TEST_ENGINE");

	if (engine && strcmp(engine, "pixman") == 0) {
		*egl = NULL;
		printf("engine: pixman\n");
		return renderer_create_pixman();
	}
	*egl = unit_egl_or_skip();
	printf("engine: gl (%s)\n", render_egl_describe(*egl));
	return renderer_create(*egl);
}

/* An offscreen target of the engine unit_renderer chose. */
static inline struct render_target *unit_target(struct render_egl *egl, int width, int height)
{
	return egl ? render_target_create_offscreen(egl, width, height)
	           : render_target_create_memory(width, height);
}

static inline int unit_channel(uint32_t p, int shift)
{
	return (int)((p >> shift) & 0xff);
}

/* Equal within tol per channel (blending rounds differently per driver). */
static inline bool unit_pixel_near(uint32_t got, uint32_t want, int tol)
{
	for (int s = 0; s < 32; s += 8) {
		int d = unit_channel(got, s) - unit_channel(want, s);
		if (d > tol || d < -tol)
			return false;
	}
	return true;
}

#endif
