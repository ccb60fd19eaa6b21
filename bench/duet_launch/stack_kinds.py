"""The kinds of display stack duet compares, and everything that differs
between them, as data: the processes each runs (by role, in start order)
and when each is ready, what it can do, who reports what. Code asks a
stack's kind (Stack.spec) instead of comparing stack names; how each kind
starts is Stack._start_<name> (stack.py). `duet run`, `duet bench`, the
integration tests and the client matrix all start stacks from this table.

    wayland    duet-compositor                       server
    x11        Xvfb (or Xorg) + duet-xwm              server, wm
    weston     weston's headless backend              server
    openbox    Xvfb (or Xorg) + openbox + xcompmgr    server, wm, compositor
    e-x11      Xvfb + Enlightenment                   server, wm
    e-wayland  Enlightenment's Wayland compositor     server
    xwayland   duet-compositor --xwayland             server (+ Xwayland, its child)
    weston-xwayland  weston --xwayland                server (+ Xwayland, its child)
    mutter     mutter --wayland --headless (GNOME)    server
    mutter-x11 Xvfb + mutter --x11                    server, wm
    mutter-xwayland  mutter --wayland --headless      server (+ Xwayland, its child)
    sway-xwayland    sway, headless, Xwayland          server (+ Xwayland, its grandchild)
    sway       sway, headless (an unprivileged user)  server
    i3         Xvfb + i3 + picom                      server, wm, compositor

A kind has two window systems: its apps' (window_system: the apps'
--backend, DISPLAY or WAYLAND_DISPLAY) and its server's (server_system).
They differ on the Xwayland stacks: the apps are X clients of an Xwayland
that the Wayland server starts on the first X connection (its X window
manager inside the server), so the processes that answer an app are the
server and Xwayland (the "xwayland" role, found as the server's child).
"""
import dataclasses
from typing import Optional

# Who tells when the compositor showed a frame (timeline.py).
TRACE = "trace"                      # duet's servers: "composited" events in DUET_TRACE
WESTON_TIMELINE = "weston-timeline"  # weston's "timeline" log scope
OBSERVER = "observer"                # nobody: the bench's observer watches the framebuffer
PRESENTATION = "presentation"        # the server's wp_presentation feedback, as the app got it
WLR_TRACE = "wlr-trace"              # bench/probes/wlr-trace.c in a wlroots server: duet's trace lines

# How a stack's compositor paces its painting (StackKind.pace).
PACE_REFRESH = "refresh"
PACE_OUTPUT = "output"
PACE_DAMAGE = "damage"
OUTPUT_HZ = 60  # every peer's output here: weston's, mutter's and sway's headless modes, Xvfb's

# Who counts the app's protocol messages besides the app itself (ipc.py).
SERVER_LOG = "server-log"            # duet-compositor's protocol log, per client
WM_LOG = "wm-log"                    # duet-xwm's log of its own X connection
SERVER_DEBUG = "server-debug"        # weston under WAYLAND_DEBUG=server (every client)

# A framebuffer another process reads (the vfb experiment).
VFB_FILE = "vfb-file"                # duet-compositor --vfb, linear or tiled
XVFB_SHMEM = "xvfb-shmem"            # Xvfb -shmem, linear

# Entries of StackKind.programs that stand for several programs.
X_SERVER = "X server"                # Xvfb, or Xorg (stacks.x_server)
E_PROGRAMS = "Enlightenment"         # enlightenment.needs()

BUFFERS = "client buffers imported by the server (wl_shm or EGL)"
XWAYLAND = "xwayland"               # the role of the Xwayland a server started
XWAYLAND_PATH = ("X clients' windows: Xwayland's wl_shm buffers (its glamor is off without "
                 "a GPU), imported by the Wayland server")
