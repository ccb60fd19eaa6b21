"""Every figure the report shows, read from results.json alone: per stack
the samples of each metric grouped by round (timings) or the one count of
the counting run (IPC), and for every pair of stacks the ratio of medians
with its interval and verdict (stats.py).

Results of older runs (schema 1: no seed, no kind, no timeline) read as
well: a missing field is a missing value, never an error."""
from duet_bench import stats
from duet_bench.study import STUDY

LAUNCH_POINTS = ["fork", "exec", "connected", "submitted", "received", "composited",
                 "presented"]


class Metric:
    def __init__(self, key, title, unit, claim=None, count=False, study=None, record=None):
        self.key = key
        self.title = title
        self.unit = unit
        self.claim = claim      # the study's claim it tests (verdict table), or None
        self.count = count      # one counting run: no rounds, no interval
        self.study = study or key  # key into STUDY
        # Whose status the metric's cells carry: an experiment, or
        # ("ipc", key) for a counting run.
        self.record = record or key.split("_")[0].replace("flush", "render")

    def variant(self, key, title, record=None):
        return Metric(key, title, self.unit, None, self.count, self.study,
                      record or self.record)


def exp(results, e, stack):
    return (results.get("experiments") or {}).get(e, {}).get(stack)


def stacks_of(results):
    return list((results.get("stacks") or {}).keys())


def seed_of(results):
    s = results.get("seed", (results.get("options") or {}).get("seed"))
    return s if isinstance(s, int) else 0


def launch_kind(results, stack):
    """"warm" when the stack's launches record warm ones (the headline:
    the study launched apps on a running system), else every launch."""
    r = exp(results, "launch", stack) or {}
    kinds = {s.get("kind") for s in r.get("samples", [])}
    return "warm" if "warm" in kinds else None


def render_engines(results, stack):
    """(headline engine, [other engines]) of the render experiment; a
    result without engines per sample has one unnamed engine."""
    r = exp(results, "render", stack) or {}
    engines = r.get("engines") or []
    head = r.get("headline_engine") or (engines[0] if engines else None)
    return head, [e for e in engines if e != head]


def render_refreshes(results, stack):
    """(headline refresh, [other refreshes]) of the render experiment; a
    result from before --render-refresh took a list has one, its option."""
    r = exp(results, "render", stack) or {}
    hz = r.get("refreshes") or []
    head = r.get("headline_refresh")
    if head is None:
        head = hz[0] if hz else (results.get("options") or {}).get("render_refresh", 0)
    return head, [h for h in hz if h != head]


def render_sample_of(results, stack, engine="headline", refresh="headline"):
    """A filter for the render samples of one engine at one refresh
    ("headline": the run's first); a sample without the field counts as
    the headline's."""
    head_e, _ = render_engines(results, stack)
    head_r, _ = render_refreshes(results, stack)
    want_e = head_e if engine == "headline" else engine
    want_r = head_r if refresh == "headline" else refresh
    return lambda s: ((want_e is None or s.get("engine", want_e) == want_e)
                      and s.get("refresh_hz", head_r) == want_r)


def _get(d, *path):
    for p in path:
        if not isinstance(d, dict):
            return None
        d = d.get(p)
    return d


# ------------------------------------------------------------ the catalogue
def _launch(field, kind):
    def pick(results, stack):
        r = exp(results, "launch", stack) or {}
        want = kind if kind != "headline" else launch_kind(results, stack)
        return [(s, s.get(field)) for s in r.get("samples", [])
                if want is None or s.get("kind") == want]
    return pick


def _render(fn, engine, refresh="headline"):
    def pick(results, stack):
        r = exp(results, "render", stack) or {}
        want = render_sample_of(results, stack, engine, refresh)
        return [(s, fn(s)) for s in r.get("samples", []) if want(s)]
    return pick


def _flush(s):
    return _get(s, "scenes", "image_blend_smooth_scaled", "flush_ms")


def _cpu_per_frame(s):
    per = _get(s, "cpu_per_frame", "ms_per_frame")
    return sum(per[r] for r in per if r != "window_system") if per else None


def _painted_hz(s):
    return _get(s, "painted", "painted_hz")


