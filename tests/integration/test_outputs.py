#!/usr/bin/env python3
"""Several outputs: duet-compositor with two headless outputs side by side
(--output 640x480 --output 800x600: HEADLESS-1 at 0,0, HEADLESS-2 at
640,0), a real client (duet-output-probe) that prints what it sees, and
per-output screenshots (duet-testctl screenshot FILE OUTPUT).

usage: test_outputs.py advertised|move|span|damage|pointer|maximize
"""

import os
import shutil
import subprocess
import tempfile
import sys
import time

import duet
import pngread
from duet import check

OUTPUTS = [("HEADLESS-1", 0, 0, 640, 480), ("HEADLESS-2", 640, 0, 800, 600)]
RED = (255, 0, 0)
W, H = 200, 150


class Probe:
    def __init__(self, s):
        self.s = s
        self.proc = s.spawn("probe", [duet.program("DUET_OUTPUT_PROBE")], s.env,
                            stdin=subprocess.PIPE)

    def outputs(self):
        i, _ = self.proc.wait_line(r"^outputs-done$")
        return [tuple(int(v) if v.lstrip("-").isdigit() else v for v in line.split()[1:])
                for line in self.proc.lines[:i] if line.startswith("output ")]

    def events(self):
        """enter/leave lines so far, in order."""
        return [l for l in self.proc.lines if l.startswith(("enter ", "leave "))]

    def on(self):
        """The outputs the surface is on now, from enter/leave."""
        on = set()
        for line in self.events():
            kind, name = line.split()
            (on.add if kind == "enter" else on.discard)(name)
        return on

    def frames(self):
        """(frame callbacks so far, sync_output name of the last feedback)."""
        n = self.proc.count_lines(r"^frames ")
        self.proc.popen.stdin.write(b"count\n")
        self.proc.popen.stdin.flush()
        _, m = self.proc.wait_line(r"^frames (\d+) sync (\S+)$", start=0,
                                   pred=lambda m: self.proc.count_lines(r"^frames ") > n)
        last = [l for l in self.proc.lines if l.startswith("frames ")][-1].split()
        return int(last[1]), last[3]

    def frames_after(self, n0, more=3):
        """(frames, sync) once the probe has had `more` frame callbacks past
        n0. With one callback in flight at a time, the third after a count
        taken once the compositor applied a change answers a commit made
        after it, and that commit's feedback came in the paint before: so
        the sync_output is one the change decided. A count, not a sleep:
        under qemu beside a busy core a frame can take longer than any
        fixed pause (the wait's deadline is a hang guard)."""
        deadline = time.monotonic() + 60
        while True:
            n, sync = self.frames()
            if n >= n0 + more:
                return n, sync
            if time.monotonic() > deadline:
                raise duet.Failure("%d frame callbacks in 60 s, want %d" % (n - n0, more))
            time.sleep(0.05)


def session(name, args=()):
    return duet.Session("outputs-" + name, size="640x480",
                        args=["--output", "640x480", "--output", "800x600"] + list(args))


def shot(s, output, label):
    """Screenshot of one output (a name or an index)."""
    s.sync()
    s._shot += 1
    path = os.path.join(s.workdir, "%02d-%s.png" % (s._shot, label))
    s.testctl("screenshot", path, str(output))
    return pngread.read(path)


def red_box(img):
    """Bounding box (x0, y0, x1, y1) of the red pixels, or None."""
    xs, ys = [], []
    for y in range(0, img.height):
        for x in range(0, img.width):
            if img.pixel(x, y)[:3] == RED:
                xs.append(x)
                ys.append(y)
    if not xs:
        return None
    return min(xs), min(ys), max(xs) + 1, max(ys) + 1


def wait_on(probe, want, timeout=10):
    deadline = time.monotonic() + timeout
    while probe.on() != want:
        if time.monotonic() > deadline:
            raise duet.Failure("surface on %r, want %r (events %r)"
                               % (sorted(probe.on()), sorted(want), probe.events()))
        time.sleep(0.05)


def mapped_probe(s):
    probe = Probe(s)
    win = s.wait_window(app_id="duet-output-probe")
    return probe, win


