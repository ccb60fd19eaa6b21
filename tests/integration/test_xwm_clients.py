#!/usr/bin/env python3
"""Third-party X11 clients from Debian are managed by duet-xwm, composited,
and visible in its screenshot where their windows are.

usage: test_xwm_clients.py xterm|glmark2|elementary
"""

import os

import duet
from duet import check
from test_clients import check_exit, client_shown, content_check, magenta_background


def xterm_check(img, win, bg):
    (x0, y0, x1, y1), area, magenta = magenta_background(img, win, "xterm")
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
    # No decorations on either stack: beyond the window's own rectangle
    # the screen is background (no margin).
    with client_shown(lambda name: duet.XSession("xwm-client-" + name), CLIENTS,
                      env={"XENVIRONMENT": os.devnull}) as (s, proc, win, exits):
        check(win.focused == 1, "%s's window is not focused: %r" % (proc.name, s.windows()))
        if exits:
            check_exit(proc)
            s.sync()
            check(not s.windows(), "windows left after %s exited: %r" % (proc.name, s.windows()))


if __name__ == "__main__":
    duet.main(test)
