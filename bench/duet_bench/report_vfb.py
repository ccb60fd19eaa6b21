"""The report's section on the vfb experiment (vfb.py): which detection
methods work here and why not, detection time per method and layout with
the VM-display study's result beside it, and whether tiles cut detection
time here: the tiled/linear ratio of medians with its paired bootstrap
interval (stats.paired_ratio, the runs as the resampled unit)."""
from duet_bench import metrics, plots, stats
from duet_bench.vfb import LAYOUTS, METHODS, STUDY_NOTE, STUDY_TILED_OVER_LINEAR, WORKLOADS

ALL = "all workloads"


def _fmt(v, digits=3):
    return "-" if v is None else "%.*g" % (digits, v)


def _samples(rec, **want):
    return [s for s in (rec or {}).get("samples", [])
            if all(s.get(k) == v for k, v in want.items())]


def _per_run(samples, per_frame=True):
    """{run: [detection ms]} of samples: every frame's, or (per_frame
    False) each sample's median, so that every workload weighs the same
    whatever its frame rate."""
    out = {}
    for s in samples:
        if per_frame and s.get("detect_ms_all"):
            vals = s["detect_ms_all"]
        else:
            vals = [s["detect_ms"]] if s.get("detect_ms") else []
        out.setdefault(s.get("run", 1), []).extend(vals)
    return out


def tiled_ratio(rec, method, workload, seed):
    """tiled / linear detection time of method on workload, paired by run:
    the ratio of the medians of the frames' times; over every workload
    (workload None), of the workloads' medians (one per workload and run).
    The paired_ratio result with its verdict, against the study's 0.90 for
    the methods that look at the framebuffer (the damage list does not
    depend on the layout), or None without both layouts."""
    want = {"method": method}
    if workload:
        want["workload"] = workload
    t = _per_run(_samples(rec, layout="tiled", **want), per_frame=bool(workload))
    lin = _per_run(_samples(rec, layout="linear", **want), per_frame=bool(workload))
    if not t or not lin:
        return None
    res = stats.paired_ratio(t, lin, seed)
    res["verdict"] = stats.verdict(res, None if method == "damage" else
                                   STUDY_TILED_OVER_LINEAR)
    return res


def _ratio_text(res):
    if not res or res.get("ratio") is None:
        return "-"
    if res.get("ci_low") is None:
        return "%.3g (no interval: %s)" % (res["ratio"], res.get("why"))
    return "%.3g [%.3g, %.3g]" % (res["ratio"], res["ci_low"], res["ci_high"])


def availability_rows(results):
    rows = []
    for st in metrics.stacks_of(results):
        rec = metrics.exp(results, "vfb", st)
        if not rec:
            continue
        if rec.get("status") == "skipped":
            rows.append([st, "all", "skipped: " + (rec.get("reason") or "")])
            continue
        gone = rec.get("unavailable") or {}
        for m in METHODS:
            rows.append([st, m, "unavailable: " + gone[m] if m in gone else
                         "available" if _samples(rec, method=m) else "not run"])
    return rows


def stats_rows(results):
    rows = []
    for st in metrics.stacks_of(results):
        rec = metrics.exp(results, "vfb", st)
        if not rec or rec.get("status") == "skipped":
            continue
        for w in WORKLOADS:
            for layout in LAYOUTS.get(st, []):
                for m in METHODS:
                    ss = _samples(rec, workload=w, layout=layout, method=m)
                    if not ss:
                        continue
                    det = [s["detect_ms"] for s in ss if s.get("detect_ms") is not None]

                    def med(k):
                        return stats.median([s.get(k) for s in ss])
                    rows.append([st, w, layout, m, str(len(ss)),
                                 "%s [%s, %s]" % (_fmt(stats.median(det)), _fmt(min(det)),
                                                  _fmt(max(det))) if det else "-",
                                 _fmt(med("bytes_read_per_frame") / 1e6 if
                                      med("bytes_read_per_frame") is not None else None),
                                 _fmt(med("precision")), _fmt(med("recall")),
                                 _fmt(med("reader_cpu_pct")), _fmt(med("writer_fps"))])
    return rows


