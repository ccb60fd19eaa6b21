#!/usr/bin/env python3
"""duet-xwm never sits waiting for the X server while clients work
(issue 9). Counted through its protocol log ($DUET_PROTOCOL_LOG, written
on SIGUSR2): "reply_waits" is every xcb_wait_for_reply it made, i.e. every
round trip it could have blocked in (xwm/protolog.c).

  frames  a client redraws its window 60 times, 15 ms apart; duet-xwm
          composites them (its trace's painted frames) without waiting for
          a single reply: the window contents are fetched by requests whose
          replies the event loop picks up when they come (xwm/fetch.c),
          where it used to wait for them in every frame.
  props   a client's properties change 40 times (WM_NAME, then
          WM_NORMAL_HINTS with a maximum size); duet-xwm reads each new
          value without waiting for it (xwm-model/props.c; it waited once per
          PropertyNotify) and still applies it: a window-manager resize
          afterwards is held to the new maximum.

  unthrottled  at --refresh 0 a client redraws 60 times, 15 ms apart;
          duet-xwm paints them without setting a timer (strace): a
          repaint whose deadline has come runs before the loop sleeps,
          where a timer set to fire at once cost a timerfd_settime, a
          wakeup and a read per frame.

  sync-frames  at --refresh 0, duet-render (the extended _NET_WM_SYNC
          counter: it ends each frame after its damage, and starts the
          next at once) draws for a second; no frame of duet-xwm paints
          nothing and answers nothing. The frame that shows a client
          frame answers it (_NET_WM_FRAME_DRAWN), and the frame the
          counter asked for meanwhile is dropped, where it used to run,
          painting and answering nothing, a round trip, after most client
          frames. The damage of the client's next frame, arriving while
          the frame that answers one is in flight, no longer holds that
          answer back (that frame then painted and answered nothing, as
          often as the two raced so), and a repaint that finds
          nothing to paint or answer (the window's placement before its
          map, its destruction after its unmap) is not run.

usage: test_xwm_perf.py frames|props|unthrottled|sync-frames
"""

import json
import os
import signal
import sys
import time

import duet
from duet import check

SIZE = "1024x768"


class Counts:
    """duet-xwm's protocol log and trace, read on demand."""

    def __init__(self, s, log, trace):
        self.s, self.log, self.trace = s, log, trace

    def reply_waits(self):
        """Makes duet-xwm rewrite its log (SIGUSR2) and returns its
        reply_waits once the rewrite is seen."""
        before = os.stat(self.log).st_mtime_ns if os.path.exists(self.log) else None
        os.kill(self.s.wm.pid, signal.SIGUSR2)
        deadline = time.monotonic() + 10
        while True:
            if os.path.exists(self.log) and os.stat(self.log).st_mtime_ns != before:
                with open(self.log) as f:
                    try:
                        return json.load(f)["clients"][0]["reply_waits"]
                    except ValueError:
                        pass  # renamed in place: read again
            check(time.monotonic() < deadline, "duet-xwm did not rewrite %s" % self.log)
            time.sleep(0.02)

    def painted_frames(self):
        return sum(1 for e in duet.read_trace(self.trace)
                   if e.get("name") == "frame" and e.get("painted"))

    def wait_painted(self, before, timeout=30):
        """Until duet-xwm has painted a frame since it had painted before:
        the client drew frames, so one must come. How many it paints for
        the client's 60 depends on how fast each side runs (it paints the
        latest contents when it gets to them), so that is printed, not
        checked: one painted frame is what the checks need (a wait per
        fetch, or a timer per repaint, would show in it); the timeout is a
        hang guard."""
        deadline = time.monotonic() + timeout
        while self.painted_frames() <= before:
            check(time.monotonic() < deadline, "duet-xwm painted no frame in %d s while the "
                  "client drew" % timeout)
            time.sleep(0.02)

    def wait_drawn(self, client, before):
        """Until the animated client has drawn its 60 frames and duet-xwm
        has painted since it had painted before, and its last repaint."""
        client.wait_line(r"^frame 60$", timeout=30)
        self.s.sync()
        self.wait_painted(before)
        time.sleep(0.1)  # the last frame's repaint


def session(name, wm_args=()):
    """duet-xwm's session, writing its protocol log and trace, and their
    Counts."""
    s = duet.XSession(name, size=SIZE, wm_args=wm_args)
    log = os.path.join(s.workdir, "protocol.json")
    trace = os.path.join(s.workdir, "trace.jsonl")
    s.wm_env = {"DUET_PROTOCOL_LOG": log, "DUET_TRACE": trace}
    return s, Counts(s, log, trace)


# duet-x11-test-pattern's arguments for 60 frames, 15 ms apart.
ANIMATED = ["--frames", "60", "--interval-ms", "15"]


def pattern(s, wm_class, name, args=()):
    """duet-x11-test-pattern's 400x300 window of class wm_class, once
    mapped."""
    p = s.client([duet.program("DUET_X11_TEST_PATTERN"), "--size", "400x300",
                  "--class", wm_class] + list(args), name=name)
    p.wait_line(r"^mapped 400 300$")
    return p


