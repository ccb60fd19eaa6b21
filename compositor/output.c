/* The output: one scene, one render target, one frame clock, the wl_output
 * global, and the repaint cycle.
 *
 * A repaint happens only when asked for (comp_output_schedule_repaint: new
 * damage or frame callbacks waiting). It waits for the next tick of the
 * frame clock (a timerfd, so 60 Hz is 16.67 ms and not a rounded 16 or 17),
 * or, unthrottled or after an idle period, runs from an idle source as soon
 * as the event loop has handled what is queued. An idle desktop therefore
 * has no timer armed at all.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <wayland-server-protocol.h>

#include "comp.h"

#define OUTPUT_VERSION 4
#define BACKGROUND_ARGB 0xff202020u

/* --------------------------------------------------------------- repaint */

static void output_repaint(struct comp_output *output)
{
	struct comp_server *server = output->server;
	output->repaint_scheduled = false;

	pixman_region32_t repainted;
	pixman_region32_init(&repainted);
	bool painted = render_scene_paint(output->scene, output->target, &repainted);
	uint64_t t_ns = painted ? output->backend->present(output, &repainted) : render_now_ns();
	/* The clock advances on its own grid (the tick this frame was due),
	 * not on the finish time, or every frame would drift by the time
	 * painting takes. Clients are told when the pixels really existed. */
	render_frame_clock_presented(&output->clock, output->repaint_tick_ns);

	struct comp_frame_info info = {
		.t_ns = t_ns,
		.seq = output->clock.seq,
		.refresh_ns = (uint32_t)output->clock.refresh_ns,
		.painted = painted,
	};
	if (render_trace_enabled()) {
		uint64_t area = 0;
		int n;
		const pixman_box32_t *b = pixman_region32_rectangles(&repainted, &n);
		for (int i = 0; i < n; i++)
			area += (uint64_t)(b[i].x2 - b[i].x1) * (uint64_t)(b[i].y2 - b[i].y1);
		render_trace("frame", "\"seq\":%" PRIu64 ",\"painted\":%s,\"damage\":%" PRIu64,
		             info.seq, painted ? "true" : "false", area);
	}
	pixman_region32_fini(&repainted);

	/* Everything mapped was on screen in this frame (or unchanged on it). */
	uint32_t time_ms = (uint32_t)(t_ns / 1000000);
	struct comp_surface *surface;
	wl_list_for_each(surface, &server->surfaces, link) {
		if (!surface->mapped)
			continue;
		if (!wl_list_empty(&surface->current.feedbacks))
			comp_presentation_surface_presented(surface, &info);
		comp_surface_send_frame_done(surface, time_ms);
	}
	wl_signal_emit_mutable(&output->frame_presented, &info);
}

static void idle_repaint(void *data)
{
	struct comp_output *output = data;
	output->idle_repaint = NULL; /* idle sources remove themselves */
	output_repaint(output);
}

static int timer_repaint(int fd, uint32_t mask, void *data)
{
	struct comp_output *output = data;
	uint64_t expirations;
	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		comp_log("repaint timer: read: %s", strerror(errno));
	if (output->repaint_scheduled && !output->idle_repaint)
		output_repaint(output);
	return 0;
}

