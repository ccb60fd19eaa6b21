/* Input devices on --backend drm: libinput's udev backend on seat0, its
 * devices opened through the DRM backend's session (drm-session.c), so
 * seatd, logind and direct-as-root all work. libinput sees only devices
 * udev tagged (ID_INPUT_*): udevd must run, as it does on any desktop.
 *
 * Events go to the seat as the test protocol's do: evdev key and button
 * codes (what wl_keyboard and wl_pointer carry), relative motion added to
 * the pointer and clamped to the output, absolute motion (tablets, qemu's
 * tablet) scaled to it, scrolling as wl_pointer.axis. Touchscreens plug
 * touch into the seat while they are there; their points (libinput's seat
 * slots, unique across the seat's touchscreens) are scaled to the first
 * output: a touchscreen is one display's glass, not the whole layout. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libinput.h>
#include <libudev.h>
#include <wayland-server-core.h>
#include <wayland-server-protocol.h>

#include "comp.h"
#include "drm-session.h"
#include "input-libinput.h"

#define SEAT_NAME "seat0"

struct comp_input {
	struct comp_server *server;
	struct drm_session *session;
	struct udev *udev;
	struct libinput *li;
	struct wl_event_source *source;
	int devices; /* added and not removed: for the "none found" line */
};

static int open_restricted(const char *path, int flags, void *data)
{
	struct comp_input *input = data;
	char why[256];
	int fd = drm_session_open(input->session, path, why, sizeof(why));
	if (fd < 0) {
		comp_log("input: cannot open %s: %s", path, why);
		return -EACCES;
	}
	/* libinput reads until EAGAIN; a direct open is blocking. */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && !(fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	(void)flags;
	return fd;
}

static void close_restricted(int fd, void *data)
{
	struct comp_input *input = data;
	drm_session_close(input->session, fd);
}

static const struct libinput_interface interface = {
	.open_restricted = open_restricted,
	.close_restricted = close_restricted,
};

static void log_handler(struct libinput *li, enum libinput_log_priority priority,
                        const char *fmt, va_list args)
{
	char line[512];
	vsnprintf(line, sizeof(line), fmt, args);
	size_t len = strlen(line);
	if (len && line[len - 1] == '\n')
		line[len - 1] = '\0';
	comp_log("input: libinput: %s", line);
}

static void describe(struct libinput_device *device, char *out, size_t len)
{
	static const struct {
		enum libinput_device_capability cap;
		const char *name;
	} caps[] = {
		{ LIBINPUT_DEVICE_CAP_KEYBOARD, "keyboard" },
		{ LIBINPUT_DEVICE_CAP_POINTER, "pointer" },
		{ LIBINPUT_DEVICE_CAP_TOUCH, "touch" },
		{ LIBINPUT_DEVICE_CAP_TABLET_TOOL, "tablet-tool" },
		{ LIBINPUT_DEVICE_CAP_TABLET_PAD, "tablet-pad" },
		{ LIBINPUT_DEVICE_CAP_GESTURE, "gesture" },
		{ LIBINPUT_DEVICE_CAP_SWITCH, "switch" },
	};
	size_t used = 0;
	out[0] = '\0';
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		if (!libinput_device_has_capability(device, caps[i].cap))
			continue;
		int n = snprintf(out + used, len - used, "%s%s", used ? ", " : "", caps[i].name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += n;
	}
	if (!used)
		snprintf(out, len, "no capability");
}

/* The box of every output: an absolute device (a tablet) spans it all. */
static bool layout_box(struct comp_input *input, int *x, int *y, int *w, int *h)
{
	comp_layout_bounds(input->server, x, y, w, h);
	return *w > 0 && *h > 0;
}

/* The seat clamps the pointer to the outputs. */
static void pointer_to(struct comp_input *input, double x, double y, uint32_t time_ms)
{
	comp_seat_pointer_motion(input->server, x, y, time_ms);
}

static void handle_scroll(struct comp_input *input, struct libinput_event_pointer *ev,
                          uint32_t source)
{
	static const enum libinput_pointer_axis axes[2] = {
		LIBINPUT_POINTER_AXIS_SCROLL_VERTICAL,
		LIBINPUT_POINTER_AXIS_SCROLL_HORIZONTAL,
	};
	struct comp_axis_event axis = { .source = source };
	for (int i = 0; i < 2; i++) {
		if (!libinput_event_pointer_has_axis(ev, axes[i]))
			continue;
		axis.has[i] = true;
		axis.value[i] = libinput_event_pointer_get_scroll_value(ev, axes[i]);
		if (source == WL_POINTER_AXIS_SOURCE_WHEEL)
			axis.value120[i] = (int32_t)libinput_event_pointer_get_scroll_value_v120(ev, axes[i]);
	}
	comp_seat_pointer_axis(input->server, &axis, libinput_event_pointer_get_time(ev));
}

/* Where a touchscreen's point is in the layout: its range spans the first
 * output, placed where that output is. */
static bool touch_position(struct comp_input *input, struct libinput_event_touch *t, double *x,
                           double *y)
{
	struct comp_output *output = comp_layout_first_output(input->server);
	if (!output || output->width <= 0 || output->height <= 0)
		return false;
	*x = output->x + libinput_event_touch_get_x_transformed(t, (uint32_t)output->width);
	*y = output->y + libinput_event_touch_get_y_transformed(t, (uint32_t)output->height);
	return true;
}

static void handle_touch(struct comp_input *input, struct libinput_event *event)
{
	struct libinput_event_touch *t = libinput_event_get_touch_event(event);
	struct comp_server *server = input->server;
	enum libinput_event_type type = libinput_event_get_type(event);
	if (type == LIBINPUT_EVENT_TOUCH_FRAME) {
		comp_seat_touch_frame(server);
		return;
	}
	/* The seat slot, not the device's slot: two touchscreens' points
	 * must not share an id. */
	int32_t id = libinput_event_touch_get_seat_slot(t);
	uint32_t time_ms = libinput_event_touch_get_time(t);
	double x, y;
	switch (type) {
	case LIBINPUT_EVENT_TOUCH_DOWN:
		if (touch_position(input, t, &x, &y))
			comp_seat_touch_down(server, id, x, y, time_ms);
		break;
	case LIBINPUT_EVENT_TOUCH_MOTION:
		if (touch_position(input, t, &x, &y))
			comp_seat_touch_motion(server, id, x, y, time_ms);
		break;
	case LIBINPUT_EVENT_TOUCH_UP:
		comp_seat_touch_up(server, id, time_ms);
		break;
	case LIBINPUT_EVENT_TOUCH_CANCEL:
		comp_seat_touch_cancel(server, id);
		break;
	default:
		break;
	}
}

static void handle_event(struct comp_input *input, struct libinput_event *event)
{
	struct libinput_device *device = libinput_event_get_device(event);
	struct libinput_event_pointer *p;
	struct libinput_event_keyboard *k;
	double x, y;
	int bx, by, bw, bh;
	char caps[128];

	switch (libinput_event_get_type(event)) {
	case LIBINPUT_EVENT_DEVICE_ADDED:
		input->devices++;
		describe(device, caps, sizeof(caps));
		comp_log("input: added %s (%s)", libinput_device_get_name(device), caps);
		if (libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_TOUCH))
			comp_seat_touch_device_add(input->server);
		break;
	case LIBINPUT_EVENT_DEVICE_REMOVED:
		input->devices--;
		comp_log("input: removed %s", libinput_device_get_name(device));
		if (libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_TOUCH))
			comp_seat_touch_device_remove(input->server);
		break;
	case LIBINPUT_EVENT_KEYBOARD_KEY: {
		k = libinput_event_get_keyboard_event(event);
		/* The seat's count: two keyboards holding one key are one press. */
		bool down = libinput_event_keyboard_get_key_state(k) == LIBINPUT_KEY_STATE_PRESSED;
		uint32_t count = libinput_event_keyboard_get_seat_key_count(k);
		if ((down && count == 1) || (!down && count == 0))
			comp_seat_key(input->server, libinput_event_keyboard_get_key(k), down,
			              libinput_event_keyboard_get_time(k));
		break;
	}
	case LIBINPUT_EVENT_POINTER_MOTION:
		p = libinput_event_get_pointer_event(event);
		comp_seat_pointer_position(input->server, &x, &y);
		pointer_to(input, x + libinput_event_pointer_get_dx(p),
		           y + libinput_event_pointer_get_dy(p), libinput_event_pointer_get_time(p));
		break;
	case LIBINPUT_EVENT_POINTER_MOTION_ABSOLUTE:
		p = libinput_event_get_pointer_event(event);
		if (!layout_box(input, &bx, &by, &bw, &bh))
			break;
		pointer_to(input, bx + libinput_event_pointer_get_absolute_x_transformed(p, (uint32_t)bw),
		           by + libinput_event_pointer_get_absolute_y_transformed(p, (uint32_t)bh),
		           libinput_event_pointer_get_time(p));
		break;
	case LIBINPUT_EVENT_POINTER_BUTTON: {
		p = libinput_event_get_pointer_event(event);
		bool pressed = libinput_event_pointer_get_button_state(p) ==
		               LIBINPUT_BUTTON_STATE_PRESSED;
		uint32_t held = libinput_event_pointer_get_seat_button_count(p);
		if ((pressed && held == 1) || (!pressed && held == 0))
			comp_seat_pointer_button(input->server, libinput_event_pointer_get_button(p),
			                         pressed, libinput_event_pointer_get_time(p));
		break;
	}
	case LIBINPUT_EVENT_POINTER_SCROLL_WHEEL:
		handle_scroll(input, libinput_event_get_pointer_event(event),
		              WL_POINTER_AXIS_SOURCE_WHEEL);
		break;
	case LIBINPUT_EVENT_POINTER_SCROLL_FINGER:
		handle_scroll(input, libinput_event_get_pointer_event(event),
		              WL_POINTER_AXIS_SOURCE_FINGER);
		break;
	case LIBINPUT_EVENT_POINTER_SCROLL_CONTINUOUS:
		handle_scroll(input, libinput_event_get_pointer_event(event),
		              WL_POINTER_AXIS_SOURCE_CONTINUOUS);
		break;
	case LIBINPUT_EVENT_TOUCH_DOWN:
	case LIBINPUT_EVENT_TOUCH_MOTION:
	case LIBINPUT_EVENT_TOUCH_UP:
	case LIBINPUT_EVENT_TOUCH_CANCEL:
	case LIBINPUT_EVENT_TOUCH_FRAME:
		handle_touch(input, event);
		break;
	default:
		/* LIBINPUT_EVENT_POINTER_AXIS repeats the scroll events above;
		 * tablet and gesture events have no seat entry yet. */
		break;
	}
}