def _ws_per_painted(s):
    return _get(s, "painted", "ws_cpu_ms_per_painted_frame")


def _cpu(field):
    def pick(results, stack):
        r = exp(results, "cpu", stack) or {}
        return [(s, s.get(field)) for s in r.get("samples", [])]
    return pick


def _resize(mode, field="ms"):
    def pick(results, stack):
        r = exp(results, "resize", stack) or {}
        return [(s, s.get(field)) for s in r.get("samples", [])
                if mode is None or s.get("requested_mode") == mode]
    return pick


def _thirdparty(client, *path):
    def pick(results, stack):
        r = exp(results, "thirdparty", stack) or {}
        return [(s, _get(s, *path)) for s in r.get("samples", []) if s.get("client") == client]
    return pick


def _roundtrip(kind, field="trip_us"):
    def pick(results, stack):
        r = exp(results, "roundtrip", stack) or {}
        return [(s, s.get(field)) for s in r.get("samples", []) if s.get("kind") == kind]
    return pick


def _switches(e, want=None, records="samples"):
    """Window-system + app switches per operation of experiment e's
    samples (or of its record's list `records`: resize's per run)."""
    def pick(results, stack):
        r = exp(results, e, stack) or {}
        if e == "launch":
            kind = launch_kind(results, stack)
            want_ = (lambda s: kind is None or s.get("kind") == kind)
        elif e == "render":
            want_ = render_sample_of(results, stack)
        else:
            want_ = want
        return [(s, _get(s, "switches", "all")) for s in r.get(records) or []
                if want_ is None or want_(s)]
    return pick


def _concurrent(n, field="ms"):
    def pick(results, stack):
        r = exp(results, "concurrent", stack) or {}
        return [(s, _get(s, *field.split("."))) for s in r.get("samples", [])
                if s.get("apps") == n]
    return pick


def _input(engine):
    def pick(results, stack):
        r = exp(results, "input", stack) or {}
        return [(s, s.get("ms")) for s in r.get("samples", []) if s.get("engine") == engine]
    return pick


def _vfb(method, layout):
    def pick(results, stack):
        r = exp(results, "vfb", stack) or {}
        return [(s, s.get("detect_ms")) for s in r.get("samples", [])
                if s.get("method") == method and s.get("layout") == layout]
    return pick


def _ipc(*path):
    def pick(results, stack):
        v = _get((results.get("ipc") or {}).get(stack, {}), *path)
        return v if isinstance(v, (int, float)) else None
    return pick


