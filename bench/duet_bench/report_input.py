"""The report's section on the input experiment (inputlat.py): the latency
distribution per stack and engine (median, p90, p99 with bootstrap
intervals of the median), the ratios between stacks, how each stack was
driven, and a figure of the distributions."""
import random

from duet_bench import metrics, plots, stats
from duet_bench.inputlat import ENGINES, PATH_NOTE
from duet_bench.report_thirdparty import PAIR_LABEL, ratio_rows

KEYS = {"sw": "input_ms", "gl": "input_gl_ms"}


def _fmt(v):
    return "-" if v is None else "%.3g" % v


def values(rec, engine):
    return sorted(s["ms"] for s in (rec or {}).get("samples", [])
                  if s.get("engine") == engine and isinstance(s.get("ms"), (int, float)))


def median_interval(vals, seed, resamples=stats.BOOTSTRAP_RESAMPLES):
    """A percentile bootstrap interval of the median over the presses
    (seeded; None below 2 values)."""
    if len(vals) < 2:
        return None, None
    rng = random.Random(seed)
    meds = sorted(stats.median([rng.choice(vals) for _ in vals]) for _ in range(resamples))
    tail = (1 - stats.CONFIDENCE) / 2
    return stats.percentile(meds, tail), stats.percentile(meds, 1 - tail)


def stack_rows(results):
    rows = []
    seed = metrics.seed_of(results)
    for st in metrics.stacks_of(results):
        rec = metrics.exp(results, "input", st)
        if not rec:
            continue
        if rec.get("status") == "skipped":
            rows.append([st, "-", "skipped: " + (rec.get("reason") or "")] + ["-"] * 6)
            continue
        for engine in ENGINES:
            vals = values(rec, engine)
            n_all = sum(1 for s in rec.get("samples", []) if s.get("engine") == engine)
            lo, hi = median_interval(vals, seed)
            status = rec.get("status", "ok")
            if status == "failed":
                status = "failed: " + ((rec.get("reason") or "").splitlines() or [""])[0][:120]
            rows.append([st, engine, status, str(len(vals)),
                         "%s [%s, %s]" % (_fmt(stats.median(vals)), _fmt(lo), _fmt(hi))
                         if vals else "-",
                         _fmt(stats.percentile(vals, 0.9)), _fmt(stats.percentile(vals, 0.99)),
                         _fmt(vals[-1] if vals else None), str(n_all - len(vals))])
    return rows


def means_rows(results):
    rows = []
    for st in metrics.stacks_of(results):
        rec = metrics.exp(results, "input", st) or {}
        if rec.get("means") or rec.get("observer"):
            rows.append([st, rec.get("means") or "-", rec.get("observer") or "-"])
    return rows


def cdf_plot(out, results):
    """Empirical distribution of the latency per stack: one line per stack
    and engine (sw solid, gl dashed), x = ms, y = share of presses at or
    below it."""
    series = []
    for st in metrics.stacks_of(results):
        rec = metrics.exp(results, "input", st)
        for k, engine in enumerate(ENGINES):
            vals = values(rec, engine)
            if vals:
                series.append(("%s %s" % (st, engine), plots.COLORS.get(st, 0x888888),
                               1 + k, vals))
    if not series:
        return None
    data, svg = plots.paths(out, "input_latency")
    cmds = []
    with open(data, "w") as f:
        for i, (label, color, dash, vals) in enumerate(series):
            for j, v in enumerate(vals):
                f.write("%g %g\n" % (v, (j + 1) / len(vals)))
            f.write("\n\n")
            cmds.append("%s index %d using 1:2 with steps lw 2 dt %d lc rgb '#%06x' title %s"
                        % (plots.qs(data) if i == 0 else "''", i, dash, color,
                           plots.qs(label)))
    script = plots.HEAD % (760, 420, plots.qs(svg)) + """set title %s
set xlabel "ms (key injected -> frame with the new colour composited)"
set ylabel "share of presses"
set grid
set yrange [0:1]
set xrange [0:*]
set key right bottom
plot %s
""" % (plots.qs("Input latency distribution per stack (sw solid, gl dashed)"),
       ", \\\n     ".join(cmds))
    return plots.run(script, svg)


def blocks(results, out, table, order, pairs):
    """The section, or nothing for a run without the experiment."""
    if not any(metrics.exp(results, "input", st) for st in metrics.stacks_of(results)):
        return []
    blocks = [("h2", "Input latency (input)"),
              ("p", "A key is injected into the display server and time-stamped as it "
               "leaves; duet-input flips a patch's colour on the key and commits a new "
               "frame; the observer watching the screen (Xvfb's framebuffer file, "
               "duet-compositor's --vfb file) gives when that frame was composited. "
               "latency = injected -> composited, CLOCK_MONOTONIC on every stack, one sample "
               "per press, presses at random phases of the 60 Hz frame clock. "
               "docs/methodology.md defines it."),
              ("p", "**Two architectures: " + PATH_NOTE + "**"),
              ("table", ["stack", "how the key was injected", "composited from"],
               means_rows(results)),
              ("svg", "input_latency", cdf_plot(out, results)),
              ("table", ["stack", "engine", "status", "n", "median ms [95% CI]", "p90 ms",
                         "p99 ms", "max ms", "missing"], stack_rows(results)),
              ("p", "The interval of a stack's median is a percentile bootstrap over its "
               "presses (%d resamples, seeded); ratios between stacks below use the paired "
               "bootstrap over rounds of every other figure (3 rounds or more). missing: "
               "presses whose colour the observer did not see within 2 s."
               % stats.BOOTSTRAP_RESAMPLES)]
    rows = ratio_rows(order, pairs, lambda key: key in KEYS.values())
    if rows:
        blocks.append(("table", ["metric"] + [PAIR_LABEL[p] for p in stats.PAIRS], rows))
    return blocks
