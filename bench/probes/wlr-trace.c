/* An LD_PRELOAD tracer for wlroots compositors (sway): writes to
 * $DUET_TRACE the same "frame" and "composited" JSON lines duet's servers
 * write (docs/methodology.md, "Timeline"), so the bench reads a wlroots
 * server's painted frames and its composited points as it reads duet's.
 *
 * sway tells no one when it showed a frame: its headless output ends every
 * wp_presentation feedback "discarded", and it answers the frame callback
 * of a window it does not show yet at once. What it does do, through
 * wlroots' exported functions, is draw: each surface it paints is fetched
 * with wlr_surface_get_texture() while it renders an output frame, and the
 * frame is handed to the backend with wlr_output_commit(). This library
 * wraps those two calls (the originals run unchanged, first): the surfaces
 * fetched since the last commit are the frame's, and once the commit
 * succeeds, a surface drawn for the first time, or at a buffer size not
 * drawn before, gets a "composited" line stamped then (CLOCK_MONOTONIC).
 * A view that sway holds back in a transaction is painted from a saved
 * buffer, not through wlr_surface_get_texture(), so a resize is composited
 * when the new size itself is drawn.
 *
 * Built against the system's wlroots headers, for the wlroots the system's
 * sway runs on (struct layouts: wlr_surface, wlr_texture, wlr_output). */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define WLR_USE_UNSTABLE
#include <wayland-server-core.h>
#include <wlr/render/wlr_texture.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_surface.h>

#define EXPORT __attribute__((visibility("default")))

/* One surface ever drawn: its last composited size, until it is destroyed. */
struct seen {
	struct wlr_surface *surface;
	pid_t client_pid;
	uint32_t width, height;
	bool in_frame; /* fetched for the frame being rendered */
	struct wl_listener destroy;
	struct wl_list link;
};

static struct {
	bool init, off;
	FILE *out;
	struct wl_list seen;
	uint64_t seq; /* output frames committed */
	struct wlr_texture *(*get_texture)(struct wlr_surface *);
	bool (*commit)(struct wlr_output *);
} T;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool setup(void)
{
	if (T.init)
		return !T.off;
	T.init = true;
	wl_list_init(&T.seen);
	T.get_texture = (struct wlr_texture * (*)(struct wlr_surface *))
		dlsym(RTLD_NEXT, "wlr_surface_get_texture");
	T.commit = (bool (*)(struct wlr_output *))dlsym(RTLD_NEXT, "wlr_output_commit");
	const char *path = getenv("DUET_TRACE");
	if (path && *path)
		T.out = fopen(path, "ae");
	T.off = !T.out || !T.get_texture || !T.commit;
	return !T.off;
}

static void seen_destroyed(struct wl_listener *l, void *data)
{
	struct seen *s = wl_container_of(l, s, destroy);
	wl_list_remove(&s->destroy.link);
	wl_list_remove(&s->link);
	free(s);
}

static struct seen *seen_get(struct wlr_surface *surface)
{
	struct seen *s;
	wl_list_for_each(s, &T.seen, link) {
		if (s->surface == surface)
			return s;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->surface = surface;
	uid_t uid;
	gid_t gid;
	wl_client_get_credentials(wl_resource_get_client(surface->resource), &s->client_pid, &uid,
	                          &gid);
	s->destroy.notify = seen_destroyed;
	wl_signal_add(&surface->events.destroy, &s->destroy);
	wl_list_insert(&T.seen, &s->link);
	return s;
}

EXPORT struct wlr_texture *wlr_surface_get_texture(struct wlr_surface *surface)
{
	if (!setup())
		return T.get_texture ? T.get_texture(surface) : NULL;
	struct wlr_texture *tex = T.get_texture(surface);
	if (tex && surface) {
		struct seen *s = seen_get(surface);
		if (s)
			s->in_frame = true;
	}
	return tex;
}

EXPORT bool wlr_output_commit(struct wlr_output *output)
{
	if (!setup())
		return T.commit ? T.commit(output) : false;
	bool frame = output->pending.committed & WLR_OUTPUT_STATE_BUFFER;
	bool ok = T.commit(output);
	if (!frame)
		return ok;
	uint64_t t = now_ns();
	if (ok)
		T.seq++;
	fprintf(T.out, "{\"name\":\"frame\",\"ns\":%llu,\"pid\":%d,\"seq\":%llu,\"painted\":%s,"
	        "\"output\":\"%s\"}\n", (unsigned long long)t, (int)getpid(),
	        (unsigned long long)T.seq, ok ? "true" : "false", output->name);
	struct seen *s;
	wl_list_for_each(s, &T.seen, link) {
		if (!s->in_frame)
			continue;
		s->in_frame = false;
		struct wlr_texture *tex = ok ? T.get_texture(s->surface) : NULL;
		if (!tex || (tex->width == s->width && tex->height == s->height))
			continue;
		bool first = s->width == 0;
		s->width = tex->width;
		s->height = tex->height;
		fprintf(T.out, "{\"name\":\"composited\",\"ns\":%llu,\"pid\":%d,\"t_ns\":%llu,"
		        "\"seq\":%llu,\"client_pid\":%d,\"width\":%u,\"height\":%u,\"first\":%s}\n",
		        (unsigned long long)now_ns(), (int)getpid(), (unsigned long long)t,
		        (unsigned long long)T.seq, (int)s->client_pid, s->width, s->height,
		        first ? "true" : "false");
	}
	fflush(T.out);
	return ok;
}
