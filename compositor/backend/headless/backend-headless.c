/* The headless backend: frames go to an offscreen framebuffer that nobody
 * scans out. A painted frame is flushed and fenced (render_target_flush),
 * not waited for; the fence is asked on a later loop pass, and only once
 * it says the pixels exist is the frame finished (comp_output_finish_frame)
 * with that time, which the output's refresh grid then puts on its tick,
 * as a page flip would show it.
 *
 * With --vfb PATH the output also has a readable framebuffer: after each
 * painted frame the damaged rectangles (and only those) are read back into
 * a file-backed shared mapping, as a VM's display device or a VNC server
 * would see the screen. An outside process can then time when pixels
 * appear without trusting anything the compositor says (bench/probes/observe.c),
 * or find what changed (bench/probes/vfb-reader.c). The file's layout, linear
 * rows or page-sized tiles (--vfb-layout), is in vfb-layout.h: a header
 * page, then the pixels from the next page on. Beside each frame the
 * compositor publishes its own damage of that frame in the header page,
 * written before the frame counter's release store: the exact answer a
 * reader's change detection is measured against. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "comp.h"
#include "vfb-layout.h"

struct headless {
	uint8_t *map;        /* the whole file, NULL without --vfb */
	struct vfb_geom geom;
	uint32_t *scratch;   /* one damaged rectangle, tight rows */
	size_t scratch_size; /* in bytes */
	struct vfb_rect *rects; /* this frame's damage, for the header */
	int rects_cap;
	uint64_t frames;
	struct wl_event_source *check_idle;  /* asks the fence on the next pass */
	struct wl_event_source *check_timer; /* and again, while the GPU draws */
	pixman_region32_t damage;            /* the frame's, for the vfb */
};

static void vfb_close(struct headless *h)
{
	if (h->map)
		munmap(h->map, h->geom.file_size);
	h->map = NULL;
	free(h->scratch);
	h->scratch = NULL;
	free(h->rects);
	h->rects = NULL;
}

static int vfb_open(struct headless *h, const char *path, const char *layout_name, int width,
                    int height)
{
	enum vfb_layout layout = VFB_LINEAR;
	if (layout_name && vfb_layout_parse(layout_name, &layout) != 0) {
		comp_log("--vfb-layout %s: want linear or tiled", layout_name);
		return -1;
	}
	vfb_geometry(&h->geom, layout, (uint32_t)width, (uint32_t)height);
	size_t size = h->geom.file_size;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		comp_log("--vfb %s: %s", path, strerror(errno));
		return -1;
	}
	if (ftruncate(fd, (off_t)size) != 0) {
		comp_log("--vfb %s: cannot size it to %zu bytes: %s", path, size, strerror(errno));
		close(fd);
		return -1;
	}
	void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		comp_log("--vfb %s: mmap: %s", path, strerror(errno));
		return -1;
	}
	h->map = map;
	/* The magic goes last: a reader that finds it finds a whole header. */
	struct vfb_header *hdr = (struct vfb_header *)(void *)h->map;
	hdr->width = (uint32_t)width;
	hdr->height = (uint32_t)height;
	hdr->stride = h->geom.stride;
	hdr->format = VFB_FORMAT_XRGB8888;
	hdr->layout = layout;
	hdr->pixel_offset = VFB_PAGE;
	hdr->tile_width = hdr->tile_height = layout == VFB_TILED ? VFB_TILE : 0;
	hdr->tiles_x = h->geom.tiles_x;
	hdr->tiles_y = h->geom.tiles_y;
	__atomic_store_n(&hdr->frame, 0, __ATOMIC_RELEASE);
	memcpy(hdr->magic, VFB_MAGIC, 8);
	comp_log("virtual framebuffer %s: %dx%d XRGB8888, %s, %zu bytes", path, width, height,
	         vfb_layout_name(layout), size);
	return 0;
}

/* Copies one damaged box from the GL target into the mapping. GL reads
 * tight rows fastest (BGRA straight into the buffer), so a whole-width box
 * of the linear layout goes straight in, any other through the scratch
 * buffer. */
static void vfb_copy_box(struct headless *h, struct render_target *target,
                         const pixman_box32_t *box)
{
	int w = box->x2 - box->x1, rows = box->y2 - box->y1;
	uint8_t *pixels = h->map + VFB_PAGE;
	size_t row = (size_t)w * 4;

	if (h->geom.layout == VFB_LINEAR && row == h->geom.stride) {
		uint8_t *dst = pixels + vfb_pixel_offset(&h->geom, 0, (uint32_t)box->y1);
		render_target_read_pixels(target, box, (uint32_t *)(void *)dst, (int)row);
		return;
	}
	if (h->scratch_size < row * (size_t)rows) {
		uint32_t *grown = realloc(h->scratch, row * (size_t)rows);
		if (!grown) {
			comp_log("--vfb: out of memory for a %dx%d copy", w, rows);
			return;
		}
		h->scratch = grown;
		h->scratch_size = row * (size_t)rows;
	}
	if (render_target_read_pixels(target, box, h->scratch, (int)row) != 0)
		return;
	vfb_write_block(&h->geom, pixels, (uint32_t)box->x1, (uint32_t)box->y1, (uint32_t)w,
	                (uint32_t)rows, (const uint8_t *)h->scratch);
}

