"""Harness for duet's integration tests (Python 3 stdlib only).

A Session starts one duet-compositor on its own socket and XDG_RUNTIME_DIR,
starts clients against it, drives it with duet-testctl, and kills everything
it started when the test ends, whether it passed or not. On failure the
session's screenshots and logs are copied next to meson's test log.

Stacks (the compositor; Xvfb with duet-xwm or openbox + xcompmgr) are
started by duet_launch, duet's one stack launcher (bench/duet_launch; meson
puts bench/ on PYTHONPATH), with the programs the build made.

Programs come from the environment (set by tests/integration/meson.build):
DUET_COMPOSITOR, DUET_XWM, DUET_XCTL, DUET_TESTCTL, DUET_TEST_PATTERN,
DUET_BAD_CLIENT, and DUET_TEST_OUTDIR for failure artifacts;
DUET_TEST_RENDERER runs duet's servers on another engine and
DUET_KMS_GUEST=1 (the emulated KMS guest) makes every wait longer.
"""

import collections
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

import pngread
from duet_bench import procs
from duet_launch import hang
from duet_launch import proc as launch_proc
from duet_launch import reaper
from duet_launch import stack as launch_stack
from duet_launch import stack_kinds
from duet_launch import traces

SKIP_STATUS = 77  # meson's "skipped"


class Skip(Exception):
    pass


class Failure(AssertionError):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def log(msg):
    print("[%7.3f] %s" % (time.monotonic() - _T0, msg), flush=True)


_T0 = time.monotonic()

# Read once: the emulated KMS guest is slow to start and stop everything.
# Stopped processes get GRACE seconds to check themselves for leaks as they
# exit: in the guest that took more than the 2 s that serve natively (3
# compositors of 10 were cut short).
KMS_GUEST = os.environ.get("DUET_KMS_GUEST") == "1"
GRACE = 15.0 if KMS_GUEST else 2.0
# meson.build: some scenarios on pixman, some of duet-xwm's on xrender
RENDERER = os.environ.get("DUET_TEST_RENDERER")


def program(env_name):
    """Path of one of our own built programs; a missing one is a setup bug."""
    path = os.environ.get(env_name)
    if not path or not os.access(path, os.X_OK):
        raise Failure("%s is not set to an executable (got %r)" % (env_name, path))
    return path


def third_party(name):
    """Path of a Debian-packaged client. Missing: fail under CI, else skip."""
    path = shutil.which(name)
    if path:
        return path
    msg = "%s is not installed (see scripts/test for the package list)" % name
    if os.environ.get("CI") == "true":
        raise Failure(msg)
    raise Skip(msg)


Window = collections.namedtuple("Window", "id pid x y w h focused app_id title")


# What AddressSanitizer (leaks: LeakSanitizer, on in the ASan run with
# tests/lsan.supp) prints when a process it instruments finds an error,
# at exit included: a server or client stopped by the harness, whose exit
# status no test reads, is checked through its stderr.
_SANITIZER_ERROR = re.compile(r"^==\d+==ERROR: (?:LeakSanitizer|AddressSanitizer):.*$", re.M)


def sanitizer_report(text, limit=3000):
    """The sanitizer's error report in a process's stderr, or None."""
    m = _SANITIZER_ERROR.search(text or "")
    return text[m.start():m.start() + limit] if m else None


def parse_windows(text):
    """Parses duet-testctl's (or duet-xctl's) `windows` output:
    `id pid x y w h focused app_id<TAB>title`, one window per line; for X11
    app_id is WM_CLASS's class."""
    windows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        head, _, title = line.partition("\t")
        fields = head.split(" ", 7)
        if len(fields) < 7:
            raise Failure("bad windows line from duet-testctl: %r" % line)
        app_id = fields[7] if len(fields) > 7 else ""
        # duet-xctl prints X window ids in hex (0x...), duet-testctl decimal.
        nums = [int(v, 0) for v in fields[:7]]
        windows.append(Window(*nums, app_id, title))
    return windows