TIMINGS = [
    (Metric("launch_ms", "App launch, fork -> composited (warm launches)", "ms",
            claim="launch: fork -> composited"), _launch("ms", "headline")),
    (Metric("launch_submitted_ms", "App launch, fork -> submitted (the study's 'rendering "
            "complete'; warm launches)", "ms", claim="launch: fork -> submitted",
            study="launch_ms"), _launch("submitted_ms", "headline")),
    (Metric("launch_cold_ms", "App launch, fork -> composited, first launch on a fresh stack "
            "(cold)", "ms"), _launch("ms", "cold")),
    (Metric("render_fps", "Rendering score, headline engine (mean fps over the duet-render "
            "scenes, unthrottled)", "fps", claim="render fps"), _render(
                lambda s: s.get("score_fps"), "headline")),
    (Metric("flush_ms", "Flush/swap time per frame, image_blend_smooth_scaled, headline "
            "engine", "ms", claim="flush"), _render(_flush, "headline")),
    (Metric("render_cpu_ms_per_frame", "CPU per rendered frame, window system + app, headline "
            "engine", "ms/frame"), _render(_cpu_per_frame, "headline")),
    (Metric("render_painted_hz", "Output frames the compositor painted per second while "
            "duet-render ran, headline engine (its own log)", "Hz"),
     _render(_painted_hz, "headline")),
    (Metric("render_ws_cpu_ms_per_painted_frame", "Window-system CPU per output frame painted "
            "while duet-render ran, headline engine", "ms/frame"),
     _render(_ws_per_painted, "headline")),
    (Metric("cpu_peak", "CPU peak, window-system processes + app (the study's measure)",
            "% of one core", claim="CPU"), _cpu("sum_peak")),
    (Metric("cpu_ws_peak", "CPU peak, window-system processes only", "% of one core",
            study="cpu_peak"), _cpu("window_system_peak")),
    (Metric("cpu_p95", "CPU p95, window-system processes + app", "% of one core"),
     _cpu("sum_p95")),
    (Metric("cpu_mean", "CPU mean, window-system processes + app, over the app's life",
            "% of one core"), _cpu("sum_mean")),
    (Metric("cpu_ws_mean", "CPU mean, window-system processes only", "% of one core"),
     _cpu("window_system_mean")),
    (Metric("resize_ms", "Resize latency, request -> composited, all sizes and modes", "ms",
            claim="resize: request -> composited"), _resize(None)),
    (Metric("resize_presented_ms", "Resize latency, request -> presented (each stack's own "
            "presentation time), all sizes and modes", "ms", study="resize_ms"),
     _resize(None, "presented_ms")),
    (Metric("resize_client_ms", "Resize latency, request -> composited, client-initiated, "
            "all sizes", "ms"), _resize("client")),
    (Metric("resize_server_ms", "Resize latency, request -> composited, server-initiated, "
            "all sizes", "ms"), _resize("server")),
    # Third-party clients (thirdparty.py); glmark2's two builds differ: its
    # Wayland build round-trips every frame, its X11 build does not.
    (Metric("thirdparty_glmark2_score", "glmark2 score, build + texture at 800x600, "
            "unthrottled (Wayland build: a round trip per frame; X11 build: none)", "score"),
     _thirdparty("glmark2", "score")),
    (Metric("thirdparty_glmark2_ws_cpu_ms_per_frame", "Window-system CPU per glmark2 frame "
            "(server + WM + compositor)", "ms/frame"),
     _thirdparty("glmark2", "cpu_ms_per_frame", "window_system")),
    (Metric("thirdparty_glmark2_painted_hz", "Output frames the compositor painted per second "
            "while glmark2 ran (its own log; the configured refresh is 60 Hz)", "Hz"),
     _thirdparty("glmark2", "painted_hz")),
    (Metric("thirdparty_glmark2_ws_cpu_ms_per_painted_frame", "Window-system CPU per output "
            "frame painted while glmark2 ran", "ms/frame"),
     _thirdparty("glmark2", "ws_cpu_ms_per_painted_frame")),
    (Metric("thirdparty_efl_first_frame_ms", "elementary_test launch, fork -> composited",
            "ms"), _thirdparty("efl", "first_frame_ms")),
    (Metric("thirdparty_efl_launch_ws_cpu_ms", "Window-system CPU during elementary_test's "
            "launch (fork -> composited + 1 s)", "ms"),
     _thirdparty("efl", "launch_cpu_ms", "window_system")),
    (Metric("thirdparty_efl_idle_ws_cpu_ms", "Window-system CPU while elementary_test idles",
            "ms"), _thirdparty("efl", "idle_cpu_ms", "window_system")),
    # Round trips (roundtrip.py): 10 groups of 100, the median group per trip.
    (Metric("roundtrip_server_us", "Round trip to the display server (wl_display.sync / "
            "GetInputFocus), per trip", "us"), _roundtrip("server")),
    (Metric("roundtrip_server_switches", "Context switches per server round trip, every "
            "window-system process + the app", "switches/trip"),
     _roundtrip("server", "switches_per_trip_all")),
    (Metric("roundtrip_wm_us", "X11's window-manager hop (_NET_REQUEST_FRAME_EXTENTS -> "
            "_NET_FRAME_EXTENTS), per trip; Wayland has no such hop", "us"),
     _roundtrip("wm")),
    (Metric("roundtrip_wm_switches", "Context switches per WM hop, every window-system "
            "process + the app", "switches/trip"), _roundtrip("wm", "switches_per_trip_all")),
    (Metric("roundtrip_floor_unix_1cpu_us", "Floor: Unix-socket ping-pong between two "
            "processes on one CPU, per trip (the same on every stack: the machine)", "us"),
     _roundtrip("floor-unix-1cpu")),
    (Metric("roundtrip_floor_unix_2cpu_us", "Floor: Unix-socket ping-pong, two CPUs, per trip",
            "us"), _roundtrip("floor-unix-2cpu")),
    (Metric("roundtrip_floor_pipe_1cpu_us", "Floor: pipe ping-pong, one CPU, per trip", "us"),
     _roundtrip("floor-pipe-1cpu")),
    # Context switches per operation (switches.py), window system + app.
    (Metric("launch_switches", "Context switches per launch, every window-system process + "
            "the app (warm launches)", "switches"), _switches("launch")),
    (Metric("render_switches_per_frame", "Context switches per rendered frame, every "
            "window-system process + the app, headline engine", "switches/frame"),
     _switches("render")),
    (Metric("resize_switches", "Context switches per resize, every window-system process + "
            "the app", "switches/resize", record="resize"),
     _switches("resize", records="switches")),
    # Concurrent launches (concurrent.py): first fork -> every first frame composited.
    (Metric("concurrent_1_ms", "1 app launched alone: fork -> first frame composited", "ms"),
     _concurrent(1)),
    (Metric("concurrent_8_ms", "8 apps launched at once: first fork -> every first frame "
            "composited", "ms"), _concurrent(8)),
    (Metric("concurrent_8_switches_per_app", "Context switches per app, 8 apps launched at "
            "once, every window-system process + the apps", "switches/app"),
     _concurrent(8, "switches.all")),
    # Input latency (inputlat.py): key injected -> the new colour composited, per press.
    (Metric("input_ms", "Input latency: key injected -> its frame composited, engine sw",
            "ms"), _input("sw")),
    (Metric("input_gl_ms", "Input latency: key injected -> its frame composited, engine gl",
            "ms"), _input("gl")),
    # Virtual display (vfb.py): a reader's time to find a frame's changes, per run and workload.
    (Metric("vfb_compare_linear_ms", "Virtual display: time to find a frame's changes by "
            "byte compare, linear rows", "ms"), _vfb("compare", "linear")),
    (Metric("vfb_compare_tiled_ms", "Virtual display: time to find a frame's changes by "
            "byte compare, 32x32 tiles of one page", "ms"), _vfb("compare", "tiled")),
]

