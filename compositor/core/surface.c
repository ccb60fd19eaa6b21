/* wl_compositor and wl_surface: double-buffered surface state, shm
 * and dmabuf buffers, the surface's node in the output scene, map/unmap
 * and hit testing.
 *
 * A commit only takes its buffer: it checks it, sizes the texture and
 * damages the scene node; the pixels are copied when a repaint shows the
 * surface (comp_surface_latch, from output.c), so at most once per output
 * frame whatever the client's rate, and only the damaged rectangles. A
 * buffer replaced by a newer commit before any repaint showed it is
 * released without being copied (mailbox), so a client with two buffers
 * never waits for our frame rate. A copied buffer is released right
 * after the copy. Client memory is read only between
 * wl_shm_buffer_begin_access and end_access, where a truncated pool turns
 * into a protocol error instead of a SIGBUS.
 *
 * A dmabuf buffer (linux-dmabuf.c) is not copied: its imported texture
 * goes on the node at commit, and the buffer is kept from the repaint
 * that latches it until one latches a newer buffer (the mailbox rule
 * applies as for shm: one replaced before any repaint is given back).
 *
 * With the pixman engine a wl_shm buffer is not copied either (as weston
 * --use-pixman): the texture wraps the client's memory
 * (render_texture_create_wrapped) and the commit points it at the buffer
 * (surface_show_wrapped: with nothing to copy, latching at the repaint
 * would only hold a second buffer). The buffer is then held
 * (surface->shown) until a newer one is committed, the surface goes or the
 * client destroys it; the release of the one it replaces leaves with the
 * surface's next frame callbacks when it waits for some (one wakeup),
 * else at once. The read happens at each draw of the node, bracketed by
 * wl_shm_buffer_begin/end_access through the texture's access hooks, so a
 * truncated pool is that client's protocol error, found by the draw that
 * hits it. A client that destroys the buffer it shows (allowed if it
 * leaves the memory alone) gets its pixels copied into a texture of ours
 * at that moment. Layouts pixman cannot read in place (a stride that is
 * no multiple of 4), single-pixel buffers and the GL engine keep the copy
 * at latch.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <wayland-server-protocol.h>

#include "comp.h"
#include "region.h"
#include "viewporter-server-protocol.h"

#define COMPOSITOR_VERSION 5

/* ------------------------------------------------------------- state */

/* The layers above core (outputs, seat), which a surface tells what
 * happened to it through server.c's table, never by name. */
static const struct comp_surface_listener *told(const struct comp_surface *surface)
{
	return surface->server->surface_listener;
}

/* The surface's children (wl_subsurface, which sits above this file). */
static const struct comp_subsurface_parent *children(const struct comp_surface *surface)
{
	return surface->server->subsurface_parent;
}

static void state_buffer_destroyed(struct wl_listener *listener, void *data)
{
	/* The client destroyed an attached but not yet committed buffer: treat
	 * it as attach(NULL), the only content we could still show. */
	struct comp_surface_state *state = wl_container_of(listener, state, buffer_destroy);
	state->buffer = NULL;
	wl_list_remove(&state->buffer_destroy.link);
	wl_list_init(&state->buffer_destroy.link);
}

/* A subsurface's cache holds its buffer until a parent commit shows it;
 * the pending state's attach does not (buffer_held). */
static void cache_buffer_destroyed(struct wl_listener *listener, void *data)
{
	state_buffer_destroyed(listener, data);
}

static void shown_destroyed(struct wl_listener *listener, void *data);
static void latch_buffer_destroyed(struct wl_listener *listener, void *data);

/* One wl_buffer may be committed to several surfaces, or wait in a
 * subsurface's cache while a surface shows it: it is free, and its
 * release due, only once the last of them has let go. Each holder has a
 * destroy listener on the buffer, so the holders are found there. */
static bool buffer_held(struct wl_resource *buffer)
{
	return wl_resource_get_destroy_listener(buffer, shown_destroyed) ||
	       wl_resource_get_destroy_listener(buffer, latch_buffer_destroyed) ||
	       wl_resource_get_destroy_listener(buffer, cache_buffer_destroyed);
}

/* Called after the caller's own hold is gone; queue: send it with the
 * next flush of events (the frame callbacks') instead of at once. */
static void buffer_release(struct wl_resource *buffer, bool queue)
{
	if (!buffer || buffer_held(buffer))
		return;
	if (queue)
		wl_resource_queue_event(buffer, WL_BUFFER_RELEASE);
	else
		wl_buffer_send_release(buffer);
}

/* Points *slot at buffer (or NULL) and moves onto it the listener that
 * forgets it when the client destroys it. */
static void watch_buffer(struct wl_resource **slot, struct wl_listener *destroy,
                         struct wl_resource *buffer)
{
	wl_list_remove(&destroy->link);
	wl_list_init(&destroy->link);
	*slot = buffer;
	if (buffer)
		wl_resource_add_destroy_listener(buffer, destroy);
}

static void state_set_buffer(struct comp_surface_state *state, struct wl_resource *buffer)
{
	watch_buffer(&state->buffer, &state->buffer_destroy, buffer);
}

void comp_surface_state_init(struct comp_surface_state *state)
{
	state->buffer_attached = false;
	state->buffer = NULL;
	state->buffer_destroy.notify = state_buffer_destroyed;
	wl_list_init(&state->buffer_destroy.link);
	state->dx = state->dy = 0;
	pixman_region32_init(&state->damage);
	pixman_region32_init(&state->buffer_damage);
	pixman_region32_init(&state->opaque);
	comp_region_init_infinite(&state->input);
	state->scale = 1;
	state->transform = WL_OUTPUT_TRANSFORM_NORMAL;
	state->viewport.has_src = false;
	state->viewport.src_x = state->viewport.src_y = 0;
	state->viewport.src_w = state->viewport.src_h = 0;
	state->viewport.dst_w = state->viewport.dst_h = -1;
	wl_list_init(&state->frame_callbacks);
	wl_list_init(&state->feedbacks);
}

void comp_surface_cache_init(struct comp_surface_state *cache)
{
	comp_surface_state_init(cache);
	cache->buffer_destroy.notify = cache_buffer_destroyed;
}

static void discard_feedbacks(struct wl_list *feedbacks)
{
	if (!wl_list_empty(feedbacks))
		comp_presentation_discard(feedbacks);
}

