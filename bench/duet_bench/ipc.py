"""IPC counting runs, kept apart from the timing runs because counting and
above all tracing change the timing.

Three counters, each in its own run of the same scenario:
  - the in-process counter (bench/probes/ipc-count.c, LD_PRELOAD) in every
    process of the stack and in the app, dumped on a signal at the start
    and the end of the measured interval;
  - strace attached to the stack's processes and running the app, per
    syscall, per thread, with each Unix socket's peer found from
    /proc/PID/fd and strace's -yy inode pairs;
  - protocol messages: duet-compositor's protocol log, duet-xwm's, weston's
    libwayland debug output (WAYLAND_DEBUG=server, in the counting runs
    only), the app's XCB sequence numbers on X, and the app's own
    WAYLAND_DEBUG=client lines at launch.

A dump that does not come (a counted process that does not answer the
dump signal in time) fails the counting run: it is never read as zero.
"""
import ctypes
import errno
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import time

from duet_bench import procs, stacks
from duet_launch import displays, proc, stack_kinds
from duet_launch.stack import DUMP_SIGNAL, counting_env
from duet_launch.stack_kinds import SERVER_DEBUG, SERVER_LOG, WM_LOG, XWAYLAND
from duet_bench.apprun import AppFailed, AppRun
from duet_bench.experiment import app_argv, transport, with_engine

IPC_CALLS = ["sendmsg", "recvmsg", "writev", "readv", "read", "write", "send", "recv",
             "sendto", "recvfrom"]
WAIT_CALLS = ["poll", "ppoll", "select", "pselect", "epoll_wait", "epoll_pwait"]
STUDY_CALLS = ["sendmsg", "writev", "recvmsg"]  # what the study counted on the server
STRACE_CALLS = ("sendmsg,recvmsg,writev,readv,read,write,sendto,recvfrom,poll,ppoll,select,"
                "pselect6,epoll_wait,epoll_pwait")


