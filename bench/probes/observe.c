/* duet-observe: watches a framebuffer file and reports when a colour first
 * appears on it, independently of the display server that draws it.
 *
 * The file is the screen as a display device sees it: Xvfb's -fbdir file
 * (an XWD image the server draws into) or duet-compositor's --vfb file
 * in its linear layout ("DUETVFB2", compositor/backend/headless/vfb-layout.h; the older
 * "DUETVFB1", pixels at byte 64, is still read). Both are mapped
 * read-only and polled on a fixed grid of --interval-us with
 * clock_nanosleep; a poll looks for a horizontal run of >= --run pixels of
 * the colour. The servers' own claims (trace events, presentation times)
 * are what this checks, so it uses none of them.
 *
 * Output, JSON lines on stdout (CLOCK_MONOTONIC ns, as render/trace.c):
 *   {"name":"observer_ready","ns":..}  polling, and the colour is absent
 *   {"name":"seen","ns":..,"x":..,"y":..,"absent_ns":..}  first poll that
 *       found it (by ns), and the last poll that did not (absent_ns)
 *   {"name":"observer_done","ns":..,"polls":N,"cpu_ns":..}
 * done comes after seen (unless --keep) or on SIGTERM/SIGINT; exit 0.
 *
 * Size mode (--sizes any|WxH,...) looks instead for duet-resize's size
 * tag (clients/resize.c, "size tags"): at the top-left of its window a
 * 32x8 block of magenta (255,0,255), then an 8x8 code cell whose colour is
 * (W & 255, H & 255, (W >> 8) << 4 | H >> 8) and an 8x8 check cell of the
 * complement (255 - each channel); at the bottom-right corner the code and
 * check cells again. A tag is visible when its top-left part is on screen
 * and valid and, if the window's bottom-right corner is on screen, the
 * bottom-right cells say the same size (the whole window was drawn).
 *   {"name":"observer_ready","ns":..,"mode":"sizes",..,"visible":N}
 *   {"name":"seen","ns":..,"width":W,"height":H,"absent_ns":..,"x":..,"y":..,
 *       "whole":true|false[,"clipped":"right|bottom|right,bottom"],..}
 *       a tag of W x H that the previous poll did not see (any), or the
 *       next size of the list when it so appears (the list repeats)
 * It polls until SIGTERM/SIGINT (or --timeout-ms: exit 0 if it saw any).
 *
 * On a KMS display (--drm CARD instead of --fb) it reads what the card
 * scans out, as a display would (drm-scanout.h): each poll asks the card
 * for its active CRTC's framebuffer and maps it again when that changed
 * (a page flip); as root, never as DRM master. Its observer_ready line
 * then says how it maps the buffers ("map":"dma-buf"|"dumb") and its
 * observer_done line how many framebuffers it mapped ("remaps"). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef DUET_HAVE_LIBDRM
#include "drm-scanout.h"
#endif
#include "jsonl.h"

static const char usage[] =
	"Usage: duet-observe --fb PATH --rgb R,G,B [OPTIONS]\n"
	"       duet-observe --fb PATH --sizes any|WxH,WxH,... [OPTIONS]\n"
	"       duet-observe --drm CARD (--rgb R,G,B | --sizes ...) [OPTIONS]\n"
	"\n"
	"Polls the framebuffer file PATH (Xvfb -fbdir's XWD file, or duet-compositor\n"
	"--vfb's DUETVFB2 file, linear layout) for a horizontal run of pixels of colour R,G,B\n"
	"(0..255 each) and prints JSON lines: observer_ready (polling, colour absent;\n"
	"if it is present at start, once it has gone), seen (first poll that found\n"
	"it), observer_done (polls, own CPU time) after seen or on SIGTERM/SIGINT.\n"
	"PATH may appear, grow or be truncated while it is watched.\n"
	"--drm CARD (/dev/dri/cardN) reads the buffer the card scans out instead,\n"
	"following page flips (root only; it never becomes DRM master).\n"
	"\n"
	"Options:\n"
	"  --run N            pixels in the run (default 32, at least 2)\n"
	"  --interval-us U    poll period in microseconds (default 1000)\n"
	"  --timeout-ms T     give up after T ms without seeing it (exit 1)\n"
	"  --keep             keep polling after seen; report gone/seen changes\n"
	"  --sizes any|WxH,.. size mode instead of a colour (no --rgb): report when\n"
	"                     duet-resize's size tag of a new size appears (any), or\n"
	"                     of each listed size in order, the list repeating; polls\n"
	"                     until stopped (--timeout-ms: then exit 1 if none seen)\n"
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0 seen or stopped by a signal, 1 timeout, 2 usage or a file\n"
	"that is not a supported framebuffer.\n";

#define ROW_STEP 8      /* rows scanned per poll: every 8th */
#define XWD_HEADER_MIN 100
#define XWD_COLOR_SIZE 12
#define VFB_HEADER_SIZE 64
#define VFB2_HEADER_SIZE 4096
/* How long a header may stay unreadable before that is an error. */
#define BAD_HEADER_NS 1000000000u

