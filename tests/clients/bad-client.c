/* duet-bad-client MODE: breaks one protocol rule on purpose and checks the
 * compositor answers with the right protocol error (and so disconnects us)
 * rather than crashing, hanging or carrying on.
 *
 * Exit status: 0 the expected error arrived, 1 another error or none,
 * 2 usage or setup failure (the test could not even misbehave). The
 * traffic modes (bad-client-traffic.c) say on stdout what they did and
 * end with a status of their own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bad-client.h"
#include "viewporter-client-protocol.h"

struct bad_mode {
	const char *name;
	const char *summary;
	bool (*run)(struct bad_client *c);
	int wait_ms; /* how long to wait for an error that comes at repaint */
	struct expected_error expected[MAX_EXPECTED];
};

uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A toplevel with its initial commit done; if wait_configure, also its first
 * configure received (not acked). */
bool make_toplevel(struct bad_client *c, bool wait_configure)
{
	c->top.manual_ack = true;
	test_toplevel_create(&c->g, &c->top, "duet-bad-client");
	wl_surface_commit(c->top.surface);
	if (!wait_configure)
		return true;
	uint64_t deadline = now_ms() + 5000;
	while (!c->top.configured && now_ms() < deadline) {
		if (wl_display_roundtrip(c->display) < 0)
			return false;
	}
	return c->top.configured;
}

bool make_buffer(struct bad_client *c, int32_t pool_size, int32_t offset, int w, int h,
                 int stride)
{
	c->pool_fd = test_create_memfd((size_t)pool_size);
	if (c->pool_fd < 0) {
		perror("duet-bad-client: memfd");
		return false;
	}
	c->pool = wl_shm_create_pool(c->g.shm, c->pool_fd, pool_size);
	c->buffer = wl_shm_pool_create_buffer(c->pool, offset, w, h, stride,
	                                      WL_SHM_FORMAT_XRGB8888);
	return true;
}

void *mode_data(struct bad_client *c, size_t size, void (*cleanup)(struct bad_client *c))
{
	c->mode_data = calloc(1, size);
	if (c->mode_data)
		c->mode_cleanup = cleanup;
	return c->mode_data;
}

void destroy_chain(size_t n, struct xdg_popup **popups, struct xdg_surface **xdg_surfaces,
                   struct wl_subsurface **subsurfaces, struct wl_surface **surfaces)
{
	for (size_t i = n; i-- > 0;) {
		if (popups[i])
			xdg_popup_destroy(popups[i]);
		if (xdg_surfaces[i])
			xdg_surface_destroy(xdg_surfaces[i]);
		if (subsurfaces && subsurfaces[i])
			wl_subsurface_destroy(subsurfaces[i]);
		if (surfaces[i])
			wl_surface_destroy(surfaces[i]);
	}
}

static bool run_buffer_too_big(struct bad_client *c)
{
	if (!make_buffer(c, 4096, 0, 64, 64, 256))
		return false;
	/* 64x64 XRGB needs 16 KiB, four times the pool. */
	return true;
}

static bool run_negative_size(struct bad_client *c)
{
	if (!make_buffer(c, 4096, 0, -16, 16, 64))
		return false;
	return true;
}

static bool run_huge_stride(struct bad_client *c)
{
	if (!make_buffer(c, 4096, 0, 16, 16, 0x7ffffffc))
		return false;
	/* stride * height overflows 32 bits if the server multiplies naively. */
	return true;
}

static bool run_truncated_pool(struct bad_client *c)
{
	const int w = 64, h = 64;
	if (!make_toplevel(c, true) || !make_buffer(c, w * h * 4, 0, w, h, w * 4))
		return false;
	xdg_surface_ack_configure(c->top.xdg_surface, c->top.serial);
	test_frame_commit(&c->frame, c->top.surface, c->buffer, w, h);
	/* Let the compositor show the buffer once while it is still valid, so
	 * its mapping of the pool exists when the memory goes away. */
	uint64_t deadline = now_ms() + 5000;
	while (!c->frame.done && now_ms() < deadline) {
		if (wl_display_roundtrip(c->display) < 0)
			return true; /* an error already: let the caller report it */
		if (!c->frame.done)
			usleep(10000);
	}
	if (!c->frame.done)
		fprintf(stderr, "duet-bad-client: first frame never presented\n");
	if (ftruncate(c->pool_fd, 0) < 0) {
		perror("duet-bad-client: ftruncate");
		return false;
	}
	test_frame_commit(&c->frame, c->top.surface, c->buffer, w, h);
	return true;
}

