/* Unit test of duet-vfb-reader's layouts and methods (issue 15): a writer
 * process writes known rectangles into a DUETVFB2 file of each layout,
 * as duet-compositor does (pixels, then the damage record, then the frame
 * counter), and every method this kernel offers must report them: recall
 * 1.0 against the published damage, precision printed. A method the
 * kernel lacks must say why. The tiled layout's tile for a pixel must be
 * the page the reader finds changed. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "vfb-method.h"

/* 200 x 100: neither a multiple of 32, so the edge tiles are padded and a
 * linear page starts mid-strip. */
#define W 200
#define H 100

static const struct vfb_rect rects[] = {
	{ 0, 0, 1, 1 },       /* one pixel, top left */
	{ 5, 7, 37, 9 },      /* a small blink across a tile edge */
	{ 190, 90, 200, 100 }, /* the padded corner tile */
	{ 20, 30, 180, 70 },  /* a window */
	{ 0, 0, W, H },       /* the whole screen */
};
#define N_RECTS (int)(sizeof(rects) / sizeof(rects[0]))

/* The writer: for each byte read from cmd, writes the next rectangle in a
 * new colour, publishes its damage and the frame, and answers on ack. */
static void writer(const char *path, int cmd, int ack)
{
	int fd = open(path, O_RDWR);
	if (fd < 0)
		_exit(1);
	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t *map = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		_exit(1);
	struct vfb_header *hdr = (struct vfb_header *)(void *)map;
	struct vfb_geom g;
	vfb_geometry(&g, (enum vfb_layout)hdr->layout, hdr->width, hdr->height);
	uint32_t *block = malloc((size_t)W * H * 4);
	char c;
	uint32_t colour = 0x00102030;
	while (read(cmd, &c, 1) == 1) {
		const struct vfb_rect *r;
		struct vfb_rect one;
		if (c >= 'a') { /* a single pixel: 'a' + index into the probe list */
			int k = c - 'a';
			one = (struct vfb_rect){ (k * 37) % W, (k * 53) % H, 0, 0 };
			one.x2 = one.x1 + 1;
			one.y2 = one.y1 + 1;
			r = &one;
		} else {
			r = &rects[c - '0'];
		}
		colour += 0x00010101;
		uint32_t w = (uint32_t)(r->x2 - r->x1), h = (uint32_t)(r->y2 - r->y1);
		for (uint32_t i = 0; i < w * h; i++)
			block[i] = colour;
		vfb_write_block(&g, map + VFB_PAGE, (uint32_t)r->x1, (uint32_t)r->y1, w, h,
		                (const uint8_t *)block);
		uint64_t f = hdr->frame + 1;
		vfb_publish_damage(hdr, f, r, 1);
		__atomic_store_n(&hdr->frame, f, __ATOMIC_RELEASE);
		if (write(ack, "k", 1) != 1)
			break;
	}
	free(block);
	_exit(0);
}

static void make_file(const char *path, enum vfb_layout layout, struct vfb_geom *g)
{
	vfb_geometry(g, layout, W, H);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && ftruncate(fd, (off_t)g->file_size) == 0, "create %s", path);
	struct vfb_header hdr = { .width = W, .height = H, .stride = g->stride,
	                          .layout = layout, .pixel_offset = VFB_PAGE,
	                          .tile_width = layout == VFB_TILED ? VFB_TILE : 0,
	                          .tile_height = layout == VFB_TILED ? VFB_TILE : 0,
	                          .tiles_x = g->tiles_x, .tiles_y = g->tiles_y };
	memcpy(hdr.magic, VFB_MAGIC, 8);
	CHECK(pwrite(fd, &hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr), "header");
	close(fd);
}

/* A writer process on path and the two pipes that drive it. */
struct writer_proc {
	pid_t pid;
	int cmd, ack; /* our ends */
};