/* The frame callbacks and feedback of a commit that will never be shown:
 * destroyed, so that the client's objects are not left on a list that is
 * gone or about to be reused. */
static void drop_callbacks(struct comp_surface_state *state)
{
	struct wl_resource *cb, *tmp;
	wl_resource_for_each_safe(cb, tmp, &state->frame_callbacks)
		wl_resource_destroy(cb);
	discard_feedbacks(&state->feedbacks);
}

void comp_surface_state_finish(struct comp_surface_state *state)
{
	state_set_buffer(state, NULL);
	pixman_region32_fini(&state->damage);
	pixman_region32_fini(&state->buffer_damage);
	pixman_region32_fini(&state->opaque);
	pixman_region32_fini(&state->input);
	drop_callbacks(state);
}

/* A cached buffer that will never be shown is given back (weston does
 * too when a subsurface goes with its cache). */
void comp_surface_cache_finish(struct comp_surface_state *cache)
{
	struct wl_resource *buffer = cache->buffer_attached ? cache->buffer : NULL;
	comp_surface_state_finish(cache);
	buffer_release(buffer, false);
}

/* The parts of a state that persist from commit to commit. */
static void copy_sticky(struct comp_surface_state *dst, const struct comp_surface_state *src)
{
	pixman_region32_copy(&dst->opaque, (pixman_region32_t *)&src->opaque);
	pixman_region32_copy(&dst->input, (pixman_region32_t *)&src->input);
	dst->scale = src->scale;
	dst->transform = src->transform;
	dst->viewport = src->viewport;
}

/* A damage region of more rectangles than COMP_MAX_DAMAGE_RECTS becomes
 * their bounding box: merging one more rectangle costs as many as the
 * region has, and every one of them is a copy and a draw later, so a
 * client damaging thousands of scattered pixels would make each commit
 * and each frame cost thousands (docs/security.md). Returns whether it
 * did. */
static bool damage_bound(pixman_region32_t *region)
{
	if (pixman_region32_n_rects(region) <= COMP_MAX_DAMAGE_RECTS)
		return false;
	pixman_box32_t e = *pixman_region32_extents(region);
	pixman_region32_fini(region);
	pixman_region32_init_rect(region, e.x1, e.y1, (unsigned)(e.x2 - e.x1),
	                          (unsigned)(e.y2 - e.y1));
	return true;
}

static void reset_per_commit(struct comp_surface_state *state)
{
	state->buffer_attached = false;
	state_set_buffer(state, NULL);
	state->dx = state->dy = 0;
	pixman_region32_clear(&state->damage);
	pixman_region32_clear(&state->buffer_damage);
	/* Lists still holding something belong to a commit that failed. */
	drop_callbacks(state);
}

void comp_surface_state_merge(struct comp_surface_state *dst, struct comp_surface_state *src)
{
	if (src->buffer_attached) {
		/* A cached buffer that is replaced before it was ever used is
		 * given back, or a client with two buffers could stall. */
		struct wl_resource *old = dst->buffer_attached ? dst->buffer : NULL;
		dst->buffer_attached = true;
		state_set_buffer(dst, src->buffer);
		if (old != src->buffer)
			buffer_release(old, false);
	}
	/* Each commit is a content update of its own: the cached one it
	 * replaces will never be shown, so its presentation feedback is
	 * discarded (presentation-time: "superseded"). Frame callbacks are
	 * not tied to one update and add up (wl_surface.frame). */
	discard_feedbacks(&dst->feedbacks);
	dst->dx = comp_clamp_coord((int64_t)dst->dx + src->dx);
	dst->dy = comp_clamp_coord((int64_t)dst->dy + src->dy);
	pixman_region32_union(&dst->damage, &dst->damage, &src->damage);
	pixman_region32_union(&dst->buffer_damage, &dst->buffer_damage, &src->buffer_damage);
	damage_bound(&dst->damage);
	damage_bound(&dst->buffer_damage);
	copy_sticky(dst, src);
	wl_list_insert_list(dst->frame_callbacks.prev, &src->frame_callbacks);
	wl_list_insert_list(dst->feedbacks.prev, &src->feedbacks);
	wl_list_init(&src->frame_callbacks);
	wl_list_init(&src->feedbacks);
	reset_per_commit(src);
}

/* --------------------------------------------------------------- upload */

static void surface_update_node_visibility(struct comp_surface *surface)
{
	render_node_set_visible(surface->node, surface->mapped && surface->texture);
}

/* The texture samples a wl_shm buffer in place (pixman engine): the
 * buffer is surface->shown. */
static bool surface_wraps(const struct comp_surface *surface)
{
	return surface->texture && !surface->image && render_texture_is_wrapped(surface->texture);
}

static void shown_forget(struct comp_surface *surface)
{
	watch_buffer(&surface->shown, &surface->shown_destroy, NULL);
}

/* The buffer the repaints sample in place (a dmabuf, or a wl_shm buffer
 * the texture wraps; NULL: none). The one it replaces is given back: no
 * frame reads it any more. */
static void surface_set_shown(struct comp_surface *surface, struct wl_resource *buffer,
                              bool queue_release)
{
	struct wl_resource *old = surface->shown;
	if (old == buffer)
		return;
	watch_buffer(&surface->shown, &surface->shown_destroy, buffer);
	buffer_release(old, queue_release);
}

/* The wrapped texture's access hooks (render_texture_set_access): client
 * memory is read between these two, one node's draw at a time, so a pool
 * the client truncates under us costs a SIGBUS that libwayland catches
 * (it maps zeros there) and a protocol error, never the server. */
static void *shown_access_begin(void *data)
{
	struct comp_surface *surface = data;
	struct wl_shm_buffer *shm = surface->shown ? wl_shm_buffer_get(surface->shown) : NULL;
	if (!shm)
		return NULL;
	wl_shm_buffer_begin_access(shm);
	/* Asked at every draw: wl_shm_pool.resize may have moved the
	 * mapping since the buffer was wrapped. */
	return wl_shm_buffer_get_data(shm);
}

static void shown_access_end(void *data)
{
	struct comp_surface *surface = data;
	/* Posts wl_shm.invalid_fd to the client if the draw hit a SIGBUS. */
	wl_shm_buffer_end_access(wl_shm_buffer_get(surface->shown));
}