COUNTS = [
    (Metric("launch_ipc", "IPC at launch, server side (sendmsg+writev+recvmsg on Unix "
            "sockets)", "calls", claim="IPC at launch", count=True,
            record=("ipc", "launch")),
     _ipc("launch", "processes", "server", "study_style")),
    (Metric("render_ipc_per_frame", "IPC per rendered frame, server side, start-up "
            "subtracted, headline engine, the app asking no frame timings (the same protocol "
            "on every stack)", "calls/frame", claim="IPC per frame", count=True,
            record=("ipc", "render")),
     _ipc("render", "per_frame_study_style", "server")),
    (Metric("render_ipc_per_frame_timings", "IPC per rendered frame, server side, headline "
            "engine, the app taking the frame timings the server offers (wp_presentation, "
            "_NET_WM_FRAME_DRAWN); render_ipc_per_frame asks none", "calls/frame", count=True,
            record=("ipc", "render_timings")),
     _ipc("render_timings", "per_frame_study_style", "server")),
    (Metric("render_ipc_bytes_per_frame", "IPC bytes per rendered frame, server side, "
            "headline engine", "bytes/frame", count=True, record=("ipc", "render")),
     _ipc("render", "bytes_per_frame_study_style", "server")),
    (Metric("resize_ipc", "IPC per resize, server side", "calls/resize",
            claim="IPC per resize", count=True, record=("ipc", "resize")),
     _ipc("resize", "per_resize", "server", "study_style")),
    (Metric("concurrent_8_ipc_per_app", "IPC per app, 8 apps launched at once, server side",
            "calls/app", count=True, record=("ipc", "concurrent")),
     _ipc("concurrent", "per_apps", "8", "server_ipc_per_app")),
    (Metric("concurrent_1_ipc_per_app", "IPC per app, 1 app launched alone, server side",
            "calls/app", count=True, record=("ipc", "concurrent")),
     _ipc("concurrent", "per_apps", "1", "server_ipc_per_app")),
    (Metric("thirdparty_glmark2_ipc_per_frame", "IPC per glmark2 frame, server side",
            "calls/frame", count=True, record=("ipc", "thirdparty")),
     _ipc("thirdparty", "glmark2", "per_frame_study_style", "server")),
    (Metric("thirdparty_efl_launch_ipc", "IPC during elementary_test's launch (fork -> "
            "composited + 1 s), server side", "calls", count=True,
            record=("ipc", "thirdparty")),
     _ipc("thirdparty", "efl", "launch", "server", "study_style")),
    (Metric("thirdparty_efl_launch_callbacks", "Frame callbacks the server answered during "
            "elementary_test's launch (Wayland; from the client's protocol log)", "callbacks",
            count=True, record=("ipc", "thirdparty")),
     _ipc("thirdparty", "efl", "frame_callbacks", "launch", "done")),
    (Metric("thirdparty_efl_launch_ipc_per_callback", "IPC during elementary_test's launch "
            "per frame callback answered, server side (Wayland)", "calls/callback", count=True,
            record=("ipc", "thirdparty")),
     _ipc("thirdparty", "efl", "launch_ipc_per_callback")),
    (Metric("thirdparty_efl_idle_ipc", "IPC while elementary_test idles, server side", "calls",
            count=True, record=("ipc", "thirdparty")),
     _ipc("thirdparty", "efl", "idle", "server", "study_style")),
    (Metric("thirdparty_efl_idle_ws_calls", "Every counted call (I/O and waits) of the "
            "window-system processes while elementary_test idles", "calls", count=True,
            record=("ipc", "thirdparty")),
     _ipc("thirdparty", "efl", "idle_calls_all_window_system")),
]

