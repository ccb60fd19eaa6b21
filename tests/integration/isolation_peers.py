"""The isolation tests' faults against the peers (issue 45, "the peers
under the same probes"): test_isolation.py PEER:FAULT.

Each peer's stack is started by duet's stack launcher as the bench starts
it (duet.PeerSession), nothing of it changed to fit the test; a peer not
installed here is a skip of one line. The offenders are duet's own
(duet-bad-client on a Wayland peer, duet-x11-bad-client on an X one), the
same modes and sizes as on duet's paths. The peers have no test-only
control protocol, so the checks are the ones that need none:

  alive    every process of the stack (PeerSession.alive(): the X server,
           the window manager, its compositing manager, the Wayland server
           and the Xwayland it started, the same process all along)
  frames   the good client's own count: a Wayland client's frames
           presented (frame callbacks on sway, whose headless output
           presents nothing), an X client's frames drawn; ten more after
           each check point, and while an offender floods or fills its
           socket at least MIN_RATE_SHARE of its rate before
  window   X: the good window still viewable where it was, as large, asked
           of the X server (weston's X window manager keeps no
           _NET_CLIENT_LIST); Wayland: not checked (no window list a
           client may read)
  input    X on Xvfb: the good window raised as a pager does
           (_NET_ACTIVE_WINDOW, source 2, a server timestamp), a key sent
           with XTEST once the window manager gave it the X focus, then a
           click where it is on top (and a key); through Xwayland and on
           Wayland: not checked (the
           headless peers have no input device, and Wayland has no
           standard way to inject one: XTEST into Xwayland would bypass
           the compositor's seat, the path a user's input takes)

What a peer does with the offender (cuts it off, kills it, lets it be) is
recorded, not judged: the log's "peer:" lines say it, and the end of what
each process of the stack wrote meanwhile. A budget is a peer's own or
none; there the fault is the offender's allocation (eight 4096x4096
surfaces, 512 MiB of textures if the peer uploads them all; one 2048x2048
X window), run only with memory to spare and stopped if the machine runs
short.
"""

import os
import signal
import socket
import struct
import threading
import time

import duet
from duet import check, log

import test_isolation as iso
from test_xwayland import wait_for

SLOW = iso.SLOW


# Peer -> (duet_launch's stack kind, the offender's protocol, its X server).
PEERS = {
    "weston": ("weston", "wayland", None),
    "sway": ("sway", "wayland", None),
    "mutter": ("mutter", "wayland", None),
    "openbox": ("openbox", "x", "xvfb"),
    "i3": ("i3", "x", "xvfb"),
    "mutter-x11": ("mutter-x11", "x", "xvfb"),
    "weston-xwayland": ("weston-xwayland", "x", "xwayland"),
    "sway-xwayland": ("sway-xwayland", "x", "xwayland"),
    "mutter-xwayland": ("mutter-xwayland", "x", "xwayland"),
}

# What an offender's allocation may cost a peer at most, MiB (Wayland:
# eight 64 MiB textures and the 64 MiB buffer; X: a 2048x2048 window, its
# pixmap and a compositing manager's copy), and what must stay free beside
# it: the machine is shared.
BUDGET_COST_MIB = {"wayland": 576, "x": 64}
SPARE_MIB = 512
STOP_BELOW_MIB = 256  # the offender is SIGKILLed if available memory falls below


def mem_available_mib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    return 0


def peer_note(what):
    log("peer: %s" % what)


