"""IPC counting runs, kept apart from the timing runs because counting and
above all tracing change the timing.

Three counters, each in its own run of the same scenario:
  - the in-process counter (bench/ipc-count.c, LD_PRELOAD) in every
    process of the stack and in the app, dumped on a signal at the start
    and the end of the measured interval;
  - strace attached to the stack's processes and running the app, per
    syscall, per thread, with each Unix socket's peer found from
    /proc/PID/fd and strace's -yy inode pairs;
  - protocol messages: duet-compositor's protocol log, and on any Wayland
    server the app's own WAYLAND_DEBUG=client lines.
"""
import json
import os
import re
import signal
import subprocess
import time

from duet_bench import procs
from duet_bench.apprun import AppFailed, AppRun

from duet_bench.stacks import DUMP_SIGNAL, counting_env
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


def dump_now(d, pid, timeout=1.5):
    """Signals pid to dump its counts and waits for the new dump."""
    old = read_dump(d, pid)
    seq = old["seq"] if old else 0
    try:
        os.kill(pid, DUMP_SIGNAL)
    except ProcessLookupError:
        return old
    deadline = time.monotonic() + timeout
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


def summarize_counts(counts):
    """Per syscall: all fds and Unix sockets only; the study's number."""
    per = {}
    for call, kinds in counts.items():
        per[call] = {"all": sum(v[0] for v in kinds.values()),
                     "unix": kinds.get("unix", [0, 0])[0],
                     "unix_bytes": kinds.get("unix", [0, 0])[1]}
    ipc = sum(per[c]["unix"] for c in per if c in IPC_CALLS)
    return {"per_call": per, "ipc_unix": ipc,
            "study_style": sum(per[c]["unix"] for c in per if c in STUDY_CALLS),
            "waits": sum(per[c]["all"] for c in per if c in WAIT_CALLS)}


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
        env = counting_env(self.stack.counting)
        if self.stack.kind == "wayland":
            env["WAYLAND_DEBUG"] = "client"
        return env

    def baseline(self):
        return {role: dump_now(self.dir, pid) for role, pid in self.stack.pids().items()}

    def measure(self, base, app_pid, app_final=False):
        pids = dict(self.stack.pids(), app=app_pid)
        out = {}
        for role, pid in pids.items():
            cur = read_dump(self.dir, pid) if (role == "app" and app_final) else \
                dump_now(self.dir, pid)
            if cur is None:
                out[role] = {"error": "no dump from %s (pid %d)" % (role, pid)}
                continue
            d = diff_dump(base.get(role) if role != "app" else None, cur)
            s = summarize_counts(d["counts"])
            s["comm"] = cur.get("comm")
            s["peers"] = {role_of_pid(pids, p): summarize_counts(
                {c: {"unix": v} for c, v in calls.items()})["ipc_unix"]
                for p, calls in d["peers"].items()}
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


def protocol_log(stack, app_pid):
    if not stack.protocol_log:
        return None
    try:
        with open(stack.protocol_log) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    for c in data.get("clients", []):
        if c["pid"] == app_pid:
            keep = {k: c[k] for k in ("requests", "events", "request_bytes", "event_bytes",
                                      "request_fds", "event_fds")}
            keep["source"] = "duet-compositor protocol log (server side)"
            keep["messages"] = c.get("messages", {})
            return keep
    return None


def xwm_protocol_log(stack):
    """duet-xwm's own X traffic from its DUET_PROTOCOL_LOG, asked for now
    (SIGUSR2 makes it rewrite the file), or None."""
    if stack.name != "x11" or not stack.protocol_log:
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
    deadline = time.monotonic() + 2.0
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
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        p = protocol_log(stack, app_pid)
        if p is not None:
            return p
        time.sleep(0.02)
    return None


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


def argv_for(ctx, stack, app, *args):
    from duet_bench.experiments import app_argv
    return app_argv(ctx, stack, app, *args)


# ------------------------------------------------------------ scenarios
def launch_counts(ctx, stack):
    c = Counting(ctx, stack)
    base = c.baseline()
    wm_before = xwm_protocol_log(stack)
    run = AppRun(ctx, stack, argv_for(ctx, stack, "launch", "--stay"), extra_env=c.app_env())
    try:
        if not run.wait(first_frame, timeout=30, experiment="ipc-launch"):
            raise AppFailed("duet-launch %s:\n%s" % (run.exit_status(), run.log_tail()))
        res = {"processes": c.measure(base, run.pid)}
    finally:
        run.stop()
    proto = wait_protocol_log(stack, run.pid) if stack.name == "wayland" else None
    wd = wayland_debug_counts(run.log) if stack.kind == "wayland" else None
    xp = with_wm(x_counts(run.named("first_frame")), xwm_protocol_log(stack), wm_before)
    res["protocol"] = proto or wd or xp or {
        "unavailable": "X protocol counts need the XCB sequence-number hook in duet-xwm "
                       "and the app, not landed yet (see docs/methodology.md)"}
    if proto and wd:
        res["protocol_client_side"] = wd
    res["interval"] = "fork of the app -> its first_frame line (servers); app: its whole life " \
                      "up to then. Protocol: the app's whole connection (it exits right after)."
    return res


