#!/usr/bin/env python3
"""Checks duet's X11 test tooling (duet-x11-test-pattern, duet-x11-bad-client,
duet-xctl, the XSession harness) against a reference X window manager,
openbox with xcompmgr, so a bug in the tools is not mistaken for (or does
not hide) a bug in duet-xwm.

usage: test_x11_harness.py pattern|xctl|bad-clients
"""

import re
import time

import duet
from duet import check

CLASS = "duet-x11-harness"
# Not "bad-normal-hints" nor "bad-properties": openbox 3.6.1 (Debian bookworm)
# itself sometimes aborts on them (GLib "overflow allocating
# 18446744073709551598*4 bytes", seen in CI runs), which is the reference's
# bug, not the tool's. duet-xwm's own robustness tests run every mode.
BAD_MODES = ["destroy-after-map", "configure-flood", "die-mid-request"]


def start_pattern(s, size="300x200", cls=CLASS, extra=()):
    p = s.client([duet.program("DUET_X11_TEST_PATTERN"), "--size", size, "--class", cls]
                 + list(extra), name=cls)
    w, h = size.split("x")
    p.wait_line(r"^mapped %s %s$" % (w, h))
    win = s.wait_window(app_id=cls)
    check((win.w, win.h) == (int(w), int(h)), "window is %dx%d, client drew %s"
          % (win.w, win.h, size))
    check(win.pid == p.pid, "_NET_WM_PID %d, client pid %d" % (win.pid, p.pid))
    return p, win


def pattern_on_screen(win):
    def test(img):
        bad, examples = duet.pattern_mismatches(img, win)
        check(bad == 0, "%d pixels of %r differ from the pattern: %s" % (bad, win, examples))
    return test


def pattern(s):
    exe = duet.program("DUET_X11_TEST_PATTERN")
    p, win = start_pattern(s)
    # openbox decorates, so only the client area is the pattern.
    s.screenshot_until(pattern_on_screen(win), "pattern")
    duet.log("X server shows the pattern exactly in %r" % (win,))
    s.xctl("close", hex(win.id))
    check(p.wait(10) == 0, "WM_DELETE_WINDOW did not make the client exit 0")
    s.wait_unmanaged()

    q = s.client([exe, "--exit-after-first-frame", "--class", "once"], name="once")
    q.wait_line(r"^mapped 320 240$")
    check(q.wait(10) == 0, "--exit-after-first-frame did not exit 0")
    s.wait_unmanaged()

    f = s.client([exe, "--size", "100x50", "--frames", "20", "--interval-ms", "5",
                  "--class", "frames"], name="frames")
    f.wait_line(r"^mapped 100 50$")
    f.wait_line(r"^frame 20$")
    time.sleep(0.3)
    check(f.count_lines(r"^frame ") == 20, "--frames 20 drew %d frames"
          % f.count_lines(r"^frame "))
    check(f.alive(), "duet-x11-test-pattern exited after its frames instead of idling")
    win = s.wait_window(app_id="frames")

    def counter_is_20(img):
        got = img.pixel(win.x, win.y)
        check(got == (0, 0, 20), "counter pixel after 20 frames is %r, want (0, 0, 20)" % (got,))

    # The last frame reaches the root window when xcompmgr has composited
    # it, which a loaded machine can keep it from for longer than openbox's
    # sync settles: grabs until it shows (the deadline is a hang guard).
    s.screenshot_until(counter_is_20, "frames", timeout=60)

    for bad in (["--size", "0x5"], ["--frames", "-1"], ["--nope"]):
        r = s.run([exe] + bad)
        check(r.returncode == 2, "%s accepted (status %d)" % (" ".join(bad), r.returncode))


