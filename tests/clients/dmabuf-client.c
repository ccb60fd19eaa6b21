/* duet-dmabuf-client: plays one zwp_linux_dmabuf_v1 scenario and prints its
 * outcome (tests/kms/test_dmabuf.py checks it).
 *
 * usage: duet-dmabuf-client MODE
 *   globals             "dmabuf absent", or "dmabuf version N" (as
 *                       advertised) and, bound as version 3, one
 *                       "modifier FOURCC 0xMOD" line per advertised layout
 *   feedback            bound as version 4: the default feedback, as
 *                       "main_device MAJ:MIN", "target_device MAJ:MIN",
 *                       "flags N", one "entry FOURCC 0xMOD" line per
 *                       table entry of the tranche, then "done"
 *   unadvertised        bound as version 4: a modifier that was not
 *                       advertised (invalid_format)
 *   already_used, plane_idx, plane_set, incomplete, invalid_format,
 *   invalid_dimensions, out_of_bounds, invalid_wl_buffer, failed
 *                       the scenario that should end in that protocol
 *                       error (or, for failed, the 'failed' event)
 * Outcome lines: "error INTERFACE CODE", "failed", "created", "no error".
 * The dmabufs here are memfds: the compositor's checks come before any
 * import, and an import of one fails as a buffer the driver refuses
 * would (the 'failed' and invalid_wl_buffer cases). Exit status 0 when an
 * outcome was printed, 2 on a usage or setup error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include <wayland-client.h>

#include "linux-dmabuf-unstable-v1-client-protocol.h"

#define FOURCC(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | \
                            (uint32_t)(d) << 24)
#define XR24 FOURCC('X', 'R', '2', '4')
#define W 64
#define H 64

struct client {
	struct wl_display *display;
	struct wl_registry *registry;
	struct zwp_linux_dmabuf_v1 *dmabuf;
	/* What a mode made; client_close frees it all. */
	struct zwp_linux_dmabuf_feedback_v1 *feedback;
	struct zwp_linux_buffer_params_v1 *params;
	struct wl_buffer *immed;
	uint32_t version, advertised, bind_version;
	const uint8_t *table;
	uint32_t table_size;
	enum { PENDING, CREATED, FAILED } result;
};

static void global(void *data, struct wl_registry *registry, uint32_t name,
                   const char *interface, uint32_t version)
{
	struct client *c = data;
	if (strcmp(interface, zwp_linux_dmabuf_v1_interface.name) == 0) {
		c->advertised = version;
		c->version = version < c->bind_version ? version : c->bind_version;
		c->dmabuf = wl_registry_bind(registry, name, &zwp_linux_dmabuf_v1_interface,
		                             c->version);
	}
}

static void global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = { global, global_remove };

static void dmabuf_format(void *data, struct zwp_linux_dmabuf_v1 *d, uint32_t format)
{
	printf("format %.4s\n", (const char *)&format);
}

static void dmabuf_modifier(void *data, struct zwp_linux_dmabuf_v1 *d, uint32_t format,
                            uint32_t hi, uint32_t lo)
{
	printf("modifier %.4s 0x%016llx\n", (const char *)&format,
	       (unsigned long long)hi << 32 | lo);
}

static const struct zwp_linux_dmabuf_v1_listener dmabuf_listener = {
	dmabuf_format, dmabuf_modifier,
};

static void print_dev(const char *what, struct wl_array *a)
{
	dev_t dev;
	if (a->size != sizeof(dev)) {
		printf("%s size %zu\n", what, a->size);
		return;
	}
	memcpy(&dev, a->data, sizeof(dev));
	printf("%s %u:%u\n", what, major(dev), minor(dev));
}

static void fb_done(void *data, struct zwp_linux_dmabuf_feedback_v1 *fb)
{
	printf("done\n");
}

static void fb_format_table(void *data, struct zwp_linux_dmabuf_feedback_v1 *fb, int32_t fd,
                            uint32_t size)
{
	struct client *c = data;
	void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		printf("table unmappable\n");
		return;
	}
	c->table = map;
	c->table_size = size;
	printf("table %u bytes\n", size);
}

