"""The report's plots: gnuplot scripts written to SVG, read back to be
inlined. Every label is printed as given (`noenhanced`: an underscore is
not a subscript), x tick labels are short and rotated so they do not run
into each other. A plot that cannot be made (no gnuplot) is None."""
import os
import shutil
import subprocess

COLORS = {"wayland": 0x3a7bd5, "x11": 0xd5533a, "weston": 0x7fb0f0, "openbox": 0xf0a07f,
          "study-wayland": 0x1d3d6b, "study-x11": 0x6b291d, "study": 0x222222,
          "x11/wayland": 0xd5533a, "openbox/weston": 0xf0a07f,
          "e-wayland": 0x2e9e6b, "e-x11": 0x9e6b2e, "e-x11/e-wayland": 0x9e6b2e,
          "xwayland": 0x8e5bc4, "weston-xwayland": 0xc4a0e8,
          "mutter": 0x4a90a4, "mutter-x11": 0xa4644a, "mutter-x11/mutter": 0xa4644a,
          "sway": 0x5a9e3a, "i3": 0x9e8a3a, "i3/sway": 0x9e8a3a}
PHASE_COLORS = {"exec": 0xbbbbbb, "connected": 0x8da0cb, "submitted": 0x66c2a5,
                "received": 0xa6d854, "composited": 0xfc8d62, "presented": 0xe78ac3}
HEAD = """set terminal svg size %d,%d dynamic font 'sans,11' background '#ffffff'
set termoption noenhanced
set output %s
"""


def qs(s):
    """A gnuplot string literal; a newline in s breaks the line."""
    return '"%s"' % str(s).replace("\\", "\\\\").replace('"', "'").replace("\n", "\\n")


def run(script, path):
    if not shutil.which("gnuplot"):
        return None
    try:
        r = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True,
                           timeout=60)
    except subprocess.TimeoutExpired:
        return None
    if r.returncode != 0 or not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read()


def paths(out, name):
    d = os.path.join(out, "plots")
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, name + ".dat"), os.path.join(d, name + ".svg")


def datasets(out, name, blocks):
    """Writes blocks (each a list of data lines) to the plot's data file,
    one gnuplot index each; returns the data and SVG paths."""
    data, svg = paths(out, name)
    with open(data, "w") as f:
        for lines in blocks:
            f.write("\n".join(lines) + "\n\n\n")
    return data, svg


def bars(out, name, title, ylabel, rows):
    """rows: (label, median, min, max, color); study rows have min = max."""
    if not rows:
        return None
    data, svg = paths(out, name)
    with open(data, "w") as f:
        for i, (label, med, lo, hi, color) in enumerate(rows):
            f.write("%d %g %g %g %s %d\n" % (i, med, lo, hi, qs(label), color))
    script = HEAD % (760, 400, qs(svg)) + """set title %s
set ylabel %s
set style fill solid 0.85 border -1
set boxwidth 0.7
set xtics rotate by 30 right nomirror
set grid ytics
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set xrange [-0.6:%g]
plot %s using 1:2:6:xtic(5) with boxes lc rgb variable notitle, \\
     '' using 1:2:3:4 with yerrorbars lc rgb '#000000' pt -1 notitle, \\
     '' using 1:2:(sprintf('%%.3g', $2)) with labels offset 0,0.7 notitle
""" % (qs(title), qs(ylabel), len(rows) - 0.4, qs(data))
    return run(script, svg)


