"""The report's pairs section (issue 42): the study compared one project
built for both architectures, so that what differed was the architecture.
duet has four such pairs (stats.SAME_SOFTWARE): its own two servers,
Enlightenment, GNOME's mutter, and sway with its X11 twin i3. Per pair:
the study's claims' verdicts (X/W ratios of medians with their intervals,
metrics.ratios), one plot with every pair beside the study's points, and
each timing difference beside the IPC counts behind it (the study's
explanation: fewer calls between processes)."""
from duet_bench import metrics, plots, report_painted, stats
from duet_bench.report_figures import fmt, metric_ratio_cell

SHORT = {"launch_ms": "launch", "render_fps": "render fps", "flush_ms": "flush",
         "cpu_peak": "CPU peak", "resize_ms": "resize", "launch_ipc": "IPC launch",
         "render_ipc_per_frame": "IPC/frame", "resize_ipc": "IPC/resize"}
# A timing claim and the count behind it: (timing, count, what the count is of).
EXPLAINED = [("launch_ms", "launch_ipc", "IPC calls per launch"),
             ("render_fps", "render_ipc_per_frame", "IPC calls per frame"),
             ("resize_ms", "resize_ipc", "IPC calls per resize")]
POINTS = [7, 5, 9, 11, 13]


def present(results):
    """The pairs both of whose stacks ran, and a line per pair that did not."""
    have, absent = [], []
    stacks = results.get("stacks") or {}
    for pair in stats.SAME_SOFTWARE:
        why = []
        for st in pair:
            rec = stacks.get(st)
            if not rec:
                why.append("%s not in this run" % st)
            elif rec.get("status") != "ok":
                why.append("%s %s (%s)" % (st, rec.get("status"), rec.get("reason", "")))
        (absent if why else have).append((pair, "; ".join(why)))
    return [p for p, _ in have], ["%s: %s" % (stats.PAIR_LABEL[p], w) for p, w in absent]


def _ratio(pairs, m, pair):
    return next((r for pm, p, r in pairs if pm is m and p == pair), None)


def verdict_rows(results, order, pairs, have, study_text):
    rows = []
    for m in order:
        if not m.claim:
            continue
        row = [m.claim, study_text(m)]
        for pair in have:
            res = _ratio(pairs, m, pair)
            cell = metric_ratio_cell(m, res) if res else "-"
            bad = [st for st in pair if m.key.startswith(("render_", "flush_")) and
                   st in report_painted.flagged_for(results, m.key)]
            row.append(cell + (" (painted under rate: %s)" % ", ".join(bad) if bad else ""))
        rows.append(row)
    return rows


def plot(out, order, pairs, have):
    claims = [m for m in order if m.claim]
    series = []
    for i, pair in enumerate(have):
        vals = []
        for m in claims:
            res = _ratio(pairs, m, pair)
            vals.append((res["ratio"], res["ci_low"], res["ci_high"])
                        if res and res["ratio"] else None)
        label = stats.PAIR_LABEL[pair]
        series.append((label, plots.COLORS.get(label, 0x888888), vals,
                       POINTS[i % len(POINTS)]))
    series.append(("X11/Wayland (study, U3)", plots.COLORS["study"],
                   [(metrics.study_ratio(m), None, None) if metrics.study_ratio(m) else None
                    for m in claims], 9))
    return plots.ratios(out, "pairs", "The same software on X11 and on Wayland: X/W ratios "
                        "of medians (above 1: X11 is higher)",
                        [SHORT.get(m.key, m.key) for m in claims], series)


def explained(table, order, pairs, pair):
    """One line per timing claim of pair: the ratio of the medians beside
    the ratio of the counts behind it, each side's figures given."""
    keys = {m.key: m for m in order}
    x, w = pair
    parts = []
    for timing, count, what in EXPLAINED:
        mt, mc = keys.get(timing), keys.get(count)
        if not mt or not mc:
            continue
        tx, tw = table[timing].get(x), table[timing].get(w)
        cx, cw = table[count].get(x), table[count].get(w)
        if not (tx and tw and tx.n and tw.n):
            continue
        text = "%s %s vs %s %s%s" % (SHORT.get(timing, timing), fmt(tx.median),
                                     fmt(tw.median), mt.unit,
                                     " (%sx)" % fmt(tx.median / tw.median) if tw.median else "")
        if cx and cw and cx.n and cw.n:
            text += "; %s %s vs %s%s" % (what, fmt(cx.median), fmt(cw.median),
                                        " (%sx)" % fmt(cx.median / cw.median)
                                        if cw.median else "")
        else:
            text += "; %s not counted" % what
        parts.append(text)
    return "; ".join(parts) or "no timing both stacks have"


def blocks(results, out, table, order, pairs, study_text):
    have, absent = present(results)
    if not have:
        return []
    label = [stats.PAIR_LABEL[p] for p in have]
    out_blocks = [("h2", "Pairs: the same software on X11 and on Wayland"),
                  ("p", "The study compared one project built for both architectures, so that "
                        "what differed was the architecture. Each pair below is one project on "
                        "both: X/W ratios of medians with their 95% intervals (paired rounds), "
                        "the study's beside them; a render figure of a stack that painted "
                        "under its rate is marked (see Painted rate).")]
    out_blocks.append(("table", ["claim", "study X/W (U3)"] + label,
                       verdict_rows(results, order, pairs, have, study_text)))
    out_blocks.append(("svg", "pairs", plot(out, order, pairs, have)))
    out_blocks.append(("p", "What the counts say, per pair (medians; X11 side first): " +
                       " ".join("**%s**: %s." % (stats.PAIR_LABEL[p], explained(
                           table, order, pairs, p)) for p in have)))
    if absent:
        out_blocks.append(("p", "Absent: " + "; ".join(absent) + "."))
    return out_blocks