E_HEADLESS = "the Enlightenment stacks run headless only"
PEER_HEADLESS = "the GNOME and sway/i3 stacks run headless only (so far)"
SESSION_BUS = ("dbus-daemon", "deb", "dbus")  # mutter wants a session bus; one per stack
# How an X compositing manager that is not duet's gets window contents.
PICOM_PATH = "picom --backend xrender: XRender compositing inside the X server"
MUTTER_X11_PATH = ("mutter (cogl): each window's pixmap as a GL texture (GLX "
                   "texture-from-pixmap on Mesa's software GLX)")


@dataclasses.dataclass(frozen=True)
class StackKind:
    name: str
    window_system: str          # "wayland" or "x11": the apps' --backend, results.json's "kind"
    compositor_role: str        # the role of the process that composites
    composited: Optional[str]   # who tells when it composited: TRACE, WESTON_TIMELINE, OBSERVER
    composited_source: str      # that source as results.json names it
    renderer: Optional[str]     # what draws its frames; None: duet bench --renderer's engine
    content_path: Optional[str]  # how window contents reach it; None: duet-xwm reports it
    # (role, process, when it is ready), in start order: what Stack.start runs.
    processes: tuple = ()
    # What it runs: (name, "own", build subdir), (name, "deb", Debian package)
    # or (module, "weston-module", Debian package): a module weston loads,
    # X_SERVER or E_PROGRAMS, in that order in results.json.
    programs: tuple = ()
    quick: bool = False         # among --quick's default stacks
    # Among a full run's default stacks: the pairs a user deciding between
    # the architectures most needs, the same software on both (duet's two
    # servers, GNOME's mutter, sway and i3); every other stack by name.
    default: bool = False
    slow: bool = False          # full runs without --reps give it Experiment.slow_reps
    on_xorg: bool = False       # its X server is Xorg where the X server is (stacks.x_server)
    protocol: Optional[str] = None  # SERVER_LOG, WM_LOG, SERVER_DEBUG; None: the app's counts
    xtrace: bool = False        # its WM and compositor count nothing: xtrace proxies count them
    framebuffer: Optional[str] = None  # VFB_FILE, XVFB_SHMEM; None: the vfb experiment skips it
    no_keys: Optional[str] = None  # why duet-inject cannot press a key on it
    kms_why_not: Optional[str] = None  # why it does not run on a KMS display
    run: bool = True            # `duet run` offers it
    no_screenshot: Optional[str] = None  # why Config.screenshot cannot be had (duet run)
    no_wm_roundtrip: Optional[str] = None  # why duet-roundtrip wm cannot run on its X WM
    # The user it runs as: None (the caller), or PEER_USER where the
    # program refuses root (sway) and the caller is root.
    user: Optional[str] = None
    # Environment its apps need on this server (DUET_PRESENTATION).
    app_env: tuple = ()
    # The rate its compositor is set to paint at: PACE_REFRESH (duet's
    # servers: Config.refresh, 0 = on every damage), PACE_OUTPUT (its
    # output's mode: 60 Hz) or PACE_DAMAGE (no frame clock: it paints on
    # every damage event, as fast as the damage comes).
    pace: str = "output"
    # Its apps are X clients of an Xwayland the Wayland server starts
    # (role XWAYLAND); window_system is then "x11", server_system "wayland".
    xwayland: bool = False

    @property
    def server_system(self):
        """The display server's own protocol: "wayland" or "x11"."""
        return "wayland" if self.xwayland else self.window_system

    @property
    def vfb_server(self):
        """Its server is duet-compositor, which can copy each frame to a
        --vfb file (the input experiment's observer reads it)."""
        return self.framebuffer == VFB_FILE or (self.xwayland and self.composited == TRACE)

    @property
    def observed(self):
        """Nobody tells when it composited: the bench's observer watches."""
        return self.composited == OBSERVER

    @property
    def paints_untold(self):
        """An X server's compositing manager that tells no one how many
        output frames it painted (the observer's stacks; mutter's
        _NET_WM_FRAME_DRAWN answers each X frame it took, several per
        paint): duet-paint-count counts them (duet_bench.paint_count)."""
        return self.server_system == "x11" and self.composited in (OBSERVER, PRESENTATION)

    @property
    def enlightenment(self):
        return E_PROGRAMS in self.programs


