/* duet-input-probe: a toplevel that reports what the seat delivers to it,
 * so tests can check pointer and keyboard delivery and focus.
 *
 *   duet-input-probe [--app-id ID] [--size WxH] [--seats N] [--destroy-on-touch]
 *                    [--move-on-press | --resize-on-press EDGES]
 *
 * Maps a WxH (default 200x200) XRGB8888 toplevel in one flat colour and
 * prints, one line each, on stdout:
 *   mapped W H                    the first buffer is committed
 *   configure W H activated=0|1 [resizing]  every xdg_toplevel.configure
 *   pointer-enter X Y             surface-local, whole pixels
 *   pointer-motion X Y
 *   pointer-button BUTTON STATE   evdev code, 1 pressed / 0 released
 *   pointer-axis AXIS VALUE       0 vertical / 1 horizontal, surface pixels
 *   pointer-leave
 *   keyboard-enter                it got the keyboard focus
 *   keyboard-leave
 *   key KEY STATE                 evdev keycode, 1 pressed / 0 released
 *   keymap FORMAT SIZE            xkb_v1 = 1
 *   touch-bound seat=S            wl_seat S (from 0) has touch: the compositor made its wl_touch
 *   touch-down ID X Y seat=S      surface-local, whole pixels, on wl_seat S's wl_touch
 *   touch-motion ID X Y seat=S
 *   touch-up ID seat=S
 *   touch-frame seat=S
 *   touch-cancel seat=S
 *   destroyed                     --destroy-on-touch: the surface is gone
 * --seats N binds the seat N times (1 to 4), each with its own wl_touch,
 * as toolkits that bind it per window do; the pointer and keyboard come
 * from the first. --destroy-on-touch destroys the window (toplevel and
 * wl_surface) at its first touch down and stays connected.
 * --move-on-press asks for an interactive move (xdg_toplevel.move) at each
 * button press, --resize-on-press for a resize from those edges
 * (xdg_toplevel.resize_edge), as a title bar or a border would.
 * Exits 0 when closed, 1 on a connection error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client-args.h"
#include "client-common.h"
#include "xdg-shell-client-protocol.h"

#define MAX_SEATS 4

struct probe;

/* One binding of wl_seat. */
struct seat_binding {
	struct probe *p;
	int index;
	struct wl_seat *seat;
	struct wl_touch *touch;
};

struct probe {
	struct wl_display *display;
	struct test_globals g;
	struct seat_binding seats[MAX_SEATS];
	int n_seats;
	bool destroy_on_touch, destroyed;
	bool move_on_press;
	int resize_edges; /* --resize-on-press; 0: none */
	struct test_input input; /* the first seat's pointer and keyboard */
	struct test_toplevel top;
	struct wl_buffer *buffer;
	int width, height;
	bool mapped;
};

/* ------------------------------------------------------ pointer, keyboard */
static void report(void *data, const char *line)
{
	struct probe *p = data;
	printf("%s\n", line);
	size_t n = strlen(line);
	bool press = strncmp(line, "pointer-button ", 15) == 0 && n > 2 && strcmp(line + n - 2, " 1") == 0;
	if (press && p->move_on_press)
		xdg_toplevel_move(p->top.toplevel, p->seats[0].seat, p->input.press_serial);
	else if (press && p->resize_edges)
		xdg_toplevel_resize(p->top.toplevel, p->seats[0].seat, p->input.press_serial,
		                    (uint32_t)p->resize_edges);
}

/* ------------------------------------------------------------ touch */
static void destroy_window(struct probe *p)
{
	test_toplevel_destroy(&p->top);
	p->destroyed = true;
	wl_display_flush(p->display);
	printf("destroyed\n");
}

static void touch_down(void *data, struct wl_touch *t, uint32_t serial, uint32_t time,
                       struct wl_surface *surface, int32_t id, wl_fixed_t x, wl_fixed_t y)
{
	struct seat_binding *b = data;
	printf("touch-down %d %d %d seat=%d\n", id, wl_fixed_to_int(x), wl_fixed_to_int(y),
	       b->index);
	if (b->p->destroy_on_touch && !b->p->destroyed)
		destroy_window(b->p);
}

static void touch_up(void *data, struct wl_touch *t, uint32_t serial, uint32_t time, int32_t id)
{
	struct seat_binding *b = data;
	printf("touch-up %d seat=%d\n", id, b->index);
}

static void touch_motion(void *data, struct wl_touch *t, uint32_t time, int32_t id,
                         wl_fixed_t x, wl_fixed_t y)
{
	struct seat_binding *b = data;
	printf("touch-motion %d %d %d seat=%d\n", id, wl_fixed_to_int(x), wl_fixed_to_int(y),
	       b->index);
}

static void touch_frame(void *data, struct wl_touch *t)
{
	struct seat_binding *b = data;
	printf("touch-frame seat=%d\n", b->index);
}

static void touch_cancel(void *data, struct wl_touch *t)
{
	struct seat_binding *b = data;
	printf("touch-cancel seat=%d\n", b->index);
}

static const struct wl_touch_listener touch_listener = {
	.down = touch_down,
	.up = touch_up,
	.motion = touch_motion,
	.frame = touch_frame,
	.cancel = touch_cancel,
};

/* ------------------------------------------------------------ seat */
static void touch_bound_done(void *data, struct wl_callback *cb, uint32_t serial)
{
	struct seat_binding *b = data;
	wl_callback_destroy(cb);
	printf("touch-bound seat=%d\n", b->index);
}

