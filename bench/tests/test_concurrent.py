#!/usr/bin/env python3
"""The concurrent experiment (issue 14, item 4).

usage: test_concurrent.py quick|peers|fault
  quick: `duet bench --quick --experiments concurrent` on duet-compositor
         and Xvfb + duet-xwm: per stack one sample for each of 1, 2, 4, 8
         apps, every app composited (from the servers' traces) between its
         fork and the sample's ms, CPU and context switches per app of the
         stack's processes and the apps, server IPC per app from the
         counting run; the report's figure and table, summary.csv, the
         schema.
  peers: the same on weston (composited of every surface from its
         timeline, not tied to pids) and openbox (ms is the last app's
         presented, with a note; the observer's first sight as first_ms).
  fault: the wayland server killed 30 ms into the concurrent experiment
         (round 1 of 2): the failure is recorded with the server's log,
         round 2 still runs on a fresh stack and its samples are kept, the
         bench exits 1, and no process of the run is left behind.
Environment: DUET_BUILD_DIR (the build), DUET_TOOL (tools/duet).
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import check, check_schema, marked_processes, on_fail  # noqa: E402

COUNTS = [1, 2, 4, 8]


def bench(args, extra_env=None, timeout=400):
    out = tempfile.mkdtemp(prefix="duet-concurrent-test-")
    on_fail(lambda: print("kept: %s" % out))
    mark = "test-%d-%s" % (os.getpid(), os.urandom(4).hex())
    env = dict(os.environ, DUET_BENCH_RUN=mark, **(extra_env or {}))
    r = subprocess.run([sys.executable, os.environ["DUET_TOOL"], "bench", "--out", out] + args,
                       env=env, capture_output=True, text=True, timeout=timeout)
    print(r.stdout[-2000:])
    print(r.stderr[-2000:])
    time.sleep(0.5)
    with open(os.path.join(out, "results.json")) as f:
        return r, out, mark, json.load(f)


def check_phases(phases):
    """results.json's phases: each stack's start and stop (as often), its
    concurrent job with one part per count of apps inside it, and its
    counting run with the counts of --quick (1 and 8 apps) inside that."""
    def spans(what):
        return [(p["at_s"], p["at_s"] + p["s"]) for p in phases if p["what"] == what]

    def within(what, outer):
        return [s for s in spans(what) if outer[0] <= s[0] and s[1] <= outer[1]]
    check(len(spans("switch cost")) == 1, "phases: the switch cost, once: %r" % phases[:3])
    for st in ("wayland", "x11"):
        job, counting = spans("concurrent on %s" % st), spans("concurrent on %s (counting)" % st)
        check(len(job) == 1 and len(counting) == 1 and len(spans("start %s" % st)) >= 2 and
              len(spans("stop %s" % st)) == len(spans("start %s" % st)),
              "phases: %s started, its concurrent job and counting run, stopped as often as "
              "started: %r" % (st, [p for p in phases if st in p["what"]]))
        for n in COUNTS:
            check(len(within("%d apps" % n, job[0])) == 1 and
                  len(within("%d apps" % n, counting[0])) == (n in (1, 8)),
                  "phases: %d apps once inside %s's concurrent job %r and counted with --quick "
                  "if 1 or 8 %r: %r" % (n, st, job, counting, spans("%d apps" % n)))
    print("phases: %s" % ", ".join("%s %.1fs" % (p["what"], p["s"]) for p in phases))


def test_quick():
    # --no-trace: the traces are bench-trace's and bench-quick's (CI's time).
    r, out, _, res = bench(["--quick", "--experiments", "concurrent", "--stacks", "wayland,x11",
                            "--seed", "9", "--no-trace"])
    check(r.returncode == 0, "duet bench --experiments concurrent exits 0 (%d)" % r.returncode)
    check_schema(res)
    for st, roles in (("wayland", {"server"}), ("x11", {"server", "wm"})):
        rec = res["experiments"]["concurrent"][st]
        check(rec["status"] == "ok", "%s: concurrent ran (%s)" % (st, rec.get("reason")))
        check(sorted(s["apps"] for s in rec["samples"]) == COUNTS,
              "%s: one sample each of %s apps" % (st, COUNTS))
        for s in rec["samples"]:
            n, what = s["apps"], "%s, %d apps" % (st, s["apps"])
            check(len(s["per_app"]) == n, "%s: every app recorded" % what)
            check(0 < s["first_ms"] <= s["ms"] and "note" not in s,
                  "%s: first (%s ms) <= all composited (%s ms), from %s"
                  % (what, s["first_ms"], s["ms"], s.get("composited_source")))
            for a in s["per_app"]:
                # Not after its submitted point: that is read when the app's
                # flush has returned, and with N apps on 2 cores the app can
                # be descheduled while the server composites.
                check(a["fork_ms"] < a["composited_ms"] <= s["ms"] and a["submitted_ms"],
                      "%s: an app composited after its fork, by ms: %r" % (what, a))
            check(roles | {"app"} <= set(s["cpu_ms"]) and s["cpu_ms"]["app"] > 0,
                  "%s: CPU of the stack's processes and the apps: %r" % (what, s["cpu_ms"]))
            sw = s["switches"]
            check(sw["op"] == "app" and sw["n"] == n and roles | {"app"} <= set(sw["per_op"])
                  and sw["per_op"]["app"]["total"] > 0 and sw["window_system"] > 0,
                  "%s: switches per app of the stack and the apps: %r" % (what, sw))
        counted = res["ipc"][st]["concurrent"]
        check(counted.get("status") == "ok" and sorted(map(int, counted["per_apps"])) == [1, 8],
              "%s: a counting run of 1 and 8 apps (--quick) (%s)" % (st, counted.get("reason")))
        for k, c in counted["per_apps"].items():
            check(c["server_ipc_per_app"] > 0 and c["processes"]["server"]["ipc_unix"] > 0,
                  "%s, %s apps: server IPC per app %s" % (st, k, c["server_ipc_per_app"]))
    check_phases(res["phases"])
    with open(os.path.join(out, "summary.csv")) as f:
        rows = {row["metric"] for row in csv.DictReader(f)}
    check({"concurrent_1_ms", "concurrent_8_ms", "concurrent_8_switches_per_app",
           "concurrent_8_ipc_per_app"} <= rows,
          "summary.csv has the concurrent metrics")
    with open(os.path.join(out, "report.md")) as f:
        md = f.read()
    check("## Concurrent launches" in md and "| wayland | 8 | 1 |" in md,
          "the report has the concurrent section and table")
    if shutil.which("gnuplot"):
        check(os.path.exists(os.path.join(out, "plots", "concurrent.svg")),
              "the report has the figure of launch time vs apps")
    shutil.rmtree(out, ignore_errors=True)
    print("PASS")


def test_peers():
    """weston (its timeline: composited per surface, not per pid) and
    openbox (nobody tells composited per app: presented, with a note, and
    the observer's first sight)."""
    r, out, _, res = bench(["--quick", "--experiments", "concurrent", "--stacks",
                            "weston,openbox", "--no-ipc", "--seed", "4"])
    check(r.returncode == 0, "duet bench exits 0 (%d)" % r.returncode)
    for st in ("weston", "openbox"):
        rec = res["experiments"]["concurrent"][st]
        if rec["status"] == "skipped":
            print("skip: %s: %s" % (st, rec.get("reason")))
            continue
        check(rec["status"] == "ok" and sorted(s["apps"] for s in rec["samples"]) == COUNTS,
              "%s: one sample each of %s apps (%s)" % (st, COUNTS, rec.get("reason")))
        for s in rec["samples"]:
            n, what = s["apps"], "%s, %d apps" % (st, s["apps"])
            if st == "weston":
                comp = s.get("composited_sorted_ms") or []
                check("note" not in s and len(comp) == n and 0 < comp[0] and
                      comp[-1] == s["ms"] and comp[0] == s["first_ms"],
                      "%s: every surface composited, from weston's timeline: %s" % (what, comp))
                check(all(a["composited_ms"] is None for a in s["per_app"]),
                      "%s: not tied to pids" % what)
            else:
                pres = [a["presented_ms"] for a in s["per_app"]]
                check("presented" in s.get("note", "") and s["ms"] == max(pres),
                      "%s: ms is the last app's presented, with a note: %s"
                      % (what, s.get("note")))
                check(s.get("first_ms", 0) > 0 and "observer" in s["composited_source"],
                      "%s: the observer's first sight: %s ms" % (what, s.get("first_ms")))
            sw = s["switches"]
            check(sw["n"] == n and "server" in sw["per_op"] and "app" in sw["per_op"],
                  "%s: switches per app" % what)
    shutil.rmtree(out, ignore_errors=True)
    print("PASS")


def test_fault():
    # gl: its EGL start-up makes a launch last well past the 30 ms kill.
    r, out, mark, res = bench(["--experiments", "concurrent", "--stacks", "wayland",
                               "--reps", "2", "--rounds", "2", "--no-ipc", "--engine", "gl"],
                              {"DUET_BENCH_TEST_KILL_SERVER": "wayland:concurrent:30"},
                              timeout=300)
    check(r.returncode == 1, "the bench goes on and exits 1 since an experiment failed (%d)"
          % r.returncode)
    rec = res["experiments"]["concurrent"]["wayland"]
    check(rec["status"] == "failed" and "died" in rec["reason"],
          "concurrent recorded as failed: %s" % rec.get("reason"))
    check("server" in rec.get("logs", {}), "the failure carries the server's log")
    check(rec["reason"].startswith("round 1: "), "the kill came in round 1")
    later = sorted(x["apps"] for x in rec["samples"] if x.get("round") == 2)
    check(later == COUNTS, "round 2 still ran on a fresh stack, all of %s apps (%s), kept "
          "beside the failure" % (COUNTS, later))
    check("concurrent x wayland" in res["outcome"]["failed"],
          "the outcome names the failure: %s" % res["outcome"]["failed"])
    left = marked_processes(mark)
    check(not left, "no process of the run is left: %s" % left)
    shutil.rmtree(out, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    {"quick": test_quick, "peers": test_peers, "fault": test_fault}[sys.argv[1]]()