/* duet-resize's size tag (clients/resize.c): keep the two in step. */
#define TAG_MAGIC_W 32  /* the magenta block: a run the sparse scan finds */
#define TAG_CELL 8      /* code and check cells, and the tag's height */
#define TAG_W (TAG_MAGIC_W + 2 * TAG_CELL)
#define MAX_SIZES 64
#define MAX_TAGS 16

struct options {
	const char *path;          /* the file, or the card with --drm */
	bool drm;
	uint8_t r, g, b;
	int run;
	long interval_us;
	long timeout_ms;
	bool keep;
	bool size_mode;            /* --sizes */
	int n_sizes;               /* 0: any */
	uint32_t sizes[MAX_SIZES][2];
};

/* A mapped framebuffer: pixels are 32-bit words compared under a mask. */
struct fb {
	int fd;
	dev_t dev;
	ino_t ino;
	const uint8_t *map;
	size_t map_size;
	const char *kind;          /* "xwd" or "duetvfb" */
	uint32_t width, height, stride;
	size_t pixel_offset;
	uint32_t want, mask;       /* a pixel word matches when (word & mask) == want */
	uint32_t chan[3];          /* r, g, b masks of a pixel word read natively, */
	bool swap;                 /* after swapping its bytes if set */
	const uint64_t *frame;     /* DUETVFB1's frame counter, NULL for XWD */
};

static volatile sig_atomic_t stop_signal;
static sigjmp_buf bus_jump;
static volatile sig_atomic_t bus_armed;

static void on_stop(int sig)
{
	stop_signal = sig;
}

