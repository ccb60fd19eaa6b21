#!/usr/bin/env python3
"""Checks that the bench's IPC counts hold up, against real stacks.

usage: test_counts.py agree|lengths|xtrace|slow|sync
  agree:   one duet-launch on duet-compositor, weston and Xvfb + duet-xwm with
           strace attached to the stack AND the in-process counter preloaded
           into it, over the same interval: the server's syscall counts
           agree within 5%, and the protocol messages the server logged for
           the app (duet-compositor's log, weston's WAYLAND_DEBUG=server) are
           at least the server's syscalls with the app; and a dump that never
           comes fails the counting.
  lengths: render IPC per frame (two run lengths, start-up subtracted) made
           from 200 + 600 ms and from 400 + 1200 ms per scene, two
           interleaved rounds, on duet-compositor and on Xvfb + duet-xwm:
           start-up and teardown cancel out, shown on what the protocol
           fixes per frame whatever the load (duet-compositor's log: 4
           requests of the app per frame; duet-xwm's: 2 SYNC alarms per
           frame), from both pairs of lengths; the server's syscalls per
           frame are printed, not compared.
  xtrace:  openbox and xcompmgr behind xtrace proxies: their X protocol is
           counted at launch and per rendered frame; with 1 ms runs the long
           run is lengthened as in `slow` (it failed the openbox stack of
           `duet bench --quick --display kms`: 7 frames against 10).
  slow:    render IPC per frame of the GL engine when a frame takes longer
           than both run lengths (1 ms each: both runs draw one frame per
           scene, as 100 and 300 ms did in the emulated guest of
           `duet bench --quick --display kms`): the long runs are lengthened
           by what the frames took, and a per-frame figure comes out.
  sync:    what a server had not yet read when a count is read is in it:
           weston's WAYLAND_DEBUG=server count holds a client's
           get_registry left in the socket of a stopped weston, continued
           0.5 s into the read (1 request, its globals as events, none of
           the read's own round trip); duet-compositor's protocol log has
           the entry of a client that exited while the server was stopped,
           continued after the log's 2 s wait; on duet-compositor
           --xwayland, Xwayland's counts read while the server is stopped
           (continued after 2 s) hold the requests of an X app's window
           launched since the last read.
Environment: DUET_BUILD_DIR (the build).
"""
import atexit
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import tempfile
import time
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from duet_bench import ipc, procs, stacks  # noqa: E402
from duet_bench.apprun import AppRun  # noqa: E402
from duet_bench.experiment import app_argv  # noqa: E402
from duet_launch import paths  # noqa: E402
from checks import check, fail  # noqa: E402

SCENES = "image_blend_smooth_scaled,rect_blend,text_glyphs"


class Ctx:
    """What the bench's experiment functions need of the bench."""

    def __init__(self, workdir):
        self.apps = {n: paths.find_own("duet-" + n, "clients")
                     for n in ("launch", "render", "resize")}
        self.opts = types.SimpleNamespace(engine="sw", render_engines=["sw"],
                                          render_count_ms=[100, 300], render_count_repeat=1)
        self.workdir = workdir
        self.base_env = dict(os.environ, GALLIUM_DRIVER="llvmpipe", LIBGL_ALWAYS_SOFTWARE="1")
        for k in ("LD_PRELOAD", "DUET_TRACE", "DUET_PROTOCOL_LOG", "DUET_IPC_COUNT_DIR",
                  "WAYLAND_DEBUG"):
            self.base_env.pop(k, None)

    def fault_hook(self, *args):
        pass

    def stack(self, name, refresh=60):
        cdir = tempfile.mkdtemp(prefix="count-", dir=self.workdir)
        env = dict(self.base_env, **ipc.counting_server_env(name))
        return stacks.Stack(name, self.workdir, env, refresh=refresh, counting=cdir).start()


def within(a, b, tol):
    return abs(a - b) <= tol * max(a, b)


