#!/usr/bin/env python3
"""Texture budgets of X clients through Xwayland (issue 45): Xwayland is one
Wayland client standing for every X client, so duet-compositor keeps its
budgets per X client in its X window manager
(compositor/xwayland/xwayland-budget.c, docs/security.md). An X client over
a budget is disconnected alone (KillClient) with a log line naming it;
Xwayland, its other X clients and the Wayland clients go on.

usage: test_xwayland_budget.py window | menus | total | tall | cursor | released

Each scenario starts a Wayland client (duet-test-pattern) and an X client
(duet-x11-test-pattern through Xwayland) that both keep drawing frames,
then an offender (duet-x11-bad-client):
window: one managed 16000x16000 window (976 MiB) at the default budgets:
over the client budget of 256 MiB.
menus: 32 override-redirect windows of 2048x2048 (16 MiB each) mapped in
one batch, at the default budgets: the 17th is over the client budget.
total: the same menus under --texture-budget 64: the fourth is over the
budget of all clients together.
tall: one managed 100x20000 window: 7.6 MiB, inside every budget, but taller
than any texture the renderer makes (16384): a limit of the compositor's
like a budget, paid by the X client, never by Xwayland (the X fuzzer found
Xwayland cut off with no_memory for it).
Checks: the offender's X connection is closed; one log line names its X
client (its XID base), its pid, a window of its, the budget and the numbers,
and KillClient; Xwayland is the same process and was never disconnected; the
offender's windows leave the list and the screen; both good clients keep
their windows and keep drawing: the Wayland client's frames are answered,
and the X client's frame counter (its first pixel) goes on advancing on
the compositor's screenshots after the offence.
"""

import re
import sys
import time

import duet
from duet import check
from test_xwayland import need_xwayland, one_xwayland, wait_for, xwayland_args

X_GOOD_APP = "duet-x11-test-pattern"
# The offender's mode and the budget its log line names: (compositor
# arguments, duet-x11-bad-client mode, the budget's words, its MiB).
CASES = {
    "window": ([], "huge-window", "would exceed the client budget of", 256),
    "menus": ([], "huge-menus", "would exceed the client budget of", 256),
    "total": (["--texture-budget", "64"], "huge-menus", "in all would exceed the budget of", 64),
    # Inside every budget (7.6 MiB), past the renderer's texture size.
    "tall": ([], "tall-window", None, None),
}
KILL_LINE = (r"X client (0x[0-9a-f]+) \(pid (\d+|unknown)\) over budget: window (0x[0-9a-f]+): "
             r"textures of (\d+) MiB (.*?) (\d+) MiB: KillClient")
TALL_LINE = (r"X client (0x[0-9a-f]+) \(pid (\d+|unknown)\) over budget: window (0x[0-9a-f]+): "
             r"a (\d+)x(\d+) texture the renderer cannot make: KillClient")


def compositor_log(s):
    return s.compositor.stderr_tail(1 << 22)


def start_x_good(s):
    """duet-x11-test-pattern drawing on: each frame changes only its first
    pixel, the frame count (clients/x11-test-pattern.c)."""
    p = s.client([duet.program("DUET_X11_TEST_PATTERN"), "--size", "320x240",
                  "--frames", "100000000", "--interval-ms", "20"], name="x-good")
    p.wait_line(r"^mapped 320 240$", timeout=30)
    p.wait_line(r"^frame 5$", timeout=30)
    s.wait_window(app_id=X_GOOD_APP, timeout=30)
    return p


def last_frame(p):
    return duet.last_frame(p)


def place(s, app_id, x, y):
    win = s.wait_window(app_id=app_id)
    s.testctl("move", win.id, x, y)
    return s.wait_window(app_id=app_id, pred=lambda w: (w.x, w.y) == (x, y), timeout=10)


def counter_shown(s, win, label, above, timeout=15):
    """A screenshot showing the X client's pattern with a frame count past
    above in its counter pixel: frames drawn since, composited. Returns
    the count."""
    deadline = time.monotonic() + timeout
    while True:
        img = s.screenshot(label)
        bad, examples = duet.pattern_mismatches(img, win, skip_counter_pixel=True)
        r, g, b = img.pixel(win.x, win.y)
        count = (r << 16) | (g << 8) | b
        if bad == 0 and count > above:
            duet.log("%s: the X client's frame %d on the screen" % (label, count))
            return count
        if time.monotonic() > deadline:
            raise duet.Failure("%s: the X client's window shows frame %d (want past %d), %d "
                               "pixels not its pattern, e.g. %r" % (label, count, above, bad,
                                                                    examples))
        time.sleep(0.2)


