#!/usr/bin/env python3
"""duet-test-pattern's pixels reach the screen exactly, and the compositor's
window management (resize, close) works on it.

usage: test_pattern.py static|resize|close
"""

import sys

import duet
from duet import check

APP_ID = "duet-pattern-check"


def start_pattern(s, size="300x200"):
    p = s.client([duet.program("DUET_TEST_PATTERN"), "--size", size, "--app-id", APP_ID])
    w, h = size.split("x")
    p.wait_line(r"^mapped %s %s$" % (w, h))
    win = s.wait_window(app_id=APP_ID)
    check((win.w, win.h) == (int(w), int(h)), "window is %dx%d, client drew %s" % (win.w, win.h, size))
    check(win.pid in (0, p.pid), "window pid %d, client pid %d" % (win.pid, p.pid))
    return p, win


def check_pattern(s, win, bg, label):
    img = s.screenshot(label)
    check(win.x >= 0 and win.y >= 0 and win.x + win.w <= img.width and win.y + win.h <= img.height,
          "window %r is not fully on the %dx%d screen" % (win, img.width, img.height))
    bad, examples = duet.pattern_mismatches(img, win)
    check(bad == 0, "%d pixels inside %r differ from the pattern; (x, y, got, want): %s"
          % (bad, win, examples))
    duet.check_outside_is_background(img, win, bg)
    duet.log("%s: %dx%d window at %d,%d matches the pattern exactly" % (label, win.w, win.h, win.x, win.y))


def static(s, bg):
    p, win = start_pattern(s)
    check_pattern(s, win, bg, "pattern")
    check(p.alive(), "duet-test-pattern exited early")


def resize(s, bg):
    p, win = start_pattern(s)
    check_pattern(s, win, bg, "before-resize")
    s.testctl("resize", win.id, 200, 150)
    p.wait_line(r"^resized 200 150$")
    win = s.wait_window(app_id=APP_ID, pred=lambda w: (w.w, w.h) == (200, 150), timeout=10)
    check_pattern(s, win, bg, "after-resize")


def close(s, bg):
    p, win = start_pattern(s)
    s.testctl("close", win.id)
    status = p.wait(10)
    check(status == 0, "duet-test-pattern exited %d after close" % status)
    s.sync()
    left = s.windows()
    check(not left, "windows left after close: %r" % left)
    img = s.screenshot("after-close")
    bad = img.count_outside_not(bg, (0, 0, 0, 0))
    check(bad == 0, "%d pixels are not background after the only window closed" % bad)


SCENARIOS = {"static": static, "resize": resize, "close": close}


def test():
    scenario = sys.argv[1] if len(sys.argv) > 1 else "static"
    with duet.Session("pattern-" + scenario) as s:
        bg = s.background()
        SCENARIOS[scenario](s, bg)
        s.check_alive()


if __name__ == "__main__":
    duet.main(test)
