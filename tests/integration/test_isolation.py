#!/usr/bin/env python3
"""Fault isolation on every path (issue 45, item 2): a misbehaving client
costs only itself. Beside well-behaved clients, an offender commits one
fault; while it does and after, each well-behaved client must keep its
window (listed by the server where it was, as large), its input (a click
and a key injected through the test-only control path reach it: duet_test
on duet-compositor, XTEST on duet-xwm) and its frames (ten more drawn and
presented; an X client's frame count on the server's screenshot), and the
server's log must name the offender.

usage: test_isolation.py PATH:FAULT

PATH      the server, and the well-behaved clients beside the offender
  wayland   duet-compositor (headless), a Wayland client
            (duet-test-pattern --input)
  xwm       Xvfb + duet-xwm, an X client (duet-x11-test-pattern)
  xwayland  duet-compositor --xwayland, a Wayland client and an X client
            through Xwayland; Xwayland must stay the same process
FAULT     what the offender (duet-bad-client, duet-x11-bad-client) does
  budget           maps more than the server's texture budget, set to
                   BUDGET_MIB (Wayland: texture-budget, a 64 MiB surface;
                   X: big-window, a 2048x2048 window, 16 MiB): cut off
                   (duet-compositor) or not composited (duet-xwm); the
                   budgets' own tests are test_robustness.py,
                   test_xwm_budget.py and test_xwayland_budget.py
  die-mid-request  maps a window, writes part of a request (half a
                   wl_surface.damage; a ChangeProperty announcing 4 KiB,
                   16 bytes of it sent) and waits: the good clients are
                   checked while the server waits for the rest, then the
                   offender is SIGKILLed and they are checked again
  no-read          requests that make the server send it events, never
                   reading one (Wayland: wl_display.sync and get_registry;
                   X: ChangeProperty on a window it watches, ConfigureWindow
                   the window manager answers): checked while it fills its
                   socket; duet-compositor cuts it off once its buffer is
                   full, an X server buffers for it without end and the
                   offender is stopped after the checks
  flood            valid requests as fast as the server takes them
                   (Wayland: commits of 256 scattered damage rectangles,
                   frame callbacks, syncs; X: titles, size hints,
                   configures, client messages to the root): the good
                   clients are checked for FLOOD_S while it floods; an
                   X flooder is served last, or killed where the window
                   manager falls behind even so (fault_flood)
While an offender fills its socket or floods, each good client must also
draw at least MIN_RATE_SHARE of its frame rate before it.

The log names a Wayland offender by pid and what it did (WL_NAMED), an X
offender by the window of its that the window manager managed (its XID
carries the X client's base) and, over a budget, what it did (check_named).

PEER     a peer's stack instead (isolation_peers.py: by hand, not a meson
         test): weston, sway, mutter, e-wayland (a Wayland offender),
         openbox, i3, mutter-x11, e-x11 (an X offender on Xvfb),
         weston-xwayland, sway-xwayland, mutter-xwayland (an X offender
         through the peer's Xwayland); the checks that need no test-only
         control protocol, what the peer does with the offender recorded
         (docs/security.md, "The peers under the isolation tests")

The emulated guest's paths, client on the KMS backend and X client on
duet-xwm on Xorg, run every fault in one session each (run_all):
tests/kms/test_kms.py isolation, tests/kms/test_xorg.py isolation.
"""

import re
import signal
import sys
import time

import duet
from duet import check, log
from test_xwayland import wait_for
from test_xwayland_budget import counter_shown

BTN_LEFT = 272
KEY_A = 30  # evdev; X keycode 38
X_KEY_A = KEY_A + 8
FAULTS = ("budget", "die-mid-request", "no-read", "flood")
FLOOD_S = 2.0  # the good clients are checked this long during a flood
# Waits are this many times longer in the emulated guest (tests/kms).
SLOW = 4 if duet.KMS_GUEST else 1
WL_APP = duet.GOOD_APP_ID
X_APP = "duet-good-x-client"
BAD_WL_APP = "duet-bad-client"
BAD_X_APP = "duet-x11-bad-client"


def lines(proc, start=0):
    with proc._cond:
        return list(proc.lines[start:])


