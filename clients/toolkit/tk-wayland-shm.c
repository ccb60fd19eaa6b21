/* The Wayland platform's shared-memory buffers (the sw engine's): wl_shm
 * buffers in memfd pools, double (up to triple) buffered and reused once
 * the compositor releases them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>

#include "tk-wayland.h"

#define WL_BUFFERS 3

struct wayland_shm_buffer {
	struct wl_buffer *buffer;
	void *data;
	size_t size;
	int width, height, stride;
	bool busy;
};

struct wayland_shm {
	struct wl_event_queue *queue; /* releases only, so waiting runs no app code */
	struct wayland_shm_buffer bufs[WL_BUFFERS];
	int current;
};

static void buffer_release(void *data, struct wl_buffer *buffer)
{
	struct wayland_shm_buffer *b = data;
	b->busy = false;
}

static const struct wl_buffer_listener buffer_listener = { .release = buffer_release };

static void buffer_free(struct wayland_shm_buffer *b)
{
	if (b->buffer)
		wl_buffer_destroy(b->buffer);
	if (b->data)
		munmap(b->data, b->size);
	memset(b, 0, sizeof(*b));
}

static int buffer_alloc(struct tk_window *win, struct wayland_shm *st,
                         struct wayland_shm_buffer *b, int width, int height)
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
	struct wl_shm_pool *pool = wl_shm_create_pool(app_data(win->app)->shm, fd, (int32_t)size);
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

int tk_wayland_shm_init(struct tk_app *app)
{
	if (app_data(app)->shm)
		return 0;
	fprintf(stderr, "the Wayland server lacks wl_shm\n");
	return -1;
}

int tk_wayland_shm_acquire(struct tk_window *win, int width, int height, void **pixels,
                           int *stride)
{
	struct wl_display *display = app_data(win->app)->display;
	struct wayland_shm *st = win_data(win)->shm;
	if (!st) {
		st = calloc(1, sizeof(*st));
		if (!st)
			return -1;
		st->queue = wl_display_create_queue(display);
		win_data(win)->shm = st;
	}
	for (;;) {
		if (wl_display_dispatch_queue_pending(display, st->queue) < 0)
			return -1;
		struct wayland_shm_buffer *free_same = NULL, *free_other = NULL, *empty = NULL;
		for (int i = 0; i < WL_BUFFERS; i++) {
			struct wayland_shm_buffer *b = &st->bufs[i];
			if (!b->buffer)
				empty = empty ? empty : b;
			else if (!b->busy && b->width == width && b->height == height)
				free_same = free_same ? free_same : b;
			else if (!b->busy)
				free_other = free_other ? free_other : b;
		}
		struct wayland_shm_buffer *b = free_same;
		if (!b && free_other) {
			buffer_free(free_other);
			empty = free_other;
		}
		/* A third buffer only when two are held by the compositor. */
		if (!b && empty) {
			if (buffer_alloc(win, st, empty, width, height) < 0)
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

int tk_wayland_shm_present(struct tk_window *win)
{
	struct wayland_shm *st = win_data(win)->shm;
	struct wayland_shm_buffer *b = &st->bufs[st->current];
	struct wl_surface *surface = win_data(win)->surface;
	wl_surface_attach(surface, b->buffer, 0, 0);
	if (wl_proxy_get_version((struct wl_proxy *)surface) >= WL_SURFACE_DAMAGE_BUFFER_SINCE_VERSION)
		wl_surface_damage_buffer(surface, 0, 0, b->width, b->height);
	else
		wl_surface_damage(surface, 0, 0, b->width, b->height);
	wl_surface_commit(surface);
	b->busy = true;
	/* The platform's frame_post_commit flushes, with the frame's other
	 * requests in the same write. */
	return 0;
}

void tk_wayland_shm_destroy(struct tk_window *win)
{
	struct wayland_shm *st = win_data(win)->shm;
	if (!st)
		return;
	for (int i = 0; i < WL_BUFFERS; i++)
		buffer_free(&st->bufs[i]);
	wl_event_queue_destroy(st->queue);
	free(st);
	win_data(win)->shm = NULL;
}