def ratio_rows(results):
    seed = metrics.seed_of(results)
    rows = []
    for st in metrics.stacks_of(results):
        rec = metrics.exp(results, "vfb", st)
        if not rec or len(LAYOUTS.get(st, [])) < 2 or rec.get("status") == "skipped":
            continue
        for m in METHODS:
            for w in [None] + list(WORKLOADS):
                res = tiled_ratio(rec, m, w, seed)
                if res:
                    rows.append([st, m, w or ALL, _ratio_text(res), res["verdict"],
                                 str(res.get("rounds"))])
    return rows


def headline(results):
    """The sentence on whether tiles cut detection time here."""
    rec = metrics.exp(results, "vfb", "wayland")
    res = tiled_ratio(rec, "compare", None, metrics.seed_of(results)) if rec else None
    if not res or res.get("ratio") is None:
        return ("Tiles vs linear rows: not measured in this run (duet-compositor's vfb "
                "records have no compare samples of both layouts).")
    r = res["ratio"]
    if res.get("ci_low") is None:
        said = ("no interval (%s), so this run cannot say whether tiles cut detection time; "
                "the point estimate is %s" % (res.get("why"),
                                              "lower with tiles" if r < 1 else "not lower"))
    elif res["ci_high"] < 1:
        said = "tiles cut detection time here"
    elif res["ci_low"] > 1:
        said = "tiles make detection slower here"
    else:
        said = "no difference between the layouts can be told here (the interval includes 1)"
    return ("**Do tiles cut detection time here? compare on duet-compositor, every workload: "
            "tiled / linear = %s: %s.** The study saw %.2f (tiles about 10%% faster)."
            % (_ratio_text(res), said, STUDY_TILED_OVER_LINEAR))


def detect_plot(out, results):
    """Detection time per stack, method and layout (median of the runs'
    medians, every workload; points on a log scale: the damage read is a
    thousand times faster than a compare), and the study's tiled/linear result drawn as a
    bar of tiled = 0.90 x our linear compare."""
    rows = []
    for st in metrics.stacks_of(results):
        rec = metrics.exp(results, "vfb", st)
        if not rec or rec.get("status") == "skipped":
            continue
        for m in METHODS:
            for layout in LAYOUTS.get(st, []):
                det = [s["detect_ms"] for s in _samples(rec, method=m, layout=layout)
                       if s.get("detect_ms")]
                if det:
                    rows.append(("%s %s %s" % (st, m, layout), stats.median(det), min(det),
                                 max(det), plots.COLORS.get(st, 0x888888)
                                 if layout == "linear" else 0x2e9e6b))
            if st == "wayland" and m == "compare":
                lin = [r for r in rows if r[0] == "wayland compare linear"]
                if lin:
                    v = lin[0][1] * STUDY_TILED_OVER_LINEAR
                    rows.append(("study: tiled = 0.90 x linear", v, v, v,
                                 plots.COLORS["study"]))
    if not rows:
        return None
    data, svg = plots.paths(out, "vfb_detect")
    with open(data, "w") as f:
        for i, (label, med, lo, hi, color) in enumerate(rows):
            f.write("%d %g %g %g %s %d\n" % (i, med, lo, hi, plots.qs(label), color))
    script = plots.HEAD % (820, 440, plots.qs(svg)) + """set title %s
set ylabel "ms per frame (log scale; bars: min..max over runs)"
set logscale y
set xtics rotate by 30 right nomirror
set grid ytics
set xrange [-0.6:%g]
plot %s using 1:2:3:4:6:xtic(5) with yerrorbars lc rgb variable pt 7 ps 1.3 lw 1.5 notitle
""" % (plots.qs("Time to find what changed, per method and layout (median of runs)"),
       len(rows) - 0.4, plots.qs(data))
    return plots.run(script, svg)


