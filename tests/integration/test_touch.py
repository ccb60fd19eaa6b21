"""Touch (wl_touch) on duet-compositor (compositor/seat/seat-touch.c), with touch
points injected through duet_test's touch requests (duet-testctl touch, on
one connection through `duet-testctl -` so that a point stays down between
steps) and read back by tests/clients/input-probe.c:

  basic     no touch capability until a touchscreen is there (the test
            protocol's, plugged in by its first touch request), then
            wl_touch on every wl_seat the client bound; a down on a window
            at surface-local coordinates, delivered to each of its
            wl_touch, raises and focuses it like a click; the point keeps
            its surface when it moves off it (over another window, which
            gets nothing), with coordinates still relative to it; frames
            end each group; up
  two       two points down at once on two windows of two clients: each
            client gets only its own point (down, motion, up), each a
            frame per group
  destroy   a client destroys its surface while its point is down, another
            client is killed with its point down: the compositor lives on,
            the destroyer gets an up for its point and nothing more, a third
            client's point, down meanwhile, still gets motion and up
  held      a duet_test client that goes away with a point down has it go
            up (as its keys and buttons are released)
"""


import duet
from duet import check, log


def probe(s, name, size="200x200", args=()):
    c = s.client([duet.program("DUET_INPUT_PROBE"), "--app-id", name, "--size", size] +
                 list(args), name=name)
    c.wait_line(r"^mapped ")
    s.wait_window(app_id=name)
    s.sync()
    return c


def place(s, name, x, y):
    """Moves the window to x, y and returns its new place."""
    win = s.wait_window(app_id=name)
    s.testctl("move", win.id, x, y)
    s.sync()
    return s.wait_window(app_id=name, pred=lambda w: (w.x, w.y) == (x, y))


def lines(c):
    with c._cond:
        return list(c.lines)


def touch_lines(c, start=0):
    return [l for l in lines(c)[start:] if l.startswith("touch-") and
            not l.startswith("touch-bound")]


def scenario_basic():
    with duet.Session("touch-basic") as s:
        a = probe(s, "a", args=["--seats", "2"])
        b = probe(s, "b", size="150x150")
        wa = place(s, "a", 100, 100)
        wb = place(s, "b", 500, 100)
        check(not [l for l in lines(a) if l.startswith("touch-bound")],
              "the seat had touch before any touchscreen: %s" % lines(a))

        t = duet.Injector(s, "touchctl")
        t("touch", "frame")  # plugs the test's touchscreen in
        a.wait_line(r"^touch-bound seat=0$")
        a.wait_line(r"^touch-bound seat=1$")
        b.wait_line(r"^touch-bound seat=0$")
        s.sync()
        check(s.windows()[0].app_id == "b", "b, mapped last, is not on top: %r" % (s.windows(),))
        mark_a, mark_b = len(lines(a)), len(lines(b))

        t("touch", "down", 0, wa.x + 50, wa.y + 70)
        t("touch", "frame")
        for seat in (0, 1):
            a.wait_line(r"^touch-down 0 50 70 seat=%d$" % seat, start=mark_a)
            a.wait_line(r"^touch-frame seat=%d$" % seat, start=mark_a)
        a.wait_line(r"^keyboard-enter$", start=mark_a)
        s.sync()
        top = s.windows()[0]
        check(top.app_id == "a" and top.focused, "the touch did not raise and focus a: %r"
              % (s.windows(),))

        # Off a, over b: still a's point, in a's coordinates.
        bx, by = wb.x + 20, wb.y + 30
        t("touch", "motion", 0, bx, by)
        t("touch", "frame")
        a.wait_line(r"^touch-motion 0 %d %d seat=0$" % (bx - wa.x, by - wa.y), start=mark_a)
        t("touch", "motion", 0, wa.x - 10, wa.y - 20)
        t("touch", "frame")
        a.wait_line(r"^touch-motion 0 -10 -20 seat=1$", start=mark_a)
        t("touch", "up", 0)
        t("touch", "frame")
        # Each up's frame event may still be on its way to the probe's
        # output when the up is printed: wait for it too.
        i, _ = a.wait_line(r"^touch-up 0 seat=0$", start=mark_a)
        a.wait_line(r"^touch-frame seat=0$", start=i + 1)
        i, _ = a.wait_line(r"^touch-up 0 seat=1$", start=mark_a)
        a.wait_line(r"^touch-frame seat=1$", start=i + 1)
        t.close()
        s.sync()

        got = [l for l in touch_lines(a, mark_a) if l.endswith("seat=0")]
        want = ["touch-down 0 50 70 seat=0", "touch-frame seat=0",
                "touch-motion 0 %d %d seat=0" % (bx - wa.x, by - wa.y), "touch-frame seat=0",
                "touch-motion 0 -10 -20 seat=0", "touch-frame seat=0",
                "touch-up 0 seat=0", "touch-frame seat=0"]
        check(got == want, "a's first wl_touch got\n  %s\nwant\n  %s" % (got, want))
        check(touch_lines(b, mark_b) == [], "b got another client's touch: %s"
              % touch_lines(b, mark_b))
        log("touch appeared with the touchscreen; down, motion off the surface, up and "
            "frames went to both of a's wl_touch in its coordinates; the touch raised a")


