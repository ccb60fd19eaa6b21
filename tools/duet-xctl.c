/* duet-xctl: drive duet-xwm (or any EWMH window manager) from shell scripts,
 * tests and the bench; the X11 counterpart of duet-testctl. One command per
 * run; see usage() and docs/xwm-control.md for the messages it sends.
 *
 * Exit status: 0 success, 1 failure (cannot connect, no answer in time,
 * X error), 2 bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xcb/xcb.h>
#include <xcb/xtest.h>

#define CTL_PROG "duet-xctl"
#include "ctl-args.h"
#include "render.h"
#include "x11-common.h"

#define DEFAULT_WAIT_S 10.0
#define POLL_INTERVAL_NS 20000000L

enum atom_index {
	A_NET_CLIENT_LIST_STACKING,
	A_NET_ACTIVE_WINDOW,
	A_NET_CLOSE_WINDOW,
	A_NET_MOVERESIZE_WINDOW,
	A_NET_SUPPORTING_WM_CHECK,
	A_NET_REQUEST_FRAME_EXTENTS,
	A_NET_FRAME_EXTENTS,
	A_NET_WM_NAME,
	A_NET_WM_PID,
	A_UTF8_STRING,
	A_DUET_SYNC,
	A_DUET_RESIZE,
	A_DUET_SCREENSHOT,
	A_DUET_SCREENSHOT_PATH,
	A_DUET_SCREENSHOT_DIR,
	A_COUNT
};

static const char *const atom_names[A_COUNT] = {
	"_NET_CLIENT_LIST_STACKING", "_NET_ACTIVE_WINDOW", "_NET_CLOSE_WINDOW",
	"_NET_MOVERESIZE_WINDOW",
	"_NET_SUPPORTING_WM_CHECK", "_NET_REQUEST_FRAME_EXTENTS", "_NET_FRAME_EXTENTS",
	"_NET_WM_NAME", "_NET_WM_PID", "UTF8_STRING",
	"_DUET_SYNC", "_DUET_RESIZE", "_DUET_SCREENSHOT", "_DUET_SCREENSHOT_PATH",
	"_DUET_SCREENSHOT_DIR",
};

struct ctl {
	xcb_connection_t *conn;
	xcb_screen_t *screen;
	int screen_num;
	xcb_atom_t atoms[A_COUNT];
	xcb_window_t reply_window; /* receives the WM's answers; made on demand */
	double timeout_s;
};

struct window_info {
	xcb_window_t id;
	uint32_t pid;
	int x, y, width, height;
	bool focused;
	char *wm_class, *title;
};

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: duet-xctl [--display :N] [--timeout S] COMMAND [ARGS...]\n"
	        "\n"
	        "Controls duet-xwm with EWMH requests and duet's client messages\n"
	        "(docs/xwm-control.md). Connects to --display, or to $DISPLAY.\n"
	        "\n"
	        "commands:\n"
	        "  sync                      wait until duet-xwm has handled every event\n"
	        "                            received before (_DUET_SYNC)\n"
	        "  windows                   one line per managed window, topmost first:\n"
	        "                            id pid x y w h focused class<TAB>title\n"
	        "                            (id in hex; class '-' when unset)\n"
	        "  wait-window CLASS [TIMEOUT_S]\n"
	        "                            wait for a window of that WM_CLASS class\n"
	        "                            (default %.0f s) and print its line\n"
	        "  wait-wm [TIMEOUT_S]       wait until a window manager runs (it set\n"
	        "                            _NET_SUPPORTING_WM_CHECK and redirects the\n"
	        "                            root's substructure); print its name\n"
	        "  wait-wm-loop [TIMEOUT_S]  wait until the window manager handles events:\n"
	        "                            it answers _NET_REQUEST_FRAME_EXTENTS for a\n"
	        "                            window of ours (asked again every 250 ms)\n"
	        "  wait-cm [TIMEOUT_S]       wait until a compositing manager owns the\n"
	        "                            screen's _NET_WM_CM_Sn selection; print the\n"
	        "                            owner window (hex)\n"
	        "  screenshot FILE.png       have duet-xwm write its last composited frame\n"
	        "                            (into its --screenshot-dir; moved to FILE.png)\n"
	        "  grab FILE.png [ID]        read the root window (or window ID's own\n"
	        "                            contents) back from the X server (GetImage;\n"
	        "                            works with any WM)\n"
	        "  resize ID W H             window-manager resize (_DUET_RESIZE)\n"
	        "  moveresize ID W H         the same through EWMH (_NET_MOVERESIZE_WINDOW;\n"
	        "                            works with any EWMH WM, openbox included)\n"
	        "  move ID X Y               move the window's top-left to X, Y through EWMH\n"
	        "                            (_NET_MOVERESIZE_WINDOW, as a pager)\n"
	        "  close ID                  ask the WM to close the window\n"
	        "                            (_NET_CLOSE_WINDOW)\n"
	        "  activate ID               raise and focus (_NET_ACTIVE_WINDOW, as a pager)\n"
	        "  click X Y                 XTEST: move the pointer to root X Y, press and\n"
	        "                            release button 1\n"
	        "  admit-user NAME           let local user NAME's clients connect (X access\n"
	        "                            control, as xhost +si:localuser:NAME); asked as\n"
	        "                            a user the server admits already\n"
	        "  key KEYCODE [KEYCODE...]  XTEST: press the X keycodes (8-255; the evdev\n"
	        "                            code + 8) in order, release them in reverse\n"
	        "                            (a chord such as Control+Q: key 37 24)\n"
	        "\n"
	        "--timeout S bounds every wait for an answer (default %.0f s).\n"
	        "exit status: 0 success, 1 failure, 2 bad usage\n",
	        DEFAULT_WAIT_S, DEFAULT_WAIT_S);
}

