/* What duet-vfb-reader reads: duet-compositor's --vfb file (either layout,
 * compositor/backend/headless/vfb-layout.h) or Xvfb's -shmem framebuffer (an XWD image in a
 * SysV shared-memory segment, linear rows), mapped read-only. */
#ifndef DUET_VFB_SOURCE_H
#define DUET_VFB_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vfb-layout.h"

struct vfb_source {
	const char *what;              /* "duetvfb" or "xvfb-shm" */
	struct vfb_geom geom;          /* layout, size, stride of the pixels */
	uint8_t *map;                  /* the whole file or segment */
	size_t map_len;
	size_t pixel_offset;           /* from map to the pixels */
	const struct vfb_header *hdr;  /* DUETVFB2 only: counter and damage */
	const char *path;              /* the file, NULL for a segment */
	int shmid;                     /* the segment, -1 for a file */
	const char *display;           /* Xvfb's X display, for X's own damage, or NULL */
};

/* 0, or -1 with why filled. */
int vfb_source_open_file(struct vfb_source *src, const char *path, char *why, size_t len);
int vfb_source_open_shm(struct vfb_source *src, int shmid, char *why, size_t len);
void vfb_source_close(struct vfb_source *src);

static inline const uint8_t *vfb_source_pixels(const struct vfb_source *src)
{
	return src->map + src->pixel_offset;
}

/* The frame counter, or 0 where the source has none (Xvfb). */
uint64_t vfb_source_frame(const struct vfb_source *src);

/* The address where process pid maps the source's pixel area, found in
 * /proc/PID/maps (by the file's device and inode, or by the segment's
 * shmid); 0, or -1 with why. */
int vfb_source_find_in(const struct vfb_source *src, pid_t pid, uintptr_t *pixels_at, char *why,
                       size_t len);

#endif
