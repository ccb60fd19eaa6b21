#!/usr/bin/env python3
"""The same test picture through duet-compositor (Wayland) and through
duet-xwm (X11) gives the same pixels: the renderer really is shared.

Both stacks get a screen of the same size and the same 300x200 test
pattern (duet-test-pattern / duet-x11-test-pattern, one pattern function
in tests/clients/pattern.h). The shared policy centers new windows, so the
window lands at the same place on both.

usage: test_xwm_same_pixels.py window|screen
  window: the window rectangles are at the same place and identical
  screen: the whole screenshots are identical (background included)
"""

import sys

import duet
from duet import check

SIZE = "800x600"
PATTERN = (300, 200)


def show_pattern(s, program, id_option):
    """The test pattern's window (app_id or class same-pixels, given with
    id_option), once mapped."""
    p = s.client([duet.program(program), "--size", "%dx%d" % PATTERN, id_option, "same-pixels"])
    p.wait_line(r"^mapped %d %d$" % PATTERN)
    return s.wait_window(app_id="same-pixels")


def shot_wayland():
    with duet.Session("same-pixels-wayland", size=SIZE) as s:
        win = show_pattern(s, "DUET_TEST_PATTERN", "--app-id")
        img = s.screenshot("wayland")
        check(duet.pattern_mismatches(img, win)[0] == 0,
              "duet-compositor does not show the pattern exactly in %r" % (win,))
        return win, img


def shot_x11():
    with duet.XSession("same-pixels-x11", size=SIZE) as s:
        win = show_pattern(s, "DUET_X11_TEST_PATTERN", "--class")

        def exact(img):
            bad, ex = duet.pattern_mismatches(img, win)
            check(bad == 0, "duet-xwm does not show the pattern exactly in %r: %d pixels "
                  "differ, e.g. %s" % (win, bad, ex))
        img, _ = s.screenshot_until(exact, "x11")
        return win, img


def rect_rows(img, win):
    return [img.rows[y][3 * win.x:3 * (win.x + win.w)] for y in range(win.y, win.y + win.h)]


def diff_count(a, b):
    n = 0
    for ra, rb in zip(a.rows, b.rows):
        if ra != rb:
            n += sum(1 for i in range(0, len(ra), 3) if ra[i:i + 3] != rb[i:i + 3])
    return n


def test():
    part = sys.argv[1]
    wl_win, wl_img = shot_wayland()
    x_win, x_img = shot_x11()
    duet.log("wayland window %r, x11 window %r" % (wl_win, x_win))
    check((wl_win.x, wl_win.y, wl_win.w, wl_win.h) == (x_win.x, x_win.y, x_win.w, x_win.h),
          "the policies placed the window differently: wayland %d,%d %dx%d, x11 %d,%d %dx%d"
          % (wl_win.x, wl_win.y, wl_win.w, wl_win.h, x_win.x, x_win.y, x_win.w, x_win.h))
    check(rect_rows(wl_img, wl_win) == rect_rows(x_img, x_win),
          "the window rectangles differ between the two stacks")
    wl_bg, x_bg = wl_img.pixel(0, 0), x_img.pixel(0, 0)
    duet.log("window rectangles identical; backgrounds: wayland %r, x11 %r" % (wl_bg, x_bg))
    if part == "screen":
        n = diff_count(wl_img, x_img)
        check(n == 0, "%d pixels differ between the two screenshots (backgrounds: wayland %r, "
              "x11 %r)" % (n, wl_bg, x_bg))
        duet.log("the whole %s screenshots are identical" % SIZE)


if __name__ == "__main__":
    duet.main(test)
