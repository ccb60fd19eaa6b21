/* The DRM/KMS backend: duet-compositor on a real display.
 *
 * Outputs: every connected connector of the card (in the card's order,
 * placed left to right), each with its preferred mode (or --mode), a CRTC
 * of its own that its encoders can drive and that CRTC's primary plane; a
 * connector without a usable mode or a free CRTC is left out (logged). Frames are drawn by render/ into a GBM surface (drm-gbm.c);
 * each frame's buffer becomes a framebuffer and is page-flipped with an
 * atomic commit (the first one sets the mode), or with the legacy
 * drmModeSetCrtc / drmModePageFlip where the driver has no atomic
 * modesetting (DUET_DRM_LEGACY=1 forces that path, for tests). The flip's
 * event, read from the DRM fd by the event loop, completes the frame
 * (comp_output_finish_frame): its kernel timestamp is the presentation
 * time and, where the device counts vblanks, its sequence is the frame's
 * seq; render/'s frame scheduler then follows the display's vblanks.
 *
 * Which device: --drm-device, else the first usable card under
 * /dev/dri/by-path (stable across boots, unlike card numbers), else
 * /dev/dri/card*. Usable means: it opens, it is a KMS device, we are or can
 * become its DRM master, and a connector is connected. Who opens it is the
 * session's business (drm-session.c: libseat, or directly as root). Every
 * refusal says why.
 *
 * A display may go away and come back (docs/board.md): a connector
 * unplugged (a hotplug uevent, drm-uevent.c, and each output's connector
 * probed again) turns that output off, CRTC and plane included, and
 * removes its wl_output global, the other outputs going on; plugged in
 * again with a mode of the same size, it is set again. A connector
 * plugged in that was no output yet becomes a new one, right of the
 * others (a CRTC no output holds, its primary plane), with its global. A paused session (VT switch away) stops page flips and gives
 * DRM master back; resumed, the mode is set again in full. Meanwhile the
 * compositor runs on, clients connected, with no output (comp_output_disable).
 *
 * Input devices come through libinput (input-libinput.c), opened by the
 * same session; a paused session closes them and a resumed one reopens
 * them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <drm_fourcc.h>
#include <gbm.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "comp.h"
#include "drm-gbm.h"
#include "drm-session.h"
#include "drm-uevent.h"
#ifdef DUET_HAVE_LIBINPUT
#include "input-libinput.h"
#endif
#include "presentation-time-server-protocol.h"

#define MAX_CANDIDATES 16

struct drm_fb {
	int fd;
	uint32_t id;
};

struct drm_backend;

/* One connector, its CRTC and primary plane, and the frames on them: one
 * comp_output. */
struct drm_output {
	struct drm_backend *drm;
	struct comp_output *output; /* NULL until created, and after */
	uint32_t connector_id, crtc_id, plane_id;
	char connector_name[32];
	drmModeModeInfo mode;
	uint32_t mode_blob;
	bool modeset_done;
	bool connected;      /* the connector, as last probed */
	struct wl_event_source *replug_poll; /* while unplugged: is it back? */
	bool mode_refused;   /* back without a mode of the output's size: logged */
	bool off_after_flip; /* unplugged with a flip pending: CRTC off when it ends */
	int has_vblank;      /* -1 not known yet, 0 no vblank counter, 1 counts */
	struct {
		uint32_t conn_crtc_id, crtc_mode_id, crtc_active;
		uint32_t fb_id, crtc_id, src_x, src_y, src_w, src_h, crtc_x, crtc_y, crtc_w,
			crtc_h;
	} prop;

	struct gbm_surface *gbm_surface; /* the render target's native window */
	struct gbm_bo *current; /* on screen */
	struct gbm_bo *pending; /* flip queued */
	struct wl_event_source *idle_done; /* a frame completed without an event */
	uint64_t msc_hi;
	uint32_t last_sequence;
	bool seen_sequence;
	int last_commit_errno;  /* logged once per kind of failure */
	int screenshot_path;    /* last logged: 0 none, 1 gbm_bo_map, 2 dumb mapping */
};

struct drm_backend {
	struct comp_server *server;
	struct drm_session *session;
#ifdef DUET_HAVE_LIBINPUT
	struct comp_input *input; /* NULL: no input devices */
#endif
	struct drm_uevent *uevent;
	int fd;
	dev_t rdev;
	char path[PATH_MAX];
	char driver[64];
	struct gbm_device *gbm;

	bool atomic;
	bool monotonic;        /* event timestamps are CLOCK_MONOTONIC */
	bool addfb_modifiers;  /* DRM_CAP_ADDFB2_MODIFIERS */
	uint32_t format;
	struct wl_event_source *drm_source;

	/* Left to right, as comp_output.index. */
	struct drm_output outputs[COMP_MAX_OUTPUTS];
	int n_outputs;
};

static struct drm_output *output_of(struct comp_output *output)
{
	struct drm_backend *drm = output->server->backend_data;
	return &drm->outputs[output->index];
}

/* ------------------------------------------------------------ helpers */

static int mode_refresh_mhz(const drmModeModeInfo *m)
{
	uint64_t num = (uint64_t)m->clock * 1000000ull; /* clock is in kHz */
	uint64_t den = (uint64_t)m->htotal * m->vtotal;
	if (m->flags & DRM_MODE_FLAG_INTERLACE)
		num *= 2;
	if (m->flags & DRM_MODE_FLAG_DBLSCAN)
		den *= 2;
	if (m->vscan > 1)
		den *= m->vscan;
	if (den == 0)
		return (int)m->vrefresh * 1000;
	return (int)((num + den / 2) / den);
}

static uint32_t prop_id(int fd, uint32_t obj, uint32_t type, const char *name)
{
	drmModeObjectProperties *props = drmModeObjectGetProperties(fd, obj, type);
	uint32_t id = 0;
	if (!props)
		return 0;
	for (uint32_t i = 0; i < props->count_props && !id; i++) {
		drmModePropertyRes *p = drmModeGetProperty(fd, props->props[i]);
		if (p && strcmp(p->name, name) == 0)
			id = p->prop_id;
		drmModeFreeProperty(p);
	}
	drmModeFreeObjectProperties(props);
	return id;
}

