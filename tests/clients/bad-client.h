/* duet-bad-client's shared parts: bad-client.c (the driver and the
 * protocol-rule modes), bad-client-limits.c (the nesting, overflow and
 * budget modes), bad-client-spec.c (finer rules of the specs),
 * bad-client-traffic.c (dying mid-request, flooding, never reading). */
#ifndef DUET_BAD_CLIENT_H
#define DUET_BAD_CLIENT_H

#include "client-common.h"
#include "xdg-shell-client-protocol.h"

/* An accepted answer: the interface of the object the error was posted on
 * and its code. Several are listed where the specs leave the choice open
 * (e.g. xdg_wm_base.invalid_surface_state versus the newer per-surface
 * xdg_surface codes). */
struct expected_error {
	const char *interface;
	uint32_t code;
};

#define MAX_EXPECTED 4

struct bad_client {
	struct wl_display *display;
	struct test_globals g;
	/* Kept alive until the error arrives: libwayland-client only names
	 * the interface of an error if the object still exists client-side. */
	struct test_toplevel top; /* acked by the modes themselves, or not */
	struct wl_surface *other_surface; /* the modes' other surface, or their only one */
	struct xdg_toplevel *second_toplevel;
	struct wl_shm_pool *pool;
	struct wl_buffer *buffer;
	struct wl_subsurface *subsurface;
	struct wp_viewport *viewport;
	int pool_fd;
	struct test_frame frame;
	/* A mode's own objects, and how to let go of them. */
	void *mode_data;
	void (*mode_cleanup)(struct bad_client *c);
};

uint64_t now_ms(void);
/* A toplevel with its initial commit done; if wait_configure, also its first
 * configure received (not acked). */
bool make_toplevel(struct bad_client *c, bool wait_configure);
/* c->pool, pool_size bytes over a memfd of that size (c->pool_fd), and
 * c->buffer in it: XRGB8888, w x h at offset with stride, which the
 * modes choose to be right or wrong. */
bool make_buffer(struct bad_client *c, int32_t pool_size, int32_t offset, int w, int h,
                 int stride);
/* c->mode_data: size zeroed bytes, NULL if out of memory. At the end
 * cleanup lets go of what the mode put in them, then they are freed. */
void *mode_data(struct bad_client *c, size_t size, void (*cleanup)(struct bad_client *c));
/* Destroys levels [0, n) of a chain of nested surfaces (popups or
 * subsurfaces, each on the one below), the top one first, and of each
 * level the objects it has: popup, xdg_surface, subsurface, surface.
 * subsurfaces may be NULL. */
void destroy_chain(size_t n, struct xdg_popup **popups, struct xdg_surface **xdg_surfaces,
                   struct wl_subsurface **subsurfaces, struct wl_surface **surfaces);

/* bad-client-limits.c */
bool run_deep_subsurfaces(struct bad_client *c);
bool run_deep_popups(struct bad_client *c);
bool run_positioner_huge_size(struct bad_client *c);
bool run_huge_buffer_scale(struct bad_client *c);
bool run_texture_budget(struct bad_client *c);
bool run_offset_overflow(struct bad_client *c);
bool run_mime_flood(struct bad_client *c);

/* bad-client-spec.c */
bool run_toplevel_to_popup(struct bad_client *c);
bool run_popup_to_toplevel(struct bad_client *c);
bool run_short_stride(struct bad_client *c);
bool run_offset_past_pool(struct bad_client *c);
bool run_min_over_max(struct bad_client *c);
bool run_negative_min_size(struct bad_client *c);
bool run_scale_viewport(struct bad_client *c);
bool run_popup_destroy_order(struct bad_client *c);

/* bad-client-traffic.c: modes that end themselves; run returns the exit
 * status (0: it did what the test waits for, 1: the compositor did not
 * answer as it should, 2: setup failed). */
struct traffic_mode {
	const char *name;
	const char *summary;
	int (*run)(struct bad_client *c);
};
extern const struct traffic_mode traffic_modes[];
extern const size_t num_traffic_modes;

#endif
