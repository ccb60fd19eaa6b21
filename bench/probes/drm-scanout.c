/* Following a KMS card's scanout from outside (drm-scanout.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <drm_fourcc.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "drm-scanout.h"
#include "why.h"

int drm_scanout_open(struct drm_scanout *s, const char *card, char *why, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->fd = open(card, O_RDWR | O_CLOEXEC);
	if (s->fd < 0)
		return fail(why, len, "%s: %s", card, strerror(errno));
	/* The first opener of a card without a master becomes its master;
	 * the server that drives the card must be able to take it. */
	if (drmIsMaster(s->fd) && drmDropMaster(s->fd) != 0) {
		int err = errno;
		drm_scanout_close(s);
		return fail(why, len, "%s: opened as DRM master and cannot drop it: %s", card,
		            strerror(err));
	}
	drmModeResPtr res = drmModeGetResources(s->fd);
	if (!res) {
		int err = errno;
		drm_scanout_close(s);
		return fail(why, len, "%s: not a KMS device (%s)", card, strerror(err));
	}
	drmModeFreeResources(res);
	return 0;
}

void drm_scanout_unmap(struct drm_scanout *s)
{
	if (s->map)
		munmap((void *)s->map, s->map_len);
	s->map = NULL;
	s->fb_id = 0;
}

void drm_scanout_close(struct drm_scanout *s)
{
	drm_scanout_unmap(s);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* The framebuffer on crtc_id, 0 if it shows none (or is gone). */
static uint32_t crtc_fb(int fd, uint32_t crtc_id)
{
	drmModeCrtcPtr c = drmModeGetCrtc(fd, crtc_id);
	if (!c)
		return 0;
	uint32_t fb = c->mode_valid ? c->buffer_id : 0;
	drmModeFreeCrtc(c);
	return fb;
}

/* The first CRTC that scans something out: its id, and its fb in *fb. */
static uint32_t find_crtc(int fd, uint32_t *fb)
{
	drmModeResPtr res = drmModeGetResources(fd);
	uint32_t found = 0;
	for (int i = 0; res && i < res->count_crtcs && !found; i++) {
		*fb = crtc_fb(fd, res->crtcs[i]);
		if (*fb)
			found = res->crtcs[i];
	}
	drmModeFreeResources(res);
	return found;
}

static void close_handles(int fd, const drmModeFB2 *fb)
{
	for (int i = 0; i < 4; i++) {
		bool dup = false;
		for (int j = 0; j < i; j++)
			dup |= fb->handles[j] == fb->handles[i];
		if (fb->handles[i] && !dup)
			drmCloseBufferHandle(fd, fb->handles[i]);
	}
}

/* Maps framebuffer fb_id: 0, 1 (gone meanwhile: look again next poll) or
 * -1 with why. */
static int map_fb(struct drm_scanout *s, uint32_t fb_id, char *why, size_t len)
{
	drmModeFB2Ptr fb = drmModeGetFB2(s->fd, fb_id);
	if (!fb)
		return errno == ENOENT ? 1 : fail(why, len, "GETFB2 %u: %s", fb_id, strerror(errno));
	int r = 0;
	if (!fb->handles[0]) {
		r = fail(why, len, "framebuffer %u: the kernel gave no buffer handle (reading "
		         "another process's scanout needs root: CAP_SYS_ADMIN)", fb_id);
		goto out;
	}
	switch (fb->pixel_format) {
	case DRM_FORMAT_XRGB8888: case DRM_FORMAT_ARGB8888:
	case DRM_FORMAT_XBGR8888: case DRM_FORMAT_ABGR8888:
		break;
	default:
		r = fail(why, len, "framebuffer %u: format %.4s: only 32-bit RGB is read", fb_id,
		         (const char *)&fb->pixel_format);
		goto out;
	}
	if ((fb->flags & DRM_MODE_FB_MODIFIERS) && fb->modifier != DRM_FORMAT_MOD_LINEAR) {
		r = fail(why, len, "framebuffer %u: modifier %#llx: only linear buffers are read",
		         fb_id, (unsigned long long)fb->modifier);
		goto out;
	}
	size_t need = (size_t)fb->offsets[0] + (size_t)fb->pitches[0] * fb->height;
	void *map = MAP_FAILED;
	const char *how = "dma-buf";
	int dmabuf = -1;
	if (drmPrimeHandleToFD(s->fd, fb->handles[0], DRM_CLOEXEC, &dmabuf) == 0) {
		map = mmap(NULL, need, PROT_READ, MAP_SHARED, dmabuf, 0);
		close(dmabuf);
	}
	if (map == MAP_FAILED) {
		/* Drivers whose dma-bufs cannot be mapped: the dumb-buffer way,
		 * which works for the shmem-backed buffers of virtio-gpu, vkms. */
		struct drm_mode_map_dumb md = { .handle = fb->handles[0] };
		how = "dumb";
		if (drmIoctl(s->fd, DRM_IOCTL_MODE_MAP_DUMB, &md) == 0)
			map = mmap(NULL, need, PROT_READ, MAP_SHARED, s->fd, (off_t)md.offset);
	}
	if (map == MAP_FAILED) {
		r = fail(why, len, "framebuffer %u: cannot map its buffer (neither as a dma-buf nor "
		         "as a dumb buffer): %s", fb_id, strerror(errno));
		goto out;
	}
	s->map = map;
	s->map_len = need;
	s->offset = fb->offsets[0];
	s->width = fb->width;
	s->height = fb->height;
	s->pitch = fb->pitches[0];
	s->format = fb->pixel_format;
	s->bgr = fb->pixel_format == DRM_FORMAT_XBGR8888 || fb->pixel_format == DRM_FORMAT_ABGR8888;
	s->fb_id = fb_id;
	s->how = how;
	s->remaps++;
out:
	/* The mapping holds the buffer; the handles would leak it. */
	close_handles(s->fd, fb);
	drmModeFreeFB2(fb);
	return r;
}

uint32_t drm_scanout_current(struct drm_scanout *s)
{
	return s->crtc_id ? crtc_fb(s->fd, s->crtc_id) : 0;
}

int drm_scanout_update(struct drm_scanout *s, bool *changed, char *why, size_t len)
{
	*changed = false;
	uint32_t fb = drm_scanout_current(s);
	if (!fb)
		s->crtc_id = find_crtc(s->fd, &fb);
	if (!fb) {
		drm_scanout_unmap(s);
		return 1;
	}
	if (fb == s->fb_id && s->map)
		return 0;
	drm_scanout_unmap(s);
	int r = map_fb(s, fb, why, len);
	*changed = r == 0;
	return r;
}
