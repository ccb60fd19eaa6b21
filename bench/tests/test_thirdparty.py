#!/usr/bin/env python3
"""`duet bench --experiments thirdparty` end to end: glmark2 and
elementary_test on duet-compositor and on Xvfb + duet-xwm.

One quick run with 3 rounds (so the timings have intervals): every stack
ran at 60 Hz, glmark2 scored > 0 with window-system CPU and server IPC per
frame, elementary_test drew with the software engine of its window system,
its first frame was timed by the server's trace and its idle time counted;
summary.csv has x11/wayland ratio rows whose intervals hold the ratio;
results.json validates against bench/results.schema.json; the report has
the section with glmark2's round-trip note.
Environment: DUET_BUILD_DIR (the build), DUET_TOOL (tools/duet).
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import check, check_schema  # noqa: E402
from test_bench import GRID_EDGE_FRAMES, GRID_PERIOD_S  # noqa: E402

STACKS = ("wayland", "x11")


def check_weston_timeline():
    """weston's timeline lines (libweston/timeline.c's format) are counted
    as painted frames by core_repaint_finished inside the interval only."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE)))
    from duet_bench import timeline
    from duet_launch import stack_kinds
    from duet_launch.traces import JsonLines
    d = tempfile.mkdtemp(prefix="duet-weston-timeline-")
    path = os.path.join(d, "weston.log")
    with open(path, "w") as f:
        f.write("[12:00:00.000] weston 10.0.1\n")
        for i, name in enumerate(["core_repaint_begin", "core_repaint_finished",
                                  "core_repaint_finished", "core_commit_damage",
                                  "core_repaint_finished", "core_repaint_finished"]):
            f.write('{ "T":[5, %d], "N":"%s", "wo":1 }\n' % (100000000 * (i + 1), name))

    class Stack:
        name = "weston"
        spec = stack_kinds.get("weston")
        composited_log = JsonLines(path)
    n, why = timeline.output_frames(Stack, 5 * 10**9 + 150000000, 5 * 10**9 + 550000000)
    check(n == 3 and why is None, "weston timeline: 3 repaints finished in the interval (%s)"
          % n)
    Stack.composited_log = None
    n, why = timeline.output_frames(Stack, 0, 1)
    check(n is None and why, "no log: no count, a reason (%s)" % why)
    shutil.rmtree(d)


