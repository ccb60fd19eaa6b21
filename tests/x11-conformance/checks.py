"""The conformance checks: ICCCM and EWMH as a client observes them.

Each check is a function of an xclient.Conn that returns a short note or
raises Fail / Skip; CHECKS lists them in order with the _NET_SUPPORTED atoms
each relies on (an EWMH check whose atoms the WM does not claim and that
fails is a skip: the WM said it does not do it). Every check starts with no
window of ours mapped and destroys what it made (run_all).
"""

import time

from Xlib import X, error

import xclient
from xclient import ADD, ICONIC, NORMAL, REMOVE, SOURCE_APP, SOURCE_PAGER, TOGGLE, WITHDRAWN


# A check's outcome: the integration tests' own (conformance.py puts
# tests/integration on the path).
from duet import Failure as Fail, Skip, check as need  # noqa: E402


def state_name(s):
    return {None: "none", WITHDRAWN: "Withdrawn", NORMAL: "Normal", ICONIC: "Iconic"}.get(s, s)


def wait_state(c, win, want, what):
    c.wait("%s: WM_STATE %s (it is %s)" % (what, state_name(want), state_name(c.wm_state(win))),
           lambda: c.wm_state(win) == want)


# ---------------------------------------------------------------- EWMH basics
def wm_check(c):
    root_v = c.root_windows("_NET_SUPPORTING_WM_CHECK")
    need(root_v, "the root has no _NET_SUPPORTING_WM_CHECK")
    child = c.d.create_resource_object("window", root_v[0])
    own = c.prop_list(child, "_NET_SUPPORTING_WM_CHECK")
    need(own == [root_v[0]], "the check window 0x%x's own _NET_SUPPORTING_WM_CHECK is %r"
         % (root_v[0], own))
    name = c.prop(child, "_NET_WM_NAME", c.atom("UTF8_STRING"))
    need(name, "the check window has no _NET_WM_NAME (UTF8_STRING)")
    return "_NET_WM_NAME %r" % (name.decode(errors="replace") if isinstance(name, bytes) else name)


# ---------------------------------------------------------------- ICCCM states
def map_normal(c):
    w = c.window(name="map")
    c.map_managed(w)
    return ""


def initial_iconic(c):
    w = c.window(name="iconic", initial=ICONIC)
    w.map()
    wait_state(c, w, ICONIC, "a window mapped with initial_state IconicState")
    c.barrier()
    need(not c.viewable(w), "WM_STATE is Iconic but the window is viewable")
    return ""


def iconify(c):
    w = c.window(name="iconify")
    c.map_managed(w)
    c.client_message(w, "WM_CHANGE_STATE", [ICONIC])
    wait_state(c, w, ICONIC, "WM_CHANGE_STATE IconicState")
    c.wait("the iconified window to be unmapped", lambda: not c.viewable(w))
    return ""


def withdraw(c):
    w = c.window(name="withdraw")
    c.map_managed(w)
    c.withdraw(w)
    c.wait("WM_STATE removed or Withdrawn after unmap + synthetic UnmapNotify (it is %s)"
           % state_name(c.wm_state(w)), lambda: c.wm_state(w) in (None, WITHDRAWN))
    return "WM_STATE %s" % ("removed" if c.wm_state(w) is None else "Withdrawn")


# ---------------------------------------------------------------- configure
def configure_size(c):
    w = c.window(name="size", w=300, h=200)
    c.map_managed(w)
    c.barrier()
    w.configure(width=360, height=240)
    try:
        c.wait("the window to take the requested 360x240",
               lambda: c.rect(w)[2:] == (360, 240), timeout=3)
    except xclient.Timeout:
        c.barrier()
        raise Fail("asked 360x240, the window stays %dx%d" % c.rect(w)[2:])
    return ""