/* The file shrank under the mapping between our size check and the read. */
static void on_bus(int sig)
{
	if (bus_armed)
		siglongjmp(bus_jump, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ------------------------------------------------------------ formats */

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* An 8-bit channel value placed in a contiguous mask (0xff0000 etc.). */
static bool place_channel(uint8_t v, uint32_t mask, uint32_t *out)
{
	if (!mask)
		return false;
	int shift = __builtin_ctz(mask);
	uint32_t bits = mask >> shift;
	if (bits & (bits + 1))
		return false; /* not contiguous */
	int width = 32 - __builtin_clz(bits);
	uint32_t scaled = width >= 8 ? (uint32_t)v << (width - 8) : (uint32_t)v >> (8 - width);
	*out |= scaled << shift;
	return true;
}

/* The colour as a pixel word read natively from memory whose bytes are in
 * the file's order (lsb_first: the least significant byte comes first). */
static int set_colour(struct fb *fb, const struct options *o, uint32_t rmask, uint32_t gmask,
                      uint32_t bmask, bool lsb_first)
{
	uint32_t want = 0;
	if (!place_channel(o->r, rmask, &want) || !place_channel(o->g, gmask, &want) ||
	    !place_channel(o->b, bmask, &want))
		return -1;
	uint32_t mask = rmask | gmask | bmask;
	bool host_lsb = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	fb->chan[0] = rmask;
	fb->chan[1] = gmask;
	fb->chan[2] = bmask;
	fb->swap = lsb_first != host_lsb;
	if (lsb_first != host_lsb) {
		want = __builtin_bswap32(want);
		mask = __builtin_bswap32(mask);
	}
	fb->want = want;
	fb->mask = mask;
	return 0;
}

/* More fields for the ready and done lines (--drm), or "". */
static char ready_extra[PATH_MAX + 64], done_extra[48];

/* Why the file's header is not one we can read, kept until the problem has
 * lasted long enough to be more than a header being written. */
static char bad_header[256];

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(bad_header, sizeof(bad_header), fmt, ap);
	va_end(ap);
	return -2;
}

/* Returns 0 when the header describes a framebuffer the file holds whole,
 * 1 when the file is not ready yet (being created or growing), -2 (with
 * bad_header set) when the header is not one we can read: Xvfb fills and
 * byte-swaps its header in place after creating the file, so that may
 * still change, and only a lasting -2 is an error. */
static int parse_header(struct fb *fb, const struct options *o, const uint8_t *p, size_t size)
{
	if (size < 8)
		return 1;
	bool v2 = memcmp(p, "DUETVFB2", 8) == 0;
	if (v2 || memcmp(p, "DUETVFB1", 8) == 0) {
		if (size < (v2 ? VFB2_HEADER_SIZE : VFB_HEADER_SIZE))
			return 1;
		uint32_t v[4];
		memcpy(v, p + 8, sizeof(v));
		if (v[3] != 0) {
			return bad("%s: DUETVFB format %u is unknown", o->path, v[3]);
		}
		fb->kind = "duetvfb";
		fb->width = v[0];
		fb->height = v[1];
		fb->stride = v[2];
		fb->pixel_offset = VFB_HEADER_SIZE;
		if (v2) {
			uint32_t layout_offset[2]; /* layout, pixel offset (vfb-layout.h) */
			memcpy(layout_offset, p + 40, sizeof(layout_offset));
			if (layout_offset[0] != 0)
				return bad("%s: a tiled DUETVFB2 file: only the linear layout is "
				           "read here (duet-vfb-reader reads both)", o->path);
			fb->pixel_offset = layout_offset[1];
		}
		fb->frame = (const uint64_t *)(const void *)(p + 24);
		if (set_colour(fb, o, 0xff0000, 0xff00, 0xff, true) != 0)
			return bad("%s: cannot place the colour in XRGB8888", o->path);
	} else {
		if (size < XWD_HEADER_MIN)
			return 1;
		/* XWD headers are written big-endian; accept a little-endian one
		 * too, told apart by the version field (7). */
		uint32_t (*rd)(const uint8_t *) = be32(p + 4) == 7 ? be32 : le32(p + 4) == 7 ? le32 : NULL;
		if (!rd) {
			/* Zeros: Xvfb has created the file but not written it yet. */
			static const uint8_t zero[8];
			if (memcmp(p, zero, 8) == 0)
				return 1;
			return bad("%s is neither an XWD (version 7) nor a DUETVFB file", o->path);
		}
		uint32_t header_size = rd(p + 0), format = rd(p + 8), depth = rd(p + 12);
		uint32_t byte_order = rd(p + 28), bpp = rd(p + 44);
		uint32_t rmask = rd(p + 56), gmask = rd(p + 60), bmask = rd(p + 64);
		uint32_t ncolors = rd(p + 76);
		fb->width = rd(p + 16);
		fb->height = rd(p + 20);
		fb->stride = rd(p + 48);
		/* Xvfb writes the visual's masks only when it installs the
		 * default colormap, a moment after the rest of the header. */
		if (!rmask || !gmask || !bmask)
			return 1;
		if (format != 2 /* ZPixmap */ || bpp != 32 || depth < 24 || header_size < XWD_HEADER_MIN) {
			return bad("%s: XWD of format %u, depth %u, %u bits per pixel: only 32-bit "
			           "ZPixmap (Xvfb -screen 0 WxHx24) is supported", o->path, format, depth,
			           bpp);
		}
		fb->kind = "xwd";
		fb->pixel_offset = (size_t)header_size + (size_t)ncolors * XWD_COLOR_SIZE;
		fb->frame = NULL;
		if (set_colour(fb, o, rmask, gmask, bmask, byte_order == 0 /* LSBFirst */) != 0) {
			return bad("%s: unusable colour masks %#x %#x %#x", o->path, rmask, gmask,
			           bmask);
		}
	}
	if (fb->width == 0 || fb->height == 0 || fb->stride < fb->width * 4 ||
	    fb->width > 65536 || fb->height > 65536) {
		return bad("%s: bad geometry %ux%u, stride %u", o->path, fb->width, fb->height,
		           fb->stride);
	}
	if (size < fb->pixel_offset + (size_t)fb->stride * fb->height)
		return 1; /* still growing */
	return 0;
}

#ifdef DUET_HAVE_LIBDRM
/* --drm: the card's scanout; fb's map is its map. */
static struct drm_scanout drm = { .fd = -1 };

/* As fb_attach: 0 mapped, 1 nothing scanned out yet, -1 an error. */
static int drm_attach(struct fb *fb, const struct options *o)
{
	char why[256];
	if (drm.fd < 0 && drm_scanout_open(&drm, o->path, why, sizeof(why)) != 0) {
		fprintf(stderr, "duet-observe: %s\n", why);
		return -1;
	}
	bool changed;
	int r = drm_scanout_update(&drm, &changed, why, sizeof(why));
	if (r < 0)
		fprintf(stderr, "duet-observe: %s: %s\n", o->path, why);
	if (r != 0)
		return r;
	fb->kind = "drm";
	fb->map = drm.map;
	fb->map_size = drm.map_len;
	fb->pixel_offset = drm.offset;
	fb->width = drm.width;
	fb->height = drm.height;
	fb->stride = drm.pitch;
	fb->frame = NULL;
	snprintf(ready_extra, sizeof(ready_extra), ",\"map\":\"%s\",\"card\":\"%s\"", drm.how,
	         o->path);
	/* DRM formats are little-endian words. */
	if (set_colour(fb, o, drm.bgr ? 0xff : 0xff0000, 0xff00, drm.bgr ? 0xff0000 : 0xff,
	               true) != 0) {
		fprintf(stderr, "duet-observe: cannot place the colour\n");
		return -1;
	}
	return 0;
}
#endif

static void fb_detach(struct fb *fb)
{
#ifdef DUET_HAVE_LIBDRM
	if (fb->kind && strcmp(fb->kind, "drm") == 0) {
		drm_scanout_unmap(&drm);
		fb->map = NULL;
		return;
	}
#endif
	if (fb->map)
		munmap((void *)fb->map, fb->map_size);
	if (fb->fd >= 0)
		close(fb->fd);
	fb->map = NULL;
	fb->frame = NULL;
	fb->fd = -1;
}

/* Maps the file as it is now. Same return values as parse_header, and -1
 * (with a message) when the file cannot be opened or mapped at all. */
static int fb_attach(struct fb *fb, const struct options *o)
{
#ifdef DUET_HAVE_LIBDRM
	if (o->drm)
		return drm_attach(fb, o);
#endif
	fb->fd = open(o->path, O_RDONLY | O_CLOEXEC);
	if (fb->fd < 0) {
		if (errno == ENOENT)
			return 1;
		fprintf(stderr, "duet-observe: %s: %s\n", o->path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fb->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "duet-observe: %s: not a regular file\n", o->path);
		fb_detach(fb);
		return -1;
	}
	if (st.st_size < 8) {
		fb_detach(fb);
		return 1;
	}
	fb->dev = st.st_dev;
	fb->ino = st.st_ino;
	fb->map_size = (size_t)st.st_size;
	void *map = mmap(NULL, fb->map_size, PROT_READ, MAP_SHARED, fb->fd, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "duet-observe: %s: mmap: %s\n", o->path, strerror(errno));
		fb_detach(fb);
		return -1;
	}
	fb->map = map;
	int r;
	bus_armed = 1;
	if (sigsetjmp(bus_jump, 1) == 0)
		r = parse_header(fb, o, fb->map, fb->map_size);
	else
		r = 1; /* truncated while we read the header */
	bus_armed = 0;
	if (r != 0)
		fb_detach(fb);
	return r;
}

