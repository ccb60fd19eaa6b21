#!/usr/bin/env python3
"""duet-compositor on a KMS device (--backend drm). Run inside a guest with a
virtio-gpu card by scripts/test-kms (meson test --setup kms --suite kms);
outside one there is no card, and each test skips (or, with
DUET_KMS_GUEST=1, fails: the guest must have one).

usage: test_kms.py clients|xwayland|presentation|legacy|busy|bad-device|no-device|unplug|
                   plug|vt-switch|no-seat|headless-mode|isolation

  clients       weston-simple-shm, weston-simple-egl and duet-launch each
                reach the screen: screenshots read from the scanned-out
                buffer show their pixels
  xwayland      --backend drm --xwayland: duet-launch as an X client, through
                the Xwayland the compositor starts on its first X connection,
                reaches the scanout (issue 32, done-when 6)
  presentation  wp_presentation feedback of 30 frames: VSYNC, HW_CLOCK and
                HW_COMPLETION, seq strictly increasing, the mode's refresh,
                times increasing and not in the future
  legacy        the same through legacy modesetting (DUET_DRM_LEGACY=1)
  busy          a second compositor on a card the first one drives gets a
                clear error and exit status 1; the first goes on presenting
  bad-device    --drm-device naming a render node, /dev/null or nothing: a
                clear error and exit status 1, never a crash
  no-device     no /dev/dri at all (the host; in the guest /dev/dri is
                hidden in a mount namespace): a clear error, exit status 1
  unplug        the connector switched off (sysfs) under a running
                compositor with a client drawing: the compositor logs the
                unplug and turns the CRTC off, no frame is presented while
                it is off (the client waits for its frame callback, still
                connected), every frame's feedback is presented or
                discarded exactly once; switched back on, the mode is set
                again, frames flow with the hardware flags and a growing
                seq, and the screenshot shows the client; a compositor
                started while it is off refuses clearly
  vt-switch     chvt to another VT and back under a compositor in a libseat
                session: it pauses (no frames, master given back), resumes
                with a full modeset, and the client is on screen again; its
                input devices (libinput) are closed and opened again;
                skips, saying why, where the guest has no VT to switch to
  plug          a second connector (virtio-gpu max_outputs=2) switched on
                under a running compositor and a change uevent sent: a
                second output right of the first, its wl_output global
                listed; a window moved there is scanned out on it (its
                screenshot) with hardware-flagged feedback; switched off
                again, the output goes and the compositor runs on
  no-seat       not root, no seatd and no logind (setpriv to nobody): one
                clear error naming what libseat tried, exit status 1
  headless-mode --mode WxH@HZ on the headless backend sets its size and
                refresh, and its feedback claims no hardware flags
  isolation     a client over its texture budget, one that dies mid-request,
                one that never reads its socket and one that floods, one
                after the other beside a well-behaved client, which keeps
                its window, input and frames; the log names each
                (tests/integration/test_isolation.py's run_all)
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

import duet  # noqa: E402
import pngread  # noqa: E402
from duet import check  # noqa: E402

MODE = "1024x768"
# wp_presentation_feedback.kind
VSYNC, HW_CLOCK, HW_COMPLETION, ZERO_COPY = 0x1, 0x2, 0x4, 0x8
CLOCK_MONOTONIC = 1


def in_guest():
    return os.environ.get("DUET_KMS_GUEST") == "1"


def cards():
    found = sorted(glob.glob("/dev/dri/by-path/*-card")) or sorted(glob.glob("/dev/dri/card*"))
    if not found:
        msg = "no KMS card in /dev/dri (scripts/test-kms runs these tests in a guest that has one)"
        if in_guest():
            raise duet.Failure(msg)
        raise duet.Skip(msg)
    if os.geteuid() != 0:
        msg = "not root: these tests switch connectors through sysfs and start seatd"
        if in_guest():
            raise duet.Failure(msg)
        raise duet.Skip(msg)
    return found


class KmsSession(duet.Session):
    # The emulated guest's first start loads EGL, llvmpipe and libinput's
    # device quirks cold, over 9p: 30 s was seen not to be enough.
    start_timeout = 120

    def __init__(self, name, args=()):
        super().__init__(name, size=MODE, args=["--backend", "drm", "--mode", MODE] + list(args))

    def log_text(self):
        return self.compositor.stderr_tail(200000)

    def wait_log(self, text, timeout=30):
        deadline = time.monotonic() + timeout
        while text not in self.log_text():
            self.check_alive()
            if time.monotonic() > deadline:
                raise duet.Failure("compositor never logged %r; its log:\n%s"
                                   % (text, self.log_text()[-3000:]))
            time.sleep(0.1)


def compositor_argv(*args):
    return [duet.program("DUET_COMPOSITOR"), "--backend", "drm"] + list(args)


def run_compositor(argv, env=None, timeout=60):
    """Runs a compositor that is expected to give up; returns (status, stderr)."""
    runtime = duet.base_env(os.environ.get("XDG_RUNTIME_DIR") or "/tmp")
    runtime.update(env or {})
    try:
        r = subprocess.run(argv, env=runtime, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        raise duet.Failure("%s did not exit within %d s (it should refuse at once)"
                           % (" ".join(argv), timeout))
    duet.log("%s -> status %d; stderr:\n%s" % (" ".join(argv), r.returncode, r.stderr.strip()))
    return r.returncode, r.stderr


def check_refused(status, stderr, wanted):
    check(status == 1, "exit status %d, want 1 (a refusal, not a crash: negative is a signal)"
          % status)
    check(wanted in stderr, "stderr does not say %r:\n%s" % (wanted, stderr))
    check("AddressSanitizer" not in stderr and "runtime error" not in stderr,
          "sanitizer report:\n" + stderr)


# ------------------------------------------------------------------ clients

def content_check(img, win, bg, min_non_bg, min_colors):
    x0, y0, x1, y1 = duet.clip_rect(img, win)
    area = max(1, (x1 - x0) * (y1 - y0))
    non_bg = area - img.count_color(bg, x0, y0, x1, y1)
    colors = img.colors(x0, y0, x1, y1)
    check(non_bg >= min_non_bg * area,
          "only %d of %d pixels in %r differ from the background" % (non_bg, area, win))
    check(len(colors) >= min_colors, "only %d distinct colours in %r" % (len(colors), win))
    return "%d%% non-background, %d colours" % (100 * non_bg // area, len(colors))


def launch_check(img, win, bg, min_non_bg, min_colors):
    # duet-launch clears its window to (237,237,242) below a 48-pixel bar.
    x0, y0, x1, y1 = duet.clip_rect(img, win)
    body = img.count_color((237, 237, 242), x0, y0 + 48, x1, y1)
    area = max(1, (x1 - x0) * (y1 - y0 - 48))
    check(body >= 0.8 * area, "only %d of %d pixels of duet-launch's body are its colour"
          % (body, area))
    return "%d%% of the body in duet-launch's colour" % (100 * body // area)


def show_client(s, bg, name, argv, pixel_check, min_non_bg=0.5, min_colors=16, env=None):
    e = {"XDG_CONFIG_HOME": os.path.join(s.workdir, "config"), "HOME": s.workdir}
    e.update(env or {})
    proc = s.client(argv, name=name, env=e)
    win, what = s.wait_client_shown(
        proc, name, lambda img, win: pixel_check(img, win, bg, min_non_bg, min_colors), bg,
        margin=64, timeout=90, pause=0.5, window_timeout=60)
    duet.log("%s on the scanout: %s in its %dx%d window" % (name, what, win.w, win.h))
    proc.stop()
    # The next client starts on an empty screen.
    deadline = time.monotonic() + 30
    while s.windows():
        check(time.monotonic() < deadline, "%s's window stayed after it was killed" % name)
        time.sleep(0.1)


def test_clients():
    cards()
    shm = duet.third_party("weston-simple-shm")
    egl = duet.third_party("weston-simple-egl")
    launch = duet.program("DUET_LAUNCH")
    with KmsSession("kms-clients") as s:
        s.wait_log("modesetting")
        bg = s.background()
        s.wait_log("screenshots read the scanned-out buffer")
        show_client(s, bg, "simple-shm", [shm], content_check)
        show_client(s, bg, "simple-egl", [egl], content_check, min_non_bg=0.1)
        show_client(s, bg, "duet-launch", [launch, "--backend", "wayland", "--engine", "sw",
                                           "--size", "400x300", "--stay"], launch_check)
        s.check_alive()


def test_xwayland():
    cards()
    duet.third_party("Xwayland")
    import test_xwayland  # the integration tests' display numbers and checks
    launch = duet.program("DUET_LAUNCH")
    with KmsSession("kms-xwayland", args=test_xwayland.xwayland_args()) as s:
        s.wait_log("modesetting")
        bg = s.background()
        s.wait_log("screenshots read the scanned-out buffer")
        display, _ = test_xwayland.announced(s)
        check(not test_xwayland.xwayland_pids(s), "Xwayland started before any X client")
        show_client(s, bg, "duet-launch-x11", [launch, "--backend", "x11", "--engine", "sw",
                                               "--size", "400x300", "--stay"], launch_check)
        pids = test_xwayland.xwayland_pids(s)
        check(len(pids) == 1, "Xwayland processes of the compositor: %r" % pids)
        duet.log("an X client on %s reached the scanout through Xwayland (pid %d)"
                 % (display, pids[0]))
        s.check_alive()


# ------------------------------------------------------------- presentation

def check_presentation(s):
    client = s.client([duet.program("DUET_PRESENT_CLIENT"), "30"], name="present-client")
    client.wait_line(r"^done ", timeout=120)
    with client._cond:
        lines = list(client.lines)
    clock = [int(line.split()[1]) for line in lines if line.startswith("clock ")]
    check(clock == [CLOCK_MONOTONIC], "clock ids %r, want [CLOCK_MONOTONIC]" % clock)
    check(not [line for line in lines if line.startswith("discarded")],
          "frames discarded: %r" % [line for line in lines if line.startswith("discarded")])
    frames = []
    for line in lines:
        if line.startswith("presented "):
            fields = dict(f.split("=") for f in line.split()[2:])
            frames.append((int(fields["seq"]), int(fields["flags"], 16),
                           int(fields["refresh"]), int(fields["t"])))
    check(len(frames) == 30, "%d frames presented, want 30" % len(frames))
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    refresh = frames[0][2]
    # The mode's refresh: virtio-gpu's modes are about 60 Hz.
    check(12_000_000 < refresh < 21_000_000, "refresh %d ns is not a display's" % refresh)
    for i, (seq, flags, rate, t) in enumerate(frames):
        check(flags == VSYNC | HW_CLOCK | HW_COMPLETION,
              "frame %d flags 0x%x, want vsync|hw_clock|hw_completion (0x7)" % (i, flags))
        check(rate == refresh, "frame %d refresh %d, frame 0 had %d" % (i, rate, refresh))
        check(t <= now, "frame %d presented at %d, after now %d" % (i, t, now))
        if i:
            check(seq > frames[i - 1][0], "seq went from %d to %d at frame %d"
                  % (frames[i - 1][0], seq, i))
            check(t > frames[i - 1][3], "time went from %d to %d at frame %d"
                  % (frames[i - 1][3], t, i))
    duet.log("30 frames: seq %d..%d, flags 0x%x, refresh %d ns"
             % (frames[0][0], frames[-1][0], frames[0][1], refresh))
    client.stop()
    return frames


def test_presentation(legacy=False):
    cards()
    if legacy:
        os.environ["DUET_DRM_LEGACY"] = "1"  # the compositor inherits it
    with KmsSession("kms-legacy" if legacy else "kms-presentation") as s:
        s.wait_log("legacy modesetting" if legacy else "atomic modesetting")
        check_presentation(s)
        s.check_alive()


# ------------------------------------------------------------------ refusals

def test_busy():
    card = cards()[0]
    with KmsSession("kms-busy") as s:
        s.wait_log("modesetting")
        status, err = run_compositor(compositor_argv("--drm-device", card, "--socket",
                                                     "duet-kms-second"))
        check_refused(status, err, "cannot become its DRM master")
        status, err = run_compositor(compositor_argv("--socket", "duet-kms-third"))
        check_refused(status, err, "no usable KMS device")
        # The first one still shows frames.
        check_presentation(s)
        s.check_alive()


def test_bad_device():
    renders = sorted(glob.glob("/dev/dri/renderD*"))
    cases = [("/dev/null", "not a DRM device"),
             ("/nonexistent/card0", "No such file or directory")]
    if renders:
        cases.insert(0, (renders[0], "not a KMS device"))
    elif in_guest():
        raise duet.Failure("the guest has no render node")
    for path, wanted in cases:
        status, err = run_compositor(compositor_argv("--drm-device", path, "--socket",
                                                     "duet-kms-bad"))
        check_refused(status, err, wanted)
        check("cannot use %s" % path in err, "the error does not name %s:\n%s" % (path, err))


def test_no_device():
    argv = compositor_argv("--socket", "duet-kms-none")
    if os.path.exists("/dev/dri"):
        # Hide it: an empty /dev/dri in a mount namespace of our own.
        unshare = shutil.which("unshare")
        if os.geteuid() != 0 or not unshare:
            raise duet.Skip("/dev/dri exists, and hiding it needs root and unshare")
        argv = [unshare, "--mount", "--", "sh", "-c",
                'mount -t tmpfs none /dev/dri && exec "$@"', "sh"] + argv
    status, err = run_compositor(argv)
    check_refused(status, err, "no usable KMS device")
    check("startup failed" in err, "no 'startup failed' line:\n%s" % err)


def check_output_global(s, present):
    """A new client sees a wl_output global exactly when there is a display
    (wayland-info lists the globals)."""
    info = shutil.which("wayland-info")
    if not info:
        duet.log("no wayland-info (wayland-utils): the wl_output global is not checked")
        return
    r = s.run([info], timeout=60)
    check(r.returncode == 0, "wayland-info failed: %s" % r.stderr[-2000:])
    listed = "'wl_output'" in r.stdout
    check(listed == present, "wl_output %s while the connector is %s:\n%s"
          % ("listed" if listed else "not listed", "on" if present else "off",
             r.stdout[-3000:]))
    duet.log("wayland-info: wl_output %s" % ("listed" if listed else "not listed"))


def connector_status_files():
    files = sorted(glob.glob("/sys/class/drm/card*-*/status"))
    if not files:
        raise duet.Failure("no connector in /sys/class/drm")
    return files


def set_connectors(files, value):
    for path in files:
        with open(path, "w") as f:
            f.write(value)


def presented_frames(client):
    """(presented {frame: (seq, flags)}, discarded [frame]) from its lines."""
    with client._cond:
        lines = list(client.lines)
    presented, discarded = {}, []
    for line in lines:
        if line.startswith("presented "):
            f = line.split()
            fields = dict(x.split("=") for x in f[2:])
            presented[int(f[1])] = (int(fields["seq"]), int(fields["flags"], 16))
        elif line.startswith("discarded "):
            discarded.append(int(line.split()[1]))
    return presented, discarded


def check_feedback_sane(client):
    """Every frame up to the last one answered is answered once, and the
    presented ones have increasing seq."""
    presented, discarded = presented_frames(client)
    answered = sorted(list(presented) + discarded)
    check(answered == list(range(len(answered))),
          "frames answered out of order or twice: presented %r, discarded %r"
          % (sorted(presented), discarded))
    seqs = [presented[i][0] for i in sorted(presented)]
    check(all(b > a for a, b in zip(seqs, seqs[1:])), "seq not increasing: %r" % seqs)
    return presented, discarded


def wait_frames(client, count, timeout=120):
    deadline = time.monotonic() + timeout
    while len(presented_frames(client)[0]) < count:
        check(client.alive(), "present-client exited: %s" % client.stderr_tail())
        check(time.monotonic() < deadline, "fewer than %d frames presented in %d s"
              % (count, timeout))
        time.sleep(0.2)


def check_paused(s, client, what):
    """No frame is presented while the display is away; the client and the
    compositor live on."""
    time.sleep(1)  # a flip queued before the unplug may still end
    before = len(presented_frames(client)[0])
    time.sleep(3)
    after = len(presented_frames(client)[0])
    check(after == before, "%d frames presented while %s" % (after - before, what))
    check(client.alive(), "present-client died while %s: %s" % (what, client.stderr_tail()))
    s.check_alive()
    return after


def check_resumed(s, client, bg, paused_count, what):
    wait_frames(client, paused_count + 5)
    presented, discarded = check_feedback_sane(client)
    late = [presented[i] for i in sorted(presented)][paused_count:]
    for seq, flags in late:
        check(flags == VSYNC | HW_CLOCK | HW_COMPLETION,
              "a frame after %s has flags 0x%x, want 0x7" % (what, flags))
    duet.log("after %s: %d frames presented, %d discarded in all"
             % (what, len(presented), len(discarded)))
    win = s.wait_window(pred=lambda w: w.pid in (0, client.pid), timeout=30)
    deadline = time.monotonic() + 60
    while True:
        img = s.screenshot("after-" + what.replace(" ", "-"))
        try:
            duet.log("client on the scanout again: %s" % content_check(img, win, bg, 0.9, 1))
            return
        except duet.Failure:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_unplug():
    """The connector is switched off under a running compositor (sysfs
    'status' = off: the kernel probes it disconnected and sends a hotplug
    uevent, as for a cable pulled out), then back on ('detect')."""
    card = cards()[0]
    files = connector_status_files()
    try:
        with KmsSession("kms-unplug") as s:
            s.wait_log("modesetting")
            bg = s.background()
            client = s.client([duet.program("DUET_PRESENT_CLIENT"), "100000"],
                              name="present-client")
            wait_frames(client, 5)
            set_connectors(files, "off")
            duet.log("connectors switched off: %s" % ", ".join(files))
            s.wait_log("unplugged")
            s.wait_log("its plane are off")
            paused = check_paused(s, client, "unplugged")
            check_output_global(s, False)
            set_connectors(files, "detect")
            duet.log("connectors back: detect")
            s.wait_log("connected again")
            check_resumed(s, client, bg, paused, "the replug")
            check_output_global(s, True)
            client.stop()
            set_connectors(files, "off")
            s.wait_log("unplugged", timeout=30)
            s.check_alive()
        status, err = run_compositor(compositor_argv("--drm-device", card, "--socket",
                                                     "duet-kms-off"))
        check_refused(status, err, "no connected connector")
    finally:
        set_connectors(files, "detect")


def card_connectors(card):
    """The status files of card's connectors (writeback ones left out),
    and the card's own uevent file."""
    rdev = os.stat(card).st_rdev
    sysdir = os.path.realpath("/sys/dev/char/%d:%d" % (os.major(rdev), os.minor(rdev)))
    name = os.path.basename(sysdir)
    files = [f for f in sorted(glob.glob("/sys/class/drm/%s-*/status" % name))
             if "Writeback" not in f]
    return files, os.path.join(sysdir, "uevent")


