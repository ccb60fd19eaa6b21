"""The report's hop diagrams (issue 46): per stack and traced operation, a
lane per process and an arrow per message, from the operation's start to
its end point (a launch's fork to composited, a resize run's first
request to its last size composited, a render interval's scene), with the
counts of each lane, written as SVG into plots/hops-STACK-OP.svg. Drawn
from the trace file itself (trace-STACK-OP.json, trace_events.py), so the
diagram shows what the file shows; in the results directory, which
`duet report DIR --out ELSE` still reads.

The SVG is written here, not by gnuplot, so that every part is one
element a browser can count (bench/tests/browser.py does, in the report):
the diagram is `<svg id="hops-STACK-OP" class="hops">`, each process a
`g.lane` (its `line.lane-line`, `text.lane-name`, `text.lane-count`),
each message a `g.msg` (a `line` from the send on the sender's lane to
the receive on the receiver's, in the sender's colour, and its head, a
`polygon`), each point a `line.mark`, each x tick a `g.tick` whose text is
its ms. A receive after the plot's right edge (the end point + 3%) is
drawn at the edge."""
import html
import json
import math
import os

from duet_bench import plots
from duet_bench.trace_events import TIMELINE_PID
from duet_bench.trace_raw import OPS

ROLES = ("server", "xwayland", "wm", "compositor", "app")
# A message's arrow has its sender's colour.
COLOURS = {"server": 0xd5533a, "xwayland": 0x9e8a3a, "wm": 0x3a7bd5, "compositor": 0x2e9e6b,
           "app": 0x8e5bc4}
# The point each operation's diagram ends at, the first found (else the
# trace's last point).
END = {"launch": ("composited", "presented"), "resize": ("composited",),
       "frame": ("scene end",)}
WHAT = {"launch": "fork -> composited", "resize": "first request -> last size composited",
        "frame": "the render interval"}


def end_ms(op, points):
    """(ms, name) of op's end point among points [(name, ms)]."""
    for want in END[op]:
        found = [(ms, name) for name, ms in points if name.split(": ")[-1].startswith(want)]
        if found:
            return max(found)
    return max(((ms, name) for name, ms in points), default=(None, None))


def read(path, stack):
    """The diagram's parts of one trace file: lanes [(label, pid)], arrows
    [(sent ms, from lane, received ms, to lane)], marks, the end and its
    point's name; or None where the file cannot be read."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    op = doc["otherData"][stack]["op"]
    names, calls, starts, ends, points = {}, {}, {}, {}, []
    for e in doc["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "process_name":
            names[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "X" and e["cat"] == "ipc":
            calls.setdefault(e["pid"], []).append(e["ts"] / 1000.0)
        elif e["ph"] == "s":
            starts[e["id"]] = (e["pid"], e["ts"] / 1000.0)
        elif e["ph"] == "f":
            ends[e["id"]] = (e["pid"], e["ts"] / 1000.0)
        elif e["ph"] == "i" and e["pid"] == TIMELINE_PID:
            points.append((e["name"], e["ts"] / 1000.0))
    end, end_name = end_ms(op, points)
    if end is None:
        return None
    pids = sorted(calls, key=lambda p: (_order(names.get(p, "")), p))
    lane = {p: k for k, p in enumerate(pids)}
    arrows = [(s[1], lane[s[0]], ends[i][1], lane[ends[i][0]]) for i, s in sorted(
        starts.items()) if i in ends and 0 <= s[1] <= end and s[0] in lane and ends[i][0] in lane]
    lanes = []
    for p in pids:
        name = names.get(p, str(p))
        lanes.append({"pid": p, "name": name.split(" (pid")[0],
                      "calls": sum(1 for t in calls[p] if 0 <= t <= end),
                      "sent": sum(1 for a in arrows if a[1] == lane[p]),
                      "received": sum(1 for a in arrows if a[3] == lane[p]),
                      "colour": COLOURS.get(name.split(":")[0], 0x666666)})
    marks, kinds = [], set()
    for name, ms in points:
        kind = name.split(": ")[-1]
        if not 0 <= ms <= end or (op == "resize" and kind not in ("requested", "composited")):
            continue
        # Each resize step has its points: the key names each kind once.
        label = "%s %.1f ms" % (name, ms) if op != "resize" else (
            None if kind in kinds else "%s (each size)" % kind)
        kinds.add(kind)
        marks.append((kind, ms, label))
    return {"stack": stack, "op": op, "lanes": lanes, "arrows": arrows, "marks": marks,
            "end": end, "end_name": end_name,
            "calls": sum(sum(1 for t in c if 0 <= t <= end) for c in calls.values())}


def _order(name):
    role = name.split(":")[0]
    return ROLES.index(role) if role in ROLES else len(ROLES)


# The drawing's geometry (SVG user units): the plot area runs from LEFT to
# WIDTH - RIGHT, a lane every LANE below TOP; the key has KEY_COLS columns.
WIDTH, LEFT, RIGHT, TOP, LANE, KEY_ROW, KEY_COLS = 880, 250, 24, 44, 56, 18, 3
HEAD_LEN, HEAD_HALF = 7.0, 2.6


def _ticks(xmax):
    """Round values from 0 to xmax for the x axis, 5 to 10 of them."""
    raw = xmax / 8.0
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return [k * step for k in range(int(xmax / step + 1e-9) + 1)]


def _attr(v):
    return html.escape(str(v), quote=True)


def _head(x1, y1, x2, y2):
    """The arrow head's points at (x2, y2), pointing from (x1, y1)."""
    dx, dy = x2 - x1, y2 - y1
    d = math.hypot(dx, dy)
    ux, uy = (dx / d, dy / d) if d > 1e-9 else (1.0, 0.0)
    bx, by = x2 - ux * HEAD_LEN, y2 - uy * HEAD_LEN
    return "%.2f,%.2f %.2f,%.2f %.2f,%.2f" % (x2, y2, bx - uy * HEAD_HALF, by + ux * HEAD_HALF,
                                              bx + uy * HEAD_HALF, by - ux * HEAD_HALF)


