"""How long each part of a bench run took, and where it waited when one
part took too long.

Phases(...)("start openbox") brackets one part (a stack's start or stop,
one experiment's job, one count of apps, the switch-cost runs); each adds
{"what", "at_s", "s"} to results["phases"] when it ends, so a slow run
says which part was slow. A watchdog thread looks once a second: when no
part has started or ended for stall_s seconds (duet bench --stall-report),
it appends to stalls.txt in the out directory every Python thread's stack,
where each process the bench started waits and the CPU it used over one
second (duet_launch.hang, as a hang guard says it), and the tails of the
stacks' logs; says so on one progress line; and does it again after each
further stall_s. A hang guard outside the bench only says that the bench
did not finish; this says where it waited while it did not, on a guest
whose /tmp goes with it and whose waits are patient (DUET_BENCH_PATIENCE).
"""
import contextlib
import os
import sys
import threading
import time
import traceback

from duet_launch import hang, proc

TICK_S = 1.0


class Phases:
    def __init__(self, results, out, say, stall_s, logs=None):
        self.results = results
        self.logs = logs
        self.path = os.path.join(out, "stalls.txt")
        self.say = say
        self.stall_s = stall_s
        self.t0 = time.monotonic()
        self.open = []             # [(what, started)], innermost last
        self.moved = self.t0       # the last phase start or end
        self.reports = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        if stall_s > 0:
            threading.Thread(target=self._watch, name="stall-watchdog", daemon=True).start()

    @contextlib.contextmanager
    def __call__(self, what):
        start = time.monotonic()
        with self.lock:
            self.open.append((what, start))
            self.moved = start
        try:
            yield
        finally:
            end = time.monotonic()
            with self.lock:
                self.open.remove((what, start))
                self.moved = end
            self.results.setdefault("phases", []).append(
                {"what": what, "at_s": round(start - self.t0, 3), "s": round(end - start, 3)})

    def close(self):
        self.stop.set()

    def _watch(self):
        while not self.stop.wait(TICK_S):
            with self.lock:
                quiet = time.monotonic() - self.moved
                where = " > ".join(w for w, _ in self.open) or "between phases"
            if quiet < self.stall_s:
                continue
            try:
                self.report(where, quiet)
            except Exception as e:  # a diagnosis must never stop the bench
                self.say("stall report failed: %r" % e)
            with self.lock:
                self.moved = time.monotonic()  # again after another stall_s

    def report(self, where, quiet):
        self.reports += 1
        text = ["=== stall %d: nothing new for %.0f s, %.0f s into the run, in: %s"
                % (self.reports, quiet, time.monotonic() - self.t0, where),
                "loadavg: %s" % _read("/proc/loadavg").strip()]
        frames = sys._current_frames()
        for t in threading.enumerate():
            if t.ident in frames and t.ident != threading.get_ident():
                text.append("--- Python thread %s" % t.name)
                text.append("".join(traceback.format_stack(frames[t.ident])).rstrip())
        text.extend(processes(os.getpid()))
        text.extend(log_tails(self.logs))
        with open(self.path, "a") as f:
            f.write("\n".join(text) + "\n\n")
        self.say("stall: nothing new for %.0f s in %s; where each thread waits: %s"
                 % (quiet, where, self.path))


def _read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def processes(root):
    """Every process the bench started: where it waits (kernel stack as
    root), the CPU it used over one second (who spins, who sleeps), and
    the user-space frames of those that spin or whose main thread sleeps
    in a lock, where gdb is installed (duet_launch.hang, as a hang guard
    says it)."""
    out = ["--- processes the bench started: where each waits"]
    out += hang.describe_tree(root)
    named = [(_read("/proc/%d/comm" % p).strip() or "?", p) for p in proc.descendants(root)]
    out.append("--- their CPU over %g s" % TICK_S)
    out += hang.describe_peers(named, sample=TICK_S)
    for name, pid in named:
        if hang.in_lock(proc.where_waiting(pid)):
            out.append("--- %s (pid %d) sleeps in a lock: every thread" % (name, pid))
            out += ["    " + ln[:240] for ln in hang.user_stack(pid, all_threads=True)]
    return out


def log_tails(top, lines=15):
    """The last lines of every *.log under top (the stacks' logs: Xorg's,
    the window manager's, the compositor's), which go with the stacks."""
    out = []
    for d, _, files in os.walk(top or "/nonexistent"):
        for f in sorted(files):
            if f.endswith(".log"):
                tail = proc.read_tail(os.path.join(d, f)).splitlines()[-lines:]
                out.append("--- %s (last %d lines)" % (os.path.join(d, f), len(tail)))
                out += ["    " + ln[:240] for ln in tail]
    return out
