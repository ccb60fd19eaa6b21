/* duet-vfb-reader: finds what changed in a framebuffer each frame, by one
 * method, and says what that cost; the bench's vfb experiment
 * (bench/duet_bench/vfb.py) runs one per method.
 *
 * Sources: duet-compositor's --vfb file (--vfb PATH; linear or tiled,
 * compositor/backend/headless/vfb-layout.h), whose frame counter says when a frame is
 * complete and whose header carries the compositor's own damage; or Xvfb's
 * -shmem framebuffer (--shmid ID), linear, with no frame counter: there
 * every poll is a frame, and the truth is X's own damage (the Damage
 * extension on the root window, --display, where built: vfb-xdamage.c),
 * what arrived before the look. Methods (vfb-method.h): compare,
 * softdirty (needs --pid of the writer), uffd-wp, damage.
 *
 * Output, JSON lines on stdout (ns: CLOCK_MONOTONIC):
 *   {"name":"vfb_methods",..}  with --probe: each method's availability
 *   {"name":"vfb_unavailable","method":..,"reason":..}  exit 3
 *   {"name":"vfb_reader_ready",..}  attached, method open
 *   {"name":"vfb_frame","frame":..,"writer_frames":..,"detect_ns":..,
 *    "detect_cpu_ns":..,"bytes_read":..,"detected":..,"damage":..,"hit":..,
 *    "raced":..}  per frame (a writer frame, or several the writer made
 *    since the last look; strips of 32x1 pixels: vfb-marks.h)
 *   {"name":"vfb_done",..}  totals: frames, writer fps, reader CPU,
 *    precision and recall over the frames that did not race the writer
 * It reads until --duration-ms has passed or SIGTERM/SIGINT. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vfb-method.h"
#ifdef DUET_HAVE_XDAMAGE
#include "vfb-xdamage.h"
#endif

#define EXIT_UNAVAILABLE 3

struct vfb_xdamage; /* vfb-xdamage.h, where built */

static const char usage[] =
	"Usage: duet-vfb-reader (--vfb PATH | --shmid ID) --method NAME [OPTIONS]\n"
	"       duet-vfb-reader (--vfb PATH | --shmid ID) --probe [--pid PID]\n"
	"\n"
	"Finds the changed regions of a framebuffer each frame and prints JSON lines\n"
	"(see the top of bench/probes/vfb-reader.c). Methods: compare, softdirty, uffd-wp,\n"
	"damage.\n"
	"\n"
	"  --vfb PATH         duet-compositor's --vfb file (DUETVFB2, either layout)\n"
	"  --shmid ID         Xvfb -shmem's framebuffer segment (screen 0 shmid ID)\n"
	"  --pid PID          the writing process (softdirty needs it)\n"
	"  --display DISPLAY  Xvfb's display, for X's own damage (with --shmid)\n"
	"  --method NAME      compare | softdirty | uffd-wp | damage\n"
	"  --probe            print which methods work here, and why not, then exit\n"
	"  --duration-ms MS   read this long (default 2000)\n"
	"  --interval-us U    poll period (default 500; with --shmid every poll is a frame)\n"
	"  --quiet            no vfb_frame lines\n"
	"\n"
	"Exit status: 0 done, 1 runtime failure, 2 usage, 3 method unavailable.\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void unavailable(const char *method, const char *why)
{
	printf("{\"name\":\"vfb_unavailable\",\"ns\":%" PRIu64 ",\"method\":\"%s\",\"reason\":",
	       clock_ns(CLOCK_MONOTONIC), method);
	json_string(why);
	printf("}\n");
	fflush(stdout);
}

static int probe_all(const struct vfb_source *src, pid_t pid)
{
	static const char *names[] = { "compare", "softdirty", "uffd-wp", "damage" };
	printf("{\"name\":\"vfb_methods\",\"source\":\"%s\",\"layout\":\"%s\",\"methods\":{",
	       src->what, vfb_layout_name(src->geom.layout));
	for (size_t i = 0; i < 4; i++) {
		struct vfb_method m = { .ops = vfb_method_find(names[i]) };
		char why[1024] = "";
		bool ok = m.ops->open(&m, src, pid, why, sizeof(why)) == 0;
		if (ok)
			m.ops->close(&m);
		printf("%s\"%s\":{\"available\":%s", i ? "," : "", names[i], ok ? "true" : "false");
		if (!ok) {
			printf(",\"reason\":");
			json_string(why);
		}
		printf("}");
	}
	printf("}}\n");
	return 0;
}

struct totals {
	uint64_t frames, raced, detected, damage, hit, bytes, detect_ns, detect_cpu_ns;
};

/* One look checked against a truth (the compositor's damage or X's): a
 * look that raced the writer counts apart, as its truth may not be all. */
