/* duet-readback-bench: how long render_target_read_pixels takes, the call
 * duet-xwm makes on every frame of its shm-put output path. Prints
 * min/median/max over REPS reads of a whole WxH target and of a 300x300
 * box. DUET_RENDER_DISABLE=GL_EXT_read_format_bgra times the fallback
 * (RGBA read plus CPU swizzle); compare the two within one sitting.
 *
 *   duet-readback-bench [WxH [REPS]]     (default 1920x1080 30) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "render.h"
#include "samples.h"

static int time_reads(struct render_target *t, pixman_box32_t box, int reps, uint32_t *buf,
                      const char *what)
{
	double *ms = calloc((size_t)reps, sizeof(*ms));
	int w = box.x2 - box.x1;

	if (!ms)
		return -1;
	for (int i = 0; i < reps; i++) {
		double t0 = sample_ms(CLOCK_MONOTONIC);
		if (render_target_read_pixels(t, &box, buf, w * 4) < 0) {
			fprintf(stderr, "duet-readback-bench: read of %s failed\n", what);
			free(ms);
			return -1;
		}
		ms[i] = sample_ms(CLOCK_MONOTONIC) - t0;
	}
	samples_sort(ms, reps);
	printf("%-10s min %.3f ms  median %.3f ms  max %.3f ms  (%d reads)\n", what, ms[0],
	       ms[reps / 2], ms[reps - 1], reps);
	free(ms);
	return 0;
}

int main(int argc, char **argv)
{
	int w = 1920, h = 1080, reps = 30;
	char box_name[32];

	if (argc > 1 && sscanf(argv[1], "%dx%d", &w, &h) != 2)
		w = 0;
	if (argc > 2)
		reps = atoi(argv[2]);
	if (argc > 3 || w < 300 || h < 300 || w > 8192 || h > 8192 || reps < 1 || reps > 100000) {
		fprintf(stderr, "usage: duet-readback-bench [WxH [REPS]] (300x300 to 8192x8192)\n");
		return 2;
	}
	struct render_egl *egl = render_egl_create_surfaceless();
	struct render_target *t = egl ? render_target_create_offscreen(egl, w, h) : NULL;
	uint32_t *buf = malloc((size_t)w * h * 4);
	if (!t || !buf) {
		fprintf(stderr, "duet-readback-bench: no offscreen %dx%d target\n", w, h);
		return 1;
	}
	snprintf(box_name, sizeof(box_name), "%dx%d", w, h);
	int ret = time_reads(t, (pixman_box32_t){ 0, 0, w, h }, reps, buf, box_name) ||
	          time_reads(t, (pixman_box32_t){ 100, 100, 400, 400 }, reps * 10, buf, "300x300");
	free(buf);
	render_target_destroy(t);
	render_egl_destroy(egl);
	return ret ? 1 : 0;
}
