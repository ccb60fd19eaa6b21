/* duet-inject: the input experiment's keyboard. Injects key presses into a
 * display server with the means each one has, and time-stamps each at the
 * moment the request leaves for the server:
 *   wayland  duet_test.key on duet-compositor's test socket (the opt-in
 *            test protocol, docs/security.md): the compositor feeds the key
 *            to its seat as if from a keyboard and routes it to the focused
 *            client
 *   x11      XTest's FakeInput: the X server treats it as a device event and
 *            sends KeyPress to the focus window; no window manager is on
 *            that path
 * Commands on stdin, one a line: "press" / "release" (the key, --key,
 * evdev code). Answers on stdout, JSON lines (CLOCK_MONOTONIC ns):
 *   {"name":"inject_ready","ns":..,"means":".."}
 *   {"name":"injected","ns":..,"pressed":true|false}  ns: taken right before
 *       the write that carries the request (the flush)
 *   {"name":"inject_error","ns":..,"error":".."} then exit 1.
 * Exits 0 at the end of stdin. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <wayland-client.h>
#include <xcb/xcb.h>
#include <xcb/xtest.h>

#include "duet-test-client-protocol.h"

static const char usage[] =
	"usage: duet-inject --backend wayland|x11 [--key CODE]\n"
	"Injects a key (evdev CODE, default 30: KEY_A) on each 'press' / 'release' line\n"
	"of stdin and prints when each left (JSON lines, CLOCK_MONOTONIC ns).\n"
	"wayland: duet_test.key on $WAYLAND_DISPLAY (duet-compositor's test socket);\n"
	"x11: XTest FakeInput on $DISPLAY.\n";

struct injector {
	bool wayland;
	uint32_t key;
	struct wl_display *display;
	struct duet_test *test;
	xcb_connection_t *conn;
	bool repeat_off;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int fail(const char *why)
{
	printf("{\"name\":\"inject_error\",\"ns\":%" PRIu64 ",\"error\":\"%s\"}\n", now_ns(), why);
	fflush(stdout);
	return 1;
}

static void registry_global(void *data, struct wl_registry *reg, uint32_t name,
                            const char *iface, uint32_t version)
{
	struct injector *in = data;
	if (strcmp(iface, duet_test_interface.name) == 0 && !in->test)
		in->test = wl_registry_bind(reg, name, &duet_test_interface, 1);
}

static void registry_remove(void *data, struct wl_registry *reg, uint32_t name) {}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_remove,
};

static const char *connect_wayland(struct injector *in)
{
	in->display = wl_display_connect(NULL);
	if (!in->display)
		return "cannot connect to $WAYLAND_DISPLAY";
	struct wl_registry *reg = wl_display_get_registry(in->display);
	wl_registry_add_listener(reg, &registry_listener, in);
	int ret = wl_display_roundtrip(in->display);
	wl_registry_destroy(reg);
	if (ret < 0)
		return "the Wayland connection failed";
	if (!in->test)
		return "the server offers no duet_test (not duet-compositor's test socket)";
	return NULL;
}

/* The X server repeats a key held past its autorepeat delay (660 ms on
 * Xvfb and Xorg), at 25 Hz, and the app reads each repeat as a press: a
 * press whose frame took that long under load became several presses,
 * and every later press was matched to the wrong injection. A press is
 * one key event, as on Wayland, where duet-compositor repeats nothing:
 * autorepeat is off for the injected key while duet-inject runs. The
 * request goes to the master keyboard and its slaves, XTest's included. */
static bool set_repeat(struct injector *in, uint32_t mode)
{
	uint32_t values[] = { in->key + 8, mode };
	xcb_void_cookie_t c = xcb_change_keyboard_control_checked(
		in->conn, XCB_KB_KEY | XCB_KB_AUTO_REPEAT_MODE, values);
	xcb_generic_error_t *err = xcb_request_check(in->conn, c);
	free(err);
	return !err;
}