static const struct wl_callback_listener touch_bound_listener = {
	.done = touch_bound_done,
};

static void seat_capabilities(void *data, struct wl_seat *seat, uint32_t caps)
{
	struct seat_binding *b = data;
	struct probe *p = b->p;
	if ((caps & WL_SEAT_CAPABILITY_TOUCH) && !b->touch) {
		b->touch = wl_seat_get_touch(seat);
		wl_touch_add_listener(b->touch, &touch_listener, b);
		/* "touch-bound" once the compositor has made the wl_touch (the
		 * sync's reply follows it): printed at once, a test's touch
		 * could reach the compositor before this get_touch did and be
		 * sent to nobody. */
		wl_callback_add_listener(wl_display_sync(p->display), &touch_bound_listener, b);
	}
	if (b->index != 0)
		return;
	if ((caps & WL_SEAT_CAPABILITY_POINTER) && !p->input.pointer)
		test_input_pointer(&p->input, seat);
	if ((caps & WL_SEAT_CAPABILITY_KEYBOARD) && !p->input.keyboard)
		test_input_keyboard(&p->input, seat);
}

static void seat_name(void *data, struct wl_seat *seat, const char *name)
{
}

static const struct wl_seat_listener seat_listener = {
	.capabilities = seat_capabilities,
	.name = seat_name,
};

static void bind_seats(void *data, struct wl_registry *reg, uint32_t name,
                       const char *iface, uint32_t version)
{
	struct probe *p = data;
	if (strcmp(iface, wl_seat_interface.name) == 0 && !p->seats[0].seat) {
		for (int i = 0; i < p->n_seats; i++) {
			struct seat_binding *b = &p->seats[i];
			b->p = p;
			b->index = i;
			/* v4: repeat_info, and no pointer frame/axis events to
			 * handle; wl_touch's frame and cancel are v1's. */
			b->seat = wl_registry_bind(reg, name, &wl_seat_interface,
			                           version < 4 ? version : 4);
			wl_seat_add_listener(b->seat, &seat_listener, b);
		}
	}
}

/* ------------------------------------------------------------ window */
static void toplevel_configure(void *data, struct wl_array *states)
{
	struct probe *p = data;
	bool activated = false, resizing = false;
	uint32_t *s;
	wl_array_for_each(s, states) {
		activated |= *s == XDG_TOPLEVEL_STATE_ACTIVATED;
		resizing |= *s == XDG_TOPLEVEL_STATE_RESIZING;
	}
	printf("configure %d %d activated=%d%s\n", p->top.width, p->top.height, activated,
	       resizing ? " resizing" : "");
}

/* Each configure (acked by then) is committed; the first maps the window. */
static void configure(void *data)
{
	struct probe *p = data;
	struct wl_surface *surface = p->top.surface;
	if (!p->mapped) {
		wl_surface_attach(surface, p->buffer, 0, 0);
		wl_surface_damage_buffer(surface, 0, 0, p->width, p->height);
		p->mapped = true;
		printf("mapped %d %d\n", p->width, p->height);
	}
	wl_surface_commit(surface);
}

int main(int argc, char **argv)
{
	struct probe p = { .width = 200, .height = 200, .n_seats = 1, .input.report = report };
	p.input.data = &p;
	const char *app_id = "duet-input-probe";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--app-id") == 0 && i + 1 < argc) {
			app_id = argv[++i];
		} else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
			if (!test_parse_size(argv[++i], 4096, &p.width, &p.height)) {
				fprintf(stderr, "duet-input-probe: bad size '%s'\n", argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--seats") == 0 && i + 1 < argc) {
			char tail;
			if (sscanf(argv[++i], "%d%c", &p.n_seats, &tail) != 1 || p.n_seats < 1 ||
			    p.n_seats > MAX_SEATS) {
				fprintf(stderr, "duet-input-probe: bad seat count '%s'\n", argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--destroy-on-touch") == 0) {
			p.destroy_on_touch = true;
		} else if (strcmp(argv[i], "--move-on-press") == 0) {
			p.move_on_press = true;
		} else if (strcmp(argv[i], "--resize-on-press") == 0 && i + 1 < argc) {
			p.resize_edges = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: duet-input-probe [--app-id ID] [--size WxH] [--seats N] "
			        "[--destroy-on-touch] [--move-on-press | --resize-on-press EDGES]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct test_extra_globals seat_global = { bind_seats, &p };
	p.display = test_connect("duet-input-probe", &p.g, &seat_global);
	if (!p.display)
		return 1;
	if (!p.seats[0].seat) {
		fprintf(stderr, "duet-input-probe: no wl_seat\n");
		return 1;
	}
	p.buffer = test_solid_buffer(p.g.shm, p.width, p.height, 0xff3060a0);
	if (!p.buffer) {
		perror("duet-input-probe: shm buffer");
		return 1;
	}
	p.top.toplevel_configure = toplevel_configure;
	p.top.configure = configure;
	p.top.data = &p;
	test_toplevel_create(&p.g, &p.top, app_id);
	wl_surface_commit(p.top.surface);
	while (!p.top.closed)
		if (wl_display_dispatch(p.display) < 0) {
			fprintf(stderr, "duet-input-probe: connection error %d\n",
			        wl_display_get_error(p.display));
			return 1;
		}
	return 0;
}
