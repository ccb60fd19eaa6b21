#!/usr/bin/env python3
"""duet-compositor --xwayland: an X display of its own, served by an Xwayland
it starts when an X client first connects and again after Xwayland dies.

usage: test_xwayland.py lazy | now | kill | missing | cleanup | display |
                        shown | xeyes | override-redirect | kill-shown |
                        transient | wm-state | iconic | close

lazy: no Xwayland before the first X connection; the lock file holds the
compositor's pid in the X servers' format; xdpyinfo answers on DISPLAY;
an X client that holds its connection (xprop -spy) is served, and once it
leaves Xwayland stays and serves the next client (it is not started again).
now: --xwayland-now starts Xwayland before any X client, and it stays
after the X client has gone.
kill: SIGKILL of Xwayland while a Wayland client draws and an X client is
connected: the X client gets its own connection error, the compositor and
the Wayland client go on (frames, a round trip), and the next X client
starts a new Xwayland that answers.
missing: without the Xwayland binary (not in PATH, or --xwayland-path
naming nothing) the compositor refuses to start, with one line naming the
binary and the Debian package, and exits non-zero.
cleanup: SIGTERM of the compositor while Xwayland runs with a client: it
exits 0, and the lock file, the socket file, the abstract socket and the
Xwayland process are all gone.
display: a lock file of a live process is left alone and the next number
taken; one left by a dead process is taken over.

The X window manager inside the compositor (X windows shown, screenshots
of the compositor's output):
shown: duet-x11-test-pattern through Xwayland is a compositor window,
focused, centred on the output by the policy (rule 1), and its exact
pattern is on the screenshot there, nothing else on the screen.
xeyes: a third-party X client (x11-apps) is shown: its window's area is
not background, the rest of the screen is.
override-redirect: an override-redirect window (duet-x11-test-pattern
--override-redirect X,Y, a menu's kind) over a managed one shows its
pattern at X,Y, above it; it is not a window of the policy's (not listed,
not focused: the managed one keeps the focus).
kill-shown: SIGKILL of Xwayland while an X window is shown: the compositor
goes on, the window is gone from the list and the screen, and the next X
client starts a new Xwayland and is shown.

The window manager's ICCCM/EWMH side, as duet-xwm does it (its policy.c):
transient: a dialog (WM_TRANSIENT_FOR, _NET_WM_WINDOW_TYPE_DIALOG) maps
centred over its parent (rule 11), which the test moved off-centre, on top
and focused; a second one whose parent is near the output's corner is kept
on the output.
wm-state: _NET_WM_STATE add/remove/toggle of fullscreen and maximized sent
by the X client itself: the window is the output's size at 0,0, the client
is configured to it, _NET_WM_STATE says so; undone, it is back where it was.
iconic: a window mapped with WM_HINTS initial_state IconicState is listed,
not focused, not shown, WM_STATE Iconic, until activated; the client's own
WM_CHANGE_STATE request minimizes it again (unmapped in X, WM_STATE Iconic,
the focus gone), and activate shows it where it was, with the keyboard
focus (a key pressed reaches the client); its client gone while
it is iconic, it leaves the list.
close: duet-testctl close sends WM_DELETE_WINDOW (the client exits 0); a
client without it in WM_PROTOCOLS is disconnected (XKillClient).
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import duet
from duet import check, start_good
from duet_launch import displays



def need_xwayland():
    """Xwayland and the X clients the scenarios use (skip with one line
    where they are missing, fail under CI)."""
    duet.third_party("Xwayland")
    duet.third_party("xdpyinfo")
    duet.third_party("xprop")


def first_display():
    """A free display number from the harness's own range (the X servers
    of tests running beside this one draw theirs there too, at random):
    the compositor takes the first free one from it."""
    for n in displays.x_numbers():
        return n
    raise duet.Failure("no free X display number in %d-%d" % displays.X_SERVERS)


def xwayland_args(*more):
    return ["--xwayland", "--xwayland-display", str(first_display())] + list(more)


def announced(s):
    """The display the compositor announced (DISPLAY=:N, before
    WAYLAND_DISPLAY), which the launcher gives the clients."""
    lines = [l for l in s.compositor.lines if l.startswith("DISPLAY=")]
    check(len(lines) == 1, "the compositor announced DISPLAY %r" % lines)
    display = lines[0][len("DISPLAY="):]
    check(re.fullmatch(r":\d+", display), "bad DISPLAY line %r" % lines[0])
    check(s.env.get("DISPLAY") == display,
          "the launcher gave clients DISPLAY=%r, the compositor said %s"
          % (s.env.get("DISPLAY"), display))
    return display, int(display[1:])


def children(pid, comm):
    """Live (not zombie) children of pid named comm."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        if name == comm and int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry))
    return found


