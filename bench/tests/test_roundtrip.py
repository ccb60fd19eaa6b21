#!/usr/bin/env python3
"""`duet bench --experiments roundtrip` end to end on duet-compositor and on
Xvfb + duet-xwm: one quick run with 2 rounds. Every stack has server round
trips, the X11 stack the WM hop too, and both the floor (Unix socket and
pipe, one and two CPUs); each sample has 10 groups, a median within them,
and context switches per trip for the app and every stack process; the
report and summary.csv carry the roundtrip metrics; results.json validates
against bench/results.schema.json.
Environment: DUET_BUILD_DIR (the build), DUET_TOOL (tools/duet).
"""
import csv
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import check  # noqa: E402
from test_bench import check_nothing_left, run_killed, run_valid  # noqa: E402

FLOORS = {"floor-unix-1cpu", "floor-unix-2cpu", "floor-pipe-1cpu", "floor-pipe-2cpu"}


def main():
    res, out, _ = run_valid(["--quick", "--experiments", "roundtrip", "--stacks", "wayland,x11",
                             "--rounds", "2", "--reps", "2", "--seed", "5", "--no-ipc"],
                            "duet bench --experiments roundtrip", timeout=300)
    for st, roles in (("wayland", {"server"}), ("x11", {"server", "wm"})):
        rec = res["experiments"]["roundtrip"][st]
        check(rec["status"] == "ok", "%s: roundtrip ran (%s)" % (st, rec.get("reason")))
        want = {"server"} | FLOORS | ({"wm"} if st == "x11" else set())
        kinds = {}
        for s in rec["samples"]:
            kinds.setdefault(s["kind"], []).append(s)
        check(set(kinds) == want, "%s: kinds %s, want %s" % (st, sorted(kinds), sorted(want)))
        for kind, samples in kinds.items():
            check(len(samples) == 2 and {s["round"] for s in samples} == {1, 2},
                  "%s %s: one sample per round: %r" % (st, kind, samples))
            for s in samples:
                g = sorted(s["groups_us"])
                check(len(g) == 10 and g[0] > 0 and g[0] <= s["trip_us"] <= g[-1],
                      "%s %s: 10 groups with the median among them: %r" % (st, kind, s))
                sw = s["switches_per_trip"]
                need = {"app"} | (roles if not kind.startswith("floor") else {"peer"})
                check(need <= set(sw) and s["switches_per_trip_all"] > 0,
                      "%s %s: switches per trip of %s: %r" % (st, kind, sorted(need), sw))
    with open(os.path.join(out, "summary.csv")) as f:
        rows = {(row["metric"], row.get("stack")) for row in csv.DictReader(f)}
    for m in ("roundtrip_server_us", "roundtrip_wm_us", "roundtrip_floor_unix_1cpu_us"):
        check(any(k == m for k, _ in rows), "summary.csv has %s" % m)
    with open(os.path.join(out, "report.md")) as f:
        md = f.read()
    check("roundtrip_server_us" in md, "the report shows the round trips")
    check("## Round trips (roundtrip)" in md and "| x11 | wm |" in md and "| wayland | server |"
          in md, "the report has the round-trip section with a row per stack and kind")
    if shutil.which("gnuplot"):
        with open(os.path.join(out, "plots", "roundtrip.dat")) as f:
            groups = [b for b in f.read().split("\n\n\n") if b.strip()]
        # wayland server, x11 server, x11 wm: 10 groups each.
        check(len(groups) == 3 and all(len(b.strip().splitlines()) == 10 for b in groups),
              "the round-trip figure has 10 groups for each stack and kind (%s)"
              % [len(b.strip().splitlines()) for b in groups])
        check(os.path.exists(os.path.join(out, "plots", "roundtrip.svg")) and
              "plots/roundtrip.svg" in md, "the report draws the round-trip figure")
    print("PASS")


def fault():
    """duet-compositor killed after the first kind of round trips: the
    experiment is recorded as failed because the stack died (not as round
    trips that went unanswered), with the server's log, and nothing of the
    run is left."""
    out, mark, _, _ = run_killed(["--quick", "--experiments", "roundtrip", "--stacks",
                                  "wayland", "--no-ipc"], "wayland:roundtrip:0")
    check_nothing_left(mark, out)
    print("PASS")


if __name__ == "__main__":
    fault() if sys.argv[1:] == ["fault"] else main()
