"""How the peers people switch between start (stack_kinds: mutter,
mutter-x11, mutter-xwayland, sway, sway-xwayland, i3), each as its users
run it: GNOME's mutter as a headless Wayland compositor (hosting its
Xwayland or not) and as the X11 window and compositing manager of an Xvfb,
each with a session bus of its own; sway headless (hosting Xwayland or
not); i3 with picom on an Xvfb. Stack (stack.py) takes these as its
_start_<kind>.

What each is given, and why:
  - the measured apps float on the tiling window managers (sway, i3: a
    for_window rule matching duet's app ids), so that they keep the size
    they ask for, as on every other stack; every other window tiles;
  - no bar, panel or background client, as weston runs here without its
    desktop shell client: what is measured is the server, not a panel;
  - sway refuses to run as root: as root, the launcher runs it as the
    unprivileged user stack_kinds.PEER_USER, made where missing
    (peer_user.py); its XDG_RUNTIME_DIR is that user's, and the apps
    (root) reach its socket there;
  - sway's headless output reports no frame as presented (wlroots 0.15
    discards every wp_presentation feedback there), so its apps are told
    to take the frame callback (StackKind.app_env: DUET_PRESENTATION).
"""
import glob
import os
import pwd
import re
import shutil
import stat
import subprocess
import tempfile

from duet_launch import displays, paths, peer_user, proc
from duet_launch.errors import StackError

# i3 (v4 config) and sway take the same rule; i3 matches WM_CLASS, sway the
# xdg app_id, both duet's app names ("duet-launch", ...).
I3_CONFIG = """# i3 config file (v4), written by duet_launch (peers.py): i3's defaults,
# no bar; duet's measured apps float at the size they ask for.
font fixed
for_window [class="^duet-"] floating enable
"""
SWAY_CONFIG = """# sway config, written by duet_launch (peers.py): sway's defaults, no bar,
# {xwayland}; duet's measured apps float.
output HEADLESS-1 mode {size}@{hz}Hz
xwayland {xwayland_mode}
for_window [app_id="^duet-"] floating enable
for_window [class="^duet-"] floating enable
"""
# picom with no configuration file of the user's: its defaults (backend
# xrender, no shadows, no fading, no vsync).
PICOM_CONFIG = "# picom.conf, written by duet_launch (peers.py): picom's defaults\n"


def reachable(path):
    """Lets other users pass through path's directories (search, not
    list: o+x) where this process owns them: the bench's scratch
    directories are 0700, and a peer running as another user writes its
    IPC counts into one of them."""
    path = os.path.abspath(path)
    while path != "/":
        st = os.stat(path)
        if st.st_uid == os.geteuid() and not st.st_mode & stat.S_IXOTH:
            os.chmod(path, stat.S_IMODE(st.st_mode) | stat.S_IXOTH)
        path = os.path.dirname(path)


