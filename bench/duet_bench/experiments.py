"""The study's four experiments, timing runs only (no tracing or counting
is attached to these; IPC counts come from separate runs, see ipc.py).

Each function runs all repetitions of one experiment in one started stack
and returns its samples; the caller records failures."""
import statistics
import time

from duet_bench import (concurrent, efl_launch, inputlat, procs, roundtrip, switches, thirdparty,
                        timeline)
from duet_bench.apprun import AppFailed, AppRun

SIZES = [(100, 100), (1000, 240), (850, 900), (400, 1000), (1800, 500), (999, 999),
         (333, 999), (1920, 1080)]


# The apps' own give-up times (ms, their defaults) for an emulated machine.
APP_TIMEOUT_MS = {"launch": 20000, "launch-efl": 20000, "resize": 10000}


def app_argv(ctx, stack, app, *args):
    argv = [ctx.apps[app], "--backend", stack.kind, "--engine", ctx.opts.engine]
    if app in APP_TIMEOUT_MS and procs.patience(1.0) > 1.0:
        argv += ["--timeout-ms", str(int(procs.patience(APP_TIMEOUT_MS[app] / 1000.0) * 1000))]
    return argv + list(args)


def runs(ctx, exp, stack):
    """This round's 0-based run numbers of exp, each announced on the
    progress line."""
    total = ctx.opts.total(exp)
    for i in ctx.opts.runs(exp, ctx.round):
        ctx.progress.step(exp, stack.name, i + 1, total)
        yield i


def stack_ctx(stack):
    return {role: procs.ctx_switches(pid) for role, pid in stack.pids().items()}


def wait_first_frame(run):
    """duet-launch's first_frame line, once it wrote it (it stays running)."""
    ok = run.wait(lambda ev: any(e.get("name") == "first_frame" for e in ev),
                  timeout=30, experiment="launch")
    if not ok:
        raise AppFailed("duet-launch %s without a first frame:\n%s"
                        % (run.exit_status(), run.log_tail()))
    return run.named("first_frame")[0]


def launch(ctx, stack, rec):
    """fork -> composited, with the launch's timeline (timeline.py), per
    run. The first launch of every fresh stack instance is "cold" (run 0)
    and is the warm series' discarded warm-up; the round's share of runs
    follows, "warm". The app stays until its context switches are read,
    then is closed."""
    if ctx.opts.runs("launch", ctx.round):
        rec["samples"].append(dict(launch_once(ctx, stack, rec), run=0, kind="cold"))
        time.sleep(0.2)
    for i in runs(ctx, "launch", stack):
        rec["samples"].append(dict(launch_once(ctx, stack, rec), run=i + 1, kind="warm"))
        time.sleep(0.2)
    if ctx.opts.runs("launch", ctx.round) and "bootchart" not in rec:
        # Once, in the first round that launches: after the timed ones.
        rec["bootchart"] = bootchart_launch(ctx, stack)
    efl_launch.done(ctx, stack)


def launch_once(ctx, stack, rec):
    argv = app_argv(ctx, stack, efl_launch.chosen(ctx), "--stay")
    rec["command"] = " ".join(argv)
    if efl_launch.env(ctx, stack):
        rec["app_env"] = efl_launch.env(ctx, stack)
    before = stack_ctx(stack)
    witness = timeline.LaunchWitness(stack, **efl_launch.witness_args(ctx)).start()
    run = None
    try:
        # CPU of every stack process: read right before the fork and right
        # after composited is known (no polling: the launch stays untouched).
        meters = {r: procs.CpuMeter(p) for r, p in stack.pids().items()}
        run = AppRun(ctx, stack, argv, t0=True, extra_env=efl_launch.env(ctx, stack))
        ff = wait_first_frame(run)
        t, source, why = witness.composited(run.pid, run.t0_ns)
        cpu = launch_cpu(meters, run)
        after = stack_ctx(stack)
        app_ctx = procs.ctx_switches(run.pid)
    finally:
        if run:
            run.stop()
        seen = witness.close()
    sample = {"t0": ff.get("t0"), "presentation": ff.get("presentation"),
              "path": ff.get("path"), "engine": ff.get("engine"),
              "ctx_switches": dict({r: procs.ctx_diff(before[r], after.get(r)) for r in before},
                                   app=app_ctx)}
    sample["switches"] = switches.per_op(sample["ctx_switches"], 1, "launch",
                                         "stack: fork -> composited known; app: its life to then")
    sample.update(cpu)
    sample.update(timeline.launch_points(ff, run.t0_ns, t, source, why))
    if seen:
        sample["observer"] = {"polls": seen.get("polls"), "cpu_ns": seen.get("cpu_ns"),
                              "wall_ns": seen.get("wall_ns")}
    return sample


