/* The X11 platform's shared-memory buffers (the sw engine's): MIT-SHM
 * segments put with ShmPutImage when the server offers MIT-SHM (two,
 * freed by ShmCompletion), else plain PutImage in strips that fit the
 * maximum request length. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <xcb/shm.h>
#include <xcb/xcb.h>

#include "tk-x11.h"

#define X11_BUFFERS 2

struct x11_shm_buffer {
	xcb_shm_seg_t seg; /* 0: not attached */
	void *data;
	int width, height;
	bool busy;
};

struct x11_shm {
	bool checked, use_shm;
	struct x11_shm_buffer bufs[X11_BUFFERS];
	int current;
	void *plain; /* PutImage path */
	int plain_w, plain_h;
};

static void x11_buffer_free(xcb_connection_t *c, struct x11_shm_buffer *b)
{
	if (b->seg)
		xcb_shm_detach(c, b->seg);
	if (b->data)
		shmdt(b->data);
	memset(b, 0, sizeof(*b));
}

static int x11_buffer_alloc(xcb_connection_t *c, struct x11_shm_buffer *b, int width, int height)
{
	size_t size = (size_t)width * (size_t)height * 4;
	int id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	if (id < 0)
		return -1;
	void *data = shmat(id, NULL, 0);
	if (data == (void *)-1) {
		shmctl(id, IPC_RMID, NULL);
		return -1;
	}
	b->seg = xcb_generate_id(c);
	xcb_generic_error_t *err = xcb_request_check(c, xcb_shm_attach_checked(c, b->seg, (uint32_t)id, 0));
	/* Attached (or failed): the id is no longer needed by name. */
	shmctl(id, IPC_RMID, NULL);
	if (err) {
		free(err);
		shmdt(data);
		b->seg = 0;
		return -1;
	}
	b->data = data;
	b->width = width;
	b->height = height;
	b->busy = false;
	return 0;
}

static void x11_check_shm(struct tk_window *win, struct x11_shm *st)
{
	xcb_connection_t *c = app_data(win->app)->conn;
	st->checked = true;
	const xcb_query_extension_reply_t *ext = xcb_get_extension_data(c, &xcb_shm_id);
	if (ext && ext->present) {
		xcb_shm_query_version_reply_t *r =
			xcb_shm_query_version_reply(c, xcb_shm_query_version(c), NULL);
		st->use_shm = r != NULL;
		free(r);
	}
	/* A remote or restricted server may refuse our segment: try one. */
	if (st->use_shm && x11_buffer_alloc(c, &st->bufs[0], 1, 1) == 0)
		x11_buffer_free(c, &st->bufs[0]);
	else
		st->use_shm = false;
	win->app->path_detail = st->use_shm ? "mit-shm" : "put-image";
}

bool tk_x11_shm_handle_event(struct tk_app *app, const xcb_generic_event_t *ev)
{
	const xcb_query_extension_reply_t *ext = xcb_get_extension_data(app_data(app)->conn, &xcb_shm_id);
	if (!ext || !ext->present || (ev->response_type & 0x7f) != ext->first_event + XCB_SHM_COMPLETION)
		return false;
	const xcb_shm_completion_event_t *done = (const xcb_shm_completion_event_t *)ev;
	for (size_t i = 0; i < sizeof(app->windows) / sizeof(app->windows[0]); i++) {
		struct tk_window *win = app->windows[i];
		struct x11_shm *st = win ? win_data(win)->shm : NULL;
		for (int k = 0; st && k < X11_BUFFERS; k++)
			if (st->bufs[k].seg == done->shmseg)
				st->bufs[k].busy = false;
	}
	return true;
}

int tk_x11_shm_acquire(struct tk_window *win, int width, int height, void **pixels, int *stride)
{
	xcb_connection_t *c = app_data(win->app)->conn;
	struct x11_shm *st = win_data(win)->shm;
	if (!st) {
		st = calloc(1, sizeof(*st));
		if (!st)
			return -1;
		win_data(win)->shm = st;
		x11_check_shm(win, st);
	}
	*stride = width * 4;
	if (!st->use_shm) {
		if (st->plain_w != width || st->plain_h != height) {
			free(st->plain);
			st->plain = malloc((size_t)width * (size_t)height * 4);
			if (!st->plain)
				return -1;
			st->plain_w = width;
			st->plain_h = height;
		}
		*pixels = st->plain;
		return 0;
	}
	/* Prefer a free buffer of this size, then any free one. */
	int pick = -1;
	for (int i = 0; i < X11_BUFFERS && pick < 0; i++)
		if (!st->bufs[i].busy && st->bufs[i].seg && st->bufs[i].width == width &&
		    st->bufs[i].height == height)
			pick = i;
	for (int i = 0; i < X11_BUFFERS && pick < 0; i++)
		if (!st->bufs[i].busy)
			pick = i;
	if (pick < 0) {
		/* Both in flight: a round trip proves the server has read them
		 * (ShmPutImage completes before later requests are answered). */
		free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
		for (int i = 0; i < X11_BUFFERS; i++)
			st->bufs[i].busy = false;
		pick = 0;
	}
	struct x11_shm_buffer *b = &st->bufs[pick];
	if (b->seg && (b->width != width || b->height != height))
		x11_buffer_free(c, b);
	if (!b->seg && x11_buffer_alloc(c, b, width, height) < 0) {
		fprintf(stderr, "cannot attach a %dx%d MIT-SHM segment\n", width, height);
		return -1;
	}
	st->current = pick;
	*pixels = b->data;
	return 0;
}

int tk_x11_shm_present(struct tk_window *win)
{
	xcb_connection_t *c = app_data(win->app)->conn;
	struct x11_shm *st = win_data(win)->shm;
	xcb_window_t w = win_data(win)->window;
	xcb_gcontext_t gc = win_data(win)->gc;
	if (st->use_shm) {
		struct x11_shm_buffer *b = &st->bufs[st->current];
		xcb_shm_put_image(c, w, gc, (uint16_t)b->width, (uint16_t)b->height, 0, 0,
		                  (uint16_t)b->width, (uint16_t)b->height, 0, 0, 24,
		                  XCB_IMAGE_FORMAT_Z_PIXMAP, 1, b->seg, 0);
		b->busy = true;
	} else {
		uint32_t stride = (uint32_t)st->plain_w * 4;
		uint32_t max = xcb_get_maximum_request_length(c) * 4;
		uint32_t rows = max > stride + 64 ? (max - 64) / stride : 1;
		for (int y = 0; y < st->plain_h; y += (int)rows) {
			int h = st->plain_h - y < (int)rows ? st->plain_h - y : (int)rows;
			xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, w, gc, (uint16_t)st->plain_w,
			              (uint16_t)h, 0, (int16_t)y, 0, 24, stride * (uint32_t)h,
			              (const uint8_t *)st->plain + (size_t)y * stride);
		}
	}
	/* Flushed by the platform's frame_post_commit (as on Wayland). */
	return xcb_connection_has_error(c) ? -1 : 0;
}

void tk_x11_shm_destroy(struct tk_window *win)
{
	struct x11_shm *st = win_data(win)->shm;
	if (!st)
		return;
	for (int i = 0; i < X11_BUFFERS; i++)
		x11_buffer_free(app_data(win->app)->conn, &st->bufs[i]);
	free(st->plain);
	free(st);
	win_data(win)->shm = NULL;
}