def background_outside(img, bg, wins):
    """Everything but wins (which do not overlap) is bg: nothing of the
    offender is drawn."""
    want = img.width * img.height - sum(w.w * w.h for w in wins)
    got = img.count_color(bg, 0, 0, img.width, img.height) - sum(
        img.count_color(bg, w.x, w.y, w.x + w.w, w.y + w.h) for w in wins)
    check(got == want, "%d pixels outside the good windows are not the background"
          % (want - got))


def start_goods(s):
    """The two good clients drawing, placed apart; Xwayland's pid and the
    X client's frame count on the screen."""
    good = duet.start_good(s)
    x_good = start_x_good(s)
    wl_win = place(s, duet.GOOD_APP_ID, 20, 20)
    x_win = place(s, X_GOOD_APP, 300, 200)
    return good, x_good, wl_win, x_win, one_xwayland(s), counter_shown(s, x_win, "before", 0)


def check_xwayland_kept(s, xwayland):
    log = compositor_log(s)
    check("over budget: wl_surface" not in log and
          "(pid %d) exited" % xwayland not in log and
          "(pid %d) was killed" % xwayland not in log,
          "Xwayland was disconnected or exited:\n%s" % log[-3000:])
    check(one_xwayland(s) == xwayland, "Xwayland is not the same process")


def check_goods_go_on(s, good, x_good, wl_win, x_win, before, what):
    """Both good clients keep their windows where they were and go on
    drawing: the Wayland client's frames answered, the X client's frames
    on the compositor's screen."""
    frames = last_frame(x_good)
    duet.check_good_keeps_going(s, good, what)
    check(x_good.alive(), "the good X client died: %s" % x_good.stderr_tail())
    x_good.wait_line(r"^frame (\d+)$", pred=lambda m: int(m.group(1)) >= frames + 10,
                     timeout=15)
    after = counter_shown(s, x_win, "after", max(before, frames))
    wins = {w.app_id: w for w in s.windows()}
    check((wins[X_GOOD_APP].x, wins[X_GOOD_APP].y) == (x_win.x, x_win.y) and
          (wins[duet.GOOD_APP_ID].x, wins[duet.GOOD_APP_ID].y) == (wl_win.x, wl_win.y),
          "the good windows moved: %r" % wins)
    return after


def scenario(case):
    args, mode, words, budget = CASES[case]

    def test():
        need_xwayland()
        with duet.Session("xwayland-budget-" + case, args=xwayland_args(*args)) as s:
            bg = s.background()
            good, x_good, wl_win, x_win, xwayland, before = start_goods(s)

            bad = s.client([duet.program("DUET_X11_BAD_CLIENT"), "--hold", mode],
                           name="offender")
            _, m = bad.wait_line(r"^client (0x[0-9a-f]+)$", timeout=30)
            base = int(m.group(1), 16)
            status = bad.wait(60)
            check(status != 0, "the offender exited %d: not disconnected" % status)
            check("X connection error" in bad.stderr_tail(),
                  "the offender's X connection did not break: %s" % bad.stderr_tail())
            duet.log("the offender (pid %d, X client 0x%x) was disconnected: %s"
                     % (bad.pid, base, bad.stderr_tail().strip()))

            lines = wait_for("the compositor's line naming the offender", lambda: [
                m for m in re.finditer(TALL_LINE if words is None else KILL_LINE,
                                       compositor_log(s))
                if int(m.group(1), 16) == base])
            duet.log("logged: %s" % lines[0].group(0))
            offender_windows = {int(w, 16) for w in re.findall(r"^window (0x[0-9a-f]+)$",
                                                               "\n".join(bad.lines), re.M)}
            for m in lines:
                check(m.group(2) == str(bad.pid), "the line names pid %s, the offender is %d: %s"
                      % (m.group(2), bad.pid, m.group(0)))
                check(int(m.group(3), 16) in offender_windows,
                      "the line names window %s, not one of the offender's %r: %s"
                      % (m.group(3), sorted(map(hex, offender_windows)), m.group(0)))
                if words is None:
                    check((m.group(4), m.group(5)) == ("100", "20000"),
                          "the line does not name the 100x20000 texture: %s" % m.group(0))
                    continue
                check(m.group(5) == words and int(m.group(6)) == budget and
                      int(m.group(4)) >= budget,
                      "the line does not name %s %d MiB with more: %s"
                      % (words, budget, m.group(0)))
            check(len(lines) == 1, "the offender was killed %d times: %r"
                  % (len(lines), [m.group(0) for m in lines]))
            check_xwayland_kept(s, xwayland)

            wait_for("the offender's windows to leave the list", lambda: sorted(
                w.app_id for w in s.windows()) == sorted([duet.GOOD_APP_ID, X_GOOD_APP]))
            after = check_goods_go_on(s, good, x_good, wl_win, x_win, before, "the offence")
            background_outside(s.screenshot("after-bg"), bg, [wl_win, x_win])
            duet.log("after the offence: X frames %d -> %d on screen, Xwayland %d the same"
                     % (before, after, xwayland))
            check_xwayland_kept(s, xwayland)
            s.check_alive()
    return test


