"""A page as a real browser shows it: headless chromium driven over its
DevTools pipe (stdlib only). One chromium opens a file, runs a script in
it and takes screenshots of parts of it, all in one start (about 2 s
here), where a start per screenshot would cost that each time.

chromium talks on fds 3 (commands in) and 4 (replies and events out),
each message a JSON object ending in a NUL byte (--remote-debugging-pipe).
Its profile lives in a directory the caller gives (the test's own), so no
state is shared with another run.

third_party() keeps tests/integration/duet.py's rule for a program from a
Debian package (scripts/packages.sh lists chromium): missing under CI is a
failure, elsewhere the caller skips; the test third-party-packages checks
that the name's package is in the lists.
"""
import base64
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "integration"))
import pngread  # noqa: E402

# A hang guard for one reply, not a time chromium is allowed.
REPLY_S = 60


class Missing(Exception):
    """The program is not installed, outside CI: the caller skips."""


class BrowserError(Exception):
    pass


def third_party(name):
    """Path of a program from a Debian package. Missing: a failure under
    CI (scripts/test has just installed the lists), else Missing."""
    path = shutil.which(name)
    if path:
        return path
    msg = "%s is not installed (Debian package %s; scripts/packages.sh)" % (name, name)
    if os.environ.get("CI") == "true":
        raise BrowserError(msg)
    raise Missing(msg)


class Chromium:
    """One headless chromium; close() ends it (and its children: it runs in
    a session of its own)."""

    def __init__(self, profile, width=1200, height=900):
        exe = third_party("chromium")
        os.makedirs(profile, exist_ok=True)
        self.log_path = os.path.join(profile, "chromium.log")
        # The pipe's ends must be chromium's fds 3 and 4: a shell moves them
        # there from stdin and stdout, which then become /dev/null and the log.
        cmd_r, self._cmd_w = os.pipe()
        self._out_r, out_w = os.pipe()
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(
                ["sh", "-c", 'exec "$@" 3<&0 4>&1 0</dev/null 1>&2', "sh", exe,
                 "--headless=new", "--no-sandbox", "--remote-debugging-pipe",
                 "--user-data-dir=" + os.path.join(profile, "data"),
                 "--window-size=%d,%d" % (width, height), "--force-device-scale-factor=1",
                 "--hide-scrollbars", "--no-first-run", "--disable-gpu", "--disable-extensions",
                 "--disable-dev-shm-usage", "about:blank"],
                stdin=cmd_r, stdout=out_w, stderr=log, start_new_session=True)
        os.close(cmd_r)
        os.close(out_w)
        self._buf = b""
        self._events = []
        self._next = 0
        self.session = None

    def log(self, limit=3000):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-limit:]
        except OSError:
            return ""

    def _message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._out_r], [], [], left)[0]:
                raise BrowserError("chromium did not answer in %d s; its log: %s"
                                   % (REPLY_S, self.log()))
            chunk = os.read(self._out_r, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed its pipe (exit %s); its log: %s"
                                   % (self.proc.poll(), self.log()))
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=True):
        """A DevTools command's result (in the page's session unless
        session=False)."""
        self._next += 1
        msg = {"id": self._next, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        try:
            os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        except BrokenPipeError:
            raise BrowserError("chromium is gone (exit %s); its log: %s"
                               % (self.proc.poll(), self.log()))
        deadline = time.monotonic() + REPLY_S
        while True:
            m = self._message(deadline)
            if m.get("id") == self._next:
                if "error" in m:
                    raise BrowserError("%s: %s" % (method, m["error"]))
                return m["result"]
            if "method" in m:
                self._events.append(m)

    def wait_event(self, method):
        deadline = time.monotonic() + REPLY_S
        while True:
            for k, m in enumerate(self._events):
                if m["method"] == method:
                    del self._events[k]
                    return m["params"]
            self._events.append(self._message(deadline))

    def open(self, path):
        """Opens path in a new tab and waits for its load event."""
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)
        self.session = self.call("Target.attachToTarget", {
            "targetId": target["targetId"], "flatten": True}, session=False)["sessionId"]
        self.call("Page.enable")
        self.call("Page.navigate", {"url": "file://" + os.path.abspath(path)})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, script):
        """A script's value in the page: the script returns a JSON string."""
        r = self.call("Runtime.evaluate", {"expression": script, "returnByValue": True})
        if "exceptionDetails" in r:
            raise BrowserError("the page's script failed: %s" % r["exceptionDetails"])
        return json.loads(r["result"]["value"])

    def screenshot(self, x, y, width, height, keep=None):
        """The page's area (CSS px from the document's top left) as the
        browser paints it, decoded (pngread.Image); written to keep too."""
        r = self.call("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": x, "y": y, "width": width, "height": height, "scale": 1}})
        data = base64.b64decode(r["data"])
        if keep:
            with open(keep, "wb") as f:
                f.write(data)
        return pngread.decode(data)

    def close(self):
        try:
            self.call("Browser.close", session=False)
        except BrowserError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for fd in (self._cmd_w, self._out_r):
            os.close(fd)


