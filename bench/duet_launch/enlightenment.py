"""Enlightenment, the study's own window system, started non-interactively
for `duet run` and `duet bench` (issue 13). Python 3 stdlib only: tools/duet
imports it too.

Nothing of E is copied into duet: the "bench" profile is made per run from
the installed package's standard profile (decoded with eet, the module,
gadget and shelf lists dropped, desktop icons, screensaver and DPMS off,
encoded back), in a private HOME under the run's directory, so E's state
never touches the user's. E also wants a session bus (the stack's own,
stopped with it) and, where /proc/acpi exists, acpid's socket: without
one it shows an "ACPI Error" dialog 5 s after start, a window that would be
measured. Where /run/acpid.socket is missing and can be made, a listening
socket is held there for the stack's life and removed after. E is started
with E_RESTART=1, as it starts itself on a restart: otherwise its welcome
splash dims the screen for ~4 s after it is up.

The two stacks:
  e-x11      Xvfb + enlightenment_start (WM and compositing manager);
             ready when _NET_WM_CM_S0 has an owner
  e-wayland  enlightenment_start as a headless Wayland compositor
             (E_WL_FORCE=buffer: E's wl_buffer output, fixed at 1024x768 in
             E's source); ready when its wayland-0 socket appears. It offers
             no wl_output, wp_presentation or viewporter.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import time

STANDARD = "/usr/share/enlightenment/data/config/standard"
PROFILE = "bench"
# Without it enlightenment_start ptrace-attaches to E (its crash handler),
# which keeps strace -p out.
NO_PTRACE = "-i-really-know-what-i-am-doing-and-accept-full-responsibility-for-it"
ACPID_SOCKET = "/run/acpid.socket"
WAYLAND_SIZE = "1024x768"  # E's wl_buffer output (src/modules/wl_buffer)
FIRST_DRAW_DELAY_S = 0.15  # E's default: a new window's first draw waits this long
DROPPED_LISTS = ("modules", "gadcons", "shelves")
SETTINGS = {"show_desktop_icons": "0", "screensaver_enable": "0", "dpms_enable": "0"}


class EError(Exception):
    pass


def needs():
    """Programs the E stacks need: name -> (path or None, package)."""
    return {"enlightenment_start": (shutil.which("enlightenment_start"), "enlightenment"),
            "eet": (shutil.which("eet"), "libeet-bin"),
            "dbus-daemon": (shutil.which("dbus-daemon"), "dbus")}


def missing():
    """None, or why E cannot run here (one line)."""
    lack = ["%s (Debian package %s)" % (n, pkg) for n, (p, pkg) in needs().items() if not p]
    if not lack and not os.path.isfile(os.path.join(STANDARD, "e.cfg")):
        lack.append("%s/e.cfg (Debian package enlightenment-data)" % STANDARD)
    return ("missing " + ", ".join(lack)) if lack else None


def version():
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "enlightenment"],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def bench_profile_text(standard_text):
    """The standard profile's decoded e.cfg, made lean: the top-level
    module, gadget-container and shelf lists dropped, the settings above."""
    out, depth = [], 0
    for line in standard_text.split("\n"):
        if depth:
            depth += line.count("{") - line.count("}")
            continue
        m = re.match(r'    group "([a-z_.]+)" list \{', line)
        if m and m.group(1) in DROPPED_LISTS:
            depth = 1
            continue
        out.append(line)
    text = "\n".join(out)
    for key, value in SETTINGS.items():
        text, n = re.subn(r'(value "%s" int: )-?\d+;' % key, r"\g<1>%s;" % value, text)
        if n != 1:
            raise EError("the standard profile has no single '%s' setting" % key)
    return text


def make_home(home):
    """A HOME holding the bench profile; returns the profile directory."""
    prof = os.path.join(home, ".e", "e", "config", PROFILE)
    os.makedirs(prof, exist_ok=True)
    plain = os.path.join(home, "standard-e.cfg.txt")
    r = subprocess.run(["eet", "-d", os.path.join(STANDARD, "e.cfg"), "config", plain],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise EError("eet could not decode the standard profile: %s" % r.stderr.strip())
    with open(plain) as f:
        text = bench_profile_text(f.read())
    lean = os.path.join(home, "bench-e.cfg.txt")
    with open(lean, "w") as f:
        f.write(text)
    r = subprocess.run(["eet", "-e", os.path.join(prof, "e.cfg"), "config", lean, "1"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise EError("eet could not encode the bench profile: %s" % r.stderr.strip())
    shutil.copy(os.path.join(STANDARD, "e_bindings.cfg"), prof)
    return prof


class Session:
    """E's surroundings for one stack instance: HOME, session bus, acpid
    socket. start() returns the environment to start E with. start_bus(env)
    starts the session bus and returns env with its address: the stack's
    own (Stack.session_bus), which stops it with its other helpers."""

    def __init__(self, workdir, start_bus, engine="sw"):
        self.home = os.path.join(workdir, "e-home")
        self.engine = engine
        self.start_bus = start_bus
        self.acpid = None
        self.notes = []

    def start(self, base_env):
        os.makedirs(self.home, exist_ok=True)
        make_home(self.home)
        env = dict(base_env, HOME=self.home, XDG_CONFIG_HOME=os.path.join(self.home, "config"),
                   XDG_CACHE_HOME=os.path.join(self.home, "cache"),
                   ECORE_NO_SYSTEM_MODULES="1", EVAS_GL_NO_BLACKLIST="1",
                   E_FIRST_FRAME="T", E_COMP_ENGINE=self.engine,
                   # Started as E starts itself after a restart: the same
                   # program and profile, without the welcome splash that
                   # dims the whole screen for ~4 s after E is up (and
                   # without startup applications, of which the profile
                   # has none).
                   E_RESTART="1")
        env = self.start_bus(env)
        self._acpid()
        return env

    def _acpid(self):
        if not os.path.isdir("/proc/acpi") or os.path.exists(ACPID_SOCKET):
            return
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(ACPID_SOCKET)
            s.listen(4)
        except OSError as e:
            self.notes.append("no %s (%s): E shows an \"ACPI Error\" dialog 5 s after start"
                              % (ACPID_SOCKET, e.strerror))
            return
        self.acpid = s
        self.notes.append("a silent listening socket stood in for acpid at %s" % ACPID_SOCKET)

    def leftovers(self):
        """Processes still running with this session's HOME: what E and its
        helpers (efreetd daemonizes out of E's process group) left."""
        tag = ("HOME=%s" % self.home).encode() + b"\0"
        found = []
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) == os.getpid():
                continue
            try:
                with open("/proc/%s/environ" % d, "rb") as f:
                    if tag in f.read():
                        found.append(int(d))
            except OSError:
                pass
        return found

    def stop(self):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            left = self.leftovers()
            for pid in left:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 2
            while left and self.leftovers() and time.monotonic() < deadline:
                time.sleep(0.05)
        if self.acpid:
            self.acpid.close()
            try:
                os.unlink(ACPID_SOCKET)
            except OSError:
                pass
            self.acpid = None


