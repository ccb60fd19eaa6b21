"""The report's sections on the study's four experiments, figure by
figure (Fig. 4-9: launch, render, cpu, resize), and where the launch time
goes, which the report opens with; the cells a figure shows and how a
number is written in every part of the report."""
from duet_bench import metrics, plots, stats
from duet_bench.study import STUDY, UNITS

SIZES = ["100x100", "1000x240", "850x900", "400x1000", "1800x500", "999x999", "333x999",
         "1920x1080"]


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.3g" % v if abs(v) < 100 else "%.1f" % v
    return str(v)


def ratio_cell(res):
    """A ratio of medians with its interval and verdict ("1.02 [0.97, 1.08]
    no difference"; the verdict metrics.ratios gave it, else stats.verdict's),
    or with why it has none (stats.paired_ratio's why)."""
    if not res or res.get("ratio") is None:
        return "- (%s)" % res["why"] if res and res.get("why") else "-"
    if res.get("ci_low") is not None:
        return "%.3g [%.3g, %.3g] %s" % (res["ratio"], res["ci_low"], res["ci_high"],
                                         res.get("verdict") or stats.verdict(res))
    return "%.3g (no interval: %s)" % (res["ratio"], res.get("why"))


def metric_ratio_cell(m, res, both_zero=False):
    """ratio_cell for a ratio of Metric m: a count's ratio (one counting
    run each, no interval) with its verdict, and two zero medians (both_zero)
    read "both 0" rather than no ratio."""
    if not res:
        return "-"
    if res.get("ratio") is None:
        # An idle server's zero over another's zero is no ratio, but it
        # is the answer: say so.
        return "- (both 0)" if both_zero else "- (%s)" % res.get("why")
    if m.count and res.get("ci_low") is None:
        return "%.3g (%s)" % (res["ratio"], res["verdict"])
    return ratio_cell(res)


# ------------------------------------------------------------ launch timeline
def timeline_segments(points):
    """[(from, to, from ms, to ms)] between the known points in time
    order (a stack whose "presented" comes before "composited" shows so)."""
    known = sorted(((ms, p) for p, ms in points.items()), key=lambda x: x[0])
    return [(a, b, ta, tb) for (ta, a), (tb, b) in zip(known, known[1:]) if tb >= ta]


def timeline_blocks(results, out):
    rows, trows, notes = [], [], []
    for st in metrics.stacks_of(results):
        r = metrics.exp(results, "launch", st) or {}
        kinds = sorted({s.get("kind") for s in r.get("samples", []) if s.get("kind")})
        for kind in (["warm", "cold"] if kinds else [None]):
            if kinds and kind not in kinds:
                continue
            tl = metrics.launch_timeline(results, st, kind)
            label = "%s %s" % (st, kind) if kind else st
            if len(tl["points"]) > 1:
                rows.append((label, timeline_segments(tl["points"])))
            trows.append([label, str(tl["n"])] + [fmt(tl["points"].get(p))
                                                  for p in metrics.LAUNCH_POINTS])
            for p, why in sorted(tl["missing"].items()):
                notes.append("%s: no %s (%s)" % (label, p, why))
            if tl["sources"].get("composited"):
                notes.append("%s: composited from %s" % (label, tl["sources"]["composited"]))
    blocks = [("h2", "Where the launch time goes (fork -> composited)")]
    if not rows:
        blocks.append(("p", "No launch sample of this run carries a timeline (launch samples "
                       "gain `timeline` with issue 8); only the end points are known."))
    else:
        blocks.append(("svg", "launch_timeline", plots.timeline(
            out, "launch_timeline", "Launch timeline per stack (medians, ms since fork)",
            rows)))
    if trows:
        blocks.append(("table", ["stack", "n"] + metrics.LAUNCH_POINTS, trows))
    if notes:
        blocks.append(("p", "; ".join(notes) + "."))
    blocks.append(("p", "Points: exec = the app's main() entered; connected = its display "
                   "connection up; submitted = first frame handed over (commit flushed / swap "
                   "returned); received = a round trip after that; composited = the output "
                   "frame holding the app's first pixels finished (server trace, weston's "
                   "timeline, or the framebuffer observer); presented = the stack's own "
                   "presentation time."))
    blocks.extend(launch_cpu_blocks(results, out))
    return blocks


ROLES = ["server", "wm", "compositor", "xwayland", "app"]


