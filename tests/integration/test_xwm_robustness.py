#!/usr/bin/env python3
"""A misbehaving or killed X11 client neither crashes nor stalls duet-xwm,
and another window keeps being composited: its animated counter pixel keeps
changing in duet-xwm's screenshots.

usage: test_xwm_robustness.py MODE | kill-clients
  MODE: a duet-x11-bad-client mode (destroy-after-map, bad-normal-hints,
        bad-properties, configure-flood, die-mid-request)
"""

import random
import signal
import sys
import time

import duet
from duet import check

GOOD = "duet-good-client"
BAD = "duet-x11-bad-client"
MAX_SIDE = 32767  # what the X protocol can express at all
SYNC_LIMIT_S = 20  # "not stalled": every sync answered within this


def start_good(s):
    good = s.client([duet.program("DUET_X11_TEST_PATTERN"), "--frames", "100000000",
                     "--interval-ms", "20", "--class", GOOD, "--size", "200x150"], name="good")
    good.wait_line(r"^mapped 200 150$")
    good.wait_line(r"^frame 5$")
    return good, s.wait_window(app_id=GOOD)


def counter(img, win):
    r, g, b = img.pixel(win.x, win.y)
    return r << 16 | g << 8 | b


def check_composited(s, good, what):
    """The good window is still shown exactly (but for its counter pixel),
    and its counter advances from one composited frame to the next."""
    t0 = time.monotonic()
    s.xctl("--timeout", SYNC_LIMIT_S, "sync", timeout=SYNC_LIMIT_S + 10)
    duet.log("sync after %s answered in %.2f s" % (what, time.monotonic() - t0))
    s.check_alive()
    check(good.alive(), "the good client died after %s: %s" % (what, good.stderr_tail()))
    win = s.wait_window(app_id=GOOD)
    # Every window is centered, so the bad ones may cover the good one:
    # raise it (which also checks that activate still works).
    s.xctl("activate", hex(win.id))
    s.sync()
    win = s.wait_window(app_id=GOOD)

    def shown(img):
        bad, ex = duet.pattern_mismatches(img, win, skip_counter_pixel=True)
        check(bad == 0, "the good window %r is not shown exactly after %s: %d pixels, e.g. %s"
              % (win, what, bad, ex))
        return counter(img, win)
    _, first = s.screenshot_until(shown, "good-a")

    def advanced(img):
        n = shown(img)
        check(n > first, "the good window's counter stays at %d after %s: duet-xwm stopped "
              "compositing it" % (n, what))
        return n
    _, second = s.screenshot_until(advanced, "good-b", timeout=10)
    duet.log("after %s: good window composited, counter %d -> %d" % (what, first, second))


def windows_of(s, cls):
    return [w for w in s.windows() if w.app_id == cls]


def check_sane(wins, what):
    for w in wins:
        check(1 <= w.w <= MAX_SIDE and 1 <= w.h <= MAX_SIDE,
              "%s: window %r has an absurd size" % (what, w))


def wait_only_good(s):
    deadline = time.monotonic() + 10
    while True:
        s.sync()
        wins = s.windows()
        if [w.app_id for w in wins] == [GOOD]:
            return
        check(time.monotonic() < deadline, "expected only %s, windows are %r" % (GOOD, wins))
        time.sleep(0.1)


def run_bad(s, mode, hold=False):
    argv = [duet.program("DUET_X11_BAD_CLIENT")] + (["--hold"] if hold else []) + [mode]
    if hold:
        return s.client(argv, name="bad")
    r = s.run(argv, timeout=60)
    duet.log("duet-x11-bad-client %s: status %d: %s%s" % (mode, r.returncode, r.stdout,
                                                           r.stderr))
    check(r.returncode == 0, "duet-x11-bad-client %s failed (%d): %s"
          % (mode, r.returncode, r.stderr))
    return None


def one_shot(s, good, mode):
    run_bad(s, mode)
    check_composited(s, good, mode)
    wait_only_good(s)


def bad_normal_hints(s, good, mode):
    bad = run_bad(s, mode, hold=True)
    _, m = bad.wait_line(r"^mapped (\d+)$")
    n = int(m.group(1))
    check_composited(s, good, mode)
    wins = windows_of(s, BAD)
    check(len(wins) == n, "%d of %d windows with malformed WM_NORMAL_HINTS are managed: %r"
          % (len(wins), n, wins))
    check_sane(wins, mode)
    # A WM resize reads the hints again, to constrain the size.
    for w in wins:
        s.xctl("resize", hex(w.id), 300, 200)
    check_composited(s, good, mode + " + resizes")
    wins = windows_of(s, BAD)
    check_sane(wins, mode + " + resizes")
    duet.log("sizes after resizing to 300x200: %s"
             % ", ".join("%s %dx%d" % (w.title.split()[-1], w.w, w.h) for w in wins))
    bad.stop()
    wait_only_good(s)


def bad_properties(s, good, mode):
    bad = run_bad(s, mode, hold=True)
    bad.wait_line(r"^mapped 1$")
    check_composited(s, good, mode)
    wins = [w for w in s.windows() if w.pid in (0, bad.pid) and w.app_id != GOOD]
    check(len(wins) == 1, "the window with ill-formed properties is not managed: %r"
          % s.windows())
    check_sane(wins, mode)
    s.xctl("close", hex(wins[0].id))  # its WM_PROTOCOLS is garbage
    s.xctl("activate", hex(wins[0].id))
    check_composited(s, good, mode + " + close/activate")
    bad.stop()
    wait_only_good(s)


def configure_flood(s, good, mode):
    bad = run_bad(s, mode, hold=True)
    bad.wait_line(r"^flooded \d+$", timeout=60)
    check_composited(s, good, mode)
    wins = windows_of(s, BAD)
    check(len(wins) == 1, "the flooding window is not managed: %r" % s.windows())
    check_sane(wins, mode)
    duet.log("flooding window ended at %r" % (wins[0],))
    bad.stop()
    wait_only_good(s)


def kill_clients(s, good, mode):
    rng = random.Random(3)
    for i in range(3):
        victim = s.client([duet.program("DUET_X11_TEST_PATTERN"), "--frames", "100000000",
                           "--interval-ms", "5", "--class", "victim", "--size", "400x300"],
                          name="victim")
        victim.wait_line(r"^mapped 400 300$")
        time.sleep(rng.uniform(0.05, 0.5))
        victim.kill(signal.SIGKILL)
        victim.wait(10)
        duet.log("round %d: SIGKILLed a drawing client" % (i + 1))
        check_composited(s, good, "SIGKILL of a client")
        wait_only_good(s)


SCENARIOS = {"destroy-after-map": one_shot, "die-mid-request": one_shot,
             "bad-normal-hints": bad_normal_hints, "bad-properties": bad_properties,
             "configure-flood": configure_flood, "kill-clients": kill_clients}


def test():
    mode = sys.argv[1]
    with duet.XSession("xwm-robust-" + mode) as s:
        good, _ = start_good(s)
        check_composited(s, good, "start")
        SCENARIOS[mode](s, good, mode)
        # Never left grabbed: another client's requests still get answers.
        s.xctl("windows", timeout=10)
        s.check_alive()


if __name__ == "__main__":
    duet.main(test)