def ratios(out, name, title, claims, series):
    """Ratio of medians per claim, log scale, 1 = no difference.
    claims: [short label]; series: [(label, color, [(ratio, lo, hi) or
    None per claim], point type)]; lo/hi None when there is no interval."""
    if not claims or not any(v for _, _, vals, _ in series for v in vals):
        return None
    data, svg = paths(out, name)
    plots = []
    with open(data, "w") as f:
        k = 0
        for j, (label, color, vals, pt) in enumerate(series):
            off = (j - (len(series) - 1) / 2.0) * 0.22
            rows = ["%g %g %g %g" % (i + off, v[0], v[1] if v[1] is not None else v[0],
                                     v[2] if v[2] is not None else v[0])
                    for i, v in enumerate(vals) if v and v[0] and v[0] > 0]
            if not rows:
                continue
            f.write("\n".join(rows) + "\n\n\n")
            plots.append("%s index %d using 1:2:3:4 with yerrorbars lc rgb '#%06x' pt %d "
                         "ps 1.2 lw 1.5 title %s" % (qs(data), k, color, pt, qs(label)))
            k += 1
    script = HEAD % (820, 420, qs(svg)) + """set title %s
set ylabel 'ratio of medians (log scale; bars: 95%% interval)'
set logscale y
set xtics (%s) rotate by 30 right nomirror
set xrange [-0.6:%g]
set grid ytics
set key outside right
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#666666'
plot %s
""" % (qs(title), ", ".join("%s %d" % (qs(c), i) for i, c in enumerate(claims)),
       len(claims) - 0.4, ", \\\n     ".join(plots))
    return run(script, svg)


def timeline(out, name, title, rows):
    """Bootchart-style stacked bars: rows [(label, [(from point, to point,
    from ms, to ms)])], one bar per row, a colour per phase (the point the
    phase ends at)."""
    rows = [r for r in rows if r[1]]
    if not rows:
        return None
    data, svg = paths(out, name)
    phases = [p for p in PHASE_COLORS if any(seg[1] == p for _, segs in rows for seg in segs)]
    plots = []
    with open(data, "w") as f:
        for k, phase in enumerate(phases):
            lines = []
            for y, (_, segs) in enumerate(rows):
                for a, b, t0, t1 in segs:
                    if b == phase:
                        lines.append("%g %g %g %g %s" % ((t0 + t1) / 2.0, y, (t1 - t0) / 2.0,
                                                         0.35, qs("%s -> %s" % (a, b))))
            f.write("\n".join(lines or ["0 0 0 0 ''"]) + "\n\n\n")
            plots.append("%s index %d using 1:2:3:4 with boxxyerror fs solid 0.9 border "
                         "lc rgb '#444444' fc rgb '#%06x' title %s"
                         % (qs(data), k, PHASE_COLORS[phase], qs("-> " + phase)))
    script = HEAD % (820, 120 + 38 * len(rows), qs(svg)) + """set title %s
set xlabel 'ms since fork (medians over the launches)'
set ytics (%s) nomirror
set yrange [%g:-0.6]
set xrange [0:*]
set grid xtics
set key outside right
plot %s
""" % (qs(title), ", ".join("%s %d" % (qs(label), y) for y, (label, _) in enumerate(rows)),
       len(rows) - 0.4, ", \\\n     ".join(plots))
    return run(script, svg)


def resize_sizes(out, name, title, sizes, series):
    """series: [(label, color, dashed, [(i, median, min, max)])]."""
    series = [s for s in series if s[3]]
    if not series:
        return None
    data, svg = datasets(out, name, [["%d %g %g %g" % p for p in s[3]] for s in series])
    # Each series is shifted a little so the bars do not hide each other.
    plots = ["%s index %d using ($1+%g):2:3:4 with yerrorlines lc rgb '#%06x' %s title %s"
             % (qs(data), i, (i - len(series) / 2) * 0.03, color, "dt 2" if dashed else "dt 1",
                qs(label))
             for i, (label, color, dashed, _) in enumerate(series)]
    script = HEAD % (820, 420, qs(svg)) + """set title %s
set ylabel 'ms (median, bars: min..max)'
set xtics (%s) rotate by 30 right nomirror
set xrange [-0.5:%g]
set grid ytics
set key outside right
set yrange [0:*]
plot %s
""" % (qs(title), ", ".join("%s %d" % (qs(sz), i) for i, sz in enumerate(sizes)),
       len(sizes) - 0.5, ", \\\n     ".join(plots))
    return run(script, svg)