def frames():
    s, c = session("xwm-perf-frames")
    with s:
        pattern(s, "frames", "still")
        s.wait_window(app_id="frames")
        # Managing a window reads its attributes and properties, a few
        # waits once per window, all before the client sees its window
        # mapped; the frames come after.
        a = pattern(s, "animated", "animated", ANIMATED)
        waits0, painted0 = c.reply_waits(), c.painted_frames()
        c.wait_drawn(a, painted0)
        waits, painted = c.reply_waits() - waits0, c.painted_frames() - painted0
        duet.log("%d frames painted while the client drew 60, %d replies waited for"
                 % (painted, waits))
        check(waits == 0, "duet-xwm waited for %d replies over %d painted frames"
              % (waits, painted))


def props():
    s, c = session("xwm-perf-props")
    with s:
        pattern(s, "props", "props")
        win = s.wait_window(app_id="props")
        s.sync()
        waits0 = c.reply_waits()
        wid = "0x%x" % win.id
        for i in range(39):
            r = s.run(["xprop", "-id", wid, "-f", "WM_NAME", "8s", "-set", "WM_NAME",
                       "name %d" % i])
            check(r.returncode == 0, "xprop failed: %s" % r.stderr)
        # flags = PMaxSize (32); max 200x150 at items 7 and 8 of 18.
        hints = [32] + [0] * 6 + [200, 150] + [0] * 9
        r = s.run(["xprop", "-id", wid, "-f", "WM_NORMAL_HINTS", "32i", "-set",
                   "WM_NORMAL_HINTS", ",".join(str(v) for v in hints)])
        check(r.returncode == 0, "xprop failed: %s" % r.stderr)
        s.sync()
        waits = c.reply_waits() - waits0
        s.xctl("resize", wid, 600, 500)
        s.sync()
        got = s.wait_window(app_id="props", pred=lambda w: (w.w, w.h) != (400, 300))
        duet.log("40 property changes: %d replies waited for; resized to %dx%d"
                 % (waits, got.w, got.h))
        check((got.w, got.h) == (200, 150),
              "the new WM_NORMAL_HINTS were not applied: resized to %dx%d, max 200x150"
              % (got.w, got.h))
        check(waits == 0, "duet-xwm waited for %d replies over 40 property changes" % waits)


def unthrottled():
    s, c = session("xwm-perf-unthrottled", wm_args=["--refresh", "0"])
    with s:
        a = pattern(s, "animated", "animated", ANIMATED)
        st = duet.Strace(s.wm.pid, os.path.join(s.workdir, "strace.txt"),
                         ["-e", "trace=timerfd_settime"])
        painted0 = c.painted_frames()
        c.wait_drawn(a, painted0)
        calls = [l for l in st.stop().splitlines() if "timerfd_settime(" in l]
        painted = c.painted_frames() - painted0
        duet.log("%d frames painted while the client drew up to 60, %d timerfd_settime"
                 % (painted, len(calls)))
        check(not calls, "duet-xwm set a timer %d times over %d frames at refresh 0: %s"
              % (len(calls), painted, calls[:3]))


def sync_frames():
    s, c = session("xwm-perf-sync-frames", wm_args=["--refresh", "0"])
    with s:
        r = s.client([duet.program("DUET_RENDER"), "--backend", "x11", "--engine", "gl",
                      "--duration-ms", "1000", "--scenes", "gradient"], name="render")
        _, m = r.wait_line(r'"name":"scene".*"frames":(\d+)', timeout=30)
        r.wait()
        frames = [e for e in duet.read_trace(c.trace) if e.get("name") == "frame"]
        painted = sum(1 for e in frames if e.get("painted"))
        check(all("frames_drawn" in e for e in frames), "frame events carry no frames_drawn")
        # A frame that paints nothing is owed only for an answer (a
        # client frame whose content an earlier frame showed).
        idle = [e["seq"] for e in frames if not e.get("painted") and not e["frames_drawn"]]
        answering = sum(1 for e in frames if not e.get("painted") and e["frames_drawn"])
        duet.log("the client drew %s frames; duet-xwm made %d frames: %d painted, %d only "
                 "answered, %d painting nothing and answering nothing"
                 % (m.group(1), len(frames), painted, answering, len(idle)))
        # How many of the client's frames duet-xwm paints at refresh 0 is
        # how fast each side runs (the bench's render_painted_hz_r0): one
        # painted frame is what the check below needs.
        drawn = int(m.group(1))
        check(painted >= 1, "no frame painted for %d client frames at refresh 0" % drawn)
        # Exact, whatever the load: a frame starts only with something
        # to paint or to answer, and here nothing takes that away before
        # it finishes (no resize holds an answer; the window's unmap is
        # itself painted).
        check(not idle, "%d frames painted and answered nothing beside %d that painted "
              "(seq %s)" % (len(idle), painted, idle[:10]))


SCENARIOS = {"frames": frames, "props": props, "unthrottled": unthrottled,
             "sync-frames": sync_frames}


if __name__ == "__main__":
    duet.main(SCENARIOS[sys.argv[1]])
