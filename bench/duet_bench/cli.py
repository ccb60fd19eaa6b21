"""`duet bench`: runs the experiments on the stacks, writes the results.

    duet bench [--quick] [--experiments launch,render,cpu,resize,thirdparty,roundtrip,
                                        concurrent,input,vfb,sweep]
               [--stacks wayland,x11,weston,openbox] [--reps N] [--rounds N]
               [--render-refresh LIST] [--scenes LIST] [--renderers LIST] [--seed N]
               [--out DIR] [--display headless|kms]

Results go to DIR (default bench-results/DATE): results.json (every raw
sample, rewritten after each experiment so an interrupted run keeps what
finished), summary.csv, report.md, report.html. Exit status: 0, 1 when
any experiment failed or nothing could be measured (the report is still
written), 2 for bad usage, 130 when interrupted. results.json's "outcome"
says pass, fail or skip per experiment and stack. --no-report (for board
farms and scripts) writes results.json and summary.csv only and prints
one JSON line on stdout: the result, the exit status, what failed, each
experiment's result and the two files' paths; the summary table goes to
stderr.

--display kms runs the bench on a KMS display instead of headless: here,
inside scripts/test-kms's qemu guest (virtio-gpu, and vkms beside it for
Xorg's glamor), with the KMS stacks (duet-compositor --backend drm, Xorg +
duet-xwm; the others are reported as not runnable, with the reason). The
guest is emulated (TCG): the report says so, and its timings are not
comparable with a real machine's; the counts are. DIR must be on this
machine's file system (the guest writes into it).
"""
import argparse
import dataclasses
import atexit
import faulthandler
import copy
import datetime
import json
import os
import shutil
import shlex
import signal
import subprocess
import sys
import tempfile

from duet_bench import (efl_launch, experiments, ipc, machine, outcome, procs, report, stacks,
                        stall, stats, sweep, switches, trace_cmd, trace_record)
from duet_bench.trace_raw import OPS as TRACE_OPS, raw_dirs
from duet_launch import enlightenment, paths, reaper, stack_kinds
from duet_bench.apprun import AppFailed, StackDied, check_stack
from duet_bench.progress import Progress

EXIT_USAGE = 2
EXIT_FAILED = 1
# The slow stacks' repetitions in a full run without --reps (Experiment.slow_reps),
# so that the default six-stack run stays near 45 minutes (docs/methodology.md,
# "Run time"; the timings behind it: docs/results/run-times.md); the others keep
# Options' counts.
SLOW_REPS = {e.reps_field: e.slow_reps for e in experiments.ALL if e.slow_reps}


class Interrupted(Exception):
    pass


class Options:
    def __init__(self, args):
        q = args.quick
        self.quick = q
        self.engine = args.engine
        self.renderer = args.renderer  # duet's servers' and weston's engine (Bench.config)
        self.launch_app = args.launch_app
        reps = args.reps
        self.explicit_reps = reps is not None
        # Each experiment's count of runs, spread over the rounds.
        for e in experiments.ALL:
            setattr(self, e.reps_field, reps or e.reps[0 if q else 1])
        self.render_ms = 150 if q else 2000
        # Render IPC per frame: two run lengths, so start-up cancels out.
        self.render_count_ms = [100, 300] if q else [500, 1500]
        self.render_count_repeat = 1 if q else 2
        self.render_engines = args.render_engines
        self.cpu_ms = 400 if q else 2000
        self.cpu_interval = 0.05
        # thirdparty: glmark2's scenes last this long each; elementary_test
        # idles this long after its launch.
        self.glmark2_duration_s = 0.5 if q else 5
        self.efl_idle_s = 1 if q else 4
        # sweep: glmark2's scenes (glmark2_duration_s each) and the engines
        # duet's servers and weston run them with.
        self.sweep_scenes = args.scenes
        self.sweep_renderers = args.renderers
        self.ipc = not args.no_ipc
        self.xtrace = self.ipc and not args.no_xtrace
        # The traced operations (trace_record.py), once per stack, IPC
        # recorded call by call: --no-ipc skips them with the counting runs.
        # The render interval's length.
        self.trace = self.ipc and not getattr(args, "no_trace", False)
        self.trace_frame_ms = 100 if q else 300
        self.rounds = args.rounds or (1 if q else 5)
        # --rounds N without --reps: every experiment runs at least once a
        # round, so that all N rounds pair (a round without a run of an
        # experiment pairs nothing for it). The default run is unchanged.
        self.rounds_explicit = bool(args.rounds)
        if self.rounds_explicit and not self.explicit_reps:
            for e in experiments.ALL:
                setattr(self, e.reps_field, max(getattr(self, e.reps_field), self.rounds))
        # Every refresh the render experiment runs duet's servers at; the
        # first is the headline (and its IPC counting run's).
        self.render_refreshes = args.render_refresh or ([0] if q else [0, 60])
        self.render_refresh = self.render_refreshes[0]
        self.seed = args.seed if args.seed is not None else stats.new_seed()
        # DUET_BENCH_PATIENCE: the factor every wait's upper bound was given.
        self.patience = procs.patience(1.0)
        self.stall_report = args.stall_report

    def total(self, exp):
        return getattr(self, experiments.BY_NAME[exp].reps_field)

    def runs(self, exp, rnd):
        """The 0-based run numbers of exp that round rnd does: the runs
        are spread evenly over the rounds."""
        t = self.total(exp)
        return range(t * rnd // self.rounds, t * (rnd + 1) // self.rounds)

    def for_stack(self, name):
        """The options a stack runs with: SLOW_REPS on the slow stacks in a
        full run without --reps, else these."""
        if self.quick or self.explicit_reps or not stack_kinds.get(name).slow:
            return self
        o = copy.copy(self)
        for k, v in SLOW_REPS.items():
            setattr(o, k, max(v, self.rounds) if self.rounds_explicit else v)
        return o

    def as_dict(self):
        return dict(vars(self))


def refresh_list(text):
    """--render-refresh: distinct rates in Hz, 0 (unthrottled) or 1..1000."""
    try:
        hz = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        hz = []
    if not hz or any(not 0 <= h <= 1000 for h in hz) or len(set(hz)) != len(hz):
        raise argparse.ArgumentTypeError("refresh must be a list of distinct rates, each 0 "
                                         "(unthrottled) or 1..1000 Hz: %r" % text)
    return hz


def parse_list(text, allowed, what, keep_order=False):
    items = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in items if s not in allowed]
    if bad or not items:
        raise argparse.ArgumentTypeError("unknown %s %s (choose from %s)"
                                         % (what, ",".join(bad) or "''", ",".join(allowed)))
    if keep_order:
        return list(dict.fromkeys(items))
    return [s for s in allowed if s in items]