static struct writer_proc start_writer(const char *path)
{
	int cmd[2], ack[2];
	CHECK(pipe(cmd) == 0 && pipe(ack) == 0, "pipes");
	pid_t pid = fork();
	if (pid == 0) {
		close(cmd[1]);
		close(ack[0]);
		writer(path, cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	return (struct writer_proc){ pid, cmd[1], ack[0] };
}

/* Closing its command pipe ends the writer; returns its wait status (-1,
 * no normal exit, if it cannot be had). */
static int stop_writer(struct writer_proc *w)
{
	int status = -1;
	close(w->cmd);
	waitpid(w->pid, &status, 0);
	close(w->ack);
	return status;
}

static void step(const struct writer_proc *w, char what)
{
	char c;
	CHECK(write(w->cmd, &what, 1) == 1 && read(w->ack, &c, 1) == 1, "writer step %c", what);
}

static void check_method(const char *name, const char *path, enum vfb_layout layout)
{
	struct vfb_geom g;
	make_file(path, layout, &g);
	struct writer_proc w = start_writer(path);
	struct vfb_source src;
	char why[1024] = "";
	CHECK(vfb_source_open_file(&src, path, why, sizeof(why)) == 0, "open: %s", why);
	/* The writer has its mapping once it answered a first step. */
	step(&w, '4');
	struct vfb_method m = { .ops = vfb_method_find(name) };
	if (m.ops->open(&m, &src, w.pid, why, sizeof(why)) != 0) {
		CHECK(why[0] != '\0', "%s unavailable without a reason", name);
		printf("check: %s on %s: unavailable: %s\n", name, vfb_layout_name(layout), why);
	} else {
		struct vfb_marks found, truth;
		vfb_marks_init(&found, W, H);
		vfb_marks_init(&truth, W, H);
		uint64_t seen = vfb_source_frame(&src);
		for (int i = 0; i < N_RECTS; i++) {
			step(&w, (char)('0' + i));
			uint64_t now = vfb_source_frame(&src), bytes = 0;
			vfb_marks_clear(&found);
			vfb_marks_clear(&truth);
			m.ops->detect(&m, &src, &found, seen, now);
			CHECK(vfb_damage_marks(&src, &truth, seen, now, &bytes) == 0, "damage record");
			seen = now;
			uint64_t d = vfb_marks_count(&found), t = vfb_marks_count(&truth);
			uint64_t hit = vfb_marks_both(&found, &truth);
			const struct vfb_rect *r = &rects[i];
			CHECK(t > 0 && hit == t, "%s %s rect %d,%d-%d,%d: recall %llu/%llu", name,
			      vfb_layout_name(layout), r->x1, r->y1, r->x2, r->y2,
			      (unsigned long long)hit, (unsigned long long)t);
			printf("check: %s on %s, rect %d,%d-%d,%d: recall %.3f, precision %.3f\n", name,
			       vfb_layout_name(layout), r->x1, r->y1, r->x2, r->y2,
			       t ? (double)hit / (double)t : 0.0, d ? (double)hit / (double)d : 0.0);
		}
		vfb_marks_fini(&found);
		vfb_marks_fini(&truth);
		m.ops->close(&m);
	}
	vfb_source_close(&src);
	int status = stop_writer(&w);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer exit");
}

/* In the tiled layout, a pixel's tile is the page that changes when the
 * pixel is written, and that page maps back over the pixel. */
static void check_tile_pages(const char *path)
{
	struct vfb_geom g;
	make_file(path, VFB_TILED, &g);
	CHECK(g.tiles_x == 7 && g.tiles_y == 4 && g.file_size == VFB_PAGE * (1 + 28),
	      "tiled geometry %ux%u tiles, %zu bytes", g.tiles_x, g.tiles_y, g.file_size);
	struct writer_proc w = start_writer(path);
	struct vfb_source src;
	char why[256];
	CHECK(vfb_source_open_file(&src, path, why, sizeof(why)) == 0, "open: %s", why);
	uint8_t *before = malloc(g.pixel_bytes);
	struct vfb_marks k;
	vfb_marks_init(&k, W, H);
	int checked = 0;
	for (int i = 0; i < 20; i++) {
		uint32_t x = (uint32_t)(i * 37) % W, y = (uint32_t)(i * 53) % H;
		memcpy(before, vfb_source_pixels(&src), g.pixel_bytes);
		step(&w, (char)('a' + i));
		size_t changed = SIZE_MAX;
		int n_changed = 0;
		for (size_t p = 0; p < g.pixel_bytes / VFB_PAGE; p++) {
			if (memcmp(before + p * VFB_PAGE, vfb_source_pixels(&src) + p * VFB_PAGE,
			           VFB_PAGE) != 0) {
				changed = p;
				n_changed++;
			}
		}
		size_t expect = (size_t)(y / VFB_TILE) * g.tiles_x + x / VFB_TILE;
		CHECK(n_changed == 1 && changed == expect && vfb_pixel_page(&g, x, y) == expect,
		      "pixel %u,%u: %d pages changed, page %zu, its tile %zu, vfb_pixel_page %zu", x,
		      y, n_changed, changed, expect, vfb_pixel_page(&g, x, y));
		vfb_marks_clear(&k);
		vfb_marks_page(&k, &g, expect);
		CHECK(k.m[(size_t)y * k.cols + x / VFB_STRIP], "page %zu maps back over %u,%u",
		      expect, x, y);
		checked++;
	}
	printf("check: tiled: the tile of each of %d pixels is the one page that changed\n",
	       checked);
	free(before);
	vfb_marks_fini(&k);
	vfb_source_close(&src);
	stop_writer(&w);
}

int main(void)
{
	char path[] = "/dev/shm/duet-test-vfb-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	static const char *methods[] = { "compare", "softdirty", "uffd-wp", "damage" };
	for (int l = 0; l < 2; l++)
		for (int i = 0; i < 4; i++)
			check_method(methods[i], path, (enum vfb_layout)l);
	check_tile_pages(path);
	unlink(path);
	return unit_finish("test-vfb-detect");
}
