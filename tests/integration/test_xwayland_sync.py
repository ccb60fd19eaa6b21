#!/usr/bin/env python3
"""Frame synchronization of duet-compositor's X window manager with X
clients through Xwayland (compositor/xwayland/xwayland-sync.c).

usage: test_xwayland_sync.py apps-frame-drawn | alarms | resize-waits |
                             resize-timeout | client-dies | xwayland-killed

apps-frame-drawn: duet's X11 apps time their frames with the WM's
_NET_WM_FRAME_DRAWN (presentation "frame-drawn", not the round trip that
stands in without it): duet-launch's first frame, duet-render's frames
presented (the unthrottled app's frames replaced before a repaint showed
them are counted discarded), every duet-resize step
(server mode, the policy's resize) presented at its size.
alarms: the same unthrottled duet-render costs the WM at most three alarm
events per frame it answers, whatever the app draws in between.
resize-waits: duet-x11-sync-client redraws 50 ms after each resize and only
then answers _NET_WM_SYNC_REQUEST (the WM waits up to 60 s for it:
--xwayland-sync-timeout); until it does, no screenshot shows its
window at the new size with anything but its new drawing (the X server's
red fill of a resized window, or its old green drawing beyond the old
size, would be a half-drawn window).
resize-timeout: a client that draws at once but never answers is shown at
its new size after the WM's timeout, and resized again later.
client-dies: the client killed while the WM waits for its answer; the
compositor goes on and a new client is shown.
xwayland-killed: Xwayland killed while the WM waits for an answer; the
compositor goes on, and the next X client gets a new Xwayland and WM whose
resizes wait for it again.
"""

import os
import re
import signal
import time

import apps
import duet
from duet import check
from test_apps_resize import SIZES, check_steps
from test_xwayland import need_xwayland, one_xwayland, shot_until, wait_for, xwayland_args

RED = (255, 0, 0)


def colour(w):
    """duet-x11-sync-client's colour at width w."""
    return (0, w & 0xff, 255)


def rect(win):
    return win.x, win.y, win.x + win.w, win.y + win.h


def count(img, c, x0, y0, x1, y1):
    x0, y0 = max(0, x0), max(0, y0)
    x1, y1 = min(img.width, x1), min(img.height, y1)
    return img.count_color(c, x0, y0, x1, y1) if x1 > x0 and y1 > y0 else 0


def shown_drawn(s, win_id, size, label, timeout=15):
    """The window listed at size and all of it in its colour of that size."""
    win = s.wait_window(pred=lambda w: w.id == win_id and (w.w, w.h) == size, timeout=timeout)
    shot_until(s, label, lambda img: check(
        count(img, colour(win.w), *rect(win)) == win.w * win.h,
        "%r is not all its colour %r" % (win, colour(win.w))), timeout=timeout)
    return win


def sync_client(s, *args, size=(200, 150)):
    p = s.client([duet.program("DUET_X11_SYNC_CLIENT"), "--size", "%dx%d" % size] + list(args),
                 name="sync-client")
    p.wait_line(r"^mapped ", timeout=30)
    win = s.wait_window(app_id="duet-sync", timeout=30)
    return p, shown_drawn(s, win.id, size, "sync-first")


def check_never_half_drawn(img, old, new, what):
    """No red anywhere (the server's fill of the resized window, shown
    before its client drew it), the old size's colour nowhere outside the
    old rectangle (the old drawing shown at the new size), and the new
    colour only inside the new one."""
    red = count(img, RED, 0, 0, img.width, img.height)
    check(red == 0, "%s: %d red pixels: the window shown at its new size before its client "
          "drew it" % (what, red))
    for win in (old, new):
        c = colour(win.w)
        outside = count(img, c, 0, 0, img.width, img.height) - count(img, c, *rect(win))
        check(outside == 0, "%s: %d pixels of %r's colour outside it" % (what, outside, win))


# ----------------------------------------------------------- the apps
def apps_frame_drawn(s):
    p = s.client([duet.program("DUET_LAUNCH"), "--backend", "x11", "--size", "300x200",
                  "--stay"], name="launch", env=apps.app_env())
    _, m = p.wait_line(r'^\{"name":"first_frame"', timeout=60)
    first = apps.records(m.string)[0]
    check(first["presentation"] == "frame-drawn", "duet-launch: %r" % first)
    p.stop()
    wait_for("duet-launch's window to go", lambda: not s.windows())

    recs = apps.run_app(s, [duet.program("DUET_RENDER"), "--backend", "x11", "--size", "320x240",
                            "--duration-ms", "2000", "--scenes", "rect_blend"], timeout=90)
    scenes = [r for r in recs if r["name"] == "scene"]
    check(len(scenes) == 1, "scenes %r" % scenes)
    sc = scenes[0]
    # Timed by the WM's answers. (How many of them the 60 Hz output's
    # frames gave, not the 200 ms timeout for frames nothing presents, is
    # a rate: not a pass criterion here, whatever the machine's load.)
    check(sc["presentation"] == "frame-drawn" and sc["presented"] > 0 and
          sc["presented"] + sc["discarded"] <= sc["frames"] + 1, "duet-render: %r" % sc)
    duet.log("duet-render: %d frames, %d presented, %d replaced unseen"
             % (sc["frames"], sc["presented"], sc["discarded"]))

    p = s.client([duet.program("DUET_RESIZE"), "--backend", "x11", "--mode", "server", "--runs",
                  "1", "--stay", "--size", "1920x1080"], name="resize-server",
                 env=apps.app_env())
    p.wait_line(r'"name":"resize_done"', timeout=120)
    recs = apps.records("\n".join(p.lines))
    check_steps(recs, "x11", "gl", "server", 1)
    steps = [r for r in recs if r["name"] == "resize"]
    check(all(st["presentation"] == "frame-drawn" for st in steps),
          "duet-resize steps: %r" % steps)
    check(len(steps) == len(SIZES), "steps %r" % steps)
    p.stop()


