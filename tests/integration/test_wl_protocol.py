#!/usr/bin/env python3
"""Protocol rules whose outcome a client or the screen can tell (issue 10,
"protocol correctness"), played by duet-wl-probe (tests/clients/wl-probe.c).

usage: test_wl_protocol.py SCENARIO

subsurface-merge     a desynchronized child of a synchronized subsurface
                     commits while cached, its parent turns desynchronized,
                     the child commits again: the newer content stays (the
                     cache was merged and applied whole, not replayed later).
subsurface-feedback  a cached synchronized commit replaced by a newer one
                     before the parent's commit: its presentation feedback
                     is discarded, the newer one's presented.
maximize-ack         maximize, restore, fullscreen, unfullscreen: the window
                     moves only once the client acks the configure and
                     commits, not when it asks.
buffer-transform     buffers drawn with wl_surface.set_buffer_transform 90
                     and flipped-270: shown turned back (and flipped) as
                     weston shows them, the surface size following.
offset               wl_surface.offset moves a subsurface and a popup.
selection-focus      wl_data_device.set_selection from an unfocused client or
                     with a serial older than the focus is ignored.
popup-grab           xdg_popup.grab with a click's serial: grabbing popups
                     (nested too) take the keyboard focus, a click outside
                     dismisses them and gives it back, so does another
                     client's window taking the focus; a grab whose parent is
                     not the topmost grabbing popup is
                     xdg_wm_base.not_the_topmost_popup.
popup-grab-serial    a grab with a serial that is not the client's last
                     button or key press (its keyboard enter, another
                     client's click, a click older than the last press) is
                     denied: popup_done at once, no keyboard focus; a
                     grabbing popup on such a dismissed one is dismissed too,
                     no error.
popup-grab-pointer   a grab taken under the pointer takes it from another
                     client's window (leave); during a grab that window gets
                     no pointer enter, motion or button; a click on it
                     dismisses the grab and goes to nobody; the client's own
                     window taking the focus leaves the keyboard on the
                     grabbing popup.
subsurface-restack   place_below between siblings and below the parent:
                     applied with the parent's next commit, not before.
viewport-scale       a wp_viewport destination scales a 40x30 buffer to a
                     200x150 window; a source crop then shows one quadrant.
minimize             xdg_toplevel.set_minimized hides the window and moves
                     the focus on; activating it shows and focuses it again.
dialog               a toplevel with xdg_toplevel.set_parent maps centred over
                     its parent (moved off-centre first), on top and focused
                     (policy rule 11, duet-xwm's for WM_TRANSIENT_FOR).
selection-transfer   a focused client's selection reaches the client that
                     takes the focus next (offer, MIME type) and its bytes
                     arrive through the pipe the receiver gave.
positioner-constrain a popup that does not fit on the output: flip-x opens
                     it on the other side, slide-x moves it until it fits,
                     none leaves it where the rules put it.
"""

import subprocess
import time

import duet
from duet import check

RED, GREEN, BLUE, YELLOW, WHITE = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), \
    (255, 255, 255)


class Probe:
    """duet-wl-probe MODE, stepped through its "step NAME" lines."""

    def __init__(self, s, mode):
        self.s = s
        self.proc = s.spawn("probe", [duet.program("DUET_WL_PROBE"), mode], s.env,
                            stdin=subprocess.PIPE)
        self.line = 0  # where the next step line is looked for

    def wait_step(self, name):
        self.line, _ = self.proc.wait_line(r"^step %s$" % name, start=self.line, timeout=20)
        self.line += 1
        self.s.sync()

    def go(self):
        self.proc.popen.stdin.write(b"go\n")
        self.proc.popen.stdin.flush()

    def finish(self):
        self.proc.popen.stdin.close()
        status = self.proc.wait(20)
        out = "\n".join(self.proc.lines)
        duet.log("duet-wl-probe:\n" + out)
        check(status == 0, "duet-wl-probe exited %d:\n%s\n%s"
              % (status, out, self.proc.stderr_tail()))

    def colours_at(self, step, points, what, win=None, app_id="duet-probe", size=None,
                   shot=None):
        """At STEP: the colours at points ((x, y), colour) of the window
        (win, or the one app_id has now, size (w, h) if given) on a
        screenshot (shot, or named after the step); then lets the probe go
        on. Returns the window."""
        self.wait_step(step)
        if win is None:
            win = self.s.wait_window(app_id=app_id)
        if size is not None:
            check((win.w, win.h) == size,
                  "%s is %dx%d, want %dx%d" % ((app_id, win.w, win.h) + size))
        img = self.s.screenshot(shot or step)
        expect_colours(img, win, points, what)
        self.go()
        return win

    def at(self, step, *commands):
        """At STEP: duet-testctl's commands (each a tuple of its
        arguments); then lets the probe go on."""
        self.wait_step(step)
        for command in commands:
            self.s.testctl(*command)
        self.go()

    def click_window(self, step, app_id, x, y):
        """At STEP: a left click at x, y of app_id's window (returned);
        then lets the probe go on."""
        self.wait_step(step)
        win = self.s.wait_window(app_id=app_id)
        click(self.s, win.x + x, win.y + y)
        self.go()
        return win


