/* PNG writer for ARGB8888 pixels, onto any file descriptor (files, pipes,
 * sockets; the fd is left open for the caller) or into memory (for a
 * caller that must not block on a slow reader: it writes the bytes itself
 * when the fd is ready). */
#include <errno.h>
#include <fcntl.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render-private.h"

struct png_sink {
	int fd;    /* -1: into data */
	int error; /* errno of the first failed write, 0 if none */
	uint8_t *data;
	size_t len, cap;
};

static void png_sink_write(png_structp png, png_bytep data, size_t len)
{
	struct png_sink *sink = png_get_io_ptr(png);

	if (sink->fd < 0) {
		if (len > sink->cap - sink->len) {
			size_t cap = sink->cap ? sink->cap : 65536;
			while (cap - sink->len < len)
				cap *= 2;
			uint8_t *grown = realloc(sink->data, cap);
			if (!grown) {
				sink->error = ENOMEM;
				png_error(png, "out of memory");
			}
			sink->data = grown;
			sink->cap = cap;
		}
		memcpy(sink->data + sink->len, data, len);
		sink->len += len;
		return;
	}
	while (len > 0) {
		ssize_t n = write(sink->fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			sink->error = n < 0 ? errno : EIO;
			png_error(png, "write failed");
		}
		data += n;
		len -= (size_t)n;
	}
}

static void png_sink_flush(png_structp png)
{
	(void)png;
}

static void png_log_error(png_structp png, png_const_charp msg)
{
	render_log("libpng: %s", msg);
	png_longjmp(png, 1);
}

static void png_log_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	render_log("libpng warning: %s", msg);
}

static int png_write(struct png_sink *sink, const uint32_t *argb, int width, int height,
                     int stride_bytes)
{
	png_structp png;
	png_infop info = NULL;
	/* Allocated before setjmp and only read after it, so longjmp cannot
	 * leave it stale; volatile keeps it out of a clobbered register. */
	uint8_t *volatile row = NULL;

	if (width <= 0 || height <= 0 || stride_bytes < width * 4) {
		render_log("png: bad image %dx%d stride %d", width, height, stride_bytes);
		return -1;
	}
	row = malloc((size_t)width * 4);
	if (!row)
		return -1;
	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, png_log_error,
	                              png_log_warning);
	if (png)
		info = png_create_info_struct(png);
	if (!png || !info) {
		png_destroy_write_struct(png ? &png : NULL, NULL);
		free(row);
		return -1;
	}
	if (setjmp(png_jmpbuf(png))) {
		if (sink->error)
			render_log("png: write: %s", strerror(sink->error));
		png_destroy_write_struct(&png, &info);
		free(row);
		return -1;
	}
	png_set_write_fn(png, sink, png_sink_write, png_sink_flush);
	/* Screenshots are compared and archived, not served: favour speed. */
	png_set_compression_level(png, 1);
	png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8,
	             PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE,
	             PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	for (int y = 0; y < height; y++) {
		const uint32_t *src = (const uint32_t *)(const void *)
			((const char *)argb + (size_t)y * stride_bytes);
		uint8_t *d = row;
		for (int x = 0; x < width; x++, d += 4) {
			d[0] = (uint8_t)(src[x] >> 16);
			d[1] = (uint8_t)(src[x] >> 8);
			d[2] = (uint8_t)src[x];
			d[3] = 0xff; /* a screen shows no alpha */
		}
		png_write_row(png, row);
	}
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	free(row);
	return 0;
}

int render_png_write_fd(int fd, const uint32_t *argb, int width, int height,
                        int stride_bytes)
{
	struct png_sink sink = { .fd = fd };
	return png_write(&sink, argb, width, height, stride_bytes);
}

int render_png_encode(const uint32_t *argb, int width, int height, int stride_bytes,
                      uint8_t **data, size_t *len)
{
	struct png_sink sink = { .fd = -1 };
	if (png_write(&sink, argb, width, height, stride_bytes) != 0) {
		free(sink.data);
		return -1;
	}
	*data = sink.data;
	*len = sink.len;
	return 0;
}

int render_write_file_atomic(const char *path, const uint8_t *data, size_t len)
{
	/* Written under a temporary name and renamed, so a reader polling for
	 * the file never sees half of it. */
	char tmp[4096];
	int fd, ret = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
		render_log("path too long: %s", path);
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		render_log("cannot create %s: %s", tmp, strerror(errno));
		return -1;
	}
	for (size_t off = 0; off < len && ret == 0;) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			render_log("write %s: %s", tmp, n < 0 ? strerror(errno) : "short write");
			ret = -1;
		} else {
			off += (size_t)n;
		}
	}
	if (close(fd) != 0 && ret == 0) {
		render_log("close %s: %s", tmp, strerror(errno));
		ret = -1;
	}
	if (ret == 0 && rename(tmp, path) != 0) {
		render_log("rename %s -> %s: %s", tmp, path, strerror(errno));
		ret = -1;
	}
	if (ret != 0)
		unlink(tmp);
	return ret;
}
