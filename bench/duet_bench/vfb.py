"""The vfb experiment (issue 15): how a VM display device or a remote
viewer finds what changed on the screen, with the framebuffer in linear
rows or in page-sized tiles.

duet-compositor writes each frame's damage into its --vfb file, in the
layout of --vfb-layout (linear rows, or 32x32-pixel tiles of one 4 KiB page
each), and publishes its own damage beside the frame. On X, Xvfb -shmem
keeps its framebuffer (linear, XWD) in a SysV segment whose id it prints;
X's own damage is the Damage extension's, on the root window.
duet-vfb-reader (bench/probes/vfb-reader.c) attaches to either and, per frame,
finds the changed regions by one method:

    compare    byte comparison with its previous copy
    softdirty  the writer's soft-dirty page bits (clear_refs / pagemap)
    uffd-wp    userfaultfd write protection
    damage     the compositor's own damage (the exact answer)

and reports detection time, bytes read, precision and recall against the
damage (in 32x1-pixel strips; on Xvfb against X's own damage, the Damage
extension's events on the root window as they arrived before each look),
its CPU, and the writer's frame rate (duet-compositor only). A
method the kernel lacks is probed once per stack instance and recorded
unavailable with the reader's reason.

Workloads (the study's): a small region redrawn every frame (a cursor or
clock), text scrolling in a window (duet-render scenes), a still window
moved by the control tools (vfb_move.py), a full-screen animation. One sample = one reader run of READ_MS on one
workload, layout and method; each run starts a stack per layout, the
layouts' order alternating between runs, so a run's linear and tiled
samples are close in time and pair up for the tiled/linear ratio.
"""
import functools
import json
import os
import re
import select
import subprocess
import time

from duet_bench import procs, stacks, vfb_move
from duet_launch import paths, stack_kinds
from duet_launch.stack_kinds import VFB_FILE, XVFB_SHMEM
from duet_bench.apprun import AppFailed, AppRun, check_stack
from duet_bench.experiment import Experiment

METHODS = ["compare", "softdirty", "uffd-wp", "damage"]
# The layouts of each framebuffer (stack_kinds.StackKind.framebuffer), and so
# of each stack the experiment runs on.
FRAMEBUFFER_LAYOUTS = {VFB_FILE: ["linear", "tiled"], XVFB_SHMEM: ["linear"]}
LAYOUTS = {k.name: FRAMEBUFFER_LAYOUTS[k.framebuffer] for k in stack_kinds.TABLE
           if k.framebuffer}
# name -> (app arguments, what it is): duet-render scenes, and for move a
# still duet-launch window that vfb_move.Mover moves.
WORKLOADS = {
    "blink": (["--size", "32x32", "--scenes", "rect_blend"],
              "a 32x32 window redrawn every frame (a cursor or clock)"),
    "scroll": (["--size", "800x600", "--scenes", "scrolling"],
               "text scrolling in an 800x600 window"),
    "move": (["--size", "400x300", "--stay"],
             "a still 400x300 window (duet-launch) moving: " + vfb_move.NOTE),
    "fullscreen": (["--size", "1920x1080", "--scenes", "gradient"],
                   "a full-screen animation (1920x1080 gradient)"),
}
READ_MS, QUICK_READ_MS = 2000, 300
WARMUP_S = 0.5          # the app's window mapped and drawing before a reader attaches
X_POLL_US = 16667       # Xvfb has no frame counter: the reader looks at 60 Hz
VFB_POLL_US = 500       # how often the reader checks the --vfb frame counter
STUDY_TILED_OVER_LINEAR = 0.90  # the VM-display study: tiles ~10% faster detection
STUDY_NOTE = ("a study of VM display devices: 32x32-pixel tiles of one page each cut the "
              "detection time by about 10% against linear rows; the two MMU methods "
              "(dirty bits, write-protection faults) did not differ in frame rate or CPU")


def missing(name, config):
    """Why stack name cannot run the experiment in a run of config, or None."""
    if name not in LAYOUTS:
        return ("not measurable: only duet-compositor (--vfb) and Xvfb (-shmem) expose "
                "their framebuffer to another process here")
    if stack_kinds.get(name).framebuffer == XVFB_SHMEM and \
            stacks.config_for(name, config).xserver() == "xorg":
        return "not measurable on Xorg: the reader attaches to Xvfb's -shmem framebuffer"
    if not paths.find_own("duet-vfb-reader", paths.PROBES):
        return "duet-vfb-reader is not built (bench/ in the build)"
    if not paths.find_own("duet-render", "clients"):
        return "duet-render is not built (clients/ in the build)"
    return None