def int_arg(lo, hi, what):
    """An argparse type: an integer from lo to hi, else a usage error."""
    def parse(text):
        try:
            n = int(text)
        except ValueError:
            n = lo - 1
        if n < lo or n > hi:
            raise argparse.ArgumentTypeError("%s, not %r" % (what, text))
        return n
    return parse


def add_arguments(p):
    p.add_argument("--quick", action="store_true",
                   help="few repetitions, short durations (under 3 minutes)")
    p.add_argument("--experiments", default=",".join(experiments.DEFAULT), metavar="LIST",
                   type=lambda t: parse_list(t, experiments.NAMES, "experiment"),
                   help="comma-separated: %s (default: all but %s)" % (
                       ",".join(experiments.NAMES),
                       ",".join(n for n in experiments.NAMES if n not in experiments.DEFAULT)))
    p.add_argument("--stacks", default=None, metavar="LIST",
                   type=lambda t: parse_list(t, stack_kinds.NAMES, "stack"),
                   help="comma-separated: %s (default: %s; with --quick: %s; the "
                   "Enlightenment stacks are skipped with the reason where E is not installed, "
                   "and in a full run without --reps the slow stacks (%s) run fewer render, "
                   "thirdparty, resize and roundtrip repetitions: %s)" % (
                       ",".join(stack_kinds.NAMES), ",".join(stack_kinds.DEFAULT),
                       ",".join(stack_kinds.QUICK),
                       ",".join(k.name for k in stack_kinds.TABLE if k.slow),
                       ", ".join("%s %d" % (k, v) for k, v in SLOW_REPS.items())))
    p.add_argument("--reps", type=int_arg(1, 10000, "reps must be 1..10000"), metavar="N",
                   help="repetitions of every experiment (resize: runs of the 8 sizes)")
    p.add_argument("--out", metavar="DIR", help="output directory (default bench-results/DATE)")
    p.add_argument("--engine", choices=["gl", "sw"], default="sw",
                   help="the apps' drawing engine in the launch, cpu and resize experiments "
                        "(default sw: shared memory on both window systems; gl makes Mesa's "
                        "software EGL on Xvfb send every frame in a full-window PutImage)")
    p.add_argument("--renderer", choices=["gl", "pixman"], default="gl",
                   help="the drawing engine of duet-compositor, duet-xwm and weston (default "
                        "gl: GLES2, Mesa's llvmpipe without a GPU; pixman: the CPU, as "
                        "openbox + xcompmgr's XRender in Xvfb draws, for a like-for-like "
                        "software comparison; weston gets --use-pixman); Enlightenment and "
                        "xcompmgr are software either way. Not with --display kms")
    p.add_argument("--xwm-software", choices=["xrender", "pixman"], default="xrender",
                   help="duet-xwm's engine wherever duet-xwm draws in software (--renderer "
                        "pixman, and the sweep's pixman): xrender (default), drawn inside the "
                        "X server as xcompmgr and picom draw, or pixman, window contents "
                        "fetched into duet-xwm with MIT-SHM, composited there and sent back "
                        "(docs/methodology.md says why the default draws where it draws)")
    p.add_argument("--launch-app", choices=sorted(efl_launch.APPS), default="duet-launch",
                   help="the launch experiment's app: duet-launch (default) or duet-launch-efl, "
                        "the same launch written with Elementary (EFL), on every stack")
    p.add_argument("--rounds", type=int_arg(1, 1000, "rounds must be 1..1000"), metavar="N",
                   help="interleave the stacks: every round runs every stack once with its "
                        "share of the runs, so slow drift of a shared machine's load falls "
                        "on all stacks alike (default 5; 1 with --quick)")
    p.add_argument("--render-refresh", default=None, metavar="LIST", type=refresh_list,
                   help="refresh rates (Hz, comma-separated) of duet-compositor's and "
                        "duet-xwm's frame clock in the render experiment, which runs once at "
                        "each; the first is the headline (default 0,60; 0 with --quick). "
                        "0: composite every frame the app draws; 60: at most 60 times a "
                        "second. weston's headless output has no switch: it runs its own "
                        "60 Hz clock at every value, and its samples say so")
    p.add_argument("--render-engines", default="sw,gl", metavar="LIST",
                   type=lambda t: parse_list(t, ["sw", "gl"], "engine", keep_order=True),
                   help="the app engines of the render experiment and its counting runs, "
                        "the first one the headline (default sw,gl: shared memory on both "
                        "window systems first, then GLES2 on EGL)")
    p.add_argument("--scenes", default=",".join(sweep.DEFAULT_SCENES), metavar="LIST",
                   type=lambda t: parse_list(t, sweep.SCENES, "glmark2 scene", keep_order=True),
                   help="the sweep experiment's glmark2 scenes, in this order (default %s)"
                   % ",".join(sweep.DEFAULT_SCENES))
    p.add_argument("--renderers", default="gl,pixman", metavar="LIST",
                   type=lambda t: parse_list(t, sweep.RENDERERS, "renderer", keep_order=True),
                   help="the sweep experiment's engines of duet-compositor, duet-xwm and "
                   "weston, each in a stack instance of its own (default gl,pixman; "
                   "xrender: duet-xwm's in-server engine, which the others skip, e.g. "
                   "pixman,xrender with --xwm-software pixman puts both of duet-xwm's "
                   "software engines in one run; --renderer does not apply to the sweep; "
                   "openbox + xcompmgr runs once, with XRender)")
    p.add_argument("--seed", type=int_arg(0, (1 << 32) - 1, "seed must be 0..4294967295"),
                   metavar="N", help="seed of the stacks' random order in each round and of "
                   "the bootstrap intervals (default: a random one; recorded either way)")
    p.add_argument("--no-ipc", action="store_true",
                   help="skip the IPC counting runs and the traced operations")
    p.add_argument("--no-trace", action="store_true",
                   help="skip the traced operations: one launch, one run of the resize sizes "
                   "and a short render interval per stack with every IPC call of every process "
                   "recorded by strace (and the scheduler's switches by perf where it can), in "
                   "a stack of their own beside the timed runs; kept in trace-raw/ and drawn as "
                   "trace-STACK-OP.json for ui.perfetto.dev (about 4-5 s per stack; "
                   "--no-ipc skips them too)")
    p.add_argument("--no-xtrace", action="store_true",
                   help="skip the xtrace run alone (openbox's and xcompmgr's X protocol "
                   "through proxies): on an emulated or slow machine the slowest counting run")
    p.add_argument("--stall-report", type=float, default=600, metavar="S",
                   help="when no part of the run has started or ended for S seconds, write "
                   "where every thread waits to stalls.txt in the out directory (default 600; "
                   "0: never)")
    p.add_argument("--display", choices=["headless", "kms"], default="headless",
                   help="headless outputs (default), or a KMS display: the bench runs in "
                   "scripts/test-kms's emulated guest with the KMS stacks")
    p.add_argument("--no-report", action="store_true", help="results.json and summary.csv only")