def xctl(s):
    a, wa = start_pattern(s, "200x150", "first")
    b, wb = start_pattern(s, "220x160", "second")
    wins = s.windows()
    check([w.app_id for w in wins] == ["second", "first"],
          "windows not listed topmost first: %r" % wins)
    # openbox focuses a new window a little after mapping it.
    s.wait_window(app_id="second", pred=lambda w: w.focused == 1, timeout=5)
    check(s.wait_window(app_id="first").focused == 0, "two windows focused: %r" % s.windows())
    s.xctl("activate", hex(wa.id))
    win = s.wait_window(app_id="first", pred=lambda w: w.focused == 1, timeout=5)
    check(s.windows()[0].app_id == "first", "activate did not raise: %r" % s.windows())
    # A click into the lower window's visible part focuses it (openbox is
    # click-to-focus); XTEST works.
    wb = s.wait_window(app_id="second")
    win = s.wait_window(app_id="first")
    x, y = wb.x + wb.w - 3, wb.y + wb.h - 3
    check(not (win.x <= x < win.x + win.w and win.y <= y < win.y + win.h),
          "test setup: click point %d,%d is covered by %r" % (x, y, win))
    s.xctl("click", x, y)
    s.wait_window(app_id="second", pred=lambda w: w.focused == 1, timeout=5)
    s.xctl("key", 38)  # 'a' on the default keymap; only the request is checked
    out = s.xctl("wait-cm", 2)
    check(re.fullmatch(r"0x[0-9a-f]+\n", out) is not None,
          "wait-cm under xcompmgr printed %r, want its selection window" % out)
    # openbox answers _NET_REQUEST_FRAME_EXTENTS: its event loop runs.
    r = s.xctl("wait-wm-loop", 2, check_status=False)
    check(r.returncode == 0, "wait-wm-loop under openbox exited %d" % r.returncode)
    out = s.xctl("wait-window", "first", 2)
    check(out.startswith(hex(wa.id) + " "), "wait-window printed %r" % out)
    r = s.xctl("wait-window", "nobody", 0.3, check_status=False)
    check(r.returncode == 1, "wait-window for a missing class exited %d" % r.returncode)
    # openbox does not answer duet's sync: a wait bounded by --timeout (it
    # says which bound ended it; s.xctl's own timeout is the hang guard),
    # and exit 1.
    r = s.xctl("--timeout", "0.5", "sync", check_status=False)
    check(r.returncode == 1 and "within 0.5 s" in r.stderr,
          "sync without duet-xwm exited %d after --timeout 0.5: %s"
          % (r.returncode, r.stderr.strip()))
    for bad in (["resize", "1"], ["click", "x", "1"], ["key", "300"], ["frobnicate"], [],
                ["wait-cm", "soon"], ["wait-wm-loop", "soon"]):
        r = s.run([duet.program("DUET_XCTL")] + bad)
        check(r.returncode == 2, "duet-xctl %s exited %d, want 2" % (bad, r.returncode))
    r = s.run([duet.program("DUET_XCTL"), "--display", ":9999", "windows"])
    check(r.returncode == 1, "duet-xctl on a display that does not exist exited %d"
          % r.returncode)
    s.xctl("close", hex(wa.id))
    s.xctl("close", hex(wb.id))
    check(a.wait(10) == 0 and b.wait(10) == 0, "close did not end both clients with status 0")


def bad_clients(s):
    exe = duet.program("DUET_X11_BAD_CLIENT")
    good, _ = start_pattern(s, "200x150", "good", ["--frames", "100000000"])
    for mode in BAD_MODES:
        r = s.run([exe, mode], timeout=60)
        duet.log("%s -> %d: %s" % (mode, r.returncode, r.stdout.strip()))
        check(r.returncode == 0, "duet-x11-bad-client %s exited %d under openbox:\n%s%s"
              % (mode, r.returncode, r.stdout, r.stderr))
        s.check_alive()
    # The reference handles a flood on a window that stays (what
    # test_xwm_robustness.py asks of duet-xwm) at once.
    bad = s.client([exe, "--hold", "configure-flood"], name="flood")
    bad.wait_line(r"^flooded \d+$", timeout=60)
    t0 = time.monotonic()
    s.xctl("windows", timeout=20)
    duet.log("openbox + xcompmgr: an X round trip right after the flood took %.2f s"
             % (time.monotonic() - t0))
    before = len(good.lines)
    good.wait_line(r"^frame", start=before, timeout=10)
    bad.stop()
    r = s.run([exe, "no-such-mode"])
    check(r.returncode == 2, "unknown mode exited %d, want 2" % r.returncode)


SCENARIOS = {"pattern": pattern, "xctl": xctl, "bad-clients": bad_clients}


if __name__ == "__main__":
    duet.main_session_scenario(SCENARIOS, "x11-harness-", duet.XSession, wm="openbox")