static bool run_bad_ack(struct bad_client *c)
{
	if (!make_toplevel(c, true))
		return false;
	xdg_surface_ack_configure(c->top.xdg_surface, c->top.serial + 1000u);
	wl_surface_commit(c->top.surface);
	return true;
}

static bool run_unconfigured_buffer(struct bad_client *c)
{
	const int w = 32, h = 32;
	if (!make_toplevel(c, false) || !make_buffer(c, w * h * 4, 0, w, h, w * 4))
		return false;
	wl_surface_attach(c->top.surface, c->buffer, 0, 0);
	wl_surface_damage_buffer(c->top.surface, 0, 0, w, h);
	wl_surface_commit(c->top.surface);
	return true;
}

static bool run_double_role(struct bad_client *c)
{
	if (!make_toplevel(c, false))
		return false;
	c->second_toplevel = xdg_surface_get_toplevel(c->top.xdg_surface);
	return true;
}

static bool run_double_role_subsurface(struct bad_client *c)
{
	if (!c->g.subcompositor) {
		fprintf(stderr, "duet-bad-client: no wl_subcompositor\n");
		return false;
	}
	if (!make_toplevel(c, false))
		return false;
	c->other_surface = wl_compositor_create_surface(c->g.compositor);
	c->subsurface = wl_subcompositor_get_subsurface(c->g.subcompositor, c->top.surface,
	                                                c->other_surface);
	return true;
}

static bool run_bad_viewport(struct bad_client *c)
{
	if (!c->g.viewporter) {
		fprintf(stderr, "duet-bad-client: no wp_viewporter\n");
		return false;
	}
	c->other_surface = wl_compositor_create_surface(c->g.compositor);
	c->viewport = wp_viewporter_get_viewport(c->g.viewporter, c->other_surface);
	wp_viewport_set_source(c->viewport, wl_fixed_from_int(0), wl_fixed_from_int(0),
	                       wl_fixed_from_int(-5), wl_fixed_from_int(10));
	wl_surface_commit(c->other_surface);
	return true;
}

static bool run_invalid_object(struct bad_client *c)
{
	/* libwayland-client refuses to marshal on unknown ids, so write a
	 * well-formed header for an object id nobody created straight onto the
	 * socket: id 4000, opcode 0, size 8 (just the header). */
	if (wl_display_flush(c->display) < 0)
		return false;
	uint32_t msg[2] = {4000u, (8u << 16) | 0u};
	ssize_t n = write(wl_display_get_fd(c->display), msg, sizeof(msg));
	if (n != (ssize_t)sizeof(msg)) {
		perror("duet-bad-client: write");
		return false;
	}
	return true;
}