class Proc(launch_proc.Child):
    """A child process in its own process group (duet_launch's one child
    type), its stdout collected line by line (so tests can wait for lines)
    and stderr sent to a file."""

    def __init__(self, name, argv, env, workdir, stdin=subprocess.DEVNULL, **kw):
        self.stderr_path = os.path.join(workdir, name + ".stderr.log")
        super().__init__(name, argv, env, log_path=self.stderr_path, stdin=stdin, lines=True,
                         stdout_path=os.path.join(workdir, name + ".stdout.log"), **kw)

    def wait_line(self, pattern, timeout=20.0, start=0, pred=None):
        """First stdout line (from index start on) matching the regex (and
        pred(match), if given); returns (index, match). Fails on timeout or
        if the process ends first."""
        try:
            return super().wait_line(pattern, timeout, start, pred)
        except launch_proc.LineTimeout as e:
            if self.alive():
                raise Failure(str(e))
            raise Failure("%s; stderr:\n%s" % (e, self.stderr_tail()))

    def wait(self, timeout=20.0):
        try:
            return super().wait(timeout)
        except subprocess.TimeoutExpired:
            raise Failure("%s did not exit within %.0f s" % (self.name, timeout))

    def stderr_tail(self, n=4000):
        return self.log_tail(n)

    def sanitizer_report(self):
        """Its sanitizer error report (a leak found at exit, say), or None."""
        return sanitizer_report(self.log_tail(1 << 30))

    def kill(self, sig=signal.SIGKILL):
        self.signal_group(sig)

    def stop(self, grace=None):
        """SIGTERM the whole group, SIGKILL what is left after grace (s).
        The default leaves a sanitized process time to check itself for
        leaks as it exits (GRACE)."""
        super().stop(GRACE if grace is None else grace)


# Every process a test starts carries this mark in its environment; a
# watchdog (duet_launch/reaper.py) stops them all when the test process
# ends, even by SIGKILL or meson's timeout.
TEST_MARK = ("DUET_TEST_RUN", "%d-%s" % (os.getpid(), secrets.token_hex(4)))


def watch_children():
    reaper.watch(*TEST_MARK)


def base_env(runtime_dir):
    watch_children()
    env = dict(os.environ)
    env[TEST_MARK[0]] = TEST_MARK[1]
    # Clients must find our compositor, never an X server or another
    # compositor from the caller's session.
    for var in ("DISPLAY", "WAYLAND_SOCKET", "WAYLAND_DISPLAY", "DUET_TEST_DISPLAY"):
        env.pop(var, None)
    env["XDG_RUNTIME_DIR"] = runtime_dir
    env.setdefault("GALLIUM_DRIVER", "llvmpipe")
    env.setdefault("LIBGL_ALWAYS_SOFTWARE", "1")
    env.setdefault("EVAS_GL_NO_BLACKLIST", "1")
    return env


class _Stack(launch_stack.Stack):
    """duet_launch's Stack, its processes started as the session's Procs
    (named as the tests know them, listed in session.procs)."""

    def __init__(self, session, names, *args):
        super().__init__(*args)
        self.session = session
        self.names = names

    def spawn(self, role, argv, env, **kw):
        for k in ("log_path", "lines", "stdout_path"):
            kw.pop(k, None)
        child = self.session.spawn(self.names.get(role, role), argv, env, **kw)
        self.procs[role] = child
        self.commands[role] = list(argv)
        return child


class Injector:
    """One duet-testctl reading commands from stdin (`duet-testctl -`): the
    keys, buttons and touch points it presses stay down until it is told
    to release them or exits (one testctl run per command releases them
    as it goes)."""

    def __init__(self, s, name="injector"):
        self.proc = s.spawn(name, [program("DUET_TESTCTL"), "-"], dict(s.env),
                            stdin=subprocess.PIPE)
        self.done = 0

    def __call__(self, *args):
        self.proc.popen.stdin.write((" ".join(str(a) for a in args) + "\n").encode())
        self.proc.popen.stdin.flush()
        i, _ = self.proc.wait_line(r"^ok$", start=self.done)
        self.done = i + 1

    def close(self):
        self.proc.popen.stdin.close()
        check(self.proc.wait() == 0, "duet-testctl - failed: %s" % self.proc.stderr_tail())


