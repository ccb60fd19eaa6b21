"""A fuzzer for X window managers (duet-xwm; duet-compositor's window
manager of Xwayland's X clients): what a window manager reads and obeys
from clients it does not control.

An episode is one X connection (python3-xlib) that makes a few windows
(top-level and override-redirect, 24- and 32-bit, sizes from 1x1 to the
X limit), maps them, and then sends requests a window manager acts on:
the ICCCM and EWMH properties it reads, with every format (8, 16, 32),
type and length, right or wrong; client messages to the root for the
_NET_* and WM_CHANGE_STATE requests, naming its own windows, others'
windows, the root or no window; configure and stacking requests on its
own windows and on windows of other clients; map, unmap, reparent and
destroy in any order; and now and then it drops the connection in the
middle. Randomness comes from one random.Random per episode; every
request is logged as text, so a failure can be read and replayed.
"""
import random
import time

from Xlib import X, Xatom, display, error  # noqa: F401  (python3-xlib)
from Xlib.protocol import event

# What a window manager reads: (property, its usual type, its format).
PROPERTIES = [
    ("WM_NAME", "STRING", 8), ("WM_ICON_NAME", "STRING", 8), ("WM_CLASS", "STRING", 8),
    ("WM_HINTS", "WM_HINTS", 32), ("WM_NORMAL_HINTS", "WM_SIZE_HINTS", 32),
    ("WM_PROTOCOLS", "ATOM", 32), ("WM_TRANSIENT_FOR", "WINDOW", 32),
    ("WM_CLIENT_LEADER", "WINDOW", 32), ("WM_STATE", "WM_STATE", 32),
    ("WM_COLORMAP_WINDOWS", "WINDOW", 32), ("WM_CLIENT_MACHINE", "STRING", 8),
    ("_NET_WM_NAME", "UTF8_STRING", 8), ("_NET_WM_ICON_NAME", "UTF8_STRING", 8),
    ("_NET_WM_STATE", "ATOM", 32), ("_NET_WM_WINDOW_TYPE", "ATOM", 32),
    ("_NET_WM_PID", "CARDINAL", 32), ("_NET_WM_USER_TIME", "CARDINAL", 32),
    ("_NET_WM_USER_TIME_WINDOW", "WINDOW", 32),
    ("_NET_WM_SYNC_REQUEST_COUNTER", "CARDINAL", 32), ("_NET_WM_ICON", "CARDINAL", 32),
    ("_NET_WM_STRUT", "CARDINAL", 32), ("_NET_WM_STRUT_PARTIAL", "CARDINAL", 32),
    ("_NET_WM_WINDOW_OPACITY", "CARDINAL", 32), ("_NET_WM_DESKTOP", "CARDINAL", 32),
    ("_NET_WM_BYPASS_COMPOSITOR", "CARDINAL", 32), ("_NET_WM_OPAQUE_REGION", "CARDINAL", 32),
    ("_NET_WM_ALLOWED_ACTIONS", "ATOM", 32), ("_MOTIF_WM_HINTS", "_MOTIF_WM_HINTS", 32),
    ("_GTK_FRAME_EXTENTS", "CARDINAL", 32), ("_NET_FRAME_EXTENTS", "CARDINAL", 32),
    ("_NET_WM_FULLSCREEN_MONITORS", "CARDINAL", 32), ("WL_SURFACE_ID", "CARDINAL", 32),
    ("WL_SURFACE_SERIAL", "CARDINAL", 32), ("_DUET_SCREENSHOT", "STRING", 8),
]
# Client messages a window manager acts on.
MESSAGES = ["_NET_ACTIVE_WINDOW", "_NET_WM_STATE", "_NET_CLOSE_WINDOW",
            "_NET_MOVERESIZE_WINDOW", "_NET_WM_MOVERESIZE", "_NET_RESTACK_WINDOW",
            "_NET_REQUEST_FRAME_EXTENTS", "WM_CHANGE_STATE", "_NET_CURRENT_DESKTOP",
            "_NET_WM_DESKTOP", "_NET_SHOWING_DESKTOP", "_NET_WM_PING", "_NET_WM_SYNC_REQUEST",
            "WM_PROTOCOLS", "_NET_NUMBER_OF_DESKTOPS", "WL_SURFACE_ID", "WL_SURFACE_SERIAL",
            "_DUET_SYNC", "_DUET_SCREENSHOT"]
