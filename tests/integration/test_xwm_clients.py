#!/usr/bin/env python3
"""Third-party X11 clients from Debian are managed by duet-xwm, composited,
and visible in its screenshot where their windows are.

usage: test_xwm_clients.py xterm|glmark2|elementary
"""

import os
import sys

import duet
from duet import check
from test_clients import content_check

MAGENTA = (255, 0, 255)


def xterm_check(img, win, bg):
    x0, y0, x1, y1 = duet.clip_rect(img, win)
    area = max(1, (x1 - x0) * (y1 - y0))
    magenta = img.count_color(MAGENTA, x0, y0, x1, y1)
    check(magenta >= 0.5 * area, "only %d of %d pixels of xterm's window are its magenta "
          "background" % (magenta, area))
    # The text (the prompt of `sh`, in black) is drawn too.
    black = img.count_color((0, 0, 0), x0, y0, x1, y1)
    check(black > 0, "no text pixels in xterm's window")
    return "%d%% magenta, %d text pixels" % (100 * magenta // area, black)


# name: (program, arguments, extra environment, pixel check, runs to its own exit)
CLIENTS = {
    "xterm": ("xterm", ["-bg", "magenta", "-fg", "black", "-geometry", "60x15",
                        "-e", "sh", "-c", "echo duet; sleep 120"], {}, xterm_check, False),
    # glmark2's X11 build; a short run that ends by itself.
    "glmark2": ("glmark2-es2", ["-s", "400x300", "-b", "build:duration=3.0"], {},
                content_check(0.1, 16), True),
    "elementary": ("elementary_test", ["-to", "Button"], {"ELM_DISPLAY": "x11"},
                   content_check(0.5, 4), False),
}


def test():
    name = sys.argv[1]
    exe, args, extra_env, pixel_check, exits = CLIENTS[name]
    path = duet.third_party(exe)
    with duet.XSession("xwm-client-" + name) as s:
        bg = s.background()
        env = dict(extra_env)
        # Private config and cache dirs: the caller's X resources or EFL
        # profile must not change what the test sees.
        env["XDG_CONFIG_HOME"] = os.path.join(s.workdir, "config")
        env["XDG_CACHE_HOME"] = os.path.join(s.workdir, "cache")
        env["HOME"] = s.workdir
        env["XENVIRONMENT"] = os.devnull
        proc = s.client([path] + args, name=name, env=env)

        def ours(w):
            return w.pid in (0, proc.pid)
        win = s.wait_window(pred=ours, timeout=40)
        duet.log("managed: %r" % (win,))
        # Animated or slow-starting clients: retry until the composited
        # frame passes, or time runs out. No decorations on either stack:
        # beyond the window's own rectangle the screen is background.
        win, what = s.wait_client_shown(proc, name, lambda img, win: pixel_check(img, win, bg), bg,
                                        exits=exits)
        duet.log("%s: %s in its %dx%d window at %d,%d"
                 % (name, what, win.w, win.h, win.x, win.y))
        check(win.focused == 1, "%s's window is not focused: %r" % (name, s.windows()))
        if exits:
            status = proc.wait(60)
            check(status == 0, "%s exited %d; stderr:\n%s" % (name, status, proc.stderr_tail()))
            s.sync()
            check(not s.windows(), "windows left after %s exited: %r" % (name, s.windows()))
        s.check_alive()


if __name__ == "__main__":
    duet.main(test)