class Session:
    """One duet-compositor with its clients; use as a context manager.

    It runs with --test-protocol (test_protocol=False: without), so
    duet-testctl reaches duet_test on the compositor's test socket; clients
    start on the ordinary socket, where duet_test is hidden, unless given
    trusted_env() (docs/security.md)."""

    # Seconds to wait for the compositor's WAYLAND_DISPLAY line.
    start_timeout = 30
    kind = "wayland"
    names = {"server": "compositor"}

    def __init__(self, name, size="1024x768", refresh=60, args=(), test_protocol=True):
        self.name = name
        self.size = size
        self.refresh = refresh
        self.extra_args = list(args)
        self.test_protocol = test_protocol
        self.test_display = None  # the compositor's test socket
        self.workdir = tempfile.mkdtemp(prefix="duet-%s-" % name)
        self.runtime_dir = tempfile.mkdtemp(prefix="duet-xdg-")
        os.chmod(self.runtime_dir, 0o700)
        self.procs = []
        self.stack = None
        self.compositor = None
        self.display = None
        self.env = None
        self._shot = 0

    # ------------------------------------------------------------ lifecycle
    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def config(self, **kw):
        """The launcher's Config of this session's stack."""
        programs = {"duet-compositor": os.environ.get("DUET_COMPOSITOR"),
                    "duet-xwm": os.environ.get("DUET_XWM"),
                    "duet-xctl": os.environ.get("DUET_XCTL")}
        # xrender is duet-xwm's alone: a Wayland session beside it (the
        # same-pixels test) draws with the other software engine.
        renderer = "pixman" if RENDERER == "xrender" and self.kind != "x11" else RENDERER
        # DUET_TEST_RENDERER=pixman tests duet-xwm's own pixman composite.
        fields = dict(size=self.size, refresh=self.refresh, renderer=renderer,
                      xwm_software="pixman",
                      private_runtime=False,
                      patience=self.start_timeout / launch_stack.START_TIMEOUT, grace=GRACE,
                      programs=tuple((k, v) for k, v in programs.items() if v))
        fields.update(kw)
        return launch_stack.Config(self.kind, **fields)

    def start_stack(self, config, env):
        self.stack = _Stack(self, self.names, config, self.workdir, env)
        try:
            self.stack.start()
        except launch_stack.StackError as e:
            for role, text in e.logs.items():
                log("%s log (tail):\n%s" % (role, text[-3000:]))
            raise Failure("the %s stack did not start: %s" % (config.kind, e))
        self.display = self.stack.display
        self.env = dict(self.stack.env)
        return self.stack

    def start(self):
        program("DUET_COMPOSITOR")
        env = base_env(self.runtime_dir)
        st = self.start_stack(self.config(test_protocol=self.test_protocol,
                                          server_args=tuple(self.extra_args)), env)
        self.compositor = st.procs["server"]
        if RENDERER in ("pixman", "xrender"):
            check("rendering with pixman" in self.compositor.stderr_tail(100000),
                  "compositor did not say it renders with pixman")
        if self.test_protocol:
            # Announced before WAYLAND_DISPLAY.
            test_lines = [line for line in self.compositor.lines
                          if line.startswith("DUET_TEST_DISPLAY=")]
            check(test_lines == ["DUET_TEST_DISPLAY=%s-test" % self.display],
                  "compositor announced test sockets %r" % test_lines)
            self.test_display = self.display + "-test"
        log("compositor pid %d up on %s" % (self.compositor.pid, self.display))

    def __exit__(self, etype, value, tb):
        compositor_died = self.compositor is not None and not self.compositor.alive()
        for proc in reversed(self.procs):
            proc.stop()
        if self.stack:
            # Whatever a stack process started that left its group.
            self.stack.stop()
        # Each process stopped above has checked itself at exit (ASan run).
        reported = [(proc, proc.sanitizer_report()) for proc in self.procs]
        reported = [(proc, report) for proc, report in reported if report]
        failed = etype is not None and not issubclass(etype, Skip)
        if failed or compositor_died or reported:
            self.save_artifacts()
        shutil.rmtree(self.runtime_dir, ignore_errors=True)
        shutil.rmtree(self.workdir, ignore_errors=True)
        for proc, report in reported:
            log("%s (pid %d) stderr, sanitizer report:\n%s" % (proc.name, proc.pid, report))
        if reported and not failed:
            raise Failure("sanitizer errors (above) in %s"
                          % ", ".join(proc.name for proc, _ in reported))
        return False

    def copy_workdir(self, what):
        """The session's directory into DUET_TEST_OUTDIR, for a failure."""
        outdir = os.environ.get("DUET_TEST_OUTDIR") or tempfile.gettempdir()
        dest = os.path.join(outdir, "duet-integration", self.name)
        shutil.rmtree(dest, ignore_errors=True)
        try:
            shutil.copytree(self.workdir, dest)
            log("%s saved in %s" % (what, dest))
        except OSError as e:
            log("could not save artifacts to %s: %s" % (dest, e))

    def save_artifacts(self):
        self.copy_workdir("screenshots and logs")
        if self.compositor is not None:
            status = self.compositor.popen.poll()
            if status is not None and status < 0:
                log("duet-compositor was killed by signal %d" % -status)
            log("compositor stderr (tail):\n" + self.compositor.stderr_tail())

    def spawn(self, name, argv, env, **kw):
        base, n = name, 1
        while any(p.name == name for p in self.procs):
            n += 1
            name = "%s-%d" % (base, n)
        proc = Proc(name, argv, env, self.workdir, **kw)
        self.procs.append(proc)
        return proc

    # -------------------------------------------------------------- clients
    def trusted_env(self):
        """Environment overrides for a client that may use duet_test (on the
        test socket); empty where the server has none (X11, weston)."""
        return {"WAYLAND_DISPLAY": self.test_display} if self.test_display else {}

    def client(self, argv, name=None, env=None):
        e = dict(self.env)
        if env:
            e.update(env)
        name = name or os.path.basename(argv[0])
        proc = self.spawn(name, argv, e)
        log("started %s (pid %d): %s" % (name, proc.pid, " ".join(argv)))
        return proc

    def run(self, argv, timeout=30, env=None):
        """Runs a program to completion against the compositor."""
        e = dict(self.env)
        if env:
            e.update(env)
        # (Its output is read with errors="replace": window titles are
        # whatever clients set, invalid UTF-8 included.)
        r = run_guarded(argv, timeout, env=e, grace=5, peers=self._peers)
        report = sanitizer_report(r.stderr)
        if report:
            raise Failure("%s (status %d) reported a sanitizer error:\n%s"
                          % (" ".join(argv), r.returncode, report))
        return r

    def _peers(self):
        """(name, pid) of the session's live processes: the servers a tool
        run against it talks to, and its clients."""
        seen = {}
        for p in [self.compositor, getattr(self, "xserver", None),
                  getattr(self, "wm", None)] + self.procs:
            if p is not None and p.alive():
                seen.setdefault(p.pid, p.name)
        return [(name, pid) for pid, name in seen.items()]

    def alive(self):
        return self.compositor is not None and self.compositor.alive()

    def check_alive(self):
        if not self.alive():
            raise Failure("duet-compositor died (status %s); stderr:\n%s"
                          % (self.compositor.popen.poll(), self.compositor.stderr_tail()))

    # -------------------------------------------------------------- testctl
    def testctl(self, *args, timeout=30):
        self.check_alive()
        argv = [program("DUET_TESTCTL")] + [str(a) for a in args]
        r = self.run(argv, timeout=timeout)
        if r.returncode != 0:
            self.check_alive()
            raise Failure("duet-testctl %s failed (%d): %s%s"
                          % (" ".join(argv[1:]), r.returncode, r.stdout, r.stderr))
        return r.stdout

    def sync(self):
        self.testctl("sync")

    def windows(self):
        return parse_windows(self.testctl("windows"))

    def wait_window(self, app_id=None, pid=None, timeout=30, pred=None):
        """Polls the window list until a window matches; returns it."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            seen = self.windows()
            for w in seen:
                if app_id is not None and w.app_id != app_id:
                    continue
                if pid is not None and w.pid != pid:
                    continue
                if pred is not None and not pred(w):
                    continue
                return w
            if time.monotonic() > deadline:
                raise Failure("no window with app_id=%r pid=%r after %d s; windows: %r"
                              % (app_id, pid, timeout, seen))
            time.sleep(0.1)

    def wait_client_shown(self, proc, name, look, bg, margin=0, exits=False, timeout=30,
                          pause=0.3, window_timeout=10, shoot=None):
        """Animated or slow-starting clients: takes proc's window and a
        screenshot (shoot(), or screenshot(name)) until look(img, win)
        passes and all beyond margin of the window is background, or
        timeout seconds have passed (then its last Failure). Returns the
        window and what look returned. A client that exits fails at once,
        unless exits (it may end by itself)."""
        deadline = time.monotonic() + timeout
        while True:
            if not exits and not proc.alive():
                raise Failure("%s exited (%s) early; stderr:\n%s"
                              % (name, proc.popen.poll(), proc.stderr_tail()))
            win = self.wait_window(pred=lambda w: w.pid in (0, proc.pid), timeout=window_timeout)
            img = shoot() if shoot else self.screenshot(name)
            try:
                what = look(img, win)
                check_outside_is_background(img, win, bg, margin=margin)
                return win, what
            except Failure:
                if time.monotonic() > deadline:
                    raise
                time.sleep(pause)

    def screenshot(self, label="shot"):
        """Syncs, takes a screenshot and decodes it."""
        self.sync()
        self._shot += 1
        path = os.path.join(self.workdir, "%02d-%s.png" % (self._shot, label))
        self.testctl("screenshot", path)
        return self._read_screenshot(path, "output")

    def _read_screenshot(self, path, what, size=None):
        """The screenshot at path, checked to be a PNG the size of the
        session's what (output, screen), or of size (w, h)."""
        try:
            img = pngread.read(path)
        except (OSError, ValueError) as e:
            raise Failure("screenshot %s is not a valid PNG: %s" % (path, e))
        w, h = size or (int(v) for v in self.size.split("x"))
        check((img.width, img.height) == (w, h),
              "screenshot is %dx%d, %s is %dx%d" % (img.width, img.height, what, w, h))
        return img

    def background(self):
        """Screenshot of the empty screen: checks it is one uniform colour
        and returns that colour."""
        check(not self.windows(), "screen not empty before any client: %r" % self.windows())
        img = self.screenshot("empty")
        bg = img.pixel(0, 0)
        bad = img.count_outside_not(bg, (0, 0, 0, 0))
        check(bad == 0, "empty screen is not uniform: %d pixels differ from %r" % (bad, bg))
        log("background colour %r" % (bg,))
        return bg


