#!/usr/bin/env python3
"""What the servers' traces say about frames (issue 8, contract 1):

  xwm-first-damage      duet-xwm paints no frame for a window its client
                        mapped but has not drawn yet: a raw X11 client maps,
                        waits ~300 ms once duet-xwm has mapped the window,
                        then draws; no painted frame falls in between, and
                        the window is first shown (the "composited" event)
                        after the drawing.
  xwm-composited        duet-xwm's "composited" events: first content and a
                        new size, with the client's pid (_NET_WM_PID), the
                        window and a time after the client's drawing.
  wayland-composited    the same events from duet-compositor for
                        duet-test-pattern, pid from the socket's credentials.
  xwm-ready             duet-xwm sets _NET_SUPPORTING_WM_CHECK only after its
                        renderer and output are up (its xwm_paths trace line
                        comes first).

usage: test_server_frames.py SCENARIO
"""

import atexit
import json
import math
import os
import socket
import struct
import sys
import time

import duet
from duet import check


# Trace files: kept (next to meson's log) when the scenario fails.
TRACES = []
PASSED = []


def remove_traces():
    if PASSED:
        for path in TRACES:
            if os.path.exists(path):
                os.unlink(path)


atexit.register(remove_traces)


def new_trace(name):
    """A trace file for the servers this scenario starts: set in the
    environment, which the sessions copy."""
    trace = os.path.join(os.environ.get("DUET_TEST_OUTDIR") or "/tmp",
                         "duet-%s-%d.trace" % (name, os.getpid()))
    if os.path.exists(trace):
        os.unlink(trace)
    os.environ["DUET_TRACE"] = trace
    TRACES.append(trace)
    return trace


def read_trace(path, pid=None):
    events = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue  # a line being written
                if pid is None or ev.get("pid") == pid:
                    events.append(ev)
    except FileNotFoundError:
        pass
    return events


def wait_trace(path, pred, what, timeout=10, pid=None):
    deadline = time.monotonic() + timeout
    while True:
        events = read_trace(path, pid)
        found = [e for e in events if pred(e)]
        if found:
            return found, events
        check(time.monotonic() < deadline, "no %s in the trace after %d s; last lines: %s"
              % (what, timeout, events[-5:]))
        time.sleep(0.05)


