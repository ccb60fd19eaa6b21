"""The sweep experiment (issue 30): glmark2 on a list of scenes, each
scene's score (its fps) and window-system CPU per client frame, on every
stack with both of duet's drawing engines in one run.

    --scenes     glmark2 scenes (default DEFAULT_SCENES), all of them in
                 one glmark2 run per stack instance
    --renderers  the engines of duet-compositor, duet-xwm and weston
                 (default gl,pixman; xrender: duet-xwm's in-server engine
                 beside its --xwm-software one): a stack instance at 60 Hz each, in
                 an order that alternates from run to run. openbox +
                 xcompmgr composites with XRender (pixman inside Xvfb)
                 whatever is asked: it runs once per run, and both duet-xwm
                 engines are compared with that one run.

glmark2 runs and is timed as in the thirdparty experiment (glmark2.py),
but each scene's figures are kept apart. A round runs every stack, and
every engine, on every scene, so the ratios between stacks pair per
round (stats.paired_ratio) as every other timing's do. There is no
counting run: glmark2's IPC per frame is thirdparty's.
"""
import dataclasses
import functools
import re
import subprocess

from duet_bench import glmark2, paint_count, stacks, timeline
from duet_launch import paths, stack_kinds
from duet_bench.apprun import AppFailed, StackDied
from duet_bench.experiment import Experiment

# glmark2 2023.01's scenes (glmark2 --list-scenes).
SCENES = ["build", "texture", "shading", "bump", "effect2d", "pulsar", "desktop", "buffer",
          "ideas", "jellyfish", "terrain", "shadow", "refract", "conditionals", "function",
          "loop", "clear"]
DEFAULT_SCENES = ["build", "texture", "pulsar", "desktop", "ideas", "jellyfish", "conditionals",
                  "function", "loop"]
# What --renderers can ask duet's servers and weston for (stack.Config.renderer).
# xrender is duet-xwm's alone (its software engine inside the X server, as
# --xwm-software xrender gives its pixman): the other stacks skip it.
RENDERERS = ["gl", "pixman", "xrender"]
ONLY = {"xrender": ("x11",)}


def takes(name, renderer):
    """Whether stack name (one that runs the sweep's engines) has renderer."""
    return name in ONLY.get(renderer, (name,))


class RendererStack(stacks.Stack):
    """A stack of the run's settings with another drawing engine."""

    def __init__(self, *args, renderer, config=None, **kw):
        super().__init__(*args, config=dataclasses.replace(config or stacks.settings(),
                                                           renderer=renderer), **kw)


def renderers_of(opts, name):
    """The engines stack name runs the sweep with: --renderers where the
    stack takes one, else the one it has (openbox: xrender)."""
    fixed = stack_kinds.get(name).renderer
    return [fixed] if fixed else [r for r in opts.sweep_renderers if takes(name, r)]


def scene_samples(stack, scenes, argv, roles, renderer, run, paints=None):
    """One sample per scene of a glmark2 run (glmark2.measure); paints: the
    paint times duet-paint-count saw meanwhile, on a stack whose compositing
    manager tells no one what it painted (paint_count.for_stack)."""
    out = []
    for scene in scenes:
        counted = None
        if paints is not None and len(scene["span"]) == 2:
            counted = (paint_count.paints_between(paints, *scene["span"]), paint_count.SOURCE)
        per = glmark2.cpu_ms_per_frame([scene["cpu_ns"]], scene["frames"], roles)
        s = {"run": run, "renderer": renderer, "scene": scene["name"], "title": scene["title"],
             "score": scene["fps"], "wall_s": scene["wall_s"],
             "frames": round(scene["frames"], 1), "cpu_ms_per_frame": per,
             "command": " ".join(argv)}
        s.update(timeline.painted_frames(stack, [scene["span"]], scene["frames"],
                                         per["window_system"], counted))
        out.append(s)
    return out


def sweep_once(ctx, stack, rec, renderer, run):
    """One glmark2 run over every scene in a stack drawing with renderer;
    its samples are kept only when every scene ran."""
    want = ctx.opts.sweep_scenes
    # The X compositing managers that log no frames (xcompmgr, picom,
    # mutter --x11) are counted from outside, as in the render experiment.
    counter, why = paint_count.for_stack(stack)
    paints = None
    try:
        scenes, _, argv, roles = glmark2.measure(ctx, stack, want, "sweep")
    finally:
        if counter:
            paints, why = paint_count.stop(counter)
    if why:
        note = "no painted frames counted: %s" % why
        if note not in rec.setdefault("notes", []):
            rec["notes"].append(note)
    for name, scene in zip(want, scenes):
        if not scene["title"].startswith("[%s]" % name):
            raise AppFailed("glmark2 ran %s where %s was asked for" % (scene["title"], name))
        scene["name"] = name
    rec.setdefault("commands", {})[renderer] = dict(stack.command_lines(),
                                                    glmark2=" ".join(argv))
    rec["samples"].extend(scene_samples(stack, scenes, argv, roles, renderer, run, paints))