class WestonSession(Session):
    """weston's headless backend on its own socket (duet_launch's weston
    stack: a minimal weston.ini, --use-gl, or --use-pixman with
    renderer="pixman"); weston has no test protocol."""
    kind = "weston"
    names = {"server": "weston"}

    def __init__(self, name, size="1024x768", renderer="gl"):
        super().__init__(name, size=size, test_protocol=False)
        self.renderer = renderer

    def start(self):
        third_party("weston")
        st = self.start_stack(self.config(renderer=self.renderer), base_env(self.runtime_dir))
        self.compositor = st.procs["server"]
        log("weston pid %d up on %s" % (self.compositor.pid, self.display))


def need_stack(config):
    """A Skip of one line where the launcher's stack of config cannot run
    here (a peer not installed: scripts/packages.sh installs them)."""
    why = launch_stack.missing(config)
    if why:
        raise Skip("the %s stack cannot run here: %s (scripts/packages.sh installs the peers)"
                   % (config.kind, why))


class PeerSession(Session):
    """A peer's stack of any kind duet_launch knows (stack_kinds: weston,
    sway, mutter, i3, mutter-x11, the peers' Xwayland stacks, ...), started
    as `duet bench` starts it, never changed to suit a test; no test
    protocol. A peer that is not installed here is a Skip of one line
    naming what is missing (scripts/packages.sh installs the peers).

    compositor is the process its clients talk to (the Wayland server, or
    the X window manager); display the clients' display (the X display on
    the Xwayland stacks, whose Wayland socket is wayland_display); alive()
    asks every process of the stack, the Xwayland its server started
    included, and dead() names the first one gone."""

    def __init__(self, name, kind, size="1024x768"):
        super().__init__(name, size=size, test_protocol=False)
        self.kind = kind
        self.spec = stack_kinds.get(kind)
        # Roles named as the programs: "sway (WLR_BACKENDS=headless)" is sway.
        self.names = {role: what.split()[0] for role, what, _ in self.spec.processes}
        self.wayland_display = None

    def start(self):
        config = self.config(renderer=None)
        need_stack(config)
        st = self.start_stack(config, base_env(self.runtime_dir))
        role = "wm" if self.spec.server_system == "x11" else "server"
        self.compositor = st.procs[role]
        if st.x_display:
            self.wayland_display = st.wayland_display
            self.display = st.x_display
        log("%s: %s up on %s" % (self.kind, ", ".join(
            "%s pid %d" % (c.name, c.pid) for c in self.stack_procs()), self.display))

    def stack_procs(self):
        """The stack's processes: those it started, then those another
        started (Xwayland)."""
        return list(self.stack.procs.values()) + list(self.stack.watched.values())

    def dead(self):
        return self.stack.dead() if self.stack else None

    def alive(self):
        return self.stack is not None and self.stack.dead() is None

    def check_alive(self):
        gone = self.dead()
        if gone is not None:
            raise Failure("%s %s; stderr:\n%s" % (gone.name, gone.status(), gone.log_tail()))

    def save_artifacts(self):
        self.copy_workdir("logs")
        if self.stack is None:
            return
        for c in self.stack_procs():
            if not c.alive():
                log("%s (pid %d) %s" % (c.name, c.pid, c.status()))
        for name, text in self.log_tails():
            log("%s (tail):\n%s" % (name, text))

    def log_tails(self, n=1500):
        """(name, the end of it) of each stack process's output, and of
        weston's own log file (its stderr has what it dies of: an
        assertion)."""
        out = [("%s stderr" % p.name, p.stderr_tail(n)) for p in self.procs]
        path = getattr(self.stack, "weston_log", None)
        if path:
            text = launch_proc.read_tail(path, 200000)
            plain = "\n".join(l for l in text.splitlines() if not l.startswith("{"))
            out.append(("weston.log", plain[-n:]))
        return out


