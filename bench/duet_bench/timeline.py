"""The "composited" point of a launch or a resize, from whoever can tell it
on each stack (docs/methodology.md, "Timeline"):

    wayland  duet-compositor's trace: "composited" events (t_ns: the output
             frame holding the window's new content finished)
    x11      duet-xwm's trace: the same event, once the frame's pixels were
             sent and flushed to Xvfb
    weston   weston's own "timeline" log scope: core_repaint_posted of the
             first output repaint that flushed the app surface's damage
    openbox  nobody: xcompmgr tells no one; the bench's observer watching
             Xvfb's framebuffer file supplies it (LaunchWitness: duet-launch's
             colour; ResizeWitness: duet-resize's size tags)
    xwayland, weston-xwayland  as wayland and weston: the X app's window is a
             surface of Xwayland's Wayland client (server_client_pid)
    mutter   mutter tells no one but the app: its wp_presentation feedback's
             presented time, as the app received it (app_presented)
    mutter-xwayland  likewise, its X window manager's _NET_WM_FRAME_DRAWN
    mutter-x11, i3  as openbox: the observer
    sway     the wlroots output tracer preloaded into it (bench/probes/wlr-trace.c)
             writes duet's "frame" and "composited" lines: read as duet's
    e-wayland  nobody

Every time is CLOCK_MONOTONIC ns, the clock the apps and the bench use.
"""
import time

from duet_bench import observer, procs
from duet_launch import stack_kinds

# The observer's source on Xorg: the card's scanout (stacks.py, fb_path "drm:CARD").
SCANOUT = "observer (card scanout: duet-observe --drm)"


def source_of(stack):
    """Who tells the stack's composited point (its kind's, or SCANOUT on Xorg)."""
    if stack.spec.observed and (stack.fb_path or "").startswith("drm:"):
        return SCANOUT
    return stack.spec.composited_source


def duet_composited(events, pid, since_ns, first, width=None, height=None):
    """t_ns of the first contract "composited" event for client pid at or
    after since_ns (first: the window's first content; else a new size,
    width x height)."""
    for e in events:
        if e.get("name") != "composited" or e.get("client_pid") != pid:
            continue
        if bool(e.get("first")) != first:
            continue
        t = e.get("t_ns")
        if not isinstance(t, int) or t < since_ns:
            continue
        if width is not None and (e.get("width"), e.get("height")) != (width, height):
            continue
        return t
    return None


# The apps' presentation sources whose time the server sets: its
# wp_presentation feedback, or its X window manager's _NET_WM_FRAME_DRAWN.
SERVER_TIMES = ("wp_presentation", "frame-drawn")


def app_presented(stack, ff):
    """Where the stack's server tells only the app (StackKind composited
    PRESENTATION): the app's "presented" point, if the server set it
    (SERVER_TIMES). (ns, None) or (None, why)."""
    t = ((ff or {}).get("timeline") or {}).get("presented")
    if (ff or {}).get("presentation") not in SERVER_TIMES or not isinstance(t, int):
        return None, ("%s tells only the app when it showed a frame, and the app reported no "
                      "presented time the server set (presentation: %s)"
                      % (stack.name, (ff or {}).get("presentation")))
    return t, None


def _ns(t):
    return t[0] * 1000000000 + t[1]


