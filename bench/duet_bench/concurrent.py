"""The concurrent experiment (issue 14, item 4): 1, 2, 4 and 8 duet-launch
apps started at once on a running stack. Whether the X server, the WM or
the Wayland compositor serialises start-up shows in how the time until
every first frame is composited grows with the number of apps.

Per run and count N, a sample: the N apps forked back to back (spawn_ms:
how long the forks took), each waited for until it reported its first
frame (it stays, --stay), then:
  ms          first fork -> the last app's first frame composited, from the
              servers' traces (duet-compositor, duet-xwm), weston's
              timeline (every duet-launch surface's first posted repaint),
              or, where nobody tells it for every app (openbox and
              Enlightenment: the observer sees one colour, not N windows),
              first fork -> the last app's presented, with a note
  first_ms    first fork -> the first app's first frame composited (the
              observer's first sight on openbox)
  per_app     each app's fork, submitted, presented and composited (ms
              since the first fork)
  cpu_ms      ms on CPU of every stack process over first fork -> all
              composited known, and of the apps (summed, their whole life to
              then); cpu_ms_per_app the same / N
  switches    context switches per app over the same interval
              (switches.py)

counts() is the counting run (a stack started with the LD_PRELOAD counter,
ipc.py): per count N, the IPC calls of every stack process from just
before the first fork until every app reported its first frame, and per
app (/ N): ipc.STACK.concurrent.per_apps.N.
"""
import time

from duet_bench import ipc, procs, switches, timeline
from duet_launch import stack_kinds
from duet_bench.apprun import AppRun
from duet_bench.experiment import Experiment, app_argv, counted, runs
from duet_bench.launch import wait_first_frame

COUNTS = [1, 2, 4, 8]
QUICK_COUNTED = [1, 8]


def weston_all(items, since_ns, app_id="duet-launch"):
    """Every surface of app_id that committed damage at or after since_ns
    in weston's timeline: the end of the first output repaint that flushed
    it (timeline.weston_composited's rule, for all of them). Sorted ns."""
    names, flushing, done = {}, {}, {}
    for o in items:
        if o.get("type") == "weston_surface" and "id" in o:
            names[o["id"]] = o.get("desc") or ""
            continue
        n, t, ws = o.get("N"), o.get("T"), o.get("ws")
        if not n or not isinstance(t, list) or len(t) != 2:
            continue
        t = timeline._ns(t)
        if n == "core_commit_damage" and t >= since_ns and ws not in done and \
                ws not in flushing and (app_id in names.get(ws, "") or names.get(ws) == ""):
            flushing[ws] = None
        elif n == "core_flush_damage" and ws in flushing and flushing[ws] is None:
            flushing[ws] = o.get("wo")
        elif n == "core_repaint_posted":
            for s, wo in list(flushing.items()):
                if wo is not None and wo == o.get("wo"):
                    done[s] = t
                    del flushing[s]
    return sorted(done.values())


def composited_all(stack, runs, t0, timeout=2.0):
    """[ns or None per app] (duet's servers: per pid; weston: the surfaces'
    times in order, not tied to a pid) and the source, or (None, why)."""
    if stack.spec.composited in (stack_kinds.OBSERVER, None):
        return None, "%s tells no composited time per app" % stack.name
    if stack.spec.composited == stack_kinds.WESTON_TIMELINE:
        deadline = time.monotonic() + procs.patience(timeout)
        while True:
            got = weston_all(stack.composited_log.read(), t0)
            if len(got) >= len(runs) or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        if len(got) < len(runs):
            return None, "weston's timeline shows %d of %d surfaces composited" % (
                len(got), len(runs))
        return got[:len(runs)], stack.spec.composited_source
    if stack.spec.xwayland:
        # Every X window is a surface of Xwayland's one client: the first
        # frames of its new surfaces after t0, in order, not tied to a pid.
        client = timeline.server_client_pid(stack, None)
        deadline = time.monotonic() + procs.patience(timeout)
        while True:
            got = sorted(e["t_ns"] for e in stack.composited_log.read()
                         if e.get("name") == "composited" and e.get("first") and
                         e.get("client_pid") == client and isinstance(e.get("t_ns"), int) and
                         e["t_ns"] >= t0)
            if len(got) >= len(runs) or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        if len(got) < len(runs):
            return None, "%s's trace shows %d of %d X windows composited" % (
                stack.name, len(got), len(runs))
        return got[:len(runs)], timeline.source_of(stack)
    out = []
    for r in runs:
        t, why = timeline.server_composited(stack, r.pid, "duet-launch", t0, timeout=timeout)
        if t is None:
            return None, why
        out.append(t)
    return out, timeline.source_of(stack)


def ms(ns):
    return round(ns / 1e6, 3) if ns is not None else None