# ----------------------------------------------------------------- X11 side
class XSession(Session):
    """One Xvfb on a display of its own with a window manager on it; the
    same interface as Session, driven through duet-xctl.

    wm="duet": duet-xwm (DUET_XWM), controlled with duet's client messages
    (sync, screenshots of the composited frame). wm="openbox": openbox with
    xcompmgr, the X11 peer of the study: a reference for our own clients and
    tools; it has no sync message, so sync() is a round trip plus a short
    settle, and screenshots read the root window back from the X server.
    xserver="xorg": Xorg on the KMS card instead (tests/kms/test_xorg.py).
    """

    def __init__(self, name, size="1024x768", wm="duet", wm_args=(), xvfb_args=(), wm_env=None,
                 screenshots=True, xserver="xvfb"):
        super().__init__(name, size=size)
        # duet-xwm answers _DUET_SCREENSHOT only with --screenshot-dir; the
        # session gives it a directory of its own unless told not to.
        self.screenshots = screenshots
        self.shot_dir = None
        self.wm_kind = wm
        self.wm_args = list(wm_args)
        self.xvfb_args = list(xvfb_args)  # e.g. -extension MIT-SHM
        self.wm_env = dict(wm_env or {})  # on top of the session's, for the WM only
        self.xserver_kind = xserver
        self.xserver = None
        self.wm = None
        self.wm_name = None
        if wm not in ("duet", "openbox"):
            raise Failure("unknown window manager %r" % wm)
        self.kind = "x11" if wm == "duet" else "openbox"
        self.names = {"server": "Xorg" if xserver == "xorg" else "Xvfb",
                      "wm": "duet-xwm" if wm == "duet" else "openbox", "compositor": "xcompmgr"}

    def start(self):
        if self.wm_kind == "duet":
            program("DUET_XWM")
        wm_env = dict(self.wm_env)
        if self.wm_kind == "openbox":
            # A private, empty config dir (the launcher's): the caller's
            # openbox rc must not change placement or focus.
            wm_env.setdefault("HOME", self.workdir)
        st = self.start_stack(self.config(x_server=self.xserver_kind,
                                          shot_dir=self.screenshots and self.wm_kind == "duet",
                                          refresh=None, xserver_args=tuple(self.xvfb_args),
                                          wm_args=tuple(self.wm_args),
                                          wm_env=tuple(wm_env.items())),
                              base_env(self.runtime_dir))
        self.xserver, self.wm = st.procs["server"], st.procs["wm"]
        self.shot_dir = st.shot_dir
        # The server's "compositor" for Session's liveness checks and logs.
        self.compositor = self.wm
        log("%s pid %d up on %s" % (self.xserver.name, self.xserver.pid, self.display))
        r = self.run([program("DUET_XCTL"), "--display", self.display, "wait-wm", "10"],
                     timeout=20)
        check(r.returncode == 0, "no window manager on %s: %s" % (self.display, r.stderr))
        self.wm_name = r.stdout.strip()
        if self.wm_kind == "openbox":
            # openbox and xcompmgr finish starting after the WM check is set;
            # a window mapped meanwhile was seen listed but never mapped
            # (no ReparentNotify, no Expose) in about one run of three.
            time.sleep(1.0)
        if self.wm_kind == "duet" and RENDERER == "pixman":
            err = self.wm.stderr_tail(100000)
            check("rendering with pixman" in err and "output path: shm-put" in err,
                  "duet-xwm does not say it renders with pixman into shm-put:\n" + err)
        if self.wm_kind == "duet" and RENDERER == "xrender":
            err = self.wm.stderr_tail(100000)
            check("rendering with XRender" in err and "output path: xrender" in err,
                  "duet-xwm does not say it renders with XRender in the server:\n" + err)
        log("%s pid %d manages %s (_NET_WM_NAME %r)"
            % (self.wm_kind, self.wm.pid, self.display, self.wm_name))

    def alive(self):
        return (self.wm is not None and self.wm.alive() and self.xserver is not None
                and self.xserver.alive())

    def check_alive(self):
        if self.xserver is not None and not self.xserver.alive():
            raise Failure("Xvfb died (status %s); stderr:\n%s"
                          % (self.xserver.popen.poll(), self.xserver.stderr_tail()))
        if self.wm is not None and not self.wm.alive():
            raise Failure("%s died (status %s); stderr:\n%s"
                          % (self.wm.name, self.wm.popen.poll(), self.wm.stderr_tail()))

    def save_artifacts(self):
        super().save_artifacts()
        if self.xserver is not None:
            log("%s stderr (tail):\n%s" % (self.xserver.name, self.xserver.stderr_tail(1500)))

    # ---------------------------------------------------------------- xctl
    def xctl(self, *args, timeout=30, check_status=True):
        self.check_alive()
        argv = [program("DUET_XCTL"), "--display", self.display] + [str(a) for a in args]
        r = self.run(argv, timeout=timeout)
        if check_status and r.returncode != 0:
            self.check_alive()
            raise Failure("duet-xctl %s failed (%d): %s%s"
                          % (" ".join(argv[3:]), r.returncode, r.stdout, r.stderr))
        return r.stdout if check_status else r

    # Session's methods that talk duet-testctl, mapped onto duet-xctl's.
    def testctl(self, *args, timeout=30):
        return self.xctl(*args, timeout=timeout)

    def sync(self):
        if self.wm_kind == "duet":
            self.xctl("sync")
        else:
            # No sync message: a round trip, then give the WM a moment.
            self.xctl("windows")
            time.sleep(0.3)

    def wait_unmanaged(self, timeout=10):
        """Waits until the WM's _NET_CLIENT_LIST names only live windows,
        i.e. it has let go of every client that exited. Start the next
        client only then: the X server gives a new client the freed
        resource-id base, so its first window gets the XID of the dead
        client's window, and a WM still unmanaging the old window (openbox
        restores its geometry) would resize the new one."""
        deadline = time.monotonic() + timeout
        while True:
            r = self.run(["xprop", "-root", "-notype", "_NET_CLIENT_LIST"])
            listed = {int(x, 16) for x in re.findall(r"0x[0-9a-fA-F]+", r.stdout)}
            live = {w.id for w in self.windows()}
            if r.returncode == 0 and listed <= live:
                return
            if time.monotonic() > deadline:
                raise Failure("the WM still lists gone windows after %d s: %s (live %s)"
                              % (timeout, sorted(map(hex, listed - live)),
                                 sorted(map(hex, live))))
            time.sleep(0.05)

    def screenshot(self, label="shot", source=None):
        """Syncs and takes a screenshot: duet-xwm's last composited frame
        (source "wm"), or the root window as the X server has it ("grab";
        the default with openbox)."""
        source = source or ("wm" if self.wm_kind == "duet" else "grab")
        self.sync()
        self._shot += 1
        path = os.path.join(self.workdir, "%02d-%s-%s.png" % (self._shot, label, source))
        self.xctl("screenshot" if source == "wm" else "grab", path)
        return self._read_screenshot(path, "screen")

    def window_image(self, win, label="window"):
        """win's own contents as the X server has them (GetImage of the
        window: a redirected window's pixmap), with win moved to 0, 0 for
        the same pixel checks as on the screen: what the app drew,
        whatever the compositing manager made of it (xcompmgr can lose a
        window's picture on its own BadMatch and show its shadow alone)."""
        self.sync()
        self._shot += 1
        path = os.path.join(self.workdir, "%02d-%s-window.png" % (self._shot, label))
        self.xctl("grab", path, "0x%x" % win.id)
        return self._read_screenshot(path, "window", (win.w, win.h)), win._replace(x=0, y=0)

    def screenshot_until(self, test, label="shot", timeout=10, source=None):
        """Screenshots until test(img) passes (returns its value); a frame
        may be composited a little after the event that caused it."""
        deadline = time.monotonic() + timeout
        while True:
            img = self.screenshot(label, source=source)
            try:
                return img, test(img)
            except Failure:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