/* ------------------------------------------------------------ X helpers */

static bool connection_ok(struct ctl *ctl)
{
	if (xcb_connection_has_error(ctl->conn)) {
		fprintf(stderr, "duet-xctl: the X connection broke\n");
		return false;
	}
	return true;
}

/* A round trip; reports and fails on an X error from any earlier request
 * sent checked (our requests are checked through this). */
static int round_trip(struct ctl *ctl)
{
	x11_round_trip(ctl->conn);
	return connection_ok(ctl) ? 0 : 1;
}

static int check_request(struct ctl *ctl, xcb_void_cookie_t cookie, const char *what)
{
	xcb_generic_error_t *err = xcb_request_check(ctl->conn, cookie);
	if (err) {
		fprintf(stderr, "duet-xctl: %s failed: X error %u\n", what, err->error_code);
		free(err);
		return 1;
	}
	return connection_ok(ctl) ? 0 : 1;
}

/* Property value as a malloc'd buffer (NUL-terminated for convenience),
 * or NULL if unset or of another format. */
static void *get_property(struct ctl *ctl, xcb_window_t w, xcb_atom_t prop, xcb_atom_t type,
                          uint8_t format, uint32_t *n_items)
{
	xcb_get_property_reply_t *r = xcb_get_property_reply(
		ctl->conn, xcb_get_property(ctl->conn, 0, w, prop, type, 0, 1u << 20), NULL);
	if (!r)
		return NULL;
	if (r->format != format || r->type == XCB_ATOM_NONE) {
		free(r);
		return NULL;
	}
	int len = xcb_get_property_value_length(r);
	char *out = malloc((size_t)len + 1);
	if (out) {
		memcpy(out, xcb_get_property_value(r), (size_t)len);
		out[len] = '\0';
		*n_items = (uint32_t)len / (format / 8u);
	}
	free(r);
	return out;
}

static bool get_window_prop(struct ctl *ctl, xcb_window_t w, xcb_atom_t prop, xcb_atom_t type,
                            uint32_t *out)
{
	uint32_t n = 0;
	uint32_t *v = get_property(ctl, w, prop, type, 32, &n);
	bool ok = v && n >= 1;
	if (ok)
		*out = v[0];
	free(v);
	return ok;
}

/* Printable on one line of `windows`: tabs and newlines become spaces. */
static char *one_line(char *s)
{
	for (char *p = s; p && *p; p++)
		if (*p == '\t' || *p == '\n' || *p == '\r')
			*p = ' ';
	return s;
}

static bool window_info(struct ctl *ctl, xcb_window_t id, xcb_window_t active,
                        struct window_info *info)
{
	xcb_get_geometry_reply_t *geo =
		xcb_get_geometry_reply(ctl->conn, xcb_get_geometry(ctl->conn, id), NULL);
	if (!geo)
		return false; /* gone meanwhile */
	xcb_translate_coordinates_reply_t *tr = xcb_translate_coordinates_reply(
		ctl->conn, xcb_translate_coordinates(ctl->conn, id, ctl->screen->root, 0, 0), NULL);
	if (!tr) {
		free(geo);
		return false;
	}
	*info = (struct window_info){
		.id = id, .x = tr->dst_x, .y = tr->dst_y, .width = geo->width,
		.height = geo->height, .focused = id == active,
	};
	free(geo);
	free(tr);

	get_window_prop(ctl, id, ctl->atoms[A_NET_WM_PID], XCB_ATOM_CARDINAL, &info->pid);

	uint32_t n = 0;
	char *cls = get_property(ctl, id, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 8, &n);
	if (cls) {
		/* "instance\0class\0": the class is the second string. */
		size_t first = strnlen(cls, n);
		if (first + 1 < n && cls[first + 1])
			info->wm_class = strdup(cls + first + 1);
		free(cls);
	}
	info->title = get_property(ctl, id, ctl->atoms[A_NET_WM_NAME], ctl->atoms[A_UTF8_STRING],
	                           8, &n);
	if (!info->title)
		info->title = get_property(ctl, id, XCB_ATOM_WM_NAME, XCB_GET_PROPERTY_TYPE_ANY, 8,
		                           &n);
	one_line(info->wm_class);
	one_line(info->title);
	if (info->wm_class && strchr(info->wm_class, ' ')) {
		/* The class is one word in the output format. */
		for (char *p = info->wm_class; *p; p++)
			if (*p == ' ')
				*p = '_';
	}
	return true;
}