def probe_alone(mode):
    """The scenario of a mode duet-wl-probe plays and checks by itself, no
    step to drive."""
    return lambda s: Probe(s, mode).finish()


def expect_colours(img, win, points, what):
    for (x, y), want in points:
        got = img.pixel(win.x + x, win.y + y)
        check(got == want, "%s: pixel %d,%d of window %r is %r, want %r"
              % (what, x, y, win, got, want))


def subsurface_merge(s):
    probe = Probe(s, "subsurface-merge")
    # The child is 40x40 at 30,30 of the toplevel.
    probe.colours_at("check", [((50, 50), YELLOW), ((25, 25), GREEN), ((5, 5), RED)],
                     "the child's newest commit", shot="merge")
    probe.finish()


def maximize_ack(s):
    ow, oh = (int(v) for v in s.size.split("x"))
    probe = Probe(s, "maximize-ack")

    def window(step):
        probe.wait_step(step)
        win = s.wait_window(app_id="duet-probe")
        duet.log("%s: %r" % (step, win))
        return win

    normal = window("mapped")
    check((normal.x, normal.y) != (0, 0), "a 200x150 window placed at 0,0: %r" % (normal,))
    probe.go()
    for asked, applied, full in (("maximize-asked", "maximized", True),
                                 ("restore-asked", "restored", False),
                                 ("fullscreen-asked", "fullscreen", True),
                                 ("unfullscreen-asked", "unfullscreen", False)):
        before = (0, 0, ow, oh) if not full else (normal.x, normal.y, normal.w, normal.h)
        win = window(asked)
        check((win.x, win.y, win.w, win.h) == before,
              "%s: the window changed before the client acked and committed: %r, want %r"
              % (asked, win, before))
        probe.go()
        after = (0, 0, ow, oh) if full else (normal.x, normal.y, normal.w, normal.h)
        win = window(applied)
        check((win.x, win.y, win.w, win.h) == after,
              "%s: window %r after ack and commit, want %r" % (applied, win, after))
        probe.go()
    probe.finish()


def buffer_transform(s):
    probe = Probe(s, "buffer-transform")
    # The 100x60 buffer's quadrants are red, green / blue, white. Shown
    # turned clockwise (90: the client turned it counter-clockwise) and
    # turned then flipped back (flipped-270), as weston 10 shows them too
    # (checked with weston-screenshooter).
    for name, quads in (("90", (BLUE, RED, WHITE, GREEN)),
                        ("flipped-270", (WHITE, GREEN, BLUE, RED))):
        app_id = "duet-probe-" + name
        probe.colours_at("check-" + name, [((15, 25), quads[0]), ((45, 25), quads[1]),
                                           ((15, 75), quads[2]), ((45, 75), quads[3])],
                         app_id, app_id=app_id, size=(60, 100), shot=name)
    probe.finish()


def offset(s):
    probe = Probe(s, "offset")
    # Subsurface 20x20 at 10,10, popup 30x30 at 100,50.
    win = probe.colours_at("placed", [((15, 15), GREEN), ((110, 60), BLUE)],
                           "before the offsets")
    # Moved by 30,20 and 20,10.
    probe.colours_at("offset", [((15, 15), RED), ((45, 35), GREEN), ((105, 55), RED),
                                ((125, 65), BLUE)], "after wl_surface.offset", win=win)
    probe.finish()


def click_commands(x, y):
    """duet-testctl's commands of a left click at x, y."""
    return [("motion", x, y), ("button", "left", 1), ("button", "left", 0)]


