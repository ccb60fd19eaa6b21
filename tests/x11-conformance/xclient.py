"""One X client of the display under test, as the conformance checks see a
window manager: windows with ICCCM/EWMH properties, the client messages a
client or pager sends, and waits.

Every wait polls for a condition and gives up after a timeout; the timeout
only guards against a hang (a WM that never answers fails the check with
"timed out waiting for ..."), it is never what makes a check pass. Where a
check must know the WM has NOT done something (left a window unmapped, not
given it the focus), it first waits for barrier(): a ConfigureRequest on an
unmapped window of ours, which every WM passes on and only after what it
was sent before (one connection, events in order).
"""

import select
import time

from Xlib import X, Xatom, Xutil, display, error, ext
from Xlib.protocol import event as xevent

# The checks speak the core protocol only. python-xlib 0.33 sets up every
# extension the server has as it connects, and its RANDR set-up raised a
# TypeError on one Xwayland (an event code taken twice): it loads none.
ext.__extensions__ = []

WITHDRAWN, NORMAL, ICONIC = Xutil.WithdrawnState, Xutil.NormalState, Xutil.IconicState
# _NET_WM_STATE actions, _NET_ACTIVE_WINDOW source indications.
REMOVE, ADD, TOGGLE = 0, 1, 2
SOURCE_APP, SOURCE_PAGER = 1, 2
REDIRECT = X.SubstructureRedirectMask | X.SubstructureNotifyMask


class Timeout(Exception):
    pass


