#!/usr/bin/env python3
"""duet-compositor --renderer pixman samples wl_shm buffers in place (no
copy, as weston --use-pixman): what it owes the client whose buffer it
holds (tests/clients/hold-client.c; meson runs these on the pixman engine).

  release          a buffer is held while shown: not released by the frame
                   that shows it, released once a newer buffer is committed
                   (by the time that frame's callback arrives) and when the
                   surface is destroyed
  destroy-shown    a client destroys the buffer it shows (and its pool and
                   mapping): the window keeps its pixels, redrawn after a move
  destroy-pending  a client commits a newer buffer and destroys it (pool and
                   mapping too) before any repaint showed it: the window
                   shows the newer pixels and the older buffer is released
  grow-pool        a client grows the pool of the buffer it shows to 64 MiB
                   (the compositor's mapping moves): the window is redrawn
                   from the new place, not the unmapped old one
  shared           one buffer on two surfaces (a toplevel and its
                   subsurface), or shown by one while waiting in the
                   other's cache: it is released only once no surface
                   reads it any more, and then it is; a subsurface
                   destroyed with a buffer in its cache releases it
  truncate         a client truncates the file of the buffer it shows: the
                   next repaint of its window gets it a wl_shm invalid_fd
                   error (libwayland's SIGBUS guard around that draw), while
                   another client keeps being served
"""

import contextlib
import os
import time

import duet
from duet import check, log

COLOUR_A = (0x20, 0xc0, 0x40)
COLOUR_B = (0xd0, 0x50, 0x10)
WL_SHM_ERROR_INVALID_FD = 2
GOOD_APP_ID = duet.GOOD_APP_ID


def hold_client(s, mode):
    path = os.environ.get("DUET_HOLD_CLIENT")
    if not path:
        path = os.path.join(os.path.dirname(duet.program("DUET_TEST_PATTERN")),
                            "duet-hold-client")
    check(os.access(path, os.X_OK), "duet-hold-client is not built (%s)" % path)
    return s.client([path, mode], name="hold")


@contextlib.contextmanager
def holding(mode):
    """A session (shm-hold-MODE) and duet-hold-client MODE in it."""
    with duet.Session("shm-hold-" + mode) as s:
        yield s, hold_client(s, mode)


def check_no_error(c):
    check(not any(l.startswith("error") for l in c.lines), "client got %r" % c.lines)


def fields(match_line):
    return dict(kv.split("=") for kv in match_line.split()[1:] if "=" in kv)


def wait_fields(c, word):
    _, m = c.wait_line(r"^%s( |$)" % word)
    f = {k: int(v) for k, v in fields(m.string).items()}
    log("%s: %r" % (word, f))
    return f


def expect_field(c, word, field, want, msg):
    """Waits for c's line WORD and checks that its field is want."""
    check(wait_fields(c, word)[field] == want, msg)


def check_window_colour(s, c, colour, label):
    """Moves client c's window, so the repaint reads its whole texture
    again, and checks every pixel of it; then that c got no error."""
    win = s.wait_window(app_id="duet-hold")
    s.testctl("move", win.id, win.x + 37, win.y + 23)
    win = s.wait_window(app_id="duet-hold", pred=lambda w: w.x == win.x + 37)
    img = s.screenshot(label)
    s.check_alive()
    bad = 0
    for y in range(win.y, win.y + win.h):
        for x in range(win.x, win.x + win.w):
            if img.pixel(x, y) != colour:
                if bad < 3:
                    log("pixel %d,%d is %r, want %r" % (x, y, img.pixel(x, y), colour))
                bad += 1
    check(bad == 0, "%d of %d window pixels are not %r after the move"
          % (bad, win.w * win.h, colour))
    check_no_error(c)


def scenario_release():
    with holding("release") as (s, c):
        expect_field(c, "shown-a", "a_released", 0,
                     "buffer A was released by the frame that showed it: a compositor that "
                     "samples it in place must hold it while it is shown")
        f = wait_fields(c, "shown-b")
        check(f["a_released"] == 1, "A not released once B replaced it")
        check(f["at_done"] == 1, "A's release came after B's frame callback (it should go "
              "out with it, queued for the same flush)")
        check(f["b_released"] == 0, "B released while shown")
        expect_field(c, "destroyed", "b_released", 1,
                     "B not released when its surface was destroyed")
        s.check_alive()