/* The wrapped texture copies what it shows into memory of its own: the
 * buffer it samples is going away. Without memory for that it keeps its
 * access hooks, which skip its draws once surface->shown is gone. */
static void surface_unwrap(struct comp_surface *surface)
{
	struct wl_shm_buffer *shm = surface->shown ? wl_shm_buffer_get(surface->shown) : NULL;
	if (!surface_wraps(surface) || !shm)
		return;
	wl_shm_buffer_begin_access(shm);
	int ret = render_texture_rewrap(surface->texture, wl_shm_buffer_get_data(shm),
	                                wl_shm_buffer_get_stride(shm));
	if (ret == 0)
		ret = render_texture_unwrap(surface->texture);
	wl_shm_buffer_end_access(shm);
	if (ret == 0)
		render_texture_set_access(surface->texture, NULL, NULL, NULL);
	else
		comp_budget_texture_failed(surface, render_texture_width(surface->texture),
		                           render_texture_height(surface->texture));
}

/* Lets go of the texture: destroys one of ours, or drops the reference
 * on a dmabuf's image. The node must not show it any more. */
static void surface_release_texture(struct comp_surface *surface)
{
	if (surface->image)
		comp_dmabuf_image_unref(surface->image);
	else if (surface->texture)
		render_texture_destroy(surface->texture);
	surface->image = NULL;
	surface->texture = NULL;
}

static void surface_drop_texture(struct comp_surface *surface)
{
	surface_set_shown(surface, NULL, false);
	if (!surface->texture)
		return;
	render_node_set_texture(surface->node, NULL);
	surface_release_texture(surface);
	comp_budget_release_texture(surface);
	surface->buffer_width = surface->buffer_height = 0;
}

static void latch_buffer_destroyed(struct wl_listener *listener, void *data);
static void latch_take(struct comp_surface *surface, const struct comp_surface_state *state,
                       struct wl_resource *buffer, int width, int height, bool full);
static bool surface_take_dmabuf(struct comp_surface *surface, struct comp_surface_state *state,
                                struct wl_resource *buffer, struct comp_dmabuf_image *image,
                                bool *full);

static void latch_set_buffer(struct comp_surface *surface, struct wl_resource *buffer)
{
	watch_buffer(&surface->latch_buffer, &surface->latch_buffer_destroy, buffer);
}

/* Gives back the latched buffer uncopied: replaced, or its surface gone
 * (unless the texture samples it: then surface_set_shown gives it back). */
static void latch_drop(struct comp_surface *surface, bool release)
{
	struct wl_resource *old = surface->latch_buffer;
	latch_set_buffer(surface, NULL);
	pixman_region32_clear(&surface->latch_damage);
	if (release)
		buffer_release(old, false);
}

static void latch_copy(struct comp_surface *surface)
{
	struct wl_shm_buffer *shm = wl_shm_buffer_get(surface->latch_buffer);
	pixman_region32_intersect_rect(&surface->latch_damage, &surface->latch_damage, 0, 0,
	                               (unsigned)surface->buffer_width,
	                               (unsigned)surface->buffer_height);
	uint32_t pixel;
	if (!shm && surface->texture && pixman_region32_not_empty(&surface->latch_damage) &&
	    comp_single_pixel_buffer_get(surface->latch_buffer, &pixel))
		render_texture_upload(surface->texture, &pixel, 4, &surface->latch_damage);
	if (shm && surface->texture && pixman_region32_not_empty(&surface->latch_damage)) {
		wl_shm_buffer_begin_access(shm);
		render_texture_upload(surface->texture, wl_shm_buffer_get_data(shm),
		                      wl_shm_buffer_get_stride(shm), &surface->latch_damage);
		/* Posts an error to the client if its pool was truncated (SIGBUS
		 * during the copy); the texture then holds zeros there. */
		wl_shm_buffer_end_access(shm);
	}
	pixman_region32_clear(&surface->latch_damage);
}

void comp_surface_latch(struct comp_surface *surface, bool queue_release)
{
	struct wl_resource *buffer = surface->latch_buffer;
	if (!buffer)
		return;
	latch_copy(surface);
	latch_set_buffer(surface, NULL);
	if (comp_dmabuf_buffer_get(buffer)) {
		/* Sampled in place by this frame and the next ones: kept until a
		 * newer buffer is shown (this frame starts after the last one
		 * finished, so the one it replaces is read by none). */
		surface_set_shown(surface, buffer, queue_release);
		return;
	}
	surface_set_shown(surface, NULL, queue_release);
	/* GL has copied client memory by the time glTexSubImage2D returns,
	 * so the buffer is free now (unless another surface reads it). */
	buffer_release(buffer, queue_release);
}

/* A client may destroy a committed buffer before its release as long as
 * it leaves the memory alone (wl_surface.attach): what the surface shows
 * of it is copied now, while the shm buffer (and its mapping) still
 * exists. A dmabuf's image outlives its wl_buffer (surface->image). */
static void surface_buffer_gone(struct comp_surface *surface, struct wl_resource *buffer)
{
	if (buffer == surface->shown) {
		surface_unwrap(surface);
		shown_forget(surface);
	}
	/* (A wrapped texture has no buffer waiting at latch: it takes each
	 * one at commit.) */
	if (buffer == surface->latch_buffer) {
		latch_copy(surface);
		latch_set_buffer(surface, NULL);
	}
}

static void latch_buffer_destroyed(struct wl_listener *listener, void *data)
{
	struct comp_surface *surface = wl_container_of(listener, surface, latch_buffer_destroy);
	surface_buffer_gone(surface, data);
}

static void shown_destroyed(struct wl_listener *listener, void *data)
{
	struct comp_surface *surface = wl_container_of(listener, surface, shown_destroy);
	surface_buffer_gone(surface, data);
}

/* A wl_shm buffer the texture wraps is latched at commit, as weston's
 * renderers attach at commit: nothing is copied, so there is nothing to
 * save by waiting for the repaint, and the buffer it replaces (shown, or
 * never shown) is not read by any frame from now on (pixman draws the
 * whole frame inside the repaint). Releasing that one now, not at the
 * next repaint, leaves the client as many free buffers as a copying
 * compositor does: an unthrottled client with three buffers would
 * otherwise have two held between repaints and wait for a release every
 * frame. The release rides with the frame callbacks the surface waits
 * for, if any (they are sent at the next tick: one wakeup, not two);
 * otherwise it is sent now, since the client may be waiting for it. */
