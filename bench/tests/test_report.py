#!/usr/bin/env python3
"""Tests of the bench's statistics, report, schema and exit status.

usage: test_report.py stats|arch|report
  stats:  the bootstrap and verdicts on synthetic data whose answer is
          known; the seeded stack order. No stack is started.
  arch:   the report's three-architecture section from synthetic results
          of the six X11, Xwayland and Wayland stacks: its table (a column
          per stack, the xwayland ratios with intervals) and the IPC calls
          per process per launch; an absent stack said in one line; no
          section without an Xwayland stack. No stack is started.
  report: one real `duet bench --quick` run (wayland, x11; launch, render;
          3 rounds so there are intervals) validated against
          bench/results.schema.json; its summary.csv has ratio rows with
          intervals, its report opens with the verdict table; `duet report
          DIR` rebuilds the report with no stack program reachable, `duet
          report A B` puts two runs side by side; a run whose server is
          killed exits 1 and still writes its report.
Environment: DUET_BUILD_DIR (the build), DUET_TOOL (tools/duet).
"""
import csv
import difflib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from duet_bench import machine, outcome, stats  # noqa: E402
from checks import check, fail  # noqa: E402

SCHEMA = os.path.join(os.path.dirname(HERE), "results.schema.json")


# ------------------------------------------------------------ stats
def rounds_of(rng, n_rounds, per_round, centre, spread, drift=None):
    """{round: [values]}: values around centre, each round shifted by its
    drift (the machine's load of that moment, shared by the pair)."""
    return {r + 1: [centre * (drift[r] if drift else 1) + rng.gauss(0, spread)
                    for _ in range(per_round)] for r in range(n_rounds)}


def test_patience():
    from duet_bench import procs
    old = os.environ.get("DUET_BENCH_PATIENCE")
    try:
        os.environ["DUET_BENCH_PATIENCE"] = "10"
        check(procs.patience(2.0) == 20.0, "DUET_BENCH_PATIENCE=10 waits ten times longer")
        from types import SimpleNamespace
        from duet_bench.experiment import app_argv
        ctx = SimpleNamespace(apps={"launch": "duet-launch", "render": "duet-render"},
                              opts=SimpleNamespace(engine="sw"))
        stack = SimpleNamespace(kind="wayland")
        argv = app_argv(ctx, stack, "launch", "--stay")
        check(argv[argv.index("--timeout-ms") + 1] == "200000",
              "... and the apps give up ten times later: %s" % argv)
        os.environ["DUET_BENCH_PATIENCE"] = "1"
        check("--timeout-ms" not in app_argv(ctx, stack, "launch"),
              "natively the apps keep their own time-outs")
        os.environ["DUET_BENCH_PATIENCE"] = "0.1"
        check(procs.patience(2.0) == 2.0, "... and never less than the native bound")
        os.environ["DUET_BENCH_PATIENCE"] = "lots"
        check(procs.patience(2.0) == 2.0, "... and a bad value is ignored")
    finally:
        if old is None:
            os.environ.pop("DUET_BENCH_PATIENCE", None)
        else:
            os.environ["DUET_BENCH_PATIENCE"] = old


def test_measured():
    """A record that failed in one round but kept another round's samples
    was measured; one that failed with none, or was skipped, was not."""
    res = {"experiments": {"launch": {
        "wayland": {"status": "ok", "samples": [{"ms": 1}]},
        "x11": {"status": "failed", "reason": "round 1: the stack died",
                "samples": [{"ms": 2}]},
        "weston": {"status": "failed", "reason": "did not start", "samples": []},
        "openbox": {"status": "skipped", "reason": "not installed", "samples": []}}}}
    check(outcome.measured(res) == 2, "measured counts the ok record and the failed one with "
          "samples, not the empty or skipped ones (%d)" % outcome.measured(res))


def test_settled():
    """An interrupt settles every record left "running", wherever it is
    (experiments and ipc), and touches no other."""
    res = {"experiments": {"launch": {"wayland": {"status": "ok", "samples": [{"ms": 1}]}},
                           "resize": {"wayland": {"status": "running", "samples": []}}},
           "ipc": {"x11": {"render": {"status": "running"}, "launch": {"status": "failed"}}}}
    outcome.settle_interrupted(res)
    got = sorted(r["status"] for r in outcome.records(res))
    check(got == ["failed", "interrupted", "interrupted", "ok"],
          "running records become interrupted, the others stay: %s" % got)


