#!/usr/bin/env python3
"""duet-resize runs the study's 8 sizes N times in both modes and reports a
positive request -> presented latency for each step; after the last step the
screen shows its window at 1920x1080 (not under weston: no screenshots
there). On servers without a server-initiated resize (weston, openbox) the
server mode says it fell back to client mode.

usage: test_apps_resize.py STACK ENGINE
"""

import sys

import apps
import duet
from duet import check

SIZES = [(100, 100), (1000, 240), (850, 900), (400, 1000), (1800, 500), (999, 999), (333, 999),
         (1920, 1080)]
RUNS = 2
CLEAR = (230, 230, 235)  # duet-resize's background, (0.9, 0.9, 0.92)


def check_steps(recs, stack, engine, mode, runs):
    steps = [r for r in recs if r["name"] == "resize"]
    check(len(steps) == len(SIZES) * runs, "%d resize lines, want %d x %d"
          % (len(steps), len(SIZES), runs))
    for i, st in enumerate(steps):
        want = SIZES[i % len(SIZES)]
        check((st["run"], st["step"]) == (i // len(SIZES) + 1, i % len(SIZES) + 1),
              "steps out of order: %r" % st)
        check((st["width"], st["height"]) == want, "step %d asked %r" % (i, st))
        check((st["got_width"], st["got_height"]) == want,
              "step %d: frame presented at %dx%d, want %dx%d"
              % (i, st["got_width"], st["got_height"], want[0], want[1]))
        check(st["latency_ns"] > 0, "non-positive latency: %r" % st)
        check(st["mode"] == mode, "mode %r, want %r" % (st["mode"], mode))
        apps.check_labels(st, stack, engine)
    done = [r for r in recs if r["name"] == "resize_done"]
    check(len(done) == 1 and done[0]["steps"] == len(SIZES) * runs, "resize_done: %r" % done)
    mean = {}
    for st in steps:
        mean.setdefault((st["width"], st["height"]), []).append(st["latency_ns"] / 1e6)
    duet.log("%s/%s %s mode, ms per size: %s" % (stack, engine, mode, ", ".join(
        "%dx%d %.1f" % (w, h, sum(v) / len(v)) for (w, h), v in mean.items())))
    return done[0]


def check_screen(s, p):
    win = s.wait_window(app_id="duet-resize", pid=p.pid, timeout=20)
    check((win.w, win.h) == (1920, 1080), "after the last step the window is %dx%d"
          % (win.w, win.h))

    def shows_app(img, win=win):
        # Its corners are the app's own drawing: the title gradient at the top
        # left (below the size tag), the background at the bottom, and the
        # size tags (clients/resize.c) saying 1920x1080 at the top-left and
        # bottom-right corners, so the whole 1920x1080 window content is on
        # screen.
        top = img.pixel(win.x + 2, win.y + 12)
        check(top[2] > top[0] + 40, "top-left of %r is %r, not the blue title bar" % (win, top))
        for x, y in ((win.x + win.w - 20, win.y + win.h - 3), (win.x + 3, win.y + win.h - 3)):
            px = img.pixel(x, y)
            check(apps.near(px, CLEAR), "pixel (%d, %d) of %r is %r, want the app's %r"
                  % (x, y, win, px, CLEAR))
        code = (1920 & 255, 1080 & 255, (1920 >> 8) << 4 | 1080 >> 8)
        for x, y, want in ((win.x + 2, win.y + 2, (255, 0, 255)), (win.x + 36, win.y + 4, code),
                           (win.x + win.w - 12, win.y + win.h - 4, code),
                           (win.x + win.w - 4, win.y + win.h - 4, tuple(255 - c for c in code))):
            px = img.pixel(x, y)
            check(tuple(px[:3]) == want, "size tag pixel (%d, %d) of %r is %r, want %r"
                  % (x, y, win, px, want))
        return top

    if isinstance(s, duet.XSession) and s.wm_kind == "duet":
        # duet-xwm's composited frame.
        s.screenshot_until(shows_app, "resized", timeout=10)
    elif isinstance(s, duet.XSession):
        # The window's own contents under openbox + xcompmgr: the app's
        # drawing is what this checks, and xcompmgr, on a BadMatch from
        # its NameWindowPixmap of a window being reconfigured, loses the
        # window's picture and composites its shadow alone over a stale
        # screen (a run beside a CPU hog, 2026-11-28).
        shows_app(*s.window_image(win, "resized"))
    else:
        shows_app(s.screenshot("resized"))
    duet.log("screenshot shows %r at 1920x1080" % (win,))


def test():
    stack, engine = sys.argv[1], sys.argv[2]
    exe = duet.program("DUET_RESIZE")
    with apps.session(stack, "apps-resize-%s-%s" % (stack, engine)) as s:
        recs = apps.run_app(s, [exe, "--engine", engine, "--mode", "client", "--runs",
                                str(RUNS)], timeout=120)
        check_steps(recs, stack, engine, "client", RUNS)
        check(not [r for r in recs if r["name"] == "resize_mode"], "client mode fell back: %r"
              % recs)

        # Server mode, staying up for the screenshot. Starting at the last
        # size of the table puts the window where the final 1920x1080 fits
        # on screen (the policies place a window once, when it maps).
        p = s.client([exe, "--engine", engine, "--mode", "server", "--runs", "1", "--stay",
                      "--size", "1920x1080"],
                     name="resize-server", env=dict(apps.app_env(engine=engine),
                                                    **s.trusted_env()))
        p.wait_line(r'"name":"resize_done"', timeout=120)
        recs = apps.records("\n".join(p.lines))
        fallback = [r for r in recs if r["name"] == "resize_mode"]
        if stack in apps.SERVER_RESIZE:
            check(not fallback, "server mode fell back on %s: %r" % (stack, fallback))
            done = check_steps(recs, stack, engine, "server", 1)
            check(done["requested_mode"] == "server", "resize_done: %r" % done)
        else:
            check(len(fallback) == 1 and fallback[0]["mode"] == "client"
                  and fallback[0]["requested"] == "server" and fallback[0]["reason"],
                  "no clear fallback line on %s: %r" % (stack, fallback))
            check("unsupported" in p.stderr_tail(), "no message on stderr: %r" % p.stderr_tail())
            done = check_steps(recs, stack, engine, "client", 1)
            check(done["requested_mode"] == "server", "resize_done hides the fallback: %r" % done)
        if stack != "weston":
            check_screen(s, p)
        check(p.alive(), "duet-resize --stay exited")


if __name__ == "__main__":
    duet.main(test)
