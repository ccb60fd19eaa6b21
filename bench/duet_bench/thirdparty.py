"""The thirdparty experiment: clients duet did not write, on every stack.

    glmark2   glmark2-es2-wayland on the Wayland stacks, glmark2-es2 (its X11
              build) on the X stacks: a fixed scene list, unthrottled; its
              score, and the window system's CPU per client frame
    efl       elementary_test -to Button (EFL 1.26, software engines:
              wayland_shm, software_x11): fork -> composited where the stack
              can tell it, then idle; the window system's CPU while idle

The stacks run at 60 Hz. IPC comes from a separate counting run (counts()),
as for the other experiments: the in-process counter's dumps at glmark2's
scene boundaries, and before the EFL app's fork, at the end of its
start-up and at the end of its idle time. How glmark2 runs and is timed,
and why its two builds are not the same client: glmark2.py.
"""
import os
import re
import shutil
import time

from duet_bench import glmark2, ipc, observer, procs, timeline
from duet_launch import stack_kinds
from duet_bench.apprun import AppFailed, AppRun, check_stack
from duet_bench.efl import reap_strays
from duet_bench.experiment import Experiment, counted
from duet_bench.glmark2 import NOTE_ROUNDTRIP, WS_ROLES, ws_pids

GLMARK2_SCENES = ["build", "texture"]
EFL_APP = "elementary_test"
EFL_ARGS = ["-to", "Button"]
# elementary_test's window background in EFL 1.26's default theme: what the
# observer looks for on openbox, where xcompmgr tells no one it composited
# (xcompmgr's own root is 128,128,128, duet's never shown there).
EFL_RGB = (64, 64, 64)
# After the first frame the app still finishes starting (focus, a redraw);
# that belongs to its launch, not to its idle time.
EFL_SETTLE_S = 1.0
# Where a stack cannot tell composited, the launch is taken to last this long.
EFL_LAUNCH_FALLBACK_S = 2.0


def missing(kind):
    """{client: why it cannot run} for a stack kind."""
    out = {}
    if glmark2.missing(kind):
        out["glmark2"] = glmark2.missing(kind)
    if not shutil.which(EFL_APP):
        out["efl"] = "%s not found (Debian package libelementary-bin)" % EFL_APP
    return out


def efl_env(ctx, stack):
    """A private home (so no user's EFL profile or cache matters), shared
    by the whole run so its caches are built once; the software engines on
    both window systems, like the bench's own apps by default."""
    home = os.path.join(ctx.workdir, "efl-home")
    os.makedirs(home, exist_ok=True)
    return {"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, "config"),
            "XDG_CACHE_HOME": os.path.join(home, "cache"), "ELM_ACCEL": "none",
            "ELM_DISPLAY": "wl" if stack.kind == "wayland" else "x11"}


