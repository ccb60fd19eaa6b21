/* The toolkit's window-system and engine independent half: options, the
 * app (one platform and one engine) and window life cycle, the frame
 * sequence, and the draw calls' dispatch. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tk-private.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static int take_value(int *argc, char **argv, int i, const char *name, const char **value)
{
	size_t n = strlen(name);
	if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') {
		*value = argv[i] + n + 1;
		return 1;
	}
	if (strcmp(argv[i], name) != 0)
		return 0;
	if (i + 1 >= *argc) {
		fprintf(stderr, "%s needs a value\n", name);
		return -1;
	}
	*value = argv[i + 1];
	return 2;
}

/* The index of value in names (NULL slots never match); -1 after printing
 * why. */
static int pick(const char *what, const char *value, const char *const *names, size_t n,
                const char *want)
{
	for (size_t k = 0; k < n; k++)
		if (names[k] && strcmp(value, names[k]) == 0)
			return (int)k;
	fprintf(stderr, "unknown %s '%s' (want %s)\n", what, value, want);
	return -1;
}

int tk_parse_options(int *argc, char **argv, struct tk_options *opts)
{
	static const char *const backends[] = {
		[TK_BACKEND_WAYLAND] = "wayland", [TK_BACKEND_X11] = "x11",
	};
	static const char *const engines[] = { [TK_ENGINE_GL] = "gl", [TK_ENGINE_SW] = "sw" };
	opts->backend = TK_BACKEND_AUTO;
	opts->engine = TK_ENGINE_GL;
	int i = 1;
	while (i < *argc) {
		const char *v = NULL;
		int k;
		int used = take_value(argc, argv, i, "--backend", &v);
		if (used > 0) {
			if ((k = pick("backend", v, backends, N_OF(backends), "wayland or x11")) < 0)
				return -1;
			opts->backend = (enum tk_backend_kind)k;
		} else if (used == 0 && (used = take_value(argc, argv, i, "--engine", &v)) > 0) {
			if ((k = pick("engine", v, engines, N_OF(engines), "gl or sw")) < 0)
				return -1;
			opts->engine = (enum tk_engine_kind)k;
		}
		if (used < 0)
			return -1;
		if (used == 0) {
			i++;
			continue;
		}
		memmove(&argv[i], &argv[i + used], (size_t)(*argc - i - used + 1) * sizeof(char *));
		*argc -= used;
	}
	return 0;
}

static const struct tk_platform *platform_from_env(void)
{
	const char *wl = getenv("WAYLAND_DISPLAY");
	const char *x = getenv("DISPLAY");
	if (wl && *wl)
		return &tk_platform_wayland;
	if (x && *x)
		return &tk_platform_x11;
	fprintf(stderr, "no display: set WAYLAND_DISPLAY or DISPLAY, or pass --backend\n");
	return NULL;
}

struct tk_app *tk_app_create(const struct tk_options *opts, const char *app_id)
{
	static const struct tk_platform *const platforms[] = {
		[TK_BACKEND_WAYLAND] = &tk_platform_wayland, [TK_BACKEND_X11] = &tk_platform_x11,
	};
	static const struct tk_engine *const engines[] = {
		[TK_ENGINE_GL] = &tk_engine_gl, [TK_ENGINE_SW] = &tk_engine_sw,
	};
	const struct tk_platform *platform =
		opts->backend == TK_BACKEND_AUTO ? platform_from_env() : platforms[opts->backend];
	if (!platform)
		return NULL;
	struct tk_app *app = calloc(1, sizeof(*app));
	if (!app)
		return NULL;
	app->platform = platform;
	app->engine = engines[opts->engine];
	app->app_id = strdup(app_id);
	app->presentation = "none";
	app->path_detail = app->engine->path;
	if (!app->app_id || platform->connect(app) < 0) {
		free(app->app_id);
		free(app);
		return NULL;
	}
	if (app->engine->init(app) < 0) {
		platform->disconnect(app);
		free(app->app_id);
		free(app);
		return NULL;
	}
	return app;
}

void tk_app_destroy(struct tk_app *app)
{
	if (!app)
		return;
	for (size_t i = 0; i < sizeof(app->windows) / sizeof(app->windows[0]); i++)
		if (app->windows[i])
			tk_window_destroy(app->windows[i]);
	if (app->engine->fini)
		app->engine->fini(app);
	app->platform->disconnect(app);
	free(app->app_id);
	free(app);
}

const char *tk_app_backend_name(const struct tk_app *app)
{
	return app->platform->name;
}

const char *tk_app_engine_name(const struct tk_app *app)
{
	return app->engine->name;
}

const char *tk_app_presentation_name(const struct tk_app *app)
{
	return app->presentation;
}

const char *tk_app_path_detail(const struct tk_app *app)
{
	return app->path_detail;
}