# ------------------------------------------------------ well-behaved clients
class Good:
    """A well-behaved client drawing on: kind "wayland" (duet-test-pattern
    --input, its frames presented when their frame callbacks come) or "x"
    (duet-x11-test-pattern, its frame count in its first pixel, read on
    the server's screenshots)."""

    def __init__(self, s, kind, app, at, size):
        self.s, self.kind, self.app = s, kind, app
        if kind == "wayland":
            argv = [duet.program("DUET_TEST_PATTERN"), "--frames", "100000000", "--input",
                    "--app-id", app, "--size", "%dx%d" % size]
        else:
            argv = [duet.program("DUET_X11_TEST_PATTERN"), "--frames", "100000000",
                    "--interval-ms", "20", "--class", app, "--size", "%dx%d" % size]
        self.proc = s.client(argv, name=app)
        self.proc.wait_line(r"^mapped %d %d$" % size, timeout=30 * SLOW)
        self.proc.wait_line(r"^frame 5$", timeout=30 * SLOW)
        win = s.wait_window(app_id=app, timeout=30 * SLOW)
        s.testctl("move", hex(win.id) if s.kind == "x11" else win.id, *at)
        self.win = s.wait_window(app_id=app, pred=lambda w: (w.x, w.y) == at, timeout=10 * SLOW)
        self.key = KEY_A if kind == "wayland" else X_KEY_A
        self.clicks = 0
        self.shown = 0  # the X client's frame count last seen on the screen

    def window(self, what):
        """Still listed, where and as large as it was."""
        win = self.s.wait_window(app_id=self.app, timeout=10 * SLOW)
        check((win.x, win.y, win.w, win.h) == (self.win.x, self.win.y, self.win.w, self.win.h),
              "%s: the good window %s moved or changed size: %r, was %r"
              % (what, self.app, win, self.win))
        return win

    def input(self, what):
        """A click on it (which focuses it) and a key pressed then reach it.
        An X window is raised first (_NET_ACTIVE_WINDOW, as a pager would):
        an offender's window duet-xwm does not draw (over its budget) is
        still mapped and on top, and an X server sends it the clicks."""
        s, p = self.s, self.proc
        mark = len(p.lines)
        self.clicks += 1
        x, y = self.win.x + 10 + self.clicks % 50, self.win.y + 10
        if self.kind == "x":
            s.testctl("activate", hex(self.win.id) if s.kind == "x11" else self.win.id)
        if s.kind == "x11":
            s.xctl("click", x, y)
            s.xctl("key", self.key)
        else:
            s.testctl("motion", x, y)
            s.testctl("button", BTN_LEFT, 1)
            s.testctl("button", BTN_LEFT, 0)
            s.testctl("key", KEY_A, 1)
            s.testctl("key", KEY_A, 0)
        if self.kind == "wayland":
            p.wait_line(r"^pointer-(enter|motion) %d 10$" % (x - self.win.x), start=mark,
                        timeout=10 * SLOW)
            p.wait_line(r"^pointer-button %d 1$" % BTN_LEFT, start=mark, timeout=10 * SLOW)
            p.wait_line(r"^key %d 1$" % KEY_A, start=mark, timeout=10 * SLOW)
        else:
            p.wait_line(r"^key %d$" % self.key, start=mark, timeout=10 * SLOW)

    def frames(self, what, shots=True):
        """Ten more frames drawn (and, for Wayland, presented); for X, with
        shots, a later frame count on the server's screenshot, the window's
        pattern exact."""
        if self.kind == "wayland":
            duet.check_good_keeps_going(self.s, self.proc, what)
            return
        drawn = duet.last_frame(self.proc)
        self.proc.wait_line(r"^frame (\d+)$", pred=lambda m: int(m.group(1)) >= drawn + 10,
                            timeout=15 * SLOW)
        if not shots:
            return
        label = re.sub(r"[^a-z0-9]+", "-", what.lower())[:30]
        self.shown = counter_shown(self.s, self.win, label, max(self.shown, drawn),
                                   timeout=15 * SLOW)

    def mark(self):
        return time.monotonic(), duet.last_frame(self.proc)

    def rate_since(self, mark):
        t0, f0 = mark
        return (duet.last_frame(self.proc) - f0) / max(time.monotonic() - t0, 1e-3)

    def check(self, what, shots=True):
        self.s.check_alive()
        check(self.proc.alive(), "%s: the good client %s died: %s"
              % (what, self.app, self.proc.stderr_tail()))
        t = [time.monotonic()]
        for part in (self.window, self.input, lambda what: self.frames(what, shots)):
            part(what)
            t.append(time.monotonic())
        log("%s: %s kept its window, input and frames (%.2f s: %.2f, %.2f, %.2f)"
            % (what, self.app, t[3] - t[0], t[1] - t[0], t[2] - t[1], t[3] - t[2]))