def test_versions():
    """A package's version is the native architecture's one, whole, also
    where a foreign architecture's package is installed beside it (the
    arm64 libraries of the cross build)."""
    if not shutil.which("dpkg-query"):
        print("skip: no dpkg-query")
        return
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                          text=True).stdout.strip()
    want = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libc6:" + arch],
                          capture_output=True, text=True).stdout.strip()
    got = machine._dpkg("libc6")
    check(want and got == want, "libc6's recorded version is %s's %r: %r" % (arch, want, got))


def test_stats():
    test_patience()
    test_measured()
    test_settled()
    test_versions()
    rng = random.Random(12345)
    drift = [1 + 0.2 * rng.random() for _ in range(8)]
    a = rounds_of(rng, 8, 3, 20.0, 0.5, drift)
    b = rounds_of(rng, 8, 3, 10.0, 0.5, drift)
    res = stats.paired_ratio(a, b, seed=1)
    check(res["ci_low"] is not None and res["ci_low"] <= 2.0 <= res["ci_high"],
          "clearly different data (true ratio 2): the interval [%.3f, %.3f] holds 2"
          % (res["ci_low"], res["ci_high"]))
    check(res["ci_low"] > 1, "... and excludes 1")
    check(stats.verdict(res, study_ratio=1.5) == "reproduced",
          "a study ratio on the same side of 1 is reproduced")
    check(stats.verdict(res, study_ratio=0.7) == "not reproduced",
          "a study ratio on the other side of 1 is not reproduced")
    check(stats.verdict(res) == "higher", "a pair without a study figure reads 'higher'")
    check(stats.paired_ratio(a, b, seed=1) == res, "the same seed gives the same interval")

    same_a = rounds_of(rng, 8, 3, 10.0, 1.0, drift)
    same_b = rounds_of(rng, 8, 3, 10.0, 1.0, drift)
    res = stats.paired_ratio(same_a, same_b, seed=2)
    check(res["ci_low"] <= 1 <= res["ci_high"],
          "identical distributions: the interval [%.3f, %.3f] includes 1"
          % (res["ci_low"], res["ci_high"]))
    check(stats.verdict(res, study_ratio=1.36) == "no difference", "... and reads no difference")

    # Pairing: a drift that moves both stacks together must not widen the
    # interval the way unpaired resampling would.
    big = [1 + 2.0 * rng.random() for _ in range(8)]
    pa = {r: [20.0 * big[r - 1]] for r in range(1, 9)}
    pb = {r: [10.0 * big[r - 1]] for r in range(1, 9)}
    res = stats.paired_ratio(pa, pb, seed=3)
    check(1.9 < res["ci_low"] <= res["ci_high"] < 2.1,
          "rounds are paired: a 3x drift shared by both gives [%.3f, %.3f] around 2"
          % (res["ci_low"], res["ci_high"]))

    one = stats.paired_ratio({1: [20.0, 21.0, 19.0]}, {1: [10.0, 11.0, 9.0]}, seed=4)
    check(one["ratio"] == 2.0 and one["ci_low"] is None and one["ci_high"] is None,
          "one round: the ratio (%s) and no interval" % one["ratio"])
    check(stats.verdict(one, study_ratio=1.5).startswith("no interval"),
          "one round: the verdict says there is no interval: %r"
          % stats.verdict(one, study_ratio=1.5))
    two = stats.paired_ratio({1: [2.0], 2: [2.0]}, {1: [1.0], 2: [1.0]}, seed=4)
    check(two["ci_low"] is None, "two rounds are too few for an interval too")
    check(stats.paired_ratio({1: [1.0], 3: [1.0]}, {2: [1.0]}, seed=5)["ratio"] is None,
          "no round in common: no ratio")

    c = stats.count_ratio(945, 55)
    check(stats.verdict(c, study_ratio=17.2, count=True) == "reproduced",
          "counts: 945 vs 55 reproduce a study ratio of 17")
    check(stats.verdict(stats.count_ratio(100, 95), study_ratio=17.2, count=True)
          == "no difference", "counts within 10% read no difference")
    check(stats.count_ratio(-0.5, 3.0)["ratio"] is None,
          "a per-frame count below zero gives no ratio")

    check(stats.cv([10.0, 10.0, 10.0]) == 0 and stats.cv([1.0]) is None
          and abs(stats.cv([9.0, 11.0]) - 0.1414) < 1e-3, "coefficient of variation")

    names = ["wayland", "x11", "weston", "openbox"]
    o1 = stats.stack_order(names, 6, 42)
    check(o1 == stats.stack_order(names, 6, 42), "the same seed gives the same stack order")
    check(all(sorted(o) == sorted(names) for o in o1), "every round runs every stack once")
    check(len({tuple(o) for o in o1}) > 1, "the order changes between rounds: %s" % o1)
    check(o1 != stats.stack_order(names, 6, 43), "another seed gives another order")