static void surface_show_wrapped(struct comp_surface *surface,
                                 const struct comp_surface_state *state,
                                 struct wl_resource *buffer, struct wl_shm_buffer *shm)
{
	/* A buffer still waiting for a copy (the texture was a copying one
	 * until this commit) is replaced unseen. */
	if (surface->latch_buffer != buffer)
		latch_drop(surface, true);
	latch_set_buffer(surface, NULL);
	pixman_region32_clear(&surface->latch_damage);
	if (buffer != surface->shown)
		render_texture_rewrap(surface->texture, wl_shm_buffer_get_data(shm),
		                      wl_shm_buffer_get_stride(shm));
	bool callbacks = surface->mapped && (!wl_list_empty(&state->frame_callbacks) ||
	                                     !wl_list_empty(&surface->current.frame_callbacks));
	surface_set_shown(surface, buffer, callbacks);
}

/* A wl_surface protocol error whose message starts with the surface, so
 * that a client's log says which one. (libwayland cuts every error
 * message at 128 bytes, so the buffer here cuts nothing it would keep.) */
static void surface_post_error(struct wl_resource *resource, uint32_t code, const char *fmt,
                               ...) __attribute__((format(printf, 3, 4)));
static void surface_post_error(struct wl_resource *resource, uint32_t code, const char *fmt,
                               ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	wl_resource_post_error(resource, code, "wl_surface@%u: %s", wl_resource_get_id(resource),
	                       msg);
}

/* The buffer must be a whole number of scale-sized pixels, unless a
 * viewport destination sets the surface size instead (the later
 * wl_surface text exempts that case; weston and wlroots do too). False
 * after posting invalid_size. */
static bool scale_fits(struct comp_surface *surface, int width, int height,
                       const struct comp_surface_state *state)
{
	if (state->viewport.dst_w > 0 || (width % state->scale == 0 && height % state->scale == 0))
		return true;
	surface_post_error(surface->resource, WL_SURFACE_ERROR_INVALID_SIZE,
	                   "buffer %dx%d is not a multiple of scale %d", width, height,
	                   state->scale);
	return false;
}

/* Takes the committed buffer for the next repaint: checks it, (re)creates
 * the texture when its size or format changed, and adds what changed to
 * the damage still to copy. Returns false after posting a protocol
 * error. *full is set when the texture was (re)created, so the whole node
 * must be repainted. */
static bool surface_take_buffer(struct comp_surface *surface, struct comp_surface_state *state,
                                bool *full)
{
	struct wl_resource *buffer = state->buffer;
	struct wl_shm_buffer *shm = wl_shm_buffer_get(buffer);
	uint32_t pixel;
	bool single_pixel = !shm && comp_single_pixel_buffer_get(buffer, &pixel);
	struct comp_dmabuf_image *image = !shm && !single_pixel ? comp_dmabuf_buffer_get(buffer)
	                                                        : NULL;
	if (!shm && !single_pixel && !image) {
		/* Only wl_shm, single-pixel and dmabuf buffers are advertised,
		 * so nothing else can be valid here. */
		surface_post_error(surface->resource, WL_DISPLAY_ERROR_INVALID_OBJECT,
		                   "attached buffer is not a wl_shm buffer");
		return false;
	}
	if (image)
		return surface_take_dmabuf(surface, state, buffer, image, full);
	enum render_format format = RENDER_FORMAT_ARGB8888;
	switch (single_pixel ? WL_SHM_FORMAT_ARGB8888 : wl_shm_buffer_get_format(shm)) {
	case WL_SHM_FORMAT_ARGB8888: format = RENDER_FORMAT_ARGB8888; break;
	case WL_SHM_FORMAT_XRGB8888: format = RENDER_FORMAT_XRGB8888; break;
	default:
		wl_resource_post_error(buffer, WL_SHM_ERROR_INVALID_FORMAT,
		                       "wl_buffer@%u: unsupported shm format 0x%x",
		                       wl_resource_get_id(buffer), wl_shm_buffer_get_format(shm));
		return false;
	}
	int width = single_pixel ? 1 : wl_shm_buffer_get_width(shm);
	int height = single_pixel ? 1 : wl_shm_buffer_get_height(shm);
	/* libwayland's create_buffer checks offset + stride * height against
	 * the pool, but only stride >= width, not the format's bytes per
	 * pixel; so rows that overlap are caught here, when the buffer is
	 * first used (both formats we take are 4 bytes a pixel). */
	const int bpp = 4;
	if (shm && wl_shm_buffer_get_stride(shm) / bpp < width) {
		wl_resource_post_error(buffer, WL_SHM_ERROR_INVALID_STRIDE,
		                       "wl_buffer@%u: stride %d is less than %d pixels of %d bytes",
		                       wl_resource_get_id(buffer), wl_shm_buffer_get_stride(shm),
		                       width, bpp);
		return false;
	}
	if (!scale_fits(surface, width, height, state))
		return false;

	/* The pixman engine samples the client's buffer in place where
	 * pixman can read its layout; everything else is copied at latch. */
	struct renderer *renderer = surface->server->renderer;
	bool wrap = shm && render_texture_wrap_supported(renderer) &&
	            wl_shm_buffer_get_stride(shm) % 4 == 0 &&
	            ((uintptr_t)wl_shm_buffer_get_data(shm) & 3) == 0;
	*full = !surface->texture || surface->image || surface->buffer_width != width ||
	        surface->buffer_height != height ||
	        render_texture_has_alpha(surface->texture) != (format == RENDER_FORMAT_ARGB8888) ||
	        render_texture_is_wrapped(surface->texture) != wrap;
	if (*full) {
		/* Within budget before anything is allocated (budget.c). A
		 * wrapped texture is charged too: it becomes a copy of ours if
		 * the client destroys the buffer it shows. */
		uint64_t old_charge = surface->texture_charge;
		if (!comp_budget_charge_texture(surface, (uint64_t)width * (uint64_t)height * 4))
			return false;
		struct render_texture *tex = NULL;
		if (wrap)
			tex = render_texture_create_wrapped(renderer, width, height,
			                                    wl_shm_buffer_get_data(shm),
			                                    wl_shm_buffer_get_stride(shm),
			                                    format == RENDER_FORMAT_ARGB8888);
		if (tex)
			render_texture_set_access(tex, shown_access_begin, shown_access_end, surface);
		else
			tex = render_texture_create(renderer, format, width, height);
		wrap = tex && render_texture_is_wrapped(tex);
		if (!tex) {
			comp_budget_charge_texture(surface, old_charge);
			comp_budget_texture_failed(surface, width, height);
			return false;
		}
		render_node_set_texture(surface->node, tex);
		surface_release_texture(surface);
		surface->texture = tex;
		surface->buffer_width = width;
		surface->buffer_height = height;
	}

	if (wrap) {
		surface_show_wrapped(surface, state, buffer, shm);
		return true;
	}
	latch_take(surface, state, buffer, width, height, *full);
	return true;
}

