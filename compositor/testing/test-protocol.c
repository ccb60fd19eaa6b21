/* duet_test: the private control protocol of protocol/duet-test.xml, used
 * by tests and the bench through tools/duet-testctl. Created only with
 * --test-protocol and bound only by clients of the test socket
 * (test-access.c); screenshots are written by test-screenshot.c.
 *
 * Every request acts through the same functions a user's action would use
 * (policy, seat), so that tests exercise the real paths.
 *
 * sync is the subtle one. Its promise is that everything any client sent
 * before it has been handled and, if that caused a repaint, presented. The
 * event loop may hand us the sync before another client's commit that
 * arrived in the same epoll batch, so the answer is decided in an idle
 * callback at the end of the loop iteration, when that batch is done; then
 * it waits for the next presented frame if a repaint is pending.
 */
#include <stdlib.h>
#include <unistd.h>

#include <wayland-server-protocol.h>

#include "comp.h"
#include "duet-test-server-protocol.h"

#define DUET_TEST_VERSION 4
#define MAX_SIZE 32768

/* A sync waits for the next frame of every output busy when it was
 * decided: one listener per output. */
struct test_output_wait {
	struct test_state *state;
	struct wl_listener frame_presented;
	bool listening;                /* frame_presented is linked to the output */
	/* The first frame that shows what the sync asked for: a frame painted
	 * before the request and still waiting for its tick does not. */
	uint64_t until_repaint;
};

struct test_state {
	struct comp_server *server;
	struct wl_listener display_destroy;
	struct wl_list deciding;       /* wl_callback resources, decided at idle */
	struct wl_list waiting;        /* wl_callback resources, done once no output is waited for */
	struct wl_event_source *idle;
	struct test_output_wait waits[COMP_MAX_OUTPUTS]; /* by comp_output.index */
	bool touchscreen;              /* the virtual touchscreen is plugged in */
};

static void handle_display_destroy(struct wl_listener *listener, void *data);

/* One duet_test object: its screenshots in flight, and the keys,
 * buttons and touch points it pressed and has not released. */
struct test_object {
	struct wl_list jobs;
	struct wl_array keys, buttons, touches;
};

static struct test_state *state_from_client(struct wl_client *client)
{
	struct wl_listener *l = wl_display_get_destroy_listener(wl_client_get_display(client),
	                                                        handle_display_destroy);
	if (!l)
		return NULL;
	struct test_state *state = wl_container_of(l, state, display_destroy);
	return state;
}

static uint32_t now_ms(void)
{
	return (uint32_t)(render_now_ns() / 1000000u);
}

/* ------------------------------------------------------------- sync */

static void stop_listening(struct test_output_wait *wait)
{
	if (!wait->listening)
		return;
	wl_list_remove(&wait->frame_presented.link);
	wait->listening = false;
}

static void stop_listening_all(struct test_state *state)
{
	for (int i = 0; i < COMP_MAX_OUTPUTS; i++)
		stop_listening(&state->waits[i]);
}

static bool listening_any(const struct test_state *state)
{
	for (int i = 0; i < COMP_MAX_OUTPUTS; i++)
		if (state->waits[i].listening)
			return true;
	return false;
}

static void callbacks_done(struct wl_list *callbacks)
{
	struct wl_resource *cb, *tmp;
	wl_resource_for_each_safe(cb, tmp, callbacks) {
		wl_callback_send_done(cb, now_ms());
		wl_resource_destroy(cb);
	}
}

static void handle_frame_presented(struct wl_listener *listener, void *data)
{
	struct test_output_wait *wait = wl_container_of(listener, wait, frame_presented);
	const struct comp_frame_info *info = data;
	if (info->repaint < wait->until_repaint)
		return;
	/* Only listen while someone waits, so that the listener is never left
	 * on an output that is destroyed before us. */
	stop_listening(wait);
	if (!listening_any(wait->state))
		callbacks_done(&wait->state->waiting);
}

static void sync_idle(void *data)
{
	struct test_state *state = data;
	state->idle = NULL;
	bool busy = false;
	struct comp_output *output;
	wl_list_for_each(output, &state->server->outputs, link) {
		if (!output->loop.sched.scheduled && output->loop.state == RENDER_REPAINT_IDLE)
			continue;
		busy = true;
		struct test_output_wait *wait = &state->waits[output->index];
		/* A repaint asked for starts after the frame in progress (if
		 * any), which was painted before the request: wait for that one. */
		uint64_t until = output->repaints + (output->loop.sched.scheduled ? 1 : 0);
		if (!wait->listening || until > wait->until_repaint)
			wait->until_repaint = until;
		if (!wait->listening) {
			wl_signal_add(&output->frame_presented, &wait->frame_presented);
			wait->listening = true;
		}
	}
	if (!busy && !listening_any(state)) {
		callbacks_done(&state->deciding);
		return;
	}
	wl_list_insert_list(state->waiting.prev, &state->deciding);
	wl_list_init(&state->deciding);
}