def check_goods(goods, what, shots=True):
    for g in goods:
        g.check(what, shots)


# While an offender misbehaves (rather than after), an X client's frames
# are checked on the server's screenshots too, but in the emulated guest:
# there a screenshot of Xorg's screen takes 5-10 s, and the checks after
# each fault show the frames composited.
SHOTS_DURING = not duet.KMS_GUEST


BASELINE_S = 1.0
# A good client's frame rate while an offender floods or fills its socket,
# at least this part of its rate before: a server busy with the offender
# (duet-compositor drawing a flood's thousands of damage rectangles one by
# one: 8 fps for 60) fails it.
# In the emulated guest the flooding client and the compositor's dispatch
# of its requests take both emulated CPUs, and llvmpipe's draws wait for
# them (29 frames a second before, 6.5 while a client floods; under ASan
# 20 and 2.3): there the frames must keep coming, a twentieth of the rate.
MIN_RATE_SHARE = 0.05 if duet.KMS_GUEST else 0.25


def measure_baselines(goods):
    marks = [g.mark() for g in goods]
    time.sleep(BASELINE_S)
    for g, m in zip(goods, marks):
        g.baseline = g.rate_since(m)
        log("%s draws %.1f frames a second" % (g.app, g.baseline))


def check_during(goods, what, keep_on, seconds):
    """check_goods over and over while keep_on() (at least once, at most
    for seconds), then each good client's frame rate meanwhile against its
    rate before."""
    marks = [g.mark() for g in goods]
    t0 = time.monotonic()
    rounds = 0
    while rounds == 0 or (keep_on() and time.monotonic() - t0 < seconds):
        check_goods(goods, what, SHOTS_DURING)
        rounds += 1
    for g, m in zip(goods, marks):
        rate = g.rate_since(m)
        log("%s: %s drew %.1f frames a second (%.1f before), %d rounds of checks in %.1f s"
            % (what, g.app, rate, g.baseline, rounds, time.monotonic() - t0))
        check(rate >= MIN_RATE_SHARE * g.baseline,
              "%s: %s drew %.1f frames a second, %.1f before: the server serves it less than "
              "%d%% of its rate" % (what, g.app, rate, g.baseline, 100 * MIN_RATE_SHARE))


# ------------------------------------------------------------------- paths
# The servers' texture budgets in these sessions, MiB: small, so that an
# offender goes over with little memory (a 2048x2048 X window, one 4096x4096
# Wayland surface); the default numbers are the per-budget tests'.
BUDGET_MIB = 8


class Path:
    """How a path's stack starts and where its well-behaved clients go."""
    name = None
    offender_kind = None  # "wayland" or "x"

    def session(self, name):
        raise NotImplementedError

    def goods(self, s):
        raise NotImplementedError

    def server_log(self, s):
        """The log of the server that names the offender."""
        return s.compositor.stderr_tail(1 << 22)

    def after(self, s):
        """Checks of the path's own at the end."""


class WaylandPath(Path):
    name = "wayland"
    offender_kind = "wayland"
    budget_args = ["--client-texture-budget", str(BUDGET_MIB)]

    def session(self, name):
        return duet.Session(name, args=self.budget_args)

    def goods(self, s):
        return [Good(s, "wayland", WL_APP, (20, 20), (200, 150))]


class XwmPath(Path):
    name = "xwm"
    offender_kind = "x"
    budget_args = ["--window-texture-budget", str(BUDGET_MIB)]

    def session(self, name):
        return duet.XSession(name, wm_args=self.budget_args)

    def goods(self, s):
        return [Good(s, "x", X_APP, (20, 20), (320, 240))]


