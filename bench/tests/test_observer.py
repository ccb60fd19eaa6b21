#!/usr/bin/env python3
"""Tests of the framebuffer observer (bench/probes/observe.c, duet_bench/observer.py).

usage: test_observer.py functional|agrees
  functional: duet-observe on a file that is not a framebuffer fails with a
      clear error; a framebuffer truncated and rewritten under it is mapped
      anew; started before Xvfb creates its -fbdir file, it waits for
      it; on Xvfb + duet-xwm and on duet-compositor --vfb it says ready while
      duet-launch's colour is absent, sees it once the app's window shows, and
      stops on SIGTERM with its polls and CPU; started while the colour is
      already on screen, it is not ready until the window has gone.
      Size mode (--sizes): on a made-up DUETVFB1 screen it reports a size tag
      (clients/resize.c) drawn whole, one whose bottom-right corner is off
      screen as clipped, and one whose bottom-right cells are not drawn yet
      only once they are, in the order a list gives; on Xvfb + duet-xwm and
      on duet-compositor --vfb it sees duet-resize's window at each of the
      study's 8 sizes, in order, after each step's request (printing the
      observer's time against the app's presented and the server's
      composited).
  agrees: on duet-compositor --vfb and on Xvfb -fbdir + duet-xwm, 5 launches
      of duet-launch, each with a fresh observer: the observer was ready
      before the app's exec and saw it after; the server's "composited"
      trace event (contract 1) names a painted frame, at that frame's
      done_ns, which by the server's own account first showed the app
      (duet-compositor: it uploaded a client buffer, the painted frame
      before it none; duet-xwm: no painted frame since the window's map put
      pixels where the observer saw the colour), and it drew there
      (duet-xwm's PutImage rectangles; duet-compositor's damage record of
      that frame in the --vfb header, whose frame counter is at most one
      past the one the observer read); the observer saw it after the
      painted frame before it was finished. Orders and places, no time
      limit: the two clocks are read by two processes, either of which a
      loaded machine can hold off the CPU between the event and its clock
      read (a 2 ms agreement of the medians failed 1 run in 6 at load 7-8).
      Prints every difference seen - composited and the observer's CPU per
      second of polling.
Environment: DUET_BUILD_DIR (the build).
"""
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from duet_bench import observer, procs  # noqa: E402
from duet_launch import paths, proc, stack, traces  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, on_fail  # noqa: E402

LAUNCHES = 5
# DUETVFB2's header (compositor/backend/headless/vfb-layout.h): the frame counter at 24,
# then VFB_DAMAGE_SLOTS damage records from 64: uint64 frame, uint32 n,
# uint32 flags, VFB_DAMAGE_RECTS x (int32 x1, y1, x2, y2).
VFB_DAMAGE_AT, VFB_DAMAGE_SLOTS, VFB_DAMAGE_RECTS = 64, 8, 30
VFB_DAMAGE_SIZE = 16 + 16 * VFB_DAMAGE_RECTS
FB_DIRS = []  # framebuffer directories in /dev/shm, removed however the test ends


def cleanup():
    procs.cleanup()
    for d in FB_DIRS:
        shutil.rmtree(d, ignore_errors=True)


on_fail(cleanup)


def own(name, subdir):
    path = paths.find_own(name, subdir)
    if not path:
        fail("%s is not built (DUET_BUILD_DIR=%s)" % (name, os.environ.get("DUET_BUILD_DIR")))
    return path