static const char *connect_x11(struct injector *in)
{
	in->conn = xcb_connect(NULL, NULL);
	if (xcb_connection_has_error(in->conn))
		return "cannot connect to $DISPLAY";
	const xcb_query_extension_reply_t *ext = xcb_get_extension_data(in->conn, &xcb_test_id);
	if (!ext || !ext->present)
		return "the X server has no XTEST extension";
	if (!set_repeat(in, XCB_AUTO_REPEAT_MODE_OFF))
		return "the X server refused to turn off autorepeat for the key";
	in->repeat_off = true;
	return NULL;
}

/* Frees what connect_* made, whether or not it succeeded. */
static void disconnect(struct injector *in)
{
	if (in->test)
		duet_test_destroy(in->test);
	if (in->display)
		wl_display_disconnect(in->display);
	if (in->repeat_off && !xcb_connection_has_error(in->conn))
		set_repeat(in, XCB_AUTO_REPEAT_MODE_DEFAULT);
	if (in->conn)
		xcb_disconnect(in->conn);
}

/* Queues the request, stamps, then writes it. */
static bool inject(struct injector *in, bool pressed, uint64_t *t)
{
	if (in->wayland) {
		duet_test_key(in->test, in->key, pressed);
		*t = now_ns();
		return wl_display_flush(in->display) >= 0;
	}
	xcb_test_fake_input(in->conn, pressed ? XCB_KEY_PRESS : XCB_KEY_RELEASE,
	                    (uint8_t)(in->key + 8), XCB_CURRENT_TIME, XCB_NONE, 0, 0, 0);
	*t = now_ns();
	return xcb_flush(in->conn) > 0 && !xcb_connection_has_error(in->conn);
}

int main(int argc, char **argv)
{
	struct injector in = { .key = 30 };
	const char *backend = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--backend") == 0 && v) {
			backend = argv[++i];
		} else if (strcmp(a, "--key") == 0 && v) {
			char *end;
			unsigned long k = strtoul(v, &end, 10);
			if (*end || end == v || k > 247) {
				fprintf(stderr, "duet-inject: --key wants 0..247\n");
				return 2;
			}
			in.key = (uint32_t)k;
			i++;
		} else {
			fputs(usage, strcmp(a, "--help") == 0 ? stdout : stderr);
			return strcmp(a, "--help") == 0 ? 0 : 2;
		}
	}
	if (!backend || (strcmp(backend, "wayland") != 0 && strcmp(backend, "x11") != 0)) {
		fputs(usage, stderr);
		return 2;
	}
	in.wayland = strcmp(backend, "wayland") == 0;
	const char *why = in.wayland ? connect_wayland(&in) : connect_x11(&in);
	if (why) {
		disconnect(&in);
		return fail(why);
	}
	printf("{\"name\":\"inject_ready\",\"ns\":%" PRIu64 ",\"means\":\"%s\"}\n", now_ns(),
	       in.wayland ? "duet_test.key" : "XTest FakeInput");
	fflush(stdout);
	char line[64];
	int status = 0;
	while (fgets(line, sizeof(line), stdin)) {
		bool pressed;
		if (strncmp(line, "press", 5) == 0)
			pressed = true;
		else if (strncmp(line, "release", 7) == 0)
			pressed = false;
		else
			continue;
		uint64_t t;
		if (!inject(&in, pressed, &t)) {
			status = fail("the connection to the server was lost");
			break;
		}
		printf("{\"name\":\"injected\",\"ns\":%" PRIu64 ",\"pressed\":%s}\n", t,
		       pressed ? "true" : "false");
		fflush(stdout);
	}
	/* libwayland-server destroys a client that hung up without reading
	 * its last requests: wait until the server has handled them all. */
	if (in.display)
		wl_display_roundtrip(in.display);
	disconnect(&in);
	return status;
}
