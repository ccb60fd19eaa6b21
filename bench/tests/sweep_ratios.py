#!/usr/bin/env python3
"""`meson test --benchmark sweep-duet-vs-peers`: one glmark2 scene on
duet's two servers and the best peer of each (weston on Wayland, i3 + picom
on X11: the ones that led duet in issue 43's measurements), both of duet's
engines, a few paired rounds, and the ratios as the report computes them:
score and window-system CPU per painted frame, duet over its peer, with
their intervals, and each stack's CPU per painted frame over the floor.

Not a test: nothing here passes or fails on a figure (the machines are
shared and noisy); it exits 1 only when the run itself failed. A change that
makes duet slower shows as a ratio that moved between two benchmark runs.

usage: sweep_ratios.py [SCENE [ROUNDS]]     (default: build 3)
Environment: DUET_TOOL (tools/duet), DUET_BUILD_DIR (the build)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from duet_bench import report_sweep, stats  # noqa: E402
from duet_bench.report_figures import fmt, ratio_cell  # noqa: E402

PAIRS = [("wayland", "weston"), ("x11", "i3")]


def main():
    scene = sys.argv[1] if len(sys.argv) > 1 else "build"
    rounds = sys.argv[2] if len(sys.argv) > 2 else "3"
    if not (shutil.which("glmark2-es2-wayland") and shutil.which("glmark2-es2")):
        print("SKIP: glmark2 is not installed (scripts/packages.sh)")
        return 77
    out = tempfile.mkdtemp(prefix="duet-sweep-ratios-")
    stacks = ",".join(st for p in PAIRS for st in p)
    argv = [sys.executable, os.environ["DUET_TOOL"], "bench", "--out", out, "--experiments",
            "sweep", "--scenes", scene, "--stacks", stacks, "--rounds", rounds, "--reps", rounds,
            "--no-ipc", "--no-report"]
    print("$ " + " ".join(argv[1:]), flush=True)
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(r.stdout[-3000:])
    try:
        with open(os.path.join(out, "results.json")) as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        print("no results: %s" % e)
        return 1
    recs = {st: res["experiments"]["sweep"][st] for st in stacks.split(",")
            if st in res.get("experiments", {}).get("sweep", {})}
    seed = res.get("seed", 0)
    for renderer in res["options"].get("sweep_renderers") or []:
        floor = report_sweep.floor_of(res, renderer)
        print("engine %s (floor: %s ms of CPU per composite of the window)" % (renderer,
                                                                             fmt(floor)))
        for a, b in PAIRS:
            if not report_sweep.compared_in(b, renderer):
                continue
            for what, value in (("score", report_sweep.score),
                                ("WS CPU per painted frame", report_sweep.ws_per_painted)):
                rr = report_sweep.ratio(recs, (a, b), renderer, scene, value, seed)
                print("  %-15s %-26s %s" % (a + "/" + b, what, ratio_cell(rr)))
        for st, rec in recs.items():
            vals = [v for _, v in report_sweep.picks(rec, renderer, scene,
                                                     report_sweep.ws_per_painted)
                    if v is not None]
            if report_sweep.compared_in(st, renderer) and vals and floor:
                print("  %-15s %s ms per painted frame, %s x the floor"
                      % (st, fmt(stats.median(vals)), fmt(stats.median(vals) / floor)))
    shutil.rmtree(out, ignore_errors=True)
    return 0 if r.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