static const struct bad_mode modes[] = {
	{"buffer-too-big", "wl_shm_pool.create_buffer beyond the pool's size", run_buffer_too_big, 1000,
	 {{"wl_shm_pool", WL_SHM_ERROR_INVALID_STRIDE}, {"wl_shm", WL_SHM_ERROR_INVALID_STRIDE}}},
	{"negative-size", "wl_shm_pool.create_buffer with a negative width", run_negative_size, 1000,
	 {{"wl_shm_pool", WL_SHM_ERROR_INVALID_STRIDE}, {"wl_shm", WL_SHM_ERROR_INVALID_STRIDE}}},
	{"huge-stride", "wl_shm_pool.create_buffer with a 2 GiB stride", run_huge_stride, 1000,
	 {{"wl_shm_pool", WL_SHM_ERROR_INVALID_STRIDE}, {"wl_shm", WL_SHM_ERROR_INVALID_STRIDE}}},
	{"truncated-pool", "shm file truncated to 0 under a committed buffer", run_truncated_pool, 5000,
	 {{"wl_buffer", WL_SHM_ERROR_INVALID_FD}, {"wl_shm", WL_SHM_ERROR_INVALID_FD},
	  {"wl_shm_pool", WL_SHM_ERROR_INVALID_FD}}},
	{"bad-ack", "xdg_surface.ack_configure with a serial never sent", run_bad_ack, 1000,
	 {{"xdg_surface", XDG_SURFACE_ERROR_INVALID_SERIAL},
	  {"xdg_wm_base", XDG_WM_BASE_ERROR_INVALID_SURFACE_STATE}}},
	{"unconfigured-buffer", "buffer committed before the first configure was acked",
	 run_unconfigured_buffer, 1000,
	 {{"xdg_surface", XDG_SURFACE_ERROR_UNCONFIGURED_BUFFER},
	  {"xdg_wm_base", XDG_WM_BASE_ERROR_INVALID_SURFACE_STATE}}},
	{"double-role", "xdg_surface.get_toplevel twice", run_double_role, 1000,
	 {{"xdg_surface", XDG_SURFACE_ERROR_ALREADY_CONSTRUCTED}, {"xdg_wm_base", XDG_WM_BASE_ERROR_ROLE}}},
	{"double-role-subsurface", "wl_subcompositor.get_subsurface on a toplevel's surface",
	 run_double_role_subsurface, 1000, {{"wl_subcompositor", WL_SUBCOMPOSITOR_ERROR_BAD_SURFACE}}},
	{"bad-viewport", "wp_viewport.set_source with a negative width", run_bad_viewport, 1000,
	 {{"wp_viewport", WP_VIEWPORT_ERROR_BAD_VALUE}}},
	{"invalid-object", "a request on an object id that does not exist", run_invalid_object, 1000,
	 {{"wl_display", WL_DISPLAY_ERROR_INVALID_OBJECT}}},
	/* bad-client-limits.c */
	{"deep-subsurfaces", "a chain of 100000 nested subsurfaces", run_deep_subsurfaces, 1000,
	 {{"wl_subcompositor", WL_SUBCOMPOSITOR_ERROR_BAD_SURFACE}}},
	{"deep-popups", "a chain of 100000 nested popups", run_deep_popups, 1000,
	 {{"xdg_wm_base", XDG_WM_BASE_ERROR_INVALID_POPUP_PARENT}}},
	/* No error expected: the compositor clamps; it must just survive. */
	{"positioner-huge-size", "a popup of INT32_MAX x INT32_MAX at the anchor range's edge",
	 run_positioner_huge_size, 1000, {{NULL, 0}}},
	{"offset-overflow", "a mapped toplevel and a synchronized subsurface attached at "
	 "INT32_MAX offsets, commit after commit", run_offset_overflow, 1000, {{NULL, 0}}},
	{"huge-buffer-scale", "set_buffer_scale(INT32_MAX) over a committed 4x4 buffer",
	 run_huge_buffer_scale, 1000, {{"wl_surface", WL_SURFACE_ERROR_INVALID_SIZE}}},
	{"texture-budget", "8 surfaces with a 4096x4096 buffer each (512 MiB of textures)",
	 run_texture_budget, 1000, {{"wl_display", WL_DISPLAY_ERROR_NO_MEMORY}}},
	{"mime-flood", "a wl_data_source offering 100000 MIME types", run_mime_flood, 1000,
	 {{"wl_display", WL_DISPLAY_ERROR_NO_MEMORY}}},
	/* bad-client-spec.c */
	{"toplevel-to-popup", "a former toplevel's wl_surface given the xdg_popup role",
	 run_toplevel_to_popup, 1000, {{"xdg_wm_base", XDG_WM_BASE_ERROR_ROLE}}},
	{"popup-to-toplevel", "a former popup's wl_surface given the xdg_toplevel role",
	 run_popup_to_toplevel, 1000, {{"xdg_wm_base", XDG_WM_BASE_ERROR_ROLE}}},
	{"short-stride", "a 64-pixel XRGB buffer with a 64-byte stride, committed",
	 run_short_stride, 1000,
	 {{"wl_buffer", WL_SHM_ERROR_INVALID_STRIDE}, {"wl_shm", WL_SHM_ERROR_INVALID_STRIDE},
	  {"wl_shm_pool", WL_SHM_ERROR_INVALID_STRIDE}}},
	{"offset-past-pool", "wl_shm_pool.create_buffer whose last row ends past the pool",
	 run_offset_past_pool, 1000,
	 {{"wl_shm_pool", WL_SHM_ERROR_INVALID_STRIDE}, {"wl_shm", WL_SHM_ERROR_INVALID_STRIDE}}},
	{"min-over-max", "xdg_toplevel min size 300x100 over max size 200x200, committed",
	 run_min_over_max, 1000, {{"xdg_toplevel", XDG_TOPLEVEL_ERROR_INVALID_SIZE}}},
	{"negative-min-size", "xdg_toplevel.set_min_size(-1, 10)", run_negative_min_size, 1000,
	 {{"xdg_toplevel", XDG_TOPLEVEL_ERROR_INVALID_SIZE}}},
	{"popup-destroy-order", "a mapped popup destroyed while a popup on it is still open",
	 run_popup_destroy_order, 1000,
	 {{"xdg_wm_base", XDG_WM_BASE_ERROR_NOT_THE_TOPMOST_POPUP}}},
	/* No error expected: the viewport sets the size. */
	{"scale-viewport", "a 33x33 buffer at scale 2 with a 50x50 viewport destination",
	 run_scale_viewport, 1000, {{NULL, 0}}},
};

#define NUM_MODES (sizeof(modes) / sizeof(modes[0]))

