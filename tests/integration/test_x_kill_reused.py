#!/usr/bin/env python3
"""A window manager's KillClient never reaches a client that only took the
ids of the client it meant.

KillClient names a client by one of its resources, and an X server gives
a new client the resource-id base of the last one gone. A window manager
that decides to kill a client (here: _NET_CLOSE_WINDOW on a window
without WM_DELETE_WINDOW) while that client is already disconnecting
must not kill the next one. The window manager is stopped (SIGSTOP)
while client A asks it to close A's window and disconnects and client B
connects with A's base and makes a window of the same id; once it goes
on, B must live and keep its window, and the log must say A's window
went before the kill. Run by the X fuzzer, which found it: its probe
client was killed for what the episode before it had asked.

usage: test_x_kill_reused.py xwm|xwayland
"""
import signal
import sys
import time

import duet
from duet import check

try:
    from Xlib import X, display, error
    from Xlib.protocol import event
except ImportError as e:  # python3-xlib (scripts/packages.sh)
    X = None
    XLIB_MISSING = str(e)


def session(kind):
    if kind == "xwm":
        return duet.XSession("x-kill-reused-xwm", screenshots=False)
    import test_xwayland
    test_xwayland.need_xwayland()
    return duet.Session("x-kill-reused-xwayland", test_protocol=False,
                        args=test_xwayland.xwayland_args("--xwayland-now"))


def display_of(s, kind):
    if kind == "xwm":
        return s.display
    import test_xwayland
    return test_xwayland.announced(s)[0]


def wm_sync(s, name):
    """Every request before this handled by the window manager (_DUET_SYNC,
    which both duet-xwm and the compositor's window manager answer)."""
    r = s.run([duet.program("DUET_XCTL"), "--display", name, "sync"], timeout=30)
    check(r.returncode == 0, "duet-xctl sync failed (%d): %s%s"
          % (r.returncode, r.stdout, r.stderr))


def base_of(d):
    return d.display.info.resource_id_base


def wait_mapped(d, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        while d.pending_events():
            if d.next_event().type == X.MapNotify:
                return
        time.sleep(0.01)
    raise duet.Failure("the window manager did not map the window within %d s" % timeout)


def window_gone(observer, wid, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            observer.create_resource_object("window", wid).get_attributes()
        except error.BadWindow:
            return
        time.sleep(0.02)
    raise duet.Failure("client A's window 0x%x outlived its connection by %d s" % (wid, timeout))


def run(kind):
    if X is None:
        raise duet.Skip("python3-xlib is missing (%s): scripts/packages.sh installs it"
                        % XLIB_MISSING)
    with session(kind) as s:
        name = display_of(s, kind)
        observer = display.Display(name)
        a = display.Display(name)
        root = a.screen().root
        win = root.create_window(20, 20, 120, 90, 0, X.CopyFromParent,
                                 event_mask=X.StructureNotifyMask)
        win.map()
        a.flush()
        wait_mapped(a)
        wm_sync(s, name)
        wm = s.wm if kind == "xwm" else s.compositor
        wm.popen.send_signal(signal.SIGSTOP)
        try:
            # A asks to be closed (it has no WM_DELETE_WINDOW: the window
            # manager kills its client) and disconnects at once.
            msg = event.ClientMessage(window=win.id, client_type=a.intern_atom("_NET_CLOSE_WINDOW"),
                                      data=(32, [0, 2, 0, 0, 0]))
            root.send_event(msg, event_mask=X.SubstructureRedirectMask |
                            X.SubstructureNotifyMask)
            a.sync()
            base = base_of(a)
            a.close()
            window_gone(observer, win.id)
            # B: A's base (lower free slots filled by other connections
            # first) and a window of the id A's had.
            held = []
            b = display.Display(name)
            while base_of(b) != base and len(held) < 32:
                held.append(b)
                b = display.Display(name)
            check(base_of(b) == base, "no new client got A's resource base 0x%x" % base)
            bwin = b.screen().root.create_window(40, 40, 60, 50, 0, X.CopyFromParent,
                                                 override_redirect=True)
            b.sync()
            check(bwin.id == win.id, "B's window is 0x%x, A's was 0x%x" % (bwin.id, win.id))
            duet.log("A (base 0x%x) gone; B has its window id 0x%x" % (base, bwin.id))
        finally:
            wm.popen.send_signal(signal.SIGCONT)
        wm_sync(s, name)
        try:
            b.sync()
            bwin.get_attributes()
        except (error.ConnectionClosedError, error.BadWindow, OSError) as e:
            raise duet.Failure("client B was killed for client A's close request: %r" % (e,))
        log = wm.stderr_tail(20000)
        check("went before its client was killed: not killed" in log,
              "the window manager does not say A's window went before the kill:\n" + log)
        s.check_alive()
        for d in held + [b, observer]:
            d.close()


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("xwm", "xwayland"):
        sys.exit(__doc__)
    duet.main(lambda: run(sys.argv[1]))


if __name__ == "__main__":
    main()
