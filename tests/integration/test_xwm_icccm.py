#!/usr/bin/env python3
"""duet-xwm follows the ICCCM / EWMH where a client can tell: each case is
a mode of duet-x11-wm-check (tests/clients/x11-wm-check.c), which asks and
checks the answer itself.

usage: test_xwm_icccm.py selections|iconic|focus-time|dialog|stale-configure|above-overlay|
                         reparent-root
  selections  WM_S0 (ICCCM 2.8) and _NET_WM_CM_S0 are owned
  iconic      WM_HINTS initial_state IconicState: the window stays unmapped
              with WM_STATE Iconic, listed, until activated
  focus-time  focus after a map carries the server's current time, not
              CurrentTime and not a stale time (WM_TAKE_FOCUS shows it)
  dialog      a _NET_WM_WINDOW_TYPE_DIALOG with WM_TRANSIENT_FOR is
              centered over its parent
  stale-configure  a ConfigureNotify the server sent before processing the
              WM's last configure does not replace the size the WM asked for
              (a later height-only ConfigureRequest keeps the WM's width)
  above-overlay  an override-redirect window restacked above the composite
              overlay (a sibling duet-xwm does not track) is still drawn on
              top of a managed window, not dropped to the bottom
  reparent-root  a normal and an override-redirect window that their client
              reparents from inside its window to the root are composited
              (the normal one managed and centered, the other where it is)
"""

import sys

import duet
from duet import check


def check_screen(case, ready, look, label, what, source=None, **session_args):
    """duet-x11-wm-check CASE in its own session, until it prints a line
    matching ready; then screenshots (from source) until look(img, x, y),
    x, y the screen's center, passes, and logs what it shows."""
    with duet.XSession("xwm-icccm-" + case, **session_args) as s:
        p = s.client([duet.program("DUET_X11_WM_CHECK"), case], name="check")
        p.wait_line(ready, timeout=30)
        w, h = (int(v) for v in s.size.split("x"))
        s.screenshot_until(lambda img: look(img, w // 2, h // 2), label, source=source)
        duet.log(what)


def above_overlay():
    def red_on_top(img, x, y):
        got = img.pixel(x, y)
        check(got == (255, 0, 0), "the center shows %r, not the red override-redirect "
              "window restacked above the overlay" % (got,))
    check_screen("above-overlay", r"^ready$", red_on_top, "above-overlay",
                 "the window stacked above the overlay is drawn on top")


def reparent_root():
    def both_shown(img, x, y):
        got = img.pixel(x, y)
        check(got == (0, 255, 0), "the center shows %r, not the green window reparented "
              "to the root (managed, centered)" % (got,))
        got = img.pixel(30, 30)
        check(got == (0, 0, 255), "20,20 shows %r, not the blue override-redirect window "
              "reparented to the root" % (got,))
    check_screen("reparent-root", r"^ready ", both_shown, "reparented",
                 "both windows reparented to the root are composited", source="grab",
                 screenshots=False)


def test():
    case = sys.argv[1]
    if case == "above-overlay":
        return above_overlay()
    if case == "reparent-root":
        return reparent_root()
    with duet.XSession("xwm-icccm-" + case, screenshots=False) as s:
        r = s.run([duet.program("DUET_X11_WM_CHECK"), case], timeout=60)
        duet.log("duet-x11-wm-check %s: %s%s" % (case, r.stdout, r.stderr))
        check(r.returncode == 0, "duet-x11-wm-check %s failed (%d): %s"
              % (case, r.returncode, r.stderr.strip()))
        s.xctl("sync")
        s.check_alive()


if __name__ == "__main__":
    duet.main(test)
