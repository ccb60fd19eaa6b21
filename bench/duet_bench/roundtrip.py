"""The roundtrip experiment (issue 14): what one round trip costs on each
stack, timed as the Wine/Longene message-passing table did (groups of 100
round trips, each group timed as a whole), beside this machine's floor.

Per run and stack, duet-roundtrip (clients/roundtrip.c) makes 10 groups of
100 trips of each kind the stack has:
  server  the display server: wl_display.sync / GetInputFocus
  wm      X11 only: the app -> X server -> WM -> X server -> app hop
          (_NET_REQUEST_FRAME_EXTENTS, answered with _NET_FRAME_EXTENTS);
          on Wayland the WM is the server, so `server` is that hop
and, for the floor, a one-byte ping-pong between two processes over a Unix
socket pair and over pipes, pinned to one CPU and to two (the same on every
stack: it shows the machine, and drift between the stacks' turns).

A sample is one kind in one run: the median group's time per trip (us),
every group's, and the context switches per trip (voluntary + involuntary)
of every window-system process (/proc/PID/task/*/status around the run),
of duet-roundtrip (its rusage over the groups) and of the floor's peer, and
their sum. The floor's switches say what one switch-bound trip costs here.
"""
import json
import subprocess
import time

from duet_bench import procs
from duet_bench import switches as sw
from duet_bench.apprun import AppFailed, check_stack
from duet_bench.experiment import Experiment, runs

GROUPS, TRIPS = 10, 100
FLOORS = [("unix", "1"), ("unix", "2"), ("pipe", "1"), ("pipe", "2")]
KIND_TIMEOUT_S = 60


def kinds(stack):
    out = [("server", [])]
    if stack.kind == "x11" and not stack.spec.no_wm_roundtrip:
        out.append(("wm", []))
    return out + [("floor-%s-%scpu" % (k, c), [k, "--cpus", c]) for k, c in FLOORS]


def ctx_total(c):
    return (c["voluntary"] + c["involuntary"]) if c else None


def run_kind(ctx, stack, kind, extra):
    exe = ctx.apps["roundtrip"]
    argv = [exe] + (extra or [kind]) + ["--groups", str(GROUPS), "--trips", str(TRIPS),
                                        "--backend", stack.kind]
    before = {r: procs.ctx_switches(p) for r, p in stack.pids().items()}
    p = subprocess.Popen(argv, env=stack.env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=procs.patience(KIND_TIMEOUT_S))
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return {"kind": kind, "status": "failed",
                "reason": "duet-roundtrip %s took over %d s" % (kind, KIND_TIMEOUT_S)}
    after = {r: procs.ctx_switches(pid) for r, pid in stack.pids().items()}
    if p.returncode != 0:
        return {"kind": kind, "status": "failed",
                "reason": "duet-roundtrip %s exited %d: %s" % (kind, p.returncode,
                                                                err.strip()[-300:])}
    lines = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    groups = [l["ns"] / l["trips"] / 1000.0 for l in lines if l.get("name") == "roundtrip_group"]
    if len(groups) != GROUPS:
        return {"kind": kind, "status": "failed",
                "reason": "duet-roundtrip %s reported %d groups of %d" % (kind, len(groups),
                                                                           GROUPS)}
    trips = GROUPS * TRIPS
    # The stack's processes over duet-roundtrip's whole run (its connection
    # and one warm-up trip too: a few switches in ~1000 trips); the app's
    # and the floor's peer's from their own accounting.
    switches = {r: round(ctx_total(procs.ctx_diff(before[r], after[r])) / trips, 3)
                for r in before if procs.ctx_diff(before[r], after[r])}
    for l in lines:
        if l.get("name") == "roundtrip_done":
            switches["app"] = round(l["switches"] / trips, 3)
        elif l.get("name") == "roundtrip_peer":
            switches["peer"] = round(l["switches"] / trips, 3)
    counts = {r: procs.ctx_diff(before[r], after[r]) for r in before}
    for l in lines:
        if l.get("name") in ("roundtrip_done", "roundtrip_peer"):
            counts["app" if l["name"] == "roundtrip_done" else "peer"] = {"total": l["switches"]}
    ordered = sorted(groups)
    return {"kind": kind, "status": "ok", "trip_us": round(ordered[GROUPS // 2], 3),
            "groups_us": [round(g, 3) for g in groups],
            "switches_per_trip": switches,
            "switches_per_trip_all": round(sum(switches.values()), 3),
            "switches": sw.per_op(counts, trips, "trip", "duet-roundtrip's whole run (stack); "
                                  "its groups (app, from its rusage)")}


def timing(ctx, stack, rec):
    rec.setdefault("groups", GROUPS)
    rec.setdefault("trips_per_group", TRIPS)
    if stack.kind == "x11" and stack.spec.no_wm_roundtrip:
        rec["unavailable"] = {"wm": stack.spec.no_wm_roundtrip}
    failed = []
    started = time.monotonic()
    for i in runs(ctx, "roundtrip", stack):
        for kind, extra in kinds(stack):
            s = run_kind(ctx, stack, kind, extra)
            s["run"] = i + 1
            # Between kinds: a test's fault lands after the first kind ran.
            ctx.fault_hook(stack, "roundtrip", time.monotonic() - started)
            # A dead stack process is the failure, not the trips it left unanswered.
            check_stack(stack)
            if s.pop("status") != "ok":
                failed.append(s["reason"])
                continue
            rec["samples"].append(s)
    if failed:
        # The other kinds' samples stay; the job says what failed.
        raise AppFailed("; ".join(failed))


EXPERIMENT = Experiment("roundtrip", "roundtrip_reps", (1, 5), timing=timing,
                        apps=("roundtrip",), slow_reps=3)