/* A client gone while its sync waits: the callback leaves the list and,
 * if it was the last waiter, the output listener goes too. */
static void callback_destroy(struct wl_resource *resource)
{
	wl_list_remove(wl_resource_get_link(resource));
	struct test_state *state = wl_resource_get_user_data(resource);
	if (state && wl_list_empty(&state->waiting))
		stop_listening_all(state);
}

static void test_handle_sync(struct wl_client *client, struct wl_resource *resource,
                             uint32_t id)
{
	struct test_state *state = state_from_client(client);
	struct wl_resource *cb = comp_resource_create(client, &wl_callback_interface, 1, id, NULL,
	                                              state, callback_destroy);
	if (!cb)
		return;
	if (!state) {
		wl_list_init(wl_resource_get_link(cb));
		wl_callback_send_done(cb, now_ms());
		wl_resource_destroy(cb);
		return;
	}
	wl_list_insert(state->deciding.prev, wl_resource_get_link(cb));
	if (!state->idle)
		state->idle = wl_event_loop_add_idle(state->server->loop, sync_idle, state);
	if (!state->idle) {
		/* No idle source: answer now rather than never. */
		callbacks_done(&state->deciding);
	}
}

/* ---------------------------------------------------------- windows */

static int window_width(const struct comp_window *w)
{
	return w->geometry.width > 0 || !w->surface ? w->geometry.width : w->surface->width;
}

static int window_height(const struct comp_window *w)
{
	return w->geometry.height > 0 || !w->surface ? w->geometry.height : w->surface->height;
}

static void test_handle_list_windows(struct wl_client *client, struct wl_resource *resource)
{
	struct test_state *state = state_from_client(client);
	if (!state)
		return;
	struct comp_server *server = state->server;
	struct comp_window *w;
	wl_list_for_each(w, &server->windows, link) {
		if (!w->mapped)
			continue;
		/* 0: not known, or no surface to ask (an X window that maps
		 * minimized: Xwayland makes its wl_surface when X maps it). */
		pid_t pid = w->pid > 0 ? w->pid : 0;
		if (w->pid == 0 && w->surface)
			wl_client_get_credentials(wl_resource_get_client(w->surface->resource), &pid,
			                          NULL, NULL);
		duet_test_send_window(resource, w->id, pid, w->x, w->y, window_width(w),
		                      window_height(w), w == server->focused, w->app_id, w->title);
	}
	duet_test_send_windows_done(resource);
}

/* A window by id, or NULL after posting bad_window. */
static struct comp_window *window_by_id(struct wl_resource *resource, uint32_t id,
                                        const char *request)
{
	struct test_state *state = state_from_client(wl_resource_get_client(resource));
	if (state) {
		struct comp_window *w;
		wl_list_for_each(w, &state->server->windows, link) {
			if (w->id == id && w->mapped)
				return w;
		}
	}
	wl_resource_post_error(resource, DUET_TEST_ERROR_BAD_WINDOW,
	                       "duet_test.%s: no mapped window with id %u", request, id);
	return NULL;
}

static void test_handle_resize_window(struct wl_client *client, struct wl_resource *resource,
                                      uint32_t id, int32_t width, int32_t height)
{
	if (width < 1 || height < 1 || width > MAX_SIZE || height > MAX_SIZE) {
		wl_resource_post_error(resource, DUET_TEST_ERROR_BAD_SIZE,
		                       "duet_test.resize_window: size %dx%d not in 1..%d",
		                       width, height, MAX_SIZE);
		return;
	}
	struct comp_window *w = window_by_id(resource, id, "resize_window");
	if (w)
		comp_policy_resize(w, width, height);
}

static void test_handle_move_window(struct wl_client *client, struct wl_resource *resource,
                                    uint32_t id, int32_t x, int32_t y)
{
	if (x < -32768 || x > 32767 || y < -32768 || y > 32767) {
		wl_resource_post_error(resource, DUET_TEST_ERROR_BAD_POSITION,
		                       "duet_test.move_window: position %d,%d not in -32768..32767",
		                       x, y);
		return;
	}
	struct comp_window *w = window_by_id(resource, id, "move_window");
	if (w)
		comp_window_set_position(w, x, y);
}

static void test_handle_close_window(struct wl_client *client, struct wl_resource *resource,
                                     uint32_t id)
{
	struct comp_window *w = window_by_id(resource, id, "close_window");
	if (w)
		comp_policy_close(w);
}

static void test_handle_activate_window(struct wl_client *client, struct wl_resource *resource,
                                        uint32_t id)
{
	struct comp_window *w = window_by_id(resource, id, "activate_window");
	if (w)
		comp_policy_activate(w);
}

