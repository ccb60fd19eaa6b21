"""summary.csv, report.md and a self-contained report.html (SVG plots made
by gnuplot, inlined) from results.json. Each figure of the study gets our
numbers for every stack (min/median/max over runs) and the study's Odroid U3
numbers beside them."""
import csv
import html
import os
import shutil
import statistics
import subprocess

from duet_bench.study import BOARD, STUDY, UNITS

COLORS = {"wayland": 0x3a7bd5, "x11": 0xd5533a, "weston": 0x7fb0f0, "openbox": 0xf0a07f,
          "study-wayland": 0x1d3d6b, "study-x11": 0x6b291d}
STUDY_SIDE = {"wayland": "wayland", "weston": "wayland", "x11": "x11", "openbox": "x11"}
SIZES = ["100x100", "1000x240", "850x900", "400x1000", "1800x500", "999x999", "333x999",
         "1920x1080"]


def mmm(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return (min(vals), statistics.median(vals), max(vals), len(vals))


def exp(results, e, stack):
    return results.get("experiments", {}).get(e, {}).get(stack)


def stacks_of(results):
    return list(results.get("stacks", {}).keys())


# ------------------------------------------------------------ metrics
def metrics(results):
    """[(figure key, stack, (min, median, max, n) or None, status text)]"""
    out = []
    for st in stacks_of(results):
        def add(key, vals, rec):
            out.append((key, st, mmm(vals), status_of(rec)))
        r = exp(results, "launch", st)
        if r is not None:
            add("launch_ms", [s["ms"] for s in r["samples"]], r)
        r = exp(results, "render", st)
        if r is not None:
            add("render_fps", [s["score_fps"] for s in r["samples"]], r)
            add("flush_ms", [s["scenes"].get("image_blend_smooth_scaled", {}).get("flush_ms")
                             for s in r["samples"]], r)
        r = exp(results, "cpu", st)
        if r is not None:
            add("cpu_peak", [s["window_system_peak"] for s in r["samples"]], r)
            # The peak is one 50 ms sample and moves with scheduling; the
            # mean over the app's life is the steadier figure.
            add("cpu_mean", [s.get("window_system_mean") for s in r["samples"]], r)
        r = exp(results, "resize", st)
        if r is not None:
            add("resize_ms", [s["ms"] for s in r["samples"]], r)
        ipc = results.get("ipc", {}).get(st, {})
        la = ipc.get("launch", {})
        srv = la.get("processes", {}).get("server", {})
        add("launch_ipc", [srv.get("study_style")] if "study_style" in srv else [], la)
        rr = ipc.get("render", {})
        add("render_ipc_per_frame",
            [rr.get("per_frame_study_style", {}).get("server")], rr)
        rz = ipc.get("resize", {})
        add("resize_ipc", [rz.get("per_resize", {}).get("server", {}).get("study_style")], rz)
    return out


def status_of(rec):
    if not rec:
        return "not run"
    st = rec.get("status", "ok" if rec else "not run")
    if st in ("failed", "skipped"):
        return "%s: %s" % (st, (rec.get("reason") or "").splitlines()[0][:160])
    return st


TITLES = {
    "launch_ms": ("App launch time (fork -> first presented frame)", "ms"),
    "launch_ipc": ("IPC at launch, server side (sendmsg+writev+recvmsg on Unix sockets)", "calls"),
    "render_fps": ("Rendering score (mean fps over the duet-render scenes, unthrottled)", "fps"),
    "flush_ms": ("Flush/swap time per frame, image_blend_smooth_scaled", "ms"),
    "render_ipc_per_frame": ("IPC per rendered frame, server side", "calls/frame"),
    "cpu_peak": ("CPU peak of the window-system processes (server + WM + compositor)",
                 "% of one core"),
    "cpu_mean": ("CPU mean of the window-system processes over the app's life (no study "
                 "figure)", "% of one core"),
    "resize_ipc": ("IPC per resize, server side", "calls/resize"),
    "resize_ms": ("Resize latency, all sizes and modes", "ms"),
}


def write_csv(results, out):
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["metric", "stack", "n", "min", "median", "max", "status",
                    "study_x11", "study_wayland", "unit"])
        for key, st, m, status in metrics(results):
            s = STUDY.get(key, {})
            w.writerow([key, st] + ([m[3], r4(m[0]), r4(m[1]), r4(m[2])] if m else
                                    [0, "", "", ""])
                       + [status, s.get("x11", ""), s.get("wayland", ""), TITLES[key][1]])
        for st in stacks_of(results):
            r = exp(results, "resize", st)
            if not r:
                continue
            for mode in ("client", "server"):
                for i, size in enumerate(SIZES):
                    vals = [s["ms"] for s in r["samples"]
                            if s["requested_mode"] == mode and s["step"] == i + 1]
                    m = mmm(vals)
                    if m:
                        w.writerow(["resize_ms_%s_%s" % (mode, size), st, m[3], r4(m[0]),
                                    r4(m[1]), r4(m[2]), "ok", "", "", "ms"])