class PeerGood(iso.Good):
    """A well-behaved client on a peer: the checks that need no control
    protocol (the module's docstring)."""

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
        """Alive, and what can be checked on a peer (the module's
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
    t0 = time.monotonic()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        # wl_display@1.sync(new wl_callback@2): object, size << 16 | opcode, id
        sock.sendall(struct.pack("=III", 1, 12 << 16, 2))
        buf = b""
        while time.monotonic() - t0 < timeout:
            data = sock.recv(4096)
            if not data:
                return None
            buf += data
            while len(buf) >= 8:
                obj, head = struct.unpack("=II", buf[:8])
                if obj == 2:
                    return time.monotonic() - t0
                buf = buf[max(8, head >> 16):]
        return None
    except OSError:
        return None
    finally:
        sock.close()


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


class PeerPath(iso.Path):
    """A peer's stack, its good clients beside the offender: an X client on
    the X peers; on the Xwayland peers a Wayland client too (the X
    offender must not cost the compositor's own clients either)."""

    def __init__(self, name):
        self.name = name
        self.stack_kind, self.offender_kind, self.x_server = PEERS[name]
        self.xwayland = None

    def session(self, name):
        return duet.PeerSession(name, self.stack_kind)

    def goods(self, s):
        if self.offender_kind == "wayland":
            return [PeerGood(s, self, "wayland", iso.WL_APP, (200, 150))]
        goods = [PeerGood(s, self, "x", iso.X_APP, (320, 240))]
        if self.x_server == "xwayland":
            goods.append(PeerGood(s, self, "wayland", iso.WL_APP, (200, 150)))
            self.xwayland = s.stack.role_pids.get("xwayland")
        return goods

    def after(self, s):
        if self.x_server == "xwayland":
            now = s.stack.role_pids.get("xwayland")
            check(now == self.xwayland and s.alive(),
                  "Xwayland is not the same process (was %s, now %s)" % (self.xwayland, now))
            log("Xwayland pid %d all along" % self.xwayland)


# ------------------------------------------------------------------ the record
def log_marks(s):
    """Where each stack process's output (and weston's log file) ends now."""
    marks = {p.name: len(p.stderr_tail(1 << 24)) for p in s.stack_procs()
             if hasattr(p, "stderr_tail")}
    path = getattr(s.stack, "weston_log", None)
    if path and os.path.exists(path):
        marks["weston.log"] = os.path.getsize(path)
    return marks


def said_since(s, marks, limit=1200):
    """What each process of the stack wrote since marks (the end of it)."""
    out = []
    for p in s.stack_procs():
        if p.name in marks:
            text = p.stderr_tail(1 << 24)[marks[p.name]:]
            if text.strip():
                out.append((p.name, text))
    path = getattr(s.stack, "weston_log", None)
    if path and "weston.log" in marks and os.path.exists(path):
        with open(path, errors="replace") as f:
            f.seek(marks["weston.log"])
            text = "\n".join(l for l in f.read().splitlines() if not l.startswith("{"))
        if text.strip():
            out.append(("weston.log", text))
    for name, text in out:
        text = text.strip()
        log("peer: %s wrote meanwhile%s:\n%s" % (name, " (the end)" if len(text) > limit else "",
                                                 text[-limit:]))
    if not out:
        peer_note("the stack's processes wrote nothing meanwhile")


def offender(s, path, mode):
    if path.offender_kind == "wayland":
        argv = [duet.program("DUET_BAD_CLIENT"), mode]
    else:
        argv = [duet.program("DUET_X11_BAD_CLIENT"), "--hold", mode]
    bad = s.client(argv, name="offender")
    bad.marks = None
    return bad


def offender_gone(s, path, bad, what):
    """The X offender's windows left the window manager's list."""
    if path.offender_kind != "x":
        return
    wait_for("%s: the offender's window to go" % what,
             lambda: x_window(s, bad.xid, iso.BAD_X_APP) is None, timeout=15 * SLOW)


def end_of(bad, timeout):
    """The offender's exit status, or None if it still runs after timeout."""
    try:
        return bad.wait(timeout)
    except duet.Failure:
        return None


def stop(bad, sig=signal.SIGTERM):
    if bad.alive():
        bad.kill(sig)
    return end_of(bad, 20 * SLOW)


def tail(bad, n=3):
    return " | ".join(iso.lines(bad)[-n:]) or "(nothing)"


# ---------------------------------------------------------------- the faults
class MemoryWatch:
    """SIGKILLs the offender if the machine's available memory falls below
    STOP_BELOW_MIB while it runs; lowest is the least seen."""

    def __init__(self, bad):
        self.bad, self.stopped, self.lowest = bad, False, mem_available_mib()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done.wait(0.05) and self.bad.alive():
            now = mem_available_mib()
            self.lowest = min(self.lowest, now)
            if now < STOP_BELOW_MIB:
                self.stopped = True
                self.bad.kill(signal.SIGKILL)
                return

    def end(self):
        self.done.set()
        self.thread.join()
        log("available memory at its lowest meanwhile: %d MiB" % self.lowest)
        if self.stopped:
            peer_note("the offender was SIGKILLed: the machine had less than %d MiB available"
                      % STOP_BELOW_MIB)


def fault_budget(s, path, goods):
    need = BUDGET_COST_MIB[path.offender_kind] + SPARE_MIB
    have = mem_available_mib()
    if have < need:
        raise duet.Skip("budget: not run: %d MiB available, the offender may cost the peer %d "
                        "and %d must stay free" % (have, BUDGET_COST_MIB[path.offender_kind],
                                                   SPARE_MIB))
    marks = log_marks(s)
    if path.offender_kind == "wayland":
        # Eight 4096x4096 surfaces from one sparse memfd (64 MiB each).
        bad = offender(s, path, "texture-budget")
        watch = MemoryWatch(bad)
        status = end_of(bad, 60 * SLOW)
        watch.end()
        peer_note("the offender %s: %s" % (
            "still runs after 60 s" if status is None else "exited %d" % status, tail(bad)))
        stop(bad, signal.SIGKILL)
    else:
        bad = offender(s, path, "big-window")
        bad.xid = iso.x_client(bad)[1]
        watch = MemoryWatch(bad)
        bad.wait_line(r"^mapped 1$", timeout=30 * SLOW)
        failed = []
        during(s, goods, "budget, the offender holding its window", None, 0, failed)
        watch.end()
        win = x_window(s, bad.xid, iso.BAD_X_APP)
        peer_note("the offender %s; its window %s" % (
            "still connected" if bad.alive() else "gone (%s)" % bad.status(),
            "viewable, %dx%d" % (win.w, win.h) if win else "not viewable"))
        stop(bad)
    said_since(s, marks)
    offender_gone(s, path, bad, "budget")
    iso.check_goods(goods, "after the budget")
    if path.offender_kind == "x":
        check(not failed, "; ".join(failed) + " (after it: all kept)")


def started_offender(s, path, mode, ready):
    """The offender of mode once it printed ready (a regular expression);
    an X one's client base in bad.xid."""
    bad = offender(s, path, mode)
    if path.offender_kind == "x":
        bad.xid = iso.x_client(bad)[1]
    bad.wait_line(ready, timeout=30 * SLOW)
    return bad


def fault_die_mid_request(s, path, goods):
    marks = log_marks(s)
    bad = started_offender(s, path, "die-mid-request", r"^partial \d+ of \d+ bytes$")
    failed = []
    during(s, goods, "a request half sent", None, 0, failed)
    check(bad.alive(), "the offender exited before it was killed: %s" % bad.stderr_tail())
    bad.kill(signal.SIGKILL)
    bad.wait(10 * SLOW)
    log("SIGKILLed the offender (pid %d) half way through its request" % bad.pid)
    offender_gone(s, path, bad, "die-mid-request")
    said_since(s, marks)
    iso.check_goods(goods, "after the offender died")
    check(not failed, "; ".join(failed) + " (after it: all kept)")


def during(s, goods, what, keep_on, seconds, failed):
    """iso.check_during, its failure recorded in failed and the fault
    carried on (the stack whole): whether the good clients are back once
    the offender stops is the record's too."""
    try:
        if keep_on is None:
            iso.check_goods(goods, what)
        else:
            iso.check_during(goods, what, keep_on, seconds)
    except duet.Failure as e:
        s.check_alive()
        failed.append(str(e))
        log("FAILED %s" % e)


def fault_flood(s, path, goods):
    marks = log_marks(s)
    bad = started_offender(s, path, "flood", r"^flooding$")
    t0 = time.monotonic()
    failed = []
    during(s, goods, "during the flood", bad.alive, iso.FLOOD_S, failed)
    alive = bad.alive()
    status = stop(bad)
    took = time.monotonic() - t0
    peer_note("the offender %s; %s" % (
        "flooded until stopped" if alive else "ended before the checks did (status %s)" % status,
        tail(bad)))
    log("the flood lasted %.1f s" % took)
    offender_gone(s, path, bad, "flood")
    said_since(s, marks)
    iso.check_goods(goods, "after the flood")
    check(not failed, "; ".join(failed) + " (after the flood: all kept)")


def fault_no_read(s, path, goods):
    marks = log_marks(s)
    bad = started_offender(s, path, "no-read", r"^not reading$")
    failed = []
    during(s, goods, "while the offender reads nothing", bad.alive, iso.FLOOD_S, failed)
    if path.offender_kind == "wayland":
        status = end_of(bad, 30 * SLOW)
        peer_note("the offender %s: %s" % (
            "still connected 30 s later" if status is None else "exited %d" % status, tail(bad)))
        stop(bad, signal.SIGKILL)
    else:
        alive = bad.alive()
        status = stop(bad)
        peer_note("the offender %s (stopped: %s): %s" % (
            "still connected" if alive else "gone before it was stopped", status, tail(bad)))
    offender_gone(s, path, bad, "no-read")
    said_since(s, marks)
    iso.check_goods(goods, "after the offender that reads nothing")
    check(not failed, "; ".join(failed) + " (after it: all kept)")


FAULT_RUNS = {"budget": fault_budget, "die-mid-request": fault_die_mid_request,
              "flood": fault_flood, "no-read": fault_no_read}


def run_case(peer, fault):
    path = PeerPath(peer)
    with path.session("isolation-%s-%s" % (peer, fault)) as s:
        versions(s)
        goods = path.goods(s)
        iso.check_goods(goods, "start")
        iso.measure_baselines(goods)
        t0 = time.monotonic()
        FAULT_RUNS[fault](s, path, goods)
        s.check_alive()
        path.after(s)
        log("%s:%s done in %.1f s: the stack whole, the good clients kept going"
            % (peer, fault, time.monotonic() - t0))


def versions(s):
    """The stack's commands, as the launcher ran them."""
    for role, argv in s.stack.commands.items():
        log("%s: %s" % (role, " ".join(argv)))
