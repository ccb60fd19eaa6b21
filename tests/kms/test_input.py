#!/usr/bin/env python3
"""duet-compositor --backend drm takes input from real evdev devices through
libinput (compositor/backend/drm/input-libinput.c). Run inside the guest by
scripts/test-kms (meson test --setup kms --suite kms, test kms-input);
outside one there is no card and it skips (as tests/kms/test_kms.py does).

The devices are virtual ones made with /dev/uinput (tests/kms/uinput.py):
to the kernel, udev and libinput they are keyboards and mice like any
other. libinput's udev backend sees only devices udev tagged (ID_INPUT_*):
virtme-ng starts systemd-udevd in the guest where the host has it (package
udev, scripts/packages.sh); where none runs, the test starts one itself,
for input devices only, and stops it at the end. The session comes from seatd, so the devices are opened through
libseat as on a desktop.

  - a keyboard and a touchscreen made before the compositor starts are
    found at startup (before the seat exists: the touchscreen must still
    give it touch), a mouse and a tablet made after it are hotplugged; each
    is logged once ("input: added NAME (keyboard|pointer|touch)"), and
    removed when destroyed
  - duet-input-probe (tests/clients/input-probe.c), with the keyboard
    focus, gets KEY_A pressed and released with its evdev code
  - the tablet's absolute position is scaled to the output (its range is
    the mode's size, so 1:1): the probe gets enter/motion at the exact
    surface-local pixel, and the tablet's left button press and release
  - the mouse's relative motion moves the pointer from there (rightwards,
    the row unchanged; libinput's acceleration sets the distance), a wheel
    click down is a wl_pointer.axis on the vertical axis with a positive
    value, and a huge move up-left is clamped to the output's corner,
    outside the window: the probe gets a leave
  - the touchscreen (multitouch type B, INPUT_PROP_DIRECT; its range is the
    mode's size, so 1:1) gives the seat touch: the probe binds wl_touch and
    gets down at the exact surface-local pixel the finger's position
    names, motion, up, and frames
"""

import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

import duet  # noqa: E402
from duet import check  # noqa: E402
import test_kms  # noqa: E402
import uinput  # noqa: E402

WIDTH, HEIGHT = (int(v) for v in test_kms.MODE.split("x"))


class Udevd(test_kms.Daemon):
    """systemd-udevd for the test's input devices, where none runs."""

    NAME = "systemd-udevd"
    CONTROL = "/run/udev/control"

    def __enter__(self):
        if os.path.exists(self.CONTROL):
            duet.log("udevd already runs (%s): used" % self.CONTROL)
            return self
        udevd = next((p for p in ("/lib/systemd/systemd-udevd", "/usr/lib/systemd/systemd-udevd")
                      if os.path.exists(p)), None)
        if not udevd or not shutil.which("udevadm"):
            raise duet.Failure("no systemd-udevd or udevadm (Debian package udev): libinput's "
                               "udev backend sees no devices without it")
        self.start([udevd], self.CONTROL, 60)
        # Input devices that were there before it (the guest's AT keyboard).
        subprocess.run(["udevadm", "trigger", "--subsystem-match=input", "--action=add"],
                       check=False, timeout=60)
        settle()
        duet.log("started %s" % udevd)
        return self

    def __exit__(self, *exc):
        self.stop(30)


def settle():
    r = subprocess.run(["udevadm", "settle", "--timeout=60"], capture_output=True, text=True,
                       timeout=90)
    check(r.returncode == 0, "udevadm settle failed: %s" % r.stderr)


def uinput_ready():
    if not os.path.exists("/dev/uinput"):
        subprocess.run(["modprobe", "uinput"], capture_output=True, timeout=60)
    deadline = time.monotonic() + 10
    while not os.path.exists("/dev/uinput"):
        if time.monotonic() > deadline:
            raise duet.Failure("no /dev/uinput (modprobe uinput)")
        time.sleep(0.1)