CURSOR_LINE = (r"xwayland: wl_surface@\d+ without an X window \(yet\) over budget: textures of "
               r"(\d+) MiB would exceed the client budget of 256 MiB: refused")


def cursor():
    """Xwayland's own surface (its cursor), which no X window pairs with,
    over the client budget: refused with a log line, and Xwayland, the
    offender (it cannot be told from the others) and everyone else go on."""
    need_xwayland()
    with duet.Session("xwayland-budget-cursor", args=xwayland_args()) as s:
        good, x_good, wl_win, x_win, xwayland, before = start_goods(s)
        bad = s.client([duet.program("DUET_X11_BAD_CLIENT"), "--hold", "huge-cursor"],
                       name="offender")
        bad.wait_line(r"^mapped 1$", timeout=30)
        s.wait_window(app_id="duet-x11-bad-client", timeout=30)
        win = place(s, "duet-x11-bad-client", 700, 500)  # off the good windows
        s.testctl("motion", win.x + win.w // 2, win.y + win.h // 2)
        m = wait_for("the line refusing the cursor", lambda: re.search(
            CURSOR_LINE, compositor_log(s)), timeout=30)
        duet.log("logged: %s" % m.group(0))
        check(int(m.group(1)) > 256, "the cursor's %s MiB is not over 256" % m.group(1))
        check_xwayland_kept(s, xwayland)
        check(bad.alive(), "the offender was disconnected: %s" % bad.stderr_tail())
        s.testctl("motion", 1, 1)
        after = check_goods_go_on(s, good, x_good, wl_win, x_win, before, "the cursor")
        duet.log("after the cursor: X frames %d -> %d on screen, Xwayland %d the same"
                 % (before, after, xwayland))
        check_xwayland_kept(s, xwayland)
        bad.stop()
        s.check_alive()


def shmem_mib(pid):
    """The shared memory the process maps (its wl_shm pools): /proc's
    RssShmem, MiB."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("RssShmem:"):
                return int(line.split()[1]) // 1024
    raise duet.Failure("no RssShmem for pid %d" % pid)


RELEASED_ROUNDS = 10


def released():
    """A commit refused over an X client's budget gives the buffer back:
    RELEASED_ROUNDS offenders with a 100x20000 window (7.6 MiB, past the
    renderer's textures, its commit refused and its client killed) leave
    Xwayland's shared memory as it was. Unreleased, each stays mapped in
    Xwayland for good (76 MiB here; the X fuzzer had Xwayland killed by
    the kernel for memory after 900,000 requests)."""
    need_xwayland()
    with duet.Session("xwayland-budget-released", args=xwayland_args("--xwayland-now")) as s:
        xwayland = one_xwayland(s)
        before = shmem_mib(xwayland)
        # Each holds its window until it is killed for it.
        refused = rounds = 0
        while refused < RELEASED_ROUNDS and rounds < 3 * RELEASED_ROUNDS:
            r = s.run([duet.program("DUET_X11_BAD_CLIENT"), "--hold", "tall-window"],
                      timeout=30)
            rounds += 1
            check(r.returncode == 1, "duet-x11-bad-client --hold tall-window exited %d: %s"
                  % (r.returncode, r.stdout + r.stderr))
            s.sync()
            refused = len(re.findall(r"a 100x20000 texture the renderer cannot make",
                                     compositor_log(s)))
        s.sync()
        # Freed when Xwayland hears of the release: within moments.
        deadline = time.monotonic() + 10
        while shmem_mib(xwayland) - before >= 16 and time.monotonic() < deadline:
            time.sleep(0.1)
        after = shmem_mib(xwayland)
        duet.log("Xwayland's shared memory: %d MiB before, %d MiB after %d refused windows"
                 % (before, after, refused))
        check(after - before < 16, "Xwayland keeps %d MiB more shared memory after %d refused "
              "7.6 MiB windows: their buffers were not given back" % (after - before, refused))
        check(refused >= RELEASED_ROUNDS, "%d refusals logged for %d offenders"
              % (refused, rounds))
        check_xwayland_kept(s, xwayland)


if __name__ == "__main__":
    duet.main_scenario(dict({case: scenario(case) for case in CASES}, cursor=cursor,
                            released=released))