/* The mapping still covers the whole file as it was parsed: the file was
 * not replaced, truncated or grown (Xvfb writes it at start; a new server
 * on the same path recreates it). Otherwise map it again. */
static bool fb_still_valid(struct fb *fb, const struct options *o)
{
#ifdef DUET_HAVE_LIBDRM
	if (o->drm)
		return drm_scanout_current(&drm) == drm.fb_id; /* else flipped: map the new one */
#endif
	struct stat st;
	if (fstat(fb->fd, &st) != 0 || (size_t)st.st_size != fb->map_size)
		return false;
	struct stat path_st;
	if (stat(o->path, &path_st) != 0 || path_st.st_ino != fb->ino || path_st.st_dev != fb->dev)
		return false;
	return true;
}

/* ---------------------------------------------------------------- scan */

/* Looks for a horizontal run of >= run matching pixels. Only every
 * ROW_STEP-th row is read, and in it every run-th pixel: run consecutive
 * pixels always hold one such sample, and a sample that matches is then
 * grown left and right to check the run. At 1080p with run 32 a poll reads
 * 135 rows x 60 samples, each in its own cache line. */
static bool scan(const struct fb *fb, int run, uint32_t *at_x, uint32_t *at_y)
{
	const uint32_t want = fb->want, mask = fb->mask;
	uint32_t step = (uint32_t)run;
	for (uint32_t y = 0; y < fb->height; y += ROW_STEP) {
		const uint32_t *row = (const uint32_t *)(const void *)
			(fb->map + fb->pixel_offset + (size_t)y * fb->stride);
		for (uint32_t x = 0; x < fb->width; x += step) {
			if ((row[x] & mask) != want)
				continue;
			uint32_t left = x, right = x + 1;
			while (left > 0 && (row[left - 1] & mask) == want)
				left--;
			while (right < fb->width && (row[right] & mask) == want)
				right++;
			if (right - left >= (uint32_t)run) {
				*at_x = left;
				*at_y = y;
				return true;
			}
			/* The next sample past this too-short run. */
			x = right - right % step;
		}
	}
	return false;
}

/* scan() that survives the file being truncated under the mapping:
 * 1 found, 0 not found, -1 the mapping lost its pages (SIGBUS). */
static int guarded_scan(const struct fb *fb, int run, uint32_t *at_x, uint32_t *at_y)
{
	int r;
	bus_armed = 1;
	if (sigsetjmp(bus_jump, 1) == 0)
		r = scan(fb, run, at_x, at_y);
	else
		r = -1;
	bus_armed = 0;
	return r;
}

/* ------------------------------------------------------- size tags */

struct tag {
	uint32_t x, y, width, height;
	bool whole;       /* the bottom-right cells were checked too */
	bool off_right, off_bottom;
};