def test_agree(ctx):
    strace = shutil.which("strace")
    check(strace is not None, "strace is installed")
    check(paths.find_ipc_lib() is not None, "libduet-ipc-count.so is built")
    for name in ("wayland", "weston", "x11"):
        if stacks.missing(name):
            print("info: %s skipped: %s" % (name, stacks.missing(name)))
            continue
        st = ctx.stack(name)
        try:
            mark = ipc.server_debug_mark(st)
            res = ipc.strace_launch(ctx, st, strace, counting=ipc.Counting(ctx, st))
            if name == "wayland":
                proto = ipc.wait_protocol_log(st, res["app_pid"])
            else:
                proto = ipc.server_debug_counts(st, mark)
            if name == "wayland":
                # A dump that never comes (here: looked for where the
                # counter does not write) fails the run, never reads as 0.
                lost = ipc.Counting(ctx, st)
                lost.dir = tempfile.mkdtemp(prefix="nowhere-", dir=ctx.workdir)
                try:
                    lost.baseline()
                    failed = None
                except ipc.CountFailed as e:
                    failed = str(e)
                check(failed and "no baseline count dump" in failed,
                      "a missing baseline dump is an error: %s" % failed)
        finally:
            st.stop()
        srv_s = res["processes"].get("server", {})
        srv_c = res["counter"]["server"]
        print("%s: server calls on Unix sockets, strace / counter:" % name)
        for call in sorted(set(srv_s.get("per_call", {})) | set(srv_c["per_call"])):
            print("  %-12s %6s / %6s" % (call, srv_s.get("per_call", {}).get(call, {})
                                         .get("unix"), srv_c["per_call"].get(call, {})
                                         .get("unix")))
        for key in ("study_style", "ipc_unix"):
            a, b = srv_s.get(key, 0), srv_c[key]
            check(b > 0 and within(a, b, 0.05),
                  "%s: server %s by strace %d and by the counter %d agree within 5%%"
                  % (name, key, a, b))
        if name in ("wayland", "weston"):
            check(proto is not None, "%s: the server's protocol messages were counted" % name)
            msgs = proto["requests"] + proto["events"]
            calls = srv_c["peers"].get("app", 0)
            check(calls > 0 and msgs >= calls,
                  "%s: %d protocol messages (%d requests + %d events; %s) >= the server's "
                  "%d calls with the app" % (name, msgs, proto["requests"], proto["events"],
                                             proto["source"], calls))
        else:
            wm = res["counter"]["wm"]
            check(wm["ipc_unix"] > 0, "x11: the counter saw duet-xwm's X traffic (%d calls)"
                  % wm["ipc_unix"])


# What each client frame costs by protocol, whatever the load, on the
# stacks the lengths test runs (sw engine, unthrottled duet-render):
# duet-compositor logs 4 requests of the app per frame (wl_surface.attach,
# damage_buffer, wp_presentation.feedback, commit); duet-xwm logs 2 SYNC
# alarms per frame (the app sets its extended frame counter odd as a frame
# starts and even as it ends, _NET_WM_SYNC_REQUEST's frame-sync protocol).
PER_FRAME = {"wayland": ("app requests", 4), "x11": ("SYNC alarms", 2)}
# Start-up and teardown messages that one run may log and another not:
# duet-compositor's entry for the app has its teardown (the destruction of
# its buffers, surface and bound globals: 6 to 9 requests here) or not,
# as the log is read; so the constant part of a run's count (42-51
# requests here) is uneven by up to this, and the per-frame figure by
# this over the frames it is divided by. A run's whole-life figure is off
# by its whole constant over fewer frames, so the two stay apart at any
# frame rate.
UNEVEN_MESSAGES = 32


def fixed_counts(name, run):
    """The run's count of PER_FRAME[name]'s messages, from the server's
    (duet-compositor) or the WM's (duet-xwm) protocol log."""
    if name == "wayland":
        return (run.get("protocol") or {}).get("requests")
    return ((run.get("protocol_wm") or {}).get("messages") or {}).get("SYNC->AlarmNotify")


