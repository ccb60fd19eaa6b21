"""Pointer and keyboard delivery and focus on duet-compositor (issue 10's
Wayland test gaps), with input injected through duet_test (--test-protocol)
and read back by tests/clients/input-probe.c:

  pointer   the pointer over a window: enter at surface-local coordinates,
            motion, a button press and release with the evdev code, leave
            once it moves off
  keyboard  the newly mapped window has the keyboard (enter, keymap) and
            the "activated" state; keys go to it alone; a second window
            takes the focus from it (leave, and a configure without
            "activated"); activating the first gives it back
  click     a button press on an unfocused window raises and focuses it
            (policy rule 4) and the press is delivered to it
  still     the pointer stays and the window moves or grows under it: enter
            where it now is, motion as the window moves on, leave once it
            moved away (what is under the pointer is picked again)
  move      a press on a window that answers with xdg_toplevel.move: the
            surface loses the pointer, the window follows the pointer's
            travel, the release ends it and the window has the pointer back
  resize    the same with xdg_toplevel.resize from the bottom-right
            corner: a configure with the travelled size and "resizing",
            one without "resizing" at the release
  held      a duet_test client that goes away with a key or button down
            has it released (as an unplugged keyboard would), so the next
            press of it is delivered and not dropped as a repeat
"""

import os
import time

import duet
from duet import check, log

BTN_LEFT = 272
KEY_A = 30


def probe(s, name, size="200x200", args=()):
    c = s.client([duet.program("DUET_INPUT_PROBE"), "--app-id", name, "--size", size] +
                 list(args), name=name)
    c.wait_line(r"^mapped ")
    win = s.wait_window(app_id=name)
    s.sync()
    return c, win


def lines(c):
    with c._cond:
        return list(c.lines)


def after(c, mark, pattern, timeout=10):
    """Waits for a line matching pattern after line number mark."""
    return c.wait_line(pattern, timeout=timeout, start=mark)


def scenario_pointer():
    with duet.Session("input-pointer") as s:
        c, win = probe(s, "p")
        mark = len(lines(c))
        x, y = win.x + 50, win.y + 70
        s.testctl("motion", x, y)
        after(c, mark, r"^pointer-enter 50 70$")
        s.testctl("motion", x + 10, y + 5)
        after(c, mark, r"^pointer-motion 60 75$")
        s.testctl("button", BTN_LEFT, 1)
        s.testctl("button", BTN_LEFT, 0)
        after(c, mark, r"^pointer-button %d 1$" % BTN_LEFT)
        after(c, mark, r"^pointer-button %d 0$" % BTN_LEFT)
        s.testctl("motion", win.x + win.w + 20, win.y)
        after(c, mark, r"^pointer-leave$")
        log("enter, motion, button, leave delivered in surface coordinates")


def scenario_still():
    with duet.Session("input-still") as s:
        c, win = probe(s, "p")
        px, py = win.x + win.w + 30, win.y + 40
        mark = len(lines(c))
        s.testctl("motion", px, py)
        s.sync()
        check(not any(l.startswith("pointer-enter") for l in lines(c)[mark:]),
              "entered while the pointer was beside the window")
        s.testctl("move", str(win.id), str(win.x + 50), str(win.y))
        after(c, mark, r"^pointer-enter %d 40$" % (win.w - 20))
        mark = len(lines(c))
        s.testctl("move", str(win.id), str(win.x + 60), str(win.y))
        after(c, mark, r"^pointer-motion %d 40$" % (win.w - 30))
        s.testctl("move", str(win.id), str(win.x), str(win.y))
        after(c, mark, r"^pointer-leave$")
        log("a window moved under a pointer that stayed: enter, motion, leave")


def scenario_move():
    with duet.Session("input-move") as s:
        c, win = probe(s, "p", args=["--move-on-press"])
        x, y = win.x + 50, win.y + 70
        mark = len(lines(c))
        inject = duet.Injector(s)
        inject("motion", x, y)
        inject("button", BTN_LEFT, 1)
        i, _ = after(c, mark, r"^pointer-button %d 1$" % BTN_LEFT)
        after(c, i, r"^pointer-leave$")
        inject("motion", x + 100, y + 40)
        inject("button", BTN_LEFT, 0)
        inject.close()
        i, _ = after(c, i, r"^pointer-enter 50 70$")
        moved = s.wait_window(app_id="p")
        check((moved.x, moved.y) == (win.x + 100, win.y + 40), "the window went from %d,%d to "
              "%d,%d, the pointer travelled 100,40" % (win.x, win.y, moved.x, moved.y))
        check(not any(l.startswith("pointer-motion") or l == "pointer-button %d 0" % BTN_LEFT
                      for l in lines(c)[mark:]), "the client heard the drag: %s" % lines(c)[mark:])
        # One duet-testctl taking two screenshots waits for each answer.
        shots = duet.Injector(s, "shots")
        for n in (1, 2):
            path = os.path.join(s.workdir, "moved-%d.png" % n)
            shots("screenshot", path)
            s._read_screenshot(path, "output")
        shots.close()
        log("an interactive move: leave, the window followed the pointer, enter after")


