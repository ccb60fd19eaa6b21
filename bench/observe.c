/* duet-observe: watches a framebuffer file and reports when a colour first
 * appears on it, independently of the display server that draws it.
 *
 * The file is the screen as a display device sees it: Xvfb's -fbdir file
 * (an XWD image the server draws into) or duet-compositor's --vfb file
 * ("DUETVFB1", see compositor/backend-headless.c). Both are mapped
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
 * done comes after seen (unless --keep) or on SIGTERM/SIGINT; exit 0. */
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

static const char usage[] =
	"Usage: duet-observe --fb PATH --rgb R,G,B [OPTIONS]\n"
	"\n"
	"Polls the framebuffer file PATH (Xvfb -fbdir's XWD file, or duet-compositor\n"
	"--vfb's DUETVFB1 file) for a horizontal run of pixels of colour R,G,B\n"
	"(0..255 each) and prints JSON lines: observer_ready (polling, colour absent;\n"
	"if it is present at start, once it has gone), seen (first poll that found\n"
	"it), observer_done (polls, own CPU time) after seen or on SIGTERM/SIGINT.\n"
	"PATH may appear, grow or be truncated while it is watched.\n"
	"\n"
	"Options:\n"
	"  --run N            pixels in the run (default 32, at least 2)\n"
	"  --interval-us U    poll period in microseconds (default 1000)\n"
	"  --timeout-ms T     give up after T ms without seeing it (exit 1)\n"
	"  --keep             keep polling after seen; report gone/seen changes\n"
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0 seen or stopped by a signal, 1 timeout, 2 usage or a file\n"
	"that is not a supported framebuffer.\n";

#define ROW_STEP 8      /* rows scanned per poll: every 8th */
#define XWD_HEADER_MIN 100
#define XWD_COLOR_SIZE 12
#define VFB_HEADER_SIZE 64
/* How long a header may stay unreadable before that is an error. */
#define BAD_HEADER_NS 1000000000u

struct options {
	const char *path;
	uint8_t r, g, b;
	int run;
	long interval_us;
	long timeout_ms;
	bool keep;
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

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	/* A pipe to the bench: each line must leave at once, it is a timestamp. */
	fflush(stdout);
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
	if (lsb_first != host_lsb) {
		want = __builtin_bswap32(want);
		mask = __builtin_bswap32(mask);
	}
	fb->want = want;
	fb->mask = mask;
	return 0;
}

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
	if (memcmp(p, "DUETVFB1", 8) == 0) {
		if (size < VFB_HEADER_SIZE)
			return 1;
		uint32_t v[4];
		memcpy(v, p + 8, sizeof(v));
		if (v[3] != 0) {
			return bad("%s: DUETVFB1 format %u is unknown", o->path, v[3]);
		}
		fb->kind = "duetvfb";
		fb->width = v[0];
		fb->height = v[1];
		fb->stride = v[2];
		fb->pixel_offset = VFB_HEADER_SIZE;
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
			return bad("%s is neither an XWD (version 7) nor a DUETVFB1 file", o->path);
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

static void fb_detach(struct fb *fb)
{
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
		if (strcmp(a, "--fb") == 0) {
			if (!*v)
				return bad_usage("bad --fb", v);
			o->path = v;
		} else if (strcmp(a, "--rgb") == 0) {
			if (!parse_rgb(v, o))
				return bad_usage("bad --rgb (want R,G,B, each 0..255)", v);
			have_rgb = true;
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
	if (!o->path || !have_rgb) {
		fprintf(stderr, "duet-observe: --fb and --rgb are required\n"
		        "Try 'duet-observe --help'.\n");
		return 2;
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
	int exit_status = 0;

	while (!stop_signal) {
		uint64_t poll_ns = now_ns();
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
			if (fb.frame && frame == scanned_frame && !present)
				absent_ns = poll_ns; /* same pixels as the last scan: still absent */
			if (!fb.frame || frame != scanned_frame) {
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
					     "\"width\":%u,\"height\":%u,\"interval_us\":%ld,\"run\":%d}",
					     t, fb.kind, fb.width, fb.height, o.interval_us, o.run);
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
	emit("{\"name\":\"observer_done\",\"ns\":%" PRIu64 ",\"polls\":%" PRIu64 ",\"cpu_ns\":%" PRIu64
	     ",\"wall_ns\":%" PRIu64 ",\"seen\":%s,\"ready\":%s%s}",
	     end, polls, cpu_ns(), end - start, seen ? "true" : "false", ready ? "true" : "false",
	     exit_status == 1 ? ",\"timeout\":true" : "");
	fb_detach(&fb);
	return exit_status;
}
