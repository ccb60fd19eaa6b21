#!/usr/bin/env python3
"""duet-x11-test-pattern's pixels reach duet-xwm's composited frame exactly,
and duet-xwm's window management follows the policy shared with
duet-compositor (compositor/policy/policy.c, xwm-model/policy.c): centered placement,
WM-initiated resize constrained by WM_NORMAL_HINTS, close through
WM_DELETE_WINDOW (a client without it is disconnected, XKillClient), focus
on map / activate / click / close.

usage: test_xwm_pattern.py static|resize|close|focus|hints
"""

import sys

import duet
from duet import check

CLASS = "duet-xwm-pattern"
SIZE = "1024x768"


def start_pattern(s, size="300x200", cls=CLASS, extra=()):
    p = s.client([duet.program("DUET_X11_TEST_PATTERN"), "--size", size, "--class", cls]
                 + list(extra), name=cls)
    w, h = (int(v) for v in size.split("x"))
    p.wait_line(r"^mapped %d %d$" % (w, h))
    win = s.wait_window(app_id=cls)
    check((win.w, win.h) == (w, h), "window is %dx%d, client drew %s" % (win.w, win.h, size))
    check(win.pid == p.pid, "_NET_WM_PID %d, client pid %d" % (win.pid, p.pid))
    return p, win