static void tally(struct totals *t, bool raced, uint64_t detected, uint64_t damage,
                  uint64_t hit)
{
	if (raced) {
		t->raced++;
		return;
	}
	t->detected += detected;
	t->damage += damage;
	t->hit += hit;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !stop)
		;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "vfb", required_argument, NULL, 'f' },
		{ "shmid", required_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'p' },
		{ "display", required_argument, NULL, 'D' },
		{ "method", required_argument, NULL, 'm' },
		{ "probe", no_argument, NULL, 'P' },
		{ "duration-ms", required_argument, NULL, 'd' },
		{ "interval-us", required_argument, NULL, 'i' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *path = NULL, *method = NULL, *display = NULL;
	long shmid = -1, pid = 0, duration_ms = 2000, interval_us = 500;
	bool probe = false, quiet = false;
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		long *num = c == 's' ? &shmid : c == 'p' ? &pid : c == 'd' ? &duration_ms :
		            c == 'i' ? &interval_us : NULL;
		if (num) {
			errno = 0;
			*num = strtol(optarg, &end, 10);
			if (errno || *end || *num < 0 || *num > 2000000000) {
				fprintf(stderr, "duet-vfb-reader: bad number '%s'\n%s", optarg, usage);
				return 2;
			}
			continue;
		}
		switch (c) {
		case 'f': path = optarg; break;
		case 'D': display = optarg; break;
		case 'm': method = optarg; break;
		case 'P': probe = true; break;
		case 'q': quiet = true; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind < argc || !path == (shmid < 0) || (!method && !probe) ||
	    (method && !vfb_method_find(method)) || interval_us < 1) {
		fputs(usage, stderr);
		return 2;
	}
	struct vfb_source src;
	char why[1024];
	if ((path ? vfb_source_open_file(&src, path, why, sizeof(why))
	          : vfb_source_open_shm(&src, (int)shmid, why, sizeof(why))) != 0) {
		fprintf(stderr, "duet-vfb-reader: %s\n", why);
		return 1;
	}
	src.display = display;
	if (probe) {
		probe_all(&src, (pid_t)pid);
		vfb_source_close(&src);
		return 0;
	}
	/* Xvfb: X's own damage as the truth, on a connection of its own,
	 * opened before the method takes its first look (compare's copy). */
	bool counted = src.hdr != NULL;
	struct vfb_xdamage *xtruth = NULL;
	char xwhy[512] = "";
#ifdef DUET_HAVE_XDAMAGE
	bool prev_raced = false;
	if (!counted && display)
		xtruth = vfb_xdamage_open(display, xwhy, sizeof(xwhy));
#else
	snprintf(xwhy, sizeof(xwhy), "built without xcb-damage");
#endif
	struct vfb_method m = { .ops = vfb_method_find(method) };
	if (m.ops->open(&m, &src, (pid_t)pid, why, sizeof(why)) != 0) {
#ifdef DUET_HAVE_XDAMAGE
		vfb_xdamage_close(xtruth);
#endif
		unavailable(method, why);
		vfb_source_close(&src);
		return EXIT_UNAVAILABLE;
	}
	struct vfb_marks found, truth;
	if (vfb_marks_init(&found, src.geom.width, src.geom.height) != 0 ||
	    vfb_marks_init(&truth, src.geom.width, src.geom.height) != 0) {
		fprintf(stderr, "duet-vfb-reader: out of memory\n");
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	uint64_t start = clock_ns(CLOCK_MONOTONIC), cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	uint64_t until = start + (uint64_t)duration_ms * 1000000u;
	uint64_t first = vfb_source_frame(&src), seen = first;
	printf("{\"name\":\"vfb_reader_ready\",\"ns\":%" PRIu64 ",\"source\":\"%s\",\"layout\":"
	       "\"%s\",\"method\":\"%s\",\"width\":%u,\"height\":%u,\"strips\":%" PRIu64
	       ",\"frame\":%" PRIu64 ",\"truth\":\"%s\"", start, src.what,
	       vfb_layout_name(src.geom.layout), method, src.geom.width, src.geom.height,
	       (uint64_t)found.cols * found.rows, first,
	       counted ? "the compositor's damage records" : xtruth ? "X Damage events on the root"
	                                                           : "none");
	if (!counted && !xtruth) {
		printf(",\"no_truth\":");
		json_string(xwhy[0] ? xwhy : "no --display");
	}
	printf("}\n");
	fflush(stdout);
	struct totals t = { 0 };
	while (!stop && clock_ns(CLOCK_MONOTONIC) < until) {
		uint64_t now = vfb_source_frame(&src);
		if (counted && now == seen) {
			sleep_ns((uint64_t)interval_us * 1000u);
			continue;
		}
		vfb_marks_clear(&found);
#ifdef DUET_HAVE_XDAMAGE
		if (xtruth) {
			/* What X reported before the look is what the look should find. */
			vfb_marks_clear(&truth);
			vfb_xdamage_drain(xtruth, &truth);
		}
#endif
		uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t0 = clock_ns(CLOCK_MONOTONIC);
		uint64_t bytes = m.ops->detect(&m, &src, &found, seen, now);
		uint64_t t1 = clock_ns(CLOCK_MONOTONIC), c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		uint64_t after = vfb_source_frame(&src);
		uint64_t detected = vfb_marks_count(&found);
		t.frames++;
		t.bytes += bytes;
		t.detect_ns += t1 - t0;
		t.detect_cpu_ns += c1 - c0;
		if (!quiet)
			printf("{\"name\":\"vfb_frame\",\"ns\":%" PRIu64 ",\"frame\":%" PRIu64
			       ",\"detect_ns\":%" PRIu64 ",\"detect_cpu_ns\":%" PRIu64
			       ",\"bytes_read\":%" PRIu64 ",\"detected\":%" PRIu64,
			       t1, now, t1 - t0, c1 - c0, bytes, detected);
		if (counted) {
			/* The truth: the compositor's damage of every frame up to the
			 * one complete after detection; a frame that completed during
			 * detection makes the sample race the writer. */
			uint64_t dbytes = 0;
			vfb_marks_clear(&truth);
			uint64_t lost = vfb_damage_marks(&src, &truth, seen, after, &dbytes);
			bool raced = after != now;
			uint64_t damage = vfb_marks_count(&truth), hit = vfb_marks_both(&found, &truth);
			tally(&t, raced || lost, detected, damage, hit);
			if (!quiet) {
				printf(",\"writer_frames\":%" PRIu64 ",\"raced\":%s", now - seen,
				       raced ? "true" : "false");
				if (lost)
					printf(",\"damage\":null,\"lost\":%" PRIu64, lost);
				else
					printf(",\"damage\":%" PRIu64 ",\"hit\":%" PRIu64, damage, hit);
			}
			seen = after;
		}
#ifdef DUET_HAVE_XDAMAGE
		if (xtruth) {
			/* Damage that arrived during the look may be half seen now and
			 * half next time: both looks race the writer. */
			bool raced = vfb_xdamage_pending(xtruth);
			uint64_t damage = vfb_marks_count(&truth), hit = vfb_marks_both(&found, &truth);
			tally(&t, raced || prev_raced, detected, damage, hit);
			prev_raced = raced;
			if (!quiet)
				printf(",\"raced\":%s,\"damage\":%" PRIu64 ",\"hit\":%" PRIu64,
				       raced ? "true" : "false", damage, hit);
		}
#endif
		if (!quiet)
			printf("}\n");
		if (!counted)
			sleep_ns((uint64_t)interval_us * 1000u);
	}
	uint64_t wall = clock_ns(CLOCK_MONOTONIC) - start;
	uint64_t cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	uint64_t last = vfb_source_frame(&src);
	printf("{\"name\":\"vfb_done\",\"ns\":%" PRIu64 ",\"method\":\"%s\",\"layout\":\"%s\","
	       "\"source\":\"%s\",\"frames\":%" PRIu64 ",\"wall_ns\":%" PRIu64 ",\"cpu_ns\":%" PRIu64
	       ",\"detect_ns\":%" PRIu64 ",\"detect_cpu_ns\":%" PRIu64 ",\"bytes_read\":%" PRIu64,
	       clock_ns(CLOCK_MONOTONIC), method, vfb_layout_name(src.geom.layout), src.what,
	       t.frames, wall, cpu, t.detect_ns, t.detect_cpu_ns, t.bytes);
	if (counted)
		printf(",\"writer_frames\":%" PRIu64 ",\"writer_fps\":%.3f", last - first,
		       (double)(last - first) * 1e9 / (double)wall);
	if (counted || xtruth) {
		printf(",\"raced\":%" PRIu64 ",\"detected\":%" PRIu64 ",\"damage\":%" PRIu64
		       ",\"hit\":%" PRIu64, t.raced, t.detected, t.damage, t.hit);
		if (t.detected)
			printf(",\"precision\":%.6f", (double)t.hit / (double)t.detected);
		if (t.damage)
			printf(",\"recall\":%.6f", (double)t.hit / (double)t.damage);
		if (m.lost)
			printf(",\"lost\":%" PRIu64, m.lost);
	}
	printf("}\n");
	m.ops->close(&m);
#ifdef DUET_HAVE_XDAMAGE
	vfb_xdamage_close(xtruth);
#endif
	vfb_marks_fini(&found);
	vfb_marks_fini(&truth);
	vfb_source_close(&src);
	return 0;
}
