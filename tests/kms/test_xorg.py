#!/usr/bin/env python3
"""The X side on a KMS device: Xorg with the modesetting driver (configured
as `duet run x11 --server xorg` does, bench/duet_launch/xorg.py), in the
guest of scripts/test-kms (suite kms). Outside a guest with a card each
test skips (with DUET_KMS_GUEST=1 it fails: the guest must have one).

usage: test_xorg.py xwm|duet-run|bench-stack|openbox|isolation

  xwm       Xorg + duet-xwm: a duet-launch window reaches duet-xwm's
            composited frame (its screenshot shows the app's pixels), and
            duet-xwm logs the content path it took for that window. With
            a second card (vkms, loaded from $DUET_VKMS_MODULE) Xorg runs
            glamor and offers DRI3, and the path must be zero-copy (the
            window's pixmap imported as a dmabuf); with one card there is
            no DRI3, and the path must be the MIT-SHM copy, said so.
  duet-run  `duet run x11 --server xorg --test-control` runs the app, and a
            screenshot taken through duet-xwm shows it
  bench-stack  the bench's x11 stack on Xorg (stacks.Stack, xserver="xorg")
            starts and passes its readiness probe (a duet-launch composited),
            and its notes say how Xorg runs and which content path ran
  openbox   the bench's openbox stack on Xorg, started as the bench starts
            it (without its readiness probe, which retries): once Xorg +
            openbox are ready, a duet-launch mapped at once is managed
            (reparented into a frame) and the buffer the card scans out
            shows its pixels, read by the bench's observer (duet-observe
            --drm) without disturbing the display; then with xcompmgr -c
            the same for a second window. openbox announces itself early in
            its start-up, and a window mapped before the start-up ends stays
            unmapped until some later event (docs/board.md section 6): the
            stack waits for openbox to answer a request (duet-xctl
            wait-wm-loop). In the guest fontconfig's caches must be there
            (scripts/test-kms copies the host's), or that start-up scans
            every font first.
  isolation an X client over duet-xwm's texture budget, one that dies
            mid-request, one that never reads its socket and one that
            floods, one after the other beside a well-behaved X client,
            which keeps its window, input and frames
            (tests/integration/test_isolation.py's run_all)
"""

import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import duet  # noqa: E402
import pngread  # noqa: E402
from duet import check  # noqa: E402
from duet_launch import xorg  # noqa: E402
from test_kms import cards, launch_check, in_guest  # noqa: E402


def xorg_program():
    path = shutil.which("Xorg")
    if not path:
        msg = "Xorg is not installed (Debian package %s)" % xorg.PACKAGE
        if in_guest():
            raise duet.Failure(msg)
        raise duet.Skip(msg)
    return path


class Vkms:
    """vkms beside virtio-gpu for the test's length: Debian's kernels lack
    it, scripts/test-kms builds it and names it in $DUET_VKMS_MODULE. It is
    unloaded again after, so the other kms tests see one card."""

    def __init__(self):
        self.loaded = False

    def __enter__(self):
        module = os.environ.get("DUET_VKMS_MODULE")
        if not module or os.path.isdir("/sys/module/vkms"):
            return self
        before = set(os.listdir("/dev/dri"))
        for dep in ("drm_kms_helper", "drm_shmem_helper"):
            subprocess.run(["modprobe", dep], capture_output=True)
        r = subprocess.run(["insmod", module], capture_output=True, text=True)
        check(r.returncode == 0, "insmod %s: %s" % (module, r.stderr.strip()))
        self.loaded = True
        deadline = time.monotonic() + 10
        while not [n for n in set(os.listdir("/dev/dri")) - before if n.startswith("card")]:
            check(time.monotonic() < deadline, "vkms made no card in /dev/dri")
            time.sleep(0.1)
        duet.log("vkms loaded: /dev/dri has %s" % " ".join(sorted(os.listdir("/dev/dri"))))
        return self

    def __exit__(self, *exc):
        if self.loaded:
            # The X server has let go of the card by now; give it a moment.
            for _ in range(50):
                if subprocess.run(["rmmod", "vkms"], capture_output=True).returncode == 0:
                    break
                time.sleep(0.2)
        return False