/* ------------------------------------------------------- screenshot */

static void screenshot(struct wl_client *client, struct wl_resource *resource, int32_t fd,
                       const char *name)
{
	struct test_state *state = state_from_client(client);
	struct wl_list *jobs = &((struct test_object *)wl_resource_get_user_data(resource))->jobs;
	struct comp_output *output = !state ? NULL :
		name ? comp_layout_find_output(state->server, name) :
		comp_layout_first_output(state->server);
	if (!output) {
		close(fd);
		if (name)
			wl_resource_post_error(resource, DUET_TEST_ERROR_BAD_OUTPUT,
			                       "duet_test.screenshot_output: no output '%s'", name);
		else
			wl_resource_post_error(resource, DUET_TEST_ERROR_BAD_FD,
			                       "duet_test.screenshot: no output");
		return;
	}
	comp_test_screenshot_start(resource, jobs, output, fd);
}

static void test_handle_screenshot(struct wl_client *client, struct wl_resource *resource,
                                   int32_t fd)
{
	screenshot(client, resource, fd, NULL);
}

static void test_handle_screenshot_output(struct wl_client *client,
                                          struct wl_resource *resource, int32_t fd,
                                          const char *output)
{
	screenshot(client, resource, fd, output);
}

/* ------------------------------------------------------------ input */

static void test_handle_pointer_motion(struct wl_client *client, struct wl_resource *resource,
                                       wl_fixed_t x, wl_fixed_t y)
{
	struct test_state *state = state_from_client(client);
	if (state)
		comp_seat_pointer_motion(state->server, wl_fixed_to_double(x), wl_fixed_to_double(y),
		                         now_ms());
}

/* What one duet_test object holds down, so that it can be let go when the
 * object goes: libwayland-server destroys a client that hung up without
 * reading its last requests, so an injector that presses, releases and
 * exits may leave its release unread, and the seat would keep the key down
 * and drop the next press of it (a stuck key). A keyboard unplugged with a
 * key down releases it the same way. */
static void held_update(struct wl_array *held, uint32_t code, bool down)
{
	uint32_t *k;
	wl_array_for_each(k, held) {
		if (*k != code)
			continue;
		if (!down) {
			*k = *((uint32_t *)((char *)held->data + held->size) - 1);
			held->size -= sizeof(uint32_t);
		}
		return;
	}
	uint32_t *slot = down ? wl_array_add(held, sizeof(*slot)) : NULL;
	if (slot)
		*slot = code;
}

/* A press or release of a button or key from client: recorded in held
 * (see held_update) and the client's test state returned to deliver it
 * to, or NULL and nothing recorded. */
static struct test_state *held_press(struct wl_client *client, struct wl_array *held,
                                     uint32_t code, bool down)
{
	struct test_state *state = state_from_client(client);
	if (state)
		held_update(held, code, down);
	return state;
}

static void test_handle_pointer_button(struct wl_client *client, struct wl_resource *resource,
                                       uint32_t button, uint32_t pressed)
{
	struct test_object *obj = wl_resource_get_user_data(resource);
	struct test_state *state = held_press(client, &obj->buttons, button, pressed != 0);
	if (state)
		comp_seat_pointer_button(state->server, button, pressed != 0, now_ms());
}

static void test_handle_key(struct wl_client *client, struct wl_resource *resource, uint32_t key,
                            uint32_t pressed)
{
	struct test_object *obj = wl_resource_get_user_data(resource);
	struct test_state *state = held_press(client, &obj->keys, key, pressed != 0);
	if (state)
		comp_seat_key(state->server, key, pressed != 0, now_ms());
}

/* The test's touchscreen is plugged in at its first use, so that the
 * seat has no touch capability until a test asks for touch (seat-touch.c
 * says why). */
static struct test_state *touch_state(struct wl_client *client)
{
	struct test_state *state = state_from_client(client);
	if (state && !state->touchscreen) {
		state->touchscreen = true;
		comp_seat_touch_device_add(state->server);
	}
	return state;
}

static void test_handle_touch(struct wl_client *client, struct wl_resource *resource, int32_t id,
                              wl_fixed_t x, wl_fixed_t y, uint32_t kind)
{
	struct test_object *obj = wl_resource_get_user_data(resource);
	if (kind > DUET_TEST_TOUCH_KIND_UP) {
		wl_resource_post_error(resource, DUET_TEST_ERROR_BAD_TOUCH,
		                       "duet_test.touch: kind %u is not down, motion or up", kind);
		return;
	}
	struct test_state *state = touch_state(client);
	if (!state)
		return;
	struct comp_server *server = state->server;
	double lx = wl_fixed_to_double(x), ly = wl_fixed_to_double(y);
	switch (kind) {
	case DUET_TEST_TOUCH_KIND_DOWN:
		held_update(&obj->touches, (uint32_t)id, true);
		comp_seat_touch_down(server, id, lx, ly, now_ms());
		break;
	case DUET_TEST_TOUCH_KIND_MOTION:
		comp_seat_touch_motion(server, id, lx, ly, now_ms());
		break;
	default:
		held_update(&obj->touches, (uint32_t)id, false);
		comp_seat_touch_up(server, id, now_ms());
		break;
	}
}