void comp_output_schedule_repaint(struct comp_output *output)
{
	if (!output || output->repaint_scheduled)
		return;
	output->repaint_scheduled = true;

	uint64_t now = render_now_ns();
	uint64_t next = render_frame_clock_next(&output->clock, now);
	output->repaint_tick_ns = next;
	if (next > now && output->timer_fd >= 0) {
		struct itimerspec its = {
			.it_value = { .tv_sec = (time_t)(next / 1000000000u),
			              .tv_nsec = (long)(next % 1000000000u) },
		};
		if (timerfd_settime(output->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
			return;
		comp_log("repaint timer: timerfd_settime: %s", strerror(errno));
	}
	output->idle_repaint = wl_event_loop_add_idle(output->server->loop, idle_repaint, output);
	if (!output->idle_repaint) {
		comp_log("cannot schedule a repaint");
		output->repaint_scheduled = false;
	}
}

/* ------------------------------------------------------------ wl_output */

static void output_release(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static const struct wl_output_interface output_impl = {
	.release = output_release,
};

static void output_resource_destroy(struct wl_resource *resource)
{
	wl_list_remove(wl_resource_get_link(resource));
}

static void output_send_info(struct comp_output *output, struct wl_resource *resource)
{
	int version = wl_resource_get_version(resource);
	/* Physical size as a 96 dpi screen of this many pixels. */
	int mm_w = (int)(output->width * 254 / 960), mm_h = (int)(output->height * 254 / 960);
	wl_output_send_geometry(resource, 0, 0, mm_w, mm_h, WL_OUTPUT_SUBPIXEL_UNKNOWN, "duet",
	                        output->backend->name, WL_OUTPUT_TRANSFORM_NORMAL);
	wl_output_send_mode(resource, WL_OUTPUT_MODE_CURRENT | WL_OUTPUT_MODE_PREFERRED,
	                    output->width, output->height, output->refresh_mhz);
	if (version >= WL_OUTPUT_SCALE_SINCE_VERSION)
		wl_output_send_scale(resource, 1);
	if (version >= WL_OUTPUT_NAME_SINCE_VERSION) {
		wl_output_send_name(resource, "HEADLESS-1");
		char desc[96];
		snprintf(desc, sizeof(desc), "duet %s output %dx%d", output->backend->name,
		         output->width, output->height);
		wl_output_send_description(resource, desc);
	}
	if (version >= WL_OUTPUT_DONE_SINCE_VERSION)
		wl_output_send_done(resource);
}

static void output_bind(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	struct comp_output *output = data;
	struct wl_resource *resource = wl_resource_create(client, &wl_output_interface,
	                                                  (int)version, id);
	if (!resource) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(resource, &output_impl, output, output_resource_destroy);
	wl_list_insert(&output->resources, wl_resource_get_link(resource));
	output_send_info(output, resource);

	/* Surfaces of this client already on screen are on this output. */
	struct comp_surface *surface;
	wl_list_for_each(surface, &output->server->surfaces, link) {
		if (surface->mapped && wl_resource_get_client(surface->resource) == client)
			wl_surface_send_enter(surface->resource, resource);
	}
}

void comp_output_surface_enter(struct comp_output *output, struct comp_surface *surface,
                               bool enter)
{
	struct wl_client *client = wl_resource_get_client(surface->resource);
	struct wl_resource *resource;
	wl_resource_for_each(resource, &output->resources) {
		if (wl_resource_get_client(resource) != client)
			continue;
		if (enter)
			wl_surface_send_enter(surface->resource, resource);
		else
			wl_surface_send_leave(surface->resource, resource);
	}
}

/* -------------------------------------------------------------- lifetime */

struct comp_output *comp_output_create(struct comp_server *server,
                                       const struct comp_backend *backend)
{
	struct comp_output *output = calloc(1, sizeof(*output));
	if (!output)
		return NULL;
	output->server = server;
	output->backend = backend;
	output->width = server->options.width;
	output->height = server->options.height;
	output->refresh_mhz = server->options.refresh_mhz;
	output->timer_fd = -1;
	wl_list_init(&output->resources);
	wl_signal_init(&output->frame_presented);
	render_frame_clock_init(&output->clock, output->refresh_mhz);

	output->target = backend->create_target(output);
	if (!output->target) {
		comp_log("%s backend: cannot create a %dx%d render target", backend->name,
		         output->width, output->height);
		goto fail;
	}
	output->scene = render_scene_create(server->renderer, output->width, output->height,
	                                    BACKGROUND_ARGB);
	if (!output->scene)
		goto fail;

	if (output->refresh_mhz > 0) {
		output->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (output->timer_fd < 0) {
			comp_log("timerfd_create: %s", strerror(errno));
			goto fail;
		}
		output->repaint_timer = wl_event_loop_add_fd(server->loop, output->timer_fd,
		                                             WL_EVENT_READABLE, timer_repaint, output);
		if (!output->repaint_timer)
			goto fail;
	}

	output->global = wl_global_create(server->display, &wl_output_interface, OUTPUT_VERSION,
	                                  output, output_bind);
	if (!output->global)
		goto fail;

	/* The first frame shows the background, so a screenshot taken before
	 * any client draws is well defined. */
	render_scene_damage_all(output->scene);
	comp_output_schedule_repaint(output);
	return output;

fail:
	comp_output_destroy(output);
	return NULL;
}

void comp_output_destroy(struct comp_output *output)
{
	if (!output)
		return;
	struct wl_resource *resource, *tmp;
	wl_resource_for_each_safe(resource, tmp, &output->resources) {
		wl_list_remove(wl_resource_get_link(resource));
		wl_list_init(wl_resource_get_link(resource));
	}
	if (output->global)
		wl_global_destroy(output->global);
	if (output->idle_repaint)
		wl_event_source_remove(output->idle_repaint);
	if (output->repaint_timer)
		wl_event_source_remove(output->repaint_timer);
	if (output->timer_fd >= 0)
		close(output->timer_fd);
	if (output->scene)
		render_scene_destroy(output->scene);
	output->backend->destroy(output);
	free(output);
}

int comp_output_write_png(struct comp_output *output, const char *path)
{
	return render_target_write_png(output->target, path);
}

int comp_output_write_png_fd(struct comp_output *output, int fd)
{
	return render_target_write_png_fd(output->target, fd);
}