/* Writes the frame's damaged pixels, then its damage record. */
static void vfb_write_frame(struct comp_output *output, const pixman_region32_t *damage,
                            uint64_t frame)
{
	struct headless *h = output->backend_data;
	pixman_region32_t clipped;
	pixman_region32_init_rect(&clipped, 0, 0, (unsigned)output->width,
	                          (unsigned)output->height);
	if (damage)
		pixman_region32_intersect(&clipped, &clipped, (pixman_region32_t *)damage);
	int n;
	const pixman_box32_t *boxes = pixman_region32_rectangles(&clipped, &n);
	if (n > h->rects_cap) {
		struct vfb_rect *grown = realloc(h->rects, (size_t)n * sizeof(*grown));
		if (grown) {
			h->rects = grown;
			h->rects_cap = n;
		}
	}
	for (int i = 0; i < n; i++) {
		vfb_copy_box(h, output->target, &boxes[i]);
		if (i < h->rects_cap)
			h->rects[i] = (struct vfb_rect){ boxes[i].x1, boxes[i].y1, boxes[i].x2,
			                                 boxes[i].y2 };
	}
	struct vfb_header *hdr = (struct vfb_header *)(void *)h->map;
	if (n > h->rects_cap) {
		/* Out of memory for the list: the whole output is an honest bound. */
		struct vfb_rect whole = { 0, 0, output->width, output->height };
		vfb_publish_damage(hdr, frame, &whole, 1);
	} else {
		vfb_publish_damage(hdr, frame, h->rects, n);
	}
	pixman_region32_fini(&clipped);
}

static int headless_output_count(struct comp_server *server)
{
	return server->options.n_outputs > 0 ? server->options.n_outputs : 1;
}

static struct render_target *headless_create_target(struct comp_output *output)
{
	struct headless *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	pixman_region32_init(&h->damage);
	output->backend_data = h;
	const struct comp_options *opt = &output->server->options;
	if (output->index < opt->n_outputs) {
		const struct comp_output_config *c = &opt->outputs[output->index];
		output->width = c->width;
		output->height = c->height;
		output->refresh_mhz = c->refresh_mhz;
	}
	/* The virtual framebuffer shows the first output. */
	if (opt->vfb_path && output->index == 0 &&
	    vfb_open(h, opt->vfb_path, opt->vfb_layout, output->width, output->height) != 0)
		return NULL;
	if (!output->server->egl) /* the pixman engine */
		return render_target_create_memory(output->width, output->height);
	return render_target_create_offscreen(output->server->egl, output->width, output->height);
}

/* The frame is out: with a virtual framebuffer once it is in the mapping,
 * as on a display that scans out of memory, so the time reported to
 * clients (and traced) is taken after the copy. */
static uint64_t headless_present(struct comp_output *output)
{
	struct headless *h = output->backend_data;
	if (!h->map)
		return render_now_ns();
	vfb_write_frame(output, &h->damage, ++h->frames);
	uint64_t t_ns = render_now_ns();
	struct vfb_header *hdr = (struct vfb_header *)(void *)h->map;
	hdr->ns = t_ns;
	__atomic_store_n(&hdr->frame, h->frames, __ATOMIC_RELEASE);
	return t_ns;
}

static int check_again(void *data);

/* Is the submitted frame finished? Without an answer, asked again a
 * millisecond later: a GPU still drawing, or, on a busy machine, llvmpipe's
 * rasteriser threads (at load 9 here nearly every frame took one poll). */
static void check_frame(struct comp_output *output)
{
	struct headless *h = output->backend_data;
	if (!render_target_frame_done(output->target)) {
		if (!h->check_timer)
			h->check_timer = wl_event_loop_add_timer(output->server->loop, check_again,
			                                         output);
		if (h->check_timer && wl_event_source_timer_update(h->check_timer, 1) == 0)
			return;
		comp_log("headless: cannot poll the frame's fence: waiting for it");
		render_target_present(output->target, NULL);
	}
	comp_output_finish_frame(output, headless_present(output), NULL, 0);
}

static int check_again(void *data)
{
	check_frame(data);
	return 0;
}

static void check_idle(void *data)
{
	struct comp_output *output = data;
	struct headless *h = output->backend_data;
	h->check_idle = NULL; /* idle sources remove themselves */
	check_frame(output);
}

static void headless_submit(struct comp_output *output, const pixman_region32_t *damage)
{
	struct headless *h = output->backend_data;
	render_target_flush(output->target);
	if (h->map)
		pixman_region32_copy(&h->damage, damage);
	/* Asked on the loop pass after this one, so that the clients'
	 * requests already waiting are read first. */
	h->check_idle = wl_event_loop_add_idle(output->server->loop, check_idle, output);
	if (!h->check_idle)
		check_frame(output);
}

static void headless_destroy(struct comp_output *output)
{
	struct headless *h = output->backend_data;
	if (output->target)
		render_target_destroy(output->target);
	output->target = NULL;
	if (h) {
		if (h->check_idle)
			wl_event_source_remove(h->check_idle);
		if (h->check_timer)
			wl_event_source_remove(h->check_timer);
		pixman_region32_fini(&h->damage);
		vfb_close(h);
		free(h);
	}
	output->backend_data = NULL;
}

const struct comp_backend comp_backend_headless = {
	.name = "headless",
	.output_count = headless_output_count,
	.create_target = headless_create_target,
	.submit = headless_submit,
	.destroy = headless_destroy,
};