def wl_outputs(s):
    return [l for l in s.testctl("globals").splitlines() if l.split()[:1] == ["wl_output"]]


def test_plug():
    """A connector that was off when the compositor started is switched on
    (sysfs 'status' = on) and the card's change uevent sent, as the kernel
    sends one with HOTPLUG=1 for a cable plugged in (virtio-gpu sends none
    for a forced connector, hence the written one)."""
    card = cards()[0]
    files, uevent = card_connectors(card)
    if len(files) < 2:
        raise duet.Skip("%s has one connector (qemu's virtio-gpu-pci,max_outputs=2 gives "
                        "two; scripts/test-kms boots with it)" % card)
    first, second = files[0], files[1]
    try:
        set_connectors([first], "detect")
        set_connectors([second], "off")
        with KmsSession("kms-plug", args=["--drm-device", card]) as s:
            s.wait_log("atomic modesetting")
            check(len(wl_outputs(s)) == 1, "wl_output globals at start: %r" % wl_outputs(s))
            bg = s.background()
            client = s.client([duet.program("DUET_PRESENT_CLIENT"), "100000"],
                              name="present-client")
            wait_frames(client, 5)
            set_connectors([second], "on")
            with open(uevent, "w") as f:
                f.write("change")
            duet.log("%s on, change uevent sent" % second)
            s.wait_log("plugged in: new output", timeout=60)
            check(len(wl_outputs(s)) == 2, "wl_output globals after the plug: %r"
                  % wl_outputs(s))
            width = int(MODE.split("x")[0])
            win = s.wait_window(pred=lambda w: w.pid in (0, client.pid), timeout=30)
            before = len(presented_frames(client)[0])
            s.testctl("move", win.id, width + 40, 30)
            wait_frames(client, before + 10)
            presented, discarded = presented_frames(client)
            answered = sorted(list(presented) + discarded)
            check(answered == list(range(len(answered))),
                  "frames answered out of order or twice: presented %r, discarded %r"
                  % (sorted(presented), discarded))
            # seq is the vblank count of the output a frame was shown on
            # (presentation-time): it goes on from the new CRTC's count
            # once the window is there, so it drops once, and only once.
            seqs = [presented[i][0] for i in sorted(presented)]
            drops = [i for i in range(1, len(seqs)) if seqs[i] <= seqs[i - 1]]
            check(len(drops) <= 1 and (not drops or drops[0] >= before),
                  "seq not increasing on each output: %r (before the move: %d frames)"
                  % (seqs, before))
            late = [presented[i] for i in sorted(presented)][-8:]
            check(all(f == VSYNC | HW_CLOCK | HW_COMPLETION for _, f in late),
                  "frames on the new output: flags %r, want 0x7" % [f for _, f in late])
            win = s.wait_window(pred=lambda w: w.pid in (0, client.pid) and w.x >= width,
                                timeout=30)
            on_second = win._replace(x=win.x - width)
            deadline = time.monotonic() + 60
            while True:
                s.sync()
                path = os.path.join(s.workdir, "plug-second.png")
                s.testctl("screenshot", path, 1)
                img = pngread.read(path)
                try:
                    duet.log("client on the new output's scanout: %s"
                             % content_check(img, on_second, bg, 0.9, 1))
                    break
                except duet.Failure:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
            set_connectors([second], "off")
            s.wait_log("unplugged", timeout=60)
            check(len(wl_outputs(s)) == 1, "wl_output globals after the unplug: %r"
                  % wl_outputs(s))
            client.stop()
            s.check_alive()
    finally:
        set_connectors(files, "detect")