class Conn:
    def __init__(self, name, patience=1.0):
        self.d = display.Display(name)
        self.screen = self.d.screen()
        self.root = self.screen.root
        self.patience = patience
        self.events = []
        self._atoms = {}
        self._probe = None
        self._probe_w = 1
        self.windows = []

    def close(self):
        self.d.close()

    # ------------------------------------------------------------ basics
    def atom(self, name):
        if name not in self._atoms:
            self._atoms[name] = self.d.intern_atom(name)
        return self._atoms[name]

    def name(self, atom):
        return self.d.get_atom_name(atom)

    def pump(self, wait=0.0):
        """Reads every event that has arrived, waiting up to wait seconds."""
        self.d.flush()
        if wait:
            select.select([self.d.fileno()], [], [], wait)
        while self.d.pending_events():
            self.events.append(self.d.next_event())

    def wait(self, what, pred, timeout=5.0):
        """pred()'s first true value, polled as events come in."""
        deadline = time.monotonic() + timeout * self.patience
        while True:
            self.pump()
            value = pred()
            if value:
                return value
            if time.monotonic() > deadline:
                raise Timeout("timed out after %.0f s waiting for %s"
                              % (timeout * self.patience, what))
            self.pump(0.02)

    def mark(self):
        self.pump()
        return len(self.events)

    def events_since(self, mark, kind=None, window=None):
        return [e for e in self.events[mark:]
                if (kind is None or e.type == kind) and
                (window is None or getattr(e, "window", None) == window)]

    def barrier(self):
        """Returns once the WM has handled everything sent before (see the
        module's comment): our unmapped probe, resized through the WM."""
        if self._probe is None:
            self._probe = self.root.create_window(-100, -100, 1, 1, 0, self.screen.root_depth,
                                                  event_mask=X.StructureNotifyMask)
        self._probe_w = 3 - self._probe_w
        w = self._probe_w
        m = self.mark()
        self._probe.configure(width=w)
        self.wait("the WM to pass on a ConfigureRequest of an unmapped window",
                  lambda: any(e.width == w
                              for e in self.events_since(m, X.ConfigureNotify, self._probe)))

    # ------------------------------------------------------------ properties
    def prop(self, win, name, kind=X.AnyPropertyType):
        try:
            p = win.get_full_property(self.atom(name), kind)
        except error.BadWindow:
            return None
        return p.value if p is not None else None

    def prop_list(self, win, name):
        v = self.prop(win, name)
        return list(v) if v is not None else []

    def root_windows(self, name):
        return self.prop_list(self.root, name)

    def wm_state(self, win):
        v = self.prop(win, "WM_STATE", self.atom("WM_STATE"))
        return v[0] if v is not None and len(v) else None

    def net_state(self, win):
        return {self.name(a) for a in self.prop_list(win, "_NET_WM_STATE")}

    def supported(self):
        return {self.name(a) for a in self.root_windows("_NET_SUPPORTED")}

    def set_atoms(self, win, name, atom_names, kind=Xatom.ATOM):
        win.change_property(self.atom(name), kind, 32, [self.atom(a) for a in atom_names])

    # ------------------------------------------------------------ windows
    def window(self, x=100, y=100, w=300, h=200, name="xconf", input_hint=True,
               protocols=("WM_DELETE_WINDOW",), initial=None, normal_hints=None,
               transient_for=None, window_type=None, override=False):
        """A top-level window of ours, not yet mapped, its events selected."""
        win = self.root.create_window(x, y, w, h, 0, self.screen.root_depth,
                                      background_pixel=self.screen.white_pixel,
                                      override_redirect=override,
                                      event_mask=X.StructureNotifyMask | X.PropertyChangeMask |
                                      X.FocusChangeMask)
        win.set_wm_name(name)
        win.set_wm_class(name, "DuetConformance")
        win.change_property(self.atom("_NET_WM_NAME"), self.atom("UTF8_STRING"), 8,
                            name.encode())
        hints = {"flags": Xutil.InputHint, "input": 1 if input_hint else 0}
        if initial is not None:
            hints["flags"] |= Xutil.StateHint
            hints["initial_state"] = initial
        win.set_wm_hints(hints)
        nh = {"flags": Xutil.PPosition | Xutil.PSize}
        nh.update(normal_hints or {})
        win.set_wm_normal_hints(nh)
        if protocols:
            win.set_wm_protocols([self.atom(p) for p in protocols])
        if transient_for is not None:
            win.set_wm_transient_for(transient_for)
        if window_type:
            self.set_atoms(win, "_NET_WM_WINDOW_TYPE", ["_NET_WM_WINDOW_TYPE_" + window_type])
        self.windows.append(win)
        return win

    def destroy_all(self):
        """Destroys every window of ours; waits until the WM lists none."""
        ids = {w.id for w in self.windows}
        for w in self.windows:
            w.destroy(onerror=error.CatchError())
        self.windows = []
        self.d.sync()
        self.wait("the WM to drop our destroyed windows from its lists",
                  lambda: not ids & set(self.root_windows("_NET_CLIENT_LIST")))
        # python-xlib hands a freed XID out again: the WM must be done
        # with the old window first, also where it keeps no client list.
        self.barrier()

    def viewable(self, win):
        try:
            return win.get_attributes().map_state == X.IsViewable
        except error.BadWindow:
            return False

    def map_managed(self, win, what="the window"):
        """Maps win and waits until the WM has it mapped, WM_STATE Normal."""
        win.map()
        self.wait("%s to be viewable with WM_STATE NormalState" % what,
                  lambda: self.viewable(win) and self.wm_state(win) == NORMAL)

    def toplevel(self, win):
        """win's ancestor that is a child of the root: the WM's frame, or
        win itself where the WM does not reparent."""
        while True:
            parent = win.query_tree().parent
            if parent == self.root or parent.id == self.root.id:
                return win
            win = parent

    def rect(self, win):
        """(x, y, w, h) of win's inside, x and y on the root."""
        g = win.get_geometry()
        t = self.root.translate_coords(win, 0, 0)
        return (t.x, t.y, g.width, g.height)

    def outer(self, win):
        """(x, y, w, h) of win's frame (or win) with its border, on the root."""
        top = self.toplevel(win)
        g = top.get_geometry()
        return (g.x, g.y, g.width + 2 * g.border_width, g.height + 2 * g.border_width)

    def framed(self, win):
        """win's rectangle grown by its _NET_FRAME_EXTENTS: the frame as the
        WM says it is drawn (a frame window may be larger, for shadows)."""
        x, y, w, h = self.rect(win)
        e = self.prop_list(win, "_NET_FRAME_EXTENTS")
        if len(e) != 4:
            return None
        left, right, top, bottom = e
        return (x - left, y - top, w + left + right, h + top + bottom)

    def focus(self):
        f = self.d.get_input_focus().focus
        return f.id if hasattr(f, "id") else f

    def active(self):
        v = self.root_windows("_NET_ACTIVE_WINDOW")
        return v[0] if v else None

    def workarea(self):
        v = self.root_windows("_NET_WORKAREA")
        if len(v) >= 4:
            return tuple(v[:4])
        return (0, 0, self.screen.width_in_pixels, self.screen.height_in_pixels)

    def screen_rect(self):
        return (0, 0, self.screen.width_in_pixels, self.screen.height_in_pixels)

    def server_time(self, win):
        """A current X timestamp (a PropertyNotify's) for a request."""
        m = self.mark()
        win.change_property(self.atom("_DUET_XCONF_TIME"), Xatom.CARDINAL, 32, [0])
        ev = self.wait("a PropertyNotify for a timestamp",
                       lambda: self.events_since(m, X.PropertyNotify, win))
        return ev[0].time

    # ------------------------------------------------------------ messages
    def client_message(self, win, name, data, to_root=True):
        """A 32-bit ClientMessage about win: to the root as EWMH and ICCCM
        requests go, or to win itself."""
        data = (list(data) + [0] * 5)[:5]
        ev = xevent.ClientMessage(window=win, client_type=self.atom(name), data=(32, data))
        dest = self.root if to_root else win
        dest.send_event(ev, event_mask=REDIRECT if to_root else 0)
        self.d.flush()

    def net_wm_state(self, win, action, *names):
        atoms = [self.atom(n) for n in names] + [0, 0]
        self.client_message(win, "_NET_WM_STATE", [action, atoms[0], atoms[1], 1])

    def activate(self, win, source=SOURCE_PAGER, timestamp=X.CurrentTime):
        self.client_message(win, "_NET_ACTIVE_WINDOW", [source, timestamp, 0])

    def withdraw(self, win):
        """ICCCM 4.1.4: unmap, then a synthetic UnmapNotify to the root."""
        win.unmap()
        ev = xevent.UnmapNotify(event=self.root, window=win, from_configure=False)
        self.root.send_event(ev, event_mask=REDIRECT)
        self.d.flush()

    def messages(self, mark, win, name):
        """WM_PROTOCOLS client messages of protocol name sent to win."""
        proto, want = self.atom("WM_PROTOCOLS"), self.atom(name)
        return [e for e in self.events_since(mark, X.ClientMessage, win)
                if e.client_type == proto and e.data[1][0] == want]