static void fb_main_device(void *data, struct zwp_linux_dmabuf_feedback_v1 *fb,
                           struct wl_array *dev)
{
	print_dev("main_device", dev);
}

static void fb_tranche_done(void *data, struct zwp_linux_dmabuf_feedback_v1 *fb)
{
	printf("tranche_done\n");
}

static void fb_target_device(void *data, struct zwp_linux_dmabuf_feedback_v1 *fb,
                             struct wl_array *dev)
{
	print_dev("target_device", dev);
}

static void fb_formats(void *data, struct zwp_linux_dmabuf_feedback_v1 *fb,
                       struct wl_array *indices)
{
	struct client *c = data;
	const uint16_t *idx;
	wl_array_for_each(idx, indices) {
		if (!c->table || (uint32_t)(*idx + 1) * 16 > c->table_size) {
			printf("entry %u outside the table\n", *idx);
			continue;
		}
		uint32_t format;
		uint64_t modifier;
		memcpy(&format, c->table + *idx * 16, 4);
		memcpy(&modifier, c->table + *idx * 16 + 8, 8);
		printf("entry %.4s 0x%016llx\n", (const char *)&format,
		       (unsigned long long)modifier);
	}
}

static void fb_flags(void *data, struct zwp_linux_dmabuf_feedback_v1 *fb, uint32_t flags)
{
	printf("flags %u\n", flags);
}

static const struct zwp_linux_dmabuf_feedback_v1_listener feedback_listener = {
	fb_done, fb_format_table, fb_main_device, fb_tranche_done, fb_target_device, fb_formats,
	fb_flags,
};

static void params_created(void *data, struct zwp_linux_buffer_params_v1 *p,
                           struct wl_buffer *buffer)
{
	((struct client *)data)->result = CREATED;
	wl_buffer_destroy(buffer);
}

static void params_failed(void *data, struct zwp_linux_buffer_params_v1 *p)
{
	((struct client *)data)->result = FAILED;
}

static const struct zwp_linux_buffer_params_v1_listener params_listener = {
	params_created, params_failed,
};

