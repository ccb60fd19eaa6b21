/* render_png_write_fd: writes ARGB8888 (any stride) as RGBA PNG with alpha
 * forced opaque, leaves the fd open, and reports write errors. */
#include <errno.h>
#include <fcntl.h>
#include <png.h>
#include <signal.h>
#include <unistd.h>

#include "unit.h"

#define W 7
#define H 5
#define STRIDE (9 * 4) /* padded rows */

static uint32_t source_pixel(int x, int y)
{
	/* Distinct per pixel and channel, with varied (ignored) alpha. */
	return (uint32_t)(x * 37 + y) << 24 | (uint32_t)(x * 30) << 16 |
	       (uint32_t)(y * 50) << 8 | (uint32_t)(x * 7 + y * 11);
}

int main(void)
{
	uint32_t src[STRIDE / 4 * H];
	uint8_t rgba[W * H * 4];
	char path[] = "/tmp/duet-test-png-XXXXXX";
	png_image img;
	int fd, pipefd[2];
	FILE *f;

	for (int y = 0; y < H; y++)
		for (int x = 0; x < STRIDE / 4; x++)
			src[y * (STRIDE / 4) + x] = x < W ? source_pixel(x, y) : 0xdeadbeef;

	unit_say("write a 7x5 image with padded stride to a file and read it back");
	fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return 1;
	unlink(path);
	CHECK(render_png_write_fd(fd, src, W, H, STRIDE) == 0, "write");

	unit_say("the fd is still open after writing");
	CHECK(fcntl(fd, F_GETFD) != -1, "fd closed by the writer");
	lseek(fd, 0, SEEK_SET);
	f = fdopen(dup(fd), "rb");
	CHECK(f != NULL, "fdopen");
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	CHECK(f && png_image_begin_read_from_stdio(&img, f), "png read: %s", img.message);
	CHECK(img.width == W && img.height == H, "size %ux%u", img.width, img.height);
	CHECK(img.format & PNG_FORMAT_FLAG_ALPHA, "PNG has an alpha channel");
	img.format = PNG_FORMAT_RGBA;
	CHECK(png_image_finish_read(&img, NULL, rgba, W * 4, NULL), "decode: %s", img.message);

	unit_say("every pixel matches, alpha is 255");
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			uint32_t p = source_pixel(x, y);
			const uint8_t *q = &rgba[(y * W + x) * 4];
			CHECK(q[0] == ((p >> 16) & 0xff) && q[1] == ((p >> 8) & 0xff) &&
			      q[2] == (p & 0xff) && q[3] == 0xff,
			      "%d,%d: %02x%02x%02x%02x from %08x", x, y, q[0], q[1], q[2], q[3], p);
		}
	png_image_free(&img);
	if (f)
		fclose(f);
	close(fd);

	unit_say("a failing fd (closed, or a pipe without reader) gives -1, no crash");
	CHECK(render_png_write_fd(fd, src, W, H, STRIDE) == -1, "closed fd accepted");
	signal(SIGPIPE, SIG_IGN);
	CHECK(pipe(pipefd) == 0, "pipe");
	close(pipefd[0]);
	CHECK(render_png_write_fd(pipefd[1], src, W, H, STRIDE) == -1, "broken pipe accepted");
	close(pipefd[1]);

	unit_say("bad sizes are refused");
	CHECK(render_png_write_fd(1, src, 0, H, STRIDE) == -1, "zero width accepted");
	CHECK(render_png_write_fd(1, src, W, H, W * 4 - 4) == -1, "short stride accepted");

	return unit_finish("test-png");
}