TABLE = [
    StackKind("wayland", "wayland", "server", TRACE, "duet-compositor trace", None, BUFFERS,
              programs=(("duet-compositor", "own", "compositor"),), quick=True,
              default=True,
              processes=(("server", "duet-compositor",
                          "it prints WAYLAND_DISPLAY=NAME once it listens"),),
              protocol=SERVER_LOG, framebuffer=VFB_FILE, pace=PACE_REFRESH),
    StackKind("x11", "x11", "wm", TRACE, "duet-xwm trace", None, None,
              programs=(X_SERVER, ("duet-xwm", "own", "xwm"), ("xprop", "deb", "x11-utils")),
              quick=True, on_xorg=True, protocol=WM_LOG, framebuffer=XVFB_SHMEM,
              pace=PACE_REFRESH,
              default=True,
              processes=(("server", "Xvfb or Xorg", "it reports its display number on -displayfd"),
                         ("wm", "duet-xwm", "it set _NET_SUPPORTING_WM_CHECK"))),
    StackKind("weston", "wayland", "server", WESTON_TIMELINE, "weston timeline scope", None,
              BUFFERS, programs=(("weston", "deb", "weston"),), quick=True,
              protocol=SERVER_DEBUG, run=False,
              processes=(("server", "weston", "its Wayland socket exists"),),
              no_keys="not measurable: weston's headless backend has no wl_seat, so no client "
                      "can receive a key, and Debian's weston ships no test module to inject one",
              kms_why_not="weston on KMS: Debian's weston 10 starts its DRM backend only "
                          "through logind (built without libseat), which the guest has not"),
    StackKind("openbox", "x11", "compositor", OBSERVER, "observer (Xvfb -fbdir)", "xrender",
              "xcompmgr -c: XRender compositing inside the X server",
              programs=(X_SERVER, ("openbox", "deb", "openbox"), ("xcompmgr", "deb", "xcompmgr"),
                        ("xprop", "deb", "x11-utils"), ("duet-xctl", "own", "tools")),
              quick=True, on_xorg=True, xtrace=True, run=False, pace=PACE_DAMAGE,
              processes=(("server", "Xvfb or Xorg", "it reports its display number on -displayfd"),
                         ("wm", "openbox", "it set _NET_SUPPORTING_WM_CHECK and handles events"),
                         ("compositor", "xcompmgr -c", "it owns _NET_WM_CM_S0"))),
    StackKind("e-x11", "x11", "wm", OBSERVER, "observer (Xvfb -fbdir)", "evas-software", BUFFERS,
              programs=(E_PROGRAMS, ("Xvfb", "deb", "xvfb"), ("duet-xctl", "own", "tools")),
              slow=True, kms_why_not=E_HEADLESS,
              processes=(("server", "Xvfb", "it reports its display number on -displayfd"),
                         ("wm", "enlightenment_start (E its child)", "E owns _NET_WM_CM_S0"))),
    StackKind("e-wayland", "wayland", "server", None, "none (not observable)", "evas-software",
              BUFFERS, programs=(E_PROGRAMS,), slow=True,
              no_keys="not measurable: Enlightenment's Wayland compositor offers a wl_seat, but "
                      "its buffer output has no input device behind it and E has no protocol to "
                      "inject a key; its output cannot be observed either",
              kms_why_not=E_HEADLESS,
              processes=(("server", "enlightenment_start (E its child)",
                          "its wayland-0 socket exists"),)),
]
WESTON_XWAYLAND_KEYS = ("not measurable: weston's headless backend has no wl_seat, so no "
                        "key reaches Xwayland, and Debian's weston ships no test module to "
                        "inject one")