def xwayland_pids(s):
    return children(s.compositor.pid, "Xwayland")


def wait_for(what, pred, timeout=15):
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > deadline:
            raise duet.Failure("timed out after %d s waiting for %s" % (timeout, what))
        time.sleep(0.05)


def one_xwayland(s):
    pids = wait_for("Xwayland to run", lambda: xwayland_pids(s))
    check(len(pids) == 1, "more than one Xwayland runs: %r" % pids)
    return pids[0]


def xdpyinfo(s, display):
    r = s.run(["xdpyinfo", "-display", display], timeout=30)
    check(r.returncode == 0 and "X.Org" in r.stdout,
          "xdpyinfo -display %s failed (%d): %s%s" % (display, r.returncode, r.stdout[:500],
                                                      r.stderr))
    duet.log("xdpyinfo -display %s: %s" % (display, r.stdout.splitlines()[0]))


def spy(s, display, name="xprop-spy"):
    """An X client that holds its connection until it is stopped or the
    server goes: xprop -root -spy, once it has printed the root's
    properties (so it is connected and answered)."""
    p = s.client(["xprop", "-display", display, "-root", "-spy", "_NET_SUPPORTED"], name=name)
    p.wait_line(r"_NET_SUPPORTED", timeout=30)
    return p


def compositor_log(s):
    return s.compositor.stderr_tail(1 << 20)


def check_lock(display_number, pid):
    path = "/tmp/.X%d-lock" % display_number
    with open(path) as f:
        text = f.read()
    check(text == "%10d\n" % pid, "%s holds %r, not the compositor's pid %d as X servers "
          "write it" % (path, text, pid))


def check_good_keeps_going(s, good, what):
    duet.check_good_keeps_going(s, good, what)
    s.sync()  # a round trip through the test socket


# ------------------------------------------------------------- scenarios
def lazy(s):
    display, n = announced(s)
    check_lock(n, s.compositor.pid)
    check(os.path.exists(displays.x_socket(n)), "no socket file %s" % displays.x_socket(n))
    time.sleep(0.5)  # time enough for an eager start to show
    check(not xwayland_pids(s), "Xwayland runs before any X client: %r" % xwayland_pids(s))
    check("xwayland: started" not in compositor_log(s), "Xwayland was started before any "
          "X client:\n" + compositor_log(s))
    xdpyinfo(s, display)
    holder = spy(s, display)
    pid = one_xwayland(s)
    duet.log("Xwayland pid %d serves %s" % (pid, display))
    holder.stop()
    # The last X client gone, Xwayland stays: the same one serves the next.
    time.sleep(1.5)
    check(xwayland_pids(s) == [pid], "Xwayland %d did not stay after its last X client "
          "left (now %r)" % (pid, xwayland_pids(s)))
    xdpyinfo(s, display)
    check(xwayland_pids(s) == [pid] and
          len(re.findall(r"xwayland: started", compositor_log(s))) == 1,
          "the second X client started another Xwayland:\n" + compositor_log(s))


