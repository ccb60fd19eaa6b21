"""The report's section on the sweep experiment (sweep.py): per engine, a
table of glmark2's scenes with each duet server's score and window-system
CPU per frame against every peer of its kind that draws with that engine,
as ratios with their paired intervals; each stack's CPU per painted frame
over the floor (the frame's least work, sweep.floor_once); and the figures
of every stack per scene."""
from duet_bench import metrics, stats
from duet_bench.glmark2 import NOTE_ROUNDTRIP, SIZE
from duet_bench.report_figures import fmt, ratio_cell
from duet_bench.sweep import RENDERERS, takes
from duet_launch import stack_kinds

# Each duet server over each peer of its kind.
PAIRS = [("wayland", "weston"), ("wayland", "sway"), ("wayland", "mutter"),
         ("x11", "openbox"), ("x11", "i3"), ("x11", "mutter-x11")]
NAMES = {"wayland": "duet-compositor", "x11": "duet-xwm", "weston": "weston",
         "openbox": "openbox + xcompmgr", "sway": "sway", "mutter": "mutter",
         "i3": "i3 + picom", "mutter-x11": "mutter --x11"}
ENGINE_TEXT = {"gl": "duet's servers with GLES2 (llvmpipe), weston `--use-gl`; mutter (GL on "
                     "llvmpipe) on both window systems",
               "pixman": "duet-compositor with pixman, duet-xwm with %s, weston "
                         "`--use-pixman`; sway's pixman renderer; openbox + xcompmgr and i3 + "
                         "picom with XRender (pixman inside Xvfb)",
               "xrender": "duet-xwm drawing with XRender inside the X server (`--renderers "
                          "xrender`), against the X peers that composite the same way: "
                          "openbox + xcompmgr and i3 + picom (pixman inside Xvfb)"}
# duet-xwm's software engine in a run (results' xwm_software: absent before
# it was recorded, when it was render/'s pixman composite).
XWM_SOFTWARE = {"xrender": "XRender inside the X server (`--xwm-software xrender`)",
                "pixman": "render/'s pixman in its own process (`--xwm-software pixman`)"}


def engine_text(results, renderer):
    text = ENGINE_TEXT.get(renderer, renderer)
    if renderer == "pixman":
        text = text % XWM_SOFTWARE[results.get("xwm_software") or "pixman"]
    return text


# The engine a peer with one drawing engine is compared in: GL with GL, a
# software path (pixman, or XRender, which is pixman inside Xvfb) with pixman.
ENGINE_OF = {"gl": "gl", "pixman": "pixman", "xrender": "pixman"}


def score(s):
    return s.get("score")


def ws_cpu(s):
    return (s.get("cpu_ms_per_frame") or {}).get("window_system")


def painted_hz(s):
    return s.get("painted_hz")


def ws_per_painted(s):
    return s.get("ws_cpu_ms_per_painted_frame")


def measured(recs, pair, renderer, scenes, value):
    """Both stacks of pair have value on some scene (mutter on Wayland tells
    glmark2 nothing of what it painted: no per painted frame figure)."""
    return all(any(v is not None for sc in scenes
                   for _, v in picks(recs.get(st) or {}, renderer, sc, value)) for st in pair)


def fixed(rec):
    """A stack that has one engine whatever was asked (openbox: xrender);
    results before "fixed" was recorded name an engine the sweep had no
    --renderers value for."""
    if "fixed" in rec:
        return rec["fixed"]
    return any(r not in RENDERERS[:2] for r in rec.get("renderers") or [])


def engine_of(name):
    """The engine a stack's figures count as: its own where it has one
    (stack_kinds' renderer: mutter's gl, sway's pixman, XRender as pixman),
    None where it runs the sweep's engines (duet's servers, weston)."""
    kind = stack_kinds.get(name) if name in stack_kinds.NAMES else None
    return ENGINE_OF.get(kind.renderer, kind.renderer) if kind and kind.renderer else None


def compared_in(name, renderer):
    """Whether stack name's figures belong in renderer's tables: a stack
    of the sweep's engines where it has renderer, a peer of one engine in
    the engine it counts as (XRender's peers in duet-xwm's xrender table
    too)."""
    own = engine_of(name)
    return takes(name, renderer) if own is None else own == ENGINE_OF.get(renderer, renderer)


def picks(rec, renderer, scene, value):
    """[(sample, value)] of one scene drawn with renderer (a fixed stack's
    own engine stands for the engine it counts as)."""
    return [(s, value(s)) for s in rec.get("samples", []) if s.get("scene") == scene
            and (fixed(rec) or s.get("renderer") == renderer)]


