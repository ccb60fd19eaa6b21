"""The input experiment (issue 14): input-to-photon latency, what a user
feels between pressing a key and seeing its effect.

duet-input (clients/input.c) shows a patch that flips between two colours
(a, b) on every key press, drawing and committing the new frame at once.
duet-inject (bench/probes/inject.c) presses a key with the means the stack has and
time-stamps the press as it leaves for the server:

    wayland  duet_test.key on duet-compositor's test socket: the compositor
             feeds its seat and routes the key to the focused client
    xwayland the same key from duet-compositor's seat, to the focused
             surface, Xwayland's for an X window: Xwayland sends KeyPress
             to its X focus window, which the compositor's window manager
             set when it focused the window
    x11, openbox, e-x11
             XTest FakeInput on Xvfb: the X server sends KeyPress to the
             focus window itself; the window manager is not on the path
    weston, e-wayland, weston-xwayland
             not measurable (their no_keys in stack_kinds.py)

The observer (duet-observe --keep, observer.py) watches the screen as a
display device sees it, for colour b: Xvfb's -fbdir file on the X stacks,
duet-compositor's --vfb file on wayland (InputStack starts it with one, so
that the input experiment runs in a stack instance of its own), and on a KMS
card (Xorg, or duet-compositor on a KMS display) the card's scanout. A press to
colour b is composited when the observer first finds b, a press to colour a
when it first no longer finds b. latency = injected -> composited, both
CLOCK_MONOTONIC.

Per run and engine (sw, gl): one duet-input, PRESSES presses (QUICK_PRESSES
with --quick), each after a random wait (SETTLE_MS plus up to two frames of
60 Hz) so presses fall at random phases of the frame clock. A sample is one
press: ms, and its timeline in ns since the injection (received: the app
read the key; submitted; presented: the app's presentation feedback;
composited: the observer). A press whose colour never showed is kept with
ms None and why.
"""
import json
import os
import random
import select
import subprocess
import time

from duet_bench import observer, procs, stacks
from duet_launch import paths, stack_kinds
from duet_bench.apprun import AppFailed, AppRun, check_stack
from duet_bench.experiment import Experiment, runs

PRESSES, QUICK_PRESSES = 100, 20
ENGINES = ["sw", "gl"]
SETTLE_MS = 30          # after a press's colour showed (or its wait ended)
PHASE_SPREAD_MS = 2 * 1000.0 / 60  # the random part: two frames of a 60 Hz clock
SHOW_TIMEOUT_S = 2.0    # a press whose colour is not on screen by then is "missing"
# Presentation times on the server's 60 Hz frame grid: a press's phase is
# its time since the last presented frame, modulo one frame.
GRID_PRESENTATION = {"wp_presentation", "frame-drawn"}
FRAME_NS = 1e9 / 60
# duet-input's colours (clients/input.c), 8-bit RGB: the observer watches b.
RGB = {"a": (32, 96, 224), "b": (240, 128, 16)}

PATH_NOTE = ("On X11 a key goes X server -> app: the server picks the focus window and "
             "sends KeyPress itself, the window manager is not involved; the new frame then "
             "goes app -> X server -> compositing manager -> X server (the screen). On "
             "Wayland the compositor is the server: it routes the key to the focused "
             "client and composites the client's next buffer itself. On Xwayland the key "
             "goes compositor -> Xwayland -> app, and the frame app -> Xwayland -> "
             "compositor: two servers each way.")


def missing(name, config):
    """Why stack name cannot be measured in a run of config (Bench.config), or None."""
    spec = stack_kinds.get(name)
    if spec.no_keys:
        return spec.no_keys
    config = stacks.config_for(name, config)
    on_card = config.xserver() == "xorg" or \
        (spec.window_system == "wayland" and config.output == "kms")
    if on_card and os.geteuid() != 0:
        return ("not measurable on a KMS card without root: the observer reads the card's "
                "scanout (duet-observe --drm), whose buffers the kernel shows only to root")
    if not paths.find_own("duet-inject", paths.PROBES):
        return "duet-inject is not built (bench/ in the build)"
    if not paths.find_own("duet-input", "clients"):
        return "duet-input is not built (clients/ in the build)"
    return None


