#include "client-common.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

int test_create_memfd(size_t size)
{
	int fd = memfd_create("duet-test-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)size) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

struct wl_shm_pool *test_shm_pool(struct wl_shm *shm, size_t size, uint32_t **pixels,
                                  int *fd_out)
{
	int fd = test_create_memfd(size);
	if (fd < 0)
		return NULL;
	void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		int err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	*pixels = map;
	struct wl_shm_pool *pool = wl_shm_create_pool(shm, fd, (int32_t)size);
	if (fd_out)
		*fd_out = fd;
	else
		close(fd); /* the pool holds the memory now */
	return pool;
}

static void buffer_release(void *data, struct wl_buffer *buffer)
{
	bool *busy = data;
	*busy = false;
}

static const struct wl_buffer_listener release_listener = {
	.release = buffer_release,
};

void test_buffer_track(struct wl_buffer *buffer, bool *busy)
{
	wl_buffer_add_listener(buffer, &release_listener, busy);
}

struct wl_buffer *test_solid_buffer(struct wl_shm *shm, int w, int h, uint32_t colour)
{
	size_t size = (size_t)w * (size_t)h * 4;
	uint32_t *pixels;
	struct wl_shm_pool *pool = test_shm_pool(shm, size, &pixels, NULL);
	if (!pool)
		return NULL;
	for (size_t i = 0; i < size / 4; i++)
		pixels[i] = colour;
	munmap(pixels, size);
	struct wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, w, h, w * 4,
	                                                     WL_SHM_FORMAT_XRGB8888);
	/* The buffer keeps the pool's memory alive on the server side. */
	wl_shm_pool_destroy(pool);
	return buffer;
}
