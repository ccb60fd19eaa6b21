#!/usr/bin/env python3
"""duet-xctl's requests for WMs other than duet-xwm, as the client matrix
uses them on openbox + xcompmgr: `moveresize` (EWMH _NET_MOVERESIZE_WINDOW)
resizes an xterm, and `key` with two keycodes is a chord (Control+D ends
the xterm's shell, and the xterm with it).

usage: test_xctl_ewmh.py
"""

import time

import duet
from duet import check

CONTROL_L, D = 37, 40  # X keycodes: evdev 29 and 32, + 8


def test():
    xterm = duet.third_party("xterm")
    with duet.XSession("xctl-ewmh", wm="openbox") as s:
        p = s.client([xterm, "-geometry", "40x10", "-e", "sh"], env={"XENVIRONMENT": "/dev/null"})
        win = s.wait_window(pred=lambda w: w.pid in (0, p.pid), timeout=30)
        duet.log("xterm %r" % (win,))
        s.xctl("moveresize", win.id, 500, 400)
        deadline = time.monotonic() + 10
        while True:
            win = s.wait_window(pred=lambda w: w.id == win.id)
            # xterm rounds to whole character cells.
            if abs(win.w - 500) < 16 and abs(win.h - 400) < 24:
                break
            check(time.monotonic() < deadline, "asked 500x400, xterm is %dx%d" % (win.w, win.h))
            time.sleep(0.1)
        s.xctl("activate", win.id)
        time.sleep(0.3)
        s.xctl("key", CONTROL_L, D)
        check(p.wait(10) == 0, "xterm did not exit 0 after Control+D")
        s.check_alive()


if __name__ == "__main__":
    duet.main(test)
