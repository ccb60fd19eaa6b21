/* duet-compositor as a wlcs module: wlcs (the Wayland Conformance Suite)
 * loads this into its test process and runs one server per test.
 *
 * wlcs runs the server on a thread of its own (start_on_this_thread) and
 * sends every other hook through its dispatcher loop, whose fd the
 * server's loop watches: the server is only ever touched on its thread.
 * Input goes into the seat as libinput's and the test protocol's do;
 * windows move as the test protocol's move_window moves them. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client-core.h>
#include <wlcs/display_server.h>
#include <wlcs/pointer.h>
#include <wlcs/touch.h>

#include "comp.h"

/* A client wlcs made: the client end of its socket names it. */
struct client_link {
	struct wl_list link;
	int client_fd;
	struct wl_client *client;
	struct wl_listener destroy;
};

struct duet_wlcs {
	WlcsDisplayServer base;
	struct comp_options options;
	struct comp_server server;
	bool running;
	struct wl_list clients; /* client_link.link */
	};

/* What a server offers, known before it starts (wlcs asks first): learnt
 * once per process from a probe server, since every test's server has the
 * same options (wlcs passes the same arguments each time). */
static struct {
	pthread_once_t once;
	bool ok;
	struct comp_options options;
	WlcsIntegrationDescriptor descriptor;
	WlcsExtensionDescriptor extensions[COMP_MAX_GLOBALS];
} offered = { .once = PTHREAD_ONCE_INIT };

/* A pointer or a touchscreen wlcs made: its hooks, then its server. */
struct device {
	union {
		WlcsPointer pointer;
		WlcsTouch touch;
	};
	struct duet_wlcs *dw;
};

static struct duet_wlcs *from_base(const WlcsDisplayServer *base)
{
	return (struct duet_wlcs *)((char *)base - offsetof(struct duet_wlcs, base));
}

static struct device *device_new(WlcsDisplayServer *base)
{
	struct device *d = calloc(1, sizeof(*d));
	if (d)
		d->dw = from_base(base);
	return d;
}

static struct comp_server *device_server(void *device)
{
	return &((struct device *)device)->dw->server;
}

static uint32_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

/* ------------------------------------------------------------- clients */

static void client_destroyed(struct wl_listener *listener, void *data)
{
	struct client_link *c = wl_container_of(listener, c, destroy);
	wl_list_remove(&c->link);
	wl_list_remove(&c->destroy.link);
	free(c);
}