def launch_many(ctx, stack, n):
    argv = app_argv(ctx, stack, "launch", "--stay")
    witness = timeline.LaunchWitness(stack).start()
    pids = stack.pids()
    before = switches.read(pids)
    meters = {r: procs.CpuMeter(p) for r, p in pids.items()}
    runs = []
    try:
        for _ in range(n):
            runs.append(AppRun(ctx, stack, argv, t0=True))
        t0 = runs[0].t0_ns
        spawned = time.monotonic_ns()
        ffs = [wait_first_frame(r, "concurrent") for r in runs]
        comp, source = composited_all(stack, runs, t0)
        first_seen = witness.composited(runs[0].pid, t0)[0] if stack.spec.observed else None
        cpu = {r: m.read() for r, m in meters.items()}
        apps_cpu = [procs.CpuMeter(r.pid, from_zero=True).read() for r in runs]
        after = switches.read(pids)
        apps_sw = [procs.ctx_switches(r.pid) for r in runs]
    finally:
        for r in runs:
            r.stop()
        witness.close()
    # weston's timeline names surfaces, not pids: its times stay a sorted list.
    # Nor do Xwayland's X windows (one Wayland client for every X app).
    by_pid = stack.spec.composited != stack_kinds.WESTON_TIMELINE and not stack.spec.xwayland
    per_app = []
    for i, (r, ff) in enumerate(zip(runs, ffs)):
        tl = ff.get("timeline") or {}
        per_app.append({"fork_ms": ms(r.t0_ns - t0),
                        "submitted_ms": ms(tl["submitted"] - t0)
                        if isinstance(tl.get("submitted"), int) else None,
                        "presented_ms": ms(tl["presented"] - t0)
                        if isinstance(tl.get("presented"), int) else None,
                        "composited_ms": ms(comp[i] - t0) if comp and by_pid else None})
    sample = {"apps": n, "spawn_ms": ms(spawned - t0), "per_app": per_app,
              "presentation": ffs[0].get("presentation"), "path": ffs[0].get("path")}
    if comp:
        sample.update(ms=ms(max(comp) - t0), first_ms=ms(min(comp) - t0),
                      composited_source=source,
                      composited_sorted_ms=sorted(ms(c - t0) for c in comp))
    else:
        pres = [a["presented_ms"] for a in per_app if a["presented_ms"] is not None]
        sample["ms"] = max(pres) if len(pres) == n else None
        sample["note"] = "ms is first fork -> the last app's presented: %s" % source
        if first_seen is not None:
            sample["first_ms"] = ms(first_seen - t0)
            sample["composited_source"] = "%s (the first app only)" % timeline.source_of(stack)
    cpu_ms = {r: round(v / 1e6, 4) for r, v in cpu.items() if v is not None}
    if all(v is not None for v in apps_cpu):
        cpu_ms["app"] = round(sum(apps_cpu) / 1e6, 4)
    sample["cpu_ms"] = cpu_ms
    sample["cpu_ms_per_app"] = {r: round(v / n, 4) for r, v in cpu_ms.items()}
    counts = switches.delta(before, after)
    if all(apps_sw):
        counts["app"] = {k: sum(a[k] for a in apps_sw) for k in ("voluntary", "involuntary")}
    sample["switches"] = switches.per_op(counts, n, "app", "stack: first fork -> every first "
                                         "frame composited known; apps: their life to then")
    return sample


def timing(ctx, stack, rec):
    rec["counts"] = COUNTS
    for i in runs(ctx, "concurrent", stack):
        for n in COUNTS:
            with ctx.phase("%d apps" % n):
                rec["samples"].append(dict(launch_many(ctx, stack, n), run=i + 1))
            time.sleep(0.2)


def counts(ctx, stack):
    """The counting run: {"per_apps": {"N": {"processes": {role: ipc.py's
    summary}, "server_ipc_per_app": study-style calls / N,
    "window_system_ipc_per_app": all the stack's IPC calls / N}}}."""
    c = ipc.Counting(ctx, stack)
    env = c.app_env()
    env.pop("WAYLAND_DEBUG", None)  # N apps logging every message: too slow, and not read
    out = {"per_apps": {}, "interval": "first fork -> every app's first_frame line (the stack's "
           "processes; the apps are not counted)"}
    # --quick counts the two ends only (the metrics' counts), to stay short.
    for n in QUICK_COUNTED if ctx.opts.quick else COUNTS:
        with ctx.phase("%d apps" % n):
            out["per_apps"][str(n)] = count_many(ctx, stack, c, env, n)
        time.sleep(0.2)
    return out


def count_many(ctx, stack, c, env, n):
    """One counting run of n apps at once: its counts (counts())."""
    base = c.baseline()
    runs = []
    try:
        for _ in range(n):
            runs.append(AppRun(ctx, stack, app_argv(ctx, stack, "launch", "--stay"),
                               extra_env=env))
        for r in runs:
            wait_first_frame(r, "concurrent")
        procs_ = c.measure(base, runs[0].pid, app_counted=False)
    finally:
        for r in runs:
            r.stop()
    return {"processes": procs_,
            "server_ipc_per_app": round(procs_["server"]["study_style"] / n, 2)
            if "server" in procs_ else None,
            "window_system_ipc_per_app": round(sum(p["ipc_unix"] for p in procs_.values())
                                               / n, 2)}


EXPERIMENT = Experiment("concurrent", "concurrent_reps", (1, 5), timing=timing,
                        counting=counted("concurrent", counts), slow_reps=3)
