"""One display stack of any kind (stack_kinds.py), started and stopped the
same way for `duet run`, `duet bench`, the integration tests and the client
matrix: this is the only code that starts an X server, a Wayland server, a
window manager or a compositing manager.

    wayland    duet-compositor (headless output, or --backend drm)   server
    x11        Xvfb (or Xorg) + duet-xwm                             server, wm
    weston     weston --backend=headless-backend.so --use-gl         server
               (--use-pixman with renderer pixman)
    openbox    Xvfb (or Xorg) + openbox + xcompmgr -c                server, wm, compositor
    e-x11      Xvfb + Enlightenment (WM and compositor)              server, wm
    e-wayland  Enlightenment, headless Wayland compositor            server
    xwayland   duet-compositor --xwayland (+ Xwayland, its child)    server (xwayland)
    weston-xwayland  weston --xwayland (+ Xwayland, its child)       server (xwayland)

What a stack is started with is a Config (data): its kind, size, refresh,
renderer, X server (Xvfb, or Xorg on the KMS card: xorg.py), output
(headless, or a KMS display: duet-compositor --backend drm, Xorg), the
test controls, the bench's counting directory and traces, extra arguments
and programs for tests. Nothing is read from os.environ: the processes'
environments are built from the base environment the caller passes.

Each instance has its own directory, XDG_RUNTIME_DIR, display number /
socket (displays.py), and a mark in the environment of everything it
starts (MARK=<id>). stop() stops each process's group in reverse start
order, then whatever else still carries the mark (a helper that left its
group: E's efreetd, its session bus, a client's daemon), and returns only
when none is left.

duet's servers can write their trace (Config.trace: DUET_TRACE in
<dir>/<role>-trace.jsonl), weston its "timeline" log scope to
<dir>/weston.log, and Xvfb can keep its framebuffer in a file
(Config.framebuffer: -fbdir, in memory) for an observer; on Xorg the
observer reads the card's scanout (fb_path "drm:CARD"). duet-xwm reports
the content path it took itself, in its trace ("xwm_paths").
"""
import dataclasses
import glob
import os
import re
import secrets
import select
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Optional

from duet_launch import (displays, enlightenment, paths, peers, proc, reaper, stack_kinds,
                         traces, xorg)
from duet_launch.errors import StackError

START_TIMEOUT = 20.0
DUMP_SIGNAL = 40  # SIGRTMIN+6 with glibc; none of the measured programs uses it
MARK = "DUET_STACK"  # in the environment of every process a stack starts
WESTON_REPAINT_WINDOW_MS = 16  # weston.ini [core] repaint-window (_weston_config)


# duet's own programs a stack may run besides its kind's, by build subdirectory.
OWN = {"duet-xctl": "tools", "duet-xwm": "xwm", "duet-compositor": "compositor"}


@dataclasses.dataclass(frozen=True)
class Config:
    """How to start one stack."""
    kind: str
    size: str = "1920x1080"
    refresh: Optional[int] = 60      # duet's servers' frame clock (Hz); None: their default
    renderer: Optional[str] = None   # duet's servers' and weston's: gl or pixman; None: default
    # duet-xwm's software engine, where renderer is pixman: "xrender" (drawn
    # inside the X server, as xcompmgr and picom draw) or "pixman" (window
    # contents fetched into duet-xwm, composited there, sent back).
    xwm_software: str = "xrender"
    x_server: str = "xvfb"           # the X stacks' server: xvfb or xorg
    output: str = "headless"         # headless, or kms (then the X server is always Xorg)
    test_protocol: bool = False      # duet-compositor --test-protocol (its test socket)
    shot_dir: bool = False           # duet-xwm --screenshot-dir (a private directory)
    screenshot: Optional[str] = None  # the last frame as a PNG, written as the stack stops
    counting: Optional[str] = None   # the IPC counter in every process, dumping here
    trace: bool = False              # duet's servers write their trace in the stack's dir
    framebuffer: bool = False        # Xvfb keeps its framebuffer in a file (-fbdir)
    echo: bool = False               # WM / compositor output to our stderr, not a log file
    xserver_args: tuple = ()         # more arguments for the X server (Xvfb or Xorg)
    server_args: tuple = ()          # ... for the Wayland server
    wm_args: tuple = ()              # ... for the window manager
    wm_env: tuple = ()               # (name, value) pairs for the WM's environment only
    programs: tuple = ()             # (name, path) pairs overriding where programs are found
    private_runtime: bool = True     # an XDG_RUNTIME_DIR of its own, not the base env's
    patience: float = 1.0            # every start wait's upper bound is multiplied by it
    grace: float = 3.0               # seconds a process has to exit after SIGTERM

    @property
    def spec(self):
        return stack_kinds.get(self.kind)

    def xserver(self):
        """The X server this stack runs, or None for a Wayland stack."""
        if self.spec.server_system != "x11":
            return None
        if self.spec.enlightenment:
            return "xvfb"
        return "xorg" if self.output == "kms" else self.x_server


