"""Policy parity (issue 10): compositor/policy/policy.c and xwm-model/policy.c claim the
same rules. One scenario runs on duet-compositor, on Xvfb + duet-xwm and on
duet-compositor --xwayland (X windows under the compositor's policy, issue
32) with the same test-pattern client built for each, and all must agree on
every window's place, size, focus and stacking after each step:

  map        three windows, one after another (rules 1, 2: centred, the
             new one on top and focused)
  activate   the bottom one (rule 4: raised and focused)
  close      the focused one (rules 3, 8: focus to the topmost left)
  resize     the server resizes the focused one (rule 7: top-left kept)
  move       a pager moves it (duet_test.move_window / _NET_MOVERESIZE_WINDOW
             from the control tools: placed as asked, size kept)
  maximized  a fourth window that asked to be maximized before mapping
             (rules 5, 9: the output's size at 0,0, on top, focused)
  dialog     X only (a Wayland client's dialog is its own toplevel's,
             test_wl_protocol.py's): a window transient for the moved one
             (rule 11: centred over it, on top, focused)

Each step is also checked against the rules themselves, so that the two
servers cannot agree on a wrong answer.
"""

import shutil
import sys
import time

import duet
from duet import check, log
from duet_launch import displays

SCREEN = (1024, 768)
SIZES = {"A": (300, 200), "B": (400, 300), "C": (200, 100)}


class Side:
    """One server, driven through the same calls."""

    def __init__(self, kind):
        self.kind = kind
        if kind == "wayland":
            self.session = duet.Session("parity-wayland", size="%dx%d" % SCREEN)
        elif kind == "xwayland":
            display = next(iter(displays.x_numbers()))
            self.session = duet.Session("parity-xwayland", size="%dx%d" % SCREEN,
                                        args=["--xwayland", "--xwayland-display", str(display)])
        else:
            self.session = duet.XSession("parity-x11", size="%dx%d" % SCREEN)
        self.clients = {}
        self.x_ids = {}

    def spawn(self, name, *extra):
        s = self.session
        if self.kind == "wayland":
            argv = [duet.program("DUET_TEST_PATTERN"), "--app-id", name]
        else:
            argv = [duet.program("DUET_X11_TEST_PATTERN"), "--class", name]
        if name in SIZES:
            argv += ["--size", "%dx%d" % SIZES[name]]
        p = s.client(argv + list(extra), name=name)
        if self.kind != "wayland":
            self.x_ids[name] = p.wait_line(r"^window (0x[0-9a-f]+)$")[1].group(1)
        p.wait_line(r"^mapped ")
        self.clients[name] = p
        s.wait_window(app_id=name)
        s.sync()

    def state(self):
        """Topmost first: (name, x, y, w, h, focused)."""
        self.session.sync()
        return [(w.app_id, w.x, w.y, w.w, w.h, bool(w.focused)) for w in self.session.windows()]

    def window(self, name):
        return [w for w in self.session.windows() if w.app_id == name][0]

    def activate(self, name):
        self.session.testctl("activate", self.window(name).id)

    def close(self, name):
        self.session.testctl("close", self.window(name).id)
        self.clients[name].wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(w.app_id == name for w in self.session.windows()):
            check(time.monotonic() < deadline, "%s still listed after closing" % name)
            time.sleep(0.05)

    def move(self, name, x, y):
        self.session.testctl("move", self.window(name).id, x, y)
        self.session.wait_window(app_id=name, pred=lambda win: (win.x, win.y) == (x, y),
                                 timeout=10)

    def resize(self, name, w, h):
        self.session.testctl("resize", self.window(name).id, w, h)
        self.session.wait_window(app_id=name, pred=lambda win: (win.w, win.h) == (w, h),
                                 timeout=10)


def centred(name):
    w, h = SIZES[name]
    return ((SCREEN[0] - w) // 2, (SCREEN[1] - h) // 2)


def scenario(side):
    """Runs the steps on one side; returns {step: state}."""
    out = {}
    for name in ("A", "B", "C"):
        side.spawn(name)
    out["map"] = side.state()
    side.activate("A")
    out["activate"] = side.state()
    side.close("A")
    out["close"] = side.state()
    side.resize("C", 250, 150)
    out["resize"] = side.state()
    side.move("C", 100, 50)
    out["move"] = side.state()
    side.spawn("D", "--maximized")
    out["maximized"] = side.state()
    if side.kind != "wayland":
        side.activate("C")
        side.spawn("E", "--size", "100x80", "--transient-for", side.x_ids["C"])
        out["dialog"] = side.state()
    return out


def check_rules(states):
    """The rules themselves, on one side's states."""
    m = states["map"]
    check([w[0] for w in m] == ["C", "B", "A"], "map: stacking %s, not C B A" % m)
    check([w[0] for w in m if w[5]] == ["C"], "map: focus %s, not C" % m)
    for w in m:
        check((w[1], w[2]) == centred(w[0]) and (w[3], w[4]) == SIZES[w[0]],
              "map: %s at %s, not centred at its own size" % (w[0], w[1:5]))
    a = states["activate"]
    check([w[0] for w in a] == ["A", "C", "B"] and a[0][5], "activate: %s" % a)
    c = states["close"]
    check([w[0] for w in c] == ["C", "B"] and c[0][5], "close: focus not on C: %s" % c)
    r = states["resize"][0]
    check(r[0] == "C" and (r[1], r[2]) == centred("C") and (r[3], r[4]) == (250, 150),
          "resize: C at %s, not 250x150 at its old top-left" % (r[1:5],))
    v = states["move"][0]
    check(v[0] == "C" and (v[1], v[2], v[3], v[4]) == (100, 50, 250, 150),
          "move: C at %s, not 250x150 at 100,50" % (v[1:5],))
    x = states["maximized"]
    check(x[0] == ("D", 0, 0, SCREEN[0], SCREEN[1], True),
          "maximized: D is %s, not the screen's size at 0,0, on top and focused" % (x[0],))
    if "dialog" in states:
        d = states["dialog"]
        check(d[0] == ("E", 100 + (250 - 100) // 2, 50 + (150 - 80) // 2, 100, 80, True),
              "dialog: E is %s, not centred over C (250x150 at 100,50), on top and focused"
              % (d[0],))


def main():
    results = {}
    kinds = ["wayland", "x11"]
    if shutil.which("Xwayland"):
        kinds.append("xwayland")
    else:
        log("no Xwayland: the compositor's X windows are not compared")
    for kind in kinds:
        side = Side(kind)
        with side.session:
            results[kind] = scenario(side)
        for step, st in results[kind].items():
            log("%-8s %-9s %s" % (kind, step, st))
    for kind in kinds[1:]:
        for step in results[kind]:
            other = "wayland" if step in results["wayland"] else "x11"
            if other == kind:
                continue
            check(results[other][step] == results[kind][step],
                  "the servers disagree after '%s':\n  %-8s %s\n  %-8s %s"
                  % (step, other, results[other][step], kind, results[kind][step]))
    for kind in results:
        check_rules(results[kind])


if __name__ == "__main__":
    if len(sys.argv) != 1:
        sys.exit("usage: test_policy_parity.py")
    duet.main(main)