static void print_window(const struct window_info *w)
{
	printf("0x%x %u %d %d %d %d %d %s\t%s\n", w->id, w->pid, w->x, w->y, w->width, w->height,
	       w->focused ? 1 : 0, w->wm_class && *w->wm_class ? w->wm_class : "-",
	       w->title ? w->title : "");
}

static void free_windows(struct window_info *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(list[i].wm_class);
		free(list[i].title);
	}
	free(list);
}

/* Managed windows, topmost first. *out is NULL when there are none. */
static int list_windows(struct ctl *ctl, struct window_info **out, size_t *n_out)
{
	xcb_window_t root = ctl->screen->root;
	uint32_t n = 0, active = XCB_WINDOW_NONE;
	xcb_window_t *stack = get_property(ctl, root, ctl->atoms[A_NET_CLIENT_LIST_STACKING],
	                                   XCB_ATOM_WINDOW, 32, &n);
	get_window_prop(ctl, root, ctl->atoms[A_NET_ACTIVE_WINDOW], XCB_ATOM_WINDOW, &active);
	*out = NULL;
	*n_out = 0;
	if (!stack || n == 0) {
		free(stack);
		return connection_ok(ctl) ? 0 : 1;
	}
	struct window_info *list = calloc(n, sizeof(*list));
	if (!list) {
		free(stack);
		fprintf(stderr, "duet-xctl: out of memory\n");
		return 1;
	}
	size_t count = 0;
	/* The property lists bottom to top. */
	for (uint32_t i = n; i-- > 0;)
		if (window_info(ctl, stack[i], active, &list[count]))
			count++;
	free(stack);
	*out = list;
	*n_out = count;
	return connection_ok(ctl) ? 0 : 1;
}

static xcb_window_t reply_window(struct ctl *ctl)
{
	if (!ctl->reply_window) {
		ctl->reply_window = xcb_generate_id(ctl->conn);
		xcb_create_window(ctl->conn, XCB_COPY_FROM_PARENT, ctl->reply_window, ctl->screen->root,
		                  -1, -1, 1, 1, 0, XCB_WINDOW_CLASS_INPUT_ONLY, XCB_COPY_FROM_PARENT,
		                  0, NULL);
	}
	return ctl->reply_window;
}

/* A format-32 client message to the root, as EWMH and xwm-control.md want. */
static void send_to_root(struct ctl *ctl, xcb_atom_t type, xcb_window_t window, uint32_t d0,
                         uint32_t d1, uint32_t d2)
{
	xcb_client_message_event_t ev = {
		.response_type = XCB_CLIENT_MESSAGE,
		.format = 32,
		.window = window,
		.type = type,
		.data.data32 = { d0, d1, d2, 0, 0 },
	};
	xcb_send_event(ctl->conn, 0, ctl->screen->root,
	               XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
	               (const char *)&ev);
}

/* _NET_MOVERESIZE_WINDOW with width and height only (flag bits 10, 11)
 * or x and y only (bits 8, 9; move), the window's own gravity, and source
 * 2 (pager: obeyed as asked). */
static void send_moveresize(struct ctl *ctl, xcb_window_t window, bool move, uint32_t a,
                            uint32_t b)
{
	xcb_client_message_event_t ev = {
		.response_type = XCB_CLIENT_MESSAGE,
		.format = 32,
		.window = window,
		.type = ctl->atoms[A_NET_MOVERESIZE_WINDOW],
		.data.data32 = { move ? 1u << 8 | 1u << 9 | 2u << 12 : 1u << 10 | 1u << 11 | 2u << 12,
		                 move ? a : 0, move ? b : 0, move ? 0 : a, move ? 0 : b },
	};
	xcb_send_event(ctl->conn, 0, ctl->screen->root,
	               XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
	               (const char *)&ev);
}

/* Sends a request message (_DUET_SYNC, _DUET_SCREENSHOT) and waits for
 * the answer carrying our cookie; *result gets its data.l[2]. */
static int request_reply(struct ctl *ctl, enum atom_index type, uint32_t *result)
{
	xcb_window_t reply = reply_window(ctl);
	uint32_t cookie = (uint32_t)getpid() ^ (uint32_t)(ctl_now_s() * 1000.0);
	xcb_atom_t atom = ctl->atoms[type];
	send_to_root(ctl, atom, ctl->screen->root, reply, cookie, 0);
	xcb_flush(ctl->conn);

	double deadline = ctl_now_s() + ctl->timeout_s;
	struct pollfd pfd = { .fd = xcb_get_file_descriptor(ctl->conn), .events = POLLIN };
	for (;;) {
		xcb_generic_event_t *ev;
		while ((ev = xcb_poll_for_event(ctl->conn))) {
			bool match = false;
			if ((ev->response_type & 0x7f) == XCB_CLIENT_MESSAGE) {
				xcb_client_message_event_t *cm = (xcb_client_message_event_t *)ev;
				/* xwm-control.md: a screenshot is answered "like
				 * _DUET_SYNC"; accept either type, the cookie is
				 * what identifies our answer. */
				match = (cm->type == atom || cm->type == ctl->atoms[A_DUET_SYNC]) &&
				        cm->window == reply && cm->data.data32[1] == cookie;
				if (match && result)
					*result = cm->data.data32[2];
			}
			free(ev);
			if (match)
				return 0;
		}
		if (!connection_ok(ctl))
			return 1;
		double left = deadline - ctl_now_s();
		if (left <= 0) {
			fprintf(stderr, "duet-xctl: no answer to %s within %g s (is duet-xwm the "
			        "window manager?)\n", atom_names[type], ctl->timeout_s);
			return 1;
		}
		if (poll(&pfd, 1, (int)(left * 1000.0) + 1) < 0 && errno != EINTR) {
			perror("duet-xctl: poll");
			return 1;
		}
	}
}