def advertised(s):
    probe = Probe(s)
    got = probe.outputs()
    check(got == OUTPUTS, "outputs (name x y w h) %r, want %r" % (got, OUTPUTS))
    # A third-party client's view, where installed.
    try:
        info = duet.third_party("wayland-info")
    except duet.Skip:
        info = None
    if info:
        r = s.run([info])
        check(r.returncode == 0, "wayland-info failed: %s" % r.stderr)
        for name, x, y, w, h in OUTPUTS:
            check("name: '%s'" % name in r.stdout, "wayland-info shows no %s" % name)
            check("logical_x: %d, logical_y: %d" % (x, y) in r.stdout,
                  "wayland-info shows no output at %d,%d" % (x, y))
            check("logical_width: %d, logical_height: %d" % (w, h) in r.stdout,
                  "wayland-info shows no output of %dx%d" % (w, h))
    # The screenshots are each output's size.
    for i, (name, _, _, w, h) in enumerate(OUTPUTS):
        for which in (name, i):
            img = shot(s, which, "empty-%s" % which)
            check((img.width, img.height) == (w, h), "screenshot of %s is %dx%d, want %dx%d"
                  % (which, img.width, img.height, w, h))
    # An unknown output is the client's error, not the compositor's end.
    r = subprocess.run([duet.program("DUET_TESTCTL"), "--socket", s.test_display,
                        "screenshot", os.path.join(s.workdir, "none.png"), "HEADLESS-9"],
                       env=s.env, capture_output=True, text=True, timeout=30)
    # 1: the error, reported and cleaned up after (a sanitizer's report,
    # a leak on this path, say, would be another status).
    check(r.returncode == 1, "a screenshot of HEADLESS-9: status %d, want 1; stderr:\n%s"
          % (r.returncode, r.stderr[-3000:]))
    s.check_alive()


