#!/usr/bin/env python3
"""duet-xwm with --renderer pixman copies no pixels itself where it can
avoid it: window contents come by ShmGetImage into a segment per window
that the window's texture samples in place (xwm/fetch.c), and the frame is
drawn straight into the MIT-SHM segment the X server reads, each damaged
rectangle sent as a sub-rectangle of that whole-screen image
(xwm/output.c). What the X server shows must stay exact over many frames
of partial damage and damage that moves, and only damage may be sent.

  partial  two duet-x11-test-pattern windows, the top one redrawing its
           counter pixel 300 times, and often a narrow column or two rows
           somewhere else (--strips), while it is moved across the other
           and the background (damage that moves between frames). From
           duet-xwm's trace: a frame that only redrew the counter sends
           only that pixel and fetched its row into the window's segment
           (nothing copied); columns are fetched apart and copied into
           place, rows fetched in place; no frame sends much beyond what it
           repainted, reads
           pixels back (the target is the segment) or waits for the
           server to release the segment. After a window mapped over it
           and closed, which repaints it from its texture, the X server's
           screen (the root window read back from Xvfb) and duet-xwm's own
           frame both equal the expected picture exactly.

  partial with DUET_TEST_RENDERER=xrender (--renderer xrender, xwm/xrender.c):
           the same client and moves, and nothing crosses the process
           boundary: no frame fetches a pixel (in place or copied) or
           reads one back, a counter-only frame shows just that pixel,
           and both pictures are exact as above.

usage: test_xwm_output.py partial
"""

import os
import sys
import time

import duet
from duet import check

# XWM_MAX_RECTS in xwm/xwm.h: the rectangles a frame's trace lists.
MAX_TRACED_RECTS = 8

SIZE = "1024x768"
FRAMES = 300


def read_frames(path):
    return [e for e in duet.read_trace(path) if e.get("name") == "frame" and e.get("painted")]


def expected_rows(width, height, bg, wins):
    """The screen: background, then each (window, counter) bottom to top;
    counter is the counter pixel's RGB or None (the pattern's own)."""
    rows = [bytearray(bytes(bg) * width) for _ in range(height)]
    for win, counter in wins:
        for wy in range(win.h):
            y = win.y + wy
            if not 0 <= y < height:
                continue
            x0, x1 = max(0, win.x), min(width, win.x + win.w)
            row = bytearray()
            for x in range(x0, x1):
                row += bytes(duet.pattern_pixel(x - win.x, wy))
            if wy == 0 and counter is not None and x0 == win.x:
                row[0:3] = bytes(counter)
            rows[y][3 * x0:3 * x1] = row
    return [bytes(r) for r in rows]