def draw(out, name, title, d):
    """Writes the diagram of read()'s d to plots/NAME.svg and returns its
    text; None where there is nothing to draw (no lane, or the end at 0)."""
    lanes, end = d["lanes"], d["end"]
    if not lanes or not end or end <= 0:
        return None
    xmax = end * 1.03
    right = WIDTH - RIGHT
    bottom = TOP + LANE * len(lanes)
    labelled = [m for m in d["marks"] if m[2]]
    height = bottom + 48 + KEY_ROW * ((len(labelled) + KEY_COLS - 1) // KEY_COLS) + 8

    def x(ms):
        return LEFT + (right - LEFT) * min(max(ms, 0.0), xmax) / xmax

    def y(k):
        return TOP + LANE * (k + 0.5)

    o = ['<?xml version="1.0" encoding="utf-8"?>',
         '<svg xmlns="http://www.w3.org/2000/svg" id="%s" class="hops" data-stack="%s" '
         'data-op="%s" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" '
         'font-size="11" style="max-width:100%%;height:auto">'
         % (_attr(name), _attr(d["stack"]), _attr(d["op"]), WIDTH, height, WIDTH, height),
         '<rect class="background" width="%d" height="%d" fill="#ffffff"/>' % (WIDTH, height),
         '<text class="title" x="%d" y="22" text-anchor="middle" font-size="12">%s</text>'
         % (WIDTH // 2, html.escape(title)),
         '<g class="axis">']
    for v in _ticks(xmax):
        o.append('<g class="tick"><line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="#eeeeee"/>'
                 '<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="#000000"/>'
                 '<text x="%.2f" y="%d" text-anchor="middle">%s</text></g>'
                 % (x(v), TOP, x(v), bottom, x(v), bottom, x(v), bottom + 5, x(v), bottom + 18,
                    "%g" % round(v, 9)))
    o.append('<rect class="frame" x="%d" y="%d" width="%d" height="%d" fill="none" '
             'stroke="#000000"/>' % (LEFT, TOP, right - LEFT, bottom - TOP))
    o.append('<text class="xlabel" x="%d" y="%d" text-anchor="middle">ms since the start '
             '(traced: strace stretches every call)</text>' % ((LEFT + right) // 2, bottom + 36))
    o.append('</g>')
    o.append('<g class="lanes">')
    for k, ln in enumerate(lanes):
        o.append('<g class="lane" data-lane="%d" data-pid="%d">'
                 '<line class="lane-line" x1="%d" y1="%.2f" x2="%d" y2="%.2f" stroke="#dddddd"/>'
                 '<text class="lane-name" x="%d" y="%.2f" text-anchor="end" fill="#%06x">%s</text>'
                 '<text class="lane-count" x="%d" y="%.2f" text-anchor="end">%d IPC calls; sent '
                 '%d, received %d</text></g>'
                 % (k, ln["pid"], LEFT, y(k), right, y(k), LEFT - 10, y(k) - 3, ln["colour"],
                    html.escape(ln["name"]), LEFT - 10, y(k) + 12, ln["calls"], ln["sent"],
                    ln["received"]))
    o.append('</g>')
    o.append('<g class="marks">')
    for point, ms, _label in d["marks"]:
        o.append('<line class="mark" data-point="%s" x1="%.2f" y1="%d" x2="%.2f" y2="%d" '
                 'stroke="#%06x" stroke-width="1.2" stroke-dasharray="4 3"/>'
                 % (_attr(point), x(ms), TOP, x(ms), bottom,
                    plots.PHASE_COLORS.get(point.split()[-1], 0x444444)))
    o.append('</g>')
    o.append('<g class="messages">')
    for sent, a, got, b in d["arrows"]:
        x1, y1, x2, y2 = x(sent), y(a), x(got), y(b)
        colour = "#%06x" % lanes[a]["colour"]
        o.append('<g class="msg"><line x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f" stroke="%s" '
                 'stroke-width="0.8"/><polygon points="%s" fill="%s"/></g>'
                 % (x1, y1, x2, y2, colour, _head(x1, y1, x2, y2), colour))
    o.append('</g>')
    o.append('<g class="key">')
    col = (WIDTH - 40) / KEY_COLS
    for k, (point, _ms, label) in enumerate(labelled):
        kx, ky = 20 + col * (k % KEY_COLS), bottom + 56 + KEY_ROW * (k // KEY_COLS)
        o.append('<g class="key-item"><line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="#%06x" '
                 'stroke-width="1.2" stroke-dasharray="4 3"/><text x="%.2f" y="%d">%s</text></g>'
                 % (kx, ky - 4, kx + 28, ky - 4,
                    plots.PHASE_COLORS.get(point.split()[-1], 0x444444), kx + 34, ky,
                    html.escape(label)))
    o.append('</g>')
    o.append('</svg>')
    text = "\n".join(o) + "\n"
    _data, svg = plots.paths(out, name)
    with open(svg, "w") as f:
        f.write(text)
    return text


def blocks(results, out, src):
    """The section: a diagram per stack and traced operation, read from
    src (the results directory), plotted into out."""
    rows, figs = [], []
    for st, per in (results.get("ipc") or {}).items():
        for op in OPS:
            rec = per.get("trace_" + op) or {}
            if rec.get("status") != "ok":
                if rec.get("status"):
                    rows.append([st, op, rec["status"], rec.get("reason", "")[:200]])
                continue
            d = read(os.path.join(src, rec["file"]), st)
            if d is None:
                rows.append([st, op, "no diagram", "`%s` is missing or unreadable in %s"
                             % (rec["file"], src)])
                continue
            title = "%s %s: %d messages and %d IPC calls, %s (%.1f ms traced)" % (
                st, op, len(d["arrows"]), d["calls"], WHAT[op], d["end"])
            svg = draw(out, "hops-%s-%s" % (st, op), title, d)
            if svg is None:
                rows.append([st, op, "no diagram", "nothing to draw: no process made an IPC "
                             "call, or the end point is at the start"])
                continue
            figs.append(("svg", "hops-%s-%s" % (st, op), svg))
    if not figs and not rows:
        return []
    out_blocks = [("h2", "Who talks to whom: the traced operations"),
                  ("p", "One launch, one run of the resize sizes and one render interval per "
                   "stack, with strace on every process (docs/methodology.md, \"Traces\"): a "
                   "lane per process, an arrow per message from the call that sent it to "
                   "the call that read it, from the operation's start to its end point, with "
                   "each lane's IPC calls and messages. strace stretches every call, so the "
                   "times show the order, not the pace: the timed figures are above. Each "
                   "diagram is drawn from its `trace-STACK-OP.json`, which ui.perfetto.dev "
                   "opens with every call's bytes and peer (docs/bench-output.md, "
                   "\"Traces\").")]
    out_blocks += figs
    if rows:
        out_blocks.append(("table", ["stack", "operation", "status", "why"], rows))
    return out_blocks
