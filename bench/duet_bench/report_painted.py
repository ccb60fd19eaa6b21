"""Beside every render figure, the rate each stack's compositor painted at
(issue 42): a frame rate or a CPU per frame of a stack that paints 36
frames a second where it is set to 60 is not like for like, so the report
shows every stack's painted Hz against what it should have painted
(timeline.painted_frames: expected_hz, the lower of the rate it is set to
and the client's frame rate) and flags the stacks under
timeline.UNDER_RATE of it instead of comparing them silently."""
import re
import statistics

from duet_bench import timeline
from duet_bench import report_figures
from duet_bench.report_figures import fmt

# (experiment, how its samples are grouped, where a sample keeps its painted record)
SOURCES = [
    ("render", lambda s: "%s engine, refresh %s" % (s.get("engine"), s.get("refresh_hz")),
     lambda s: s.get("painted")),
    ("thirdparty", lambda s: s.get("client"),
     lambda s: s if s.get("client") == "glmark2" else None),
    ("sweep", lambda s: "%s, %s" % (s.get("renderer"), s.get("scene")), lambda s: s),
]


def groups(results):
    """{(experiment, stack, group): [painted records]}, in run order."""
    out = {}
    for exp, key, painted in SOURCES:
        for st, rec in ((results.get("experiments") or {}).get(exp) or {}).items():
            for s in (rec or {}).get("samples", []) if isinstance(rec, dict) else []:
                p = painted(s)
                if isinstance(p, dict) and ("painted_hz" in p or "painted_missing" in p):
                    out.setdefault((exp, st, key(s)), []).append(p)
    return out


def _median(vals):
    vals = [v for v in vals if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


def rows(results):
    """A row per group: experiment, stack, what ran, painted Hz (median),
    set to, expected, the runs under rate, and the source or why none."""
    out = []
    for (exp, st, what), recs in groups(results).items():
        hz = _median([p.get("painted_hz") for p in recs])
        under = sum(1 for p in recs if p.get("under_rate"))
        nominal = _median([p.get("nominal_hz") for p in recs])
        why = next((p["painted_missing"] for p in recs if p.get("painted_missing")), None)
        out.append([exp, st, what, fmt(hz), fmt(nominal) if nominal else "every damage",
                    fmt(_median([p.get("expected_hz") for p in recs])),
                    ("UNDER RATE in %d of %d" % (under, len(recs))) if under else
                    ("ok" if hz is not None else "-"),
                    why or next((p.get("painted_source") for p in recs
                                 if p.get("painted_source")), "-")])
    return out


def under_rate(results, exp="render"):
    """{stack: "what ran (painted Hz of expected)"} of the groups of exp
    where most runs painted under rate."""
    found = {}
    for (e, st, what), recs in groups(results).items():
        if e != exp:
            continue
        if sum(1 for p in recs if p.get("under_rate")) * 2 > len(recs):
            found.setdefault(st, []).append("%s: %s of %s Hz" % (
                what, fmt(_median([p.get("painted_hz") for p in recs])),
                fmt(_median([p.get("expected_hz") for p in recs]))))
    return {st: "; ".join(v) for st, v in found.items()}


def flagged_for(results, key):
    """The stacks that painted under rate in the render runs a render
    metric's key stands for (metrics.py: KEY, KEY_ENGINE, KEY[_ENGINE]_rHZ
    on the headline engine and refresh otherwise)."""
    recs = [r for r in ((results.get("experiments") or {}).get("render") or {}).values()
            if isinstance(r, dict) and r.get("headline_engine")]
    if not recs:
        return []
    engine, refresh = recs[0]["headline_engine"], recs[0].get("headline_refresh")
    m = re.search(r"_r(\d+)$", key)
    if m:
        refresh, key = int(m.group(1)), key[:m.start()]
    for e in recs[0].get("engines") or []:
        if key.endswith("_" + e):
            engine = e
    what = "%s engine, refresh %s" % (engine, refresh)
    return sorted(st for (exp, st, w), ps in groups(results).items()
                  if exp == "render" and w == what and
                  sum(1 for p in ps if p.get("under_rate")) * 2 > len(ps))


def blocks(results, exp="render"):
    """The painted-rate table of exp's runs, and the stacks it flags."""
    table = [r for r in rows(results) if r[0] == exp]
    if not table:
        return []
    out = [("h3", "Painted rate (%s)" % exp),
           ("p", "What each compositor painted while the client drew: output frames per second "
                 "(median over runs), the rate it is set to paint at, and the rate it could "
                 "have painted the client's frames at (the lower of the two). A stack under "
                 "%d%% of that in most runs is flagged: its per-frame figures are not "
                 "compared like for like." % round(100 * timeline.UNDER_RATE)),
           ("table", ["experiment", "stack", "run", "painted Hz", "set to (Hz)", "expected Hz",
                      "flag", "source"], table)]
    flagged = under_rate(results, exp)
    if flagged:
        out.append(("p", "**Painted under rate:** " + "; ".join(
            "%s (%s)" % kv for kv in sorted(flagged.items())) + "."))
    return out


def render(results, out, table, order, pairs):
    """The render experiment's report: its figures, then the painted rates."""
    shown = report_figures.render(results, out, table, order, pairs)
    return shown + blocks(results, "render") if shown else shown