def now(s):
    display, _ = announced(s)
    pid = one_xwayland(s)  # before any X client
    xdpyinfo(s, display)
    time.sleep(1.0)
    check(xwayland_pids(s) == [pid], "--xwayland-now: Xwayland %d did not stay after its "
          "client left (now %r)" % (pid, xwayland_pids(s)))


def kill(s):
    display, _ = announced(s)
    good = start_good(s)
    holder = spy(s, display)
    pid = one_xwayland(s)
    os.kill(pid, signal.SIGKILL)
    duet.log("SIGKILLed Xwayland (pid %d)" % pid)
    status = holder.wait(15)
    check(status != 0, "the X client of the killed Xwayland exited %d" % status)
    duet.log("xprop -spy exited %d: %s" % (status, holder.stderr_tail(300).strip()))
    wait_for("the compositor to reap Xwayland",
             lambda: "(pid %d) was killed by signal 9" % pid in compositor_log(s))
    check_good_keeps_going(s, good, "SIGKILL of Xwayland")
    xdpyinfo(s, display)
    holder = spy(s, display, name="xprop-spy-again")
    again = one_xwayland(s)
    check(again != pid, "no new Xwayland")
    duet.log("a new Xwayland (pid %d) serves %s" % (again, display))
    check_good_keeps_going(s, good, "the new Xwayland")
    holder.stop()


def missing_case():
    tmp = tempfile.mkdtemp(prefix="duet-xwayland-missing-")
    try:
        env = duet.base_env(tmp)
        cases = [("not in PATH", ["--xwayland"], dict(env, PATH=tmp), "Xwayland in PATH"),
                 ("--xwayland-path", ["--xwayland", "--xwayland-path", tmp + "/no/Xwayland"], env,
                  tmp + "/no/Xwayland")]
        for what, args, e, names in cases:
            argv = [duet.program("DUET_COMPOSITOR")] + args
            r = subprocess.run(argv, env=e, stdin=subprocess.DEVNULL, capture_output=True,
                               text=True, timeout=60)
            duet.log("%s: exit %d, stderr:\n%s" % (what, r.returncode, r.stderr))
            check(r.returncode != 0, "%s: the compositor started (exit %d)" % (what, r.returncode))
            check("WAYLAND_DISPLAY=" not in r.stdout and "DISPLAY=" not in r.stdout,
                  "%s: it announced displays: %r" % (what, r.stdout))
            lines = [l for l in r.stderr.splitlines() if names in l]
            check(len(lines) == 1 and "Debian package xwayland" in lines[0],
                  "%s: no one line naming %r and the Debian package xwayland:\n%s"
                  % (what, names, r.stderr))
            report = duet.sanitizer_report(r.stderr)
            check(not report, "%s: sanitizer report:\n%s" % (what, report))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def abstract_listening(n):
    name = "@/tmp/.X11-unix/X%d" % n
    with open("/proc/net/unix") as f:
        return any(line.split()[-1] == name for line in f.readlines()[1:]
                   if len(line.split()) >= 8)


