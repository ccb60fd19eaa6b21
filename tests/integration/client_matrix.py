#!/usr/bin/env python3
"""The client compatibility matrix (docs/clients.md): real Debian clients on
duet's four stacks and the four peers people switch between, each checked
the same way where the stack allows it.

    client_matrix.py [--stacks wayland,x11,...] [--clients a,b]
                     [--json FILE] [--markdown FILE | --update-doc FILE.md]
                     [--size WxH] [--keep]
    client_matrix.py --smoke       (the CI subset: meson test client-matrix-smoke)
    client_matrix.py --inside STACK --clients a,b --json FILE   (in a stack of
                     `duet run STACK --test-control -- client_matrix.py ...`)

Every stack is started in this process by duet's one stack launcher
(bench/duet_launch), as `duet run STACK --test-control` starts it; weston
with --debug (its screenshooter). COLUMNS says, per stack, its column's
title and the control that drives it (what the harness can ask of its
server: a window list, screenshots, resize, close, keys); a check the
control cannot make is a skip with its reason. Inside a stack each client
runs once or twice and gets one cell per check:

  start    the process is still running when its window appears
  map      a new window appears (on weston, which lists no windows: the
           screen changes; on mutter, which offers neither a window list
           nor a screenshot: the client's own Wayland log shows its surface
           on the output)
  pixels   a screenshot of the window's area is not one colour
  input    keys the client reacts to in a way we can see (quit on Ctrl+Q,
           Escape or q; a shell in a terminal typed `exit` + Return; or a
           key that changes the window)
  resize   the server asks for another size and the window gets it, with
           pixels in the new area (on the tiling i3 and sway: the window,
           tiled, is floated and resized with the WM's own command)
  close    the server's close request (xdg_toplevel.close /
           WM_DELETE_WINDOW) makes it exit with status 0 (a terminal:
           with its shell's status)
  survives the server answers after the client is gone

A cell is ok, fail or skip, each with a short reason. Exit status: 0 when
every cell is ok or skip, 1 otherwise, 2 for bad usage; with --smoke 0, 1
when a cell differs from what it was written for, 77 (skip) when a client is
not installed outside CI.
"""

import argparse
import glob
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.join(ROOT, "bench")]
import pngread  # noqa: E402
from duet_launch import paths  # noqa: E402
from duet_launch import stack as launch_stack  # noqa: E402
from duet_launch import stack_kinds  # noqa: E402

CHECKS = ["start", "map", "pixels", "input", "resize", "close", "survives"]
SIZE = "1024x768"
MAP_TIMEOUT = 40.0
PIXEL_TIMEOUT = 15.0
EXIT_TIMEOUT = 10.0

QT_EXAMPLE = "/usr/lib/x86_64-linux-gnu/qt5/examples/widgets/mainwindows/application/application"
SDL_TESTS = "/usr/libexec/installed-tests/SDL2"
CLIP = "av://lavfi:testsrc=size=320x240:rate=30:duration=5"

# evdev key codes; X keycodes are these + 8.
KEY_ESC, KEY_Q, KEY_E, KEY_X, KEY_I, KEY_T, KEY_ENTER, KEY_CTRL = 1, 16, 18, 45, 23, 20, 28, 29
KEY_TAB, KEY_DOWN = 15, 108
CTRL_Q = [[KEY_CTRL, KEY_Q]]
ESC = [[KEY_ESC]]
Q = [[KEY_Q]]
TYPE_EXIT = [[KEY_E], [KEY_X], [KEY_I], [KEY_T], [KEY_ENTER]]
DOWN = [[KEY_DOWN], [KEY_DOWN]]
TAB = [[KEY_TAB]]
KEY_NAMES = {id(CTRL_Q): "Ctrl+Q", id(ESC): "Escape", id(Q): "q",
             id(TYPE_EXIT): "`exit` + Return", id(DOWN): "Down Down", id(TAB): "Tab"}


def client(name, package, wayland, x11, env_wayland=None, env_x11=None, keys=None,
           why_no_keys=None, note=None, keys_change=False, fixed_size=None, close_status=0):
    """wayland / x11: argv, or a string saying why the client has no such build.
    keys: chords that make it quit, or (keys_change) that visibly change
    its window. fixed_size: why it keeps its size whatever it is asked.
    close_status: the status it exits with when closed (None: any exit of
    its own, as a terminal passes on its shell's)."""
    return {"name": name, "package": package, "wayland": wayland, "x11": x11,
            "env": {"wayland": env_wayland or {}, "x11": env_x11 or {}}, "keys": keys,
            "why_no_keys": why_no_keys, "note": note, "keys_change": keys_change,
            "fixed_size": fixed_size, "close_status": close_status}


def mpv(vo_wayland, vo_x11, extra=()):
    base = ["mpv", "--no-config", "--no-audio", "--loop-file=inf", "--really-quiet",
            "--force-window=yes"] + list(extra)
    return base + vo_wayland + [CLIP], base + vo_x11 + [CLIP]


MPV_SHM = mpv(["--vo=wlshm"], ["--vo=x11"])
MPV_GPU = mpv(["--vo=gpu", "--gpu-context=wayland"], ["--vo=gpu", "--gpu-context=x11egl"])
NO_X11 = "Wayland-only client"
KITTY = ["kitty", "-o", "confirm_os_window_close=0", "sh"]

