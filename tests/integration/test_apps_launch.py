#!/usr/bin/env python3
"""duet-launch reports exactly one positive first-frame time, relative to the
DUET_T0_NS its launcher passes, on each stack and engine; and the one binary
serves both window systems.

usage: test_apps_launch.py STACK ENGINE | same-binary
  STACK: wayland | weston | x11 | openbox; ENGINE: gl | sw
"""

import hashlib
import os
import sys
import time

import apps
import duet
from duet import check


def launch(s, stack, engine, extra=()):
    exe = duet.program("DUET_LAUNCH")
    # As the bench does: CLOCK_MONOTONIC just before the fork.
    t0 = time.monotonic_ns()
    recs = apps.run_app(s, [exe, "--engine", engine] + list(extra), timeout=60,
                        env={"DUET_T0_NS": str(t0)})
    elapsed = time.monotonic_ns() - t0
    first = [r for r in recs if r["name"] == "first_frame"]
    check(len(first) == 1, "want one first_frame line, got %d: %r" % (len(first), recs))
    f = first[0]
    apps.check_labels(f, stack, engine)
    check(f["t0"] == "DUET_T0_NS", "DUET_T0_NS was not used: %r" % f)
    check(0 < f["since_t0_ns"] <= elapsed,
          "since_t0_ns %d not in (0, %d] (the time the run took)" % (f["since_t0_ns"], elapsed))
    check(f["presented_ns"] - t0 == f["since_t0_ns"], "since_t0_ns != presented_ns - t0: %r" % f)
    check(f["commit_ns"] <= f["presented_ns"], "presented before committed: %r" % f)
    check((f["width"], f["height"]) == (800, 600), "first frame %dx%d, want 800x600"
          % (f["width"], f["height"]))
    duet.log("%s/%s: first frame %.1f ms after fork (%s, %s)"
             % (stack, engine, f["since_t0_ns"] / 1e6, f["presentation"], f["path"]))
    return f


def stack_test(stack, engine):
    with apps.session(stack, "apps-launch-%s-%s" % (stack, engine)) as s:
        launch(s, stack, engine)
        # Start-up work is done before the first frame and shows in it.
        f = launch(s, stack, engine, ["--load-images", "8", "--load-fonts", "2"])
        check((f["images"], f["fonts"]) == (8, 2), "start-up work not reported: %r" % f)
        if stack != "weston":
            # --stay keeps the window up, mapped, with our pid and class.
            exe = duet.program("DUET_LAUNCH")
            p = s.client([exe, "--engine", engine, "--stay"], name="stay",
                         env=apps.app_env(engine=engine))
            p.wait_line(r'"name":"first_frame"', timeout=60)
            win = s.wait_window(app_id="duet-launch", timeout=20)
            check(win.pid == p.pid, "window pid %d, app pid %d" % (win.pid, p.pid))
            check((win.w, win.h) == (800, 600), "window %r, want 800x600" % (win,))
            check(p.alive(), "duet-launch --stay exited")
            # The server's close (xdg_toplevel.close / WM_DELETE_WINDOW via
            # _NET_CLOSE_WINDOW) ends it cleanly.
            s.testctl("close", hex(win.id) if isinstance(s, duet.XSession) else win.id)
            check(p.wait(20) == 0, "duet-launch --stay did not exit 0 on close")


def same_binary():
    """One duet-launch file, two window systems: the backend comes from the
    environment (WAYLAND_DISPLAY, then DISPLAY), not from the build."""
    exe = duet.program("DUET_LAUNCH")
    with open(exe, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    seen = {}
    for stack in ("wayland", "openbox"):
        with apps.session(stack, "apps-same-binary-" + stack) as s:
            recs = apps.run_app(s, [exe], timeout=60)
            first = [r for r in recs if r["name"] == "first_frame"]
            check(len(first) == 1, "no first_frame on %s: %r" % (stack, recs))
            seen[stack] = first[0]["backend"]
    with open(exe, "rb") as f:
        check(hashlib.sha256(f.read()).hexdigest() == digest, "duet-launch changed during the test")
    check(seen == {"wayland": "wayland", "openbox": "x11"},
          "auto-detected backends %r, want wayland and x11" % seen)
    duet.log("%s (sha256 %s...) ran as %r" % (exe, digest[:12], seen))


def test():
    if sys.argv[1:] == ["same-binary"]:
        same_binary()
        return
    stack, engine = sys.argv[1], sys.argv[2]
    stack_test(stack, engine)


if __name__ == "__main__":
    duet.main(test)