def launch_cpu(meters, run):
    """cpu_ms {role: ms on CPU from the fork to now} of the stack's
    processes (meters started right before the fork) and of the app (all
    it ran since its fork: it is still alive, duet-launch --stay), from
    schedstat per thread; cpu_until_ms: when that was read, ms since the
    fork; cpu_ended_threads_ms: the app's CPU in threads that ended before
    the reading (schedstat lists live threads only), from its process CPU
    clock, where readable."""
    app = procs.CpuMeter(run.pid, from_zero=True).read()
    app_clock = procs.process_cpu_ns(run.pid)
    now = time.monotonic_ns()
    cpu = {r: m.read() for r, m in meters.items()}
    cpu["app"] = app
    out = {"cpu_ms": {r: round(v / 1e6, 4) for r, v in cpu.items() if v is not None},
           "cpu_until_ms": round((now - run.t0_ns) / 1e6, 3)}
    if app is not None and app_clock is not None:
        out["cpu_ended_threads_ms"] = round(max(0, app_clock - app) / 1e6, 4)
    return out


BOOTCHART_MS = 2       # the bootchart launch's polling interval
BOOTCHART_TAIL_MS = 20  # it samples until composited + this


def bootchart_launch(ctx, stack):
    """Which process ran when: one extra launch (not a timed sample) whose
    processes' schedstat is polled every BOOTCHART_MS from the fork to
    composited + BOOTCHART_TAIL_MS (procs.SliceSampler, in a thread of
    its own). Returns the record experiments.launch.STACK.bootchart: per
    process [[ms since fork at the slice's end, ms on CPU in the slice]],
    the launch's own timeline, and what the sampling cost. A failed launch
    is recorded in it (the timed samples stand)."""
    argv = app_argv(ctx, stack, efl_launch.chosen(ctx), "--stay")
    out = {"sampled": True,
           "note": "an extra launch after the timed ones, its processes' /proc/PID/task/*/"
                   "schedstat polled every %d ms from the fork to composited + %d ms by a "
                   "thread of the bench; the polling costs CPU, so this launch is not a "
                   "timed sample" % (BOOTCHART_MS, BOOTCHART_TAIL_MS),
           "interval_ms": BOOTCHART_MS, "tail_ms": BOOTCHART_TAIL_MS, "round": ctx.round + 1}
    witness = timeline.LaunchWitness(stack, **efl_launch.witness_args(ctx)).start()
    pids = stack.pids()
    if witness.obs is not None:
        pids["observer"] = witness.obs.child.pid  # it polls too: show when it ran
    sampler = procs.SliceSampler(pids, interval=BOOTCHART_MS / 1000.0)
    run = None
    try:
        sampler.start()
        run = AppRun(ctx, stack, argv, t0=True, extra_env=efl_launch.env(ctx, stack))
        sampler.add("app", run.pid, t_ns=run.t0_ns, from_zero=True)
        ff = wait_first_frame(run)
        t, source, why = witness.composited(run.pid, run.t0_ns)
        end = (t if t is not None else time.monotonic_ns()) + BOOTCHART_TAIL_MS * 1000000
        while time.monotonic_ns() < end + 2 * BOOTCHART_MS * 1000000:
            time.sleep(0.002)
        sampler.stop()
        out["pids"] = {r: m.pid for r, m in sampler.meters.items()}
        out["processes"] = sampler.since(run.t0_ns, end)
        out["start_ms"] = {r: round((b - run.t0_ns) / 1e6, 3)
                           for r, b in sampler.base.items()}
        out["cpu_ms"] = {r: round(sum(c for _, c in pts), 4)
                         for r, pts in out["processes"].items()}
        out["end_ms"] = round((end - run.t0_ns) / 1e6, 3)
        out.update(timeline.launch_points(ff, run.t0_ns, t, source, why))
        out["status"] = "ok"
    except AppFailed as e:
        out["status"] = "failed"
        out["reason"] = str(e)
    finally:
        sampler.stop()
        out["sampler"] = {"polls": sampler.polls, "cpu_ms": round(sampler.cpu_ns / 1e6, 3)}
        if run:
            run.stop()
        witness.close()
    return out


