"""summary.csv, report.md and a self-contained report.html (SVG plots made
by gnuplot, inlined), from results.json alone (`duet report DIR` rebuilds
them offline). The report opens with the verdict on each of the study's
claims, then the ratios between stacks with their intervals, where the
launch time goes, and the absolute figures beside the study's Odroid U3
numbers."""
import csv
import os

from duet_bench import (experiments, metrics, plots, report_arch, report_hops,
                        report_painted, report_pairs, report_switches, stats)
from duet_bench.blocks import to_html, to_md
from duet_bench.report_figures import SIZES, fmt, timeline_blocks
from duet_bench.study import BOARD, STUDY

PAIR_LABEL = stats.PAIR_LABEL
# Short names of the claims for plot tick labels.
SHORT = {"launch_ms": "launch", "launch_submitted_ms": "launch (submitted)",
         "launch_ipc": "IPC launch", "render_fps": "render fps", "flush_ms": "flush",
         "render_ipc_per_frame": "IPC/frame", "cpu_peak": "CPU peak", "resize_ms": "resize",
         "resize_ipc": "IPC/resize"}
EMULATION_WARNING = "figures under emulation are not timings"




def r4(v):
    return round(v, 4) if isinstance(v, float) else v


def ratio_text(res):
    """"1.23 [1.10, 1.40]", or the ratio with why there is no interval."""
    if not res or res.get("ratio") is None:
        return "-"
    if res.get("ci_low") is not None:
        return "%.3g [%.3g, %.3g]" % (res["ratio"], res["ci_low"], res["ci_high"])
    return "%.3g" % res["ratio"]


def study_text(m):
    sr = metrics.study_ratio(m)
    if sr is None:
        return "-"
    s = STUDY.get(m.study, {})
    if s.get("at_least"):
        return ">= %.3g" % sr
    return "%.3g (%s / %s)" % (sr, fmt(s.get("x11")), fmt(s.get("wayland")))


# ------------------------------------------------------------ summary.csv
CSV_COLUMNS = ["metric", "row", "stack", "n", "min", "median", "max", "cv", "ratio", "ci_low",
               "ci_high", "rounds", "verdict", "study_ratio", "status", "study_x11",
               "study_wayland", "unit"]


def write_csv(results, out, table=None, order=None, pairs=None):
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        w.writerows(csv_rows(results, table, order, pairs))


def csv_rows(results, table=None, order=None, pairs=None):
    """One row per metric and stack (row "stack": n, min, median, max,
    cv) and one per metric and pair of stacks (row "ratio": ratio of
    medians, ci_low, ci_high, verdict); then resize per size and mode."""
    if table is None:
        table, order = metrics.cells(results)
        pairs = metrics.ratios(results, table, order)
    rows = []
    for m in order:
        s = STUDY.get(m.study, {})
        for st, c in table[m.key].items():
            rows.append([m.key, "stack", st, c.n, r4(c.min), r4(c.median), r4(c.max),
                         r4(c.cv), "", "", "", len(c.rounds), "", "", c.status,
                         s.get("x11", ""), s.get("wayland", ""), m.unit])
        for pm, (a, b), res in pairs:
            if pm is not m:
                continue
            rows.append([m.key, "ratio", PAIR_LABEL[(a, b)], "%d/%d" % (res["n_a"], res["n_b"]),
                         "", "", "", "", r4(res["ratio"]), r4(res["ci_low"]),
                         r4(res["ci_high"]), res["rounds"], res["verdict"],
                         r4(res["study_ratio"]) if res["study_ratio"] else "",
                         res["why"] or "ok", "", "", "ratio"])
    for st in metrics.stacks_of(results):
        r = metrics.exp(results, "resize", st)
        if not r:
            continue
        for mode in ("client", "server"):
            for i, size in enumerate(SIZES):
                vals = [s["ms"] for s in r.get("samples", [])
                        if s.get("requested_mode") == mode and s.get("step") == i + 1]
                if vals:
                    rows.append(["resize_ms_%s_%s" % (mode, size), "stack", st, len(vals),
                                 r4(min(vals)), r4(stats.median(vals)), r4(max(vals)),
                                 r4(stats.cv(vals)), "", "", "", "", "", "", "ok", "", "",
                                 "ms"])
    return rows