/* Adds what the commit changed to the damage still to copy and makes the
 * buffer the one the next repaint latches. */
static void latch_take(struct comp_surface *surface, const struct comp_surface_state *state,
                       struct wl_resource *buffer, int width, int height, bool full)
{
	/* Damage in buffer coordinates: buffer damage as is, surface damage
	 * scaled. With a viewport or a rotation the mapping is not a plain
	 * scale, so copy everything then (rare; correctness first). */
	pixman_region32_t *damage = &surface->latch_damage;
	if (full || state->viewport.has_src || state->viewport.dst_w > 0 ||
	    state->transform != WL_OUTPUT_TRANSFORM_NORMAL) {
		pixman_region32_union_rect(damage, damage, 0, 0, (unsigned)width, (unsigned)height);
	} else {
		int n;
		const pixman_box32_t *boxes = pixman_region32_rectangles(&state->damage, &n);
		for (int i = 0; i < n; i++) {
			int64_t x1 = (int64_t)boxes[i].x1 * state->scale;
			int64_t y1 = (int64_t)boxes[i].y1 * state->scale;
			int64_t x2 = (int64_t)boxes[i].x2 * state->scale;
			int64_t y2 = (int64_t)boxes[i].y2 * state->scale;
			if (x1 < 0) x1 = 0;
			if (y1 < 0) y1 = 0;
			if (x2 > width) x2 = width;
			if (y2 > height) y2 = height;
			if (x2 > x1 && y2 > y1)
				pixman_region32_union_rect(damage, damage, (int)x1, (int)y1,
				                           (unsigned)(x2 - x1), (unsigned)(y2 - y1));
		}
		pixman_region32_union(damage, damage, &state->buffer_damage);
		pixman_region32_intersect_rect(damage, damage, 0, 0, (unsigned)width,
		                               (unsigned)height);
		damage_bound(damage);
	}

	/* Mailbox: the newer buffer holds everything the older one would
	 * have shown, and the damage of both is still to copy. */
	if (surface->latch_buffer != buffer) {
		struct wl_resource *old = surface->latch_buffer;
		latch_set_buffer(surface, buffer);
		buffer_release(old, false);
	}
}

/* A dmabuf buffer: its image's texture goes on the node at once (nothing
 * is copied at latch; the repaint samples the client's buffer). */
static bool surface_take_dmabuf(struct comp_surface *surface, struct comp_surface_state *state,
                                struct wl_resource *buffer, struct comp_dmabuf_image *image,
                                bool *full)
{
	int width, height;
	enum render_format format;
	struct render_texture *tex = comp_dmabuf_image_texture(image, &width, &height, &format);
	if (!scale_fits(surface, width, height, state))
		return false;
	*full = surface->texture != tex || surface->buffer_width != width ||
	        surface->buffer_height != height;
	if (surface->texture != tex) {
		/* The client's memory, not ours: nothing to charge. */
		comp_budget_release_texture(surface);
		comp_dmabuf_image_ref(image);
		render_node_set_texture(surface->node, tex);
		surface_release_texture(surface);
		surface->image = image;
		surface->texture = tex;
		surface->buffer_width = width;
		surface->buffer_height = height;
	}
	latch_take(surface, state, buffer, width, height, *full);
	return true;
}

/* Surface size from buffer, scale, transform and viewport; posts the
 * viewporter's buffer-dependent errors. */
static bool surface_compute_size(struct comp_surface *surface,
                                 const struct comp_surface_state *state)
{
	if (!surface->texture) {
		surface->width = surface->height = 0;
		return true;
	}
	int bw = surface->buffer_width / state->scale, bh = surface->buffer_height / state->scale;
	if (state->transform & 1) { /* 90 and 270 degrees swap the axes */
		int t = bw;
		bw = bh;
		bh = t;
	}
	const struct comp_viewport_state *vp = &state->viewport;
	if (vp->has_src && (vp->src_x + vp->src_w > bw || vp->src_y + vp->src_h > bh)) {
		if (surface->viewport)
			wl_resource_post_error(surface->viewport, WP_VIEWPORT_ERROR_OUT_OF_BUFFER,
			                       "source rectangle %gx%g+%g+%g is outside the %dx%d buffer",
			                       vp->src_w, vp->src_h, vp->src_x, vp->src_y, bw, bh);
		return false;
	}
	if (vp->dst_w > 0) {
		surface->width = vp->dst_w;
		surface->height = vp->dst_h;
	} else if (vp->has_src) {
		if (vp->src_w != floor(vp->src_w) || vp->src_h != floor(vp->src_h)) {
			if (surface->viewport)
				wl_resource_post_error(surface->viewport, WP_VIEWPORT_ERROR_BAD_SIZE,
				                       "source size %gx%g is not integer and no "
				                       "destination size is set", vp->src_w, vp->src_h);
			return false;
		}
		surface->width = (int)vp->src_w;
		surface->height = (int)vp->src_h;
	} else {
		surface->width = bw;
		surface->height = bh;
	}
	return true;
}

