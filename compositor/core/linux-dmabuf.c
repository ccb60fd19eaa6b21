/* zwp_linux_dmabuf_v1 (version 4, or 3 where the renderer's DRM device is
 * not known): wl_buffers that are a client's dmabufs,
 * imported once, when the buffer is created, as an EGLImage bound to a
 * texture (render_texture_import_dmabuf). The compositor samples the
 * client's memory where it is: nothing is copied, and surface.c keeps the
 * buffer (no release) for as long as a frame may sample it.
 *
 * Offered only where the renderer can import (EGL_EXT_image_dma_buf_import
 * and GL_OES_EGL_image), with the formats and modifiers EGL lists for the
 * two formats the renderer takes (XRGB8888, ARGB8888; one plane each). On
 * llvmpipe without a render node (the headless host) EGL cannot import,
 * and the global is absent: clients then use wl_shm as before.
 *
 * Version 4's feedback names that device (the main device, which Mesa's
 * Wayland EGL needs to find the client's render node: there is no
 * wl_drm) and lists the same formats and modifiers in a format table, in
 * one tranche; the feedback of a surface is the default one (one output,
 * no scanout of client buffers).
 *
 * The parameter checks post the protocol's errors before anything is
 * imported; an import the driver refuses is the 'failed' event for
 * create and invalid_wl_buffer for create_immed (the spec leaves the
 * choice; an invalid wl_buffer would only fail later, further from the
 * cause).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "comp.h"
#include "linux-dmabuf-unstable-v1-server-protocol.h"

#define LINUX_DMABUF_VERSION 4
#define MAX_PLANES 4
#define MAX_MODIFIERS 64

#define FOURCC(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | \
                            (uint32_t)(d) << 24)
#define DRM_FORMAT_XRGB8888 FOURCC('X', 'R', '2', '4')
#define DRM_FORMAT_ARGB8888 FOURCC('A', 'R', '2', '4')
#define DRM_FORMAT_MOD_INVALID 0x00ffffffffffffffULL

/* What the renderer imports: fixed at start, sent to every client. */
struct dmabuf_format {
	uint32_t fourcc;
	enum render_format format;
	bool supported;
	int n_modifiers;
	uint64_t modifiers[MAX_MODIFIERS];
};

static const struct dmabuf_format offered_formats[] = {
	{ .fourcc = DRM_FORMAT_XRGB8888, .format = RENDER_FORMAT_XRGB8888 },
	{ .fourcc = DRM_FORMAT_ARGB8888, .format = RENDER_FORMAT_ARGB8888 },
};
#define N_FORMATS (sizeof(offered_formats) / sizeof(offered_formats[0]))

/* One server's linux-dmabuf: what its renderer imports, and version 4's
 * format table (a sealed memfd of 16-byte entries) and the device it is
 * for. */
struct dmabuf_table {
	int fd;
	uint32_t size;
	uint16_t entries;
	dev_t device;
};

struct comp_dmabuf {
	struct dmabuf_format formats[N_FORMATS];
	struct dmabuf_table table;
};

struct table_entry {
	uint32_t format;
	uint32_t pad;
	uint64_t modifier;
};

static const struct dmabuf_format *find_format(const struct comp_dmabuf *dm, uint32_t fourcc)
{
	for (size_t i = 0; i < N_FORMATS; i++)
		if (dm->formats[i].fourcc == fourcc && dm->formats[i].supported)
			return &dm->formats[i];
	return NULL;
}

static bool format_has_modifier(const struct comp_dmabuf *dm, uint32_t fourcc, uint64_t modifier)
{
	const struct dmabuf_format *f = find_format(dm, fourcc);
	if (!f)
		return false;
	if (modifier == DRM_FORMAT_MOD_INVALID)
		return true;
	for (int i = 0; i < f->n_modifiers; i++)
		if (f->modifiers[i] == modifier)
			return true;
	return false;
}

/* ------------------------------------------------------------ buffers */

struct comp_dmabuf_image {
	int refs;
	struct render_texture *texture;
	int width, height;
	enum render_format format;
	bool y_invert; /* rows bottom-up, as GL draws them */
};