/* ----------------------------------------------------------- commands */

static int cmd_windows(struct ctl *ctl)
{
	struct window_info *list;
	size_t n;
	if (list_windows(ctl, &list, &n))
		return 1;
	for (size_t i = 0; i < n; i++)
		print_window(&list[i]);
	free_windows(list, n);
	return 0;
}

static int cmd_wait_window(struct ctl *ctl, const char *wm_class, double timeout_s)
{
	double deadline = ctl_now_s() + timeout_s;
	for (;;) {
		struct window_info *list;
		size_t n;
		if (list_windows(ctl, &list, &n))
			return 1;
		for (size_t i = 0; i < n; i++) {
			if (list[i].wm_class && strcmp(list[i].wm_class, wm_class) == 0) {
				print_window(&list[i]);
				free_windows(list, n);
				return 0;
			}
		}
		free_windows(list, n);
		if (ctl_now_s() >= deadline)
			break;
		nanosleep(&(struct timespec){ 0, POLL_INTERVAL_NS }, NULL);
	}
	fprintf(stderr, "duet-xctl: no window of class '%s' after %g s\n", wm_class, timeout_s);
	return 1;
}

/* The WM's name if _NET_SUPPORTING_WM_CHECK is set on the root and on the
 * check window itself (EWMH: the pair proves the WM is alive) and someone
 * holds SubstructureRedirect on the root. The last part matters: a WM may
 * set the check window before it selects the redirect, and a request sent
 * to the root in between (a _DUET_SYNC, a MapRequest) reaches nobody. */
static char *wm_name(struct ctl *ctl)
{
	uint32_t check = 0, again = 0, n = 0;
	xcb_get_window_attributes_reply_t *attr = xcb_get_window_attributes_reply(
		ctl->conn, xcb_get_window_attributes(ctl->conn, ctl->screen->root), NULL);
	bool redirected = attr && (attr->all_event_masks & XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT);
	free(attr);
	if (!redirected)
		return NULL;
	if (!get_window_prop(ctl, ctl->screen->root, ctl->atoms[A_NET_SUPPORTING_WM_CHECK],
	                     XCB_ATOM_WINDOW, &check))
		return NULL;
	if (!get_window_prop(ctl, check, ctl->atoms[A_NET_SUPPORTING_WM_CHECK], XCB_ATOM_WINDOW,
	                     &again) || again != check)
		return NULL;
	char *name = get_property(ctl, check, ctl->atoms[A_NET_WM_NAME], ctl->atoms[A_UTF8_STRING],
	                          8, &n);
	return name ? name : strdup("");
}

/* Polls found() until it is true (0), or the connection fails or
 * timeout_s passes (1, saying "no <what>" on the latter). */
static int poll_until(struct ctl *ctl, double timeout_s, bool (*found)(struct ctl *ctl),
                      const char *what)
{
	double deadline = ctl_now_s() + timeout_s;
	for (;;) {
		if (found(ctl))
			return 0;
		if (!connection_ok(ctl))
			return 1;
		if (ctl_now_s() >= deadline)
			break;
		nanosleep(&(struct timespec){ 0, POLL_INTERVAL_NS }, NULL);
	}
	fprintf(stderr, "duet-xctl: no %s after %g s\n", what, timeout_s);
	return 1;
}

static bool print_wm_name(struct ctl *ctl)
{
	char *name = wm_name(ctl);
	if (!name)
		return false;
	printf("%s\n", one_line(name));
	free(name);
	return true;
}

static int cmd_wait_wm(struct ctl *ctl, double timeout_s)
{
	return poll_until(ctl, timeout_s, print_wm_name, "window manager");
}

/* A WM may announce itself (_NET_SUPPORTING_WM_CHECK) long before it
 * handles events: openbox 3.6 sets the check window early in its start-up,
 * and a MapRequest that arrives in the rest of it is read in by one of its
 * start-up round trips and left queued until some later event wakes its
 * loop (docs/board.md section 6). A WM that answers a request sent now is
 * past that: _NET_REQUEST_FRAME_EXTENTS for an unmapped window of ours,
 * answered by setting _NET_FRAME_EXTENTS on it. The request is sent again
 * every 250 ms, as one read in during start-up waits for the next. */