# ------------------------------------------------------------ header
def machine_rows(results):
    m = results.get("machine") or {}
    v = results.get("versions") or {}
    opts = results.get("options") or {}
    freq = m.get("cpufreq")
    if isinstance(freq, dict) and freq.get("status") == "ok":
        ftext = "; ".join("%s %s %s..%s kHz (now %s)" % (
            c.get("cpu"), c.get("governor"), c.get("min_khz"), c.get("max_khz"),
            c.get("cur_khz")) for c in freq.get("cpus", []))
    elif isinstance(freq, dict):
        ftext = "unavailable (%s); /proc/cpuinfo MHz: %s" % (
            freq.get("why"), ", ".join(fmt(x) for x in freq.get("cpuinfo_mhz", [])) or "-")
    else:
        ftext = "not recorded"
    orders = results.get("round_orders") or []
    return [
        ["machine", "%s, %s cores, kernel %s (%s), %s MiB" % (
            m.get("cpu_model"), m.get("cores"), m.get("kernel"), m.get("arch"),
            m.get("mem_mib")), BOARD],
        ["virtualization", "%s%s" % (m.get("virtualization"), (
            "; " + EMULATION_WARNING.upper()) if m.get("emulation") else ""), "none"],
        ["CPU governor / frequency", "%s; %s" % (results.get("governor"), ftext), "-"],
        ["CPU scheduler", "autogroup %s (every process of a stack in a session of its own)"
         % m.get("sched_autogroup", "not recorded"), "-"],
        ["load and steal", load_text(results), "-"],
        ["CPU frequency per job", freq_text(results), "-"],
        ["cost of one context switch", report_switches.cost_text(results), "-"],
        ["versions", ", ".join("%s %s" % (k, x) for k, x in v.items() if x), "Tizen 3.0"],
        ["rendering", "Mesa (%s); env %s; app engine %s (launch, cpu, resize), render "
         "experiment: %s" % (v.get("mesa"), results.get("render_env"), opts.get("engine"),
                             ", ".join(opts.get("render_engines") or [opts.get("engine")])),
         "Mali-400 GLES2 driver"],
        ["order", "%s round(s), the stacks in a random order in each round (seed %s): %s" % (
            opts.get("rounds", 1), results.get("seed"), " | ".join(", ".join(o) for o in orders))
         if orders else "%s round(s), the stacks in a fixed order in each round (a run from "
         "before the random order)" % opts.get("rounds", 1), "-"],
        ["server drawing engine", renderer_text(results), "Mali-400 GLES2 (all stacks)"],
        ["compositor frame clock", "60 Hz; render experiment: %s (duet-compositor, duet-xwm; "
         "weston fixed 60 Hz, xcompmgr on every damage)" % "; then ".join(
             refresh_text(hz) for hz in opts.get("render_refreshes")
             or [opts.get("render_refresh", 0)]), "display rate"],
    ]


def renderer_text(results):
    """Which engine drew each stack's frames (duet bench --renderer)."""
    per = ", ".join("%s %s" % (name, rec["renderer"])
                    for name, rec in (results.get("stacks") or {}).items()
                    if isinstance(rec, dict) and rec.get("renderer"))
    r = results.get("renderer") or "gl"
    return "--renderer %s%s: %s" % (
        r, "" if r == "pixman" else " (duet's servers and weston on GLES2; xcompmgr and E in "
        "software: --renderer pixman compares like with like)", per or "not recorded")


def load_text(results):
    m = results.get("machine") or {}
    loads, steals = [], []
    for per in (results.get("experiments") or {}).values():
        for rec in per.values():
            for s in rec.get("samples", []):
                if isinstance(s.get("loadavg"), list) and s["loadavg"]:
                    loads.append(s["loadavg"][0])
                if isinstance(s.get("steal_pct"), (int, float)):
                    steals.append(s["steal_pct"])
    text = "at start: load %s, steal since boot %s%%" % (
        " ".join(fmt(x) for x in m.get("loadavg") or []) or "-",
        fmt((m.get("steal") or {}).get("pct")))
    if loads:
        text += "; per sample: 1-min load median %s (max %s)" % (fmt(stats.median(loads)),
                                                                 fmt(max(loads)))
    if steals:
        text += ", steal median %s%% (max %s%%)" % (fmt(stats.median(steals)), fmt(max(steals)))
    return text