class XwaylandPath(Path):
    name = "xwayland"
    offender_kind = "x"

    def session(self, name):
        import test_xwayland
        test_xwayland.need_xwayland()
        return duet.Session(name, args=test_xwayland.xwayland_args(
            "--client-texture-budget", str(BUDGET_MIB)))

    def goods(self, s):
        import test_xwayland
        goods = [Good(s, "wayland", WL_APP, (20, 20), (200, 150)),
                 Good(s, "x", X_APP, (240, 20), (320, 240))]
        self.xwayland = test_xwayland.one_xwayland(s)
        return goods

    def after(self, s):
        import test_xwayland
        check(test_xwayland.one_xwayland(s) == self.xwayland,
              "Xwayland is not the same process (was %d)" % self.xwayland)
        log("Xwayland pid %d all along" % self.xwayland)


PATHS = {p.name: p for p in (WaylandPath(), XwmPath(), XwaylandPath())}


# ------------------------------------------------------------------ faults
def offender(s, path, mode):
    """The offender, started; the server's log from now on is its
    (bad.log_from, for log_line)."""
    if path.offender_kind == "wayland":
        argv = [duet.program("DUET_BAD_CLIENT"), mode]
    else:
        # The flood's wait for its priority back: the window manager
        # first reads what it queued (in the emulated guest under ASan,
        # seconds of it).
        argv = [duet.program("DUET_X11_BAD_CLIENT"), "--hold", "--calm-wait", str(10 * SLOW),
                mode]
    log_from = len(path.server_log(s))
    bad = s.client(argv, name="offender")
    bad.log_from = log_from
    return bad


def offender_gone(s, path, bad, what):
    """The offender's windows left the window list."""
    app = BAD_WL_APP if path.offender_kind == "wayland" else BAD_X_APP
    wait_for("%s: the offender's windows to leave the list" % what,
             lambda: not [w for w in s.windows() if w.app_id == app], timeout=15 * SLOW)


def log_line(s, path, bad, pattern, what):
    """The server's line matching pattern (a regex) logged since bad
    started, waited for. (An X server gives a new client the XID base of
    one gone: the windows of the offenders of one session share ids.)"""
    m = wait_for("%s: the log line %r" % (what, pattern),
                 lambda: re.search(pattern, path.server_log(s)[bad.log_from:], re.M),
                 timeout=10 * SLOW)
    log("%s: logged: %s" % (what, m.group(0)))
    return m


def x_client(bad):
    """The X offender's client (its XID base) and window, as it prints them."""
    _, m = bad.wait_line(r"^client (0x[0-9a-f]+)$", timeout=30 * SLOW)
    _, w = bad.wait_line(r"^window (0x[0-9a-f]+)$", timeout=30 * SLOW)
    return int(m.group(1), 16), int(w.group(1), 16)


# What duet-compositor logs of a Wayland offender (compositor/core/client-log.c,
# surface.c's damage bound), by fault; %d is its pid.
WL_NAMED = {
    "die-mid-request": [r"client pid %d \(duet-bad-client\) left with 1 surface$"],
    "flood": [r"client pid %d damaged wl_surface@\d+ in more than \d+ rectangles before one "
              r"commit: their bounding box is taken",
              r"client pid %d \(duet-bad-client\) left with 1 surface$"],
    "no-read": [r"libwayland: error in client communication \(pid %d\)$",
                r"client pid %d \(duet-bad-client\) cut off: it does not read its socket "
                r"\(\d+ KiB of events unread, 1 surface\)$"],
}


def check_named(s, path, fault, bad, x=None):
    """The server's log names the offender. A Wayland offender by its pid
    and what it did (WL_NAMED). An X offender that floods by its X client
    (the window manager served it after the others: xwm-model/flood.c).
    Any other X offender by its window, whose XID carries its X client's
    base: neither X server logs what a client does, and the window manager
    sees a client that dies mid-request only as its window destroyed, one
    that reads nothing not at all (nothing is cut off), so the line is the
    one of its window managed."""
    if path.offender_kind == "wayland":
        for pattern in WL_NAMED[fault]:
            log_line(s, path, bad, pattern % bad.pid, fault)
        return
    base, window = x
    if fault == "flood":
        log_line(s, path, bad, r"X client 0x%x floods the window manager \(\d+ events for its "
                 r"windows in \d+ ms, the latest for 0x%x .*\): served after the other clients "
                 r"\(SYNC priority -1\), its properties unheard, while it does$"
                 % (base, window), fault)
    else:
        log_line(s, path, bad, r"managing 0x%x \"%s\".*$" % (window, fault), fault)
    log("%s: the offender is X client 0x%x" % (fault, base))