def median_text(rec, renderer, scene, value):
    if not rec:
        return "not run"
    if rec.get("status") == "skipped":
        return "skipped"
    vals = [v for _, v in picks(rec, renderer, scene, value) if v is not None]
    if vals:
        return fmt(stats.median(vals))
    gone = [f for f in rec.get("failed_runs", []) if fixed(rec) or f["renderer"] == renderer]
    return "failed" if gone or rec.get("status") == "failed" else "-"


def figure_cell(rec, renderer, scene):
    if rec.get("status") == "skipped":
        return "skipped"
    return "; ".join(median_text(rec, renderer, scene, v) for v in (score, ws_cpu, painted_hz))


def ratio(recs, pair, renderer, scene, value, seed):
    """The pair's paired ratio (stats.paired_ratio) with its verdict."""
    a, b = (stats.by_round(picks(recs.get(st) or {}, renderer, scene, value)) for st in pair)
    res = stats.paired_ratio(a, b, seed)
    res["verdict"] = stats.verdict(res)
    return res


def tally(results):
    """"higher on N (scenes), ..." per verdict word, for one list of ratios."""
    by = {}
    for scene, res in results:
        word = res.get("verdict") or "no value"
        by.setdefault(word if not word.startswith("no interval") else "no interval",
                      []).append(scene)
    return "; ".join("%s on %d (%s)" % (w, len(s), ", ".join(s)) for w, s in sorted(by.items()))


def engine_blocks(recs, renderer, scenes, seed, floor=None, text=None):
    """The ratio table of one engine (a pair's columns where either of its
    stacks ran), what its verdicts add up to, and every stack's figures."""
    pairs = [p for p in PAIRS if any(st in recs for st in p)
             and all(compared_in(st, renderer) for st in p)]
    # Per pair: score and window-system CPU per client frame; per output
    # frame painted too where both paint on a known clock (the
    # compositors paint at different rates at the same nominal refresh:
    # weston's headless output painted about 36 Hz at 60 before its
    # repaint-window was set to 16 ms).
    values = {p: [score, ws_cpu] + ([ws_per_painted] if measured(
        recs, p, renderer, scenes, ws_per_painted) else []) for p in pairs}
    head, rows, notes = ["scene"], [], []
    for a, b in pairs:
        head += [NAMES[a] + " score", NAMES[b] + " score", "%s/%s score [95%% CI]" % (a, b),
                 "%s/%s WS CPU per frame [95%% CI]" % (a, b)]
        if ws_per_painted in values[(a, b)]:
            head.append("%s/%s WS CPU per painted frame [95%% CI]" % (a, b))
    found = {(p, v): [] for p in pairs for v in values[p]}
    for scene in scenes:
        row = [scene]
        for p in pairs:
            row += [median_text(recs.get(st), renderer, scene, score) for st in p]
            for v in values[p]:
                res = ratio(recs, p, renderer, scene, v, seed)
                found[(p, v)].append((scene, res))
                row.append(ratio_cell(res))
        rows.append(row)
    for p in pairs:
        if all(st in recs for st in p):
            notes.append("%s/%s: score %s. Window-system CPU per frame %s.%s" % (
                p[0], p[1], tally(found[(p, score)]), tally(found[(p, ws_cpu)]),
                " Per painted frame %s." % tally(found[(p, ws_per_painted)])
                if ws_per_painted in values[p] else ""))
    shown = {st: rec for st, rec in recs.items() if compared_in(st, renderer)}
    figures = [[scene] + [figure_cell(rec, renderer, scene) for rec in shown.values()]
               for scene in scenes]
    ratios = [("table", head, rows)] if pairs else [
        ("p", "Neither of duet's servers nor their peers ran: no ratios.")]
    return [("h3", "Engine %s: %s" % (renderer, text or engine_text({}, renderer)))] + \
        ratios + [("p", n) for n in notes] + floor_blocks(shown, renderer, scenes, floor) + [
            ("table", ["scene"] + ["%s: score; WS CPU ms/frame; painted Hz" % st
                                   for st in shown], figures)]


def floor_of(results, renderer):
    """The median over the rounds of the floor of renderer (ms of CPU per
    frame), or None."""
    rounds = ((results.get("sweep_floor") or {}).get("rounds")) or []
    vals = [r[renderer] for r in rounds if r.get(renderer) is not None]
    return stats.median(vals) if vals else None


