/* The buffer a KMS card scans out now, mapped read-only from outside the
 * process that drives the card: the counterpart, on a display, of reading
 * Xvfb's -fbdir file (duet-observe --drm). As root only: the framebuffer's
 * GEM handles are given out to the card's master or to CAP_SYS_ADMIN.
 *
 * It never becomes DRM master (a master gained by opening a card that had
 * none is dropped at once) and sets nothing: it only reads the CRTC's
 * current framebuffer id each poll (GETCRTC) and, when that changed
 * (page flips), the new framebuffer (GETFB2), which it maps through a
 * dma-buf (PRIME export) or, where the driver cannot, as a dumb buffer. */
#ifndef DUET_DRM_SCANOUT_H
#define DUET_DRM_SCANOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct drm_scanout {
	int fd;                  /* the card, -1 when closed */
	uint32_t crtc_id;        /* the active CRTC followed, 0 before the first find */
	uint32_t fb_id;          /* the framebuffer mapped, 0 when none */
	const uint8_t *map;      /* the buffer, mapped read-only */
	size_t map_len;
	size_t offset;           /* of the pixels in the map */
	uint32_t width, height, pitch;
	uint32_t format;         /* DRM fourcc: XRGB8888, ARGB8888, XBGR8888 or ABGR8888 */
	bool bgr;                /* XBGR8888 or ABGR8888: red in the low byte of a word */
	const char *how;         /* "dma-buf" or "dumb" */
	unsigned remaps;         /* framebuffers mapped so far */
};

/* Opens the card (not as master). 0, or -1 with why. */
int drm_scanout_open(struct drm_scanout *s, const char *card, char *why, size_t len);

/* Follows the scanout: 0 the current framebuffer is mapped (*changed says
 * whether it is another than at the last call), 1 nothing is scanned out
 * now (no active CRTC, or one without a framebuffer), -1 an error (why):
 * not root, a tiled or non-32-bit buffer, a buffer that cannot be mapped. */
int drm_scanout_update(struct drm_scanout *s, bool *changed, char *why, size_t len);

/* The framebuffer the followed CRTC shows now (one GETCRTC), 0 if none:
 * the map is current while this is s->fb_id. */
uint32_t drm_scanout_current(struct drm_scanout *s);

/* Drops the map; the next update maps the scanout again. */
void drm_scanout_unmap(struct drm_scanout *s);

void drm_scanout_close(struct drm_scanout *s);

#endif