def cleanup(s):
    display, n = announced(s)
    check(abstract_listening(n), "no abstract socket for %s in /proc/net/unix" % display)
    holder = spy(s, display)
    pid = one_xwayland(s)
    s.compositor.signal(signal.SIGTERM)
    status = s.compositor.wait(30)
    check(status == 0, "duet-compositor exited %d on SIGTERM" % status)
    log = compositor_log(s)
    check("(pid %d) exited" % pid in log or "(pid %d) was killed" % pid in log,
          "the compositor did not reap Xwayland %d:\n%s" % (pid, log))
    check(not os.path.exists("/proc/%d" % pid), "Xwayland %d is still there" % pid)
    left = [p for p in ("/tmp/.X%d-lock" % n, displays.x_socket(n)) if os.path.lexists(p)]
    check(not left, "left behind: %r" % left)
    check(not abstract_listening(n), "the abstract socket of %s is still there" % display)
    check(holder.wait(15) != 0, "the X client did not see its server go")
    report = s.compositor.sanitizer_report()
    check(not report, "sanitizer report:\n%s" % report)


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def display_case():
    # Three free numbers in a row: a live lock, a stale lock, the rest.
    for n in displays.x_numbers(tries=50):
        if all(displays.x_free(n + i) for i in range(3)):
            break
    else:
        raise duet.Failure("no three free X display numbers in a row")
    live, stale = "/tmp/.X%d-lock" % n, "/tmp/.X%d-lock" % (n + 1)
    made = {}
    try:
        for path, pid in ((live, os.getpid()), (stale, dead_pid())):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
            made[path] = b"%10d\n" % pid
            os.write(fd, made[path])
            os.close(fd)
        with duet.Session("xwayland-display",
                          args=["--xwayland", "--xwayland-display", str(n)]) as s:
            display, got = announced(s)
            check(got == n + 1, "took %s: want :%d (:%d is a live server's, :%d's lock is "
                  "stale)" % (display, n + 1, n, n + 1))
            check_lock(got, s.compositor.pid)
            with open(live) as f:
                check(f.read() == "%10d\n" % os.getpid(), "the live lock was changed")
            xdpyinfo(s, display)
            s.check_alive()
    finally:
        # Ours, unless the compositor took the stale one over (and removed
        # it as it exited).
        for path, text in made.items():
            try:
                with open(path, "rb") as f:
                    if f.read() == text:
                        os.unlink(path)
            except FileNotFoundError:
                pass


# ------------------------------------------- the X window manager
X_PATTERN_APP = "duet-x11-test-pattern"


def x_pattern(s, size, *more, name="x11-pattern"):
    """duet-x11-test-pattern on the compositor's DISPLAY, once it has drawn."""
    argv = [duet.program("DUET_X11_TEST_PATTERN"), "--size", size] + list(more)
    p = s.client(argv, name=name)
    p.wait_line(r"^mapped %s$" % size.replace("x", " "), timeout=30)
    return p


def screen_size(s):
    return tuple(int(v) for v in s.size.split("x"))


def shot_until(s, label, test, timeout=15):
    """Screenshots until test(img) passes (returns the image): Xwayland
    commits a drawing to its wl_surface a little after the X client's
    round trip said it was drawn."""
    deadline = time.monotonic() + timeout
    while True:
        img = s.screenshot(label)
        try:
            test(img)
            return img
        except duet.Failure:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def check_pattern_at(img, win, what):
    bad, examples = duet.pattern_mismatches(img, win)
    check(bad == 0, "%s: %d pixels of %dx%d at %d,%d are not the pattern, e.g. %r"
          % (what, bad, win.w, win.h, win.x, win.y, examples))


