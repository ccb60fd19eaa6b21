/* An output: its view of the server's scene (its part of the layout,
 * output-layout.c), one render target, one repaint loop, the wl_output
 * global, and what a frame shows clients. Each output repaints on its own
 * clock. A frame answers the frame callbacks and presentation feedback of
 * the surfaces whose frame output it is.
 *
 * render/'s repaint loop decides when to repaint (repaint-loop.c, on the
 * frame scheduler): only when asked (comp_output_schedule_repaint: new
 * damage, or frame callbacks and presentation feedback waiting), a repaint
 * window before the next tick of a refresh grid, or, when that has come
 * (always unthrottled), from an idle source as soon as the event loop has
 * handled what is queued. An idle desktop therefore has no timer armed at
 * all. A repaint with no damage paints nothing and only tells clients that
 * a frame went by.
 *
 * A painted frame is submitted to the backend, which finishes it
 * (comp_output_finish_frame) once it is out, and "flipped" on its tick: the
 * frame callbacks and presentation feedback of what it shows are held
 * until then (the loop's timer) and sent with the tick's time, as a
 * display server sends them on a page flip's completion; unthrottled they
 * go at once. On KMS the page flip's own event finishes the frame with the
 * display's time and vblank count, and they go then.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <wayland-server-protocol.h>

#include "comp.h"

#define OUTPUT_VERSION 4

/* --------------------------------------------------------------- repaint */

/* The "composited" trace event (docs/methodology.md): the first painted
 * frame that shows a toplevel's content, and the first that shows each new
 * buffer size of it, finished at done_ns. */
static void trace_composited(struct comp_output *output, uint64_t seq, uint64_t done_ns)
{
	struct comp_window *window;
	wl_list_for_each(window, &output->server->windows, link) {
		struct comp_surface *surface = window->surface;
		if (!window->mapped || !surface || !surface->mapped || !surface->texture) {
			window->composited = false;
			continue;
		}
		if (!(surface->outputs & (1u << output->index)))
			continue; /* another output shows it */
		bool first = !window->composited;
		if (!first && window->composited_width == surface->buffer_width &&
		    window->composited_height == surface->buffer_height)
			continue;
		window->composited = true;
		window->composited_width = surface->buffer_width;
		window->composited_height = surface->buffer_height;
		pid_t pid = 0;
		wl_client_get_credentials(wl_resource_get_client(surface->resource), &pid, NULL, NULL);
		render_trace(output->server->trace, "composited",
		             "\"t_ns\":%" PRIu64 ",\"seq\":%" PRIu64 ",\"client_pid\":%d,"
		             "\"width\":%d,\"height\":%d,\"first\":%s",
		             done_ns, seq, (int)pid, surface->buffer_width, surface->buffer_height,
		             first ? "true" : "false");
	}
}

static void deliver_callbacks(struct wl_list *callbacks, uint64_t t_ns)
{
	uint32_t time_ms = (uint32_t)(t_ns / 1000000);
	struct wl_resource *cb, *tmp;
	wl_resource_for_each_safe(cb, tmp, callbacks) {
		wl_callback_send_done(cb, time_ms);
		wl_resource_destroy(cb);
	}
}

/* The frame is on screen: its frame callbacks and presentation feedback. */
static void output_deliver(void *data, const struct render_frame *frame, uint64_t done_ns)
{
	struct comp_output *output = data;
	struct comp_frame_info info = output->presenting_info;
	(void)frame;
	(void)done_ns;
	comp_presentation_send_presented(output, &output->presenting_feedbacks, &info);
	deliver_callbacks(&output->presenting_callbacks, info.t_ns);
	wl_signal_emit_mutable(&output->frame_presented, &info);
	wl_signal_emit_mutable(&output->server->output_presented, output);
}

/* The frame is finished and shown at frame->tick_ns (its pixels existed at
 * done_ns): its trace, and what it tells clients on its tick. */