def configure_position(c):
    """Passes where the WM moves the window where asked (its frame's or the
    window's own corner, ICCCM 4.1.2.3 NorthWest gravity); a WM that keeps
    it where its policy put it is reported as a skip."""
    w = c.window(name="move")
    c.map_managed(w)
    c.barrier()
    before = c.rect(w)
    want = (before[0] + 37, before[1] + 23) if before[0] < 400 else (before[0] - 37, before[1] - 23)
    ox, oy = c.outer(w)[:2]
    fx, fy = want[0] - (before[0] - ox), want[1] - (before[1] - oy)
    w.configure(x=want[0], y=want[1])

    def moved():
        r, o = c.rect(w), c.outer(w)
        return r[:2] == want or o[:2] == want or o[:2] == (fx, fy)
    try:
        c.wait("the window to move to %d,%d" % want, moved, timeout=2)
    except xclient.Timeout:
        c.barrier()
        now = c.rect(w)
        if now[:2] == before[:2]:
            raise Skip("the WM keeps its own placement: asked %d,%d, the window stays at %d,%d"
                       % (want + now[:2]))
        raise Fail("asked %d,%d, the window went to %d,%d" % (want + now[:2]))
    return "moved to %d,%d" % want


def configure_synthetic(c):
    """ICCCM 4.1.5: a move without a resize (or no change at all) is told
    with a synthetic ConfigureNotify in root coordinates."""
    w = c.window(name="synthetic")
    c.map_managed(w)
    c.barrier()
    before = c.rect(w)
    m = c.mark()
    w.configure(x=before[0] + 29, y=before[1] + 17)
    evs = c.wait("a synthetic ConfigureNotify after a move-only ConfigureRequest",
                 lambda: [e for e in c.events_since(m, X.ConfigureNotify, w) if e.send_event],
                 timeout=3)
    c.barrier()
    last = [e for e in c.events_since(m, X.ConfigureNotify, w) if e.send_event][-1]
    now = c.rect(w)
    need((last.x, last.y) == now[:2] and (last.width, last.height) == now[2:],
         "synthetic ConfigureNotify says %d,%d %dx%d, the window is at %d,%d %dx%d on the root"
         % ((last.x, last.y, last.width, last.height) + now))
    moved = "moved" if now[:2] != before[:2] else "not moved"
    return "%s; %d synthetic" % (moved, len(evs))


def normal_hints(c):
    """Sizes asked below min and above max end within [min, max]."""
    lo, hi = (250, 180), (350, 260)
    w = c.window(name="hints", w=300, h=200, normal_hints={
        "flags": 0x10 | 0x20 | 0x1 | 0x2,  # PMinSize | PMaxSize | USPosition | USSize
        "min_width": lo[0], "min_height": lo[1], "max_width": hi[0], "max_height": hi[1]})
    c.map_managed(w)

    def within():
        ww, hh = c.rect(w)[2:]
        return lo[0] <= ww <= hi[0] and lo[1] <= hh <= hi[1]
    c.barrier()
    need(within(), "mapped at %dx%d, outside min %dx%d max %dx%d"
         % (c.rect(w)[2:] + lo + hi))
    for ask in ((100, 80), (700, 500)):
        w.configure(width=ask[0], height=ask[1])
        c.barrier()
        need(within(), "asked %dx%d, got %dx%d, outside min %dx%d max %dx%d"
             % (ask + c.rect(w)[2:] + lo + hi))
    return ""


# ---------------------------------------------------------------- client lists
def _client_list(prop):
    def check(c):
        w = c.window(name="listed")
        c.map_managed(w)
        c.wait("the window in %s" % prop, lambda: w.id in c.root_windows(prop))
        w.destroy()
        c.windows.remove(w)
        c.wait("the destroyed window to leave %s" % prop,
               lambda: w.id not in c.root_windows(prop))
        return ""
    return check


# ---------------------------------------------------------------- focus
def _is_focused(c, w):
    f = c.focus()
    return f == w.id or f == c.toplevel(w).id


def active_on_map(c):
    w = c.window(name="new")
    c.map_managed(w)
    c.wait("_NET_ACTIVE_WINDOW to name the newly mapped window (it is %s)"
           % hex(c.active() or 0), lambda: c.active() == w.id)
    return ""


def focus_agrees(c):
    w = c.window(name="focused")
    c.map_managed(w)
    c.wait("the newly mapped window to be active", lambda: c.active() == w.id)
    c.wait("the input focus on the active window (GetInputFocus: 0x%x)" % c.focus(),
           lambda: _is_focused(c, w))
    return ""


