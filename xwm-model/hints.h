/* Parsing and clamping of the properties clients set on their windows
 * (ICCCM and EWMH). Pure functions over the raw property bytes as the X
 * server returns them: no X connection, so tests/xwm-unit checks them with
 * any malformed input we can think of. Whatever a client writes, the result
 * is a sane value or "absent". */
#ifndef DUET_XWM_HINTS_H
#define DUET_XWM_HINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X sizes are CARD16 and positions INT16: nothing we configure may leave
 * these bounds. */
#define XWM_SIZE_MAX 32767
#define XWM_POS_MIN (-32768)
#define XWM_POS_MAX 32767

/* WM_NORMAL_HINTS reduced to what the policy uses. 0 = no constraint. */
struct xwm_size_hints {
	int min_width, min_height;
	int max_width, max_height;
	int base_width, base_height;
	int width_inc, height_inc; /* 0 or 1 = any size */
};

/* Parses WM_NORMAL_HINTS (type WM_SIZE_HINTS, format 32, 15 or 18 CARD32:
 * flags, 4 obsolete, min, max, inc, aspect, base, gravity). Values that are
 * negative, zero or beyond XWM_SIZE_MAX are dropped or clamped; min > max
 * keeps min and raises max to it (the client cannot be smaller than its
 * minimum). Returns false and zeroes out when the property is unusable. */
bool xwm_hints_parse_normal(const void *data, size_t n_items, int format,
                            struct xwm_size_hints *out);

/* Applies min, max and increments (above base, or above min when there is
 * no base, as the ICCCM says) to *width x *height, which end in
 * 1..XWM_SIZE_MAX. */
void xwm_hints_constrain(const struct xwm_size_hints *h, int *width, int *height);

/* WM_HINTS: whether the client wants the input focus set on it (the input
 * field when InputHint is in flags; true when absent or malformed, as the
 * ICCCM's "passive or locally active" default). */
bool xwm_hints_parse_input(const void *data, size_t n_items, int format);
/* WM_HINTS initial_state: true if StateHint asks for IconicState. */
bool xwm_hints_parse_iconic(const void *data, size_t n_items, int format);

/* ICCCM WM_STATE values. */
enum { XWM_WM_STATE_WITHDRAWN = 0, XWM_WM_STATE_NORMAL = 1, XWM_WM_STATE_ICONIC = 3 };

/* Whether a list of atoms (format 32) holds atom; false for any other
 * format. For WM_PROTOCOLS, _NET_WM_STATE, _NET_WM_WINDOW_TYPE. */
bool xwm_hints_atom_list_has(const void *data, size_t n_items, int format, uint32_t atom);

/* _NET_WM_STATE client message action (0 remove, 1 add, 2 toggle) applied
 * to the current value. Returns false for an unknown action. */
bool xwm_hints_state_action(uint32_t action, bool current, bool *result);

/* Copies a text property (WM_NAME, _NET_WM_NAME, ...) of format 8 into dst
 * (size > 0), cut at the first NUL and at size - 1 bytes, with control
 * characters replaced by '?' so logs stay on one line. Returns false (dst
 * empty) for another format. */
bool xwm_hints_parse_text(const void *data, size_t n_items, int format, char *dst,
                          size_t size);

/* WM_CLASS: "instance\0class\0" (the final NUL may be missing). */
bool xwm_hints_parse_class(const void *data, size_t n_items, int format,
                           char *instance, size_t instance_size,
                           char *class_name, size_t class_size);

/* _NET_WM_SYNC_REQUEST_COUNTER: one counter (basic) or two (basic,
 * extended). Zero IDs are absent. Returns the number found (0..2). */
int xwm_hints_parse_sync_counters(const void *data, size_t n_items, int format,
                                  uint32_t *basic, uint32_t *extended);

/* Clamps a requested size to 1..XWM_SIZE_MAX and a position to INT16. */
int xwm_hints_clamp_size(int64_t v);
int xwm_hints_clamp_pos(int64_t v);

#endif
