"""What duet-compositor costs, as behaviour rather than timings (issue 9):

  latch             a burst of commits between two frames is copied once:
                    the frames' "uploaded" bytes in the trace are one buffer
                    for the map and one for the burst, the last buffer is
                    the one on screen, and every buffer is released; on the
                    pixman engine (latch-pixman) nothing is copied and the
                    buffer on screen is held, every other one released
  one-configure     a toplevel is mapped with one configure (the first one
                    already carries "activated"), so it draws once
  idle-syscalls     once a client is idle and nothing on screen changes, the
                    compositor makes no syscall at all (strace -c, 2 s)
  idle-frames       a frame callback with nothing to paint costs one timer
                    wakeup, not a repaint and then a flip (strace)
  frame-ipc         a client redrawing at every frame callback costs one
                    recvmsg and one sendmsg per frame (strace), the buffer
                    release riding with the frame callback (frame-ipc-pixman:
                    the same where buffers are released at commit)
  launch-syscalls   duet-launch (sw engine) from its fork to its first
                    presented frame costs the compositor at most 8 socket
                    syscalls (strace): 3 reads and 4 writes are enough for
                    the globals, the binds with the window, and the frame
"""

import os
import re
import time

import duet
from duet import check, log
from duet_bench import procs

SIDE = 256
BUFFER_BYTES = SIDE * SIDE * 4


def program(name):
    path = os.environ.get(name)
    if not path:
        # The mailbox client sits beside the test-pattern client.
        base = os.path.dirname(duet.program("DUET_TEST_PATTERN"))
        path = os.path.join(base, "duet-mailbox-client")
    check(os.access(path, os.X_OK), "%s is not built (%s)" % (name, path))
    return path


def wait_testctl_closed(s, before):
    """Waits until the compositor holds no socket beyond those in before
    (taken before duet-testctl first ran): it has torn down every testctl
    connection. It does so at the hangup after the tool exited, closing the
    socket as its last step before its loop sleeps again; an strace
    attached sooner counts that teardown, which under load comes any time
    later (the deadline is a hang guard)."""
    deadline = time.monotonic() + 60
    while True:
        left = set(procs.socket_inodes(s.compositor.pid)) - before
        if not left:
            return
        if time.monotonic() > deadline:
            raise duet.Failure("duet-compositor still holds %s 60 s after duet-testctl exited: "
                               "the testctl connection was not torn down"
                               % ["socket:[%d]" % i for i in sorted(left)])
        time.sleep(0.02)


