"""The five window managers the conformance checks run against, each
started through duet_launch (bench/duet_launch), the project's one stack
launcher: four are its stack kinds; i3 is not one (it composites nothing,
so it has no place in the bench), so here it is started, with a minimal
generated config, on an Xvfb the launcher starts (I3Stack).
"""

import os
import shutil
import time

from duet_launch import stack as launch_stack

# name: (stack kind, title in the table, how it runs)
WMS = {
    "x11": ("x11", "duet-xwm (Xvfb)", "duet_launch's x11 stack: Xvfb + duet-xwm"),
    "xwayland": ("xwayland", "duet-compositor XWM (Xwayland)",
                 "duet_launch's xwayland stack: duet-compositor --xwayland, headless; its "
                 "XWM is xwm/'s model with the compositor's policy"),
    "weston-xwayland": ("weston-xwayland", "weston XWM (Xwayland)",
                        "duet_launch's weston-xwayland stack: weston --xwayland on its "
                        "headless backend, which has no wl_seat, so nothing is activated"),
    "openbox": ("openbox", "openbox (Xvfb)",
                "duet_launch's openbox stack: Xvfb + openbox (an empty config) + xcompmgr -c"),
    "i3": ("x11", "i3 (Xvfb)",
           "Xvfb from duet_launch and i3 with a generated config: no bar, i3's defaults"),
}
ORDER = list(WMS)
DUET = ["x11", "xwayland"]
PEERS = ["openbox", "i3"]
SIZE = "1024x768"

# No bar, no key bindings, nothing started: i3 as a bare window manager.
I3_CONFIG = """# i3 config file (v4), written by tests/x11-conformance/wms.py
font fixed
focus_follows_mouse no
"""


class I3Stack(launch_stack.Stack):
    """duet_launch's x11 stack with i3 where duet-xwm would be."""

    def _start_x11(self):
        self._start_x_server()
        conf = os.path.join(self.dir, "i3.config")
        with open(conf, "w") as f:
            f.write(I3_CONFIG)
        env = dict(self.server_env(), DISPLAY=self.display, HOME=self.dir)
        self.spawn("wm", [self.program("i3"), "-c", conf], env)
        self.wait("i3 to manage %s" % self.display, self._wm_ready)


def missing(wm, programs):
    """Why wm cannot run here, or None."""
    if wm == "i3":
        return None if shutil.which("i3") else \
            "i3 is not installed (Debian package i3-wm; scripts/packages.sh)"
    return launch_stack.missing(config(wm, programs))


def config(wm, programs):
    kind = WMS[wm][0]
    return launch_stack.Config(kind, size=SIZE, refresh=None,
                               programs=tuple((k, v) for k, v in programs.items() if v))


def start(wm, programs, workdir, env):
    """The started stack (stop() it), its X display in .env["DISPLAY"]."""
    cls = I3Stack if wm == "i3" else launch_stack.Stack
    st = cls(config(wm, programs), workdir, env)
    st.start()
    if wm == "openbox":
        # As tests/integration/duet.py's XSession: openbox and xcompmgr
        # finish starting after the WM check is set; a window mapped
        # meanwhile was seen listed but never mapped.
        time.sleep(1.0)
    return st