def current_vt():
    try:
        with open("/sys/class/tty/tty0/active") as f:
            return f.read().strip()
    except OSError:
        return None


class Daemon:
    """A daemon a test starts where none runs (seatd, systemd-udevd): its
    output kept in a temporary file, shown when the test ends, and the
    process stopped then. ready(path) is the file it makes when up."""

    NAME = "daemon"

    def __init__(self):
        self.proc = None
        self.log = None

    def start(self, argv, path, timeout):
        self.log = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while not os.path.exists(path):
            check(self.proc.poll() is None, "%s exited: %s" % (self.NAME, self.text()))
            check(time.monotonic() < deadline, "%s made no %s in %d s" % (self.NAME, path,
                                                                         timeout))
            time.sleep(0.1)

    def text(self):
        if not self.log:
            return ""
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self, timeout):
        """True when it was ours to stop."""
        if not self.proc:
            return False
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        text = self.text().strip()
        if text:
            duet.log("%s's log:\n%s" % (self.NAME, text[-2000:]))
        return True


class Seatd(Daemon):
    """A seatd of the test's own (Debian's seatd, 0.7: its socket is always
    /run/seatd.sock): the compositor's session comes from it. One already
    running is used as it is."""

    NAME = "seatd"
    SOCK = "/run/seatd.sock"

    def __enter__(self):
        seatd = shutil.which("seatd") or shutil.which("seatd", path="/usr/sbin:/sbin")
        if os.path.exists(self.SOCK):
            duet.log("a seatd already listens on %s: used" % self.SOCK)
            return self
        if not seatd:
            raise duet.Skip("no seatd (Debian package seatd, scripts/packages.sh)")
        self.start([seatd, "-g", "root", "-l", "info"], self.SOCK, 30)
        return self

    def __exit__(self, *exc):
        # A socket left behind would keep the next seatd from starting.
        if self.stop(10) and os.path.exists(self.SOCK):
            os.unlink(self.SOCK)