def with_engine(argv, engine):
    """app_argv's command with its --engine replaced."""
    argv = list(argv)
    argv[argv.index("--engine") + 1] = engine
    return argv


def transport(kind, engine, path):
    """How the app's pixels reach the window system, by name. sw: shared
    memory on both (wl_shm; MIT-SHM, or PutImage when the X server lacks
    it). gl: Mesa's EGL on llvmpipe hands wl_shm buffers to a Wayland
    server, and on Xvfb (no DRI3) makes a GetGeometry round trip and a
    full-window PutImage per swap."""
    if kind == "wayland":
        return "wl_shm"
    if engine == "gl":
        return "x11-putimage"
    return "x11-putimage" if path == "put-image" else "mit-shm"


class SceneCpu:
    """CPU time of every stack process and of the app, read each time the
    app reports a finished scene (the trace is polled every 5 ms). The
    interval from the first scene's end to the last reading that still
    found the app alive gives CPU per frame without the app's start-up."""

    def __init__(self, stack, app_pid):
        self.meters = {r: procs.CpuMeter(p) for r, p in stack.pids().items()}
        self.meters["app"] = procs.CpuMeter(app_pid)
        self.marks = []  # (scenes seen, monotonic ns, {role: cpu ns})
        self.switches = switches.Marks(dict(stack.pids(), app=app_pid))

    def __call__(self, events):
        n = sum(1 for e in events if e.get("name") == "scene")
        if n and (not self.marks or self.marks[-1][0] != n):
            cpu = {r: m.read() for r, m in self.meters.items()}
            if all(v is not None for v in cpu.values()):
                self.marks.append((n, time.monotonic_ns(), cpu))
                self.switches.mark(n)
        # Done once the app says so (it exits right after).
        return any(e.get("name") == "render_done" for e in events)

    def frames(self, scenes):
        """(first mark's scenes, last mark's, frames between), or None."""
        if len(self.marks) < 2:
            return None
        n0, n1 = self.marks[0][0], self.marks[-1][0]
        return n0, n1, sum(s["frames"] for s in scenes[n0:n1])

    def switches_per_frame(self, scenes):
        f = self.frames(scenes)
        return f and self.switches.between(f[0], f[1], f[2], "frame",
                                           "end of scene %d -> end of scene %d (as the harness "
                                           "saw them)" % f[:2])

    def painted(self, stack, scenes):
        """The output frames the stack's compositor painted between the
        first and the last mark, and the window-system CPU per painted
        frame: at R = 0 duet's servers paint every client frame and weston
        about 40 a second, so CPU per client frame compares different work."""
        per = self.per_frame(scenes)
        if not per:
            return None
        span = (self.marks[0][1], self.marks[-1][1])
        return timeline.painted_frames(stack, [span], per["frames"],
                                       per["ms_per_frame"]["window_system"])

    def per_frame(self, scenes):
        if len(self.marks) < 2:
            return None
        (n0, t0, c0), (n1, t1, c1) = self.marks[0], self.marks[-1]
        frames = sum(s["frames"] for s in scenes[n0:n1])
        if frames <= 0:
            return None
        per = {r: round((c1[r] - c0[r]) / frames / 1e6, 4) for r in c1}
        per["window_system"] = round(sum(v for r, v in per.items() if r != "app"), 4)
        return {"ms_per_frame": per, "frames": frames, "wall_ms": round((t1 - t0) / 1e6, 1),
                "percent": {r: round(100.0 * (c1[r] - c0[r]) / (t1 - t0), 1) for r in c1},
                "interval": "end of scene %d -> end of scene %d (as the harness saw them)"
                            % (n0, n1)}


