"""The launch experiment (the study's Fig. 4 and 5): duet-launch (or
duet-launch-efl, efl_launch.py) forked on a running stack, timed from the
fork to its first frame composited, with the launch's timeline
(timeline.py), every process's CPU and context switches; once per stack
a sampled launch shows which process ran when (the bootchart). Its IPC
comes from ipc.launch_counts, in a stack of its own."""
import time

from duet_bench import efl_launch, ipc, procs, switches, timeline
from duet_bench.apprun import AppFailed, AppRun
from duet_bench.experiment import Experiment, app_argv, counted, runs, stack_ctx


def wait_first_frame(run, experiment="launch"):
    """duet-launch's first_frame line, once it wrote it (it stays running)."""
    ok = run.wait(lambda ev: any(e.get("name") == "first_frame" for e in ev),
                  timeout=30, experiment=experiment)
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
        t, source, why = witness.composited(run.pid, run.t0_ns, ff)
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
        t, source, why = witness.composited(run.pid, run.t0_ns, ff)
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


EXPERIMENT = Experiment("launch", "launch_reps", (3, 5), timing=launch,
                        counting=counted("launch", ipc.launch_counts), always_counted=True,
                        unavailable=efl_launch.missing)
