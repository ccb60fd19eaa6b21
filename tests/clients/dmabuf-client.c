/* duet-dmabuf-client: plays one zwp_linux_dmabuf_v1 scenario and prints its
 * outcome (tests/kms/test_dmabuf.py checks it).
 *
 * usage: duet-dmabuf-client MODE
 *   globals             "dmabuf absent", or "dmabuf version N" and one
 *                       "modifier FOURCC 0xMOD" line per advertised layout
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
	struct zwp_linux_dmabuf_v1 *dmabuf;
	uint32_t version;
	enum { PENDING, CREATED, FAILED } result;
};

static void global(void *data, struct wl_registry *registry, uint32_t name,
                   const char *interface, uint32_t version)
{
	struct client *c = data;
	if (strcmp(interface, zwp_linux_dmabuf_v1_interface.name) == 0) {
		c->version = version < 3 ? version : 3;
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

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s MODE\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *mode = argv[1];
	struct client c = { 0 };
	c.display = wl_display_connect(NULL);
	if (!c.display) {
		fprintf(stderr, "cannot connect to the compositor\n");
		return 2;
	}
	struct wl_registry *registry = wl_display_get_registry(c.display);
	wl_registry_add_listener(registry, &registry_listener, &c);
	if (wl_display_roundtrip(c.display) < 0)
		return 2;
	if (strcmp(mode, "globals") == 0) {
		if (!c.dmabuf) {
			printf("dmabuf absent\n");
			return 0;
		}
		printf("dmabuf version %u\n", c.version);
		zwp_linux_dmabuf_v1_add_listener(c.dmabuf, &dmabuf_listener, &c);
		return wl_display_roundtrip(c.display) < 0 ? 2 : 0;
	}
	if (!c.dmabuf) {
		fprintf(stderr, "no zwp_linux_dmabuf_v1 global\n");
		return 2;
	}

	const size_t size = (size_t)W * H * 4;
	struct zwp_linux_buffer_params_v1 *p = zwp_linux_dmabuf_v1_create_params(c.dmabuf);
	zwp_linux_buffer_params_v1_add_listener(p, &params_listener, &c);
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
		struct wl_buffer *b = zwp_linux_buffer_params_v1_create_immed(p, W, H, XR24, 0);
		(void)b;
	} else if (strcmp(mode, "failed") == 0) {
		add(p, 0, size);
		zwp_linux_buffer_params_v1_create(p, W, H, XR24, 0);
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	return outcome(&c);
}
