"""The traced operations of `duet bench` (issue 46): per stack, one launch,
one run of the resize experiment's eight sizes and a short render
interval, each with every IPC call of every process of the stack and of
the app, kept as raw records in RESULTS/trace-raw/STACK-OP/ (trace_raw.py
reads them, trace_events.py draws the trace files from them).

They run in a stack of their own, after the timed runs and the counting
runs of the first round, never inside them: strace stops a traced
process at every system call, so nothing measured here is a timing
(docs/methodology.md, "Traces"). What a record holds:
  - stack.TID: strace -f attached (-p) to every process of the running
    stack (server, WM, compositing manager, compositor, Xwayland), one
    file per thread; app.TID: the app started under strace -f
    --seccomp-bpf. -yy names each Unix socket's inode and its peer's,
    --timestamps=unix,ns and --syscall-times=ns stamp and time each call;
  - sched.txt: the scheduler's switches (trace_sched.py), or in meta why
    there are none;
  - meta.json: the processes and threads by role, which process holds
    which socket inode (/proc/PID/fd at attach and at the end), the bytes
    already queued on each socket at attach, the wall clock's offset from
    CLOCK_MONOTONIC, the operation's window and its timeline's points.
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from duet_bench import efl_launch, ipc, procs, timeline
from duet_bench.machine import read_text
from duet_bench.apprun import AppFailed, AppRun
from duet_bench.experiment import app_argv, with_engine
from duet_bench.launch import wait_first_frame
from duet_bench.resize import RESIZE_SETTLE_MS
from duet_bench.trace_raw import META, raw_dir
from duet_bench.trace_sched import Sched
from duet_launch import proc

# The window runs on this long past its last point, so that the reads of
# what was sent just before it are in the trace too.
TAIL_MS = 20
# The render interval's scene: the study's test closest to its average.
FRAME_SCENE = "image_blend_smooth_scaled"
# The calls the bench counts (ipc.STRACE_CALLS) and the births of threads
# and processes, which tell whose thread a file of a new tid is.
CALLS = ipc.STRACE_CALLS + ",clone,clone3,fork,vfork"
STRACE_ARGS = ["-qq", "-yy", "--timestamps=unix,ns", "--syscall-times=ns", "-e",
               "trace=" + CALLS]


def app_key(ctx, op):
    """The ctx.apps key of op's app."""
    return {"launch": efl_launch.chosen(ctx), "resize": "resize", "frame": "render"}[op]


