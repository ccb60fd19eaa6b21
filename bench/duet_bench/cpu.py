"""The cpu experiment (the study's Fig. 7): CPU use of every window-system
process and of the app over the app's whole life."""
import statistics

from duet_bench import procs, switches
from duet_bench.apprun import AppFailed, AppRun
from duet_bench.experiment import Experiment, app_argv, runs, transport


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


EXPERIMENT = Experiment("cpu", "cpu_reps", (1, 3), timing=cpu, apps=("render",))