def freq_text(results):
    """Governors and the range of current kHz over every sample's job
    (samples.cpufreq), or why there is none."""
    govs, cur, none = set(), [], 0
    for per in (results.get("experiments") or {}).values():
        for rec in per.values():
            for s in rec.get("samples", []):
                f = s.get("cpufreq")
                if not isinstance(f, dict):
                    continue
                if f.get("status") == "unavailable":
                    none += 1
                    continue
                govs.update(g for g in f.get("governor") or [] if g)
                cur.extend(k for k in f.get("cur_khz") or [] if isinstance(k, int))
    if cur:
        return "governors %s; current %s..%s kHz over the jobs' CPUs" % (
            ", ".join(sorted(govs)) or "-", min(cur), max(cur))
    if none:
        return "no cpufreq on this machine (read at every job): frequencies unknown"
    return "not recorded per job (a run from before issue 14)"


def refresh_text(hz):
    return "%d Hz" % hz if hz else "unthrottled (repaint on every damage)"


# ------------------------------------------------------------ verdicts and ratios
def verdict_rows(order, pairs):
    rows = []
    for m in order:
        if not m.claim:
            continue
        got = {p: res for pm, p, res in pairs if pm is m}
        xw, ow = got.get(("x11", "wayland")), got.get(("openbox", "weston"))
        rows.append([m.claim, study_text(m), ratio_text(xw), xw["verdict"] if xw else "-",
                     ratio_text(ow), ow["verdict"] if ow else "-"])
    return rows


def ratio_plot(out, order, pairs):
    claims = [m for m in order if m.claim]
    series = []
    for pair, pt in ((("x11", "wayland"), 7), (("openbox", "weston"), 5)):
        vals = []
        for m in claims:
            res = next((r for pm, p, r in pairs if pm is m and p == pair), None)
            vals.append((res["ratio"], res["ci_low"], res["ci_high"])
                        if res and res["ratio"] else None)
        series.append((PAIR_LABEL[pair] + " (here)", plots.COLORS[PAIR_LABEL[pair]], vals, pt))
    series.append(("X11/Wayland (study, U3)", plots.COLORS["study"],
                   [(metrics.study_ratio(m), None, None) if metrics.study_ratio(m) else None
                    for m in claims], 9))
    return plots.ratios(out, "ratios", "X/W ratios of medians: above 1, X11 is higher",
                        [SHORT.get(m.key, m.key) for m in claims], series)


def under_rate_mark(m, pair, results):
    """" (painted under rate: ST)" on a render figure of a pair with a stack
    that painted under its rate in the runs the figure is of
    (report_painted.flagged_for), else ""."""
    if not m.key.startswith(("render_", "flush_")):
        return ""
    bad = [st for st in pair if st in report_painted.flagged_for(results, m.key)]
    return " (painted under rate: %s)" % ", ".join(bad) if bad else ""


def ratio_table_rows(order, pairs, table, results=None):
    rows = []
    for m in order:
        got = [(p, res) for pm, p, res in pairs if pm is m]
        if not got:
            continue
        cvs = ", ".join("%s %.0f%%" % (st, 100 * c.cv) for st, c in table[m.key].items()
                        if c.cv is not None) or "-"
        got = dict(got)
        rows.append([m.key] + [ratio_text(got.get(p)) + (
            " " + got[p]["verdict"] if p in got and not got[p]["verdict"].startswith(
                "no interval") else "") + (under_rate_mark(m, p, results)
                                           if p in got and results else "")
            for p in stats.PAIRS] + [cvs])
    return rows


























def ipc_table(results, st):
    """Per process and syscall: strace and in-process counts, one launch."""
    ipc = (results.get("ipc") or {}).get(st, {})
    s = (ipc.get("strace_launch") or {}).get("processes", {})
    p = (ipc.get("launch") or {}).get("processes", {})
    rows = []
    for role in ("server", "wm", "compositor", "xwayland", "app"):
        sp, pp = s.get(role, {}), p.get(role, {})
        calls = sorted(set(sp.get("per_call", {})) | set(pp.get("per_call", {})))
        for c in calls:
            a = sp.get("per_call", {}).get(c, {})
            b = pp.get("per_call", {}).get(c, {})
            rows.append([role, c, fmt(a.get("all")), fmt(a.get("unix")), fmt(b.get("all")),
                         fmt(b.get("unix")), fmt(b.get("unix_bytes"))])
        if sp or pp:
            rows.append([role, "**IPC on Unix sockets**", "", fmt(sp.get("ipc_unix")), "",
                         fmt(pp.get("ipc_unix")), ""])
            peers = "strace: %s; in-process: %s" % (
                ", ".join("%s %d" % kv for kv in sorted(sp.get("peers", {}).items())) or "-",
                ", ".join("%s %d" % kv for kv in sorted(pp.get("peers", {}).items())) or "-")
            rows.append([role, "by peer", peers, "", "", "", ""])
    return rows


