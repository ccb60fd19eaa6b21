/* duet-hold-client MODE: what a compositor that samples wl_shm buffers in
 * place (duet-compositor --renderer pixman, weston --use-pixman) owes the
 * client whose buffer it holds. A 128x96 XRGB8888 toplevel; buffer A is
 * filled with COLOUR_A, B with COLOUR_B. Lines on stdout for
 * tests/integration/test_shm_hold.py; exit 0 when the mode ran to its end.
 *
 *   release         map with A and wait for its frame, then a round trip:
 *                     shown-a a_released=N           (0 when A is held)
 *                   commit B with a frame callback and wait for it:
 *                     shown-b at_done=N a_released=N b_released=N
 *                   (at_done: A's release had arrived when the frame
 *                   callback did: it left in the same flush or before)
 *                   destroy the surface, a round trip:
 *                     destroyed b_released=N
 *   destroy-shown   map with A, then destroy A, its pool and the mapping:
 *                     gone a_released=N
 *                   and wait (the test moves the window and looks at it)
 *   destroy-pending map with A, then in one flush commit B and destroy B,
 *                   its pool and mapping before any repaint could show it:
 *                     gone a_released=N
 *                   and wait (B's content must be what is shown)
 *   grow-pool       map with A, then grow A's file and pool to 64 MiB (the
 *                   compositor's mapping of it moves, mremap):
 *                     grown
 *                   and wait (A must still be drawn, from the new place)
 *   truncate        map with A, then truncate A's file to 0 bytes:
 *                     truncated
 *                   and wait for the protocol error (the test makes the
 *                   compositor repaint the window), then:
 *                     error INTERFACE CODE
 *   shared          one buffer on two surfaces: the toplevel shows A and a
 *                   desynchronized subsurface of it shows A too; the
 *                   toplevel commits B:
 *                     shared a_released=N        (0: the subsurface reads A)
 *                   the subsurface commits attach(NULL):
 *                     sub-null a_released=N      (1: nobody reads A now)
 *                   the subsurface, synchronized, commits B (the toplevel
 *                   shows it) into its cache, then the toplevel commits A
 *                   (its B replaced; the cache puts B on the subsurface):
 *                     cached b_released=N        (0: the cache, then the
 *                                                 subsurface, holds B)
 *                   the subsurface commits B again and then A (the cached
 *                   B is replaced while the subsurface shows B):
 *                     recached b_released=N      (0)
 *                   the toplevel commits A again (the cache puts A on the
 *                   subsurface: nobody reads B):
 *                     applied b_released=N       (1)
 *                   the subsurface commits B into its cache and its
 *                   wl_subsurface is destroyed (B will never be shown):
 *                     uncached b_released=N      (1)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client-common.h"

#define W 128
#define H 96
#define COLOUR_A 0xff20c040u
#define COLOUR_B 0xffd05010u

struct hold_buffer {
	struct wl_buffer *wl;
	struct wl_shm_pool *pool;
	uint32_t *pixels;
	int fd;
	bool busy; /* committed, and not released since */
};

struct hold_app {
	struct wl_display *display;
	struct test_globals g;
	struct test_toplevel top;
	struct hold_buffer a, b;
	struct wl_surface *sub_surface;
	struct wl_subsurface *sub;
	struct test_frame frame; /* the frame callback awaited, if any */
	bool a_released_at_done;
};

/* Whether A's release had come by the time the frame callback did. */
static void frame_done(void *data)
{
	struct hold_app *app = data;
	app->a_released_at_done = !app->a.busy;
}

/* One buffer in a pool (and a file) of its own, so it can go alone. */
static bool make_buffer(struct hold_app *app, struct hold_buffer *buffer, uint32_t colour)
{
	size_t size = (size_t)W * H * 4;
	buffer->pool = test_shm_pool(app->g.shm, size, &buffer->pixels, &buffer->fd);
	if (!buffer->pool)
		return false;
	for (size_t i = 0; i < (size_t)W * H; i++)
		buffer->pixels[i] = colour;
	buffer->wl = wl_shm_pool_create_buffer(buffer->pool, 0, W, H, W * 4,
	                                       WL_SHM_FORMAT_XRGB8888);
	test_buffer_track(buffer->wl, &buffer->busy);
	return true;
}