CLIENTS = [
    # gtk3-demo has no quit accelerator: Down moves the selection in its
    # list, which changes the page shown.
    client("gtk3-demo", "gtk-3-examples", ["gtk3-demo"], ["gtk3-demo"],
           {"GDK_BACKEND": "wayland"}, {"GDK_BACKEND": "x11"}, keys=DOWN, keys_change=True),
    client("gtk4-demo", "gtk-4-examples", ["gtk4-demo"], ["gtk4-demo"],
           {"GDK_BACKEND": "wayland"}, {"GDK_BACKEND": "x11"}, keys=CTRL_Q),
    client("qt5-application", "qtbase5-examples + qtwayland5", [QT_EXAMPLE], [QT_EXAMPLE],
           {"QT_QPA_PLATFORM": "wayland"}, {"QT_QPA_PLATFORM": "xcb"}, keys=CTRL_Q,
           note="Qt 5's widgets/mainwindows/application example"),
    client("sdl2-testsprite2", "libsdl2-tests", [SDL_TESTS + "/testsprite2", "--resizable"],
           [SDL_TESTS + "/testsprite2", "--resizable"], {"SDL_VIDEODRIVER": "wayland"},
           {"SDL_VIDEODRIVER": "x11"}, keys=ESC),
    client("mpv-shm", "mpv", MPV_SHM[0], MPV_SHM[1], keys=Q,
           note="--vo=wlshm on Wayland, --vo=x11 on X11; a lavfi testsrc clip"),
    client("mpv-gpu", "mpv", MPV_GPU[0], MPV_GPU[1], keys=Q,
           note="--vo=gpu (EGL, llvmpipe)"),
    client("alacritty", "alacritty", ["alacritty", "-e", "sh"], ["alacritty", "-e", "sh"],
           {"WINIT_UNIX_BACKEND": "wayland"}, {"WINIT_UNIX_BACKEND": "x11"}, keys=TYPE_EXIT,
           close_status=None),
    # Without confirm_os_window_close=0 kitty answers a close request with
    # a confirmation prompt while its shell runs.
    client("kitty", "kitty", KITTY, KITTY, {}, {"KITTY_DISABLE_WAYLAND": "1"}, keys=TYPE_EXIT,
           close_status=None),
    client("imv", "imv", ["imv-wayland", "@IMAGE@"], ["imv-x11", "@IMAGE@"], keys=Q),
    client("foot / xterm", "foot, xterm", ["foot", "sh"], ["xterm", "-e", "sh"],
           keys=TYPE_EXIT, close_status=None),
    client("weston-simple-shm", "weston", ["weston-simple-shm"], NO_X11,
           why_no_keys="reads no keys", fixed_size="draws a fixed 250x250 buffer"),
    client("weston-simple-egl", "weston", ["weston-simple-egl"], NO_X11, keys=ESC),
    client("weston-terminal", "weston", ["weston-terminal", "--shell=/bin/sh"], NO_X11,
           keys=TYPE_EXIT, close_status=None),
    client("glmark2", "glmark2-es2-wayland, glmark2-es2-x11",
           ["glmark2-es2-wayland", "-s", "400x300", "-b", "build:duration=600"],
           ["glmark2-es2", "-s", "400x300", "-b", "build:duration=600"], keys=ESC,
           fixed_size="renders at its -s size whatever the window is given"),
    client("elementary_test", "libelementary-bin", ["elementary_test", "-to", "Button"],
           ["elementary_test", "-to", "Button"], {"ELM_DISPLAY": "wl"}, {"ELM_DISPLAY": "x11"},
           keys=TAB, keys_change=True),
]
BY_NAME = {c["name"]: c for c in CLIENTS}

# The CI subset (meson test client-matrix-smoke) and the cells that are skips there.
SMOKE_CLIENTS = ["weston-simple-shm", "gtk3-demo", "gtk4-demo"]  # gtk4-demo: a chord (Ctrl+Q)
SMOKE_STACKS = ["wayland", "x11"]
SMOKE_SKIPS = {("weston-simple-shm", "wayland", "input"): "skip",
               ("weston-simple-shm", "wayland", "resize"): "skip"}
SMOKE_SKIPS.update({("weston-simple-shm", "x11", c): "skip" for c in CHECKS})


def log(msg):
    print("client-matrix: %s" % msg, file=sys.stderr, flush=True)


class Fail(Exception):
    pass


def own_program(subdir, name, env_name):
    if os.environ.get(env_name):
        return os.environ[env_name]
    p = paths.find_own(name, subdir)
    if not p:
        raise SystemExit("client-matrix: cannot find %s (build duet, or set DUET_BUILD_DIR)"
                         % name)
    return p


# ------------------------------------------------------------- server control
def parse_windows(text):
    wins = []
    for line in text.splitlines():
        head, _, title = line.partition("\t")
        f = head.split(" ", 7)
        if len(f) >= 7:
            wins.append({"id": int(f[0], 0), "pid": int(f[1], 0), "x": int(f[2]),
                         "y": int(f[3]), "w": int(f[4]), "h": int(f[5]),
                         "app": f[7] if len(f) > 7 else "", "title": title})
    return wins