def scenario_latch():
    trace = os.path.join(os.environ.get("DUET_TEST_OUTDIR") or "/tmp",
                         "duet-latch-%d.trace" % os.getpid())
    if os.path.exists(trace):
        os.unlink(trace)
    os.environ["DUET_TRACE"] = trace
    burst = 6
    try:
        with duet.Session("latch") as s:
            c = s.client([program("DUET_MAILBOX_CLIENT"), str(burst)])
            c.wait_line(r"^mapped$")
            c.wait_line(r"^shown \d+$")
            _, m = c.wait_line(r"^released (\d+)$")
            released = int(m.group(1))
            win = s.wait_window(app_id="duet-mailbox")
            img = s.screenshot("burst")
            frames = [e for e in duet.read_trace(trace) if e["name"] == "frame"]
            uploaded = sum(e.get("uploaded", 0) for e in frames)
            log("frames %d, uploaded %d bytes, released %d of %d"
                % (len(frames), uploaded, released, burst + 1))
            check(all("uploaded" in e for e in frames), "frame events carry no 'uploaded'")
            if os.environ.get("DUET_TEST_RENDERER") == "pixman":
                # Sampled in place: nothing copied, and the buffer on
                # screen is held (the others were given back).
                check(uploaded == 0, "%d bytes uploaded for a map and a burst of %d commits "
                      "on the pixman engine, which samples wl_shm buffers in place"
                      % (uploaded, burst))
                check(released == burst, "%d of %d buffers released (all but the one shown)"
                      % (released, burst + 1))
            else:
                # The map's buffer and the burst's last: each copied once.
                check(uploaded == 2 * BUFFER_BYTES,
                      "%d bytes uploaded for a map and a burst of %d commits; latching copies "
                      "%d (one buffer per shown frame)" % (uploaded, burst, 2 * BUFFER_BYTES))
                check(released == burst + 1, "%d of %d buffers released"
                      % (released, burst + 1))
            want = 0xff000000 | (burst * 0x1f) << 8
            px = img.pixel(win.x + SIDE // 2, win.y + SIDE // 2)
            check(px == ((want >> 16) & 255, (want >> 8) & 255, want & 255),
                  "window shows %r, not the burst's last buffer (%06x)" % (px, want & 0xffffff))
    finally:
        if os.path.exists(trace):
            os.unlink(trace)


def scenario_one_configure():
    with duet.Session("one-configure") as s:
        c = s.client([duet.program("DUET_TEST_PATTERN")], env={"WAYLAND_DEBUG": "client"})
        c.wait_line(r"^mapped ")
        win = s.wait_window(pid=c.pid)
        s.sync()
        check(win.focused, "the new window is not focused: %r" % (win,))
        with open(c.stderr_path, errors="replace") as f:
            debug = f.read()
        configures = re.findall(r"xdg_toplevel@\d+\.configure\(", debug)
        log("xdg_toplevel.configure events: %d" % len(configures))
        check(len(configures) == 1,
              "%d configures to map one window (the first should carry activated)"
              % len(configures))


def scenario_idle_syscalls():
    with duet.Session("idle-syscalls") as s:
        c = s.client([duet.program("DUET_TEST_PATTERN")])
        c.wait_line(r"^mapped ")
        # The listening sockets and the client's connection.
        before = set(procs.socket_inodes(s.compositor.pid))
        s.wait_window(pid=c.pid)
        s.sync()
        wait_testctl_closed(s, before)
        out = os.path.join(s.workdir, "idle.strace")
        st = duet.Strace(s.compositor.pid, out)
        time.sleep(2.0)
        text = st.stop()
        # Calls already blocked when strace attached show as unfinished
        # and stay so (or detached) unless they return: only calls that
        # completed in the window count.
        calls = [l for l in text.splitlines()
                 if re.search(r"\)\s+= ", l) or "resumed>" in l]
        log("syscalls while idle: %d" % len(calls))
        check(not calls, "the compositor made %d syscalls while idle, e.g.:\n%s"
              % (len(calls), "\n".join(calls[:10])))


def scenario_idle_frames():
    n = 30
    with duet.Session("idle-frames") as s:
        c = s.client([program("DUET_MAILBOX_CLIENT"), "--idle-frames", str(n)])
        c.wait_line(r"^released \d+$")
        out = os.path.join(s.workdir, "frames.strace")
        # The client waits 1 s after mapping before its idle frames.
        st = duet.Strace(s.compositor.pid, out, ["-yy", "-e", "trace=read"])
        c.wait_line(r"^idle-frames %d$" % n, timeout=30)
        text = st.stop()
        timer_reads = [l for l in text.splitlines() if "timerfd" in l]
        log("timer wakeups for %d idle frames: %d" % (n, len(timer_reads)))
        check(len(timer_reads) <= n + 2,
              "%d timer wakeups for %d frames with nothing to paint (one each is enough)"
              % (len(timer_reads), n))


def scenario_launch_syscalls():
    limit = 8
    with duet.Session("launch-syscalls") as s:
        s.sync()
        time.sleep(0.3)  # the testctl connection's teardown
        out = os.path.join(s.workdir, "launch.strace")
        st = duet.Strace(s.compositor.pid, out, ["-e", "trace=sendmsg,recvmsg"])
        c = s.client([duet.program("DUET_LAUNCH"), "--engine", "sw", "--stay"])
        c.wait_line(r'"name":"first_frame"', timeout=30)
        text = st.stop()
        calls = [l for l in text.splitlines()
                 if re.search(r"\b(sendmsg|recvmsg)\(", l) and not re.search(r"= -1 E", l)]
        log("compositor socket syscalls for one launch: %d\n%s"
            % (len(calls), "\n".join(l[:100] for l in calls)))
        check(calls, "strace saw no socket syscall during the launch")
        check(len(calls) <= limit,
              "the compositor made %d socket syscalls for one launch (at most %d: a read "
              "and a write for the globals, for the binds with the window, and for the "
              "frame, and the presentation event)" % (len(calls), limit))


def scenario_frame_ipc():
    """A client drawing a new buffer at every frame callback costs the
    compositor one recvmsg (its commit) and one sendmsg per frame: the
    release of the buffer it replaces leaves with the frame callback, also
    on the pixman engine, where the buffer is replaced (and released) at
    commit rather than at the repaint."""
    with duet.Session("frame-ipc") as s:
        c = s.client([duet.program("DUET_TEST_PATTERN"), "--frames", "100000000"])
        c.wait_line(r"^frame 10$")
        out = os.path.join(s.workdir, "ipc.strace")
        st = duet.Strace(s.compositor.pid, out, ["-e", "trace=sendmsg,recvmsg,writev"])
        i0, m0 = c.wait_line(r"^frame (\d+)$", start=len(c.lines))
        i1, m1 = c.wait_line(r"^frame (\d+)$", start=i0 + 1,
                             pred=lambda m: int(m.group(1)) >= int(m0.group(1)) + 60,
                             timeout=30)
        text = st.stop()
        frames = int(m1.group(1)) - int(m0.group(1))
        calls = [l for l in text.splitlines() if re.search(r"\b(sendmsg|recvmsg|writev)\(", l)
                 and not re.search(r"= -1 E", l)]
        sends = sum(1 for l in calls if "recvmsg(" not in l)
        recvs = len(calls) - sends
        log("%d frames: %d recvmsg, %d sendmsg/writev" % (frames, recvs, sends))
        # Counted against each other in the same strace window, not against
        # the frame lines, which the test reads late by however long the
        # load keeps it off the CPU (the window then holds more frames than
        # it counted). The client commits once per frame callback, so each
        # frame is one read of its commit; each read is answered by one
        # write (the frame callback, the release with it), give or take
        # the frame cut by each end of the window.
        # Enough frames for a release on its own to show (twice the
        # writes): the window holds the frames whose lines came after strace
        # attached, less any the test had not read yet when it attached.
        check(recvs >= 10, "%d recvmsg in a window of %d frame lines" % (recvs, frames))
        check(sends <= recvs + 2, "%d sends for %d reads of a commit: a release (or another "
              "event) left on its own instead of with the frame callback" % (sends, recvs))
        check(recvs <= sends + 2, "%d recvmsg for %d frame callbacks sent" % (recvs, sends))


SCENARIOS = {
    "latch": scenario_latch,
    "one-configure": scenario_one_configure,
    "idle-syscalls": scenario_idle_syscalls,
    "idle-frames": scenario_idle_frames,
    "launch-syscalls": scenario_launch_syscalls,
    "frame-ipc": scenario_frame_ipc,
}

if __name__ == "__main__":
    duet.main_scenario(SCENARIOS)
