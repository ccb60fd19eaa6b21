/* The headless backend: frames go to an offscreen framebuffer that nobody
 * scans out. A painted frame is flushed and fenced (render_target_flush),
 * not waited for; output.c asks the fence on a later loop pass and only
 * then "presents" it, so the timestamp reported to clients is taken once
 * the pixels really exist, as it would be after a page flip.
 *
 * With --vfb PATH the output also has a readable framebuffer: after each
 * painted frame the damaged rectangles are read back into a file-backed
 * shared mapping, as a VM's display device or a VNC server would see the
 * screen. An outside process (bench/observe.c) can then time when pixels
 * appear without trusting anything the compositor says. Layout of PATH:
 *
 *   offset  0  "DUETVFB1"
 *           8  uint32 width, 12 height, 16 stride (bytes), 20 format
 *              (0 = XRGB8888 little-endian: bytes B,G,R,X)
 *          24  uint64 frame counter, stored (release) after the frame's
 *              pixels are written
 *          32  uint64 CLOCK_MONOTONIC ns when that frame was complete
 *          40  zero up to 64
 *          64  pixels, top row first
 *
 * All fields are native-endian (the file is shared on one machine). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "comp.h"

#define VFB_HEADER_SIZE 64
#define VFB_FORMAT_XRGB8888 0

struct vfb_header {
	char magic[8];
	uint32_t width, height, stride, format;
	uint64_t frame;
	uint64_t ns;
	uint8_t reserved[VFB_HEADER_SIZE - 40];
};
_Static_assert(sizeof(struct vfb_header) == VFB_HEADER_SIZE, "vfb header is 64 bytes");

struct headless {
	uint8_t *map;        /* the whole file, NULL without --vfb */
	size_t map_size;
	uint32_t stride;
	uint32_t *scratch;   /* one damaged rectangle, tight rows */
	size_t scratch_size; /* in bytes */
	uint64_t frames;
};

static void vfb_close(struct headless *h)
{
	if (h->map)
		munmap(h->map, h->map_size);
	h->map = NULL;
	free(h->scratch);
	h->scratch = NULL;
}

static int vfb_open(struct headless *h, const char *path, int width, int height)
{
	h->stride = (uint32_t)width * 4;
	h->map_size = VFB_HEADER_SIZE + (size_t)h->stride * (size_t)height;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		comp_log("--vfb %s: %s", path, strerror(errno));
		return -1;
	}
	if (ftruncate(fd, (off_t)h->map_size) != 0) {
		comp_log("--vfb %s: cannot size it to %zu bytes: %s", path, h->map_size,
		         strerror(errno));
		close(fd);
		return -1;
	}
	void *map = mmap(NULL, h->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
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
	hdr->stride = h->stride;
	hdr->format = VFB_FORMAT_XRGB8888;
	__atomic_store_n(&hdr->frame, 0, __ATOMIC_RELEASE);
	memcpy(hdr->magic, "DUETVFB1", 8);
	comp_log("virtual framebuffer %s: %dx%d XRGB8888, %zu bytes", path, width, height,
	         h->map_size);
	return 0;
}

/* Copies one damaged box from the GL target into the mapping. GL reads
 * tight rows fastest (BGRA straight into the buffer), so a box narrower
 * than the output goes through the scratch buffer. */
static void vfb_copy_box(struct headless *h, struct render_target *target,
                         const pixman_box32_t *box)
{
	int w = box->x2 - box->x1, rows = box->y2 - box->y1;
	uint8_t *dst = h->map + VFB_HEADER_SIZE + (size_t)box->y1 * h->stride +
	               (size_t)box->x1 * 4;
	size_t row = (size_t)w * 4;

	if (row == h->stride) {
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
	for (int y = 0; y < rows; y++)
		memcpy(dst + (size_t)y * h->stride, (uint8_t *)h->scratch + (size_t)y * row, row);
}

static void vfb_write_frame(struct comp_output *output, const pixman_region32_t *damage)
{
	struct headless *h = output->backend_data;
	pixman_region32_t clipped;
	pixman_region32_init_rect(&clipped, 0, 0, (unsigned)output->width,
	                          (unsigned)output->height);
	if (damage)
		pixman_region32_intersect(&clipped, &clipped, (pixman_region32_t *)damage);
	int n;
	const pixman_box32_t *boxes = pixman_region32_rectangles(&clipped, &n);
	for (int i = 0; i < n; i++)
		vfb_copy_box(h, output->target, &boxes[i]);
	pixman_region32_fini(&clipped);
}

static struct render_target *headless_create_target(struct comp_output *output)
{
	struct headless *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	output->backend_data = h;
	const char *vfb = output->server->options.vfb_path;
	if (vfb && vfb_open(h, vfb, output->width, output->height) != 0)
		return NULL;
	return render_target_create_offscreen(output->server->egl, output->width, output->height);
}

static void headless_submit(struct comp_output *output, const pixman_region32_t *damage)
{
	render_target_flush(output->target);
}

static bool headless_frame_done(struct comp_output *output)
{
	return render_target_frame_done(output->target);
}

static uint64_t headless_present(struct comp_output *output, const pixman_region32_t *damage)
{
	struct headless *h = output->backend_data;
	if (!h || !h->map)
		return render_now_ns();
	/* With a virtual framebuffer the frame is shown once it is in the
	 * mapping, as on a display that scans out of memory: the time reported
	 * to clients (and traced) is taken after the copy. */
	vfb_write_frame(output, damage);
	uint64_t t_ns = render_now_ns();
	struct vfb_header *hdr = (struct vfb_header *)(void *)h->map;
	hdr->ns = t_ns;
	__atomic_store_n(&hdr->frame, ++h->frames, __ATOMIC_RELEASE);
	return t_ns;
}

static void headless_destroy(struct comp_output *output)
{
	struct headless *h = output->backend_data;
	if (output->target)
		render_target_destroy(output->target);
	output->target = NULL;
	if (h) {
		vfb_close(h);
		free(h);
	}
	output->backend_data = NULL;
}

const struct comp_backend comp_backend_headless = {
	.name = "headless",
	.create_target = headless_create_target,
	.submit = headless_submit,
	.frame_done = headless_frame_done,
	.present = headless_present,
	.destroy = headless_destroy,
};