def test_lengths(ctx):
    """Per frame does not depend on run length: (long - short) / (their
    frame difference) takes start-up and teardown out. Shown on counts the
    load cannot change (PER_FRAME): from either pair of lengths they come
    out at the protocol's per-frame number, within the start-up's uneven
    messages over the frames, while the runs' whole-life figures do not.
    The server's syscalls per frame are not compared: an unthrottled app's
    frames batch differently into the servers' reads when the servers fall
    behind, so they are a property of the load as well as of the protocol
    (single runs moved by +-10-15% on a loaded 2-core machine, and the
    medians of five from the two pairs, held to 10% of each other, failed
    at load ~5). They are the bench's figure, render_ipc_per_frame, with
    intervals over rounds. The lengths stay close to the full bench's own
    (500 + 1500 ms; --quick uses 100 + 300)."""
    for name in ("wayland", "x11"):
        what, per = PER_FRAME[name]
        st = ctx.stack(name, refresh=0)
        results = []
        try:
            for _ in range(2):
                for lengths in ((200, 600), (400, 1200)):
                    results.append(ipc.render_counts(ctx, st, "sw", lengths=lengths,
                                                     scenes=SCENES))
        finally:
            st.stop()
        for res in results:
            label = "%s, %d + %d ms" % (name, res["lengths_ms"][0], res["lengths_ms"][1])
            short, long = res["runs"][0::2], res["runs"][1::2]
            counts = [fixed_counts(name, r) for r in res["runs"]]
            check(None not in counts, "%s: every run has its %s counted: %s"
                  % (label, what, counts))
            fs, fl = sum(r["frames"] for r in short), sum(r["frames"] for r in long)
            frames = fl - fs
            check(frames == res["frames"] > 0, "%s: %d frames between the lengths (%d - %d)"
                  % (label, res["frames"], fl, fs))
            cs = sum(fixed_counts(name, r) for r in short)
            cl = sum(fixed_counts(name, r) for r in long)
            got = (cl - cs) / frames
            most = UNEVEN_MESSAGES / frames
            check(abs(got - per) <= most,
                  "%s: %s per frame with start-up and teardown taken out %.4f, the protocol's "
                  "%d (+-%.4f)" % (label, what, got, per, most))
            whole = cs / fs
            check(whole > per, "%s: the short runs' whole life has %.4f %s per frame: the "
                  "start-up that the subtraction takes out" % (label, whole, what))
            if name == "wayland":
                check(abs(res["protocol_per_frame"]["requests"] - got) < 1e-3,
                      "%s: the bench's protocol_per_frame has it (%s)"
                      % (label, res["protocol_per_frame"]["requests"]))
            # The bench's figure is the same subtraction of the same runs.
            # Its sign is the load's as well: beside a CPU hog the short
            # runs' server made more, smaller reads than the long runs'
            # (860 against 751 calls, -0.599 per frame, 2026-12-06). The
            # bytes are the protocol's, more with every frame.
            srv = res["per_frame_study_style"]["server"]
            ss = sum(r["processes"]["server"]["study_style"] for r in short)
            sl = sum(r["processes"]["server"]["study_style"] for r in long)
            check(srv is not None and abs(srv - (sl - ss) / frames) < 1e-3
                  and res["bytes_per_frame_study_style"]["server"] > 0,
                  "%s: server IPC per frame %s = (%d - %d) / %d, %s bytes (the bench's "
                  "figure, not compared across lengths)"
                  % (label, srv, sl, ss, frames, res["bytes_per_frame_study_style"]["server"]))
        print("%s server IPC per frame, 200+600 ms: %s; 400+1200 ms: %s" % (
            name, [r["per_frame_study_style"]["server"] for r in results[0::2]],
            [r["per_frame_study_style"]["server"] for r in results[1::2]]))
        print("%s server, whole-run figures (start-up included), 600 ms: %s; 1200 ms: %s" % (
            name, [r["whole_run_per_frame_study_style"]["server"] for r in results[0::2]],
            [r["whole_run_per_frame_study_style"]["server"] for r in results[1::2]]))


