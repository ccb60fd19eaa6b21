/* An output: its view of the server's scene (its part of the layout,
 * output-layout.c), one render target, one frame scheduler, the wl_output
 * global, and the repaint cycle. Each output repaints on its own clock. A
 * frame answers the frame callbacks and presentation feedback of the
 * surfaces whose frame output it is.
 *
 * render/'s frame scheduler decides when to repaint (frame-sched.c): only
 * when asked (comp_output_schedule_repaint: new damage, or frame callbacks
 * and presentation feedback waiting), a repaint window before the next
 * tick of a refresh grid anchored when the output starts (a timerfd, so
 * 60 Hz is 16.67 ms and not a rounded 16 or 17), or, unthrottled, from an
 * idle source as soon as the event loop has handled what is queued. An
 * idle desktop therefore has no timer armed at all. A repaint with no
 * damage paints nothing and only tells clients that a frame went by.
 *
 * A painted frame is "flipped" on its tick: the frame callbacks and
 * presentation feedback of what it shows are held until then (the timer
 * again) and sent with the tick's time, as a display server sends them on
 * a page flip's completion; unthrottled they go at once. On KMS the page
 * flip's own event completes the frame (comp_output_frame_presented) with
 * the display's time and vblank count, and they go then.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <wayland-server-protocol.h>

#include "comp.h"

#define OUTPUT_VERSION 4
/* How often an unfinished frame's fence is asked again. */
#define FRAME_POLL_NS 1000000ull

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
		render_trace("composited",
		             "\"t_ns\":%" PRIu64 ",\"seq\":%" PRIu64 ",\"client_pid\":%d,"
		             "\"width\":%d,\"height\":%d,\"first\":%s",
		             done_ns, seq, (int)pid, surface->buffer_width, surface->buffer_height,
		             first ? "true" : "false");
	}
}