/* Damage in node (surface) coordinates for what the commit changed. */
static void surface_damage_node(struct comp_surface *surface, struct comp_surface_state *state,
                                bool full)
{
	if (full || state->viewport.has_src || state->viewport.dst_w > 0 ||
	    state->transform != WL_OUTPUT_TRANSFORM_NORMAL) {
		render_node_damage(surface->node, NULL);
		return;
	}
	pixman_region32_t damage;
	pixman_region32_init(&damage);
	int n;
	const pixman_box32_t *boxes = pixman_region32_rectangles(&state->buffer_damage, &n);
	/* 64-bit: box + scale - 1 must not overflow whatever the scale. */
	int64_t s = state->scale;
	for (int i = 0; i < n; i++) {
		/* Round outwards: a half-covered surface pixel is damaged. */
		int x1 = (int)(boxes[i].x1 / s), y1 = (int)(boxes[i].y1 / s);
		int x2 = (int)((boxes[i].x2 + s - 1) / s), y2 = (int)((boxes[i].y2 + s - 1) / s);
		if (x2 > x1 && y2 > y1)
			pixman_region32_union_rect(&damage, &damage, x1, y1, (unsigned)(x2 - x1),
			                           (unsigned)(y2 - y1));
	}
	pixman_region32_union(&damage, &damage, &state->damage);
	pixman_region32_intersect_rect(&damage, &damage, 0, 0, (unsigned)surface->width,
	                               (unsigned)surface->height);
	if (pixman_region32_not_empty(&damage))
		render_node_damage(surface->node, &damage);
	pixman_region32_fini(&damage);
}

/* ---------------------------------------------------------------- apply */

void comp_surface_apply_state(struct comp_surface *surface, struct comp_surface_state *state)
{
	bool full = false;

	if (state->buffer_attached) {
		if (state->buffer) {
			if (!surface_take_buffer(surface, state, &full)) {
				/* Not taken: a commit refused (Xwayland's, over an X
				 * client's budget: xwayland-budget.c) gives the buffer
				 * back as one never used, or Xwayland keeps its memory
				 * for good (the X fuzzer had it killed for memory). */
				buffer_release(state->buffer, false);
				reset_per_commit(state);
				return;
			}
		} else {
			latch_drop(surface, true);
			surface_drop_texture(surface);
			full = true;
		}
	} else if (surface->texture &&
	           !scale_fits(surface, surface->buffer_width, surface->buffer_height, state)) {
		/* A new scale applies to the buffer already committed as well;
		 * checking it here also keeps the scale no larger than a buffer
		 * side, which bounds the damage arithmetic below. */
		reset_per_commit(state);
		return;
	}
	bool input_changed = !pixman_region32_equal(&surface->current.input, &state->input);
	copy_sticky(&surface->current, state);
	surface->current.dx = state->dx;
	surface->current.dy = state->dy;
	pixman_region32_copy(&surface->current.damage, &state->damage);
	pixman_region32_copy(&surface->current.buffer_damage, &state->buffer_damage);

	wl_list_insert_list(surface->current.frame_callbacks.prev, &state->frame_callbacks);
	/* Feedback of a commit that was never shown is superseded by this one. */
	discard_feedbacks(&surface->current.feedbacks);
	wl_list_insert_list(&surface->current.feedbacks, &state->feedbacks);
	wl_list_init(&state->frame_callbacks);
	wl_list_init(&state->feedbacks);

	int old_w = surface->width, old_h = surface->height;
	if (!surface_compute_size(surface, state)) {
		reset_per_commit(state);
		return;
	}
	if (old_w != surface->width || old_h != surface->height)
		full = true;

	render_node_set_size(surface->node, surface->width, surface->height);
	render_node_set_transform(surface->node,
	                          comp_dmabuf_image_transform(surface->image, state->transform));
	const struct comp_viewport_state *vp = &state->viewport;
	if (vp->has_src)
		render_node_set_source(surface->node, (float)(vp->src_x * state->scale),
		                       (float)(vp->src_y * state->scale),
		                       (float)(vp->src_w * state->scale),
		                       (float)(vp->src_h * state->scale));
	else
		render_node_set_source(surface->node, 0, 0, 0, 0);
	pixman_region32_t opaque;
	pixman_region32_init(&opaque);
	pixman_region32_intersect_rect(&opaque, &state->opaque, 0, 0, (unsigned)surface->width,
	                               (unsigned)surface->height);
	render_node_set_opaque_region(surface->node, &opaque);
	pixman_region32_fini(&opaque);
	if (surface->texture && (state->buffer_attached || pixman_region32_not_empty(&state->damage)))
		surface_damage_node(surface, state, full);
	surface_update_node_visibility(surface);

	reset_per_commit(state);

	if (surface->role && surface->role_data && surface->role->commit)
		surface->role->commit(surface);
	children(surface)->parent_committed(surface);

	pixman_region32_clear(&surface->current.damage);
	pixman_region32_clear(&surface->current.buffer_damage);
	surface->current.dx = surface->current.dy = 0;

	/* A new size changes the outputs it is on (a move already did), and
	 * maybe what is under the pointer. */
	told(surface)->surface_placed(surface);
	told(surface)->scene_damaged(surface->server);
	if (surface->mapped && (old_w != surface->width || old_h != surface->height || input_changed))
		told(surface)->pointer_scene_changed(surface->server);
	if (surface->mapped && (!wl_list_empty(&surface->current.frame_callbacks) ||
	                        !wl_list_empty(&surface->current.feedbacks)))
		told(surface)->frames_wanted(surface->frame_output);

	wl_signal_emit_mutable(&surface->commit_signal, surface);
}

/* ------------------------------------------------------------ wl_surface */

static void surface_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void surface_attach(struct wl_client *client, struct wl_resource *resource,
                           struct wl_resource *buffer, int32_t x, int32_t y)
{
	struct comp_surface *surface = comp_surface_from_resource(resource);
	if (wl_resource_get_version(resource) >= WL_SURFACE_OFFSET_SINCE_VERSION &&
	    (x != 0 || y != 0)) {
		surface_post_error(resource, WL_SURFACE_ERROR_INVALID_OFFSET,
		                   "attach with a non-zero offset, use wl_surface.offset");
		return;
	}
	if (buffer && surface->role && surface->role_data && surface->role->attach)
		surface->role->attach(surface);
	surface->pending.buffer_attached = true;
	state_set_buffer(&surface->pending, buffer);
	/* From version 5 the offset is wl_surface.offset's alone: an attach
	 * (with 0,0) must not undo one sent before it. */
	if (wl_resource_get_version(resource) < WL_SURFACE_OFFSET_SINCE_VERSION) {
		surface->pending.dx = comp_clamp_coord(x);
		surface->pending.dy = comp_clamp_coord(y);
	}
}