# Render metrics of the engines other than the headline one, added per run
# (the counting run of engine E is ipc.STACK.render_E).
EXTRA_ENGINE = [("render_fps", lambda s: s.get("score_fps")), ("flush_ms", _flush),
                ("render_cpu_ms_per_frame", _cpu_per_frame), ("render_painted_hz", _painted_hz),
                ("render_ws_cpu_ms_per_painted_frame", _ws_per_painted)]
EXTRA_ENGINE_COUNTS = [("render_ipc_per_frame", ("per_frame_study_style", "server")),
                       ("render_ipc_bytes_per_frame", ("bytes_per_frame_study_style",
                                                       "server"))]


def catalogue(results):
    """[(Metric, picker)] for this result: the fixed list with the headline
    engine named, plus the render metrics of every other engine any stack
    ran, and of every engine at every other refresh (KEY_rHZ)."""
    heads, others, rates = set(), [], []
    for st in stacks_of(results):
        head, rest = render_engines(results, st)
        heads.add(head)
        for e in rest:
            if e not in others:
                others.append(e)
        for hz in render_refreshes(results, st)[1]:
            if hz not in rates:
                rates.append(hz)
    heads.discard(None)  # stacks that did not render
    head = heads.pop() if len(heads) == 1 else None
    out = []
    for m, fn in TIMINGS + COUNTS:
        if head and "headline engine" in m.title:
            m = Metric(m.key, m.title.replace("headline engine", "engine %s (headline)"
                                              % head), m.unit,
                       m.claim and "%s (%s)" % (m.claim, head), m.count, m.study, m.record)
        out.append((m, fn))
    base = {m.key: m for m, _ in TIMINGS + COUNTS}
    for e in others:
        for key, fn in EXTRA_ENGINE:
            m = base[key].variant("%s_%s" % (key, e), base[key].title.replace(
                "headline engine", "engine " + e))
            out.append((m, _render(fn, e)))
        for key, path in EXTRA_ENGINE_COUNTS:
            m = base[key].variant("%s_%s" % (key, e), base[key].title.replace(
                "headline engine", "engine " + e), ("ipc", "render_" + e))
            out.append((m, _ipc("render_" + e, *path)))
    # The timings only: the counting run is at the headline refresh.
    for hz in rates:
        for e in ([head] if head else []) + others:
            for key, fn in EXTRA_ENGINE:
                m = base[key].variant("%s%s_r%d" % (key, "" if e == head else "_" + e, hz),
                                      "%s, duet's servers at %s" % (
                                          base[key].title.replace("headline engine",
                                                                  "engine " + e), refresh_name(hz)))
                out.append((m, _render(fn, e, hz)))
    return out