static int cmd_wait_wm_loop(struct ctl *ctl, double timeout_s)
{
	xcb_window_t w = xcb_generate_id(ctl->conn);
	xcb_create_window(ctl->conn, XCB_COPY_FROM_PARENT, w, ctl->screen->root, -100, -100, 1, 1,
	                  0, XCB_WINDOW_CLASS_INPUT_OUTPUT, XCB_COPY_FROM_PARENT, 0, NULL);
	double deadline = ctl_now_s() + timeout_s;
	for (;;) {
		send_to_root(ctl, ctl->atoms[A_NET_REQUEST_FRAME_EXTENTS], w, 0, 0, 0);
		double ask_again = ctl_now_s() + 0.25;
		for (;;) {
			uint32_t n = 0;
			uint32_t *v = get_property(ctl, w, ctl->atoms[A_NET_FRAME_EXTENTS],
			                           XCB_ATOM_CARDINAL, 32, &n);
			bool answered = v && n == 4;
			free(v);
			if (answered) {
				xcb_destroy_window(ctl->conn, w);
				return round_trip(ctl);
			}
			if (!connection_ok(ctl))
				return 1;
			if (ctl_now_s() >= deadline) {
				fprintf(stderr, "duet-xctl: the window manager did not answer "
				        "_NET_REQUEST_FRAME_EXTENTS in %g s\n", timeout_s);
				return 1;
			}
			if (ctl_now_s() >= ask_again)
				break;
			nanosleep(&(struct timespec){ 0, POLL_INTERVAL_NS }, NULL);
		}
	}
}

/* The EWMH says a compositing manager owns _NET_WM_CM_Sn once it runs
 * (xcompmgr and duet-xwm take it before they redirect the windows). */
static xcb_window_t cm_owner(struct ctl *ctl)
{
	char name[32];
	snprintf(name, sizeof(name), "_NET_WM_CM_S%d", ctl->screen_num);
	xcb_atom_t atom = x11_intern(ctl->conn, name);
	if (atom == XCB_ATOM_NONE)
		return XCB_NONE;
	xcb_get_selection_owner_reply_t *o = xcb_get_selection_owner_reply(
		ctl->conn, xcb_get_selection_owner(ctl->conn, atom), NULL);
	xcb_window_t owner = o ? o->owner : XCB_NONE;
	free(o);
	return owner;
}

static bool print_cm_owner(struct ctl *ctl)
{
	xcb_window_t owner = cm_owner(ctl);
	if (owner == XCB_NONE)
		return false;
	printf("0x%x\n", (unsigned)owner);
	return true;
}

/* The server-interpreted address "localuser\0NAME" (X's SI families). */
static int cmd_admit_user(struct ctl *ctl, const char *name)
{
	static const char family[] = "localuser";
	size_t len = sizeof(family) + strlen(name);
	uint8_t *addr = malloc(len);
	if (!addr)
		return 1;
	memcpy(addr, family, sizeof(family));
	memcpy(addr + sizeof(family), name, strlen(name));
	int ret = check_request(ctl, xcb_change_hosts_checked(ctl->conn, XCB_HOST_MODE_INSERT,
	                                                      XCB_FAMILY_SERVER_INTERPRETED,
	                                                      (uint16_t)len, addr),
	                        "ChangeHosts");
	free(addr);
	return ret;
}

static int cmd_wait_cm(struct ctl *ctl, double timeout_s)
{
	return poll_until(ctl, timeout_s, print_cm_owner, "compositing manager");
}

/* Copies src to dst (rename across file systems); dst is replaced. */
static int copy_file(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	int out = in < 0 ? -1 : open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int ret = in < 0 || out < 0 ? -1 : 0;
	char buf[65536];
	ssize_t n;

	while (ret == 0 && (n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 || write(out, buf, (size_t)n) != n)
			ret = -1;
	}
	if (out >= 0 && close(out) != 0)
		ret = -1;
	if (in >= 0)
		close(in);
	return ret;
}

/* duet-xwm writes only new files of its --screenshot-dir, named by us
 * (docs/xwm-control.md): it publishes the directory on its check window;
 * the file is then moved to path. */