def test_vt_switch():
    """chvt away and back under a compositor in a seatd session."""
    cards()
    if os.environ.get("DUET_HAVE_LIBSEAT") != "1":
        raise duet.Skip("duet-compositor was built without libseat (libseat-dev): no "
                        "sessions, no VT switching")
    vt = current_vt()
    if not vt or not vt.startswith("tty") or not os.path.exists("/dev/tty0"):
        raise duet.Skip("no virtual terminal in this kernel or guest (/dev/tty0, "
                        "/sys/class/tty/tty0/active: %r): nothing to switch" % vt)
    chvt = shutil.which("chvt")
    argv = [chvt] if chvt else [shutil.which("busybox") or "busybox", "chvt"]
    home = int(vt[3:])
    other = 6 if home != 6 else 5
    with Seatd(), KmsSession("kms-vt-switch") as s:
        s.wait_log("modesetting")
        if "session: libseat" not in s.log_text():
            line = [x for x in s.log_text().splitlines() if "session" in x]
            raise duet.Failure("the compositor got no libseat session from seatd, so no VT "
                               "switching: %s" % (line[0] if line else "no session line"))
        bg = s.background()
        client = s.client([duet.program("DUET_PRESENT_CLIENT"), "100000"], name="present-client")
        wait_frames(client, 5)
        try:
            r = subprocess.run(argv + [str(other)], capture_output=True, text=True, timeout=30)
            duet.log("%s %d -> %d %s; active VT now %s" % (" ".join(argv), other, r.returncode,
                                                          r.stderr.strip(), current_vt()))
            check(r.returncode == 0, "chvt %d failed: %s" % (other, r.stderr))
            s.wait_log("session paused", timeout=30)
            paused = check_paused(s, client, "switched away")
        finally:
            subprocess.run(argv + [str(home)], capture_output=True, timeout=30)
        s.wait_log("session active again", timeout=30)
        check_resumed(s, client, bg, paused, "the VT switch back")
        check_input_reopened(s)
        client.stop()


