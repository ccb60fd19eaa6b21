"""The study's four experiments, timing runs only (no tracing or counting
is attached to these; IPC counts come from separate runs, see ipc.py).

Each function runs all repetitions of one experiment in one started stack
and returns its samples; the caller records failures."""
import statistics
import time

from duet_bench import procs
from duet_bench.apprun import AppFailed, AppRun

SIZES = [(100, 100), (1000, 240), (850, 900), (400, 1000), (1800, 500), (999, 999),
         (333, 999), (1920, 1080)]


def app_argv(ctx, stack, app, *args):
    return [ctx.apps[app], "--backend", stack.kind, "--engine", ctx.opts.engine] + list(args)


def runs(ctx, exp, stack):
    """This round's 0-based run numbers of exp, each announced on the
    progress line."""
    total = ctx.opts.total(exp)
    for i in ctx.opts.runs(exp, ctx.round):
        ctx.progress.step(exp, stack.name, i + 1, total)
        yield i


def stack_ctx(stack):
    return {role: procs.ctx_switches(pid) for role, pid in stack.pids().items()}


def launch(ctx, stack, rec):
    """fork -> first presented frame, per run. The app stays until its
    context switches are read, then is closed."""
    for i in runs(ctx, "launch", stack):
        argv = app_argv(ctx, stack, "launch", "--stay")
        rec["command"] = " ".join(argv)
        before = stack_ctx(stack)
        run = AppRun(ctx, stack, argv, t0=True)
        try:
            ok = run.wait(lambda ev: any(e.get("name") == "first_frame" for e in ev),
                          timeout=30, experiment="launch")
            if not ok:
                raise AppFailed("duet-launch %s without a first frame:\n%s"
                                % (run.exit_status(), run.log_tail()))
            ff = run.named("first_frame")[0]
            after = stack_ctx(stack)
            app_ctx = procs.ctx_switches(run.pid)
        finally:
            run.stop()
        rec["samples"].append({
            "run": i + 1, "ms": ff["since_t0_ns"] / 1e6, "t0": ff.get("t0"),
            "presentation": ff.get("presentation"), "path": ff.get("path"),
            "engine": ff.get("engine"),
            "ctx_switches": dict({r: procs.ctx_diff(before[r], after.get(r)) for r in before},
                                 app=app_ctx)})
        time.sleep(0.2)


def render(ctx, stack, rec):
    """The duet-render scenes unthrottled: fps and flush time per scene."""
    o = ctx.opts
    for i in runs(ctx, "render", stack):
        argv = app_argv(ctx, stack, "render", "--duration-ms", str(o.render_ms))
        rec["command"] = " ".join(argv)
        before = stack_ctx(stack)
        run = AppRun(ctx, stack, argv)
        try:
            run.wait(timeout=30 + 8 * o.render_ms / 1000.0, experiment="render")
            after = stack_ctx(stack)
            done = run.named("render_done")
            if not done:
                raise AppFailed("duet-render %s without results:\n%s"
                                % (run.exit_status(), run.log_tail()))
            scenes = run.named("scene")
        finally:
            run.stop()
        rec["samples"].append({
            "run": i + 1, "score_fps": done[0]["score_fps"],
            "scenes": {s["scene"]: {"fps": s["fps"], "frames": s["frames"],
                                    "flush_ms": s["flush_mean_ns"] / 1e6,
                                    "flush_max_ms": s["flush_max_ns"] / 1e6,
                                    "presented": s.get("presented"),
                                    "discarded": s.get("discarded")} for s in scenes},
            "presentation": scenes[0].get("presentation") if scenes else None,
            "path": scenes[0].get("path") if scenes else None,
            "ctx_switches": {r: procs.ctx_diff(before[r], after.get(r)) for r in before}})


def cpu(ctx, stack, rec):
    """CPU use of every window-system process and the app, sampled from
    /proc over the app's whole life."""
    o = ctx.opts
    for i in runs(ctx, "cpu", stack):
        argv = app_argv(ctx, stack, "render", "--duration-ms", str(o.cpu_ms), "--scenes",
                        "image_blend_smooth_scaled,text_glyphs")
        rec["command"] = " ".join(argv)
        sampler = procs.CpuSampler(stack.pids(), interval=o.cpu_interval)
        run = AppRun(ctx, stack, argv)
        sampler.add("app", run.pid)
        try:
            run.wait(timeout=30 + 2 * o.cpu_ms / 1000.0, sampler=sampler, experiment="cpu")
            # The app's last interval: its final times are gone with it, so
            # the timeline ends at the last sample taken while it lived.
            if not run.named("render_done"):
                raise AppFailed("duet-render %s:\n%s" % (run.exit_status(), run.log_tail()))
        finally:
            run.stop()
        timeline = sampler.timeline
        roles = sorted({r for _, p in timeline for r in p})
        per = {}
        for r in roles:
            vals = [p[r] for _, p in timeline if r in p]
            per[r] = {"peak": max(vals), "mean": round(statistics.mean(vals), 1)}
        sums = [round(sum(p.values()), 1) for _, p in timeline]
        ws = [round(sum(v for k, v in p.items() if k != "app"), 1) for _, p in timeline]
        rec["samples"].append({
            "run": i + 1, "interval_ms": o.cpu_interval * 1000, "per_process": per,
            "sum_peak": max(sums) if sums else None,
            "sum_mean": round(statistics.mean(sums), 1) if sums else None,
            "window_system_peak": max(ws) if ws else None,
            "window_system_mean": round(statistics.mean(ws), 1) if ws else None,
            "timeline": [{"t_ms": t, **p} for t, p in timeline]})


def resize(ctx, stack, rec):
    """The study's 8 sizes, N runs each, client- and server-initiated."""
    mine = ctx.opts.runs("resize", ctx.round)
    n = len(mine)
    modes = ["client", "server"]
    for k, mode in enumerate(modes):
        ctx.progress.step("resize", stack.name, k + 1, len(modes))
        argv = app_argv(ctx, stack, "resize", "--runs", str(n), "--mode", mode)
        rec.setdefault("commands", {})[mode] = " ".join(argv)
        run = AppRun(ctx, stack, argv)
        try:
            run.wait(timeout=30 + 8 * n * 3, experiment="resize")
            steps = run.named("resize")
            done = run.named("resize_done")
            fallback = run.named("resize_mode")
        finally:
            run.stop()
        if not done:
            raise AppFailed("duet-resize --mode %s %s after %d steps:\n%s"
                            % (mode, run.exit_status(), len(steps), run.log_tail()))
        if fallback:
            rec.setdefault("notes", []).append(
                "server-initiated resize unsupported (%s): ran client-initiated"
                % fallback[0].get("reason"))
        for s in steps:
            rec["samples"].append({
                "mode": s["mode"], "requested_mode": mode, "run": mine.start + s["run"], "step": s["step"],
                "width": s["width"], "height": s["height"], "got_width": s["got_width"],
                "got_height": s["got_height"], "ms": s["latency_ns"] / 1e6,
                "presentation": s.get("presentation"), "path": s.get("path")})


TIMING = {"launch": launch, "render": render, "cpu": cpu, "resize": resize}
