"""The display stacks, started the same way for every experiment.

    wayland    duet-compositor (headless output)                 server
    x11        Xvfb + duet-xwm                                    server, wm
    weston     weston --backend=headless-backend.so --use-gl      server
               (--use-pixman with duet bench --renderer pixman)
    openbox    Xvfb + openbox + xcompmgr -c                       server, wm, compositor
    e-x11      Xvfb + Enlightenment (WM and compositor)           server, wm
    e-wayland  Enlightenment, headless Wayland compositor         server

The first four are the default set; the two Enlightenment stacks (the
study's own software, enlightenment.py) run when asked for. What differs
between them is in stack_kinds.py.

The X stacks run on Xorg instead of Xvfb when $DUET_X_SERVER is "xorg" (or
Stack(xserver="xorg")): the modesetting driver on the KMS card, configured
per run (xorg.py); the x11 stack then reports which content path duet-xwm
took, and openbox's observer reads what the card scans out (duet-observe
--drm: root only) instead of Xvfb's framebuffer file.

On a KMS display ($DUET_DISPLAY=kms: `duet bench --display kms`, which runs
the bench inside scripts/test-kms's guest) the stacks drive the card:
wayland is duet-compositor --backend drm, x11 is Xorg + duet-xwm, openbox
is Xorg + openbox + xcompmgr; weston and the Enlightenment stacks are
reported as not runnable, with the reason.

Each instance gets its own socket / display and XDG_RUNTIME_DIR, so stacks
never meet. counting=True preloads the IPC counter into every process of
the stack (and turns on duet-compositor's protocol log).

Every stack is started so that it can say when it composited (timeline.py):
duet-compositor and duet-xwm write their trace (DUET_TRACE) to
<dir>/<role>-trace.jsonl, weston its "timeline" log scope to <dir>/weston.log,
and Xvfb keeps its framebuffer in a file (-fbdir) for the observer (on
Xorg the observer reads the card's scanout: fb_path "drm:CARD"). A stack
is ready only once a probe duet-launch's first frame has been composited.
"""
import os
import random
import re
import select
import shutil
import subprocess
import tempfile
import time

from duet_bench import enlightenment, observer, procs, stack_kinds, timeline, xorg
from duet_bench.paths import find_ipc_lib, find_own, memory_dir

START_TIMEOUT = 20.0
PROBE_SIZE = "96x96"  # duet-launch's clear colour under its 48-pixel bar: a 96-pixel run
DUMP_SIGNAL = 40  # SIGRTMIN+6 with glibc; none of the measured programs uses it


class StackError(Exception):
    def __init__(self, msg, logs=None):
        super().__init__(msg)
        self.logs = logs or {}


def renderer():
    """The drawing engine of duet's servers and weston: "gl" (default) or
    "pixman" ($DUET_RENDERER: duet bench --renderer)."""
    r = os.environ.get("DUET_RENDERER") or "gl"
    if r not in ("gl", "pixman"):
        raise StackError("DUET_RENDERER=%s: want gl or pixman" % r)
    return r


def stack_renderer(name):
    """What draws a stack's frames, for results.json: duet's servers and
    weston take --renderer; xcompmgr composites with XRender, which Xvfb
    runs on pixman; Enlightenment with its software engine (enlightenment.py)."""
    return stack_kinds.get(name).renderer or renderer()


def display():
    """Where the stacks show: "headless" (default) or "kms" ($DUET_DISPLAY)."""
    d = os.environ.get("DUET_DISPLAY") or "headless"
    if d not in ("headless", "kms"):
        raise StackError("DUET_DISPLAY=%s: want headless or kms" % d)
    return d


def x_server(xserver=None):
    """The X stacks' server: "xvfb" (default), or "xorg" ($DUET_X_SERVER, and
    always on a KMS display)."""
    if display() == "kms":
        return "xorg"
    xserver = xserver or os.environ.get("DUET_X_SERVER") or "xvfb"
    if xserver not in ("xvfb", "xorg"):
        raise StackError("DUET_X_SERVER=%s: want xvfb or xorg" % xserver)
    return xserver


