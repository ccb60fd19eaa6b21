/* Helpers shared by duet's own apps: options, opening and waiting on the
 * toolkit, and procedurally made "assets" (photos, icons, glyph atlases)
 * so the apps need no data files. */
#ifndef DUET_APP_COMMON_H
#define DUET_APP_COMMON_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "app-args.h"
#include "tk.h"

extern volatile sig_atomic_t app_quit; /* set by SIGINT/SIGTERM */
void app_install_signals(void);

/* The toolkit's options (tk_parse_options; on a bad one, usage goes to
 * stderr and the exit status is 2), then the app's, as app_parse_args:
 * APP_ARGS_RUN to go on, else the exit status. */
int app_parse_options(const char *prog, const char *usage, int *argc, char **argv,
                      struct tk_options *tk_opts, const struct app_opt *opts);

/* Connects as prog (the Wayland app_id, the X11 WM_CLASS) and creates the
 * app's window, size.width x size.height and titled prog, into *win.
 * NULL, with nothing left open, when either fails (the toolkit says why). */
struct tk_app *app_open(const struct tk_options *opts, const char *prog, struct app_size size,
                        const struct tk_window_listener *listener, void *data,
                        struct tk_window **win);

/* True once win was asked to close or SIGINT/SIGTERM arrived. */
bool app_should_quit(const struct tk_window *win);

/* Dispatches, poll_ms at a time, until win may be drawn: 1. 0 when
 * app_should_quit or the deadline (CLOCK_MONOTONIC ns) came first; -1
 * when the connection was lost (the toolkit said so on stderr). */
int app_wait_ready(struct tk_app *app, struct tk_window *win, uint64_t deadline, int poll_ms);

/* Premultiplied ARGB32 pixels (free() them). A "photo": smooth colour
 * fields with an alpha vignette; an icon: a rounded badge; a glyph atlas:
 * 16x6 cells of 95 letter-like white shapes with coverage alpha. */
uint32_t *app_photo_pixels(int w, int h, unsigned seed, bool with_alpha);
uint32_t *app_icon_pixels(int size, unsigned seed);
#define APP_GLYPH_W 10
#define APP_GLYPH_H 16
uint32_t *app_glyph_atlas_pixels(int *w, int *h, unsigned seed);

/* X11 protocol counts since the last call with the same mark, as JSON
 * members for a trace line: ,"x_requests":N,"x_events":M; "" on Wayland
 * (duet-compositor's protocol logger counts those). out must hold 96. */
struct app_proto_mark { uint64_t requests, events; };
void app_proto_delta(struct tk_app *app, struct app_proto_mark *mark, char *out, size_t size);

/* Draws text with glyph quads from an atlas made of app_glyph_atlas_pixels. */
void app_draw_text(struct tk_draw *d, struct tk_image *atlas, const char *text, float x, float y,
                   float scale, struct tk_color c);

#endif
