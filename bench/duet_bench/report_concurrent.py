"""The report's concurrent launches (issue 14, item 4): time until every
first frame is composited against the number of apps launched at once,
per stack, with a 95% interval of the median; CPU and context switches
per app beside it."""
import random

from duet_bench import metrics, plots, stats


def _fmt(v):
    return "-" if v is None else ("%.3g" % v if abs(v) < 100 else "%.1f" % v)


def median_interval(vals, seed, resamples=stats.BOOTSTRAP_RESAMPLES):
    """(median, low, high): a percentile bootstrap interval of the median
    (stats.CONFIDENCE), or (median, None, None) below stats.MIN_ROUNDS
    values: too few for an interval, none is invented."""
    vals = sorted(v for v in vals if isinstance(v, (int, float)))
    if not vals:
        return None, None, None
    med = stats.median(vals)
    if len(vals) < stats.MIN_ROUNDS:
        return med, None, None
    rng = random.Random(seed)
    meds = sorted(stats.median([rng.choice(vals) for _ in vals]) for _ in range(resamples))
    a = (1 - stats.CONFIDENCE) / 2
    return med, stats.percentile(meds, a), stats.percentile(meds, 1 - a)


def series_of(results):
    """{stack: {apps: [samples]}} of the concurrent experiment."""
    out = {}
    for st in metrics.stacks_of(results):
        r = metrics.exp(results, "concurrent", st) or {}
        for s in r.get("samples", []):
            if isinstance(s.get("apps"), int):
                out.setdefault(st, {}).setdefault(s["apps"], []).append(s)
    return out


def plot(out, name, title, series):
    """series: [(stack, color, [(apps, median, low, high)])]; low/high
    are the interval, or the median itself where there is none."""
    series = [s for s in series if s[2]]
    if not series:
        return None
    data, svg = plots.paths(out, name)
    lines = []
    with open(data, "w") as f:
        for i, (st, color, pts) in enumerate(series):
            f.write("\n".join("%d %g %g %g" % p for p in pts) + "\n\n\n")
            lines.append("%s index %d using ($1*(1+%g)):2:3:4 with yerrorlines lw 1.5 "
                         "lc rgb '#%06x' title %s" % (plots.qs(data), i,
                                                      (i - len(series) / 2.0) * 0.02,
                                                      color, plots.qs(st)))
    counts = sorted({p[0] for _, _, pts in series for p in pts})
    script = plots.HEAD % (820, 420, plots.qs(svg)) + """set title %s
set xlabel 'apps launched at once'
set ylabel 'ms, first fork -> every first frame composited'
set logscale x 2
set xtics (%s)
set xrange [%g:%g]
set yrange [0:*]
set grid ytics
set key outside right
plot %s
""" % (plots.qs(title), ", ".join("'%d' %d" % (n, n) for n in counts), counts[0] / 1.3,
       counts[-1] * 1.3, ", \\\n     ".join(lines))
    return plots.run(script, svg)


def blocks(results, out, table, order, pairs):
    per = series_of(results)
    if not per:
        return []
    seed = metrics.seed_of(results)
    blocks = [("h2", "Concurrent launches: time until every app's first frame is composited")]
    series, rows, notes = [], [], set()
    for st, by_n in per.items():
        pts = []
        for n in sorted(by_n):
            samples = by_n[n]
            med, lo, hi = median_interval([s.get("ms") for s in samples], seed)
            if med is not None:
                pts.append((n, med, lo if lo is not None else med,
                            hi if hi is not None else med))

            def m(fn):
                vals = [v for v in map(fn, samples) if isinstance(v, (int, float))]
                return stats.median(vals) if vals else None
            ws_cpu = m(lambda s: sum(v for k, v in (s.get("cpu_ms_per_app") or {}).items()
                                     if k != "app") if s.get("cpu_ms_per_app") else None)
            counted = (((results.get("ipc") or {}).get(st) or {}).get("concurrent") or {})
            ipc = ((counted.get("per_apps") or {}).get(str(n)) or {}).get("server_ipc_per_app")
            rows.append([st, str(n), str(len(samples)),
                         "%s [%s, %s]" % (_fmt(med), _fmt(lo), _fmt(hi)) if lo is not None
                         else _fmt(med), _fmt(m(lambda s: s.get("first_ms"))),
                         _fmt(ws_cpu),
                         _fmt(m(lambda s: (s.get("cpu_ms_per_app") or {}).get("app"))),
                         _fmt(m(lambda s: (s.get("switches") or {}).get("window_system"))),
                         _fmt(m(lambda s: ((s.get("switches") or {}).get("per_op") or {})
                                .get("app", {}).get("total"))), _fmt(ipc)])
            for s in samples:
                if s.get("note"):
                    notes.add("%s: %s" % (st, s["note"]))
        series.append((st, plots.COLORS.get(st, 0x888888), pts))
        r = metrics.exp(results, "concurrent", st) or {}
        if r.get("status") not in ("ok", None):
            notes.add("%s: %s: %s" % (st, r.get("status"), (r.get("reason") or "")[:200]))
    blocks.append(("svg", "concurrent", plot(
        out, "concurrent", "Concurrent launches: median time until every first frame is "
        "composited\n(bars: 95%% bootstrap interval of the median where there are >= %d runs)"
        % stats.MIN_ROUNDS, series)))
    blocks.append(("table", ["stack", "apps", "runs", "ms to all composited [95% CI]",
                             "ms to the first", "window-system CPU ms per app",
                             "app CPU ms per app", "window-system switches per app",
                             "app switches per app", "server IPC per app (counting run)"],
                   rows))
    blocks.append(("p", "Apps: duet-launch (--stay), forked back to back; the time runs from "
                   "the first fork. A curve that grows with the number of apps faster on one "
                   "stack than another shows a process serialising start-up. Server IPC per "
                   "app: sendmsg + writev + recvmsg of the server on Unix sockets from the "
                   "first fork to every app's first frame / N, from a separate counting run "
                   "(the LD_PRELOAD counter), as the launch's IPC."))
    if notes:
        blocks.append(("p", "; ".join(sorted(notes)) + "."))
    return blocks
