"""The vfb experiment's moving window: a pager's moves, from a thread of
the bench, through the control tools (duet-testctl move on duet-compositor,
duet_test.move_window; duet-xctl move on X, _NET_MOVERESIZE_WINDOW), one
tool run per step. Each run costs a process start, on the same CPUs as the
stack: the record says so."""
import os
import subprocess
import threading
import time

from duet_bench import procs
from duet_launch import paths

STEP_PX = 24            # not a multiple of 32: the window straddles tiles
INTERVAL_S = 0.05       # 20 moves a second
SPAN = (100, 1300)      # x goes back and forth between these; y stays
Y = 200
NOTE = ("the window is moved %d px every %d ms by one run of the control tool (duet-testctl "
        "move / duet-xctl move, as a pager): each run is a process start on the stack's "
        "CPUs" % (STEP_PX, int(INTERVAL_S * 1000)))


def tool(stack):
    """(argv prefix, env) of the stack's control tool, or None."""
    if stack.kind == "wayland":
        exe = paths.find_own("duet-testctl", "tools")
        # It finds the test socket itself: $WAYLAND_DISPLAY-test.
        return exe and ([exe], dict(stack.env))
    exe = paths.find_own("duet-xctl", "tools")
    return exe and ([exe, "--display", stack.display], dict(stack.env))


def window_of(stack, pid, timeout=10):
    """The control tool's id of app pid's window."""
    argv, env = tool(stack)
    deadline = time.monotonic() + procs.patience(timeout)
    while time.monotonic() < deadline:
        r = subprocess.run(argv + ["windows"], env=env, capture_output=True, text=True,
                           timeout=10)
        for line in r.stdout.splitlines():
            f = line.split("\t")[0].split(" ")
            if len(f) >= 7 and f[1] == str(pid):
                return f[0]
        time.sleep(0.1)
    raise RuntimeError("no window of pid %d listed by %s" % (pid, os.path.basename(argv[0])))


class Mover(threading.Thread):
    def __init__(self, stack, window):
        super().__init__(daemon=True)
        self.argv, self.env = tool(stack)
        self.window = window
        self.stop_ev = threading.Event()
        self.moves = 0
        self.error = None

    def run(self):
        x, dx = SPAN[0], STEP_PX
        nxt = time.monotonic()
        while not self.stop_ev.is_set():
            r = subprocess.run(self.argv + ["move", self.window, str(x), str(Y)], env=self.env,
                               capture_output=True, text=True, timeout=10)
            if r.returncode != 0:
                self.error = "move failed (%d): %s" % (r.returncode, r.stderr.strip()[-300:])
                return
            self.moves += 1
            x += dx
            if not SPAN[0] <= x <= SPAN[1]:
                dx = -dx
                x += 2 * dx
            nxt += INTERVAL_S
            self.stop_ev.wait(max(0.0, nxt - time.monotonic()))

    def stop(self):
        self.stop_ev.set()
        self.join(15)