static void add_damage(struct comp_surface *surface, pixman_region32_t *region, int32_t x,
                       int32_t y, int32_t w, int32_t h)
{
	if (w <= 0 || h <= 0)
		return;
	/* Clamp to something sane: damage beyond the surface is clipped later
	 * anyway, and this keeps x + w from overflowing. */
	const int32_t lim = 1 << 20;
	int64_t x1 = x, y1 = y, x2 = (int64_t)x + w, y2 = (int64_t)y + h;
	x1 = x1 < -lim ? -lim : x1 > lim ? lim : x1;
	y1 = y1 < -lim ? -lim : y1 > lim ? lim : y1;
	x2 = x2 < -lim ? -lim : x2 > lim ? lim : x2;
	y2 = y2 < -lim ? -lim : y2 > lim ? lim : y2;
	if (x2 > x1 && y2 > y1)
		pixman_region32_union_rect(region, region, (int)x1, (int)y1, (unsigned)(x2 - x1),
		                           (unsigned)(y2 - y1));
	if (damage_bound(region) && !surface->damage_bounded) {
		surface->damage_bounded = true;
		pid_t pid = 0;
		wl_client_get_credentials(wl_resource_get_client(surface->resource), &pid, NULL, NULL);
		comp_log("client pid %d damaged wl_surface@%u in more than %d rectangles before one "
		         "commit: their bounding box is taken (said once a surface)", (int)pid,
		         wl_resource_get_id(surface->resource), COMP_MAX_DAMAGE_RECTS);
	}
}

static void surface_damage(struct wl_client *client, struct wl_resource *resource,
                           int32_t x, int32_t y, int32_t w, int32_t h)
{
	struct comp_surface *surface = comp_surface_from_resource(resource);
	add_damage(surface, &surface->pending.damage, x, y, w, h);
}

static void surface_damage_buffer(struct wl_client *client, struct wl_resource *resource,
                                  int32_t x, int32_t y, int32_t w, int32_t h)
{
	struct comp_surface *surface = comp_surface_from_resource(resource);
	add_damage(surface, &surface->pending.buffer_damage, x, y, w, h);
}

static void callback_resource_destroy(struct wl_resource *resource)
{
	wl_list_remove(wl_resource_get_link(resource));
}

static void surface_frame(struct wl_client *client, struct wl_resource *resource,
                          uint32_t callback)
{
	struct comp_surface *surface = comp_surface_from_resource(resource);
	struct wl_resource *cb = comp_resource_create(client, &wl_callback_interface, 1, callback,
	                                              NULL, NULL, callback_resource_destroy);
	if (!cb)
		return;
	wl_list_insert(surface->pending.frame_callbacks.prev, wl_resource_get_link(cb));
}

static void surface_set_opaque_region(struct wl_client *client, struct wl_resource *resource,
                                      struct wl_resource *region)
{
	struct comp_surface *surface = comp_surface_from_resource(resource);
	if (region)
		pixman_region32_copy(&surface->pending.opaque, comp_region_from_resource(region));
	else
		pixman_region32_clear(&surface->pending.opaque);
}

static void surface_set_input_region(struct wl_client *client, struct wl_resource *resource,
                                     struct wl_resource *region)
{
	struct comp_surface *surface = comp_surface_from_resource(resource);
	if (region) {
		pixman_region32_copy(&surface->pending.input, comp_region_from_resource(region));
	} else {
		pixman_region32_fini(&surface->pending.input);
		comp_region_init_infinite(&surface->pending.input);
	}
}

static void surface_commit(struct wl_client *client, struct wl_resource *resource)
{
	struct comp_surface *surface = comp_surface_from_resource(resource);
	/* A role may hold the commit back (a synchronized subsurface caches it). */
	const struct comp_surface_role *role = surface->role;
	if (role && role->hold_commit && role->hold_commit(surface))
		return;
	comp_surface_apply_state(surface, &surface->pending);
}

static void surface_set_buffer_transform(struct wl_client *client,
                                         struct wl_resource *resource, int32_t transform)
{
	struct comp_surface *surface = comp_surface_from_resource(resource);
	if (transform < WL_OUTPUT_TRANSFORM_NORMAL || transform > WL_OUTPUT_TRANSFORM_FLIPPED_270)
		surface_post_error(resource, WL_SURFACE_ERROR_INVALID_TRANSFORM,
		                   "buffer transform %d is not valid", transform);
	else
		surface->pending.transform = transform;
}

static void surface_set_buffer_scale(struct wl_client *client, struct wl_resource *resource,
                                     int32_t scale)
{
	struct comp_surface *surface = comp_surface_from_resource(resource);
	if (scale < 1)
		surface_post_error(resource, WL_SURFACE_ERROR_INVALID_SCALE,
		                   "buffer scale %d must be at least 1", scale);
	else
		surface->pending.scale = scale;
}

static void surface_offset(struct wl_client *client, struct wl_resource *resource,
                           int32_t x, int32_t y)
{
	struct comp_surface *surface = comp_surface_from_resource(resource);
	surface->pending.dx = comp_clamp_coord(x);
	surface->pending.dy = comp_clamp_coord(y);
}

static const struct wl_surface_interface surface_impl = {
	.destroy = surface_destroy,
	.attach = surface_attach,
	.damage = surface_damage,
	.frame = surface_frame,
	.set_opaque_region = surface_set_opaque_region,
	.set_input_region = surface_set_input_region,
	.commit = surface_commit,
	.set_buffer_transform = surface_set_buffer_transform,
	.set_buffer_scale = surface_set_buffer_scale,
	.damage_buffer = surface_damage_buffer,
	.offset = surface_offset,
};

