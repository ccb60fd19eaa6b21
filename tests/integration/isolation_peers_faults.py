"""The four faults against a peer (isolation_peers.py): the offender
started, the good clients checked while it misbehaves and after, what the
peer did with it recorded (isolation_peers_record.py)."""

import signal
import threading
import time

import duet
from duet import check, log

import test_isolation as iso
from test_isolation import SLOW
from test_xwayland import wait_for
from isolation_peers_record import log_marks, peer_note, said_since
from isolation_peers_x import x_window

# What an offender's allocation may cost a peer at most, MiB (Wayland:
# eight 64 MiB textures and the 64 MiB buffer; X: a 2048x2048 window, its
# pixmap and a compositing manager's copy), and what must stay free beside
# it: the machine is shared.
BUDGET_COST_MIB = {"wayland": 576, "x": 64}
SPARE_MIB = 512
STOP_BELOW_MIB = 256  # the offender is SIGKILLed if available memory falls below


def mem_available_mib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    return 0


def offender(s, path, mode):
    if path.offender_kind == "wayland":
        argv = [duet.program("DUET_BAD_CLIENT"), mode]
    else:
        argv = [duet.program("DUET_X11_BAD_CLIENT"), "--hold", mode]
    bad = s.client(argv, name="offender")
    bad.marks = None
    return bad


def offender_gone(s, path, bad, what):
    """The X offender's windows left the window manager's list."""
    if path.offender_kind != "x":
        return
    wait_for("%s: the offender's window to go" % what,
             lambda: x_window(s, bad.xid, iso.BAD_X_APP) is None, timeout=15 * SLOW)


def end_of(bad, timeout):
    """The offender's exit status, or None if it still runs after timeout."""
    try:
        return bad.wait(timeout)
    except duet.Failure:
        return None


def stop(bad, sig=signal.SIGTERM):
    if bad.alive():
        bad.kill(sig)
    return end_of(bad, 20 * SLOW)


def tail(bad, n=3):
    return " | ".join(iso.lines(bad)[-n:]) or "(nothing)"


# ---------------------------------------------------------------- the faults
class MemoryWatch:
    """SIGKILLs the offender if the machine's available memory falls below
    STOP_BELOW_MIB while it runs; lowest is the least seen."""

    def __init__(self, bad):
        self.bad, self.stopped, self.lowest = bad, False, mem_available_mib()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done.wait(0.05) and self.bad.alive():
            now = mem_available_mib()
            self.lowest = min(self.lowest, now)
            if now < STOP_BELOW_MIB:
                self.stopped = True
                self.bad.kill(signal.SIGKILL)
                return

    def end(self):
        self.done.set()
        self.thread.join()
        log("available memory at its lowest meanwhile: %d MiB" % self.lowest)
        if self.stopped:
            peer_note("the offender was SIGKILLed: the machine had less than %d MiB available"
                      % STOP_BELOW_MIB)


def fault_budget(s, path, goods):
    need = BUDGET_COST_MIB[path.offender_kind] + SPARE_MIB
    have = mem_available_mib()
    if have < need:
        raise duet.Skip("budget: not run: %d MiB available, the offender may cost the peer %d "
                        "and %d must stay free" % (have, BUDGET_COST_MIB[path.offender_kind],
                                                   SPARE_MIB))
    marks = log_marks(s)
    if path.offender_kind == "wayland":
        # Eight 4096x4096 surfaces from one sparse memfd (64 MiB each).
        bad = offender(s, path, "texture-budget")
        watch = MemoryWatch(bad)
        status = end_of(bad, 60 * SLOW)
        watch.end()
        peer_note("the offender %s: %s" % (
            "still runs after 60 s" if status is None else "exited %d" % status, tail(bad)))
        stop(bad, signal.SIGKILL)
    else:
        bad = offender(s, path, "big-window")
        bad.xid = iso.x_client(bad)[1]
        watch = MemoryWatch(bad)
        bad.wait_line(r"^mapped 1$", timeout=30 * SLOW)
        failed = []
        during(s, goods, "budget, the offender holding its window", None, 0, failed)
        watch.end()
        win = x_window(s, bad.xid, iso.BAD_X_APP)
        peer_note("the offender %s; its window %s" % (
            "still connected" if bad.alive() else "gone (%s)" % bad.status(),
            "viewable, %dx%d" % (win.w, win.h) if win else "not viewable"))
        stop(bad)
    said_since(s, marks)
    offender_gone(s, path, bad, "budget")
    iso.check_goods(goods, "after the budget")
    if path.offender_kind == "x":
        check(not failed, "; ".join(failed) + " (after it: all kept)")