def render(ctx, stack, rec):
    """The duet-render scenes unthrottled with every engine of
    --render-engines in turn (sw first: the headline): fps, flush time and
    CPU per frame. Called once per --render-refresh rate, each time on a
    stack started at that rate; its samples carry it (refresh_hz)."""
    o = ctx.opts
    rec["engines"] = list(o.render_engines)
    rec["headline_engine"] = o.render_engines[0]
    rec["refreshes"] = list(o.render_refreshes)
    rec["headline_refresh"] = o.render_refreshes[0]
    rec["cores"] = procs.cores()
    for i in runs(ctx, "render", stack):
        for engine in o.render_engines:
            argv = with_engine(app_argv(ctx, stack, "render", "--duration-ms",
                                        str(o.render_ms)), engine)
            rec.setdefault("commands", {})[engine] = " ".join(argv)
            before = stack_ctx(stack)
            run = AppRun(ctx, stack, argv)
            watch = SceneCpu(stack, run.pid)
            try:
                run.wait(watch, timeout=30 + 8 * o.render_ms / 1000.0, experiment="render")
                after = stack_ctx(stack)
                done = run.named("render_done")
                if not done:
                    raise AppFailed("duet-render --engine %s %s without results:\n%s"
                                    % (engine, run.exit_status(), run.log_tail()))
                scenes = run.named("scene")
            finally:
                run.stop()
            path = scenes[0].get("path") if scenes else None
            rec["samples"].append({
                "run": i + 1, "engine": engine, "transport": transport(stack.kind, engine, path),
                "refresh_hz": stack.refresh, "score_fps": done[0]["score_fps"],
                "scenes": {s["scene"]: {"fps": s["fps"], "frames": s["frames"],
                                        "flush_ms": s["flush_mean_ns"] / 1e6,
                                        "flush_max_ms": s["flush_max_ns"] / 1e6,
                                        "presented": s.get("presented"),
                                        "discarded": s.get("discarded")} for s in scenes},
                "presentation": scenes[0].get("presentation") if scenes else None,
                "path": path, "cpu_per_frame": watch.per_frame(scenes),
                "painted": watch.painted(stack, scenes),
                "switches": watch.switches_per_frame(scenes),
                "ctx_switches": {r: procs.ctx_diff(before[r], after.get(r)) for r in before}})