static void surface_resource_destroy(struct wl_resource *resource)
{
	struct comp_surface *surface = comp_surface_from_resource(resource);
	/* Role objects, seat focus and viewport let go of the surface first;
	 * they may still look at it (e.g. to unmap a window). */
	wl_signal_emit_mutable(&surface->destroy_signal, surface);
	comp_surface_unmap(surface);
	wl_list_remove(&surface->link);
	comp_surface_state_finish(&surface->pending);
	comp_surface_state_finish(&surface->current);
	/* The client may reuse a buffer it attached to a surface it destroyed. */
	latch_drop(surface, true);
	surface_set_shown(surface, NULL, false);
	pixman_region32_fini(&surface->latch_damage);
	render_node_destroy(surface->node);
	surface_release_texture(surface);
	comp_budget_release_texture(surface);
	told(surface)->scene_damaged(surface->server);
	free(surface);
}

static void compositor_create_surface(struct wl_client *client, struct wl_resource *resource,
                                      uint32_t id)
{
	struct comp_server *server = wl_resource_get_user_data(resource);
	struct comp_surface *surface = calloc(1, sizeof(*surface));
	if (!surface) {
		wl_client_post_no_memory(client);
		return;
	}
	surface->resource = wl_resource_create(client, &wl_surface_interface,
	                                       wl_resource_get_version(resource), id);
	surface->node = render_node_create(server->scene);
	if (!surface->resource || !surface->node) {
		if (surface->resource)
			wl_resource_destroy(surface->resource);
		if (surface->node)
			render_node_destroy(surface->node);
		free(surface);
		wl_client_post_no_memory(client);
		return;
	}
	surface->server = server;
	surface->latch_buffer_destroy.notify = latch_buffer_destroyed;
	wl_list_init(&surface->latch_buffer_destroy.link);
	surface->shown_destroy.notify = shown_destroyed;
	wl_list_init(&surface->shown_destroy.link);
	pixman_region32_init(&surface->latch_damage);
	comp_surface_state_init(&surface->pending);
	comp_surface_state_init(&surface->current);
	wl_list_init(&surface->subsurfaces);
	wl_list_init(&surface->subsurfaces_pending);
	wl_list_insert(&surface->subsurfaces, &surface->subsurface_self_link);
	wl_list_insert(&surface->subsurfaces_pending, &surface->subsurface_self_pending_link);
	wl_signal_init(&surface->destroy_signal);
	wl_signal_init(&surface->commit_signal);
	wl_list_insert(server->surfaces.prev, &surface->link);
	wl_resource_set_implementation(surface->resource, &surface_impl, surface,
	                               surface_resource_destroy);
	wl_signal_emit_mutable(&server->new_surface, surface);
}

static void compositor_create_region(struct wl_client *client, struct wl_resource *resource,
                                     uint32_t id)
{
	comp_region_create(client, 1, id);
}

static const struct wl_compositor_interface compositor_impl = {
	.create_surface = compositor_create_surface,
	.create_region = compositor_create_region,
};

static void compositor_bind(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	comp_resource_create(client, &wl_compositor_interface, (int)version, id, &compositor_impl,
	                     data, NULL);
}

void comp_compositor_create(struct comp_server *server)
{
	comp_global_create(server, &wl_compositor_interface, COMPOSITOR_VERSION, server,
	                   compositor_bind);
}

/* ------------------------------------------------------- roles, mapping */

bool comp_surface_set_role(struct comp_surface *surface, const struct comp_surface_role *role,
                           void *role_data, struct wl_resource *error_resource,
                           uint32_t error_code)
{
	/* A surface keeps its role for life; it may get a new role object of
	 * the same role once the previous one is gone. */
	if ((surface->role && surface->role != role) || surface->role_data) {
		wl_resource_post_error(error_resource, error_code,
		                       "wl_surface@%u already has the role %s (asked: %s)",
		                       wl_resource_get_id(surface->resource),
		                       surface->role ? surface->role->name : "?", role->name);
		return false;
	}
	surface->role = role;
	surface->role_data = role_data;
	return true;
}

void comp_surface_map(struct comp_surface *surface, int x, int y)
{
	comp_surface_set_position(surface, x, y);
	if (!surface->mapped) {
		surface->mapped = true;
		surface_update_node_visibility(surface);
		told(surface)->surface_placed(surface);
		children(surface)->parent_mapped(surface, true);
		told(surface)->pointer_scene_changed(surface->server);
	}
	told(surface)->scene_damaged(surface->server);
	/* Frame callbacks that waited for the map are due. */
	told(surface)->frames_wanted(surface->frame_output);
}

void comp_surface_unmap(struct comp_surface *surface)
{
	if (!surface->mapped)
		return;
	surface->mapped = false;
	surface_update_node_visibility(surface);
	told(surface)->surface_placed(surface);
	/* Hidden content will not be presented: say so instead of leaving the
	 * client waiting. Frame callbacks stay until it is shown again. */
	discard_feedbacks(&surface->current.feedbacks);
	children(surface)->parent_mapped(surface, false);
	told(surface)->scene_damaged(surface->server);
	told(surface)->pointer_scene_changed(surface->server);
}

void comp_surface_set_position(struct comp_surface *surface, int x, int y)
{
	/* What is under a pointer that stays may have changed. */
	if (surface->mapped && (x != surface->x || y != surface->y))
		told(surface)->pointer_scene_changed(surface->server);
	surface->x = x;
	surface->y = y;
	render_node_set_position(surface->node, x, y);
	told(surface)->surface_placed(surface);
	children(surface)->parent_moved(surface);
}

struct hit_test {
	double x, y;
	struct comp_surface *found;
	double sx, sy;
};

static void hit_test_surface(struct comp_surface *surface, void *data)
{
	struct hit_test *hit = data;
	if (!surface->mapped || !surface->texture)
		return;
	double sx = hit->x - surface->x, sy = hit->y - surface->y;
	if (sx < 0 || sy < 0 || sx >= surface->width || sy >= surface->height)
		return;
	if (!pixman_region32_contains_point(&surface->current.input, (int)floor(sx),
	                                    (int)floor(sy), NULL))
		return;
	/* Walk is bottom to top: the last hit is the topmost. */
	hit->found = surface;
	hit->sx = sx;
	hit->sy = sy;
}

struct comp_surface *comp_surface_at(struct comp_server *server, double x, double y,
                                     double *sx, double *sy)
{
	struct hit_test hit = { .x = x, .y = y };
	comp_stack_for_each(server, hit_test_surface, &hit);
	if (hit.found) {
		if (sx)
			*sx = hit.sx;
		if (sy)
			*sy = hit.sy;
	}
	return hit.found;
}