def check_frame_callbacks_parser():
    """Frame callbacks are counted from the client's WAYLAND_DEBUG log by
    the ids wl_surface.frame created: a wl_display.sync's done is not a
    frame, and the cut at "launched" splits launch from idle."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE)))
    from duet_bench import thirdparty
    d = tempfile.mkdtemp(prefix="duet-efl-log-")
    path = os.path.join(d, "efl.log")
    launch = (b"[1.000]  -> wl_display@1.sync(new id wl_callback@3)\n"
              b"[1.001] wl_callback@3.done(7)\n"
              b"[1.002]  -> wl_surface@9.frame(new id wl_callback@3)\n"
              b"[1.003]  -> wl_surface@9.commit()\n"
              b"[1.020] {Default Queue} wl_callback@3.done(20)\n"
              b"[1.021]  -> wl_surface@9.frame(new id wl_callback@12)\n"
              b"[1.022]  -> wl_surface@9.commit()\n")
    idle = b"[2.000] wl_callback@12.done(40)\n[2.001]  -> wl_surface@9.frame(new id wl_callback@3)\n"
    with open(path, "wb") as f:
        f.write(launch + idle + b"[3.000] wl_callback@3.done(60)\n")
    got = thirdparty.frame_callbacks(path, {"launched": len(launch),
                                            "idle": len(launch) + len(idle)})
    check(got == {"launch": {"asked": 2, "done": 1, "commits": 2},
                  "idle": {"asked": 1, "done": 1, "commits": 0}},
          "frame callbacks from a protocol log, sync answers and lines after idle left out: %s"
          % got)
    shutil.rmtree(d)


def main():
    check_weston_timeline()
    check_frame_callbacks_parser()
    for exe in ("glmark2-es2-wayland", "glmark2-es2", "elementary_test"):
        if not shutil.which(exe):
            print("SKIP: %s is not installed (scripts/packages.sh)" % exe)
            sys.exit(77)
    out = tempfile.mkdtemp(prefix="duet-thirdparty-test-")
    r = subprocess.run([sys.executable, os.environ["DUET_TOOL"], "bench", "--out", out,
                        "--quick", "--experiments", "thirdparty", "--stacks", ",".join(STACKS),
                        "--rounds", "3", "--reps", "3", "--seed", "11", "--no-trace"],
                       capture_output=True, text=True, timeout=400)
    print(r.stdout[-2500:])
    print(r.stderr[-2500:])
    check(r.returncode == 0, "duet bench --experiments thirdparty exits 0 (status %d)"
          % r.returncode)
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    check_schema(res)

    for st in STACKS:
        rec = res["experiments"]["thirdparty"][st]
        check(rec["status"] == "ok" and rec["stack_refresh"] == 60,
              "%s: thirdparty ran at 60 Hz (%s, %s)" % (st, rec["status"],
                                                       rec.get("stack_refresh")))
        role = "server" if st == "wayland" else "wm"
        check("--refresh 60" in res["stacks"][st]["commands"].get(role + "@60", ""),
              "%s: the %s was started with --refresh 60" % (st, role))
        gl = [s for s in rec["samples"] if s["client"] == "glmark2"]
        check(len(gl) == 3 and sorted(s["round"] for s in gl) == [1, 2, 3],
              "%s: one glmark2 run in each of the 3 rounds" % st)
        for s in gl:
            check(s["score"] > 0 and all(sc["fps"] > 0 for sc in s["scenes"])
                  and len(s["scenes"]) == 2,
                  "%s: glmark2 scored %s (%s)" % (st, s["score"],
                                                  [sc["fps"] for sc in s["scenes"]]))
            cpu = s["cpu_ms_per_frame"]
            check(cpu["window_system"] > 0 and cpu["app"] > 0,
                  "%s: window-system CPU per frame %s ms, glmark2's %s ms"
                  % (st, cpu["window_system"], cpu["app"]))
            # The output is 60 Hz: a server that painted per client commit
            # (hundreds a second for glmark2) would show here. Counted, not
            # as a rate: at most one painted frame per tick of each scene's
            # interval, plus what an interval's edges can hold whatever the
            # load (GRID_EDGE_FRAMES, test_bench.py); the rate is the
            # bench's figure (thirdparty_glmark2_painted_hz).
            wall_s = s["painted_frames"] / s["painted_hz"] if s["painted_hz"] else 0
            grid = (int(wall_s / GRID_PERIOD_S)
                    + GRID_EDGE_FRAMES * len(s["scenes"]))
            check(0 < s["painted_frames"] <= grid,
                  "%s: the compositor painted %s frames in %.3f s of a 60 Hz grid over %d "
                  "scenes (at most %d)" % (st, s["painted_frames"], wall_s,
                                           len(s["scenes"]), grid))
            want = cpu["window_system"] * s["frames"] / s["painted_frames"]
            check(abs(s["ws_cpu_ms_per_painted_frame"] - want) <= 0.01 * want + 1e-3,
                  "%s: window-system CPU per painted frame %s ms = the scenes' CPU / painted "
                  "frames (%.4f)" % (st, s["ws_cpu_ms_per_painted_frame"], want))
        efl = [s for s in rec["samples"] if s["client"] == "efl"]
        check(len(efl) == 3, "%s: three elementary_test launches" % st)
        want = "wayland_shm" if st == "wayland" else "software_x11"
        for s in efl:
            check(s["engines"] == [want], "%s: elementary_test drew with %s: %s"
                  % (st, want, s["engines"]))
            check(0 < s["first_frame_ms"] < s["launch_end_ms"] and "trace" in
                  s["first_frame_source"], "%s: first frame %.1f ms after the fork (%s)"
                  % (st, s["first_frame_ms"], s["first_frame_source"]))
            check(s["launch_cpu_ms"]["window_system"] > 0 and s["launch_cpu_ms"]["app"] > 0
                  and s["idle_cpu_ms"]["window_system"] >= 0,
                  "%s: launch CPU (window system %s ms) and idle CPU (%s ms) recorded"
                  % (st, s["launch_cpu_ms"]["window_system"],
                     s["idle_cpu_ms"]["window_system"]))
        count = res["ipc"][st]["thirdparty"]
        check(count["status"] == "ok", "%s: the thirdparty counting run worked" % st)
        g = count["glmark2"]
        check(g["frames"] > 0 and g["per_frame_study_style"]["server"] > 0,
              "%s: server IPC per glmark2 frame %s over %s frames"
              % (st, g["per_frame_study_style"]["server"], g["frames"]))
        e = count["efl"]
        check(e["launch"]["server"]["study_style"] > 0,
              "%s: server IPC during elementary_test's launch: %d calls"
              % (st, e["launch"]["server"]["study_style"]))
        check("server" in e["idle"] and e["idle"]["server"]["study_style"] >= 0
              and e["idle_calls_all_window_system"] >= 0,
              "%s: idle counted: server IPC %d, every window-system call %d"
              % (st, e["idle"]["server"]["study_style"], e["idle_calls_all_window_system"]))
    fc = res["ipc"]["wayland"]["thirdparty"]["efl"].get("frame_callbacks", {}).get("launch", {})
    check(fc.get("done", 0) > 0 and fc["asked"] >= fc["done"] and fc["commits"] > 0,
          "wayland: elementary_test's frame callbacks during its launch counted from its "
          "protocol log: %s" % fc)
    check(res["ipc"]["wayland"]["thirdparty"]["efl"].get("launch_ipc_per_callback", 0) > 0,
          "wayland: server IPC per frame callback recorded")
    check("frame_callbacks" not in res["ipc"]["x11"]["thirdparty"]["efl"],
          "x11: no frame callbacks (no Wayland protocol log)")
    # X moves glmark2's frames through Xvfb as PutImage requests; Wayland
    # hands over a buffer: the X server must make more calls per frame.
    xg = res["ipc"]["x11"]["thirdparty"]["glmark2"]["per_frame_study_style"]["server"]
    wg = res["ipc"]["wayland"]["thirdparty"]["glmark2"]["per_frame_study_style"]["server"]
    check(xg > wg, "Xvfb makes more calls per glmark2 frame (%s) than duet-compositor (%s)"
          % (xg, wg))

    with open(os.path.join(out, "summary.csv"), newline="") as f:
        rows = [row for row in csv.DictReader(f) if row["metric"].startswith("thirdparty_")]
    ratios = {row["metric"]: row for row in rows if row["row"] == "ratio"
              and row["stack"] == "x11/wayland"}
    for key in ("thirdparty_glmark2_score", "thirdparty_glmark2_ws_cpu_ms_per_frame",
                "thirdparty_efl_first_frame_ms", "thirdparty_efl_launch_ws_cpu_ms"):
        row = ratios.get(key)
        check(row and row["ci_low"] and row["ci_high"] and float(row["ci_low"])
              <= float(row["ratio"]) <= float(row["ci_high"]) and row["rounds"] == "3",
              "summary.csv: %s x11/wayland %s in [%s, %s] over 3 rounds" % (
                  key, row and row["ratio"], row and row["ci_low"], row and row["ci_high"]))
    for key in ("thirdparty_glmark2_ipc_per_frame", "thirdparty_efl_launch_ipc"):
        check(key in ratios and ratios[key]["ratio"], "summary.csv: %s x11/wayland %s"
              % (key, ratios.get(key, {}).get("ratio")))

    with open(os.path.join(out, "report.md")) as f:
        md = f.read()
    check("## Third-party clients (thirdparty)" in md and "wl_display_roundtrip after every "
          "frame" in md, "the report has the thirdparty section with glmark2's round-trip "
          "note")
    shutil.rmtree(out, ignore_errors=True)  # kept only when a check failed


if __name__ == "__main__":
    main()
    print("PASS")
