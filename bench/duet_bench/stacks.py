"""The bench's stacks: duet_launch's, started the same way for every
experiment, and ready only once a probe duet-launch's first frame has been
composited (timeline.py).

The bench's settings (duet bench --display, --renderer; the X server) are
one duet_launch Config, Bench.config, from which every stack instance's is
made (with its refresh, counting directory, size). Every stack is started
so that it can say when it composited: duet's servers write their trace,
weston its timeline log scope, Xvfb keeps its framebuffer in a file for
the observer (on Xorg the observer reads the card's scanout).

The default set is stack_kinds.QUICK; the two Enlightenment stacks run
when asked for. On a KMS display (`duet bench --display kms`, inside
scripts/test-kms's guest) wayland is duet-compositor --backend drm, x11
is Xorg + duet-xwm, openbox is Xorg + openbox + xcompmgr; weston and the
Enlightenment stacks are reported as not runnable, with the reason.
"""
import dataclasses
import os
import time

from duet_bench import observer, procs, timeline
from duet_launch import paths, proc, stack, stack_kinds
from duet_launch.stack import StackError  # noqa: F401  (the bench's callers catch it here)
from duet_launch.traces import JsonLines

PROBE_SIZE = "96x96"  # duet-launch's clear colour under its 48-pixel bar: a 96-pixel run


def settings(output="headless", renderer="gl", x_server="xvfb", xwm_software="xrender"):
    """The bench's Config template: what every stack of a run shares."""
    return stack.Config("wayland", renderer=renderer, x_server=x_server, output=output,
                        xwm_software=xwm_software, test_protocol=True, trace=True,
                        framebuffer=True, patience=procs.patience(1.0))


def config_for(name, template=None, xserver=None, **kw):
    """Stack name's Config in a run of template (default: settings())."""
    template = template or settings()
    if xserver:
        kw["x_server"] = xserver
    return dataclasses.replace(template, kind=name, **kw)


def stack_renderer(name, template):
    """What draws a stack's frames, for results.json: duet's servers and
    weston take --renderer (duet-xwm's pixman is --xwm-software's engine);
    xcompmgr composites with XRender, which Xvfb runs on pixman;
    Enlightenment with its software engine (enlightenment.py)."""
    if name == "x11":
        return stack.xwm_renderer(template)
    return stack_kinds.get(name).renderer or template.renderer


def needs(name, xserver=None, template=None):
    return stack.needs(config_for(name, template, xserver))


def missing(name, xserver=None, template=None):
    """None, or why the stack cannot run here."""
    return stack.missing(config_for(name, template, xserver))


class Stack(stack.Stack):
    def __init__(self, name, workdir, base_env, refresh=60, counting=None, size="1920x1080",
                 xserver=None, config=None):
        super().__init__(config_for(name, config, xserver, refresh=refresh, counting=counting,
                                    size=size), workdir, base_env)
        self.probe = None           # how the readiness probe went
        self.composited_log = None  # JsonLines of the server's trace / weston's log

    def started(self):
        if self.composited_path:
            self.composited_log = JsonLines(self.composited_path)
        self._probe()

    def _probe(self):
        """Ready means a client's first frame was composited: a small
        duet-launch (sw engine, a smaller window than the measured launches)
        runs until its first frame is composited, then closes. Its window
        is the first one this stack instance shows, so the bench's first
        launch is the first after ready, not after start."""
        exe = paths.find_own("duet-launch", "clients")
        if not exe:
            self.notes.append("no readiness probe: duet-launch is not built")
            return
        why, took = None, None
        failed = []  # each attempt that failed: why, and how long it took to say so
        for attempt in range(3):
            began = time.monotonic()
            why, took = self._probe_once(exe, attempt)
            if why is None:
                break
            failed.append({"why": why, "s": round(time.monotonic() - began, 3)})
            if self.dead():
                break
        if why:
            raise StackError("the readiness probe failed: %s" % why)
        self.probe = {"ms": took, "attempts": attempt + 1, "failed": failed,
                      "source": timeline.source_of(self)}
        note = ("ready = a probe duet-launch (--engine sw, %s) had its first frame composited (%s)"
                % (PROBE_SIZE, timeline.source_of(self)))
        if took is not None and note not in self.notes:
            self.notes.append(note)

    def _probe_once(self, exe, attempt):
        """None, or why the probe failed; and fork -> composited in ms."""
        obs = None
        trace = os.path.join(self.dir, "probe-%d.jsonl" % attempt)
        env = dict(self.env, DUET_TRACE=trace)
        if self.spec.observed:
            try:
                obs = observer.Observer(self.fb_path, observer.LAUNCH_RGB, self.base_env).start()
                obs.wait_ready(5)
            except observer.ObserverError as e:
                if obs:
                    obs.child.stop()
                return "observer: %s" % e, None
        t0 = time.monotonic_ns()
        # The software engine: no EGL start-up, so a probe costs ~20 ms, not ~150.
        child = proc.Child("probe", [exe, "--backend", self.kind, "--engine", "sw", "--size",
                                     PROBE_SIZE, "--stay", "--timeout-ms",
                                     str(int(procs.patience(10) * 1000))], env,
                           log_path=os.path.join(self.dir, "probe.log"))
        lines = JsonLines(trace)
        try:
            deadline = time.monotonic() + procs.patience(stack.START_TIMEOUT)
            while not any(e.get("name") == "first_frame" for e in lines.read()):
                if not child.alive():
                    return "duet-launch %s: %s" % (child.status(),
                                                   child.log_tail(300).strip()), None
                if self.dead():
                    dead = self.dead()
                    return "%s %s" % (dead.role, dead.status()), None
                if time.monotonic() > deadline:
                    return ("no first frame within %.0f s"
                            % procs.patience(stack.START_TIMEOUT)), None
                time.sleep(0.01)
            if obs:
                t = obs.wait_seen(procs.patience(5))
                why = None if t else "the observer never saw the probe's window"
            elif self.spec.composited == stack_kinds.PRESENTATION:
                ff = [e for e in lines.read() if e.get("name") == "first_frame"]
                t, why = timeline.app_presented(self, ff[0] if ff else None)
            else:
                if self.spec.composited is None:
                    # E's Wayland server and sway's headless one tell no one
                    # when they composited, and their outputs cannot be watched.
                    note = ("%s's output cannot be observed and it reports no composited "
                            "time: ready = the probe's first frame callback" % self.name)
                    if note not in self.notes:
                        self.notes.append(note)
                    return None, None
                t, why = timeline.server_composited(self, child.pid, "duet-launch", t0,
                                                    timeout=5)
                if t is None and self.spec.composited == stack_kinds.TRACE and not any(
                        e.get("name") == "composited" for e in self.composited_log.read()):
                    # A server build without the "composited" trace events:
                    # presented is all there is, and the samples will say so.
                    note = ("%s wrote no \"composited\" trace events: ready = the probe's "
                            "first frame presented" % os.path.basename(
                                self.commands[self.spec.compositor_role][0]))
                    if note not in self.notes:
                        self.notes.append(note)
                    return None, None
            if t is None:
                return why, None
            return None, round((t - t0) / 1e6, 3)
        finally:
            child.stop(grace=1.0)
            if obs:
                try:
                    obs.stop()
                except observer.ObserverError:
                    pass
