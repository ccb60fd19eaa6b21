/* Unit tests of xwm-model/hints.c: client properties, including malformed ones,
 * parse to sane values. No X server needed. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "hints.h"

/* WM_SIZE_HINTS flags */
enum { MIN = 1 << 4, MAX = 1 << 5, INC = 1 << 6, BASE = 1 << 8 };

static void normal_hints(uint32_t *f, uint32_t flags, int minw, int minh, int maxw, int maxh,
                         int incw, int inch, int basew, int baseh)
{
	memset(f, 0, 18 * sizeof(uint32_t));
	f[0] = flags;
	f[5] = (uint32_t)minw;
	f[6] = (uint32_t)minh;
	f[7] = (uint32_t)maxw;
	f[8] = (uint32_t)maxh;
	f[9] = (uint32_t)incw;
	f[10] = (uint32_t)inch;
	f[15] = (uint32_t)basew;
	f[16] = (uint32_t)baseh;
}

static void test_normal_hints(void)
{
	uint32_t f[18];
	struct xwm_size_hints h;
	int w, ht;

	puts("WM_NORMAL_HINTS: min/max parsed and applied");
	normal_hints(f, MIN | MAX, 100, 50, 400, 300, 0, 0, 0, 0);
	CHECK(xwm_hints_parse_normal(f, 18, 32, &h));
	CHECK(h.min_width == 100 && h.min_height == 50 && h.max_width == 400 && h.max_height == 300);
	w = 10, ht = 1000;
	xwm_hints_constrain(&h, &w, &ht);
	CHECK(w == 100 && ht == 300);

	puts("WM_NORMAL_HINTS: flags not set means values ignored");
	normal_hints(f, 0, 100, 50, 400, 300, 0, 0, 0, 0);
	CHECK(xwm_hints_parse_normal(f, 18, 32, &h));
	CHECK(h.min_width == 0 && h.max_width == 0);

	puts("WM_NORMAL_HINTS: min > max keeps min");
	normal_hints(f, MIN | MAX, 500, 500, 200, 100, 0, 0, 0, 0);
	CHECK(xwm_hints_parse_normal(f, 18, 32, &h));
	CHECK(h.min_width == 500 && h.max_width == 500 && h.max_height == 500);
	w = 50, ht = 5000;
	xwm_hints_constrain(&h, &w, &ht);
	CHECK(w == 500 && ht == 500);

	puts("WM_NORMAL_HINTS: zero, negative and huge sizes clamped or dropped");
	normal_hints(f, MIN | MAX | INC, 0, -5, (int)0x7fffffff, -1, -3, 0, 0, 0);
	CHECK(xwm_hints_parse_normal(f, 18, 32, &h));
	CHECK(h.min_width == 0 && h.min_height == 0);
	CHECK(h.max_width == XWM_SIZE_MAX && h.max_height == 0);
	CHECK(h.width_inc == 0 && h.height_inc == 0);
	w = 100000, ht = -20;
	xwm_hints_constrain(&h, &w, &ht);
	CHECK(w == XWM_SIZE_MAX && ht == 1);

	puts("WM_NORMAL_HINTS: wrong format or short property is unusable");
	normal_hints(f, MIN, 100, 100, 0, 0, 0, 0, 0, 0);
	CHECK(!xwm_hints_parse_normal(f, 18, 8, &h));
	CHECK(h.min_width == 0);
	CHECK(!xwm_hints_parse_normal(f, 14, 32, &h));
	CHECK(!xwm_hints_parse_normal(NULL, 18, 32, &h));
	puts("WM_NORMAL_HINTS: old 15-item property accepted, base ignored");
	normal_hints(f, MIN | BASE, 30, 40, 0, 0, 0, 0, 7, 7);
	CHECK(xwm_hints_parse_normal(f, 15, 32, &h));
	CHECK(h.min_width == 30 && h.base_width == 0);

	puts("WM_NORMAL_HINTS: increments step from base (xterm-like)");
	normal_hints(f, MIN | INC | BASE, 10, 10, 0, 0, 6, 13, 4, 4);
	CHECK(xwm_hints_parse_normal(f, 18, 32, &h));
	w = 300, ht = 200;
	xwm_hints_constrain(&h, &w, &ht);
	CHECK(w == 4 + (296 / 6) * 6 && ht == 4 + (196 / 13) * 13);
	puts("WM_NORMAL_HINTS: base stands in for a missing min");
	normal_hints(f, BASE, 0, 0, 0, 0, 0, 0, 50, 60);
	CHECK(xwm_hints_parse_normal(f, 18, 32, &h));
	w = 1, ht = 1;
	xwm_hints_constrain(&h, &w, &ht);
	CHECK(w == 50 && ht == 60);
}

