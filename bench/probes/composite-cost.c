/* duet-composite-bench: what one composite of a window costs on this
 * machine's GL (render/, the drawing code of both duet servers) against
 * pixman, the drawing code of the X server's own RENDER composites (what
 * xcompmgr asks Xvfb for) and of weston's pixman renderer.
 *
 * One composite: upload a WxH XRGB window (as from shared memory), draw it
 * 1:1 and opaque into a 1920x1080 output, wait until the pixels exist. For
 * pixman the same window is composited with PIXMAN_OP_SRC straight from
 * its memory (no upload: pixman reads client memory); and once more through
 * render/'s own pixman engine (renderer_create_pixman: upload into its
 * texture copy, then the composite, as duet's servers do with --renderer
 * pixman). Prints min, median and max over REPS of the wall time and of the
 * process's CPU time (all threads: llvmpipe rasterises on its own), and the
 * CPU ratios.
 *
 *   duet-composite-bench [WxH [REPS]]     (default 800x600 100)
 *
 * Not a duet-vs-peer figure: it says what each drawing engine costs per
 * composite, which is the part of a software-path comparison that is not
 * the window system's architecture (docs/methodology.md). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pixman.h>

#include "render.h"
#include "samples.h"

#define OUT_W 1920
#define OUT_H 1080

struct series {
	double *wall, *cpu;
};

static double report(const char *what, struct series *s, int reps)
{
	samples_sort(s->wall, reps);
	samples_sort(s->cpu, reps);
	printf("%-13s wall min %.3f median %.3f max %.3f ms   cpu min %.3f median %.3f max %.3f ms"
	       "  (%d composites)\n",
	       what, s->wall[0], s->wall[reps / 2], s->wall[reps - 1], s->cpu[0],
	       s->cpu[reps / 2], s->cpu[reps - 1], reps);
	return s->cpu[reps / 2];
}

static int time_render(struct renderer *r, struct render_target *t, struct render_texture *tex,
                   const uint32_t *pixels, int w, int h, int reps, struct series *s)
{
	struct render_quad q = {
		.x = 100, .y = 100, .width = w, .height = h, .alpha = 1.0f,
		.opaque = true, .nearest = true,
	};
	pixman_region32_t all;

	pixman_region32_init_rect(&all, 0, 0, (unsigned)w, (unsigned)h);
	for (int i = 0; i < reps; i++) {
		double w0 = sample_ms(CLOCK_MONOTONIC), c0 = sample_ms(CLOCK_PROCESS_CPUTIME_ID);
		if (render_texture_upload(tex, pixels, w * 4, &all) < 0) {
			pixman_region32_fini(&all);
			return -1;
		}
		render_begin(r, t, NULL);
		render_draw_texture(r, tex, &q);
		render_end(r);
		if (render_target_present(t, NULL) < 0) {
			pixman_region32_fini(&all);
			return -1;
		}
		s->wall[i] = sample_ms(CLOCK_MONOTONIC) - w0;
		s->cpu[i] = sample_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
	}
	pixman_region32_fini(&all);
	return 0;
}

static void time_pixman(uint32_t *pixels, int w, int h, int reps, struct series *s)
{
	uint32_t *out = calloc((size_t)OUT_W * OUT_H, 4);
	pixman_image_t *dst = pixman_image_create_bits(PIXMAN_x8r8g8b8, OUT_W, OUT_H, out,
	                                               OUT_W * 4);
	pixman_image_t *src = pixman_image_create_bits(PIXMAN_x8r8g8b8, w, h, pixels, w * 4);

	for (int i = 0; i < reps; i++) {
		double w0 = sample_ms(CLOCK_MONOTONIC), c0 = sample_ms(CLOCK_PROCESS_CPUTIME_ID);
		pixman_image_composite32(PIXMAN_OP_SRC, src, NULL, dst, 0, 0, 0, 0, 100, 100, w, h);
		s->wall[i] = sample_ms(CLOCK_MONOTONIC) - w0;
		s->cpu[i] = sample_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
	}
	pixman_image_unref(src);
	pixman_image_unref(dst);
	free(out);
}

int main(int argc, char **argv)
{
	int w = 800, h = 600, reps = 100;

	if (argc > 1 && sscanf(argv[1], "%dx%d", &w, &h) != 2)
		w = 0;
	if (argc > 2)
		reps = atoi(argv[2]);
	if (argc > 3 || w < 1 || h < 1 || w > OUT_W - 100 || h > OUT_H - 100 || reps < 3 ||
	    reps > 100000) {
		fprintf(stderr, "usage: duet-composite-bench [WxH [REPS]] (up to %dx%d, REPS >= 3)\n",
		        OUT_W - 100, OUT_H - 100);
		return 2;
	}
	struct render_egl *egl = render_egl_create_surfaceless();
	struct renderer *r = egl ? renderer_create(egl) : NULL;
	struct render_target *t = r ? render_target_create_offscreen(egl, OUT_W, OUT_H) : NULL;
	struct render_texture *tex = t ? render_texture_create(r, RENDER_FORMAT_XRGB8888, w, h)
	                               : NULL;
	uint32_t *pixels = malloc((size_t)w * h * 4);
	struct series gl = { calloc((size_t)reps, sizeof(double)),
	                     calloc((size_t)reps, sizeof(double)) };
	struct series px = { calloc((size_t)reps, sizeof(double)),
	                     calloc((size_t)reps, sizeof(double)) };
	if (!tex || !pixels || !gl.wall || !gl.cpu || !px.wall || !px.cpu) {
		fprintf(stderr, "duet-composite-bench: no GL renderer or out of memory\n");
		return 1;
	}
	for (int i = 0; i < w * h; i++)
		pixels[i] = 0xff000000u | (uint32_t)(i * 2654435761u >> 8);
	printf("GL: %s; window %dx%d into %dx%d, 1:1, opaque\n", render_egl_describe(egl), w, h,
	       OUT_W, OUT_H);
	/* The first draws compile llvmpipe's shaders: not timed. */
	if (time_render(r, t, tex, pixels, w, h, 3, &gl) < 0) {
		fprintf(stderr, "duet-composite-bench: GL composite failed\n");
		return 1;
	}
	if (time_render(r, t, tex, pixels, w, h, reps, &gl) < 0) {
		fprintf(stderr, "duet-composite-bench: GL composite failed\n");
		return 1;
	}
	time_pixman(pixels, w, h, reps, &px);
	/* render/'s pixman engine, through the same calls as GL above. */
	struct renderer *pr = renderer_create_pixman();
	struct render_target *pt = pr ? render_target_create_memory(OUT_W, OUT_H) : NULL;
	struct render_texture *ptex = pt ? render_texture_create(pr, RENDER_FORMAT_XRGB8888, w, h)
	                                 : NULL;
	struct series pe = { calloc((size_t)reps, sizeof(double)),
	                     calloc((size_t)reps, sizeof(double)) };
	if (!ptex || !pe.wall || !pe.cpu ||
	    time_render(pr, pt, ptex, pixels, w, h, reps, &pe) < 0) {
		fprintf(stderr, "duet-composite-bench: render/'s pixman engine failed\n");
		return 1;
	}
	double gl_cpu = report("GL", &gl, reps);
	double px_cpu = report("pixman", &px, reps);
	double pe_cpu = report("render/pixman", &pe, reps);
	printf("CPU per composite, GL / pixman: %.1f; GL / render's pixman engine (upload "
	       "included): %.1f\n", px_cpu > 0 ? gl_cpu / px_cpu : 0.0,
	       pe_cpu > 0 ? gl_cpu / pe_cpu : 0.0);
	free(pe.wall);
	free(pe.cpu);
	render_texture_destroy(ptex);
	render_target_destroy(pt);
	renderer_destroy(pr);
	free(gl.wall);
	free(gl.cpu);
	free(px.wall);
	free(px.cpu);
	free(pixels);
	render_texture_destroy(tex);
	render_target_destroy(t);
	renderer_destroy(r);
	render_egl_destroy(egl);
	return 0;
}