def p95(vals):
    """The 95th percentile (nearest rank) of a non-empty list."""
    v = sorted(vals)
    return v[max(0, -(-95 * len(v) // 100) - 1)]


def spread(vals):
    """peak, p95 and mean of per-sample CPU percentages."""
    if not vals:
        return {"peak": None, "p95": None, "mean": None}
    return {"peak": max(vals), "p95": p95(vals), "mean": round(statistics.mean(vals), 2)}


def cpu(ctx, stack, rec):
    """CPU use of every window-system process and the app (the study's
    measure), sampled over the app's whole life with the scheduler's
    nanosecond accounting (procs.CpuSampler)."""
    o = ctx.opts
    rec["cores"] = procs.cores()
    rec["accounting"] = "ns on CPU from /proc/PID/task/*/schedstat, every %d ms" % (
        o.cpu_interval * 1000)
    for i in runs(ctx, "cpu", stack):
        argv = app_argv(ctx, stack, "render", "--duration-ms", str(o.cpu_ms), "--scenes",
                        "image_blend_smooth_scaled,text_glyphs")
        rec["command"] = " ".join(argv)
        sampler = procs.CpuSampler(stack.pids(), interval=o.cpu_interval)
        run = AppRun(ctx, stack, argv)
        sampler.add("app", run.pid)
        sw = switches.Marks(dict(stack.pids(), app=run.pid))
        sw.mark("start")
        try:
            run.wait(sw.scene_watch(lambda: not run.child.alive()),
                     timeout=30 + 2 * o.cpu_ms / 1000.0, sampler=sampler, experiment="cpu")
            # The app's last interval: its final times are gone with it, so
            # the timeline ends at the last sample taken while it lived.
            if not run.named("render_done"):
                raise AppFailed("duet-render %s:\n%s" % (run.exit_status(), run.log_tail()))
        finally:
            run.stop()
        timeline = sampler.timeline
        roles = sorted({r for _, p in timeline for r in p})
        per = {r: spread([p[r] for _, p in timeline if r in p]) for r in roles}
        totals = sampler.totals()
        for r in per:
            per[r]["cpu_ms"] = round(totals.get(r, 0) / 1e6, 3)
        # Sums per sample: only the samples where every process was read,
        # so a sum never leaves out a process that was running.
        full = [p for _, p in timeline if all(r in p for r in roles)]
        sums = [round(sum(p.values()), 2) for p in full]
        ws = [round(sum(v for k, v in p.items() if k != "app"), 2) for p in full]
        s_all, s_ws = spread(sums), spread(ws)
        scenes = run.named("scene")
        path = scenes[0].get("path") if scenes else None
        rec["samples"].append({
            "run": i + 1, "engine": o.engine, "transport": transport(stack.kind, o.engine, path),
            "interval_ms": o.cpu_interval * 1000, "per_process": per,
            "sum_peak": s_all["peak"], "sum_p95": s_all["p95"], "sum_mean": s_all["mean"],
            "window_system_peak": s_ws["peak"], "window_system_p95": s_ws["p95"],
            "window_system_mean": s_ws["mean"],
            "window_system_cpu_ms": round(sum(v for k, v in totals.items() if k != "app")
                                          / 1e6, 3),
            "app_cpu_ms": round(totals.get("app", 0) / 1e6, 3),
            "switches": sw.per_frame_since("start", scenes, "the app's fork -> the end of "
                                           "its last scene the harness saw (start-up "
                                           "included)"),
            "timeline": [{"t_ms": t, **p} for t, p in timeline]})


# duet-resize --settle-ms: every request meets an idle stack, and on openbox
# (presented before xcompmgr's composite) each step's frame is composited
# before the next request replaces it.
RESIZE_SETTLE_MS = 30


def resize(ctx, stack, rec):
    """The study's 8 sizes, N runs each, client- and server-initiated.
    A sample's ms is request -> composited (timeline.resize_headline),
    presented_ms beside it; on openbox the observer watches the run
    (timeline.ResizeWitness) and its CPU is in rec["observer"][mode]."""
    mine = ctx.opts.runs("resize", ctx.round)
    n = len(mine)
    modes = ["client", "server"]
    for k, mode in enumerate(modes):
        ctx.progress.step("resize", stack.name, k + 1, len(modes))
        argv = app_argv(ctx, stack, "resize", "--runs", str(n), "--mode", mode,
                        "--settle-ms", str(RESIZE_SETTLE_MS))
        rec.setdefault("commands", {})[mode] = " ".join(argv)
        witness = timeline.ResizeWitness(stack).start()
        run = None
        marks = None
        try:
            run = AppRun(ctx, stack, argv,
                         extra_env=stack.trusted_env if mode == "server" else None)
            marks = switches.StepMarks(dict(stack.pids(), app=run.pid), "resize",
                                       lambda: not run.child.alive())
            run.wait(marks, timeout=30 + 8 * n * 3, experiment="resize")
            steps = run.named("resize")
            done = run.named("resize_done")
            fallback = run.named("resize_mode")
        finally:
            if run:
                run.stop()
            seen = witness.close()
        if seen:
            rec.setdefault("observer", {})[mode] = {
                "polls": seen.get("polls"), "cpu_ns": seen.get("cpu_ns"),
                "wall_ns": seen.get("wall_ns"), "reported": seen.get("reported"),
                "mode": "sizes"}
        per = marks and marks.per_step("resize", "the first resize step's line -> the last "
                                       "step's line (settle time included)")
        if per:
            rec.setdefault("switches", []).append(dict(per, mode=mode, round=ctx.round + 1))
        if not done:
            raise AppFailed("duet-resize --mode %s %s after %d steps:\n%s"
                            % (mode, run.exit_status(), len(steps), run.log_tail()))
        if fallback:
            rec.setdefault("notes", []).append(
                "server-initiated resize unsupported (%s): ran client-initiated"
                % fallback[0].get("reason"))
        for i, s in enumerate(steps):
            # The observer's sight of this size counts until the request of
            # the next step of the same size.
            until = next(((t.get("timeline") or {}).get("requested") for t in steps[i + 1:]
                          if (t.get("got_width"), t.get("got_height")) ==
                          (s.get("got_width"), s.get("got_height"))), None)
            tl, missing, source = timeline.resize_points(stack, s, run.pid, witness=witness,
                                                         until=until)
            sample = {
                "mode": s["mode"], "requested_mode": mode, "run": mine.start + s["run"],
                "step": s["step"], "width": s["width"], "height": s["height"],
                "got_width": s["got_width"], "got_height": s["got_height"],
                "presentation": s.get("presentation"), "path": s.get("path"),
                "timeline": tl, "timeline_missing": missing, "timeline_source": source}
            sample.update(timeline.resize_headline(tl, missing, s.get("latency_ns")))
            rec["samples"].append(sample)


TIMING = {"launch": launch, "render": render, "cpu": cpu, "resize": resize,
          "thirdparty": thirdparty.timing, "roundtrip": roundtrip.timing,
          "concurrent": concurrent.timing,
          "input": inputlat.timing}