def scenario_resize():
    with duet.Session("input-resize") as s:
        bottom_right = 10
        c, win = probe(s, "p", args=["--resize-on-press", str(bottom_right)])
        x, y = win.x + win.w - 5, win.y + win.h - 5
        mark = len(lines(c))
        inject = duet.Injector(s)
        inject("motion", x, y)
        inject("button", BTN_LEFT, 1)
        after(c, mark, r"^pointer-leave$")
        inject("motion", x + 30, y + 20)
        i, _ = after(c, mark, r"^configure %d %d activated=1 resizing$" % (win.w + 30, win.h + 20))
        inject("button", BTN_LEFT, 0)
        inject.close()
        after(c, i, r"^configure %d %d activated=1$" % (win.w + 30, win.h + 20))
        log("an interactive resize: configures with the travelled size, resizing until the "
            "release")


def keyboard_state(c):
    """(has the keyboard, last activated state) from the probe's lines."""
    focus, activated = False, None
    for line in lines(c):
        if line == "keyboard-enter":
            focus = True
        elif line == "keyboard-leave":
            focus = False
        elif line.startswith("configure "):
            activated = line.endswith("activated=1")
    return focus, activated


def scenario_keyboard():
    with duet.Session("input-keyboard") as s:
        a, wa = probe(s, "a")
        a.wait_line(r"^keymap 1 \d+$")
        check(keyboard_state(a) == (True, True), "a new window has no keyboard focus or is not "
              "activated: %s" % (keyboard_state(a),))
        mark_a = len(lines(a))
        s.testctl("key", KEY_A, 1)
        s.testctl("key", KEY_A, 0)
        after(a, mark_a, r"^key %d 1$" % KEY_A)
        after(a, mark_a, r"^key %d 0$" % KEY_A)

        b, wb = probe(s, "b", size="150x150")
        a.wait_line(r"^keyboard-leave$", start=mark_a)
        s.sync()
        check(keyboard_state(a) == (False, False), "a kept focus or activated after b mapped: "
              "%s" % (keyboard_state(a),))
        check(keyboard_state(b) == (True, True), "b has no focus: %s" % (keyboard_state(b),))
        mark_a, mark_b = len(lines(a)), len(lines(b))
        s.testctl("key", KEY_A, 1)
        s.testctl("key", KEY_A, 0)
        after(b, mark_b, r"^key %d 0$" % KEY_A)
        s.sync()
        check(not [l for l in lines(a)[mark_a:] if l.startswith("key ")],
              "a got keys while b had the focus: %s" % lines(a)[mark_a:])

        s.testctl("activate", wa.id)
        after(a, mark_a, r"^keyboard-enter$")
        after(b, mark_b, r"^keyboard-leave$")
        s.sync()
        check(keyboard_state(a) == (True, True) and keyboard_state(b) == (False, False),
              "after activate: a %s, b %s" % (keyboard_state(a), keyboard_state(b)))
        top = s.windows()[0]
        check(top.app_id == "a" and top.focused, "a is not on top and focused: %r" % (top,))


def scenario_click():
    with duet.Session("input-click") as s:
        a, wa = probe(s, "a", size="400x300")
        b, wb = probe(s, "b", size="100x100")
        # b is centred over a: click a where b does not cover it.
        mark_a = len(lines(a))
        s.testctl("motion", wa.x + 10, wa.y + 10)
        s.testctl("button", BTN_LEFT, 1)
        s.testctl("button", BTN_LEFT, 0)
        after(a, mark_a, r"^pointer-button %d 1$" % BTN_LEFT)
        after(a, mark_a, r"^keyboard-enter$")
        s.sync()
        top = s.windows()[0]
        check(top.app_id == "a" and top.focused, "the click did not raise and focus a: %r"
              % (s.windows(),))
        # b is another process: its keyboard-leave may still be on its way
        # when a has printed its enter (a hang guard, not a measure).
        deadline = time.monotonic() + 10
        while keyboard_state(b)[0] and time.monotonic() < deadline:
            time.sleep(0.05)
        check(keyboard_state(b)[0] is False, "b kept the keyboard after the click on a")


def scenario_held():
    with duet.Session("input-held") as s:
        c, win = probe(s, "h")
        s.testctl("motion", win.x + 20, win.y + 20)
        mark = len(lines(c))
        # Each duet-testctl is a client of its own that exits after its
        # request: this one leaves the key and the button down.
        s.testctl("key", KEY_A, 1)
        s.testctl("button", BTN_LEFT, 1)
        after(c, mark, r"^key %d 1$" % KEY_A)
        after(c, mark, r"^key %d 0$" % KEY_A)
        after(c, mark, r"^pointer-button %d 0$" % BTN_LEFT)
        mark = len(lines(c))
        s.testctl("key", KEY_A, 1)
        s.testctl("button", BTN_LEFT, 1)
        after(c, mark, r"^key %d 1$" % KEY_A)
        after(c, mark, r"^pointer-button %d 1$" % BTN_LEFT)
        log("a key and a button left down by a departed injector were released, and "
            "pressed again they were delivered")


SCENARIOS = {"pointer": scenario_pointer, "still": scenario_still, "move": scenario_move,
             "resize": scenario_resize, "keyboard": scenario_keyboard,
             "click": scenario_click, "held": scenario_held}

if __name__ == "__main__":
    duet.main_scenario(SCENARIOS)