def cpu_timeline(out, name, title, series):
    """series: [(stack, color, [(t_ms, window system %, app %)])]."""
    series = [s for s in series if s[2]]
    if not series:
        return None
    data, svg = datasets(out, name, [["%g %g %g" % p for p in s[2]] for s in series])
    plots = []
    for i, (st, color, _) in enumerate(series):
        plots.append("%s index %d using 1:2 with lines lw 2 lc rgb '#%06x' title %s"
                     % (qs(data), i, color, qs(st + " window system")))
        plots.append("%s index %d using 1:3 with lines dt 3 lc rgb '#%06x' title %s"
                     % (qs(data), i, color, qs(st + " app")))
    script = HEAD % (820, 400, qs(svg)) + """set title %s
set xlabel 'ms since the app started'
set ylabel '%% of one core'
set grid
set key outside right
set yrange [0:*]
plot %s
""" % (qs(title), ", \\\n     ".join(plots))
    return run(script, svg)


def bootchart(out, name, title, rows, marks, end_ms, cbmax=100):
    """Which process ran when: one row per process, its time cut into the
    sampler's slices, each slice coloured by the share of one core the
    process used in it (white: idle; saturates at cbmax %); the launch's
    points as vertical lines. rows: [(label, [(from ms, to ms, percent)])];
    marks: [(point, ms)]."""
    rows = [r for r in rows if r[1]]
    if not rows or not end_ms:
        return None
    data, svg = paths(out, name)
    n = len(rows)
    plots = []
    with open(data, "w") as f:
        # 0: each row's sampled span (light grey), 1: the busy slices.
        f.write("\n".join("%g %g %g 0.4" % ((s[0][0] + s[-1][1]) / 2.0, y,
                                             (s[-1][1] - s[0][0]) / 2.0)
                          for y, (_, s) in enumerate(rows)) + "\n\n\n")
        busy = ["%g %g %g 0.4 %g" % ((a + b) / 2.0, y, (b - a) / 2.0, pct)
                for y, (_, s) in enumerate(rows) for a, b, pct in s if pct > 0 and b > a]
        f.write("\n".join(busy or ["0 0 0 0 0"]) + "\n\n\n")
        plots.append("%s index 0 using 1:2:3:4 with boxxyerror fs solid 1.0 noborder "
                     "fc rgb '#f2f2f2' notitle" % qs(data))
        plots.append("%s index 1 using 1:2:3:4:5 with boxxyerror fs solid 1.0 noborder "
                     "fc palette notitle" % qs(data))
        for k, (point, ms) in enumerate(marks):
            f.write("%g -0.6 0 %g\n\n\n" % (ms, n + 0.2))
            plots.append("%s index %d using 1:2:3:4 with vectors nohead lw 1.5 dt 2 "
                         "lc rgb '#%06x' title %s"
                         % (qs(data), 2 + k, PHASE_COLORS.get(point, 0x444444),
                            qs("%s %.1f ms" % (point, ms))))
    script = HEAD % (880, 190 + 42 * n, qs(svg)) + """set title %s
set xlabel 'ms since fork (one sampled launch)'
set ytics (%s) nomirror
set yrange [%g:-0.6]
set xrange [0:%g]
set grid xtics
set key below horizontal
set palette defined (0 '#ffffff', 1 '#fde0c5', 25 '#f8a25c', 60 '#d9531e', 100 '#7f1d00')
set cbrange [0:%g]
set cblabel '%% of one core in the slice'
plot %s
""" % (qs(title), ", ".join("%s %d" % (qs(label), y) for y, (label, _) in enumerate(rows)),
       n - 0.4, end_ms, cbmax, ", \\\n     ".join(plots))
    return run(script, svg)