# ------------------------------------------------------------ three architectures
ARCH_LAUNCH_MS = {"wayland": 100.0, "weston": 120.0, "xwayland": 130.0,
                  "weston-xwayland": 160.0, "x11": 150.0, "openbox": 170.0}
ARCH_IPC = {  # ipc.STACK.launch.processes: study_style per role
    "wayland": {"server": 40, "app": 38},
    "weston": {"server": 50, "app": 45},
    "xwayland": {"server": 30, "xwayland": 70, "app": 20},
    "weston-xwayland": {"server": 35, "xwayland": 80, "app": 20},
    "x11": {"server": 90, "wm": 60, "app": 20},
    "openbox": {"server": 110, "wm": 45, "compositor": 25, "app": 20},
}


def arch_results(stacks, rounds=4):
    rng = random.Random(7)
    res = {"schema": 3, "seed": 3, "command": "duet bench (synthetic)",
           "options": {"rounds": rounds, "engine": "sw"}, "stacks": {},
           "experiments": {"launch": {}, "render": {}}, "ipc": {}}
    for st in stacks:
        res["stacks"][st] = {"status": "ok"}
        res["experiments"]["launch"][st] = {"status": "ok", "samples": [
            {"round": r + 1, "kind": "warm", "ms": ARCH_LAUNCH_MS[st] * (1 + 0.02 * rng.random())}
            for r in range(rounds) for _ in range(3)]}
        res["experiments"]["render"][st] = {"status": "ok", "samples": [
            {"round": r + 1, "score_fps": 1000.0 / ARCH_LAUNCH_MS[st]} for r in range(rounds)]}
        procs = {role: {"study_style": n, "ipc_unix": n} for role, n in ARCH_IPC[st].items()}
        res["ipc"][st] = {"launch": {"status": "ok", "processes": procs},
                          "render": {"status": "ok", "per_frame_study_style": {
                              role: n / 10.0 for role, n in ARCH_IPC[st].items()}}}
    return res


def arch_report(results):
    from duet_bench import report
    tmp = tempfile.mkdtemp(prefix="duet-arch-")
    try:
        report.write_all(results, tmp)
        with open(os.path.join(tmp, "report.md")) as f:
            md = f.read()
        with open(os.path.join(tmp, "report.html")) as f:
            page = f.read()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return md, page


def section_of(md):
    head = "## Three architectures: X11, Xwayland, native Wayland"
    if head not in md:
        return None
    return md.split(head, 1)[1].split("\n## ", 1)[0]


def table_of(sec):
    lines = [ln for ln in sec.splitlines() if ln.startswith("|")]
    cut = lambda ln: [c.strip() for c in ln.strip().strip("|").split("|")]  # noqa: E731
    return cut(lines[0]), {cut(ln)[0]: cut(ln) for ln in lines[2:]}