def xwm_renderer(config):
    """duet-xwm's --renderer for config's engine: its software engine
    (Config.xwm_software) where the stack's is pixman."""
    return config.xwm_software if config.renderer == "pixman" else config.renderer


def needs(config):
    """Programs a stack needs: name -> (path or None, where it comes from)."""
    progs = {}
    own = dict(config.programs)
    for p in config.spec.programs:
        if p == stack_kinds.E_PROGRAMS:
            progs.update({n: (path, "Debian package " + pkg)
                          for n, (path, pkg) in enlightenment.needs().items()})
            continue
        if p == stack_kinds.X_SERVER:
            p = ("Xorg", "deb", xorg.PACKAGE) if config.xserver() == "xorg" else \
                ("Xvfb", "deb", "xvfb")
        name, how, where = p
        if name in own:
            progs[name] = (own[name], "given")
        elif how == "weston-module":
            progs[name] = (weston_module(name), "Debian package " + where)
        else:
            progs[name] = ((paths.find_own(name, where), "duet build (%s/)" % where)
                           if how == "own" else (shutil.which(name), "Debian package " + where))
    return progs


def weston_module(name):
    """The path of a module weston loads (libweston-N's), or None."""
    found = sorted(glob.glob("/usr/lib/*/libweston-*/" + name) +
                   glob.glob("/usr/lib/libweston-*/" + name))
    return found[-1] if found else None


def missing(config):
    """None, or why the stack cannot run here."""
    spec = config.spec
    if config.output == "kms" and spec.kms_why_not:
        return spec.kms_why_not
    on_xorg = spec.on_xorg and config.xserver() == "xorg"
    if on_xorg and spec.observed and os.geteuid() != 0:
        return ("%s on Xorg needs root: its observer reads the card's scanout "
                "(duet-observe --drm), whose buffers the kernel shows only to root" % config.kind)
    lack = ["%s (%s)" % (n, src) for n, (p, src) in needs(config).items() if not p]
    if not lack and spec.enlightenment:
        return enlightenment.missing()
    if not lack and on_xorg:
        try:
            xorg.plan()
        except xorg.XorgError as e:
            return str(e)
    return ("missing " + ", ".join(lack)) if lack else None


def counting_env(dump_dir, base_env):
    """Environment that loads the IPC counter into a process."""
    lib = paths.find_ipc_lib()
    # The dump signal: a real-time one, as openbox takes SIGUSR2 for itself.
    env = {"DUET_IPC_COUNT_DIR": dump_dir, "DUET_IPC_COUNT_SIGNAL": str(DUMP_SIGNAL)}
    if lib:
        env["LD_PRELOAD"] = lib
        # Our own programs may be ASan builds, whose runtime wants to be
        # the first library; the counter has no sanitizer and needs none.
        asan = base_env.get("ASAN_OPTIONS", "")
        env["ASAN_OPTIONS"] = "verify_asan_link_order=0" + (":" + asan if asan else "")
    return env