def test():
    test_kms.cards()
    if os.environ.get("DUET_HAVE_LIBINPUT") != "1":
        raise duet.Skip("duet-compositor was built without libinput (libinput-dev, "
                        "libudev-dev): no input devices")
    uinput_ready()
    devices = []
    try:
        with Udevd():
            kbd = uinput.keyboard("duet-test keyboard")
            devices.append(kbd)
            touch = uinput.Touchscreen("duet-test touchscreen", WIDTH, HEIGHT)
            devices.append(touch)
            settle()
            with test_kms.Seatd(), test_kms.KmsSession("kms-input") as s:
                s.wait_log("modesetting")
                s.wait_log("input: added duet-test keyboard (keyboard)")
                s.wait_log("input: added duet-test touchscreen (touch)")
                mouse = uinput.mouse("duet-test mouse")
                devices.append(mouse)
                tablet = uinput.tablet("duet-test tablet", WIDTH, HEIGHT)
                devices.append(tablet)
                s.wait_log("input: added duet-test mouse (pointer)", timeout=60)
                s.wait_log("input: added duet-test tablet (pointer)", timeout=60)
                if "session: libseat" not in s.log_text():
                    duet.log("note: no libseat session; the devices were opened directly")

                c = s.client([duet.program("DUET_INPUT_PROBE"), "--app-id", "probe",
                              "--size", "300x200"], name="probe")
                c.wait_line(r"^mapped ", timeout=60)
                win = s.wait_window(app_id="probe", timeout=60)
                c.wait_line(r"^keyboard-enter$", timeout=60)
                c.wait_line(r"^touch-bound seat=0$", timeout=60)
                s.sync()
                duet.log("probe window at %d,%d %dx%d" % (win.x, win.y, win.w, win.h))

                mark = len(c.lines)
                kbd.emit((uinput.EV_KEY, uinput.KEY_A, 1))
                kbd.emit((uinput.EV_KEY, uinput.KEY_A, 0))
                c.wait_line(r"^key %d 1$" % uinput.KEY_A, timeout=60, start=mark)
                c.wait_line(r"^key %d 0$" % uinput.KEY_A, timeout=60, start=mark)

                x, y = win.x + 50, win.y + 70
                check(x < WIDTH and y < HEIGHT, "the probe is off the output: %r" % (win,))
                mark = len(c.lines)
                tablet.emit((uinput.EV_ABS, uinput.ABS_X, x), (uinput.EV_ABS, uinput.ABS_Y, y))
                c.wait_line(r"^pointer-(enter|motion) 50 70$", timeout=60, start=mark)
                tablet.emit((uinput.EV_ABS, uinput.ABS_X, x + 10),
                            (uinput.EV_ABS, uinput.ABS_Y, y + 5))
                c.wait_line(r"^pointer-motion 60 75$", timeout=60, start=mark)
                tablet.emit((uinput.EV_KEY, uinput.BTN_LEFT, 1))
                tablet.emit((uinput.EV_KEY, uinput.BTN_LEFT, 0))
                c.wait_line(r"^pointer-button %d 1$" % uinput.BTN_LEFT, timeout=60, start=mark)
                c.wait_line(r"^pointer-button %d 0$" % uinput.BTN_LEFT, timeout=60, start=mark)

                mark = len(c.lines)
                mouse.emit((uinput.EV_REL, uinput.REL_X, 10))
                _, m = c.wait_line(r"^pointer-motion (\d+) 75$", timeout=60, start=mark,
                                   pred=lambda m: int(m.group(1)) > 60)
                duet.log("relative +10: the pointer went from x 60 to %s" % m.group(1))
                mouse.emit((uinput.EV_REL, uinput.REL_WHEEL, -1))
                _, m = c.wait_line(r"^pointer-axis 0 (\S+)$", timeout=60, start=mark)
                check(float(m.group(1)) > 0, "a wheel click down scrolled by %s" % m.group(1))
                if win.x > 0 or win.y > 0:
                    mouse.emit((uinput.EV_REL, uinput.REL_X, -30000),
                               (uinput.EV_REL, uinput.REL_Y, -30000))
                    c.wait_line(r"^pointer-leave$", timeout=60, start=mark)
                s.check_alive()

                # A finger at the window's (40, 30), then 15 right and 10
                # down, then lifted. The id is libinput's seat slot.
                x, y = win.x + 40, win.y + 30
                mark = len(c.lines)
                touch.touch_down(0, x, y)
                _, m = c.wait_line(r"^touch-down (\d+) 40 30 seat=0$", timeout=60, start=mark)
                tid = m.group(1)
                c.wait_line(r"^touch-frame seat=0$", timeout=60, start=mark)
                touch.touch_move(0, x + 15, y + 10)
                c.wait_line(r"^touch-motion %s 55 40 seat=0$" % tid, timeout=60, start=mark)
                touch.touch_up(0)
                i, _ = c.wait_line(r"^touch-up %s seat=0$" % tid, timeout=60, start=mark)
                c.wait_line(r"^touch-frame seat=0$", timeout=60, start=i)
                duet.log("touchscreen: down at 40,30, motion to 55,40 and up on touch point %s"
                         % tid)
                s.check_alive()

                mouse.close()
                s.wait_log("input: removed duet-test mouse", timeout=60)
                c.stop()
                log = s.log_text()
                for name in ("keyboard", "mouse", "tablet", "touchscreen"):
                    n = log.count("input: added duet-test %s " % name)
                    check(n == 1, "duet-test %s added %d times, want once:\n%s"
                          % (name, n, log[-3000:]))
                s.check_alive()
    finally:
        for d in devices:
            try:
                d.close()
            except OSError:
                pass


if __name__ == "__main__":
    duet.main(test)