# --------------------------------------------------------------- pixel checks
# A well-behaved client beside a misbehaving one (the robustness tests): a
# test pattern that draws on and on, whose frame lines show it still served.
GOOD_APP_ID = "duet-good-client"


def start_good(s):
    good = s.client([program("DUET_TEST_PATTERN"), "--frames", "100000000",
                     "--app-id", GOOD_APP_ID, "--size", "200x150"], name="good")
    good.wait_line(r"^mapped 200 150$")
    good.wait_line(r"^frame 5$")
    s.wait_window(app_id=GOOD_APP_ID)
    return good


def last_frame(good):
    for line in reversed(good.lines):
        if line.startswith("frame "):
            return int(line.split()[1])
    return 0


def check_good_keeps_going(s, good, what, frames=10):
    """good draws frames more frames after what; a dead server is the
    likelier cause of a wait that fails, and the better message."""
    s.check_alive()
    before = last_frame(good)
    try:
        good.wait_line(r"^frame (\d+)$", pred=lambda m: int(m.group(1)) >= before + frames,
                       timeout=15)
    except Failure:
        s.check_alive()
        raise
    check(good.alive(), "the good client died after %s: %s" % (what, good.stderr_tail()))
    log("good client: frame %d before, %d after %s" % (before, last_frame(good), what))