static void arm_timer(struct comp_output *output, uint64_t at)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(at / 1000000000u), .tv_nsec = (long)(at % 1000000000u) },
	};
	if (timerfd_settime(output->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		comp_log("repaint timer: timerfd_settime: %s", strerror(errno));
}

static void idle_repaint(void *data);

/* The scheduled repaint: on the timer, or from an idle source when its
 * deadline has come (or there is no timer: unthrottled). A frame with
 * nothing to paint (only frame callbacks due, e.g. a client that idles
 * with an animator running) needs no head start: it is run on its tick
 * itself, so it costs one wakeup instead of a repaint and then a flip. */
static void arm_repaint(struct comp_output *output)
{
	const struct render_frame_sched *s = &output->sched;
	uint64_t next = s->deadline_ns;
	bool was_on_tick = output->repaint_on_tick;
	output->repaint_on_tick = false;
	if (!s->damage && s->period_ns) {
		uint64_t tick = render_frame_sched_tick_ns(s, s->target_seq);
		if (tick > next) {
			next = tick;
			output->repaint_on_tick = true;
		}
	}
	if (next > render_now_ns() && output->timer_fd >= 0) {
		arm_timer(output, next);
		return;
	}
	if (was_on_tick)
		arm_timer(output, 0); /* disarmed: the repaint runs now instead */
	if (output->idle_repaint)
		return;
	output->idle_repaint = wl_event_loop_add_idle(output->server->loop, idle_repaint, output);
	if (!output->idle_repaint) {
		comp_log("cannot schedule a repaint");
		/* Asked again by the next change. */
		output->sched.scheduled = false;
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
static void output_deliver(struct comp_output *output)
{
	struct comp_frame_info info = output->presenting_info;
	output->presenting = false;
	comp_presentation_send_presented(output, &output->presenting_feedbacks, &info);
	deliver_callbacks(&output->presenting_callbacks, info.t_ns);
	wl_signal_emit_mutable(&output->frame_presented, &info);
	/* A repaint asked for meanwhile waited for this flip. */
	if (output->sched.scheduled)
		arm_repaint(output);
}

/* The frame is shown at t_ns (its pixels existed at done_ns): its trace,
 * and its callbacks and feedback at t_ns. */
static void output_frame_shown(struct comp_output *output, uint64_t t_ns, uint64_t done_ns,
                               uint32_t flags)
{
	struct comp_server *server = output->server;
	struct render_frame *frame = &output->flight;
	bool painted = output->flight_painted;

	output->presenting_info = (struct comp_frame_info){
		.t_ns = t_ns,
		.seq = frame->seq,
		.refresh_ns = (uint32_t)frame->refresh_ns,
		.painted = painted,
		.flags = flags,
		.repaint = output->repaints,
	};
	if (render_trace_enabled()) {
		uint64_t area = 0;
		int n;
		const pixman_box32_t *b = pixman_region32_rectangles(&output->flight_damage, &n);
		for (int i = 0; i < n; i++)
			area += (uint64_t)(b[i].x2 - b[i].x1) * (uint64_t)(b[i].y2 - b[i].y1);
		/* Bytes copied from clients into textures since the last frame:
		 * with latching, what this frame shows, copied once. */
		uint64_t uploaded = renderer_stats(server->renderer)->uploaded_bytes;
		render_trace("frame", "\"seq\":%" PRIu64 ",\"painted\":%s,\"damage\":%" PRIu64
		             ",\"uploaded\":%" PRIu64 ",\"tick_ns\":%" PRIu64 ",\"done_ns\":%" PRIu64
		             ",\"output\":\"%s\"",
		             frame->seq, painted ? "true" : "false", area,
		             uploaded - server->traced_uploaded, t_ns, done_ns, output->name);
		server->traced_uploaded = uploaded;
		if (painted)
			trace_composited(output, frame->seq, done_ns);
	}
	pixman_region32_clear(&output->flight_damage);

	if (t_ns > render_now_ns() && output->timer_fd >= 0)
		arm_timer(output, t_ns);
	else
		output_deliver(output);
}

/* The frame's pixels exist (or nothing was painted): its presentation
 * time on the grid, and the flip on its tick. */
static void output_frame_complete(struct comp_output *output, uint64_t done_ns)
{
	if (output->flight_painted)
		done_ns = output->backend->present(output, &output->flight_damage);
	output->flight.paint = output->flight_painted;
	/* Clients are told the tick the frame is shown on; the trace also
	 * has when its pixels really existed. The tick is a timer's, so no
	 * presentation flag is true of it. */
	uint64_t t_ns = render_frame_sched_finish(&output->sched, &output->flight, done_ns);
	output_frame_shown(output, t_ns, done_ns, 0);
}

void comp_output_frame_presented(struct comp_output *output, uint64_t t_ns,
                                 const uint64_t *msc, uint32_t flags)
{
	if (!output->in_flight) {
		comp_log("output %s: a frame completion with no frame in flight", output->name);
		return;
	}
	output->in_flight = false;
	render_frame_sched_flipped(&output->sched, &output->flight, t_ns, msc, render_now_ns());
	output_frame_shown(output, t_ns, t_ns, flags);
}

/* Is the submitted frame finished? Asked on the loop pass after the one
 * that submitted it, so the clients' requests already waiting are read
 * first; without an answer, asked again a millisecond later (a GPU still
 * drawing: llvmpipe never is, its flush rasterises before returning). */
static void output_check_frame(struct comp_output *output)
{
	if (!output->backend->frame_done(output)) {
		arm_timer(output, render_now_ns() + FRAME_POLL_NS);
		return;
	}
	output->in_flight = false;
	output_frame_complete(output, 0);
}

static void idle_check_frame(void *data)
{
	struct comp_output *output = data;
	output->idle_check = NULL; /* idle sources remove themselves */
	output_check_frame(output);
}

static void output_repaint(struct comp_output *output)
{
	struct comp_server *server = output->server;
	struct render_frame frame;

	if (output->presenting || !render_frame_sched_start(&output->sched, render_now_ns(), &frame))
		return;
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
	 * so is lost; frame.paint is false exactly when nothing was. */
	output->repaints++;
	output->flight = frame;
	output->flight_painted = render_scene_view_paint(output->view, output->target,
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
	output->presenting = true;

	if (!output->flight_painted) {
		/* Unpainted, the frame shows pixels that already existed: it
		 * is complete by its tick even when run just after it. */
		uint64_t now = render_now_ns();
		output_frame_complete(output, now < frame.tick_ns ? now : frame.tick_ns);
		return;
	}
	/* Submitted, not waited for: the loop goes on reading clients while
	 * the GPU draws, and the frame is finished on a later pass (or, on
	 * KMS, when its page flip's event comes). */
	output->in_flight = true;
	output->backend->submit(output, &output->flight_damage);
	if (!output->backend->frame_done)
		return;
	output->idle_check = wl_event_loop_add_idle(server->loop, idle_check_frame, output);
	if (!output->idle_check)
		output_check_frame(output);
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
	if (!output->enabled)
		return 0;
	if (output->in_flight) {
		/* A flip's event completes its frame, not the timer. */
		if (output->backend->frame_done && !output->idle_check)
			output_check_frame(output);
	} else if (output->presenting)
		output_deliver(output);
	else if (!output->idle_repaint)
		output_repaint(output);
	return 0;
}

void comp_output_schedule_repaint(struct comp_output *output)
{
	/* Disabled, nothing is remembered: enabling repaints everything. */
	if (!output || !output->enabled)
		return;
	/* While a frame waits for its flip the timer is the flip's; the
	 * flip arms the repaint. */
	bool damage = render_scene_view_has_damage(output->view);
	if (render_frame_sched_request(&output->sched, render_now_ns(), damage)) {
		if (!output->presenting)
			arm_repaint(output);
	} else if (damage && output->repaint_on_tick && !output->presenting) {
		/* Damage came for a frame that was to paint nothing: it needs
		 * its head start again. */
		arm_repaint(output);
	}
}

/* ------------------------------------------------------- display gone */

void comp_output_disable(struct comp_output *output, bool unplugged)
{
	struct comp_server *server = output->server;
	if (output->enabled) {
		output->enabled = false;
		if (output->idle_repaint)
			wl_event_source_remove(output->idle_repaint);
		output->idle_repaint = NULL;
		if (output->idle_check)
			wl_event_source_remove(output->idle_check);
		output->idle_check = NULL;
		arm_timer(output, 0);
		output->repaint_on_tick = false;
		output->in_flight = false;
		pixman_region32_clear(&output->flight_damage);
		/* The frame on its way is never shown: its feedback is
		 * discarded; its frame callbacks go with the first frame
		 * after the display is back (a client waits, as it would
		 * for a hidden window). */
		output->presenting = false;
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
		comp_layout_update_surfaces(server);
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
		output->global = wl_global_create(output->server->display, &wl_output_interface,
		                                  OUTPUT_VERSION, output, output_bind);
		if (!output->global)
			comp_log("output %s: cannot create its wl_output global again", output->name);
		comp_layout_update_surfaces(output->server);
	}
	if (output->enabled)
		return;
	output->enabled = true;
	output->refresh_mhz = refresh_mhz;
	/* A new grid at the new refresh, its count going on from where the
	 * old grid's would be now: seq never goes back for clients. */
	struct render_frame_sched old = output->sched;
	uint64_t now = render_now_ns();
	uint64_t seq = old.next_seq;
	if (old.period_ns && now > old.anchor_ns &&
	    old.anchor_seq + (now - old.anchor_ns) / old.period_ns > seq)
		seq = old.anchor_seq + (now - old.anchor_ns) / old.period_ns;
	render_frame_sched_init(&output->sched, refresh_mhz, now);
	output->sched.anchor_seq = output->sched.next_seq = output->sched.paint_seq = seq;
	output->sched.frames = old.frames;
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
	struct wl_resource *resource = wl_resource_create(client, &wl_output_interface,
	                                                  (int)version, id);
	if (!resource) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(resource, &output_impl, output, output_resource_destroy);
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
	output->timer_fd = -1;
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
	render_frame_sched_init(&output->sched, output->refresh_mhz, render_now_ns());
	/* Left to right: right of the last output. */
	struct comp_output *last;
	wl_list_for_each(last, &server->outputs, link)
		output->x = last->x + last->width;
	output->view = render_scene_view_create(server->scene, output->x, output->y,
	                                        output->width, output->height);
	if (!output->view)
		goto fail;

	/* Also unthrottled: it polls a frame the GPU has not finished. */
	output->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (output->timer_fd < 0) {
		comp_log("timerfd_create: %s", strerror(errno));
		goto fail;
	}
	output->repaint_timer = wl_event_loop_add_fd(server->loop, output->timer_fd,
	                                             WL_EVENT_READABLE, timer_repaint, output);
	if (!output->repaint_timer)
		goto fail;

	output->global = wl_global_create(server->display, &wl_output_interface, OUTPUT_VERSION,
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
	if (output->idle_check)
		wl_event_source_remove(output->idle_check);
	pixman_region32_fini(&output->flight_damage);
	if (output->repaint_timer)
		wl_event_source_remove(output->repaint_timer);
	if (output->timer_fd >= 0)
		close(output->timer_fd);
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