class PeerStarts:
    """Stack's starters for the peer kinds (a mixin of stack.Stack)."""

    def _helper(self, role, argv, env, **kw):
        """A process the stack needs but does not measure (a session bus):
        stopped after the measured ones (stop_helpers), not in pids()."""
        kw.setdefault("log_path", os.path.join(self.dir, role + ".log"))
        child = proc.Child(role, argv, env, **kw)
        self.helpers.append(child)
        return child

    def stop_helpers(self):
        """Stops the helpers, after the measured processes."""
        for c in reversed(self.helpers):
            c.stop(self.config.grace)
        self.helpers = []

    def drop_peer_dirs(self):
        """Removes the directories made for a peer's user (sway's runtime
        directory), once every process is gone."""
        for d in self.peer_dirs:
            shutil.rmtree(d, ignore_errors=True)
        self.peer_dirs = []

    def session_bus(self, env):
        """A dbus-daemon of the stack's own (mutter's, E's: Session's
        start_bus), stopped with the helpers; returns env with its
        address."""
        bus = self._helper("bus", [self.program("dbus-daemon"), "--session", "--nofork",
                                   "--print-address=1"], env, lines=True,
                           stdout_path=os.path.join(self.dir, "bus.stdout.log"))
        try:
            i, _ = bus.wait_line(r"^unix:", timeout=self.patience(10))
        except proc.LineTimeout as e:
            raise StackError("the session bus did not start: %s" % e)
        return dict(env, DBUS_SESSION_BUS_ADDRESS=bus.lines[i].strip())

    def _home(self, owner=None):
        home = os.path.join(self.dir, "home")
        os.makedirs(home, exist_ok=True)
        if owner:
            os.chown(home, *owner)
        return home

    # -------------------------------------------------------------- mutter
    def _start_mutter(self, xwayland=False):
        sock = displays.wayland_socket("mutter")
        env = self.session_bus(dict(self.server_env(), HOME=self._home()))
        self.spawn("server", [self.program("mutter"), "--wayland", "--headless"] +
                   ([] if xwayland else ["--no-x11"]) +
                   ["--sm-disable", "--virtual-monitor", self._mode(),
                    "--wayland-display", sock] + list(self.config.server_args), env)
        self._wait_socket(sock)
        self.display = sock
        self.env = dict(self.base_env, WAYLAND_DISPLAY=sock)
        self.notes.append("mutter --wayland --headless%s: a virtual monitor of %s, its own "
                          "session bus, no GNOME Shell" % ("" if xwayland else " --no-x11",
                                                           self._mode()))

    def _start_mutter_xwayland(self):
        """mutter with its Xwayland, which it starts with itself: it takes
        the first two free X displays from :0 (the second for its own
        services) and logs the first; its X clients need the Xauthority
        file it writes in the runtime directory, as a GNOME session hands
        it to them (XAUTHORITY)."""
        self._start_mutter(xwayland=True)
        log = self.procs["server"].log_path
        found = {}

        def announced():
            m = re.search(r"Using public X11 display (:\d+)", proc.read_tail(log, 100000))
            auth = glob.glob(os.path.join(self.runtime, ".mutter-Xwaylandauth.*"))
            if m and auth:
                found.update(display=m.group(1), auth=auth[0])
            return bool(found)
        self.wait("mutter to log its X display and write its Xauthority", announced)
        self.x_display = found["display"]
        self.env["XAUTHORITY"] = found["auth"]
        self._xwayland_up("mutter")

    def _mode(self):
        """WxH@HZ: the output's mode at the stack's refresh (60 by default:
        mutter's and sway's headless outputs paint at their mode's rate)."""
        hz = self.refresh if self.refresh else 60
        if self.refresh not in (None, 60):
            self.notes.append("%s's output runs at %d Hz (its mode's rate)" % (self.name, hz))
        return "%s@%d" % (self.size, hz)

    def _start_mutter_x11(self):
        self._start_x_server()
        env = self.session_bus(dict(self.server_env(), DISPLAY=self.display,
                                     HOME=self._home()))
        self.spawn("wm", [self.program("mutter"), "--x11", "--replace", "--sm-disable"] +
                   list(self.config.wm_args), self.wm_env(env))
        self.wait("mutter to manage %s" % self.display, self._wm_ready)
        self.wait("mutter to own _NET_WM_CM_S0", self._cm_ready)
        self.wait("mutter to handle events", self._wm_loop_ready)
        self.notes.append("mutter --x11 --replace: window and compositing manager in one "
                          "process, its own session bus, no GNOME Shell")
        if self.config.screenshot:
            self._grab_on_stop(self.display, self.env)

    # -------------------------------------------------------------- sway
    def _start_sway(self, xwayland=False):
        owner = peer_user.ensure(self.spec.user) if os.geteuid() == 0 else None
        self.peer_owner = owner
        kw = {}
        if owner:
            uid, gid = owner
            # The user's runtime directory (its HOME and config inside),
            # made where the user can reach it: the stack's directory is
            # root's; the IPC counter in sway writes its dumps beside the
            # others'.
            self.runtime = tempfile.mkdtemp(prefix="duet-%s-" % self.spec.user)
            self.peer_dirs.append(self.runtime)
            os.chown(self.runtime, uid, gid)
            self.base_env["XDG_RUNTIME_DIR"] = self.runtime
            if self.counting:
                reachable(self.counting)
                os.chmod(self.counting, 0o1777)
            kw = {"user": uid, "group": gid, "extra_groups": []}
        home = os.path.join(self.runtime, "home") if owner else self._home()
        os.makedirs(home, exist_ok=True)
        conf = os.path.join(home, "sway.config")
        with open(conf, "w") as f:
            f.write(SWAY_CONFIG.format(
                size=self.size, hz=self._mode().split("@")[1],
                xwayland="Xwayland started at the first X client (sway's default)"
                if xwayland else "no Xwayland (the sway stack is native Wayland)",
                xwayland_mode="enable" if xwayland else "disable"))
        if owner:
            os.chown(home, *owner)
            os.chown(conf, *owner)
            self.notes.append("sway runs as the unprivileged user %s (it refuses root)"
                              % self.spec.user)
        env = dict(self.server_env(), HOME=home, WLR_BACKENDS="headless",
                   WLR_LIBINPUT_NO_DEVICES="1", WLR_HEADLESS_OUTPUTS="1")
        env = self._wlr_trace(env, owner)
        for k in ("WAYLAND_DISPLAY", "DISPLAY", "WAYLAND_SOCKET", "SWAYSOCK"):
            env.pop(k, None)
        self.spawn("server", [self.program("sway"), "-c", conf] + list(self.config.server_args),
                   env, **kw)
        # sway names its socket itself: the first free wayland-N of its
        # runtime directory, which is the stack's own.
        found = []

        def listening():
            found[:] = [n for n in sorted(os.listdir(self.runtime))
                        if n.startswith("wayland-") and not n.endswith(".lock") and
                        displays.accepting(os.path.join(self.runtime, n))]
            return bool(found)
        self.wait("sway's Wayland socket in %s" % self.runtime, listening)
        self.display = found[0]
        self.env = dict(self.base_env, WAYLAND_DISPLAY=found[0], **dict(self.spec.app_env))
        self.notes.append("sway: headless backend, one output at %s, no bar, %s; its "
                          "presentation feedback is never 'presented' there, so its Wayland "
                          "apps take the frame callback (DUET_PRESENTATION=frame-callback)"
                          % (self._mode(), "Xwayland at the first X client" if xwayland
                             else "no Xwayland"))

    def _start_sway_xwayland(self):
        """sway with its Xwayland, started at the first X connection
        (sway's default, lazy). wlroots binds the X display's sockets
        itself (its lock file holds sway's pid) and starts Xwayland as a
        grandchild; that Xwayland admits only its own user's clients, so
        sway's user (duet-peer, as root) admits the apps' (duet-xctl
        admit-user, as `xhost +si:localuser:` would), its connection being
        the first, which starts Xwayland."""
        self._start_sway(xwayland=True)
        pid = self.procs["server"].pid
        found = []

        def locked():
            for path in glob.glob("/tmp/.X*-lock"):
                try:
                    # "%10d" and a newline, or (wlroots') a NUL.
                    with open(path) as f:
                        if re.sub(r"\D", "", f.read()) == str(pid):
                            found[:] = [":" + re.sub(r"\D", "", os.path.basename(path))]
                except (OSError, ValueError):
                    continue
            return bool(found)
        self.wait("sway's X display (a lock file with its pid)", locked)
        self.x_display = found[0]
        self.env.pop("DUET_PRESENTATION", None)  # its X apps take what its X WM offers
        if self.peer_owner:
            me = pwd.getpwuid(os.geteuid()).pw_name
            uid, gid = self.peer_owner
            r = subprocess.run([self.program("duet-xctl"), "--display", self.x_display,
                                "--timeout", str(self.patience(20)), "admit-user", me],
                               env=dict(self.env, DISPLAY=self.x_display), user=uid, group=gid,
                               extra_groups=[], stdin=subprocess.DEVNULL, capture_output=True,
                               text=True, timeout=self.patience(30))
            if r.returncode != 0:
                raise StackError("sway's Xwayland did not admit %s's clients: %s"
                                 % (me, (r.stderr or r.stdout).strip()))
            self.notes.append("sway's Xwayland admits %s's clients (duet-xctl admit-user, "
                              "asked as %s)" % (me, self.spec.user))
        self._xwayland_up("sway")

    def _wlr_trace(self, env, owner):
        """With Config.trace: the wlroots output tracer (bench/probes/wlr-trace.c)
        preloaded into sway, writing its frames and composited points to
        <dir>/server-trace.jsonl, made beforehand for sway's user."""
        if not self.config.trace:
            return env
        lib = paths.find_bench_lib("duet-wlr-trace")
        if not lib:
            raise StackError("cannot find libduet-wlr-trace.so, which tells when sway "
                             "composited: build duet where libwlroots-dev is installed")
        env = self.trace_env(env, "server")
        with open(env["DUET_TRACE"], "a"):
            pass
        if owner:
            reachable(os.path.dirname(env["DUET_TRACE"]))
            os.chown(env["DUET_TRACE"], *owner)
        env["LD_PRELOAD"] = " ".join(p for p in (env.get("LD_PRELOAD"), lib) if p)
        return env

    # -------------------------------------------------------------- i3
    def _start_i3(self):
        self._start_x_server()
        home = self._home()
        conf = os.path.join(home, "i3.config")
        with open(conf, "w") as f:
            f.write(I3_CONFIG)
        env = dict(self.server_env(), DISPLAY=self.display, HOME=home)
        self.spawn("wm", [self.program("i3"), "-c", conf] + list(self.config.wm_args),
                   self.wm_env(env))
        self.wait("i3 to manage %s" % self.display, self._wm_ready)
        self.wait("i3 to handle events", self._wm_loop_ready)
        picom_conf = os.path.join(home, "picom.conf")
        with open(picom_conf, "w") as f:
            f.write(PICOM_CONFIG)
        self.spawn("compositor", [self.program("picom"), "--config", picom_conf], env)
        self.wait("picom to own _NET_WM_CM_S0", self._cm_ready)
        self.notes.append("i3 with a config of its defaults and no bar; picom 9.1 with its "
                          "defaults: backend xrender (the default, and what runs on Xvfb), no "
                          "vsync, so it composites on every damage event")
        if self.config.screenshot:
            self._grab_on_stop(self.display, env)
