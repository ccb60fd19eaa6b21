"""The raw records of one traced operation (trace_record.py writes them
into RESULTS/trace-raw/STACK-OP/), read back: strace's lines as calls with
their process, thread, time, duration, bytes and the socket at each end;
the scheduler's switches; and meta.json (the processes, the clock, the
window, the timeline's points).

Everything the trace files, the counts in results.json and the report's
diagrams show is read here, so they cannot disagree about what a record
says. Times come out as CLOCK_MONOTONIC ns, the clock of the apps' and
servers' own timelines: strace stamps wall-clock time (-ttt), and meta's
clock offset, read when the operation was traced, converts it.
"""
import json
import os
import re

from duet_bench.ipc import IPC_CALLS, SEND_CALLS, WAIT_CALLS

OPS = ("launch", "resize", "frame")  # what is traced, in this order
RAW = "trace-raw"  # RESULTS/trace-raw/STACK-OP/ holds one operation's records
META = "meta.json"
SCHED = "sched.txt"
# strace -ff -o DIR/PREFIX writes DIR/PREFIX.TID per thread: the stack's
# processes (attached) and the app (started under strace).
PREFIXES = ("stack", "app")

# "1700000000.123456789 sendmsg(5<UNIX-STREAM:[111->222]>, ..." (ipc.py's
# STRACE_LINE, which counts the same lines, reads the fd alike) and
# "1700000000.123456789 <... recvmsg resumed>...".
LINE = re.compile(r"^(\d+)\.(\d+) (?:(\w+)\((?:(\d+)(?:<([^\[>:]*)(?::\[(\d+)(?:->(\d+))?)?)?)?"
                  r"|<\.\.\. (\w+) resumed>)")
DURATION = re.compile(r" <(\d+)\.(\d+)>$")
# ") = 52", ") = -1 EAGAIN (...)", ") = ?": the last one on the line (an
# argument's string may hold the same characters; the result comes last).
RESULT = re.compile(r"\)\s+=\s+(-?\d+|\?)(?:\s+(E[A-Z0-9]+))?")
# clone()/clone3()/fork()/vfork() = NEW: who made a thread or a process born
# while the operation ran (CLONE_THREAD: a thread of the caller's process).
CLONES = ("clone", "clone3", "fork", "vfork")
UNFINISHED = "<unfinished ...>"
# sched.txt: perf script -F tid,cpu,time,event,trace --ns of sched_switch.
SWITCH = re.compile(r"^\s*(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+sched:sched_switch:.*"
                    r"prev_pid=(\d+) .*==> next_comm=(.*) next_pid=(\d+) ")


def _ns(sec, frac):
    return int(sec) * 1000000000 + int((frac + "000000000")[:9])


def raw_dir(out, stack, op):
    return os.path.join(out, RAW, "%s-%s" % (stack, op))


def raw_dirs(out):
    """{(stack, op): directory} of every complete record under out."""
    found = {}
    top = os.path.join(out, RAW)
    for name in sorted(os.listdir(top)) if os.path.isdir(top) else []:
        stack, _, op = name.rpartition("-")
        if op in OPS and os.path.exists(os.path.join(top, name, META)):
            found[(stack, op)] = os.path.join(top, name)
    return found


def load_meta(raw):
    with open(os.path.join(raw, META)) as f:
        return json.load(f)


class Call:
    """One system call of one thread, as strace wrote it."""
    __slots__ = ("tid", "pid", "ts", "dur", "call", "fd", "kind", "inode", "peer", "result",
                 "error", "unfinished", "line", "file", "thread")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))

    @property
    def unix(self):
        return bool(self.kind and self.kind.startswith("UNIX"))

    @property
    def ipc(self):
        """An IPC call as the bench counts it (ipc.py): one of IPC_CALLS on
        a Unix socket, whatever it returned."""
        return self.unix and self.call in IPC_CALLS

    @property
    def wait(self):
        return self.call in WAIT_CALLS or self.call == "pselect6"

    @property
    def sends(self):
        return self.call in SEND_CALLS

    @property
    def bytes(self):
        return self.result if isinstance(self.result, int) and self.result > 0 else 0

    @property
    def stream(self):
        """The stream socket's direction this call moves bytes on, named by
        the sending end's inode: a send on [A->B] and a receive on [B->A]
        share stream A."""
        if not (self.kind == "UNIX-STREAM" and self.inode and self.peer):
            return None
        return self.inode if self.sends else self.peer


def parse_file(path, tid, offset_ns):
    """The calls of one strace -ff file (one thread); offset_ns: wall clock
    minus CLOCK_MONOTONIC. An unfinished call is completed by its resumed
    line; one never resumed (the thread exited or strace detached during
    it) is kept without a result."""
    out, pending = [], None
    with open(path, errors="replace") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            m = LINE.match(line)
            if not m:
                continue
            ts = _ns(m.group(1), m.group(2)) - offset_ns
            d = DURATION.search(line)
            dur = _ns(d.group(1), d.group(2)) if d else None
            body = line[:d.start()] if d else line
            if m.group(8):  # "<... call resumed>": completes the pending call
                if pending is not None and pending.call == m.group(8):
                    _finish(pending, body, dur)
                    pending = None
                continue
            c = Call(tid=tid, ts=ts, dur=dur, call=m.group(3),
                     fd=int(m.group(4)) if m.group(4) else None, kind=m.group(5),
                     inode=int(m.group(6)) if m.group(6) else None,
                     peer=int(m.group(7)) if m.group(7) else None,
                     line=n, file=os.path.basename(path))
            if c.call in CLONES:
                c.thread = "CLONE_THREAD" in line
            out.append(c)
            if body.endswith(UNFINISHED):
                c.unfinished = True
                pending = c
            else:
                _finish(c, body, dur)
    return out


