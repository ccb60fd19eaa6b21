#!/usr/bin/env python3
"""`duet bench --experiments sweep` end to end (issue 30): glmark2 on a
list of scenes with both of duet's drawing engines in one run.

usage: test_sweep.py quick|fault|painted
  painted: the report's ratio per painted frame, from synthetic rounds
         (no stack): for the pair whose stacks both say what they painted;
         each peer in the engine it counts as (XRender with pixman); CPU per
         painted frame over the floor.
  quick: two scenes on duet-compositor (a Wayland pair member, run once
         per engine) and openbox + xcompmgr (X11, run once: XRender), one
         round: every scene scored > 0 with window-system CPU per frame on
         each stack and engine, xcompmgr's paints counted (duet-paint-count),
         each stack instance started with its
         engine (--renderer gl / pixman), glmark2's command and version
         recorded, the schema, the floor (duet-composite-bench) once a round,
         and the report's sweep table per engine with the duet/peer ratio
         columns (openbox's XRender with pixman only) and the floor's table.
  fault: duet-xwm's X server killed while the gl engine's glmark2 runs,
         beside openbox: the sweep is recorded as failed on x11, the failed
         run names its engine, the pixman run still gives every scene and a
         ratio to openbox, and the report says which run failed.
Environment: DUET_BUILD_DIR (the build), DUET_TOOL (tools/duet).
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, check_schema  # noqa: E402
from duet_bench import paint_count  # noqa: E402
from test_bench import check_nothing_left, load, run_bench, run_killed  # noqa: E402

SCENES = ["build", "texture"]
ARGS = ["--quick", "--experiments", "sweep", "--scenes", ",".join(SCENES), "--reps", "1",
        "--no-ipc", "--seed", "7"]


def report_of(out):
    with open(os.path.join(out, "report.md")) as f:
        return f.read()


def check_scenes(rec, st, renderer):
    got = [s for s in rec["samples"] if s["renderer"] == renderer]
    check(sorted(s["scene"] for s in got) == sorted(SCENES),
          "%s %s: one sample per scene (%s)" % (st, renderer, [s["scene"] for s in got]))
    for s in got:
        ws = s["cpu_ms_per_frame"]["window_system"]
        check(s["score"] > 0 and ws is not None and ws > 0 and s["frames"] > 0,
              "%s %s %s: score %s, window-system CPU %s ms per frame over %s frames"
              % (st, renderer, s["scene"], s["score"], ws, s["frames"]))
        check(s["command"].split()[0].endswith("glmark2-es2-wayland" if st == "wayland"
                                               else "glmark2-es2")
              and all("-b %s:duration=0.5" % sc in s["command"] for sc in SCENES),
              "%s: the glmark2 command is recorded: %s" % (st, s["command"]))


def test_quick():
    r, out, mark, _ = run_bench(ARGS + ["--stacks", "wayland,openbox"], {}, timeout=500)
    check(r.returncode == 0, "duet bench --experiments sweep exits 0 (%d)" % r.returncode)
    res = load(out)
    check_schema(res)
    check(res["options"]["sweep_scenes"] == SCENES and
          res["options"]["sweep_renderers"] == ["gl", "pixman"] and
          res["versions"].get("glmark2"), "the scenes, engines and glmark2's version (%s) "
          "are recorded" % res["versions"].get("glmark2"))
    wl = res["experiments"]["sweep"]["wayland"]
    ob = res["experiments"]["sweep"]["openbox"]
    for st, rec in (("wayland", wl), ("openbox", ob)):
        check(rec["status"] == "ok" and rec["stack_refresh"] == 60,
              "%s: the sweep ran at 60 Hz (%s)" % (st, rec["status"]))
    check(wl["renderers"] == ["gl", "pixman"] and ob["renderers"] == ["xrender"],
          "duet-compositor ran both engines, openbox once with XRender")
    for renderer in ("gl", "pixman"):
        check_scenes(wl, "wayland", renderer)
        cmd = wl["commands"][renderer]["server"]
        check("--renderer %s" % renderer in cmd and "--refresh 60" in cmd,
              "wayland %s: duet-compositor started with it: %s" % (renderer, cmd))
    check_scenes(ob, "openbox", "xrender")
    if paint_count.find_paint_count():
        # xcompmgr logs no frames: duet-paint-count counts them, as in render.
        check(all(x.get("painted_source") == paint_count.SOURCE and x.get("painted_hz")
                  and x.get("ws_cpu_ms_per_painted_frame") for x in ob["samples"]),
              "openbox: xcompmgr's paints counted per scene: %s"
              % [(x["scene"], x.get("painted_hz"), x.get("painted_source")) for x in ob["samples"]])
    md = report_of(out)
    check("## Scene sweep (sweep)" in md and "### Engine gl" in md and "### Engine pixman" in md,
          "the report has the sweep section with a table per engine")
    for col in ("wayland/weston score [95% CI]", "wayland/weston WS CPU per frame [95% CI]"):
        check(md.count(col) == 2, "each engine's table has the column %r" % col)
    pix = md[md.index("### Engine pixman"):]
    for col in ("x11/openbox score [95% CI]", "x11/openbox WS CPU per frame [95% CI]"):
        check(md.count(col) == 1 and col in pix,
              "openbox's XRender is compared in the pixman table only: %r" % col)
    floor = res.get("sweep_floor", {}).get("rounds") or []
    check(len(floor) == 1 and floor[0].get("gl", 0) > 0 and floor[0].get("pixman", 0) > 0,
          "the round's floor (duet-composite-bench) is recorded: %s" % floor)
    check(md.count("**Over the floor.**") == 2, "each engine's table says its stacks' CPU per "
          "painted frame over the floor")
    check("wl_display_roundtrip after every frame" in md, "the report carries glmark2's "
          "round-trip note")
    check_nothing_left(mark, out)


def test_fault():
    out, mark, res, rec = run_killed(ARGS + ["--stacks", "x11,openbox"], "x11:sweep:200")
    check_schema(res)
    failed = rec.get("failed_runs") or []
    check(len(failed) == 1 and failed[0]["renderer"] == "gl" and "gl" in rec["reason"],
          "the failed run names its engine: %s; reason %r" % (failed, rec["reason"]))
    check(not [s for s in rec["samples"] if s["renderer"] == "gl"],
          "the killed run left no samples")
    check_scenes(rec, "x11", "pixman")
    md = report_of(out)
    check("**Failed**" in md and "x11 with gl, round 1 run 1" in md,
          "the report names the failed run")
    pix = md[md.index("### Engine pixman"):]
    row = next(line for line in pix.splitlines() if line.startswith("| build |"))
    # Score, CPU per frame and, xcompmgr's paints counted, per painted frame.
    want = 3 if paint_count.find_paint_count() else 2
    check(row.count("no interval: 1 round") == want,
          "pixman: %d x11/openbox ratios for build, without an interval (one round): %s"
          % (want, row))
    gl = md[md.index("### Engine gl"):md.index("### Engine pixman")]
    row = next(line for line in gl.splitlines() if line.startswith("| build |"))
    check("| failed |" in row, "gl: the failed stack's cell says failed: %s" % row)
    check_nothing_left(mark, out)


def test_painted():
    """The ratio per painted frame, from synthetic rounds: duet-compositor
    painting 60 Hz at half weston's CPU per painted frame shows 0.5 there
    (and more CPU per client frame, as it paints more often); openbox,
    whose xcompmgr tells no painted count, has no such column."""
    from duet_bench import report_sweep
    samples = {st: [] for st in ("wayland", "weston", "x11", "openbox")}
    for rnd in range(1, 6):
        for st, ws, hz, per_painted in (("wayland", 0.3, 60, 1.0), ("weston", 0.2, 36, 2.0),
                                        ("x11", 1.5, 60, 5.0), ("openbox", 1.5, None, None)):
            samples[st].append({"round": rnd, "renderer": "xrender" if st == "openbox" else "gl",
                                "scene": "build", "score": 500 + rnd,
                                "cpu_ms_per_frame": {"window_system": ws * (1 + rnd / 100)},
                                "painted_hz": hz, "ws_cpu_ms_per_painted_frame": per_painted})
    recs = {st: {"status": "ok", "samples": v, "renderers": ["xrender" if st == "openbox"
                                                            else "gl"]}
            for st, v in samples.items()}
    out = report_sweep.engine_blocks(recs, "gl", ["build"], 7)
    head, rows = next((b[1], b[2]) for b in out if b[0] == "table")
    col = "wayland/weston WS CPU per painted frame [95% CI]"
    check(col in head and not any("x11/openbox WS CPU per painted" in h for h in head),
          "a per painted frame column for wayland/weston only: %s" % head)
    cell = rows[0][head.index(col)]
    check(cell.startswith("0.5 "), "duet-compositor at half weston's CPU per painted "
          "frame: %r" % cell)
    check(not any(h.startswith("x11/openbox") for h in head),
          "openbox (XRender) is no GL peer: not in the gl table")
    pix = report_sweep.engine_blocks(recs, "pixman", ["build"], 7)
    phead = next(b[1] for b in pix if b[0] == "table")
    check("x11/openbox score [95% CI]" in phead, "openbox's XRender is compared in the pixman "
          "table: %s" % phead)
    # duet-xwm's in-server engine (--renderers xrender) has a table of its
    # own, against the peers that composite with XRender, and nobody else.
    xr = [dict(x, renderer="xrender") for x in samples["x11"]]
    xrecs = dict(recs, x11=dict(recs["x11"], samples=samples["x11"] + xr,
                                renderers=["gl", "xrender"], fixed=False))
    xhead = next(b[1] for b in report_sweep.engine_blocks(xrecs, "xrender", ["build"], 7)
                 if b[0] == "table")
    check("x11/openbox score [95% CI]" in xhead and not any(h.startswith("wayland/")
                                                            for h in xhead),
          "the xrender table pairs duet-xwm with openbox only: %s" % xhead)
    # The floor: 0.5 ms a frame; duet-compositor spends 1.0 per painted
    # frame (2x), weston 2.0 (4x), duet-xwm 5.0 (10x); openbox says nothing.
    out = report_sweep.engine_blocks(recs, "gl", ["build"], 7, floor=0.5)
    ftab = next(b for b in out if b[0] == "table" and "over the floor" in " ".join(b[1]))
    cells = dict(zip(ftab[1][1:], ftab[2][0][1:]))
    check(cells.get("duet-compositor: over the floor (ms per painted frame)", "").startswith("2 ")
          and cells.get("weston: over the floor (ms per painted frame)", "").startswith("4 ")
          and cells.get("duet-xwm: over the floor (ms per painted frame)", "").startswith("10 "),
          "each stack's CPU per painted frame over the floor: %s" % cells)
    check(not any(c.startswith("openbox") for c in cells), "openbox has no floor figure")
    check(not any(b[0] == "table" and "over the floor" in " ".join(b[1])
                  for b in report_sweep.engine_blocks(recs, "gl", ["build"], 7)),
          "no floor table without a floor")
    print("ok")


if __name__ == "__main__":
    if sys.argv[1] == "painted":
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        test_painted()
        sys.exit(0)
    if not (shutil.which("glmark2-es2-wayland") and shutil.which("glmark2-es2")):
        print("SKIP: glmark2 is not installed (scripts/packages.sh)")
        sys.exit(77)
    {"quick": test_quick, "fault": test_fault}[sys.argv[1]]()
    print("PASS")
