"""A traced operation as a file people can open: Chrome's trace-event
format (the JSON object form, {"traceEvents": [...]}), which
ui.perfetto.dev ("Open trace file") and chrome://tracing read. Drawn from
the raw records alone (trace_raw.Record), never from a rerun.

What a file holds (bench/trace-event.schema.json is the subset written):
  - "M" events naming each process ("server: Xvfb (pid 123)") and thread,
    in the order server, window manager, compositor, app;
  - an "X" slice per IPC call (cat "ipc") and per wait (cat "wait") that
    began in the operation's window, on the thread that made it: ts and
    dur in us since the operation's start (the fork, the first resize
    request, the scene's start), args the syscall, fd, bytes, the socket's
    inodes and the peer process at the other end;
  - a flow ("s" at the send, "f" with bp "e" at the receive) per message,
    trace_flows' byte-order match of a send to the receive that read it;
  - the timeline's points as instant events ("i") of a "timeline" process;
  - the scheduler's switches as slices on one track per CPU of a "CPUs"
    process (cat "sched"), where they were recorded;
  - "otherData": what was traced, the window, the counts, and why there
    are no switches where there are none.
A combined file stacks two operations (an X11 stack's above a Wayland
stack's) with their pids apart by STRIDE and their names prefixed by the
stack, both starting at 0.
"""
import json
import os

from duet_bench import trace_flows
from duet_bench.trace_raw import summary

# Pseudo processes and their threads, above any real pid (Linux's pid_max
# is at most 2^22). Perfetto takes a tid for one thread whatever pid it
# comes with, so every tid written is unique, and a process's metadata
# rides on its main thread (tid = pid).
TIMELINE_PID = 9000001
CPU_PID = 9000002
CPU_TID = 9000100  # + the CPU's number
STRIDE = 10000000  # the pid offset of the second stack in a combined file
ROLE_ORDER = ("server", "xwayland", "wm", "compositor", "app")
# A flow leaves its send as the send begins and enters its receive as the
# receive ends: the bytes were queued somewhere inside the send (whose
# strace time includes the tracer's stops) and taken at the end of the
# receive (which may have blocked waiting for them), so a send that began
# before the receive ended is all byte order promises. EDGE_NS inside the
# slice, so that each end binds to it; a slice lasts at least 2 EDGE_NS.
EDGE_NS = 1
MIN_DUR_NS = 2 * EDGE_NS


def _sort_index(role):
    return ROLE_ORDER.index(role) if role in ROLE_ORDER else len(ROLE_ORDER)


def messages(rec):
    """[(send, receive, first byte, bytes)] of the window: both ends in it."""
    return [m for m in trace_flows.match(rec.calls, {int(k): v for k, v in (
        rec.meta.get("queued") or {}).items()}) if rec.in_window(m[0]) and rec.in_window(m[1])]


def shown_calls(rec):
    """The calls a trace file shows as slices: IPC and waits in the window."""
    return [c for c in rec.calls if rec.in_window(c) and (c.ipc or c.wait)]


def _durations(calls, end):
    """{call: ns shown} with each slice ending before its thread's next
    begins (strace's -T and -ttt are read at different stops)."""
    out, last = {}, {}
    for c in sorted(calls, key=lambda c: (c.tid, c.ts), reverse=True):
        nxt = last.get(c.tid, end)
        out[id(c)] = max(MIN_DUR_NS, min(c.dur or 0, nxt - c.ts))
        last[c.tid] = c.ts
    return out


def _name(rec, pid, label):
    p = rec.processes.get(pid) or {}
    what = "%s: %s (pid %d)" % (p.get("role", "other"), p.get("exe") or p.get("comm") or "?", pid)
    return "%s %s" % (label, what) if label else what


def events(rec, label=None, base=0, order=0):
    """The trace events of one Record (pids + base, names after label)."""
    t0 = rec.t0

    def us(ns):
        return round((ns - t0) / 1000.0, 3)

    calls = shown_calls(rec)
    dur = _durations(calls, rec.window[1] + 10 ** 12)
    evs = []
    pids = sorted({c.pid for c in calls} | set(rec.processes),
                  key=lambda p: (_sort_index(rec.role(p)), p))
    for k, pid in enumerate(pids):
        evs.append({"ph": "M", "name": "process_name", "pid": base + pid, "tid": base + pid,
                    "args": {"name": _name(rec, pid, label)}})
        evs.append({"ph": "M", "name": "process_sort_index", "pid": base + pid,
                    "tid": base + pid,
                    "args": {"sort_index": order * 100 + k}})
    for tid in sorted({c.tid for c in calls}):
        t = rec.threads.get(tid) or {}
        pid = t.get("pid") or tid
        evs.append({"ph": "M", "name": "thread_name", "pid": base + pid, "tid": base + tid,
                    "args": {"name": "%s %d" % (t.get("comm") or "thread", tid)}})
    slices = []
    for c in calls:
        peer = rec.peer_pid(c)
        args = {"syscall": c.call, "fd": c.fd, "strace": "%s:%d" % (c.file, c.line)}
        if c.unix:
            args.update(bytes=c.bytes, socket=c.kind, inode=c.inode, peer_inode=c.peer,
                        peer_pid=peer, peer=rec.role(peer) or "unknown")
        if c.error or c.result is None:
            args["result"] = c.error or ("unfinished" if c.unfinished else "?")
        name = c.call if not c.ipc else "%s %s %s" % (
            c.call, "to" if c.sends else "from", args["peer"])
        slices.append({"ph": "X", "cat": "ipc" if c.ipc else "wait", "name": name,
                       "pid": base + c.pid, "tid": base + c.tid, "ts": us(c.ts),
                       "dur": round(dur[id(c)] / 1000.0, 3), "args": args})
    for n, (s, r, first, size) in enumerate(messages(rec), 1):
        for ph, c in (("s", s), ("f", r)):
            at = c.ts + EDGE_NS if ph == "s" else c.ts + dur[id(c)] - EDGE_NS
            e = {"ph": ph, "cat": "ipc", "name": "message", "id": base + n, "pid": base + c.pid,
                 "tid": base + c.tid, "ts": us(at)}
            if ph == "f":
                e["bp"] = "e"
            else:
                e["args"] = {"bytes": size, "offset": first}
            slices.append(e)
    evs += [{"ph": "M", "name": "process_name", "pid": base + TIMELINE_PID,
             "tid": base + TIMELINE_PID,
             "args": {"name": ("%s timeline" % label) if label else "timeline"}},
            {"ph": "M", "name": "process_sort_index", "pid": base + TIMELINE_PID,
             "tid": base + TIMELINE_PID,
             "args": {"sort_index": order * 100 - 2}}]
    for p in rec.meta.get("points") or []:
        slices.append({"ph": "i", "s": "p", "name": p["name"], "pid": base + TIMELINE_PID,
                       "tid": base + TIMELINE_PID, "ts": us(p["ns"]),
                       "args": {"source": p.get("source")}})
    evs += _sched(rec, us, label, base, order, slices)
    slices.sort(key=lambda e: e["ts"])
    return evs + slices