def ptrace_scope():
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope") as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def why_not():
    """None, or why strace cannot trace a stack here: not installed, or
    ptrace refused. Tried for real: strace attaches to a sibling process,
    as the bench's strace attaches to the stack's (Yama's ptrace_scope 1
    refuses that without CAP_SYS_PTRACE; a container may refuse ptrace)."""
    strace = shutil.which("strace")
    if not strace:
        return "strace is not installed (Debian package strace)"
    scope = ptrace_scope()
    if scope == 3:
        return "ptrace is disabled (/proc/sys/kernel/yama/ptrace_scope is 3)"
    target = subprocess.Popen(["sleep", "30"], stdin=subprocess.DEVNULL)
    tracer = subprocess.Popen([strace, "-qq", "-e", "trace=none", "-p", str(target.pid)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + procs.patience(5.0)
        while time.monotonic() < deadline and tracer.poll() is None:
            if procs.traced(target.pid):
                return None
            time.sleep(0.01)
        err = tracer.stderr.read().decode(errors="replace").strip() if tracer.poll() is not \
            None else "strace did not attach within 5 s"
        return "ptrace is not allowed here (strace -p: %s%s)" % (
            err.splitlines()[-1] if err else "no message",
            "; Yama's ptrace_scope is %d" % scope if scope is not None else "")
    finally:
        for p in (tracer, target):
            if p.poll() is None:
                p.kill()
            p.wait()
        tracer.stderr.close()


class Attached:
    """strace -f attached to the stack's running processes, one file per
    thread: work/stack.TID."""

    def __init__(self, pids, work):
        self.argv = [shutil.which("strace"), "-f", "-ff", "-o",
                     os.path.join(work, "stack")] + STRACE_ARGS
        for pid in pids.values():
            self.argv += ["-p", str(pid)]
        self.child = proc.Child("trace-strace", self.argv, dict(os.environ),
                                log_path=os.path.join(work, "strace-stack.log"))
        deadline = time.monotonic() + procs.patience(10.0)
        while not all(procs.traced(p) for p in pids.values()):
            if time.monotonic() > deadline or not self.child.alive():
                self.detach()
                raise AppFailed("strace could not attach (%s):\n%s"
                                % (self.child.status(), self.child.log_tail()))
            time.sleep(0.02)

    def detach(self):
        self.child.signal(signal.SIGINT)
        try:
            self.child.popen.wait(procs.patience(5.0))
        except subprocess.TimeoutExpired:
            pass
        self.child.stop()


def app_strace(work):
    """The app's command prefix. --seccomp-bpf: the app stops only at the
    calls traced (ipc.strace_launch says what that saves); the attached
    stack processes cannot be filtered so."""
    return [shutil.which("strace"), "-f", "--seccomp-bpf", "-ff", "-o",
            os.path.join(work, "app")] + STRACE_ARGS + ["--"]


def snapshot(pids, meta):
    """Adds the processes of pids ({role: pid}), their threads and the
    socket inodes they hold now to meta (what an earlier snapshot saw
    stays: a thread or a socket may be gone by the end)."""
    for role, pid in pids.items():
        if pid is None:
            continue
        try:
            exe = os.path.basename(os.readlink("/proc/%d/exe" % pid))
        except OSError:
            exe = None
        meta["processes"].setdefault(str(pid), {"role": role, "comm": read_text(
            "/proc/%d/comm" % pid), "exe": exe})
        for tid in procs.thread_ids(pid):
            meta["threads"].setdefault(str(tid), {"pid": pid, "comm": read_text(
                "/proc/%d/task/%d/comm" % (pid, tid))})
        for ino in procs.socket_inodes(pid):
            meta["sockets"].setdefault(str(ino), pid)


def queued(sockets):
    """{inode: bytes} waiting in the receive queue of each of the stack's
    Unix sockets that had any (`ss -xn`'s Recv-Q), or None without ss.
    Read right after strace attached: those bytes were sent before it."""
    ss = shutil.which("ss")
    if not ss:
        return None
    r = subprocess.run([ss, "-xn"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    out = {}
    for line in r.stdout.splitlines()[1:]:
        f = line.split()
        # Netid State Recv-Q Send-Q Local-Address Local-Inode Peer-Address Peer-Inode
        if len(f) >= 8 and f[0] == "u_str" and f[2].isdigit() and f[5] in sockets \
                and int(f[2]) > 0:
            out[f[5]] = int(f[2])
    return out


def clock_offset():
    """The wall clock minus CLOCK_MONOTONIC in ns (strace stamps the one,
    the timelines the other), from the closest of a few paired reads."""
    best = None
    for _ in range(8):
        a = time.monotonic_ns()
        r = time.time_ns()
        b = time.monotonic_ns()
        if best is None or b - a < best[1]:
            best = (r - (a + b) // 2, b - a)
    return {"realtime_minus_monotonic_ns": best[0], "read_gap_ns": best[1]}


def app_pid(run):
    """The app's pid: strace's child."""
    deadline = time.monotonic() + procs.patience(5.0)
    while time.monotonic() < deadline:
        kids = procs.descendants(run.pid)
        if kids:
            return min(kids)
        if not run.child.alive():
            break
        time.sleep(0.005)
    raise AppFailed("the app under strace did not start: %s\n%s" % (run.exit_status(),
                                                                    run.log_tail()))


def _points(t0, tl, source, prefix=""):
    return [{"name": prefix + k, "ns": t0 + v, "source": source.get(k)}
            for k, v in sorted(tl.items(), key=lambda kv: kv[1])]


def _settle(end):
    """Waits until TAIL_MS past end (ns); returns that time, the window's end."""
    until = end + TAIL_MS * 1000000
    while time.monotonic_ns() < until:
        time.sleep(0.005)
    return until


def _launch(ctx, stack, work, meta):
    argv = app_argv(ctx, stack, app_key(ctx, "launch"), "--stay")
    witness = timeline.LaunchWitness(stack, **efl_launch.witness_args(ctx)).start()
    run = pid = None
    try:
        run = AppRun(ctx, stack, app_strace(work) + argv, t0=True,
                     extra_env=efl_launch.env(ctx, stack))
        ff = wait_first_frame(run, "trace-launch")
        pid = app_pid(run)
        t, source, why = witness.composited(pid, run.t0_ns, ff)
        pts = timeline.launch_points(ff, run.t0_ns, t, source, why)
        tl = pts["timeline"]
        end = run.t0_ns + tl.get("composited", tl.get("presented", 0))
        meta.update(t0_ns=run.t0_ns, t0_point="fork", app_pid=pid, app_command=" ".join(argv),
                    points=_points(run.t0_ns, tl, pts["timeline_source"]),
                    points_missing=pts["timeline_missing"],
                    window_ns=[run.t0_ns, _settle(end)])
        snapshot(dict(stack.pids(), app=pid), meta)
    finally:
        if run:
            run.stop_traced(pid)
        witness.close()
        efl_launch.done(ctx, stack)


def _resize(ctx, stack, work, meta):
    argv = app_argv(ctx, stack, "resize", "--runs", "1", "--mode", "client", "--settle-ms",
                    str(RESIZE_SETTLE_MS), "--stay")
    witness = timeline.ResizeWitness(stack).start()
    run = pid = None
    try:
        run = AppRun(ctx, stack, app_strace(work) + argv)
        run.wait(lambda ev: any(e.get("name") == "resize_done" for e in ev),
                 timeout=30 + 8 * 3, experiment="trace-resize")
        steps = run.named("resize")
        if not run.named("resize_done"):
            raise AppFailed("duet-resize under strace %s after %d steps:\n%s"
                            % (run.exit_status(), len(steps), run.log_tail()))
        pid = app_pid(run)
        settled = _settle(time.monotonic_ns())
        snapshot(dict(stack.pids(), app=pid), meta)
    finally:
        if run:
            run.stop_traced(pid)
        witness.close()
    points, missing, ends = [], {}, []
    for i, s in enumerate(steps):
        size = (s.get("got_width"), s.get("got_height"))
        until = next(((t.get("timeline") or {}).get("requested") for t in steps[i + 1:]
                      if (t.get("got_width"), t.get("got_height")) == size), None)
        tl, miss, source = timeline.resize_points(stack, s, pid, witness=witness, until=until)
        t0 = (s.get("timeline") or {}).get("requested")
        if t0 is None:
            continue
        label = "resize %d %dx%d: " % (s["step"], s["width"], s["height"])
        points += _points(t0, tl, source, label)
        missing.update({label + k: v for k, v in miss.items()})
        ends.append(t0 + max(tl.values()))
    if not points:
        raise AppFailed("duet-resize under strace reported no timeline")
    t0 = min(p["ns"] for p in points)
    meta.update(t0_ns=t0, t0_point="resize 1: requested", app_pid=pid,
                app_command=" ".join(argv), points=points, points_missing=missing,
                window_ns=[t0, min(max(ends) + TAIL_MS * 1000000, settled)])


def _frame(ctx, stack, work, meta):
    engine = ctx.opts.render_engines[0]
    argv = with_engine(app_argv(ctx, stack, "render", "--duration-ms",
                                str(ctx.opts.trace_frame_ms), "--scenes", FRAME_SCENE), engine)
    run = AppRun(ctx, stack, app_strace(work) + argv)
    pid = None
    try:
        pid = app_pid(run)
        snapshot({"app": pid}, meta)
        run.wait(lambda ev: any(e.get("name") == "render_done" for e in ev),
                 timeout=60, experiment="trace-frame")
        scenes = run.named("scene")
        if not scenes or not run.named("render_done"):
            raise AppFailed("duet-render under strace %s:\n%s" % (run.exit_status(),
                                                                  run.log_tail()))
        sc = scenes[0]
        t1 = sc["ns"]
        t0 = t1 - sc["duration_ns"]
        meta.update(t0_ns=t0, t0_point="scene start", app_pid=pid, app_command=" ".join(argv),
                    frames=sc["frames"], engine=engine,
                    points=[{"name": "scene start", "ns": t0, "source": "duet-render"},
                            {"name": "scene end (%d frames)" % sc["frames"], "ns": t1,
                             "source": "duet-render"}],
                    points_missing={}, window_ns=[t0, t1])
        snapshot(stack.pids(), meta)
    finally:
        run.stop_traced(pid)


RUN = {"launch": _launch, "resize": _resize, "frame": _frame}


def trace_op(ctx, stack, op):
    """Traces op on the running stack into RESULTS/trace-raw/STACK-OP/
    (replacing an earlier try's); returns that directory. Raises AppFailed
    where the app or strace failed (nothing is kept then)."""
    raw = raw_dir(ctx.out, stack.name, op)
    shutil.rmtree(raw, ignore_errors=True)
    work = tempfile.mkdtemp(prefix="trace-%s-" % op, dir=stack.dir)
    pids = stack.pids()
    meta = {"stack": stack.name, "op": op, "kind": stack.kind, "refresh": stack.refresh,
            "processes": {}, "threads": {}, "sockets": {}, "tail_ms": TAIL_MS}
    sched = Sched(work).start()
    tracer = None
    try:
        tracer = Attached(pids, work)
        snapshot(pids, meta)
        meta["queued"] = queued(meta["sockets"])
        meta["clock"] = clock_offset()
        meta["strace"] = {"stack": " ".join(tracer.argv), "app": " ".join(app_strace(work))}
        RUN[op](ctx, stack, work, meta)
    except BaseException:
        if tracer:
            tracer.detach()
        sched.kill()
        shutil.rmtree(work, ignore_errors=True)
        raise
    tracer.detach()
    traced = {int(t) for t in meta["threads"]} | {
        int(n.partition(".")[2]) for n in os.listdir(work) if n.partition(".")[2].isdigit()}
    meta["sched"] = sched.stop(work, traced)
    with open(os.path.join(work, META), "w") as f:
        json.dump(meta, f, indent=1)
    os.makedirs(os.path.dirname(raw), exist_ok=True)
    shutil.copytree(work, raw)
    shutil.rmtree(work, ignore_errors=True)
    return raw