def refresh_name(hz):
    return "%d Hz" % hz if hz else "R = 0 (every frame composited)"


# ------------------------------------------------------------ per stack
def status_of(rec):
    if not rec:
        return "not run"
    st = rec.get("status", "ok")
    if st in ("failed", "skipped"):
        return "%s: %s" % (st, ((rec.get("reason") or "").splitlines() or [""])[0][:160])
    return st


def record_of(results, metric, stack):
    """The record whose status a metric's cell carries."""
    if isinstance(metric.record, tuple):
        return _get(results.get("ipc") or {}, stack, metric.record[1])
    return exp(results, metric.record, stack)


class Cell:
    """One metric on one stack."""

    def __init__(self, metric, stack, vals, rounds, status):
        self.metric = metric
        self.stack = stack
        self.vals = vals
        self.rounds = rounds
        self.status = status
        self.n = len(vals)
        self.min = min(vals) if vals else None
        self.max = max(vals) if vals else None
        self.median = stats.median(vals)
        self.cv = stats.cv(vals)


def cells(results):
    """{metric key: {stack: Cell}} and the ordered [Metric]."""
    out, order = {}, []
    for m, pick in catalogue(results):
        order.append(m)
        per = out.setdefault(m.key, {})
        for st in stacks_of(results):
            status = status_of(record_of(results, m, st))
            if m.count:
                v = pick(results, st)
                vals = [v] if v is not None else []
                per[st] = Cell(m, st, vals, {1: vals} if vals else {}, status)
            else:
                pairs = pick(results, st)
                per[st] = Cell(m, st, [v for _, v in pairs if v is not None],
                               stats.by_round(pairs), status)
    return out, order


# ------------------------------------------------------------ pairs
def study_ratio(metric):
    s = STUDY.get(metric.study)
    if not s:
        return None
    if "ratio" in s:
        return s["ratio"]
    if s.get("x11") and s.get("wayland"):
        return s["x11"] / s["wayland"]
    return None


def ratios(results, table=None, order=None, pairs=None):
    """[(Metric, (a, b), result dict with "verdict")] for every metric and
    every pair of stacks (stats.PAIRS, or pairs) both of which have values."""
    if table is None:
        table, order = cells(results)
    seed = seed_of(results)
    out = []
    for m in order:
        per = table[m.key]
        for a, b in pairs or stats.PAIRS:
            ca, cb = per.get(a), per.get(b)
            if not ca or not cb or not ca.vals or not cb.vals:
                continue
            if m.count:
                res = stats.count_ratio(ca.vals[0], cb.vals[0])
            else:
                res = stats.paired_ratio(ca.rounds, cb.rounds, seed)
            sr = study_ratio(m) if (a, b) in stats.STUDY_PAIRS else None
            res["study_ratio"] = sr
            res["verdict"] = stats.verdict(res, sr, count=m.count)
            out.append((m, (a, b), res))
    return out


# ------------------------------------------------------------ launch timeline
def launch_timeline(results, stack, kind):
    """{point: median ms since fork} over the launch samples of kind
    (None: all), with n and the reasons points are missing."""
    r = exp(results, "launch", stack) or {}
    samples = [s for s in r.get("samples", []) if kind is None or s.get("kind") == kind]
    pts, missing, sources = {}, {}, {}
    for p in LAUNCH_POINTS:
        vals = [s["timeline"][p] / 1e6 for s in samples
                if isinstance(s.get("timeline"), dict)
                and isinstance(s["timeline"].get(p), (int, float))]
        if vals:
            pts[p] = stats.median(vals)
        else:
            why = [(s.get("timeline_missing") or {}).get(p) for s in samples]
            why = [w for w in why if w]
            if why:
                missing[p] = why[0]
        src = [(s.get("timeline_source") or {}).get(p) for s in samples]
        src = [x for x in src if x]
        if src:
            sources[p] = src[0]
    return {"points": pts, "missing": missing, "sources": sources, "n": len(samples)}