def move(s):
    probe, win = mapped_probe(s)
    # A new window goes on the pointer's output (the first: the pointer is at 0,0).
    wait_on(probe, {"HEADLESS-1"})
    check((win.x, win.y) == ((640 - W) // 2, (480 - H) // 2), "placed at %d,%d" % (win.x, win.y))
    s.testctl("move", str(win.id), "740", "100")
    wait_on(probe, {"HEADLESS-2"})
    check(red_box(shot(s, "HEADLESS-1", "first")) is None,
          "the window moved to HEADLESS-2 still shows on HEADLESS-1")
    box = red_box(shot(s, "HEADLESS-2", "second"))
    check(box == (100, 100, 100 + W, 100 + H), "on HEADLESS-2 the window is at %r" % (box,))
    # Frame callbacks go on, answered by HEADLESS-2's frames.
    n0, _ = probe.frames()
    _, sync = probe.frames_after(n0)
    check(sync == "HEADLESS-2", "presentation feedback's sync_output is %s" % sync)
    # Back: leave 2, enter 1.
    s.testctl("move", str(win.id), "10", "10")
    wait_on(probe, {"HEADLESS-1"})
    box = red_box(shot(s, 0, "back"))
    check(box == (10, 10, 10 + W, 10 + H), "back on HEADLESS-1 the window is at %r" % (box,))
    check(red_box(shot(s, 1, "back-second")) is None, "HEADLESS-2 still shows the window")
    s.check_alive()


def span(s):
    probe, win = mapped_probe(s)
    wait_on(probe, {"HEADLESS-1"})
    # 100 pixels on each side; a little more on HEADLESS-2 (frames there).
    s.testctl("move", str(win.id), "540", "50")
    wait_on(probe, {"HEADLESS-1", "HEADLESS-2"})
    a = red_box(shot(s, "HEADLESS-1", "span-first"))
    b = red_box(shot(s, "HEADLESS-2", "span-second"))
    check(a == (540, 50, 640, 50 + H), "its left part on HEADLESS-1 is %r" % (a,))
    check(b == (0, 50, W - 100, 50 + H), "its right part on HEADLESS-2 is %r" % (b,))
    s.testctl("move", str(win.id), "545", "50")
    n0, _ = probe.frames()
    _, sync = probe.frames_after(n0)
    check(sync == "HEADLESS-2", "sync_output %s: the surface is most on HEADLESS-2" % sync)
    s.check_alive()


def damage(s):
    probe, win = mapped_probe(s)
    s.testctl("move", str(win.id), "740", "100")
    wait_on(probe, {"HEADLESS-2"})
    s.sync()
    trace = os.environ["DUET_TRACE"]
    # HEADLESS-1 repaints once for the window that left it, at its next
    # tick: five of HEADLESS-2's frames later (same refresh) that tick has
    # come. Counted in frames, not seconds, so a late tick under load is
    # waited for rather than counted in the window below.
    after = len(read_frames(trace))
    start = after + len(wait_painted(trace, after, "HEADLESS-2", 5))
    frames = wait_painted(trace, start, "HEADLESS-2", 5)
    painted = {}
    for f in frames:
        if f["painted"]:
            painted[f["output"]] = painted.get(f["output"], 0) + 1
    duet.log("painted frames per output while HEADLESS-2 painted 5: %r" % painted)
    check(painted.get("HEADLESS-1", 0) == 0, "HEADLESS-1 repainted %d frames for damage on "
          "HEADLESS-2" % painted.get("HEADLESS-1", 0))
    s.check_alive()


def wait_painted(trace, start, output, n):
    """The frames of the trace from index start up to the one in which
    output has painted n times since start (the deadline is a hang guard)."""
    deadline = time.monotonic() + 60
    while True:
        frames = read_frames(trace)[start:]
        seen = 0
        for i, f in enumerate(frames):
            seen += bool(f["painted"] and f["output"] == output)
            if seen == n:
                return frames[:i + 1]
        if time.monotonic() > deadline:
            raise duet.Failure("%s painted %d frames in 60 s, want %d: the window's "
                               "redraws there went unpainted" % (output, seen, n))
        time.sleep(0.05)


def read_frames(path):
    return [e for e in duet.read_trace(path) if e.get("name") == "frame"]


def pointer(s):
    # The pointer moves across the whole layout and stays on it: past the
    # right edge it is clamped to HEADLESS-2's last column, so a window
    # mapped then goes on HEADLESS-2 (on no output it would go on the first).
    s.testctl("motion", "5000", "300")
    probe, win = mapped_probe(s)
    wait_on(probe, {"HEADLESS-2"})
    check((win.x, win.y) == (640 + (800 - W) // 2, (600 - H) // 2),
          "a window mapped with the pointer on HEADLESS-2 is at %d,%d" % (win.x, win.y))
    # Back on HEADLESS-1, the next window goes there.
    s.testctl("motion", "100", "100")
    wait_on(Probe(s), {"HEADLESS-1"})
    s.check_alive()


def maximize(s):
    # Maximized on HEADLESS-2, the window gets HEADLESS-2's size and goes
    # to its top-left corner (not HEADLESS-1's size at 0,0).
    probe, win = mapped_probe(s)
    s.testctl("move", str(win.id), "700", "200")
    wait_on(probe, {"HEADLESS-2"})
    probe.proc.popen.stdin.write(b"max\n")
    probe.proc.popen.stdin.flush()
    _, m = probe.proc.wait_line(r"^configure (\d+) (\d+)$")
    check((int(m.group(1)), int(m.group(2))) == (800, 600),
          "maximized on HEADLESS-2 to %sx%s, want 800x600" % m.groups())
    # The move waits for the client's ack and commit (it redraws each frame).
    deadline = time.monotonic() + 10
    while True:
        w = [w for w in s.windows() if w.id == win.id][0]
        if (w.x, w.y) == (640, 0):
            break
        check(time.monotonic() < deadline, "maximized window at %d,%d, want 640,0" % (w.x, w.y))
        time.sleep(0.05)
    s.check_alive()


SCENARIOS = {"advertised": advertised, "move": move, "span": span, "damage": damage,
             "pointer": pointer, "maximize": maximize}


def test():
    name = sys.argv[1]
    tracedir = tempfile.mkdtemp(prefix="duet-outputs-trace-")
    # The frame trace of the compositor (the sessions copy the environment).
    os.environ["DUET_TRACE"] = os.path.join(tracedir, "trace.jsonl")
    try:
        with session(name) as s:
            SCENARIOS[name](s)
    finally:
        shutil.rmtree(tracedir, ignore_errors=True)


if __name__ == "__main__":
    duet.main(test)