def needs(stack, xserver=None):
    """Programs a stack needs: name -> (path or None, where it comes from)."""
    progs = {}
    for p in stack_kinds.get(stack).programs:
        if p == stack_kinds.E_PROGRAMS:
            progs.update({n: (path, "Debian package " + pkg)
                          for n, (path, pkg) in enlightenment.needs().items()})
            continue
        if p == stack_kinds.X_SERVER:
            p = ("Xorg", "deb", xorg.PACKAGE) if x_server(xserver) == "xorg" else \
                ("Xvfb", "deb", "xvfb")
        name, how, where = p
        progs[name] = ((find_own(name, where), "duet build (%s/)" % where) if how == "own"
                       else (shutil.which(name), "Debian package " + where))
    return progs


def missing(stack, xserver=None):
    """None, or why the stack cannot run here."""
    spec = stack_kinds.get(stack)
    if display() == "kms" and spec.kms_why_not:
        return spec.kms_why_not
    on_xorg = spec.on_xorg and x_server(xserver) == "xorg"
    if on_xorg and spec.observed and os.geteuid() != 0:
        return ("%s on Xorg needs root: its observer reads the card's scanout "
                "(duet-observe --drm), whose buffers the kernel shows only to root" % stack)
    lack = ["%s (%s)" % (n, src) for n, (p, src) in needs(stack, xserver).items() if not p]
    if not lack and spec.enlightenment:
        return enlightenment.missing()
    if not lack and on_xorg:
        try:
            xorg.plan()
        except xorg.XorgError as e:
            return str(e)
    return ("missing " + ", ".join(lack)) if lack else None