def check_centered(win):
    sw, sh = (int(v) for v in SIZE.split("x"))
    want = ((sw - win.w) // 2, (sh - win.h) // 2)
    check((win.x, win.y) == want, "window at %d,%d, policy centers it at %d,%d"
          % ((win.x, win.y) + want))


def pattern_exact(win, bg):
    def test(img):
        check(win.x >= 0 and win.y >= 0 and win.x + win.w <= img.width
              and win.y + win.h <= img.height,
              "window %r is not fully on the %dx%d screen" % (win, img.width, img.height))
        bad, examples = duet.pattern_mismatches(img, win)
        check(bad == 0, "%d pixels inside %r differ from the pattern; (x, y, got, want): %s"
              % (bad, win, examples))
        if bg is not None:
            duet.check_outside_is_background(img, win, bg)
    return test


def check_pattern(s, win, bg, label):
    s.screenshot_until(pattern_exact(win, bg), label)
    duet.log("%s: %dx%d window at %d,%d matches the pattern exactly"
             % (label, win.w, win.h, win.x, win.y))


def static(s, bg):
    p, win = start_pattern(s)
    check_centered(win)
    check_pattern(s, win, bg, "pattern")
    # The composited frame really reaches the X server's screen (the
    # overlay window), not only duet-xwm's own copy of it.
    s.screenshot_until(pattern_exact(win, bg), "root", source="grab")
    duet.log("the X server's root window shows the same pattern")
    check(p.alive(), "duet-x11-test-pattern exited early")


def resize_to(s, p, win, w, h, want=None):
    """_DUET_RESIZE to w x h; the client redraws at the (constrained) size
    want, keeping its top-left corner (policy rule 7)."""
    want = want or (w, h)
    start = len(p.lines)
    s.xctl("resize", hex(win.id), w, h)
    p.wait_line(r"^resized %d %d$" % want, start=start, timeout=10)
    new = s.wait_window(app_id=win.app_id, pred=lambda x: (x.w, x.h) == want, timeout=10)
    check((new.x, new.y) == (win.x, win.y), "resize moved the window from %d,%d to %d,%d"
          % (win.x, win.y, new.x, new.y))
    return new


def resize(s, bg):
    p, win = start_pattern(s)
    check_pattern(s, win, bg, "before-resize")
    for w, h in ((200, 150), (451, 333), (100, 100)):
        win = resize_to(s, p, win, w, h)
        check_pattern(s, win, bg, "resized-%dx%d" % (w, h))


def hints(s, bg):
    """Resizes are constrained by WM_NORMAL_HINTS min/max."""
    p, win = start_pattern(s, extra=["--min", "150x100", "--max", "400x300"])
    win = resize_to(s, p, win, 1000, 1000, want=(400, 300))
    check_pattern(s, win, bg, "clamped-to-max")
    win = resize_to(s, p, win, 10, 10, want=(150, 100))
    check_pattern(s, win, bg, "clamped-to-min")


def close(s, bg):
    p, win = start_pattern(s)
    s.xctl("close", hex(win.id))
    status = p.wait(10)
    check(status == 0, "duet-x11-test-pattern exited %d after close" % status)
    s.sync()
    left = s.windows()
    check(not left, "windows left after close: %r" % left)

    def empty(img):
        bad = img.count_outside_not(bg, (0, 0, 0, 0))
        check(bad == 0, "%d pixels are not background after the only window closed" % bad)
    s.screenshot_until(empty, "after-close")

    # Rule 8: a client the WM cannot ask is disconnected.
    p, win = start_pattern(s, cls="no-delete", extra=["--no-delete-window"])
    s.xctl("close", hex(win.id))
    status = p.wait(10)
    check(status != 0 and "X connection lost" in p.stderr_tail(),
          "the client without WM_DELETE_WINDOW was not disconnected (exit %d): %s"
          % (status, p.stderr_tail()))
    s.sync()
    check(not s.windows(), "windows left after killing the client: %r" % s.windows())


def focused(s):
    return [w.app_id for w in s.windows() if w.focused]


def focus(s, bg):
    a, wa = start_pattern(s, "300x200", "first")
    check(focused(s) == ["first"], "the new window is not the focused one: %r" % s.windows())
    # Wider than the first: its ends stick out left and right for a click.
    b, wb = start_pattern(s, "500x100", "second")
    wins = s.windows()
    check([w.app_id for w in wins] == ["second", "first"], "the new window is not on top: %r"
          % wins)
    check(focused(s) == ["second"], "focus did not move to the new window: %r" % wins)

    s.xctl("activate", hex(wa.id))
    s.sync()
    wins = s.windows()
    check(wins[0].app_id == "first" and focused(s) == ["first"],
          "activate did not raise and focus: %r" % wins)

    # A click on the second window where the first does not cover it.
    x, y = wb.x + 5, wb.y + wb.h // 2
    check(not (wa.x <= x < wa.x + wa.w and wa.y <= y < wa.y + wa.h),
          "test setup: %d,%d is inside %r" % (x, y, wa))
    s.xctl("click", x, y)
    s.sync()
    wins = s.windows()
    check(wins[0].app_id == "second" and focused(s) == ["second"],
          "a click did not raise and focus the window under it: %r" % wins)

    # Closing the focused window focuses the next one from the top.
    s.xctl("close", hex(wb.id))
    check(b.wait(10) == 0, "the closed client did not exit 0")
    s.sync()
    s.wait_window(app_id="first", pred=lambda w: w.focused == 1, timeout=5)
    check(focused(s) == ["first"], "focus did not go to the remaining window: %r" % s.windows())
    s.xctl("close", hex(wa.id))
    check(a.wait(10) == 0, "the last client did not exit 0")
    s.sync()
    check(not s.windows(), "windows left: %r" % s.windows())
    check_pattern_free_screen(s, bg)


def check_pattern_free_screen(s, bg):
    def empty(img):
        bad = img.count_outside_not(bg, (0, 0, 0, 0))
        check(bad == 0, "%d pixels are not background with no windows" % bad)
    s.screenshot_until(empty, "empty-again")


SCENARIOS = {"static": static, "resize": resize, "close": close, "focus": focus,
             "hints": hints}


def test():
    scenario = sys.argv[1] if len(sys.argv) > 1 else "static"
    with duet.XSession("xwm-pattern-" + scenario, size=SIZE) as s:
        bg = s.background()
        SCENARIOS[scenario](s, bg)
        s.check_alive()


if __name__ == "__main__":
    duet.main(test)