def wayland_roundtrip(env, timeout=10.0):
    """wl_display.sync on the server's Wayland socket, as any client's
    first roundtrip: Fail unless its callback's done comes back."""
    name = env.get("WAYLAND_DISPLAY") or "wayland-0"
    path = name if name.startswith("/") else os.path.join(env["XDG_RUNTIME_DIR"], name)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    deadline = time.monotonic() + timeout
    try:
        s.connect(path)
        # wl_display@1.sync (opcode 0, 12 bytes), new id wl_callback@2.
        s.sendall(struct.pack("<III", 1, 12 << 16, 2))
        buf = b""
        while True:
            while len(buf) >= 8:
                obj, word = struct.unpack_from("<II", buf)
                size = word >> 16
                if size < 8:
                    raise Fail("a malformed message on %s" % name)
                if len(buf) < size:
                    break
                if obj == 2 and word & 0xffff == 0:  # wl_callback@2.done
                    return
                buf = buf[size:]
            if time.monotonic() > deadline:
                raise Fail("no answer to wl_display.sync on %s within %.0f s" % (name, timeout))
            chunk = s.recv(4096)
            if not chunk:
                raise Fail("%s closed the connection" % name)
            buf += chunk
    except OSError as e:
        raise Fail("%s: %s" % (name, e))
    finally:
        s.close()


class Control:
    """What the harness can ask of a stack's server. `can` lists the
    powers it has ("windows": a list of them with their geometry, "shots":
    screenshots, "resize", "close", "keys"); the rest are skips, whose
    reasons `why` gives: the control's own (`no`), else the stack kind's
    (stack_kinds: no_keys, no_screenshot), else a plain one."""
    can = ()
    no = {}
    client_env = {}  # what every client's environment gets on top on this stack

    def __init__(self, stack, env, workdir):
        self.stack = stack
        self.env = env
        self.workdir = workdir

    def why(self, power):
        if power in self.no:
            return self.no[power]
        kind = stack_kinds.get(self.stack)
        said = {"keys": kind.no_keys, "shots": kind.no_screenshot}.get(power)
        if said:
            return re.sub(r"^not measurable: ", "", said)
        return {"keys": "%s has no seat here (headless)",
                "shots": "the harness cannot read %s's screen",
                "resize": "the harness cannot ask %s to resize",
                "close": "the harness cannot ask %s to close a window"}[power] % self.stack

    def run(self, argv, timeout=30, script=None):
        argv = [str(a) for a in argv]
        r = subprocess.run(argv, env=self.env, input=script,
                           stdin=subprocess.DEVNULL if script is None else None,
                           capture_output=True, text=True, errors="replace", timeout=timeout)
        if r.returncode != 0:
            raise Fail("%s failed (%d): %s" % (" ".join(argv[:3]), r.returncode,
                                               (r.stderr or r.stdout).strip()[-300:]))
        return r.stdout


class DuetWayland(Control):
    can = ("windows", "shots", "resize", "close", "keys")

    def __init__(self, stack, env, workdir):
        # duet-compositor's test socket, as `duet run wayland --test-control` names it.
        super().__init__(stack, dict(env, WAYLAND_DISPLAY=env["DUET_TEST_DISPLAY"]), workdir)
        self.ctl = [own_program("tools", "duet-testctl", "DUET_TESTCTL")]

    def windows(self):
        return parse_windows(self.run(self.ctl + ["windows"]))

    def screenshot(self, path):
        self.run(self.ctl + ["sync"])
        self.run(self.ctl + ["screenshot", path])

    def resize(self, win, w, h):
        self.run(self.ctl + ["resize", win["id"], w, h])

    def close(self, win):
        self.run(self.ctl + ["close", win["id"]])

    def keys(self, win, chords):
        # One connection for them all: duet-testctl lets go of the keys
        # still down when it exits, so Ctrl pressed by one run would be up
        # before another pressed Q.
        lines = ["activate %s" % win["id"]]
        for chord in chords:
            lines += ["key %d 1" % k for k in chord]
            lines += ["key %d 0" % k for k in reversed(chord)] + ["sync"]
        self.run(self.ctl + ["-"], script="\n".join(lines) + "\n")

    def alive(self):
        self.run(self.ctl + ["sync"], timeout=10)


class X11(Control):
    """Any EWMH window manager (openbox, mutter --x11): duet-xctl reads the
    root window back (grab: what the compositing manager put on screen)
    and sends EWMH's requests; keys go through XTEST."""
    can = ("windows", "shots", "resize", "close", "keys")

    def __init__(self, stack, env, workdir):
        super().__init__(stack, env, workdir)
        self.ctl = [own_program("tools", "duet-xctl", "DUET_XCTL"), "--display", env["DISPLAY"]]

    def windows(self):
        return parse_windows(self.run(self.ctl + ["windows"]))

    def screenshot(self, path):
        self.run(self.ctl + ["windows"])
        time.sleep(0.3)  # xcompmgr, picom and mutter have no sync message
        self.run(self.ctl + ["grab", path])

    def resize(self, win, w, h):
        self.run(self.ctl + ["moveresize", win["id"], w, h])

    def close(self, win):
        self.run(self.ctl + ["close", win["id"]])

    def keys(self, win, chords):
        self.run(self.ctl + ["activate", win["id"]])
        time.sleep(0.2)
        for chord in chords:
            self.run(self.ctl + ["key"] + [k + 8 for k in chord])
            time.sleep(0.05)

    def alive(self):
        self.run(self.ctl + ["wait-wm", "2"], timeout=10)


class DuetXwm(X11):
    """duet-xwm: its own composited frame (_DUET_SCREENSHOT into the
    stack's private directory) and its own resize message (_DUET_RESIZE)."""

    def screenshot(self, path):
        self.run(self.ctl + ["sync"])
        self.run(self.ctl + ["screenshot", path])

    def resize(self, win, w, h):
        self.run(self.ctl + ["resize", win["id"], w, h])