def base_env(workdir):
    runtime = os.path.join(workdir, "runtime")
    os.makedirs(runtime, mode=0o700, exist_ok=True)
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime, GALLIUM_DRIVER="llvmpipe",
               LIBGL_ALWAYS_SOFTWARE="1")
    for k in ("DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "DUET_TRACE"):
        env.pop(k, None)
    return env


def wait_for(what, pred, timeout, procs_alive=()):
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        for c in procs_alive:
            if not c.alive():
                fail("%s %s while waiting for %s; log:\n%s"
                     % (c.role, c.status(), what, c.log_tail(1500)))
        if time.monotonic() > deadline:
            fail("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(0.01)


# ------------------------------------------------------------------ stacks
class Server:
    """duet-compositor --vfb, or Xvfb -fbdir + duet-xwm, each with a trace:
    duet_launch's wayland and x11 stacks, at 60 Hz."""

    def __init__(self, kind, workdir):
        self.kind = kind
        args = ()
        if kind == "wayland":
            self.fbdir = paths.memory_dir("duet-fb-")
            FB_DIRS.append(self.fbdir)
            args = ("--vfb", os.path.join(self.fbdir, "vfb"))
        config = stack.Config(kind, refresh=60, trace=True, framebuffer=kind == "x11",
                              server_args=args)
        self.stack = stack.Stack(config, workdir, base_env(workdir))
        self.dir = self.stack.dir
        self.env = self.stack.base_env
        if kind == "wayland":
            self.fb_path = args[1]
        else:
            self.fbdir = self.stack.fbdir
            FB_DIRS.append(self.fbdir)
            self.fb_path = observer.xvfb_fb_path(self.fbdir)
        self.trace = self.client_env = None
        self.children = []  # the apps

    def spawn(self, role, argv, env, **kw):
        c = proc.Child(role, argv, env, log_path=os.path.join(self.dir, role + ".log"), **kw)
        self.children.append(c)
        return c

    def start(self):
        try:
            self.stack.start()
        except stack.StackError as e:
            fail("the %s stack did not start: %s\n%s" % (self.kind, e, e.logs))
        self.trace = self.stack.traces["server" if self.kind == "wayland" else "wm"]
        self.client_env = self.stack.env
        return self

    def backend(self):
        return "wayland" if self.kind == "wayland" else "x11"

    def stop(self):
        for c in reversed(self.children):
            c.stop()
        self.stack.stop()
        self.stack.cleanup()
        shutil.rmtree(self.fbdir, ignore_errors=True)


class Launch:
    """duet-launch --stay with its own trace file."""

    def __init__(self, server, name):
        self.trace = os.path.join(server.dir, name + ".jsonl")
        self.child = server.spawn(name, [own("duet-launch", "clients"), "--backend",
                                          server.backend(), "--stay"],
                                  dict(server.client_env, DUET_TRACE=self.trace))
        self.pid = self.child.pid

    def first_frame(self, timeout=20):
        return wait_for("duet-launch's first frame",
                        lambda: next((e for e in traces.JsonLines(self.trace).read()
                                      if e.get("name") == "first_frame"), None),
                        timeout, [self.child])

    def stop(self):
        self.child.stop()


def server_frames(server, launch, first_frame):
    """What the server's trace says of the app's first frame: its
    "composited" event (contract 1: this app's window, first:true, or
    client_pid 0 after the app ran), or None; and all the trace's events,
    in the order the server wrote them."""
    events = traces.JsonLines(server.trace).read()
    exec_ns = first_frame.get("timeline", {}).get("exec") or 0
    composited = next((e for e in events
                       if e.get("name") == "composited" and e.get("first") and
                       e.get("t_ns", 0) > exec_ns and e.get("client_pid") in (launch.pid, 0)),
                      None)
    return composited, events


def vfb_damage(path, frame):
    """duet-compositor's own damage of a frame, from its --vfb file's header:
    [(x1, y1, x2, y2)], or None when the frame's slot holds another frame
    (VFB_DAMAGE_SLOTS later ones came since)."""
    with open(path, "rb") as f:
        head = f.read(VFB_DAMAGE_AT + VFB_DAMAGE_SLOTS * VFB_DAMAGE_SIZE)
    at = VFB_DAMAGE_AT + (frame % VFB_DAMAGE_SLOTS) * VFB_DAMAGE_SIZE
    got, n, _ = struct.unpack_from("=QII", head, at)
    if got != frame:
        return None
    return [struct.unpack_from("=iiii", head, at + 16 + 16 * i)
            for i in range(min(n, VFB_DAMAGE_RECTS))]


def wait_gone(server):
    """The app's window has left the screen: a fresh observer says ready."""
    obs = observer.Observer(server.fb_path, observer.LAUNCH_RGB, server.env).start()
    obs.wait_ready(10)
    obs.stop()


# ------------------------------------------------------------------- tests
def test_not_a_framebuffer(workdir):
    path = os.path.join(workdir, "not-a-framebuffer")
    with open(path, "wb") as f:
        f.write(b"P6\n1920 1080\n255\n" + bytes(200))
    r = subprocess.run([observer.find_observe(), "--fb", path, "--rgb", "237,237,242",
                        "--timeout-ms", "2000"], capture_output=True, text=True, timeout=10)
    check(r.returncode == 2 and "neither an XWD" in r.stderr,
          "a file that is no framebuffer is refused with a clear error (status %d: %s)"
          % (r.returncode, r.stderr.strip()))
    r = subprocess.run([observer.find_observe(), "--fb", path, "--rgb", "237,237"],
                       capture_output=True, text=True, timeout=10)
    check(r.returncode == 2 and "--rgb" in r.stderr, "a bad --rgb is a usage error")


def write_vfb(path, width, height, frame, run_at=None, mode="wb"):
    """A DUETVFB1 file (duet-compositor --vfb's version 1, which duet-observe still
    reads; the compositor now writes DUETVFB2), black, with
    duet-launch's colour in a 100-pixel run at run_at=(x, y)."""
    px = bytearray(width * height * 4)
    if run_at:
        x0, y0 = run_at
        r, g, b = observer.LAUNCH_RGB
        for x in range(x0, x0 + 100):
            o = (y0 * width + x) * 4
            px[o:o + 4] = bytes((b, g, r, 0))
    header = b"DUETVFB1" + struct.pack("=IIIIQQ", width, height, width * 4, 0, frame, 0)
    with open(path, mode) as f:
        f.write(header.ljust(64, b"\0") + px)


def test_truncated_file(workdir):
    path = os.path.join(workdir, "vfb")
    write_vfb(path, 640, 480, 1)
    obs = observer.Observer(path, observer.LAUNCH_RGB, os.environ, timeout_ms=10000).start()
    obs.wait_ready(5)
    # Cut under the observer's mapping, then written again in place (same
    # file) with the colour: it must map the file anew, not die of SIGBUS.
    os.truncate(path, 100)
    time.sleep(0.05)
    os.truncate(path, 0)
    time.sleep(0.05)
    write_vfb(path, 640, 480, 2, run_at=(100, 200), mode="r+b")
    seen = obs.wait_seen(5)
    done = obs.stop()
    check(seen is not None and (obs.seen["x"], obs.seen["y"]) == (100, 200),
          "a framebuffer truncated and rewritten under the observer: seen at %s"
          % (((obs.seen["x"], obs.seen["y"]),) if obs.seen else (None,)))
    check(done["seen"], "it then stops by itself (%d polls)" % done["polls"])


# ------------------------------------------------------------ size mode
SIZES = [(100, 100), (1000, 240), (850, 900), (400, 1000), (1800, 500), (999, 999),
         (333, 999), (1920, 1080)]


def put_rect(px, width, x0, y0, w, h, rgb):
    r, g, b = rgb
    row = bytes((b, g, r, 0)) * w
    for y in range(y0, y0 + h):
        o = (y * width + x0) * 4
        px[o:o + 4 * w] = row


def put_tag(px, width, x, y, w, h, bottom_right=True):
    """duet-resize's size tags (clients/resize.c) of a w x h window at x, y,
    clipped to the screen."""
    code = (w & 255, h & 255, (w >> 8) << 4 | (h >> 8))
    check_ = tuple(255 - c for c in code)
    put_rect(px, width, x, y, 32, 8, (255, 0, 255))
    put_rect(px, width, x + 32, y, 8, 8, code)
    put_rect(px, width, x + 40, y, 8, 8, check_)
    if bottom_right:
        for cx, rgb in ((x + w - 16, code), (x + w - 8, check_)):
            if cx + 8 <= width and y + h <= len(px) // 4 // width:
                put_rect(px, width, cx, y + h - 8, 8, 8, rgb)


def write_vfb_px(path, width, height, frame, px, mode="r+b"):
    """Pixels first, then the header with the frame counter, as
    duet-compositor --vfb does: a poll never sees the new counter with
    old pixels."""
    header = b"DUETVFB1" + struct.pack("=IIIIQQ", width, height, width * 4, 0, frame, 0)
    with open(path, mode) as f:
        f.seek(64)
        f.write(px)
        f.flush()
        f.seek(0)
        f.write(header.ljust(64, b"\0"))


def test_size_tags(workdir):
    path = os.path.join(workdir, "vfb-sizes")
    W, H = 1920, 1080
    px = bytearray(W * H * 4)
    put_tag(px, W, 50, 60, 333, 222)  # on screen before ready: not reported
    write_vfb_px(path, W, H, 1, px, "wb")
    obs = observer.Observer(path, None, os.environ, sizes="any").start()
    ready = obs.ready if obs.wait_ready(5) else None
    check(ready.get("mode") == "sizes" and ready.get("visible") == 1,
          "size mode: ready, with the tag already on screen counted as visible (%s)" % ready)
    px = bytearray(W * H * 4)
    put_tag(px, W, 100, 100, 300, 200)             # whole
    put_tag(px, W, 1700, 900, 400, 300)             # bottom-right off screen
    put_tag(px, W, 200, 400, 500, 400, bottom_right=False)  # not drawn whole yet
    write_vfb_px(path, W, H, 2, px)
    # Each frame waits for its report, not for a fixed time: a busy or
    # emulated machine may not poll within any such time.
    wait_for("the two sizes drawn whole in frame 2", lambda: len(obs.seen_lines()) >= 2, 30)
    put_tag(px, W, 200, 400, 500, 400)
    write_vfb_px(path, W, H, 3, px)
    wait_for("the size completed in frame 3", lambda: len(obs.seen_lines()) >= 3, 30)
    time.sleep(0.1)  # room for a wrong fourth report
    done = obs.stop()
    seen = {(e["width"], e["height"]): e for e in obs.seen_lines()}
    check(set(seen) == {(300, 200), (400, 300), (500, 400)},
          "size mode: the three new sizes reported, the old one not: %s" % sorted(seen))
    a, b, c = seen.get((300, 200), {}), seen.get((400, 300), {}), seen.get((500, 400), {})
    check((a.get("x"), a.get("y"), a.get("whole")) == (100, 100, True),
          "a tag with both corners on screen is whole, at its window's corner: %s" % a)
    check(b.get("whole") is False and b.get("clipped") == "right,bottom",
          "a tag whose bottom-right corner is off screen is reported, clipped: %s" % b)
    check(c.get("ns", 0) > a.get("ns", 0) and c.get("absent_ns", 0) >= a.get("ns", 0),
          "a tag whose bottom-right cells were missing is seen only once they are drawn")
    check(done.get("mode") == "sizes" and done.get("reported") == 3 and done["cpu_ns"] > 0,
          "size mode's done line: %s" % done)
    # A list: reported in its order only. It starts on an empty screen, so
    # that no size of the list counts as already visible.
    write_vfb_px(path, W, H, 4, bytearray(W * H * 4))
    obs = observer.Observer(path, None, os.environ, sizes="400x300,300x200").start()
    obs.wait_ready(5)
    # 300x200 before 400x300 is out of the list's order and not reported
    # (if no poll sees it, it shows nothing); the next two frames each wait
    # for their report rather than for a fixed time.
    for frame, (x, y, w, h), reports in ((5, (100, 100, 300, 200), 0),
                                         (6, (100, 100, 400, 300), 1),
                                         (7, (100, 100, 300, 200), 2)):
        px = bytearray(W * H * 4)
        put_tag(px, W, x, y, w, h)
        write_vfb_px(path, W, H, frame, px)
        if reports:
            wait_for("report %d of the list" % reports,
                     lambda n=reports: len(obs.seen_lines()) >= n, 30)
        time.sleep(0.1)
    obs.stop()
    got = [(e["width"], e["height"]) for e in obs.seen_lines()]
    check(got == [(400, 300), (300, 200)], "--sizes LIST reports in the list's order: %s" % got)
    r = subprocess.run([observer.find_observe(), "--fb", path, "--sizes", "100x"],
                       capture_output=True, text=True, timeout=10)
    check(r.returncode == 2 and "--sizes" in r.stderr, "a bad --sizes is a usage error")


def sizes_on(kind, workdir):
    server = Server(kind, workdir).start()
    obs = observer.Observer(server.fb_path, None, server.env,
                            sizes=",".join("%dx%d" % s for s in SIZES)).start()
    obs.wait_ready(20)
    trace = os.path.join(server.dir, "resize.jsonl")
    # Each size stays on screen for --settle-ms after its frame, and the
    # last (--stay) until the observer has reported it. At 30 ms and no
    # --stay the last was up for 30 ms and the app's exit, which the
    # observer's polls missed once under load (2026-11-28, ASan beside a
    # CPU hog); with it polling every 100 ms that fails every time, and
    # this passes.
    app = subprocess.Popen([own("duet-resize", "clients"), "--backend", server.backend(),
                            "--engine", "sw", "--runs", "1", "--settle-ms", "250", "--stay"],
                           env=dict(server.client_env, DUET_TRACE=trace),
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    def done():
        return any(e.get("name") == "resize_done" for e in traces.JsonLines(trace).read())
    try:
        # Both: the app may still be in its last --settle-ms when the
        # observer has seen the last size, and SIGTERM there ends it
        # before resize_done (seen once under qemu-aarch64).
        wait_for("the observer's report of all %d sizes and duet-resize's last step"
                 % len(SIZES),
                 lambda: (len(obs.seen_lines()) >= len(SIZES) and done()) or
                 app.poll() is not None, 60)
    finally:
        app.terminate()
        _, err = app.communicate(timeout=30)
    events = traces.JsonLines(trace).read()
    check(any(e.get("name") == "resize_done" for e in events),
          "%s: duet-resize did not finish its steps (%s %s)" % (kind, app.returncode, err[-300:]))
    done = obs.stop()
    seen = obs.seen_lines()
    steps = [e for e in events if e.get("name") == "resize"]
    got = [(e["width"], e["height"]) for e in seen]
    check(got == SIZES, "%s: the observer saw duet-resize at the 8 sizes in order: %s"
          % (kind, got))
    comp = {(e.get("width"), e.get("height")): e["t_ns"]
            for e in traces.JsonLines(server.trace).read()
            if e.get("name") == "composited" and not e.get("first")}
    for st, e in zip(steps, seen):
        t0, pres = st["timeline"]["requested"], st["timeline"]["presented"]
        check(t0 < e["ns"] and
              (st["got_width"], st["got_height"]) == (e["width"], e["height"]),
              "%s %dx%d: seen %.2f ms after the request (presented %.2f ms, server's "
              "composited %s, %s)"
              % (kind, e["width"], e["height"], (e["ns"] - t0) / 1e6, (pres - t0) / 1e6,
                 "%.2f ms" % ((comp[(e["width"], e["height"])] - t0) / 1e6)
                 if (e["width"], e["height"]) in comp else "none",
                 "whole" if e["whole"] else "clipped " + e.get("clipped", "")))
    print("%s: observer %d polls, %.1f ms CPU in %.0f ms" % (
        kind, done["polls"], done["cpu_ns"] / 1e6, done["wall_ns"] / 1e6), flush=True)
    server.stop()


def functional_on(kind, workdir):
    server = Server(kind, workdir)
    early = None
    if kind == "x11":
        # Watching before Xvfb exists: the file appears and grows under it.
        early = observer.Observer(server.fb_path, observer.LAUNCH_RGB, server.env).start()
    server.start()
    obs = early or observer.Observer(server.fb_path, observer.LAUNCH_RGB, server.env).start()
    ready = obs.wait_ready(20)
    check(ready > 0, "%s: observer ready on %s (%s)" % (kind, server.fb_path,
                                                         obs.ready.get("format")))
    time.sleep(0.2)
    check(obs.seen_ns() is None, "%s: nothing of the colour on the empty screen" % kind)
    app = Launch(server, "launch-0")
    ff = app.first_frame()
    seen = obs.wait_seen(10)
    check(seen is not None, "%s: observer saw the app's window" % kind)
    ev = obs.seen
    # duet-launch's window is 800x600; wherever it was placed, the run lies in it.
    check(0 <= ev["x"] < 1920 and 0 <= ev["y"] < 1080, "%s: seen at %d,%d" % (kind, ev["x"], ev["y"]))
    exec_ns = ff.get("timeline", {}).get("exec") or 0
    check(ready < exec_ns < seen,
          "%s: ready before the app's exec, seen after it (%.1f ms after the app's "
          "first_frame line)" % (kind, (seen - ff["ns"]) / 1e6))
    done = obs.stop()
    check(done["polls"] > 0 and done["cpu_ns"] > 0 and done["seen"],
          "%s: done line with %d polls and %.1f ms CPU" % (kind, done["polls"], done["cpu_ns"] / 1e6))

    # The colour is on screen: a new observer must not call itself ready
    # (it would report a stale window as new) until the window is gone.
    late = observer.Observer(server.fb_path, observer.LAUNCH_RGB, server.env, keep=True).start()
    time.sleep(0.5)
    check(late.ready is None, "%s: not ready while the colour is already on screen" % kind)
    stopping = time.monotonic_ns()
    app.stop()
    late.wait_ready(10)
    check(late.ready["ns"] > stopping,
          "%s: ready only after the app was stopped (%.1f ms after)"
          % (kind, (late.ready["ns"] - stopping) / 1e6))
    check(late.seen_ns() is None, "%s: ready once the window has gone, nothing seen" % kind)
    polling = late.child.alive()
    done = late.stop()
    check(polling and not done["seen"] and done["polls"] > 0,
          "%s: a --keep observer polls on until SIGTERM stops it (still running: %s; %d polls)"
          % (kind, polling, done["polls"]))
    server.stop()


def agree_on(kind, workdir):
    server = Server(kind, workdir).start()
    diffs, cpu_per_s = [], []
    for i in range(LAUNCHES):
        obs = observer.Observer(server.fb_path, observer.LAUNCH_RGB, server.env,
                                timeout_ms=30000).start()
        ready = obs.wait_ready(10)
        app = Launch(server, "launch-%d" % i)
        ff = app.first_frame()
        seen = obs.wait_seen(10)
        if seen is None:
            fail("%s launch %d: observer never saw the window (%s)" % (kind, i, obs._why()))
        # Nothing stale: the colour was absent before the app ran. (Not
        # "seen after submitted": an app descheduled between handing its
        # frame over and reading the clock reads it after the pixels show.)
        tl = ff.get("timeline", {})
        exec_ns, submitted = tl.get("exec") or ff["ns"], tl.get("submitted") or ff["commit_ns"]
        check(ready < exec_ns < seen,
              "%s launch %d: observer ready %.1f ms before the app's exec, saw it %.1f ms "
              "after exec, %+.1f ms after the app's submitted"
              % (kind, i, (exec_ns - ready) / 1e6, (seen - exec_ns) / 1e6,
                 (seen - submitted) / 1e6))
        done = obs.stop()
        # The server writes its trace line just after the frame (a hang
        # guard, no time limit: a server held off the CPU writes it late).
        deadline = time.monotonic() + 10.0
        comp, events = server_frames(server, app, ff)
        while not comp and time.monotonic() < deadline:
            time.sleep(0.02)
            comp, events = server_frames(server, app, ff)
        if not comp:
            fail("%s launch %d: the server traced no \"composited\" event for the app "
                 "(contract 1)" % (kind, i))
        what = "%s launch %d" % (kind, i)
        frames = [e for e in events if e.get("name") == "frame"]
        # The frame the server names: painted, and composited is its done_ns.
        named = [f for f in frames if f.get("seq") == comp["seq"]]
        check(len(named) == 1 and named[0].get("painted") is True
              and named[0].get("done_ns") == comp["t_ns"],
              "%s: composited names painted frame %d, at its done_ns: %s"
              % (what, comp["seq"], named))
        k = named[0]
        # Its pixels cannot be on screen before it began, i.e. before the
        # painted frame before it was finished (each server paints one
        # frame at a time): an order no descheduling can turn round.
        before = [f for f in frames if f.get("painted") and f.get("seq", 0) < comp["seq"]]
        prev = before[-1] if before else None
        check(prev is None or prev["done_ns"] < seen,
              "%s: seen after the painted frame before frame %d was finished (%s)"
              % (what, comp["seq"], "%+.3f ms after" % ((seen - prev["done_ns"]) / 1e6)
                 if prev else "no frame before"))
        # It is the frame that first showed the app, by the server's own
        # account, and it drew where the observer first saw the colour.
        x, y = obs.seen["x"], obs.seen["y"]
        if kind == "x11":
            # duet-xwm shows a mapped window once its contents are fetched:
            # no painted frame after the window's map and before the named
            # one put pixels where the window is, and the named one did.
            def puts_at(f):
                return any(rx <= x < rx + rw and ry <= y < ry + rh
                           for rx, ry, rw, rh in f.get("put_rects") or [])
            at = events.index(k)
            mapped = [j for j, e in enumerate(events[:at]) if e.get("name") == "window_mapped"
                      and e.get("window") == comp.get("window")]
            between = [f for f in events[mapped[-1] + 1:at] if f.get("name") == "frame"
                       and f.get("painted") and puts_at(f)] if mapped else None
            check(mapped and not between,
                  "%s: no painted frame between the window's map and frame %d put pixels at "
                  "%d,%d (%s)" % (what, comp["seq"], x, y,
                                  between if mapped else "no window_mapped event before it"))
            check(puts_at(k), "%s: frame %d put %s (%d in all), where the observer saw the "
                  "colour at %d,%d" % (what, comp["seq"], k.get("put_rects"), k.get("puts", 0),
                                       x, y))
        else:
            # The named frame took the app's first buffer in (its upload),
            # the painted frame before it took none.
            check(k.get("uploaded", 0) > 0 and (prev is None or prev.get("uploaded") == 0),
                  "%s: frame %d uploaded %s bytes of client buffers, the painted frame before "
                  "it %s" % (what, comp["seq"], k.get("uploaded"),
                             prev.get("uploaded") if prev else "(none)"))
            # The --vfb file counts painted frames: frame V is the V-th
            # painted frame of the trace. The observer read the counter
            # before scanning, so the frame it tore into may be one more.
            v, c_seen = len(before) + 1, obs.seen.get("frame")
            check(c_seen is not None and v <= c_seen + 1,
                  "%s: frame %d is the --vfb file's frame %d; the observer first saw the colour "
                  "with the counter at %s" % (what, comp["seq"], v, c_seen))
            rects = vfb_damage(server.fb_path, v)
            check(rects is not None and
                  any(x1 <= x < x2 and y1 <= y < y2 for x1, y1, x2, y2 in rects),
                  "%s: --vfb frame %d damaged %s, where the observer saw the colour at %d,%d"
                  % (what, v, rects, x, y))
        diffs.append(seen - comp["t_ns"])
        cpu_per_s.append(done["cpu_ns"] / max(done["wall_ns"], 1))
        absent = obs.seen.get("absent_ns") or 0
        print("%s: seen - composited = %+.3f ms (last poll without it %+.3f ms); "
              "composited - app's submitted = %+.3f ms (observer %d polls, %.2f ms CPU in "
              "%.0f ms)"
              % (what, (seen - comp["t_ns"]) / 1e6, (absent - comp["t_ns"]) / 1e6,
                 (comp["t_ns"] - submitted) / 1e6, done["polls"], done["cpu_ns"] / 1e6,
                 done["wall_ns"] / 1e6), flush=True)
        app.stop()
        wait_gone(server)
    server.stop()
    # The differences are figures, printed: their size is the two
    # processes' scheduling as much as either clock (docs/methodology.md).
    med = statistics.median(diffs)
    print("%s: differences (ms): %s; median %+.3f ms; observer CPU %.1f%% of a core"
          % (kind, " ".join("%+.3f" % (d / 1e6) for d in diffs), med / 1e6,
             100 * statistics.median(cpu_per_s)), flush=True)
    return diffs, cpu_per_s


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("functional", "agrees"):
        print(__doc__)
        return 2
    procs.become_subreaper()
    if not observer.find_observe():
        fail("duet-observe is not built")
    workdir = tempfile.mkdtemp(prefix="duet-observer-test-")
    try:
        if sys.argv[1] == "functional":
            test_not_a_framebuffer(workdir)
            test_truncated_file(workdir)
            for kind in ("x11", "wayland"):
                functional_on(kind, workdir)
            test_size_tags(workdir)
            for kind in ("x11", "wayland"):
                sizes_on(kind, workdir)
        else:
            for kind in ("wayland", "x11"):
                agree_on(kind, workdir)
    finally:
        cleanup()
    if os.environ.get("DUET_KEEP_TEST_DIR"):
        print("kept " + workdir)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