def alarms(s):
    """An unthrottled app's frames cost the WM at most three alarm events
    per frame it answers, not two per frame the app draws: the WM hears the
    next frame only once the last is answered (the frame's end; armed again
    mid-frame, the alarm fires at once with an odd value, a frame's start,
    once or twice before the end)."""
    recs = apps.run_app(s, [duet.program("DUET_RENDER"), "--backend", "x11", "--size", "320x240",
                            "--duration-ms", "2000", "--scenes", "rect_blend"], timeout=90)
    sc = [r for r in recs if r["name"] == "scene"][0]
    with open(s.compositor.stderr_path) as f:
        heard = len(re.findall(r": alarm at -?\d+$", f.read(), re.M))
    duet.log("duet-render: %d frames, %d presented; the WM heard %d alarm events"
             % (sc["frames"], sc["presented"], heard))
    check(sc["presentation"] == "frame-drawn" and sc["presented"] > 0, "duet-render: %r" % sc)
    check(0 < heard <= 3 * sc["presented"] + 4,
          "%d alarm events for %d frames answered (%d drawn): more than three per answer"
          % (heard, sc["presented"], sc["frames"]))


# ------------------------------------------------------------ resizes
# Distinct widths (mod 256), so that each size has its own colour.
ROUNDS = [(400, 300), (300, 220), (420, 260), (260, 200), (380, 320), (330, 240)]


def resize_waits(s):
    """The client answers 50 ms after each resize, within the WM's timeout
    (--xwayland-sync-timeout 60000 here, so that no load can turn the two
    round): every screenshot taken meanwhile shows the old drawing where
    it was, never the window at its new size before the client drew it."""
    p, old = sync_client(s, "--delay-ms", "50")
    shots = 0
    for size in ROUNDS:
        n = len(p.lines)
        s.testctl("resize", old.id, *size)
        new = [w for w in s.windows() if w.id == old.id][0]
        check((new.w, new.h) == size, "resized to %r" % (new,))
        while not any(line.startswith("drawn ") for line in p.lines[n:]):
            check_never_half_drawn(s.screenshot("sync-waiting"), old, new, "shot %d" % shots)
            shots += 1
            check(shots < 500 and p.alive(), "the client never redrew: %s" % p.lines[n:])
        check(any(line.startswith("sync-request ") for line in p.lines[n:]) and
              any(line.startswith("answered ") for line in p.lines[n:]),
              "no _NET_WM_SYNC_REQUEST answered before the resize: %s" % p.lines[n:])
        old = shown_drawn(s, old.id, size, "sync-answered")
    duet.log("%d screenshots while the client drew its %d resizes, none half drawn"
             % (shots, len(ROUNDS)))


def resize_timeout(s):
    p, old = sync_client(s, "--never-answer")
    for size in ((360, 240), (300, 200)):
        n = len(p.lines)
        t0 = time.monotonic()
        s.testctl("resize", old.id, *size)
        p.wait_line(r"^sync-request ", start=n, timeout=10)
        shown_drawn(s, old.id, size, "sync-timeout", timeout=5)
        duet.log("unanswered resize to %dx%d shown after %.0f ms"
                 % (size + ((time.monotonic() - t0) * 1000,)))
    check(p.alive(), "the client exited: %s" % p.stderr_tail())


def client_dies(s):
    p, old = sync_client(s, "--delay-ms", "10000")
    n = len(p.lines)
    s.testctl("resize", old.id, 400, 300)
    p.wait_line(r"^sync-request ", start=n, timeout=10)
    p.kill()
    wait_for("the window to go", lambda: not s.windows())
    s.check_alive()
    q, win = sync_client(s)
    n = len(q.lines)
    s.testctl("resize", win.id, 320, 200)
    q.wait_line(r"^answered ", start=n, timeout=10)
    shown_drawn(s, win.id, (320, 200), "sync-after-death")


def xwayland_killed(s):
    p, old = sync_client(s, "--delay-ms", "10000")
    n = len(p.lines)
    s.testctl("resize", old.id, 400, 300)
    p.wait_line(r"^sync-request ", start=n, timeout=10)
    pid = one_xwayland(s)
    os.kill(pid, signal.SIGKILL)
    check(p.wait(15) != 0, "the X client of the killed Xwayland exited 0")
    wait_for("the window to go", lambda: not s.windows())
    s.check_alive()
    q, win = sync_client(s)
    check(one_xwayland(s) != pid, "no new Xwayland")
    n = len(q.lines)
    s.testctl("resize", win.id, 320, 200)
    q.wait_line(r"^answered ", start=n, timeout=10)
    shown_drawn(s, win.id, (320, 200), "sync-new-xwayland")


def in_session(name, scenario, size="1024x768", more=(), env=None):
    def test():
        need_xwayland()
        os.environ.update(env or {})
        with duet.Session("xwayland-sync-" + name, size=size,
                          args=xwayland_args(*more)) as s:
            scenario(s)
            s.check_alive()
    return test


if __name__ == "__main__":
    duet.main_scenario({
        "apps-frame-drawn": in_session("apps", apps_frame_drawn, size=apps.SCREEN),
        "alarms": in_session("alarms", alarms, size=apps.SCREEN, env={"DUET_XWM_DEBUG": "1"}),
        "resize-waits": in_session("waits", resize_waits,
                                   more=("--xwayland-sync-timeout", "60000")),
        "resize-timeout": in_session("timeout", resize_timeout),
        "client-dies": in_session("dies", client_dies),
        "xwayland-killed": in_session("killed", xwayland_killed),
    })