def started_offender(s, path, mode, ready):
    """The offender of mode once it printed ready (a regular expression);
    an X one's client base in bad.xid."""
    bad = offender(s, path, mode)
    if path.offender_kind == "x":
        bad.xid = iso.x_client(bad)[1]
    bad.wait_line(ready, timeout=30 * SLOW)
    return bad


def fault_die_mid_request(s, path, goods):
    marks = log_marks(s)
    bad = started_offender(s, path, "die-mid-request", r"^partial \d+ of \d+ bytes$")
    failed = []
    during(s, goods, "a request half sent", None, 0, failed)
    check(bad.alive(), "the offender exited before it was killed: %s" % bad.stderr_tail())
    bad.kill(signal.SIGKILL)
    bad.wait(10 * SLOW)
    log("SIGKILLed the offender (pid %d) half way through its request" % bad.pid)
    offender_gone(s, path, bad, "die-mid-request")
    said_since(s, marks)
    iso.check_goods(goods, "after the offender died")
    check(not failed, "; ".join(failed) + " (after it: all kept)")


def during(s, goods, what, keep_on, seconds, failed):
    """iso.check_during, its failure recorded in failed and the fault
    carried on (the stack whole): whether the good clients are back once
    the offender stops is the record's too."""
    try:
        if keep_on is None:
            iso.check_goods(goods, what)
        else:
            iso.check_during(goods, what, keep_on, seconds)
    except duet.Failure as e:
        s.check_alive()
        failed.append(str(e))
        log("FAILED %s" % e)


def fault_flood(s, path, goods):
    marks = log_marks(s)
    bad = started_offender(s, path, "flood", r"^flooding$")
    t0 = time.monotonic()
    failed = []
    during(s, goods, "during the flood", bad.alive, iso.FLOOD_S, failed)
    alive = bad.alive()
    status = stop(bad)
    took = time.monotonic() - t0
    peer_note("the offender %s; %s" % (
        "flooded until stopped" if alive else "ended before the checks did (status %s)" % status,
        tail(bad)))
    log("the flood lasted %.1f s" % took)
    offender_gone(s, path, bad, "flood")
    said_since(s, marks)
    iso.check_goods(goods, "after the flood")
    check(not failed, "; ".join(failed) + " (after the flood: all kept)")


def fault_no_read(s, path, goods):
    marks = log_marks(s)
    bad = started_offender(s, path, "no-read", r"^not reading$")
    failed = []
    during(s, goods, "while the offender reads nothing", bad.alive, iso.FLOOD_S, failed)
    if path.offender_kind == "wayland":
        status = end_of(bad, 30 * SLOW)
        peer_note("the offender %s: %s" % (
            "still connected 30 s later" if status is None else "exited %d" % status, tail(bad)))
        stop(bad, signal.SIGKILL)
    else:
        alive = bad.alive()
        status = stop(bad)
        peer_note("the offender %s (stopped: %s): %s" % (
            "still connected" if alive else "gone before it was stopped", status, tail(bad)))
    offender_gone(s, path, bad, "no-read")
    said_since(s, marks)
    iso.check_goods(goods, "after the offender that reads nothing")
    check(not failed, "; ".join(failed) + " (after it: all kept)")


FAULT_RUNS = {"budget": fault_budget, "die-mid-request": fault_die_mid_request,
              "flood": fault_flood, "no-read": fault_no_read}