ATOM_VALUES = ["_NET_WM_STATE_FULLSCREEN", "_NET_WM_STATE_MAXIMIZED_VERT",
               "_NET_WM_STATE_MAXIMIZED_HORZ", "_NET_WM_STATE_HIDDEN", "_NET_WM_STATE_ABOVE",
               "_NET_WM_STATE_BELOW", "_NET_WM_STATE_MODAL", "_NET_WM_STATE_STICKY",
               "_NET_WM_STATE_DEMANDS_ATTENTION", "_NET_WM_WINDOW_TYPE_DIALOG",
               "_NET_WM_WINDOW_TYPE_NORMAL", "_NET_WM_WINDOW_TYPE_DOCK",
               "_NET_WM_WINDOW_TYPE_POPUP_MENU", "_NET_WM_WINDOW_TYPE_TOOLTIP",
               "_NET_WM_WINDOW_TYPE_DESKTOP", "_NET_WM_WINDOW_TYPE_SPLASH",
               "WM_DELETE_WINDOW", "WM_TAKE_FOCUS", "_NET_WM_PING", "_NET_WM_SYNC_REQUEST"]
TYPES = ["STRING", "UTF8_STRING", "ATOM", "CARDINAL", "WINDOW", "INTEGER", "WM_HINTS",
         "WM_SIZE_HINTS", "WM_STATE", "PIXMAP", "_MOTIF_WM_HINTS", "COMPOUND_TEXT"]
EDGE = [0, 1, 2, 3, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff, 32767, 65535]


