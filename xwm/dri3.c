/* Zero-copy window contents: a window's named pixmap as a dmabuf.
 *
 * Where the X server offers DRI3 (Xorg with glamor; Xvfb never does), the
 * pixmap Composite keeps a redirected window in is a GPU buffer the server
 * can hand out: DRI3 BuffersFromPixmap (1.2; BufferFromPixmap on 1.0)
 * returns its dmabuf fd(s), layout and modifier, and render/ imports it as
 * an EGLImage bound to the window's texture (render_texture_import_dmabuf).
 * From then on a frame copies nothing: the window's damage only says which
 * part of the screen to repaint from the texture, which is the client's
 * pixels as the server drew them.
 *
 * Once per name (map, resize) this costs two round trips, the only ones
 * duet-xwm waits in outside screenshots: one on our connection, after
 * which the server has named the pixmap, and the export on a connection
 * of its own, whose reply brings the fd. Not on our connection: when the
 * server cannot write to us as fast as events come (a client flooding
 * what we read), it queues its output, and the fds it passes go with its
 * next write, which starts with the oldest events queued; libxcb, having
 * read them, finds fds that no reply it has read asks for and closes the
 * connection (XCB_CONN_CLOSED_FDPASSING_FAILED: duet-xwm died so on Xorg
 * in xorg-isolation's flood). The exports' connection selects no event,
 * so nothing is ever queued before a reply on it.
 *
 * Synchronisation: the server (glamor) may still have the client's
 * drawing queued on its GPU when it reports the damage. Before a frame
 * samples imported textures, fetch.c sends TriggerFence on an X Sync
 * fence of ours and then waits (without blocking its loop) for the reply
 * of a request sent after it: glamor finishes its rendering (glFinish)
 * before it marks a fence triggered, so once the reply is in, every
 * drawing reported before is in the buffer. Without SYNC 3.1 the round
 * trip alone orders it, which is enough where the server's GL flushes
 * complete in order.
 *
 * Any failure (no DRI3, the EGL display cannot import, a pixmap the
 * server will not export, a buffer the driver refuses) leaves the window
 * on the MIT-SHM copy of fetch.c; each window's path is logged once per
 * change ("window 0x...: content path ...") and traced ("content_path").
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <xcb/dri3.h>

#include "xwm.h"

#define DRM_FORMAT_MOD_INVALID 0x00ffffffffffffffULL

static bool open_export_connection(struct xwm_cm *cm)
{
	xcb_connection_t *e = xcb_connect(cm->options.display, NULL);
	if (xcb_connection_has_error(e)) {
		xcb_disconnect(e);
		return false;
	}
	xcb_dri3_query_version_reply_t *v = xcb_dri3_query_version_reply(e,
		xcb_dri3_query_version(e, 1, (uint32_t)cm->dri3_minor), NULL);
	if (!v) {
		xcb_disconnect(e);
		return false;
	}
	free(v);
	cm->dri3_conn = e;
	return true;
}

bool xwm_dri3_init(struct xwm_cm *cm, bool has_sync)
{
	xcb_connection_t *c = cm->wm->conn;
	const xcb_query_extension_reply_t *ext = xcb_get_extension_data(c, &xcb_dri3_id);
	const char *why = NULL;

	cm->dri3_minor = -1;
	if (!ext || !ext->present) {
		cm->dri3_why = "the X server offers no DRI3 (Xvfb, or Xorg without glamor)";
		return false;
	}
	xcb_dri3_query_version_reply_t *v = xcb_dri3_query_version_reply(c,
		xcb_dri3_query_version(c, 1, 2), NULL);
	if (!v) {
		cm->dri3_why = "DRI3 QueryVersion failed";
		return false;
	}
	cm->dri3_minor = v->major_version > 1 ? 2 : (int)v->minor_version;
	free(v);
	if (!open_export_connection(cm)) {
		cm->dri3_why = "no second X connection for DRI3 exports";
		return false;
	}
	if (!render_dmabuf_import_supported(cm->renderer, &why)) {
		cm->dri3_why = why ? why : "no dmabuf import";
		return false;
	}
	if (has_sync) {
		cm->dri3_fence = xcb_generate_id(c);
		xcb_sync_create_fence(c, cm->wm->root, cm->dri3_fence, 0);
	}
	cm->dri3_why = NULL;
	return true;
}

void xwm_dri3_finish(struct xwm_cm *cm)
{
	if (cm->dri3_conn)
		xcb_disconnect(cm->dri3_conn);
	cm->dri3_conn = NULL;
	if (cm->dri3_fence)
		xcb_sync_destroy_fence(cm->wm->conn, cm->dri3_fence);
	cm->dri3_fence = XCB_NONE;
}

void xwm_dri3_fence(struct xwm_cm *cm)
{
	if (!cm->dri3_fence)
		return;
	if (cm->dri3_fence_triggered)
		xcb_sync_reset_fence(cm->wm->conn, cm->dri3_fence);
	xcb_sync_trigger_fence(cm->wm->conn, cm->dri3_fence);
	cm->dri3_fence_triggered = true;
}

/* The pixmap's buffer, by the newest request the server has. Fills buf
 * and returns the fds to close (up to 4), or 0 with *why. */