def weston_composited(items, app_id, since_ns, named_only=False):
    """weston 10's timeline scope (libweston/timeline.c) writes objects
    {"id":N,"type":"weston_surface","desc":"top-level window 'T' of APP_ID"}
    when a surface first appears in it, and points {"T":[s,ns],"N":name,
    "ws":surface,"wo":output} stamped with CLOCK_MONOTONIC. For the first
    surface of app_id that commits damage at or after since_ns: the end
    (core_repaint_posted: the renderer drew and the backend took the frame)
    of the first output repaint that flushed that surface's damage.
    named_only: only a surface whose description names app_id (an app
    with helper surfaces that commit before its toplevel, like EFL's).
    Returns (ns, None) or (None, why)."""
    names = {}
    surface = commit = flush = output = None
    for o in items:
        if o.get("type") == "weston_surface" and "id" in o:
            names[o["id"]] = o.get("desc") or ""
            continue
        n, t = o.get("N"), o.get("T")
        if not n or not isinstance(t, list) or len(t) != 2:
            continue
        t = _ns(t)
        if surface is None:
            ws = o.get("ws")
            if n == "core_commit_damage" and t >= since_ns and \
                    (app_id in names.get(ws, "") or (names.get(ws) == "" and not named_only)):
                surface, commit = ws, t
        elif flush is None:
            if n == "core_flush_damage" and o.get("ws") == surface and t >= commit:
                flush, output = t, o.get("wo")
        elif n == "core_repaint_posted" and o.get("wo") == output and t >= flush:
            return t, None
    if surface is None:
        return None, "no surface of %s committed damage in weston's timeline" % app_id
    if flush is None:
        return None, "weston's timeline shows no repaint flushing %s's damage" % app_id
    return None, "weston's timeline shows no posted repaint after %s's damage" % app_id


def output_frames(stack, t0_ns, t1_ns):
    """How many frames the stack's compositor painted between t0_ns and
    t1_ns (CLOCK_MONOTONIC), from its own log: duet's servers' "frame"
    trace events with painted true, weston's timeline core_repaint_finished
    points. The configured refresh is not what a server paints: weston 10's
    headless output finishes a frame 16 ms after its repaint and starts the
    next one refresh - repaint window after that, so under a busy client it
    paints about every other 60 Hz period. Returns (count, None) or
    (None, why) where the stack's compositor tells no one."""
    reader = getattr(stack, "composited_log", None)
    if reader is None:
        return None, "%s's compositor reports no painted frames" % stack.name
    n = 0
    for e in reader.read():
        if stack.spec.composited == stack_kinds.WESTON_TIMELINE:
            t = e.get("T")
            if e.get("N") != "core_repaint_finished" or not isinstance(t, list) or len(t) != 2:
                continue
            t = _ns(t)
        else:
            if e.get("name") != "frame" or e.get("painted") is not True:
                continue
            t = e.get("ns")
            if not isinstance(t, int):
                continue
        if t0_ns <= t < t1_ns:
            n += 1
    return n, None


def nominal_hz(stack):
    """The rate the stack's compositor is set to paint at, or None where it
    has none: duet's servers at --refresh 0 and the compositing managers
    without a frame clock paint on every damage (StackKind.pace)."""
    pace = stack.spec.pace
    if pace == stack_kinds.PACE_DAMAGE:
        return None
    if pace == stack_kinds.PACE_REFRESH:
        return stack.refresh or None
    return stack_kinds.OUTPUT_HZ


# A stack painting under this share of what it should is flagged, not
# compared silently (painted_frames' "under_rate").
UNDER_RATE = 0.9


def painted_frames(stack, spans, frames, ws_per_frame, counted=None):
    """What the compositor painted in the spans ([t0_ns, t1_ns] each) in
    which a client drew frames: the output frames (its own log, or
    counted = (n, source) where something else counted them: the frames
    the app saw presented where the server tells only the app, the X
    paint counter where the compositing manager tells no one), their
    rate, and the window-system CPU per painted frame. An unthrottled client's frames per painted frame differ
    between servers that paint at different rates, so CPU per client frame
    alone does not say who does more work per frame shown.
    Beside them: the rate the stack is set to paint at (nominal_hz), the
    rate it could paint the client's frames at (expected_hz: the lower of
    that and the client's frame rate) and under_rate, true when it painted
    under UNDER_RATE of the expected rate."""
    painted, why, wall = 0, None, 0
    if getattr(stack, "composited_log", None):
        time.sleep(0.05)  # the last scene's frames reach the log
    for t in spans:
        if len(t) != 2:
            continue
        wall += t[1] - t[0]
        if counted is not None:
            continue
        n, why = output_frames(stack, t[0], t[1])
        if n is None:
            painted = None
            break
        painted += n
    if counted is not None:
        painted = counted[0]
    if painted is None:
        return {"painted_frames": None, "painted_missing": why}
    out = {"painted_frames": painted,
           "painted_hz": round(painted / (wall / 1e9), 2) if wall else None,
           "painted_source": counted[1] if counted is not None
           else "the compositor's own log",
           "ws_cpu_ms_per_painted_frame": None}
    if painted and ws_per_frame is not None:
        out["ws_cpu_ms_per_painted_frame"] = round(ws_per_frame * frames / painted, 4)
    nominal = nominal_hz(stack)
    client = frames / (wall / 1e9) if wall and frames else None
    expected = min(nominal, client) if nominal and client else None
    out.update(nominal_hz=nominal, expected_hz=round(expected, 2) if expected else None,
               under_rate=(out["painted_hz"] < UNDER_RATE * expected)
               if expected and out["painted_hz"] is not None else None)
    return out


