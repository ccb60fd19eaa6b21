/* uffd-wp: userfaultfd write protection. A userfaultfd belongs to the
 * process that made it, and UFFDIO_WRITEPROTECT marks that process's own
 * page-table entries; a write through another process's mapping of the
 * same shmem or file page never meets those entries. The compositor
 * writes the framebuffer in its own process, so the reader could only see
 * its writes if the compositor itself registered the range, i.e. told us
 * what it wrote: the damage method. open() therefore probes what this
 * kernel does, with a shmem page mapped here, write-protected with
 * UFFD_FEATURE_WP_ASYNC (faults resolved by the kernel, the protection bit
 * readable as bit 57 of /proc/self/pagemap): one write from this process,
 * one from a child process through its own mapping. It reports the method
 * unavailable, with what the probe saw, unless the child's write is
 * caught; detection itself is not implemented past that probe. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vfb-method.h"

/* Newer than some distributions' headers (Linux 6.4 and 6.7). */
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#define PM_UFFD_WP (1ull << 57)

static uint64_t pagemap_of(const void *p)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (pread(fd, &e, 8, (off_t)((uintptr_t)p / VFB_PAGE * 8)) != 8)
			e = 0;
		close(fd);
	}
	return e;
}

static int protect(int uffd, void *p, int on)
{
	struct uffdio_writeprotect wp = {
		.range = { .start = (uintptr_t)p, .len = VFB_PAGE },
		.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};
	return ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
}

/* Fills why with what the probe found; returns 1 if another process's
 * write was caught, 0 if not, -1 if the probe could not run. */
static int probe(char *why, size_t len)
{
	struct utsname u;
	uname(&u);
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0) {
		snprintf(why, len, "userfaultfd(): %s (kernel %s; /proc/sys/vm/"
		         "unprivileged_userfaultfd=0 needs CAP_SYS_PTRACE)", strerror(errno),
		         u.release);
		return -1;
	}
	struct uffdio_api api = { .api = UFFD_API,
	                          .features = UFFD_FEATURE_WP_HUGETLBFS_SHMEM |
	                                      UFFD_FEATURE_WP_UNPOPULATED | UFFD_FEATURE_WP_ASYNC };
	if (ioctl(uffd, UFFDIO_API, &api) != 0) {
		snprintf(why, len, "UFFDIO_API with WP_HUGETLBFS_SHMEM, WP_UNPOPULATED and WP_ASYNC: "
		         "%s (kernel %s; shmem write protection needs 5.19, asynchronous 6.7)",
		         strerror(errno), u.release);
		close(uffd);
		return -1;
	}
	int rc = -1;
	int fd = memfd_create("duet-uffd-probe", MFD_CLOEXEC);
	volatile uint8_t *p = MAP_FAILED;
	if (fd < 0 || ftruncate(fd, VFB_PAGE) != 0 ||
	    (p = mmap(NULL, VFB_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		snprintf(why, len, "a shmem page for the probe: %s", strerror(errno));
		goto out;
	}
	p[0] = 0;
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)p, .len = VFB_PAGE },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0 || protect(uffd, (void *)p, 1) != 0) {
		snprintf(why, len, "UFFDIO_REGISTER/WRITEPROTECT on shmem: %s (kernel %s)",
		         strerror(errno), u.release);
		goto out;
	}
	int own_before = !!(pagemap_of((void *)p) & PM_UFFD_WP);
	p[1] = 1; /* resolved by the kernel (WP_ASYNC), the bit cleared */
	int own_caught = own_before && !(pagemap_of((void *)p) & PM_UFFD_WP);
	protect(uffd, (void *)p, 1);
	pid_t child = fork();
	if (child == 0) {
		uint8_t *q = mmap(NULL, VFB_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (q == MAP_FAILED)
			_exit(1);
		q[2] = 0x5a;
		_exit(0);
	}
	int status = 0;
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		snprintf(why, len, "the probe's writer process failed");
		goto out;
	}
	int landed = p[2] == 0x5a;
	int child_caught = !(pagemap_of((void *)p) & PM_UFFD_WP);
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	int events = poll(&pfd, 1, 0);
	snprintf(why, len,
	         "userfaultfd write-protects the page-table entries of the process that "
	         "registered the range (here the reader), and the writer (compositor or X server) "
	         "writes through its own: probe on kernel %s (WP_HUGETLBFS_SHMEM, WP_UNPOPULATED, WP_ASYNC "
	         "accepted), a shmem page write-protected by the reader: the reader's own write "
	         "%s, another process's write %s (its bytes %s in the reader's view, %s)",
	         u.release, own_caught ? "was caught" : "was not caught",
	         child_caught ? "was caught" : "was not caught", landed ? "arrived" : "did not arrive",
	         events > 0 ? "a fault event queued" : "no fault event");
	rc = child_caught && landed;
out:
	if (p != MAP_FAILED)
		munmap((void *)p, VFB_PAGE);
	if (fd >= 0)
		close(fd);
	close(uffd);
	return rc;
}

static int uffd_open(struct vfb_method *m, const struct vfb_source *src, pid_t writer,
                     char *why, size_t len)
{
	(void)m;
	(void)src;
	(void)writer;
	int r = probe(why, len);
	if (r == 1) {
		size_t used = strlen(why);
		snprintf(why + used, len - used, "; cross-process detection is not implemented");
	}
	return -1;
}

static uint64_t uffd_detect(struct vfb_method *m, const struct vfb_source *src,
                            struct vfb_marks *k, uint64_t seen, uint64_t now)
{
	(void)m;
	(void)src;
	(void)k;
	(void)seen;
	(void)now;
	return 0;
}

static void uffd_close(struct vfb_method *m)
{
	(void)m;
}

const struct vfb_method_ops vfb_uffd_wp_ops = {
	.name = "uffd-wp",
	.open = uffd_open,
	.detect = uffd_detect,
	.close = uffd_close,
};