def test_arch():
    six = ["x11", "openbox", "xwayland", "weston-xwayland", "wayland", "weston"]
    md, page = arch_report(arch_results(six))
    sec = section_of(md)
    check(sec is not None, "six stacks: the report has the three-architecture section")
    check("Three architectures" in page, "... and report.html too")
    header, rows = table_of(sec)
    check(header == ["metric"] + six + ["xwayland/wayland", "xwayland/x11",
                                        "weston-xwayland/weston", "xwayland/weston-xwayland"],
          "one column per stack, then the four ratios: %s" % header)
    launch = rows.get("launch_ms (ms)")
    check(launch is not None, "a launch_ms row: %s" % sorted(rows))
    cols = dict(zip(header, launch))
    check(abs(float(cols["xwayland"]) - 130) < 4 and abs(float(cols["weston"]) - 120) < 4,
          "the medians per stack: %s" % launch)
    for pair, want in (("xwayland/wayland", 1.3), ("xwayland/x11", 130 / 150.),
                       ("weston-xwayland/weston", 160 / 120.),
                       ("xwayland/weston-xwayland", 130 / 160.)):
        cell = cols[pair]
        check("[" in cell and abs(float(cell.split()[0]) - want) < 0.05,
              "%s: the ratio of medians %.3g with its interval: %s" % (pair, want, cell))
    check("render_fps (fps)" in rows, "a render_fps row")
    ipc = dict(zip(header, rows.get("launch_ipc (calls)") or []))
    check(ipc.get("xwayland/wayland", "").startswith("0.75 ("),
          "IPC per launch: the server's count ratio with its verdict, no interval: %s" % ipc)
    for line in ("**X11**", "x11: per launch server (Xvfb) 90, wm (duet-xwm) 60, app 20; "
                 "window system 150",
                 "openbox: per launch server (Xvfb) 110, wm (openbox) 45, compositor "
                 "(xcompmgr) 25, app 20; window system 180",
                 "**Xwayland**", "xwayland: per launch server (duet-compositor) 30, xwayland "
                 "(Xwayland) 70, app 20; window system 100",
                 "weston-xwayland: per launch server (weston) 35, xwayland (Xwayland) 80, "
                 "app 20; window system 115",
                 "**native Wayland**", "wayland: per launch server (duet-compositor) 40, app "
                 "38; window system 40", "per frame server (duet-compositor) 4, app 3.8"):
        check(line in sec, "the IPC lines say: %s" % line)
    absent = [ln for ln in sec.splitlines() if "Absent" in ln]
    named = sorted(part.split(":")[0].strip() for part in
                   absent[0].split("): ", 1)[-1].split("; ")) if len(absent) == 1 else None
    check(named == ["i3", "mutter", "mutter-x11", "mutter-xwayland", "sway", "sway-xwayland"],
          "with the six, only the peers' stacks are absent: %s" % absent)

    md, _ = arch_report(arch_results(["xwayland", "wayland", "x11"]))
    sec = section_of(md)
    check(sec is not None, "xwayland, wayland and x11: the section")
    header, rows = table_of(sec)
    check(header == ["metric", "x11", "xwayland", "wayland", "xwayland/wayland",
                     "xwayland/x11"], "columns and ratios of the present stacks only: %s"
          % header)
    for st in ("openbox", "weston-xwayland", "weston"):
        check("%s: not in this run" % st in sec, "%s absent, said in the line" % st)
    check(sec.count("Absent") == 1, "... one line")

    res = arch_results(["xwayland", "wayland"])
    res["stacks"]["weston-xwayland"] = {"status": "skipped", "reason": "weston has no xwayland.so"}
    sec = section_of(arch_report(res)[0])
    check("weston-xwayland: skipped (weston has no xwayland.so)" in sec,
          "a skipped stack is absent with its reason")
    check("**X11**: no stack of this architecture in this run." in sec,
          "an architecture with no stack says so")

    md, _ = arch_report(arch_results(["x11", "wayland", "weston"]))
    check(section_of(md) is None, "no Xwayland stack: no section")
    for name in ("launch_ms", "launch_ipc"):
        check(name in md, "... and the rest of the report as before (%s)" % name)


# ------------------------------------------------------------ pairs, painted rate
PAIR_LAUNCH_MS = {"mutter": 80.0, "mutter-x11": 120.0, "sway": 40.0, "i3": 100.0}
# Median painted Hz of each stack's render runs (all at 60 Hz, the client
# drawing faster): i3 paints under 90% of it, the others do not.
PAIR_PAINTED_HZ = {"mutter": 59.0, "mutter-x11": 58.0, "sway": 57.0, "i3": 30.0}


def pairs_results(stacks, rounds=4):
    res = arch_results([], rounds)
    for st in stacks:
        res["stacks"][st] = {"status": "ok"}
        res["experiments"]["launch"][st] = {"status": "ok", "samples": [
            {"round": r + 1, "kind": "warm", "ms": PAIR_LAUNCH_MS[st] * (1 + 0.01 * (r % 2))}
            for r in range(rounds) for _ in range(3)]}
        hz = PAIR_PAINTED_HZ[st]
        res["experiments"]["render"][st] = {
            "status": "ok", "engines": ["sw"], "headline_engine": "sw", "refreshes": [0],
            "headline_refresh": 0, "samples": [
                {"round": r + 1, "engine": "sw", "refresh_hz": 0,
                 "score_fps": 1000.0 / PAIR_LAUNCH_MS[st],
                 "painted": {"painted_frames": int(hz * 2), "painted_hz": hz,
                             "painted_source": "the compositor's own log",
                             "nominal_hz": 60, "expected_hz": 60,
                             "under_rate": hz < 54, "ws_cpu_ms_per_painted_frame": 1.0}}
                for r in range(rounds)]}
    return res