static uint32_t pixel(const struct fb *fb, uint32_t x, uint32_t y)
{
	return ((const uint32_t *)(const void *)(fb->map + fb->pixel_offset +
	                                         (size_t)y * fb->stride))[x];
}

static bool magic_at(const struct fb *fb, uint32_t x, uint32_t y)
{
	return (pixel(fb, x, y) & fb->mask) == fb->want;
}

/* The 8-bit channels of the pixel at x, y (channels of other widths are
 * scaled to 8 bits). */
static uint32_t rgb_at(const struct fb *fb, uint32_t x, uint32_t y)
{
	uint32_t word = pixel(fb, x, y), out = 0;
	if (fb->swap)
		word = __builtin_bswap32(word);
	for (int i = 0; i < 3; i++) {
		uint32_t m = fb->chan[i];
		int shift = __builtin_ctz(m);
		int width = 32 - __builtin_clz(m >> shift);
		uint32_t v = (word & m) >> shift;
		v = width >= 8 ? v >> (width - 8) : v << (8 - width);
		out = out << 8 | (v & 0xff);
	}
	return out;
}

/* The size a code cell and its check cell (at x, y and x + TAG_CELL, their
 * top-left corners) tell, read at the cells' centres; false if they are not
 * a code and its complement. */
static bool read_cells(const struct fb *fb, uint32_t x, uint32_t y, uint32_t *w, uint32_t *h)
{
	uint32_t code = rgb_at(fb, x + TAG_CELL / 2, y + TAG_CELL / 2);
	uint32_t check = rgb_at(fb, x + TAG_CELL + TAG_CELL / 2, y + TAG_CELL / 2);
	if ((code ^ check) != 0xffffff)
		return false;
	uint32_t r = code >> 16, g = (code >> 8) & 0xff, b = code & 0xff;
	*w = r | (b >> 4) << 8;
	*h = g | (b & 15) << 8;
	return true;
}

/* A tag whose magenta block has a run of exactly TAG_MAGIC_W pixels from
 * x = left on row y: its top-left corner is the block's, 8 rows tall. */
static bool read_tag(const struct fb *fb, uint32_t left, uint32_t y, struct tag *t)
{
	uint32_t top = y, bottom = y;
	while (top > 0 && y - top < TAG_CELL && magic_at(fb, left, top - 1))
		top--;
	while (bottom + 1 < fb->height && bottom - top < TAG_CELL && magic_at(fb, left, bottom + 1))
		bottom++;
	if (bottom - top + 1 != TAG_CELL || left + TAG_W > fb->width)
		return false; /* clipped at the screen's top or right, or no tag */
	if (!magic_at(fb, left + TAG_MAGIC_W - 1, top) || !magic_at(fb, left + TAG_MAGIC_W - 1, bottom))
		return false;
	uint32_t w, h;
	if (!read_cells(fb, left + TAG_MAGIC_W, top, &w, &h) || w < TAG_W || h < 2 * TAG_CELL)
		return false;
	*t = (struct tag){ .x = left, .y = top, .width = w, .height = h };
	t->off_right = (uint64_t)left + w > fb->width;
	t->off_bottom = (uint64_t)top + h > fb->height;
	if (!t->off_right && !t->off_bottom) {
		/* The bottom-right cells: the window was drawn whole. */
		uint32_t bw, bh;
		if (!read_cells(fb, left + w - 2 * TAG_CELL, top + h - TAG_CELL, &bw, &bh) ||
		    bw != w || bh != h)
			return false;
		t->whole = true;
	}
	return true;
}

/* Every visible tag, by the sparse scan of scan(): a tag's block is
 * TAG_CELL rows tall and TAG_MAGIC_W wide, so one scanned row and one
 * sample in it always fall in it. Returns how many (at most max). */
static int scan_tags(const struct fb *fb, struct tag *out, int max)
{
	const uint32_t step = TAG_MAGIC_W;
	int n = 0;
	for (uint32_t y = 0; y < fb->height; y += ROW_STEP) {
		const uint32_t *row = (const uint32_t *)(const void *)
			(fb->map + fb->pixel_offset + (size_t)y * fb->stride);
		for (uint32_t x = 0; x < fb->width; x += step) {
			if ((row[x] & fb->mask) != fb->want)
				continue;
			uint32_t left = x, right = x + 1;
			while (left > 0 && (row[left - 1] & fb->mask) == fb->want)
				left--;
			while (right < fb->width && (row[right] & fb->mask) == fb->want)
				right++;
			struct tag t;
			if (right - left == TAG_MAGIC_W && n < max && read_tag(fb, left, y, &t)) {
				bool dup = false;
				for (int i = 0; i < n; i++)
					dup |= out[i].x == t.x && out[i].y == t.y;
				if (!dup)
					out[n++] = t;
			}
			x = right - right % step;
		}
	}
	return n;
}

