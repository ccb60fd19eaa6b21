#!/usr/bin/env python3
"""The traced operations (issue 46) checked on real runs, not drawn by hand.

One `duet bench --quick --stacks wayland,x11 --experiments launch` (tracing
is on by default) traces a launch, the resize sizes and a render interval
on duet-compositor and on Xvfb + duet-xwm. For every trace file it writes:
  - it validates against bench/trace-event.schema.json (the subset of
    Chrome's trace-event format written), and results.json against
    bench/results.schema.json;
  - its IPC slices are the raw records' IPC calls in the window, line for
    line: the test's own reading of strace's files (an IPC call on a Unix
    socket whose stamp lies in meta's window) names the same file:line set
    as the slices' args; and the bench's own strace counting
    (ipc.strace_counts, which counts the straced launch) finds the same
    number per process in those files;
  - every flow joins a send on one end of a stream socket to a receive on
    its other end (inode and peer inode crossed), and the send began before
    the receiving thread's next call (strace stamps a call before it runs
    and the thread's next call after the receive returned);
  - per thread, slices follow each other in time without overlap, and
    each strace file's stamps never go back;
  - the launch's timeline points are there (fork at 0, composited), the
    scheduler's switches were recorded or the reason is given.
The launch's count is printed beside the bench's own straced launch's (a
separate launch, fork -> first_frame read by the bench, where the trace
runs fork -> composited + 20 ms) and held within a factor of 2.
The report's hop diagram of each launch shows the trace file's messages and
per-process IPC calls from fork to composited (in the SVG's text).
In a real browser (headless chromium, browser.py) report.html shows a hop
diagram for every stack and operation, and in each, as chromium parsed and
painted it:
  - a lane per process that made an IPC call in the trace file, named as
    the file names it, its label the trace's count in the diagram's span
    (start -> end point: composited, the last size composited, the scene's
    end) of its IPC calls, messages sent and messages received;
  - an arrow per message of the trace sent in that span (a line and a
    three-cornered head at its receive end, shown, in its sender's colour),
    each from the sender's lane at the send's time to the receiver's lane at
    the receive's (within half a pixel, on the scale the x axis's ticks
    say); per lane the arrows leaving and reaching it are the trace's;
  - a dashed line per timeline point in the span, at its time;
  - a screenshot of the diagram whose plot area is not one colour and shows
    an arrow's colour.
chromium's part (one start, every diagram's DOM and screenshot) takes
about 2 s.
`duet trace DIR` then writes the same files again from the raw records;
`duet trace DIR x11 wayland` the combined ones; `duet trace` of a
directory without records exits 1. A second run with --no-trace records
no trace and still counts.

Skips with one line (exit 77) where strace is missing or ptrace is refused;
without chromium (Debian package chromium, scripts/packages.sh) it fails
under CI (CI=true), and elsewhere checks everything else, then skips
saying so.
Environment: DUET_BUILD_DIR (the build), DUET_TOOL (tools/duet).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
sys.path.insert(0, BENCH)
sys.path.insert(0, HERE)
import browser  # noqa: E402
from checks import check, check_schema, fail, on_fail  # noqa: E402
from duet_bench import ipc, trace_record  # noqa: E402
from duet_bench.trace_raw import META, OPS, PREFIXES, raw_dir  # noqa: E402

STACKS = ("wayland", "x11")
SENDS = {"sendmsg", "writev", "write", "send", "sendto"}
RECEIVES = {"recvmsg", "readv", "read", "recv", "recvfrom"}
# Independent of trace_raw's parser: a stamp, a call, its fd's socket.
RAW_CALL = re.compile(r"^(\d+)\.(\d+) (\w+)\(\d+<UNIX")
STAMP = re.compile(r"^(\d+)\.(\d+) ")


def ns(sec, frac):
    return int(sec) * 10 ** 9 + int((frac + "0" * 9)[:9])


def bench(out, args, timeout=600):
    r = subprocess.run([sys.executable, os.environ["DUET_TOOL"], "bench", "--out", out] + args,
                       capture_output=True, text=True, timeout=timeout)
    print(r.stdout[-1500:])
    print(r.stderr[-3000:])
    return r


def duet_trace(args):
    return subprocess.run([sys.executable, os.environ["DUET_TOOL"], "trace"] + args,
                          capture_output=True, text=True, timeout=300)


def raw_ipc_lines(raw, meta):
    """{(file, line)} of the IPC calls on Unix sockets stamped in the window,
    read straight from strace's files; checks each file's stamps run on."""
    off = meta["clock"]["realtime_minus_monotonic_ns"]
    lo, hi = meta["window_ns"]
    out = set()
    for name in sorted(os.listdir(raw)):
        prefix, _, tid = name.partition(".")
        if prefix not in PREFIXES or not tid.isdigit():
            continue
        last = 0
        with open(os.path.join(raw, name), errors="replace") as f:
            for n, line in enumerate(f, 1):
                s = STAMP.match(line)
                if not s:
                    continue
                t = ns(s.group(1), s.group(2))
                if t < last:
                    fail("%s:%d: strace's stamp goes back %d ns" % (name, n, last - t))
                last = t
                m = RAW_CALL.match(line)
                if m and m.group(3) in ipc.IPC_CALLS and lo <= t - off <= hi:
                    out.add("%s:%d" % (name, n))
    return out


def bench_counts(raw, meta):
    """The bench's own strace counting (ipc.strace_counts) of raw's files in
    the window: {role: IPC calls on Unix sockets}."""
    off = meta["clock"]["realtime_minus_monotonic_ns"]
    roles = {int(p): v["role"] for p, v in meta["processes"].items()}
    tid_owner = {int(t): roles.get(v["pid"], "other") for t, v in meta["threads"].items()}
    app = meta["app_pid"]
    for name in os.listdir(raw):
        prefix, _, tid = name.partition(".")
        if prefix == "app" and tid.isdigit():
            tid_owner.setdefault(int(tid), "app")
    inode_owner = {int(i): roles.get(p, "other") for i, p in meta["sockets"].items()}
    per = ipc.strace_counts(raw, PREFIXES, tid_owner, inode_owner, meta["window_ns"][0] + off,
                            meta["window_ns"][1] + off)
    check(any(r == "app" for r in per) or app is None, "the bench's counting sees the app")
    return {r: p["ipc_unix"] for r, p in per.items() if p["ipc_unix"]}


def check_file(path, schema, raw):
    import jsonschema  # Debian's python3-jsonschema, a test dependency
    with open(path) as f:
        doc = json.load(f)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    check(not errors, "%s validates against bench/trace-event.schema.json%s" % (
        os.path.basename(path), "".join("\n  %s: %s" % (list(e.path), e.message[:200])
                                        for e in errors[:10])))
    with open(os.path.join(raw, META)) as f:
        meta = json.load(f)
    evs = doc["traceEvents"]
    slices = [e for e in evs if e["ph"] == "X" and e["cat"] in ("ipc", "wait")]
    ipc_slices = [e for e in slices if e["cat"] == "ipc"]
    name = os.path.basename(path)

    # The count: the same calls as the raw records', line for line.
    lines = raw_ipc_lines(raw, meta)
    shown = {e["args"]["strace"] for e in ipc_slices}
    check(len(shown) == len(ipc_slices), "%s: no raw line is shown twice" % name)
    check(shown == lines, "%s: its %d IPC slices are the %d IPC calls strace wrote in the "
          "window (only in the trace: %s; only in the records: %s)" % (
              name, len(ipc_slices), len(lines), sorted(shown - lines)[:5],
              sorted(lines - shown)[:5]))
    roles = {int(p): v["role"] for p, v in meta["processes"].items()}
    per_role = {}
    for e in ipc_slices:
        role = roles.get(e["pid"], "other")
        per_role[role] = per_role.get(role, 0) + 1
    counted = bench_counts(raw, meta)
    check(per_role == counted, "%s: per process the trace's IPC calls %s are the bench's "
          "strace counting's of the same records and window %s" % (name, per_role, counted))
    check(doc["otherData"][meta["stack"]]["ipc_calls"] == len(ipc_slices),
          "%s: otherData's count is the slices' (%d)" % (name, len(ipc_slices)))

    # Per thread: in time order, one slice after the other.
    by_thread = {}
    for e in slices:
        by_thread.setdefault((e["pid"], e["tid"]), []).append(e)
    for key, evs_t in by_thread.items():
        for a, b in zip(evs_t, evs_t[1:]):
            if b["ts"] < a["ts"] + a["dur"] - 1e-6:
                fail("%s: thread %s: a slice at %.3f us begins before the one at %.3f us "
                     "(%.3f us long) ends" % (name, key, b["ts"], a["ts"], a["dur"]))
    check(True, "%s: per thread (%d threads) the slices follow each other without overlap"
          % (name, len(by_thread)))

    # Flows: a send on one end, its receive on the other end of the socket.
    def enclosing(e):
        for s in by_thread.get((e["pid"], e["tid"]), []):
            if s["ts"] <= e["ts"] <= s["ts"] + s["dur"]:
                return s
        fail("%s: flow %s at %.3f us has no slice on its thread" % (name, e["id"], e["ts"]))

    def after(s):
        evs_t = by_thread[(s["pid"], s["tid"])]
        i = evs_t.index(s)
        return evs_t[i + 1]["ts"] if i + 1 < len(evs_t) else None

    starts = {e["id"]: e for e in evs if e["ph"] == "s"}
    ends = {e["id"]: e for e in evs if e["ph"] == "f"}
    check(starts and set(starts) == set(ends), "%s: %d messages, each with a start and an end"
          % (name, len(starts)))
    for i, s in starts.items():
        snd, rcv = enclosing(s), enclosing(ends[i])
        a, b = snd["args"], rcv["args"]
        if not (a["syscall"] in SENDS and b["syscall"] in RECEIVES
                and a["socket"] == b["socket"] == "UNIX-STREAM"
                and a["inode"] == b["peer_inode"] and b["inode"] == a["peer_inode"]):
            fail("%s: message %d does not join a send and a receive on the two ends of one "
                 "socket: %s -> %s" % (name, i, a, b))
        nxt = after(rcv)
        if nxt is not None and snd["ts"] > nxt:
            fail("%s: message %d: its send (%s) began at %.3f us, after the receiving thread's "
                 "next call at %.3f us" % (name, i, a["strace"], snd["ts"], nxt))
    check(True, "%s: every message joins a send to a receive on the other end of its socket, "
          "the send begun before the receiver's next call" % name)
    return doc, meta, per_role


def check_hops(out, stacks):
    """The report's hop diagram of each launch counts what its trace file
    holds from the fork to composited: the messages sent in that span
    and, lane by lane, the IPC calls."""
    with open(os.path.join(out, "report.html")) as f:
        page = f.read()
    check("Who talks to whom" in page, "report.html has the hop diagrams' section")
    for st in stacks:
        with open(os.path.join(out, "trace-%s-launch.json" % st)) as f:
            evs = json.load(f)["traceEvents"]
        end = [e["ts"] for e in evs if e["ph"] == "i" and e["name"] == "composited"][0]
        sent = sum(1 for e in evs if e["ph"] == "s" and 0 <= e["ts"] <= end)
        calls = {}
        for e in evs:
            if e["ph"] == "X" and e["cat"] == "ipc" and 0 <= e["ts"] <= end:
                calls[e["pid"]] = calls.get(e["pid"], 0) + 1
        with open(os.path.join(out, "plots", "hops-%s-launch.svg" % st)) as f:
            svg = f.read()
        title = re.search(r"%s launch: (\d+) messages and (\d+) IPC calls" % st, svg)
        lanes = sorted(int(n) for n in re.findall(r">(\d+) IPC calls; sent", svg))
        check(title and int(title.group(1)) == sent and int(title.group(2)) == sum(
            calls.values()) and lanes == sorted(calls.values()) and svg[svg.find("<svg"):] in page,
              "%s: the launch's hop diagram (in report.html) shows the trace's %d messages and "
              "%s IPC calls per process from fork to composited" % (st, sent, sorted(
                  calls.values())))


def trace_diagram(path, op):
    """What the hop diagram of one trace file must show, read from the file
    by the test's own rule: the span's end (launch: composited; resize: the
    last size composited; frame: the scene's end), the lanes (every process
    with an IPC call: {pid: [name, calls in the span, sent, received]}), the
    messages sent in the span [(sent ms, pid, received ms, pid)] and the
    timeline points in it [ms] (resize: requested and composited only)."""
    with open(path) as f:
        evs = json.load(f)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in evs
             if e["ph"] == "M" and e["name"] == "process_name"}
    points = [(e["name"], e["ts"] / 1000.0) for e in evs
              if e["ph"] == "i" and names.get(e["pid"]) == "timeline"]
    if op == "launch":
        end = [ms for n, ms in points if n == "composited"]
    elif op == "resize":
        end = [max(ms for n, ms in points if n.endswith(": composited"))]
    else:
        end = [ms for n, ms in points if n.startswith("scene end")]
    check(len(end) == 1, "%s: its end point is there (%s)" % (os.path.basename(path), end))
    end = end[0]
    ipc_evs = [e for e in evs if e["ph"] == "X" and e["cat"] == "ipc"]
    lanes = {e["pid"]: [names[e["pid"]].split(" (pid")[0], 0, 0, 0] for e in ipc_evs}
    for e in ipc_evs:
        if 0 <= e["ts"] / 1000.0 <= end:
            lanes[e["pid"]][1] += 1
    ends = {e["id"]: e for e in evs if e["ph"] == "f"}
    msgs = []
    for e in evs:
        if e["ph"] == "s" and 0 <= e["ts"] / 1000.0 <= end:
            f = ends[e["id"]]
            msgs.append((e["ts"] / 1000.0, e["pid"], f["ts"] / 1000.0, f["pid"]))
            lanes[e["pid"]][2] += 1
            lanes[f["pid"]][3] += 1
    marks = [ms for n, ms in points if 0 <= ms <= end and (
        op != "resize" or n.endswith((": requested", ": composited")))]
    return end, lanes, msgs, marks


def check_drawn(st, op, d, want):
    """One diagram as chromium parsed and painted it (browser.HOPS_SCRIPT's
    record d) against trace_diagram()'s want."""
    end, lanes, msgs, marks = want
    name = "%s %s" % (st, op)
    near = 0.5  # px: the SVG's coordinates are written to 0.01

    # Lanes: one per process, named and counted as the trace says.
    check(sorted(int(ln["pid"]) for ln in d["lanes"]) == sorted(lanes) and all(
        ln["flat"] and ln["name"] == lanes[int(ln["pid"])][0] and
        ln["count"] == "%d IPC calls; sent %d, received %d" % tuple(lanes[int(ln["pid"])][1:])
        for ln in d["lanes"]) and len({ln["y"] for ln in d["lanes"]}) == len(lanes),
          "%s: %d lanes, one per process, labelled with the trace's counts: %s" % (
              name, len(d["lanes"]), "; ".join("%s: %s" % (ln["name"], ln["count"])
                                               for ln in d["lanes"])))
    lane_at = {round(ln["y"], 2): int(ln["pid"]) for ln in d["lanes"]}
    colour = {int(ln["pid"]): browser.rgb(ln["colour"]) for ln in d["lanes"]}
    total = sum(v[1] for v in lanes.values())
    check(d["title"] and d["title"].startswith("%s: %d messages and %d IPC calls" % (
        name, len(msgs), total)), "%s: its title: %s" % (name, d["title"]))

    # The x axis: every tick on one line ms -> px.
    ticks = d["ticks"]
    check(len(ticks) >= 2 and d["frame"], "%s: an x axis with %d ticks and a plot frame"
          % (name, len(ticks)))
    b = (ticks[-1]["x"] - ticks[0]["x"]) / (ticks[-1]["ms"] - ticks[0]["ms"])
    a = ticks[0]["x"] - b * ticks[0]["ms"]
    check(b > 0 and all(abs(a + b * t["ms"] - t["x"]) < 0.05 for t in ticks),
          "%s: the ticks lie on one scale (%.3f px per ms)" % (name, b))
    left, right = d["frame"][0], d["frame"][0] + d["frame"][2]

    def px(ms):
        return min(max(a + b * ms, left), right)

    # Messages: an arrow each, from the sender's lane to the receiver's.
    bad = [m for m in d["msgs"] if m["parts"] != [1, 1] or not m["shown"] or m["corners"] != 3
           or abs(m["tip"][0] - m["x2"]) > 0.01 or abs(m["tip"][1] - m["y2"]) > 0.01
           or m["fill"] != m["stroke"]]
    check(not bad, "%s: each of the %d arrows is a line and a three-cornered head at its end, "
          "shown, in one colour%s" % (name, len(d["msgs"]), "" if not bad else ": %s" % bad[:3]))
    drawn = {}
    for m in d["msgs"]:
        a_pid, b_pid = lane_at.get(round(m["y1"], 2)), lane_at.get(round(m["y2"], 2))
        if a_pid is None or b_pid is None or browser.rgb(m["stroke"]) != colour[a_pid]:
            fail("%s: an arrow does not run from a lane to a lane in its sender's colour: %s"
                 % (name, m))
        drawn.setdefault((a_pid, b_pid), []).append([m["x1"], m["x2"], False])
    check(True, "%s: every arrow runs from a lane to a lane, in its sender's colour" % name)
    per = {p: [0, 0] for p in lanes}
    for (a_pid, b_pid), xs in drawn.items():
        per[a_pid][0] += len(xs)
        per[b_pid][1] += len(xs)
    check(len(d["msgs"]) == len(msgs) and all(
        per[p] == v[2:] for p, v in lanes.items()),
          "%s: %d arrows for the trace's %d messages in 0..%.3f ms; per lane sent and received "
          "%s, the trace's %s" % (name, len(d["msgs"]), len(msgs), end, sorted(per.values()),
                                  sorted(v[2:] for v in lanes.values())))
    for xs in drawn.values():
        xs.sort()
    missed = []
    for sent, a_pid, got, b_pid in sorted(msgs):
        x1, x2 = px(sent), px(got)
        for cand in drawn.get((a_pid, b_pid), []):
            if not cand[2] and abs(cand[0] - x1) <= near and abs(cand[1] - x2) <= near:
                cand[2] = True
                break
        else:
            missed.append((sent, a_pid, got, b_pid))
    check(not missed, "%s: every message's arrow runs from its send's time to its receive's "
          "(within %.1f px)%s" % (name, near, "" if not missed else "; not drawn so: %s"
                                 % missed[:5]))

    # The timeline's points: a dashed line each, at its time.
    got_marks = sorted(m["x"] for m in d["marks"])
    check(len(got_marks) == len(marks) and all(
        abs(x - px(ms)) <= near for x, ms in zip(got_marks, sorted(marks))),
          "%s: a line per timeline point in the span, at its time (%d)" % (name, len(marks)))

    # Painted: the plot area is not one colour, and an arrow's colour is
    # among its pixels (each sender's arrows are in the DOM's colours above;
    # a head can be covered by others where they are dense).
    img, s = d["image"], d["scale"]
    fx, fy, fw, fh = (int(round(v * s)) for v in d["frame"])
    seen = img.colors(fx + 1, fy + 1, fx + fw - 1, fy + fh - 1)
    senders = {colour[p] for p, v in lanes.items() if v[2]}
    check(img.width >= int(d["rect"][2]) - 1 and len(seen) > 1 and (senders & seen or not msgs),
          "%s: its screenshot (%dx%d) shows %d colours in the plot area, the senders' %s "
          "among them" % (name, img.width, img.height, len(seen), sorted(senders & seen)))