def test_slow(ctx):
    st = ctx.stack("wayland")
    try:
        res = ipc.render_counts(ctx, st, "gl", lengths=(1, 1), scenes=SCENES)
    except ipc.CountFailed as e:
        fail("render counts with runs shorter than a frame: %s" % e)
    finally:
        st.stop()
    print("lengths %r, frames per run %r: %s" % (res["lengths_ms"], res["frames_per_run"],
                                               res.get("lengthened")))
    check(res["lengths_ms"][1] > 1 and "lengthened from 1 to" in res.get("lengthened", ""),
          "the long runs were not lengthened: %r" % res.get("lengthened"))
    check(res["frames"] >= 3, "%d frames between the lengths, want one per scene at least"
          % res["frames"])
    check(res["per_frame_study_style"].get("server") is not None and
          (res["bytes_per_frame_study_style"].get("server") or 0) > 0,
          "the server's IPC per frame, and its bytes per frame above 0: %r, %r"
          % (res["per_frame_study_style"], res["bytes_per_frame_study_style"]))


def stale_proxy_sockets():
    """Every free proxy display number (900-999) taken by a socket nobody
    listens on, as xtrace leaves behind when it is stopped: the paths."""
    made = []
    for n in range(900, 1000):
        path = "/tmp/.X11-unix/X%d" % n
        if os.path.exists(path) or os.path.exists("/tmp/.X%d-lock" % n):
            continue
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind(path)
            made.append(path)
        except OSError:
            pass
        finally:
            s.close()
    return made


def test_xtrace(ctx):
    """openbox's and xcompmgr's X protocol through xtrace proxies: both
    show traffic at launch, and xcompmgr composites every rendered frame.
    The proxies start although stale sockets of earlier proxies hold every
    display number they may use, and leave no socket behind."""
    check(shutil.which("xtrace") is not None, "xtrace is installed")
    stale = stale_proxy_sockets()
    st = ipc.XtraceStack("openbox", ctx.workdir, ctx.base_env, refresh=60)
    try:
        st.start()
        proxies = list(st.sockets)
        before = st.marks()
        res = ipc.xtrace_run(ctx, st)
        # xcompmgr answers a new window's map after the app's first frame,
        # whenever it (and its proxy) run: beside a CPU hog the launch
        # interval once held none of it (0 requests, 0 events; openbox 950
        # requests). What its proxy carried over the whole run, waited for
        # (a hang guard), shows the proxy works.
        deadline = time.monotonic() + procs.patience(30)
        while True:
            cm = st.counts_since(before)["compositor"]
            if (cm["requests"] > 0 and cm["events"] > 0) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        # Runs shorter than a frame (as every run is in an emulated
        # guest): the long run is lengthened, as render_counts' are.
        ctx.opts.render_count_ms = [1, 1]
        try:
            slow = ipc.xtrace_render(ctx, st, "sw")
        except ipc.CountFailed as e:
            fail("xtrace render counts with runs shorter than a frame: %s" % e)
        finally:
            ctx.opts.render_count_ms = [100, 300]
    finally:
        st.stop()
        for path in stale:
            if os.path.exists(path):
                os.unlink(path)
    check(len(proxies) == 2 and not any(os.path.exists(p) for p in proxies),
          "the proxies' sockets %s are removed when the stack stops" % proxies)
    # openbox maps the window before the app can draw its first frame, so
    # its part is in the launch interval; xcompmgr's need not be.
    la = res["launch"]["wm"]
    check(la["requests"] > 0 and la["events"] > 0,
          "openbox at launch: %d requests (%d bytes), %d replies, %d events, %d errors"
          % (la["requests"], la["request_bytes"], la["replies"], la["events"], la["errors"]))
    check(cm["requests"] > 0 and cm["events"] > 0,
          "xcompmgr through its proxy (launch and render runs): %d requests, %d events; "
          "at launch: %r" % (cm["requests"], cm["events"], res["launch"]["compositor"]))
    # Two 1 ms runs draw the same frames unless a frame took under 1 ms:
    # lengthened or not, the figure rests on more frames in the long runs.
    lengthened = slow["lengths_ms"][1] > 1 and "lengthened from 1 to" in slow.get("lengthened", "")
    check(slow["frames"] >= 1 and (lengthened or slow["lengths_ms"] == [1, 1]),
          "xtrace: 1 ms runs %s to %r ms, %d more frames: %s"
          % ("lengthened" if lengthened else "not lengthened", slow["lengths_ms"],
             slow["frames"], slow.get("lengthened")))
    comp = res["render"]["sw"]["compositor"]
    check(comp["requests"] >= 1, "xcompmgr: %.2f requests per rendered frame"
          % comp["requests"])