def scenario_two():
    with duet.Session("touch-two") as s:
        a = probe(s, "a")
        b = probe(s, "b")
        wa = place(s, "a", 50, 50)
        wb = place(s, "b", 400, 300)
        t = duet.Injector(s, "touchctl")
        t("touch", "frame")
        a.wait_line(r"^touch-bound seat=0$")
        b.wait_line(r"^touch-bound seat=0$")
        mark_a, mark_b = len(lines(a)), len(lines(b))

        t("touch", "down", 1, wa.x + 10, wa.y + 20)
        t("touch", "down", 2, wb.x + 30, wb.y + 40)
        t("touch", "frame")
        t("touch", "motion", 1, wa.x + 11, wa.y + 21)
        t("touch", "motion", 2, wb.x + 31, wb.y + 41)
        t("touch", "frame")
        t("touch", "up", 1)
        t("touch", "frame")
        t("touch", "up", 2)
        t("touch", "frame")
        # Each up's frame event may still be on its way to the probe's
        # output when the up is printed: wait for it too.
        for p, n, mark in ((a, 1, mark_a), (b, 2, mark_b)):
            i, _ = p.wait_line(r"^touch-up %d seat=0$" % n, start=mark)
            p.wait_line(r"^touch-frame seat=0$", start=i + 1)
        t.close()
        s.sync()
        want_a = ["touch-down 1 10 20 seat=0", "touch-frame seat=0",
                  "touch-motion 1 11 21 seat=0", "touch-frame seat=0",
                  "touch-up 1 seat=0", "touch-frame seat=0"]
        want_b = ["touch-down 2 30 40 seat=0", "touch-frame seat=0",
                  "touch-motion 2 31 41 seat=0", "touch-frame seat=0",
                  "touch-up 2 seat=0", "touch-frame seat=0"]
        check(touch_lines(a, mark_a) == want_a, "a got %s, want %s"
              % (touch_lines(a, mark_a), want_a))
        check(touch_lines(b, mark_b) == want_b, "b got %s, want %s"
              % (touch_lines(b, mark_b), want_b))
        log("two points on two clients' windows: each client got its own point alone")


def scenario_destroy():
    with duet.Session("touch-destroy") as s:
        a = probe(s, "a", args=["--destroy-on-touch"])
        b = probe(s, "b")
        c = probe(s, "c", size="100x100")
        wa = place(s, "a", 50, 50)
        wb = place(s, "b", 400, 50)
        wc = place(s, "c", 50, 400)
        t = duet.Injector(s, "touchctl")
        t("touch", "frame")
        for p in (a, b, c):
            p.wait_line(r"^touch-bound seat=0$")
        mark_a, mark_b = len(lines(a)), len(lines(b))

        t("touch", "down", 1, wa.x + 10, wa.y + 10)
        t("touch", "down", 2, wb.x + 10, wb.y + 10)
        t("touch", "down", 3, wc.x + 10, wc.y + 10)
        t("touch", "frame")
        i, _ = a.wait_line(r"^destroyed$", start=mark_a)
        # Its point lifted with the surface (wl_touch.up: "the touch point
        # has disappeared"), then nothing more for it.
        i, _ = a.wait_line(r"^touch-up 1 seat=0$", start=i)
        a.wait_line(r"^touch-frame seat=0$", start=i + 1)
        c.wait_line(r"^touch-down 3 10 10 seat=0$")
        c.kill()
        c.wait()
        s.sync()
        mark_a = len(lines(a))
        for i in (1, 2, 3):
            t("touch", "motion", i, 300, 300)
        t("touch", "frame")
        for i in (1, 2, 3):
            t("touch", "up", i)
        t("touch", "frame")
        i, _ = b.wait_line(r"^touch-up 2 seat=0$", start=mark_b)
        b.wait_line(r"^touch-frame seat=0$", start=i + 1)  # as in scenario_two
        t.close()
        s.sync()
        s.check_alive()
        want_b = ["touch-down 2 10 10 seat=0", "touch-frame seat=0",
                  "touch-motion 2 %d %d seat=0" % (300 - wb.x, 300 - wb.y), "touch-frame seat=0",
                  "touch-up 2 seat=0", "touch-frame seat=0"]
        check(touch_lines(b, mark_b) == want_b, "b got %s, want %s"
              % (touch_lines(b, mark_b), want_b))
        check(touch_lines(a, mark_a) == [], "a got touch events for its destroyed surface: %s"
              % touch_lines(a, mark_a))
        check(a.alive(), "a lost its connection: %s" % a.stderr_tail())
        # The seat still works: a new point on b.
        s.testctl("touch", "down", 4, wb.x + 1, wb.y + 2)
        b.wait_line(r"^touch-down 4 1 2 seat=0$", start=mark_b)
        log("a surface destroyed and a client killed mid-touch: the compositor lives, the "
            "other client's point went on to its up")


def scenario_held():
    with duet.Session("touch-held") as s:
        a = probe(s, "a")
        win = s.wait_window(app_id="a")
        s.testctl("touch", "frame")
        a.wait_line(r"^touch-bound seat=0$")
        mark = len(lines(a))
        # One duet-testctl per command: this one exits with the point down.
        s.testctl("touch", "down", 7, win.x + 5, win.y + 6)
        a.wait_line(r"^touch-down 7 5 6 seat=0$", start=mark)
        a.wait_line(r"^touch-up 7 seat=0$", start=mark)
        a.wait_line(r"^touch-frame seat=0$", start=mark)
        mark = len(lines(a))
        s.testctl("touch", "down", 7, win.x + 8, win.y + 9)
        a.wait_line(r"^touch-down 7 8 9 seat=0$", start=mark)
        log("a point left down by a departed injector went up, and the id could go down again")


SCENARIOS = {"basic": scenario_basic, "two": scenario_two, "destroy": scenario_destroy,
             "held": scenario_held}

if __name__ == "__main__":
    duet.main_scenario(SCENARIOS)