XWAYLAND_PROCESSES = ("xwayland", "Xwayland (the server's child)",
                      "its X window manager set _NET_SUPPORTING_WM_CHECK (the first X "
                      "connection, the launcher's check, starts it)")
TABLE += [
    StackKind("xwayland", "x11", "server", TRACE, "duet-compositor trace (Xwayland's client)",
              None, XWAYLAND_PATH,
              programs=(("duet-compositor", "own", "compositor"), ("Xwayland", "deb", "xwayland"),
                        ("xprop", "deb", "x11-utils")),
              xwayland=True, protocol=SERVER_LOG, pace=PACE_REFRESH,
              kms_why_not="the Xwayland stacks run headless only (so far)",
              processes=(("server", "duet-compositor --xwayland",
                          "it prints DISPLAY=:N, then WAYLAND_DISPLAY=NAME once it listens"),
                         XWAYLAND_PROCESSES)),
    StackKind("weston-xwayland", "x11", "server", WESTON_TIMELINE,
              "weston timeline scope (Xwayland's surfaces)", None, XWAYLAND_PATH,
              programs=(("weston", "deb", "weston"), ("xwayland.so", "weston-module",
                                                       "libweston-10-0"),
                        ("Xwayland", "deb", "xwayland"), ("xprop", "deb", "x11-utils")),
              xwayland=True, protocol=SERVER_DEBUG, no_keys=WESTON_XWAYLAND_KEYS,
              no_wm_roundtrip="weston's X window manager does not answer "
                              "_NET_REQUEST_FRAME_EXTENTS (not in its _NET_SUPPORTED), the "
                              "request duet-roundtrip wm times",
              no_screenshot="weston's headless backend writes no screenshot (its screenshooter "
                            "needs a client with weston's private protocol)",
              kms_why_not=TABLE[2].kms_why_not,
              processes=(("server", "weston --xwayland",
                          "its Wayland socket exists and it logged its X display"),
                         XWAYLAND_PROCESSES)),
]
PEER_USER = "duet-peer"  # created by the launcher where missing (peer_user.py)
KINDS_NO_KEYS_SWAY = ("not measurable: sway's headless backend has no input device "
                      "(WLR_LIBINPUT_NO_DEVICES) and duet-inject speaks no wlroots protocol")
SWAY_NO_SCREENSHOT = "sway's output is read with wlr-screencopy (grim), not installed by duet"
MUTTER_NO_KEYS = ("not measurable: mutter's headless backend has no input device, and "
                  "plain mutter offers no protocol to inject a key")