static int create_client_socket(WlcsDisplayServer *base)
{
	struct duet_wlcs *dw = from_base(base);
	int fds[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
		return -1;
	struct client_link *c = calloc(1, sizeof(*c));
	c->client = c ? wl_client_create(dw->server.display, fds[0]) : NULL;
	if (!c || !c->client) {
		free(c);
		close(fds[0]);
		close(fds[1]);
		errno = ENOMEM;
		return -1;
	}
	c->client_fd = fds[1];
	c->destroy.notify = client_destroyed;
	wl_client_add_destroy_listener(c->client, &c->destroy);
	wl_list_insert(&dw->clients, &c->link);
	return fds[1];
}

static void position_window_absolute(WlcsDisplayServer *base, struct wl_display *display,
                                     struct wl_surface *proxy, int x, int y)
{
	struct duet_wlcs *dw = from_base(base);
	int fd = wl_display_get_fd(display);
	struct client_link *c;
	wl_list_for_each(c, &dw->clients, link) {
		if (c->client_fd != fd)
			continue;
		struct wl_resource *r = wl_client_get_object(c->client,
		                                             wl_proxy_get_id((struct wl_proxy *)proxy));
		struct comp_surface *surface = r ? comp_surface_from_resource(r) : NULL;
		struct comp_window *window = surface ? comp_window_from_surface(surface) : NULL;
		if (window) {
			comp_window_set_position(window, x, y);
		} else {
			comp_log("wlcs: surface %u is no window: not moved",
			         wl_proxy_get_id((struct wl_proxy *)proxy));
		}
		return;
	}
	comp_log("wlcs: position_window_absolute for a client wlcs did not make");
}

/* ------------------------------------------------------------- pointer */

static void pointer_move_absolute(WlcsPointer *p, wl_fixed_t x, wl_fixed_t y)
{
	comp_seat_pointer_motion(device_server(p), wl_fixed_to_double(x), wl_fixed_to_double(y),
	                         now_ms());
}

static void pointer_move_relative(WlcsPointer *p, wl_fixed_t dx, wl_fixed_t dy)
{
	double x, y;
	comp_seat_pointer_position(device_server(p), &x, &y);
	comp_seat_pointer_motion(device_server(p), x + wl_fixed_to_double(dx),
	                         y + wl_fixed_to_double(dy), now_ms());
}

static void pointer_button_down(WlcsPointer *p, int button)
{
	comp_seat_pointer_button(device_server(p), (uint32_t)button, true, now_ms());
}

static void pointer_button_up(WlcsPointer *p, int button)
{
	comp_seat_pointer_button(device_server(p), (uint32_t)button, false, now_ms());
}

static void pointer_destroy(WlcsPointer *p)
{
	free(p);
}

static WlcsPointer *create_pointer(WlcsDisplayServer *base)
{
	struct device *d = device_new(base);
	if (!d)
		return NULL;
	d->pointer = (WlcsPointer){
		.version = WLCS_POINTER_VERSION,
		.move_absolute = pointer_move_absolute,
		.move_relative = pointer_move_relative,
		.button_up = pointer_button_up,
		.button_down = pointer_button_down,
		.destroy = pointer_destroy,
	};
	return &d->pointer;
}

/* --------------------------------------------------------------- touch */

/* wlcs' touchscreen has one point: id 0, each event its own frame. Its
 * coordinates are whole pixels in wl_fixed_t's clothes: wlcs::Touch
 * passes its ints through unconverted (as Mir's module reads them). */
static void touch_down(WlcsTouch *t, wl_fixed_t x, wl_fixed_t y)
{
	comp_seat_touch_down(device_server(t), 0, x, y, now_ms());
	comp_seat_touch_frame(device_server(t));
}

static void touch_move(WlcsTouch *t, wl_fixed_t x, wl_fixed_t y)
{
	comp_seat_touch_motion(device_server(t), 0, x, y, now_ms());
	comp_seat_touch_frame(device_server(t));
}

static void touch_up(WlcsTouch *t)
{
	comp_seat_touch_up(device_server(t), 0, now_ms());
	comp_seat_touch_frame(device_server(t));
}

static void touch_destroy(WlcsTouch *t)
{
	free(t);
}

static WlcsTouch *create_touch(WlcsDisplayServer *base)
{
	struct device *d = device_new(base);
	if (!d)
		return NULL;
	d->touch = (WlcsTouch){
		.version = WLCS_TOUCH_VERSION,
		.touch_down = touch_down,
		.touch_move = touch_move,
		.touch_up = touch_up,
		.destroy = touch_destroy,
	};
	return &d->touch;
}

/* -------------------------------------------------------------- server */

static int dispatch_wlcs(int fd, uint32_t mask, void *data)
{
	return wl_event_loop_dispatch(data, 0);
}

static void start_on_this_thread(WlcsDisplayServer *base, struct wl_event_loop *dispatcher)
{
	struct duet_wlcs *dw = from_base(base);
	if (comp_server_init(&dw->server, &dw->options) != 0) {
		/* wlcs would wait for hooks no loop runs: stop here, loudly. */
		fprintf(stderr, "duet-wlcs: the server did not start\n");
		abort();
	}
	/* The touchscreen is there from the start, as on a tablet: a wlcs
	 * test makes its touch device after its clients and touches at once,
	 * before a client could have asked for a wl_touch of a capability
	 * that only then appeared. */
	comp_seat_touch_device_add(&dw->server);
	struct wl_event_source *source =
		wl_event_loop_add_fd(dw->server.loop, wl_event_loop_get_fd(dispatcher),
		                     WL_EVENT_READABLE, dispatch_wlcs, dispatcher);
	dw->running = true;
	wl_display_run(dw->server.display);
	dw->running = false;
	if (source)
		wl_event_source_remove(source);
	comp_server_finish(&dw->server);
}

static void stop(WlcsDisplayServer *base)
{
	struct duet_wlcs *dw = from_base(base);
	if (dw->running)
		wl_display_terminate(dw->server.display);
}

static const WlcsIntegrationDescriptor *get_descriptor(const WlcsDisplayServer *base)
{
	return &offered.descriptor;
}

static void learn_offered(void)
{
	struct comp_server probe;
	if (comp_server_init(&probe, &offered.options) != 0)
		return;
	for (int i = 0; i < probe.n_offered; i++)
		offered.extensions[i] = (WlcsExtensionDescriptor){
			probe.offered[i].name, (uint32_t)probe.offered[i].version };
	offered.descriptor = (WlcsIntegrationDescriptor){
		.version = WLCS_INTEGRATION_DESCRIPTOR_VERSION,
		.num_extensions = (size_t)probe.n_offered,
		.supported_extensions = offered.extensions,
	};
	comp_server_finish(&probe);
	offered.ok = true;
}

static bool parse_args(struct comp_options *o, int argc, const char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--renderer") == 0 && i + 1 < argc) {
			o->pixman = strcmp(argv[++i], "pixman") == 0;
		} else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc &&
		           sscanf(argv[++i], "%dx%d", &o->width, &o->height) == 2) {
			continue;
		} else {
			fprintf(stderr, "duet-wlcs: unknown argument '%s' (--renderer gl|pixman, "
			        "--size WxH)\n", argv[i]);
			return false;
		}
	}
	return true;
}

static WlcsDisplayServer *create_server(int argc, const char **argv)
{
	struct duet_wlcs *dw = calloc(1, sizeof(*dw));
	if (!dw)
		return NULL;
	dw->options = (struct comp_options){
		.width = 1920,
		.height = 1080,
		.refresh_mhz = 60000,
		.backend = "headless",
		.no_listen = true, /* wlcs' clients come through create_client_socket */
		/* wlcs 1.5.0's create_visible_surface commits its buffer before it
		 * acks the first configure (docs/conformance.md). */
		.early_buffer_ok = true,
	};
	wl_list_init(&dw->clients);
	if (!parse_args(&dw->options, argc, argv)) {
		free(dw);
		return NULL;
	}
	offered.options = dw->options;
	pthread_once(&offered.once, learn_offered);
	if (!offered.ok) {
		fprintf(stderr, "duet-wlcs: a probe server did not start\n");
		free(dw);
		return NULL;
	}
	dw->base = (WlcsDisplayServer){
		.version = WLCS_DISPLAY_SERVER_VERSION,
		.start = NULL,
		.stop = stop,
		.create_client_socket = create_client_socket,
		.position_window_absolute = position_window_absolute,
		.create_pointer = create_pointer,
		.create_touch = create_touch,
		.get_descriptor = get_descriptor,
		.start_on_this_thread = start_on_this_thread,
	};
	return &dw->base;
}

static void destroy_server(WlcsDisplayServer *base)
{
	free(from_base(base));
}

__attribute__((visibility("default"))) const WlcsServerIntegration wlcs_server_integration = {
	.version = WLCS_SERVER_INTEGRATION_VERSION,
	.create_server = create_server,
	.destroy_server = destroy_server,
};