def floor_blocks(recs, renderer, scenes, floor):
    """Each stack's window-system CPU per painted frame over the floor, per
    scene: how many times the least a frame needs it spends."""
    if not floor:
        return []
    cols = [st for st, rec in recs.items()
            if any(v is not None for sc in scenes for _, v in picks(rec, renderer, sc,
                                                                     ws_per_painted))]
    if not cols:
        return []
    rows = []
    for scene in scenes:
        row = [scene]
        for st in cols:
            vals = [v for _, v in picks(recs[st], renderer, scene, ws_per_painted)
                    if v is not None]
            row.append("%s (%s ms)" % (fmt(stats.median(vals) / floor), fmt(stats.median(vals)))
                       if vals else "-")
        rows.append(row)
    return [("p", "**Over the floor.** Window-system CPU per painted frame over the least a "
                  "frame needs here: the %s window composited once with %s, %s ms of CPU "
                  "(`duet-composite-bench`, median of the rounds). 1 would be a window system "
                  "that costs nothing but that composite; a stack that says nothing of what it "
                  "painted has no figure." % (SIZE, ENGINE_OF.get(renderer, renderer),
                                              fmt(floor))),
            ("table", ["scene"] + ["%s: over the floor (ms per painted frame)" % NAMES.get(st, st)
                                   for st in cols], rows)]



def failure_text(recs):
    out = []
    for st, rec in recs.items():
        for f in rec.get("failed_runs", []):
            out.append("%s with %s, round %s run %s: %s" % (st, f["renderer"], f["round"],
                                                           f["run"], f["reason"]))
        if rec.get("status") == "failed" and not rec.get("failed_runs"):
            out.append("%s: %s" % (st, (rec.get("reason") or "").splitlines()[0]))
    return out


def blocks(results, out, table, order, pairs):
    """The section, or nothing for a run without the experiment."""
    recs = {}
    for st in metrics.stacks_of(results):
        rec = metrics.exp(results, "sweep", st)
        if rec:
            recs[st] = rec
    if not recs:
        return []
    opts = results.get("options") or {}
    scenes = opts.get("sweep_scenes") or []
    renderers = opts.get("sweep_renderers") or []
    seed = metrics.seed_of(results)
    rounds = opts.get("rounds", 1)
    blocks = [
        ("h2", "Scene sweep (sweep)"),
        ("p", "glmark2 `-s 800x600 -b SCENE:duration=%s` for each scene in one run "
         "(`glmark2-es2-wayland` on the Wayland stacks, `glmark2-es2` on the X11 stacks), "
         "unthrottled, every stack at 60 Hz. duet-compositor, duet-xwm and weston run each "
         "engine (%s) in a stack instance of its own; a peer with one engine runs once and "
         "is compared in the engine it counts as: GL with GL (mutter on both window "
         "systems), a software path with pixman (sway's pixman renderer; openbox + xcompmgr "
         "and i3 + picom composite with XRender, pixman inside Xvfb). Score: the scene's fps. WS CPU "
         "per frame: the CPU of the server, WM and compositing-manager processes from the "
         "scene's first frame to its last over the client frames meanwhile (as in thirdparty); "
         "painted Hz: the output frames the compositor painted meanwhile (its own log; "
         "duet-paint-count for xcompmgr, picom and mutter --x11, which log none; mutter on "
         "Wayland tells only the app, and glmark2 asks it nothing)." % (
             fmt(opts.get("glmark2_duration_s")),
                                      ", ".join(renderers))),
        ("p", "**Paired rounds.** Each of the %d round(s) runs every stack with every engine "
         "on every scene. A ratio is the duet server's median over its peer's, over the rounds "
         "both have; its interval is a %d%% percentile bootstrap that redraws whole rounds for "
         "both stacks together (%d resamples, seeded), so the machine's drift between rounds "
         "falls on both. No interval below %d paired rounds. higher / lower: the interval "
         "lies entirely above / below 1; no difference: it includes 1. A score ratio above 1: "
         "the duet server is faster; a CPU ratio above 1: it spends more CPU per frame." % (
             rounds, round(100 * stats.CONFIDENCE), stats.BOOTSTRAP_RESAMPLES,
             stats.MIN_ROUNDS)),
        ("p", "**" + NOTE_ROUNDTRIP + "**")]
    for r in renderers:
        blocks += engine_blocks(recs, r, scenes, seed, floor_of(results, ENGINE_OF.get(r, r)),
                                engine_text(results, r))
    fails = failure_text(recs)
    if fails:
        blocks.append(("p", "**Failed** (the failed runs' samples are in no table): "
                       + "; ".join(fails) + "."))
    return blocks