void comp_dmabuf_image_ref(struct comp_dmabuf_image *image)
{
	image->refs++;
}

void comp_dmabuf_image_unref(struct comp_dmabuf_image *image)
{
	if (!image || --image->refs > 0)
		return;
	render_texture_destroy(image->texture);
	free(image);
}

struct render_texture *comp_dmabuf_image_texture(const struct comp_dmabuf_image *image,
                                                 int *width, int *height,
                                                 enum render_format *format)
{
	*width = image->width;
	*height = image->height;
	*format = image->format;
	return image->texture;
}

int comp_dmabuf_image_transform(const struct comp_dmabuf_image *image, int transform)
{
	if (!image || !image->y_invert)
		return transform;
	/* The buffer is the content drawn with transform (a horizontal
	 * flip f, then r quarter turns), then flipped vertically. A vertical
	 * flip is a horizontal one then a half turn, and a flip turns
	 * rotations around: together, 2 - r quarter turns after the
	 * opposite flip. */
	int r = transform & 3, f = transform & 4;
	return (4 - f) % 8 + (2 - r + 4) % 4;
}

static void buffer_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static const struct wl_buffer_interface buffer_impl = {
	.destroy = buffer_handle_destroy,
};

static void buffer_resource_destroy(struct wl_resource *resource)
{
	comp_dmabuf_image_unref(wl_resource_get_user_data(resource));
}

struct comp_dmabuf_image *comp_dmabuf_buffer_get(struct wl_resource *buffer)
{
	if (!buffer || !wl_resource_instance_of(buffer, &wl_buffer_interface, &buffer_impl))
		return NULL;
	return wl_resource_get_user_data(buffer);
}

/* ------------------------------------------------------------- params */

struct plane {
	int fd; /* -1: not added */
	uint32_t offset, stride;
	uint64_t modifier;
};

struct params {
	struct comp_server *server;
	bool used; /* create or create_immed was sent */
	struct plane planes[MAX_PLANES];
};

static void params_close_fds(struct params *p)
{
	for (int i = 0; i < MAX_PLANES; i++) {
		if (p->planes[i].fd >= 0)
			close(p->planes[i].fd);
		p->planes[i].fd = -1;
	}
}

static void params_resource_destroy(struct wl_resource *resource)
{
	struct params *p = wl_resource_get_user_data(resource);
	params_close_fds(p);
	free(p);
}

static void params_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void params_handle_add(struct wl_client *client, struct wl_resource *resource,
                              int32_t fd, uint32_t plane_idx, uint32_t offset,
                              uint32_t stride, uint32_t modifier_hi, uint32_t modifier_lo)
{
	struct params *p = wl_resource_get_user_data(resource);
	uint32_t id = wl_resource_get_id(resource);
	if (p->used) {
		close(fd);
		wl_resource_post_error(resource, ZWP_LINUX_BUFFER_PARAMS_V1_ERROR_ALREADY_USED,
		                       "zwp_linux_buffer_params_v1@%u: add after create", id);
		return;
	}
	if (plane_idx >= MAX_PLANES) {
		close(fd);
		wl_resource_post_error(resource, ZWP_LINUX_BUFFER_PARAMS_V1_ERROR_PLANE_IDX,
		                       "zwp_linux_buffer_params_v1@%u: plane %u, at most %d planes",
		                       id, plane_idx, MAX_PLANES);
		return;
	}
	if (p->planes[plane_idx].fd >= 0) {
		close(fd);
		wl_resource_post_error(resource, ZWP_LINUX_BUFFER_PARAMS_V1_ERROR_PLANE_SET,
		                       "zwp_linux_buffer_params_v1@%u: plane %u is already set",
		                       id, plane_idx);
		return;
	}
	p->planes[plane_idx] = (struct plane){
		.fd = fd, .offset = offset, .stride = stride,
		.modifier = (uint64_t)modifier_hi << 32 | modifier_lo,
	};
}

/* The spec's argument errors, posted on resource; false after one. *n_planes
 * gets the number of planes added (all before the first gap). */