def server_client_pid(stack, pid):
    """The pid under which the stack's server knows app pid's surfaces.
    On the Xwayland stacks every X window is a surface of one Wayland
    client, Xwayland's, whose credentials are the server's own pid (the
    socketpair it handed Xwayland was made by the server), so the app's
    pid names nothing there. The match is then the first "composited"
    event of that client at or after the app's fork (first) or request
    (a new size): the bench runs one X app at a time on these stacks (the
    concurrent experiment skips them) and nothing else maps X windows, so
    the first new surface Xwayland shows after the fork is the app's.
    weston's timeline matches by the surface's description (the window's
    title, duet's apps' name) or an unnamed surface, as for its own."""
    if stack.spec.xwayland:
        return stack.pids().get("server", pid)
    return pid


def server_composited(stack, pid, app_id, since_ns, first=True, width=None, height=None,
                      timeout=1.0, named_only=False):
    """The stack server's own composited time for app pid (duet's servers,
    weston). Waits up to timeout s for the server to write it. Returns
    (ns, None) or (None, why)."""
    reader = getattr(stack, "composited_log", None)
    if reader is None:
        return None, "%s reports no composited time" % stack.name
    deadline = time.monotonic() + procs.patience(timeout)
    while True:
        items = reader.read()
        if stack.spec.composited == stack_kinds.WESTON_TIMELINE:
            t, why = weston_composited(items, app_id, since_ns, named_only)
        else:
            client = server_client_pid(stack, pid)
            t = duet_composited(items, client, since_ns, first, width, height)
            why = ("no \"composited\" event for pid %d%s%s in %s (%d events)"
                   % (client, " (Xwayland's client, for X app pid %d)" % pid
                      if client != pid else "", "" if first else " at %sx%s" % (width, height),
                      reader.path.rsplit("/", 1)[-1],
                      sum(1 for e in items if e.get("name") == "composited")))
        if t is not None or time.monotonic() >= deadline:
            return t, why
        time.sleep(0.01)


# ------------------------------------------------------------ launch samples
APP_SOURCE = "duet-launch"
LAUNCH_APP_POINTS = ("exec", "connected", "submitted", "received", "presented")


class _ObserverWitness:
    """The observer on Xvfb's framebuffer file where the stack's compositor
    tells nobody when it composited (openbox: xcompmgr). start() before the
    app is forked: it returns once the observer polls (and sees nothing of
    the app yet); close() stops it and keeps its done line (polls, cpu_ns).
    On the other stacks it does nothing: their servers tell."""

    def __init__(self, stack):
        self.stack = stack
        self.obs = None
        self.why = None
        self.done = None

    def _observer(self):
        raise NotImplementedError

    def start(self):
        if not self.stack.spec.observed:
            return self
        if not self.stack.fb_path:
            self.why = "Xvfb has no framebuffer file (-fbdir) to observe"
            return self
        try:
            self.obs = self._observer().start()
            self.obs.wait_ready(5)
        except observer.ObserverError as e:
            self.why = "the observer failed: %s" % e
            self.close()
        return self

    def _before_stop(self):
        pass

    def close(self):
        """Stops the observer; returns its done line, or None."""
        if self.obs is not None:
            self._before_stop()
            try:
                self.done = self.obs.stop()
            except observer.ObserverError as e:
                self.why = self.why or str(e)
            self._after_stop()
            self.obs = None
        return self.done

    def _after_stop(self):
        pass