/* Everything the client has of the buffer goes: the compositor's copy of
 * the pool's mapping is unmapped once its last buffer is destroyed. */
static void drop_buffer(struct hold_buffer *buffer)
{
	wl_buffer_destroy(buffer->wl);
	wl_shm_pool_destroy(buffer->pool);
	munmap(buffer->pixels, (size_t)W * H * 4);
	close(buffer->fd);
	buffer->wl = NULL;
}

static void commit(struct hold_app *app, struct hold_buffer *buffer)
{
	buffer->busy = true;
	app->frame.hook = frame_done;
	app->frame.data = app;
	test_frame_commit(&app->frame, app->top.surface, buffer->wl, W, H);
}

static int wait_frame(struct hold_app *app)
{
	return test_frame_wait(app->display, &app->frame.done) ? 0 : -1;
}

static int protocol_error(struct hold_app *app)
{
	const struct wl_interface *iface = NULL;
	uint32_t id = 0;
	uint32_t code = wl_display_get_protocol_error(app->display, &iface, &id);
	if (!iface) {
		printf("disconnected %s\n", strerror(wl_display_get_error(app->display)));
		return 1;
	}
	printf("error %s %u\n", iface->name, code);
	return 0;
}

/* Until the test ends us; an error meanwhile is printed (and fails it). */
static int stay(struct hold_app *app)
{
	while (wl_display_dispatch(app->display) >= 0)
		;
	protocol_error(app);
	return 1;
}

static int run_release(struct hold_app *app)
{
	if (!make_buffer(app, &app->b, COLOUR_B))
		return 2;
	commit(app, &app->b);
	if (wait_frame(app) < 0)
		return protocol_error(app) + 1;
	if (wl_display_roundtrip(app->display) < 0)
		return 1;
	printf("shown-b at_done=%d a_released=%d b_released=%d\n", app->a_released_at_done,
	       !app->a.busy, !app->b.busy);
	test_toplevel_destroy(&app->top);
	if (wl_display_roundtrip(app->display) < 0)
		return 1;
	printf("destroyed b_released=%d\n", !app->b.busy);
	return stay(app);
}

/* Drops buffer and, after a round trip, tells whether A was released
 * meanwhile; then stays for the test to look. */
static int drop_and_stay(struct hold_app *app, struct hold_buffer *buffer)
{
	drop_buffer(buffer);
	if (wl_display_roundtrip(app->display) < 0)
		return protocol_error(app) + 1;
	printf("gone a_released=%d\n", !app->a.busy);
	return stay(app);
}

static int run_destroy_shown(struct hold_app *app)
{
	return drop_and_stay(app, &app->a);
}

static int run_destroy_pending(struct hold_app *app)
{
	if (!make_buffer(app, &app->b, COLOUR_B))
		return 2;
	/* One flush: no repaint can latch B before it is destroyed. */
	wl_surface_attach(app->top.surface, app->b.wl, 0, 0);
	wl_surface_damage_buffer(app->top.surface, 0, 0, W, H);
	wl_surface_commit(app->top.surface);
	return drop_and_stay(app, &app->b);
}

static int run_grow_pool(struct hold_app *app)
{
	const int32_t size = 64 << 20;
	if (ftruncate(app->a.fd, size) < 0) {
		perror("duet-hold-client: ftruncate");
		return 2;
	}
	wl_shm_pool_resize(app->a.pool, size);
	if (wl_display_roundtrip(app->display) < 0)
		return protocol_error(app) + 1;
	printf("grown\n");
	return stay(app);
}

static int run_truncate(struct hold_app *app)
{
	if (ftruncate(app->a.fd, 0) < 0) {
		perror("duet-hold-client: ftruncate");
		return 2;
	}
	printf("truncated\n");
	while (wl_display_dispatch(app->display) >= 0)
		;
	return protocol_error(app);
}

/* A commit of the subsurface (buffer NULL: attach(NULL)). */
static void sub_commit(struct hold_app *app, struct hold_buffer *buffer)
{
	if (buffer)
		buffer->busy = true;
	wl_surface_attach(app->sub_surface, buffer ? buffer->wl : NULL, 0, 0);
	wl_surface_damage_buffer(app->sub_surface, 0, 0, W, H);
	wl_surface_commit(app->sub_surface);
}

