"""Context switches per operation (issue 14, item 2), and this machine's
cost of one switch.

Every count is voluntary and involuntary switches summed over a process's
threads (/proc/PID/task/*/status, procs.ctx_switches), read at the two
ends of an interval, their difference divided by the operations in it:

    launch   fork -> composited known (the launch sample's interval)
    frame    end of the first scene -> end of the last scene the harness
             saw (the render sample's CPU-per-frame interval)
    resize   the first step's line -> the last step's line, per step
    trip     duet-roundtrip's whole run (roundtrip.py)
    app      concurrent launches: fork of the first -> every first frame
             composited, per app

A sample's "switches" is per_op()'s record: {"op", "n", "interval",
"per_op": {role: {"voluntary", "involuntary", "total"}}, "window_system",
"all"}: per operation, window_system the sum over the stack's processes,
all with the app(s) too.

The cost of one switch (cost()): duet-roundtrip's pipe ping-pong with both
processes pinned to one CPU makes two switches per trip (there and back);
the same loop in one process writing and reading its own pipe
(`pipe-self`) does the same syscalls with none. (trip - self) / 2 is the
cost of one switch with its wake-up, lmbench lat_ctx's way (size 0).
"""
import json
import subprocess

from duet_bench import procs

STACK_ROLES = ["server", "wm", "compositor", "xwayland"]
# Roles that are not the window system: the app(s), the floor's peer
# process, the bench's observer.
NOT_WINDOW_SYSTEM = {"app", "peer", "observer"}


def read(pids):
    """{role: {"voluntary", "involuntary"}} of every process of pids now
    (a process gone is left out)."""
    out = {}
    for role, pid in pids.items():
        c = procs.ctx_switches(pid)
        if c is not None:
            out[role] = c
    return out


def delta(before, after):
    """{role: after - before} of the roles read at both ends."""
    return {r: procs.ctx_diff(before[r], after[r]) for r in before if r in after}


def per_op(counts, n, op, interval):
    """The per-operation record of counts {role: {"voluntary",
    "involuntary"} or {"total"}} over n operations."""
    if not counts or not n or n <= 0:
        return None
    per = {}
    for role, c in counts.items():
        if c is None:
            continue
        if "voluntary" in c:
            v, i = c["voluntary"] / n, c["involuntary"] / n
            per[role] = {"voluntary": round(v, 3), "involuntary": round(i, 3),
                         "total": round(v + i, 3)}
        else:
            per[role] = {"total": round(c["total"] / n, 3)}
    ws = sum(p["total"] for r, p in per.items() if r not in NOT_WINDOW_SYSTEM)
    return {"op": op, "n": n, "interval": interval, "per_op": per,
            "window_system": round(ws, 3),
            "all": round(sum(p["total"] for p in per.values()), 3)}


class Marks:
    """Switch readings of named processes at moments the harness marks
    (a scene's end, a resize step's line): per_op() between two of them."""

    def __init__(self, pids):
        self.pids = dict(pids)
        self.marks = []  # (key, {role: counts})

    def mark(self, key):
        r = read(self.pids)
        if len(r) == len(self.pids):  # every process read, or no mark
            self.marks.append((key, r))

    def scene_watch(self, ended):
        """A run.wait() callback marking the count of the app's scene
        lines each time it grows. It ends the wait only once ended() (the
        app has exited), so the wait ends as it would without a callback."""
        def watch(events):
            n = sum(1 for e in events if e.get("name") == "scene")
            if n and (not self.marks or self.marks[-1][0] != n):
                self.mark(n)
            return ended()
        return watch

    def per_frame_since(self, first, scenes, interval):
        """Per frame from the mark named first to the last scene mark
        (the frames of the scenes up to it)."""
        last = next((k for k, _ in reversed(self.marks) if isinstance(k, int)), None)
        if last is None:
            return None
        return self.between(first, last, sum(s.get("frames", 0) for s in scenes[:last]),
                            "frame", interval)

    def between(self, first, last, n, op, interval):
        a = next((m for k, m in self.marks if k == first), None)
        b = next((m for k, m in reversed(self.marks) if k == last), None)
        if a is None or b is None:
            return None
        return per_op(delta(a, b), n, op, interval)


class StepMarks(Marks):
    """A run.wait() callback marking every new `name` line of the app
    (duet-resize's resize steps). It ends the wait only once ended() (the
    app has exited), so the wait ends as it would without a callback."""

    def __init__(self, pids, name, ended):
        super().__init__(pids)
        self.name = name
        self.seen = 0
        self.ended = ended

    def __call__(self, events):
        n = sum(1 for e in events if e.get("name") == self.name)
        if n != self.seen:
            self.seen = n
            self.mark(n)
        return self.ended()

    def per_step(self, op, interval):
        """Per step between the first and the last marked step."""
        if len(self.marks) < 2:
            return None
        (k0, _), (k1, _) = self.marks[0], self.marks[-1]
        return self.between(k0, k1, k1 - k0, op, interval)


# ------------------------------------------------------------ cost of one switch
COST_GROUPS, COST_TRIPS, COST_REPEATS = 10, 1000, 3


def _median_trip_ns(exe, kind, extra):
    argv = [exe, kind, "--groups", str(COST_GROUPS), "--trips", str(COST_TRIPS)] + extra
    p = subprocess.run(argv, capture_output=True, text=True, timeout=procs.patience(60))
    if p.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(argv), p.returncode,
                                                  p.stderr.strip()[-200:]))
    out = {}
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            ev = json.loads(line)
            out[ev.get("name")] = ev
    done = out.get("roundtrip_done")
    if not done:
        raise RuntimeError("%s reported no roundtrip_done" % " ".join(argv))
    sw = done.get("switches", 0) + (out.get("roundtrip_peer") or {}).get("switches", 0)
    return done["median_trip_ns"], sw / float(COST_GROUPS * COST_TRIPS)


def cost(exe):
    """This machine's cost of one context switch, in us, from duet-roundtrip
    (see the module's text): COST_REPEATS alternating runs of the pinned
    pipe ping-pong and of the one-process loop, the median of each. A
    record with status ok or failed (and why)."""
    out = {"method": "duet-roundtrip pipe --cpus 1 (two processes on CPU 0) minus "
                     "duet-roundtrip pipe-self (one process, its own pipe), / 2; median of "
                     "%d runs of %d groups of %d trips" % (COST_REPEATS, COST_GROUPS,
                                                           COST_TRIPS)}
    if not exe:
        return dict(out, status="failed", reason="duet-roundtrip is not built")
    trips, selfs, sws = [], [], []
    try:
        for _ in range(COST_REPEATS):
            t, sw = _median_trip_ns(exe, "pipe", ["--cpus", "1"])
            s, _ = _median_trip_ns(exe, "pipe-self", ["--cpus", "1"])
            trips.append(t)
            selfs.append(s)
            sws.append(sw)
    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as e:
        return dict(out, status="failed", reason=str(e))
    trip, self_ = sorted(trips)[len(trips) // 2], sorted(selfs)[len(selfs) // 2]
    us = (trip - self_) / 2.0 / 1000.0
    out.update(status="ok", trip_us=round(trip / 1000.0, 3), self_us=round(self_ / 1000.0, 3),
               switches_per_trip=round(sorted(sws)[len(sws) // 2], 3),
               us=round(us, 3))
    if us <= 0:
        out.update(status="failed", reason="the pinned ping-pong (%.3f us) was not slower than "
                   "the one-process loop (%.3f us)" % (trip / 1000.0, self_ / 1000.0))
    return out