static int export_pixmap(struct xwm_window *w, struct render_dmabuf *buf, int fds[4],
                         const char **why)
{
	xcb_connection_t *c = w->content->cm->dri3_conn;
	xcb_generic_error_t *err = NULL;

	/* Our NameWindowPixmap reached the server before the export asks
	 * for it on the other connection. */
	free(xcb_get_input_focus_reply(w->xwm->conn, xcb_get_input_focus(w->xwm->conn), NULL));

	if (w->content->cm->dri3_minor >= 2) {
		xcb_dri3_buffers_from_pixmap_reply_t *r = xcb_dri3_buffers_from_pixmap_reply(c,
			xcb_dri3_buffers_from_pixmap(c, w->content->pixmap), &err);
		if (!r) {
			free(err);
			*why = "BuffersFromPixmap refused";
			return 0;
		}
		int n = r->nfd < 4 ? r->nfd : 4;
		int *rfds = xcb_dri3_buffers_from_pixmap_reply_fds(c, r);
		for (int i = 0; i < n; i++)
			fds[i] = rfds[i];
		for (int i = n; i < r->nfd; i++)
			close(rfds[i]);
		buf->width = r->width;
		buf->height = r->height;
		buf->stride = xcb_dri3_buffers_from_pixmap_strides(r)[0];
		buf->offset = xcb_dri3_buffers_from_pixmap_offsets(r)[0];
		buf->modifier = r->modifier;
		bool ok = n == 1 && r->bpp == 32;
		free(r);
		if (!ok) {
			*why = n == 1 ? "not a 32-bit pixmap" : "a multi-plane buffer";
			for (int i = 0; i < n; i++)
				close(fds[i]);
			return 0;
		}
		buf->fd = fds[0];
		return 1;
	}
	xcb_dri3_buffer_from_pixmap_reply_t *r = xcb_dri3_buffer_from_pixmap_reply(c,
		xcb_dri3_buffer_from_pixmap(c, w->content->pixmap), &err);
	if (!r) {
		free(err);
		*why = "BufferFromPixmap refused";
		return 0;
	}
	fds[0] = xcb_dri3_buffer_from_pixmap_reply_fds(c, r)[0];
	buf->width = r->width;
	buf->height = r->height;
	buf->stride = r->stride;
	buf->offset = 0;
	buf->modifier = DRM_FORMAT_MOD_INVALID;
	bool ok = r->bpp == 32;
	free(r);
	if (!ok) {
		*why = "not a 32-bit pixmap";
		close(fds[0]);
		return 0;
	}
	buf->fd = fds[0];
	return 1;
}

static void note_path(struct xwm_window *w, const char *path, const char *detail)
{
	if (w->content->content_path == path)
		return;
	w->content->content_path = path;
	xwm_log("window 0x%x: content path %s (%s)", w->id, path, detail);
	render_trace(w->content->cm->trace, "content_path", "\"window\":%u,\"path\":\"%s\",\"pid\":%u", w->id, path,
	             xwm_window_pid(w));
}

struct render_texture *xwm_dri3_import(struct xwm_window *w, enum render_format format)
{
	struct xwm_cm *cm = w->content->cm;
	struct render_dmabuf buf = { .fd = -1, .format = format };
	int fds[4];
	const char *why = cm->dri3_why;
	char detail[160];

	if (why || !w->content->pixmap) {
		note_path(w, "shm-copy", why ? why : "no pixmap");
		return NULL;
	}
	/* The export waits on our other connection, which the server does
	 * not serve while this one holds it (a kill's grab, actions.c: it
	 * lasts until we have read our backlog, seconds behind a flood):
	 * MIT-SHM until then, and named again after (xwm_dri3_after_grab). */
	if (w->xwm->kills) {
		w->content->dri3_retry = cm->dri3_retry_any = true;
		note_path(w, "shm-copy", "the server held for a kill: DRI3 again after it");
		return NULL;
	}
	int n = export_pixmap(w, &buf, fds, &why);
	if (n == 0) {
		note_path(w, "shm-copy", why);
		return NULL;
	}
	struct render_texture *tex = NULL;
	if (buf.width == w->content->pixmap_width && buf.height == w->content->pixmap_height)
		tex = render_texture_import_dmabuf(cm->renderer, &buf);
	else
		why = "the buffer's size is not the window's";
	for (int i = 0; i < n; i++)
		close(fds[i]);
	if (!tex) {
		note_path(w, "shm-copy", why ? why : "the driver refused the dmabuf");
		return NULL;
	}
	snprintf(detail, sizeof(detail), "DRI3 1.%d dmabuf %dx%d, stride %u, modifier 0x%llx, "
	         "EGLImage", cm->dri3_minor, buf.width, buf.height, buf.stride,
	         (unsigned long long)buf.modifier);
	note_path(w, "zero-copy", detail);
	return tex;
}

void xwm_dri3_after_grab(struct xwm_cm *cm)
{
	struct xwm *xwm = cm->wm;

	if (!cm->dri3_retry_any || xwm->kills)
		return;
	for (struct duet_list *l = xwm->stack.next; l != &xwm->stack; l = l->next) {
		struct xwm_content *c = duet_container_of(l, struct xwm_window, link)->content;
		if (c && c->dri3_retry) {
			c->dri3_retry = false;
			c->needs_rename = true;
		}
	}
	cm->dri3_retry_any = false;
	xwm_schedule_repaint(cm);
}