# On the tiling WMs (i3, sway) a real client tiles (their configs, peers.py,
# float only duet's own apps) and a tile's size is the layout's: i3 ignores
# _NET_MOVERESIZE_WINDOW for a tiled window, and sway has no such request.
# The harness asks what a user's binding asks, in their common command
# language: float the window, then give it the size.
TILING_RESIZE = "%s floating enable, resize set %d px %d px"


class I3(X11):
    """i3: an EWMH WM for the window list, screenshots, close and keys;
    resize through its IPC (i3-msg finds i3's socket from the root
    window's I3_SOCKET_PATH)."""

    def resize(self, win, w, h):
        self.run(["i3-msg", TILING_RESIZE % ("[id=%d]" % win["id"], w, h)])


class Weston(Control):
    """weston's headless backend: no seat and no test plugin in Debian, so
    only screenshots (weston-screenshooter; weston runs with --debug)."""
    can = ("shots",)

    def screenshot(self, path):
        d = tempfile.mkdtemp(dir=self.workdir)
        subprocess.run(["weston-screenshooter"], cwd=d, env=self.env, capture_output=True,
                       timeout=30, check=False)
        files = os.listdir(d)
        if not files:
            raise Fail("weston-screenshooter wrote no file")
        os.replace(os.path.join(d, files[0]), path)
        os.rmdir(d)

    def alive(self):
        self.screenshot(os.path.join(self.workdir, "alive.png"))


class Sway(Control):
    """sway: its IPC (swaymsg on the sway-ipc.*.sock in its runtime
    directory) lists the windows, resizes (TILING_RESIZE) and closes them
    (`kill`: xdg_toplevel.close); grim reads the output (wlr-screencopy).
    Its headless backend has no input device: no keys."""
    can = ("windows", "shots", "resize", "close")

    def __init__(self, stack, env, workdir):
        super().__init__(stack, env, workdir)
        socks = sorted(glob.glob(os.path.join(env["XDG_RUNTIME_DIR"], "sway-ipc.*.sock")))
        if not socks:
            raise SystemExit("client-matrix: no sway-ipc.*.sock in %s" % env["XDG_RUNTIME_DIR"])
        self.env = dict(env, SWAYSOCK=socks[0])
        if not shutil.which("grim"):
            self.can = tuple(c for c in self.can if c != "shots")
            self.no = {"shots": "grim not installed (Debian: grim)"}

    def windows(self):
        wins = []

        def walk(node):
            if node.get("pid") and node.get("type") in ("con", "floating_con"):
                r, wr = node["rect"], node["window_rect"]
                wins.append({"id": node["id"], "pid": node["pid"], "x": r["x"] + wr["x"],
                             "y": r["y"] + wr["y"], "w": wr["width"], "h": wr["height"],
                             "app": node.get("app_id") or "", "title": node.get("name") or ""})
            for child in node.get("nodes", []) + node.get("floating_nodes", []):
                walk(child)
        walk(json.loads(self.run(["swaymsg", "-r", "-t", "get_tree"])))
        return wins

    def screenshot(self, path):
        self.run(["grim", path])

    def resize(self, win, w, h):
        self.run(["swaymsg", TILING_RESIZE % ("[con_id=%d]" % win["id"], w, h)])

    def close(self, win):
        self.run(["swaymsg", "[con_id=%d] kill" % win["id"]])

    def alive(self):
        wayland_roundtrip(self.env)