# What E's death in a run was, where it was found (issue 13): in the e-wayland
# GL render counting runs E died in 2-3 of 5 runs; strace -f on E showed its
# Evas render thread killed by SIGSEGV (SEGV_MAPERR) reading a client's
# wl_shm pool ~10 ms after E's main thread unmapped that pool because the
# client (duet-render --engine gl: Mesa's software EGL, one pool per
# buffer) had disconnected, at the end of a short counting run; E logs
# nothing (HOME/.e-log.log ends normally) and enlightenment_start exits 255.
CRASH_255 = ("Enlightenment died (enlightenment_start exited with status 255, as when E is "
             "killed by a signal; E 0.25.4's Wayland compositor is known to crash here with "
             "SIGSEGV in its render thread, reading a wl_shm pool of a client that had just "
             "disconnected, which its main thread had unmapped: an E race, not the client's)")


def crash_reason(stack):
    """CRASH_255 when an E stack's E process is gone with status 255, else None."""
    if not getattr(stack, "e_session", None):
        return None
    # E may be gone a moment before enlightenment_start exits after it.
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and all(c.alive() for c in stack.procs.values()) and \
            not all(_alive(p) for p in stack.role_pids.values()):
        time.sleep(0.02)
    for c in stack.procs.values():
        if c.argv and c.argv[0].endswith("enlightenment_start") and not c.alive() and \
                c.status() == "exited with status 255":
            return CRASH_255
    return None


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def e_pid(start_pid):
    """The enlightenment process enlightenment_start started, or None."""
    try:
        with open("/proc/%d/task/%d/children" % (start_pid, start_pid)) as f:
            kids = [int(p) for p in f.read().split()]
    except OSError:
        return None
    for pid in kids:
        try:
            with open("/proc/%d/comm" % pid) as f:
                if f.read().strip() == "enlightenment":
                    return pid
        except OSError:
            pass
    return None


def argv(program):
    return [program, "-profile", PROFILE, NO_PTRACE]


def describe(engine):
    """What the results record about an E stack's settings."""
    return {"version": version(), "profile": PROFILE + " (the standard profile without "
            "modules, gadgets and shelves; desktop icons, screensaver and DPMS off)",
            "engine": engine, "first_draw_delay_s": FIRST_DRAW_DELAY_S}
