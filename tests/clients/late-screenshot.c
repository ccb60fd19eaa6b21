/* duet-late-screenshot OUT.png DELAY_MS|stdin: asks duet_test for a
 * screenshot into a small pipe and does not read it for DELAY_MS (or until
 * a line comes on stdin), as a client that reads only after
 * screenshot_done would; then reads it all and writes it to OUT.png. A compositor that writes the PNG with blocking writes stalls
 * on the full pipe for that long (tests/integration/test_robustness.py,
 * late-screenshot). Connects to $WAYLAND_DISPLAY, which must be the
 * compositor's test socket.
 *
 * stdout: "requested" once the request is sent, then
 *         "done W H BYTES" once the PNG is read and screenshot_done came.
 * Exit status: 0 done, 1 protocol error or short read, 2 setup failure.
 */
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client.h>

#include "ctl-test.h"
#include "duet-test-client-protocol.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: duet-late-screenshot OUT.png DELAY_MS|stdin\n");
		return 2;
	}
	/* "stdin": the pipe stays unread until a line comes on stdin, so a
	 * test decides by what it saw meanwhile, not by a time. */
	bool on_stdin = strcmp(argv[2], "stdin") == 0;
	long delay_ms = on_stdin ? 0 : strtol(argv[2], NULL, 10);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* late.shot tells the request's end. */
	struct ctl_test late = { .display = wl_display_connect(NULL) };
	struct wl_display *display = late.display;
	if (!display) {
		fprintf(stderr, "duet-late-screenshot: cannot connect\n");
		return 2;
	}
	if (ctl_test_bind(&late, 1) < 0 || !late.test) {
		fprintf(stderr, "duet-late-screenshot: no duet_test here\n");
		return 2;
	}

	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0) {
		perror("duet-late-screenshot: pipe");
		return 2;
	}
	/* One page: any real screenshot overflows it. */
	fcntl(fds[1], F_SETPIPE_SZ, 4096);
	duet_test_screenshot(late.test, fds[1]);
	if (wl_display_flush(display) < 0) {
		perror("duet-late-screenshot: flush");
		return 2;
	}
	close(fds[1]);
	printf("requested\n");

	if (on_stdin) {
		char line[64];
		if (!fgets(line, sizeof(line), stdin)) {
			fprintf(stderr, "duet-late-screenshot: stdin closed before the go\n");
			return 1;
		}
	} else {
		struct timespec ts = { delay_ms / 1000, (delay_ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}

	size_t len = 0, cap = 1 << 16;
	unsigned char *png = malloc(cap);
	bool eof = false;
	while (png && !(eof && late.shot.done)) {
		struct pollfd pfd[2] = {
			{ .fd = eof ? -1 : fds[0], .events = POLLIN },
			{ .fd = wl_display_get_fd(display), .events = POLLIN },
		};
		wl_display_flush(display);
		if (poll(pfd, 2, 10000) <= 0) {
			fprintf(stderr, "duet-late-screenshot: nothing for 10 s (%zu bytes read, done %d)\n",
			        len, late.shot.done);
			return 1;
		}
		if (pfd[0].revents) {
			if (len == cap) {
				unsigned char *grown = realloc(png, cap *= 2);
				if (!grown)
					return 2;
				png = grown;
			}
			ssize_t n = read(fds[0], png + len, cap - len);
			if (n < 0 && errno != EINTR) {
				perror("duet-late-screenshot: read");
				return 1;
			}
			if (n == 0)
				eof = true;
			else if (n > 0)
				len += (size_t)n;
		}
		if (pfd[1].revents && wl_display_dispatch(display) < 0) {
			fprintf(stderr, "duet-late-screenshot: connection error: %s (protocol error %u)\n",
			        strerror(wl_display_get_error(display)),
			        wl_display_get_protocol_error(display, NULL, NULL));
			return 1;
		}
	}
	FILE *out = fopen(argv[1], "wb");
	if (!out || fwrite(png, 1, len, out) != len || fclose(out) != 0) {
		perror("duet-late-screenshot: writing the PNG");
		return 2;
	}
	printf("done %d %d %zu\n", late.shot.width, late.shot.height, len);
	free(png);
	ctl_test_close(&late);
	return 0;
}