/* A toplevel commit, its frame and a round trip: every release the
 * compositor sent for it has arrived. */
static int commit_settle(struct hold_app *app, struct hold_buffer *buffer)
{
	commit(app, buffer);
	if (wait_frame(app) < 0 || wl_display_roundtrip(app->display) < 0)
		return -1;
	return 0;
}

static int run_shared(struct hold_app *app)
{
	if (!app->g.subcompositor || !make_buffer(app, &app->b, COLOUR_B))
		return 2;
	app->sub_surface = wl_compositor_create_surface(app->g.compositor);
	app->sub = wl_subcompositor_get_subsurface(app->g.subcompositor, app->sub_surface,
	                                           app->top.surface);
	wl_subsurface_set_position(app->sub, W / 2, H / 2);
	wl_subsurface_set_desync(app->sub);
	sub_commit(app, &app->a);
	if (commit_settle(app, &app->b) < 0)
		return protocol_error(app) + 1;
	printf("shared a_released=%d\n", !app->a.busy);
	sub_commit(app, NULL);
	if (wl_display_roundtrip(app->display) < 0)
		return protocol_error(app) + 1;
	printf("sub-null a_released=%d\n", !app->a.busy);

	wl_subsurface_set_sync(app->sub);
	sub_commit(app, &app->b);
	if (commit_settle(app, &app->a) < 0)
		return protocol_error(app) + 1;
	printf("cached b_released=%d\n", !app->b.busy);
	sub_commit(app, &app->b);
	sub_commit(app, &app->a);
	if (wl_display_roundtrip(app->display) < 0)
		return protocol_error(app) + 1;
	printf("recached b_released=%d\n", !app->b.busy);
	if (commit_settle(app, &app->a) < 0)
		return protocol_error(app) + 1;
	printf("applied b_released=%d\n", !app->b.busy);
	sub_commit(app, &app->b);
	wl_subsurface_destroy(app->sub);
	app->sub = NULL;
	if (wl_display_roundtrip(app->display) < 0)
		return protocol_error(app) + 1;
	printf("uncached b_released=%d\n", !app->b.busy);
	return stay(app);
}

/* Maps the toplevel with A, then plays the mode; returns the exit status. */
static int map_and_run(struct hold_app *app, int (*run)(struct hold_app *app))
{
	if (!make_buffer(app, &app->a, COLOUR_A))
		return 2;
	if (!test_toplevel_map(app->display, &app->g, &app->top, "duet-hold"))
		return 1;
	commit(app, &app->a);
	if (wait_frame(app) < 0 || wl_display_roundtrip(app->display) < 0)
		return protocol_error(app) + 1;
	printf("shown-a a_released=%d\n", !app->a.busy);
	return run(app);
}

/* Frees what is left of the client's objects (their destructors free the
 * proxies even after a protocol error) and disconnects. */
static void app_close(struct hold_app *app)
{
	test_frame_cancel(&app->frame);
	if (app->sub)
		wl_subsurface_destroy(app->sub);
	if (app->sub_surface)
		wl_surface_destroy(app->sub_surface);
	test_toplevel_destroy(&app->top);
	if (app->a.wl)
		drop_buffer(&app->a);
	if (app->b.wl)
		drop_buffer(&app->b);
	test_globals_destroy(&app->g);
	wl_display_disconnect(app->display);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(struct hold_app *app);
	} modes[] = {
		{"release", run_release},
		{"destroy-shown", run_destroy_shown},
		{"destroy-pending", run_destroy_pending},
		{"grow-pool", run_grow_pool},
		{"truncate", run_truncate},
		{"shared", run_shared},
	};
	int (*run)(struct hold_app *app) = NULL;
	for (size_t i = 0; argc == 2 && i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(argv[1], modes[i].name) == 0)
			run = modes[i].run;
	if (!run) {
		fprintf(stderr, "usage: duet-hold-client release|destroy-shown|destroy-pending|"
		        "grow-pool|truncate|shared\n");
		return 2;
	}
	/* Tests read our stdout through a pipe while we run. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct hold_app app = { 0 };
	app.display = test_connect("duet-hold-client", &app.g, NULL);
	if (!app.display)
		return 2;
	int status = map_and_run(&app, run);
	app_close(&app);
	return status;
}