class Stack:
    def __init__(self, name, workdir, base_env, refresh=60, counting=None, size="1920x1080",
                 xserver=None):
        self.name = name
        self.spec = stack_kinds.get(name)
        self.kind = self.spec.window_system
        self.xserver = x_server(xserver) if self.kind == "x11" else None
        self.xorg = None            # xorg.Setup when the server is Xorg
        self.e_session = None       # enlightenment.Session of an E stack
        self.role_pids = {}         # role -> the measured process, where not the one spawned
        self.refresh = refresh
        self.counting = counting  # None or dir for the counter's dumps
        self.size = size
        self.dir = tempfile.mkdtemp(prefix="%s-" % name, dir=workdir)
        self.runtime = os.path.join(self.dir, "runtime")
        os.mkdir(self.runtime, 0o700)
        self.base_env = dict(base_env, XDG_RUNTIME_DIR=self.runtime)
        for k in ("DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET"):
            self.base_env.pop(k, None)
        self.procs = {}  # role -> procs.Child, in start order
        self.env = None  # the clients' environment once started
        # On top of env for an app that drives the server itself (duet-resize
        # --mode server): duet-compositor offers duet_test only on its test
        # socket (docs/security.md); the X servers' requests need nothing.
        self.trusted_env = {}
        self.commands = {}
        self.notes = []
        self.protocol_log = None
        self.programs = {n: p for n, (p, _) in needs(name, self.xserver).items()}
        self.composited_log = None  # timeline.JsonLines of the server's trace / weston's log
        self.fb_path = None         # Xvfb's framebuffer file (-fbdir), or "drm:CARD" on Xorg
        self.fbdir = None
        self.weston_log = None
        self.probe = None           # how the readiness probe went

    # -------------------------------------------------------------- helpers
    def server_env(self):
        env = dict(self.base_env)
        if self.counting:
            env.update(counting_env(self.counting))
        return env

    def spawn(self, role, argv, env, **kw):
        log = os.path.join(self.dir, role + ".log")
        child = procs.Child(role, argv, env, log_path=log, **kw)
        self.procs[role] = child
        self.commands[role] = argv
        return child

    def wait(self, what, pred, timeout=START_TIMEOUT):
        timeout = procs.patience(timeout)
        deadline = time.monotonic() + timeout
        while not pred():
            for c in self.procs.values():
                if not c.alive():
                    raise StackError("%s %s while waiting for %s" % (c.role, c.status(), what))
            if time.monotonic() > deadline:
                raise StackError("timed out after %.0f s waiting for %s" % (timeout, what))
            time.sleep(0.02)

    # -------------------------------------------------------------- start
    def start(self):
        try:
            getattr(self, "_start_" + self.name.replace("-", "_"))()
            self._probe()
        except (StackError, OSError) as e:
            self.stop()
            raise StackError(str(e), self.logs())
        except BaseException:
            self.stop()  # Ctrl-C mid-start: the caller never gets this stack to stop
            raise
        return self

    def trace_env(self, env, role):
        """duet's servers write their trace, with the contract's
        "composited" events, to <dir>/<role>-trace.jsonl."""
        path = os.path.join(self.dir, role + "-trace.jsonl")
        self.composited_log = timeline.JsonLines(path)
        return dict(env, DUET_TRACE=path)

    # -------------------------------------------------------------- ready
    def _probe(self):
        """Ready means a client's first frame was composited: a small
        duet-launch (sw engine, a smaller window than the measured launches)
        runs until its first frame is composited, then closes. Its window
        is the first one this stack instance shows, so the bench's first
        launch is the first after ready, not after start."""
        exe = find_own("duet-launch", "clients")
        if not exe:
            self.notes.append("no readiness probe: duet-launch is not built")
            return
        why, took = None, None
        for attempt in range(3):
            why, took = self._probe_once(exe, attempt)
            if why is None:
                break
            if self.dead():
                break
        if why:
            raise StackError("the readiness probe failed: %s" % why)
        self.probe = {"ms": took, "attempts": attempt + 1,
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
        child = procs.Child("probe", [exe, "--backend", self.kind, "--engine", "sw", "--size",
                                      PROBE_SIZE, "--stay", "--timeout-ms",
                                      str(int(procs.patience(10) * 1000))], env,
                            log_path=os.path.join(self.dir, "probe.log"))
        lines = timeline.JsonLines(trace)
        try:
            deadline = time.monotonic() + procs.patience(START_TIMEOUT)
            while not any(e.get("name") == "first_frame" for e in lines.read()):
                if not child.alive():
                    return "duet-launch %s: %s" % (child.status(),
                                                   child.log_tail(300).strip()), None
                if self.dead():
                    dead = self.dead()
                    return "%s %s" % (dead.role, dead.status()), None
                if time.monotonic() > deadline:
                    return "no first frame within %.0f s" % procs.patience(START_TIMEOUT), None
                time.sleep(0.01)
            if obs:
                t = obs.wait_seen(procs.patience(5))
                why = None if t else "the observer never saw the probe's window"
            else:
                if self.spec.composited is None:
                    # E's Wayland server tells no one when it composited and
                    # its buffer output cannot be watched.
                    note = ("Enlightenment's Wayland output cannot be observed and it reports "
                            "no composited time: ready = the probe's first frame callback")
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

    def _wait_socket(self, name):
        path = os.path.join(self.runtime, name)
        self.wait("the Wayland socket %s" % name, lambda: os.path.exists(path))

    def _start_wayland(self):
        sock = "duet-bench-0"
        env = self.server_env()
        if self.counting:
            self.protocol_log = os.path.join(self.counting, "protocol.json")
            env["DUET_PROTOCOL_LOG"] = self.protocol_log
        env = self.trace_env(env, "server")
        argv = [self.programs["duet-compositor"], "--socket", sock, "--size", self.size,
                "--refresh", str(self.refresh), "--test-protocol", "--renderer", renderer()]
        if display() == "kms":
            # The card's preferred mode and refresh (--size and --refresh
            # are for headless outputs).
            # The card Xorg's stacks take (xorg.plan), named, so both
            # sides show on the same one and the observer (the input
            # experiment) reads the buffer this card scans out.
            try:
                card, _ = xorg.plan()
            except xorg.XorgError as e:
                raise StackError(str(e))
            argv += ["--backend", "drm", "--drm-device", card.path]
            self.fb_path = "drm:" + card.node
            self.notes.append("duet-compositor on KMS (--backend drm, %s): the connector's "
                              "preferred mode, frames paced by its page flips" % card.path)
        self.spawn("server", argv, env)
        # The test socket is made after the clients' one.
        self._wait_socket(sock + "-test")
        self.env = dict(self.base_env, WAYLAND_DISPLAY=sock)
        self.trusted_env = {"WAYLAND_DISPLAY": sock + "-test"}
        if self.refresh == 0:
            self.notes.append("duet-compositor --refresh 0: repaints as soon as there is damage")

    def _start_weston(self):
        sock = "weston-bench-0"
        w, h = self.size.split("x")
        ini = self._weston_config()
        # Its plain log and its "timeline" scope (JSON lines, CLOCK_MONOTONIC)
        # go to one file; timeline.py skips the plain lines.
        self.weston_log = os.path.join(self.dir, "weston.log")
        self.composited_log = timeline.JsonLines(self.weston_log)
        use = "--use-pixman" if renderer() == "pixman" else "--use-gl"
        self.spawn("server", [self.programs["weston"], "--backend=headless-backend.so", use,
                              "--idle-time=0", "--socket=" + sock, "--width=" + w,
                              "--height=" + h, "--config=" + ini,
                              "--logger-scopes=log,timeline", "--log=" + self.weston_log],
                   self.server_env())
        self._wait_socket(sock)
        self.env = dict(self.base_env, WAYLAND_DISPLAY=sock)
        if self.refresh != 60:
            self.notes.append("weston's headless output composites at a fixed 60 Hz "
                              "(no switch for %d)" % self.refresh)

    def _weston_config(self):
        """weston without its desktop helper clients. --no-config is not
        enough: weston 10's desktop shell still starts weston-desktop-shell
        (panel, background) and weston-keyboard, and quits if its shell
        client dies in the first 30 s. So: a minimal weston.ini whose shell
        client only holds its connection (a sleep), no input method, no
        start-up fade (which waits for the shell client's desktop_ready)."""
        stub = os.path.join(self.dir, "weston-shell-stub")
        with open(stub, "w") as f:
            f.write("#!/bin/sh\n# duet bench: holds the desktop shell's connection, draws nothing\n"
                    "exec sleep 1000000\n")
        os.chmod(stub, 0o755)
        ini = os.path.join(self.dir, "weston.ini")
        text = ("[shell]\nclient=%s\nstartup-animation=none\n"
                "[input-method]\npath=\n" % stub)
        with open(ini, "w") as f:
            f.write(text)
        note = ("weston.ini: [shell] client=<a stub that sleeps: no panel or background>, "
                "startup-animation=none; [input-method] path= (no weston-keyboard)")
        if note not in self.notes:
            self.notes.append(note)
        return ini

    def _fbdir(self):
        """Where Xvfb keeps its framebuffer file: in memory (memory_dir)."""
        self.fbdir = memory_dir("duet-bench-fb-")
        self.fb_path = os.path.join(self.fbdir, "Xvfb_screen0")
        return self.fbdir

    def _start_xvfb(self):
        """Xvfb on a random free display number from 200 up: other users of
        this machine (tests running in parallel) take the low numbers that
        -displayfd alone would pick, and two servers racing for one number
        lose both. -displayfd still tells when the server is ready."""
        last = "every display number tried was taken"
        for attempt in range(5):
            n = random.randint(200, 899)
            if os.path.exists("/tmp/.X%d-lock" % n) or os.path.exists("/tmp/.X11-unix/X%d" % n):
                continue
            try:
                return self._try_xvfb(n)
            except StackError as e:
                last = e
                self.procs.pop("server").stop()
        raise StackError("Xvfb did not start on 5 display numbers: %s" % last)

    def _start_xorg(self):
        """Xorg on the KMS card (xorg.py); -displayfd picks the display."""
        try:
            self.xorg = xorg.Setup(self.dir)
        except xorg.XorgError as e:
            raise StackError(str(e))
        r, w = os.pipe()
        try:
            self.spawn("server", self.xorg.argv(self.programs["Xorg"], w), self.server_env(),
                       pass_fds=(w,))
        finally:
            os.close(w)
        try:
            self._read_displayfd(r, "Xorg")
        finally:
            os.close(r)
        # The observer's source (openbox's composited points, the input
        # experiment): the buffer the card scans out.
        self.fb_path = "drm:" + self.xorg.screen.node
        glamor, what = self.xorg.accel()
        self.notes.append("X server: Xorg, modesetting driver: " + what)

    def _read_displayfd(self, r, name):
        data = b""
        deadline = time.monotonic() + procs.patience(START_TIMEOUT)
        while not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise StackError("%s did not report its display within %.0f s"
                                 % (name, procs.patience(START_TIMEOUT)))
            ready, _, _ = select.select([r], [], [], left)
            if ready:
                chunk = os.read(r, 64)
                if not chunk:
                    raise StackError("%s %s before it was ready"
                                     % (name, self.procs["server"].status()))
                data += chunk
        self.display = ":" + data.decode().strip()
        self.env = dict(self.base_env, DISPLAY=self.display)

    def _try_xvfb(self, n):
        # -noreset: without it the server regenerates when its last client
        # leaves, and the readiness probe (xprop) can be that client: a WM
        # connecting during the reset is refused ("cannot open display").
        r, w = os.pipe()
        try:
            fbdir = self.fbdir or self._fbdir()
            self.spawn("server", [self.programs["Xvfb"], ":%d" % n, "-displayfd", str(w),
                                  "-screen", "0", self.size + "x24", "-nolisten", "tcp", "-noreset",
                                  "-fbdir", fbdir],
                       self.server_env(), pass_fds=(w,))
        finally:
            os.close(w)
        try:
            self._read_displayfd(r, "Xvfb")
        finally:
            os.close(r)

    def _wm_ready(self):
        r = subprocess.run([self.programs["xprop"], "-display", self.display, "-root",
                            "_NET_SUPPORTING_WM_CHECK"], env=self.env,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True)
        return r.returncode == 0 and re.search(r"window id # 0x[0-9a-f]+", r.stdout) is not None

    def _start_x11(self):
        if self.xserver == "xorg":
            self._start_xorg()
        else:
            self._start_xvfb()
        env = dict(self.server_env(), DISPLAY=self.display)
        if self.counting:
            # duet-xwm's own X traffic (xwm/protolog.c), read by ipc.py.
            self.protocol_log = os.path.join(self.counting, "protocol.json")
            env["DUET_PROTOCOL_LOG"] = self.protocol_log
        env = self.trace_env(env, "wm")
        if display() == "kms":
            # duet-xwm's EGL on the server's card through DRI3 (kms_swrast),
            # which imports the windows' pixmaps; forced software EGL
            # (drisw) cannot (docs/board.md section 6).
            env.update(LIBGL_ALWAYS_SOFTWARE="0", MESA_LOADER_DRIVER_OVERRIDE="kms_swrast")
        self.spawn("wm", [self.programs["duet-xwm"], "--display", self.display, "--refresh",
                          str(self.refresh), "--renderer", renderer()], env)
        self.wait("duet-xwm to manage %s" % self.display, self._wm_ready)
        if self.xserver == "xorg":
            m = re.search(r"content path: (.*)", self.procs["wm"].log_tail(20000))
            if m:
                self.notes.append("duet-xwm on Xorg: content path: " + m.group(1).strip())

    def _cm_ready(self):
        r = subprocess.run([self.programs["duet-xctl"], "--display", self.display, "wait-cm",
                            "0"], env=self.env, stdin=subprocess.DEVNULL, capture_output=True)
        return r.returncode == 0

    def _wm_loop_ready(self):
        r = subprocess.run([self.programs["duet-xctl"], "--display", self.display,
                            "wait-wm-loop", "1"], env=self.env, stdin=subprocess.DEVNULL,
                           capture_output=True)
        return r.returncode == 0

    def _start_openbox(self):
        env = self._start_openbox_wm()
        self._start_openbox_cm(env)

    def _start_openbox_wm(self):
        """The X server and openbox, ready to manage windows; returns the
        environment for the compositor."""
        if self.xserver == "xorg":
            self._start_xorg()
            self.notes.append("openbox on Xorg: the observer reads the buffer the card scans "
                              "out (duet-observe --drm %s)" % self.xorg.screen.node)
        else:
            self._start_xvfb()
        cfg = os.path.join(self.dir, "config")
        os.makedirs(cfg, exist_ok=True)  # an empty config: the user's rc must not matter
        env = dict(self.server_env(), DISPLAY=self.display, XDG_CONFIG_HOME=cfg)
        self.spawn("wm", [self.programs["openbox"], "--sm-disable"], env)
        self.wait("openbox to manage %s" % self.display, self._wm_ready)
        # openbox sets its check window early in its start-up; a window
        # mapped before the start-up ends waits for some later event (the
        # guest's Xorg start-up showed it: docs/board.md section 6).
        self.wait("openbox to handle events", self._wm_loop_ready)
        return env

    def _start_openbox_cm(self, env):
        self.spawn("compositor", [self.programs["xcompmgr"], "-c"], env)
        # xcompmgr takes the compositing-manager selection before it
        # redirects the windows. Without this wait the readiness probe
        # could map before that, be drawn by Xvfb itself and make the
        # stack "ready" before anything composites.
        self.wait("xcompmgr to own _NET_WM_CM_S0", self._cm_ready)
        self.notes.append("xcompmgr has no frame clock: it composites on every damage event")

    def _start_e(self, env, ready_what, ready):
        self.e_session = enlightenment.Session(self.dir, engine="sw")
        try:
            env = self.e_session.start(env)
        except enlightenment.EError as e:
            raise StackError(str(e))
        self.notes += self.e_session.notes
        desc = enlightenment.describe("sw")
        self.notes.append("Enlightenment %s, profile %s, compositor engine software, "
                          "first_draw_delay %g s (E's default)"
                          % (desc["version"], desc["profile"], desc["first_draw_delay_s"]))
        role = self.spec.compositor_role
        child = self.spawn(role, enlightenment.argv(self.programs["enlightenment_start"]), env)
        self.wait(ready_what, ready)
        # enlightenment_start only starts (and restarts) E: E is its child,
        # and E is what is measured.
        pid = enlightenment.e_pid(child.pid)
        if not pid:
            raise StackError("enlightenment_start (pid %d) has no enlightenment child"
                             % child.pid)
        self.role_pids[role] = pid

    def _start_e_x11(self):
        self._start_xvfb()
        self._start_e(dict(self.server_env(), DISPLAY=self.display),
                      "Enlightenment to own _NET_WM_CM_S0", self._cm_ready)

    def _start_e_wayland(self):
        env = dict(self.server_env(), E_WL_FORCE="buffer")
        sock = os.path.join(self.runtime, "wayland-0")
        self._start_e(env, "Enlightenment's Wayland socket", lambda: os.path.exists(sock))
        self.env = dict(self.base_env, WAYLAND_DISPLAY="wayland-0")
        self.notes.append("Enlightenment's Wayland output is its wl_buffer module's, fixed at "
                          "%s; it offers no wl_output, wp_presentation or viewporter, so the "
                          "apps' presented time is their frame callback's"
                          % enlightenment.WAYLAND_SIZE)

    # -------------------------------------------------------------- state
    def dead(self):
        """The first stack process that is gone, or None."""
        for c in self.procs.values():
            if not c.alive():
                return c
        return None

    def pids(self):
        return dict({role: c.pid for role, c in self.procs.items()}, **self.role_pids)

    def logs(self):
        logs = {role: c.log_tail() for role, c in self.procs.items()}
        if self.weston_log and "server" in logs:
            # weston logs to its file; its timeline's JSON lines are noise here.
            text = procs.read_tail(self.weston_log, 200000)
            plain = [l for l in text.splitlines() if not l.startswith("{")]
            logs["server"] = (logs["server"] + "\n".join(plain))[-4000:]
        if self.e_session:
            # E logs to its HOME, not to the output enlightenment_start shows.
            role = self.spec.compositor_role
            e_log = procs.read_tail(os.path.join(self.e_session.home, ".e-log.log"), 4000)
            logs[role] = (logs.get(role, "") + "\n.e-log.log:\n" + e_log)[-6000:]
        return logs

    def content_path(self):
        """How window contents reach the compositor of this stack."""
        if self.spec.content_path:
            return self.spec.content_path
        # duet-xwm logs its paths once compositing is set up, which can be a
        # moment after it holds the WM selection (what "started" waits for).
        deadline = time.monotonic() + 5
        while True:
            log = self.procs["wm"].log_tail(20000)
            m = re.search(r"content path: (\S+).*?output path: ([\w-]+)", log)
            if m:
                return "duet-xwm: content %s, output %s" % (m.group(1), m.group(2))
            if time.monotonic() > deadline or not self.procs["wm"].alive():
                return None
            time.sleep(0.05)

    def command_lines(self):
        return {role: " ".join(argv) for role, argv in self.commands.items()}

    def stop(self):
        for c in reversed(list(self.procs.values())):
            c.stop()
        if self.e_session:
            self.e_session.stop()
        # Xvfb is gone: its framebuffer file in /dev/shm (8 MB at 1080p)
        # goes now, also for callers that never call cleanup().
        self._drop_fb()

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        self._drop_fb()

    def _drop_fb(self):
        if self.fbdir:
            shutil.rmtree(self.fbdir, ignore_errors=True)


def counting_env(dump_dir):
    """Environment that loads the IPC counter into a process."""
    lib = find_ipc_lib()
    # The dump signal: a real-time one, as openbox takes SIGUSR2 for itself.
    env = {"DUET_IPC_COUNT_DIR": dump_dir, "DUET_IPC_COUNT_SIGNAL": str(DUMP_SIGNAL)}
    if lib:
        env["LD_PRELOAD"] = lib
        # Our own programs may be ASan builds, whose runtime wants to be
        # the first library; the counter has no sanitizer and needs none.
        asan = os.environ.get("ASAN_OPTIONS", "")
        env["ASAN_OPTIONS"] = "verify_asan_link_order=0" + (":" + asan if asan else "")
    return env

