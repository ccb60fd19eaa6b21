"""The report's round trips (issue 14, item 1): the time per trip of each
of the 10 groups, per stack and kind (the display server; X11's WM hop),
with this machine's floor (a one-byte ping-pong between two processes)
drawn in, as the Wine/Longene table laid its groups out; and a table of
the medians, the spread over the groups, the switches per trip and what a
trip costs above the floor."""
from duet_bench import metrics, plots, stats

KINDS = ("server", "wm")
# The floors drawn in: the cheapest transport on one CPU and on two.
FLOORS = (("floor-unix-1cpu", "floor: Unix socket ping-pong, 1 CPU"),
          ("floor-unix-2cpu", "floor: Unix socket ping-pong, 2 CPUs"))


def _fmt(v):
    return "-" if v is None else ("%.3g" % v if abs(v) < 100 else "%.1f" % v)


def samples_of(results):
    """{stack: {kind: [samples]}} of the roundtrip experiment."""
    out = {}
    for st in metrics.stacks_of(results):
        r = metrics.exp(results, "roundtrip", st) or {}
        for s in r.get("samples", []):
            if isinstance(s.get("trip_us"), (int, float)):
                out.setdefault(st, {}).setdefault(s.get("kind"), []).append(s)
    return out


def group_medians(samples):
    """Per group index, the median over the runs of that group's time per
    trip: the curve of one kind on one stack."""
    groups = [s.get("groups_us") or [] for s in samples]
    n = max((len(g) for g in groups), default=0)
    out = []
    for i in range(n):
        vals = [g[i] for g in groups if i < len(g)]
        if vals:
            out.append((i + 1, stats.median(vals)))
    return out


def floor_of(per, kind):
    """The machine's floor of kind: the median over every stack's samples
    (the same measurement in each stack's turn)."""
    vals = [s["trip_us"] for kinds in per.values() for s in kinds.get(kind, [])]
    return stats.median(vals) if vals else None


def plot(out, per):
    series = []
    for st, kinds in per.items():
        for kind in KINDS:
            pts = group_medians(kinds.get(kind, []))
            if pts:
                series.append(("%s %s" % (st, kind), plots.COLORS.get(st, 0x555555),
                               kind == "wm", pts))
    if not series:
        return None
    floors = [(label, floor_of(per, k)) for k, label in FLOORS]
    floors = [(label, v) for label, v in floors if v is not None]
    data, svg = plots.paths(out, "roundtrip")
    lines = []
    with open(data, "w") as f:
        for i, (label, color, dashed, pts) in enumerate(series):
            f.write("\n".join("%d %g" % p for p in pts) + "\n\n\n")
            lines.append("%s index %d using 1:2 with linespoints lw 1.5 pt 7 ps 0.5 %s "
                         "lc rgb '#%06x' title %s" % (plots.qs(data), i,
                                                      "dt 2" if dashed else "dt 1", color,
                                                      plots.qs(label)))
    for j, (label, v) in enumerate(floors):
        lines.append("%g with lines lw 1 dt %d lc rgb '#222222' title %s"
                     % (v, 3 + j, plots.qs("%s (%.3g us)" % (label, v))))
    script = plots.HEAD % (860, 440, plots.qs(svg)) + """set title %s
set xlabel 'group (100 round trips each)'
set ylabel 'us per round trip (median over the runs)'
set xrange [0.5:%g]
set xtics 1
set logscale y
set grid ytics
set key outside right
plot %s
""" % (plots.qs("Round trips: time per trip in each group, with the machine's floor"),
       max(len(s[3]) for s in series) + 0.5, ", \\\n     ".join(lines))
    return plots.run(script, svg)


def rows_of(per):
    floor1 = floor_of(per, "floor-unix-1cpu")
    rows = []
    for st, kinds in per.items():
        for kind in KINDS:
            ss = kinds.get(kind, [])
            if not ss:
                continue
            med = stats.median([s["trip_us"] for s in ss])
            groups = [g for s in ss for g in (s.get("groups_us") or [])]
            sw = [s.get("switches_per_trip_all") for s in ss
                  if isinstance(s.get("switches_per_trip_all"), (int, float))]
            rows.append([st, kind, _fmt(med),
                         "%s..%s" % (_fmt(min(groups)), _fmt(max(groups))) if groups else "-",
                         _fmt(stats.median(sw)) if sw else "-",
                         _fmt(med - floor1) if floor1 is not None else "-", str(len(ss))])
    return rows


def blocks(results, out, table, order, pairs):
    per = samples_of(results)
    if not per:
        return []
    out_blocks = [("h2", "Round trips (roundtrip)"),
                  ("p", "10 groups of 100 round trips per run and kind: `server` is "
                   "`wl_display.sync` / GetInputFocus, `wm` the X11 app -> X server -> WM -> "
                   "X server -> app hop (`_NET_REQUEST_FRAME_EXTENTS`; on Wayland the server "
                   "is the WM). The floor is a one-byte ping-pong between two processes on "
                   "this machine, the same in every stack's turn (its median over them is "
                   "drawn). Above the floor = median trip - the 1-CPU Unix-socket floor.")]
    svg = plot(out, per)
    if svg:
        out_blocks.append(("svg", "roundtrip", svg))
    out_blocks.append(("table", ["stack", "kind", "us per trip (median run)",
                                 "groups, min..max us", "switches per trip",
                                 "us above the floor", "runs"], rows_of(per)))
    return out_blocks