def fault_budget(s, path, goods):
    if path.offender_kind == "wayland":
        # Eight 4096x4096 surfaces: the first (64 MiB) is over.
        bad = offender(s, path, "texture-budget")
        status = bad.wait(60 * SLOW)
        check(status == 0, "duet-bad-client texture-budget did not get its no_memory error "
              "(status %d): %s" % (status, "\n".join(lines(bad))))
        log_line(s, path, bad, r"client pid %d over budget: wl_surface@\d+: textures of 64 MiB "
                 r"would exceed the client budget of %d MiB$" % (bad.pid, BUDGET_MIB), "budget")
    else:
        bad = offender(s, path, "big-window")
        base, window = x_client(bad)
        if s.kind == "x11":
            # duet-xwm does not composite the window, and goes on; the
            # client keeps it.
            bad.wait_line(r"^mapped 1$", timeout=30 * SLOW)
            log_line(s, path, bad, r"window 0x%x of 2048x2048 \(16 MiB\) is over the per-window "
                     r"texture budget \(%d MiB.*$" % (window, BUDGET_MIB), "budget")
            check_goods(goods, "budget, the offender holding its window", SHOTS_DURING)
            bad.stop()
        else:
            status = bad.wait(60 * SLOW)
            check(status != 0, "the offender exited %d: not disconnected" % status)
            log_line(s, path, bad, r"X client 0x%x \(pid %d\) over budget: window 0x%x: "
                     r"textures of 16 MiB would exceed the client budget of %d MiB: KillClient$"
                     % (base, bad.pid, window, BUDGET_MIB), "budget")
    offender_gone(s, path, bad, "budget")
    check_goods(goods, "after the budget")


def fault_die_mid_request(s, path, goods):
    bad = offender(s, path, "die-mid-request")
    x = x_client(bad) if path.offender_kind == "x" else None
    bad.wait_line(r"^partial \d+ of \d+ bytes$", timeout=30 * SLOW)
    check_goods(goods, "a request half sent", SHOTS_DURING)
    check(bad.alive(), "the offender exited before it was killed: %s" % bad.stderr_tail())
    bad.kill(signal.SIGKILL)
    bad.wait(10 * SLOW)
    log("SIGKILLed the offender (pid %d) half way through its request" % bad.pid)
    offender_gone(s, path, bad, "die-mid-request")
    check_goods(goods, "after the offender died")
    check_named(s, path, "die-mid-request", bad, x)


def check_priority(bad):
    """An X offender that flooded was served after the other clients (the
    window manager set its SYNC priority to -1: xwm-model/flood.c) and,
    calm since, got priority 0 back."""
    _, m = bad.wait_line(r"^priority (-?\d+) when it stopped$", timeout=5)
    _, c = bad.wait_line(r"^priority (-?\d+) after (\d+) ms of calm$", timeout=5)
    log("the offender's SYNC priority: %s when it stopped, %s after %s ms of calm"
        % (m.group(1), c.group(1), c.group(2)))
    check(int(m.group(1)) == -1, "the flooding X client's priority was %s, not -1: not served "
          "after the others" % m.group(1))
    check(int(c.group(1)) == 0, "the X client that stopped flooding has priority %s after %s ms, "
          "not 0 again" % c.groups())


def check_flood_killed(s, path, bad, x, status):
    """An X offender the window manager could not keep up with, even
    served last, was killed (xwm-model/flood.c): its connection broke, and
    the log names it."""
    _, m = bad.wait_line(r"^flood: the X connection broke after (\d+) requests$", timeout=5)
    check(status == 1, "the killed offender exited %d, not 1 (its X connection's error)" % status)
    log("the offender was killed after %s requests" % m.group(1))
    log_line(s, path, bad, r"X client 0x%x floods faster than the window manager reads, served "
             r"last \(\d+ ms behind\): killed \(KillClient\)$" % x[0], "flood")