class XorgSession(duet.XSession):
    """XSession with Xorg on the card instead of Xvfb (duet_launch starts
    it as for every Xorg stack: xorg.Setup in the stack's directory)."""
    start_timeout = 120

    def __init__(self, name, **kw):
        super().__init__(name, xserver="xorg", **kw)
        self.setup = None

    def start(self):
        try:
            super().start()
        finally:
            self.setup = self.stack.xorg if self.stack else None
        duet.log("Xorg config:\n" + open(self.setup.config).read())
        # The screen is the card's preferred mode.
        r = subprocess.run(["xwininfo", "-root", "-display", self.display],
                           capture_output=True, text=True)
        w = re.search(r"Width: (\d+)", r.stdout)
        h = re.search(r"Height: (\d+)", r.stdout)
        check(w and h, "xwininfo -root: %s%s" % (r.stdout, r.stderr))
        self.size = "%sx%s" % (w.group(1), h.group(1))
        glamor, what = self.setup.accel()
        self.glamor = glamor
        duet.log("Xorg on %s, %s: %s" % (self.display, self.size, what))

    def save_artifacts(self):
        super().save_artifacts()
        if getattr(self, "setup", None):
            duet.log("Xorg.log (tail):\n" + self.setup.log_tail(4000))


def xwm_env():
    # EGL on X11 through DRI3 where the server offers it: Mesa then opens
    # the server's device with kms_swrast (llvmpipe drawing into buffers
    # of the card), which can import dmabufs; LIBGL_ALWAYS_SOFTWARE would
    # force the drisw path, which cannot.
    return {"LIBGL_ALWAYS_SOFTWARE": "0", "MESA_LOADER_DRIVER_OVERRIDE": "kms_swrast"}


def launch_argv():
    return [duet.program("DUET_LAUNCH"), "--backend", "x11", "--engine", "sw", "--size",
            "400x300", "--stay", "--timeout-ms", "120000"]


def diagnose(s):
    """What the X server has, when a window never showed up."""
    for argv in (["xwininfo", "-root", "-tree"], ["xprop", "-root"]):
        r = subprocess.run(argv + ["-display", s.display], capture_output=True, text=True)
        duet.log("%s:\n%s%s" % (" ".join(argv), r.stdout[-3000:], r.stderr[-500:]))
    for p in s.procs:
        try:
            with open("/proc/%d/wchan" % p.pid) as f:
                wchan = f.read()
            with open("/proc/%d/stat" % p.pid) as f:
                state = f.read().split()[2]
        except OSError:
            wchan = state = "gone"
        duet.log("%s pid %d: state %s, wchan %s" % (p.name, p.pid, state, wchan))


def show_launch(s, bg, label):
    proc = s.client(launch_argv(), name="duet-launch")
    try:
        win = s.wait_window(pred=lambda w: w.pid in (0, proc.pid), timeout=90)
    except duet.Failure:
        diagnose(s)
        raise
    img, what = s.screenshot_until(lambda img: launch_check(img, win, bg, 0, 0), label=label,
                                   timeout=90)
    duet.check_outside_is_background(img, win, bg, margin=8)
    duet.log("duet-launch on %s's screen: %s in its %dx%d window" % (s.wm_kind, what, win.w,
                                                                     win.h))
    return proc, win


def test_xwm():
    cards()
    xorg_program()
    with Vkms():
        with XorgSession("xorg-xwm", wm_env=xwm_env()) as s:
            log = lambda: s.wm.stderr_tail(200000)  # noqa: E731
            bg = s.background()
            proc, win = show_launch(s, bg, "launch")
            m = re.search(r"content path: (\S+) \((.*?)\); output path", log())
            check(m, "duet-xwm logged no content path:\n" + log()[-3000:])
            duet.log("duet-xwm: content path %s (%s)" % (m.group(1), m.group(2)))
            wm = re.search(r"window 0x%x: content path (\S+) \((.*)\)" % win.id, log())
            check(wm, "duet-xwm logged no content path for window 0x%x:\n%s"
                  % (win.id, log()[-3000:]))
            duet.log("window 0x%x: %s (%s)" % (win.id, wm.group(1), wm.group(2)))
            if s.setup.gpu is not None or in_guest() and os.environ.get("DUET_VKMS_MODULE"):
                check(s.glamor, "two cards, yet Xorg runs without glamor: %s"
                      % s.setup.accel()[1])
            if s.glamor:
                check(m.group(1) == "zero-copy" and wm.group(1) == "zero-copy",
                      "Xorg runs glamor (DRI3), but duet-xwm's path is %s / window %s (%s)"
                      % (m.group(1), wm.group(1), wm.group(2)))
            else:
                check(wm.group(1) == "shm-copy" and "no DRI3" in wm.group(2),
                      "no glamor, yet the window's path is %s (%s)"
                      % (wm.group(1), wm.group(2)))
            # A change after the first frame reaches the screen too: the
            # window resized (new pixmap, new import) still shows its pixels.
            s.xctl("resize", "0x%x" % win.id, 500, 360)
            win2 = s.wait_window(pred=lambda w: w.id == win.id and w.w == 500, timeout=60)
            s.screenshot_until(lambda img: launch_check(img, win2, bg, 0, 0), label="resized",
                               timeout=90)
            proc.stop()
            s.check_alive()