def _active_request(source):
    def check(c):
        a = c.window(name="first", x=60, y=60)
        c.map_managed(a, "the first window")
        b = c.window(name="second", x=420, y=300)
        c.map_managed(b, "the second window")
        c.barrier()
        t = c.server_time(a) if source == SOURCE_APP else X.CurrentTime
        c.activate(a, source, t)
        c.wait("_NET_ACTIVE_WINDOW to follow the request (it is 0x%x)" % (c.active() or 0),
               lambda: c.active() == a.id)
        c.wait("GetInputFocus to agree (it is 0x%x)" % c.focus(), lambda: _is_focused(c, a))
        return ""
    return check


def take_focus(c):
    """Globally active (input False, WM_TAKE_FOCUS): the WM asks the
    window to take the focus itself, on map or when activated."""
    w = c.window(name="global", input_hint=False,
                 protocols=("WM_DELETE_WINDOW", "WM_TAKE_FOCUS"))
    m = c.mark()
    c.map_managed(w)
    c.barrier()
    if not c.messages(m, w, "WM_TAKE_FOCUS"):
        c.activate(w, SOURCE_PAGER)
    c.wait("a WM_TAKE_FOCUS client message", lambda: c.messages(m, w, "WM_TAKE_FOCUS"))
    return ""


def no_input(c):
    """No Input (input False, no WM_TAKE_FOCUS): never given the focus."""
    other = c.window(name="other", x=60, y=60)
    c.map_managed(other, "a focusable window")
    w = c.window(name="noinput", input_hint=False, x=420, y=300)
    c.map_managed(w, "the No Input window")
    c.activate(w, SOURCE_PAGER)
    c.barrier()
    need(not _is_focused(c, w), "the No Input window has the input focus")
    return "focus on 0x%x" % c.focus()


# ---------------------------------------------------------------- _NET_WM_STATE
def _state_check(states, target, label):
    """add / remove (or toggle / toggle): _NET_WM_STATE says so and the
    window covers target() (the screen or the work area), then goes back
    where it was."""
    def run(c, on, off):
        w = c.window(name=label)
        c.map_managed(w)
        c.barrier()
        before = c.rect(w)
        c.net_wm_state(w, on, *states)
        c.wait("_NET_WM_STATE to list %s" % " ".join(states),
               lambda: set(states) <= c.net_state(w))
        want = target(c)
        c.wait("the window to cover %s %r (it is %r, its frame %r)"
               % (label, want, c.rect(w), c.outer(w)),
               lambda: want in (c.rect(w), c.outer(w), c.framed(w)))
        c.net_wm_state(w, off, *states)
        c.wait("_NET_WM_STATE to drop %s" % " ".join(states),
               lambda: not set(states) & c.net_state(w))
        c.wait("the window back at %r (it is %r)" % (before, c.rect(w)),
               lambda: c.rect(w) == before)
        return ""
    return (lambda c: run(c, ADD, REMOVE)), (lambda c: run(c, TOGGLE, TOGGLE))


FULLSCREEN = ["_NET_WM_STATE_FULLSCREEN"]
MAXIMIZED = ["_NET_WM_STATE_MAXIMIZED_VERT", "_NET_WM_STATE_MAXIMIZED_HORZ"]
fullscreen, fullscreen_toggle = _state_check(FULLSCREEN, lambda c: c.screen_rect(), "the screen")
maximize, maximize_toggle = _state_check(MAXIMIZED, lambda c: c.workarea(), "the work area")


# ---------------------------------------------------------------- stacking
def _above(c, upper, lower):
    """Whether upper is stacked above lower: _NET_CLIENT_LIST_STACKING
    (bottom to top) where it lists both, else the root's children."""
    order = c.root_windows("_NET_CLIENT_LIST_STACKING")
    if upper.id in order and lower.id in order:
        return order.index(upper.id) > order.index(lower.id), "_NET_CLIENT_LIST_STACKING"
    kids = [k.id for k in c.root.query_tree().children]
    return (kids.index(c.toplevel(upper).id) > kids.index(c.toplevel(lower).id),
            "the root's children")


def _settled_above(c, upper, lower, timeout=2.0):
    """_above once the WM's stacking settles: up to timeout s for upper to
    be above. The WM decides the order when it shows a window, which on an
    Xwayland WM is when Xwayland's first frame of it reaches the compositor,
    after WM_STATE is set and after the WM answered a barrier (under load,
    a moment later: x11-conformance-xwayland failed so once in a CI run)."""
    try:
        return c.wait("%s above %s" % (upper.id, lower.id),
                      lambda: (lambda r: r if r[0] else None)(_above(c, upper, lower)), timeout)
    except xclient.Timeout:
        return _above(c, upper, lower)