def check_in_browser(tmp, out, stacks):
    """report.html in headless chromium: every stack's and operation's hop
    diagram there, drawn and painted as its trace file says."""
    t0 = time.monotonic()
    chromium = browser.Chromium(os.path.join(tmp, "chromium"))
    try:
        found = browser.hop_diagrams(chromium, os.path.join(out, "report.html"),
                                     os.path.join(tmp, "shots"))
    except browser.BrowserError as e:
        fail("chromium: %s" % e)
    finally:
        chromium.close()
    print("info: chromium started, opened report.html, took %d screenshots and ended in %.1f s"
          % (len(found), time.monotonic() - t0))
    by_id = {d["id"]: d for d in found}
    want_ids = ["hops-%s-%s" % (st, op) for st in stacks for op in OPS]
    check(sorted(by_id) == sorted(want_ids) and len(found) == len(want_ids),
          "report.html shows the %d hop diagrams in chromium: %s" % (len(want_ids),
                                                                      [d["id"] for d in found]))
    for st in stacks:
        for op in OPS:
            name = "hops-%s-%s" % (st, op)
            check_drawn(st, op, by_id[name], trace_diagram(
                os.path.join(out, "trace-%s-%s.json" % (st, op)), op))


def test():
    why = trace_record.why_not()
    if why:
        print("SKIP: %s" % why)
        sys.exit(77)
    import jsonschema
    with open(os.path.join(BENCH, "trace-event.schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    no_browser = None
    try:
        browser.third_party("chromium")
    except browser.Missing as e:
        no_browser = str(e)
    except browser.BrowserError as e:
        fail(str(e))
    tmp = tempfile.mkdtemp(prefix="duet-trace-test-")
    on_fail(lambda: print("kept: %s" % tmp))
    out = os.path.join(tmp, "run")
    r = bench(out, ["--quick", "--stacks", ",".join(STACKS), "--experiments", "launch"])
    check(r.returncode == 0, "duet bench --quick exits 0 (status %d)" % r.returncode)
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    check_schema(res)
    phases = [p for p in res["phases"] if p["what"].startswith("trace ")]
    print("info: the traced operations took %.1f s in all: %s" % (
        sum(p["s"] for p in phases), ", ".join("%s %.1f s" % (p["what"], p["s"])
                                               for p in phases)))
    written = {}
    for st in STACKS:
        for op in OPS:
            rec = res["ipc"][st]["trace_" + op]
            check(rec.get("status") == "ok", "%s %s traced: %s" % (st, op, rec.get("status")
                                                                  if rec.get("status") == "ok"
                                                                  else rec.get("reason")))
            path = os.path.join(out, rec["file"])
            raw = raw_dir(out, st, op)
            check(os.path.isdir(raw) and rec["raw"] == os.path.relpath(raw, out),
                  "%s %s: raw records kept in %s" % (st, op, rec["raw"]))
            doc, meta, per_role = check_file(path, schema, raw)
            check(rec["ipc_calls"] == sum(per_role.values()),
                  "%s %s: results.json's count is the trace's (%d)" % (st, op, rec["ipc_calls"]))
            sched = meta["sched"]
            cpu = [e for e in doc["traceEvents"] if e.get("cat") == "sched"]
            check((sched["status"] == "recorded" and cpu and
                   sched["enabled_ns"] <= meta["window_ns"][0]) or
                  (sched["status"] == "unavailable" and sched.get("reason") and
                   doc["otherData"][st].get("sched_reason")),
                  "%s %s: scheduler switches %s" % (st, op, "on %d CPU slices" % len(cpu)
                                                    if cpu else sched.get("reason")))
            with open(path) as f:
                written[path] = f.read()
        launch = res["ipc"][st]["trace_launch"]
        check(launch["points_ms"].get("fork") == 0 and "composited" in launch["points_ms"],
              "%s: the launch's timeline points: %s" % (st, launch["points_ms"]))
        strace = res["ipc"][st]["strace_launch"]["processes"]
        theirs = sum(p.get("ipc_unix", 0) for p in strace.values())
        print("info: %s launch: %d IPC calls in the trace (fork -> composited + 20 ms), %d in "
              "the bench's straced launch (fork -> first_frame read)" % (
                  st, launch["ipc_calls"], theirs))
        check(theirs / 2 <= launch["ipc_calls"] <= theirs * 2,
              "%s: the traced launch's %d IPC calls are within a factor 2 of the straced "
              "launch's %d" % (st, launch["ipc_calls"], theirs))
    check_hops(out, STACKS)
    if no_browser:
        print("info: report.html is not opened in a browser: %s" % no_browser)
    else:
        check_in_browser(tmp, out, STACKS)
    combined = os.path.join(out, "trace-x11+wayland-launch.json")
    check(os.path.exists(combined), "the combined x11+wayland launch was written")
    with open(combined) as f:
        doc = json.load(f)
    named = [(e["pid"], e["args"]["name"]) for e in doc["traceEvents"]
             if e["name"] == "process_name"]
    names = [n for _, n in named]
    check(any(n.startswith("x11 server") for n in names) and
          any(n.startswith("wayland server") for n in names) and
          len({p for p, _ in named}) == len(named),
          "the combined file names each stack's processes apart, under distinct pids: %s"
          % names)
    with open(combined) as f:
        written[combined] = f.read()

    # Written again from the raw records alone: the same files.
    for path in written:
        os.unlink(path)
    rt = duet_trace([out])
    print(rt.stdout[-1500:], rt.stderr[-1500:])
    check(rt.returncode == 0, "duet trace DIR exits 0")
    for path, text in written.items():
        with open(path) as f:
            check(f.read() == text, "duet trace wrote %s as the bench did"
                  % os.path.basename(path))
    rt = duet_trace([out, "x11", "wayland"])
    check(rt.returncode == 0 and os.path.exists(combined), "duet trace DIR x11 wayland")
    rt = duet_trace([tmp])
    check(rt.returncode == 1 and "no traced operation" in rt.stderr,
          "duet trace of a directory without records exits 1 and says why: %s"
          % rt.stderr.strip())

    off = os.path.join(tmp, "off")
    r = bench(off, ["--quick", "--stacks", "wayland", "--experiments", "launch", "--no-trace"])
    check(r.returncode == 0, "duet bench --no-trace exits 0")
    with open(os.path.join(off, "results.json")) as f:
        res = json.load(f)
    check(res["options"]["ipc"] and res["ipc"]["wayland"]["strace_launch"].get("processes"),
          "--no-trace alone keeps the counting runs")
    check(not res["options"]["trace"] and not os.path.exists(os.path.join(off, "trace-raw"))
          and not [n for n in os.listdir(off) if n.startswith("trace-")]
          and not any(k.startswith("trace_") for k in res["ipc"].get("wayland", {})),
          "--no-trace: no trace recorded, no trace file")
    shutil.rmtree(tmp, ignore_errors=True)
    if no_browser:
        print("SKIP: the rest passed, but the hop diagrams were not checked in a browser: %s"
              % no_browser)
        sys.exit(77)


if __name__ == "__main__":
    test()
