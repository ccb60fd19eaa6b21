"""Helpers for the tests of clients/' instrumented apps (duet-launch,
duet-resize, duet-render) on the four stacks the bench compares:

  wayland  duet-compositor (duet.Session)
  weston   weston's headless backend with its GL renderer (no wl_seat there)
  x11      Xvfb + duet-xwm (duet.XSession, wm="duet")
  openbox  Xvfb + openbox + xcompmgr -c (duet.XSession, wm="openbox")

Programs come from the environment: DUET_LAUNCH, DUET_RESIZE, DUET_RENDER
(set by tests/integration/meson.build) and the harness's own.
"""

import json
import os
import time

import duet
from duet import check

STACKS = ("wayland", "weston", "x11", "openbox")
ENGINES = ("gl", "sw")
# Room for a 1920x1080 window plus openbox's decorations.
SCREEN = "2048x1200"
BACKEND_OF = {"wayland": "wayland", "weston": "wayland", "x11": "x11", "openbox": "x11"}
# What each stack is expected to offer for timing frames.
PRESENTATION_OF = {
    "wayland": {"wp_presentation"},
    "weston": {"wp_presentation"},
    # duet-xwm offers _NET_WM_FRAME_DRAWN (issue 3); until it lists it in
    # _NET_SUPPORTED the toolkit falls back, and says so.
    "x11": {"frame-drawn", "roundtrip-fallback"},
    "openbox": {"roundtrip-fallback"},
}
# Stacks whose server can resize a window on request (duet_test / _DUET_RESIZE).
SERVER_RESIZE = {"wayland", "x11"}


class WestonSession(duet.WestonSession):
    """weston --backend=headless-backend.so --use-gl, on its own socket."""

    def screenshot(self, label="shot"):
        raise duet.Failure("no screenshots under weston (its screenshooter needs --debug)")


class DuetXSession(duet.XSession):
    """duet-xwm on Xvfb, used only once duet-xwm says it has finished
    starting. It sets _NET_SUPPORTING_WM_CHECK (what wait-wm waits for)
    before that; with an early build, a client mapped in between never got
    _NET_WM_FRAME_DRAWN and a _DUET_SYNC sent then was never answered. The
    apps' timings must not depend on that window of time either way."""

    def start(self):
        super().start()
        deadline = time.monotonic() + 30
        while "window manager started" not in self.wm.stderr_tail(100000):
            self.check_alive()
            check(time.monotonic() < deadline, "duet-xwm did not finish starting in 30 s")
            time.sleep(0.05)


def session(stack, name):
    """A started-on-enter session for the stack; Skip if it cannot run here."""
    if stack == "wayland":
        return duet.Session(name, size=SCREEN)
    if stack == "weston":
        return WestonSession(name, size=SCREEN)
    if stack == "x11":
        if not os.environ.get("DUET_XWM"):
            raise duet.Skip("duet-xwm is not built yet")
        return DuetXSession(name, size=SCREEN, wm="duet")
    if stack == "openbox":
        duet.third_party("openbox")
        duet.third_party("xcompmgr")
        return duet.XSession(name, size=SCREEN, wm="openbox")
    raise duet.Failure("unknown stack %r" % stack)


def app_env(extra=None, engine="gl"):
    """The apps print to stdout only when DUET_TRACE is unset. Both
    engines run with the caller's sanitizer options, leak checks included
    (tests/lsan.supp names the system libraries' own leaks); engine is
    kept for the callers that name it."""
    del engine
    env = {"DUET_TRACE": ""}
    if extra:
        env.update(extra)
    return env


def records(text):
    """JSON lines -> list of dicts; every line must be one JSON object in
    render_trace's format (name, ns, pid first)."""
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            raise duet.Failure("not a JSON line: %r" % line)
        check(isinstance(rec, dict) and list(rec)[:3] == ["name", "ns", "pid"],
              "line is not {\"name\",\"ns\",\"pid\",...}: %r" % line)
        check(isinstance(rec["ns"], int) and rec["ns"] > 0, "bad ns in %r" % line)
        out.append(rec)
    return out


def run_app(s, argv, timeout=60, env=None):
    """Runs an app to completion on the session; fails unless it exits 0.
    Returns its records."""
    engine = argv[argv.index("--engine") + 1] if "--engine" in argv else "gl"
    r = s.run(argv, timeout=timeout, env=app_env(env, engine))
    check(r.returncode == 0, "%s exited %d; stderr:\n%s" % (" ".join(argv), r.returncode,
                                                             r.stderr[-3000:]))
    if r.stderr.strip():
        duet.log("%s stderr: %s" % (os.path.basename(argv[0]), r.stderr.strip()[-500:]))
    return records(r.stdout)


def check_labels(rec, stack, engine):
    check(rec.get("backend") == BACKEND_OF[stack], "backend %r on %s: %r"
          % (rec.get("backend"), stack, rec))
    check(rec.get("engine") == engine, "engine %r, asked for %s" % (rec.get("engine"), engine))
    check(rec.get("presentation") in PRESENTATION_OF[stack],
          "presentation %r on %s, want one of %r" % (rec.get("presentation"), stack,
                                                     PRESENTATION_OF[stack]))


def near(got, want, tol=4):
    return all(abs(a - b) <= tol for a, b in zip(got, want))
