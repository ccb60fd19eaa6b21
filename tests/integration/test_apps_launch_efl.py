#!/usr/bin/env python3
"""duet-launch-efl (clients/launch-efl.c, written with Elementary) launches on
duet-compositor and on Xvfb + duet-xwm with the engine it was asked for,
and its first_frame line carries the launch timeline in order, `submitted`
(Evas' first RENDER_FLUSH_POST) among it.

usage: test_apps_launch_efl.py STACK ENGINE [render]
  (STACK: wayland | x11; ENGINE: gl | sw)
  render: duet-render-efl instead: every scene asked for draws --min-frames
  frames at least with the engine asked for, and render_done follows

Skips with one line where duet-launch-efl was not built (no EFL development
files). Elementary's efreetd daemon outlives the app: it is found by the
test's private HOME and stopped.
"""

import os
import signal
import sys
import tempfile
import time

import apps
import duet
from duet import check
from duet_launch import reaper

# EFL's own leaks at exit (Elementary's, Evas's, Ecore_Wl2's) are named in
# a suppressions file of their own; the caller's LeakSanitizer options stay
# (a later suppressions= wins, so ours goes last).
EFL_LSAN_SUPP = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                             "lsan-efl.supp")
EFL_LSAN_OPTIONS = ":".join(filter(None, [os.environ.get("LSAN_OPTIONS", ""),
                                          "suppressions=" + os.path.normpath(EFL_LSAN_SUPP),
                                          "print_suppressions=0"]))

PATH = {("wayland", "sw"): "wayland_shm", ("wayland", "gl"): "wayland_egl",
        ("x11", "sw"): "software_x11", ("x11", "gl"): "opengl_x11"}
PRESENTATION = {"wayland": "frame-callback", "x11": "roundtrip-fallback"}


def with_home(home):
    """pids of processes whose environment has HOME=home."""
    return reaper.marked("HOME", home)


def render(s, stack, engine, env):
    exe = os.environ["DUET_RENDER_EFL"]
    backend = "wayland" if stack == "wayland" else "x11"
    scenes = ["image_blend_smooth_scaled", "text"]
    recs = apps.run_app(s, [exe, "--backend", backend, "--engine", engine, "--duration-ms", "300",
                            "--min-frames", "3", "--scenes", ",".join(scenes)], timeout=90, env=env)
    elapsed = time.monotonic_ns() - int(env["DUET_T0_NS"])
    got = [r for r in recs if r["name"] == "scene"]
    check([r["scene"] for r in got] == scenes, "scenes %r, want %r" % ([r["scene"] for r in got],
                                                                      scenes))
    for r in got:
        # Each scene animates: 3 frames at least however slow the machine
        # (a text frame of the ASan build under load took over 300 ms).
        check(r["frames"] >= 3 and r["fps"] > 0, "scene %s drew %d frames, --min-frames 3"
              % (r["scene"], r["frames"]))
        check((r["engine"], r["path"]) == (engine, PATH[stack, engine]),
              "engine/path %r" % ((r["engine"], r["path"]),))
        # At least what was asked; within the run (no upper limit of its own).
        check(300e6 <= r["duration_ns"] < elapsed, "scene %s lasted %d ns (the run %d ns)"
              % (r["scene"], r["duration_ns"], elapsed))
    done = [r for r in recs if r["name"] == "render_done"]
    check(len(done) == 1 and done[0]["scenes"] == len(scenes), "render_done: %r" % done)
    duet.log("%s/%s: %s" % (stack, engine, ", ".join("%s %d frames %.0f fps" % (
        r["scene"], r["frames"], r["fps"]) for r in got)))


def main(stack, engine, what="launch"):
    exe = os.environ.get("DUET_LAUNCH_EFL")
    if not exe:
        raise duet.Skip("duet-launch-efl is not built: EFL's development files (pkg-config "
                        "elementary; Debian package libefl-all-dev) were not found")
    home = tempfile.mkdtemp(prefix="duet-efl-home-")
    try:
        with apps.session(stack, "apps-launch-efl-%s-%s" % (stack, engine)) as s:
            t0 = time.monotonic_ns()
            env = {"DUET_T0_NS": str(t0), "HOME": home, "ECORE_NO_SYSTEM_MODULES": "1",
                   "LSAN_OPTIONS": EFL_LSAN_OPTIONS}
            if what == "render":
                render(s, stack, engine, env)
                return
            backend = "wayland" if stack == "wayland" else "x11"
            recs = apps.run_app(s, [exe, "--backend", backend, "--engine", engine],
                                timeout=90, env=env)
            elapsed = time.monotonic_ns() - t0
            first = [r for r in recs if r["name"] == "first_frame"]
            check(len(first) == 1, "want one first_frame line, got %d: %r" % (len(first), recs))
            f = first[0]
            check((f["backend"], f["engine"], f["path"]) == (backend, engine, PATH[stack, engine]),
                  "backend/engine/path %r, want %r" % ((f["backend"], f["engine"], f["path"]),
                                                       (backend, engine, PATH[stack, engine])))
            check(f["presentation"] == PRESENTATION[stack], "presentation %r" % f["presentation"])
            check((f["width"], f["height"]) == (800, 600), "first frame %dx%d, want 800x600"
                  % (f["width"], f["height"]))
            tl = f["timeline"]
            for p in ("exec", "connected", "submitted", "received", "presented"):
                check(isinstance(tl.get(p), int) and t0 < tl[p] < t0 + elapsed,
                      "timeline point %s=%r not within the run: %r" % (p, tl.get(p), tl))
            check(tl["exec"] < tl["connected"] < tl["submitted"] <= tl["received"],
                  "timeline out of order: %r" % tl)
            check(f["since_t0_ns"] == tl["presented"] - t0, "since_t0_ns != presented - t0")
            duet.log("%s/%s: %s" % (stack, engine, ", ".join(
                "%s %.1f ms" % (p, (tl[p] - t0) / 1e6) for p in tl)))
    finally:
        deadline = time.monotonic() + 5
        while with_home(home) and time.monotonic() < deadline:
            for pid in with_home(home):
                try:
                    os.kill(pid, signal.SIGTERM)
                except OSError:
                    pass
            time.sleep(0.1)
        import shutil
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in ("wayland", "x11") or \
            sys.argv[2] not in ("gl", "sw") or sys.argv[3:] not in ([], ["render"]):
        sys.exit("usage: test_apps_launch_efl.py wayland|x11 gl|sw [render]")
    duet.main(lambda: main(sys.argv[1], sys.argv[2], *sys.argv[3:]))