int tk_poll_fd(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int r;
	do
		r = poll(&pfd, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	if (r > 0 && (pfd.revents & (POLLERR | POLLHUP)) && !(pfd.revents & POLLIN))
		return -1;
	return r > 0;
}

static void deliver_pending(struct tk_app *app)
{
	/* Copy first: a listener may end a frame and queue more. */
	struct tk_pending_present batch[TK_MAX_PENDING];
	int n = app->n_pending;
	memcpy(batch, app->pending, (size_t)n * sizeof(batch[0]));
	app->n_pending = 0;
	for (int i = 0; i < n; i++)
		tk_window_emit_presented(batch[i].win, &batch[i].info);
}

int tk_app_dispatch(struct tk_app *app, int timeout_ms)
{
	if (app->n_pending) {
		deliver_pending(app);
		timeout_ms = 0;
	}
	return app->platform->dispatch(app, timeout_ms);
}

uint64_t tk_app_connected_ns(const struct tk_app *app)
{
	return app->connected_ns;
}

uint64_t tk_app_roundtrip(struct tk_app *app)
{
	if (app->platform->roundtrip(app) < 0)
		return 0;
	return tk_now_ns();
}

bool tk_app_protocol_counts(struct tk_app *app, uint64_t *requests, uint64_t *events)
{
	if (!app->platform->protocol_counts)
		return false;
	return app->platform->protocol_counts(app, requests, events);
}

bool tk_app_can_server_resize(struct tk_app *app, const char **why)
{
	return app->platform->can_server_resize(app, why);
}

/* ------------------------------------------------------------ windows */

struct tk_window *tk_window_create(struct tk_app *app, int width, int height,
                                   const struct tk_window_listener *listener, void *data)
{
	size_t slot, nslots = sizeof(app->windows) / sizeof(app->windows[0]);
	if (width < 1 || height < 1 || width > 16384 || height > 16384) {
		fprintf(stderr, "window size %dx%d out of range 1..16384\n", width, height);
		return NULL;
	}
	for (slot = 0; slot < nslots && app->windows[slot]; slot++)
		;
	if (slot == nslots)
		return NULL;
	struct tk_window *win = calloc(1, sizeof(*win));
	if (!win)
		return NULL;
	win->app = app;
	win->listener = listener;
	win->data = data;
	win->width = width;
	win->height = height;
	win->feedback = true;
	if (app->platform->window_create(win) < 0) {
		free(win);
		return NULL;
	}
	app->windows[slot] = win;
	return win;
}

void tk_window_destroy(struct tk_window *win)
{
	if (!win)
		return;
	struct tk_app *app = win->app;
	app->engine->window_fini(win);
	app->platform->window_destroy(win);
	for (size_t i = 0; i < sizeof(app->windows) / sizeof(app->windows[0]); i++)
		if (app->windows[i] == win)
			app->windows[i] = NULL;
	/* Drop queued events for it. */
	int j = 0;
	for (int i = 0; i < app->n_pending; i++)
		if (app->pending[i].win != win)
			app->pending[j++] = app->pending[i];
	app->n_pending = j;
	free(win);
}

void tk_window_set_title(struct tk_window *win, const char *title)
{
	win->app->platform->set_title(win, title);
}

int tk_window_show(struct tk_window *win)
{
	return win->app->platform->show(win);
}

bool tk_window_ready(const struct tk_window *win)
{
	return win->ready;
}

void tk_window_get_size(const struct tk_window *win, int *width, int *height)
{
	*width = win->width;
	*height = win->height;
}

void tk_window_resize(struct tk_window *win, int width, int height)
{
	if (width < 1 || height < 1 || width > 16384 || height > 16384)
		return;
	win->app->platform->request_resize(win, width, height);
}

int tk_window_server_resize(struct tk_window *win, int width, int height)
{
	if (width < 1 || height < 1 || width > 16384 || height > 16384)
		return -1;
	return win->app->platform->server_resize(win, width, height);
}

bool tk_window_close_requested(const struct tk_window *win)
{
	return win->close_requested;
}

void tk_window_set_feedback(struct tk_window *win, bool on)
{
	win->feedback = on;
}

void tk_window_set_size(struct tk_window *win, int width, int height)
{
	if (width == win->width && height == win->height)
		return;
	win->width = width;
	win->height = height;
	if (win->listener && win->listener->resized)
		win->listener->resized(win->data, win, width, height);
}

void tk_window_free_drawing(struct tk_window *win)
{
	while (win->images)
		tk_image_destroy(win->images);
	if (win->draw)
		win->draw->ops->destroy(win->draw);
	win->draw = NULL;
}

void tk_window_emit_presented(struct tk_window *win, const struct tk_frame_info *info)
{
	if (win->listener && win->listener->presented)
		win->listener->presented(win->data, win, info);
}

void tk_window_queue_presented(struct tk_window *win, const struct tk_frame_info *info)
{
	struct tk_app *app = win->app;
	if (app->n_pending == TK_MAX_PENDING) /* the app stopped dispatching: keep the newest */
		memmove(&app->pending[0], &app->pending[1], (TK_MAX_PENDING - 1) * sizeof(app->pending[0]));
	else
		app->n_pending++;
	app->pending[app->n_pending - 1] = (struct tk_pending_present){ win, *info };
}

void tk_window_emit_close(struct tk_window *win)
{
	win->close_requested = true;
	if (win->listener && win->listener->close_requested)
		win->listener->close_requested(win->data, win);
}

void tk_window_emit_key(struct tk_window *win, uint32_t keycode, bool pressed)
{
	if (win->listener && win->listener->key)
		win->listener->key(win->data, win, keycode, pressed, tk_now_ns());
}

struct tk_draw *tk_window_begin_frame(struct tk_window *win)
{
	struct tk_app *app = win->app;
	if (!win->ready || win->in_frame)
		return NULL;
	win->frame_width = win->width;
	win->frame_height = win->height;
	if (app->platform->frame_begin)
		app->platform->frame_begin(win);
	struct tk_draw *d = app->engine->begin_frame(win);
	if (!d)
		return NULL;
	win->in_frame = true;
	return d;
}

uint64_t tk_window_end_frame(struct tk_window *win, uint64_t *flush_ns)
{
	struct tk_app *app = win->app;
	if (!win->in_frame)
		return 0;
	win->in_frame = false;
	uint64_t seq = ++win->seq;
	win->draw->ops->flush(win->draw);
	if (app->platform->frame_pre_commit)
		app->platform->frame_pre_commit(win, seq);
	uint64_t t0 = tk_now_ns();
	int r = app->engine->present(win);
	uint64_t t1 = tk_now_ns();
	if (flush_ns)
		*flush_ns = t1 - t0;
	if (r < 0)
		return 0;
	/* A platform whose post_commit sends the frame stamps this again as
	 * the frame leaves (before its write). */
	win->submitted_ns = t1;
	if (app->platform->frame_post_commit)
		app->platform->frame_post_commit(win, seq);
	return seq;
}

void tk_window_mark_received(struct tk_window *win)
{
	win->want_mark = true;
}

uint64_t tk_window_wait_received(struct tk_window *win)
{
	if (!win->mark_sent)
		return 0;
	int r = win->mark_ns ? 0 : win->app->platform->wait_mark(win);
	uint64_t t = win->mark_ns;
	win->mark_sent = false;
	win->mark_ns = 0;
	return r < 0 ? 0 : t;
}

uint64_t tk_window_submitted_ns(const struct tk_window *win)
{
	return win->submitted_ns;
}

/* ------------------------------------------------------------ images, draw */

struct tk_image *tk_image_create(struct tk_window *win, int width, int height,
                                 const uint32_t *pixels, int stride)
{
	if (width < 1 || height < 1 || width > 8192 || height > 8192)
		return NULL;
	struct tk_image *img = calloc(1, sizeof(*img));
	if (!img)
		return NULL;
	img->pixels = malloc((size_t)width * (size_t)height * 4);
	if (!img->pixels) {
		free(img);
		return NULL;
	}
	for (int y = 0; y < height; y++)
		memcpy(img->pixels + (size_t)y * (size_t)width,
		       (const char *)pixels + (size_t)y * (size_t)stride, (size_t)width * 4);
	img->win = win;
	img->width = width;
	img->height = height;
	img->next = win->images;
	win->images = img;
	return img;
}

void tk_image_destroy(struct tk_image *img)
{
	if (!img)
		return;
	struct tk_window *win = img->win;
	if (win->draw && win->draw->ops->image_release)
		win->draw->ops->image_release(win->draw, img);
	for (struct tk_image **p = &win->images; *p; p = &(*p)->next)
		if (*p == img) {
			*p = img->next;
			break;
		}
	free(img->pixels);
	free(img);
}

void tk_image_get_size(const struct tk_image *img, int *width, int *height)
{
	*width = img->width;
	*height = img->height;
}

void tk_draw_clear(struct tk_draw *d, struct tk_color c)
{
	d->ops->clear(d, c);
}

void tk_draw_rect(struct tk_draw *d, float x, float y, float w, float h, struct tk_color c)
{
	d->ops->rect(d, x, y, w, h, c);
}

void tk_draw_image(struct tk_draw *d, struct tk_image *img, float sx, float sy, float sw,
                   float sh, float x, float y, float w, float h, enum tk_filter filter,
                   struct tk_color tint)
{
	d->ops->image(d, img, sx, sy, sw, sh, x, y, w, h, filter, tint);
}

void tk_draw_gradient(struct tk_draw *d, float x, float y, float w, float h, struct tk_color c0,
                      struct tk_color c1, bool vertical)
{
	d->ops->gradient(d, x, y, w, h, c0, c1, vertical);
}