def render_counts(ctx, stack):
    c = Counting(ctx, stack)
    base = c.baseline()
    env = c.app_env()
    env.pop("WAYLAND_DEBUG", None)  # thousands of frames: too slow to log
    run = AppRun(ctx, stack, argv_for(ctx, stack, "render", "--duration-ms",
                                      str(ctx.opts.render_count_ms)), extra_env=env)
    try:
        run.wait(timeout=60, experiment="ipc-render")
        scenes = run.named("scene")
        if not run.named("render_done"):
            raise AppFailed("duet-render %s:\n%s" % (run.exit_status(), run.log_tail()))
        res = {"processes": c.measure(base, run.pid, app_final=True)}
    finally:
        run.stop()
    frames = sum(s["frames"] for s in scenes)
    res["frames"] = frames
    res["per_frame"] = {role: round(p["ipc_unix"] / frames, 2)
                        for role, p in res["processes"].items() if "ipc_unix" in p and frames}
    res["per_frame_study_style"] = {role: round(p["study_style"] / frames, 2)
                                    for role, p in res["processes"].items()
                                    if "study_style" in p and frames}
    proto = wait_protocol_log(stack, run.pid) if stack.name == "wayland" else None
    proto = proto or x_counts(scenes)
    if proto and frames:
        res["protocol_per_frame"] = round((proto["requests"] + proto["events"]) / frames, 2)
        res["protocol_source"] = proto["source"]
    res["interval"] = "the app's whole life (start-up included), divided by its frames"
    return res


def resize_counts(ctx, stack):
    """IPC per resize: (counts of 3 runs of the 8 sizes - counts of 1 run) / 16,
    which removes start-up and teardown."""
    totals = {}
    for runs in (1, 3):
        c = Counting(ctx, stack)
        base = c.baseline()
        run = AppRun(ctx, stack, argv_for(ctx, stack, "resize", "--runs", str(runs)),
                     extra_env=dict(c.app_env(), WAYLAND_DEBUG=""))
        try:
            run.wait(timeout=90, experiment="ipc-resize")
            if not run.named("resize_done"):
                raise AppFailed("duet-resize %s:\n%s" % (run.exit_status(), run.log_tail()))
            totals[runs] = c.measure(base, run.pid, app_final=True)
            xp = x_counts(run.named("resize"))
        finally:
            run.stop()
    per = {}
    for role in totals[3]:
        a, b = totals[1].get(role, {}), totals[3][role]
        if "ipc_unix" in a and "ipc_unix" in b:
            per[role] = {"ipc_unix": round((b["ipc_unix"] - a["ipc_unix"]) / 16.0, 2),
                         "study_style": round((b["study_style"] - a["study_style"]) / 16.0, 2)}
    out = {"per_resize": per, "mode": "client"}
    if xp:
        n = 8 * 3
        out["protocol_per_resize"] = round((xp["requests"] + xp["events"]) / n, 2)
        out["protocol_source"] = xp["source"]
    out["interval"] = "(3 runs - 1 run of the 8 sizes) / 16 resizes"
    return out


# ------------------------------------------------------------ strace
# "1700000000.123456 sendmsg(5<UNIX-STREAM:[111->222]>, ..." gives the fd, its
# kind, its inode and the peer's inode (the kind must stop at the colon, or the
# optional inode part would match empty and lose the peer).
STRACE_LINE = re.compile(r"^(\d+\.\d+) (\w+)\((?:(\d+)(?:<([^\[>:]*)(?::\[(\d+)(?:->(\d+))?)?)?)?")
RESULT = re.compile(r"\)\s+=\s+(-?\d+)")


def strace_launch(ctx, stack, strace):
    """One launch with strace on every stack process and on the app."""
    pids = stack.pids()
    prefix = os.path.join(stack.dir, "strace")
    argv = [strace, "-f", "-qq", "-yy", "-ttt", "-e", "trace=" + STRACE_CALLS, "-ff", "-o",
            prefix]
    for pid in pids.values():
        argv += ["-p", str(pid)]
    tracer = procs.Child("strace", argv, dict(os.environ),
                         log_path=os.path.join(stack.dir, "strace.log"))
    try:
        deadline = time.monotonic() + 10
        while not all(procs.traced(p) for p in pids.values()):
            if time.monotonic() > deadline or not tracer.alive():
                raise AppFailed("strace could not attach (%s):\n%s"
                                % (tracer.status(), tracer.log_tail()))
            time.sleep(0.02)
        app_prefix = os.path.join(stack.dir, "strace-app")
        t_start = time.time()
        run = AppRun(ctx, stack, [strace, "-f", "-qq", "-yy", "-ttt", "-e",
                                  "trace=" + STRACE_CALLS, "-ff", "-o", app_prefix, "--"]
                     + argv_for(ctx, stack, "launch", "--stay"))
        try:
            if not run.wait(first_frame, timeout=60, experiment="strace-launch"):
                raise AppFailed("duet-launch under strace %s:\n%s"
                                % (run.exit_status(), run.log_tail()))
            t_end = time.time()
            kids = procs.descendants(run.pid)
            app_pid = kids[0] if kids else None
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
            run.stop()
    finally:
        tracer.signal(signal.SIGINT)  # detach
        try:
            tracer.popen.wait(5)
        except subprocess.TimeoutExpired:
            pass
        tracer.stop()
    per = {}
    for name in os.listdir(stack.dir):
        if not (name.startswith("strace.") or name.startswith("strace-app.")):
            continue
        try:
            tid = int(name.rsplit(".", 1)[1])
        except ValueError:
            continue
        role = tid_owner.get(tid, "other")
        with open(os.path.join(stack.dir, name), errors="replace") as f:
            for line in f:
                m = STRACE_LINE.match(line)
                if not m:
                    continue
                ts = float(m.group(1))
                if ts < t_start or ts > t_end:
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
    return {"processes": per, "interval": "app fork -> first_frame, by strace -ttt timestamps",
            "command": " ".join(argv)}