def r4(v):
    return round(v, 4) if isinstance(v, float) else v


# ------------------------------------------------------------ plots
def gnuplot(script, path):
    if not shutil.which("gnuplot"):
        return None
    r = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read()


def qs(s):
    return '"%s"' % s.replace('"', "'")


def bar_plot(out, name, title, ylabel, rows):
    """rows: (label, median, min, max, color); study rows have min = max."""
    if not rows:
        return None
    data = os.path.join(out, "plots", name + ".dat")
    with open(data, "w") as f:
        for i, (label, med, lo, hi, color) in enumerate(rows):
            f.write("%d %g %g %g %s %d\n" % (i, med, lo, hi, qs(label), color))
    svg = os.path.join(out, "plots", name + ".svg")
    script = """set terminal svg size 760,380 dynamic font 'sans,11' background '#ffffff'
set output %s
set title %s
set ylabel %s
set style fill solid 0.85 border -1
set boxwidth 0.7
set xtics rotate by -25 nomirror
set grid ytics
set yrange [0:*]
set xrange [-0.6:%g]
plot %s using 1:2:6:xtic(5) with boxes lc rgb variable notitle, \\
     '' using 1:2:3:4 with yerrorbars lc rgb '#000000' pt -1 notitle, \\
     '' using 1:2:(sprintf('%%.3g', $2)) with labels offset 0,0.7 notitle
""" % (qs(svg), qs(title), qs(ylabel), len(rows) - 0.4, qs(data))
    return gnuplot(script, svg)


def figure_rows(results, key):
    rows = []
    for k, st, m, _ in metrics(results):
        if k == key and m:
            rows.append(("%s (here)" % st, m[1], m[0], m[2], COLORS.get(st, 0x888888)))
    s = STUDY.get(key)
    if s:
        rows.append(("X11 (study, U3)", s["x11"], s["x11"], s["x11"], COLORS["study-x11"]))
        rows.append(("Wayland (study, U3)", s["wayland"], s["wayland"], s["wayland"],
                     COLORS["study-wayland"]))
    return rows


def resize_plot(results, out):
    data = os.path.join(out, "plots", "resize_sizes.dat")
    series = []
    with open(data, "w") as f:
        for st in stacks_of(results):
            r = exp(results, "resize", st)
            if not r or not r["samples"]:
                continue
            for mode in ("client", "server"):
                pts = []
                for i in range(len(SIZES)):
                    m = mmm([s["ms"] for s in r["samples"]
                             if s["requested_mode"] == mode and s["step"] == i + 1])
                    if m:
                        pts.append("%d %g %g %g %s" % (i, m[1], m[0], m[2], qs(SIZES[i])))
                if pts:
                    f.write("\n".join(pts) + "\n\n\n")
                    ran = {s["mode"] for s in r["samples"] if s["requested_mode"] == mode}
                    label = "%s %s" % (st, mode)
                    if ran and ran != {mode}:
                        label += " (ran as %s)" % ",".join(sorted(ran))
                    series.append((label, COLORS.get(st, 0x888888),
                                   "dt 2" if mode == "server" else "dt 1"))
    if not series:
        return None
    svg = os.path.join(out, "plots", "resize_sizes.svg")
    plots = []
    for i, (label, color, dt) in enumerate(series):
        # Each series is shifted a little so the bars do not hide each other;
        # the tics are set once below, not per series.
        plots.append("%s index %d using ($1+%g):2:3:4 with yerrorlines lc rgb '#%06x' "
                     "%s title %s" % (qs(data), i, (i - len(series) / 2) * 0.03, color, dt,
                                      qs(label)))
    script = """set terminal svg size 760,400 dynamic font 'sans,11' background '#ffffff'
set output %s
set title %s
set ylabel 'ms (median, bars: min..max)'
set xtics (%s) rotate by -25 nomirror
set xrange [-0.5:%g]
set grid ytics
set key outside right
set yrange [0:*]
plot %s
""" % (qs(svg), qs("Resize latency per size (solid: client-initiated, dashed: server-initiated)\\n"
                   "study: no per-size values in its text; Wayland faster by >=20% at every size"),
       ", ".join("%s %d" % (qs(sz), i) for i, sz in enumerate(SIZES)), len(SIZES) - 0.5,
       ", \\\n     ".join(plots))
    return gnuplot(script, svg)


