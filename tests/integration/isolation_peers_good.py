"""A well-behaved client on a peer (isolation_peers.py): the checks that
need no test-only control protocol, each part recorded as kept or lost."""

import os
import time

import duet
from duet import check, log

import test_isolation as iso
from test_isolation import SLOW
from test_xwayland import wait_for
from isolation_peers_record import peer_note
from wl_sync import sync_seconds
from isolation_peers_x import (pager_activate, x_descendants, x_focus_and_pointer, x_window,
                               x_windows, xctl)


class PeerGood(iso.Good):
    """A well-behaved client on a peer: the checks that need no control
    protocol (isolation_peers.py's docstring)."""

    def __init__(self, s, path, kind, app, size):
        self.s, self.path, self.kind, self.app = s, path, kind, app
        env = None
        if kind == "wayland":
            argv = [duet.program("DUET_TEST_PATTERN"), "--frames", "100000000",
                    "--app-id", app, "--size", "%dx%d" % size]
            if s.wayland_display:
                # The Xwayland stacks' Wayland socket (the apps' env is X's).
                env = dict(dict(s.spec.app_env), WAYLAND_DISPLAY=s.wayland_display)
        else:
            argv = [duet.program("DUET_X11_TEST_PATTERN"), "--frames", "100000000",
                    "--interval-ms", "20", "--class", app, "--size", "%dx%d" % size]
        self.proc = s.client(argv, name=app, env=env)
        self.proc.wait_line(r"^mapped %d %d$" % size, timeout=30 * SLOW)
        self.proc.wait_line(r"^frame 5$", timeout=30 * SLOW)
        self.win = None
        if kind == "x":
            _, m = self.proc.wait_line(r"^window (0x[0-9a-f]+)$", timeout=5)
            self.xid = int(m.group(1), 16)
            self.win = wait_for("%s's window viewable" % app, lambda: self.listed(),
                                timeout=30 * SLOW)
            log("%s: window 0x%x at %d,%d %dx%d" % (app, self.win.id, self.win.x, self.win.y,
                                                   self.win.w, self.win.h))
        self.key = iso.X_KEY_A
        self.clicks = 0

    def check(self, what, shots=True):
        """Alive, and what can be checked on a peer (isolation_peers.py's
        docstring)."""
        self.s.check_alive()
        check(self.proc.alive(), "%s: the good client %s died: %s"
              % (what, self.app, self.proc.stderr_tail()))
        t0 = time.monotonic()
        kept, failed = [], []
        # Each part checked even where one before failed: the record says
        # which the peer kept.
        for name, part in (("window", self.window), ("input", self.input),
                           ("frames", self.frames)):
            try:
                if part(what) is not False:
                    kept.append(name)
            except duet.Failure as e:
                failed.append("%s: %s" % (name, e))
            except Exception as e:
                if not type(e).__module__.startswith("Xlib"):
                    raise
                # The X server went away (or cut us off): whoever died says.
                time.sleep(1.0)
                self.s.check_alive()
                failed.append("%s: the X connection failed: %r" % (name, e))
        log("%s: %s kept: %s%s (%.2f s)" % (what, self.app, ", ".join(kept) or "none",
                                            "; lost: " + ", ".join(f.split(":")[0] for f in failed)
                                            if failed else "", time.monotonic() - t0))
        check(not failed, "%s: %s lost its %s" % (what, self.app, "; ".join(failed)))

    def listed(self):
        """The client's window, viewable (mapped, its frame too), where it
        is on the root: from the X server, not a window manager's list
        (weston's keeps no _NET_CLIENT_LIST)."""
        return x_window(self.s, self.xid, self.app)

    def window(self, what):
        if self.kind != "x":
            return False
        win = wait_for("%s: the good window %s viewable" % (what, self.app), self.listed,
                       timeout=10 * SLOW)
        check((win.x, win.y, win.w, win.h) == (self.win.x, self.win.y, self.win.w, self.win.h),
              "%s: the good window %s moved or changed size: %r, was %r"
              % (what, self.app, win, self.win))

    def input(self, what):
        if self.kind != "x" or self.path.x_server != "xvfb":
            return False
        s, p = self.s, self.proc
        mark = len(p.lines)
        self.clicks += 1
        x, y = self.win.x + 10 + self.clicks % 50, self.win.y + 10
        pager_activate(s, self.win.id)
        # The key first, once the window manager gave the window the X
        # input focus; then a click, where the window is on top: a peer
        # that focuses a window without raising it (its policy) leaves
        # another's over it, and a click there is that one's.
        try:
            wait_for("%s: the X input focus on %s" % (what, self.app),
                     lambda: x_focus_and_pointer(s)[0] == self.win.id, timeout=10 * SLOW)
            xctl(s, "key", self.key)
            p.wait_line(r"^key %d$" % self.key, start=mark, timeout=10 * SLOW)
        except duet.Failure as e:
            raise duet.Failure("%s; %s" % (e, self.input_state(s, x, y)))
        focus, under = x_focus_and_pointer(s, x, y)
        if self.on_top(s, under):
            mark = len(p.lines)
            xctl(s, "click", x, y)
            xctl(s, "key", self.key)
            p.wait_line(r"^key %d$" % self.key, start=mark, timeout=10 * SLOW)
        else:
            peer_note("%s: no click: at %d,%d 0x%x is on top of %s (the key reached it)"
                      % (what, x, y, under, self.app))

    def frames(self, what, shots=True):
        if self.kind == "wayland":
            try:
                duet.check_good_keeps_going(self.s, self.proc, what)
            except duet.Failure as e:
                # No frame callback for a surface the peer does not draw
                # (one covered whole: mutter, wlroots) is its policy, a
                # server that answers nobody is not: say which.
                took = wl_sync_probe(self.s)
                raise duet.Failure("%s; the server %s" % (e, (
                    "answered a new client's wl_display.sync in %.2f s" % took)
                    if took is not None else "did not answer a new client's wl_display.sync "
                    "within 5 s"))
            return
        drawn = duet.last_frame(self.proc)
        self.proc.wait_line(r"^frame (\d+)$", pred=lambda m: int(m.group(1)) >= drawn + 10,
                            timeout=15 * SLOW)

    def on_top(self, s, under):
        """under (a child of the root) is the good window or its frame."""
        return under != 0 and (under == self.win.id or self.win.id in x_descendants(s, under))

    def input_state(self, s, x, y):
        wins = x_windows(s)
        focused = ["0x%x (%s)" % (w.id, w.app_id) for w in wins if w.focused]
        focus, under = x_focus_and_pointer(s, x, y)
        return ("_NET_ACTIVE_WINDOW %s, the X input focus 0x%x, on top at %d,%d 0x%x"
                % (", ".join(focused) or "none", focus, x, y, under))


def wl_sync_probe(s, timeout=5.0):
    """Seconds the Wayland server took to answer a new client's
    wl_display.sync, or None (not within timeout)."""
    name = s.wayland_display or s.display
    path = name if name.startswith("/") else os.path.join(s.env["XDG_RUNTIME_DIR"], name)
    return sync_seconds(path, timeout)