def job(ctx, renderer, run):
    """sweep_once as a run_in_stack job: a failure names its engine and
    run, in the record's failed_runs and in the reason the bench keeps."""
    def fn(stack, rec):
        try:
            sweep_once(ctx, stack, rec, renderer, run)
        except (AppFailed, StackDied) as e:
            rec.setdefault("failed_runs", []).append(
                {"round": ctx.round + 1, "run": run, "renderer": renderer,
                 "reason": str(e).splitlines()[0] if str(e) else type(e).__name__})
            raise type(e)("renderer %s, run %d: %s" % (renderer, run, e)) from e
    return fn


# The floor: what one frame of a glmark2 window needs at the least on this
# machine, the window (glmark2.SIZE, every frame all of it damaged)
# composited once by each engine, with no window system around it:
# duet-composite-bench's CPU per composite (GL: upload, draw, finish;
# pixman: the composite straight from the window's memory, as pixman
# samples a wl_shm buffer or an X pixmap in place).
FLOOR_REPS = 50
FLOOR_LINES = {"GL": "gl", "pixman": "pixman", "render/pixman": "render_pixman"}


def floor_once():
    """{"gl": ms, "pixman": ms, "render_pixman": ms} of CPU per composite
    (medians over FLOOR_REPS), with the command and the GL it ran on; or
    {"unavailable": why}."""
    exe = paths.find_own("duet-composite-bench", paths.PROBES)
    if not exe:
        return {"unavailable": "duet-composite-bench is not built (bench/probes/)"}
    argv = [exe, glmark2.SIZE, str(FLOOR_REPS)]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return {"unavailable": "duet-composite-bench took over 120 s"}
    out = {"command": "duet-composite-bench %s %d" % (glmark2.SIZE, FLOOR_REPS)}
    for line in r.stdout.splitlines():
        m = re.match(r"^(GL|pixman|render/pixman)\s+wall .* cpu min [\d.]+ median ([\d.]+) ", line)
        if m:
            out[FLOOR_LINES[m.group(1)]] = float(m.group(2))
        elif line.startswith("GL: "):
            out["gl_driver"] = line[4:].split(";")[0]
    if r.returncode != 0 or "gl" not in out or "pixman" not in out:
        return {"unavailable": "duet-composite-bench failed (status %d): %s"
                % (r.returncode, (r.stderr or r.stdout).strip()[-300:])}
    return out


def floor_round(ctx):
    """The floor, once a round, before the round's first sweep (no stack
    runs then): results' sweep_floor, one entry per round."""
    rec = ctx.results.setdefault("sweep_floor", {"window": glmark2.SIZE, "reps": FLOOR_REPS,
                                                 "rounds": []})
    if any(e.get("round") == ctx.round + 1 for e in rec["rounds"]):
        return
    with ctx.phase("sweep floor"):
        rec["rounds"].append(dict(floor_once(), round=ctx.round + 1))


def run_stacks(ctx, name, timing_job):
    """This round's sweep runs: per run a stack instance per engine at 60
    Hz, the engines' order alternating from run to run."""
    floor_round(ctx)
    _, rec, _ = timing_job
    renderers = renderers_of(ctx.opts, name)
    rec.update(scenes=list(ctx.opts.sweep_scenes), renderers=renderers,
               fixed=bool(stack_kinds.get(name).renderer),
               duration_s=ctx.opts.glmark2_duration_s, notes=[glmark2.NOTE_ROUNDTRIP])
    total = ctx.opts.total("sweep")
    for i in ctx.opts.runs("sweep", ctx.round):
        ctx.progress.step("sweep", name, i + 1, total)
        for r in (renderers if i % 2 == 0 else renderers[::-1]):
            cls = functools.partial(RendererStack, renderer=r) if r in RENDERERS else None
            ctx.run_in_stack(name, 60, [("sweep", rec, job(ctx, r, i + 1))], stack_class=cls)


def skip(name, config):
    return glmark2.missing(stack_kinds.get(name).window_system)


def unavailable(ctx):
    if ctx.config.output == "kms" and "pixman" in ctx.opts.sweep_renderers:
        return ("the sweep's --renderers pixman needs headless outputs: duet-compositor's KMS "
                "output scans out GL buffers (use --renderers gl with --display kms)")
    return None


# Nine scenes on four stacks with two engines take about 7 minutes a
# round: run when asked for, so the default run's time stands.
EXPERIMENT = Experiment("sweep", "sweep_reps", (1, 5), run_stacks=run_stacks, skip=skip,
                        unavailable=unavailable, default=False)