def ipc_blocks(results):
    blocks = [("h2", "IPC breakdown for one launch: strace and the in-process counter"),
              ("p", "Two separate launches of duet-launch in each stack: one with strace "
               "attached to every process, one with libduet-ipc-count.so preloaded. "
               "'all' counts calls on any fd, 'unix' those on Unix sockets (the IPC).")]
    for st in metrics.stacks_of(results):
        rows = ipc_table(results, st)
        if not rows:
            continue
        blocks.append(("h3", st))
        blocks.append(("table", ["process", "syscall", "strace all", "strace unix",
                                 "in-process all", "in-process unix", "unix bytes"], rows))
        proto = ((results.get("ipc") or {}).get(st, {}).get("launch") or {}).get("protocol")
        if isinstance(proto, dict):
            if "unavailable" in proto:
                blocks.append(("p", "Protocol messages: unavailable: %s" % proto["unavailable"]))
            else:
                blocks.append(("p", "Protocol messages (%s): %s requests, %s events%s." % (
                    proto.get("source"), proto.get("requests"), proto.get("events"),
                    (", %s request bytes, %s event bytes" % (proto["request_bytes"],
                                                             proto["event_bytes"]))
                    if "request_bytes" in proto and "event_bytes" in proto else "")))
    return blocks


def failure_rows(results):
    fails = []
    for e, per in (results.get("experiments") or {}).items():
        for st, r in per.items():
            if r.get("status") in ("failed", "skipped", "interrupted"):
                fails.append([e, st, r["status"], (r.get("reason") or "")[:300],
                              ", ".join(sorted(r.get("logs", {})))])
    for st, per in (results.get("ipc") or {}).items():
        for e, r in per.items():
            if isinstance(r, dict) and r.get("status") in ("failed", "skipped"):
                fails.append(["ipc " + e, st, r["status"], (r.get("reason") or "")[:300],
                              ", ".join(sorted(r.get("logs", {}))) if isinstance(
                                  r.get("logs"), dict) else ""])
    return fails


def stack_rows(results):
    rows = []
    for st, rec in (results.get("stacks") or {}).items():
        paths = set()
        for e in ("launch", "render", "resize"):
            r = metrics.exp(results, e, st) or {}
            for s in r.get("samples", []):
                if s.get("path"):
                    paths.add("%s/%s" % (s.get("presentation"), s.get("path")))
        rows.append([st, rec.get("status", "?") + (": " + rec["reason"] if rec.get("reason")
                                                     else ""),
                     "; ".join(sorted(paths)) or "-", rec.get("content_path", "-"),
                     "; ".join(rec.get("notes", [])) or "-",
                     "<br>".join("%s: `%s`" % kv for kv in sorted(rec.get("commands", {})
                                                                   .items()))])
    return rows