BOOT_MARKS = ["exec", "connected", "submitted", "composited"]


def launch_cpu_rows(results):
    """Per stack: median cpu_ms per process over the warm launches (all
    launches for a result without kinds), the median window-system sum
    per launch, and when the counters were read. Stacks whose samples
    have no cpu_ms (older results) have no row."""
    rows = []
    for st in metrics.stacks_of(results):
        r = metrics.exp(results, "launch", st) or {}
        kind = metrics.launch_kind(results, st)
        samples = [s for s in r.get("samples", []) if (kind is None or s.get("kind") == kind)
                   and isinstance(s.get("cpu_ms"), dict) and s["cpu_ms"]]
        if not samples:
            continue

        def med(vals):
            return stats.median(vals) if vals else None
        per = [med([s["cpu_ms"][role] for s in samples
                    if isinstance(s["cpu_ms"].get(role), (int, float))]) for role in ROLES]
        ws = med([sum(v for k, v in s["cpu_ms"].items() if k != "app") for s in samples])
        until = med([s["cpu_until_ms"] for s in samples
                     if isinstance(s.get("cpu_until_ms"), (int, float))])
        rows.append(["%s %s" % (st, kind) if kind else st, str(len(samples))] +
                    [fmt(v) for v in per] + [fmt(ws), fmt(until)])
    return rows


def bootchart_rows(boot):
    """[(label, [(from ms, to ms, % of one core)])] of a bootchart record:
    a slice runs from the process's previous reading (the first from its
    baseline) to its own."""
    rows = []
    procs = boot.get("processes") or {}
    order = [r for r in ROLES if r != "app"] + sorted(
        r for r in procs if r not in ROLES) + ["app"]
    for role in order:
        pts = procs.get(role)
        if not pts:
            continue
        # The first slice begins at the process's baseline reading, just
        # before the fork for the stack's processes; it is drawn from 0.
        slices, prev = [], min(0.0, (boot.get("start_ms") or {}).get(role, 0.0))
        for t, c in pts:
            if t > prev:
                slices.append((max(prev, 0.0), t, 100.0 * c / (t - prev)))
            prev = t
        total = sum(c for _, c in pts)
        rows.append(("%s (%.1f ms CPU)" % (role, total), slices))
    return rows


def launch_cpu_blocks(results, out):
    blocks = []
    rows = launch_cpu_rows(results)
    charts, notes = [], []
    cores = (results.get("machine") or {}).get("cores")
    cbmax = 100 * cores if isinstance(cores, int) and 1 <= cores <= 4 else 100
    for st in metrics.stacks_of(results):
        boot = (metrics.exp(results, "launch", st) or {}).get("bootchart")
        if not isinstance(boot, dict):
            continue
        if boot.get("status") != "ok":
            notes.append("%s: the sampled launch failed (%s)"
                         % (st, (boot.get("reason") or "?").splitlines()[0][:200]))
            continue
        tl = boot.get("timeline") or {}
        marks = [(p, tl[p] / 1e6) for p in BOOT_MARKS if isinstance(tl.get(p), (int, float))]
        name = "bootchart_" + st
        charts.append(("svg", name, plots.bootchart(
            out, name, "%s: which process ran when (one sampled launch, %s ms slices; "
            "fork -> composited %s ms)" % (st, fmt(boot.get("interval_ms")), fmt(boot.get("ms"))),
            bootchart_rows(boot), marks, boot.get("end_ms"), cbmax)))
        smp = boot.get("sampler") or {}
        notes.append("%s: %s polls, the sampler's own CPU %s ms" % (
            st, fmt(smp.get("polls")), fmt(smp.get("cpu_ms"))))
    if not rows and not charts and not notes:
        return blocks  # a result from before per-launch CPU
    blocks.append(("h3", "Which process ran when"))
    if rows:
        blocks.append(("p", "CPU time of every process from the fork to the moment the "
                       "composited point was known (the 'read at' column, ms since fork), "
                       "in ms, from the scheduler's per-thread accounting "
                       "(/proc/PID/task/*/schedstat) read right before the fork and right "
                       "after; medians over the launches named in the first column."))
        blocks.append(("table", ["stack", "n"] + ["%s ms" % r for r in ROLES] +
                       ["window system ms", "read at ms"], rows))
    if charts:
        blocks.append(("p", "One extra launch per stack, after the timed ones in the first "
                       "round, had the CPU time of every process polled every few ms from "
                       "the fork to composited + 20 ms; each row shows per slice the share "
                       "of one core the process used (white: idle). The polling costs CPU, "
                       "so this launch is not one of the timed samples; its own points are "
                       "the dashed lines."))
        blocks.extend(charts)
    if notes:
        blocks.append(("p", "Sampled launches: " + "; ".join(notes) + "."))
    return blocks