static void test_handle_touch_frame(struct wl_client *client, struct wl_resource *resource)
{
	struct test_state *state = touch_state(client);
	if (state)
		comp_seat_touch_frame(state->server);
}

static void test_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static const struct duet_test_interface test_impl = {
	.destroy = test_handle_destroy,
	.sync = test_handle_sync,
	.list_windows = test_handle_list_windows,
	.screenshot = test_handle_screenshot,
	.resize_window = test_handle_resize_window,
	.close_window = test_handle_close_window,
	.activate_window = test_handle_activate_window,
	.pointer_motion = test_handle_pointer_motion,
	.pointer_button = test_handle_pointer_button,
	.key = test_handle_key,
	.move_window = test_handle_move_window,
	.screenshot_output = test_handle_screenshot_output,
	.touch = test_handle_touch,
	.touch_frame = test_handle_touch_frame,
};

/* The object's screenshots still being written go with it, and what it
 * held down is let go. */
static void test_resource_destroy(struct wl_resource *resource)
{
	struct test_object *obj = wl_resource_get_user_data(resource);
	struct test_state *state = state_from_client(wl_resource_get_client(resource));
	uint32_t *code;
	if (state) {
		wl_array_for_each(code, &obj->keys)
			comp_seat_key(state->server, *code, false, now_ms());
		wl_array_for_each(code, &obj->buttons)
			comp_seat_pointer_button(state->server, *code, false, now_ms());
		if (obj->touches.size > 0) {
			wl_array_for_each(code, &obj->touches)
				comp_seat_touch_up(state->server, (int32_t)*code, now_ms());
			comp_seat_touch_frame(state->server);
		}
	}
	wl_array_release(&obj->keys);
	wl_array_release(&obj->buttons);
	wl_array_release(&obj->touches);
	comp_test_screenshot_cancel_all(&obj->jobs);
	free(obj);
}

static void test_bind(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	/* libwayland already refuses binds to globals its filter hides
	 * (test-access.c); this keeps it so should that ever change. */
	if (!comp_test_access_allowed(client)) {
		wl_client_post_implementation_error(client, "duet_test is not offered to this client");
		return;
	}
	struct test_object *obj = calloc(1, sizeof(*obj));
	struct wl_resource *resource = obj ? wl_resource_create(client, &duet_test_interface,
	                                                        version, id) : NULL;
	if (!resource) {
		free(obj);
		wl_client_post_no_memory(client);
		return;
	}
	wl_list_init(&obj->jobs);
	wl_array_init(&obj->keys);
	wl_array_init(&obj->buttons);
	wl_array_init(&obj->touches);
	wl_resource_set_implementation(resource, &test_impl, obj, test_resource_destroy);
}

/* Callbacks still waiting belong to clients that outlive us: inert them. */
static void detach_callbacks(struct wl_list *callbacks)
{
	struct wl_resource *cb, *tmp;
	wl_resource_for_each_safe(cb, tmp, callbacks) {
		wl_list_remove(wl_resource_get_link(cb));
		wl_list_init(wl_resource_get_link(cb));
		wl_resource_set_user_data(cb, NULL);
	}
}

static void handle_display_destroy(struct wl_listener *listener, void *data)
{
	struct test_state *state = wl_container_of(listener, state, display_destroy);
	wl_list_remove(&state->display_destroy.link);
	stop_listening_all(state);
	if (state->idle)
		wl_event_source_remove(state->idle);
	detach_callbacks(&state->deciding);
	detach_callbacks(&state->waiting);
	free(state);
}

void comp_test_protocol_create(struct comp_server *server)
{
	struct test_state *state = calloc(1, sizeof(*state));
	if (!state) {
		comp_log("test-protocol: out of memory");
		return;
	}
	state->server = server;
	wl_list_init(&state->deciding);
	wl_list_init(&state->waiting);
	for (int i = 0; i < COMP_MAX_OUTPUTS; i++) {
		state->waits[i].state = state;
		state->waits[i].frame_presented.notify = handle_frame_presented;
	}
	if (!wl_global_create(server->display, &duet_test_interface, DUET_TEST_VERSION, NULL,
	                      test_bind)) {
		comp_log("test-protocol: cannot create the duet_test global");
		free(state);
		return;
	}
	state->display_destroy.notify = handle_display_destroy;
	wl_display_add_destroy_listener(server->display, &state->display_destroy);
}