static bool params_check(struct params *p, struct wl_resource *resource, int32_t width,
                         int32_t height, uint32_t format, int *n_planes)
{
	uint32_t id = wl_resource_get_id(resource);
	if (p->used) {
		wl_resource_post_error(resource, ZWP_LINUX_BUFFER_PARAMS_V1_ERROR_ALREADY_USED,
		                       "zwp_linux_buffer_params_v1@%u: create was already sent", id);
		return false;
	}
	p->used = true;
	int n = 0;
	while (n < MAX_PLANES && p->planes[n].fd >= 0)
		n++;
	for (int i = n; i < MAX_PLANES; i++) {
		if (p->planes[i].fd >= 0 || n == 0) {
			wl_resource_post_error(resource, ZWP_LINUX_BUFFER_PARAMS_V1_ERROR_INCOMPLETE,
			                       "zwp_linux_buffer_params_v1@%u: plane %d is missing",
			                       id, n);
			return false;
		}
	}
	if (!find_format(p->server->dmabuf, format)) {
		wl_resource_post_error(resource, ZWP_LINUX_BUFFER_PARAMS_V1_ERROR_INVALID_FORMAT,
		                       "zwp_linux_buffer_params_v1@%u: format 0x%08x is not one "
		                       "zwp_linux_dmabuf_v1 offered", id, format);
		return false;
	}
	if (width <= 0 || height <= 0) {
		wl_resource_post_error(resource,
		                       ZWP_LINUX_BUFFER_PARAMS_V1_ERROR_INVALID_DIMENSIONS,
		                       "zwp_linux_buffer_params_v1@%u: size %dx%d", id, width, height);
		return false;
	}
	for (int i = 0; i < n; i++) {
		const struct plane *pl = &p->planes[i];
		/* In 64 bits the sum cannot overflow (32-bit factors). */
		uint64_t end = (uint64_t)pl->offset + (uint64_t)pl->stride * (uint64_t)height;
		if (end > UINT32_MAX) {
			wl_resource_post_error(resource, ZWP_LINUX_BUFFER_PARAMS_V1_ERROR_OUT_OF_BOUNDS,
			                       "zwp_linux_buffer_params_v1@%u: plane %d: offset %u + "
			                       "stride %u * height %d overflows", id, i, pl->offset,
			                       pl->stride, height);
			return false;
		}
		/* A dmabuf's size is what seeking to its end says; where the
		 * exporter does not tell (-1), EGL checks. */
		off_t size = lseek(pl->fd, 0, SEEK_END);
		if (size >= 0 && (pl->offset >= (uint64_t)size || end > (uint64_t)size)) {
			wl_resource_post_error(resource, ZWP_LINUX_BUFFER_PARAMS_V1_ERROR_OUT_OF_BOUNDS,
			                       "zwp_linux_buffer_params_v1@%u: plane %d: offset %u + "
			                       "stride %u * height %d is past the dmabuf's %lld bytes",
			                       id, i, pl->offset, pl->stride, height, (long long)size);
			return false;
		}
	}
	/* From version 4 only advertised pairs may be used (the spec names
	 * add, but the format is only known here). */
	if (wl_resource_get_version(resource) >= 4 && !format_has_modifier(p->server->dmabuf, format,
	                                                                    p->planes[0].modifier)) {
		wl_resource_post_error(resource, ZWP_LINUX_BUFFER_PARAMS_V1_ERROR_INVALID_FORMAT,
		                       "zwp_linux_buffer_params_v1@%u: format 0x%08x with modifier "
		                       "0x%llx was not advertised", id, format,
		                       (unsigned long long)p->planes[0].modifier);
		return false;
	}
	*n_planes = n;
	return true;
}

static const char *fourcc_name(uint32_t f, char buf[5])
{
	for (int i = 0; i < 4; i++)
		buf[i] = (char)(f >> (8 * i));
	buf[4] = '\0';
	return buf;
}

/* NULL, logged, when the buffer cannot be imported (not an argument
 * error: the spec's 'failed' case). */