# ------------------------------------------------------------ absolute figures
LAUNCH_FIGURES = [("launch_ms", "Fig. 4: launch time"),
                  ("launch_submitted_ms", "Fig. 4: launch time to submitted"),
                  ("launch_cold_ms", "Launch time, cold (first launch on a fresh stack)"),
                  ("launch_ipc", "Fig. 5: IPC at launch")]
RENDER_FIGURES = [("render_fps", "Fig. 6: rendering score"), ("flush_ms", "Fig. 6: flush time"),
                  ("render_ipc_per_frame", "Fig. 6: IPC per frame"),
                  ("render_cpu_ms_per_frame", "CPU per rendered frame")]
CPU_FIGURES = [("cpu_peak", "Fig. 7: CPU peak")]


def figure_rows(m, cellmap):
    rows = []
    for st, c in cellmap.items():
        if c.n:
            rows.append(("%s" % st, c.median, c.min, c.max, plots.COLORS.get(st, 0x888888)))
    s = STUDY.get(m.study, {})
    if m.study == m.key and s.get("x11") is not None:
        rows.append(("study X11", s["x11"], s["x11"], s["x11"], plots.COLORS["study-x11"]))
        rows.append(("study Wayland", s["wayland"], s["wayland"], s["wayland"],
                     plots.COLORS["study-wayland"]))
    return rows


def cell_rows(cellmap):
    return [[st, c.status] + ([fmt(c.min), fmt(c.median), fmt(c.max), str(c.n),
                               "%.0f%%" % (100 * c.cv) if c.cv is not None else "-"]
                              if c.n else ["-", "-", "-", "0", "-"])
            for st, c in cellmap.items()]


def resize_source_rows(results):
    """Per stack: composited's sources, how many samples have it, the
    medians of request -> composited and -> presented, and the observer's
    CPU (openbox)."""
    rows = []
    for st in metrics.stacks_of(results):
        r = metrics.exp(results, "resize", st)
        if not r or not r.get("samples"):
            continue
        smp = r["samples"]
        comp = [s["composited_ms"] for s in smp if isinstance(s.get("composited_ms"), (int, float))]
        pres = [s["presented_ms"] for s in smp if isinstance(s.get("presented_ms"), (int, float))]
        sources = sorted({(s.get("timeline_source") or {}).get("composited", "").split(";")[0]
                          for s in smp if s.get("composited_ms") is not None} - {""})
        obs = r.get("observer") or {}
        cpu = sum(o.get("cpu_ns") or 0 for o in obs.values())
        wall = sum(o.get("wall_ns") or 0 for o in obs.values())
        rows.append([st, "; ".join(sources) or "-", "%d of %d" % (len(comp), len(smp)),
                     fmt(stats.median(comp)) if comp else "-",
                     fmt(stats.median(pres)) if pres else "-",
                     "%s ms in %s s (%.1f%% of a core)" % (fmt(cpu / 1e6), fmt(wall / 1e9),
                                                           100.0 * cpu / wall)
                     if wall else "-"])
    return rows


