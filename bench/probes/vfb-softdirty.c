/* softdirty: the writer's soft-dirty page bits. Writing "4" to
 * /proc/PID/clear_refs write-protects all of the process's pages and
 * clears their soft-dirty bits; the next write to a page faults once and
 * sets the bit again, which /proc/PID/pagemap shows as bit 55. Read for
 * the pages of the writer's mapping of the pixels, they map back to tiles
 * (one page each) or to runs of linear rows. Needs a kernel built with
 * CONFIG_MEM_SOFT_DIRTY and ptrace access to the writer (the same user
 * without Yama restrictions, or CAP_SYS_PTRACE). Writes that land between
 * reading pagemap and clearing are not seen: the method's own race. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vfb-method.h"

#define PM_SOFT_DIRTY (1ull << 55)

struct softdirty {
	int pagemap, clear_refs;
	uintptr_t pixels_at; /* in the writer */
	size_t pages;
	uint64_t *entries;
};

static int clear(int fd)
{
	return pwrite(fd, "4", 1, 0) == 1 ? 0 : -1;
}

/* Whether this kernel keeps soft-dirty bits at all: a page of our own,
 * cleared, written, read back. */
static int kernel_tracks(char *why, size_t len)
{
	long psz = sysconf(_SC_PAGESIZE);
	volatile uint8_t *p = mmap(NULL, (size_t)psz, PROT_READ | PROT_WRITE,
	                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(why, len, "mmap: %s", strerror(errno));
		return -1;
	}
	p[0] = 1;
	int rc = -1;
	int c = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t e = 0;
	if (c < 0 || pm < 0 || clear(c) != 0) {
		snprintf(why, len, "/proc/self/clear_refs or pagemap: %s", strerror(errno));
	} else {
		p[0] = 2;
		if (pread(pm, &e, 8, (off_t)((uintptr_t)p / (uintptr_t)psz * 8)) != 8)
			snprintf(why, len, "/proc/self/pagemap: %s", strerror(errno));
		else if (!(e & PM_SOFT_DIRTY))
			snprintf(why, len, "this kernel keeps no soft-dirty bits (built without "
			         "CONFIG_MEM_SOFT_DIRTY): bit 55 of /proc/self/pagemap stayed 0 for a "
			         "page written after clear_refs=4");
		else
			rc = 0;
	}
	if (c >= 0)
		close(c);
	if (pm >= 0)
		close(pm);
	munmap((void *)p, (size_t)psz);
	return rc;
}

static int softdirty_open(struct vfb_method *m, const struct vfb_source *src, pid_t writer,
                          char *why, size_t len)
{
	if (kernel_tracks(why, len) != 0)
		return -1;
	if (writer <= 0) {
		snprintf(why, len, "needs the writer's PID (--pid)");
		return -1;
	}
	struct softdirty *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	s->pagemap = s->clear_refs = -1;
	if (vfb_source_find_in(src, writer, &s->pixels_at, why, len) != 0)
		goto fail;
	if (s->pixels_at % VFB_PAGE) {
		snprintf(why, len, "the pixels are not page-aligned in process %d", (int)writer);
		goto fail;
	}
	char name[64];
	snprintf(name, sizeof(name), "/proc/%d/pagemap", (int)writer);
	s->pagemap = open(name, O_RDONLY | O_CLOEXEC);
	snprintf(name, sizeof(name), "/proc/%d/clear_refs", (int)writer);
	s->clear_refs = open(name, O_WRONLY | O_CLOEXEC);
	if (s->pagemap < 0 || s->clear_refs < 0) {
		snprintf(why, len, "/proc/%d/pagemap or clear_refs: %s (needs ptrace access to the "
		         "writer)", (int)writer, strerror(errno));
		goto fail;
	}
	s->pages = (src->geom.pixel_bytes + VFB_PAGE - 1) / VFB_PAGE;
	s->entries = calloc(s->pages, sizeof(*s->entries));
	if (!s->entries || clear(s->clear_refs) != 0) {
		snprintf(why, len, "clear_refs of process %d: %s", (int)writer, strerror(errno));
		goto fail;
	}
	m->priv = s;
	return 0;
fail:
	if (s->pagemap >= 0)
		close(s->pagemap);
	if (s->clear_refs >= 0)
		close(s->clear_refs);
	free(s->entries);
	free(s);
	return -1;
}

static uint64_t softdirty_detect(struct vfb_method *m, const struct vfb_source *src,
                                 struct vfb_marks *k, uint64_t seen, uint64_t now)
{
	(void)seen;
	(void)now;
	struct softdirty *s = m->priv;
	size_t want = s->pages * sizeof(*s->entries);
	ssize_t got = pread(s->pagemap, s->entries, want, (off_t)(s->pixels_at / VFB_PAGE * 8));
	if (got != (ssize_t)want) {
		/* The writer is gone or unmapped it: nothing can be known. */
		vfb_marks_rect(k, 0, 0, (int32_t)src->geom.width, (int32_t)src->geom.height);
		return got > 0 ? (uint64_t)got : 0;
	}
	clear(s->clear_refs);
	for (size_t p = 0; p < s->pages; p++)
		if (s->entries[p] & PM_SOFT_DIRTY)
			vfb_marks_page(k, &src->geom, p);
	return want;
}

static void softdirty_close(struct vfb_method *m)
{
	struct softdirty *s = m->priv;
	if (!s)
		return;
	close(s->pagemap);
	close(s->clear_refs);
	free(s->entries);
	free(s);
	m->priv = NULL;
}

const struct vfb_method_ops vfb_softdirty_ops = {
	.name = "softdirty",
	.open = softdirty_open,
	.detect = softdirty_detect,
	.close = softdirty_close,
};
