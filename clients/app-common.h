/* Helpers shared by duet's instrumented apps: argument parsing, waiting
 * on the toolkit, and procedurally made "assets" (photos, icons, glyph
 * atlases) so the apps need no data files. */
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


/* Dispatches until *flag is true, the window closes, a signal arrives or
 * timeout_ms passes. Returns true if *flag became true. */
bool app_wait_flag(struct tk_app *app, const bool *flag, int timeout_ms);

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