/* scan_tags() that survives truncation: the count, or -1 (SIGBUS). */
static int guarded_scan_tags(const struct fb *fb, struct tag *out, int max)
{
	int r;
	bus_armed = 1;
	if (sigsetjmp(bus_jump, 1) == 0)
		r = scan_tags(fb, out, max);
	else
		r = -1;
	bus_armed = 0;
	return r;
}

/* The tags of this poll against the last poll's: reports each tag of a
 * size the last poll did not see (any), or the next listed size when it
 * so appears. absent_ns: the end of the last poll. Returns how many were
 * reported. */
static int report_tags(const struct options *o, const struct tag *cur, int n,
                       const struct tag *prev, int n_prev, int *next_size, uint64_t t,
                       uint64_t absent_ns, uint64_t poll_ns, uint64_t polls)
{
	int reported = 0;
	for (int i = 0; i < n; i++) {
		bool old = false;
		for (int j = 0; j < n_prev; j++)
			old |= prev[j].width == cur[i].width && prev[j].height == cur[i].height;
		if (old)
			continue;
		if (o->n_sizes) {
			if (cur[i].width != o->sizes[*next_size][0] ||
			    cur[i].height != o->sizes[*next_size][1])
				continue;
			*next_size = (*next_size + 1) % o->n_sizes;
		}
		const struct tag *g = &cur[i];
		emit("{\"name\":\"seen\",\"ns\":%" PRIu64 ",\"width\":%u,\"height\":%u,"
		     "\"absent_ns\":%" PRIu64 ",\"x\":%u,\"y\":%u,\"whole\":%s%s%s%s%s,"
		     "\"poll_ns\":%" PRIu64 ",\"polls\":%" PRIu64 "}",
		     t, g->width, g->height, absent_ns, g->x, g->y, g->whole ? "true" : "false",
		     g->whole ? "" : ",\"clipped\":\"", g->off_right ? "right" : "",
		     g->off_right && g->off_bottom ? "," : "",
		     g->whole ? "" : g->off_bottom ? "bottom\"" : "\"", poll_ns, polls);
		reported++;
	}
	return reported;
}

/* --------------------------------------------------------------- main */

static bool parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static bool parse_rgb(const char *s, struct options *o)
{
	long v[3];
	const char *p = s;
	for (int i = 0; i < 3; i++) {
		char *end;
		errno = 0;
		v[i] = strtol(p, &end, 10);
		if (end == p || errno || v[i] < 0 || v[i] > 255)
			return false;
		if (i < 2 && *end != ',')
			return false;
		if (i == 2 && *end)
			return false;
		p = end + 1;
	}
	o->r = (uint8_t)v[0];
	o->g = (uint8_t)v[1];
	o->b = (uint8_t)v[2];
	return true;
}

/* "any", or "WxH,WxH,..." (1..65535 each, at most MAX_SIZES). */
static bool parse_sizes(const char *s, struct options *o)
{
	o->size_mode = true;
	o->n_sizes = 0;
	if (strcmp(s, "any") == 0)
		return true;
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		unsigned long w = strtoul(p, &end, 10);
		if (end == p || *end != 'x' || errno || w < 1 || w > 65535 || *p == '-')
			return false;
		p = end + 1;
		unsigned long h = strtoul(p, &end, 10);
		if (end == p || errno || h < 1 || h > 65535 || *p == '-')
			return false;
		if (o->n_sizes == MAX_SIZES)
			return false;
		o->sizes[o->n_sizes][0] = (uint32_t)w;
		o->sizes[o->n_sizes][1] = (uint32_t)h;
		o->n_sizes++;
		if (*end == ',' && end[1])
			p = end + 1;
		else if (*end)
			return false;
		else
			p = end;
	}
	return o->n_sizes > 0;
}