static int cmd_screenshot(struct ctl *ctl, const char *path)
{
	uint32_t check = 0, n = 0;
	char *dir = NULL;
	if (get_window_prop(ctl, ctl->screen->root, ctl->atoms[A_NET_SUPPORTING_WM_CHECK],
	                    XCB_ATOM_WINDOW, &check))
		dir = get_property(ctl, check, ctl->atoms[A_DUET_SCREENSHOT_DIR],
		                   ctl->atoms[A_UTF8_STRING], 8, &n);
	if (!dir || !dir[0]) {
		fprintf(stderr, "duet-xctl: screenshots are off: the window manager publishes no "
		        "_DUET_SCREENSHOT_DIR (start duet-xwm with --screenshot-dir DIR)\n");
		free(dir);
		return 1;
	}
	static unsigned serial;
	char name[64], *shot = NULL;
	snprintf(name, sizeof(name), "duet-xctl-%ld-%u-%llu.png", (long)getpid(), serial++,
	         (unsigned long long)(ctl_now_s() * 1e6));
	if (asprintf(&shot, "%s/%s", dir, name) < 0) {
		free(dir);
		fprintf(stderr, "duet-xctl: out of memory\n");
		return 1;
	}
	free(dir);
	xcb_window_t reply = reply_window(ctl);
	xcb_change_property(ctl->conn, XCB_PROP_MODE_REPLACE, reply,
	                    ctl->atoms[A_DUET_SCREENSHOT_PATH], ctl->atoms[A_UTF8_STRING], 8,
	                    (uint32_t)strlen(name), name);
	uint32_t ok = 0;
	int ret = request_reply(ctl, A_DUET_SCREENSHOT, &ok);
	if (ret == 0 && ok != 1) {
		fprintf(stderr, "duet-xctl: duet-xwm could not write %s\n", shot);
		ret = 1;
	}
	if (ret == 0 && rename(shot, path) != 0) {
		if (errno != EXDEV || copy_file(shot, path) != 0) {
			fprintf(stderr, "duet-xctl: cannot move %s to %s: %s\n", shot, path,
			        strerror(errno));
			ret = 1;
		}
		unlink(shot);
	}
	free(shot);
	return ret;
}

/* What the X server itself shows (window 0 = the root): with a compositing
 * manager that is the overlay window's contents, without one the windows
 * themselves. A window of its own reads its own contents (a redirected
 * window's pixmap), whatever a compositing manager made of it. */
static int cmd_grab(struct ctl *ctl, const char *path, xcb_window_t win)
{
	int w = ctl->screen->width_in_pixels, h = ctl->screen->height_in_pixels;
	uint8_t depth = ctl->screen->root_depth;
	if (win) {
		xcb_get_geometry_reply_t *g =
			xcb_get_geometry_reply(ctl->conn, xcb_get_geometry(ctl->conn, win), NULL);
		if (!g) {
			fprintf(stderr, "duet-xctl: no window 0x%x\n", win);
			return 1;
		}
		w = g->width;
		h = g->height;
		depth = g->depth;
		free(g);
	} else {
		win = ctl->screen->root;
	}
	if (depth != 24 && depth != 32) {
		fprintf(stderr, "duet-xctl: grab needs a 24- or 32-bit drawable (have %u)\n", depth);
		return 1;
	}
	uint32_t *argb = malloc((size_t)w * (size_t)h * 4);
	if (!argb) {
		fprintf(stderr, "duet-xctl: out of memory\n");
		return 1;
	}
	/* In bands, to stay under the maximum request length. */
	int band = (int)((xcb_get_maximum_request_length(ctl->conn) * 4u) / ((uint32_t)w * 4u));
	if (band < 1)
		band = 1;
	if (band > h)
		band = h;
	for (int y = 0; y < h; y += band) {
		int rows = y + band <= h ? band : h - y;
		xcb_generic_error_t *err = NULL;
		xcb_get_image_reply_t *img = xcb_get_image_reply(
			ctl->conn, xcb_get_image(ctl->conn, XCB_IMAGE_FORMAT_Z_PIXMAP, win,
			                         0, (int16_t)y, (uint16_t)w, (uint16_t)rows, UINT32_MAX),
			&err);
		if (!img || xcb_get_image_data_length(img) < w * rows * 4) {
			fprintf(stderr, "duet-xctl: GetImage failed (X error %u)\n",
			        err ? err->error_code : 0);
			free(err);
			free(img);
			free(argb);
			return 1;
		}
		const uint32_t *src = (const uint32_t *)xcb_get_image_data(img);
		for (size_t i = 0; i < (size_t)w * (size_t)rows; i++)
			argb[(size_t)y * (size_t)w + i] = src[i] | 0xff000000u;
		free(img);
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "duet-xctl: cannot open %s: %s\n", path, strerror(errno));
		free(argb);
		return 1;
	}
	int ret = render_png_write_fd(fd, argb, w, h, w * 4) == 0 ? 0 : 1;
	if (close(fd) < 0)
		ret = 1;
	free(argb);
	if (ret) {
		fprintf(stderr, "duet-xctl: cannot write %s\n", path);
		unlink(path);
	}
	return ret;
}

static bool have_xtest(struct ctl *ctl)
{
	const xcb_query_extension_reply_t *ext = xcb_get_extension_data(ctl->conn, &xcb_test_id);
	if (!ext || !ext->present) {
		fprintf(stderr, "duet-xctl: the X server has no XTEST extension\n");
		return false;
	}
	return true;
}