def _finish(c, body, dur):
    """The call's result from its line (RESULT) and its -T duration; a
    line without one ("<detached ...>": strace left during the call) is
    unfinished."""
    m = None
    for m in RESULT.finditer(body):
        pass
    c.unfinished = m is None
    if m:
        c.result = None if m.group(1) == "?" else int(m.group(1))
        c.error = m.group(2)
    c.dur = dur


def trace_files(raw):
    """(prefix, tid, path) of every strace file in raw."""
    out = []
    for name in sorted(os.listdir(raw)):
        prefix, _, tid = name.partition(".")
        if prefix in PREFIXES and tid.isdigit():
            out.append((prefix, int(tid), os.path.join(raw, name)))
    return out


class Record:
    """One traced operation: meta, every call with its process, the
    scheduler's switches, and who holds each socket inode."""

    def __init__(self, raw):
        self.raw = raw
        self.meta = load_meta(raw)
        offset = self.meta["clock"]["realtime_minus_monotonic_ns"]
        self.t0 = self.meta["t0_ns"]
        self.window = tuple(self.meta["window_ns"])
        self.threads = {int(t): dict(v) for t, v in self.meta["threads"].items()}
        self.processes = {int(p): dict(v) for p, v in self.meta["processes"].items()}
        self.calls = []
        births = {}  # tid -> (parent tid, a thread of the parent's process?)
        for prefix, tid, path in trace_files(raw):
            calls = parse_file(path, tid, offset)
            for c in calls:
                if c.call in CLONES and isinstance(c.result, int) and c.result > 0:
                    births[c.result] = (tid, bool(c.thread))
            self.calls += calls
            if tid not in self.threads and prefix == "app" and self.meta.get("app_pid"):
                # The app's files hold only the app's threads and children.
                self.threads[tid] = {"pid": None, "app": True}
        self._resolve(births)
        for c in self.calls:
            c.pid = self.threads.get(c.tid, {}).get("pid") or c.tid
        self.calls.sort(key=lambda c: (c.ts, c.tid))
        # -yy names no peer on a call made before the server accepted the
        # connection (the app's first sendmsg): its other calls or its
        # peer's name it.
        peers = {}
        for c in self.calls:
            if c.inode and c.peer:
                peers[c.inode] = c.peer
                peers.setdefault(c.peer, c.inode)
        for c in self.calls:
            if c.unix and c.inode and not c.peer:
                c.peer = peers.get(c.inode)
        self.sockets = {int(i): p for i, p in self.meta.get("sockets", {}).items()}
        # A socket's holder by the calls made on it: what /proc could not
        # see (a socket opened and closed while the operation ran).
        for c in self.calls:
            if c.inode and c.unix:
                self.sockets.setdefault(c.inode, c.pid)

    def _resolve(self, births):
        """Threads born during the operation belong to their parent's
        process (CLONE_THREAD), processes born to themselves; the app's
        threads that /proc did not see are the app's."""
        for tid, (parent, thread) in births.items():
            if tid in self.threads and self.threads[tid].get("pid"):
                continue
            owner = self.threads.get(parent, {}).get("pid") or parent
            self.threads[tid] = {"pid": owner if thread else tid, "born": True}
            if not thread and tid not in self.processes:
                self.processes[tid] = {"role": "child of %d" % owner, "comm": "?"}
        for tid, t in self.threads.items():
            if not t.get("pid") and t.get("app"):
                t["pid"] = self.meta["app_pid"]

    def in_window(self, c):
        return self.window[0] <= c.ts <= self.window[1]

    def ipc_calls(self):
        """The IPC calls that began inside the window, in time order."""
        return [c for c in self.calls if c.ipc and self.in_window(c)]

    def role(self, pid):
        p = self.processes.get(pid)
        return p["role"] if p else None

    def peer_pid(self, c):
        return self.sockets.get(c.peer) if c.peer else None

    def switches(self):
        """[(ns, cpu, prev tid, next tid, next comm)] of sched.txt, or None
        where the scheduler could not be recorded (meta's sched says why)."""
        sched = self.meta.get("sched") or {}
        path = os.path.join(self.raw, SCHED)
        if sched.get("status") != "recorded" or not os.path.exists(path):
            return None
        out = []
        with open(path, errors="replace") as f:
            for line in f:
                m = SWITCH.match(line)
                if m:
                    out.append((_ns(m.group(3), m.group(4)), int(m.group(2)), int(m.group(5)),
                                int(m.group(7)), m.group(6).strip()))
        out.sort()
        return out


def summary(rec):
    """What results.json keeps of a traced operation: the IPC calls in
    the window per process (with bytes and peers), the messages, the
    switches; all from the raw records (trace_flows matches messages)."""
    per = {}
    for c in rec.ipc_calls():
        role = rec.role(c.pid) or "other"
        p = per.setdefault(role, {"pid": c.pid, "ipc_calls": 0, "sent_bytes": 0,
                                  "received_bytes": 0, "peers": {}})
        p["ipc_calls"] += 1
        p["sent_bytes" if c.sends else "received_bytes"] += c.bytes
        peer = rec.role(rec.peer_pid(c)) or "unknown"
        p["peers"][peer] = p["peers"].get(peer, 0) + 1
    return per