def _sched(rec, us, label, base, order, slices):
    """The CPUs' tracks: who of the traced threads ran on each CPU when,
    from sched_switch (trace_raw.Record.switches); adds the slices, returns
    the metadata events."""
    switches = rec.switches()
    if not switches:
        return []
    traced = set(rec.threads) | {c.tid for c in rec.calls}
    running = {}  # cpu -> (tid, since)
    cpus = set()
    lo, hi = rec.window
    for ns, cpu, prev, nxt, _ in switches:
        cur = running.pop(cpu, None)
        if cur and cur[0] == prev and prev in traced:
            a, b = max(cur[1], lo), min(ns, hi)
            if a < b:
                t = rec.threads.get(prev) or {}
                pid = t.get("pid") or prev
                cpus.add(cpu)
                slices.append({"ph": "X", "cat": "sched", "name": "%s %s %d" % (
                    rec.role(pid) or "other", t.get("comm") or "", prev),
                    "pid": base + CPU_PID, "tid": base + CPU_TID + cpu, "ts": us(a),
                    "dur": round((b - a) / 1000.0, 3), "args": {"tid": prev, "pid": pid}})
        running[cpu] = (nxt, ns)
    evs = [{"ph": "M", "name": "process_name", "pid": base + CPU_PID, "tid": base + CPU_PID,
            "args": {"name": ("%s CPUs (sched_switch)" % label) if label
                     else "CPUs (sched_switch)"}},
           {"ph": "M", "name": "process_sort_index", "pid": base + CPU_PID,
            "tid": base + CPU_PID,
            "args": {"sort_index": order * 100 - 1}}]
    evs += [{"ph": "M", "name": "thread_name", "pid": base + CPU_PID, "tid": base + CPU_TID + cpu,
             "args": {"name": "CPU %d" % cpu}} for cpu in sorted(cpus)]
    return evs


def about(rec):
    """What one operation's trace shows, for otherData and results.json:
    the window, the counts, the points, the switches or why none."""
    m = rec.meta
    ipc = [c for c in shown_calls(rec) if c.ipc]
    sched = m.get("sched") or {}
    out = {"stack": m["stack"], "op": m["op"], "start": m.get("t0_point"),
           "window_ms": round((rec.window[1] - rec.window[0]) / 1e6, 3),
           "ipc_calls": len(ipc), "messages": len(messages(rec)),
           "bytes": sum(c.bytes for c in ipc if c.sends),
           "processes": summary(rec),
           "points_ms": {p["name"]: round((p["ns"] - rec.t0) / 1e6, 3)
                         for p in m.get("points") or []},
           "sched": sched.get("status", "unavailable")}
    if sched.get("reason"):
        out["sched_reason"] = sched["reason"]
    if m.get("points_missing"):
        out["points_missing"] = m["points_missing"]
    return out


def document(parts):
    """The JSON object of one or more (label, Record): the first stack's
    processes on top."""
    evs, other = [], {"tool": "duet bench (bench/duet_bench/trace_events.py)",
                      "time": "us since each operation's start (otherData.*.start)"}
    for k, (label, rec) in enumerate(parts):
        evs += events(rec, label if len(parts) > 1 else None, k * STRIDE, k)
        other[label or rec.meta["stack"]] = about(rec)
    return {"traceEvents": evs, "displayTimeUnit": "ns", "otherData": other}


def write(path, parts):
    doc = document(parts)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write('{"displayTimeUnit": "ns", "otherData": %s,\n"traceEvents": [\n'
                % json.dumps(doc["otherData"], sort_keys=True))
        f.write(",\n".join(json.dumps(e, sort_keys=True) for e in doc["traceEvents"]))
        f.write("\n]}\n")
    os.replace(tmp, path)
    return doc
