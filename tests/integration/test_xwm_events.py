#!/usr/bin/env python3
"""duet-xwm answers every event, however the X server's traffic falls:

  queued-events  duet-xwm preloaded with a fault injector that makes xcb's
                 own polls late by 1 ms (as on a loaded machine), and a
                 client that maps and destroys 400 windows, mapping each
                 after a delay that sweeps the time duet-xwm spends on its
                 CreateNotify. Events that xcb read while duet-xwm wrote
                 sat in its queue while it slept in poll(): a map that was
                 never answered (the bench saw it as "the window was not
                 mapped within 20000 ms"). Every map and every withdrawal
                 must be answered; the client waits for each before the
                 next, so one that is never answered stalls the storm.
  no-mit-shm     an X server without MIT-SHM: duet-xwm starts (it sent
                 MIT-SHM's version request anyway, and xcb shuts a
                 connection that uses an absent extension), composites a
                 window exactly, and answers the map storm.

usage: test_xwm_events.py queued-events|no-mit-shm
"""

import sys

import duet
from duet import check

SIZE = "1024x768"
LATE_POLL_US = 1000


def storm(s, maps):
    # 30 s a map is a hang guard only: under qemu-aarch64 beside other
    # tests, duet-xwm's first map (its first composite) once took over 2 s.
    r = s.run([duet.program("DUET_X11_MAP_STORM"), "--maps", str(maps), "--timeout-ms", "30000"],
              timeout=maps * 4 + 60)
    s.check_alive()
    check(r.returncode == 0 and r.stdout.strip() == "mapped %d" % maps,
          "duet-xwm did not answer every map: status %d, %s%s"
          % (r.returncode, r.stdout.strip(), r.stderr.strip()))
    duet.log("all %d maps and withdrawals answered" % maps)


def queued_events():
    env = {"LD_PRELOAD": duet.program("DUET_LATE_POLL"),
           "DUET_LATE_POLL_US": str(LATE_POLL_US),
           # The sanitizer build's runtime need not come first for this.
           "ASAN_OPTIONS": "verify_asan_link_order=0"}
    with duet.XSession("xwm-events-queued", size=SIZE, wm_env=env) as s:
        storm(s, 400)


def no_mit_shm():
    with duet.XSession("xwm-events-no-mit-shm", size=SIZE,
                       xvfb_args=["-extension", "MIT-SHM"]) as s:
        bg = s.background()
        p = s.client([duet.program("DUET_X11_TEST_PATTERN"), "--size", "300x200",
                      "--class", "no-shm"], name="no-shm")
        p.wait_line(r"^mapped 300 200$")
        win = s.wait_window(app_id="no-shm")

        def exact(img):
            bad, examples = duet.pattern_mismatches(img, win)
            check(bad == 0, "%d pixels of %r differ from the pattern: %s" % (bad, win, examples))
            duet.check_outside_is_background(img, win, bg)
        s.screenshot_until(exact, "no-mit-shm")
        storm(s, 100)


SCENARIOS = {"queued-events": queued_events, "no-mit-shm": no_mit_shm}


if __name__ == "__main__":
    duet.main(SCENARIOS[sys.argv[1]])