def pattern_pixel(x, y):
    """Mirror of test_pattern_pixel() in tests/clients/client-common.h."""
    return ((x * 7) & 0xFF, (y * 5) & 0xFF, (x + y) & 0xFF)


def pattern_mismatches(img, win, skip_counter_pixel=False, limit=5):
    """Compares the window's rect with duet-test-pattern's pattern.
    Returns (count, first few (x, y, got, want))."""
    bad, examples = 0, []
    for wy in range(win.h):
        sy = win.y + wy
        if not 0 <= sy < img.height:
            continue
        x0, x1 = max(0, win.x), min(img.width, win.x + win.w)
        row = img.rows[sy][3 * x0:3 * x1]
        want = bytearray()
        for sx in range(x0, x1):
            want += bytes(pattern_pixel(sx - win.x, wy))
        if skip_counter_pixel and wy == 0 and x0 == win.x:
            want[0:3] = row[0:3]
        if row != want:
            for i in range(0, len(row), 3):
                if row[i:i + 3] != want[i:i + 3]:
                    bad += 1
                    if len(examples) < limit:
                        examples.append((x0 + i // 3, sy, tuple(row[i:i + 3]), tuple(want[i:i + 3])))
    return bad, examples


def clip_rect(img, win, margin=0):
    """Window rect grown by margin, clipped to the image: (x0, y0, x1, y1)."""
    return (max(0, win.x - margin), max(0, win.y - margin),
            min(img.width, win.x + win.w + margin), min(img.height, win.y + win.h + margin))


def read_trace(path):
    """The JSON-lines trace at path as a list of events (none if it is not
    there yet; a line cut short by a writer still at it is skipped)."""
    return traces.JsonLines(path).read()


def run_guarded(argv, timeout, env=None, stacks_signal=None, grace=60, peers=None):
    """A program run to completion (subprocess.CompletedProcess, text);
    past timeout, a Failure that names where each of its processes (and
    of peers(), if given) waited (duet_launch.hang)."""
    try:
        return hang.run_guarded(argv, timeout, env=env, stacks_signal=stacks_signal,
                                grace=grace, peers=peers)
    except hang.Hung as e:
        raise Failure(str(e))


def run_case_in_tmpdir(cases, prefix):
    """Runs cases[sys.argv[1]](tmp) with tmp a new private (0700)
    temporary directory, removed after."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    try:
        cases[sys.argv[1]](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def strace_path():
    path = shutil.which("strace")
    if not path:
        raise Skip("strace is not installed")
    return path


class Strace:
    """strace attached to a process (all its threads) until stop(), which
    returns what it wrote."""

    def __init__(self, pid, out, extra=()):
        self.out = out
        self.popen = subprocess.Popen([strace_path(), "-f", "-qq", "-o", out] + list(extra) +
                                      ["-p", str(pid)], stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # strace says nothing when it has attached; its tracees' status does.
        deadline = time.monotonic() + 10
        while not procs.traced(pid):
            check(time.monotonic() < deadline, "strace did not attach to pid %d" % pid)
            if self.popen.poll() is not None:
                raise Failure("strace exited: %s"
                          % self.popen.stderr.read().decode(errors="replace"))
            time.sleep(0.02)

    def stop(self):
        self.popen.send_signal(2)
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
        with open(self.out) as f:
            return f.read()


def check_outside_is_background(img, win, bg, margin=0):
    """Everything farther than margin from the window is background. The
    margin leaves room for client-side shadows around the geometry."""
    x0, y0, x1, y1 = clip_rect(img, win, margin)
    bad = img.count_outside_not(bg, (x0, y0, x1 - x0, y1 - y0))
    check(bad == 0, "%d pixels outside window %r (margin %d) are not background %r"
          % (bad, win, margin, bg))


def main(test):
    """Runs test() as a meson test: 0 pass, 1 fail, 77 skip."""
    try:
        test()
    except Skip as e:
        print("SKIP: %s" % e, flush=True)
        sys.exit(SKIP_STATUS)
    except Failure as e:
        print("FAIL: %s" % e, flush=True)
        sys.exit(1)
    except Exception:  # a harness bug is still a failed test
        traceback.print_exc()
        sys.exit(1)
    print("PASS", flush=True)
    sys.exit(0)


def main_scenario(scenarios):
    """main() of the scenario (a function of no arguments) that the one
    argument names; any other command line exits 1 with a usage line."""
    if len(sys.argv) != 2 or sys.argv[1] not in scenarios:
        sys.exit("usage: %s %s" % (os.path.basename(sys.argv[0]), "|".join(scenarios)))
    main(scenarios[sys.argv[1]])


def main_session_scenario(scenarios, prefix, session_class=Session, **session_args):
    """main_scenario() of scenarios that are functions of a session: each
    runs in its own session_class(prefix + NAME, **session_args), whose
    servers must still be alive after it."""
    def in_session(name, scenario):
        def test():
            with session_class(prefix + name, **session_args) as s:
                scenario(s)
                s.check_alive()
        return test
    main_scenario({name: in_session(name, scenario) for name, scenario in scenarios.items()})