def cpu_timeline_plot(results, out):
    data = os.path.join(out, "plots", "cpu_timeline.dat")
    series = []
    with open(data, "w") as f:
        for st in stacks_of(results):
            r = exp(results, "cpu", st)
            if not r or not r["samples"]:
                continue
            tl = r["samples"][0]["timeline"]
            for t in tl:
                ws = sum(v for k, v in t.items() if k not in ("t_ms", "app"))
                f.write("%g %g %g\n" % (t["t_ms"], ws, t.get("app", 0)))
            f.write("\n\n")
            series.append((st, COLORS.get(st, 0x888888)))
    if not series:
        return None
    svg = os.path.join(out, "plots", "cpu_timeline.svg")
    plots = []
    for i, (st, color) in enumerate(series):
        plots.append("%s index %d using 1:2 with lines lw 2 lc rgb '#%06x' title %s"
                     % (qs(data), i, color, qs(st + " window system")))
        plots.append("%s index %d using 1:3 with lines dt 3 lc rgb '#%06x' title %s"
                     % (qs(data), i, color, qs(st + " app")))
    script = """set terminal svg size 760,380 dynamic font 'sans,11' background '#ffffff'
set output %s
set title 'CPU use over the app life (run 1; study peak: X11 97.6%%, Wayland 66.7%%)'
set xlabel 'ms since the app started'
set ylabel '%% of one core'
set grid
set key outside right
set yrange [0:*]
plot %s
""" % (qs(svg), ", \\\n     ".join(plots))
    return gnuplot(script, svg)


# ------------------------------------------------------------ report
def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.3g" % v if abs(v) < 100 else "%.1f" % v
    return str(v)


def ipc_table(results, st):
    """Per process and syscall: strace and in-process counts, one launch."""
    ipc = results.get("ipc", {}).get(st, {})
    s = ipc.get("strace_launch", {}).get("processes", {})
    p = ipc.get("launch", {}).get("processes", {})
    rows = []
    for role in ("server", "wm", "compositor", "app"):
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


def refresh_text(hz):
    return "%d Hz" % hz if hz else "unthrottled (repaint on every damage)"


