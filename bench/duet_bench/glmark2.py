"""glmark2 in a stack, for every experiment that runs it (thirdparty: two
scenes, summed; sweep: many scenes, each on its own): its command, its
output read as it is written, and the CPU of every window-system process
(and of glmark2) from each scene's first frame to its last.

glmark2's Wayland build makes a wl_display_roundtrip after every frame
(NativeStateWayland::flip) and asks for no frame callback; its X11 build
makes no round trip of its own (NativeStateX11 has no flip). Its Wayland
and X11 figures are therefore not the same client's: the reports say so.
"""
import os
import re
import shutil
import time

from duet_bench import procs
from duet_bench.apprun import AppFailed, AppRun, check_stack

BINARY = {"wayland": "glmark2-es2-wayland", "x11": "glmark2-es2"}
PACKAGE = {"wayland": "glmark2-es2-wayland", "x11": "glmark2-es2-x11"}
SIZE = "800x600"
# The window-system processes whose CPU is the window system's (stack roles).
WS_ROLES = ("server", "wm", "compositor", "xwayland")

NOTE_ROUNDTRIP = ("glmark2's Wayland build (glmark2-es2-wayland) makes a wl_display_roundtrip "
                  "after every frame and asks for no frame callback; its X11 build "
                  "(glmark2-es2) makes no round trip of its own: the two builds are not the "
                  "same client. Mesa's software EGL adds its own traffic per swap on both "
                  "(a wl_display.sync on Wayland; a GetGeometry round trip and a "
                  "whole-window PutImage on Xvfb).")


def missing(kind):
    """Why glmark2 cannot run on a stack kind ("wayland", "x11"), or None."""
    if shutil.which(BINARY[kind]):
        return None
    return "%s not found (Debian package %s)" % (BINARY[kind], PACKAGE[kind])


def argv(kind, scenes, duration):
    out = [shutil.which(BINARY[kind]) or BINARY[kind], "-s", SIZE]
    for scene in scenes:
        out += ["-b", "%s:duration=%g" % (scene, duration)]
    return out


def ws_pids(stack):
    return {r: p for r, p in stack.pids().items() if r in WS_ROLES}


class Log:
    """glmark2's output, read as it is written: a scene's title line
    ("[build] duration=5:") is printed and flushed after the scene's set-up,
    right before its first frame, and " FPS: N FrameTime: T ms" ends the
    same line when its last frame is done."""

    def __init__(self, path):
        self.path = path
        self.text = ""

    def read(self):
        try:
            with open(self.path, errors="replace") as f:
                self.text = f.read()
        except OSError:
            pass
        return self

    def scenes(self):
        """[(title, fps or None)] in order."""
        out = []
        for line in self.text.split("\n"):
            m = re.match(r"^\[(\w+)\]([^\n]*?)(?: FPS: (\d+) FrameTime: [\d.]+ ms)?\s*$", line)
            if m:
                out.append(("[%s]%s" % (m.group(1), m.group(2)), int(m.group(3))
                            if m.group(3) else None))
        return out

    def score(self):
        m = re.search(r"glmark2 Score: (\d+)", self.text)
        return int(m.group(1)) if m else None


def run(ctx, stack, scenes, on_mark, experiment):
    """Runs glmark2 on scenes (ctx.opts.glmark2_duration_s each) to its
    end, calling on_mark(what, i, run) as scene i starts ("start") and
    ends ("end"), polling its output every 2 ms. Returns (scenes, score,
    argv): scenes [{title, fps, wall_s}], wall_s the time between the two
    marks. experiment names the run for the tests' faults (fault_hook)."""
    cmd = argv(stack.kind, scenes, ctx.opts.glmark2_duration_s)
    app = AppRun(ctx, stack, cmd, role="glmark2")
    log = Log(app.log)
    marks = []  # [[t_start, t_end]]
    timeout = 60 + 4 * len(scenes) * ctx.opts.glmark2_duration_s
    try:
        while True:
            alive = app.child.alive()
            seen = log.read().scenes()
            for i, (_, fps) in enumerate(seen):
                if i >= len(marks):
                    marks.append([time.monotonic(), None])
                    on_mark("start", i, app)
                if fps is not None and marks[i][1] is None:
                    marks[i][1] = time.monotonic()
                    on_mark("end", i, app)
            if not alive:
                break
            check_stack(stack)
            ctx.fault_hook(stack, experiment, time.monotonic() - app.started)
            if time.monotonic() - app.started > timeout:
                raise AppFailed("%s gave no result within %.0f s" % (cmd[0], timeout))
            time.sleep(0.002)
        app.child.popen.wait(5)
        status = app.exit_status()
    finally:
        app.stop()
    seen = log.scenes()
    if status != "exited with status 0" or len(seen) != len(scenes) or \
            any(f is None for _, f in seen):
        check_stack(stack, grace=0.5)
        raise AppFailed("%s %s after %d of %d scenes:\n%s" % (
            os.path.basename(cmd[0]), status, len(seen), len(scenes), app.log_tail()))
    out = [{"title": t, "fps": f, "wall_s": round(m[1] - m[0], 4)}
           for (t, f), m in zip(seen, marks)]
    return out, log.score(), cmd


def frames_of(scene, duration):
    """A scene's frames from its fps (glmark2 prints no frame count): fps x
    the marked interval, which cannot exceed the scene's duration."""
    return scene["fps"] * min(scene["wall_s"], duration)


def per_frame(deltas, frames):
    """{role: total / frames} of per-scene {role: value} deltas; None for a
    role missing in any scene."""
    roles = set().union(*deltas) if deltas else set()
    out = {}
    for r in sorted(roles):
        vals = [d.get(r) for d in deltas]
        out[r] = None if None in vals or not frames else sum(vals) / frames
    return out


def cpu_ms_per_frame(deltas, frames, ws_roles):
    """ms on CPU per client frame of each role over the scenes whose CPU
    ns deltas are given, and window_system: the sum over ws_roles (None
    when one of them is unknown)."""
    per = {r: (round(v / 1e6, 4) if v is not None else None)
           for r, v in per_frame(deltas, frames).items()}
    ws = [per.get(r) for r in ws_roles]
    per["window_system"] = round(sum(ws), 4) if None not in ws else None
    return per


def measure(ctx, stack, scenes, experiment):
    """One timed glmark2 run (no counter attached): per scene its title,
    fps, marked time (wall_s), frames, the CPU ns of every window-system
    process and of glmark2 ("app") between its first and last frame
    (cpu_ns) and that span in CLOCK_MONOTONIC ns (span). Returns (scenes,
    score, argv, the window-system roles measured)."""
    pids = ws_pids(stack)
    meters = {r: procs.CpuMeter(p) for r, p in pids.items()}
    starts, cpu, spans = {}, {}, {}

    def on_mark(what, i, app):
        if "app" not in meters:
            meters["app"] = procs.CpuMeter(app.pid)
        now = {r: m.read() for r, m in meters.items()}
        spans.setdefault(i, []).append(time.monotonic_ns())
        if what == "start":
            starts[i] = now
        else:
            cpu[i] = {r: (v - starts[i][r]) if v is not None and starts[i].get(r)
                      is not None else None for r, v in now.items()}

    seen, score, cmd = run(ctx, stack, scenes, on_mark, experiment)
    d = ctx.opts.glmark2_duration_s
    for i, s in enumerate(seen):
        s.update(frames=frames_of(s, d), cpu_ns=cpu[i], span=spans[i])
    return seen, score, cmd, tuple(pids)