class Mutter(Control):
    """mutter --wayland --headless: no window list, no screenshot, no
    request that resizes or closes another client's window, no input
    device. A window's map is read from the client's own Wayland log
    (WAYLAND_DEBUG=client): its surface entered mutter's output, or, for a
    client that binds no wl_output, a frame callback it asked for with a
    buffer came back. survives: the server answers wl_display.sync."""
    can = ()
    client_env = {"WAYLAND_DEBUG": "client"}
    no = {"resize": "mutter has no interface by which another client resizes a window (that "
                    "is GNOME Shell's)",
          "close": "mutter has no interface by which another client closes a window (that "
                   "is GNOME Shell's)"}
    ENTER = re.compile(r"\] wl_surface@\d+\.enter\(")
    FRAME = re.compile(r" -> wl_surface@\d+\.frame\(new id wl_callback@(\d+)\)")
    DONE = re.compile(r"\] wl_callback@(\d+)\.done\(")

    def mapped(self, proc):
        """How the log shows the client's window on the output, or None."""
        try:
            with open(proc.log_path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return None
        if self.ENTER.search(text):
            return "wl_surface.enter: its surface is on mutter's output"
        attached = text.find(".attach(wl_buffer@")
        if attached < 0:
            return None
        frames = set()
        for line in text[attached:].splitlines():
            m = self.FRAME.search(line)
            if m:
                frames.add(m.group(1))
                continue
            m = self.DONE.search(line)
            if m and m.group(1) in frames:
                return "mutter answered its first buffer's frame callback"
        return None

    def alive(self):
        wayland_roundtrip(self.env)


class Column:
    """A stack's column: its title, its control, and what its Config (the
    launcher's) needs for the control."""

    def __init__(self, title, control, **config):
        self.title = title
        self.control = control
        self.config = config


COLUMNS = {
    "wayland": Column("duet-compositor", DuetWayland, test_protocol=True),
    "x11": Column("duet-xwm (Xvfb)", DuetXwm, shot_dir=True),
    # weston offers its screenshooter only with --debug.
    "weston": Column("weston", Weston, server_args=("--debug",)),
    "openbox": Column("openbox + xcompmgr (Xvfb)", X11),
    "mutter": Column("mutter", Mutter),
    "mutter-x11": Column("mutter --x11 (Xvfb)", X11),
    "sway": Column("sway", Sway),
    "i3": Column("i3 + picom (Xvfb)", I3),
}
STACKS = list(COLUMNS)


# ------------------------------------------------------------------ checks
def distinct_colors(img, x0, y0, x1, y1, limit=64):
    """Distinct colours in the rect (counting stops at limit), sampling
    every other pixel: enough to tell drawing from a fill."""
    seen = set()
    for y in range(max(0, y0), min(img.height, y1), 2):
        row = img.rows[y]
        for x in range(max(0, x0), min(img.width, x1), 2):
            seen.add(bytes(row[3 * x:3 * x + 3]))
            if len(seen) >= limit:
                return len(seen)
    return len(seen)


def diff_bbox(img, ref):
    """Bounding box of the pixels that differ between two screenshots."""
    x0 = y0 = 1 << 30
    x1 = y1 = -1
    for y in range(img.height):
        a, b = img.rows[y], ref.rows[y]
        if a == b:
            continue
        xs = [i // 3 for i in range(0, len(a), 3) if a[i:i + 3] != b[i:i + 3]]
        x0, x1 = min(x0, xs[0]), max(x1, xs[-1] + 1)
        y0, y1 = min(y0, y), max(y1, y + 1)
    return None if x1 < 0 else {"x": x0, "y": y0, "w": x1 - x0, "h": y1 - y0}


def last_words(proc):
    """': ' and the last line a client that exited wrote, for the reason."""
    try:
        with open(proc.log_path, "rb") as f:
            lines = [l.strip() for l in f.read()[-4000:].decode("utf-8", "replace").splitlines()
                     if l.strip()]
    except OSError:
        return ""
    # The last line that says what went wrong, if one does.
    # A client's WAYLAND_DEBUG lines ("[12.345]  -> wl_surface@3.attach(...)")
    # say nothing about why it ended.
    lines = [l for l in lines if not re.match(r"\[\s*\d+\.\d+\] ", l)] or lines
    said = [l for l in lines if re.search(r"err|fail|assert|cannot|can't|unable|abort", l, re.I)]
    lines = said or lines
    return (": " + lines[-1][:160]) if lines else ""


class Cell:
    def __init__(self):
        self.results = {}

    def set(self, check, status, why=""):
        if check not in self.results:  # the first verdict stands
            self.results[check] = {"status": status, "why": why}

    def skip_rest(self, why):
        for c in CHECKS:
            self.set(c, "skip", why)


class Runner:
    def __init__(self, stack, ctl, env, workdir):
        self.stack = stack
        self.system = stack_kinds.get(stack).window_system  # which build of a client runs
        self.ctl = ctl
        self.env = env
        self.workdir = workdir
        self.shot = 0
        self.image = self._image()
        self.bg = None  # without a window list: the screen just before a launch

    def _image(self):
        """A 256x192 gradient PPM for imv."""
        path = os.path.join(self.workdir, "matrix.ppm")
        w, h = 256, 192
        data = bytearray()
        for y in range(h):
            for x in range(w):
                data += bytes((x, (y * 4 // 3) & 255, (x + y) & 255))
        with open(path, "wb") as f:
            f.write(b"P6 %d %d 255\n" % (w, h) + bytes(data))
        return path

    def screenshot(self, label):
        self.shot += 1
        path = os.path.join(self.workdir, "%s-%03d-%s.png" % (self.stack, self.shot, label))
        self.ctl.screenshot(path)
        return pngread.read(path)

    def launch(self, spec):
        argv = [self.image if a == "@IMAGE@" else a for a in spec[self.system]]
        env = dict(self.env)
        env.update(spec["env"][self.system])
        env.update(self.ctl.client_env)
        home = os.path.join(self.workdir, "home")
        os.makedirs(home, exist_ok=True)
        # A private home: the caller's configs must not change what runs.
        env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
                   XDG_CACHE_HOME=os.path.join(home, ".cache"), SHELL="/bin/sh",
                   XENVIRONMENT=os.devnull, NO_AT_BRIDGE="1")
        err = open(os.path.join(self.workdir, "%s-%s.log" % (self.stack,
                                                              spec["name"].replace(" / ", "-"))),
                   "ab")
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                                start_new_session=True)
        proc.log_path = err.name
        return proc, err

    def stop(self, proc):
        for sig in (15, 9):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                proc.wait(3)
                return
            except subprocess.TimeoutExpired:
                pass

    def wait_window(self, proc, before):
        """The client's new window (or, without a window list, the changed
        area of the screen; with neither a list nor screenshots, what the
        control saw of it: "what")."""
        deadline = time.monotonic() + MAP_TIMEOUT
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise Fail("exited (status %d) before a window appeared%s"
                           % (proc.returncode, last_words(proc)))
            if "windows" in self.ctl.can:
                new = [w for w in self.ctl.windows() if w["id"] not in before
                       and w["w"] > 1 and w["h"] > 1]
                if new:
                    return new[0]
            elif "shots" in self.ctl.can:
                box = diff_bbox(self.screenshot("map"), self.bg)
                if box:
                    return dict(box, id=None)
            else:
                what = self.ctl.mapped(proc)
                if what:
                    return {"id": None, "what": what}
            time.sleep(0.3)
        raise Fail("no window within %.0f s" % MAP_TIMEOUT)

    def current(self, win):
        if win["id"] is None:
            return win
        for w in self.ctl.windows():
            if w["id"] == win["id"]:
                return w
        raise Fail("its window is gone")

    def check_pixels(self, proc, win, label):
        """Waits for the window's area to show more than one colour (without
        screenshots: its size only)."""
        if "shots" not in self.ctl.can:
            return win, "%dx%d, pixels not seen" % (win["w"], win["h"])
        deadline = time.monotonic() + PIXEL_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise Fail("exited (status %d)%s" % (proc.returncode, last_words(proc)))
            win = self.current(win)
            if win["id"] is None:  # weston: the changed area, from the latest screenshot
                img = self.screenshot(label)
                box = diff_bbox(img, self.bg) or win
                win = dict(box, id=None)
            else:
                img = self.screenshot(label)
            n = distinct_colors(img, win["x"], win["y"], win["x"] + win["w"], win["y"] + win["h"])
            if n >= 2:
                return win, "%dx%d, %s colours" % (win["w"], win["h"],
                                                   "64+" if n >= 64 else n)
            if time.monotonic() > deadline:
                raise Fail("%d colour(s) in its %dx%d window after %.0f s"
                           % (n, win["w"], win["h"], PIXEL_TIMEOUT))
            time.sleep(0.3)

    def wait_exit(self, proc, what, want=0):
        """want: the exit status it must have; None: any exit of its own."""
        try:
            status = proc.wait(EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise Fail("still running %.0f s after %s" % (EXIT_TIMEOUT, what))
        if status < 0 or (want is not None and status != want):
            raise Fail("exited with status %d after %s" % (status, what))
        return "exited %d after %s" % (status, what)

    def survives(self, cell):
        try:
            self.ctl.alive()
            cell.set("survives", "ok", "server answers")
        except (Fail, subprocess.TimeoutExpired) as e:
            cell.set("survives", "fail", str(e))
            raise

    def run_client(self, spec):
        cell = Cell()
        argv = spec[self.system]
        if isinstance(argv, str):
            cell.skip_rest(argv)
            return cell.results
        if not shutil.which(argv[0]):
            cell.skip_rest("%s not installed (Debian: %s)" % (argv[0], spec["package"]))
            return cell.results
        self.first_run(spec, cell)
        if cell.results.get("survives", {}).get("status") == "fail":
            cell.skip_rest("the server is gone")
            return cell.results
        if "close" not in cell.results:
            self.close_run(spec, cell)
        cell.skip_rest("not reached")
        return cell.results

    def settle(self):
        """Without a window list, a new window is what changes on screen
        after the launch. The reference is the screen once it stopped
        changing: weston with the bench's stub shell (no background
        surface) leaves closed windows' last pixels on screen, and fades
        windows out."""
        if "windows" in self.ctl.can or "shots" not in self.ctl.can:
            return
        deadline = time.monotonic() + 5
        self.bg = self.screenshot("settle")
        while time.monotonic() < deadline:
            time.sleep(0.3)
            img = self.screenshot("settle")
            if img.rows == self.bg.rows:
                break
            self.bg = img

    def first_run(self, spec, cell):
        """start, map, pixels, resize, then keys (which end the client);
        survives whatever happened."""
        self.settle()
        before = {w["id"] for w in self.ctl.windows()} if "windows" in self.ctl.can else set()
        proc, err = self.launch(spec)
        try:
            try:
                win = self.wait_window(proc, before)
            except Fail as e:
                cell.set("start" if proc.poll() is not None else "map", "fail", str(e))
                for c in CHECKS[:-1]:
                    cell.set(c, "skip", "no window")
                win = None
            if win is not None:
                self.checks_with_window(proc, win, spec, cell)
        finally:
            self.stop(proc)
            err.close()
        self.survives(cell)

    def checks_with_window(self, proc, win, spec, cell):
        cell.set("start", "ok", "running")
        cell.set("map", "ok", win.get("what") or "%dx%d window" % (win["w"], win["h"]))
        if "shots" not in self.ctl.can:
            cell.set("pixels", "skip", self.ctl.why("shots"))
        else:
            try:
                win, what = self.check_pixels(proc, win, "pixels")
                cell.set("pixels", "ok", what)
            except Fail as e:
                cell.set("pixels", "fail", str(e))
        self.resize(proc, win, spec, cell)
        self.keys(proc, win, spec, cell)

    def resize(self, proc, win, spec, cell):
        if "resize" not in self.ctl.can:
            cell.set("resize", "skip", self.ctl.why("resize"))
            return
        if spec["fixed_size"]:
            cell.set("resize", "skip", spec["fixed_size"])
            return
        w, h = (500, 400) if (win["w"], win["h"]) != (500, 400) else (560, 440)
        try:
            win = self.current(win)
            self.ctl.resize(win, w, h)
            deadline = time.monotonic() + PIXEL_TIMEOUT
            while True:
                cur = self.current(win)
                # Client-side decorations put the frame outside the geometry
                # on some stacks: the size must change toward the request.
                if abs(cur["w"] - w) <= 64 and abs(cur["h"] - h) <= 64:
                    break
                if proc.poll() is not None:
                    raise Fail("exited (status %d)%s" % (proc.returncode, last_words(proc)))
                if time.monotonic() > deadline:
                    raise Fail("asked %dx%d, still %dx%d after %.0f s"
                               % (w, h, cur["w"], cur["h"], PIXEL_TIMEOUT))
                time.sleep(0.2)
            cur, what = self.check_pixels(proc, cur, "resized")
            cell.set("resize", "ok", "asked %dx%d, got %s" % (w, h, what))
        except Fail as e:
            cell.set("resize", "fail", str(e))

    def keys(self, proc, win, spec, cell):
        if not spec["keys"]:
            cell.set("input", "skip", spec["why_no_keys"] or "no key to check")
            return
        if "keys" not in self.ctl.can:
            cell.set("input", "skip", self.ctl.why("keys"))
            return
        if proc.poll() is not None:
            cell.set("input", "fail", "exited (status %d) before the keys%s"
                     % (proc.returncode, last_words(proc)))
            return
        what = KEY_NAMES.get(id(spec["keys"]), "keys")
        try:
            win = self.current(win)
            if spec["keys_change"]:
                self.keys_change(proc, win, spec["keys"], what, cell)
                return
            self.ctl.keys(win, spec["keys"])
            # It quit on the keys: the server's close request needs a second run.
            cell.set("input", "ok", self.wait_exit(proc, what))
        except Fail as e:
            cell.set("input", "fail", str(e))

    def keys_change(self, proc, win, keys, what, cell):
        """The keys must change what the window shows."""
        def area(img):
            return [bytes(img.rows[y][3 * max(0, win["x"]):3 * (win["x"] + win["w"])])
                    for y in range(max(0, win["y"]), min(img.height, win["y"] + win["h"]))]
        # Settle first: a blinking cursor or animation would pass for a reaction.
        before = area(self.screenshot("before-keys"))
        time.sleep(1.0)
        if area(self.screenshot("before-keys")) != before:
            cell.set("input", "skip", "its window changes by itself; no key check")
            return
        self.ctl.keys(win, keys)
        deadline = time.monotonic() + 5
        while area(self.screenshot("after-keys")) == before:
            if time.monotonic() > deadline:
                raise Fail("its window did not change after %s" % what)
            time.sleep(0.3)
        cell.set("input", "ok", "%s changed its window" % what)

    def close_run(self, spec, cell):
        """close and survives, on a fresh start of the client."""
        if "close" not in self.ctl.can:
            cell.set("close", "skip", self.ctl.why("close"))
            return
        before = {w["id"] for w in self.ctl.windows()}
        proc, err = self.launch(spec)
        try:
            try:
                win = self.wait_window(proc, before)
                # A client may take a moment to map its first frame after
                # the window appears; closing earlier tests something else.
                self.check_pixels(proc, win, "before-close")
                self.ctl.close(self.current(win))
                cell.set("close", "ok", self.wait_exit(proc, "the close request",
                                                       spec["close_status"]))
            except Fail as e:
                cell.set("close", "fail", str(e))
        finally:
            self.stop(proc)
            err.close()
        self.survives(cell)


def inside(stack, names, out, workdir, env):
    """Runs the clients in the stack whose clients' environment is env."""
    ctl = COLUMNS[stack].control(stack, env, workdir)
    runner = Runner(stack, ctl, env, workdir)
    if "windows" in ctl.can and ctl.windows():
        raise SystemExit("client-matrix: %s is not empty at start" % stack)
    if "shots" in ctl.can:
        runner.bg = runner.screenshot("empty")
    results = {}
    for name in names:
        log("%s: %s" % (stack, name))
        try:
            results[name] = runner.run_client(BY_NAME[name])
        except (Fail, subprocess.TimeoutExpired) as e:
            # The server stopped answering: the rest of the column cannot run.
            results[name] = {"survives": {"status": "fail", "why": str(e)}}
            log("%s: %s: the server is gone: %s" % (stack, name, e))
            break
        log("%s: %s: %s" % (stack, name, " ".join(
            "%s=%s" % (c, results[name][c]["status"]) for c in CHECKS if c in results[name])))
    with open(out, "w") as f:
        json.dump(results, f, indent=1)


# ------------------------------------------------------------ the stacks
def client_env(st):
    """The clients' environment in stack st; duet-compositor's test socket
    in DUET_TEST_DISPLAY, as `duet run wayland --test-control` gives it."""
    env = dict(st.env)
    if st.trusted_env:
        env["DUET_TEST_DISPLAY"] = st.trusted_env["WAYLAND_DISPLAY"]
    return env


def run_stack(stack, names, workdir, size, env):
    """Starts the stack with duet_launch (as `duet run STACK --test-control`
    does for duet's own) on the base environment env, runs the clients in
    it, stops it."""
    config = launch_stack.Config(stack, size=size, refresh=None, **COLUMNS[stack].config)
    why = launch_stack.missing(config)
    if why:
        return {n: {c: {"status": "skip", "why": why} for c in CHECKS} for n in names}
    out = os.path.join(workdir, stack + ".json")
    st = launch_stack.Stack(config, workdir, env)
    try:
        try:
            st.start()
        except launch_stack.StackError as e:
            return {n: {"survives": {"status": "fail", "why": "the %s stack did not start: %s"
                                     % (stack, e)}} for n in names}
        inside(stack, names, out, workdir, client_env(st))
        dead = st.dead()
        if dead:
            log("%s: %s died" % (stack, dead.role))
    finally:
        st.stop()
        st.cleanup()
    with open(out) as f:
        return json.load(f)


# ------------------------------------------------------------ the table
def markdown(results, stacks, names):
    """One table per stack: a row per client, a column per check."""
    lines = []
    for stack in stacks:
        lines.append("### %s\n" % COLUMNS[stack].title)
        lines.append("| client | " + " | ".join(CHECKS) + " |")
        lines.append("|---" * (len(CHECKS) + 1) + "|")
        for n in names:
            cells = results.get(stack, {}).get(n, {})
            row = []
            for c in CHECKS:
                r = cells.get(c, {"status": "skip", "why": "not run"})
                why = r["why"].replace("|", "/").replace("\n", " ")
                row.append("%s: %s" % (r["status"], why) if r["status"] != "ok"
                           else "ok" if not why else "ok (%s)" % why)
            lines.append("| %s | %s |" % (n, " | ".join(row)))
        lines.append("")
    return "\n".join(lines)


def summary(results, stacks, names):
    """A compact table: one cell per client x stack."""
    lines = ["| client | " + " | ".join(COLUMNS[s].title for s in stacks) + " |",
             "|---" * (len(stacks) + 1) + "|"]
    for n in names:
        row = []
        for s in stacks:
            cells = results.get(s, {}).get(n, {})
            st = [cells.get(c, {}).get("status", "skip") for c in CHECKS]
            if all(x == "skip" for x in st):
                row.append("skip")
            else:
                fails = [c for c in CHECKS if cells.get(c, {}).get("status") == "fail"]
                oks = st.count("ok")
                row.append("**fail** (%s)" % ", ".join(fails) if fails
                           else "ok %d/%d" % (oks, len(CHECKS)))
        lines.append("| %s | %s |" % (n, " | ".join(row)))
    return "\n".join(lines)


def main(argv):
    p = argparse.ArgumentParser(prog="client-matrix", description=__doc__.split("\n\n")[0])
    p.add_argument("--stacks", default=",".join(STACKS),
                   help="comma-separated, of %s (default: all)" % ", ".join(STACKS))
    p.add_argument("--clients", default=",".join(c["name"] for c in CLIENTS))
    p.add_argument("--json", help="write the results here")
    p.add_argument("--markdown", help="write the tables here")
    p.add_argument("--update-doc", metavar="FILE.md",
                   help="replace the tables between FILE.md's matrix markers")
    p.add_argument("--size", default=SIZE)
    p.add_argument("--keep", action="store_true", help="keep the screenshots and logs")
    p.add_argument("--smoke", action="store_true",
                   help="the CI subset (%s on %s); fails if a cell regresses"
                   % (", ".join(SMOKE_CLIENTS), ", ".join(SMOKE_STACKS)))
    p.add_argument("--inside", choices=STACKS, help=argparse.SUPPRESS)
    p.add_argument("--workdir", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    names = [n for n in a.clients.split(",") if n]
    stacks_ = [s for s in a.stacks.split(",") if s]
    if a.smoke:
        names, stacks_ = SMOKE_CLIENTS, SMOKE_STACKS
    bad = [n for n in names if n not in BY_NAME] + [s for s in stacks_ if s not in STACKS]
    if bad:
        p.error("unknown: %s (clients: %s)" % (", ".join(bad), ", ".join(BY_NAME)))
    if a.inside:
        # In a stack started for this process: `duet run STACK --test-control --
        # client_matrix.py --inside STACK ...`.
        inside(a.inside, names, a.json, a.workdir, dict(os.environ))
        return 0
    env = dict(os.environ)
    env.setdefault("GALLIUM_DRIVER", "llvmpipe")
    env.setdefault("LIBGL_ALWAYS_SOFTWARE", "1")
    env.setdefault("EVAS_GL_NO_BLACKLIST", "1")
    workdir = tempfile.mkdtemp(prefix="duet-client-matrix-")
    results = {}
    try:
        for stack in stacks_:
            d = os.path.join(workdir, stack)
            os.mkdir(d)
            results[stack] = run_stack(stack, names, d, a.size, env)
    finally:
        if a.keep:
            log("screenshots and logs kept in %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    text = summary(results, stacks_, names) + "\n\n" + markdown(results, stacks_, names)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    elif a.update_doc:
        update_doc(a.update_doc, text, a.size)
    else:
        print(text)
    failed = any(r.get("status") == "fail" for st in results.values() for cell in st.values()
                 for r in cell.values())
    if a.smoke:
        return smoke_verdict(results)
    return 1 if failed else 0


BEGIN, END = "<!-- client matrix begin -->", "<!-- client matrix end -->"


def update_doc(path, tables, size):
    with open(path) as f:
        doc = f.read()
    i, j = doc.find(BEGIN), doc.find(END)
    if i < 0 or j < i:
        raise SystemExit("client-matrix: %s has no %s ... %s markers" % (path, BEGIN, END))
    stamp = "Generated by `scripts/client-matrix` on %s, output %s.\n\n" % (
        time.strftime("%Y-%m-%d"), size)
    with open(path, "w") as f:
        f.write(doc[:i + len(BEGIN)] + "\n" + stamp + tables + doc[j:])
    log("%s updated" % path)


def smoke_verdict(results):
    """meson's status: 1 if a cell is not what it was when the test was
    written (ok, or the skips the client or stack explain), 77 if a client
    is not installed (outside CI)."""
    missing = [n for n in SMOKE_CLIENTS if not shutil.which(BY_NAME[n]["wayland"][0])]
    if missing:
        print("%s not installed" % ", ".join(missing))
        return 1 if os.environ.get("CI") == "true" else 77
    bad = []
    for stack in SMOKE_STACKS:
        for name in SMOKE_CLIENTS:
            for check in CHECKS:
                got = results.get(stack, {}).get(name, {}).get(check, {"status": "missing"})
                want = SMOKE_SKIPS.get((name, stack, check), "ok")
                if got["status"] != want:
                    bad.append("%s on %s: %s %s (want %s): %s"
                               % (name, stack, check, got["status"], want, got.get("why", "")))
    for line in bad:
        print("REGRESSED: " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