# ------------------------------------------------------------ the report
def blocks_of(results, out, table, order, pairs, src=None):
    m = results.get("machine") or {}
    blocks = [("h1", "duet bench report")]
    if m.get("emulation"):
        blocks.append(("p", "**WARNING: this run was under emulation (%s): %s.** Ratios "
                       "between stacks may still say something about the work done; the "
                       "times do not." % (m["emulation"], EMULATION_WARNING)))
    blocks.append(("p", "Command: `%s`. Started %s, finished %s%s." % (
        results.get("command"), results.get("started"), results.get("finished"),
        " (INTERRUPTED: partial results)" if results.get("interrupted") else "")))
    blocks.append(("h2", "Verdict on the study's claims"))
    blocks.append(("table", ["claim", "study X/W (U3)", "x11/wayland here [95% CI]", "verdict",
                             "openbox/weston here [95% CI]", "verdict"],
                   verdict_rows(order, pairs)))
    rounds = (results.get("options") or {}).get("rounds", 1)
    blocks.append(("p", "Ratio = median of the X stack / median of the Wayland stack over the "
                   "same rounds; the interval is a %d%% percentile bootstrap over paired "
                   "rounds (%d resamples, seeded). \"reproduced\": the interval lies on the "
                   "study's side of 1; \"not reproduced\": on the other side; \"no "
                   "difference\": it includes 1. IPC counts come from one counting run per "
                   "stack: a count ratio within %.2fx of 1 reads \"no difference\". %s" % (
                       round(100 * stats.CONFIDENCE), stats.BOOTSTRAP_RESAMPLES,
                       stats.COUNT_TOLERANCE,
                       "This run has %d round(s): timings need %d paired rounds for an "
                       "interval, so they get none here rather than an invented one."
                       % (rounds, stats.MIN_ROUNDS) if rounds < stats.MIN_ROUNDS else "")))
    blocks.append(("svg", "ratios", ratio_plot(out, order, pairs)))
    blocks.extend(report_pairs.blocks(results, out, table, order, pairs, study_text))
    blocks.append(("h2", "Every metric, every pair"))
    blocks.append(("table", ["metric"] + [PAIR_LABEL[p] for p in stats.PAIRS] +
                   ["coefficient of variation per stack"],
                   ratio_table_rows(order, pairs, table, results)))
    blocks.extend(report_arch.blocks(results, table, order))
    blocks.extend(timeline_blocks(results, out))
    blocks.extend(report_hops.blocks(results, out, src or out))
    blocks.append(("h2", "Machine and run"))
    blocks.append(("table", ["", "here", "study"], machine_rows(results)))
    blocks.append(("p", "Our numbers: min / median / max over runs. The study's numbers were "
                   "measured on a different machine, software and apps: compare the ratios "
                   "between stacks, not the absolute values. Timing runs carry no counters or "
                   "tracers; IPC counts come from separate runs (tracing distorts time). "
                   "glmark2 runs only in the thirdparty and sweep experiments: its Wayland build does a "
                   "round trip per frame and its X11 build does not."))
    blocks.append(("h2", "Stacks"))
    blocks.append(("table", ["stack", "status", "presentation/drawing path (app)",
                             "window content path (compositor)", "notes", "commands"],
                   stack_rows(results)))
    for e in experiments.ALL:
        blocks.extend(e.report(results, out, table, order, pairs))
    blocks.extend(report_switches.blocks(results))
    blocks.extend(ipc_blocks(results))
    blocks.append(("h2", "Failures"))
    blocks.append(("table", ["experiment", "stack", "status", "reason", "logs in results.json"],
                   failure_rows(results) or [["-", "-", "none", "", ""]]))
    blocks.append(("p", "Method: docs/methodology.md in the duet source tree."))
    return blocks


def write_all(results, out, src=None):
    """The report of results into out; src: the results directory, where
    the trace files are (default out)."""
    os.makedirs(os.path.join(out, "plots"), exist_ok=True)
    table, order = metrics.cells(results)
    pairs = metrics.ratios(results, table, order)
    write_csv(results, out, table, order, pairs)
    blocks = blocks_of(results, out, table, order, pairs, src)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(to_md(blocks))
    with open(os.path.join(out, "report.html"), "w") as f:
        f.write(to_html(blocks, "duet bench report"))


def summary_table(results):
    """The terminal summary: the verdicts, then every cell."""
    table, order = metrics.cells(results)
    pairs = metrics.ratios(results, table, order)
    lines = []
    emulation = (results.get("machine") or {}).get("emulation")
    if emulation:
        lines.append("WARNING: run under emulation (%s): %s" % (emulation, EMULATION_WARNING))
    lines.append("%-26s %-22s %-28s %s" % ("claim", "study X/W", "x11/wayland here", "verdict"))
    for row in verdict_rows(order, pairs):
        lines.append("%-26s %-22s %-28s %s" % (row[0], row[1], row[2], row[3]))
    lines.append("")
    lines.append("%-24s %-9s %12s %12s %12s %6s" % ("metric", "stack", "min", "median", "max",
                                                    "cv"))
    for m in order:
        for st, c in table[m.key].items():
            if c.n:
                lines.append("%-24s %-9s %12s %12s %12s %6s" % (
                    m.key, st, fmt(c.min), fmt(c.median), fmt(c.max),
                    "%.0f%%" % (100 * c.cv) if c.cv is not None else "-"))
            elif not c.status.startswith("ok"):
                lines.append("%-24s %-9s %s" % (m.key, st, c.status[:60]))
    return "\n".join(lines)