static int memfd(size_t size)
{
	int fd = memfd_create("duet-dmabuf-client", MFD_CLOEXEC);
	if (fd >= 0 && ftruncate(fd, (off_t)size) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Adds a W x H XRGB plane (stride W * 4) over a memfd of size bytes. */
static void add(struct zwp_linux_buffer_params_v1 *p, uint32_t plane, size_t size)
{
	int fd = memfd(size);
	if (fd < 0) {
		perror("memfd");
		exit(2);
	}
	zwp_linux_buffer_params_v1_add(p, fd, plane, 0, W * 4, 0x00ffffff, 0xffffffff);
	close(fd);
}

static int outcome(struct client *c)
{
	/* Two round trips: the params' events, then anything they caused. */
	if (wl_display_roundtrip(c->display) >= 0)
		wl_display_roundtrip(c->display);
	int err = wl_display_get_error(c->display);
	if (err) {
		const struct wl_interface *iface = NULL;
		uint32_t id;
		uint32_t code = wl_display_get_protocol_error(c->display, &iface, &id);
		if (iface)
			printf("error %s %u\n", iface->name, code);
		else
			printf("error errno %d\n", err);
	} else if (c->result == CREATED) {
		printf("created\n");
	} else if (c->result == FAILED) {
		printf("failed\n");
	} else {
		printf("no error\n");
	}
	return 0;
}

/* Plays mode on the connected client c; returns the exit status. */
static int run(struct client *c, const char *mode)
{
	c->registry = wl_display_get_registry(c->display);
	wl_registry_add_listener(c->registry, &registry_listener, c);
	if (wl_display_roundtrip(c->display) < 0)
		return 2;
	if (strcmp(mode, "globals") == 0) {
		if (!c->dmabuf) {
			printf("dmabuf absent\n");
			return 0;
		}
		printf("dmabuf version %u\n", c->advertised);
		zwp_linux_dmabuf_v1_add_listener(c->dmabuf, &dmabuf_listener, c);
		return wl_display_roundtrip(c->display) < 0 ? 2 : 0;
	}
	if (!c->dmabuf) {
		fprintf(stderr, "no zwp_linux_dmabuf_v1 global\n");
		return 2;
	}

	if (strcmp(mode, "feedback") == 0) {
		if (c->version < 4) {
			printf("version %u: no feedback\n", c->version);
			return 0;
		}
		c->feedback = zwp_linux_dmabuf_v1_get_default_feedback(c->dmabuf);
		zwp_linux_dmabuf_feedback_v1_add_listener(c->feedback, &feedback_listener, c);
		return wl_display_roundtrip(c->display) < 0 ? 2 : 0;
	}

	const size_t size = (size_t)W * H * 4;
	struct zwp_linux_buffer_params_v1 *p = zwp_linux_dmabuf_v1_create_params(c->dmabuf);
	c->params = p;
	zwp_linux_buffer_params_v1_add_listener(p, &params_listener, c);
	if (strcmp(mode, "already_used") == 0) {
		add(p, 0, size);
		zwp_linux_buffer_params_v1_create(p, W, H, XR24, 0);
		add(p, 1, size);
	} else if (strcmp(mode, "plane_idx") == 0) {
		add(p, 4, size);
	} else if (strcmp(mode, "plane_set") == 0) {
		add(p, 0, size);
		add(p, 0, size);
	} else if (strcmp(mode, "incomplete") == 0) {
		add(p, 1, size); /* no plane 0 */
		zwp_linux_buffer_params_v1_create(p, W, H, XR24, 0);
	} else if (strcmp(mode, "invalid_format") == 0) {
		add(p, 0, size);
		zwp_linux_buffer_params_v1_create(p, W, H, FOURCC('Y', 'U', 'Y', 'V'), 0);
	} else if (strcmp(mode, "invalid_dimensions") == 0) {
		add(p, 0, size);
		zwp_linux_buffer_params_v1_create(p, 0, H, XR24, 0);
	} else if (strcmp(mode, "out_of_bounds") == 0) {
		add(p, 0, size - 4); /* one pixel short */
		zwp_linux_buffer_params_v1_create(p, W, H, XR24, 0);
	} else if (strcmp(mode, "invalid_wl_buffer") == 0) {
		add(p, 0, size);
		c->immed = zwp_linux_buffer_params_v1_create_immed(p, W, H, XR24, 0);
	} else if (strcmp(mode, "unadvertised") == 0) {
		int fd = memfd(size);
		zwp_linux_buffer_params_v1_add(p, fd, 0, 0, W * 4, 0x12345678, 0x9abcdef0);
		close(fd);
		zwp_linux_buffer_params_v1_create(p, W, H, XR24, 0);
	} else if (strcmp(mode, "failed") == 0) {
		add(p, 0, size);
		zwp_linux_buffer_params_v1_create(p, W, H, XR24, 0);
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	return outcome(c);
}

/* Frees what the client made (the requests' destructors free the proxies
 * even on a connection that has failed) and disconnects. */
static void client_close(struct client *c)
{
	if (c->immed)
		wl_buffer_destroy(c->immed);
	if (c->params)
		zwp_linux_buffer_params_v1_destroy(c->params);
	if (c->feedback)
		zwp_linux_dmabuf_feedback_v1_destroy(c->feedback);
	if (c->dmabuf)
		zwp_linux_dmabuf_v1_destroy(c->dmabuf);
	if (c->registry)
		wl_registry_destroy(c->registry);
	if (c->table)
		munmap((void *)c->table, c->table_size);
	wl_display_disconnect(c->display);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s MODE\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *mode = argv[1];
	struct client c = { 0 };
	c.bind_version = strcmp(mode, "feedback") == 0 || strcmp(mode, "unadvertised") == 0 ? 4 : 3;
	c.display = wl_display_connect(NULL);
	if (!c.display) {
		fprintf(stderr, "cannot connect to the compositor\n");
		return 2;
	}
	int status = run(&c, mode);
	client_close(&c);
	return status;
}