def transient_above(c):
    parent = c.window(name="parent", x=100, y=100, w=400, h=300)
    c.map_managed(parent, "the parent")
    dialog = c.window(name="dialog", x=150, y=150, w=200, h=120, transient_for=parent,
                      window_type="DIALOG")
    c.map_managed(dialog, "the dialog")
    c.barrier()
    up, how = _settled_above(c, dialog, parent)
    need(up, "the dialog is below its parent (%s)" % how)
    c.activate(parent, SOURCE_PAGER)
    c.barrier()
    granted = "granted" if c.active() == parent.id else "not granted"
    up, how = _above(c, dialog, parent)
    need(up, "after a _NET_ACTIVE_WINDOW request for the parent (%s), the dialog is "
         "below it (%s)" % (granted, how))
    parent.configure(stack_mode=X.Above)
    c.barrier()
    up, how = _above(c, dialog, parent)
    need(up, "after the parent's ConfigureRequest stack_mode Above, the dialog is below it "
         "(%s)" % how)
    return "by " + how


# ---------------------------------------------------------------- close
def close_window(c):
    w = c.window(name="close")
    c.map_managed(w)
    m = c.mark()
    c.client_message(w, "_NET_CLOSE_WINDOW", [X.CurrentTime, SOURCE_PAGER])
    c.wait("a WM_DELETE_WINDOW client message", lambda: c.messages(m, w, "WM_DELETE_WINDOW"))
    return ""


# ---------------------------------------------------------------- override-redirect
def override_redirect(c):
    w = c.window(name="popup", x=53, y=61, w=120, h=90, override=True)
    w.map()
    c.wait("the override-redirect window to be viewable", lambda: c.viewable(w))
    c.barrier()
    need(w.id not in c.root_windows("_NET_CLIENT_LIST"), "it is in _NET_CLIENT_LIST")
    need(c.toplevel(w).id == w.id, "it was reparented")
    need(c.rect(w) == (53, 61, 120, 90), "it was moved or resized to %r" % (c.rect(w),))
    need(c.wm_state(w) is None, "it has WM_STATE %s" % state_name(c.wm_state(w)))
    return ""


