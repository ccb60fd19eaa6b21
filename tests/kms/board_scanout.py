#!/usr/bin/env python3
"""A client's pixels on the display: duet-compositor on a KMS card, one
client after another, a screenshot read from the scanned-out buffer of each,
kept in OUTDIR and checked. scripts/board-vm runs it in the emulated arm64
board (kms_hook); the integration test board-scanout-headless runs it on the
headless backend, so the steps and checks are exercised on every machine.

usage: board_scanout.py OUTDIR [--backend drm|headless]

Programs come from the environment as for the tests (DUET_COMPOSITOR,
DUET_TESTCTL, DUET_LAUNCH); weston-simple-shm from PATH, if installed.
DUET_BENCH_PATIENCE (the emulated board sets 10) stretches every wait.

Writes into OUTDIR: kms-CLIENT.png (the screenshot that passed, or the last
one tried), kms-empty.png, kms-compositor.log (its stderr: which card, mode
and path), and appends to kms.txt one line per client,
  pass: CLIENT on the BACKEND scanout: N% non-background, N colours in its WxH window at X,Y (FILE)
or "FAIL: CLIENT ...: why", then one last line "kms: pass" or "kms: FAIL".
Exit status 0 when every client passed, 1 otherwise (77: no card, outside
a guest).
"""

import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)

import duet  # noqa: E402
import pngread  # noqa: E402
import test_kms  # noqa: E402
from duet import check  # noqa: E402

PATIENCE = max(1.0, float(os.environ.get("DUET_BENCH_PATIENCE") or 1))


class Report:
    def __init__(self, outdir):
        self.path = os.path.join(outdir, "kms.txt")
        self.failed = False

    def line(self, text):
        duet.log(text)
        with open(self.path, "a") as f:
            f.write(text + "\n")


def patient(session):
    """Session.start waits 30 s for the compositor's WAYLAND_DISPLAY line;
    under TCG on arm64 its first EGL and llvmpipe setup can take longer.
    Wait for the line here first, with the patience, so start's own wait
    finds it."""
    spawn = session.spawn

    def spawn_and_wait(name, argv, env, **kw):
        proc = spawn(name, argv, env, **kw)
        if name == "compositor":
            proc.wait_line(r"^WAYLAND_DISPLAY=", timeout=30 * PATIENCE)
        return proc
    session.spawn = spawn_and_wait
    return session


def shot_name(name):
    return "kms-%s.png" % name


def shoot(s, outdir, name):
    """A screenshot of what is scanned out now, kept as OUTDIR/kms-NAME.png."""
    s.sync()
    path = os.path.join(outdir, shot_name(name))
    s.testctl("screenshot", path, timeout=30 * PATIENCE)
    try:
        return pngread.read(path)
    except (OSError, ValueError) as e:
        raise duet.Failure("screenshot %s is not a valid PNG: %s" % (path, e))


def show(s, outdir, backend, bg, name, argv, pixel_check, min_non_bg=0.5, min_colors=16):
    """Starts one client and retakes the screenshot until its window shows
    its pixels (and only there); returns the report line."""
    env = {"XDG_CONFIG_HOME": os.path.join(s.workdir, "config"), "HOME": s.workdir}
    proc = s.client(argv, name=name, env=env)
    try:
        win, what = s.wait_client_shown(
            proc, name, lambda img, win: pixel_check(img, win, bg, min_non_bg, min_colors), bg,
            margin=64, timeout=90 * PATIENCE, pause=0.5 * PATIENCE,
            window_timeout=60 * PATIENCE, shoot=lambda: shoot(s, outdir, name))
    finally:
        proc.stop()
    # The next client starts on an empty screen.
    deadline = time.monotonic() + 30 * PATIENCE
    while s.windows():
        check(time.monotonic() < deadline, "%s's window stayed after it was stopped" % name)
        time.sleep(0.1)
    return "pass: %s on the %s scanout: %s in its %dx%d window at %d,%d (%s)" % (
        name, backend, what, win.w, win.h, win.x, win.y, shot_name(name))


def clients():
    found = []
    shm = shutil.which("weston-simple-shm")
    if shm:
        found.append(("weston-simple-shm", [shm], test_kms.content_check))
    launch = os.environ.get("DUET_LAUNCH")
    if launch:
        found.append(("duet-launch", [launch, "--backend", "wayland", "--engine", "sw",
                                      "--size", "400x300", "--stay"], test_kms.launch_check))
    check(found, "no client to show: neither weston-simple-shm nor DUET_LAUNCH")
    return found


def run(outdir, backend):
    os.makedirs(outdir, exist_ok=True)
    report = Report(outdir)
    if backend == "drm":
        test_kms.cards()
        session = patient(test_kms.KmsSession("board-scanout"))
    else:
        session = patient(duet.Session("board-scanout", size=test_kms.MODE,
                                       args=["--mode", test_kms.MODE]))
    try:
        with session as s:
            try:
                if backend == "drm":
                    s.wait_log("modesetting", timeout=60 * PATIENCE)
                check(not s.windows(), "screen not empty before any client")
                img = shoot(s, outdir, "empty")
                bg = img.pixel(0, 0)
                bad = img.count_outside_not(bg, (0, 0, 0, 0))
                check(bad == 0, "the empty screen is not one colour: %d pixels differ from %r"
                      % (bad, bg))
                if backend == "drm":
                    # Logged at the first screenshot: how it read the scanout.
                    s.wait_log("screenshots read the scanned-out buffer", timeout=10 * PATIENCE)
                    for line in s.log_text().splitlines():
                        if "drm: " in line and ("modesetting" in line or "screenshots" in line):
                            report.line(line[line.index("drm: "):])
                for name, argv, pixel_check in clients():
                    try:
                        report.line(show(s, outdir, backend, bg, name, argv, pixel_check))
                    except duet.Failure as e:
                        report.failed = True
                        report.line("FAIL: %s: %s" % (name, str(e).splitlines()[0]))
                s.check_alive()
            finally:
                shutil.copyfile(s.compositor.stderr_path,
                                os.path.join(outdir, "kms-compositor.log"))
    except duet.Failure as e:
        report.failed = True
        report.line("FAIL: %s" % str(e).splitlines()[0])
    report.line("kms: FAIL" if report.failed else "kms: pass")
    check(not report.failed, "a client's pixels did not reach the %s scanout (%s)"
          % (backend, report.path))


def main():
    args = sys.argv[1:]
    backend = "drm"
    if len(args) == 3 and args[1] == "--backend" and args[2] in ("drm", "headless"):
        backend = args[2]
    elif len(args) != 1:
        sys.exit(__doc__.split("\n\n")[1])
    duet.main(lambda: run(args[0], backend))


if __name__ == "__main__":
    main()