static bool prop_value(int fd, uint32_t obj, uint32_t type, const char *name, uint64_t *value)
{
	drmModeObjectProperties *props = drmModeObjectGetProperties(fd, obj, type);
	bool found = false;
	if (!props)
		return false;
	for (uint32_t i = 0; i < props->count_props && !found; i++) {
		drmModePropertyRes *p = drmModeGetProperty(fd, props->props[i]);
		if (p && strcmp(p->name, name) == 0) {
			*value = props->prop_values[i];
			found = true;
		}
		drmModeFreeProperty(p);
	}
	drmModeFreeObjectProperties(props);
	return found;
}

/* ---------------------------------------------------- choosing an output */

static const drmModeModeInfo *pick_mode(const drmModeConnector *conn,
                                        const struct comp_options *opt, char *why,
                                        size_t why_len)
{
	const drmModeModeInfo *best = NULL;
	if (!opt->mode_width) {
		for (int i = 0; i < conn->count_modes; i++)
			if (conn->modes[i].type & DRM_MODE_TYPE_PREFERRED)
				return &conn->modes[i];
		return &conn->modes[0];
	}
	int best_diff = INT_MAX;
	for (int i = 0; i < conn->count_modes; i++) {
		const drmModeModeInfo *m = &conn->modes[i];
		if (m->hdisplay != opt->mode_width || m->vdisplay != opt->mode_height)
			continue;
		int diff = opt->mode_mhz ? abs(mode_refresh_mhz(m) - opt->mode_mhz) : 0;
		if (diff < best_diff) {
			best = m;
			best_diff = diff;
		}
	}
	/* A rate asked for must be met to within half a hertz. */
	if (best && best_diff <= 500)
		return best;
	int n = snprintf(why, why_len, "no mode %dx%d", opt->mode_width, opt->mode_height);
	if (opt->mode_mhz && n > 0 && (size_t)n < why_len)
		n += snprintf(why + n, why_len - (size_t)n, "@%.3f", opt->mode_mhz / 1000.0);
	for (int i = 0; i < conn->count_modes && i < 12 && n > 0 && (size_t)n < why_len; i++)
		n += snprintf(why + n, why_len - (size_t)n, "%s %dx%d@%.2f", i ? "," : " (has",
		              conn->modes[i].hdisplay, conn->modes[i].vdisplay,
		              mode_refresh_mhz(&conn->modes[i]) / 1000.0);
	if (n > 0 && (size_t)n < why_len)
		snprintf(why + n, why_len - (size_t)n, "%s)", conn->count_modes > 12 ? " ..." : "");
	return NULL;
}

/* A CRTC for the connector not among used (bits of CRTC indices). */
static uint32_t pick_crtc(int fd, const drmModeRes *res, const drmModeConnector *conn,
                          uint32_t used, int *crtc_index)
{
	/* The CRTC already driving the connector (fbcon's) first: taking it
	 * over needs no other CRTC switched off. */
	if (conn->encoder_id) {
		drmModeEncoder *enc = drmModeGetEncoder(fd, conn->encoder_id);
		uint32_t crtc = enc ? enc->crtc_id : 0;
		drmModeFreeEncoder(enc);
		for (int i = 0; crtc && i < res->count_crtcs; i++)
			if (res->crtcs[i] == crtc && !(used & (1u << i))) {
				*crtc_index = i;
				return crtc;
			}
	}
	for (int e = 0; e < conn->count_encoders; e++) {
		drmModeEncoder *enc = drmModeGetEncoder(fd, conn->encoders[e]);
		if (!enc)
			continue;
		for (int i = 0; i < res->count_crtcs; i++) {
			if ((enc->possible_crtcs & (1u << i)) && !(used & (1u << i))) {
				drmModeFreeEncoder(enc);
				*crtc_index = i;
				return res->crtcs[i];
			}
		}
		drmModeFreeEncoder(enc);
	}
	return 0;
}

/* The CRTC's primary plane, which must take format. */
static uint32_t pick_plane(int fd, int crtc_index, uint32_t format)
{
	drmModePlaneRes *planes = drmModeGetPlaneResources(fd);
	uint32_t found = 0;
	if (!planes)
		return 0;
	for (uint32_t i = 0; i < planes->count_planes && !found; i++) {
		drmModePlane *plane = drmModeGetPlane(fd, planes->planes[i]);
		uint64_t type = 0;
		if (plane && (plane->possible_crtcs & (1u << crtc_index)) &&
		    prop_value(fd, plane->plane_id, DRM_MODE_OBJECT_PLANE, "type", &type) &&
		    type == DRM_PLANE_TYPE_PRIMARY) {
			for (uint32_t f = 0; f < plane->count_formats; f++)
				if (plane->formats[f] == format)
					found = plane->plane_id;
		}
		drmModeFreePlane(plane);
	}
	drmModeFreePlaneResources(planes);
	return found;
}