class LaunchWitness(_ObserverWitness):
    """Who tells a launch's composited point: the server's trace or
    timeline, and on openbox the observer looking for duet-launch's colour.
    start() before the AppRun, then composited() once the app reported its
    first frame, then close(). app_id / named_only: how weston's timeline
    names the app's window (duet-launch-efl: by its app_id only)."""

    def __init__(self, stack, app_id="duet-launch", named_only=False):
        super().__init__(stack)
        self.app_id = app_id
        self.named_only = named_only

    def _observer(self):
        return observer.Observer(self.stack.fb_path, observer.LAUNCH_RGB, self.stack.base_env)

    def composited(self, pid, t0, ff=None):
        """(ns, source, None) or (None, None, why). ff: the app's
        first_frame line, where the server tells only the app."""
        if self.stack.spec.composited == stack_kinds.PRESENTATION:
            t, why = app_presented(self.stack, ff)
            return (t, source_of(self.stack), None) if t is not None else (None, None, why)
        if self.stack.spec.observed:
            if self.obs is None:
                return None, None, self.why
            # Stretched under emulation like every other wait: in the KMS
            # guest under load openbox + xcompmgr took longer than 3 s to
            # show a launch on the scanout (bench-kms failed in CI).
            wait = procs.patience(3)
            t = self.obs.wait_seen(wait)
            if t is None:
                return None, None, ("the observer did not see duet-launch's colour within "
                                    "%.0f s" % wait)
            return t, source_of(self.stack), None
        t, why = server_composited(self.stack, pid, self.app_id, t0, named_only=self.named_only)
        return (t, source_of(self.stack), None) if t is not None else (None, None, why)


def launch_points(ff, t0, composited, composited_source, composited_why):
    """Contract 4's members of a launch sample from duet-launch's
    first_frame line (absolute ns) and the composited point: timeline
    (ns since the fork), timeline_missing, timeline_source, ms (fork ->
    composited, else fork -> presented with a note), submitted_ms."""
    app = ff.get("timeline") or {}
    tl, missing, source = {"fork": 0}, {}, {"fork": "bench (CLOCK_MONOTONIC before fork)"}
    for p in LAUNCH_APP_POINTS:
        v = app.get(p)
        if isinstance(v, int) and v >= t0:
            tl[p] = v - t0
            source[p] = ff.get("presentation") if p == "presented" else APP_SOURCE
        else:
            missing[p] = ("duet-launch reported no %s point (an older build?)" % p
                          if v is None else "duet-launch's %s point precedes the fork" % p)
    if "presented" not in tl and isinstance(ff.get("since_t0_ns"), int):
        tl["presented"] = ff["since_t0_ns"]
        source["presented"] = ff.get("presentation")
        missing.pop("presented", None)
    if composited is not None:
        tl["composited"] = composited - t0
        source["composited"] = composited_source
    else:
        missing["composited"] = composited_why or "unknown"
    out = {"timeline": tl, "timeline_missing": missing, "timeline_source": source}
    if "composited" in tl:
        out["ms"] = tl["composited"] / 1e6
    else:
        out["ms"] = tl["presented"] / 1e6
        out["note"] = "ms is fork -> presented: composited unknown (%s)" % missing["composited"]
    if "submitted" in tl:
        out["submitted_ms"] = tl["submitted"] / 1e6
    return out


# ------------------------------------------------------------ resize samples
OBSERVER_SIZES = "observer (Xvfb -fbdir: duet-resize's size tags)"