static int cmd_click(struct ctl *ctl, int x, int y)
{
	if (!have_xtest(ctl))
		return 1;
	xcb_window_t root = ctl->screen->root;
	xcb_void_cookie_t c[3];
	c[0] = xcb_test_fake_input_checked(ctl->conn, XCB_MOTION_NOTIFY, 0, XCB_CURRENT_TIME, root,
	                                   (int16_t)x, (int16_t)y, 0);
	c[1] = xcb_test_fake_input_checked(ctl->conn, XCB_BUTTON_PRESS, 1, XCB_CURRENT_TIME, root,
	                                   0, 0, 0);
	c[2] = xcb_test_fake_input_checked(ctl->conn, XCB_BUTTON_RELEASE, 1, XCB_CURRENT_TIME,
	                                   root, 0, 0, 0);
	int ret = 0;
	for (int i = 0; i < 3; i++)
		ret |= check_request(ctl, c[i], "XTEST FakeInput");
	return ret;
}

#define MAX_CHORD 8

static int cmd_key(struct ctl *ctl, const uint8_t *keycodes, int n)
{
	if (!have_xtest(ctl))
		return 1;
	xcb_window_t root = ctl->screen->root;
	xcb_void_cookie_t cookies[2 * MAX_CHORD];
	for (int i = 0; i < n; i++)
		cookies[i] = xcb_test_fake_input_checked(ctl->conn, XCB_KEY_PRESS, keycodes[i],
		                                         XCB_CURRENT_TIME, root, 0, 0, 0);
	for (int i = n - 1; i >= 0; i--)
		cookies[2 * n - 1 - i] = xcb_test_fake_input_checked(ctl->conn, XCB_KEY_RELEASE,
		                                                     keycodes[i], XCB_CURRENT_TIME,
		                                                     root, 0, 0, 0);
	int ret = 0;
	for (int i = 0; i < 2 * n; i++)
		ret |= check_request(ctl, cookies[i], "XTEST FakeInput");
	return ret;
}

/* With ctl NULL only checks the arguments, so that bad usage is reported
 * (exit 2) before any connection is attempted. */
static int run_command(struct ctl *ctl, int argc, char **argv)
{
	const char *cmd = argv[0];
	long a, v[3];
	double t;
	static const struct ctl_arg id_args[] = { CTL_ARG_ID(1) };
	/* X sizes are 16-bit. */
	static const struct ctl_arg resize_args[] = { CTL_ARG_ID(1), CTL_ARG_SIZE("width", 32767),
	                                               CTL_ARG_SIZE("height", 32767) };
	static const struct ctl_arg move_args[] = { CTL_ARG_ID(1), CTL_ARG_X, CTL_ARG_Y };
	static const struct ctl_arg click_args[] = {
		{ "bad X '%s'", -32768, 32767 },
		{ "bad Y '%s'", -32768, 32767 },
	};

	if (strcmp(cmd, "sync") == 0) {
		CTL_NEED_ARGS(0, "sync");
		return ctl ? request_reply(ctl, A_DUET_SYNC, NULL) : 0;
	}
	if (strcmp(cmd, "windows") == 0) {
		CTL_NEED_ARGS(0, "windows");
		return ctl ? cmd_windows(ctl) : 0;
	}
	if (strcmp(cmd, "wait-window") == 0) {
		t = DEFAULT_WAIT_S;
		if (argc != 2 && argc != 3)
			return ctl_bad_usage("usage: duet-xctl %s", "wait-window CLASS [TIMEOUT_S]");
		if (argc == 3 && !ctl_parse_double(argv[2], 0, 1e9, &t))
			return ctl_bad_usage("bad timeout '%s' (seconds, >= 0)", argv[2]);
		return ctl ? cmd_wait_window(ctl, argv[1], t) : 0;
	}
	/* The waits that take only an optional timeout. */
	static const struct {
		const char *name;
		int (*wait)(struct ctl *ctl, double timeout_s);
	} waits[] = {
		{ "wait-wm", cmd_wait_wm },
		{ "wait-wm-loop", cmd_wait_wm_loop },
		{ "wait-cm", cmd_wait_cm },
	};
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		if (strcmp(cmd, waits[i].name) != 0)
			continue;
		t = DEFAULT_WAIT_S;
		if (argc != 1 && argc != 2)
			return ctl_bad_usage("usage: duet-xctl %s [TIMEOUT_S]", waits[i].name);
		if (argc == 2 && !ctl_parse_double(argv[1], 0, 1e9, &t))
			return ctl_bad_usage("bad timeout '%s' (seconds, >= 0)", argv[1]);
		return ctl ? waits[i].wait(ctl, t) : 0;
	}
	if (strcmp(cmd, "screenshot") == 0 || strcmp(cmd, "grab") == 0) {
		bool shot = strcmp(cmd, "screenshot") == 0;
		long id = 0;
		if (shot || argc != 3)
			CTL_NEED_ARGS(1, shot ? "screenshot FILE.png" : "grab FILE.png [ID]");
		else if (ctl_parse_args(argv + 2, id_args, 1, &id) >= 0)
			return ctl_bad_usage(id_args[0].bad, argv[2]);
		if (!ctl)
			return 0;
		return shot ? cmd_screenshot(ctl, argv[1]) : cmd_grab(ctl, argv[1], (xcb_window_t)id);
	}
	if (strcmp(cmd, "resize") == 0 || strcmp(cmd, "moveresize") == 0) {
		bool ewmh = strcmp(cmd, "moveresize") == 0;
		CTL_COMMAND_ARGS(3, ewmh ? "moveresize ID W H" : "resize ID W H", resize_args, v);
		if (ewmh)
			send_moveresize(ctl, (xcb_window_t)v[0], false, (uint32_t)v[1], (uint32_t)v[2]);
		else
			send_to_root(ctl, ctl->atoms[A_DUET_RESIZE], (xcb_window_t)v[0], (uint32_t)v[1],
			             (uint32_t)v[2], 0);
		return round_trip(ctl);
	}
	if (strcmp(cmd, "admit-user") == 0) {
		CTL_NEED_ARGS(1, "admit-user NAME");
		if (!*argv[1] || strlen(argv[1]) > 255)
			return ctl_bad_usage("bad user name '%s'", argv[1]);
		return ctl ? cmd_admit_user(ctl, argv[1]) : 0;
	}
	if (strcmp(cmd, "move") == 0) {
		CTL_COMMAND_ARGS(3, "move ID X Y", move_args, v);
		send_moveresize(ctl, (xcb_window_t)v[0], true, (uint32_t)(int32_t)v[1],
		                (uint32_t)(int32_t)v[2]);
		return round_trip(ctl);
	}
	if (strcmp(cmd, "close") == 0 || strcmp(cmd, "activate") == 0) {
		bool close_it = strcmp(cmd, "close") == 0;
		CTL_COMMAND_ARGS(1, close_it ? "close ID" : "activate ID", id_args, v);
		/* data.l[0]: timestamp (close) or source (activate); 2 = pager,
		 * which EWMH WMs obey without focus-stealing checks. */
		if (close_it)
			send_to_root(ctl, ctl->atoms[A_NET_CLOSE_WINDOW], (xcb_window_t)v[0],
			             XCB_CURRENT_TIME, 2, 0);
		else
			send_to_root(ctl, ctl->atoms[A_NET_ACTIVE_WINDOW], (xcb_window_t)v[0], 2,
			             XCB_CURRENT_TIME, 0);
		return round_trip(ctl);
	}
	if (strcmp(cmd, "click") == 0) {
		CTL_COMMAND_ARGS(2, "click X Y", click_args, v);
		return cmd_click(ctl, (int)v[0], (int)v[1]);
	}
	if (strcmp(cmd, "key") == 0) {
		if (argc < 2 || argc > MAX_CHORD + 1)
			return ctl_bad_usage("usage: duet-xctl key KEYCODE [KEYCODE...] (at most %s)",
			                 "8");
		uint8_t keycodes[MAX_CHORD];
		for (int k = 1; k < argc; k++) {
			if (!ctl_parse_long(argv[k], 8, 255, &a))
				return ctl_bad_usage("bad X keycode '%s' (8 to 255)", argv[k]);
			keycodes[k - 1] = (uint8_t)a;
		}
		return ctl ? cmd_key(ctl, keycodes, argc - 1) : 0;
	}
	return ctl_bad_usage("unknown command '%s'", cmd);
}