def fault_flood(s, path, goods):
    """The good clients keep their rate during the flood. An X offender is
    served after them while it floods and gets its priority back when it
    stops; or, where the window manager falls behind even so (ASan, the
    emulated guest), it is killed, during the checks or before its SIGTERM
    is heard: either is checked, and said."""
    bad = offender(s, path, "flood")
    x = x_client(bad) if path.offender_kind == "x" else None
    bad.wait_line(r"^flooding$", timeout=30 * SLOW)
    t0 = time.monotonic()
    check_during(goods, "during the flood", bad.alive, FLOOD_S)
    killed_during = not bad.alive()
    if not killed_during:
        bad.kill(signal.SIGTERM)
    status = bad.wait(40 * SLOW)
    out = lines(bad)
    if path.offender_kind == "x" and any(l.startswith("flood: the X connection broke") for l in out):
        log("the flood ended after %.1f s: the offender was killed %s" % (
            time.monotonic() - t0, "during the checks" if killed_during else "before its SIGTERM"))
        check_flood_killed(s, path, bad, x, status)
    else:
        check(not killed_during, "the offender stopped flooding before the checks ended: %s"
              % "\n".join(out[-5:]))
        check(status == 0, "the offender's flood failed: %s %s"
              % ("\n".join(out[-5:]), bad.stderr_tail()))
        _, m = bad.wait_line(r"^flooded (\d+) requests", timeout=5)
        log("the offender flooded %s requests in %.1f s" % (m.group(1), time.monotonic() - t0))
        if path.offender_kind == "x":
            check_priority(bad)
    offender_gone(s, path, bad, "flood")
    check_goods(goods, "after the flood")
    check_named(s, path, "flood", bad, x)


def fault_no_read(s, path, goods):
    bad = offender(s, path, "no-read")
    x = x_client(bad) if path.offender_kind == "x" else None
    bad.wait_line(r"^not reading$", timeout=30 * SLOW)
    check_during(goods, "while the offender reads nothing", bad.alive, FLOOD_S)
    if path.offender_kind == "wayland":
        check(bad.wait(30 * SLOW) == 0, "duet-compositor did not disconnect the client that reads "
              "nothing: %s" % "\n".join(lines(bad)[-5:]))
        _, m = bad.wait_line(r"^disconnected after (\d+) requests in (\d+) ms$", timeout=5)
        log("the offender was disconnected after %s requests, %s ms" % m.groups())
    else:
        check(bad.alive(), "the offender ended: %s" % "\n".join(lines(bad)[-5:]))
        bad.kill(signal.SIGTERM)
        check(bad.wait(20 * SLOW) == 0, "the offender failed: %s" % "\n".join(lines(bad)[-5:]))
        _, m = bad.wait_line(r"^sent (\d+) requests", timeout=5)
        log("the offender sent %s requests and read no event" % m.group(1))
    offender_gone(s, path, bad, "no-read")
    check_goods(goods, "after the offender that reads nothing")
    check_named(s, path, "no-read", bad, x)


FAULT_RUNS = {"budget": fault_budget, "die-mid-request": fault_die_mid_request,
              "flood": fault_flood, "no-read": fault_no_read}


def run_fault(s, path, goods, fault):
    t0 = time.monotonic()
    FAULT_RUNS[fault](s, path, goods)
    s.check_alive()
    path.after(s)
    log("%s:%s done in %.1f s" % (path.name, fault, time.monotonic() - t0))


def run_case(path, faults, name):
    """faults, one after the other, in one session of path's named name."""
    with path.session(name) as s:
        goods = path.goods(s)
        check_goods(goods, "start")
        measure_baselines(goods)
        for fault in faults:
            run_fault(s, path, goods, fault)
        s.check_alive()


def run_all(path, name):
    """Every fault in one session (the emulated guest's paths: tests/kms)."""
    run_case(path, FAULTS, name)


def test():
    if len(sys.argv) != 2 or ":" not in sys.argv[1]:
        raise duet.Failure("usage: test_isolation.py PATH:FAULT (or PEER:FAULT)")
    path, fault = sys.argv[1].split(":", 1)
    import isolation_peers
    check((path in PATHS or path in isolation_peers.PEERS) and fault in FAULTS,
          "unknown case %r" % sys.argv[1])
    if path in isolation_peers.PEERS:
        isolation_peers.run_case(path, fault)
        return
    run_case(PATHS[path], [fault], "isolation-%s-%s" % (path, fault))


if __name__ == "__main__":
    duet.main(test)