class Episode:
    def __init__(self, name, rng, max_requests, hold=0.0, without=()):
        self.hold = hold  # seconds the connection stays after its last request
        # Client message types and property names never sent (a peer's
        # known crash left out, to see what else it does); without them
        # the draws are the same as ever.
        self.messages = [m for m in MESSAGES if m not in without]
        self.properties = [p for p in PROPERTIES if p[0] not in without]
        self.rng = rng
        self.max_requests = max_requests
        self.log = []
        self.requests = 0
        self.d = display.Display(name)
        self.d.set_error_handler(lambda *a: None)  # X errors are expected: ignored
        self.screen = self.d.screen()
        self.root = self.screen.root
        self.windows = []
        self.atoms = {}
        self.argb = self.find_argb()

    def atom(self, name):
        if name not in self.atoms:
            self.atoms[name] = self.d.intern_atom(name)
        return self.atoms[name]

    def find_argb(self):
        for depth in self.screen.allowed_depths:
            if depth.depth == 32 and depth.visuals:
                return depth.visuals[0].visual_id
        return None

    def note(self, text):
        self.log.append(text)
        self.requests += 1

    # ------------------------------------------------------------ values

    def number(self):
        r = self.rng.random()
        return self.rng.choice(EDGE) if r < 0.3 else self.rng.randint(0, 2000)

    def pick(self, items):
        """One of items with one draw of the generator whatever their
        number: the windows of other clients differ from run to run, and
        the requests after a pick must not (a replay on a fresh stack
        sends the same ones)."""
        return items[min(int(self.rng.random() * len(items)), len(items) - 1)]

    def some_window(self):
        """Own (mostly), another client's, the root, none or a made-up id."""
        r = self.rng.random()
        if r < 0.6 and self.windows:
            return self.pick(self.windows).id
        if r < 0.8:
            others = self.others()
            pick = self.rng.random()
            if others:
                return others[min(int(pick * len(others)), len(others) - 1)]
        if r < 0.9:
            return self.root.id
        return 0 if self.rng.random() < 0.5 else self.rng.randint(1, 0xffffffff)

    def others(self):
        try:
            return [w.id for w in self.root.query_tree().children]
        except error.XError:
            return []

    # ---------------------------------------------------------- requests

    def create(self):
        rng = self.rng
        # Mostly ordinary sizes: every redirected window is a pixmap the X
        # server allocates (and clears), so the X limit comes now and then.
        def side(usual):
            r = rng.random()
            return (rng.choice([1, 2]) if r < 0.05 else rng.randint(1, 4000) if r < 0.08
                    else 32767 if r < 0.085 else rng.choice(usual))
        w, h = side([100, 300, 640, 120]), side([100, 200, 480, 90])
        x, y = rng.randint(-100, 2000), rng.randint(-100, 2000)
        override = rng.random() < 0.2
        kw = dict(override_redirect=override,
                  event_mask=X.StructureNotifyMask | X.PropertyChangeMask)
        depth = X.CopyFromParent
        if self.argb and rng.random() < 0.2:
            cmap = self.root.create_colormap(self.argb, X.AllocNone)
            kw.update(colormap=cmap, border_pixel=0, background_pixel=0, visual=self.argb)
            depth = 32
        parent = self.root if rng.random() < 0.9 or not self.windows else \
            rng.choice(self.windows)
        win = parent.create_window(x, y, w, h, rng.choice([0, 0, 1, 5]), depth,
                                   X.InputOutput, kw.pop("visual", X.CopyFromParent), **kw)
        self.windows.append(win)
        self.note("CreateWindow 0x%x %dx%d+%d+%d depth %s%s" % (
            win.id, w, h, x, y, depth, " override-redirect" if override else ""))
        if rng.random() < 0.8:
            win.map()
            self.note("MapWindow 0x%x" % win.id)

    def property(self):
        rng = self.rng
        if not self.windows:
            return self.create()
        win = rng.choice(self.windows)
        name, usual, fmt = rng.choice(self.properties)
        type_name = usual if rng.random() < 0.6 else rng.choice(TYPES)
        if rng.random() < 0.2:
            fmt = rng.choice([8, 16, 32])
        n = rng.choice([0, 1, 2, 4, 5, 9, 12, 18, rng.randint(0, 64)])
        if rng.random() < 0.03:
            # An icon's worth, up to what a request without BIG-REQUESTS
            # holds (262140 bytes).
            n = rng.choice([4096, 60000 * 8 // fmt])
        if fmt == 8:
            if type_name in ("STRING", "UTF8_STRING") and rng.random() < 0.7:
                data = bytes(rng.randrange(32, 127) for _ in range(n)) + \
                    (b"\0" + bytes(rng.randrange(32, 127) for _ in range(n)) if name == "WM_CLASS" else b"")
            else:
                data = bytes(rng.randrange(256) for _ in range(n))
        elif type_name == "ATOM" and fmt == 32:
            data = [self.atom(rng.choice(ATOM_VALUES)) if rng.random() < 0.8
                    else rng.randint(0, 0xffffffff) for _ in range(n)]
        elif type_name == "WINDOW" and fmt == 32:
            data = [self.some_window() for _ in range(n)]
        else:
            top = 0xffff if fmt == 16 else 0xffffffff
            data = [self.number() & top for _ in range(n)]
        mode = rng.choice([X.PropModeReplace] * 6 + [X.PropModeAppend, X.PropModePrepend])
        win.change_property(self.atom(name), self.atom(type_name), fmt, data, mode)
        self.note("ChangeProperty 0x%x %s type %s format %d, %d items, mode %d"
                  % (win.id, name, type_name, fmt, len(data), mode))

    def message(self):
        rng = self.rng
        kind = rng.choice(self.messages)
        target = self.some_window()
        data = [self.number() for _ in range(5)]
        if rng.random() < 0.5:
            data[1] = self.atom(rng.choice(ATOM_VALUES))
        if rng.random() < 0.3:
            data[2] = self.some_window()
        ev = event.ClientMessage(window=target, client_type=self.atom(kind),
                                 data=(32, [v & 0xffffffff for v in data]))
        dest = self.root if rng.random() < 0.85 else \
            (rng.choice(self.windows) if self.windows else self.root)
        dest.send_event(ev, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
        self.note("SendEvent ClientMessage %s window 0x%x data %s to 0x%x"
                  % (kind, target, data, dest.id))

    def configure(self):
        rng = self.rng
        target = self.some_window()
        win = self.d.create_resource_object("window", target)
        kw = {}
        for k in ("x", "y"):
            if rng.random() < 0.5:
                kw[k] = rng.choice([0, -32768, 32767, rng.randint(-500, 3000)])
        for k in ("width", "height"):
            if rng.random() < 0.5:
                kw[k] = rng.choice([1, rng.randint(1, 1000)]) if rng.random() < 0.95 else \
                    rng.choice([32767, 65535, rng.randint(1, 4000)])
        if rng.random() < 0.2:
            kw["border_width"] = rng.choice([0, 1, 100, 32767])
        if rng.random() < 0.4:
            kw["stack_mode"] = rng.choice([X.Above, X.Below, X.TopIf, X.BottomIf, X.Opposite])
            if rng.random() < 0.5:
                kw["sibling"] = self.some_window()
        win.configure(**kw)
        self.note("ConfigureWindow 0x%x %s" % (target, kw))

    def lifecycle(self):
        rng = self.rng
        if not self.windows:
            return self.create()
        win = rng.choice(self.windows)
        r = rng.random()
        if r < 0.3:
            win.unmap()
            self.note("UnmapWindow 0x%x" % win.id)
        elif r < 0.55:
            win.map()
            self.note("MapWindow 0x%x" % win.id)
        elif r < 0.75:
            parent = self.d.create_resource_object("window", self.some_window())
            win.reparent(parent, rng.randint(-50, 500), rng.randint(-50, 500))
            self.note("ReparentWindow 0x%x to 0x%x" % (win.id, parent.id))
        elif r < 0.9:
            win.destroy()
            self.windows.remove(win)
            self.note("DestroyWindow 0x%x" % win.id)
        else:
            self.root.circulate(rng.choice([X.RaiseLowest, X.LowerHighest]))
            self.note("CirculateWindow root")

    def run(self):
        rng = self.rng
        try:
            for _ in range(rng.randint(1, 3)):
                self.create()
            while self.requests < self.max_requests:
                r = rng.random()
                if r < 0.004:
                    self.note("the connection dropped mid-episode")
                    break
                if r < 0.08:
                    self.create()
                elif r < 0.5:
                    self.property()
                elif r < 0.7:
                    self.message()
                elif r < 0.85:
                    self.configure()
                else:
                    self.lifecycle()
                if rng.random() < 0.1:
                    self.d.flush()
            self.d.flush()
            if rng.random() < 0.5:
                self.d.sync()  # let it see the episode before the windows go
            if self.hold:
                # A replay: the window manager reads what the episode set
                # (a property, on its PropertyNotify) before the windows go.
                self.d.sync()
                time.sleep(self.hold)
        except (error.ConnectionClosedError, OSError) as e:
            self.note("the connection was closed: %s" % e)
        finally:
            try:
                self.d.close()
            except Exception:  # a closed connection is as good as closed
                pass


class Probe:
    """Whether the window manager still manages: took is the seconds it
    took to map a new window (answer its MapRequest), None if it did not
    within timeout. Nothing else happens on the display meanwhile, so a
    window manager that sleeps with the request unhandled never maps it.
    Then the probe wakes it with an event of its own (a property on the
    root, which every window manager listens to): nudged is the seconds
    it took after that, None if not even then. Mapped after the nudge,
    the request was left unread in the manager's queue; not even then, it
    was read and dropped."""

    def __init__(self, name, timeout=20.0, nudge_timeout=5.0):
        self.took = self.nudged = None
        try:
            d = display.Display(name)
        except Exception:
            return
        try:
            d.set_error_handler(lambda *a: None)
            root = d.screen().root
            win = root.create_window(10, 10, 50, 40, 0, X.CopyFromParent,
                                     event_mask=X.StructureNotifyMask)
            win.map()
            d.flush()
            self.took = self.wait_mapped(d, timeout)
            if self.took is None:
                root.change_property(d.intern_atom("_DUET_FUZZ_NUDGE"), Xatom.CARDINAL, 32,
                                     [1])
                d.flush()
                self.nudged = self.wait_mapped(d, nudge_timeout)
            win.destroy()
            d.sync()
        except (error.ConnectionClosedError, OSError):
            pass
        finally:
            try:
                d.close()
            except Exception:
                pass

    @staticmethod
    def wait_mapped(d, timeout):
        t0 = time.monotonic()
        while time.monotonic() < t0 + timeout:
            while d.pending_events():
                if d.next_event().type == X.MapNotify:
                    return time.monotonic() - t0
            time.sleep(0.01)
        return None
