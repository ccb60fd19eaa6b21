#!/usr/bin/env python3
"""`duet bench --experiments vfb` end to end (issue 15).

usage: test_vfb.py quick|fault
  quick: --quick on duet-compositor, Xvfb + duet-xwm and weston: every
         method duet-vfb-reader can use here ran on both layouts of
         duet-compositor (compare and damage at least) and on Xvfb's linear
         framebuffer (compare and X's Damage events), with recall 1.0 for
         damage and positive detection
         times; each method it cannot use is recorded unavailable with a
         reason, on every stack that ran; weston is skipped with its
         reason; results.json validates against the schema; the report
         has the section, the sentence on whether tiles cut detection time
         with the ratio, and both figures, written to plots/.
  fault: Xvfb is killed 300 ms into the experiment: the failure is
         recorded (the stack died) with the server's log, the bench exits
         1, and no process of the run is left.
Environment: DUET_BUILD_DIR (the build), DUET_TOOL (tools/duet).
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import check  # noqa: E402
from test_bench import load, marked_processes, run_bench  # noqa: E402

SCHEMA = os.path.join(os.path.dirname(HERE), "results.schema.json")
METHODS = ["compare", "softdirty", "uffd-wp", "damage"]


def test_quick():
    import jsonschema  # Debian's python3-jsonschema; the bench itself stays stdlib-only
    r, out, mark, took = run_bench(["--quick", "--experiments", "vfb", "--stacks",
                                    "wayland,x11,weston", "--no-ipc", "--seed", "5"], {},
                                   timeout=400)
    check(r.returncode == 0, "duet bench --quick --experiments vfb exits 0 (%d)" % r.returncode)
    res = load(out)
    with open(SCHEMA) as f:
        errors = list(jsonschema.Draft202012Validator(json.load(f)).iter_errors(res))
    check(not errors, "results.json validates against the schema%s" % "".join(
        "\n  %s: %s" % (list(e.path), e.message[:200]) for e in errors[:10]))
    check(res["options"].get("vfb_reps") == 3, "--quick records its 3 runs: %r"
          % res["options"].get("vfb_reps"))
    layouts = {"wayland": ["linear", "tiled"], "x11": ["linear"]}
    for st, want in layouts.items():
        rec = res["experiments"]["vfb"][st]
        check(rec["status"] == "ok", "%s: vfb ran (%s)" % (st, rec.get("reason")))
        gone = rec.get("unavailable") or {}
        for m, why in gone.items():
            check(isinstance(why, str) and len(why) > 20,
                  "%s: %s unavailable with a reason: %s" % (st, m, why))
        ran = sorted({s["method"] for s in rec["samples"]})
        check(sorted(set(ran) | set(gone)) == sorted(METHODS) and not set(ran) & set(gone),
              "%s: every method either ran (%s) or is unavailable (%s)"
              % (st, ran, sorted(gone)))
        check("compare" in ran, "%s: compare ran" % st)
        for layout in want:
            for m in ran:
                ss = [s for s in rec["samples"] if s["layout"] == layout and s["method"] == m]
                works = sorted({s["workload"] for s in ss})
                check(works == ["blink", "fullscreen", "scroll"] and
                      len(ss) == 9, "%s %s %s: 3 runs of 3 workloads: %d samples, %s"
                      % (st, layout, m, len(ss), works))
                check(all(s["detect_ms"] and s["detect_ms"] > 0 and s["frames"] > 0
                          for s in ss), "%s %s %s: frames found and timed" % (st, layout, m))
    xrec = res["experiments"]["vfb"]["x11"]
    check({"compare", "damage"} <= {s["method"] for s in xrec["samples"]} and
          all(s.get("recall") is not None or s.get("raced") == s["frames"]
              for s in xrec["samples"]),
          "x11: compare and X's own damage ran, recall measured against X's Damage events")
    wrec = res["experiments"]["vfb"]["wayland"]
    check("damage" in {s["method"] for s in wrec["samples"]}, "wayland: damage ran")
    for s in wrec["samples"]:
        if s["method"] == "damage":
            # A frame that raced the writer is left out; all of them racing
            # leaves nothing to measure, not a wrong answer.
            check((s.get("recall") == 1.0 and s.get("precision") == 1.0) or
                  s.get("raced") == s["frames"],
                  "wayland %s %s damage: precision and recall 1.0 (%r, %r)"
                  % (s["workload"], s["layout"], s.get("precision"), s.get("recall")))
    check("move" in wrec.get("workloads_not_run", {}), "the window-moving workload says why "
          "it did not run")
    wr = res["experiments"]["vfb"]["weston"]
    check(wr["status"] == "skipped" and "not measurable" in wr.get("reason", ""),
          "weston: skipped as not measurable: %s" % wr.get("reason"))
    with open(os.path.join(out, "report.md")) as f:
        md = f.read()
    check("## Virtual display" in md and "Do tiles cut detection time here?" in md and
          "tiled / linear = " in md, "the report says whether tiles cut detection time, "
          "with the ratio")
    for fig in ("vfb_detect", "vfb_tiled_ratio"):
        path = os.path.join(out, "plots", fig + ".svg")
        check(os.path.exists(path) and os.path.getsize(path) > 0 and fig + ".svg" in md,
              "the report has the figure %s" % fig)
    check(not marked_processes(mark), "no process of the run is left")
    shutil.rmtree(out, ignore_errors=True)


def test_fault():
    r, out, mark, took = run_bench(["--quick", "--experiments", "vfb", "--stacks", "x11",
                                    "--no-ipc"],
                                   {"DUET_BENCH_TEST_KILL_SERVER": "x11:vfb:300"},
                                   timeout=300)
    check(r.returncode == 1, "the bench exits 1 since an experiment failed (%d)"
          % r.returncode)
    res = load(out)
    rec = res["experiments"]["vfb"]["x11"]
    check(rec["status"] == "failed" and "died" in rec.get("reason", ""),
          "vfb recorded as failed because the stack died: %s" % rec.get("reason"))
    check("server" in rec.get("logs", {}), "the failure carries the server's log")
    left = marked_processes(mark)
    check(not left, "no process of the run is left: %s" % left)
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    {"quick": test_quick, "fault": test_fault}[sys.argv[1]]()
    print("PASS")