static int bad_usage(const char *what, const char *arg)
{
	fprintf(stderr, "duet-observe: %s '%s'\nTry 'duet-observe --help'.\n", what, arg);
	return 2;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	bool have_rgb = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		long n;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage, stdout);
			return 0;
		} else if (strcmp(a, "--keep") == 0) {
			o->keep = true;
			continue;
		}
		if (!v)
			return bad_usage("missing value or unknown option", a);
		i++;
		if (strcmp(a, "--fb") == 0 || strcmp(a, "--drm") == 0) {
			if (!*v || o->path)
				return bad_usage("bad or second --fb / --drm", v);
			o->path = v;
			o->drm = a[2] == 'd';
#ifndef DUET_HAVE_LIBDRM
			if (o->drm) {
				fprintf(stderr, "duet-observe: --drm: built without libdrm\n");
				return 2;
			}
#endif
		} else if (strcmp(a, "--rgb") == 0) {
			if (!parse_rgb(v, o))
				return bad_usage("bad --rgb (want R,G,B, each 0..255)", v);
			have_rgb = true;
		} else if (strcmp(a, "--sizes") == 0) {
			if (!parse_sizes(v, o))
				return bad_usage("bad --sizes (want any, or WxH,WxH,... at most 64)", v);
		} else if (strcmp(a, "--run") == 0) {
			if (!parse_long(v, 2, 65536, &n))
				return bad_usage("bad --run (want 2..65536)", v);
			o->run = (int)n;
		} else if (strcmp(a, "--interval-us") == 0) {
			if (!parse_long(v, 1, 10000000, &n))
				return bad_usage("bad --interval-us (want 1..10000000)", v);
			o->interval_us = n;
		} else if (strcmp(a, "--timeout-ms") == 0) {
			if (!parse_long(v, 1, LONG_MAX / 1000000, &n))
				return bad_usage("bad --timeout-ms", v);
			o->timeout_ms = n;
		} else {
			return bad_usage("unknown option", a);
		}
	}
	if (o->size_mode && have_rgb) {
		fprintf(stderr, "duet-observe: --sizes and --rgb exclude each other\n"
		        "Try 'duet-observe --help'.\n");
		return 2;
	}
	if (!o->path || (!have_rgb && !o->size_mode)) {
		fprintf(stderr, "duet-observe: --fb (or --drm) and --rgb (or --sizes) are required\n"
		        "Try 'duet-observe --help'.\n");
		return 2;
	}
	if (o->size_mode) {
		/* The tag's block: the colour the sparse scan looks for. */
		o->r = 255;
		o->g = 0;
		o->b = 255;
		o->keep = true;
	}
	return -1;
}

static void sleep_until(uint64_t t_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(t_ns / 1000000000u),
	                       .tv_nsec = (long)(t_ns % 1000000000u) };
	/* EINTR: a stop signal; the loop looks at it. */
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