static void drain(struct comp_input *input)
{
	struct libinput_event *event;
	while ((event = libinput_get_event(input->li))) {
		handle_event(input, event);
		libinput_event_destroy(event);
	}
}

static int input_dispatch(int fd, uint32_t mask, void *data)
{
	struct comp_input *input = data;
	if (libinput_dispatch(input->li) != 0)
		comp_log("input: libinput_dispatch failed: %s", strerror(errno));
	drain(input);
	return 0;
}

struct comp_input *comp_input_create(struct comp_server *server, struct drm_session *session)
{
	struct comp_input *input = calloc(1, sizeof(*input));
	if (!input)
		return NULL;
	uint64_t start_ns = render_now_ns();
	input->server = server;
	input->session = session;
	input->udev = udev_new();
	if (!input->udev) {
		comp_log("input: udev_new failed; no input devices");
		goto fail;
	}
	input->li = libinput_udev_create_context(&interface, input, input->udev);
	if (!input->li) {
		comp_log("input: cannot create a libinput context; no input devices");
		goto fail;
	}
	libinput_log_set_handler(input->li, log_handler);
	libinput_log_set_priority(input->li, LIBINPUT_LOG_PRIORITY_ERROR);
	if (libinput_udev_assign_seat(input->li, SEAT_NAME) != 0) {
		comp_log("input: libinput cannot take seat %s; no input devices", SEAT_NAME);
		goto fail;
	}
	input->source = wl_event_loop_add_fd(server->loop, libinput_get_fd(input->li),
	                                     WL_EVENT_READABLE, input_dispatch, input);
	if (!input->source) {
		comp_log("input: cannot watch libinput's fd; no input devices");
		goto fail;
	}
	/* The devices present now are announced at once. */
	libinput_dispatch(input->li);
	drain(input);
	if (input->devices == 0)
		comp_log("input: no input devices on %s (none plugged in, or udev has not tagged "
		         "them: is udevd running?); devices plugged in later are used",
		         SEAT_NAME);
	/* Its quirks files and each device's setup are read at start: slow
	 * in an emulated guest, so the log says how long it took. */
	comp_log("input: libinput on %s, %d device%s, ready in %.0f ms", SEAT_NAME, input->devices,
	         input->devices == 1 ? "" : "s", (render_now_ns() - start_ns) / 1e6);
	return input;
fail:
	comp_input_destroy(input);
	return NULL;
}

void comp_input_destroy(struct comp_input *input)
{
	if (!input)
		return;
	if (input->source)
		wl_event_source_remove(input->source);
	if (input->li)
		libinput_unref(input->li);
	if (input->udev)
		udev_unref(input->udev);
	free(input);
}

/* Both queue the devices' removed and added events without making
 * libinput's fd readable: they are read here. */
void comp_input_suspend(struct comp_input *input)
{
	if (!input)
		return;
	libinput_suspend(input->li);
	drain(input);
}

void comp_input_resume(struct comp_input *input)
{
	if (!input)
		return;
	if (libinput_resume(input->li) != 0)
		comp_log("input: the devices could not be opened again after the pause");
	drain(input);
}