# ------------------------------------------------------------ in-process
def read_dump(d, pid):
    try:
        with open(os.path.join(d, "%d.json" % pid)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


_libc = None


def signal_main_thread(pid, sig):
    """sig to pid's main thread (tgkill), where the servers make their
    calls: the counter holds a dump that comes in the middle of a counted
    call until it has added it (bench/probes/ipc-count.c), which it can only know
    on the thread making the call. os.kill where libc has no tgkill."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    fn = getattr(_libc, "tgkill", None)
    if fn is None:
        os.kill(pid, sig)
        return
    if fn(ctypes.c_int(pid), ctypes.c_int(pid), ctypes.c_int(int(sig))) != 0:
        err = ctypes.get_errno()
        if err == errno.ESRCH:
            raise ProcessLookupError(err, os.strerror(err))
        raise OSError(err, os.strerror(err))


def dump_now(d, pid, timeout=1.5):
    """Signals pid to dump its counts and waits for the new dump."""
    old = read_dump(d, pid)
    seq = old["seq"] if old else 0
    try:
        signal_main_thread(pid, DUMP_SIGNAL)
    except ProcessLookupError:
        return None  # its last dump is not now's
    deadline = time.monotonic() + procs.patience(timeout)
    while time.monotonic() < deadline:
        cur = read_dump(d, pid)
        if cur and cur["seq"] > seq:
            return cur
        time.sleep(0.005)
    return None


def diff_dump(a, b):
    """b - a as {call: {kind: [calls, bytes]}} and peers {pid: {call: [c, b]}}."""
    def sub(x, y):
        return [x[0] - (y[0] if y else 0), x[1] - (y[1] if y else 0)]
    a = a or {"counts": {}, "peers": {}}
    counts = {}
    for call, kinds in b["counts"].items():
        for kind, v in kinds.items():
            d = sub(v, a["counts"].get(call, {}).get(kind))
            if d[0]:
                counts.setdefault(call, {})[kind] = d
    peers = {}
    for pid, calls in b["peers"].items():
        for call, v in calls.items():
            d = sub(v, a["peers"].get(pid, {}).get(call))
            if d[0]:
                peers.setdefault(pid, {})[call] = d
    return {"counts": counts, "peers": peers}


SEND_CALLS = ["sendmsg", "send", "sendto", "writev", "write"]


def summarize_counts(counts):
    """Per syscall: all fds and Unix sockets only; the study's number; the
    bytes those Unix-socket calls moved, sent and received apart."""
    per = {}
    for call, kinds in counts.items():
        per[call] = {"all": sum(v[0] for v in kinds.values()),
                     "unix": kinds.get("unix", [0, 0])[0],
                     "unix_bytes": kinds.get("unix", [0, 0])[1]}
    ipc = [c for c in per if c in IPC_CALLS]
    return {"per_call": per, "ipc_unix": sum(per[c]["unix"] for c in ipc),
            "ipc_unix_bytes": sum(per[c]["unix_bytes"] for c in ipc),
            "sent_bytes": sum(per[c]["unix_bytes"] for c in ipc if c in SEND_CALLS),
            "received_bytes": sum(per[c]["unix_bytes"] for c in ipc if c not in SEND_CALLS),
            "study_style": sum(per[c]["unix"] for c in per if c in STUDY_CALLS),
            "study_style_bytes": sum(per[c]["unix_bytes"] for c in per if c in STUDY_CALLS),
            "waits": sum(per[c]["all"] for c in per if c in WAIT_CALLS)}


class CountFailed(AppFailed):
    """A counter did not deliver: the counting run fails rather than
    report a count it does not have."""


def role_of_pid(pids, pid):
    for role, p in pids.items():
        if str(p) == str(pid):
            return role
    return "other"


class Counting:
    """One counting scenario in a stack started with counting=dir."""

    def __init__(self, ctx, stack):
        self.ctx = ctx
        self.stack = stack
        self.dir = stack.counting

    def app_env(self):
        env = counting_env(self.stack.counting, self.stack.base_env)
        if self.stack.kind == "wayland":
            env["WAYLAND_DEBUG"] = "client"
        return env

    def baseline(self):
        out = {}
        for role, pid in self.stack.pids().items():
            out[role] = dump_now(self.dir, pid)
            if out[role] is None:
                raise CountFailed("no baseline count dump from the %s (pid %d) within 1.5 s: "
                                  "without it the interval's counts are unknown" % (role, pid))
        return out

    def measure(self, base, app_pid, app_final=False, app_counted=True):
        """Counts since base of every stack process and of the app (its
        whole life: app_final reads the dump it left at exit). With
        app_counted False the app only names its peers."""
        pids = dict(self.stack.pids(), app=app_pid)
        out = {}
        for role, pid in pids.items():
            if role == "app" and not app_counted:
                continue
            cur = read_dump(self.dir, pid) if (role == "app" and app_final) else \
                dump_now(self.dir, pid)
            if cur is None:
                raise CountFailed("no count dump from the %s (pid %d)%s" % (
                    role, pid, " at its exit" if role == "app" and app_final else
                    " within 1.5 s of the dump signal"))
            d = diff_dump(base.get(role) if role != "app" else None, cur)
            s = summarize_counts(d["counts"])
            s["comm"] = cur.get("comm")
            s["peers"] = {}
            for p, calls in d["peers"].items():
                peer = role_of_pid(pids, p)
                if self.stack.spec.xwayland and role != XWAYLAND and peer == "server":
                    # The counter names a peer by its socket's credentials:
                    # the server made the X listening sockets Xwayland
                    # accepts on and the socketpair Xwayland speaks Wayland
                    # on, so the server is every X connection's "peer" but
                    # Xwayland's own; the process at the other end is
                    # Xwayland (strace, by socket inode, agrees).
                    peer = XWAYLAND
                s["peers"][peer] = s["peers"].get(peer, 0) + summarize_counts(
                    {c: {"unix": v} for c, v in calls.items()})["ipc_unix"]
            out[role] = s
        return out


def wayland_debug_counts(log_path):
    """Requests sent and events received, from WAYLAND_DEBUG=client lines."""
    req = ev = 0
    pat = re.compile(r"^\[\s*\d+\.\d+\]\s+(-> )?[\w]+@\d+\.\w+\(")
    try:
        with open(log_path, errors="replace") as f:
            for line in f:
                m = pat.match(line)
                if m:
                    if m.group(1):
                        req += 1
                    else:
                        ev += 1
    except OSError:
        return None
    return {"requests": req, "events": ev, "source": "WAYLAND_DEBUG=client in the app"}


# weston counts its protocol messages nowhere we can ask, so its counting
# runs start it with WAYLAND_DEBUG=server: libwayland-server then prints
# every request it receives and every event it sends to weston's stderr
# (the stack's server log). The lines carry no client, so an interval's
# count is every client's: with weston's desktop-shell helper idle that is
# the app's.
def counting_server_env(name):
    """Extra environment for the stack processes of a counting run."""
    return {"WAYLAND_DEBUG": "server"} if stack_kinds.get(name).protocol == SERVER_DEBUG else {}


def server_debug_mark(stack):
    """Where the server's debug output stands now (weston only), or None."""
    if stack.spec.protocol != SERVER_DEBUG:
        return None
    try:
        return os.path.getsize(stack.procs["server"].log_path)
    except (OSError, KeyError):
        return None


# The lines one wl_display.sync of wayland_sync adds to weston's debug
# output: the request, and the callback's done and the display's delete_id.
SYNC_LINES = {"requests": 1, "events": 2}


def wayland_socket(stack):
    """The path of the stack server's Wayland socket (Xwayland stacks keep
    it out of the apps' environment, in stack.wayland_display)."""
    return os.path.join(stack.runtime or "", stack.wayland_display
                        or stack.env.get("WAYLAND_DISPLAY") or "")


def wayland_sync(stack):
    """One wl_display.sync round trip on the stack's Wayland socket, spoken
    on the wire: the server answers it after every message and hang-up
    already waiting from its clients (epoll hands it ready sockets in the
    order they became ready), so when this returns weston's debug output
    has their lines and duet-compositor's protocol log the entry of a
    client that has gone. Without it a busy server had not yet read them
    when an interval's count was read: bench-xwayland-stacks beside a CPU
    hog found none of Xwayland's requests in weston's output (0 requests,
    0 events at launch), and bench-counts-lengths no entry for an app that
    had exited in duet-compositor's log within 2 s."""
    path = wayland_socket(stack)
    limit = procs.patience(10.0)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(limit)
            s.connect(path)
            # object 1 (wl_display), opcode 0 (sync), 12 bytes, new id 2
            s.sendall(struct.pack("=III", 1, 12 << 16, 2))
            buf = b""
            while True:
                data = s.recv(4096)
                if not data:
                    break
                buf += data
                while len(buf) >= 8:
                    obj, word = struct.unpack_from("=II", buf)
                    size = word >> 16
                    if size < 8 or len(buf) < size:
                        break
                    # the last of the three: wl_display.delete_id(2)
                    if obj == 1 and word & 0xffff == 1 and size == 12 and \
                            struct.unpack_from("=I", buf, 8)[0] == 2:
                        return
                    buf = buf[size:]
    except OSError as e:
        raise CountFailed("%s's server did not answer a wl_display.sync on %s within %.0f s "
                          "(%s)" % (stack.name, path, limit, e))
    raise CountFailed("%s's server closed the connection of a wl_display.sync on %s"
                      % (stack.name, path))


def server_debug_counts(stack, start, end=None):
    """Requests received and events sent by weston between two marks; with
    no end mark, up to now, once weston has handled what its clients sent
    (wayland_sync, whose own lines are left out)."""
    if start is None:
        return None
    synced = end is None
    if synced:
        wayland_sync(stack)
    pat = re.compile(rb"^\[\s*\d+\.\d+\]\s+(-> )?[\w]+@\d+\.\w+\(")
    req = ev = 0
    try:
        with open(stack.procs["server"].log_path, "rb") as f:
            f.seek(start)
            data = f.read() if end is None else f.read(end - start)
    except OSError:
        return None
    for line in data.split(b"\n"):
        m = pat.match(line)
        if m:
            if m.group(1):
                ev += 1
            else:
                req += 1
    if synced:
        req -= SYNC_LINES["requests"]
        ev -= SYNC_LINES["events"]
    return {"requests": req, "events": ev,
            "source": "weston's libwayland-server debug output (WAYLAND_DEBUG=server, server "
                      "side, every client: no bytes), read once weston answered a "
                      "wl_display.sync sent after the interval (its 3 lines left out)"}


PROTOCOL_FIELDS = ("requests", "events", "request_bytes", "event_bytes", "request_fds",
                   "event_fds")


def protocol_clients(stack):
    """The clients of duet-compositor's protocol log, or None."""
    try:
        with open(stack.protocol_log) as f:
            return json.load(f).get("clients", [])
    except (OSError, ValueError):
        return None


def protocol_log(stack, app_pid):
    if not stack.protocol_log:
        return None
    for c in protocol_clients(stack) or []:
        if c["pid"] == app_pid:
            keep = {k: c[k] for k in PROTOCOL_FIELDS}
            keep["source"] = "duet-compositor protocol log (server side)"
            keep["messages"] = c.get("messages", {})
            return keep
    return None


def xwm_protocol_log(stack):
    """duet-xwm's own X traffic from its DUET_PROTOCOL_LOG, asked for now
    (SIGUSR2 makes it rewrite the file), or None."""
    if stack.spec.protocol != WM_LOG or not stack.protocol_log:
        return None
    wm = stack.procs.get("wm")
    try:
        before = os.stat(stack.protocol_log).st_mtime_ns
    except OSError:
        before = None
    if wm is not None and wm.alive():
        try:
            os.kill(wm.pid, signal.SIGUSR2)
        except OSError:
            pass
    deadline = time.monotonic() + procs.patience(2.0)
    data = None
    while time.monotonic() < deadline:
        try:
            if os.stat(stack.protocol_log).st_mtime_ns != before:
                with open(stack.protocol_log) as f:
                    data = json.load(f)
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    if not data or not data.get("clients"):
        return None
    c = data["clients"][0]
    keep = {k: c.get(k, 0) for k in ("requests", "replies", "events", "errors",
                                      "request_bytes", "event_bytes")}
    keep["messages"] = c.get("messages", {})
    keep["source"] = "duet-xwm protocol log (its own X connection, since it started)"
    return keep


def with_wm(proto, wm, wm_before=None):
    """The app's X counts with duet-xwm's beside them (x11 stack); wm
    counts minus wm_before's when given (the interval of the app)."""
    if not wm:
        return proto
    wm = dict(wm)
    if wm_before:
        for k in ("requests", "replies", "events", "errors", "request_bytes", "event_bytes"):
            wm[k] -= wm_before.get(k, 0)
        wm["messages"] = {m: n - wm_before["messages"].get(m, 0)
                          for m, n in wm["messages"].items()
                          if n != wm_before["messages"].get(m, 0)}
        wm["source"] += ", during the app's run"
    if not proto:
        return {"unavailable": "the app reported no X counts; duet-xwm: %d requests, "
                               "%d replies, %d events" % (wm["requests"], wm["replies"],
                                                         wm["events"]),
                "wm": wm}
    out = dict(proto)
    out["wm"] = wm
    out["source"] = "%s; duet-xwm: %d requests, %d replies, %d events (its protocol log)" % (
        out.get("source", "app counts unavailable"), wm["requests"], wm["replies"],
        wm["events"])
    return out


def wait_protocol_log(stack, app_pid, timeout=2.0):
    """duet-compositor's protocol log entry of app_pid, once the server has
    handled the app's hang-up (wayland_sync), or None."""
    if not stack.protocol_log:
        return None
    wayland_sync(stack)
    deadline = time.monotonic() + procs.patience(timeout)
    while time.monotonic() < deadline:
        p = protocol_log(stack, app_pid)
        if p is not None:
            return p
        time.sleep(0.02)
    return None


def xwayland_log_counts(stack):
    """Xwayland's Wayland messages so far, from duet-compositor's protocol
    log (Xwayland's client has the server's pid: its socketpair's
    credentials). The log is rewritten when a client hangs up: the first
    wl_display.sync's connection is such a client, and the second is
    answered once the server has handled that hang-up (wayland_sync), so
    the log read then has every message of Xwayland's the server had read.
    (It was a connect-and-close and up to 2 s for the file to change: a
    server busier than that gave the counts of the previous rewrite.) None
    where there is no such log or no entry for Xwayland's client."""
    if not (stack.spec.xwayland and stack.spec.protocol == SERVER_LOG and stack.protocol_log):
        return None
    wayland_sync(stack)
    wayland_sync(stack)
    server = stack.pids().get("server")
    for c in protocol_clients(stack) or []:
        if c.get("pid") == server:
            return {k: c.get(k, 0) for k in PROTOCOL_FIELDS}
    return None


def xwayland_protocol(stack, log_before, srv_mark):
    """Xwayland's Wayland protocol with its server during the interval:
    duet-compositor's log of Xwayland's client (log_before: its counts at
    the start), or weston's WAYLAND_DEBUG=server lines (every client: with
    the desktop shell's stub idle, Xwayland's)."""
    if not stack.spec.xwayland:
        return None
    if stack.spec.protocol == SERVER_DEBUG:
        out = server_debug_counts(stack, srv_mark)
        if out:
            out["source"] += "; Xwayland is the only client that speaks meanwhile"
        return out or {"unavailable": "weston's debug output could not be read"}
    after = xwayland_log_counts(stack)
    if after is None or log_before is None:
        return {"unavailable": "duet-compositor's protocol log has no entry for Xwayland's "
                               "client"}
    out = {k: after[k] - log_before.get(k, 0) for k in after}
    out["source"] = ("duet-compositor protocol log, Xwayland's client (server side), during "
                     "the interval")
    return out


def x_counts(events):
    """X protocol counts the app reports (XCB sequence numbers, app side)."""
    evs = [e for e in events if "x_requests" in e]
    if not evs:
        return None
    return {"requests": sum(e["x_requests"] for e in evs),
            "events": sum(e.get("x_events", 0) for e in evs),
            "source": "the app's XCB sequence numbers (its own connection only; the WM's "
                      "traffic is not included)"}


def first_frame(ev):
    return any(e.get("name") == "first_frame" for e in ev)


# ------------------------------------------------------------ scenarios
def launch_counts(ctx, stack):
    c = Counting(ctx, stack)
    base = c.baseline()
    wm_before = xwm_protocol_log(stack)
    srv_mark = server_debug_mark(stack)
    xw_before = xwayland_log_counts(stack)
    run = AppRun(ctx, stack, app_argv(ctx, stack, "launch", "--stay"), extra_env=c.app_env())
    try:
        if not run.wait(first_frame, timeout=30, experiment="ipc-launch"):
            raise AppFailed("duet-launch %s:\n%s" % (run.exit_status(), run.log_tail()))
        res = {"processes": c.measure(base, run.pid)}
        xw = xwayland_protocol(stack, xw_before, srv_mark)
    finally:
        run.stop()
    # An X app on an Xwayland stack is no client of the Wayland server: its
    # protocol is its own X counts, Xwayland's Wayland traffic beside them.
    wayland_app = stack.spec.server_system == stack.kind == "wayland"
    proto = wait_protocol_log(stack, run.pid) if stack.spec.protocol == SERVER_LOG and \
        wayland_app else None
    srv = server_debug_counts(stack, srv_mark) if wayland_app else None
    wd = wayland_debug_counts(run.log) if stack.kind == "wayland" else None
    xp = with_wm(x_counts(run.named("first_frame")), xwm_protocol_log(stack), wm_before)
    res["protocol"] = proto or srv or wd or xp or {
        "unavailable": "no protocol counts: the server logged none for this app and the "
                       "app printed no XCB sequence numbers (see docs/methodology.md)"}
    if (proto or srv) and wd:
        res["protocol_client_side"] = wd
    if xw:
        res["protocol_xwayland"] = xw
    res["interval"] = "fork of the app -> its first_frame line (servers); app: its whole life " \
                      "up to then. Protocol: the app's whole connection (it exits right after)."
    return res


# What the app asks of the server per frame in a like-for-like count
# (render_counts' timings=False): the frame callback on Wayland, the round
# trip after the swap on X11, which every server answers alike; frame
# timings (wp_presentation, _NET_WM_FRAME_DRAWN) only some offer.
NO_TIMINGS = {"wayland": "frame-callback", "x11": "roundtrip-fallback"}


def render_once(c, ctx, stack, engine, ms, scenes=None, timings=True):
    """One counted duet-render run of ms per scene: the counts of every
    process over the app's whole life, its frames and its protocol
    messages. timings=False: the app asks no frame timings (NO_TIMINGS)."""
    base = c.baseline()
    env = c.app_env()
    if not timings:
        env["DUET_PRESENTATION"] = NO_TIMINGS[stack.kind]
    env.pop("WAYLAND_DEBUG", None)  # thousands of frames: too slow to log in the app
    wm_before = xwm_protocol_log(stack)
    srv_mark = server_debug_mark(stack)
    xw_before = xwayland_log_counts(stack)
    args = ["--duration-ms", str(ms)] + (["--scenes", scenes] if scenes else [])
    run = AppRun(ctx, stack, with_engine(app_argv(ctx, stack, "render", *args), engine),
                 extra_env=env)
    try:
        run.wait(timeout=60 + 10 * ms / 1000.0, experiment="ipc-render")
        shown = run.named("scene")
        if not run.named("render_done"):
            raise AppFailed("duet-render --engine %s %s:\n%s"
                            % (engine, run.exit_status(), run.log_tail()))
        out = {"processes": c.measure(base, run.pid, app_final=True), "ms": ms,
               "frames": sum(sc["frames"] for sc in shown), "scenes": len(shown),
               "duration_ns": sum(sc.get("duration_ns", 0) for sc in shown),
               "path": shown[0].get("path") if shown else None,
               "presentation": shown[0].get("presentation") if shown else None}
    finally:
        run.stop()
    xw = xwayland_protocol(stack, xw_before, srv_mark)
    if xw and "unavailable" not in xw:
        out["protocol_xwayland"] = xw
    if stack.spec.xwayland:
        xp = x_counts(shown)
        if xp:
            out["protocol"] = xp
    elif stack.spec.protocol == SERVER_LOG:
        p = wait_protocol_log(stack, run.pid)
        if p is None:
            raise CountFailed("duet-compositor's protocol log has no entry for the app "
                              "(pid %d)" % run.pid)
        out["protocol"] = p
    elif stack.spec.protocol == SERVER_DEBUG:
        out["protocol"] = server_debug_counts(stack, srv_mark)
    else:
        xp = x_counts(shown)
        if xp:
            # Replies are not counted by the app; requests + events are.
            out["protocol"] = xp
        wm = xwm_protocol_log(stack)
        if wm and wm_before:
            out["protocol_wm"] = with_wm(None, wm, wm_before)["wm"]
    return out


def per_frame_of(short, long, key):
    """(long - short) / (frames_long - frames_short) of one number."""
    frames = long["frames"] - short["frames"]
    if frames <= 0 or short.get(key) is None or long.get(key) is None:
        return None
    return round((long[key] - short[key]) / frames, 3)


COUNT_KEYS = ("ipc_unix", "study_style", "ipc_unix_bytes", "study_style_bytes", "sent_bytes",
              "received_bytes", "waits")
PROTO_KEYS = ("requests", "replies", "events", "request_bytes", "event_bytes")


def pool(runs):
    """Sums of the counts, frames and protocol messages of several runs of
    one length (a protocol source missing from any run is left out)."""
    out = {"frames": sum(r["frames"] for r in runs), "path": runs[-1]["path"],
           "presentation": runs[-1].get("presentation"), "processes": {}}
    for role in runs[-1]["processes"]:
        out["processes"][role] = {k: sum(r["processes"][role][k] for r in runs)
                                  for k in COUNT_KEYS}
    for src in ("protocol", "protocol_wm", "protocol_xwayland"):
        if all(r.get(src) for r in runs):
            out[src] = {k: sum(r[src][k] for r in runs) for k in PROTO_KEYS
                        if k in runs[-1][src]}
            out[src]["source"] = runs[-1][src]["source"]
            if all("messages" in r[src] for r in runs):
                names = {}
                for r in runs:
                    for name, n in r[src]["messages"].items():
                        names[name] = names.get(name, 0) + n
                out[src]["by_name"] = names
    return out


def per_frame_by_name(short, long):
    """Each message's (long - short) / frame difference, where both
    lengths' runs have the messages by name (a protocol log's), else None."""
    frames = long["frames"] - short["frames"]
    sn, ln = short.get("by_name"), long.get("by_name")
    if frames <= 0 or sn is None or ln is None:
        return None
    out = {}
    for name in sorted(set(sn) | set(ln)):
        v = round((ln.get(name, 0) - sn.get(name, 0)) / frames, 3)
        if v:
            out[name] = v
    return out


# How often the long runs may be lengthened, and the extra frames per
# scene a lengthened long run is made for.
LENGTHEN_TRIES = 3
LENGTHEN_FRAMES = 4


def lengthened_ms(short_ms, long_ms, long_runs):
    """A long-run length (ms per scene) that should draw LENGTHEN_FRAMES
    more frames per scene than the short runs, from how long the long runs'
    frames really took; at least twice the old length."""
    frames = sum(r["frames"] for r in long_runs)
    ns = sum(r.get("duration_ns", 0) for r in long_runs)
    per_frame_ms = ns / 1e6 / frames if frames and ns else long_ms
    return int(max(2 * long_ms, short_ms + LENGTHEN_FRAMES * per_frame_ms + 1))


def render_counts(ctx, stack, engine=None, lengths=None, scenes=None, repeat=None,
                  timings=True):
    """IPC per rendered frame with start-up and teardown taken out: the
    scenes run for a short and a long time in every scene (repeat times,
    alternating, pooled), and per frame = (long - short) / (frames_long -
    frames_short).

    The lengths are times, so what they yield depends on the machine: where
    a frame takes about as long as the short run (an emulated guest's
    llvmpipe: a GL frame of several hundred ms under TCG), both lengths draw
    the same frames and there is nothing to divide by. The long runs are
    then made longer, by what their frames really took, until they drew at
    least one more frame per scene than the short runs; the figures say so
    (lengthened). timings=False: the app asks no frame timings of the
    server, the same protocol on every stack of its window system."""
    engine = engine or ctx.opts.render_engines[0]
    short_ms, long_ms = lengths or ctx.opts.render_count_ms
    asked_ms = long_ms
    repeat = repeat or getattr(ctx.opts, "render_count_repeat", 1)
    c = Counting(ctx, stack)
    runs = []
    for _ in range(repeat):
        runs += [render_once(c, ctx, stack, engine, ms, scenes, timings)
                 for ms in (short_ms, long_ms)]
    short, long = pool(runs[0::2]), pool(runs[1::2])
    n_scenes = max(1, max(r.get("scenes", 1) for r in runs))
    lengthened = []
    for _ in range(LENGTHEN_TRIES):
        if long["frames"] - short["frames"] >= n_scenes * repeat:
            break
        lengthened.append("the %d ms runs drew %d frames, the %d ms runs %d"
                          % (long_ms, long["frames"], short_ms, short["frames"]))
        long_ms = lengthened_ms(short_ms, long_ms, runs[1::2])
        longs = [render_once(c, ctx, stack, engine, long_ms, scenes, timings)
                 for _ in range(repeat)]
        runs[1::2] = longs
        long = pool(longs)
    if long["frames"] <= short["frames"]:
        raise CountFailed("the %d ms runs drew %d frames, the %d ms runs %d: no difference "
                          "to divide by%s" % (long_ms, long["frames"], short_ms, short["frames"],
                                              " (lengthened from %d ms)" % asked_ms
                                              if lengthened else ""))
    res = {"engine": engine, "transport": transport(stack.kind, engine, long["path"]),
           "path": long["path"], "presentation": long.get("presentation"),
           "frame_timings": timings, "lengths_ms": [short_ms, long_ms], "repeat": repeat,
           "frames": long["frames"] - short["frames"],
           "frames_per_run": [r["frames"] for r in runs]}
    per = {}
    for role, lp in long["processes"].items():
        sp = short["processes"].get(role, {})
        per[role] = {k: per_frame_of(dict(sp, frames=short["frames"]),
                                     dict(lp, frames=long["frames"]), k) for k in COUNT_KEYS}
    res["per_frame_detail"] = per
    res["per_frame"] = {r: v["ipc_unix"] for r, v in per.items()}
    res["per_frame_study_style"] = {r: v["study_style"] for r, v in per.items()}
    res["bytes_per_frame_study_style"] = {r: v["study_style_bytes"] for r, v in per.items()}
    # The old figure, for comparison: the long runs' whole life / their frames.
    res["whole_run_per_frame_study_style"] = {
        r: round(p["study_style"] / long["frames"], 3) for r, p in long["processes"].items()}
    for src, key in (("protocol", "protocol_per_frame"),
                     ("protocol_wm", "protocol_per_frame_wm"),
                     ("protocol_xwayland", "protocol_per_frame_xwayland")):
        sp, lp = short.get(src), long.get(src)
        if not (sp and lp):
            continue
        pf = {k: per_frame_of(dict(sp, frames=short["frames"]), dict(lp, frames=long["frames"]),
                              k) for k in PROTO_KEYS if k in lp}
        pf["messages"] = round(sum(pf.get(k) or 0 for k in ("requests", "replies", "events")),
                               3)
        by_name = per_frame_by_name(dict(sp, frames=short["frames"]),
                                    dict(lp, frames=long["frames"]))
        if by_name is not None:
            pf["by_name"] = by_name
        pf["source"] = lp["source"]
        res[key] = pf
    if "protocol_per_frame" not in res:
        res["protocol_per_frame"] = {"unavailable": "no protocol counts for this stack's app "
                                                    "in the render runs"}
    neg = sorted("%s %s" % (r, k) for r, v in per.items() for k, x in v.items()
                 if x is not None and x < 0)
    if neg:
        # Start-up differed between the runs by more than the extra frames
        # added: the per-frame figure is noise around a small value.
        res["warnings"] = ["below zero per frame (start-up varied between runs more than "
                           "the extra frames added; longer runs or more repeats reduce "
                           "it): " + ", ".join(neg)]
    if lengthened:
        res["lengthened"] = ("long runs lengthened from %d to %d ms per scene, by the frames "
                             "the app really drew (%s)" % (asked_ms, long_ms,
                                                          "; ".join(lengthened)))
    res["runs"] = runs
    res["interval"] = ("(long runs - short runs) / (their frame difference): %d and %d ms per "
                       "scene, %d time(s) each%s; start-up and teardown cancel out"
                       % (short_ms, long_ms, repeat,
                          ", the long ones redone longer" if lengthened else ", alternating"))
    return res


def resize_counts(ctx, stack):
    """IPC per resize: (counts of 3 runs of the 8 sizes - counts of 1 run) / 16,
    which removes start-up and teardown; protocol messages the same way
    where the server logs them (duet-compositor, weston)."""
    totals, protos, xws = {}, {}, {}
    for runs in (1, 3):
        c = Counting(ctx, stack)
        base = c.baseline()
        srv_mark = server_debug_mark(stack)
        xw_before = xwayland_log_counts(stack)
        run = AppRun(ctx, stack, app_argv(ctx, stack, "resize", "--runs", str(runs)),
                     extra_env=dict(c.app_env(), WAYLAND_DEBUG=""))
        try:
            run.wait(timeout=90, experiment="ipc-resize")
            if not run.named("resize_done"):
                raise AppFailed("duet-resize %s:\n%s" % (run.exit_status(), run.log_tail()))
            totals[runs] = c.measure(base, run.pid, app_final=True)
            xp = x_counts(run.named("resize"))
            xw = xwayland_protocol(stack, xw_before, srv_mark)
            if xw and "unavailable" not in xw:
                xws[runs] = xw
        finally:
            run.stop()
        if stack.spec.xwayland:
            pass  # the app's X counts (xp); Xwayland's Wayland traffic in xws
        elif stack.spec.protocol == SERVER_LOG:
            protos[runs] = wait_protocol_log(stack, run.pid)
        elif stack.spec.protocol == SERVER_DEBUG:
            protos[runs] = server_debug_counts(stack, srv_mark)
    per = {}
    for role in totals[3]:
        a, b = totals[1].get(role, {}), totals[3][role]
        if "ipc_unix" in a and "ipc_unix" in b:
            per[role] = {k: round((b[k] - a[k]) / 16.0, 2)
                         for k in ("ipc_unix", "study_style", "study_style_bytes")}
    out = {"per_resize": per, "mode": "client"}
    if protos.get(1) and protos.get(3):
        p1, p3 = protos[1], protos[3]
        out["protocol_per_resize_detail"] = {
            k: round((p3[k] - p1[k]) / 16.0, 2) for k in PROTO_KEYS if k in p3}
        out["protocol_per_resize"] = round(sum(
            out["protocol_per_resize_detail"].get(k, 0) for k in ("requests", "events")), 2)
        out["protocol_source"] = p3["source"]
    elif xp:
        n = 8 * 3
        out["protocol_per_resize"] = round((xp["requests"] + xp["events"]) / n, 2)
        out["protocol_source"] = xp["source"]
    if xws.get(1) and xws.get(3):
        out["protocol_per_resize_xwayland"] = {
            k: round((xws[3][k] - xws[1][k]) / 16.0, 2) for k in PROTO_KEYS if k in xws[3]}
        out["protocol_per_resize_xwayland"]["source"] = xws[3]["source"]
    out["interval"] = "(3 runs - 1 run of the 8 sizes) / 16 resizes"
    return out


# ------------------------------------------------------------ strace
# "1700000000.123456 sendmsg(5<UNIX-STREAM:[111->222]>, ..." gives the fd, its
# kind, its inode and the peer's inode (the kind must stop at the colon, or the
# optional inode part would match empty and lose the peer).
STRACE_LINE = re.compile(r"^(\d+\.\d+) (\w+)\((?:(\d+)(?:<([^\[>:]*)(?::\[(\d+)(?:->(\d+))?)?)?)?")
RESULT = re.compile(r"\)\s+=\s+(-?\d+)")
# "1700000000.123456 --- SIGALRM {si_signo=...": a signal delivered to a
# traced thread, each one a stop of the tracee until strace lets it go.
STRACE_SIGNAL = re.compile(r"^(\d+\.\d+) --- (SIG\w+) ")


def strace_launch(ctx, stack, strace, counting=None):
    """One launch with strace on every stack process and on the app. With
    counting (a Counting of a stack started with the counter), the
    in-process counter counts the stack's processes over the same
    interval, so the two can be compared call for call."""
    pids = stack.pids()
    prefix = os.path.join(stack.dir, "strace")
    argv = [strace, "-f", "-qq", "-yy", "-ttt", "-e", "trace=" + STRACE_CALLS, "-ff", "-o",
            prefix]
    for pid in pids.values():
        argv += ["-p", str(pid)]
    tracer = proc.Child("strace", argv, dict(os.environ),
                         log_path=os.path.join(stack.dir, "strace.log"))
    try:
        deadline = time.monotonic() + 10
        while not all(procs.traced(p) for p in pids.values()):
            if time.monotonic() > deadline or not tracer.alive():
                raise AppFailed("strace could not attach (%s):\n%s"
                                % (tracer.status(), tracer.log_tail()))
            time.sleep(0.02)
        app_prefix = os.path.join(stack.dir, "strace-app")
        base = counting.baseline() if counting else None
        t_start = time.time()
        # --seccomp-bpf: the app, started under strace, stops only at the
        # calls counted. Without it every call of every thread stops it,
        # llvmpipe's futexes included: in the emulated KMS guest that made
        # a straced launch 17 s where it takes 5 s with it and 6 s with no
        # strace at all (Xorg + duet-xwm, 2026-11-28), and openbox's 284 s.
        # The stack's processes are attached (-p), where strace cannot
        # filter; what either writes is the same.
        strace_argv = [strace, "-f", "--seccomp-bpf", "-qq", "-yy", "-ttt", "-e",
                    "trace=" + STRACE_CALLS, "-ff", "-o", app_prefix, "--"]
        run = AppRun(ctx, stack, strace_argv + app_argv(ctx, stack, "launch", "--stay"))
        app_pid = None
        try:
            if not run.wait(first_frame, timeout=60, experiment="strace-launch"):
                raise AppFailed("duet-launch under strace %s:\n%s\n%s"
                                % (run.exit_status(), run.log_tail(),
                                   _strace_stuck(stack.dir, dict(pids, app=run.pid))))
            t_end = time.time()
            kids = procs.descendants(run.pid)
            app_pid = min(kids) if kids else None
            counted = counting.measure(base, app_pid, app_counted=False) if counting else None
            all_pids = dict(pids, app=app_pid)
            tid_owner = {}
            inode_owner = {}
            for role, pid in all_pids.items():
                if pid is None:
                    continue
                for tid in procs.thread_ids(pid):
                    tid_owner[tid] = role
                for ino in procs.socket_inodes(pid):
                    inode_owner[ino] = role
        finally:
            run.stop_traced(app_pid)
    finally:
        tracer.signal(signal.SIGINT)  # detach
        try:
            tracer.popen.wait(5)
        except subprocess.TimeoutExpired:
            pass
        tracer.stop()
    per = strace_counts(stack.dir, ("strace", "strace-app"), tid_owner, inode_owner,
                        int(t_start * 1e9), int(t_end * 1e9))
    out = {"processes": per, "interval": "app fork -> first_frame, by strace -ttt timestamps",
           "command": " ".join(argv), "app_command": " ".join(strace_argv),
           "seconds": round(t_end - t_start, 3)}
    if counting:
        out["counter"] = counted
        out["app_pid"] = app_pid
    return out


def _strace_ns(text):
    """ "1700000000.123456" (strace's -ttt, any digits) as integer ns."""
    sec, _, frac = text.partition(".")
    return int(sec) * 1000000000 + int((frac + "000000000")[:9])


def strace_counts(directory, prefixes, tid_owner, inode_owner, start_ns, end_ns):
    """Per role, the calls of strace's -ff files PREFIX.TID in directory
    whose -ttt stamp (wall clock ns) lies in [start_ns, end_ns]: per
    syscall on any fd and on Unix sockets, per peer (inode_owner: the
    role holding the peer's inode; tid_owner: each thread's role), the
    signals delivered, and ipc_unix, study_style and waits."""
    per = {}
    for name in os.listdir(directory):
        prefix, _, tid = name.rpartition(".")
        if prefix not in prefixes or not tid.isdigit():
            continue
        role = tid_owner.get(int(tid), "other")
        with open(os.path.join(directory, name), errors="replace") as f:
            for line in f:
                m = STRACE_LINE.match(line)
                if not m:
                    sig = STRACE_SIGNAL.match(line)
                    if sig and start_ns <= _strace_ns(sig.group(1)) <= end_ns:
                        p = per.setdefault(role, {"per_call": {}, "peers": {}})
                        signals = p.setdefault("signals", {})
                        signals[sig.group(2)] = signals.get(sig.group(2), 0) + 1
                    continue
                ts = _strace_ns(m.group(1))
                if ts < start_ns or ts > end_ns:
                    continue
                call = "pselect" if m.group(2) == "pselect6" else m.group(2)
                p = per.setdefault(role, {"per_call": {}, "peers": {}})
                pc = p["per_call"].setdefault(call, {"all": 0, "unix": 0})
                pc["all"] += 1
                if m.group(4) and m.group(4).startswith("UNIX"):
                    pc["unix"] += 1
                    peer = inode_owner.get(int(m.group(6))) if m.group(6) else None
                    key = peer or "unknown"
                    p["peers"][key] = p["peers"].get(key, 0) + 1
    for p in per.values():
        p["ipc_unix"] = sum(v["unix"] for c, v in p["per_call"].items() if c in IPC_CALLS)
        p["study_style"] = sum(v["unix"] for c, v in p["per_call"].items() if c in STUDY_CALLS)
        p["waits"] = sum(v["all"] for c, v in p["per_call"].items() if c in WAIT_CALLS)
    return per


def _strace_stuck(directory, pids):
    """Where each traced process is when the straced launch failed: its
    threads' states and system calls, and the last calls strace wrote for
    each thread, with their times (does a process wait, or crawl?)."""
    out = ["where each process is (%.3f):" % time.time()]
    for role, pid in pids.items():
        for pid2 in [pid] + procs.descendants(pid):
            out += ["  %s %s" % (role, line) for line in procs.where(pid2)]
    out.append("last calls strace wrote per thread:")
    for name in sorted(os.listdir(directory)):
        if name.startswith("strace.") or name.startswith("strace-app."):
            tail = proc.read_tail(os.path.join(directory, name), 600).splitlines()[-3:]
            out += ["  %s: %s" % (name, line[:200]) for line in tail]
    return "\n".join(out)


# ------------------------------------------------------------ xtrace
# openbox and xcompmgr count nothing themselves: their X protocol is read
# by Debian's xtrace, a proxy X server that forwards a client's connection
# to the real one and prints every request, reply, event and error. Each
# of the two gets its own proxy (so every line belongs to one process), in
# a run of its own: the proxy adds a hop to every message and so changes
# the timing, and it is not part of the stack being measured.
XTRACE_LINE = re.compile(rb"^\d+:([<>]):[0-9a-f]+:\s*(?:(\d+):\s*)?"
                         rb"(\S*Request\(|Reply to |Event |Error)")


def xtrace_counts(path, start=0, end=None):
    """Requests (with their bytes), replies (with theirs), events and
    errors of one xtrace log between two offsets."""
    out = {"requests": 0, "request_bytes": 0, "replies": 0, "reply_bytes": 0, "events": 0,
           "errors": 0, "unparsed_warnings": 0}
    try:
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read() if end is None else f.read(max(0, end - start))
    except OSError:
        return None
    for line in data.split(b"\n"):
        m = XTRACE_LINE.match(line)
        if not m:
            # xtrace says so when a message outgrew its buffer (a large
            # PutImage): that message is forwarded but not printed.
            if b"Warning: buffer filled" in line:
                out["unparsed_warnings"] += 1
            continue
        what, size = m.group(3), int(m.group(2) or 0)
        if what.endswith(b"Request("):
            out["requests"] += 1
            out["request_bytes"] += size
        elif what == b"Reply to ":
            out["replies"] += 1
            out["reply_bytes"] += size
        elif what == b"Event ":
            out["events"] += 1
        else:
            out["errors"] += 1
    out["messages"] = out["requests"] + out["replies"] + out["events"] + out["errors"]
    return out


class XtraceStack(stacks.Stack):
    """A stack whose WM and compositing manager reach the X server through
    an xtrace proxy each (the openbox stack: openbox and xcompmgr)."""
    TRACED = ("wm", "compositor")

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.xtrace_logs = {}  # role -> the proxy's protocol log
        self.sockets = []  # the proxies' listening sockets, which xtrace leaves behind

    def stop(self):
        super().stop()
        for sock in self.sockets:
            try:
                os.unlink(sock)
            except OSError:
                pass
        self.sockets = []

    def spawn(self, role, argv, env, **kw):
        if role in self.TRACED and self.kind == "x11":
            env = dict(env, DISPLAY=self.proxy(role))
        return super().spawn(role, argv, env, **kw)

    def proxy(self, role):
        xtrace = shutil.which("xtrace")
        if not xtrace:
            raise stacks.StackError("xtrace is not installed (Debian package xtrace)")
        log = os.path.join(self.dir, "xtrace-%s.txt" % role)
        env = {k: v for k, v in self.base_env.items() if k != "LD_PRELOAD"}
        for n in displays.x_numbers(displays.X_PROXIES):
            sock = displays.x_socket(n)
            # -n: Xvfb here has no authorisation to copy; -k: a client's
            # reconnection must find the proxy still there.
            child = proc.Child("xtrace-" + role, [xtrace, "-d", self.display, "-D", ":%d" % n,
                                                   "-n", "-k", "-o", log], env,
                                log_path=os.path.join(self.dir, "xtrace-%s.log" % role))
            self.procs["xtrace-" + role] = child
            self.commands["xtrace-" + role] = child.argv
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and child.alive() and not os.path.exists(sock):
                time.sleep(0.02)
            if os.path.exists(sock) and child.alive():
                self.xtrace_logs[role] = log
                self.sockets.append(sock)
                return ":%d" % n
            child.stop()
            del self.procs["xtrace-" + role]
        raise stacks.StackError("xtrace did not start a proxy display for the %s" % role)

    def marks(self):
        out = {}
        for role, path in self.xtrace_logs.items():
            try:
                out[role] = os.path.getsize(path)
            except OSError:
                out[role] = 0
        return out

    def counts_since(self, marks, end=None):
        return {role: xtrace_counts(path, marks.get(role, 0), (end or {}).get(role))
                for role, path in self.xtrace_logs.items()}


def xtrace_render_once(ctx, stack, engine, ms):
    """One duet-render run through the proxies: its frames, duration and the
    proxies' counts during it."""
    m = stack.marks()
    run = AppRun(ctx, stack, with_engine(app_argv(ctx, stack, "render", "--duration-ms",
                                                  str(ms)), engine))
    try:
        run.wait(timeout=60 + 10 * ms / 1000.0, experiment="xtrace-render")
        if not run.named("render_done"):
            raise AppFailed("duet-render --engine %s %s:\n%s"
                            % (engine, run.exit_status(), run.log_tail()))
        shown = run.named("scene")
        frames = sum(s["frames"] for s in shown)
        duration_ns = sum(s.get("duration_ns", 0) for s in shown)
    finally:
        run.stop()
    return {"frames": frames, "duration_ns": duration_ns, "scenes": len(shown),
            "counts": stack.counts_since(m)}


def xtrace_render(ctx, stack, engine):
    """Per rendered frame: (long run - short run) / their frame difference,
    the long run lengthened as render_counts lengthens its own when it drew
    no more frames per scene than the short one (an emulated guest)."""
    short_ms, long_ms = ctx.opts.render_count_ms
    asked_ms = long_ms
    short = xtrace_render_once(ctx, stack, engine, short_ms)
    long = xtrace_render_once(ctx, stack, engine, long_ms)
    lengthened = []
    for _ in range(LENGTHEN_TRIES):
        if long["frames"] - short["frames"] >= max(1, short["scenes"]):
            break
        lengthened.append("the %d ms run drew %d frames, the %d ms run %d"
                          % (long_ms, long["frames"], short_ms, short["frames"]))
        long_ms = lengthened_ms(short_ms, long_ms, [long])
        long = xtrace_render_once(ctx, stack, engine, long_ms)
    fs, fl, cs, cl = short["frames"], long["frames"], short["counts"], long["counts"]
    if fl <= fs:
        raise CountFailed("xtrace run: the %d ms run drew no more frames (%d) than the "
                          "%d ms run (%d)%s" % (long_ms, fl, short_ms, fs,
                                                " (lengthened from %d ms)" % asked_ms
                                                if lengthened else ""))
    out = {role: {k: round((cl[role][k] - cs[role][k]) / (fl - fs), 3)
                  for k in cl[role] if k != "unparsed_warnings"}
           for role in cl if cl[role] and cs[role]}
    out["frames"] = fl - fs
    out["lengths_ms"] = [short_ms, long_ms]
    if lengthened:
        out["lengthened"] = ("long run lengthened from %d to %d ms per scene, by the frames "
                             "the app really drew (%s)" % (asked_ms, long_ms,
                                                          "; ".join(lengthened)))
    return out


def xtrace_run(ctx, stack):
    """The X protocol of the processes we did not write (openbox and
    xcompmgr), through xtrace: during a launch (fork -> first frame) and
    per rendered frame (two run lengths, every engine)."""
    res = {"source": "xtrace proxies between Xvfb and each of %s (separate run)"
                     % ", ".join(sorted(stack.xtrace_logs))}
    m = stack.marks()
    run = AppRun(ctx, stack, app_argv(ctx, stack, "launch", "--stay"))
    try:
        if not run.wait(first_frame, timeout=30, experiment="xtrace-launch"):
            raise AppFailed("duet-launch %s:\n%s" % (run.exit_status(), run.log_tail()))
        res["launch"] = stack.counts_since(m)
    finally:
        run.stop()
    res["render"] = {}
    for engine in ctx.opts.render_engines:
        res["render"][engine] = xtrace_render(ctx, stack, engine)
    res["interval"] = ("launch: fork of the app -> its first_frame line; render: (long run - "
                       "short run) / their frame difference, per role")
    return res