int main(int argc, char **argv)
{
	struct options o = { .run = 32, .interval_us = 1000 };
	int status = parse_args(argc, argv, &o);
	if (status >= 0)
		return status;

	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	struct sigaction bus = { .sa_handler = on_bus, .sa_flags = SA_NODEFER };
	sigemptyset(&bus.sa_mask);
	sigaction(SIGBUS, &bus, NULL);
	/* Wake-ups as close to the grid as the kernel allows (default slack
	 * is 50 us), so the poll period is what was asked. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

	struct fb fb = { .fd = -1 };
	const uint64_t interval = (uint64_t)o.interval_us * 1000u;
	const uint64_t start = now_ns();
	const uint64_t deadline = o.timeout_ms ? start + (uint64_t)o.timeout_ms * 1000000u : 0;
	uint64_t polls = 0, next = start, scanned_frame = UINT64_MAX;
	uint64_t bad_since = 0; /* when the header first could not be read, 0: it can */
	uint64_t absent_ns = 0; /* the last time a poll found the colour absent */
	bool ready = false, present = false, seen = false, waiting_reported = false;
	struct tag prev_tags[MAX_TAGS]; /* size mode: the tags of the last scan */
	int n_prev = 0, next_size = 0;
	uint64_t seen_count = 0;
	int exit_status = 0;

	while (!stop_signal) {
		uint64_t poll_ns = now_ns();
		if (deadline && poll_ns >= deadline && o.size_mode) {
			if (!seen) {
				fprintf(stderr, "duet-observe: %s: no size tag%s seen in %ld ms\n", o.path,
				        o.n_sizes ? " of the listed sizes" : "", o.timeout_ms);
				exit_status = 1;
			}
			break;
		}
		if (deadline && poll_ns >= deadline && !seen) {
			fprintf(stderr, "duet-observe: %s: colour %u,%u,%u %s after %ld ms%s%s\n",
			        o.path, o.r, o.g, o.b, !fb.map ? "(framebuffer never readable)"
			        : ready ? "not seen" : "never absent", o.timeout_ms,
			        bad_since ? ": " : "", bad_since ? bad_header : "");
			exit_status = 1;
			break;
		}
		polls++;
		if (fb.map && !fb_still_valid(&fb, &o)) {
			fb_detach(&fb);
			scanned_frame = UINT64_MAX;
		}
		if (!fb.map) {
			int r = fb_attach(&fb, &o);
			if (r == -1) {
				exit_status = 2;
				break;
			}
			if (r == -2 && !bad_since)
				bad_since = poll_ns;
			else if (r != -2)
				bad_since = 0;
			if (r == -2 && poll_ns - bad_since >= BAD_HEADER_NS) {
				fprintf(stderr, "duet-observe: %s\n", bad_header);
				exit_status = 2;
				break;
			}
			if (r != 0 && !waiting_reported) {
				fprintf(stderr, "duet-observe: waiting for %s to become a framebuffer\n",
				        o.path);
				waiting_reported = true;
			}
		}
		if (fb.map) {
			/* duet-compositor's counter says whether anything was drawn
			 * since the last scan; unchanged pixels need no new look. */
			uint64_t frame = fb.frame ? __atomic_load_n(fb.frame, __ATOMIC_ACQUIRE)
			                          : UINT64_MAX - 1;
			if (!o.size_mode && fb.frame && frame == scanned_frame && !present)
				absent_ns = poll_ns; /* same pixels as the last scan: still absent */
			if (o.size_mode && fb.frame && frame == scanned_frame)
				absent_ns = poll_ns; /* unchanged: nothing new since the last scan */
			if (o.size_mode && (!fb.frame || frame != scanned_frame)) {
				struct tag cur[MAX_TAGS];
				int n = guarded_scan_tags(&fb, cur, MAX_TAGS);
				scanned_frame = frame;
				uint64_t t = now_ns();
				if (n < 0) {
					fb_detach(&fb); /* truncated under us: map it again */
					scanned_frame = UINT64_MAX;
				} else {
					if (!ready) {
						ready = true;
						emit("{\"name\":\"observer_ready\",\"ns\":%" PRIu64 ",\"mode\":"
						     "\"sizes\",\"format\":\"%s\",\"width\":%u,\"height\":%u,"
						     "\"interval_us\":%ld,\"visible\":%d%s}",
						     t, fb.kind, fb.width, fb.height, o.interval_us, n,
						     ready_extra);
					} else {
						seen_count += report_tags(&o, cur, n, prev_tags, n_prev,
						                          &next_size, t, absent_ns, poll_ns,
						                          polls);
						seen = seen_count > 0;
					}
					memcpy(prev_tags, cur, sizeof(cur[0]) * (size_t)n);
					n_prev = n;
					absent_ns = t;
				}
			} else if (!o.size_mode && (!fb.frame || frame != scanned_frame)) {
				uint32_t x = 0, y = 0;
				int r = guarded_scan(&fb, o.run, &x, &y);
				bool found = r > 0;
				scanned_frame = frame;
				if (r < 0) {
					fb_detach(&fb); /* truncated under us: map it again */
					scanned_frame = UINT64_MAX;
				}
				uint64_t t = now_ns();
				if (fb.map && !found)
					absent_ns = t;
				if (fb.map && !ready && !found) {
					ready = true;
					emit("{\"name\":\"observer_ready\",\"ns\":%" PRIu64 ",\"format\":\"%s\","
					     "\"width\":%u,\"height\":%u,\"interval_us\":%ld,\"run\":%d%s}",
					     t, fb.kind, fb.width, fb.height, o.interval_us, o.run,
					     ready_extra);
				} else if (fb.map && ready && found != present) {
					present = found;
					if (found) {
						/* The pixels appeared after absent_ns (the
						 * last poll without them) and by ns. */
						char extra[48] = "";
						if (fb.frame)
							snprintf(extra, sizeof(extra), ",\"frame\":%" PRIu64, frame);
						emit("{\"name\":\"seen\",\"ns\":%" PRIu64 ",\"x\":%u,\"y\":%u,"
						     "\"absent_ns\":%" PRIu64 ",\"poll_ns\":%" PRIu64 ","
						     "\"polls\":%" PRIu64 "%s}",
						     t, x, y, absent_ns, poll_ns, polls, extra);
						seen = true;
						if (!o.keep)
							break;
					} else {
						emit("{\"name\":\"gone\",\"ns\":%" PRIu64 "}", t);
					}
				}
			}
		}
		next += interval;
		uint64_t now = now_ns();
		if (next <= now)
			next = now + interval; /* late: skip the missed slots, no burst */
		sleep_until(next);
	}

	uint64_t end = now_ns();
#ifdef DUET_HAVE_LIBDRM
	if (o.drm)
		snprintf(done_extra, sizeof(done_extra), ",\"remaps\":%u", drm.remaps);
#endif
	char sizes_extra[48] = "";
	if (o.size_mode)
		snprintf(sizes_extra, sizeof(sizes_extra), ",\"mode\":\"sizes\",\"reported\":%" PRIu64,
		         seen_count);
	emit("{\"name\":\"observer_done\",\"ns\":%" PRIu64 ",\"polls\":%" PRIu64 ",\"cpu_ns\":%" PRIu64
	     ",\"wall_ns\":%" PRIu64 ",\"seen\":%s,\"ready\":%s%s%s%s}",
	     end, polls, cpu_ns(), end - start, seen ? "true" : "false", ready ? "true" : "false",
	     exit_status == 1 ? ",\"timeout\":true" : "", sizes_extra, done_extra);
	fb_detach(&fb);
#ifdef DUET_HAVE_LIBDRM
	drm_scanout_close(&drm);
#endif
	return exit_status;
}
