/* wp_presentation: tells clients when their content became visible.
 *
 * A feedback resource lives in a surface's pending.feedbacks list until the
 * core moves it to current.feedbacks on commit; the output takes it into
 * the frame that shows that content and reports it presented on the
 * frame's tick (comp_presentation_send_presented), or the core discards it
 * (comp_presentation_discard) when the content was replaced before being
 * shown or the surface went away. Either way the resource is destroyed, as
 * the protocol says; a client that disconnects first just unlinks it.
 *
 * Flags claim only what is true, and the output says what is
 * (comp_frame_info.flags). The headless output's clock is a timer, not a
 * display's vblank, so there it is no VSYNC, no HW_CLOCK/HW_COMPLETION: the
 * time is the tick of render/'s frame grid the frame is shown on (never
 * before its pixels exist), seq counts the grid's periods, refresh is the
 * period. On KMS a page flip's event gives the time, hence VSYNC, HW_CLOCK
 * and HW_COMPLETION (backend-drm.c), and seq is the display's vblank
 * counter where it has one. shm contents are copied, so never ZERO_COPY.
 */
#include <time.h>

#include <wayland-server-protocol.h>

#include "comp.h"
#include "presentation-time-server-protocol.h"

#define PRESENTATION_VERSION 1

static void feedback_destroy(struct wl_resource *resource)
{
	wl_list_remove(wl_resource_get_link(resource));
}

static void presentation_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void presentation_handle_feedback(struct wl_client *client, struct wl_resource *resource,
                                         struct wl_resource *surface_resource, uint32_t id)
{
	struct comp_surface *surface = comp_surface_from_resource(surface_resource);
	/* wp_presentation_feedback has no requests. */
	struct wl_resource *feedback = comp_resource_create(client,
	                                                    &wp_presentation_feedback_interface,
	                                                    wl_resource_get_version(resource), id,
	                                                    NULL, NULL, feedback_destroy);
	if (!feedback)
		return;
	if (surface) {
		wl_list_insert(surface->pending.feedbacks.prev, wl_resource_get_link(feedback));
	} else {
		/* The surface is already gone: its content will never show. */
		wl_list_init(wl_resource_get_link(feedback));
		wp_presentation_feedback_send_discarded(feedback);
		wl_resource_destroy(feedback);
	}
}

static const struct wp_presentation_interface presentation_impl = {
	.destroy = presentation_handle_destroy,
	.feedback = presentation_handle_feedback,
};

static void presentation_bind(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	struct wl_resource *resource = comp_resource_create(client, &wp_presentation_interface,
	                                                    version, id, &presentation_impl, NULL,
	                                                    NULL);
	if (!resource)
		return;
	wp_presentation_send_clock_id(resource, CLOCK_MONOTONIC);
}

void comp_presentation_create(struct comp_server *server)
{
	comp_global_create(server, &wp_presentation_interface, PRESENTATION_VERSION, server,
	                   presentation_bind);
}

void comp_presentation_send_presented(struct comp_output *output, struct wl_list *feedbacks,
                                      const struct comp_frame_info *frame)
{
	struct wl_resource *feedback, *tmp;
	uint64_t sec = frame->t_ns / 1000000000ull;
	uint32_t nsec = (uint32_t)(frame->t_ns % 1000000000ull);

	wl_resource_for_each_safe(feedback, tmp, feedbacks) {
		struct wl_client *client = wl_resource_get_client(feedback);
		struct wl_resource *res;
		wl_resource_for_each(res, &output->resources) {
			if (wl_resource_get_client(res) == client)
				wp_presentation_feedback_send_sync_output(feedback, res);
		}
		wp_presentation_feedback_send_presented(feedback, (uint32_t)(sec >> 32), (uint32_t)sec,
		                                        nsec, frame->refresh_ns,
		                                        (uint32_t)(frame->seq >> 32),
		                                        (uint32_t)frame->seq, frame->flags);
		wl_resource_destroy(feedback);
	}
}

void comp_presentation_discard(struct wl_list *feedbacks)
{
	struct wl_resource *feedback, *tmp;
	wl_resource_for_each_safe(feedback, tmp, feedbacks) {
		wp_presentation_feedback_send_discarded(feedback);
		wl_resource_destroy(feedback);
	}
}
