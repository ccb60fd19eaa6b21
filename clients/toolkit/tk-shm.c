/* The software engine's buffers. Wayland: wl_shm buffers in memfd pools,
 * double (up to triple) buffered and reused once the compositor releases
 * them. X11: MIT-SHM segments put with ShmPutImage when the server offers
 * MIT-SHM (two, freed by ShmCompletion), else plain PutImage in strips
 * that fit the maximum request length. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>
#include <wayland-client.h>
#include <xcb/shm.h>
#include <xcb/xcb.h>

#include "tk-private.h"

/* ------------------------------------------------------------ Wayland */

#define WL_BUFFERS 3

struct wl_shm_buffer_slot {
	struct wl_buffer *buffer;
	void *data;
	size_t size;
	int width, height, stride;
	bool busy;
};

struct wl_shm_state {
	struct wl_event_queue *queue; /* releases only, so waiting runs no app code */
	struct wl_shm_buffer_slot bufs[WL_BUFFERS];
	int current;
};

static void buffer_release(void *data, struct wl_buffer *buffer)
{
	struct wl_shm_buffer_slot *b = data;
	b->busy = false;
}

static const struct wl_buffer_listener buffer_listener = { .release = buffer_release };

static void wl_slot_free(struct wl_shm_buffer_slot *b)
{
	if (b->buffer)
		wl_buffer_destroy(b->buffer);
	if (b->data)
		munmap(b->data, b->size);
	memset(b, 0, sizeof(*b));
}

