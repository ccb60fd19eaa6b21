"""Xorg on a KMS device instead of Xvfb: the X side on display hardware.

Used by `duet run x11 --server xorg`, by the bench's X stacks when the X
server is Xorg (stacks.py), and by the guest tests (tests/kms/test_xorg.py),
so all three start the same server with the same configuration.

Every run gets its own configuration in a directory of the run (-config,
an empty -configdir, so nothing in /etc/X11 changes it, and -logfile): the
modesetting driver (in xserver-xorg-core) on the card that shows the
screen, no input hotplug (no udev or input drivers needed) and glamor
asked for. Mesa's llvmpipe is the GL of a machine without a GPU (the test
guest, a board without a GPU driver); Xorg refuses glamor on it ("Refusing
to try glamor on llvmpipe") unless the screen names a second device as its
GPUDevice, as for PRIME. So when a second KMS card is there (virtio-gpu
beside vkms in the guest), it is named: glamor then runs and the server
offers DRI3. With one card the server runs without acceleration (no DRI3),
and accel() below says why.

Needs root (or a user allowed to be DRM master of the card and to pass
-config with an absolute path): Xorg opens the card itself, like
duet-compositor --backend drm (docs/board.md).
"""
import glob
import os
import re

PACKAGE = "xserver-xorg-core"


class XorgError(Exception):
    pass


class Card:
    def __init__(self, path, node, driver, connected, render):
        self.path = path          # as found (by-path name when there is one)
        self.node = node          # /dev/dri/cardN
        self.driver = driver      # kernel driver: virtio_gpu, vkms, exynos-drm ...
        self.connected = connected
        self.render = render      # it has a render node (a GPU or kms_swrast's device)

    def __repr__(self):
        return "%s (%s%s)" % (self.path, self.driver, "" if self.connected else ", nothing connected")


def kms_cards(dev="/dev/dri"):
    """The KMS cards: by-path names (stable across boots) where udev made
    them, else cardN; each with its driver and whether an output is
    connected, from sysfs."""
    paths = sorted(glob.glob(os.path.join(dev, "by-path", "*-card")))
    named = {os.path.realpath(p) for p in paths}
    # Cards udev named no by-path link for (all of them without udev; in
    # virtme-ng's guest vkms, a platform device, has none).
    paths += [p for p in sorted(glob.glob(os.path.join(dev, "card[0-9]*")))
              if os.path.realpath(p) not in named]
    cards = []
    for path in paths:
        node = os.path.realpath(path)
        sysdir = os.path.join("/sys/class/drm", os.path.basename(node))
        device = os.path.join(sysdir, "device")
        driver = os.path.basename(os.path.realpath(os.path.join(device, "driver")
                                                   if os.path.exists(os.path.join(device, "driver"))
                                                   else device))  # vkms: no driver link
        # virtio-gpu's card hangs off the PCI function (driver virtio-pci).
        for virtio in glob.glob(os.path.join(sysdir, "device", "virtio*", "driver")):
            driver = os.path.basename(os.path.realpath(virtio))
        connected = False
        for status in glob.glob(sysdir + "-*/status"):
            try:
                with open(status) as f:
                    connected = connected or f.read().strip() == "connected"
            except OSError:
                pass
        render = bool(glob.glob(os.path.join(sysdir, "device", "drm", "renderD*")))
        cards.append(Card(path, node, driver, connected, render))
    return cards


def plan(cards=None):
    """(screen card, GPUDevice card or None). The screen goes on a card with
    a connected output, one with a render node first (where kms_swrast or
    the GPU driver runs); any other card becomes its GPUDevice."""
    cards = kms_cards() if cards is None else cards
    shown = [c for c in cards if c.connected]
    if not shown:
        if not cards:
            raise XorgError("no KMS device: /dev/dri has no card (Xorg with the modesetting "
                            "driver needs a display; without one use Xvfb: --server xvfb)")
        raise XorgError("no KMS device with a connected output among %s"
                        % ", ".join(map(repr, cards)))
    shown.sort(key=lambda c: not c.render)
    screen = shown[0]
    others = [c for c in cards if c.node != screen.node]
    return screen, (others[0] if others else None)


def config_text(screen, gpu):
    lines = [
        "# Written by duet for one run (bench/duet_bench/xorg.py).",
        'Section "ServerFlags"',
        # No input hotplug: the guest has no udev, and duet drives input
        # through XTEST; the core devices are there anyway.
        '    Option "AutoAddDevices" "false"',
        '    Option "AutoAddGPU" "false"',
        '    Option "DontVTSwitch" "true"',
        '    Option "BlankTime" "0"',
        '    Option "StandbyTime" "0"',
        '    Option "SuspendTime" "0"',
        '    Option "OffTime" "0"',
        "EndSection",
        'Section "Device"',
        '    Identifier "duet-card"',
        '    Driver "modesetting"',
        '    Option "kmsdev" "%s"' % screen.node,
        '    Option "AccelMethod" "glamor"',
        "EndSection",
    ]
    if gpu:
        lines += [
            'Section "Device"',
            '    Identifier "duet-gpu"',
            '    Driver "modesetting"',
            '    Option "kmsdev" "%s"' % gpu.node,
            "EndSection",
        ]
    lines += [
        'Section "Screen"',
        '    Identifier "duet-screen"',
        '    Device "duet-card"',
    ]
    if gpu:
        lines.append('    GPUDevice "duet-gpu"')
    lines += [
        "    DefaultDepth 24",
        "EndSection",
        'Section "ServerLayout"',
        '    Identifier "duet"',
        '    Screen "duet-screen"',
        "EndSection",
        "",
    ]
    return "\n".join(lines)


class Setup:
    """One run's Xorg: its files in run_dir, its command line, and what its
    log says about acceleration once it runs."""

    def __init__(self, run_dir, cards=None):
        self.screen, self.gpu = plan(cards)
        self.config = os.path.join(run_dir, "xorg.conf")
        self.configdir = os.path.join(run_dir, "xorg.conf.d")
        self.logfile = os.path.join(run_dir, "Xorg.log")
        os.makedirs(self.configdir, exist_ok=True)
        with open(self.config, "w") as f:
            f.write(config_text(self.screen, self.gpu))

    def argv(self, xorg, displayfd, display=None):
        # -noreset: as with Xvfb, a probe being the last client must not
        # regenerate the server under the WM. -novtswitch: the VT is ours
        # for the whole run.
        argv = [xorg]
        if display:
            argv.append(display)
        return argv + ["-displayfd", str(displayfd), "-config", self.config,
                       "-configdir", self.configdir, "-logfile", self.logfile,
                       "-noreset", "-nolisten", "tcp", "-novtswitch"]

    def log_text(self):
        try:
            with open(self.logfile, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def accel(self):
        """(glamor on?, one line saying what the server does)."""
        text = self.log_text()
        where = "screen %s%s" % (self.screen, ", GPUDevice %s" % self.gpu if self.gpu else "")
        if "glamor initialized" in text:
            how = "for PRIME, " if "Allowing glamor on llvmpipe" in text else ""
            m = re.search(r"glamor X acceleration enabled on (.*)", text)
            return True, "glamor (%s%s), DRI3 and Present; %s" % (
                how, m.group(1).strip() if m else "GL", where)
        if "Refusing to try glamor on llvmpipe" in text:
            return False, ("no acceleration: Xorg refuses glamor on llvmpipe without a "
                           "second device (no DRI3); %s" % where)
        return False, "no glamor (see %s); %s" % (self.logfile, where)

    def log_tail(self, n=3000):
        return self.log_text()[-n:]