static void output_frame_finished(void *data, const struct render_frame *frame,
                                  uint64_t done_ns)
{
	struct comp_output *output = data;
	struct comp_server *server = output->server;
	bool painted = frame->paint;
	uint64_t t_ns = frame->tick_ns;

	output->presenting_info = (struct comp_frame_info){
		.t_ns = t_ns,
		.seq = frame->seq,
		.refresh_ns = (uint32_t)frame->refresh_ns,
		.painted = painted,
		.flags = output->flight_flags,
		.repaint = output->repaints,
	};
	if (server->trace) {
		uint64_t area = 0;
		int n;
		const pixman_box32_t *b = pixman_region32_rectangles(&output->flight_damage, &n);
		for (int i = 0; i < n; i++)
			area += (uint64_t)(b[i].x2 - b[i].x1) * (uint64_t)(b[i].y2 - b[i].y1);
		/* Bytes copied from clients into textures since the last frame:
		 * with latching, what this frame shows, copied once. */
		uint64_t uploaded = renderer_stats(server->renderer)->uploaded_bytes;
		render_trace(server->trace, "frame",
		             "\"seq\":%" PRIu64 ",\"painted\":%s,\"damage\":%" PRIu64
		             ",\"uploaded\":%" PRIu64 ",\"tick_ns\":%" PRIu64 ",\"done_ns\":%" PRIu64
		             ",\"output\":\"%s\"",
		             frame->seq, painted ? "true" : "false", area,
		             uploaded - server->traced_uploaded, t_ns, done_ns, output->name);
		server->traced_uploaded = uploaded;
		if (painted)
			trace_composited(output, frame->seq, done_ns);
	}
	pixman_region32_clear(&output->flight_damage);
}

void comp_output_finish_frame(struct comp_output *output, uint64_t t_ns, const uint64_t *msc,
                              uint32_t flags)
{
	/* Only painted frames are submitted: an empty one is finished by
	 * output_paint itself. */
	output->flight_flags = flags;
	if (!render_repaint_loop_finish(&output->loop, true, t_ns, msc))
		comp_log("output %s: a frame completion with no frame in flight", output->name);
}

static void output_paint(void *data, const struct render_frame *frame)
{
	struct comp_output *output = data;
	struct comp_server *server = output->server;

	/* Latch: what the frame shows is copied now, once, whatever number of
	 * commits came since the last frame. A release can ride along with
	 * the frame's own callbacks when there are some: the client waits
	 * for those anyway, and is woken once instead of twice. */
	struct comp_surface *surface;
	uint32_t bit = 1u << output->index;
	wl_list_for_each(surface, &server->surfaces, link) {
		if (surface->mapped && surface->latch_buffer &&
		    ((surface->outputs & bit) || surface->frame_output == output))
			comp_surface_latch(surface, !wl_list_empty(&surface->current.frame_callbacks) ||
			                            !wl_list_empty(&surface->current.feedbacks));
	}
	/* The view's own damage decides (render_scene_view_paint does no GL
	 * work without it), so nothing changed by a path that forgot to say
	 * so is lost; the frame paints nothing exactly when nothing was. */
	output->repaints++;
	bool painted = render_scene_view_paint(output->view, output->target,
	                                       &output->flight_damage);

	/* Everything mapped whose frame output this is is on screen in this
	 * frame (or unchanged on it): what its clients asked to hear about
	 * belongs to this frame, not to commits that come before the flip. */
	wl_list_for_each(surface, &server->surfaces, link) {
		if (!surface->mapped || surface->frame_output != output)
			continue;
		wl_list_insert_list(output->presenting_feedbacks.prev, &surface->current.feedbacks);
		wl_list_init(&surface->current.feedbacks);
		wl_list_insert_list(output->presenting_callbacks.prev,
		                    &surface->current.frame_callbacks);
		wl_list_init(&surface->current.frame_callbacks);
	}

	if (!painted) {
		/* Unpainted, the frame shows pixels that already existed: it
		 * is complete by its tick even when run just after it. The
		 * tick is a timer's, so no presentation flag is true of it. */
		uint64_t now = render_now_ns();
		output->flight_flags = 0;
		render_repaint_loop_finish(&output->loop, false,
		                           now < frame->tick_ns ? now : frame->tick_ns, NULL);
		return;
	}
	/* Submitted, not waited for: the loop goes on reading clients while
	 * the GPU draws, and the backend finishes the frame on a later pass
	 * (or, on KMS, when its page flip's event comes). */
	output->flight_flags = 0;
	output->backend->submit(output, &output->flight_damage);
}

static void idle_repaint(void *data)
{
	struct comp_output *output = data;
	output->idle_repaint = NULL; /* idle sources remove themselves */
	render_repaint_loop_run(&output->loop);
}