static void usage(FILE *out)
{
	fprintf(out, "usage: duet-bad-client MODE\nmodes:\n");
	for (size_t i = 0; i < NUM_MODES; i++)
		fprintf(out, "  %-24s %s\n", modes[i].name, modes[i].summary);
	for (size_t i = 0; i < num_traffic_modes; i++)
		fprintf(out, "  %-24s %s\n", traffic_modes[i].name, traffic_modes[i].summary);
}

/* Roundtrips until the connection fails or wait_ms pass. Several, spaced
 * out, because some errors only come when the compositor repaints. */
static void wait_for_error(struct bad_client *c, int wait_ms)
{
	uint64_t deadline = now_ms() + (uint64_t)wait_ms;
	do {
		if (wl_display_roundtrip(c->display) < 0)
			return;
		usleep(20000);
	} while (now_ms() < deadline);
	wl_display_roundtrip(c->display);
}

static void destroy_objects(struct bad_client *c)
{
	if (c->mode_cleanup)
		c->mode_cleanup(c);
	free(c->mode_data);
	test_frame_cancel(&c->frame);
	if (c->viewport)
		wp_viewport_destroy(c->viewport);
	if (c->subsurface)
		wl_subsurface_destroy(c->subsurface);
	if (c->buffer)
		wl_buffer_destroy(c->buffer);
	if (c->pool)
		wl_shm_pool_destroy(c->pool);
	if (c->second_toplevel)
		xdg_toplevel_destroy(c->second_toplevel);
	test_toplevel_destroy(&c->top);
	if (c->other_surface)
		wl_surface_destroy(c->other_surface);
	if (c->pool_fd >= 0)
		close(c->pool_fd);
	test_globals_destroy(&c->g);
}

int main(int argc, char **argv)
{
	if (argc != 2 || strcmp(argv[1], "--help") == 0) {
		usage(argc == 2 ? stdout : stderr);
		return argc == 2 ? 0 : 2;
	}
	const struct bad_mode *mode = NULL;
	const struct traffic_mode *traffic = NULL;
	for (size_t i = 0; i < NUM_MODES; i++)
		if (strcmp(argv[1], modes[i].name) == 0)
			mode = &modes[i];
	for (size_t i = 0; i < num_traffic_modes; i++)
		if (strcmp(argv[1], traffic_modes[i].name) == 0)
			traffic = &traffic_modes[i];
	if (!mode && !traffic) {
		fprintf(stderr, "duet-bad-client: unknown mode '%s'\n", argv[1]);
		usage(stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	struct bad_client c = {.pool_fd = -1};
	c.display = test_connect("duet-bad-client", &c.g, NULL);
	if (!c.display)
		return 2;

	int status = 2;
	if (traffic) {
		status = traffic->run(&c);
		goto out;
	}
	if (!mode->run(&c)) {
		fprintf(stderr, "%s: could not set up the misbehaviour\n", mode->name);
		goto out;
	}
	wait_for_error(&c, mode->wait_ms);

	/* libwayland-client reports wl_display's own errors (invalid object or
	 * method, no memory) as EINVAL/ENOMEM rather than EPROTO, yet still
	 * records them as protocol errors. */
	int err = wl_display_get_error(c.display);
	if (!mode->expected[0].interface) {
		status = err ? 1 : 0;
		printf("%s: %s\n", mode->name, err ? "disconnected, expected to stay connected" :
		       "still connected, as expected");
		goto out;
	}
	if (err != EPROTO && err != EINVAL && err != ENOMEM) {
		printf("%s: no protocol error (connection error: %s)\n", mode->name,
		       err ? strerror(err) : "none, still connected");
		status = 1;
		goto out;
	}
	const struct wl_interface *iface = NULL;
	uint32_t id = 0;
	uint32_t code = wl_display_get_protocol_error(c.display, &iface, &id);
	const char *name = iface ? iface->name : "(unknown object)";
	status = 1;
	for (int i = 0; i < MAX_EXPECTED && mode->expected[i].interface; i++)
		if (iface && strcmp(name, mode->expected[i].interface) == 0 &&
		    code == mode->expected[i].code)
			status = 0;
	printf("%s: got protocol error %s@%u code %u: %s\n", mode->name, name, id, code,
	       status == 0 ? "expected" : "UNEXPECTED");
	if (status != 0) {
		printf("%s: expected one of:", mode->name);
		for (int i = 0; i < MAX_EXPECTED && mode->expected[i].interface; i++)
			printf(" %s code %u", mode->expected[i].interface, mode->expected[i].code);
		printf("\n");
	}

out:
	destroy_objects(&c);
	wl_display_disconnect(c.display);
	return status;
}