def check_input_reopened(s):
    """The input devices were closed with the paused session and opened
    again with the resumed one (libinput_suspend, libinput_resume): each
    one logged removed after the pause and added again."""
    if os.environ.get("DUET_HAVE_LIBINPUT") != "1":
        duet.log("built without libinput: no input devices to reopen")
        return
    # The devices found at start come before libinput's ready line. The
    # removals may be logged before "session paused": seatd revokes the
    # devices first, and libinput reports them gone on its own.
    ready = "input: libinput on seat0"
    head, _, tail = s.log_text().partition(ready)
    before = sorted(line.split("input: added ", 1)[1] for line in head.splitlines()
                    if "input: added " in line)
    if not before:
        duet.log("no input devices in the guest: nothing to reopen")
        return
    deadline = time.monotonic() + 30
    while True:
        tail = s.log_text().partition(ready)[2]
        removed = [line for line in tail.splitlines() if "input: removed " in line]
        added = sorted(line.split("input: added ", 1)[1] for line in tail.splitlines()
                       if "input: added " in line)
        if len(removed) == len(before) and added == before:
            break
        check(time.monotonic() < deadline,
              "the input devices %r were not closed and opened again across the VT switch: "
              "after the pause %d removed, added %r" % (before, len(removed), added))
        time.sleep(0.2)
    duet.log("input devices reopened after the VT switch: %s" % "; ".join(before))