class VfbStack(stacks.Stack):
    """The stack as for every experiment, but with its framebuffer open to
    the reader: duet-compositor --vfb FILE --vfb-layout LAYOUT, or Xvfb
    -shmem instead of -fbdir."""

    def __init__(self, *args, layout="linear", **kw):
        super().__init__(*args, **kw)
        self.layout = layout
        self.vfb_path = None

    def spawn(self, role, argv, env, **kw):
        argv = list(argv)
        if role == "server" and self.spec.framebuffer == VFB_FILE:
            self.fbdir = paths.memory_dir("duet-bench-vfb-")
            self.vfb_path = os.path.join(self.fbdir, "vfb")
            argv += ["--vfb", self.vfb_path, "--vfb-layout", self.layout]
        elif role == "server" and self.spec.framebuffer == XVFB_SHMEM and "-fbdir" in argv:
            i = argv.index("-fbdir")
            del argv[i:i + 2]
            argv.append("-shmem")
            self.fb_path = None
        return super().spawn(role, argv, env, **kw)

    def source(self):
        """duet-vfb-reader's arguments for this framebuffer and its writer."""
        server = self.procs["server"]
        if self.spec.framebuffer == VFB_FILE:
            return ["--vfb", self.vfb_path, "--pid", str(server.pid)]
        # Xvfb -shmem says "screen 0 shmid N" on stderr when it makes it.
        m = re.search(r"screen 0 shmid (\d+)", server.log_tail(20000))
        if not m:
            raise AppFailed("Xvfb -shmem printed no shmid:\n%s" % server.log_tail(2000))
        return ["--shmid", m.group(1), "--pid", str(server.pid), "--display", self.display]