static void test_wm_hints(void)
{
	uint32_t f[9] = { 0 };

	puts("WM_HINTS: input field honoured only with InputHint");
	CHECK(xwm_hints_parse_input(f, 9, 32)); /* no flag: default true */
	f[0] = 1;
	f[1] = 0;
	CHECK(!xwm_hints_parse_input(f, 9, 32));
	f[1] = 1;
	CHECK(xwm_hints_parse_input(f, 9, 32));
	f[1] = 0;
	CHECK(xwm_hints_parse_input(f, 1, 32)); /* too short: default */
	CHECK(xwm_hints_parse_input(f, 9, 16)); /* wrong format: default */
	CHECK(xwm_hints_parse_input(NULL, 0, 0));
}

static void test_atoms_and_state(void)
{
	uint32_t atoms[3] = { 11, 22, 33 };
	bool v;

	puts("atom lists: membership, wrong format ignored");
	CHECK(xwm_hints_atom_list_has(atoms, 3, 32, 22));
	CHECK(!xwm_hints_atom_list_has(atoms, 3, 32, 44));
	CHECK(!xwm_hints_atom_list_has(atoms, 2, 32, 33));
	CHECK(!xwm_hints_atom_list_has(atoms, 3, 8, 22));
	CHECK(!xwm_hints_atom_list_has(atoms, 3, 32, 0));

	puts("_NET_WM_STATE actions: remove, add, toggle, bad");
	CHECK(xwm_hints_state_action(0, true, &v) && !v);
	CHECK(xwm_hints_state_action(1, false, &v) && v);
	CHECK(xwm_hints_state_action(2, true, &v) && !v);
	CHECK(xwm_hints_state_action(2, false, &v) && v);
	CHECK(!xwm_hints_state_action(3, false, &v));
}

static void test_text(void)
{
	char buf[8], inst[16], cls[16];
	uint32_t counters[2] = { 0x100, 0x200 }, basic, ext;

	puts("text: cut to the buffer, control characters replaced");
	CHECK(xwm_hints_parse_text("hello world", 11, 8, buf, sizeof(buf)));
	CHECK(strcmp(buf, "hello w") == 0);
	CHECK(xwm_hints_parse_text("a\nb\0c", 5, 8, buf, sizeof(buf)));
	CHECK(strcmp(buf, "a?b") == 0);
	CHECK(!xwm_hints_parse_text("abc", 3, 32, buf, sizeof(buf)));
	CHECK(buf[0] == '\0');

	puts("WM_CLASS: two strings, missing final NUL, missing class");
	CHECK(xwm_hints_parse_class("xterm\0XTerm\0", 12, 8, inst, 16, cls, 16));
	CHECK(strcmp(inst, "xterm") == 0 && strcmp(cls, "XTerm") == 0);
	CHECK(xwm_hints_parse_class("xterm\0XTerm", 11, 8, inst, 16, cls, 16));
	CHECK(strcmp(cls, "XTerm") == 0);
	CHECK(xwm_hints_parse_class("lonely", 6, 8, inst, 16, cls, 16));
	CHECK(strcmp(inst, "lonely") == 0 && cls[0] == '\0');

	puts("_NET_WM_SYNC_REQUEST_COUNTER: basic, extended, malformed");
	CHECK(xwm_hints_parse_sync_counters(counters, 2, 32, &basic, &ext) == 2);
	CHECK(basic == 0x100 && ext == 0x200);
	CHECK(xwm_hints_parse_sync_counters(counters, 1, 32, &basic, &ext) == 1);
	CHECK(basic == 0x100 && ext == 0);
	CHECK(xwm_hints_parse_sync_counters(counters, 2, 8, &basic, &ext) == 0);
	CHECK(basic == 0 && ext == 0);

	puts("clamps: sizes 1..32767, positions int16");
	CHECK(xwm_hints_clamp_size(0) == 1 && xwm_hints_clamp_size(-9) == 1);
	CHECK(xwm_hints_clamp_size(1LL << 40) == XWM_SIZE_MAX);
	CHECK(xwm_hints_clamp_pos(-100000) == XWM_POS_MIN && xwm_hints_clamp_pos(99999) == XWM_POS_MAX);
}

int main(void)
{
	test_normal_hints();
	test_wm_hints();
	test_atoms_and_state();
	test_text();
	return check_finish("all hint checks passed");
}
