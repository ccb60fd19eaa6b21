#!/usr/bin/env python3
"""Issue 8, Done-when 1: `duet bench --quick` launch samples carry a
timeline with fork, submitted and composited on all four stacks, cold and
warm launches are told apart, and the headline `ms` is fork -> composited;
with either engine (the observer must find the sw engine's pixels too).

usage: test_timeline.py
Environment: DUET_BUILD_DIR (the build), DUET_TOOL (tools/duet).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

STACKS = ("wayland", "x11", "weston", "openbox")
SOURCES = {"wayland": "duet-compositor trace", "x11": "duet-xwm trace",
           "weston": "weston timeline scope", "openbox": "observer (Xvfb -fbdir)"}
# The one tolerance: "submitted" is read when the app's swap / commit call
# returns, the frame having left inside it. On two cores the compositor can
# run, composite and finish before the app is scheduled again, so composited
# may precede submitted by a time slice of the app's absence.
PREEMPTED_MS = 5.0

failed = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failed.append(msg)


def main():
    outs = []
    for engine in ("gl", "sw"):
        out = tempfile.mkdtemp(prefix="duet-timeline-test-%s-" % engine)
        outs.append(out)
        r = subprocess.run([sys.executable, os.environ["DUET_TOOL"], "bench", "--quick",
                            "--experiments", "launch", "--no-ipc", "--no-report", "--engine",
                            engine, "--stacks", ",".join(STACKS), "--out", out],
                           capture_output=True, text=True, timeout=240)
        print(r.stderr[-3000:])
        check(r.returncode == 0, "%s: duet bench exits 0 (status %d)" % (engine, r.returncode))
        with open(os.path.join(out, "results.json")) as f:
            check_results(json.load(f), engine)
    if failed:
        print("results kept in %s" % " ".join(outs))
        sys.exit(1)
    for out in outs:
        shutil.rmtree(out, ignore_errors=True)
    print("PASS")


def check_results(res, engine):
    for stack in STACKS:
        rec = res["experiments"]["launch"].get(stack) or {}
        check(rec.get("status") == "ok", "%s: launch ok (%s %s)"
              % (stack, rec.get("status"), (rec.get("reason") or "")[:300]))
        samples = rec.get("samples", [])
        kinds = [s.get("kind") for s in samples]
        check(kinds.count("cold") == 1 and kinds.count("warm") == 3,
              "%s %s: one cold launch per fresh stack and the 3 --quick warm ones: %s"
              % (engine, stack, kinds))
        notes = res["stacks"][stack].get("notes", [])
        check(any(n.startswith("ready = a probe duet-launch") for n in notes),
              "%s: ready once a probe's first frame was composited: %s" % (stack, notes))
        for s in samples:
            tl = s.get("timeline") or {}
            what = "%s %s %s run %s" % (engine, stack, s.get("kind"), s.get("run"))
            have = [p for p in ("fork", "submitted", "composited") if p in tl]
            check(len(have) == 3, "%s: has fork, submitted, composited (%s; missing: %s)"
                  % (what, have, s.get("timeline_missing")))
            if len(have) < 3:
                continue
            check(tl["fork"] == 0 < tl["submitted"],
                  "%s: fork 0 < submitted %.2f ms" % (what, tl["submitted"] / 1e6))
            late = (tl["submitted"] - tl["composited"]) / 1e6
            check(late <= PREEMPTED_MS, "%s: submitted %.2f <= composited %.2f ms%s"
                  % (what, tl["submitted"] / 1e6, tl["composited"] / 1e6,
                     " (the app was off the CPU %.2f ms after handing over)" % late
                     if late > 0 else ""))
            check(abs(s["ms"] - tl["composited"] / 1e6) < 1e-6,
                  "%s: ms %.3f == fork -> composited" % (what, s["ms"]))
            check(s.get("timeline_source", {}).get("composited") == SOURCES[stack],
                  "%s: composited from %s" % (what, s.get("timeline_source", {}).get("composited")))
            order = [p for p in ("exec", "connected", "submitted", "received") if p in tl]
            check(order == ["exec", "connected", "submitted", "received"] and
                  tl["exec"] <= tl["connected"] <= tl["submitted"] <= tl["received"],
                  "%s: exec <= connected <= submitted <= received: %s"
                  % (what, {p: round(tl[p] / 1e6, 2) for p in order}))
            if stack == "openbox":
                check((s.get("observer") or {}).get("cpu_ns", 0) > 0,
                      "%s: the observer's own CPU is recorded: %s" % (what, s.get("observer")))


if __name__ == "__main__":
    main()