def write_all(results, out):
    os.makedirs(os.path.join(out, "plots"), exist_ok=True)
    write_csv(results, out)
    blocks = []
    m = results["machine"]
    v = results["versions"]
    blocks.append(("h1", "duet bench report"))
    blocks.append(("p", "Command: `%s`. Started %s, finished %s%s." % (
        results["command"], results["started"], results["finished"],
        " (INTERRUPTED: partial results)" if results.get("interrupted") else "")))
    blocks.append(("table", ["", "here", "study"], [
        ["machine", "%s, %s cores, kernel %s (%s), virtualization %s" % (
            m["cpu_model"], m["cores"], m["kernel"], m["arch"], m.get("virtualization")), BOARD],
        ["CPU governor", results["governor"], "-"],
        ["versions", ", ".join("%s %s" % (k, x) for k, x in v.items() if x), "Tizen 3.0"],
        ["rendering", "Mesa (%s); env %s; app engine %s" % (
            v.get("mesa"), results.get("render_env"), results["options"]["engine"]),
         "Mali-400 GLES2 driver"],
        ["order", "%s round(s); each runs every stack once with its share of the runs, so "
         "the stacks take turns through the whole run" % results["options"].get("rounds", 1),
         "-"],
        ["compositor frame clock", "60 Hz; render experiment: %s (duet-compositor, duet-xwm; "
         "weston fixed 60 Hz, xcompmgr on every damage)" % refresh_text(
             results["options"].get("render_refresh", 0)), "display rate"],
    ]))
    blocks.append(("p", "Our numbers: min / median / max over runs. The study's numbers were "
                   "measured on a different machine, software and apps: compare the ratios "
                   "between stacks, not the absolute values. Timing runs carry no counters or "
                   "tracers; IPC counts come from separate runs (tracing distorts time). "
                   "glmark2 is not used here; where it is, note that its Wayland build does a "
                   "round trip per frame and its X11 build does not."))
    # stacks
    rows = []
    for st, rec in results.get("stacks", {}).items():
        paths = set()
        for e in ("launch", "render", "resize"):
            r = exp(results, e, st) or {}
            for s in r.get("samples", []):
                if s.get("path"):
                    paths.add("%s/%s" % (s.get("presentation"), s.get("path")))
        rows.append([st, rec.get("status", "?") + (": " + rec["reason"] if rec.get("reason")
                                                     else ""),
                     "; ".join(sorted(paths)) or "-", rec.get("content_path", "-"),
                     "; ".join(rec.get("notes", [])) or "-",
                     "<br>".join("%s: `%s`" % kv for kv in sorted(rec.get("commands", {})
                                                                   .items()))])
    blocks.append(("h2", "Stacks"))
    blocks.append(("table", ["stack", "status", "presentation/drawing path (app)",
                             "window content path (compositor)", "notes", "commands"], rows))
    # figures
    figs = [("launch_ms", "Fig. 4: launch time"), ("launch_ipc", "Fig. 5: IPC at launch"),
            ("render_fps", "Fig. 6: rendering score"), ("flush_ms", "Fig. 6: flush time"),
            ("render_ipc_per_frame", "Fig. 6: IPC per frame"), ("cpu_peak", "Fig. 7: CPU peak")]
    allm = metrics(results)
    for key, label in figs:
        title, unit = TITLES[key]
        blocks.append(("h2", "%s: %s" % (label, title)))
        svg = bar_plot(out, key, title, unit, figure_rows(results, key))
        blocks.append(("svg", key, svg))
        rows = [[st, status] + ([fmt(x) for x in mm[:3]] + [str(mm[3])] if mm else
                                ["-", "-", "-", "0"])
                for k, st, mm, status in allm if k == key]
        s = STUDY.get(key, {})
        rows.append(["study X11 / Wayland (U3)", UNITS.get(key, ""), "", "%s / %s" % (
            s.get("x11"), s.get("wayland")), "", ""])
        blocks.append(("table", ["stack", "status", "min", "median", "max", "n"], rows))
        if key == "cpu_peak":
            blocks.append(("h3", "CPU timeline"))
            blocks.append(("svg", "cpu_timeline", cpu_timeline_plot(results, out)))
            prow = []
            for st in stacks_of(results):
                r = exp(results, "cpu", st) or {}
                for smp in r.get("samples", [])[:1]:
                    for role, pv in smp["per_process"].items():
                        prow.append([st, role, fmt(pv["peak"]), fmt(pv["mean"])])
            blocks.append(("table", ["stack", "process (run 1)", "peak %", "mean %"], prow))
    blocks.append(("h2", "Fig. 8/9: resize time per size (Table 2 sizes)"))
    blocks.append(("svg", "resize_sizes", resize_plot(results, out)))
    rows = []
    for st in stacks_of(results):
        r = exp(results, "resize", st)
        if not r:
            continue
        for mode in ("client", "server"):
            cells = []
            for i in range(len(SIZES)):
                mm = mmm([s["ms"] for s in r["samples"]
                          if s["requested_mode"] == mode and s["step"] == i + 1])
                cells.append("%s (%s..%s)" % (fmt(mm[1]), fmt(mm[0]), fmt(mm[2])) if mm else "-")
            rows.append([st, mode] + cells)
        for n in r.get("notes", []):
            rows.append([st, "note", n] + [""] * 7)
        if r.get("status") not in ("ok", None):
            rows.append([st, r.get("status"), (r.get("reason") or "")[:200]] + [""] * 7)
    blocks.append(("table", ["stack", "mode"] + SIZES, rows))
    blocks.append(("p", "Study: " + STUDY["resize_note"] + "."))
    blocks.append(("h2", "Fig. 9: IPC per resize"))
    blocks.append(("svg", "resize_ipc", bar_plot(out, "resize_ipc", TITLES["resize_ipc"][0],
                                                 "calls/resize",
                                                 figure_rows(results, "resize_ipc"))))
    blocks.append(("table", ["stack", "status", "min", "median", "max", "n"],
                   [[st, status] + ([fmt(x) for x in mm[:3]] + [str(mm[3])] if mm else
                                    ["-", "-", "-", "0"])
                    for k, st, mm, status in allm if k == "resize_ipc"]))
    # IPC breakdown for one launch
    blocks.append(("h2", "IPC breakdown for one launch: strace and the in-process counter"))
    blocks.append(("p", "Two separate launches of duet-launch in each stack: one with strace "
                   "attached to every process, one with libduet-ipc-count.so preloaded. "
                   "'all' counts calls on any fd, 'unix' those on Unix sockets (the IPC)."))
    for st in stacks_of(results):
        rows = ipc_table(results, st)
        if not rows:
            continue
        blocks.append(("h3", st))
        blocks.append(("table", ["process", "syscall", "strace all", "strace unix",
                                 "in-process all", "in-process unix", "unix bytes"], rows))
        la = results["ipc"][st].get("launch", {})
        proto = la.get("protocol")
        if proto:
            if "unavailable" in proto:
                blocks.append(("p", "Protocol messages: unavailable: " + proto["unavailable"]))
            else:
                blocks.append(("p", "Protocol messages (%s): %s requests, %s events%s." % (
                    proto.get("source"), proto.get("requests"), proto.get("events"),
                    (", %s request bytes, %s event bytes" % (proto["request_bytes"],
                                                             proto["event_bytes"]))
                    if "request_bytes" in proto else "")))
    blocks.append(("h2", "Failures"))
    fails = []
    for e, per in results.get("experiments", {}).items():
        for st, r in per.items():
            if r.get("status") in ("failed", "skipped"):
                fails.append([e, st, r["status"], (r.get("reason") or "")[:300],
                              ", ".join(sorted(r.get("logs", {})))])
    for st, per in results.get("ipc", {}).items():
        for e, r in per.items():
            if r.get("status") in ("failed", "skipped"):
                fails.append(["ipc " + e, st, r["status"], (r.get("reason") or "")[:300],
                              ", ".join(sorted(r.get("logs", {})))])
    blocks.append(("table", ["experiment", "stack", "status", "reason", "logs in results.json"],
                   fails or [["-", "-", "none", "", ""]]))
    blocks.append(("p", "Method: docs/methodology.md in the duet source tree."))
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(to_md(blocks))
    with open(os.path.join(out, "report.html"), "w") as f:
        f.write(to_html(blocks))