static bool output_repaint_due(void *data)
{
	struct comp_output *output = data;
	if (output->idle_repaint)
		return true;
	output->idle_repaint = wl_event_loop_add_idle(output->server->loop, idle_repaint, output);
	if (!output->idle_repaint)
		comp_log("cannot schedule a repaint");
	return output->idle_repaint != NULL;
}

static const struct render_repaint_ops output_repaint_ops = {
	.paint = output_paint,
	.finished = output_frame_finished,
	.deliver = output_deliver,
	.due = output_repaint_due,
};

static int timer_repaint(int fd, uint32_t mask, void *data)
{
	struct comp_output *output = data;
	(void)fd;
	(void)mask;
	render_repaint_loop_timer(&output->loop);
	return 0;
}

void comp_output_schedule_repaint(struct comp_output *output)
{
	/* Disabled, nothing is remembered: enabling repaints everything. */
	if (!output || !output->enabled)
		return;
	render_repaint_loop_request(&output->loop, render_scene_view_has_damage(output->view));
}

/* ------------------------------------------------------- display gone */

/* An output came or went: every surface's outputs are picked again by the
 * layout, told as a surface placed anew (the layout sits above outputs). */
static void surfaces_replaced(struct comp_server *server)
{
	struct comp_surface *surface;
	wl_list_for_each(surface, &server->surfaces, link)
		server->surface_listener->surface_placed(surface);
}

void comp_output_disable(struct comp_output *output, bool unplugged)
{
	struct comp_server *server = output->server;
	if (output->enabled) {
		output->enabled = false;
		if (output->idle_repaint)
			wl_event_source_remove(output->idle_repaint);
		output->idle_repaint = NULL;
		render_repaint_loop_stop(&output->loop);
		pixman_region32_clear(&output->flight_damage);
		/* The frame on its way is never shown: its feedback is
		 * discarded; its frame callbacks go with the first frame
		 * after the display is back (a client waits, as it would
		 * for a hidden window). */
		comp_presentation_discard(&output->presenting_feedbacks);
		struct comp_surface *surface;
		wl_list_for_each(surface, &server->surfaces, link)
			if (surface->frame_output == output || !surface->frame_output)
				comp_presentation_discard(&surface->current.feedbacks);
	}
	if (unplugged && output->global) {
		/* Removed now, destroyed later: a client binding it meanwhile
		 * must not hit a name that vanished (weston and wlroots do
		 * the same). */
		if (output->removed_global)
			wl_global_destroy(output->removed_global);
		wl_global_remove(output->global);
		output->removed_global = output->global;
		output->global = NULL;
		/* Its surfaces leave it; those now on another output get
		 * their frames there, and the callbacks its lost frame owed
		 * are answered now rather than when it comes back. */
		surfaces_replaced(server);
		struct comp_output *other;
		wl_list_for_each(other, &server->outputs, link) {
			if (other->enabled) {
				deliver_callbacks(&output->presenting_callbacks, render_now_ns());
				break;
			}
		}
	}
}

static void output_bind(struct wl_client *client, void *data, uint32_t version, uint32_t id);