TABLE += [
    StackKind("mutter", "wayland", "server", PRESENTATION,
              "wp_presentation feedback (mutter's presented time, as the app received it)",
              "gl", BUFFERS, programs=(("mutter", "deb", "mutter"), SESSION_BUS),
              no_keys=MUTTER_NO_KEYS, kms_why_not=PEER_HEADLESS,
              no_screenshot="plain mutter has no screenshot interface (GNOME Shell's D-Bus "
                            "API is the shell's, not mutter's)",
              default=True,
              processes=(("server", "mutter --wayland --headless --no-x11",
                          "its Wayland socket accepts"),)),
    # Its composited point is mutter's own, as on Wayland: the
    # _NET_WM_FRAME_DRAWN of the frame that first held the window. The
    # observer waits for the window's exact colour, which mutter's default
    # plugin shows only at the end of its 250 ms map animation (fade and
    # scale), where wp_presentation on Wayland gives the animation's first
    # frame: the two would not measure the same point.
    StackKind("mutter-x11", "x11", "wm", PRESENTATION,
              "mutter's _NET_WM_FRAME_DRAWN (its compositing manager's, as the X app received it)",
              "gl", MUTTER_X11_PATH,
              programs=(X_SERVER, ("mutter", "deb", "mutter"), SESSION_BUS,
                        ("xprop", "deb", "x11-utils"), ("duet-xctl", "own", "tools")),
              xtrace=True, kms_why_not=PEER_HEADLESS,
              default=True,
              processes=(("server", "Xvfb", "it reports its display number on -displayfd"),
                         ("wm", "mutter --x11 --replace",
                          "it owns _NET_WM_CM_S0 and handles events"))),
    StackKind("sway", "wayland", "server", WLR_TRACE,
              "wlroots output tracer (libduet-wlr-trace.so preloaded into sway)", "pixman",
              BUFFERS, programs=(("sway", "deb", "sway"),), user=PEER_USER,
              app_env=(("DUET_PRESENTATION", "frame-callback"),),
              no_keys=KINDS_NO_KEYS_SWAY, no_screenshot=SWAY_NO_SCREENSHOT,
              kms_why_not=PEER_HEADLESS,
              default=True,
              processes=(("server", "sway (WLR_BACKENDS=headless)",
                          "its Wayland socket accepts"),)),
    StackKind("i3", "x11", "compositor", OBSERVER, "observer (Xvfb -fbdir)", "xrender",
              PICOM_PATH,
              programs=(X_SERVER, ("i3", "deb", "i3-wm"), ("picom", "deb", "picom"),
                        ("xprop", "deb", "x11-utils"), ("duet-xctl", "own", "tools")),
              xtrace=True, kms_why_not=PEER_HEADLESS,
              default=True,
              pace=PACE_DAMAGE,  # picom 9.1 without vsync: paints on damage (118 Hz seen)
              processes=(("server", "Xvfb", "it reports its display number on -displayfd"),
                         ("wm", "i3", "it set _NET_SUPPORTING_WM_CHECK and handles events"),
                         ("compositor", "picom", "it owns _NET_WM_CM_S0"))),
]
TABLE += [
    StackKind("mutter-xwayland", "x11", "server", PRESENTATION,
              "mutter's _NET_WM_FRAME_DRAWN (its X window manager's, as the X app received it)",
              "gl", XWAYLAND_PATH,
              programs=(("mutter", "deb", "mutter"), SESSION_BUS, ("Xwayland", "deb", "xwayland"),
                        ("xprop", "deb", "x11-utils")),
              xwayland=True, no_keys=MUTTER_NO_KEYS, kms_why_not=PEER_HEADLESS,
              no_screenshot=TABLE[-4].no_screenshot,
              processes=(("server", "mutter --wayland --headless",
                          "it logged its X display and its Xwayland's X window manager set "
                          "_NET_SUPPORTING_WM_CHECK"), XWAYLAND_PROCESSES)),
]
TABLE += [
    StackKind("sway-xwayland", "x11", "server", WLR_TRACE,
              "wlroots output tracer (Xwayland's surfaces, in sway)", "pixman", XWAYLAND_PATH,
              programs=(("sway", "deb", "sway"), ("Xwayland", "deb", "xwayland"),
                        ("xprop", "deb", "x11-utils"), ("duet-xctl", "own", "tools")),
              user=PEER_USER, xwayland=True, kms_why_not=PEER_HEADLESS,
              no_keys=KINDS_NO_KEYS_SWAY, no_screenshot=SWAY_NO_SCREENSHOT,
              processes=(("server", "sway (WLR_BACKENDS=headless)",
                          "its Wayland socket accepts, its X display's lock file holds its pid, "
                          "and its Xwayland admitted the apps' user"),
                         ("xwayland", "Xwayland (sway's grandchild)",
                          "its X window manager set _NET_SUPPORTING_WM_CHECK"))),
]
KINDS = {k.name: k for k in TABLE}
NAMES = [k.name for k in TABLE]
QUICK = [k.name for k in TABLE if k.quick]
DEFAULT = [k.name for k in TABLE if k.default]
RUN = [k.name for k in TABLE if k.run]


def get(name):
    return KINDS[name]