def scenario_destroy_shown():
    with holding("destroy-shown") as (s, c):
        expect_field(c, "shown-a", "a_released", 0, "A released while shown")
        wait_fields(c, "gone")
        check_window_colour(s, c, COLOUR_A, "destroyed-shown")


def scenario_destroy_pending():
    with holding("destroy-pending") as (s, c):
        wait_fields(c, "shown-a")
        expect_field(c, "gone", "a_released", 1,
                     "A still held after the newer buffer replaced it (its content was copied)")
        check_window_colour(s, c, COLOUR_B, "destroyed-pending")


def scenario_grow_pool():
    with holding("grow-pool") as (s, c):
        wait_fields(c, "shown-a")
        c.wait_line(r"^grown$")
        check_window_colour(s, c, COLOUR_A, "grown")


def scenario_shared():
    with holding("shared") as (s, c):
        wait_fields(c, "shown-a")
        expect_field(c, "shared", "a_released", 0, "A released when the toplevel replaced it, "
                     "while the subsurface still shows it")
        expect_field(c, "sub-null", "a_released", 1,
                     "A not released once neither surface shows it")
        expect_field(c, "cached", "b_released", 0, "B released when the toplevel replaced it, "
                     "while the subsurface's cache held it to show it")
        expect_field(c, "recached", "b_released", 0, "B released when a newer commit replaced "
                     "it in the subsurface's cache, while the subsurface still shows it")
        expect_field(c, "applied", "b_released", 1, "B not released once no surface shows it")
        expect_field(c, "uncached", "b_released", 1, "B not released when the subsurface "
                     "whose cache held it was destroyed")
        s.check_alive()
        check_no_error(c)


def scenario_truncate():
    with duet.Session("shm-hold-truncate") as s:
        good = s.client([duet.program("DUET_TEST_PATTERN"), "--frames", "100000000",
                         "--app-id", GOOD_APP_ID, "--size", "200x150"], name="good")
        good.wait_line(r"^mapped 200 150$")
        c = hold_client(s, "truncate")
        wait_fields(c, "shown-a")
        c.wait_line(r"^truncated$")
        # The truncation alone costs nothing: the memory is read only when
        # a repaint draws the window. Moving it makes one.
        win = s.wait_window(app_id="duet-hold")
        s.testctl("move", win.id, win.x + 40, win.y + 40)
        _, m = c.wait_line(r"^(error|disconnected) ?(\S*) ?(\d*)$", timeout=15)
        log("hold client: %s" % m.string)
        check(m.group(1) == "error" and m.group(2) in ("wl_buffer", "wl_shm", "wl_shm_pool")
              and int(m.group(3)) == WL_SHM_ERROR_INVALID_FD,
              "expected wl_shm invalid_fd for a truncated pool, got %r" % m.string)
        s.check_alive()
        # The other client is still served: new frames, its window intact.
        _, m = good.wait_line(r"^frame (\d+)$", start=len(good.lines))
        n = int(m.group(1))
        good.wait_line(r"^frame (\d+)$", pred=lambda m: int(m.group(1)) >= n + 10, timeout=15)
        good_win = s.wait_window(app_id=GOOD_APP_ID)
        img = s.screenshot("after-truncate")
        bad, examples = duet.pattern_mismatches(img, good_win, skip_counter_pixel=True)
        check(bad == 0, "the good client's window is wrong after the truncation: %d pixels, "
              "e.g. %r" % (bad, examples))
        # Its window goes with its connection.
        deadline = time.monotonic() + 10
        while [w.app_id for w in s.windows()] != [GOOD_APP_ID]:
            check(time.monotonic() < deadline, "windows after the error: %r" % s.windows())
            time.sleep(0.1)


SCENARIOS = {
    "release": scenario_release,
    "destroy-shown": scenario_destroy_shown,
    "destroy-pending": scenario_destroy_pending,
    "shared": scenario_shared,
    "grow-pool": scenario_grow_pool,
    "truncate": scenario_truncate,
}

if __name__ == "__main__":
    duet.main_scenario(SCENARIOS)
