"""The render experiment (the study's Fig. 6): duet-render's scenes
unthrottled with every engine of --render-engines, on a stack started at
each --render-refresh rate: fps, flush time, CPU per frame, the frames the
compositor painted. Its IPC per frame comes from ipc.render_counts, in a
stack of its own at the headline refresh, per engine."""
import time

from duet_bench import ipc, paint_count, procs, switches, timeline
from duet_launch import stack_kinds
from duet_bench.apprun import AppFailed, AppRun
from duet_bench.experiment import (Experiment, app_argv, runs, stack_ctx, transport,
                                   with_engine)


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
        self.paint_why = None  # why no paint counter counted (paint_count.for_stack)

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

    def painted(self, stack, scenes, paints=None):
        """The output frames the stack's compositor painted between the
        first and the last mark, and the window-system CPU per painted
        frame: at R = 0 duet's servers paint every client frame and weston
        at its own rate (weston near 60 a second since its repaint-window is 16
        ms, about 40 before), so CPU per client frame compares different work."""
        per = self.per_frame(scenes)
        if not per:
            return None
        span = (self.marks[0][1], self.marks[-1][1])
        counted = None
        if paints is not None:
            counted = (paint_count.paints_between(paints, *span), paint_count.SOURCE)
        elif stack.spec.composited == stack_kinds.PRESENTATION:
            # mutter tells only the app: each frame presented was one it
            # painted (a surface shows one new buffer per output frame).
            # Not so of _NET_WM_FRAME_DRAWN, which mutter's X window
            # manager sends for every X frame it took, several per paint.
            if scenes and scenes[0].get("presentation") != "wp_presentation":
                return {"painted_frames": None, "painted_missing":
                        "%s tells its X apps when it drew their frames (%s), not how many "
                        "output frames it painted" % (stack.name,
                                                      scenes[0].get("presentation"))}
            n0, n1 = self.marks[0][0], self.marks[-1][0]
            counted = (sum(s.get("presented") or 0 for s in scenes[n0:n1]),
                       "the app's presented frames")
        elif stack.spec.observed:
            return {"painted_frames": None, "painted_missing": self.paint_why or
                    "the compositing manager tells no one and nothing counted its paints"}
        return timeline.painted_frames(stack, [span], per["frames"],
                                       per["ms_per_frame"]["window_system"], counted)

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
            counter, paints = None, None
            try:
                # Counting from before the first scene ends, where the
                # painted frames are counted from (SceneCpu.painted).
                counter, watch.paint_why = paint_count.for_stack(stack)
                run.wait(watch, timeout=30 + 8 * o.render_ms / 1000.0, experiment="render")
                after = stack_ctx(stack)
                done = run.named("render_done")
                if not done:
                    raise AppFailed("duet-render --engine %s %s without results:\n%s"
                                    % (engine, run.exit_status(), run.log_tail()))
                scenes = run.named("scene")
            finally:
                run.stop()
                if counter:
                    paints, watch.paint_why = paint_count.stop(counter)
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
                "painted": watch.painted(stack, scenes, paints),
                "switches": watch.switches_per_frame(scenes),
                "ctx_switches": {r: procs.ctx_diff(before[r], after.get(r)) for r in before}})


def run_stacks(ctx, name, job):
    """A stack instance per --render-refresh rate."""
    for hz in ctx.opts.render_refreshes:
        ctx.run_in_stack(name, hz, [job])


def counting(ctx):
    """ipc.STACK.render is the headline engine's, render_ENGINE the others',
    each with the app asking no frame timings: every stack of a window
    system then answers the same protocol per frame (ipc.NO_TIMINGS).
    render_timings is the headline engine's with the timings the app takes
    where the server offers them (wp_presentation, _NET_WM_FRAME_DRAWN):
    their cost, a row of its own."""
    e = ctx.opts.render_engines
    return [("render" if i == 0 else "render_" + x, "render " + x,
             lambda c, s, x=x: ipc.render_counts(c, s, x, timings=False))
            for i, x in enumerate(e)] + [
        ("render_timings", "render %s, frame timings" % e[0],
         lambda c, s: ipc.render_counts(c, s, e[0]))]


EXPERIMENT = Experiment("render", "render_reps", (1, 5), timing=render, run_stacks=run_stacks,
                        counting=counting, counting_refresh=lambda opts: opts.render_refresh,
                        apps=("render",), slow_reps=3)
