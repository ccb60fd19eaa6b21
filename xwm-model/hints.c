/* Client property parsing; see hints.h. Every function here takes bytes
 * that a possibly hostile client wrote, so each one checks format and
 * length before reading and clamps what it returns. */
#include <string.h>

#include "hints.h"

/* WM_SIZE_HINTS flags (ICCCM 4.1.2.3). */
#define P_MIN_SIZE (1u << 4)
#define P_MAX_SIZE (1u << 5)
#define P_RESIZE_INC (1u << 6)
#define P_BASE_SIZE (1u << 8)

int xwm_hints_clamp_size(int64_t v)
{
	return v < 1 ? 1 : v > XWM_SIZE_MAX ? XWM_SIZE_MAX : (int)v;
}

int xwm_hints_clamp_pos(int64_t v)
{
	return v < XWM_POS_MIN ? XWM_POS_MIN : v > XWM_POS_MAX ? XWM_POS_MAX : (int)v;
}

/* A hint value is meaningful when it is a positive size; the fields are
 * CARD32 on the wire but INT32 in Xlib, so "huge" often means negative. */
static int hint_size(uint32_t raw)
{
	int32_t v = (int32_t)raw;
	if (v <= 0)
		return 0;
	return v > XWM_SIZE_MAX ? XWM_SIZE_MAX : v;
}

bool xwm_hints_parse_normal(const void *data, size_t n_items, int format,
                            struct xwm_size_hints *out)
{
	uint32_t f[18];

	memset(out, 0, sizeof(*out));
	/* Pre-ICCCM-1 clients write 15 items (no base size, no gravity). */
	if (format != 32 || !data || n_items < 15)
		return false;
	memcpy(f, data, (n_items < 18 ? n_items : 18) * sizeof(uint32_t));
	if (n_items < 18)
		f[15] = f[16] = f[17] = 0;

	uint32_t flags = f[0];
	if (flags & P_MIN_SIZE) {
		out->min_width = hint_size(f[5]);
		out->min_height = hint_size(f[6]);
	}
	if (flags & P_MAX_SIZE) {
		out->max_width = hint_size(f[7]);
		out->max_height = hint_size(f[8]);
	}
	if (flags & P_RESIZE_INC) {
		out->width_inc = hint_size(f[9]);
		out->height_inc = hint_size(f[10]);
	}
	if ((flags & P_BASE_SIZE) && n_items >= 18) {
		out->base_width = hint_size(f[15]);
		out->base_height = hint_size(f[16]);
	}
	/* A minimum above the maximum cannot both hold: the minimum wins. */
	if (out->max_width && out->min_width > out->max_width)
		out->max_width = out->min_width;
	if (out->max_height && out->min_height > out->max_height)
		out->max_height = out->min_height;
	/* The ICCCM lets min stand in for base and base for min. */
	if (!(flags & P_MIN_SIZE) && (flags & P_BASE_SIZE)) {
		out->min_width = out->base_width;
		out->min_height = out->base_height;
	}
	return true;
}

static int constrain_axis(int v, int min, int max, int base, int inc)
{
	if (inc > 1) {
		int origin = base ? base : min;
		if (v > origin)
			v = origin + (v - origin) / inc * inc;
	}
	if (min > 0 && v < min)
		v = min;
	if (max > 0 && v > max)
		v = max;
	return xwm_hints_clamp_size(v);
}

void xwm_hints_constrain(const struct xwm_size_hints *h, int *width, int *height)
{
	*width = constrain_axis(xwm_hints_clamp_size(*width), h->min_width, h->max_width,
	                        h->base_width, h->width_inc);
	*height = constrain_axis(xwm_hints_clamp_size(*height), h->min_height, h->max_height,
	                         h->base_height, h->height_inc);
}

bool xwm_hints_parse_input(const void *data, size_t n_items, int format)
{
	uint32_t f[2];

	if (format != 32 || !data || n_items < 2)
		return true;
	memcpy(f, data, sizeof(f));
	if (!(f[0] & 1u)) /* InputHint */
		return true;
	return f[1] != 0;
}

bool xwm_hints_parse_iconic(const void *data, size_t n_items, int format)
{
	uint32_t f[3];

	if (format != 32 || !data || n_items < 3)
		return false;
	memcpy(f, data, sizeof(f));
	return (f[0] & 2u) && f[2] == 3; /* StateHint, IconicState */
}

bool xwm_hints_atom_list_has(const void *data, size_t n_items, int format, uint32_t atom)
{
	if (format != 32 || !data || atom == 0)
		return false;
	for (size_t i = 0; i < n_items; i++) {
		uint32_t a;
		memcpy(&a, (const char *)data + i * 4, 4);
		if (a == atom)
			return true;
	}
	return false;
}

bool xwm_hints_state_action(uint32_t action, bool current, bool *result)
{
	switch (action) {
	case 0: *result = false; return true;
	case 1: *result = true; return true;
	case 2: *result = !current; return true;
	default: return false;
	}
}

static size_t copy_text(const char *src, size_t len, char *dst, size_t size)
{
	size_t n = 0;

	while (n < len && n + 1 < size && src[n] != '\0') {
		unsigned char c = (unsigned char)src[n];
		dst[n] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
		n++;
	}
	dst[n] = '\0';
	return n;
}

bool xwm_hints_parse_text(const void *data, size_t n_items, int format, char *dst,
                          size_t size)
{
	if (size == 0)
		return false;
	dst[0] = '\0';
	if (format != 8 || !data)
		return false;
	copy_text(data, n_items, dst, size);
	return true;
}

bool xwm_hints_parse_class(const void *data, size_t n_items, int format,
                           char *instance, size_t instance_size,
                           char *class_name, size_t class_size)
{
	const char *s = data;

	if (instance_size == 0 || class_size == 0)
		return false;
	instance[0] = class_name[0] = '\0';
	if (format != 8 || !data)
		return false;
	const char *nul = memchr(s, '\0', n_items);
	copy_text(s, n_items, instance, instance_size);
	if (nul) {
		size_t rest = n_items - (size_t)(nul + 1 - s);
		copy_text(nul + 1, rest, class_name, class_size);
	}
	return true;
}

int xwm_hints_parse_sync_counters(const void *data, size_t n_items, int format,
                                  uint32_t *basic, uint32_t *extended)
{
	uint32_t c[2] = { 0, 0 };

	*basic = *extended = 0;
	if (format != 32 || !data || n_items < 1)
		return 0;
	memcpy(c, data, (n_items >= 2 ? 2 : 1) * sizeof(uint32_t));
	*basic = c[0];
	*extended = n_items >= 2 ? c[1] : 0;
	return (*basic != 0) + (*extended != 0);
}