def read(ctx, stack, argv, timeout, experiment="vfb"):
    """Runs duet-vfb-reader to its end, watching the stack; its JSON lines
    and exit status."""
    proc = subprocess.Popen(argv, env=stack.base_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    started = time.monotonic()
    out = b""
    try:
        deadline = started + procs.patience(timeout)
        while True:
            r, _, _ = select.select([proc.stdout], [], [], 0.05)
            if r:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                out += chunk
            ctx.fault_hook(stack, experiment, time.monotonic() - ctx.vfb_started)
            check_stack(stack)
            if time.monotonic() > deadline:
                raise AppFailed("duet-vfb-reader gave no result within %.0f s" % timeout)
        proc.wait(5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = []
    for raw in out.splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            continue
    err = proc.stderr.read().decode(errors="replace")[-500:]
    proc.stderr.close()
    proc.stdout.close()
    return lines, proc.returncode, err


def probe(ctx, stack, reader):
    """{method: reason} of the methods this stack's framebuffer cannot be
    read with here."""
    lines, rc, err = read(ctx, stack, [reader, "--probe"] + stack.source(), 30)
    got = next((e for e in lines if e.get("name") == "vfb_methods"), None)
    if rc != 0 or not got:
        raise AppFailed("duet-vfb-reader --probe exited %s: %s" % (rc, err))
    return {m: v.get("reason") for m, v in got["methods"].items() if not v.get("available")}


def _pcts(vals):
    vals = sorted(vals)
    if not vals:
        return None, None, None
    med = vals[len(vals) // 2] if len(vals) % 2 else (vals[len(vals) // 2 - 1] +
                                                     vals[len(vals) // 2]) / 2
    return med, sum(vals) / len(vals), vals[min(len(vals) - 1, int(0.95 * len(vals)))]


def sample_of(lines, run_no, workload, layout, method, stack):
    """One sample from a reader's output."""
    frames = [e for e in lines if e.get("name") == "vfb_frame"]
    done = next((e for e in lines if e.get("name") == "vfb_done"), None)
    if not done:
        raise AppFailed("duet-vfb-reader %s ended without vfb_done" % method)
    # On Xvfb every poll is a frame; only those that found a change count.
    timed = frames if stack.spec.framebuffer == VFB_FILE else \
        [e for e in frames if e.get("detected")]
    det = [e["detect_ns"] / 1e6 for e in timed]
    med, mean, p95 = _pcts(det)
    n = max(1, done["frames"])
    s = {"run": run_no, "workload": workload, "layout": layout, "method": method,
         "source": done.get("source"), "frames": done["frames"],
         "frames_changed": len(timed), "detect_ms": med, "detect_ms_mean": mean,
         "detect_ms_p95": p95, "detect_ms_all": [round(v, 4) for v in det],
         "bytes_read_per_frame": round(done["bytes_read"] / n, 1),
         "reader_cpu_ms": round(done["cpu_ns"] / 1e6, 3),
         "reader_cpu_pct": round(100.0 * done["cpu_ns"] / max(1, done["wall_ns"]), 2),
         "detect_cpu_ms_per_frame": round(done["detect_cpu_ns"] / 1e6 / n, 4),
         "wall_ms": round(done["wall_ns"] / 1e6, 1)}
    for k in ("writer_fps", "writer_frames", "raced", "precision", "recall", "lost"):
        if k in done:
            s[k] = done[k]
    ready = next((e for e in lines if e.get("name") == "vfb_reader_ready"), {})
    s["truth"] = ready.get("truth", "none")
    if ready.get("no_truth"):
        s["truth"] += ": " + ready["no_truth"]
    if stack.spec.framebuffer != VFB_FILE:
        s.setdefault("precision", None)
        s.setdefault("recall", None)
    return s


def run_layout(ctx, stack, rec, run_no):
    """One run on one stack instance (one layout): every workload, every
    method available; appends the samples."""
    reader = paths.find_own("duet-vfb-reader", paths.PROBES)
    layout = getattr(stack, "layout", "linear")
    ctx.vfb_started = time.monotonic()
    unavailable = probe(ctx, stack, reader)
    rec.setdefault("unavailable", {}).update(unavailable)
    methods = [m for m in METHODS if m not in unavailable]
    read_ms = QUICK_READ_MS if ctx.opts.quick else READ_MS
    poll = ["--interval-us", str(VFB_POLL_US if stack.spec.framebuffer == VFB_FILE
                                 else X_POLL_US)]
    for workload, (args, what) in WORKLOADS.items():
        if workload == "move" and not vfb_move.tool(stack):
            rec.setdefault("workloads_not_run", {})[workload] = (
                "not run: %s is not built (tools/ in the build)"
                % ("duet-testctl" if stack.kind == "wayland" else "duet-xctl"))
            continue
        rec.setdefault("workloads", {})[workload] = what
        if workload == "move":
            argv = [ctx.apps["launch"], "--backend", stack.kind, "--engine", "sw"] + args
        else:
            # The app draws for the whole of its workload: every method in turn.
            dur = int(WARMUP_S * 1000 + len(methods) * (read_ms + 400) + 1000)
            argv = [ctx.apps["render"], "--backend", stack.kind, "--engine", "sw",
                    "--duration-ms", str(dur), "--no-feedback"] + args
        rec.setdefault("commands", {})[workload] = " ".join(argv)
        app = AppRun(ctx, stack, argv)
        mover = None
        try:
            time.sleep(procs.patience(WARMUP_S))
            if workload == "move":
                try:
                    mover = vfb_move.Mover(stack, vfb_move.window_of(stack, app.pid))
                except (RuntimeError, subprocess.SubprocessError) as e:
                    check_stack(stack)
                    raise AppFailed("the moving window: %s" % e)
                mover.start()
            for method in methods:
                check_stack(stack)
                if not app.child.alive():
                    raise AppFailed("duet-render %s ended before %s:\n%s"
                                    % (app.exit_status(), method, app.log_tail()))
                cmd = [reader, "--method", method, "--duration-ms", str(read_ms)] + poll + \
                    stack.source()
                lines, rc, err = read(ctx, stack, cmd, 30 + read_ms / 1000.0)
                if rc == 3:
                    why = next((e.get("reason") for e in lines
                                if e.get("name") == "vfb_unavailable"), err)
                    rec["unavailable"][method] = why
                    continue
                if rc != 0:
                    raise AppFailed("duet-vfb-reader --method %s exited %s: %s"
                                    % (method, rc, err))
                if mover and mover.error:
                    check_stack(stack)
                    raise AppFailed("the moving window: " + mover.error)
                rec["samples"].append(dict(sample_of(lines, run_no, workload, layout, method,
                                                     stack), command=" ".join(cmd)))
        finally:
            if mover:
                mover.stop()
            app.stop()


def layouts_for(name, run_index):
    """The run's layouts, their order alternating from run to run."""
    ls = LAYOUTS[name]
    return ls if run_index % 2 == 0 else list(reversed(ls))


def describe(rec, name):
    rec["methods"] = list(METHODS)
    rec["layouts"] = list(LAYOUTS[name])
    rec["study"] = {"tiled_over_linear": STUDY_TILED_OVER_LINEAR, "note": STUDY_NOTE}
    rec["grid"] = "precision and recall in strips of 32x1 pixels (128 bytes)"
    rec["writer"] = ("duet-compositor --vfb (header page, then the pixels; its own damage "
                     "of the last 8 frames in the header)"
                     if stack_kinds.get(name).framebuffer == VFB_FILE else
                     "Xvfb -shmem (XWD in a SysV segment, linear, no frame counter: the "
                     "reader looks every %d us)" % X_POLL_US)


def run_stacks(ctx, name, job):
    """This round's vfb runs: per run a stack instance per layout (the
    order alternating), its framebuffer open to duet-vfb-reader."""
    _, rec, _ = job
    describe(rec, name)
    total = ctx.opts.total("vfb")
    for i in ctx.opts.runs("vfb", ctx.round):
        ctx.progress.step("vfb", name, i + 1, total)
        for layout in layouts_for(name, i):
            ctx.run_in_stack(name, 60, [("vfb", rec, lambda st, r, i=i: run_layout(
                ctx, st, r, i + 1))], stack_class=functools.partial(VfbStack, layout=layout))


# A study of its own on two stacks: run when asked for, so the default
# run's time (docs/methodology.md) stands.
EXPERIMENT = Experiment("vfb", "vfb_reps", (3, 5), run_stacks=run_stacks, skip=missing,
                        apps=("render",), default=False)