def test_pairs():
    four = ["mutter", "mutter-x11", "sway", "i3"]
    md, page = arch_report(pairs_results(four))
    head = "## Pairs: the same software on X11 and on Wayland"
    check(head in md and "Pairs: the same software" in page, "the report has the pairs section")
    sec = md.split(head, 1)[1].split("\n## ", 1)[0]
    header, rows = table_of(sec)
    check(header == ["claim", "study X/W (U3)", "mutter-x11/mutter", "i3/sway"],
          "a column per pair that ran: %s" % header)
    launch = dict(zip(header, rows.get("launch: fork -> composited") or []))
    for pair, want in (("mutter-x11/mutter", 1.5), ("i3/sway", 2.5)):
        cell = launch.get(pair, "")
        check("[" in cell and abs(float(cell.split()[0]) - want) < 0.05,
              "%s: the launch ratio %.3g with its interval: %s" % (pair, want, cell))
    fps = dict(zip(header, next((r for k, r in rows.items() if k.startswith("render fps")),
                                [])))
    check("painted under rate: i3" in fps.get("i3/sway", ""),
          "i3's render figure is marked: it painted 30 of 60 Hz: %s" % fps)
    check("painted under rate" not in fps.get("mutter-x11/mutter", "x"),
          "mutter's is not: %s" % fps)
    check("x11/wayland: x11 not in this run" in sec, "the absent pairs are named")
    check(re.search(r"\*\*mutter-x11/mutter\*\*: launch 12\d\.?\d* vs 80\.?\d* ms \(1\.5x\); "
                    r"IPC calls per launch not counted", sec) is not None,
          "each pair's timing beside its counts: %s" % sec[-700:])
    painted = md.split("### Painted rate (render)", 1)
    check(len(painted) == 2, "the render section shows the painted rate")
    lines = [ln for ln in painted[1].split("\n## ", 1)[0].splitlines()
             if ln.startswith("| render |")]
    flags = {ln.split("|")[2].strip(): ln for ln in lines}
    check("UNDER RATE in 4 of 4" in flags.get("i3", "") and
          all("| ok |" in flags.get(st, "") for st in ("mutter", "mutter-x11", "sway")),
          "the painted table flags i3 alone: %s" % lines)
    check("**Painted under rate:** i3 (sw engine, refresh 0: 30 of 60 Hz)." in md,
          "... and names it under the table")
    md, _ = arch_report(pairs_results(["mutter", "sway"]))
    check(head not in md, "no pair whose both stacks ran: no section")


# ------------------------------------------------------------ report (real run)
def bench(out, args, extra_env=None, timeout=400):
    env = dict(os.environ, **(extra_env or {}))
    r = subprocess.run([sys.executable, os.environ["DUET_TOOL"], "bench", "--out", out] + args,
                       env=env, capture_output=True, text=True, timeout=timeout)
    # All of it when the run failed: a failure's reason may carry a hung
    # server's frames, which a CI log is the only record of.
    keep = None if r.returncode else 2500
    print(r.stdout[-keep:] if keep else r.stdout)
    print(r.stderr[-keep:] if keep else r.stderr)
    return r


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def no_stack_env(tmp):
    """PATH with python3 and gnuplot only, and a build dir with nothing in
    it: `duet report` must not need a stack program."""
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    for prog in ("gnuplot",):
        path = shutil.which(prog)
        if path:
            os.symlink(path, os.path.join(bindir, prog))
    empty = os.path.join(tmp, "empty-build")
    os.makedirs(empty)
    return dict(os.environ, PATH=bindir, DUET_BUILD_DIR=empty)