static bool intern_atoms(struct ctl *ctl)
{
	xcb_intern_atom_cookie_t cookies[A_COUNT];
	for (int i = 0; i < A_COUNT; i++)
		cookies[i] = xcb_intern_atom(ctl->conn, 0, (uint16_t)strlen(atom_names[i]),
		                             atom_names[i]);
	bool ok = true;
	for (int i = 0; i < A_COUNT; i++) {
		xcb_intern_atom_reply_t *r = xcb_intern_atom_reply(ctl->conn, cookies[i], NULL);
		ok = ok && r;
		ctl->atoms[i] = r ? r->atom : XCB_ATOM_NONE;
		free(r);
	}
	return ok;
}

int main(int argc, char **argv)
{
	const char *display = NULL, *timeout = NULL;
	struct ctl ctl = { .timeout_s = DEFAULT_WAIT_S };
	const struct ctl_opt opts[] = {
		{ "--display", "%s needs a DISPLAY", &display },
		{ "--timeout", "%s needs seconds (>= 0)", &timeout },
	};
	int i = 0, ret = ctl_read_options(argc, argv, opts, 2, usage, &i);
	if (ret >= 0)
		return ret;
	if (timeout && !ctl_parse_double(timeout, 0, 1e9, &ctl.timeout_s))
		return ctl_bad_usage("%s needs seconds (>= 0)", "--timeout");
	ret = run_command(NULL, argc - i, argv + i);
	if (ret)
		return ret;

	ctl.conn = x11_connect(display, &ctl.screen, &ctl.screen_num);
	if (!ctl.conn) {
		const char *name = display ? display : getenv("DISPLAY");
		fprintf(stderr, "duet-xctl: cannot connect to X display '%s'\n", name ? name : "");
		return 1;
	}
	if (!ctl.screen || !intern_atoms(&ctl)) {
		fprintf(stderr, "duet-xctl: X server setup failed\n");
		ret = 1;
	} else {
		ret = run_command(&ctl, argc - i, argv + i);
	}
	fflush(stdout);
	xcb_disconnect(ctl.conn);
	return ret;
}
