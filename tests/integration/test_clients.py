#!/usr/bin/env python3
"""Third-party clients from Debian reach a presented frame under
duet-compositor, and the screenshot shows their pixels where their window is.

usage: test_clients.py simple-shm|simple-egl|foot|glmark2|elementary
"""

import contextlib
import os
import sys

import duet
from duet import check

MAGENTA = (255, 0, 255)
# Client-side decorations and shadows may extend this far past the window
# geometry the compositor reports; beyond it the screen must be background.
DECORATION_MARGIN = 64


def stats(img, win, bg):
    x0, y0, x1, y1 = duet.clip_rect(img, win)
    area = max(1, (x1 - x0) * (y1 - y0))
    non_bg = area - img.count_color(bg, x0, y0, x1, y1)
    return area, non_bg, img.colors(x0, y0, x1, y1)


def content_check(min_non_bg, min_colors):
    """A window that mostly shows something other than the background, in
    enough distinct colours that it is the client's drawing, not a fill."""
    def checker(img, win, bg):
        area, non_bg, colors = stats(img, win, bg)
        check(non_bg >= min_non_bg * area,
              "only %d of %d pixels in %r differ from the background" % (non_bg, area, win))
        check(len(colors) >= min_colors,
              "only %d distinct colours in %r (want >= %d)" % (len(colors), win, min_colors))
        return "%d%% non-background, %d colours" % (100 * non_bg // area, len(colors))
    return checker


def magenta_background(img, win, name):
    """Checks that at least half of name's window is its magenta
    background; returns the window's rect clipped to the image, its area
    and how many of its pixels are magenta."""
    x0, y0, x1, y1 = duet.clip_rect(img, win)
    area = max(1, (x1 - x0) * (y1 - y0))
    magenta = img.count_color(MAGENTA, x0, y0, x1, y1)
    check(magenta >= 0.5 * area, "only %d of %d pixels of %s's window are its magenta background"
          % (magenta, area, name))
    return (x0, y0, x1, y1), area, magenta


def foot_check(img, win, bg):
    _, area, magenta = magenta_background(img, win, "foot")
    return "%d%% magenta" % (100 * magenta // area)


# name: (program, arguments, extra environment, pixel check, runs to its own exit)
CLIENTS = {
    "simple-shm": ("weston-simple-shm", [], {}, content_check(0.5, 16), False),
    "simple-egl": ("weston-simple-egl", [], {}, content_check(0.1, 16), False),
    "foot": ("foot", ["-o", "colors.background=ff00ff", "sleep", "120"], {},
             foot_check, False),
    "glmark2": ("glmark2-es2-wayland", ["-s", "400x300", "-b", "build:duration=4.0"], {},
                content_check(0.1, 16), True),
    "elementary": ("elementary_test", ["-to", "Button"], {"ELM_DISPLAY": "wl"},
                   content_check(0.5, 4), False),
}


@contextlib.contextmanager
def client_shown(session, clients, env=None, margin=0):
    """The client the one argument names (clients: name: program,
    arguments, extra environment, pixel check, runs to its own exit)
    started in session(name) with private config and cache dirs (the
    caller's foot.ini, X resources or EFL profile must not change what the
    test sees) and env on top, once its window passes the pixel check and
    all beyond margin of it is background (animated or slow-starting
    clients: retried until time runs out). Yields the session, the client,
    its window and whether it runs to its own exit; the servers must still
    be alive after the block."""
    name = sys.argv[1]
    exe, args, extra_env, pixel_check, exits = clients[name]
    path = duet.third_party(exe)
    with session(name) as s:
        bg = s.background()
        proc = s.client([path] + args, name=name,
                        env=dict(extra_env, XDG_CONFIG_HOME=os.path.join(s.workdir, "config"),
                                 XDG_CACHE_HOME=os.path.join(s.workdir, "cache"),
                                 HOME=s.workdir, **(env or {})))
        win = s.wait_window(pred=lambda w: w.pid in (0, proc.pid), timeout=40)
        duet.log("window %r" % (win,))
        win, what = s.wait_client_shown(proc, name, lambda img, win: pixel_check(img, win, bg), bg,
                                        margin=margin, exits=exits)
        duet.log("%s: %s in its %dx%d window at %d,%d"
                 % (name, what, win.w, win.h, win.x, win.y))
        yield s, proc, win, exits
        s.check_alive()


def check_exit(proc):
    status = proc.wait(60)
    check(status == 0, "%s exited %d; stderr:\n%s" % (proc.name, status, proc.stderr_tail()))


def test():
    with client_shown(lambda name: duet.Session("client-" + name), CLIENTS,
                      margin=DECORATION_MARGIN) as (s, proc, win, exits):
        if exits:
            check_exit(proc)


if __name__ == "__main__":
    duet.main(test)