def test_report():
    import jsonschema  # Debian's python3-jsonschema; the bench itself stays stdlib-only
    tmp = tempfile.mkdtemp(prefix="duet-report-test-")
    a = os.path.join(tmp, "a")
    r = bench(a, ["--quick", "--stacks", "wayland,x11", "--experiments", "launch,render",
                  "--rounds", "3", "--reps", "3", "--seed", "7"])
    check(r.returncode == 0, "duet bench --quick exits 0 (status %d)" % r.returncode)
    with open(os.path.join(a, "results.json")) as f:
        res = json.load(f)
    with open(SCHEMA) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(res))
    check(not errors, "results.json validates against bench/results.schema.json%s"
          % "".join("\n  %s: %s" % (list(e.path), e.message[:200]) for e in errors[:10]))
    broken = dict(res)
    del broken["seed"]
    broken["experiments"] = {"launch": {"wayland": {"status": "failed", "samples": []}}}
    check(len(list(jsonschema.Draft202012Validator(schema).iter_errors(broken))) >= 2,
          "the schema refuses a result without its seed and a failure without a reason")

    check(res["schema"] == 2 and res["seed"] == 7, "schema 2, the seed recorded")
    check(res["round_orders"] == stats.stack_order(["wayland", "x11"], 3, 7),
          "the rounds ran in the seeded order: %s" % res["round_orders"])
    samples = [s for e in res["experiments"].values() for rec in e.values()
               for s in rec["samples"]]
    check(samples and all(len(s["loadavg"]) == 3 and "steal_pct" in s for s in samples),
          "every sample has its load average and steal (%d samples)" % len(samples))
    check(res["machine"]["cpufreq"]["status"] in ("ok", "unavailable")
          and "emulation" in res["machine"], "the machine record has cpufreq and emulation")
    want = {"1": "on", "0": "off"}.get(
        (open("/proc/sys/kernel/sched_autogroup_enabled").read().strip()
         if os.path.exists("/proc/sys/kernel/sched_autogroup_enabled") else ""), "unavailable")
    check(res["machine"].get("sched_autogroup") == want,
          "the machine record says autogroup scheduling is %r: %r"
          % (want, res["machine"].get("sched_autogroup")))

    rows = read_csv(os.path.join(a, "summary.csv"))
    for col in ("ratio", "ci_low", "ci_high", "verdict"):
        check(col in rows[0], "summary.csv has a %s column" % col)
    metrics_with_both = {row["metric"] for row in rows if row["row"] == "stack"
                         and row["stack"] == "x11" and row["n"] not in ("", "0")} & \
        {row["metric"] for row in rows if row["row"] == "stack" and row["stack"] == "wayland"
         and row["n"] not in ("", "0")}
    ratio_rows = {row["metric"]: row for row in rows if row["row"] == "ratio"
                  and row["stack"] == "x11/wayland"}
    missing = sorted(m for m in metrics_with_both if m not in ratio_rows
                     and not m.startswith("resize_ms_"))
    check(not missing, "every metric measured on both stacks has an x11/wayland ratio row "
          "(missing: %s)" % missing)
    la = ratio_rows.get("launch_ms")
    check(la and la["ci_low"] and la["ci_high"]
          and float(la["ci_low"]) <= float(la["ratio"]) <= float(la["ci_high"]),
          "launch_ms: ratio %s within its interval [%s, %s] over 3 rounds"
          % (la and la["ratio"], la and la["ci_low"], la and la["ci_high"]))
    check(la["verdict"] in ("reproduced", "not reproduced", "no difference"),
          "launch_ms has a verdict: %s" % la["verdict"])

    with open(os.path.join(a, "report.md")) as f:
        md = f.read()
    first_h2 = [line for line in md.splitlines() if line.startswith("## ")][0]
    check(first_h2 == "## Verdict on the study's claims", "the report opens with the verdict "
          "table (%r)" % first_h2)
    check("| launch: fork -> composited |" in md, "the verdict table has the launch claim")
    with open(os.path.join(a, "report.html")) as f:
        page = f.read()
    check("<svg" in page and "ratio of medians" in page, "report.html has the ratio plot")
    launches = [s for rec in res["experiments"]["launch"].values() for s in rec["samples"]]
    check(all(s.get("cpu_ms", {}).get("server", 0) > 0 and s["cpu_ms"].get("app", 0) > 0
              for s in launches), "every launch sample has cpu_ms, server and app > 0")
    boots = {st: rec.get("bootchart") or {} for st, rec in res["experiments"]["launch"].items()}
    check(all(b.get("status") == "ok" and b.get("round") == 1 and b.get("processes", {}).get(
        "app") for b in boots.values()), "one sampled bootchart launch per stack, in round 1")
    check(all("%s: which process ran when" % st in page for st in boots)
          and "| window system ms | read at ms |" in md,
          "the report has a bootchart per stack and the launch CPU table")

    # Rebuilt offline from results.json alone, with no stack program reachable.
    saved = {n: open(os.path.join(a, n)).read() for n in ("report.md", "summary.csv")}
    for n in ("report.md", "report.html", "summary.csv"):
        os.unlink(os.path.join(a, n))
    shutil.rmtree(os.path.join(a, "plots"))
    env = no_stack_env(tmp)
    rr = subprocess.run([sys.executable, os.environ["DUET_TOOL"], "report", a], env=env,
                        capture_output=True, text=True, timeout=120)
    print(rr.stdout[-1500:], rr.stderr[-1500:])
    check(rr.returncode == 0, "duet report DIR exits 0 with no stack program on PATH")
    for n in ("report.md", "report.html", "summary.csv"):
        check(os.path.getsize(os.path.join(a, n)) > 0, "duet report DIR rewrote " + n)
    for n, text in saved.items():
        with open(os.path.join(a, n)) as f:
            new = f.read()
        if new != text:
            print("".join(list(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                    n, n + " rebuilt"))[:40]))
        check(new == text, "the rebuilt %s is the bench's own, byte for byte" % n)

    # Side by side: a second result directory from another "machine".
    b = os.path.join(tmp, "b")
    os.makedirs(b)
    other = json.loads(json.dumps(res))
    other["machine"]["cpu_model"] = "Other Board CPU"
    other["governor"] = "performance"
    other["machine"]["emulation"] = "user-mode emulator: /usr/libexec/qemu-binfmt/aarch64"
    with open(os.path.join(b, "results.json"), "w") as f:
        json.dump(other, f)
    cmp_dir = os.path.join(tmp, "cmp")
    rr = subprocess.run([sys.executable, os.environ["DUET_TOOL"], "report", a, b, "--out",
                         cmp_dir], env=env, capture_output=True, text=True, timeout=120)
    print(rr.stdout[-1500:], rr.stderr[-1500:])
    check(rr.returncode == 0, "duet report A B exits 0")
    with open(os.path.join(cmp_dir, "compare.md")) as f:
        cmp_md = f.read()
    check(res["machine"]["cpu_model"] in cmp_md and "Other Board CPU" in cmp_md
          and "performance" in cmp_md, "compare.md shows both machines and governors")
    check("ran under emulation" in cmp_md and "figures under emulation are not timings"
          in cmp_md, "compare.md warns that run b was emulated")
    rr = subprocess.run([sys.executable, os.environ["DUET_TOOL"], "report", b], env=env,
                        capture_output=True, text=True, timeout=120)
    with open(os.path.join(b, "report.md")) as f:
        head = f.read()[:600]
    check(rr.returncode == 0 and "figures under emulation are not timings" in head,
          "an emulated run's report says so in its header")
    header = [line for line in cmp_md.splitlines() if line.startswith("|  |")][0]
    check(header.count("|") == 4, "one column per run: %s" % header)
    check(os.path.getsize(os.path.join(cmp_dir, "compare.html")) > 0
          and len(read_csv(os.path.join(cmp_dir, "compare.csv"))) == 2 * len(rows),
          "compare.html written; compare.csv holds both runs' rows")
    bad = subprocess.run([sys.executable, os.environ["DUET_TOOL"], "report",
                          os.path.join(tmp, "nothing-here")], env=env, capture_output=True,
                         text=True, timeout=60)
    check(bad.returncode == 1 and "nothing-here" in bad.stderr,
          "a directory without results.json is an error (status %d)" % bad.returncode)

    # An experiment that fails makes the bench exit 1, report written. The
    # server dies as soon as the first launch's app runs: an sw launch is
    # composited in ~10 ms here, before any later kill could come.
    c = os.path.join(tmp, "c")
    r = bench(c, ["--stacks", "wayland", "--experiments", "launch", "--reps", "1",
                  "--no-ipc"], {"DUET_BENCH_TEST_KILL_SERVER": "wayland:launch:0"},
              timeout=200)
    check(r.returncode == 1, "a run whose server was killed exits 1 (status %d)"
          % r.returncode)
    check(os.path.getsize(os.path.join(c, "report.html")) > 0, "... and writes its report")
    shutil.rmtree(tmp, ignore_errors=True)  # kept only when a check failed


if __name__ == "__main__":
    {"stats": test_stats, "arch": test_arch, "pairs": test_pairs,
     "report": test_report}[sys.argv[1]]()
    print("PASS")