static struct comp_dmabuf_image *params_import(struct params *p, int n_planes, int32_t width,
                                               int32_t height, uint32_t format, uint32_t flags)
{
	const struct dmabuf_format *f = find_format(p->server->dmabuf, format);
	char name[5];
	if (flags & ~(uint32_t)ZWP_LINUX_BUFFER_PARAMS_V1_FLAGS_Y_INVERT) {
		comp_log("linux-dmabuf: not imported: flags 0x%x (interlaced content is not "
		         "supported)", flags);
		return NULL;
	}
	if (n_planes != 1) {
		comp_log("linux-dmabuf: not imported: %d planes, the renderer takes one for %s",
		         n_planes, fourcc_name(format, name));
		return NULL;
	}
	struct render_dmabuf buf = {
		.fd = p->planes[0].fd, .width = width, .height = height, .format = f->format,
		.offset = p->planes[0].offset, .stride = p->planes[0].stride,
		.modifier = p->planes[0].modifier,
	};
	struct render_texture *tex = render_texture_import_dmabuf(p->server->renderer, &buf);
	if (!tex) {
		comp_log("linux-dmabuf: not imported: %dx%d %s modifier 0x%llx: EGL refused it",
		         width, height, fourcc_name(format, name),
		         (unsigned long long)buf.modifier);
		return NULL;
	}
	struct comp_dmabuf_image *image = calloc(1, sizeof(*image));
	if (!image) {
		render_texture_destroy(tex);
		return NULL;
	}
	image->refs = 1;
	image->texture = tex;
	image->width = width;
	image->height = height;
	image->format = f->format;
	image->y_invert = flags & ZWP_LINUX_BUFFER_PARAMS_V1_FLAGS_Y_INVERT;
	comp_log("linux-dmabuf: imported %dx%d %s stride %u offset %u modifier 0x%llx%s as an "
	         "EGLImage texture (zero-copy)", width, height, fourcc_name(format, name),
	         buf.stride, buf.offset, (unsigned long long)buf.modifier,
	         image->y_invert ? " y-inverted" : "");
	return image;
}

/* id 0: create (new object, 'created'); else create_immed's id. */
static void params_create_common(struct wl_client *client, struct wl_resource *resource,
                                 uint32_t buffer_id, int32_t width, int32_t height,
                                 uint32_t format, uint32_t flags)
{
	struct params *p = wl_resource_get_user_data(resource);
	int n_planes;
	if (!params_check(p, resource, width, height, format, &n_planes))
		return;
	struct comp_dmabuf_image *image = params_import(p, n_planes, width, height, format, flags);
	/* The texture holds the dmabuf now (or nothing does). */
	params_close_fds(p);
	if (!image) {
		if (buffer_id)
			wl_resource_post_error(resource,
			                       ZWP_LINUX_BUFFER_PARAMS_V1_ERROR_INVALID_WL_BUFFER,
			                       "zwp_linux_buffer_params_v1@%u: the dmabuf could not "
			                       "be imported", wl_resource_get_id(resource));
		else
			zwp_linux_buffer_params_v1_send_failed(resource);
		return;
	}
	struct wl_resource *buffer = comp_resource_create(client, &wl_buffer_interface, 1, buffer_id,
	                                                  &buffer_impl, image, buffer_resource_destroy);
	if (!buffer) {
		comp_dmabuf_image_unref(image);
		return;
	}
	if (!buffer_id)
		zwp_linux_buffer_params_v1_send_created(resource, buffer);
}

static void params_handle_create(struct wl_client *client, struct wl_resource *resource,
                                 int32_t width, int32_t height, uint32_t format, uint32_t flags)
{
	params_create_common(client, resource, 0, width, height, format, flags);
}

static void params_handle_create_immed(struct wl_client *client, struct wl_resource *resource,
                                       uint32_t buffer_id, int32_t width, int32_t height,
                                       uint32_t format, uint32_t flags)
{
	params_create_common(client, resource, buffer_id, width, height, format, flags);
}

static const struct zwp_linux_buffer_params_v1_interface params_impl = {
	.destroy = params_handle_destroy,
	.add = params_handle_add,
	.create = params_handle_create,
	.create_immed = params_handle_create_immed,
};

/* ------------------------------------------------------------- global */