def centred_pattern(s, bg, size):
    """A managed X window of duet-x11-test-pattern: listed, focused, centred
    on the output, its pattern on the screen and nothing else."""
    p = x_pattern(s, size)
    win = s.wait_window(app_id=X_PATTERN_APP)
    w, h = (int(v) for v in size.split("x"))
    sw, sh = screen_size(s)
    check((win.x, win.y, win.w, win.h) == ((sw - w) // 2, (sh - h) // 2, w, h),
          "the X window is at %d,%d %dx%d, policy.c's rule 1 centres it at %d,%d %dx%d"
          % (win.x, win.y, win.w, win.h, (sw - w) // 2, (sh - h) // 2, w, h))
    check(win.focused, "the new X window is not focused (rule 2): %r" % (win,))
    check(win.title == "duet x11 test pattern", "its title is %r" % win.title)
    # Its own process (_NET_WM_PID), not Xwayland's connection's: that
    # socketpair is the compositor's, whose pid SO_PEERCRED gives.
    check(win.pid == p.pid, "the X window's pid is %d, its client's %d" % (win.pid, p.pid))

    def shown_alone(img):
        check_pattern_at(img, win, "the X window")
        duet.check_outside_is_background(img, win, bg)
    shot_until(s, "x11-pattern", shown_alone)
    duet.log("X window %r shown through Xwayland" % (win,))
    return p, win


def shown(s):
    bg = s.background()
    centred_pattern(s, bg, "200x150")


def xeyes(s):
    duet.third_party("xeyes")
    bg = s.background()
    s.client(["xeyes", "-geometry", "160x120"], name="xeyes")
    win = s.wait_window(app_id="XEyes", timeout=30)
    check((win.w, win.h) == (160, 120), "xeyes' window is %dx%d, it asked 160x120" % (win.w, win.h))

    def drawn(img):
        area = win.w * win.h
        not_bg = area - img.count_color(bg, win.x, win.y, win.x + win.w, win.y + win.h)
        check(not_bg > area // 2, "only %d of xeyes' %d pixels are not background" % (not_bg, area))
        check(len(img.colors(win.x, win.y, win.x + win.w, win.y + win.h)) >= 2,
              "xeyes' area is one colour")
        duet.check_outside_is_background(img, win, bg)
    shot_until(s, "xeyes", drawn)
    duet.log("xeyes shown at %d,%d %dx%d" % (win.x, win.y, win.w, win.h))


def override_redirect(s):
    bg = s.background()
    _, managed = centred_pattern(s, bg, "200x150")
    at = (managed.x + 50, managed.y + 40)
    x_pattern(s, "100x60", "--override-redirect", "%d,%d" % at, name="x11-menu")
    menu = duet.Window(0, 0, at[0], at[1], 100, 60, 0, "", "")

    def menu_on_top(img):
        check_pattern_at(img, menu, "the override-redirect window")
    shot_until(s, "override-redirect", menu_on_top)
    wins = s.windows()
    check(len(wins) == 1 and wins[0].id == managed.id and wins[0].focused,
          "the override-redirect window is not to be a focused or listed window: %r" % wins)
    duet.log("override-redirect window at %d,%d over %r" % (at[0], at[1], managed))


def kill_shown(s):
    bg = s.background()
    p, win = centred_pattern(s, bg, "200x150")
    pid = one_xwayland(s)
    os.kill(pid, signal.SIGKILL)
    duet.log("SIGKILLed Xwayland (pid %d) with %r shown" % (pid, win))
    check(p.wait(15) != 0, "the X client of the killed Xwayland exited 0")
    wait_for("the X window to leave the list", lambda: not s.windows())
    shot_until(s, "gone", lambda img: duet.check_outside_is_background(
        img, duet.Window(0, 0, 0, 0, 0, 0, 0, "", ""), bg))
    s.check_alive()
    p2 = x_pattern(s, "120x90", name="x11-pattern-again")
    again = one_xwayland(s)
    check(again != pid, "no new Xwayland")
    win2 = s.wait_window(app_id=X_PATTERN_APP)
    shot_until(s, "again", lambda img: check_pattern_at(img, win2, "the next X window"))
    duet.log("a new Xwayland (pid %d) shows %r" % (again, win2))
    p2.stop()


def x_client(s, size, *more, name="x11-pattern", commands=False):
    """duet-x11-test-pattern, once it has said its X window's id (before
    mapping); with commands, its stdin takes --commands lines."""
    argv = [duet.program("DUET_X11_TEST_PATTERN"), "--size", size] + list(more)
    if commands:
        argv.append("--commands")
    p = s.spawn(name, argv, s.env, stdin=subprocess.PIPE if commands else subprocess.DEVNULL)
    duet.log("started %s (pid %d): %s" % (name, p.pid, " ".join(argv)))
    _, m = p.wait_line(r"^window (0x[0-9a-f]+)$", timeout=30)
    return p, m.group(1)


def command(p, line):
    """A --commands line, once the client has sent its request."""
    start = len(p.lines)
    p.popen.stdin.write(line.encode() + b"\n")
    p.popen.stdin.flush()
    p.wait_line(r"^sent %s$" % line, start=start, timeout=15)


def xprop(s, wid, prop):
    r = s.run(["xprop", "-id", wid, prop], timeout=30)
    check(r.returncode == 0, "xprop -id %s %s failed: %s" % (wid, prop, r.stderr))
    return r.stdout.strip()


def wait_prop(s, wid, prop, pred, what):
    """Polls until pred(xprop's line) holds: the WM's writes come after
    the client's request round trip."""
    last = [None]

    def holds():
        last[0] = xprop(s, wid, prop)
        return pred(last[0])
    try:
        wait_for(what, holds, timeout=10)
    except duet.Failure:
        raise duet.Failure("%s: %s is %r" % (what, prop, last[0]))
    duet.log("%s: %s" % (what, last[0]))


def map_state(s, wid):
    r = s.run(["xwininfo", "-id", wid], timeout=30)
    m = re.search(r"Map State: (\w+)", r.stdout)
    check(m, "xwininfo -id %s: %s%s" % (wid, r.stdout, r.stderr))
    return m.group(1)


def one_window(s, app_id):
    wins = [w for w in s.windows() if w.app_id == app_id]
    check(len(wins) == 1, "%d windows of %s listed: %r" % (len(wins), app_id, s.windows()))
    return wins[0]


def transient(s):
    duet.third_party("xwininfo")
    sw, sh = screen_size(s)
    parent_p, parent_id = x_client(s, "300x200", "--class", "parent")
    parent_p.wait_line(r"^mapped ", timeout=30)
    parent = s.wait_window(app_id="parent")
    s.testctl("move", parent.id, 40, 30)
    s.wait_window(app_id="parent", pred=lambda w: (w.x, w.y) == (40, 30), timeout=10)
    dialog_p, _ = x_client(s, "100x80", "--class", "dialog", "--transient-for", parent_id,
                           name="x11-dialog")
    dialog_p.wait_line(r"^mapped ", timeout=30)
    dialog = s.wait_window(app_id="dialog")
    want = (40 + (300 - 100) // 2, 30 + (200 - 80) // 2)
    check((dialog.x, dialog.y, dialog.w, dialog.h) == want + (100, 80),
          "the dialog is at %d,%d %dx%d, rule 11 centres it over its parent at %d,%d"
          % ((dialog.x, dialog.y, dialog.w, dialog.h) + want))
    wins = s.windows()
    check([w.app_id for w in wins] == ["dialog", "parent"] and wins[0].focused,
          "the dialog is not on top and focused: %r" % wins)
    shot_until(s, "dialog", lambda img: check_pattern_at(img, dialog, "the dialog"))
    # Near the corner, centred over the parent would leave the output.
    s.testctl("close", dialog.id)
    check(dialog_p.wait(15) == 0, "the dialog did not exit on WM_DELETE_WINDOW")
    s.testctl("move", parent.id, sw - 150, sh - 100)
    s.wait_window(app_id="parent", pred=lambda w: (w.x, w.y) == (sw - 150, sh - 100),
                  timeout=10)
    x_client(s, "200x150", "--class", "dialog2", "--transient-for", parent_id,
             name="x11-dialog2")[0].wait_line(r"^mapped ", timeout=30)
    d2 = s.wait_window(app_id="dialog2")
    check((d2.x, d2.y) == (sw - 200, sh - 150),
          "the dialog over a parent at the corner is at %d,%d, not kept on the output at %d,%d"
          % (d2.x, d2.y, sw - 200, sh - 150))
    duet.log("dialogs at %r and %r over %r" % (dialog, d2, parent))


def map_order(s):
    """Rule 2 in X's order: a window whose surface draws after that of a
    window mapped later in X (as gtk3-demo's main window after its dialog
    under load) maps below it, and the later one keeps the focus, as
    duet-xwm, which maps in X's order, has them."""
    duet.third_party("xwininfo")
    early_p, early_id = x_client(s, "300x200", "--class", "early", "--draw-on-command",
                                 name="x11-early", commands=True)
    wait_for("the undrawn window mapped in X", lambda: map_state(s, early_id) == "IsViewable")
    check(not s.windows(), "an undrawn X window is listed: %r" % s.windows())
    late_p, _ = x_client(s, "200x150", "--class", "late", name="x11-late")
    late_p.wait_line(r"^mapped ", timeout=30)
    s.wait_window(app_id="late", pred=lambda w: w.focused, timeout=15)
    command(early_p, "draw")
    s.wait_window(app_id="early", timeout=15)
    wins = s.windows()
    check([(w.app_id, bool(w.focused)) for w in wins] == [("late", True), ("early", False)],
          "the window mapped first in X drew last: %r (want late on top and focused)" % wins)
    duet.log("mapped in X early, drawn late: %r" % wins)


def wm_state(s):
    sw, sh = screen_size(s)
    p, wid = x_client(s, "200x150", commands=True)
    p.wait_line(r"^mapped ", timeout=30)
    before = s.wait_window(app_id=X_PATTERN_APP)
    where = (before.x, before.y, before.w, before.h)
    steps = [("add fullscreen", (0, 0, sw, sh), "_NET_WM_STATE_FULLSCREEN", True),
             ("remove fullscreen", where, "_NET_WM_STATE_FULLSCREEN", False),
             ("toggle maximized", (0, 0, sw, sh), "_NET_WM_STATE_MAXIMIZED_HORZ", True),
             ("toggle maximized", where, "_NET_WM_STATE_MAXIMIZED_HORZ", False),
             ("toggle fullscreen", (0, 0, sw, sh), "_NET_WM_STATE_FULLSCREEN", True),
             ("toggle fullscreen", where, "_NET_WM_STATE_FULLSCREEN", False),
             # Both (rule 5): fullscreen over maximized, and back to it.
             ("add maximized", (0, 0, sw, sh), "_NET_WM_STATE_MAXIMIZED_VERT", True),
             ("add fullscreen", (0, 0, sw, sh), "_NET_WM_STATE_FULLSCREEN", True),
             ("remove fullscreen", (0, 0, sw, sh), "_NET_WM_STATE_MAXIMIZED_VERT", True),
             ("remove maximized", where, "_NET_WM_STATE_MAXIMIZED_VERT", False)]
    size = where[2:]
    for line, box, atom, on in steps:
        start = len(p.lines)
        command(p, line)
        win = s.wait_window(app_id=X_PATTERN_APP,
                            pred=lambda w: (w.x, w.y, w.w, w.h) == box, timeout=10)
        if box[2:] != size:  # the client was configured to it
            p.wait_line(r"^resized %d %d$" % box[2:], start=start, timeout=10)
        size = box[2:]
        wait_prop(s, wid, "_NET_WM_STATE", lambda v: (atom in v) == on,
                  "after '%s'" % line)
        check(win.focused, "after '%s' the window lost the focus: %r" % (line, win))
    shot_until(s, "restored", lambda img: check_pattern_at(img, before, "the restored window"))


def iconic(s):
    duet.third_party("xwininfo")
    bg = s.background()
    p, wid = x_client(s, "200x150", "--iconic", commands=True)
    win = s.wait_window(app_id=X_PATTERN_APP, timeout=30)
    sw, sh = screen_size(s)
    centre = ((sw - 200) // 2, (sh - 150) // 2)
    check(not win.focused, "the iconic window has the focus: %r" % (win,))
    wait_prop(s, wid, "WM_STATE", lambda v: "Iconic" in v, "mapped iconic")
    check(map_state(s, wid) == "IsUnMapped", "the iconic window is mapped in X")
    check(not any(l.startswith("mapped") for l in p.lines), "the iconic window was exposed")
    duet.check_outside_is_background(s.screenshot("iconic"), duet.Window(0, 0, 0, 0, 0, 0, 0,
                                                                       "", ""), bg)
    for round in ("first", "again"):
        s.testctl("activate", win.id)
        win = s.wait_window(app_id=X_PATTERN_APP, pred=lambda w: w.focused, timeout=10)
        check((win.x, win.y, win.w, win.h) == centre + (200, 150),
              "restored (%s) at %r, not where it was placed" % (round, win))
        wait_prop(s, wid, "WM_STATE", lambda v: "Normal" in v, "activated (%s)" % round)
        shot_until(s, "shown-" + round, lambda img: check_pattern_at(img, win, "restored"))
        # The keyboard follows the focus to the new wl_surface Xwayland made.
        start = len(p.lines)
        s.testctl("key", 30, 1)
        s.testctl("key", 30, 0)
        p.wait_line(r"^key 38$", start=start, timeout=10)  # evdev 30 is X keycode 38
        command(p, "iconify")
        wait_prop(s, wid, "WM_STATE", lambda v: "Iconic" in v, "iconified (%s)" % round)
        wait_for("the X window to be unmapped", lambda: map_state(s, wid) == "IsUnMapped")
        wait_prop(s, wid, "_NET_WM_STATE", lambda v: "HIDDEN" in v, "hidden (%s)" % round)
        win = one_window(s, X_PATTERN_APP)
        check(not win.focused, "the minimized window keeps the focus: %r" % (win,))
        shot_until(s, "minimized-" + round, lambda img: duet.check_outside_is_background(
            img, duet.Window(0, 0, 0, 0, 0, 0, 0, "", ""), bg))
    check(p.alive(), "the client exited")
    # Its client gone while it is iconic, nothing of it is left.
    p.stop()
    wait_for("the iconic window of a client gone to leave the list", lambda: not s.windows())


def close(s):
    p = x_pattern(s, "200x150")
    win = s.wait_window(app_id=X_PATTERN_APP)
    s.testctl("close", win.id)
    check(p.wait(15) == 0, "the client did not exit 0 on WM_DELETE_WINDOW")
    wait_for("the closed window to leave the list", lambda: not s.windows())
    p, _ = x_client(s, "200x150", "--no-delete-window", name="x11-no-delete")
    p.wait_line(r"^mapped ", timeout=30)
    win = s.wait_window(app_id=X_PATTERN_APP)
    s.testctl("close", win.id)
    status = p.wait(15)
    check(status != 0, "the client without WM_DELETE_WINDOW exited %d, not killed" % status)
    check("X connection lost" in p.stderr_tail(), "the client was not disconnected: %s"
          % p.stderr_tail())
    wait_for("the killed client's window to leave the list", lambda: not s.windows())
    duet.log("closed: WM_DELETE_WINDOW, then XKillClient")


def in_session(name, scenario, *more):
    def test():
        need_xwayland()
        with duet.Session("xwayland-" + name, args=xwayland_args(*more)) as s:
            scenario(s)
            if scenario is not cleanup:
                s.check_alive()
    return test


def display_test():
    need_xwayland()
    display_case()


if __name__ == "__main__":
    duet.main_scenario({
        "lazy": in_session("lazy", lazy),
        "now": in_session("now", now, "--xwayland-now"),
        "kill": in_session("kill", kill),
        "missing": missing_case,
        "cleanup": in_session("cleanup", cleanup),
        "display": display_test,
        "shown": in_session("shown", shown),
        "xeyes": in_session("xeyes", xeyes),
        "override-redirect": in_session("override-redirect", override_redirect),
        "kill-shown": in_session("kill-shown", kill_shown),
        "transient": in_session("transient", transient),
        "wm-state": in_session("wm-state", wm_state),
        "map-order": in_session("map-order", map_order),
        "iconic": in_session("iconic", iconic),
        "close": in_session("close", close),
    })
