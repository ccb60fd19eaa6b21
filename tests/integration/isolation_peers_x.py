"""What the X server says of a peer's windows, focus and pointer, and the
keys and clicks sent to it (isolation_peers.py's window and input checks):
asked of the X server with python3-xlib, not of a window manager's list
(weston's X window manager keeps no _NET_CLIENT_LIST); keys and clicks
with duet-xctl (XTEST)."""

import os

import duet


def xctl(s, *args, timeout=30):
    s.check_alive()
    argv = [duet.program("DUET_XCTL"), "--display", s.display] + [str(a) for a in args]
    r = s.run(argv, timeout=timeout)
    if r.returncode != 0:
        s.check_alive()
        raise duet.Failure("duet-xctl %s failed (%d): %s%s"
                           % (" ".join(argv[3:]), r.returncode, r.stdout, r.stderr))
    return r.stdout


def _x_display(s):
    from Xlib import display  # python3-xlib, as the X fuzzer's
    if s.env.get("XAUTHORITY"):
        os.environ["XAUTHORITY"] = s.env["XAUTHORITY"]
    return display.Display(s.display)


def pager_activate(s, window):
    """_NET_ACTIVE_WINDOW for window as a pager sends it (source 2), with
    a server timestamp (a WM may refuse, or only focus and not raise, a
    request of time 0: mutter calls it a buggy client's)."""
    from Xlib import X
    from Xlib.protocol import event
    d = _x_display(s)
    try:
        root = d.screen().root
        w = root.create_window(0, 0, 1, 1, 0, X.CopyFromParent, event_mask=X.PropertyChangeMask)
        stamp = d.intern_atom("_DUET_TIMESTAMP")
        w.change_property(stamp, stamp, 8, b"")
        while True:
            ev = d.next_event()
            if ev.type == X.PropertyNotify:
                break
        msg = event.ClientMessage(window=window, client_type=d.intern_atom("_NET_ACTIVE_WINDOW"),
                                  data=(32, [2, ev.time, 0, 0, 0]))
        root.send_event(msg, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
        w.destroy()
        d.sync()
    finally:
        d.close()


def x_focus_and_pointer(s, x=None, y=None):
    """The X input focus and the root's child on top at x, y (0: none)."""
    d = _x_display(s)
    try:
        focus = d.get_input_focus().focus
        top = 0
        if x is not None:
            r = d.screen().root.translate_coords(d.screen().root, x, y)
            top = r.child.id if r.child else 0
        return (focus if isinstance(focus, int) else focus.id), top
    finally:
        d.close()


def x_descendants(s, window):
    d = _x_display(s)
    try:
        out, todo = [], [d.create_resource_object("window", window)]
        while todo:
            for c in todo.pop().query_tree().children:
                out.append(c.id)
                todo.append(c)
        return out
    finally:
        d.close()


def x_window(s, xid, app):
    """xid as a duet.Window if it is viewable (its root position and size),
    else None."""
    from Xlib import X, error
    d = _x_display(s)
    try:
        w = d.create_resource_object("window", xid)
        try:
            if w.get_attributes().map_state != X.IsViewable:
                return None
            g = w.get_geometry()
            pos = d.screen().root.translate_coords(w, 0, 0)
        except error.BadWindow:
            return None
        return duet.Window(xid, 0, pos.x, pos.y, g.width, g.height, 0, app, "")
    finally:
        d.close()


def x_windows(s):
    return duet.parse_windows(xctl(s, "windows"))