class ResizeWitness(_ObserverWitness):
    """Who tells a resize's composited point on openbox: the observer in
    size mode (duet-observe --sizes any) on Xvfb's framebuffer file, started
    before duet-resize and polling for the whole run, which reports every
    size of duet-resize's window as it first appears on screen (its size
    tags, clients/resize.c). On the other stacks the servers tell it
    (server_composited) and no observer runs. start() before the AppRun,
    close() after it, then resize_points(..., witness=self)."""

    def __init__(self, stack):
        super().__init__(stack)
        self.seen = []

    def _observer(self):
        return observer.Observer(self.stack.fb_path, None, self.stack.base_env, sizes="any")

    def _before_stop(self):
        # Its last report may trail the app's last presented frame.
        time.sleep(0.1)

    def _after_stop(self):
        self.seen = self.obs.seen_lines()

    def composited(self, width, height, t0, until=None):
        """The first appearance of a width x height tag at or after t0 (the
        request) and before until (the request of the next step of that
        size). (ns, source, None) or (None, None, why)."""
        if self.why and not self.seen:
            return None, None, self.why
        for e in self.seen:
            if (e.get("width"), e.get("height")) != (width, height):
                continue
            if not isinstance(e.get("ns"), int) or e["ns"] < t0 or (until and e["ns"] >= until):
                continue
            source = OBSERVER_SIZES.replace("Xvfb -fbdir", "card scanout") \
                if (self.stack.fb_path or "").startswith("drm:") else OBSERVER_SIZES
            if not e.get("whole"):
                edges = str(e.get("clipped") or "?").split(",")
                source += ("; top-left tag only, the window's %s %s off screen"
                           % (" and ".join(edges), "edges are" if len(edges) > 1 else "edge is"))
            return e["ns"], source, None
        if width < 48 or height < 16:
            return None, None, "a %dx%d window is too small for duet-resize's size tags" % (
                width, height)
        return None, None, ("the observer saw no %dx%d frame of duet-resize (xcompmgr never "
                            "showed it whole, or for less than a poll, or its top-left tag "
                            "was off screen)" % (width, height))


def resize_points(stack, step, pid, app_id="duet-resize", witness=None, until=None):
    """The resize sample's timeline in ns since the request: requested (0),
    submitted, received and presented from duet-resize, composited from
    the server (duet's: the "composited" event of the new size; weston: the
    first repaint flushing the surface's damage committed after the
    request) or on openbox from the witness (ResizeWitness: the observer's
    first sight of the new size after the request and before until).
    Returns (timeline, missing, source)."""
    app = step.get("timeline") or {}
    t0 = app.get("requested")
    if not isinstance(t0, int):
        return {}, {"requested": "duet-resize reported no timeline (an older build?)"}, {}
    tl, missing, source = {"requested": 0}, {}, {"requested": "duet-resize"}
    for p in ("submitted", "received", "presented"):
        v = app.get(p)
        if isinstance(v, int) and v >= t0:
            tl[p] = v - t0
            source[p] = step.get("presentation") if p == "presented" else "duet-resize"
        else:
            missing[p] = "duet-resize reported no %s point" % p
    if stack.spec.composited == stack_kinds.PRESENTATION:
        t, why = app_presented(stack, dict(step, timeline=app))
        src = source_of(stack)
    elif stack.spec.observed:
        if witness is None:
            missing["composited"] = "the compositor reports nothing, and no observer watched"
            return tl, missing, source
        t, src, why = witness.composited(step.get("got_width"), step.get("got_height"), t0,
                                         until)
    else:
        t, why = server_composited(stack, pid, app_id, t0, first=False,
                                   width=step.get("got_width"), height=step.get("got_height"),
                                   timeout=0.5)
        src = source_of(stack)
    if t is not None:
        tl["composited"] = t - t0
        source["composited"] = src
    else:
        missing["composited"] = why
    return tl, missing, source


def resize_headline(tl, missing, latency_ns=None):
    """The sample's figures from its timeline: ms = request -> composited
    (the headline, as launch's fork -> composited), else request ->
    presented with a note; presented_ms and composited_ms beside it."""
    out = {}
    presented = tl.get("presented", latency_ns)
    if presented is not None:
        out["presented_ms"] = presented / 1e6
    if "composited" in tl:
        out["ms"] = out["composited_ms"] = tl["composited"] / 1e6
    else:
        out["ms"] = out.get("presented_ms")
        out["note"] = ("ms is request -> presented: composited unknown (%s)"
                       % missing.get("composited", "unknown"))
    if "submitted" in tl:
        out["submitted_ms"] = tl["submitted"] / 1e6
    return out