def test_duet_run():
    cards()
    xorg_program()
    launcher = duet.program("DUET_LAUNCHER")
    xctl = duet.program("DUET_XCTL")
    workdir = os.environ.get("DUET_TEST_OUTDIR") or "/tmp"
    shot = os.path.join(workdir, "xorg-duet-run.png")
    if os.path.exists(shot):
        os.unlink(shot)
    script = ('"$1" & app=$!; "$2" wait-window duet-launch 90 >/dev/null || exit 3; '
              'sleep 2; "$2" screenshot "$3"; status=$?; kill $app; exit $status')
    env = duet.base_env(os.environ.get("XDG_RUNTIME_DIR") or "/tmp")
    env.update(xwm_env())
    # Emulated: waits stretch, as for the bench's stack below (Xorg took
    # more than duet run's 30 s once beside the host's tests and a CPU hog,
    # 2026-11-28).
    env.setdefault("DUET_BENCH_PATIENCE", "5")
    with Vkms():
        r = subprocess.run([launcher, "run", "x11", "--server", "xorg", "--test-control", "-v",
                            "--", "sh", "-c", script.replace('"$1"', " ".join(launch_argv())),
                            "sh", "unused", xctl, shot],
                           env=env, capture_output=True, text=True, timeout=240)
    # duet run's own lines first: a log tail after them would push them out.
    duet.log("duet run -> %d; its lines:\n%s\nstderr (tail):\n%s"
             % (r.returncode, "\n".join(l for l in r.stderr.splitlines() if l.startswith("duet")),
                r.stderr[-3000:]))
    check(r.returncode == 0, "duet run x11 --server xorg exited %d" % r.returncode)
    check("Xorg: " in r.stderr, "duet run did not say how Xorg runs")
    img = pngread.read(shot)
    body = img.count_color((237, 237, 242), 0, 0, img.width, img.height)
    check(body > 300 * 200, "the screenshot has %d pixels of duet-launch's colour" % body)


def test_bench_stack():
    cards()
    xorg_program()
    from duet_bench import stacks
    workdir = os.environ.get("DUET_TEST_OUTDIR") or "/tmp"
    env = duet.base_env(os.environ.get("XDG_RUNTIME_DIR") or "/tmp")
    env.update(xwm_env())
    os.environ.setdefault("DUET_BENCH_PATIENCE", "5")  # emulated: waits stretch
    with Vkms():
        st = stacks.Stack("x11", workdir, env, xserver="xorg")
        try:
            st.start()
            duet.log("bench x11 stack on Xorg: probe %r; notes:\n  %s"
                     % (st.probe, "\n  ".join(st.notes)))
            check(st.probe is not None, "no readiness probe result")
            check(any(n.startswith("X server: Xorg") for n in st.notes),
                  "the notes do not say the server is Xorg: %r" % st.notes)
            path = [n for n in st.notes if "content path:" in n]
            check(path, "the notes do not name duet-xwm's content path: %r" % st.notes)
            if st.xorg.accel()[0]:
                check("content path: zero-copy" in path[0], "glamor, yet %s" % path[0])
        except stacks.StackError as e:
            raise duet.Failure("the stack did not start: %s\n%s" % (e, e.logs))
        finally:
            st.stop()
            st.cleanup()


def reparented(display, wid):
    """True when the window's parent is not the root (a WM framed it)."""
    r = subprocess.run(["xwininfo", "-display", display, "-id", "0x%x" % wid, "-children"],
                       capture_output=True, text=True)
    m = re.search(r"Parent window id: (0x[0-9a-f]+)( \(the root window\))?", r.stdout)
    return bool(m) and not m.group(2)


def fontconfig_cached():
    """openbox draws its first title with fontconfig; without caches it
    scans every font first (minutes under TCG). virtme-ng's /var/cache is
    an empty tmpfs: scripts/test-kms copies the host's caches in."""
    if not in_guest():
        return
    d = "/var/cache/fontconfig"
    n = len([f for f in os.listdir(d) if f.endswith(".cache-8")]) if os.path.isdir(d) else 0
    check(n > 0, "the guest's %s holds no fontconfig caches: openbox's start-up would scan "
          "every font (scripts/test-kms copies the host's)" % d)