# name, function, the _NET_SUPPORTED atoms it relies on, what it checks
CHECKS = [
    ("wm-check", wm_check, ["_NET_SUPPORTING_WM_CHECK"],
     "_NET_SUPPORTING_WM_CHECK on the root and on its child, which has a _NET_WM_NAME"),
    ("supported-honest", None, ["_NET_SUPPORTED"],
     "every atom of _NET_SUPPORTED a check relies on works there"),
    ("map-normal", map_normal, [], "a MapRequest honoured: viewable, WM_STATE NormalState"),
    ("initial-iconic", initial_iconic, [],
     "WM_HINTS initial_state IconicState: WM_STATE Iconic, left unmapped"),
    ("iconify", iconify, [], "WM_CHANGE_STATE IconicState: WM_STATE Iconic, unmapped"),
    ("withdraw", withdraw, [],
     "unmap + synthetic UnmapNotify: WM_STATE removed or Withdrawn"),
    ("configure-size", configure_size, [], "a ConfigureRequest's size honoured"),
    ("configure-position", configure_position, [],
     "a ConfigureRequest's position honoured (skip: the WM keeps its placement)"),
    ("configure-synthetic", configure_synthetic, [],
     "a move-only ConfigureRequest answered by a synthetic ConfigureNotify in root "
     "coordinates (ICCCM 4.1.5)"),
    ("normal-hints", normal_hints, [], "WM_NORMAL_HINTS min and max size respected"),
    ("client-list", _client_list("_NET_CLIENT_LIST"), ["_NET_CLIENT_LIST"],
     "_NET_CLIENT_LIST has a mapped window, drops it once destroyed"),
    ("client-list-stacking", _client_list("_NET_CLIENT_LIST_STACKING"),
     ["_NET_CLIENT_LIST_STACKING"], "the same for _NET_CLIENT_LIST_STACKING"),
    ("active-on-map", active_on_map, ["_NET_ACTIVE_WINDOW"],
     "_NET_ACTIVE_WINDOW names a newly mapped focusable window"),
    ("focus-agrees", focus_agrees, ["_NET_ACTIVE_WINDOW"],
     "GetInputFocus agrees with _NET_ACTIVE_WINDOW"),
    ("active-request-pager", _active_request(SOURCE_PAGER), ["_NET_ACTIVE_WINDOW"],
     "a _NET_ACTIVE_WINDOW request, source 2 (pager): active and focused"),
    ("active-request-app", _active_request(SOURCE_APP), ["_NET_ACTIVE_WINDOW"],
     "the same, source 1 (application), with a current timestamp"),
    ("take-focus", take_focus, [],
     "input False + WM_TAKE_FOCUS (globally active): a WM_TAKE_FOCUS message"),
    ("no-input", no_input, [], "input False, no WM_TAKE_FOCUS (No Input): never focused"),
    ("fullscreen", fullscreen, ["_NET_WM_STATE", "_NET_WM_STATE_FULLSCREEN"],
     "_NET_WM_STATE add/remove FULLSCREEN: the property, the screen, back after"),
    ("fullscreen-toggle", fullscreen_toggle, ["_NET_WM_STATE", "_NET_WM_STATE_FULLSCREEN"],
     "the same by toggle, twice"),
    ("maximize", maximize, ["_NET_WM_STATE"] + MAXIMIZED,
     "_NET_WM_STATE add/remove MAXIMIZED_VERT+HORZ: the property, the work area, back after"),
    ("maximize-toggle", maximize_toggle, ["_NET_WM_STATE"] + MAXIMIZED,
     "the same by toggle, twice"),
    ("transient-above", transient_above, [],
     "a WM_TRANSIENT_FOR dialog above its parent, also after the parent is activated and raised"),
    ("close-window", close_window, ["_NET_CLOSE_WINDOW"],
     "_NET_CLOSE_WINDOW: a WM_PROTOCOLS WM_DELETE_WINDOW message"),
    ("override-redirect", override_redirect, [],
     "an override-redirect window: not listed, not reparented, not moved, no WM_STATE"),
]
NAMES = [name for name, _, _, _ in CHECKS]


def run_one(c, fn):
    """(status, note) of one check; its windows destroyed after."""
    try:
        note = fn(c)
        status = "pass"
    except Skip as e:
        status, note = "skip", str(e)
    except (Fail, xclient.Timeout) as e:
        status, note = "fail", str(e)
    except error.XError as e:
        status, note = "fail", "X error: %s" % e
    try:
        c.destroy_all()
    except xclient.Timeout as e:
        if status == "pass":
            status, note = "fail", str(e)
    return status, note


def run_all(c, log=print, only=None):
    """{name: {"status", "why", "atoms"}} of every check (or those named)."""
    supported = c.supported()
    results = {}
    for name, fn, atoms, _ in CHECKS:
        if fn is None or (only and name not in only):
            continue
        t0 = time.monotonic()
        status, why = run_one(c, fn)
        unclaimed = [a for a in atoms if a not in supported]
        if status == "fail" and unclaimed:
            status, why = "skip", "not in _NET_SUPPORTED (%s); not done: %s" % (
                ", ".join(unclaimed), why)
        elif status == "pass" and unclaimed:
            why = ("works though not in _NET_SUPPORTED (%s)" % ", ".join(unclaimed) +
                   ("; " + why if why else ""))
        results[name] = {"status": status, "why": why}
        log("%-22s %-4s %5.2f s %s" % (name, status, time.monotonic() - t0, why))
    if not only or "supported-honest" in only:
        results["supported-honest"] = supported_honest(results, supported)
    return results


def supported_honest(results, supported):
    if not supported:
        return {"status": "fail", "why": "the root has no _NET_SUPPORTED"}
    broken = []
    for name, _, atoms, _ in CHECKS:
        r = results.get(name)
        if r and r["status"] == "fail" and atoms and all(a in supported for a in atoms):
            broken.append("%s (%s)" % (name, ", ".join(a for a in atoms if a != "_NET_WM_STATE")))
    if broken:
        return {"status": "fail", "why": "claimed but failing: " + "; ".join(broken)}
    return {"status": "pass", "why": "%d atoms listed" % len(supported)}