def test_no_seat():
    """Not root, no seatd, no logind: the compositor cannot reach a seat."""
    setpriv = shutil.which("setpriv")
    argv = compositor_argv("--socket", "duet-kms-noseat")
    env = {"SEATD_SOCK": "/nonexistent/seatd.sock"}
    if os.geteuid() == 0:
        if not setpriv:
            raise duet.Skip("root, and no setpriv to become nobody")
        argv = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] + argv
    status, err = run_compositor(argv, env=env)
    if "built without libseat" in err or "Permission denied (duet was built" in err:
        raise duet.Skip("built without libseat: %s" % err.strip().splitlines()[0])
    check_refused(status, err, "no session to open a display with")
    check("libseat tried seatd at /nonexistent/seatd.sock and logind" in err,
          "the error does not say what was tried:\n%s" % err)
    lines = [x for x in err.splitlines() if "no session" in x]
    check(len(lines) == 1, "%d error lines about the session, want one:\n%s" % (len(lines), err))


def test_headless_mode():
    """--mode on the headless backend is --size plus --refresh."""
    with duet.Session("headless-mode", size="640x480", args=["--mode", "640x480@30"]) as s:
        s.background()
        client = s.client([duet.program("DUET_PRESENT_CLIENT"), "3"], name="present-client")
        _, m = client.wait_line(r"^presented 2 .* refresh=(\d+) ", timeout=60)
        check(int(m.group(1)) == 33333333, "refresh %s ns, want 30 Hz" % m.group(1))
        _, m = client.wait_line(r"^presented 2 .*flags=(0x[0-9a-f]+)", timeout=5)
        check(int(m.group(1), 16) == 0, "headless frames claim flags %s" % m.group(1))


def test_isolation():
    """tests/integration/test_isolation.py's four faults in one session of
    the compositor on the card: a client over its texture budget, one that
    dies mid-request, one that never reads its socket, one that floods;
    a client beside them keeps its window, input and frames, and the log
    names each."""
    cards()
    import test_isolation

    class KmsPath(test_isolation.WaylandPath):
        name = "kms"

        def session(self, name):
            return KmsSession(name, args=self.budget_args)

    test_isolation.run_all(KmsPath(), "kms-isolation")


def test():
    name = sys.argv[1]
    {
        "clients": test_clients,
        "xwayland": test_xwayland,
        "presentation": test_presentation,
        "legacy": lambda: test_presentation(legacy=True),
        "busy": test_busy,
        "bad-device": test_bad_device,
        "no-device": test_no_device,
        "unplug": test_unplug,
        "plug": test_plug,
        "vt-switch": test_vt_switch,
        "no-seat": test_no_seat,
        "headless-mode": test_headless_mode,
        "isolation": test_isolation,
    }[name]()


if __name__ == "__main__":
    duet.main(test)