def ratio_plot(out, results):
    """tiled / linear per method and workload with its interval; the
    study's 0.90 as a series of its own."""
    rec = metrics.exp(results, "vfb", "wayland")
    if not rec or rec.get("status") == "skipped":
        return None
    seed = metrics.seed_of(results)
    claims, ours = [], []
    for m in METHODS:
        for w in [None] + list(WORKLOADS):
            res = tiled_ratio(rec, m, w, seed)
            if res and res.get("ratio"):
                claims.append("%s %s" % (m, w or "all"))
                ours.append((res["ratio"], res.get("ci_low"), res.get("ci_high")))
    if not claims:
        return None
    study = [(STUDY_TILED_OVER_LINEAR, None, None) if c.startswith("compare") else None
             for c in claims]
    return plots.ratios(out, "vfb_tiled_ratio", "Detection time, tiled / linear "
                        "(duet-compositor; < 1: tiles faster)", claims,
                        [("here", plots.COLORS["wayland"], ours, 7),
                         ("study (VM display)", plots.COLORS["study"], study, 9)])


def blocks(results, out, table, order, pairs):
    """The section, or nothing for a run without the experiment."""
    if not any(metrics.exp(results, "vfb", st) for st in metrics.stacks_of(results)):
        return []
    notes = []
    for st in metrics.stacks_of(results):
        rec = metrics.exp(results, "vfb", st) or {}
        for w, why in (rec.get("workloads_not_run") or {}).items():
            line = "%s: %s" % (w, why)
            if line not in notes:
                notes.append(line)
    return [
        ("h2", "Virtual display: finding what changed (vfb)"),
        ("p", "duet-compositor writes each frame's damage into its --vfb file, in linear rows "
         "or in 32x32-pixel tiles of one 4 KiB page each, and publishes its own damage "
         "beside the frame; Xvfb -shmem keeps its (linear) framebuffer in a SysV segment. "
         "duet-vfb-reader finds each frame's changed regions by one method at a time: "
         "compare (byte comparison with its copy: per tile, or per row then per 32-pixel "
         "strip), softdirty (the writer's soft-dirty page bits), uffd-wp (userfaultfd write "
         "protection), damage (the compositor's own, the exact answer). Detection time is "
         "per frame; precision and recall are in 32x1-pixel strips against the compositor's "
         "damage (on Xvfb: X's own, Damage events on the root window). Study: " + STUDY_NOTE + ". docs/methodology.md defines "
         "the measures and what each method needs from the kernel."),
        ("p", headline(results)),
        ("table", ["stack", "method", "here"], availability_rows(results)),
        ("svg", "vfb_detect", detect_plot(out, results)),
        ("svg", "vfb_tiled_ratio", ratio_plot(out, results)),
        ("table", ["stack", "workload", "layout", "method", "runs",
                   "detect ms median [min, max]", "MB read/frame", "precision", "recall",
                   "reader CPU %", "writer fps"], stats_rows(results)),
        ("table", ["stack", "method", "workload", "tiled / linear [95% CI]",
                   "verdict (against the study's 0.90, damage: none)", "runs paired"],
         ratio_rows(results)),
        ("p", "Ratios are of medians of the per-frame detection times (over every workload: "
         "of the workloads' medians, each workload weighing the same), paired by run (each "
         "run starts a stack per layout, the layouts' order alternating), with a %d%% "
         "percentile bootstrap over runs (%d resamples, seeded; %d runs or more). The "
         "damage method reads a list whatever the layout: its ratio is no test of the "
         "study's claim. "
         "Workloads not run: %s." % (round(100 * stats.CONFIDENCE), stats.BOOTSTRAP_RESAMPLES,
                                      stats.MIN_ROUNDS, "; ".join(notes) or "none")),
    ]