void comp_output_enable(struct comp_output *output, int refresh_mhz)
{
	if (!output->global) {
		output->global = comp_global_create(output->server, &wl_output_interface,
		                                    OUTPUT_VERSION, output, output_bind);
		surfaces_replaced(output->server);
	}
	if (output->enabled)
		return;
	output->enabled = true;
	output->refresh_mhz = refresh_mhz;
	render_repaint_loop_resume(&output->loop, refresh_mhz);
	render_scene_view_damage_all(output->view);
	comp_output_schedule_repaint(output);
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
	wl_output_send_geometry(resource, output->x, output->y, mm_w, mm_h, WL_OUTPUT_SUBPIXEL_UNKNOWN, "duet",
	                        output->backend->name, WL_OUTPUT_TRANSFORM_NORMAL);
	wl_output_send_mode(resource, WL_OUTPUT_MODE_CURRENT | WL_OUTPUT_MODE_PREFERRED,
	                    output->width, output->height, output->refresh_mhz);
	if (version >= WL_OUTPUT_SCALE_SINCE_VERSION)
		wl_output_send_scale(resource, 1);
	if (version >= WL_OUTPUT_NAME_SINCE_VERSION) {
		wl_output_send_name(resource, output->name);
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
	struct wl_resource *resource = comp_resource_create(client, &wl_output_interface,
	                                                    (int)version, id, &output_impl, output,
	                                                    output_resource_destroy);
	if (!resource)
		return;
	wl_list_insert(&output->resources, wl_resource_get_link(resource));
	output_send_info(output, resource);

	/* Surfaces of this client already on this output. */
	struct comp_surface *surface;
	wl_list_for_each(surface, &output->server->surfaces, link) {
		if ((surface->outputs & (1u << output->index)) &&
		    wl_resource_get_client(surface->resource) == client)
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
                                       const struct comp_backend *backend, int index)
{
	struct comp_output *output = calloc(1, sizeof(*output));
	if (!output)
		return NULL;
	output->server = server;
	output->backend = backend;
	output->index = index;
	wl_list_init(&output->link);
	output->width = server->options.width;
	output->height = server->options.height;
	output->refresh_mhz = server->options.refresh_mhz;
	snprintf(output->name, sizeof(output->name), "HEADLESS-%d", index + 1);
	output->loop.timer_fd = -1;
	output->enabled = true;
	pixman_region32_init(&output->flight_damage);
	wl_list_init(&output->resources);
	wl_list_init(&output->presenting_feedbacks);
	wl_list_init(&output->presenting_callbacks);
	wl_signal_init(&output->frame_presented);

	/* The backend may set the size and refresh (a KMS mode). */
	output->target = backend->create_target(output);
	if (!output->target) {
		comp_log("%s backend: cannot create a %dx%d render target", backend->name,
		         output->width, output->height);
		goto fail;
	}
	unsigned int flags = RENDER_REPAINT_DELIVER_ON_TICK |
	                     (backend->display_clock ? RENDER_REPAINT_DISPLAY_FLIPS : 0);
	if (render_repaint_loop_init(&output->loop, output->refresh_mhz, flags,
	                             &output_repaint_ops, output) < 0)
		goto fail;
	/* Left to right: right of the last output. */
	struct comp_output *last;
	wl_list_for_each(last, &server->outputs, link)
		output->x = last->x + last->width;
	output->view = render_scene_view_create(server->scene, output->x, output->y,
	                                        output->width, output->height);
	if (!output->view)
		goto fail;

	output->repaint_timer = wl_event_loop_add_fd(server->loop, output->loop.timer_fd,
	                                             WL_EVENT_READABLE, timer_repaint, output);
	if (!output->repaint_timer)
		goto fail;

	output->global = comp_global_create(server, &wl_output_interface, OUTPUT_VERSION,
	                                    output, output_bind);
	if (!output->global)
		goto fail;

	wl_list_insert(server->outputs.prev, &output->link);
	/* The first frame shows the background, so a screenshot taken before
	 * any client draws is well defined (the view starts damaged). */
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
	/* Clients still hold these; their destructors unlink them later. */
	struct wl_list *held[] = { &output->presenting_feedbacks, &output->presenting_callbacks };
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++) {
		wl_resource_for_each_safe(resource, tmp, held[i]) {
			wl_list_remove(wl_resource_get_link(resource));
			wl_list_init(wl_resource_get_link(resource));
		}
	}
	if (output->global)
		wl_global_destroy(output->global);
	if (output->removed_global)
		wl_global_destroy(output->removed_global);
	if (output->idle_repaint)
		wl_event_source_remove(output->idle_repaint);
	pixman_region32_fini(&output->flight_damage);
	if (output->repaint_timer)
		wl_event_source_remove(output->repaint_timer);
	render_repaint_loop_fini(&output->loop);
	render_scene_view_destroy(output->view);
	wl_list_remove(&output->link);
	output->backend->destroy(output);
	free(output);
}

int comp_output_encode_png(struct comp_output *output, uint8_t **data, size_t *len)
{
	if (output->backend->encode_png)
		return output->backend->encode_png(output, data, len);
	return render_target_encode_png(output->target, data, len);
}

int comp_output_write_png(struct comp_output *output, const char *path)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int ret = comp_output_encode_png(output, &data, &len);

	if (ret == 0)
		ret = render_write_file_atomic(path, data, len);
	free(data);
	return ret;
}