class InputStack(stacks.Stack):
    """The stack as started for every experiment, but duet-compositor's
    headless output with a framebuffer file (--vfb, in memory) the observer
    can watch: after each frame it copies the frame's damage there, as a
    display would scan out. On KMS the observer reads the card's scanout
    (fb_path "drm:CARD", as on Xorg)."""

    def spawn(self, role, argv, env, **kw):
        if self.spec.vfb_server and role == "server" and self.config.output != "kms":
            self.fbdir = paths.memory_dir("duet-bench-vfb-")
            self.fb_path = os.path.join(self.fbdir, "vfb")
            argv = list(argv) + ["--vfb", self.fb_path]
        return super().spawn(role, argv, env, **kw)


class Injector:
    """duet-inject, a line in (press/release), a time stamp out."""

    def __init__(self, stack):
        exe = paths.find_own("duet-inject", paths.PROBES)
        # The server's own means: Xwayland's keys come from the compositor.
        backend = stack.spec.server_system
        env = dict(stack.env, **(stack.trusted_env if backend == "wayland" else {}))
        self.proc = subprocess.Popen([exe, "--backend", backend], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.ready = self._line(5)
        if self.ready.get("name") != "inject_ready":
            raise AppFailed("duet-inject did not start: %s" % self._why(self.ready))

    def _why(self, line):
        if line.get("error"):
            return line["error"]
        if self.proc.poll() is not None:
            return "exited %d: %s" % (self.proc.returncode,
                                      self.proc.stderr.read().decode(errors="replace")[-300:])
        return "no answer"

    def _line(self, timeout):
        deadline = time.monotonic() + procs.patience(timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return {}
            r, _, _ = select.select([self.proc.stdout], [], [], left)
            if not r:
                return {}
            raw = self.proc.stdout.readline()
            if not raw:
                return {}
            try:
                return json.loads(raw)
            except ValueError:
                continue

    def send(self, what):
        """ns when the press or release left for the server."""
        try:
            self.proc.stdin.write(what.encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:
            pass
        line = self._line(5)
        if line.get("name") != "injected":
            raise AppFailed("duet-inject %s failed: %s" % (what, self._why(line)))
        return line["ns"]

    def close(self):
        """Ends duet-inject (its stdin closed); returns its exit status."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(procs.patience(10))
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def _transition(obs, name, after, timeout):
    """ns of the observer's first `name` line (seen / gone) after ns
    `after`, waiting up to timeout s; None if none came."""
    def find():
        for e in obs.lines:
            if e.get("name") == name and isinstance(e.get("ns"), int) and e["ns"] > after:
                return e["ns"]
        return None
    obs._wait_for(lambda: find() is not None, timeout)
    with obs._cond:
        return find()


def run_engine(ctx, stack, rec, run_no, engine, rng):
    """One duet-input with engine, its presses; appends the samples."""
    presses = QUICK_PRESSES if ctx.opts.quick else PRESSES
    argv = [ctx.apps["input"], "--backend", stack.kind, "--engine", engine]
    rec.setdefault("commands", {})[engine] = " ".join(argv)
    run = AppRun(ctx, stack, argv)
    obs = inj = None
    try:
        run.wait(lambda ev: any(e.get("name") == "input_ready" for e in ev), timeout=30,
                 experiment="input")
        ready = run.named("input_ready")
        if not ready:
            raise AppFailed("duet-input --engine %s %s without a first frame:\n%s"
                            % (engine, run.exit_status(), run.log_tail()))
        try:
            obs = observer.Observer(stack.fb_path, RGB["b"], stack.base_env, keep=True).start()
            obs.wait_ready(5)
        except observer.ObserverError as e:
            raise AppFailed("the observer failed: %s" % e)
        inj = Injector(stack)
        rec["means"] = inj.ready.get("means")
        colour = "a"
        injected = []
        for k in range(presses):
            ctx.fault_hook(stack, "input", time.monotonic() - run.started)
            delay = (SETTLE_MS + rng.uniform(0, PHASE_SPREAD_MS)) / 1000.0
            time.sleep(delay)
            check_stack(stack)
            if not run.child.alive():
                raise AppFailed("duet-input --engine %s %s after %d presses:\n%s"
                                % (engine, run.exit_status(), k, run.log_tail()))
            try:
                t = inj.send("press")
            except AppFailed:
                check_stack(stack)
                raise
            colour = "b" if colour == "a" else "a"
            seen = _transition(obs, "seen" if colour == "b" else "gone", t, SHOW_TIMEOUT_S)
            inj.send("release")
            injected.append((k + 1, t, colour, seen, round(delay * 1000, 3)))
        # The app reports a press once its frame was presented, which can
        # come well after the observer saw it: with the GL engine under
        # ASan beside a CPU hog, a 2 s wait here lost the last presses'
        # lines. A hang guard only: the wait ends with the last line (a
        # press without its line still just lacks points).
        try:
            run.wait(lambda ev: sum(1 for e in ev if e.get("name") == "input_key") >= presses,
                     timeout=procs.patience(30), experiment="input")
        except AppFailed:
            pass
        # Its whole run was clean, exit included (in a sanitizer build, no
        # error and no leak found at exit).
        status = inj.close()
        if status != 0:
            raise AppFailed("duet-inject exited %d: %s" % (
                status, inj.proc.stderr.read().decode(errors="replace")[-1500:]))
    except AppFailed:
        check_stack(stack)
        raise
    finally:
        if inj:
            inj.close()
        if obs:
            try:
                obs.stop()
            except observer.ObserverError:
                pass
        run.stop()
    keys = {e.get("press"): e for e in run.named("input_key")}
    # Presses are matched by number: one the app counted that was not
    # injected (a key repeat) shifts every later one.
    counted = max([n for n in keys if isinstance(n, int)] or [0])
    extra = ("duet-input counted %d presses for %d injected: its press numbers are not "
             "the injections'" % (counted, len(injected))) if counted > len(injected) else None
    grid = ready[0].get("presentation") in GRID_PRESENTATION
    last_presented = ready[0].get("presented_ns")
    for n, t, colour, seen, delay in injected:
        key = keys.get(n) or {}
        tl, miss = {"injected": 0}, {}
        for p in ("received", "submitted", "presented"):
            v = (key.get("timeline") or {}).get(p)
            if isinstance(v, int) and v >= t:
                tl[p] = v - t
            else:
                miss[p] = "duet-input reported no %s point for press %d" % (p, n)
        if extra:
            miss["press"] = extra
        if key and key.get("colour") != colour:
            miss["colour"] = "duet-input showed colour %s, the bench expected %s" % (
                key.get("colour"), colour)
        if seen is not None:
            tl["composited"] = seen - t
        else:
            miss["composited"] = ("the observer did not see colour %s within %.0f s" %
                                  (colour, SHOW_TIMEOUT_S))
        phase = None
        if grid and isinstance(last_presented, int) and last_presented <= t:
            phase = round(((t - last_presented) % FRAME_NS) / 1e6, 3)
        if "presented" in tl:
            last_presented = t + tl["presented"]
        rec["samples"].append({
            "run": run_no, "engine": engine, "press": n, "colour": colour, "phase_ms": phase,
            "witness": "seen b" if colour == "b" else "gone b", "delay_ms": delay,
            "ms": tl["composited"] / 1e6 if "composited" in tl else None,
            "presented_ms": tl["presented"] / 1e6 if "presented" in tl else None,
            "timeline": tl, "timeline_missing": miss,
            "presentation": ready[0].get("presentation"), "path": ready[0].get("path")})


def timing(ctx, stack, rec):
    rec["engines"] = list(ENGINES)
    rec["presses_per_run"] = QUICK_PRESSES if ctx.opts.quick else PRESSES
    rec["observer"] = "duet-observe --keep on %s, colour b %s" % (
        "the card's scanout (--drm)" if (stack.fb_path or "").startswith("drm:") else
        "duet-compositor's --vfb file" if stack.kind == "wayland" else
        "Xvfb's -fbdir file",
        ",".join(map(str, RGB["b"])))
    rec["path"] = PATH_NOTE
    rng = random.Random("%s-%s-%d" % (ctx.opts.seed, stack.name, ctx.round))
    for i in runs(ctx, "input", stack):
        for engine in ENGINES:
            run_engine(ctx, stack, rec, i + 1, engine, rng)


def run_stacks(ctx, name, job):
    """A stack instance of its own: duet-compositor with a framebuffer file."""
    ctx.run_in_stack(name, 60, [job], stack_class=InputStack)


EXPERIMENT = Experiment("input", "input_reps", (1, 3), timing=timing, run_stacks=run_stacks,
                        skip=missing, apps=("input",), slow_reps=1)