static int wl_slot_alloc(struct tk_window *win, struct wl_shm_state *st,
                         struct wl_shm_buffer_slot *b, int width, int height)
{
	int stride = width * 4;
	size_t size = (size_t)stride * (size_t)height;
	int fd = memfd_create("duet-tk-shm", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		fprintf(stderr, "cannot make a %dx%d shm buffer: %s\n", width, height, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	void *data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (data == MAP_FAILED) {
		fprintf(stderr, "cannot map a %zu byte shm buffer: %s\n", size, strerror(errno));
		close(fd);
		return -1;
	}
	struct wl_shm_pool *pool = wl_shm_create_pool(tk_wayland_shm(win->app), fd, (int32_t)size);
	b->buffer = wl_shm_pool_create_buffer(pool, 0, width, height, stride, WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool_destroy(pool);
	close(fd);
	wl_proxy_set_queue((struct wl_proxy *)b->buffer, st->queue);
	wl_buffer_add_listener(b->buffer, &buffer_listener, b);
	b->data = data;
	b->size = size;
	b->width = width;
	b->height = height;
	b->stride = stride;
	b->busy = false;
	return 0;
}

int tk_shm_wl_acquire(struct tk_window *win, int width, int height, void **pixels, int *stride)
{
	struct wl_display *display = tk_wayland_display(win->app);
	struct wl_shm_state **slot = (struct wl_shm_state **)tk_wayland_shm_slot(win);
	struct wl_shm_state *st = *slot;
	if (!st) {
		st = calloc(1, sizeof(*st));
		if (!st)
			return -1;
		st->queue = wl_display_create_queue(display);
		*slot = st;
	}
	for (;;) {
		if (wl_display_dispatch_queue_pending(display, st->queue) < 0)
			return -1;
		struct wl_shm_buffer_slot *free_same = NULL, *free_other = NULL, *empty = NULL;
		for (int i = 0; i < WL_BUFFERS; i++) {
			struct wl_shm_buffer_slot *b = &st->bufs[i];
			if (!b->buffer)
				empty = empty ? empty : b;
			else if (!b->busy && b->width == width && b->height == height)
				free_same = free_same ? free_same : b;
			else if (!b->busy)
				free_other = free_other ? free_other : b;
		}
		struct wl_shm_buffer_slot *b = free_same;
		if (!b && free_other) {
			wl_slot_free(free_other);
			empty = free_other;
		}
		/* A third buffer only when two are held by the compositor. */
		if (!b && empty) {
			if (wl_slot_alloc(win, st, empty, width, height) < 0)
				return -1;
			b = empty;
		}
		if (b) {
			st->current = (int)(b - st->bufs);
			*pixels = b->data;
			*stride = b->stride;
			return 0;
		}
		/* All held: wait for a release, as any shm client must. */
		if (wl_display_dispatch_queue(display, st->queue) < 0) {
			fprintf(stderr, "Wayland connection lost while waiting for a buffer\n");
			return -1;
		}
	}
}

int tk_shm_wl_present(struct tk_window *win)
{
	struct wl_shm_state *st = *(struct wl_shm_state **)tk_wayland_shm_slot(win);
	struct wl_shm_buffer_slot *b = &st->bufs[st->current];
	struct wl_surface *surface = tk_wayland_surface(win);
	wl_surface_attach(surface, b->buffer, 0, 0);
	if (wl_proxy_get_version((struct wl_proxy *)surface) >= WL_SURFACE_DAMAGE_BUFFER_SINCE_VERSION)
		wl_surface_damage_buffer(surface, 0, 0, b->width, b->height);
	else
		wl_surface_damage(surface, 0, 0, b->width, b->height);
	wl_surface_commit(surface);
	b->busy = true;
	/* The backend's frame_post_commit flushes, with the frame's other
	 * requests in the same write. */
	return 0;
}

void tk_shm_wl_destroy(struct tk_window *win)
{
	struct wl_shm_state **slot = (struct wl_shm_state **)tk_wayland_shm_slot(win);
	struct wl_shm_state *st = *slot;
	if (!st)
		return;
	for (int i = 0; i < WL_BUFFERS; i++)
		wl_slot_free(&st->bufs[i]);
	wl_event_queue_destroy(st->queue);
	free(st);
	*slot = NULL;
}

/* ------------------------------------------------------------ X11 */

#define X11_BUFFERS 2

struct x11_shm_buffer {
	xcb_shm_seg_t seg; /* 0: not attached */
	void *data;
	int width, height;
	bool busy;
};

struct x11_shm_state {
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

static void x11_check_shm(struct tk_window *win, struct x11_shm_state *st)
{
	xcb_connection_t *c = tk_x11_connection(win->app);
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

bool tk_x11_handle_shm_event(struct tk_app *app, void *event)
{
	const xcb_query_extension_reply_t *ext = xcb_get_extension_data(tk_x11_connection(app), &xcb_shm_id);
	xcb_generic_event_t *ev = event;
	if (!ext || !ext->present || (ev->response_type & 0x7f) != ext->first_event + XCB_SHM_COMPLETION)
		return false;
	xcb_shm_completion_event_t *done = event;
	for (size_t i = 0; i < sizeof(app->windows) / sizeof(app->windows[0]); i++) {
		struct tk_window *win = app->windows[i];
		struct x11_shm_state *st = win ? *(struct x11_shm_state **)tk_x11_shm_slot(win) : NULL;
		for (int k = 0; st && k < X11_BUFFERS; k++)
			if (st->bufs[k].seg == done->shmseg)
				st->bufs[k].busy = false;
	}
	return true;
}

int tk_shm_x11_acquire(struct tk_window *win, int width, int height, void **pixels, int *stride)
{
	xcb_connection_t *c = tk_x11_connection(win->app);
	struct x11_shm_state **slot = (struct x11_shm_state **)tk_x11_shm_slot(win);
	struct x11_shm_state *st = *slot;
	if (!st) {
		st = calloc(1, sizeof(*st));
		if (!st)
			return -1;
		*slot = st;
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

int tk_shm_x11_present(struct tk_window *win)
{
	xcb_connection_t *c = tk_x11_connection(win->app);
	struct x11_shm_state *st = *(struct x11_shm_state **)tk_x11_shm_slot(win);
	xcb_window_t w = tk_x11_window_id(win);
	xcb_gcontext_t gc = tk_x11_gc(win);
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
	/* Flushed by the backend's frame_post_commit (see the Wayland side). */
	return xcb_connection_has_error(c) ? -1 : 0;
}

void tk_shm_x11_destroy(struct tk_window *win)
{
	struct x11_shm_state **slot = (struct x11_shm_state **)tk_x11_shm_slot(win);
	struct x11_shm_state *st = *slot;
	if (!st)
		return;
	for (int i = 0; i < X11_BUFFERS; i++)
		x11_buffer_free(tk_x11_connection(win->app), &st->bufs[i]);
	free(st->plain);
	free(st);
	*slot = NULL;
}
