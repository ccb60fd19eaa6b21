"""The report's hop diagrams (issue 46): per stack and traced operation, a
lane per process and an arrow per message, from the operation's start to
its end point (a launch's fork to composited, a resize run's first
request to its last size composited, a render interval's scene), with the
counts of each lane, plotted into plots/hops-STACK-OP.svg. Drawn from
the trace file itself (trace-STACK-OP.json, trace_events.py), so the
diagram shows what the file shows; in the results directory, which
`duet report DIR --out ELSE` still reads."""
import json
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
    arrows = [(s[1], lane[s[0]], ends[i][1], lane[ends[i][0]]) for i, s in starts.items()
              if i in ends and 0 <= s[1] <= end and s[0] in lane and ends[i][0] in lane]
    lanes = []
    for p in pids:
        sent = sum(1 for a in arrows if a[1] == lane[p])
        got = sum(1 for a in arrows if a[3] == lane[p])
        n = sum(1 for t in calls[p] if 0 <= t <= end)
        name = names.get(p, str(p))
        lanes.append(("%s\n%d IPC calls; sent %d, received %d" % (
            name.split(" (pid")[0], n, sent, got), COLOURS.get(name.split(":")[0], 0x666666)))
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
    return {"op": op, "lanes": lanes, "arrows": arrows, "marks": marks, "end": end,
            "end_name": end_name, "calls": sum(sum(1 for t in c if 0 <= t <= end)
                                               for c in calls.values())}


def _order(name):
    role = name.split(":")[0]
    return ROLES.index(role) if role in ROLES else len(ROLES)


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
            figs.append(("svg", "hops-%s-%s" % (st, op), plots.hops(
                out, "hops-%s-%s" % (st, op), title, d["lanes"], d["arrows"], d["marks"],
                d["end"])))
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
