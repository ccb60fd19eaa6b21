"""What one experiment of `duet bench` is (Experiment, one record per
experiment module, listed in experiments.py), and what the runs of every
experiment share: this round's run numbers, the app's command line, how
its pixels travel.

ctx is the running bench (cli.Bench): its options (opts), the round, the
progress line, duet's apps (apps), the run's scratch directory (workdir),
fault_hook() for the tests' faults and run_in_stack() to start a stack."""
import dataclasses
from typing import Callable, Optional

from duet_bench import procs


@dataclasses.dataclass(frozen=True)
class Experiment:
    """One experiment: cli.py runs and counts it, report.py shows it, all
    from this record."""
    name: str               # --experiments' name, results.json's key
    reps_field: str         # the Options field (results.json "options") of its number of runs
    reps: tuple             # (runs with --quick, runs in a full run), without --reps
    # timing(ctx, stack, rec): this round's timing runs in one started stack,
    # samples appended to rec["samples"]. No counter or tracer is attached.
    timing: Optional[Callable] = None
    # run_stacks(ctx, name, job): starts the stack instances its timing runs
    # need and runs job in them (ctx.run_in_stack); None: the round's shared
    # stack instance at 60 Hz.
    run_stacks: Optional[Callable] = None
    # counting(ctx) -> [(results.json ipc key, progress label, fn(ctx, stack)
    # -> record)]: its IPC counting runs (ipc.py), in the first round, in a
    # stack started with the counter.
    counting: Optional[Callable] = None
    # counting_refresh(opts) -> Hz of a stack instance its counting runs get
    # to themselves; None: the shared counting instance at 60 Hz.
    counting_refresh: Optional[Callable] = None
    always_counted: bool = False  # counted even when not asked for (the launch: the headline)
    skip: Optional[Callable] = None  # skip(stack name, Bench.config) -> why not there, or None
    apps: tuple = ()        # duet's apps it runs (cli.Bench.apps keys), to be built
    unavailable: Optional[Callable] = None  # unavailable(ctx) -> why it cannot run at all, or None
    report: Optional[Callable] = None  # report(results, out, table, order, pairs) -> blocks
    slow_reps: Optional[int] = None  # runs on a slow stack (StackKind.slow), full run, no --reps
    default: bool = True    # in the default --experiments


def counted(key, fn):
    """An Experiment.counting of one counting run, fn(ctx, stack)."""
    return lambda ctx: [(key, key, fn)]


def runs(ctx, exp, stack):
    """This round's 0-based run numbers of exp, each announced on the
    progress line."""
    total = ctx.opts.total(exp)
    for i in ctx.opts.runs(exp, ctx.round):
        ctx.progress.step(exp, stack.name, i + 1, total)
        yield i


def stack_ctx(stack):
    """Context switches of every stack process now (procs.ctx_switches)."""
    return {role: procs.ctx_switches(pid) for role, pid in stack.pids().items()}


# The apps' own give-up times (ms, their defaults) for an emulated machine.
APP_TIMEOUT_MS = {"launch": 20000, "launch-efl": 20000, "resize": 10000}


def app_argv(ctx, stack, app, *args):
    argv = [ctx.apps[app], "--backend", stack.kind, "--engine", ctx.opts.engine]
    if app in APP_TIMEOUT_MS and procs.patience(1.0) > 1.0:
        argv += ["--timeout-ms", str(int(procs.patience(APP_TIMEOUT_MS[app] / 1000.0) * 1000))]
    return argv + list(args)


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