class Bench:
    def __init__(self, args, argv, x_server="xvfb"):
        self.args = args
        self.opts = Options(args)
        # What every stack of the run is started with (duet_launch's Config):
        # --display, --renderer, the X server.
        self.config = stacks.settings(output=getattr(args, "display", "headless"),
                                      renderer=getattr(args, "renderer", "gl"),
                                      x_server=x_server,
                                      xwm_software=getattr(args, "xwm_software", "xrender"))
        self.out = os.path.abspath(args.out or os.path.join(
            "bench-results", datetime.datetime.now().strftime("%Y%m%d-%H%M%S")))
        os.makedirs(self.out, exist_ok=True)
        self.workdir = paths.memory_dir("duet-bench-")
        self.apps = {"launch": paths.find_own("duet-launch", "clients"),
                     "render": paths.find_own("duet-render", "clients"),
                     "resize": paths.find_own("duet-resize", "clients"),
                     "roundtrip": paths.find_own("duet-roundtrip", "clients"),
                     "launch-efl": paths.find_own("duet-launch-efl", "clients"),
                     "input": paths.find_own("duet-input", "clients")}
        self.kill_spec = parse_kill_spec(os.environ.get("DUET_BENCH_TEST_KILL_SERVER"))
        self.trace_why = None  # why strace cannot trace here ("": it can), once asked
        self.killed = set()
        self.round = 0
        self.run_id = "%d-%s" % (os.getpid(), os.urandom(4).hex())
        self.base_env = dict(os.environ, GALLIUM_DRIVER=os.environ.get("GALLIUM_DRIVER",
                                                                       "llvmpipe"),
                             LIBGL_ALWAYS_SOFTWARE=os.environ.get("LIBGL_ALWAYS_SOFTWARE", "1"),
                             EVAS_GL_NO_BLACKLIST="1")
        self.base_env[procs.RUN_MARK] = os.environ.get(procs.RUN_MARK, self.run_id)
        # Whatever ends the bench, even SIGKILL, what it started goes too.
        reaper.watch(procs.RUN_MARK, self.base_env[procs.RUN_MARK])
        for k in ("LD_PRELOAD", "DUET_TRACE", "DUET_PROTOCOL_LOG", "DUET_IPC_COUNT_DIR"):
            self.base_env.pop(k, None)
        self.results = {
            "schema": 2, "tool": "duet bench",
            "command": " ".join(["duet", "bench"] + argv),
            "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "finished": None, "interrupted": False, "options": self.opts.as_dict(),
            "seed": self.opts.seed, "round_orders": [],
            "machine": machine.machine(), "governor": machine.governor(),
            "versions": machine.versions(),
            "render_env": {k: self.base_env.get(k) for k in machine.render_env()},
            "display": self.config.output, "renderer": self.config.renderer,
            "xwm_software": self.config.xwm_software,
            "apps": self.apps, "stacks": {}, "experiments": {e: {} for e in args.experiments},
            "ipc": {}}
        self.progress = Progress(self.plan_units())
        # Each part's duration in results["phases"]; where it waits if one
        # part takes too long (stall.py).
        self.phase = stall.Phases(self.results, self.out, self.progress.say,
                                  self.opts.stall_report, logs=self.workdir)
        few = [e for e in args.experiments if self.opts.total(e) < self.opts.rounds]
        if few and self.opts.explicit_reps:
            self.progress.say("--reps %d < --rounds %d: %s run in %d rounds only, and only "
                              "those rounds pair" % (args.reps, self.opts.rounds,
                                                     ", ".join(few), args.reps))

    def plan_units(self):
        n = 0
        for name in self.args.stacks:
            o = self.opts.for_stack(name)
            for e in self.args.experiments:
                # resize steps once per mode in every round that has runs
                n += o.total(e) if e != "resize" else 2 * sum(
                    1 for r in range(o.rounds) if o.runs(e, r))
            if o.trace:
                n += len(TRACE_OPS)
            if o.ipc:
                # strace's launch, every counting run, the xtrace run
                n += 1 + sum(len(e.counting(self)) for e in self.counted(
                    [experiments.BY_NAME[x] for x in self.args.experiments])) + (
                    stack_kinds.get(name).xtrace and o.xtrace)
        return n

    def counted(self, exps):
        """The experiments whose IPC is counted when exps run."""
        return [e for e in experiments.ALL if e.counting and (e.always_counted or e in exps)]

    # ------------------------------------------------------------ faults (tests)
    def fault_hook(self, stack, experiment, elapsed):
        if not self.kill_spec:
            return
        name, exp, ms, role, sig = self.kill_spec
        key = (stack.name, experiment)
        if stack.name == name and experiment == exp and key not in self.killed \
                and elapsed * 1000 >= ms:
            self.killed.add(key)
            server = stack.procs.get("server")
            how = "stopping" if sig == signal.SIGSTOP else "killing"
            if role != "server":
                pid = stack.pids().get(role)
                if pid:
                    self.progress.say("test fault: %s the %s's %s (pid %d) after %d ms of "
                                      "%s" % (how, name, role, pid, ms, exp))
                    os.kill(pid, sig)
            elif server:
                self.progress.say("test fault: %s the %s server (pid %d) after %d ms of %s"
                                  % (how, name, server.pid, ms, exp))
                server.signal_group(sig)

    # ------------------------------------------------------------ results
    def save(self, stamp=True):
        if stamp or not self.results["finished"]:
            self.results["finished"] = datetime.datetime.now().astimezone().isoformat(
                timespec="seconds")
        tmp = os.path.join(self.out, ".results.json.tmp")
        with open(tmp, "w") as f:
            json.dump(self.results, f, indent=1)
        os.replace(tmp, os.path.join(self.out, "results.json"))

    def start_stack(self, name, refresh, counting=False, stack_class=None, config=None):
        cdir = None
        if counting:
            cdir = tempfile.mkdtemp(prefix="count-", dir=self.workdir)
        env = dict(self.base_env, **ipc.counting_server_env(name)) if counting else self.base_env
        st = (stack_class or stacks.Stack)(name, self.workdir, env, refresh=refresh,
                                           counting=cdir, config=config or self.config)
        return st.start()

    def record_failure(self, rec, why, stack=None, app_log=None):
        rec["status"] = "failed"
        rec["reason"] = why
        crash = enlightenment.crash_reason(stack) if stack else None
        if crash:
            rec["reason"] = "%s: %s" % (why, crash)
        logs = stack.logs() if stack else {}
        if app_log:
            logs["app"] = app_log
        rec["logs"] = logs
        lines = why.splitlines() if why else []
        self.progress.say("FAILED: %s" % lines[0] if lines else "FAILED")
        # The lines after the first are a hung process's frames (gdb's,
        # apprun.AppRun.waiting): a CI log may be all a rare hang leaves.
        for line in lines[1:61]:
            self.progress.say("    " + line)

    def run_in_stack(self, name, refresh, what, counting=False, stack_class=None, config=None):
        """Starts a stack, runs what(stack) for each (key, fn) in what,
        restarting the stack after a failure. Returns nothing: records."""
        st = None
        fresh = False
        try:
            for key, rec, fn in what:
                # After a failure the next step gets a stack of its own: a
                # server that hung (one CI run, 2026-12-07: its main thread
                # asleep in a lock) would fail every step after it too.
                if st is None or st.dead() or fresh:
                    fresh = False
                    if st:
                        st.stop()
                        st.cleanup()
                        st = None
                    st, err = None, None
                    for attempt in range(3):  # retries: a start can lose a race
                        try:
                            with self.phase("start %s" % name):
                                st = self.start_stack(name, refresh, counting, stack_class,
                                                      config)
                            break
                        except stacks.StackError as e:
                            err = e
                            self.progress.say("the %s stack did not start (attempt %d): %s"
                                              % (name, attempt + 1, e))
                            # Kept even when a retry works: a start that fails
                            # now and then is worth knowing about.
                            self.results["stacks"][name].setdefault("start_failures", []).append(
                                {"step": key, "error": str(e), "logs": e.logs})
                    if st is None:
                        self.record_failure(rec, "%sthe %s stack did not start: %s"
                                            % (self.round_label(), name, err))
                        rec["logs"] = err.logs
                        continue
                    if st.probe and st.probe["failed"]:
                        # Kept like a failed start: the probe's own retries
                        # are otherwise silent, and each waits its full bound.
                        self.results["stacks"][name].setdefault("probe_failures", []).append(
                            {"step": key, "failed": st.probe["failed"]})
                        self.progress.say("the %s stack's readiness probe failed %d time(s) "
                                          "before it worked: %s" % (
                                              name, len(st.probe["failed"]),
                                              st.probe["failed"][-1]["why"]))
                    self.results["stacks"][name].setdefault("commands", {}).update(
                        {"%s@%s%s" % (r, refresh, "-counting" if counting else ""): c
                         for r, c in st.command_lines().items()})
                    self.results["stacks"][name].setdefault("notes", [])
                    path = st.content_path()
                    if path:
                        self.results["stacks"][name]["content_path"] = path
                    for n in st.notes:
                        if n not in self.results["stacks"][name]["notes"]:
                            self.results["stacks"][name]["notes"].append(n)
                # A failure in an earlier round stays the record's status;
                # the samples of the rounds that worked are kept with it.
                failed_before = rec.get("status") == "failed"
                rec["status"] = "running"
                rec["stack_refresh"] = refresh
                ticks = machine.cpu_ticks()
                try:
                    with self.phase("%s on %s%s" % (key, name, " (counting)" if counting
                                                    else "")):
                        fn(st, rec)
                    rec["status"] = "failed" if failed_before else "ok"
                except StackDied as e:
                    self.record_failure(rec, "%sthe stack died: %s" % (self.round_label(), e),
                                        st)
                except AppFailed as e:
                    # An app that failed may have lost a server that is
                    # still dying: the stack's death is then the cause.
                    try:
                        check_stack(st, grace=procs.patience(2.0))
                    except StackDied as died:
                        e = "the stack died: %s (%s)" % (died, e)
                    self.record_failure(rec, self.round_label() + str(e), st)
                    fresh = True
                finally:
                    # The samples this job added share its load and steal:
                    # the job is the finest grain the machine's counters
                    # are read at without touching the timed runs.
                    load, steal = machine.loadavg(), machine.steal_pct(ticks,
                                                                       machine.cpu_ticks())
                    freq = machine.cpufreq_now()
                    for sample in rec.get("samples", []):
                        sample.setdefault("round", self.round + 1)
                        if "loadavg" not in sample:
                            sample["loadavg"] = load
                            sample["steal_pct"] = steal
                            sample["cpufreq"] = freq
                    self.save()
        finally:
            if st:
                with self.phase("stop %s" % name):
                    st.stop()
                    st.cleanup()

    def round_label(self):
        return "round %d: " % (self.round + 1) if self.opts.rounds > 1 else ""

    def run(self):
        # This machine's cost of one context switch (switches.py): before
        # any stack runs, so nothing of the bench's shares the CPU with it.
        with self.phase("switch cost"):
            self.results["machine"]["switch_cost"] = switches.cost(self.apps["roundtrip"])
        live = []
        for name in self.args.stacks:
            spec = stack_kinds.get(name)
            srec = self.results["stacks"][name] = {"kind": spec.window_system,
                                                   "server": spec.server_system,
                                                   "renderer": stacks.stack_renderer(
                                                       name, self.config)}
            why = stacks.missing(name, template=self.config)
            if why:
                srec["status"] = "skipped"
                srec["reason"] = why
                self.progress.say("skipping stack %s: %s" % (name, why))
                for e in self.args.experiments:
                    self.results["experiments"][e][name] = {"status": "skipped", "reason": why,
                                                            "samples": []}
                self.save()
                continue
            srec["status"] = "ok"
            srec["programs"] = {n: p for n, (p, _) in stacks.needs(
                name, template=self.config).items()}
            live.append(name)
        # A fixed order would give the same stack the same neighbour and
        # the same moment of every round; a drawn one spreads both.
        orders = stats.stack_order(live, self.opts.rounds, self.opts.seed)
        for self.round in range(self.opts.rounds):
            self.results["round_orders"].append(orders[self.round])
            for k, name in enumerate(orders[self.round]):
                self.progress.where = "round %d of %d; after %s: %s" % (
                    self.round + 1, self.opts.rounds, name,
                    ", ".join(orders[self.round][k + 1:]) or "no stack this round") \
                    if self.opts.rounds > 1 or len(live) > 1 else ""
                self.run_stack(name)
        self.save()

    def timing_job(self, e, name):
        rec = self.results["experiments"][e.name].setdefault(name, {"status": "pending",
                                                                    "samples": []})
        return (e.name, rec, lambda st, r: e.timing(self, st, r))

    def run_stack(self, name):
        """run_stack_with on the stack's own options (Options.for_stack)."""
        full = self.opts
        self.opts = full.for_stack(name)
        if self.opts is not full:
            self.results["stacks"][name]["reps"] = {k: getattr(self.opts, k) for k in SLOW_REPS}
        try:
            self.run_stack_with(name)
        finally:
            self.opts = full

    def run_stack_with(self, name):
        """This round's share of the timing runs on one stack; in the first
        round also the counting runs."""
        exps = [experiments.BY_NAME[e] for e in self.args.experiments]
        now = []
        for e in exps:
            if not self.opts.runs(e.name, self.round):
                continue
            why = e.skip(name, self.config) if e.skip else None
            if why:
                self.results["experiments"][e.name][name] = {"status": "skipped", "reason": why,
                                                             "samples": []}
            else:
                now.append(e)
        ipc_rec = self.results["ipc"].setdefault(name, {})
        counting = self.opts.ipc and self.round == 0
        strace = shutil.which("strace")
        lib = paths.find_ipc_lib()
        strace_job = None
        if counting:
            if strace:
                ipc_rec["strace_launch"] = {"samples": []}
                strace_job = ("strace", ipc_rec["strace_launch"],
                              lambda st, r: r.update(ipc.strace_launch(self, st, strace))
                              or self.progress.step("ipc strace launch", name, 1, 1))
            else:
                ipc_rec["strace_launch"] = {"status": "skipped",
                                            "reason": "strace is not installed"}
        shared = [self.timing_job(e, name) for e in now if not e.run_stacks]
        if shared:
            self.run_in_stack(name, 60, shared)
        if strace_job:
            # A stack of its own, as the other counting runs have: the count
            # then does not depend on which experiments ran before it (in
            # the KMS guest, Xorg + openbox + xcompmgr right after the
            # concurrent experiment never mapped the straced app's window).
            # Its X server runs with -dumbSched: the smart scheduler's
            # SIGALRM, every 20 ms while the server works, stops a traced
            # server at each signal, and under TCG those stops took all its
            # time (the guest's straced openbox launch: 284 s alone, past
            # 400 s beside a CPU hog; 20.5 s with -dumbSched). The timing
            # runs keep the stock scheduler.
            self.run_in_stack(name, 60, [strace_job], config=self.traced_config())
        if self.opts.trace and self.round == 0:
            self.trace_stack(name, ipc_rec)
        for e in now:
            if e.run_stacks:
                e.run_stacks(self, name, self.timing_job(e, name))
        if not counting:
            return
        if not lib:
            for e in experiments.ALL:
                if e.counting:
                    ipc_rec[e.name] = {"status": "skipped", "reason": "libduet-ipc-count.so not "
                                       "built (bench/probes/ in the build)"}
            return
        shared, own = [], []
        for e in self.counted(exps):
            why = e.skip(name, self.config) if e.skip else None
            if why:
                ipc_rec[e.name] = {"status": "skipped", "reason": why}
                continue
            jobs = [(key, ipc_rec.setdefault(key, {}),
                     lambda st, r, fn=fn, what=what: self.count(r, fn, st, what))
                    for key, what, fn in e.counting(self)]
            if e.counting_refresh:
                own.append((e.counting_refresh(self.opts), jobs))
            else:
                shared += jobs
        for refresh, jobs in [(60, shared)] + own:
            self.run_in_stack(name, refresh, jobs, counting=True)
        if stack_kinds.get(name).xtrace:
            # openbox's and xcompmgr's own X protocol, through xtrace proxies.
            if not self.opts.xtrace:
                ipc_rec["xtrace"] = {"status": "skipped", "reason": "--no-xtrace: no X protocol "
                                     "counts of openbox and xcompmgr"}
            elif shutil.which("xtrace"):
                self.run_in_stack(name, 60, [("xtrace", ipc_rec.setdefault("xtrace", {}),
                                              lambda st, r: self.count(r, ipc.xtrace_run, st,
                                                                       "xtrace"))],
                                  stack_class=ipc.XtraceStack)
            else:
                ipc_rec["xtrace"] = {"status": "skipped", "reason": "xtrace is not installed "
                                     "(Debian package xtrace): no X protocol counts of "
                                     "openbox and xcompmgr"}

    def trace_stack(self, name, ipc_rec):
        """The traced operations (trace_record.py) in a stack of their own,
        its X server with -dumbSched as the straced launch's: records
        ipc_rec["trace_OP"], the raw records in trace-raw/STACK-OP/, the
        file trace-STACK-OP.json."""
        if self.trace_why is None:
            self.trace_why = trace_record.why_not() or ""
        jobs = []
        for op in TRACE_OPS:
            rec = ipc_rec["trace_" + op] = {}
            app = trace_record.app_key(self, op)
            why = self.trace_why or (None if self.apps.get(app) else
                                     "duet-%s is not built" % app)
            if why:
                rec.update(status="skipped", reason=why)
                self.progress.step("trace " + op, name, 1, 1)
                continue
            jobs.append(("trace " + op, rec, self.trace_job(op)))
        if jobs:
            self.run_in_stack(name, 60, jobs, config=self.traced_config())

    def trace_job(self, op):
        def job(st, rec):
            self.progress.step("trace " + op, st.name, 1, 1)
            rec.update(trace_cmd.write_op(self.out, trace_record.trace_op(self, st, op)))
        return job

    def traced_config(self):
        """The Config of a stack strace attaches to: its X server with
        -dumbSched (run_stack_with, at the straced launch, says why)."""
        return dataclasses.replace(self.config, xserver_args=tuple(self.config.xserver_args)
                                   + ("-dumbSched",))

    def count(self, rec, fn, st, what):
        self.progress.step("ipc " + what, st.name, 1, 1)
        rec.update(fn(self, st))
        if what == "launch":
            self.progress.step("ipc protocol", st.name, 1, 1)


