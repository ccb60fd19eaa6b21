"""An independent witness of when pixels reach the screen.

Observer runs duet-observe (bench/probes/observe.c) on a framebuffer file, the
screen as a display device sees it: Xvfb's `-fbdir DIR` file
(DIR/Xvfb_screen0) or duet-compositor's `--vfb PATH`. It polls the file about
every millisecond for a horizontal run of a colour (duet-launch clears its
window to 237,237,242) and time-stamps the first poll that finds it, using
nothing the display server reports. The bench takes `composited` from it
where no server says when it composited (xcompmgr), and the tests compare it
with the servers' own "composited" trace events where they do. On a KMS
display fb_path is "drm:CARD": it then reads the buffer the card scans out
(duet-observe --drm; root only), as a display would.

    obs = Observer(fb_path, LAUNCH_RGB, env).start()
    obs.wait_ready(5)        # polling, and the colour is not on screen yet
    ... start the app ...
    obs.wait_seen(10)        # -> ns (CLOCK_MONOTONIC) or None
    done = obs.stop()        # {"name": "observer_done", "polls":, "cpu_ns":, ...}

Size mode (sizes="any" or "WxH,..."): instead of a colour it looks for
duet-resize's size tags (clients/resize.c), which tell the size of the
window drawn, and reports every size as it appears (seen_lines()); the
bench takes a resize's composited from it on openbox.

    obs = Observer(fb_path, None, env, sizes="any").start()
    obs.wait_ready(5)        # polling (tags already on screen are not reported)
    ... resize ...
    obs.seen_lines()         # [{"name": "seen", "ns":, "width":, "height":, ...}]
"""
import json
import signal
import subprocess
import threading
import time

from duet_bench import procs
from duet_launch import proc
from duet_launch.paths import PROBES, find_own

# duet-launch's clear colour (0.93, 0.93, 0.95), as 8-bit RGB.
LAUNCH_RGB = (237, 237, 242)


class ObserverError(Exception):
    pass


def xvfb_fb_path(fbdir):
    """The file Xvfb writes screen 0 to with `-fbdir fbdir`."""
    return fbdir.rstrip("/") + "/Xvfb_screen0"


def find_observe():
    return find_own("duet-observe", PROBES)


class Observer:
    def __init__(self, fb_path, rgb, env, run=32, interval_us=1000, timeout_ms=None,
                 keep=False, exe=None, sizes=None):
        self.exe = exe or find_observe()
        if not self.exe:
            raise ObserverError("duet-observe is not built (bench/probes/duet-observe in the build dir)")
        source = (["--drm", fb_path[4:]] if fb_path.startswith("drm:")
                  else ["--fb", fb_path])
        if sizes:
            self.argv = [self.exe] + source + ["--sizes", sizes,
                         "--interval-us", str(interval_us)]
        else:
            self.argv = [self.exe] + source + ["--rgb", "%d,%d,%d" % tuple(rgb),
                         "--run", str(run), "--interval-us", str(interval_us)]
        if timeout_ms:
            self.argv += ["--timeout-ms", str(int(timeout_ms))]
        if keep:
            self.argv.append("--keep")
        self.env = env
        self.child = None
        self.lines = []      # every JSON line, in order
        self.ready = None    # the observer_ready line
        self.seen = None     # the first seen line
        self.done = None     # the observer_done line
        self.stderr = []
        self._cond = threading.Condition()
        self._eof = False

    # ------------------------------------------------------------ process
    def start(self):
        self.child = proc.Child("observer", self.argv, self.env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        return self

    def _read_stdout(self):
        for raw in self.child.popen.stdout:
            try:
                ev = json.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                continue
            with self._cond:
                self.lines.append(ev)
                name = ev.get("name")
                if name == "observer_ready" and self.ready is None:
                    self.ready = ev
                elif name == "seen" and self.seen is None:
                    self.seen = ev
                elif name == "observer_done":
                    self.done = ev
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def _read_stderr(self):
        for raw in self.child.popen.stderr:
            self.stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))
            del self.stderr[:-20]

    def _wait_for(self, pred, timeout):
        deadline = time.monotonic() + procs.patience(timeout)
        with self._cond:
            while not pred():
                left = deadline - time.monotonic()
                if self._eof or left <= 0:
                    return False
                self._cond.wait(min(left, 0.1))
        return True

    def _why(self):
        status = self.child.status() if self.child else "not started"
        tail = "; ".join(self.stderr[-3:])
        return "duet-observe %s%s" % (status, (": " + tail) if tail else "")

    # ------------------------------------------------------------ results
    def wait_ready(self, timeout=10.0):
        """Blocks until the observer polls the framebuffer and the colour is
        absent. Returns the ready line's ns; raises ObserverError otherwise."""
        if not self._wait_for(lambda: self.ready is not None, timeout):
            raise ObserverError("observer not ready within %.1f s (%s)" % (timeout, self._why()))
        return self.ready["ns"]

    def seen_ns(self):
        """CLOCK_MONOTONIC ns of the first poll that saw the colour, or None."""
        with self._cond:
            return self.seen["ns"] if self.seen else None

    def seen_lines(self):
        """Every seen line so far (size mode: one per size as it appeared)."""
        with self._cond:
            return [e for e in self.lines if e.get("name") == "seen"]

    def wait_seen(self, timeout=10.0):
        """seen_ns(), waiting up to timeout seconds for it; None if not seen."""
        self._wait_for(lambda: self.seen is not None, timeout)
        return self.seen_ns()

    def stop(self, timeout=5.0):
        """Stops polling (SIGTERM) if it still runs and returns its
        observer_done line: polls, cpu_ns (its own CPU), wall_ns."""
        if self.child is None:
            raise ObserverError("observer was never started")
        if self.child.alive():
            self.child.signal(signal.SIGTERM)
        self._wait_for(lambda: self._eof, timeout)
        try:
            self.child.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
        self.child.stop()
        if self.done is None:
            raise ObserverError("observer ended without its done line (%s)" % self._why())
        return self.done