def stopped_while(server, seconds, fn):
    """fn() with the server stopped until `seconds` into it."""
    os.kill(server.pid, signal.SIGSTOP)
    timer = threading.Timer(seconds, os.kill, (server.pid, signal.SIGCONT))
    try:
        return fn(timer)
    finally:
        timer.cancel()
        os.kill(server.pid, signal.SIGCONT)


def test_sync(ctx):
    # weston: a client's request waits in its socket when the count is read.
    if stacks.missing("weston"):
        print("info: weston skipped: %s" % stacks.missing("weston"))
    else:
        st = ctx.stack("weston")
        try:
            # Quiet first: weston's start-up traffic is over once it answered.
            ipc.server_debug_counts(st, ipc.server_debug_mark(st))
            mark = ipc.server_debug_mark(st)

            def read(timer):
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
                    c.connect(os.path.join(st.runtime, st.env["WAYLAND_DISPLAY"]))
                    # wl_display@1.get_registry(new id 2), left in the socket
                    c.sendall(struct.pack("=III", 1, (12 << 16) | 1, 2))
                    timer.start()
                    return ipc.server_debug_counts(st, mark)
            counts = stopped_while(st.procs["server"], 0.5, read)
        finally:
            st.stop()
        check(counts["requests"] == 1 and counts["events"] >= 1,
              "weston's count of the interval: the waiting client's get_registry and its "
              "globals, without the read's round trip: %r" % counts)
    # duet-compositor: a client has gone, its hang-up not yet read, for
    # longer than the log's wait alone allows. (libwayland drops what a
    # client sent before a hang-up it has not read, so the client waits for
    # its answer before the server is stopped.)
    st = ctx.stack("wayland")
    try:
        code = ("import socket, struct, sys\n"
                "c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
                "c.connect(sys.argv[1])\n"
                "c.sendall(struct.pack('=III', 1, (12 << 16) | 1, 2))\n"
                "c.recv(4096)\n"
                "print('answered', flush=True)\n"
                "sys.stdin.read()\n")
        child = subprocess.Popen([sys.executable, "-c", code, os.path.join(
            st.runtime, st.env["WAYLAND_DISPLAY"])], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)
        check(child.stdout.readline().strip() == "answered",
              "the client's get_registry was answered")

        def gone(timer):
            child.stdin.close()
            child.wait(timeout=60)
            timer.start()
            return ipc.wait_protocol_log(st, child.pid)
        entry = stopped_while(st.procs["server"], procs.patience(2.0) + 1.0, gone)
    finally:
        st.stop()
    check(entry is not None and entry["requests"] == 1,
          "duet-compositor's log has the gone client (pid %d) and its request: %r"
          % (child.pid, entry))
    # duet-compositor --xwayland: Xwayland's counts, in the log its next
    # rewrite brings up to date, read while the server, stopped, has not yet
    # handled the hang-up that rewrites it.
    if stacks.missing("xwayland"):
        print("info: xwayland skipped: %s" % stacks.missing("xwayland"))
        return
    st = ctx.stack("xwayland")
    try:
        before = ipc.xwayland_log_counts(st)
        run = AppRun(ctx, st, app_argv(ctx, st, "launch"))
        run.wait(timeout=60)
        check(run.child.popen.returncode == 0, "an X app's launch on Xwayland exits 0 (%s): %s"
              % (run.exit_status(), run.log_tail()))

        def read(timer):
            timer.start()
            return ipc.xwayland_log_counts(st)
        after = stopped_while(st.procs["server"], procs.patience(2.0) + 1.0, read)
    finally:
        st.stop()
    check(before and after and after["requests"] > before["requests"],
          "Xwayland's requests for the X app's window are in the counts read after it: "
          "before %r, after %r" % (before, after))


def main():
    procs.become_subreaper()
    atexit.register(procs.cleanup)
    workdir = tempfile.mkdtemp(prefix="duet-counts-test-")
    try:
        ctx = Ctx(workdir)
        {"agree": test_agree, "lengths": test_lengths, "xtrace": test_xtrace,
         "slow": test_slow, "sync": test_sync}[sys.argv[1]](ctx)
    finally:
        procs.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