static void dmabuf_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void dmabuf_handle_create_params(struct wl_client *client, struct wl_resource *resource,
                                        uint32_t id)
{
	struct params *p = calloc(1, sizeof(*p));
	struct wl_resource *r = p ? wl_resource_create(client,
	                                               &zwp_linux_buffer_params_v1_interface,
	                                               wl_resource_get_version(resource), id)
	                          : NULL;
	if (!r) {
		free(p);
		wl_client_post_no_memory(client);
		return;
	}
	p->server = wl_resource_get_user_data(resource);
	for (int i = 0; i < MAX_PLANES; i++)
		p->planes[i].fd = -1;
	wl_resource_set_implementation(r, &params_impl, p, params_resource_destroy);
}

static void feedback_handle_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static const struct zwp_linux_dmabuf_feedback_v1_interface feedback_impl = {
	.destroy = feedback_handle_destroy,
};

/* The parameters never change: sent once, when the object is made. */
static void send_feedback(struct wl_client *client, struct wl_resource *resource, uint32_t id)
{
	const struct comp_server *server = wl_resource_get_user_data(resource);
	const struct dmabuf_table *table = &server->dmabuf->table;
	struct wl_resource *fb = comp_resource_create(client,
	                                              &zwp_linux_dmabuf_feedback_v1_interface,
	                                              wl_resource_get_version(resource), id,
	                                              &feedback_impl, NULL, NULL);
	if (!fb)
		return;
	struct wl_array device, indices;
	wl_array_init(&device);
	wl_array_init(&indices);
	dev_t *dev = wl_array_add(&device, sizeof(dev_t));
	uint16_t *idx = wl_array_add(&indices, table->entries * sizeof(uint16_t));
	if (!dev || !idx) {
		wl_array_release(&device);
		wl_array_release(&indices);
		wl_client_post_no_memory(client);
		return;
	}
	*dev = table->device;
	for (uint16_t i = 0; i < table->entries; i++)
		idx[i] = i;
	zwp_linux_dmabuf_feedback_v1_send_format_table(fb, table->fd, table->size);
	zwp_linux_dmabuf_feedback_v1_send_main_device(fb, &device);
	zwp_linux_dmabuf_feedback_v1_send_tranche_target_device(fb, &device);
	zwp_linux_dmabuf_feedback_v1_send_tranche_flags(fb, 0);
	zwp_linux_dmabuf_feedback_v1_send_tranche_formats(fb, &indices);
	zwp_linux_dmabuf_feedback_v1_send_tranche_done(fb);
	zwp_linux_dmabuf_feedback_v1_send_done(fb);
	wl_array_release(&device);
	wl_array_release(&indices);
}

static void dmabuf_handle_get_default_feedback(struct wl_client *client,
                                               struct wl_resource *resource, uint32_t id)
{
	send_feedback(client, resource, id);
}

static void dmabuf_handle_get_surface_feedback(struct wl_client *client,
                                               struct wl_resource *resource, uint32_t id,
                                               struct wl_resource *surface)
{
	send_feedback(client, resource, id);
}

static const struct zwp_linux_dmabuf_v1_interface dmabuf_impl = {
	.destroy = dmabuf_handle_destroy,
	.create_params = dmabuf_handle_create_params,
	.get_default_feedback = dmabuf_handle_get_default_feedback,
	.get_surface_feedback = dmabuf_handle_get_surface_feedback,
};

static void send_modifier(struct wl_resource *resource, uint32_t fourcc, uint64_t modifier)
{
	zwp_linux_dmabuf_v1_send_modifier(resource, fourcc, (uint32_t)(modifier >> 32),
	                                  (uint32_t)(modifier & 0xffffffffu));
}

