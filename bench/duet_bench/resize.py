"""The resize experiment (the study's Fig. 8 and 9): duet-resize through
the study's 8 sizes, client- and server-initiated, each step timed from
the request to the new size composited. Its IPC per resize comes from
ipc.resize_counts."""
from duet_bench import ipc, switches, timeline
from duet_bench.apprun import AppFailed, AppRun
from duet_bench.experiment import Experiment, app_argv, counted

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


EXPERIMENT = Experiment("resize", "resize_runs", (2, 10), timing=resize,
                        counting=counted("resize", ipc.resize_counts), apps=("resize",),
                        slow_reps=6)