def evas_engines(pid):
    """The Evas engine modules pid has mapped (what it really draws with)."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            return sorted(set(re.findall(r"/evas/modules/engines/([^/]+)/", f.read())))
    except OSError:
        return []


# ------------------------------------------------------------ glmark2
def glmark2_once(ctx, stack):
    """One glmark2 run (glmark2.measure): its score and fps per scene, and
    the CPU of every window-system process (and glmark2's own) from each
    scene's first frame to its last, summed over the scenes, per client
    frame."""
    scenes, score, argv, roles = glmark2.measure(ctx, stack, GLMARK2_SCENES, "thirdparty")
    frames = sum(s["frames"] for s in scenes)
    per = glmark2.cpu_ms_per_frame([s["cpu_ns"] for s in scenes], frames, roles)
    out = {"client": "glmark2", "command": " ".join(argv), "score": score,
           "scenes": [{k: s[k] for k in ("title", "fps", "wall_s")} for s in scenes],
           "frames": round(frames, 1), "duration_s": ctx.opts.glmark2_duration_s,
           "cpu_ms_per_frame": per}
    out.update(timeline.painted_frames(stack, [s["span"] for s in scenes], frames,
                                       per["window_system"]))
    out["interval"] = ("each scene's title line -> its FPS line (glmark2's output, polled "
                       "every 2 ms), summed over the scenes; frames = fps x that time "
                       "(at most the scene's duration)")
    return out


# ------------------------------------------------------------ EFL
class EflWitness(timeline.LaunchWitness):
    """Who tells elementary_test's composited point: duet's servers' traces
    (the window's pid), weston's timeline (a surface whose description
    names elementary_test), and on openbox the observer looking for the
    window's background colour."""

    def _observer(self):
        return observer.Observer(self.stack.fb_path, EFL_RGB, self.stack.base_env)

    def composited(self, pid, t0, timeout=10.0):
        if self.stack.spec.observed:
            if self.obs is None:
                return None, None, self.why
            t = self.obs.wait_seen(timeout)
            if t is None:
                return None, None, ("the observer did not see elementary_test's background "
                                    "(%d,%d,%d) within %.0f s" % (EFL_RGB + (timeout,)))
            return t, timeline.source_of(self.stack) + ", colour %d,%d,%d" % EFL_RGB, None
        t, why = timeline.server_composited(self.stack, pid, EFL_APP, t0, timeout=timeout,
                                            named_only=True)
        return (t, timeline.source_of(self.stack), None) if t is not None else \
            (None, None, why)


def efl_launch(ctx, stack, env, on_phase):
    """Starts elementary_test, waits for composited, lets it settle and
    idle; on_phase(name, run) at "fork" (right before it), "launched"
    (composited + EFL_SETTLE_S, or fork + EFL_LAUNCH_FALLBACK_S) and
    "idle" (ctx.opts.efl_idle_s later). Returns the launch's points."""
    argv = [shutil.which(EFL_APP) or EFL_APP] + EFL_ARGS
    witness = EflWitness(stack).start()
    run = None
    try:
        on_phase("fork", None)
        run = AppRun(ctx, stack, argv, extra_env=env, t0=True, role="efl")
        t, source, why = witness.composited(run.pid, run.t0_ns)
        # The observer polls every millisecond: not while the app idles.
        witness.close()
        check_stack(stack)
        if not run.child.alive():
            raise AppFailed("%s %s before its idle time:\n%s" % (EFL_APP, run.exit_status(),
                                                                 run.log_tail()))
        engines = evas_engines(run.pid)
        end = (t + int(EFL_SETTLE_S * 1e9)) if t is not None else \
            run.t0_ns + int(EFL_LAUNCH_FALLBACK_S * 1e9)
        sleep_until(end)
        on_phase("launched", run)
        sleep_until(end + int(ctx.opts.efl_idle_s * 1e9))
        check_stack(stack)
        if not run.child.alive():
            raise AppFailed("%s %s during its idle time:\n%s" % (EFL_APP, run.exit_status(),
                                                                 run.log_tail()))
        on_phase("idle", run)
    finally:
        witness.close()
        if run:
            run.stop()
    out = {"command": " ".join(argv), "env": env, "engines": engines,
           "launch_end_ms": round((end - run.t0_ns) / 1e6, 3), "idle_s": ctx.opts.efl_idle_s}
    if t is not None:
        out["first_frame_ms"] = round((t - run.t0_ns) / 1e6, 3)
        out["first_frame_source"] = source
    else:
        out["first_frame_missing"] = why or "unknown"
    return out


def sleep_until(t_ns):
    left = (t_ns - time.monotonic_ns()) / 1e9
    if left > 0:
        time.sleep(left)


def efl_warmup(ctx, stack, env):
    """One untimed launch per stack instance: EFL's first start in a home
    builds caches and starts efreetd, which later launches find done."""
    witness = EflWitness(stack).start()
    run = AppRun(ctx, stack, [shutil.which(EFL_APP) or EFL_APP] + EFL_ARGS, extra_env=env,
                 t0=True, role="efl-warmup")
    try:
        witness.composited(run.pid, run.t0_ns)
    finally:
        witness.close()
        run.stop()
    time.sleep(0.3)


def efl_once(ctx, stack, env):
    """One launch + idle: time to first frame, and the CPU of every stack
    process and of the app during the launch and during the idle time."""
    meters, cpu = {}, {}

    def on_phase(name, run):
        if name == "fork":
            meters.update({r: procs.CpuMeter(p) for r, p in ws_pids(stack).items()})
            return
        if "app" not in meters:
            meters["app"] = procs.CpuMeter(run.pid, from_zero=True)
        cpu[name] = {r: m.read() for r, m in meters.items()}

    out = efl_launch(ctx, stack, env, on_phase)
    launched, idle = cpu["launched"], cpu["idle"]

    def ms(d):
        d = {r: round(v / 1e6, 4) for r, v in d.items() if v is not None}
        d["window_system"] = round(sum(v for r, v in d.items() if r in WS_ROLES), 4)
        return d
    out["launch_cpu_ms"] = ms(launched)
    out["idle_cpu_ms"] = ms({r: (idle[r] - launched[r]) if None not in (idle.get(r),
                             launched.get(r)) else None for r in idle})
    out["client"] = "efl"
    return out


# ------------------------------------------------------------ timing runs
def timing(ctx, stack, rec):
    """This round's share of the thirdparty runs in one stack instance at
    60 Hz: glmark2 once, then one elementary_test launch + idle (after an
    untimed warm-up launch), per run."""
    gone = missing(stack.kind)
    rec.setdefault("notes", [])
    if NOTE_ROUNDTRIP not in rec["notes"]:
        rec["notes"].append(NOTE_ROUNDTRIP)
    for client, why in gone.items():
        rec.setdefault("skipped_clients", {})[client] = why
    env = efl_env(ctx, stack)
    warm = False
    total = ctx.opts.total("thirdparty")
    try:
        for i in ctx.opts.runs("thirdparty", ctx.round):
            ctx.progress.step("thirdparty", stack.name, i + 1, total)
            if "glmark2" not in gone:
                rec["samples"].append(dict(glmark2_once(ctx, stack), run=i + 1))
            if "efl" not in gone:
                if not warm:
                    efl_warmup(ctx, stack, env)
                    warm = True
                rec["samples"].append(dict(efl_once(ctx, stack, env), run=i + 1))
                time.sleep(0.2)
    finally:
        reap_strays(stack)


# ------------------------------------------------------------ counting run
def dump_all(c, pids):
    """A fresh count dump of every process in pids, or CountFailed."""
    out = {}
    for role, pid in pids.items():
        out[role] = ipc.dump_now(c.dir, pid)
        if out[role] is None:
            raise ipc.CountFailed("no count dump from the %s (pid %d) within 1.5 s: without "
                                  "it the interval's counts are unknown" % (role, pid))
    return out


def between(a, b):
    """Per process: the calls between two dumps, summarized (ipc.py's
    summary) plus every counted call on any fd (calls_all)."""
    out = {}
    for role in b:
        s = ipc.summarize_counts(ipc.diff_dump(a.get(role), b[role])["counts"])
        s["calls_all"] = sum(v["all"] for v in s["per_call"].values())
        out[role] = s
    return out


def add_up(parts):
    """The sum of several between() results (glmark2's scenes)."""
    out = {}
    for p in parts:
        for role, s in p.items():
            o = out.setdefault(role, {"ipc_unix": 0, "study_style": 0, "study_style_bytes": 0,
                                      "calls_all": 0, "waits": 0})
            for k in o:
                o[k] += s.get(k, 0)
    return out


def counts(ctx, stack):
    """ipc.STACK.thirdparty: glmark2's IPC per frame (dumps at every scene's
    first and last frame) and elementary_test's IPC during its launch and
    during its idle time, per window-system process."""
    c = ipc.Counting(ctx, stack)
    pids = ws_pids(stack)
    gone = missing(stack.kind)
    out = {"interval": "glmark2: each scene's title line -> its FPS line, summed, per client "
                       "frame (fps x that time); efl: fork -> composited + %g s (launch), then "
                       "%g s (idle)" % (EFL_SETTLE_S, ctx.opts.efl_idle_s)}
    if gone:
        out["skipped_clients"] = gone
    if "glmark2" not in gone:
        base, parts = {}, []

        def on_mark(what, i, run):
            if what == "start":
                base[i] = dump_all(c, pids)
            else:
                parts.append(between(base[i], dump_all(c, pids)))
        scenes, score, argv = glmark2.run(ctx, stack, GLMARK2_SCENES, on_mark,
                                          "ipc-thirdparty")
        frames = sum(glmark2.frames_of(s, ctx.opts.glmark2_duration_s) for s in scenes)
        total = add_up(parts)
        out["glmark2"] = {
            "frames": round(frames, 1), "scenes": scenes, "score": score,
            "command": " ".join(argv), "processes": total,
            "per_frame_study_style": {r: round(v["study_style"] / frames, 3)
                                      for r, v in total.items()},
            "per_frame": {r: round(v["ipc_unix"] / frames, 3) for r, v in total.items()},
            "bytes_per_frame_study_style": {r: round(v["study_style_bytes"] / frames, 1)
                                            for r, v in total.items()}}
    if "efl" not in gone:
        env = efl_env(ctx, stack)
        efl_warmup(ctx, stack, env)
        if stack.kind == "wayland":
            # The client's protocol log tells how many frame callbacks the
            # server answered: per callback is the figure that does not
            # depend on the rate a server answers them at (weston's
            # headless output: about 40 Hz). Only in this counting run.
            env = dict(env, WAYLAND_DEBUG="client")
        dumps, log_at = {}, {}

        def on_phase(name, run):
            dumps[name] = dump_all(c, pids)
            if run is not None:
                log_at[name] = os.path.getsize(run.log)
                log_at["path"] = run.log
        try:
            res = efl_launch(ctx, stack, env, on_phase)
        finally:
            reap_strays(stack)
        launch = between(dumps["fork"], dumps["launched"])
        idle = between(dumps["launched"], dumps["idle"])
        res.update({"launch": launch, "idle": idle,
                    "idle_calls_all_window_system": sum(v["calls_all"] for v in idle.values()),
                    # timerfd and eventfd reads show here: a server that ticks
                    # while nothing changes.
                    "reads_idle_any_fd": {r: v["per_call"].get("read", {}).get("all", 0)
                                          for r, v in idle.items()}})
        if stack.kind == "wayland":
            res["frame_callbacks"] = frame_callbacks(log_at["path"], log_at)
            n = res["frame_callbacks"]["launch"]["done"]
            if n:
                res["launch_ipc_per_callback"] = round(
                    launch["server"]["study_style"] / n, 3)
        out["efl"] = res
    return out


_FRAME_REQUEST = re.compile(rb"-> wl_surface@\d+\.frame\(new id wl_callback@(\d+)\)")
_DONE = re.compile(rb"wl_callback@(\d+)\.done\(")
_COMMIT = re.compile(rb"-> wl_surface@\d+\.commit\(")


def frame_callbacks(log, log_at):
    """From a WAYLAND_DEBUG=client log: the frame callbacks asked for and
    answered, and the commits, during the launch (start -> "launched") and
    the idle time ("launched" -> "idle"). wl_display.sync answers are
    wl_callback.done too: only ids a wl_surface.frame created count."""
    with open(log, "rb") as f:
        data = f.read(log_at.get("idle", 0) or None)
    cut = log_at.get("launched", len(data))
    pending = set()
    out = {"launch": {"asked": 0, "done": 0, "commits": 0},
           "idle": {"asked": 0, "done": 0, "commits": 0}}
    pos = 0
    for line in data.splitlines(keepends=True):
        phase = out["launch" if pos < cut else "idle"]
        pos += len(line)
        m = _FRAME_REQUEST.search(line)
        if m:
            pending.add(m.group(1))
            phase["asked"] += 1
            continue
        m = _DONE.search(line)
        if m and m.group(1) in pending:
            pending.discard(m.group(1))
            phase["done"] += 1
        elif _COMMIT.search(line):
            phase["commits"] += 1
    return out


def skip(name, config):
    """Skipped on a stack where neither client (glmark2, efl) can run."""
    gone = missing(stack_kinds.get(name).window_system)
    return "; ".join(gone.values()) if len(gone) == 2 else None


EXPERIMENT = Experiment("thirdparty", "thirdparty_reps", (1, 5), timing=timing,
                        counting=counted("thirdparty", counts), skip=skip, slow_reps=3)