def parse_kill_spec(text):
    """DUET_BENCH_TEST_KILL_SERVER=STACK:EXPERIMENT:MS[:ROLE[:stop]] (tests
    only; ROLE: the stack process killed, default the server's group;
    stop: SIGSTOP instead of SIGKILL, a server that hangs and stays)."""
    if not text:
        return None
    try:
        name, exp, ms, *rest = text.split(":")
        if len(rest) > 2 or (len(rest) == 2 and rest[1] != "stop"):
            raise ValueError(text)
        return (name, exp, int(ms), rest[0] if rest else "server",
                signal.SIGSTOP if len(rest) == 2 else signal.SIGKILL)
    except ValueError:
        print("duet bench: ignoring bad DUET_BENCH_TEST_KILL_SERVER=%r" % text, file=sys.stderr)
        return None


def default_stacks(args):
    """--stacks' default: stack_kinds.DEFAULT in a full run; --quick keeps
    its promise of a few minutes with stack_kinds.QUICK."""
    if getattr(args, "stacks", None) is None:
        args.stacks = list(stack_kinds.QUICK if args.quick else stack_kinds.DEFAULT)


def run_in_guest(args, argv):
    """--display kms outside the guest: the same command in scripts/test-kms's
    guest, which writes into --out; its exit status is the bench's."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    out = os.path.abspath(args.out or os.path.join(
        "bench-results", datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + "-kms"))
    os.makedirs(out, exist_ok=True)
    inner = [a for a in argv if not a.startswith("--out")]
    skip = [i for i, a in enumerate(argv) if a == "--out"]
    if skip:
        inner = [a for i, a in enumerate(argv) if i not in skip and i - 1 not in skip]
    # duet's own programs from the build this launcher belongs to.
    build = os.environ.get("DUET_BUILD_DIR") or os.path.join(here, "build")
    # Waits stretch under emulation (procs.patience); nothing measured does.
    cmd = ("DUET_EMULATION='qemu TCG guest (scripts/test-kms)' "
           "DUET_BENCH_PATIENCE=%s DUET_BUILD_DIR=%s %s bench %s --out %s" % (
               shlex.quote(os.environ.get("DUET_BENCH_PATIENCE", "10")),
               shlex.quote(os.path.abspath(build)),
               shlex.quote(os.path.join(here, "tools", "duet")),
               " ".join(shlex.quote(a) for a in inner), shlex.quote(out)))
    env = dict(os.environ, DUET_KMS_COMMAND=cmd, DUET_KMS_RWDIRS=out,
               DUET_KMS_BUILDS=os.path.abspath(build))
    # The guest's stop: under TCG a --quick run with openbox on Xorg takes
    # about an hour (docs/board.md), far past test-kms's 900 s default.
    env.setdefault("DUET_KMS_TIMEOUT", "7200")
    print("duet bench --display kms: running in the guest (scripts/test-kms); results in %s"
          % out, flush=True)
    r = subprocess.run([os.path.join(here, "scripts", "test-kms")], env=env,
                       stdin=subprocess.DEVNULL)
    # A guest that could not start (no qemu: test-kms says "skipped")
    # wrote nothing.
    if not os.path.exists(os.path.join(out, "results.json")):
        print("duet bench --display kms: the guest wrote no results in %s" % out,
              file=sys.stderr)
        return r.returncode or EXIT_FAILED
    return r.returncode


def run(args, argv):
    if not hasattr(args, "experiments"):
        return EXIT_USAGE
    # SIGUSR1 writes every thread's Python stack to stderr and goes on: a
    # hang guard outside the bench (a test's timeout) asks where the bench
    # waits before it stops it.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    if getattr(args, "display", "headless") == "kms":
        if getattr(args, "renderer", "gl") == "pixman":
            print("duet bench: --renderer pixman needs headless outputs: duet-compositor's "
                  "KMS output scans out GL buffers (use --renderer gl with --display kms)",
                  file=sys.stderr)
            return EXIT_USAGE
        if os.environ.get("DUET_KMS_GUEST") != "1":
            return run_in_guest(args, argv)
    default_stacks(args)
    procs.become_subreaper()
    # DUET_X_SERVER=xorg: the X stacks on Xorg on the KMS card (duet_launch/xorg.py).
    bench = Bench(args, argv, x_server=os.environ.get("DUET_X_SERVER") or "xvfb")
    # duet-launch always (the readiness probe); the others where an
    # experiment runs them.
    exps = [experiments.BY_NAME[e] for e in args.experiments]
    needed = {"launch"}.union(*(e.apps for e in exps))
    missing_apps = [n for n, p in bench.apps.items() if not p and n in needed]
    unavailable = [w for w in (e.unavailable(bench) for e in exps if e.unavailable) if w]
    if missing_apps or unavailable:
        why = unavailable[0] if unavailable else (
            "cannot find the apps %s: build duet first (meson setup build && ninja -C build) "
            "or set DUET_BUILD_DIR" % ", ".join("duet-" + n for n in missing_apps))
        shutil.rmtree(bench.workdir, ignore_errors=True)
        # Still a results.json that says so: a board farm reads nothing else.
        return finish(bench, args, EXIT_FAILED, [why])

    def on_signal(signum, frame):
        raise Interrupted(signum)
    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM,
                                                    signal.SIGHUP)}
    atexit.register(procs.cleanup)
    status = 0
    problems = []
    try:
        bench.progress.say("duet bench: %s -> %s" % (", ".join(args.stacks), bench.out))
        bench.run()
    except Interrupted as e:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        bench.results["interrupted"] = True
        outcome.settle_interrupted(bench.results)
        bench.progress.say("interrupted (signal %d): stopping; results of what finished are "
                           "kept" % e.args[0])
        status = 130
    finally:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        bench.phase.close()
        procs.cleanup()
        bench.progress.done()
        try:
            # The X11 and Wayland stacks' operations one above the other.
            trace_cmd.write_combined(bench.out, raw_dirs(bench.out))
        except Exception as e:  # the per-stack files and the raw records stand
            problems.append("writing the combined trace files failed: %r" % e)
        bench.save()
        if not args.no_report:
            try:
                report.write_all(bench.results, bench.out)
            except Exception as e:  # the raw results are safe already
                problems.append("writing the report failed: %r" % e)
                status = status or EXIT_FAILED
        else:
            report.write_csv(bench.results, bench.out)
        shutil.rmtree(bench.workdir, ignore_errors=True)
        for s, h in old.items():
            signal.signal(s, h)
    if not status and not outcome.measured(bench.results):
        problems.append("nothing was measured: every experiment was skipped")
    if not status and (outcome.failures(bench.results) or problems):
        status = EXIT_FAILED
    return finish(bench, args, status, problems)


def finish(bench, args, status, problems):
    """Records the outcome in results.json and says it: with --no-report
    one JSON line on stdout (outcome.brief) and the summary table on
    stderr, otherwise the table and the paths on stdout."""
    bench.results["outcome"] = outcome.outcome(bench.results, status, problems)
    # The time the runs finished stays the one the report was written with.
    bench.save(stamp=False)
    if not os.path.exists(os.path.join(bench.out, "summary.csv")):
        report.write_csv(bench.results, bench.out)
    results_path = os.path.join(bench.out, "results.json")
    failed = bench.results["outcome"]["failed"]
    if failed:
        print("duet bench: failed: %s" % ", ".join(failed), file=sys.stderr)
    if args.no_report:
        print(report.summary_table(bench.results), file=sys.stderr)
        print(json.dumps(outcome.brief(bench.results["outcome"], results_path,
                                       os.path.join(bench.out, "summary.csv"))), flush=True)
        return status
    print(report.summary_table(bench.results))
    print("results: %s" % results_path)
    print("report:  %s" % os.path.join(bench.out, "report.html"))
    return status


def add_parser(sub):
    p = sub.add_parser("bench", help="run the study's experiments and write a report",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=lambda args: run(args, sys.argv[2:]), takes_cmd=False)
    return p


def main(argv):
    p = argparse.ArgumentParser(prog="duet bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    args = p.parse_args(argv)
    return run(args, argv)
