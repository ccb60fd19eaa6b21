/* duet-x11-swap-after-loss: an app that goes on drawing after its X server
 * died. It draws one frame with the toolkit (X11, engine from --engine),
 * prints "drawn", waits for a line on stdin (the test kills the X server
 * meanwhile), dispatches until the toolkit reports the loss, and then draws
 * one more frame as an app that ignored the loss would.
 *
 * That frame must be refused (tk_window_end_frame returns 0) promptly:
 * eglSwapBuffers on a broken xcb connection spins for 2^32 no-op requests
 * in Mesa's software X11 path (tk-engine-gl.c says why). Exit 0: refused;
 * 1: the frame went through or setup failed; a hang is the bug (the
 * test's timeout). */
#include <stdio.h>
#include <string.h>

#include "tk.h"

static const struct tk_window_listener listener = { 0 };

int main(int argc, char **argv)
{
	struct tk_options opts = { .backend = TK_BACKEND_X11, .engine = TK_ENGINE_GL };
	if (tk_parse_options(&argc, argv, &opts) < 0 || argc != 1) {
		fprintf(stderr, "usage: duet-x11-swap-after-loss [--engine gl|sw]\n");
		return 2;
	}
	opts.backend = TK_BACKEND_X11;
	struct tk_app *app = tk_app_create(&opts, "duet-swap-after-loss");
	if (!app)
		return 1;
	int status = 1;
	struct tk_window *win = tk_window_create(app, 320, 240, &listener, NULL);
	if (!win || tk_window_show(win) < 0)
		goto out;
	uint64_t deadline = tk_now_ns() + 60000000000ull;
	while (!tk_window_ready(win)) {
		if (tk_now_ns() >= deadline || tk_app_dispatch(app, 50) < 0) {
			fprintf(stderr, "swap-after-loss: the window was not mapped\n");
			goto out;
		}
	}
	struct tk_draw *d = tk_window_begin_frame(win);
	if (!d)
		goto out;
	tk_draw_clear(d, (struct tk_color){ 0.2f, 0.4f, 0.6f, 1.0f });
	if (!tk_window_end_frame(win, NULL))
		goto out;
	printf("drawn\n");
	fflush(stdout);
	char line[16];
	if (!fgets(line, sizeof(line), stdin))
		goto out;
	deadline = tk_now_ns() + 30000000000ull;
	while (tk_app_dispatch(app, 100) >= 0) {
		if (tk_now_ns() >= deadline) {
			fprintf(stderr, "swap-after-loss: no loss reported in 30 s\n");
			goto out;
		}
	}
	printf("lost\n");
	fflush(stdout);
	d = tk_window_begin_frame(win);
	if (d) {
		tk_draw_clear(d, (struct tk_color){ 0.6f, 0.4f, 0.2f, 1.0f });
		if (tk_window_end_frame(win, NULL)) {
			fprintf(stderr, "swap-after-loss: a frame was submitted on a lost connection\n");
			goto out;
		}
	}
	printf("refused\n");
	fflush(stdout);
	status = 0;
out:
	tk_app_destroy(app);
	return status;
}