static void dmabuf_bind(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	struct wl_resource *resource = comp_resource_create(client, &zwp_linux_dmabuf_v1_interface,
	                                                    (int)version, id, &dmabuf_impl, data,
	                                                    NULL);
	if (!resource)
		return;
	/* Version 4 clients get the formats from the feedback only. */
	if (version >= ZWP_LINUX_DMABUF_V1_GET_DEFAULT_FEEDBACK_SINCE_VERSION)
		return;
	const struct comp_server *server = data;
	for (size_t i = 0; i < N_FORMATS; i++) {
		const struct dmabuf_format *f = &server->dmabuf->formats[i];
		if (!f->supported)
			continue;
		/* Version 3 lists layouts with 'modifier' ('format' is
		 * deprecated there); the implicit layout is always one. */
		if (version < ZWP_LINUX_DMABUF_V1_MODIFIER_SINCE_VERSION) {
			zwp_linux_dmabuf_v1_send_format(resource, f->fourcc);
			continue;
		}
		for (int m = 0; m < f->n_modifiers; m++)
			send_modifier(resource, f->fourcc, f->modifiers[m]);
		send_modifier(resource, f->fourcc, DRM_FORMAT_MOD_INVALID);
	}
}

/* The format table of every supported format and layout; false (logged)
 * if it cannot be made, and then version 3 is offered. */
static bool make_table(struct comp_dmabuf *dm)
{
	struct table_entry entries[N_FORMATS * (MAX_MODIFIERS + 1)];
	size_t n = 0;
	for (size_t i = 0; i < N_FORMATS; i++) {
		const struct dmabuf_format *f = &dm->formats[i];
		if (!f->supported)
			continue;
		for (int m = 0; m <= f->n_modifiers; m++)
			entries[n++] = (struct table_entry){
				.format = f->fourcc,
				.modifier = m < f->n_modifiers ? f->modifiers[m] : DRM_FORMAT_MOD_INVALID,
			};
	}
	size_t size = n * sizeof(entries[0]);
	int fd = memfd_create("duet-dmabuf-formats", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || write(fd, entries, size) != (ssize_t)size ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
		comp_log("linux-dmabuf: cannot make the format table: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	dm->table.fd = fd;
	dm->table.size = (uint32_t)size;
	dm->table.entries = (uint16_t)n;
	return true;
}

void comp_linux_dmabuf_create(struct comp_server *server)
{
	const char *why = NULL;
	if (!render_dmabuf_import_supported(server->renderer, &why)) {
		comp_log("linux-dmabuf: not offered: the renderer cannot import dmabufs (no %s)",
		         why);
		return;
	}
	struct comp_dmabuf *dm = calloc(1, sizeof(*dm));
	if (!dm) {
		comp_log("linux-dmabuf: not offered: out of memory");
		return;
	}
	dm->table.fd = -1;
	server->dmabuf = dm;
	int offered = 0;
	char list[256] = "";
	for (size_t i = 0; i < N_FORMATS; i++) {
		struct dmabuf_format *f = &dm->formats[i];
		*f = offered_formats[i];
		f->n_modifiers = render_dmabuf_query_modifiers(server->renderer, f->format,
		                                               f->modifiers, MAX_MODIFIERS);
		f->supported = f->n_modifiers >= 0;
		if (!f->supported) {
			f->n_modifiers = 0;
			continue;
		}
		char name[5];
		size_t len = strlen(list);
		snprintf(list + len, sizeof(list) - len, "%s%s (%d modifiers + implicit)",
		         offered ? ", " : "", fourcc_name(f->fourcc, name), f->n_modifiers);
		offered++;
	}
	if (!offered) {
		comp_log("linux-dmabuf: not offered: EGL imports neither XR24 nor AR24");
		return;
	}
	/* Version 4 needs the device the buffers are for. */
	int version = 3;
	char device[64] = "no feedback: the renderer's DRM device is not known";
	if (server->has_render_device && make_table(dm)) {
		dm->table.device = server->render_device;
		version = LINUX_DMABUF_VERSION;
		snprintf(device, sizeof(device), "feedback: main device %u:%u, %u table entries",
		         major(dm->table.device), minor(dm->table.device), dm->table.entries);
	}
	if (!comp_global_create(server, &zwp_linux_dmabuf_v1_interface, version, server,
	                        dmabuf_bind))
		return;
	comp_log("linux-dmabuf: offered (version %d): %s; %s", version, list, device);
}

void comp_linux_dmabuf_finish(struct comp_server *server)
{
	struct comp_dmabuf *dm = server->dmabuf;
	if (!dm)
		return;
	if (dm->table.fd >= 0)
		close(dm->table.fd);
	free(dm);
	server->dmabuf = NULL;
}