class Stack(peers.PeerStarts):
    """One stack instance: start() / stop() / cleanup(); env (the clients'
    environment), trusted_env (on top of it for a client that drives the
    server: duet-compositor's test socket), pids(), logs(), traces."""

    def __init__(self, config, workdir, base_env):
        self.config = config
        self.name = config.kind
        self.spec = config.spec
        self.kind = self.spec.window_system
        self.xserver = config.xserver()
        self.xorg = None            # xorg.Setup when the server is Xorg
        self.e_session = None       # enlightenment.Session of an E stack
        self.role_pids = {}         # role -> the measured process, where not the one spawned
        self.refresh = config.refresh
        self.counting = config.counting
        self.size = config.size
        self.dir = tempfile.mkdtemp(prefix="%s-" % self.name, dir=workdir)
        self.runtime = base_env.get("XDG_RUNTIME_DIR")
        if config.private_runtime or not self.runtime:
            self.runtime = os.path.join(self.dir, "runtime")
            os.mkdir(self.runtime, 0o700)
        self.mark = "%d-%s" % (os.getpid(), secrets.token_hex(4))
        self.base_env = dict(base_env, XDG_RUNTIME_DIR=self.runtime)
        self.base_env[MARK] = self.mark
        for k in ("DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "DUET_TEST_DISPLAY"):
            self.base_env.pop(k, None)
        self.procs = {}  # role -> proc.Child, in start order
        self.helpers = []  # processes it needs but does not measure (peers.py: a session bus)
        self.peer_dirs = []  # directories made for a peer's user (peers.py), gone at stop
        self.peer_owner = None  # (uid, gid) a peer runs as (peers.py), or None
        self.display = None  # the X display (":N") or the Wayland socket's name
        self.x_display = None  # the Xwayland stacks' X display (":N"), the apps' DISPLAY
        self.wayland_display = None  # ... and their server's Wayland socket (not the apps')
        # role -> proc.Foreign: a stack process started by another (the
        # Xwayland a Wayland server started), watched like self.procs.
        self.watched = {}
        self.env = None  # the clients' environment once started
        # On top of env for an app that drives the server itself (duet-resize
        # --mode server): duet-compositor offers duet_test only on its test
        # socket (docs/security.md); the X servers' requests need nothing.
        self.trusted_env = {}
        self.commands = {}
        self.notes = []
        self.protocol_log = None
        self.programs = {n: p for n, (p, _) in needs(config).items()}
        self.traces = {}            # role -> its trace file (Config.trace)
        self.composited_path = None  # the file saying when it composited (trace / weston log)
        self.fb_path = None         # Xvfb's framebuffer file (-fbdir), or "drm:CARD" on Xorg
        self.fbdir = None
        if config.framebuffer and self.xserver == "xvfb":
            self._fbdir()  # known before the start: an observer may watch it appear
        self.weston_log = None
        self.paths = None           # what duet-xwm reported it takes (its "xwm_paths" event)
        self.before_stop = []       # run before the top process stops (screenshots)
        self.shot_dir = None        # duet-xwm's --screenshot-dir (Config.shot_dir)

    # -------------------------------------------------------------- helpers
    def program(self, name):
        """The path of a program the stack runs; StackError when there is none."""
        path = self.programs.get(name) or dict(self.config.programs).get(name) or \
            paths.find_own(name, OWN.get(name, "."))
        if path:
            return path
        if name in OWN or name.startswith("duet-"):
            raise StackError("cannot find %s: build duet (meson setup build && ninja -C build), "
                             "set DUET_BUILD_DIR to the build directory, or put it in PATH"
                             % name)
        where = needs(self.config).get(name, (None, "its Debian package"))[1]
        raise StackError("%s is not installed (%s)" % (name, where))

    def server_env(self):
        env = dict(self.base_env)
        if self.counting:
            env.update(counting_env(self.counting, self.base_env))
        return env

    def spawn(self, role, argv, env, **kw):
        """Starts one process of the stack (a subclass may add to argv/env)."""
        if "log_path" not in kw and not self._echoed(role, kw):
            kw["log_path"] = os.path.join(self.dir, role + ".log")
        try:
            child = proc.Child(role, argv, env, **kw)
        except OSError as e:
            raise StackError("%s: cannot run %s: %s" % (role, argv[0], e.strerror))
        self.procs[role] = child
        self.commands[role] = list(argv)
        return child

    def _echoed(self, role, kw):
        """duet run (Config.echo): the WM's, compositor's and E's output go
        to our stderr (our stdout is CMD's); X servers still log to files."""
        if not self.config.echo or role == "server" and self.spec.server_system == "x11" or \
                role == "xvfb":
            return False
        if kw.get("lines"):
            kw["echo"] = _echo_line
        else:
            kw.setdefault("stdout", sys.stderr.fileno())
        kw.setdefault("stderr", sys.stderr.fileno())
        return True

    def patience(self, seconds):
        return seconds * max(self.config.patience, 1.0)

    def wait(self, what, pred, timeout=START_TIMEOUT):
        timeout = self.patience(timeout)
        deadline = time.monotonic() + timeout
        while not pred():
            for c in self.procs.values():
                if not c.alive():
                    raise StackError("%s %s while waiting for %s" % (c.role, c.status(), what))
            if time.monotonic() > deadline:
                raise StackError("timed out after %.0f s waiting for %s" % (timeout, what))
            time.sleep(0.02)

    def trace_env(self, env, role):
        """duet's servers write their trace, with the contract's
        "composited" events, to <dir>/<role>-trace.jsonl (Config.trace)."""
        if not self.config.trace:
            return env
        path = os.path.join(self.dir, role + "-trace.jsonl")
        self.traces[role] = path
        self.composited_path = path
        return dict(env, DUET_TRACE=path)

    def protocol_env(self, env):
        """duet's servers' protocol log (compositor/core/protocol-log.c,
        xwm/protolog.c), read by the bench's ipc.py, when counting."""
        if not self.counting:
            return env
        self.protocol_log = os.path.join(self.counting, "protocol.json")
        return dict(env, DUET_PROTOCOL_LOG=self.protocol_log)

    # -------------------------------------------------------------- start
    def start(self):
        try:
            if self.spec.enlightenment:
                why = enlightenment.missing()
                if why:
                    raise StackError("Enlightenment cannot run here: %s" % why)
            if self.spec.window_system == "x11" and displays.ensure_x_socket_dir():
                self.notes.append("made %s (mode 1777): it was missing"
                                  % displays.X_SOCKET_DIR)
            getattr(self, "_start_" + self.name.replace("-", "_"))()
            self.started()
        except (StackError, OSError) as e:
            self.stop()
            raise StackError(str(e), self.logs())
        except BaseException:
            self.stop()  # Ctrl-C mid-start: the caller never gets this stack to stop
            raise
        return self

    def started(self):
        """Called once every process is ready; a subclass may check more
        (the bench's readiness probe)."""

    def _start_wayland(self, extra=()):
        cfg = self.config
        sock = displays.wayland_socket("duet")
        env = self.trace_env(self.protocol_env(self.server_env()), "server")
        argv = [self.program("duet-compositor"), "--socket", sock, "--size", cfg.size]
        if cfg.refresh is not None:
            argv += ["--refresh", str(cfg.refresh)]
        if cfg.test_protocol:
            argv.append("--test-protocol")
        if cfg.renderer:
            argv += ["--renderer", cfg.renderer]
        if cfg.screenshot:
            argv += ["--screenshot", cfg.screenshot]
        if cfg.output == "kms":
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
        argv += list(extra) + list(cfg.server_args)
        server = self.spawn("server", argv, env, lines=True,
                            stdout_path=os.path.join(self.dir, "server.stdout.log"))
        # It announces DUET_TEST_DISPLAY=NAME-test (with --test-protocol)
        # and DISPLAY=:N (with --xwayland), then WAYLAND_DISPLAY=NAME once
        # it listens.
        try:
            server.wait_line(r"^WAYLAND_DISPLAY=", timeout=self.patience(START_TIMEOUT))
        except proc.LineTimeout as e:
            raise StackError(str(e))
        self.display = sock
        self.env = dict(self.base_env, WAYLAND_DISPLAY=sock)
        x_display = [line[len("DISPLAY="):] for line in server.lines
                     if line.startswith("DISPLAY=")]
        if x_display:
            # Its X display, served by the Xwayland it hosts.
            self.x_display = self.env["DISPLAY"] = x_display[0]
        if cfg.test_protocol:
            self.trusted_env = {"WAYLAND_DISPLAY": sock + "-test"}
        if cfg.refresh == 0:
            self.notes.append("duet-compositor --refresh 0: repaints as soon as there is damage")

    def _wait_socket(self, name):
        path = os.path.join(self.runtime, name)
        self.wait("the Wayland socket %s" % name, lambda: displays.accepting(path))

    def _start_weston(self, extra=()):
        sock = displays.wayland_socket("weston")
        w, h = self.size.split("x")
        ini = self._weston_config()
        # Its plain log and its "timeline" scope (JSON lines, CLOCK_MONOTONIC)
        # go to one file; timeline.py skips the plain lines.
        self.weston_log = os.path.join(self.dir, "weston.log")
        self.composited_path = self.weston_log
        use = "--use-pixman" if self.config.renderer == "pixman" else "--use-gl"
        self.spawn("server", [self.program("weston"), "--backend=headless-backend.so", use,
                              "--idle-time=0", "--socket=" + sock, "--width=" + w,
                              "--height=" + h, "--config=" + ini,
                              "--logger-scopes=log,timeline", "--log=" + self.weston_log]
                   + list(extra) + list(self.config.server_args), self.server_env())
        self._wait_socket(sock)
        self.display = sock
        self.env = dict(self.base_env, WAYLAND_DISPLAY=sock)
        if self.refresh != 60:
            self.notes.append("weston's headless output composites at a fixed 60 Hz "
                              "(no switch for %s)" % self.refresh)

    def _weston_config(self):
        """weston without its desktop helper clients. --no-config is not
        enough: weston 10's desktop shell still starts weston-desktop-shell
        (panel, background) and weston-keyboard, and quits if its shell
        client dies in the first 30 s. So: a minimal weston.ini whose shell
        client only holds its connection (a sleep), no input method, no
        start-up fade (which waits for the shell client's desktop_ready)."""
        stub = os.path.join(self.dir, "weston-shell-stub")
        with open(stub, "w") as f:
            f.write("#!/bin/sh\n# duet: holds the desktop shell's connection, draws nothing\n"
                    "exec sleep 1000000\n")
        os.chmod(stub, 0o755)
        ini = os.path.join(self.dir, "weston.ini")
        # [core] repaint-window=16: weston's headless backend finishes a
        # frame 16 ms after each repaint, and the next repaint starts
        # repaint-window ms (default 7) before the following refresh, so at
        # the default one cycle is about 26 ms: 39 frames a second on a
        # 60 Hz output. With 16 it paints its nominal 60 Hz (58 fps measured
        # with weston-simple-egl), as every other stack does.
        text = ("[core]\nrepaint-window=%d\n[shell]\nclient=%s\nstartup-animation=none\n"
                "[input-method]\npath=\n" % (WESTON_REPAINT_WINDOW_MS, stub))
        with open(ini, "w") as f:
            f.write(text)
        note = ("weston.ini: [core] repaint-window=%d (it paints its nominal 60 Hz; at the "
                "default 7 ms its headless output paints about 39 Hz); [shell] "
                "client=<a stub that sleeps: no panel or background>, " % WESTON_REPAINT_WINDOW_MS +
                "startup-animation=none; [input-method] path= (no weston-keyboard)")
        if note not in self.notes:
            self.notes.append(note)
        return ini

    # -------------------------------------------------------------- Xwayland
    def _start_xwayland(self):
        """duet-compositor --xwayland, its X display the first free one from
        a number of displays' range (as the X servers'), then Xwayland."""
        n = next(displays.x_numbers(), displays.X_SERVERS[0])
        self._start_wayland(extra=("--xwayland", "--xwayland-display", str(n)))
        if not self.x_display:
            raise StackError("duet-compositor --xwayland announced no DISPLAY=:N")
        self._xwayland_up("duet-compositor")

    def _start_weston_xwayland(self):
        """weston --xwayland: weston takes the first free X display from :0
        (no switch chooses it) and logs "xserver listening on display :N";
        it starts Xwayland on the first X connection."""
        self._start_weston(extra=("--xwayland",))
        self.wait("weston to log its X display", self._weston_x_display)
        self._xwayland_up("weston")

    def _weston_x_display(self):
        m = re.search(r"xserver listening on display (:\d+)",
                      proc.read_tail(self.weston_log, 200000))
        if m:
            self.x_display = m.group(1)
        return m is not None

    def _xwayland_up(self, server):
        """The X display answers with a window manager: the launcher's own
        check is the first X connection, which makes the server start
        Xwayland; then Xwayland (the server's child) is watched as the
        stack's "xwayland" process (role_pids, watched)."""
        # The apps' environment is X11's alone (no WAYLAND_DISPLAY), so a
        # toolkit that would rather speak Wayland still takes the path this
        # stack measures; the Wayland socket stays in self.wayland_display.
        self.wayland_display = self.env.pop("WAYLAND_DISPLAY")
        self.env["DISPLAY"] = self.x_display
        self.wait("%s's X window manager on %s (Xwayland started for it)"
                  % (server, self.x_display), lambda: self._wm_ready(self.x_display))
        parent = self.procs["server"].pid
        found = []

        def xwayland():
            # wlroots (sway) starts Xwayland as a grandchild: then it is
            # the stack's marked process of that name.
            found[:] = proc.children_named(parent, "Xwayland") or [
                p for p in reaper.marked(MARK, self.mark) if proc.comm(p) == "Xwayland"]
            return bool(found)
        self.wait("Xwayland, %s's child" % server, xwayland)
        role = stack_kinds.XWAYLAND
        self.role_pids[role] = found[0]
        self.watched[role] = proc.Foreign(role, found[0])

    # -------------------------------------------------------------- X servers
    def _start_x_server(self, role="server", size=None, env=None):
        if self.xserver == "xorg" and role == "server":
            self._start_xorg()
        else:
            self._start_xvfb(role, size or self.size, env or self.server_env())

    def _fbdir(self):
        """Where Xvfb keeps its framebuffer file: in memory (memory_dir)."""
        self.fbdir = paths.memory_dir("duet-bench-fb-")
        self.fb_path = os.path.join(self.fbdir, "Xvfb_screen0")
        return self.fbdir

    def _start_xvfb(self, role, size, env):
        """Xvfb on a free display number (displays.x_numbers); -displayfd
        tells when the server is ready."""
        last = "every display number tried was taken"
        for n in displays.x_numbers():
            try:
                return self._try_xvfb(role, n, size, env)
            except StackError as e:
                last = e
                self.procs.pop(role).stop()
        raise StackError("Xvfb did not start on 5 display numbers: %s" % last)

    def _try_xvfb(self, role, n, size, env):
        # -noreset: without it the server regenerates when its last client
        # leaves, and the readiness probe (xprop) can be that client: a WM
        # connecting during the reset is refused ("cannot open display").
        argv = [self.program("Xvfb"), ":%d" % n, "-displayfd"]
        tail = ["-screen", "0", size + "x24", "-nolisten", "tcp", "-noreset"]
        if self.config.framebuffer and role == "server":
            tail += ["-fbdir", self.fbdir]
        return self._spawn_x(role, "Xvfb", lambda w: argv + [str(w)] + tail +
                      list(self.config.xserver_args), env)

    def _start_xorg(self):
        """Xorg on the KMS card (xorg.py); -displayfd picks the display."""
        try:
            self.xorg = xorg.Setup(self.dir)
        except xorg.XorgError as e:
            raise StackError(str(e))
        self._spawn_x("server", "Xorg", lambda w: self.xorg.argv(self.program("Xorg"), w) +
                      list(self.config.xserver_args), self.server_env())
        # The observer's source (openbox's composited points, the input
        # experiment): the buffer the card scans out.
        self.fb_path = "drm:" + self.xorg.screen.node
        glamor, what = self.xorg.accel()
        self.notes.append("X server: Xorg, modesetting driver: " + what)

    def _spawn_x(self, role, name, make_argv, env):
        r, w = os.pipe()
        try:
            self.spawn(role, make_argv(w), env, pass_fds=(w,))
        finally:
            os.close(w)
        try:
            display = self._read_displayfd(r, name, role)
        finally:
            os.close(r)
        if role == "server":
            self.display = display
            self.env = dict(self.base_env, DISPLAY=self.display)
        return display

    def _read_displayfd(self, r, name, role):
        data = b""
        deadline = time.monotonic() + self.patience(START_TIMEOUT)
        while not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise StackError("%s did not report its display within %.0f s"
                                 % (name, self.patience(START_TIMEOUT)))
            ready, _, _ = select.select([r], [], [], left)
            if ready:
                chunk = os.read(r, 64)
                if not chunk:
                    raise StackError("%s %s before it was ready"
                                     % (name, self.procs[role].status()))
                data += chunk
        return ":" + data.decode().strip()

    # -------------------------------------------------------------- X11 clients
    def xctl_ok(self, *args):
        """Whether duet-xctl ARGS succeeds on this stack's display."""
        r = subprocess.run([self.program("duet-xctl"), "--display",
                            self.x_display or self.display] + list(args),
                           env=self.env, stdin=subprocess.DEVNULL, capture_output=True)
        return r.returncode == 0

    def _wm_ready(self, display=None):
        """A window manager set _NET_SUPPORTING_WM_CHECK (xprop, else duet-xctl)."""
        display = display or self.display
        if not self.programs.get("xprop") and not shutil.which("xprop"):
            return self.xctl_ok("wait-wm", "0")
        r = subprocess.run([self.program("xprop"), "-display", display, "-root",
                            "_NET_SUPPORTING_WM_CHECK"], env=self.env,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True)
        return r.returncode == 0 and re.search(r"window id # 0x[0-9a-f]+", r.stdout) is not None

    def _cm_ready(self):
        return self.xctl_ok("wait-cm", "0")

    def _wm_loop_ready(self):
        return self.xctl_ok("wait-wm-loop", "1")

    def wm_env(self, env):
        return dict(env, **dict(self.config.wm_env))

    def _start_x11(self):
        cfg = self.config
        self._start_x_server()
        env = self.trace_env(self.protocol_env(dict(self.server_env(), DISPLAY=self.display)),
                             "wm")
        if cfg.output == "kms":
            # duet-xwm's EGL on the server's card through DRI3 (kms_swrast),
            # which imports the windows' pixmaps; forced software EGL
            # (drisw) cannot (docs/board.md section 6).
            env.update(LIBGL_ALWAYS_SOFTWARE="0", MESA_LOADER_DRIVER_OVERRIDE="kms_swrast")
        argv = [self.program("duet-xwm"), "--display", self.display]
        if cfg.refresh is not None:
            argv += ["--refresh", str(cfg.refresh)]
        if cfg.renderer:
            argv += ["--renderer", xwm_renderer(cfg)]
        if cfg.screenshot:
            argv += ["--screenshot", cfg.screenshot]
        if cfg.shot_dir:
            self.shot_dir = os.path.join(self.dir, "xwm-shots")
            os.mkdir(self.shot_dir, 0o700)
            argv += ["--screenshot-dir", self.shot_dir]
        self.spawn("wm", argv + list(cfg.wm_args), self.wm_env(env))
        self.wait("duet-xwm to manage %s" % self.display, self._wm_ready)
        if self.xserver == "xorg":
            path = self.content_path()
            if path:
                self.notes.append("duet-xwm on Xorg: content path: %s; output path: %s, "
                                  "repaint path: %s" % (self.paths["content"],
                                                        self.paths["output"],
                                                        self.paths["repaint"]))

    def _start_openbox(self):
        env = self._start_openbox_wm()
        self._start_openbox_cm(env)

    def _start_openbox_wm(self):
        """The X server and openbox, ready to manage windows; returns the
        environment for the compositor."""
        self._start_x_server()
        if self.xserver == "xorg":
            self.notes.append("openbox on Xorg: the observer reads the buffer the card scans "
                              "out (duet-observe --drm %s)" % self.xorg.screen.node)
        cfg = os.path.join(self.dir, "config")
        os.makedirs(cfg, exist_ok=True)  # an empty config: the user's rc must not matter
        env = dict(self.server_env(), DISPLAY=self.display, XDG_CONFIG_HOME=cfg)
        self.spawn("wm", [self.program("openbox"), "--sm-disable"] + list(self.config.wm_args),
                   self.wm_env(env))
        self.wait("openbox to manage %s" % self.display, self._wm_ready)
        # openbox sets its check window early in its start-up; a window
        # mapped before the start-up ends waits for some later event (the
        # guest's Xorg start-up showed it: docs/board.md section 6).
        self.wait("openbox to handle events", self._wm_loop_ready)
        return env

    def _start_openbox_cm(self, env):
        self.spawn("compositor", [self.program("xcompmgr"), "-c"], env)
        # xcompmgr takes the compositing-manager selection before it
        # redirects the windows. Without this wait the readiness probe
        # could map before that, be drawn by Xvfb itself and make the
        # stack "ready" before anything composites.
        self.wait("xcompmgr to own _NET_WM_CM_S0", self._cm_ready)
        self.notes.append("xcompmgr has no frame clock: it composites on every damage event")

    # -------------------------------------------------------------- Enlightenment
    def _start_e(self, env, ready_what, ready):
        self.e_session = enlightenment.Session(self.dir, self.session_bus, engine="sw")
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
        child = self.spawn(role, enlightenment.argv(self.program("enlightenment_start")), env)
        self.wait(ready_what, ready)
        # enlightenment_start only starts (and restarts) E: E is its child,
        # and E is what is measured.
        pid = enlightenment.e_pid(child.pid)
        if not pid:
            raise StackError("enlightenment_start (pid %d) has no enlightenment child"
                             % child.pid)
        self.role_pids[role] = pid

    def _grab_on_stop(self, display, env):
        """Config.screenshot on the E stacks: E has no screenshot switch of
        its own, so the root window is read back from the X server
        (GetImage, which shows the compositor's overlay) before E stops."""
        xctl, path = self.program("duet-xctl"), self.config.screenshot

        def grab():
            r = subprocess.run([xctl, "--display", display, "grab", path], env=env,
                               stdin=subprocess.DEVNULL, capture_output=True, text=True)
            if r.returncode != 0:
                self.notes.append("screenshot of %s failed: %s" % (display, r.stderr.strip()))
        self.before_stop.append(grab)

    def _start_e_x11(self):
        self._start_x_server()
        env = dict(self.server_env(), DISPLAY=self.display)
        self._start_e(env, "Enlightenment to own _NET_WM_CM_S0 on %s" % self.display,
                      self._cm_ready)
        if self.config.screenshot:
            self._grab_on_stop(self.display, env)

    def _start_e_wayland(self):
        """E as a headless Wayland compositor (its wl_buffer output). With
        Config.screenshot its output goes to a window on a private Xvfb
        instead (E_WL_FORCE=x11), which is read back before E stops; the
        clients never see that display."""
        env = dict(self.server_env(), E_WL_FORCE="buffer")
        if self.config.screenshot:
            display = self._start_xvfb("xvfb", self.size, self.server_env())
            env = dict(env, E_WL_FORCE="x11", DISPLAY=display)
            self._grab_on_stop(display, env)
        sock = os.path.join(self.runtime, "wayland-0")
        self._start_e(env, "Enlightenment's Wayland socket", lambda: displays.accepting(sock))
        self.display = "wayland-0"
        self.env = dict(self.base_env, WAYLAND_DISPLAY="wayland-0")
        self.notes.append("Enlightenment's Wayland output is its wl_buffer module's, fixed at "
                          "%s; it offers no wl_output, wp_presentation or viewporter, so the "
                          "apps' presented time is their frame callback's"
                          % enlightenment.WAYLAND_SIZE)

    # -------------------------------------------------------------- state
    def dead(self):
        """The first stack process that is gone, or None (the processes it
        started, then those another started: Xwayland)."""
        for c in list(self.procs.values()) + list(self.watched.values()):
            if not c.alive():
                return c
        return None

    def dying(self):
        """Whether a stack process was killed and is still exiting."""
        return any(c.dying() for c in list(self.procs.values()) + list(self.watched.values()))

    def pids(self):
        return dict({role: c.pid for role, c in self.procs.items()}, **self.role_pids)

    def logs(self):
        logs = {role: c.log_tail() for role, c in self.procs.items()}
        if self.weston_log and "server" in logs:
            # weston logs to its file; its timeline's JSON lines are noise here.
            text = proc.read_tail(self.weston_log, 200000)
            plain = [l for l in text.splitlines() if not l.startswith("{")]
            logs["server"] = (logs["server"] + "\n".join(plain))[-4000:]
        if self.xorg:
            logs["Xorg.log"] = self.xorg.log_tail()
        if self.e_session:
            # E logs to its HOME, not to the output enlightenment_start shows.
            role = self.spec.compositor_role
            e_log = proc.read_tail(os.path.join(self.e_session.home, ".e-log.log"), 4000)
            logs[role] = (logs.get(role, "") + "\n.e-log.log:\n" + e_log)[-6000:]
        return logs

    def content_path(self):
        """How window contents reach the compositor of this stack: its
        kind's, or what duet-xwm reported in its trace ("xwm_paths", once
        compositing is set up, which can be a moment after it holds the WM
        selection); None when it reports nowhere (no Config.trace)."""
        if self.spec.content_path:
            return self.spec.content_path
        trace = self.traces.get("wm")
        if not trace:
            return None
        if self.paths is None:
            lines = traces.JsonLines(trace)
            deadline = time.monotonic() + 5
            while True:
                found = [e for e in lines.read() if e.get("name") == "xwm_paths"]
                if found:
                    self.paths = found[0]
                    break
                if time.monotonic() > deadline or not self.procs["wm"].alive():
                    return None
                time.sleep(0.05)
        return "duet-xwm: content %s, output %s" % (self.paths["content"], self.paths["output"])

    def command_lines(self):
        return {role: " ".join(argv) for role, argv in self.commands.items()}

    def stop_top(self):
        """Runs what must happen before the top process stops (the E
        stacks' screenshots), then stops the last process started: the
        window manager or compositor, which writes its --screenshot as it
        exits."""
        for fn in self.before_stop:
            fn()
        self.before_stop = []
        if self.procs:
            role = list(self.procs)[-1]
            self.procs[role].stop(self.config.grace)

    def stop(self):
        """Stops every process of the stack and returns once none is left:
        each group in reverse start order, then E's session, then every
        process still marked with this stack's MARK."""
        for fn in self.before_stop:
            fn()
        self.before_stop = []
        for c in reversed(list(self.procs.values())):
            c.stop(self.config.grace)
        self.stop_helpers()
        if self.e_session:
            self.e_session.stop()
        left = reaper.stop_marked(MARK, self.mark)
        if left:
            self.notes.append("stopped %d process(es) that had left their group: %s"
                              % (len(left), ", ".join(map(str, left))))
        # Xvfb is gone: its framebuffer file in /dev/shm (8 MB at 1080p)
        # goes now, also for callers that never call cleanup().
        self._drop_fb()
        self.drop_peer_dirs()

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        self._drop_fb()

    def _drop_fb(self):
        if self.fbdir:
            shutil.rmtree(self.fbdir, ignore_errors=True)


def _echo_line(line):
    """duet-compositor's stdout under duet run: its announcements are ours
    to read; anything else it prints goes to our stderr."""
    if not line.startswith(("WAYLAND_DISPLAY=", "DUET_TEST_DISPLAY=", "DISPLAY=")):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