def cell_md(c):
    return str(c).replace("|", "\\|").replace("\n", " ")


def to_md(blocks):
    out = []
    for b in blocks:
        if b[0] in ("h1", "h2", "h3"):
            out.append("%s %s\n" % ("#" * int(b[0][1]), b[1]))
        elif b[0] == "p":
            out.append(b[1] + "\n")
        elif b[0] == "table":
            out.append("| " + " | ".join(cell_md(h) for h in b[1]) + " |")
            out.append("|" + "---|" * len(b[1]))
            for r in b[2]:
                out.append("| " + " | ".join(cell_md(c) for c in r) + " |")
            out.append("")
        elif b[0] == "svg":
            out.append("![%s](plots/%s.svg)\n" % (b[1], b[1]) if b[2] else
                       "(plot %s unavailable: gnuplot missing or failed)\n" % b[1])
    return "\n".join(out) + "\n"


def inline_md(text):
    """`code` and **bold** for the HTML version; everything else escaped."""
    parts = html.escape(text).split("`")
    s = "".join(("<code>%s</code>" % p) if i % 2 else p for i, p in enumerate(parts))
    parts = s.split("**")
    s = "".join(("<b>%s</b>" % p) if i % 2 else p for i, p in enumerate(parts))
    return s.replace("&lt;br&gt;", "<br>")


def to_html(blocks):
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>duet bench report</title>",
           "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
           "table{border-collapse:collapse;margin:1em 0;font-size:13px}"
           "td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}"
           "th{background:#f0f0f0}code{font-size:12px}</style></head><body>"]
    for b in blocks:
        if b[0] in ("h1", "h2", "h3"):
            out.append("<%s>%s</%s>" % (b[0], html.escape(b[1]), b[0]))
        elif b[0] == "p":
            out.append("<p>%s</p>" % inline_md(b[1]))
        elif b[0] == "table":
            out.append("<table><tr>%s</tr>" % "".join("<th>%s</th>" % inline_md(str(h))
                                                      for h in b[1]))
            for r in b[2]:
                out.append("<tr>%s</tr>" % "".join("<td>%s</td>" % inline_md(str(c)) for c in r))
            out.append("</table>")
        elif b[0] == "svg":
            if b[2]:
                svg = b[2]
                i = svg.find("<svg")
                out.append("<div>%s</div>" % (svg[i:] if i >= 0 else svg))
            else:
                out.append("<p>(plot %s unavailable: gnuplot missing or failed)</p>" % b[1])
    out.append("</body></html>")
    return "\n".join(out)


def summary_table(results):
    lines = ["%-22s %-9s %12s %12s %12s  %s" % ("metric", "stack", "min", "median", "max",
                                                 "study X11/Wayland")]
    for key, st, m, status in metrics(results):
        s = STUDY.get(key, {})
        study = "%s / %s" % (s.get("x11"), s.get("wayland")) if s else ""
        if m:
            lines.append("%-22s %-9s %12s %12s %12s  %s" % (key, st, fmt(m[0]), fmt(m[1]),
                                                          fmt(m[2]), study))
        else:
            lines.append("%-22s %-9s %38s  %s" % (key, st, status[:38], study))
    return "\n".join(lines)