def observe_launch(st, what):
    """Maps a duet-launch and waits until the card's scanout shows it (the
    bench's observer, duet-observe --drm); returns the app and its window."""
    from duet_bench import observer
    obs = observer.Observer(st.fb_path, observer.LAUNCH_RGB, st.base_env).start()
    proc = None
    try:
        obs.wait_ready(20)
        check(obs.ready.get("format") == "drm", "the observer read %r" % obs.ready)
        proc = subprocess.Popen(launch_argv(), env=st.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        # Shown within seconds; x DUET_BENCH_PATIENCE (5 here).
        if not obs.wait_seen(30):
            r = subprocess.run(["xwininfo", "-root", "-tree", "-display", st.display],
                               capture_output=True, text=True)
            raise duet.Failure("%s: duet-launch's window never reached the card's scanout in "
                               "150 s; windows:\n%s\nlogs: %r"
                               % (what, r.stdout[-3000:], st.logs()))
        duet.log("%s: seen on the scanout: %r" % (what, obs.seen))
        done = obs.stop()
        duet.log("%s: observer done: %r" % (what, done))
        obs = None
    except BaseException:
        if proc:
            proc.kill()
            proc.wait()
        raise
    finally:
        if obs:
            try:
                obs.stop()
            except observer.ObserverError:
                pass
    wins = subprocess.run(["xwininfo", "-root", "-tree", "-display", st.display],
                          capture_output=True, text=True).stdout
    m = re.search(r"(0x[0-9a-f]+) \"duet-launch\"", wins)
    check(m, "%s: no duet-launch window:\n%s" % (what, wins[-3000:]))
    check(reparented(st.display, int(m.group(1), 16)),
          "%s: duet-launch's window is shown but not framed by openbox:\n%s"
          % (what, wins[-3000:]))
    return proc


def test_openbox():
    cards()
    xorg_program()
    fontconfig_cached()
    from duet_bench import stacks
    workdir = os.environ.get("DUET_TEST_OUTDIR") or "/tmp"
    env = duet.base_env(os.environ.get("XDG_RUNTIME_DIR") or "/tmp")
    os.environ.setdefault("DUET_BENCH_PATIENCE", "5")  # emulated: waits stretch
    with Vkms():
        why = stacks.missing("openbox", "xorg")
        check(why is None, "the openbox stack is refused on Xorg: %s" % why)
        st = stacks.Stack("openbox", workdir, env, xserver="xorg")
        try:
            try:
                env = st._start_openbox_wm()
            except stacks.StackError as e:
                raise duet.Failure("openbox did not start: %s\n%s" % (e, st.logs()))
            duet.log("openbox on Xorg %s; notes:\n  %s" % (st.display, "\n  ".join(st.notes)))
            check(st.fb_path == "drm:" + st.xorg.screen.node, "observer source %r" % st.fb_path)
            # At once: openbox must manage a window mapped as soon as the
            # stack says it is ready (Xorg draws it: no compositor yet).
            proc = observe_launch(st, "openbox")
            proc.kill()
            proc.wait()
            try:
                st._start_openbox_cm(env)
            except stacks.StackError as e:
                raise duet.Failure("xcompmgr did not start: %s\n%s" % (e, st.logs()))
            # The whole stack: the window composited by xcompmgr.
            proc = observe_launch(st, "openbox + xcompmgr")
            proc.kill()
            proc.wait()
            for role in ("server", "wm", "compositor"):
                check(st.procs[role].alive(), "%s %s" % (role, st.procs[role].status()))
        finally:
            st.stop()
            st.cleanup()


def test_isolation():
    """tests/integration/test_isolation.py's four faults of an X client in
    one session of Xorg + duet-xwm (with vkms, as xwm: glamor and DRI3
    where it loads)."""
    cards()
    xorg_program()
    import test_isolation

    class XorgPath(test_isolation.XwmPath):
        name = "xorg"

        def session(self, name):
            return XorgSession(name, wm_args=self.budget_args, wm_env=xwm_env())

    with Vkms():
        test_isolation.run_all(XorgPath(), "xorg-isolation")


def test():
    {"xwm": test_xwm, "duet-run": test_duet_run, "bench-stack": test_bench_stack,
     "openbox": test_openbox, "isolation": test_isolation}[sys.argv[1]]()


if __name__ == "__main__":
    duet.main(test)
