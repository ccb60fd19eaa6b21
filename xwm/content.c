/* A window's content part: the pixmap Composite keeps it in, named at each
 * map and resize, and the texture the scene samples it from. The texture
 * is the pixmap itself where DRI3 exports it (dri3.c) or where the X
 * server draws the scene (a Picture on it, xrender.c), a texture over the
 * window's own MIT-SHM segment with pixman (fetch.c writes the pixels
 * there, the composite reads them in place), or a texture fetch.c uploads
 * into. All of them count against the texture budgets (--texture-budget,
 * --window-texture-budget): a window that would pass one is not
 * composited. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xcb/composite.h>
#include <xcb/shm.h>

#include "xwm.h"

bool xwm_window_composited(const struct xwm_window *w)
{
	return w->content->node && (w->depth == 24 || w->depth == 32);
}

bool xwm_segment_new(struct xwm_cm *cm, size_t size, const char *name, uint32_t *seg,
                     void **data)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		xwm_log("memfd for %s: %s", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		xwm_log("mmap for %s: %s", name, strerror(errno));
		close(fd);
		return false;
	}
	*seg = xcb_generate_id(cm->wm->conn);
	/* xcb closes the fd once sent. */
	xcb_shm_attach_fd(cm->wm->conn, *seg, fd, 0);
	*data = p;
	return true;
}

/* Any time, even with a ShmGetImage into it in flight: that one writes the
 * server's mapping, the detach comes after it, and the fetch has
 * forgotten the window (xwm_contents_forget_window). */
static void segment_release(struct xwm_content *c)
{
	if (!c->seg_data)
		return;
	xcb_shm_detach(c->cm->wm->conn, c->seg);
	munmap(c->seg_data, c->seg_size);
	c->seg_data = NULL;
	c->seg_size = 0;
	c->seg = 0;
}

/* Only while no fetch is in flight: the server writes where the last
 * frame's uploads read otherwise. */
static bool segment_create(struct xwm_content *c, size_t size)
{
	segment_release(c);
	if (size == 0 || !xwm_segment_new(c->cm, size, "duet-xwm-window", &c->seg, &c->seg_data))
		return false;
	c->seg_size = size;
	return true;
}

void xwm_content_drop_texture(struct xwm_window *w)
{
	struct xwm_content *c = w->content;

	if (c->texture)
		render_texture_destroy(c->texture);
	c->texture = NULL;
	segment_release(c);
	c->cm->texture_bytes -= c->texture_bytes;
	c->texture_bytes = 0;
}

/* With pixman and MIT-SHM: a texture that is the window's own shared
 * segment, which the fetch's ShmGetImage writes into and the composite
 * reads in place (fetch.c), so no copy is made in duet-xwm. NULL where
 * that cannot be (GL, no MIT-SHM 1.2, no memory): the caller uploads. */
static struct render_texture *create_shared_texture(struct xwm_content *c,
                                                    enum render_format format, int pw, int ph)
{
	struct xwm_cm *cm = c->cm;

	if (!cm->has_shm_fd || !render_texture_wrap_supported(cm->renderer) ||
	    !segment_create(c, (size_t)pw * (size_t)ph * 4))
		return NULL;
	struct render_texture *tex = render_texture_create_wrapped(cm->renderer, pw, ph,
		c->seg_data, pw * 4, format == RENDER_FORMAT_ARGB8888);
	if (!tex)
		segment_release(c);
	return tex;
}

void xwm_content_release_pixmap(struct xwm_window *w)
{
	struct xwm_content *c = w->content;

	if (c->pixmap)
		xcb_free_pixmap(w->xwm->conn, c->pixmap);
	c->pixmap = XCB_NONE;
	c->pixmap_width = c->pixmap_height = 0;
}

bool xwm_content_rename_pixmap(struct xwm_window *w)
{
	struct xwm_content *c = w->content;
	struct xwm_cm *cm = c->cm;
	int pw = w->width + 2 * w->border, ph = w->height + 2 * w->border;

	xwm_content_release_pixmap(w);
	uint64_t bytes = (uint64_t)pw * (uint64_t)ph * 4u;
	uint64_t others = cm->texture_bytes - c->texture_bytes;
	const char *over = bytes > cm->window_texture_budget ? "per-window" :
	                   others + bytes > cm->texture_budget ? "total" : NULL;
	if (over) {
		xwm_log("window 0x%x of %dx%d (%" PRIu64 " MiB) is over the %s texture budget "
		        "(%" PRIu64 " MiB, %" PRIu64 " MiB used by others): not composited",
		        w->id, pw, ph, bytes >> 20, over,
		        (over[0] == 'p' ? cm->window_texture_budget : cm->texture_budget) >> 20,
		        others >> 20);
		xwm_content_drop_texture(w);
		render_node_set_visible(c->node, false);
		xwm_schedule_repaint(cm);
		return false;
	}
	c->pixmap = xcb_generate_id(w->xwm->conn);
	/* Fails (ignored) if the window was unmapped meanwhile; its
	 * UnmapNotify follows. */
	xcb_composite_name_window_pixmap(w->xwm->conn, w->id, c->pixmap);
	c->pixmap_width = pw;
	c->pixmap_height = ph;
	enum render_format format = w->depth == 32 ? RENDER_FORMAT_ARGB8888
	                                           : RENDER_FORMAT_XRGB8888;
	/* Zero-copy where the server exports the pixmap (dri3.c): a new
	 * texture per name, as the pixmap is a new buffer. */
	struct render_texture *imported = cm->xrender ? xwm_xrender_import(w, format)
	                                              : xwm_dri3_import(w, format);
	if (imported || !c->texture || render_texture_is_imported(c->texture) ||
	    render_texture_width(c->texture) != pw || render_texture_height(c->texture) != ph ||
	    render_texture_has_alpha(c->texture) != (format == RENDER_FORMAT_ARGB8888)) {
		xwm_content_drop_texture(w);
		c->texture = imported ? imported : create_shared_texture(c, format, pw, ph);
		if (!c->texture)
			c->texture = render_texture_create(cm->renderer, format, pw, ph);
		if (!c->texture)
			return false;
		c->texture_bytes = bytes;
		cm->texture_bytes += bytes;
		/* Shown once its first contents are fetched. */
		render_node_set_visible(c->node, false);
		render_node_set_texture(c->node, c->texture);
	}
	c->full_damage = true;
	return true;
}