# ------------------------------------------------------------ a raw X11 client
class RawX11:
    """The few X11 requests a test client needs, spoken over the display's
    Unix socket with the standard library only: this client draws exactly
    when the test says, which no toolkit promises."""

    def __init__(self, display):
        num = display.lstrip(":").split(".")[0]
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect("/tmp/.X11-unix/X%s" % num)
        self.seq = 0
        self.sock.sendall(struct.pack("<BxHHHHxx", 0x6C, 11, 0, 0, 0))
        head = self._recv(8)
        check(head[0] == 1, "X connection refused")
        body = self._recv(struct.unpack_from("<H", head, 6)[0] * 4)
        self.id_base, self.id_mask = struct.unpack_from("<II", body, 4)
        vendor_len, = struct.unpack_from("<H", body, 16)
        nformats = body[21]
        off = 32 + (vendor_len + 3) // 4 * 4 + 8 * nformats
        self.root, = struct.unpack_from("<I", body, off)
        self.next_id = 0

    def _recv(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            check(chunk, "X server closed the connection")
            data += chunk
        return data

    def new_id(self):
        self.next_id += 1
        return self.id_base | (self.next_id & self.id_mask)

    def request(self, opcode, data1, body):
        body += b"\0" * (-len(body) % 4)
        self.sock.sendall(struct.pack("<BBH", opcode, data1, 1 + len(body) // 4) + body)
        self.seq = (self.seq + 1) & 0xFFFF
        return self.seq

    def reply(self, seq):
        """The reply to request seq (events on the way are dropped; an
        error fails the test)."""
        while True:
            head = self._recv(32)
            extra = struct.unpack_from("<I", head, 4)[0] * 4 if head[0] == 1 else 0
            data = head + (self._recv(extra) if extra else b"")
            got = struct.unpack_from("<H", head, 2)[0]
            check(head[0] != 0, "X error %d for request seq %d" % (head[1], got))
            if head[0] == 1 and got == seq:
                return data

    def intern(self, name):
        b = name.encode()
        seq = self.request(16, 0, struct.pack("<HH", len(b), 0) + b)
        return struct.unpack_from("<I", self.reply(seq), 8)[0]

    def roundtrip(self):
        self.reply(self.request(43, 0, b""))  # GetInputFocus

    def create_window(self, w, h):
        wid = self.new_id()
        # No background (the server never paints it), Exposure and
        # StructureNotify events: as duet's toolkit and GTK create theirs.
        values = struct.pack("<II", 0, 0x8000 | 0x20000)
        self.request(1, 0, struct.pack("<IIhhHHHHII", wid, self.root, 0, 0, w, h, 0, 1, 0,
                                       0x1 | 0x800) + values)
        pid_atom = self.intern("_NET_WM_PID")
        self.request(18, 0, struct.pack("<IIIBxxxI", wid, pid_atom, 6, 32, 1)
                     + struct.pack("<I", os.getpid()))
        cls = b"duet-first-damage\0duet-first-damage\0"
        self.request(18, 0, struct.pack("<IIIBxxxI", wid, 67, 31, 8, len(cls)) + cls)
        self.gc = self.new_id()
        self.request(55, 0, struct.pack("<IIII", self.gc, wid, 0x4, 0x3060C0))
        return wid

    def map(self, wid):
        self.request(8, 0, struct.pack("<I", wid))

    def resize(self, wid, w, h):
        self.request(12, 0, struct.pack("<IHxxII", wid, 0x4 | 0x8, w, h))

    def fill(self, wid, w, h):
        self.request(70, 0, struct.pack("<IIhhHH", wid, self.gc, 0, 0, w, h))


def xwm_session(name):
    # Before the session copies the environment: duet-xwm traces into it.
    trace = new_trace(name)
    return duet.XSession(name, wm="duet"), trace


def map_late_draw(s, trace, w=240, h=160, delay=0.3):
    """Maps a window, draws into it delay seconds after duet-xwm mapped it;
    returns its id and the monotonic ns just before the map and just before
    the drawing."""
    xwm_pid = s.wm.pid
    # The output's first frame (the background) is out before we start.
    wait_trace(trace, lambda e: e["name"] == "frame" and e.get("painted"), "first frame",
               pid=xwm_pid)
    x = RawX11(s.display)
    wid = x.create_window(w, h)
    x.roundtrip()
    t_map = time.monotonic_ns()
    x.map(wid)
    x.roundtrip()
    # The map is redirected to duet-xwm: until it has mapped the window,
    # drawing into it is lost (no background, no backing store) and no
    # damage ever comes. It traces window_mapped on the server's MapNotify,
    # so the delay starts once the window is mapped, however long a loaded
    # machine keeps the WM from it.
    wait_trace(trace, lambda e: e["name"] == "window_mapped" and e["window"] == wid,
               "window_mapped 0x%x" % wid, timeout=60, pid=xwm_pid)
    time.sleep(delay)
    t_draw = time.monotonic_ns()
    x.fill(wid, w, h)
    x.roundtrip()
    return x, wid, t_map, t_draw


def xwm_first_damage():
    s, trace = xwm_session("xwm-first-damage")
    with s:
        x, wid, t_map, t_draw = map_late_draw(s, trace)
        _, events = wait_trace(trace, lambda e: e["name"] == "frame" and e["painted"]
                               and e["ns"] >= t_draw, "painted frame after the drawing",
                               pid=s.wm.pid)
        early = [e for e in events if e["name"] == "frame" and e.get("painted")
                 and t_map <= e["ns"] < t_draw]
        check(not early, "duet-xwm painted %d frame(s) between the map and the client's "
              "first drawing %.1f ms later: %s"
              % (len(early), (t_draw - t_map) / 1e6, early[:3]))
        shown, events = wait_trace(trace, lambda e: e["name"] == "composited"
                                   and e.get("window") == wid, "composited 0x%x" % wid,
                                   pid=s.wm.pid)
        mapped = [e for e in events if e["name"] == "window_mapped" and e["window"] == wid]
        check(mapped and mapped[0]["ns"] < t_draw and mapped[0]["awaiting_content"] is True,
              "duet-xwm did not wait for the window's first drawing: %s" % mapped)
        fetched = [e for e in events if e["name"] == "frame" and t_map <= e["ns"] < t_draw]
        duet.log("%d frame(s) between map and drawing, none painted" % len(fetched))
        first = [e for e in events if e["name"] == "first_damage" and e["window"] == wid]
        check(first and first[0]["ns"] >= t_draw,
              "first_damage of 0x%x before the client drew: %s" % (wid, first))
        check(shown[0]["t_ns"] >= t_draw, "window shown at %d, drawn at %d"
              % (shown[0]["t_ns"], t_draw))
        duet.log("window 0x%x mapped, drawn %.1f ms later, composited %.2f ms after the "
                 "drawing" % (wid, (t_draw - t_map) / 1e6, (shown[0]["t_ns"] - t_draw) / 1e6))


def xwm_composited():
    s, trace = xwm_session("xwm-composited")
    with s:
        x, wid, t_map, t_draw = map_late_draw(s, trace, 240, 160, delay=0)
        shown, _ = wait_trace(trace, lambda e: e["name"] == "composited"
                              and e.get("window") == wid, "composited 0x%x" % wid,
                              pid=s.wm.pid)
        e = shown[0]
        check(e["first"] is True, "first composited event has first=%r" % e["first"])
        check(e["client_pid"] == os.getpid(), "client_pid %r, the client is %d"
              % (e["client_pid"], os.getpid()))
        check((e["width"], e["height"]) == (240, 160), "size %dx%d" % (e["width"], e["height"]))
        check(t_draw <= e["t_ns"] <= e["ns"], "t_ns %d not between the drawing %d and the "
              "trace write %d" % (e["t_ns"], t_draw, e["ns"]))
        frames = [f for f in read_trace(trace, s.wm.pid)
                  if f["name"] == "frame" and f["seq"] == e["seq"]]
        check(frames and frames[0]["painted"], "no painted frame %d: %s" % (e["seq"], frames))
        # A new size: the client resizes itself (the WM applies it) and
        # redraws.
        t_resize = time.monotonic_ns()
        x.resize(wid, 320, 200)
        x.roundtrip()
        time.sleep(0.1)
        x.fill(wid, 320, 200)
        x.roundtrip()
        resized, events = wait_trace(trace, lambda e: e["name"] == "composited"
                                     and e.get("window") == wid and not e["first"],
                                     "composited resize of 0x%x" % wid, pid=s.wm.pid)
        r = resized[0]
        check((r["width"], r["height"]) == (320, 200), "resize event size %dx%d"
              % (r["width"], r["height"]))
        check(r["t_ns"] >= t_resize and r["seq"] > e["seq"], "resize event %s" % r)
        firsts = [x for x in events if x["name"] == "composited" and x.get("window") == wid
                  and x["first"]]
        check(len(firsts) == 1, "%d first events for one map" % len(firsts))
        duet.log("composited: first %s; resize %s" % (e, r))


def wayland_composited():
    trace = new_trace("wayland-composited")
    with duet.Session("wayland-composited") as s:
        t0 = time.monotonic_ns()
        p = s.client([duet.program("DUET_TEST_PATTERN"), "--size", "300x200",
                      "--app-id", "duet-composited"])
        p.wait_line(r"^mapped 300 200$")
        win = s.wait_window(app_id="duet-composited")
        pid = s.compositor.pid
        shown, _ = wait_trace(trace, lambda e: e["name"] == "composited" and e["first"],
                              "composited", pid=pid)
        e = shown[0]
        check(e["client_pid"] == p.pid, "client_pid %r, the client is %d"
              % (e["client_pid"], p.pid))
        check((e["width"], e["height"]) == (300, 200), "size %dx%d" % (e["width"], e["height"]))
        check(t0 <= e["t_ns"] <= e["ns"], "t_ns %d not between the start %d and the trace "
              "write %d" % (e["t_ns"], t0, e["ns"]))
        frames = [f for f in read_trace(trace, pid) if f["name"] == "frame"
                  and f["seq"] == e["seq"]]
        check(frames and frames[0]["painted"] and frames[0]["done_ns"] == e["t_ns"],
              "frame %d: %s" % (e["seq"], frames))
        # Presented on the grid, never before the pixels existed.
        check(frames[0]["tick_ns"] >= e["t_ns"], "presented before the pixels: %s" % frames[0])
        s.testctl("resize", win.id, 200, 150)
        p.wait_line(r"^resized 200 150$")
        resized, events = wait_trace(trace, lambda e: e["name"] == "composited"
                                     and not e["first"], "composited resize", pid=pid)
        r = resized[0]
        check((r["width"], r["height"]) == (200, 150) and r["client_pid"] == p.pid
              and r["seq"] > e["seq"], "resize event %s" % r)
        firsts = [x for x in events if x["name"] == "composited" and x["first"]]
        check(len(firsts) == 1, "%d first events for one window" % len(firsts))
        # The grid: each frame's tick is a whole number of periods after
        # the frame before's, and seq counts those periods; or, after an
        # idle spell, the clock started on the request (render/README.md):
        # the tick is a repaint window after it, so at least a window after
        # the last frame's tick, and seq went on by the periods that passed.
        frames = [f for f in events if f["name"] == "frame"]
        period = 1e9 / 60
        window = min(period / 2, 7e6)
        restarts = 0
        for prev, f in zip(frames, frames[1:]):
            d = f["tick_ns"] - prev["tick_ns"]
            periods = d / period
            steps = f["seq"] - prev["seq"]
            on_grid = (abs(periods - round(periods)) < 1e-3 * max(1, periods)
                       and round(periods) == steps)
            # Idle: past the tick after a painted frame, past the tick of
            # an empty one.
            idle_from = prev["tick_ns"] + (period if prev["painted"] else 0)
            elapsed = (d - window) / period
            restarted = (f["tick_ns"] - window >= idle_from - 1000
                         and steps == max(1, math.ceil(elapsed - 1e-4)))
            restarts += not on_grid
            check(on_grid or restarted, "frame %s is neither on the grid of %s nor a start "
                  "after idle" % (f, prev))
        duet.log("composited: first %s; resize %s; %d frames on the grid, %d starts after "
                 "idle" % (e, r, len(frames), restarts))


def xwm_ready():
    s, trace = xwm_session("xwm-ready")
    with s:
        # The session returned once duet-xctl wait-wm saw the check
        # property; by then duet-xwm must have traced its output paths.
        events = read_trace(trace, s.wm.pid)
        names = [e["name"] for e in events]
        check("xwm_paths" in names, "the WM check was set before the output was up: "
              "trace %s" % names)
        check("xwm_start" in names, "the WM check was set before the WM started: %s" % names)


SCENARIOS = {
    "xwm-first-damage": xwm_first_damage,
    "xwm-composited": xwm_composited,
    "wayland-composited": wayland_composited,
    "xwm-ready": xwm_ready,
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    def run():
        SCENARIOS[sys.argv[1]]()
        PASSED.append(True)
    duet.main(run)