def mismatches(img, rows, limit=5):
    bad, ex = 0, []
    for y, (got, want) in enumerate(zip(img.rows, rows)):
        if got == want:
            continue
        for i in range(0, len(want), 3):
            if got[i:i + 3] != want[i:i + 3]:
                bad += 1
                if len(ex) < limit:
                    ex.append((i // 3, y, tuple(got[i:i + 3]), tuple(want[i:i + 3])))
    return bad, ex


def inside(r, box):
    x, y, w, h = r
    return box[0] <= x and box[1] <= y and x + w <= box[2] and y + h <= box[3]


def partial():
    s = duet.XSession("xwm-output-partial", size=SIZE)
    trace = os.path.join(s.workdir, "trace.jsonl")
    s.wm_env = {"DUET_TRACE": trace}
    with s:
        bg = s.background()
        still = s.client([duet.program("DUET_X11_TEST_PATTERN"), "--size", "500x400",
                          "--class", "still"], name="still")
        still.wait_line(r"^mapped 500 400$")
        below = s.wait_window(app_id="still")
        top = s.client([duet.program("DUET_X11_TEST_PATTERN"), "--size", "200x150",
                        "--class", "counter", "--frames", str(FRAMES), "--interval-ms", "20", "--strips"],
                       name="counter")
        top.wait_line(r"^mapped 200 150$")
        start = s.wait_window(app_id="counter")
        win = start
        s.sync()
        n0 = len(read_frames(trace))
        # Counter frames alone: the damage is one pixel at the window's
        # top-left, in place.
        top.wait_line(r"^frame 60$", timeout=30)
        s.sync()
        still_frames = read_frames(trace)[n0:]
        # Now moving the window while it keeps drawing: each move damages
        # where it was and where it goes, over the other window and over
        # the background.
        path = [(30, 40), (420, 330), (700, 500), (200, 600), (600, 100), (380, 300),
                (0, 0), (824, 618), (480, 350)]
        n1 = len(read_frames(trace))
        for x, y in path:
            s.xctl("move", hex(win.id), x, y)
            s.wait_window(app_id="counter", pred=lambda w, x=x, y=y: (w.x, w.y) == (x, y))
            time.sleep(0.05)
        top.wait_line(r"^frame %d$" % FRAMES, timeout=60)
        s.sync()
        time.sleep(0.1)  # the last frame's repaint
        s.sync()
        win = s.wait_window(app_id="counter")
        check((win.x, win.y) == path[-1], "window at %d,%d, moved to %d,%d"
              % ((win.x, win.y) + path[-1]))
        moving_frames = read_frames(trace)[n1:]

        xrender = duet.RENDERER == "xrender"
        # Only the damage is sent: frames that only redrew the counter
        # sent exactly that pixel (the window's top-left), in one PutImage
        # (xrender: the overlay's clip of its one Composite).
        first = [e for e in still_frames if e["damage"] == 1]
        duet.log("%d painted frames while the counter ran in place, %d of one pixel; "
                 "%d while it moved" % (len(still_frames), len(first), len(moving_frames)))
        # How many frames duet-xwm paints for the client's 60 is how the two
        # run (a late repaint shows several client frames): each frame of a
        # kind is checked, and one of each kind must come.
        check(len(first) >= 1, "no one-pixel frame painted for 60 counter frames")
        for e in first:
            check(e.get("put_rects") == [[start.x, start.y, 1, 1]],
                  "frame %d repainted the counter pixel at %d,%d and sent %r"
                  % (e["seq"], start.x, start.y, e.get("put_rects")))
            # Its row came by ShmGetImage into the window's own segment,
            # which the texture samples: nothing copied in duet-xwm.
            check(xrender or e.get("fetch_in_place", 0) > 0 and e.get("fetch_copied") == 0,
                  "frame %d fetched the counter pixel with %r bytes in place and %r copied"
                  % (e["seq"], e.get("fetch_in_place"), e.get("fetch_copied")))
        # The columns (2 x 149 in a 200-wide window) are too narrow to
        # fetch as whole rows: fetched apart and copied into place; the
        # rows (198 x 2) come in place, at their own offset.
        copied = [e for e in still_frames + moving_frames if e.get("fetch_copied", 0) > 0]
        rows2 = [e for e in still_frames + moving_frames
                 if e.get("fetch_in_place", 0) >= 2 * 200 * 4]
        if xrender:
            # The server draws from the windows' pixmaps: nothing fetched.
            check(not copied and not rows2 and all(e.get("fetch_in_place") == 0
                                                   for e in still_frames + moving_frames),
                  "duet-xwm --renderer xrender fetched window pixels: %r"
                  % [(e["seq"], e.get("fetch_in_place"), e.get("fetch_copied"))
                     for e in still_frames + moving_frames][:5])
        else:
            check(len(copied) >= 1, "no frame copied a column into place")
            check(len(rows2) >= 1, "no frame fetched two rows in place")
        for e in still_frames + moving_frames:
            check("put_rects" in e and "readback" in e,
                  "duet-xwm's frame trace has no put_rects/readback: %r" % e)
            check(e["readback"] == 0, "frame %d read back %d bytes: the pixman target should "
                  "be the output segment itself, xrender's in the server" % (e["seq"],
                                                                            e["readback"]))
            area = sum(r[2] * r[3] for r in e["put_rects"])
            # The trace lists the first XWM_MAX_RECTS of them (xwm/output.c):
            # a slow frame (emulated) gathers more moves' damage than that.
            check(len(e["put_rects"]) == min(e["puts"], MAX_TRACED_RECTS) and e["puts"] >= 1,
                  "frame %d: %d PutImages, rectangles %r" % (e["seq"], e["puts"], e["put_rects"]))
            # Merging may send a few undamaged pixels between two damaged
            # boxes (fetch.c's slack), never much more than the damage.
            check(e["puts"] > MAX_TRACED_RECTS or area <= e["damage"] + 1024 + e["damage"] // 4,
                  "frame %d sent %d pixels for %d repainted: %r"
                  % (e["seq"], area, e["damage"], e["put_rects"]))

        # The columns and rows must have landed where they belong in the
        # window's texture, not only on screen where their damage was
        # repainted: a window mapped over it and closed again makes
        # duet-xwm repaint it from its texture, with nothing fetched (a
        # move would not do: Xvfb damages a moved window whole).
        n2 = len(read_frames(trace))
        cover = s.client([duet.program("DUET_X11_TEST_PATTERN"), "--size", "400x300",
                          "--class", "cover"], name="cover")
        cover.wait_line(r"^mapped 400 300$")
        c = s.wait_window(app_id="cover")
        check(c.x <= win.x and c.y <= win.y and c.x + c.w >= win.x + win.w
              and c.y + c.h >= win.y + win.h, "the cover window %r does not cover %r" % (c, win))
        s.sync()
        cover.stop()
        deadline = time.monotonic() + 10
        while any(w.app_id == "cover" for w in s.windows()):
            check(time.monotonic() < deadline, "the cover window is still listed")
            time.sleep(0.05)
        s.sync()
        uncover = read_frames(trace)[n2:]
        check(any(e["damage"] >= win.w * win.h for e in uncover), "no frame repainted the "
              "uncovered window: %r" % [(e["damage"], e["fetch_in_place"]) for e in uncover])
        # Painting reuses the output segment, so every frame must have
        # known the server done with the last PutImages before it painted:
        # by its fetch's replies, or (the uncovering frame fetches nothing)
        # by a GetInputFocus answered in the event loop; never by blocking.
        waits = read_frames(trace)[-1]["output_waits"]
        check(waits == 0, "duet-xwm waited %d times for the server to release its output "
              "segment before painting" % waits)

        # What the X server shows, and duet-xwm's own frame, are exact.
        counter = (0, (FRAMES >> 8) & 0xff, FRAMES & 0xff)
        w, h = (int(v) for v in SIZE.split("x"))
        rows = expected_rows(w, h, bg, [(below, None), (win, counter)])
        for source in ("grab", "wm"):
            def exact(img):
                bad, ex = mismatches(img, rows)
                check(bad == 0, "%s: %d pixels differ from the expected screen; (x, y, got, "
                      "want): %s" % (source, bad, ex))
            s.screenshot_until(exact, "final", source=source)
        duet.log("after %d counter frames and %d moves the X server's screen and duet-xwm's "
                 "frame are exact" % (FRAMES, len(path)))
        check(top.alive() and still.alive(), "a test-pattern client exited early")


SCENARIOS = {"partial": partial}


if __name__ == "__main__":
    duet.main(SCENARIOS[sys.argv[1]])