def click(s, x, y):
    for command in click_commands(x, y):
        s.testctl(*command)


def start_other(s, program, size, mapped):
    """Another client's window: duet's program (an environment name) with
    app_id duet-other and size WxH, once it prints a line matching mapped.
    Returns the client and its window."""
    other = s.client([duet.program(program), "--app-id", "duet-other", "--size", size],
                     name="other")
    other.wait_line(mapped)
    return other, s.wait_window(app_id="duet-other")


def popup_grab(s):
    _, other_win = start_other(s, "DUET_TEST_PATTERN", "100x100", r"^mapped 100 100$")
    probe = Probe(s, "popup-grab")
    # The corner of the 200x150 window, outside the 100x100 one both
    # windows are centered.
    win = probe.click_window("click-1", "duet-probe", 5, 5)
    probe.at("grabbed", *click_commands(2, 2))  # on the background, outside every window
    probe.at("click-2", *click_commands(win.x + 5, win.y + 5))
    probe.at("regrabbed", ("activate", other_win.id))
    # Raises and focuses it, and a press to grab with.
    probe.at("reactivated", *click_commands(win.x + 5, win.y + 5))
    probe.finish()


def popup_grab_serial(s):
    probe = Probe(s, "popup-grab-serial")
    probe.click_window("click-b", "duet-probe-b", 50, 40)
    probe.click_window("click-a", "duet-probe-a", 5, 5)  # A's corner, outside B (both centered)
    probe.at("key", ("key", 30, 1), ("key", 30, 0))
    probe.at("click-nowhere", *click_commands(2, 2))
    probe.finish()


def popup_grab_pointer(s):
    other, ow = start_other(s, "DUET_INPUT_PROBE", "400x300", r"^mapped ")
    probe = Probe(s, "popup-grab-pointer")
    probe.wait_step("key")
    win = s.wait_window(app_id="duet-probe")  # 200x150, centered over the other
    with other._cond:
        mark = len(other.lines)
    s.testctl("motion", ow.x + 10, ow.y + 10)
    other.wait_line(r"^pointer-enter 10 10$", start=mark, timeout=10)
    s.testctl("key", 30, 1)  # to the probe, which has the keyboard focus
    s.testctl("key", 30, 0)
    probe.go()
    probe.wait_step("key-grabbed")
    # The grab began under the pointer: the other window loses it at once.
    other.wait_line(r"^pointer-leave$", start=mark, timeout=10)
    click(s, ow.x + 10, ow.y + 10)
    probe.go()
    probe.at("click", *click_commands(win.x + 5, win.y + 5))
    probe.wait_step("grabbed")
    with other._cond:
        mark = len(other.lines)
    s.testctl("motion", ow.x + 10, ow.y + 10)
    s.testctl("motion", ow.x + 20, ow.y + 15)
    s.sync()
    time.sleep(0.2)
    with other._cond:
        seen = other.lines[mark:]
    check(not [l for l in seen if l.startswith("pointer-")],
          "another client's window got the pointer during a popup grab: %r" % seen)
    click(s, ow.x + 20, ow.y + 15)
    # The click ends the grab; the pointer, still there, enters the other
    # window then, and the click itself went to nobody.
    other.wait_line(r"^pointer-enter 20 15$", start=mark, timeout=10)
    with other._cond:
        seen = other.lines[mark:]
    check(not [l for l in seen if l.startswith("pointer-button")],
          "the click that dismissed the grab reached another client: %r" % seen)
    probe.go()
    probe.click_window("click-2", "duet-probe-2", 50, 40)
    probe.at("own-activated", ("activate", win.id))
    probe.finish()


def minimize(s):
    probe = Probe(s, "minimize")

    def state(step):
        probe.wait_step(step)
        wins = {w.app_id: w for w in s.windows()}
        img = s.screenshot(step)
        b = wins["duet-probe-b"]
        return wins, img.pixel(b.x + 50, b.y + 50)

    wins, px = state("mapped")
    check(wins["duet-probe-b"].focused and px == GREEN, "B is not shown and focused: %r %r"
          % (wins, px))
    probe.go()
    wins, px = state("minimized")
    check(px == RED, "the minimized window is still shown (%r under it, want A's red)" % (px,))
    check(wins["duet-probe-a"].focused and not wins["duet-probe-b"].focused,
          "the focus did not move to A: %r" % wins)
    s.testctl("activate", wins["duet-probe-b"].id)
    probe.go()
    wins, px = state("activated")
    check(px == GREEN and wins["duet-probe-b"].focused,
          "activate did not show and focus the minimized window: %r %r" % (wins, px))
    probe.go()
    probe.finish()