# Run in the report: every hop diagram (report_hops.py) as the browser
# parsed and laid it out: where it is on the page, its plot frame, and
# each drawn part's geometry from the DOM's own values (baseVal: the
# attributes as parsed) and computed colours.
HOPS_SCRIPT = r"""
JSON.stringify(Array.from(document.querySelectorAll('svg.hops')).map(svg => {
  const r = svg.getBoundingClientRect();
  const v = (el, a) => el[a].baseVal.value;
  const text = (g, sel) => { const t = g.querySelector(sel); return t ? t.textContent : null; };
  const shown = el => { const s = getComputedStyle(el);
    return s.display !== 'none' && s.visibility === 'visible' && s.opacity !== '0'; };
  const frame = svg.querySelector('rect.frame');
  return {
    id: svg.id,
    rect: [r.x + scrollX, r.y + scrollY, r.width, r.height],
    scale: r.width / svg.viewBox.baseVal.width,
    frame: frame ? [v(frame, 'x'), v(frame, 'y'), v(frame, 'width'), v(frame, 'height')] : null,
    title: text(svg, 'text.title'),
    lanes: Array.from(svg.querySelectorAll('g.lane')).map(g => {
      const l = g.querySelector('line.lane-line'), name = g.querySelector('text.lane-name');
      return {pid: g.dataset.pid, y: l ? v(l, 'y1') : null,
              flat: l ? v(l, 'y2') === v(l, 'y1') : null,
              name: text(g, 'text.lane-name'), count: text(g, 'text.lane-count'),
              colour: name ? getComputedStyle(name).fill : null};
    }),
    msgs: Array.from(svg.querySelectorAll('g.msg')).map(g => {
      const l = g.querySelectorAll('line'), p = g.querySelectorAll('polygon');
      if (l.length !== 1 || p.length !== 1)
        return {parts: [l.length, p.length]};
      return {parts: [1, 1], x1: v(l[0], 'x1'), y1: v(l[0], 'y1'), x2: v(l[0], 'x2'),
              y2: v(l[0], 'y2'), tip: [p[0].points[0].x, p[0].points[0].y],
              corners: p[0].points.length, stroke: getComputedStyle(l[0]).stroke,
              fill: getComputedStyle(p[0]).fill, shown: shown(l[0]) && shown(p[0])};
    }),
    ticks: Array.from(svg.querySelectorAll('g.tick')).map(g => (
      {x: v(g.querySelector('line'), 'x1'), ms: parseFloat(text(g, 'text'))})),
    marks: Array.from(svg.querySelectorAll('line.mark')).map(l => (
      {x: v(l, 'x1'), point: l.dataset.point})),
  };
}))
"""


def hop_diagrams(chromium, report, shots):
    """Every hop diagram of report (an HTML file) as the browser shows it:
    HOPS_SCRIPT's record of each, with "image", a screenshot of the
    diagram (also written to shots/ID.png)."""
    chromium.open(report)
    found = chromium.evaluate(HOPS_SCRIPT)
    os.makedirs(shots, exist_ok=True)
    for d in found:
        x, y, w, h = d["rect"]
        d["image"] = chromium.screenshot(x, y, w, h, keep=os.path.join(shots, d["id"] + ".png"))
    return found


def rgb(css):
    """(r, g, b) of a computed colour "rgb(r, g, b)"."""
    if not css or not css.startswith("rgb("):
        return None
    return tuple(int(c) for c in css[4:-1].split(","))
