#include "client-common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Formats one event line for a client that reports them. */
static void report(struct test_input *in, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void report(struct test_input *in, const char *fmt, ...)
{
	if (!in->report)
		return;
	char line[128];
	va_list args;
	va_start(args, fmt);
	vsnprintf(line, sizeof(line), fmt, args);
	va_end(args);
	in->report(in->data, line);
}

/* Each interface has one dispatcher where a listener would need a
 * function for every event, most of them empty: the clients follow few
 * of the events. An event comes with its arguments in wayland.xml's
 * order. */
static int pointer_event(const void *impl, void *pointer, uint32_t opcode,
                         const struct wl_message *event, union wl_argument *args)
{
	struct test_input *in = wl_proxy_get_user_data(pointer);
	const char *name = event->name;
	if (strcmp(name, "enter") == 0) {
		report(in, "pointer-enter %d %d", wl_fixed_to_int(args[2].f),
		       wl_fixed_to_int(args[3].f));
	} else if (strcmp(name, "leave") == 0) {
		report(in, "pointer-leave");
	} else if (strcmp(name, "motion") == 0) {
		report(in, "pointer-motion %d %d", wl_fixed_to_int(args[1].f),
		       wl_fixed_to_int(args[2].f));
	} else if (strcmp(name, "button") == 0) {
		if (args[3].u == WL_POINTER_BUTTON_STATE_PRESSED) {
			in->press_serial = args[0].u;
			in->presses++;
		}
		report(in, "pointer-button %u %u", args[2].u, args[3].u);
	} else if (strcmp(name, "axis") == 0) {
		report(in, "pointer-axis %u %g", args[1].u, wl_fixed_to_double(args[2].f));
	}
	return 0;
}

/* Modifiers and repeat rates matter to no test. */
static int keyboard_event(const void *impl, void *keyboard, uint32_t opcode,
                          const struct wl_message *event, union wl_argument *args)
{
	struct test_input *in = wl_proxy_get_user_data(keyboard);
	const char *name = event->name;
	if (strcmp(name, "keymap") == 0) {
		report(in, "keymap %u %u", args[0].u, args[2].u);
		close(args[1].h);
	} else if (strcmp(name, "enter") == 0) {
		in->enter_serial = args[0].u;
		in->keyboard_focus = (struct wl_surface *)args[1].o;
		report(in, "keyboard-enter");
	} else if (strcmp(name, "leave") == 0) {
		in->keyboard_focus = NULL;
		report(in, "keyboard-leave");
	} else if (strcmp(name, "key") == 0) {
		if (args[3].u == WL_KEYBOARD_KEY_STATE_PRESSED) {
			in->key_serial = args[0].u;
			in->key_presses++;
		}
		report(in, "key %u %u", args[2].u, args[3].u);
	}
	return 0;
}

void test_input_pointer(struct test_input *in, struct wl_seat *seat)
{
	in->pointer = wl_seat_get_pointer(seat);
	wl_proxy_add_dispatcher((struct wl_proxy *)in->pointer, pointer_event, NULL, in);
}

void test_input_keyboard(struct test_input *in, struct wl_seat *seat)
{
	in->keyboard = wl_seat_get_keyboard(seat);
	wl_proxy_add_dispatcher((struct wl_proxy *)in->keyboard, keyboard_event, NULL, in);
}