def dialog(s):
    probe = Probe(s, "dialog")
    probe.wait_step("parent")
    a = s.wait_window(app_id="duet-probe-a")
    s.testctl("move", a.id, 40, 30)
    s.wait_window(app_id="duet-probe-a", pred=lambda w: (w.x, w.y) == (40, 30), timeout=10)
    probe.go()
    probe.wait_step("dialog")
    wins = s.windows()
    b = wins[0]
    want = (40 + (300 - 100) // 2, 30 + (200 - 80) // 2)
    check(b.app_id == "duet-probe-b" and b.focused and (b.x, b.y) == want,
          "the dialog is not on top, focused and centred over its parent at %r: %r"
          % (want, wins))
    # Rule 4: the parent activated takes the focus and raises its dialog
    # with it, still above it (xdg_toplevel.set_parent).
    s.testctl("activate", a.id)
    wins = s.windows()
    check([w.app_id for w in wins[:2]] == ["duet-probe-b", "duet-probe-a"] and wins[1].focused,
          "after activating the parent, the dialog is not above it or the parent not focused: %r"
          % wins)
    probe.go()
    probe.finish()


def subsurface_restack(s):
    probe = Probe(s, "subsurface-restack")
    # A (green) at 20..80, B (blue) at 50..110: 60,60 is in both, 25,25
    # in A only.
    for step, overlap, a_only in (("initial", BLUE, GREEN), ("pending", BLUE, GREEN),
                                  ("b-below-a", GREEN, GREEN), ("a-below-parent", BLUE, RED)):
        probe.colours_at(step, [((60, 60), overlap), ((25, 25), a_only), ((150, 130), RED)],
                         "stacking " + step)
    probe.finish()


def viewport_scale(s):
    probe = Probe(s, "viewport-scale")
    win = probe.colours_at("scaled", [((50, 37), RED), ((150, 37), GREEN), ((50, 112), BLUE),
                                      ((150, 112), WHITE)], "the buffer scaled to 200x150",
                           size=(200, 150))
    probe.colours_at("cropped", [((5, 5), GREEN), ((100, 75), GREEN), ((194, 144), GREEN)],
                     "the top-right quadrant cropped and scaled", win=win)
    probe.finish()


def positioner_constrain(s):
    probe = Probe(s, "positioner-constrain")
    probe.wait_step("measured")
    win = s.wait_window(app_id="duet-probe")
    probe.go()
    probe.finish()
    ow = int(s.size.split("x")[0])
    got = {}
    for line in probe.proc.lines:
        if line.startswith("popup "):
            name, x, y, w, h = line.split()[1:]
            got[name] = (int(x), int(y), int(w), int(h))
    # Anchored at the middle of the toplevel's right edge (anchor rect
    # 190,10 10x10), 500x40, to the right: it would end at win.x + 700.
    check(win.x + 700 > ow, "the test needs a window nearer the right edge: %r" % (win,))
    want = {"none": (200, -5, 500, 40),
            "flip-x": (190 - 500, -5, 500, 40),
            "slide-x": (ow - 500 - win.x, -5, 500, 40)}
    for name, rect in want.items():
        check(got.get(name) == rect, "%s: popup configured at %r, want %r (window %r)"
              % (name, got.get(name), rect, win))


SCENARIOS = {
    "subsurface-merge": subsurface_merge,
    "subsurface-feedback": probe_alone("subsurface-feedback"),
    "maximize-ack": maximize_ack,
    "buffer-transform": buffer_transform,
    "offset": offset,
    "selection-focus": probe_alone("selection-focus"),
    "popup-grab": popup_grab,
    "popup-grab-serial": popup_grab_serial,
    "popup-grab-pointer": popup_grab_pointer,
    "subsurface-restack": subsurface_restack,
    "viewport-scale": viewport_scale,
    "positioner-constrain": positioner_constrain,
    "selection-transfer": probe_alone("selection-transfer"),
    "minimize": minimize,
    "dialog": dialog,
}


if __name__ == "__main__":
    duet.main_session_scenario(SCENARIOS, "wl-protocol-")