def resize_blocks(results, out, table, order):
    blocks = [("h2", "Fig. 8/9: resize time per size (Table 2 sizes)")]
    series, rows = [], []
    for st in metrics.stacks_of(results):
        r = metrics.exp(results, "resize", st)
        if not r:
            continue
        for mode in ("client", "server"):
            pts, cells = [], []
            for i in range(len(SIZES)):
                vals = [s["ms"] for s in r.get("samples", [])
                        if s.get("requested_mode") == mode and s.get("step") == i + 1]
                if vals:
                    pts.append((i, stats.median(vals), min(vals), max(vals)))
                cells.append("%s (%s..%s)" % (fmt(stats.median(vals)), fmt(min(vals)),
                                              fmt(max(vals))) if vals else "-")
            ran = {s.get("mode") for s in r.get("samples", []) if s.get("requested_mode") == mode}
            label = "%s %s" % (st, mode)
            if ran and ran != {mode}:
                label += " (ran as %s)" % ",".join(sorted(x for x in ran if x))
            series.append((label, plots.COLORS.get(st, 0x888888), mode == "server", pts))
            rows.append([st, mode] + cells)
        for n in r.get("notes", []):
            rows.append([st, "note", n] + [""] * 7)
        if r.get("status") not in ("ok", None):
            rows.append([st, r.get("status"), (r.get("reason") or "")[:200]] + [""] * 7)
    blocks.append(("svg", "resize_sizes", plots.resize_sizes(
        out, "resize_sizes", "Resize latency per size, request -> composited (solid: "
        "client-initiated, dashed: server-initiated)\nstudy: no per-size values in its text; "
        "Wayland faster by >=20% at every size", SIZES, series)))
    blocks.append(("table", ["stack", "mode"] + SIZES, rows))
    blocks.append(("p", "Every sample is request -> composited where the stack tells it; "
                   "the table below says where composited came from, how many samples lack "
                   "it (those count request -> presented, with a note in results.json) and "
                   "the medians of both end points."))
    blocks.append(("table", ["stack", "composited from", "samples with composited",
                             "median request -> composited", "median request -> presented",
                             "observer CPU"], resize_source_rows(results)))
    blocks.append(("p", "Study: " + STUDY["resize_note"] + "."))
    blocks.append(("h2", "Fig. 9: IPC per resize"))
    m = next(x for x in order if x.key == "resize_ipc")
    blocks.append(("svg", "resize_ipc", plots.bars(out, "resize_ipc", m.title, m.unit,
                                                   figure_rows(m, table["resize_ipc"]))))
    blocks.append(("table", ["stack", "status", "min", "median", "max", "n", "cv"],
                   cell_rows(table["resize_ipc"])))
    return blocks


def cpu_blocks(results, out):
    blocks = [("h3", "CPU timeline")]
    series, prow = [], []
    for st in metrics.stacks_of(results):
        r = metrics.exp(results, "cpu", st) or {}
        for smp in r.get("samples", [])[:1]:
            pts = []
            for t in smp.get("timeline", []):
                ws = sum(v for k, v in t.items() if k not in ("t_ms", "app"))
                pts.append((t["t_ms"], ws, t.get("app", 0)))
            series.append((st, plots.COLORS.get(st, 0x888888), pts))
            for role, pv in (smp.get("per_process") or {}).items():
                prow.append([st, role, fmt(pv.get("peak")), fmt(pv.get("p95")),
                             fmt(pv.get("mean")), fmt(pv.get("cpu_ms"))])
    blocks.append(("svg", "cpu_timeline", plots.cpu_timeline(
        out, "cpu_timeline", "CPU use over the app life (run 1; study peak: X11 97.6%, "
        "Wayland 66.7%)", series)))
    blocks.append(("table", ["stack", "process (run 1)", "peak %", "p95 %", "mean %",
                             "CPU ms"], prow))
    return blocks


def figures(out, table, order, which):
    """A section per figure of which [(metric key, label)] that has values."""
    blocks = []
    keys = {x.key: x for x in order}
    for key, label in which:
        mm = keys.get(key)
        if not mm or not any(c.n for c in table[key].values()):
            continue
        blocks.append(("h2", "%s: %s" % (label, mm.title)))
        blocks.append(("svg", key, plots.bars(out, key, mm.title, mm.unit,
                                              figure_rows(mm, table[key]))))
        rows = cell_rows(table[key])
        s = STUDY.get(mm.study, {})
        if s.get("x11") is not None:
            rows.append(["study X11 / Wayland (U3)", UNITS.get(mm.study, ""), "",
                         "%s / %s" % (s.get("x11"), s.get("wayland")), "", "", ""])
        blocks.append(("table", ["stack", "status", "min", "median", "max", "n", "cv"], rows))
    return blocks


def launch(results, out, table, order, pairs):
    return figures(out, table, order, LAUNCH_FIGURES)


def render(results, out, table, order, pairs):
    return figures(out, table, order, RENDER_FIGURES)


def cpu(results, out, table, order, pairs):
    blocks = figures(out, table, order, CPU_FIGURES)
    return blocks + cpu_blocks(results, out) if blocks else blocks


def resize(results, out, table, order, pairs):
    return resize_blocks(results, out, table, order)