static bool atomic_props(struct drm_backend *drm, struct drm_output *out)
{
	int fd = drm->fd;
	out->prop.conn_crtc_id = prop_id(fd, out->connector_id, DRM_MODE_OBJECT_CONNECTOR,
	                                 "CRTC_ID");
	out->prop.crtc_mode_id = prop_id(fd, out->crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID");
	out->prop.crtc_active = prop_id(fd, out->crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE");
	uint32_t p = out->plane_id, t = DRM_MODE_OBJECT_PLANE;
	out->prop.fb_id = prop_id(fd, p, t, "FB_ID");
	out->prop.crtc_id = prop_id(fd, p, t, "CRTC_ID");
	out->prop.src_x = prop_id(fd, p, t, "SRC_X");
	out->prop.src_y = prop_id(fd, p, t, "SRC_Y");
	out->prop.src_w = prop_id(fd, p, t, "SRC_W");
	out->prop.src_h = prop_id(fd, p, t, "SRC_H");
	out->prop.crtc_x = prop_id(fd, p, t, "CRTC_X");
	out->prop.crtc_y = prop_id(fd, p, t, "CRTC_Y");
	out->prop.crtc_w = prop_id(fd, p, t, "CRTC_W");
	out->prop.crtc_h = prop_id(fd, p, t, "CRTC_H");
	const uint32_t *ids = &out->prop.conn_crtc_id;
	for (size_t i = 0; i < sizeof(out->prop) / sizeof(uint32_t); i++)
		if (!ids[i])
			return false;
	return true;
}

/* The CRTCs the outputs hold (bits of CRTC indices in res). */
static uint32_t crtcs_in_use(const struct drm_backend *drm, const drmModeRes *res)
{
	uint32_t used = 0;
	for (int i = 0; i < drm->n_outputs; i++)
		for (int c = 0; c < res->count_crtcs; c++)
			if (res->crtcs[c] == drm->outputs[i].crtc_id)
				used |= 1u << c;
	return used;
}

/* Makes the connected connector conn the next output (not yet counted in
 * n_outputs): its mode, a CRTC not in *used and, atomic, that CRTC's
 * primary plane. false with why filled when it cannot be one. At start a
 * missing plane or property turns the whole card to legacy modesetting;
 * later (a connector plugged in) the other outputs already flip
 * atomically, so the newcomer is left out instead. */
static bool setup_output(struct drm_backend *drm, const drmModeRes *res,
                         const drmModeConnector *conn, uint32_t *used, bool at_start,
                         char *why, size_t why_len)
{
	const struct comp_options *opt = &drm->server->options;
	struct drm_output *out = &drm->outputs[drm->n_outputs];
	memset(out, 0, sizeof(*out));
	out->drm = drm;
	out->has_vblank = -1;
	const char *type = drmModeGetConnectorTypeName(conn->connector_type);
	snprintf(out->connector_name, sizeof(out->connector_name), "%s-%u",
	         type ? type : "Unknown", conn->connector_type_id);
	out->connector_id = conn->connector_id;
	const drmModeModeInfo *mode = pick_mode(conn, opt, why, why_len);
	if (!mode)
		return false;
	int crtc_index = -1;
	out->crtc_id = pick_crtc(drm->fd, res, conn, *used, &crtc_index);
	if (!out->crtc_id) {
		snprintf(why, why_len, "no CRTC left can drive connector %s", out->connector_name);
		return false;
	}
	out->mode = *mode;
	if (drm->atomic) {
		out->plane_id = pick_plane(drm->fd, crtc_index, drm->format);
		if (!out->plane_id || !atomic_props(drm, out)) {
			if (!at_start) {
				snprintf(why, why_len, "no primary plane with XRGB8888 and the atomic "
				         "properties for CRTC %u", out->crtc_id);
				return false;
			}
			comp_log("drm: %s: no primary plane with XRGB8888 and the atomic "
			         "properties for CRTC %u; using legacy modesetting",
			         drm->path, out->crtc_id);
			drm->atomic = false;
		}
	}
	*used |= 1u << crtc_index;
	out->connected = true;
	return true;
}

static bool connector_usable(const drmModeConnector *conn)
{
	return conn && conn->connection == DRM_MODE_CONNECTED && conn->count_modes > 0;
}

/* Every connected connector with modes that gets a CRTC (and, atomic,
 * a primary plane) becomes an output, in the card's connector order (left
 * to right); false with why filled when the card cannot show anything. */
static bool pick_outputs(struct drm_backend *drm, char *why, size_t why_len)
{
	drmModeRes *res = drmModeGetResources(drm->fd);
	if (!res) {
		snprintf(why, why_len, "not a KMS device (no mode-setting resources: a render "
		         "node, or a driver without display)");
		return false;
	}
	int n_connectors = res->count_connectors;
	drm->format = DRM_FORMAT_XRGB8888;
	drm->n_outputs = 0;
	uint32_t crtcs_used = 0;
	int connected = 0;
	char skipped[256] = "";
	for (int i = 0; i < res->count_connectors && drm->n_outputs < COMP_MAX_OUTPUTS; i++) {
		drmModeConnector *conn = drmModeGetConnector(drm->fd, res->connectors[i]);
		if (!connector_usable(conn)) {
			drmModeFreeConnector(conn);
			continue;
		}
		connected++;
		bool ok = setup_output(drm, res, conn, &crtcs_used, true, why, why_len);
		drmModeFreeConnector(conn);
		if (!ok) {
			comp_log("drm: %s: connector %s is not an output: %s", drm->path,
			         drm->outputs[drm->n_outputs].connector_name, why);
			snprintf(skipped, sizeof(skipped), "%s", why);
			continue;
		}
		drm->n_outputs++;
	}
	drmModeFreeResources(res);
	if (drm->n_outputs > 0)
		return true;
	if (connected)
		snprintf(why, why_len, "%s", skipped);
	else
		snprintf(why, why_len, "no connected connector with modes (%d connectors; "
		         "nothing plugged in, or the output was disabled)", n_connectors);
	return false;
}

/* Opens path as the output's card; -1 with why filled if it is unusable. */
static int try_card(struct drm_backend *drm, const char *path, char *why, size_t why_len)
{
	int fd = drm_session_open(drm->session, path, why, why_len);
	if (fd == -2) {
		/* It exists, and the seat refused it: say what it is. */
		int probe = open(path, O_RDONLY | O_CLOEXEC);
		drmVersion *v = probe >= 0 ? drmGetVersion(probe) : NULL;
		drmModeRes *r = v ? drmModeGetResources(probe) : NULL;
		if (probe >= 0 && !v)
			snprintf(why, why_len, "not a DRM device");
		else if (v && !r)
			snprintf(why, why_len, "not a KMS device (no mode-setting resources: a "
			         "render node, or a driver without display)");
		drmModeFreeResources(r);
		drmFreeVersion(v);
		if (probe >= 0)
			close(probe);
		return -1;
	}
	if (fd < 0)
		return -1;
	drm->fd = fd;
	snprintf(drm->path, sizeof(drm->path), "%s", path);
	drmVersion *version = drmGetVersion(fd);
	if (!version) {
		snprintf(why, why_len, "not a DRM device");
		goto fail;
	}
	snprintf(drm->driver, sizeof(drm->driver), "%s", version->name);
	drmFreeVersion(version);
	/* Asked before mastership, which a render node never gives: its
	 * refusal would hide the real reason. */
	drmModeRes *res = drmModeGetResources(fd);
	if (!res) {
		snprintf(why, why_len, "not a KMS device (no mode-setting resources: a render "
		         "node, or a driver without display)");
		goto fail;
	}
	drmModeFreeResources(res);

	if (!drmIsMaster(fd) && drmSetMaster(fd) != 0) {
		snprintf(why, why_len, "cannot become its DRM master: %s (another compositor or "
		         "X server drives it)", strerror(errno));
		goto fail;
	}
	drmSetClientCap(fd, DRM_CLIENT_CAP_UNIVERSAL_PLANES, 1);
	const char *legacy = getenv("DUET_DRM_LEGACY");
	drm->atomic = !(legacy && *legacy && strcmp(legacy, "0") != 0) &&
	              drmSetClientCap(fd, DRM_CLIENT_CAP_ATOMIC, 1) == 0;
	uint64_t cap = 0;
	drm->monotonic = drmGetCap(fd, DRM_CAP_TIMESTAMP_MONOTONIC, &cap) == 0 && cap;
	cap = 0;
	drm->addfb_modifiers = drmGetCap(fd, DRM_CAP_ADDFB2_MODIFIERS, &cap) == 0 && cap;
	if (!pick_outputs(drm, why, why_len))
		goto fail;
	return fd;
fail:
	drm_session_close(drm->session, fd);
	drm->fd = -1;
	return -1;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Candidate card nodes: /dev/dri/by-path/...-card first (a stable order),
 * then /dev/dri/cardN, each real node once. */
static int list_cards(char **paths, int max)
{
	int n = 0;
	char *real[MAX_CANDIDATES];
	const char *dirs[] = { "/dev/dri/by-path", "/dev/dri" };
	for (size_t d = 0; d < 2; d++) {
		DIR *dir = opendir(dirs[d]);
		if (!dir)
			continue;
		char *found[MAX_CANDIDATES];
		int nfound = 0;
		struct dirent *ent;
		while ((ent = readdir(dir)) && nfound < MAX_CANDIDATES) {
			size_t len = strlen(ent->d_name);
			bool card = d == 0 ? len > 5 && strcmp(ent->d_name + len - 5, "-card") == 0
			                   : strncmp(ent->d_name, "card", 4) == 0;
			if (!card)
				continue;
			char path[PATH_MAX];
			snprintf(path, sizeof(path), "%s/%s", dirs[d], ent->d_name);
			found[nfound++] = strdup(path);
		}
		closedir(dir);
		qsort(found, (size_t)nfound, sizeof(found[0]), compare_names);
		for (int i = 0; i < nfound; i++) {
			char *r = found[i] ? realpath(found[i], NULL) : NULL;
			bool dup = !r;
			for (int j = 0; j < n && !dup; j++)
				dup = strcmp(real[j], r) == 0;
			if (dup || n >= max) {
				free(r);
				free(found[i]);
				continue;
			}
			real[n] = r;
			paths[n++] = found[i];
		}
	}
	for (int i = 0; i < n; i++)
		free(real[i]);
	return n;
}

static int open_device(struct drm_backend *drm, const struct comp_options *opt)
{
	char why[512];
	if (opt->drm_device) {
		if (try_card(drm, opt->drm_device, why, sizeof(why)) >= 0)
			return 0;
		comp_log("drm: cannot use %s: %s", opt->drm_device, why);
		return -1;
	}
	char *paths[MAX_CANDIDATES];
	int n = list_cards(paths, MAX_CANDIDATES);
	if (n == 0) {
		struct stat st;
		if (stat("/dev/dri", &st) != 0)
			comp_log("drm: no usable KMS device: /dev/dri does not exist (no DRM driver "
			         "is loaded: no display hardware, or in a VM none was given, e.g. "
			         "qemu's -device virtio-gpu-pci)");
		else
			comp_log("drm: no usable KMS device: /dev/dri has no card node (only render "
			         "nodes, which cannot drive a display)");
		return -1;
	}
	int ret = -1;
	for (int i = 0; i < n; i++) {
		if (ret != 0) {
			if (try_card(drm, paths[i], why, sizeof(why)) >= 0)
				ret = 0;
			else
				comp_log("drm: skipping %s: %s", paths[i], why);
		}
		free(paths[i]);
	}
	if (ret != 0)
		comp_log("drm: no usable KMS device among the %d card%s above (use --drm-device "
		         "to name one)", n, n == 1 ? "" : "s");
	return ret;
}

/* ------------------------------------------------------- framebuffers */

static void fb_destroy(struct gbm_bo *bo, void *data)
{
	struct drm_fb *fb = data;
	if (fb->id)
		drmModeRmFB(fb->fd, fb->id);
	free(fb);
}

static struct drm_fb *fb_for_bo(struct drm_backend *drm, struct gbm_bo *bo)
{
	struct drm_fb *fb = gbm_bo_get_user_data(bo);
	if (fb)
		return fb;
	fb = calloc(1, sizeof(*fb));
	if (!fb)
		return NULL;
	fb->fd = drm->fd;
	uint32_t width = gbm_bo_get_width(bo), height = gbm_bo_get_height(bo);
	uint32_t format = gbm_bo_get_format(bo);
	uint32_t handles[4] = { 0 }, strides[4] = { 0 }, offsets[4] = { 0 };
	uint64_t modifiers[4] = { 0 };
	uint64_t modifier = gbm_bo_get_modifier(bo);
	int planes = gbm_bo_get_plane_count(bo);
	for (int i = 0; i < planes && i < 4; i++) {
		handles[i] = gbm_bo_get_handle_for_plane(bo, i).u32;
		strides[i] = gbm_bo_get_stride_for_plane(bo, i);
		offsets[i] = gbm_bo_get_offset(bo, i);
		modifiers[i] = modifier;
	}
	int ret;
	/* A buffer without a modifier is added without one: drivers such as
	 * vkms reject DRM_FORMAT_MOD_INVALID (kmscube fails on it). */
	if (drm->addfb_modifiers && modifier != DRM_FORMAT_MOD_INVALID)
		ret = drmModeAddFB2WithModifiers(drm->fd, width, height, format, handles, strides,
		                                 offsets, modifiers, &fb->id, DRM_MODE_FB_MODIFIERS);
	else
		ret = drmModeAddFB2(drm->fd, width, height, format, handles, strides, offsets,
		                    &fb->id, 0);
	if (ret != 0 && format == DRM_FORMAT_XRGB8888 && planes == 1)
		ret = drmModeAddFB(drm->fd, width, height, 24, 32, strides[0], handles[0], &fb->id);
	if (ret != 0) {
		comp_log("drm: cannot add a %ux%u framebuffer (format %.4s, modifier 0x%" PRIx64
		         "): %s", width, height, (const char *)&format, modifier, strerror(errno));
		free(fb);
		return NULL;
	}
	gbm_bo_set_user_data(bo, fb, fb_destroy);
	return fb;
}

/* ------------------------------------------------------------- frames */

static void set_current(struct drm_output *out, struct gbm_bo *bo)
{
	if (out->current && out->current != bo)
		drm_gbm_release(out->gbm_surface, out->current);
	out->current = bo;
}

static void idle_frame_done(void *data)
{
	struct drm_output *out = data;
	out->idle_done = NULL;
	comp_output_finish_frame(out->output, render_now_ns(), NULL, 0);
}

/* The frame is complete without a flip event (a failed flip, or the legacy
 * modeset): the output hears it on the next loop pass, never from inside
 * its own submit. No presentation flag is true of that time. */
static void complete_without_event(struct drm_output *out)
{
	if (out->idle_done)
		return;
	out->idle_done = wl_event_loop_add_idle(out->drm->server->loop, idle_frame_done, out);
	if (!out->idle_done)
		comp_output_finish_frame(out->output, render_now_ns(), NULL, 0);
}

static void crtc_off(struct drm_output *out);

static void page_flip_handler(int fd, unsigned int sequence, unsigned int tv_sec,
                              unsigned int tv_usec, unsigned int crtc_id, void *data)
{
	struct drm_output *out = data;
	struct drm_backend *drm = out->drm;
	if (!out->pending || !out->output)
		return; /* a flip of a target already destroyed */
	if (!out->output->enabled) {
		/* The flip of a frame dropped when the display went away. */
		set_current(out, out->pending);
		out->pending = NULL;
		if (out->off_after_flip)
			crtc_off(out);
		return;
	}
	uint64_t t_ns = drm->monotonic
		? (uint64_t)tv_sec * 1000000000ull + (uint64_t)tv_usec * 1000ull
		: render_now_ns();
	if (out->has_vblank < 0) {
		/* Asked once the CRTC is on: drivers without vblank support
		 * (virtio-gpu) refuse it, and their events carry sequence 0. */
		uint64_t seq = 0, ns = 0;
		out->has_vblank = drmCrtcGetSequence(fd, out->crtc_id, &seq, &ns) == 0;
		comp_log("drm: %s: vblank counter: %s", drm->path,
		         out->has_vblank ? "yes (presentation seq is the display's MSC)"
		                         : "none (presentation seq counts the mode's refresh "
		                           "periods)");
	}
	uint64_t msc = 0;
	if (out->has_vblank) {
		if (out->seen_sequence && sequence < out->last_sequence)
			out->msc_hi += 1ull << 32;
		out->last_sequence = sequence;
		out->seen_sequence = true;
		msc = out->msc_hi | sequence;
	}
	set_current(out, out->pending);
	out->pending = NULL;
	/* A kernel flip: tear-free, completed and timed by the kernel. */
	uint32_t flags = WP_PRESENTATION_FEEDBACK_KIND_VSYNC |
	                 WP_PRESENTATION_FEEDBACK_KIND_HW_COMPLETION |
	                 (drm->monotonic ? WP_PRESENTATION_FEEDBACK_KIND_HW_CLOCK : 0);
	comp_output_finish_frame(out->output, t_ns, out->has_vblank ? &msc : NULL, flags);
}

/* ------------------------------------------- the display goes and comes */

/* Connector, CRTC and plane off: nothing scanned out from our buffers. */
static void crtc_off(struct drm_output *out)
{
	struct drm_backend *drm = out->drm;
	out->off_after_flip = false;
	int ret;
	if (drm->atomic) {
		drmModeAtomicReq *req = drmModeAtomicAlloc();
		if (!req)
			return;
		drmModeAtomicAddProperty(req, out->connector_id, out->prop.conn_crtc_id, 0);
		drmModeAtomicAddProperty(req, out->crtc_id, out->prop.crtc_mode_id, 0);
		drmModeAtomicAddProperty(req, out->crtc_id, out->prop.crtc_active, 0);
		drmModeAtomicAddProperty(req, out->plane_id, out->prop.fb_id, 0);
		drmModeAtomicAddProperty(req, out->plane_id, out->prop.crtc_id, 0);
		ret = drmModeAtomicCommit(drm->fd, req, DRM_MODE_ATOMIC_ALLOW_MODESET, NULL);
		drmModeAtomicFree(req);
	} else {
		ret = drmModeSetCrtc(drm->fd, out->crtc_id, 0, 0, 0, NULL, 0, NULL);
	}
	if (ret != 0)
		comp_log("drm: %s: cannot turn CRTC %u off: %s", drm->path, out->crtc_id,
		         strerror(errno));
	else
		comp_log("drm: %s: CRTC %u and its plane are off", drm->path, out->crtc_id);
	if (out->output)
		set_current(out, NULL);
}

/* No more frames for the output (unplugged, or the session paused); the
 * frame in flight, if any, is the output's no longer. */
static void output_off(struct drm_output *out, bool unplugged)
{
	struct drm_backend *drm = out->drm;
	struct comp_output *output = out->output;
	if (out->idle_done)
		wl_event_source_remove(out->idle_done);
	out->idle_done = NULL;
	comp_output_disable(output, unplugged);
	out->modeset_done = false;
	if (out->mode_blob)
		drmModeDestroyPropertyBlob(drm->fd, out->mode_blob);
	out->mode_blob = 0;
}

static void output_on(struct drm_output *out)
{
	struct drm_backend *drm = out->drm;
	if (!out->output || !out->connected || !drm_session_active(drm->session))
		return;
	comp_output_enable(out->output, mode_refresh_mhz(&out->mode));
}

/* The connector's state as the kernel last knew it, without probing it
 * again (cheap: no EDID read, no detect). */
static bool connector_current(struct drm_output *out)
{
	struct drm_backend *drm = out->drm;
	drmModeConnector *conn = drmModeGetConnectorCurrent(drm->fd, out->connector_id);
	/* "Unknown" is not gone: some drivers never know. */
	bool connected = conn && conn->connection != DRM_MODE_DISCONNECTED;
	drmModeFreeConnector(conn);
	return connected;
}

static void output_changed(struct drm_output *out);

/* Not every driver sends a hotplug uevent (virtio-gpu and vkms send none
 * when the connector is forced off or on through sysfs): each frame asks
 * whether the connector is still there (drm_submit), and while it is gone
 * this asks once a second whether it is back. */
static int replug_poll(void *data)
{
	struct drm_output *out = data;
	if (connector_current(out))
		output_changed(out);
	if (out->replug_poll && !out->connected)
		wl_event_source_timer_update(out->replug_poll, 1000);
	return 0;
}

static void poll_for_replug(struct drm_output *out, bool on)
{
	if (on && !out->replug_poll)
		out->replug_poll = wl_event_loop_add_timer(out->drm->server->loop, replug_poll, out);
	if (on && out->replug_poll)
		wl_event_source_timer_update(out->replug_poll, 1000);
	if (!on && out->replug_poll) {
		wl_event_source_remove(out->replug_poll);
		out->replug_poll = NULL;
	}
}

/* The kernel says the card's connectors changed: ours probed again. */
static int outputs_on(struct drm_backend *drm)
{
	int n = 0;
	for (int i = 0; i < drm->n_outputs; i++)
		n += drm->outputs[i].output && drm->outputs[i].connected;
	return n;
}

/* One connector probed again: gone, or back. */
static void output_changed(struct drm_output *out)
{
	struct drm_backend *drm = out->drm;
	if (!out->output)
		return;
	drmModeConnector *conn = drmModeGetConnector(drm->fd, out->connector_id);
	bool connected = conn && conn->connection == DRM_MODE_CONNECTED && conn->count_modes > 0;
	if (connected && !out->connected) {
		/* Back: the same mode if it has it, else one of the same size
		 * (the scene and clients keep their size). */
		const drmModeModeInfo *same = NULL;
		for (int i = 0; i < conn->count_modes && !same; i++)
			if (memcmp(&conn->modes[i], &out->mode, sizeof(out->mode)) == 0)
				same = &conn->modes[i];
		for (int i = 0; i < conn->count_modes && !same; i++)
			if (conn->modes[i].hdisplay == out->mode.hdisplay &&
			    conn->modes[i].vdisplay == out->mode.vdisplay)
				same = &conn->modes[i];
		if (same) {
			out->mode = *same;
			out->connected = true;
			poll_for_replug(out, false);
			comp_log("drm: %s: connector %s connected again: setting %dx%d@%.3f Hz, "
			         "wl_output global back", drm->path, out->connector_name,
			         out->mode.hdisplay, out->mode.vdisplay,
			         mode_refresh_mhz(&out->mode) / 1000.0);
			output_on(out);
		} else if (!out->mode_refused) {
			out->mode_refused = true; /* said once, not at every poll */
			comp_log("drm: %s: connector %s connected again, but without a %dx%d mode: "
			         "the output stays off", drm->path, out->connector_name,
			         out->mode.hdisplay, out->mode.vdisplay);
		}
	} else if (!connected && out->connected) {
		out->connected = false;
		out->mode_refused = false;
		int left = outputs_on(drm);
		if (left)
			comp_log("drm: %s: connector %s unplugged: output %s off, its wl_output "
			         "global removed; %d output%s left", drm->path, out->connector_name,
			         out->output->name, left, left == 1 ? "" : "s");
		else
			comp_log("drm: %s: connector %s unplugged: output %s off, its wl_output "
			         "global removed; no output left, duet runs on without a display "
			         "(clients stay connected)", drm->path, out->connector_name,
			         out->output->name);
		bool flip_pending = out->pending != NULL;
		output_off(out, true);
		poll_for_replug(out, true);
		if (flip_pending)
			out->off_after_flip = true; /* its event is still to come */
		else if (drm_session_active(drm->session))
			crtc_off(out);
	}
	drmModeFreeConnector(conn);
}

static bool is_output(const struct drm_backend *drm, uint32_t connector_id)
{
	for (int i = 0; i < drm->n_outputs; i++)
		if (drm->outputs[i].connector_id == connector_id)
			return true;
	return false;
}

/* Connectors that are no output yet and are connected now (plugged in
 * after the start) become outputs right of the others, with a CRTC no
 * output holds; a connector that cannot be one is said once per plug. */
static void add_plugged_outputs(struct drm_backend *drm)
{
	drmModeRes *res = drmModeGetResources(drm->fd);
	if (!res)
		return;
	uint32_t used = crtcs_in_use(drm, res);
	for (int i = 0; i < res->count_connectors; i++) {
		if (is_output(drm, res->connectors[i]))
			continue;
		if (drm->n_outputs == COMP_MAX_OUTPUTS) {
			comp_log("drm: %s: a connector was plugged in, but duet drives at most %d "
			         "outputs", drm->path, COMP_MAX_OUTPUTS);
			break;
		}
		/* A full probe: the kernel may not have looked since the plug. */
		drmModeConnector *conn = drmModeGetConnector(drm->fd, res->connectors[i]);
		char why[256] = "";
		bool ok = connector_usable(conn) &&
		          setup_output(drm, res, conn, &used, false, why, sizeof(why));
		if (conn && connector_usable(conn) && !ok)
			comp_log("drm: %s: connector %s was plugged in, but is not an output: %s",
			         drm->path, drm->outputs[drm->n_outputs].connector_name, why);
		drmModeFreeConnector(conn);
		if (!ok)
			continue;
		int index = drm->n_outputs++;
		struct comp_output *output = comp_output_create(drm->server, &comp_backend_drm,
		                                                index);
		if (!output) {
			drm->n_outputs--;
			comp_log("drm: %s: connector %s was plugged in, but its output could not be "
			         "made", drm->path, drm->outputs[index].connector_name);
			continue;
		}
		comp_log("drm: %s: connector %s plugged in: new output %s at %d,%d, %dx%d@%.3f Hz, "
		         "wl_output global added", drm->path, drm->outputs[index].connector_name,
		         output->name, output->x, output->y, output->width, output->height,
		         output->refresh_mhz / 1000.0);
		comp_layout_update_surfaces(drm->server);
	}
	drmModeFreeResources(res);
}

/* The kernel says the card's connectors changed: each output's probed
 * again, and only those that changed go off or on; connectors plugged in
 * since become outputs. */
static void connectors_changed(void *data)
{
	struct drm_backend *drm = data;
	for (int i = 0; i < drm->n_outputs; i++)
		output_changed(&drm->outputs[i]);
	if (drm_session_active(drm->session))
		add_plugged_outputs(drm);
}

/* The session paused (VT switch away) or resumed. */
static void session_activate(void *data, bool active)
{
	struct drm_backend *drm = data;
	if (!active) {
		comp_log("drm: session paused (switched away): page flips stop, DRM master "
		         "given back, clients stay connected");
		for (int i = 0; i < drm->n_outputs; i++) {
			struct drm_output *out = &drm->outputs[i];
			if (out->output)
				output_off(out, false);
			out->off_after_flip = false;
		}
#ifdef DUET_HAVE_LIBINPUT
		/* Before the ack: the seat revokes the devices after it. */
		comp_input_suspend(drm->input);
#endif
		drm_session_ack_pause(drm->session);
		return;
	}
#ifdef DUET_HAVE_LIBINPUT
	comp_input_resume(drm->input);
#endif
	if (drm->n_outputs == 0 || !drm->outputs[0].output)
		return; /* the seat's first enable, at startup */
	comp_log("drm: session active again: the mode is set again and everything repainted");
	for (int i = 0; i < drm->n_outputs; i++) {
		struct drm_output *out = &drm->outputs[i];
		if (!out->output)
			continue;
		out->modeset_done = false;
		/* The connector may have come or gone meanwhile. */
		bool was = out->connected;
		output_changed(out);
		if (was && out->connected)
			output_on(out);
		else if (!was && !out->connected)
			crtc_off(out); /* unplugged before or while paused: perhaps still on */
	}
	add_plugged_outputs(drm);
}

static int drm_dispatch(int fd, uint32_t mask, void *data)
{
	drmEventContext ctx = {
		.version = 3,
		.page_flip_handler2 = page_flip_handler,
	};
	if (drmHandleEvent(fd, &ctx) != 0)
		comp_log("drm: reading events failed: %s", strerror(errno));
	return 0;
}

static int atomic_commit(struct drm_output *out, uint32_t fb_id)
{
	struct drm_backend *drm = out->drm;
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	if (!req)
		return -ENOMEM;
	uint32_t flags = DRM_MODE_PAGE_FLIP_EVENT;
	uint32_t p = out->plane_id;
	if (!out->modeset_done) {
		if (!out->mode_blob &&
		    drmModeCreatePropertyBlob(drm->fd, &out->mode, sizeof(out->mode),
		                              &out->mode_blob) != 0) {
			int err = -errno;
			drmModeAtomicFree(req);
			return err;
		}
		flags |= DRM_MODE_ATOMIC_ALLOW_MODESET;
		drmModeAtomicAddProperty(req, out->connector_id, out->prop.conn_crtc_id, out->crtc_id);
		drmModeAtomicAddProperty(req, out->crtc_id, out->prop.crtc_mode_id, out->mode_blob);
		drmModeAtomicAddProperty(req, out->crtc_id, out->prop.crtc_active, 1);
		drmModeAtomicAddProperty(req, p, out->prop.crtc_id, out->crtc_id);
		drmModeAtomicAddProperty(req, p, out->prop.src_x, 0);
		drmModeAtomicAddProperty(req, p, out->prop.src_y, 0);
		drmModeAtomicAddProperty(req, p, out->prop.src_w, (uint64_t)out->mode.hdisplay << 16);
		drmModeAtomicAddProperty(req, p, out->prop.src_h, (uint64_t)out->mode.vdisplay << 16);
		drmModeAtomicAddProperty(req, p, out->prop.crtc_x, 0);
		drmModeAtomicAddProperty(req, p, out->prop.crtc_y, 0);
		drmModeAtomicAddProperty(req, p, out->prop.crtc_w, out->mode.hdisplay);
		drmModeAtomicAddProperty(req, p, out->prop.crtc_h, out->mode.vdisplay);
	} else {
		/* Not waiting: the event says when it is on screen. */
		flags |= DRM_MODE_ATOMIC_NONBLOCK;
	}
	drmModeAtomicAddProperty(req, p, out->prop.fb_id, fb_id);
	int ret = drmModeAtomicCommit(drm->fd, req, flags, out) == 0 ? 0 : -errno;
	drmModeAtomicFree(req);
	return ret;
}

/* Flips to fb; 1 when it completed at once without an event (the legacy
 * modeset), 0 when an event will come, -errno on failure. */
static int flip(struct drm_output *out, uint32_t fb_id)
{
	struct drm_backend *drm = out->drm;
	if (drm->atomic) {
		int ret = atomic_commit(out, fb_id);
		if (ret == 0 || out->modeset_done)
			return ret;
		comp_log("drm: %s: atomic modeset failed (%s); trying legacy modesetting",
		         drm->path, strerror(-ret));
		drm->atomic = false;
	}
	if (!out->modeset_done) {
		if (drmModeSetCrtc(drm->fd, out->crtc_id, fb_id, 0, 0, &out->connector_id, 1,
		                   &out->mode) != 0)
			return -errno;
		return 1;
	}
	return drmModePageFlip(drm->fd, out->crtc_id, fb_id, DRM_MODE_PAGE_FLIP_EVENT, out) == 0
		? 0 : -errno;
}

static void drm_submit(struct comp_output *output, const pixman_region32_t *damage)
{
	struct drm_output *out = output_of(output);
	struct drm_backend *drm = out->drm;
	if (!connector_current(out)) {
		/* Gone without a uevent: turned off now, the frame dropped. */
		output_changed(out);
		if (!output->enabled)
			return;
	}
	struct gbm_bo *bo = drm_gbm_present(out->gbm_surface, output->target, damage);
	if (!bo) {
		complete_without_event(out);
		return;
	}
	struct drm_fb *fb = fb_for_bo(drm, bo);
	int ret = fb ? flip(out, fb->id) : -EINVAL;
	if (ret < 0) {
		/* Lost master (another session took the card), a disabled
		 * connector...: the frame is dropped, the compositor goes on,
		 * and each kind of failure is logged once. */
		if (-ret != out->last_commit_errno)
			comp_log("drm: %s: cannot show the frame: %s%s", drm->path, strerror(-ret),
			         -ret == EACCES || -ret == EPERM ? " (no longer DRM master)" : "");
		out->last_commit_errno = -ret;
		drm_gbm_release(out->gbm_surface, bo);
		complete_without_event(out);
		return;
	}
	if (out->last_commit_errno)
		comp_log("drm: %s: frames are shown again", drm->path);
	out->last_commit_errno = 0;
	if (!out->modeset_done) {
		out->modeset_done = true;
		comp_log("drm: %s (%s): %s %dx%d@%.3f Hz on connector %s, CRTC %u%s, %s "
		         "modesetting, timestamps %s", drm->path, drm->driver,
		         ret == 1 ? "set" : "setting", out->mode.hdisplay, out->mode.vdisplay,
		         mode_refresh_mhz(&out->mode) / 1000.0, out->connector_name, out->crtc_id,
		         drm->atomic ? ", primary plane" : "", drm->atomic ? "atomic" : "legacy",
		         drm->monotonic ? "CLOCK_MONOTONIC" : "not monotonic (taken on receipt)");
	}
	if (ret == 1) {
		set_current(out, bo);
		complete_without_event(out);
	} else {
		out->pending = bo;
	}
}

/* --------------------------------------------------------- screenshots */

/* A PNG of the buffer being scanned out, read through a CPU mapping of it:
 * what the display shows, not what the renderer thinks it drew. */
static int drm_encode_png(struct comp_output *output, uint8_t **data, size_t *len)
{
	struct drm_output *out = output_of(output);
	struct drm_backend *drm = out->drm;
	struct gbm_bo *bo = out->current;
	if (!bo) {
		/* Nothing on screen yet: the frame being made. */
		return render_target_encode_png(output->target, data, len);
	}
	uint32_t width = gbm_bo_get_width(bo), height = gbm_bo_get_height(bo), stride = 0;
	void *map_data = NULL;
	void *pixels = gbm_bo_map(bo, 0, 0, width, height, GBM_BO_TRANSFER_READ, &stride,
	                          &map_data);
	if (pixels) {
		int ret = render_png_encode(pixels, (int)width, (int)height, (int)stride, data, len);
		gbm_bo_unmap(bo, map_data);
		if (out->screenshot_path != 1)
			comp_log("drm: screenshots read the scanned-out buffer (gbm_bo_map)");
		out->screenshot_path = 1;
		return ret;
	}
	/* Buffers of software rendering (kms_swrast) are dumb buffers, which
	 * the DRM device itself maps. */
	struct drm_mode_map_dumb map = { .handle = gbm_bo_get_handle(bo).u32 };
	stride = gbm_bo_get_stride(bo);
	size_t size = (size_t)stride * height;
	if (drmIoctl(drm->fd, DRM_IOCTL_MODE_MAP_DUMB, &map) == 0) {
		void *p = mmap(NULL, size, PROT_READ, MAP_SHARED, drm->fd, (off_t)map.offset);
		if (p != MAP_FAILED) {
			int ret = render_png_encode(p, (int)width, (int)height, (int)stride, data, len);
			munmap(p, size);
			if (out->screenshot_path != 2)
				comp_log("drm: screenshots read the scanned-out buffer (dumb mapping)");
			out->screenshot_path = 2;
			return ret;
		}
	}
	comp_log("drm: the scanned-out buffer cannot be mapped (%s); screenshot of the "
	         "renderer's frame instead", strerror(errno));
	return render_target_encode_png(output->target, data, len);
}

/* ---------------------------------------------------------- lifetime */

static int drm_init(struct comp_server *server)
{
	struct drm_backend *drm = calloc(1, sizeof(*drm));
	if (!drm)
		return -1;
	drm->fd = -1;
	drm->server = server;
	server->backend_data = drm;
	drm->session = drm_session_create(server->loop, session_activate, drm);
	if (!drm->session)
		return -1;
	if (open_device(drm, &server->options) != 0)
		return -1;
	struct stat st;
	if (fstat(drm->fd, &st) == 0) {
		server->render_device = st.st_rdev;
		server->has_render_device = true;
		drm->rdev = st.st_rdev;
	}
	drm->gbm = gbm_create_device(drm->fd);
	if (!drm->gbm) {
		comp_log("drm: gbm_create_device(%s) failed", drm->path);
		return -1;
	}
	server->egl = render_egl_create(RENDER_EGL_GBM, drm->gbm, drm->format);
	if (!server->egl) {
		comp_log("drm: no EGL on %s's GBM device", drm->path);
		return -1;
	}
	drm->drm_source = wl_event_loop_add_fd(server->loop, drm->fd, WL_EVENT_READABLE,
	                                       drm_dispatch, drm);
	if (!drm->drm_source)
		return -1;
	drm->uevent = drm_uevent_create(server->loop, drm->rdev, connectors_changed, drm);
#ifdef DUET_HAVE_LIBINPUT
	drm->input = comp_input_create(server, drm->session);
#else
	comp_log("input: built without libinput (libinput-dev, libudev-dev): no input devices");
#endif
	return 0;
}

static void drm_finish(struct comp_server *server)
{
	struct drm_backend *drm = server->backend_data;
	if (!drm)
		return;
	if (drm->drm_source)
		wl_event_source_remove(drm->drm_source);
	drm_uevent_destroy(drm->uevent);
	if (drm->gbm)
		gbm_device_destroy(drm->gbm);
#ifdef DUET_HAVE_LIBINPUT
	comp_input_destroy(drm->input); /* closes its devices through the session */
#endif
	/* Drops DRM master: fbcon or the next user takes over. */
	if (drm->fd >= 0 && drm->session)
		drm_session_close(drm->session, drm->fd);
	drm_session_destroy(drm->session);
	free(drm);
	server->backend_data = NULL;
}

static struct render_target *drm_create_target(struct comp_output *output)
{
	struct drm_output *out = output_of(output);
	struct drm_backend *drm = out->drm;
	const struct comp_options *opt = &output->server->options;
	out->output = output;
	output->backend_data = out;
	output->width = out->mode.hdisplay;
	output->height = out->mode.vdisplay;
	output->refresh_mhz = mode_refresh_mhz(&out->mode);
	snprintf(output->name, sizeof(output->name), "%s", out->connector_name);
	if (opt->vfb_path && output->index == 0)
		comp_log("drm: --vfb is for the headless backend; ignored");
	if (opt->refresh_mhz != output->refresh_mhz)
		comp_log("drm: %s: frames are paced by the mode's refresh, %.3f Hz (--refresh is "
		         "for headless outputs)", output->name, output->refresh_mhz / 1000.0);
	return drm_gbm_target_create(output->server->egl, drm->gbm, output->width, output->height,
	                             drm->format, NULL, 0, &out->gbm_surface);
}

static void drm_destroy(struct comp_output *output)
{
	struct drm_output *out = output->backend_data;
	if (!out)
		return;
	if (out->idle_done)
		wl_event_source_remove(out->idle_done);
	out->idle_done = NULL;
	poll_for_replug(out, false);
	if (out->mode_blob)
		drmModeDestroyPropertyBlob(out->drm->fd, out->mode_blob);
	out->mode_blob = 0;
	if (output->target) {
		drm_gbm_release(out->gbm_surface, out->pending);
		drm_gbm_release(out->gbm_surface, out->current);
		drm_gbm_target_destroy(output->target, out->gbm_surface);
	}
	out->gbm_surface = NULL;
	out->pending = out->current = NULL;
	output->target = NULL;
	out->output = NULL;
	output->backend_data = NULL;
}

static int drm_output_count(struct comp_server *server)
{
	struct drm_backend *drm = server->backend_data;
	return drm->n_outputs;
}

const struct comp_backend comp_backend_drm = {
	.name = "drm",
	.output_count = drm_output_count,
	.init = drm_init,
	.finish = drm_finish,
	.create_target = drm_create_target,
	.submit = drm_submit,
	.destroy = drm_destroy,
	.encode_png = drm_encode_png,
	.display_clock = true, /* the page flip's event finishes a frame */
};
