"""How often an X compositing manager that says nothing about its frames
painted: duet-paint-count (bench/probes/paint-count.c) on the stack's display.

xcompmgr (openbox), picom (i3), mutter --x11 and Enlightenment log no
frames, unlike duet's servers, weston and sway. The counter watches the
root window and the Composite overlay window with DAMAGE: apps' windows are
redirected, so what damages those is the CM's paints, one line each.
Paints closer together than one round trip to the X server count as one:
the count is a lower bound.

    pc = PaintCounter(st.display, env).start()   # ready: counting from here
    ... the app renders ...
    paints = pc.stop()                            # [ns, ...] (CLOCK_MONOTONIC)
    hz = paints_between(paints, t0, t1) / ((t1 - t0) / 1e9)
"""
import bisect
import collections
import json
import signal
import subprocess
import threading

from duet_launch import proc
from duet_launch.paths import PROBES, find_own


class PaintCountError(Exception):
    pass


def find_paint_count():
    return find_own("duet-paint-count", PROBES)


def paints_between(ns_list, t0, t1):
    """How many of the paint times ns_list (ascending, as stop() gives
    them) fall in [t0, t1)."""
    return bisect.bisect_left(ns_list, t1) - bisect.bisect_left(ns_list, t0)


class PaintCounter:
    """duet-paint-count on the X display (":N"); env is the environment it
    runs in (the bench's, not the measured processes')."""

    def __init__(self, display, env, exe=None):
        self.exe = exe or find_paint_count()
        if not self.exe:
            raise PaintCountError("duet-paint-count is not built (bench/probes/duet-paint-count in the "
                                  "build dir; it needs libxcb-damage, -composite and -res)")
        self.argv = [self.exe, "--display", display]
        self.env = env
        self.child = None
        self.ready = None  # the paint_count_ready line: root, overlay, cm_owner
        self.done = None   # the paint_count_done line: paints, merged, cpu_ns
        self.paint_lines = []  # stop()'s paint lines: ns, target ("root" or "overlay")
        self.stderr = collections.deque(maxlen=5)  # its last lines there
        self._reader = None

    def start(self, timeout=10.0):
        """Starts counting; returns self once the counter is ready. Raises
        PaintCountError with its reason if it is not (no compositing
        manager on the display, no DAMAGE, the display gone)."""
        self.child = proc.Child("paint-count", self.argv, self.env, lines=True,
                                stderr=subprocess.PIPE)
        # Read as it comes: a full pipe would stop the counter.
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        try:
            i, _ = self.child.wait_line(r'"name":"paint_count_ready"', proc.patience(timeout))
        except proc.LineTimeout as e:
            self.child.stop()
            self._reader.join(2)
            raise PaintCountError("duet-paint-count on %s: %s%s"
                                  % (self.argv[2], e, self._said())) from None
        self.ready = json.loads(self.child.lines[i])
        return self

    def _read_stderr(self):
        for raw in self.child.popen.stderr:
            self.stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def _said(self):
        return (": " + "; ".join(self.stderr)) if self.stderr else ""

    def stop(self, timeout=5.0):
        """Stops counting (SIGTERM) and returns the paint times, ns
        ascending. Raises PaintCountError if it ended without its done
        line (it lost the display, or crashed)."""
        if self.child is None:
            raise PaintCountError("duet-paint-count was never started")
        self.child.signal(signal.SIGTERM)
        try:
            self.child.wait(proc.patience(timeout))
        except subprocess.TimeoutExpired:
            pass
        status = self.child.status()
        self.child.stop()
        self._reader.join(2)
        for line in self.child.lines:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("name") == "paint":
                self.paint_lines.append(ev)
            elif ev.get("name") == "paint_count_done":
                self.done = ev
        if self.done is None or status != "exited with status 0":
            raise PaintCountError("duet-paint-count on %s %s%s" % (
                self.argv[2], status if self.done else
                "ended without its done line (%s)" % status, self._said()))
        return [ev["ns"] for ev in self.paint_lines]


SOURCE = "duet-paint-count (DAMAGE on the CM's root and overlay windows)"


def for_stack(stack):
    """A started PaintCounter on a stack whose compositing manager tells no
    one how many frames it paints (StackKind.paints_untold), or None; and
    why none, where one was due. Its cost to the measured X server: one
    DamageNotify and one DamageSubtract per paint."""
    if not stack.spec.paints_untold:
        return None, None
    try:
        return PaintCounter(stack.display, stack.base_env).start(), None
    except PaintCountError as e:
        return None, str(e)


def stop(counter):
    """(paint times, None), or (None, why) if the counter failed."""
    try:
        return counter.stop(), None
    except PaintCountError as e:
        return None, str(e)
