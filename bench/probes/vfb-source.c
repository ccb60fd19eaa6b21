/* Attaching to a framebuffer (vfb-source.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "vfb-source.h"
#include "why.h"

#define XWD_HEADER_MIN 100
#define XWD_COLOR_SIZE 12

int vfb_source_open_file(struct vfb_source *src, const char *path, char *why, size_t len)
{
	memset(src, 0, sizeof(*src));
	src->shmid = -1;
	src->path = path;
	src->what = "duetvfb";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(why, len, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || (size_t)st.st_size < VFB_PAGE) {
		close(fd);
		return fail(why, len, "%s: shorter than its header page", path);
	}
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return fail(why, len, "%s: mmap: %s", path, strerror(errno));
	src->map = map;
	src->map_len = (size_t)st.st_size;
	const struct vfb_header *h = map;
	if (memcmp(h->magic, VFB_MAGIC, 8) != 0) {
		vfb_source_close(src);
		return fail(why, len, "%s: not a %s file (an older compositor, or not ready)", path,
		            VFB_MAGIC);
	}
	if (h->format != VFB_FORMAT_XRGB8888 || h->layout > VFB_TILED || h->pixel_offset != VFB_PAGE) {
		vfb_source_close(src);
		return fail(why, len, "%s: format %u, layout %u, pixels at %u: unknown", path,
		            h->format, h->layout, h->pixel_offset);
	}
	vfb_geometry(&src->geom, (enum vfb_layout)h->layout, h->width, h->height);
	if (src->geom.file_size > src->map_len || src->geom.stride != h->stride) {
		vfb_source_close(src);
		return fail(why, len, "%s: %ux%u does not match its size %zu or stride %u", path,
		            h->width, h->height, src->map_len, h->stride);
	}
	src->hdr = h;
	src->pixel_offset = VFB_PAGE;
	return 0;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

int vfb_source_open_shm(struct vfb_source *src, int shmid, char *why, size_t len)
{
	memset(src, 0, sizeof(*src));
	src->shmid = shmid;
	src->what = "xvfb-shm";
	struct shmid_ds ds;
	if (shmctl(shmid, IPC_STAT, &ds) != 0)
		return fail(why, len, "shmid %d: %s", shmid, strerror(errno));
	void *map = shmat(shmid, NULL, SHM_RDONLY);
	if (map == (void *)-1)
		return fail(why, len, "shmat %d: %s", shmid, strerror(errno));
	src->map = map;
	src->map_len = ds.shm_segsz;
	const uint8_t *p = map;
	/* Xvfb writes its XWD header in its own byte order; version 7 tells. */
	uint32_t (*rd)(const uint8_t *) = be32(p + 4) == 7 ? be32 : le32(p + 4) == 7 ? le32 : NULL;
	if (src->map_len < XWD_HEADER_MIN || !rd) {
		vfb_source_close(src);
		return fail(why, len, "shmid %d: not an XWD image (Xvfb -shmem)", shmid);
	}
	uint32_t header_size = rd(p + 0), format = rd(p + 8), bpp = rd(p + 44);
	uint32_t width = rd(p + 16), height = rd(p + 20), stride = rd(p + 48);
	uint32_t ncolors = rd(p + 76);
	if (format != 2 || bpp != 32 || stride < width * 4) {
		vfb_source_close(src);
		return fail(why, len, "shmid %d: XWD format %u, %u bits per pixel: only 32-bit "
		            "ZPixmap (Xvfb -screen 0 WxHx24)", shmid, format, bpp);
	}
	vfb_geometry(&src->geom, VFB_LINEAR, width, height);
	src->geom.stride = stride;
	src->geom.pixel_bytes = (size_t)stride * height;
	src->pixel_offset = (size_t)header_size + (size_t)ncolors * XWD_COLOR_SIZE;
	if (src->pixel_offset + src->geom.pixel_bytes > src->map_len) {
		vfb_source_close(src);
		return fail(why, len, "shmid %d: %ux%u does not fit its %zu bytes", shmid, width,
		            height, src->map_len);
	}
	return 0;
}

void vfb_source_close(struct vfb_source *src)
{
	if (src->map && src->shmid >= 0)
		shmdt(src->map);
	else if (src->map)
		munmap(src->map, src->map_len);
	src->map = NULL;
}

uint64_t vfb_source_frame(const struct vfb_source *src)
{
	return src->hdr ? __atomic_load_n(&src->hdr->frame, __ATOMIC_ACQUIRE) : 0;
}

int vfb_source_find_in(const struct vfb_source *src, pid_t pid, uintptr_t *pixels_at, char *why,
                       size_t len)
{
	struct stat st;
	if (src->path && stat(src->path, &st) != 0)
		return fail(why, len, "%s: %s", src->path, strerror(errno));
	char name[64];
	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(name, "re");
	if (!f)
		return fail(why, len, "%s: %s", name, strerror(errno));
	char line[512];
	int found = -1;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t start, end;
		unsigned long long off, ino;
		unsigned maj, min;
		int path_at = 0;
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %llx %x:%x %llu %n", &start, &end,
		           &off, &maj, &min, &ino, &path_at) < 6)
			continue;
		bool match;
		if (src->path) {
			match = ino == (unsigned long long)st.st_ino && maj == major(st.st_dev) &&
			        min == minor(st.st_dev);
		} else {
			/* A SysV segment shows as /SYSV<key> with the shmid as inode. */
			match = path_at && strncmp(line + path_at, "/SYSV", 5) == 0 &&
			        ino == (unsigned long long)src->shmid;
		}
		if (match && off <= src->pixel_offset &&
		    end - start >= src->pixel_offset - off + src->geom.pixel_bytes) {
			*pixels_at = start + (src->pixel_offset - (uintptr_t)off);
			found = 0;
			break;
		}
	}
	fclose(f);
	if (found != 0)
		return fail(why, len, "no whole mapping of the framebuffer in %s", name);
	return 0;
}
