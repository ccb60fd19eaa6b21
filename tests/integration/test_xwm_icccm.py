#!/usr/bin/env python3
"""duet-xwm follows the ICCCM / EWMH where a client can tell: each case is
a mode of duet-x11-wm-check (tests/clients/x11-wm-check.c), which asks and
checks the answer itself.

usage: test_xwm_icccm.py selections|iconic|focus-time|dialog
  selections  WM_S0 (ICCCM 2.8) and _NET_WM_CM_S0 are owned
  iconic      WM_HINTS initial_state IconicState: the window stays unmapped
              with WM_STATE Iconic, listed, until activated
  focus-time  focus after a map carries the server's current time, not
              CurrentTime and not a stale time (WM_TAKE_FOCUS shows it)
  dialog      a _NET_WM_WINDOW_TYPE_DIALOG with WM_TRANSIENT_FOR is
              centered over its parent
"""

import sys

import duet
from duet import check


def test():
    case = sys.argv[1]
    with duet.XSession("xwm-icccm-" + case, screenshots=False) as s:
        r = s.run([duet.program("DUET_X11_WM_CHECK"), case], timeout=60)
        duet.log("duet-x11-wm-check %s: %s%s" % (case, r.stdout, r.stderr))
        check(r.returncode == 0, "duet-x11-wm-check %s failed (%d): %s"
              % (case, r.returncode, r.stderr.strip()))
        s.xctl("sync")
        s.check_alive()


if __name__ == "__main__":
    duet.main(test)
