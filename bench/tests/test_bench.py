#!/usr/bin/env python3
"""End-to-end tests of `duet bench`.

usage: test_bench.py quick|fault
  quick: `duet bench --quick` on every stack: all outputs written, every
         experiment x stack has samples or a recorded skip/failure reason.
  fault: the wayland server is killed 30 ms into the launch experiment: the
         failure is recorded with logs, the next experiment still runs, and
         no process of the run is left behind.
  hung:  the same with the wayland server stopped (SIGSTOP), alive but
         answering nothing: the launch fails, and the next experiment runs
         on a fresh stack, not on the hung one.
  interrupt: SIGINT (Ctrl-C) once the first experiment has finished: exit
         status 130, valid results marked interrupted that keep what
         finished, a report, and no process left behind.
  no-report: `--no-report` as a board farm runs it: one JSON line on stdout
         with the result and each experiment's, results.json's outcome
         (schema-valid) with pass/fail per experiment and stack, no report;
         exit 1 with the failed experiment x stack named when a server is
         killed, and when nothing could be measured (the only stack
         missing); DUET_EMULATION marks the run emulated.
Environment: DUET_BUILD_DIR (the build), DUET_TOOL (tools/duet).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import check, check_schema, fail, marked_processes  # noqa: E402
from duet_launch import hang  # noqa: E402


def run_bench(args, extra_env, timeout):
    mark = "test-%d-%s" % (os.getpid(), os.urandom(4).hex())
    out = tempfile.mkdtemp(prefix="duet-bench-test-")
    env = dict(os.environ, DUET_BENCH_RUN=mark, **extra_env)
    t0 = time.monotonic()
    try:
        r = hang.run_guarded([sys.executable, os.environ["DUET_TOOL"], "bench", "--out", out]
                             + args, timeout, env=env, stacks_signal=signal.SIGUSR1)
    except hang.Hung as e:
        fail(str(e))
    took = time.monotonic() - t0
    print(r.stdout[-3000:])
    print(r.stderr[-3000:])
    time.sleep(0.5)
    return r, out, mark, took


def load(out):
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)


def run_valid(args, what, timeout):
    """A bench run that must exit 0 (what: the run as the check names it)
    and write a results.json that keeps to the schema; returns that,
    the run's out and its mark."""
    r, out, mark, _ = run_bench(args, {}, timeout)
    check(r.returncode == 0, "%s exits 0 (%d)" % (what, r.returncode))
    res = load(out)
    check_schema(res)
    return res, out, mark


def run_killed(args, kill, timeout=300):
    """A bench run whose stack's server is killed (kill: the
    DUET_BENCH_TEST_KILL_SERVER "STACK:EXPERIMENT:MS"), checked for what
    every such run owes: exit 1, and that experiment recorded as failed
    because the stack died, with the server's log. Returns out, mark and
    results.json, with the failed record, for the caller's own checks."""
    stack, experiment = kill.split(":")[:2]
    r, out, mark, took = run_bench(args, {"DUET_BENCH_TEST_KILL_SERVER": kill}, timeout)
    check(r.returncode == 1, "the bench goes on, and exits 1 since an experiment failed "
          "(status %d)" % r.returncode)
    res = load(out)
    rec = res["experiments"][experiment][stack]
    check(rec["status"] == "failed" and "died" in rec.get("reason", ""),
          "%s recorded as failed because the stack died: %s" % (experiment, rec.get("reason")))
    check("server" in rec.get("logs", {}), "the failure carries the server's log")
    return out, mark, res, rec


def check_nothing_left(mark, out):
    """No process of the run is left; its output goes (kept when a check failed)."""
    left = marked_processes(mark)
    check(not left, "no process of the run is left: %s" % left)
    shutil.rmtree(out, ignore_errors=True)


def test_quick():
    r, out, mark, took = run_bench(["--quick"], {}, timeout=600)
    check(r.returncode == 0, "duet bench --quick exits 0 (status %d)" % r.returncode)
    # How long it took is the machine's (issue 5's "under 3 minutes on 2
    # cores" is a figure, not a pass criterion: results.json has "started"
    # and "finished"); meson's timeout is the hang guard.
    print("info: --quick took %.0f s" % took)
    res = load(out)
    check(res.get("started") and res.get("finished") and res["finished"] >= res["started"],
          "results.json records when the run started and finished (%s, %s)"
          % (res.get("started"), res.get("finished")))
    for name in ("results.json", "summary.csv", "report.md", "report.html"):
        check(os.path.getsize(os.path.join(out, name)) > 0, name + " written")
    with open(os.path.join(out, "report.html")) as f:
        page = f.read()
    check("<svg" in page and "study, U3" in page, "report.html has inline SVG plots with the "
          "study's numbers")
    for key in ("cpu_model", "cores", "kernel"):
        check(res["machine"].get(key), "machine records " + key)
    check(res["governor"], "governor recorded: %s" % res["governor"])
    check(res["versions"].get("mesa") and res["versions"].get("libwayland"), "versions recorded")
    # thirdparty is in the default set: every stack ran it or says why not.
    for exp in ("launch", "render", "cpu", "resize", "thirdparty"):
        for stack in ("wayland", "x11", "weston", "openbox"):
            rec = res["experiments"][exp].get(stack)
            check(rec is not None, "%s x %s recorded" % (exp, stack))
            if rec["status"] == "ok":
                check(len(rec["samples"]) > 0, "%s x %s has %d samples"
                      % (exp, stack, len(rec["samples"])))
            else:
                check(rec["status"] in ("failed", "skipped") and rec.get("reason"),
                      "%s x %s %s with a reason: %s" % (exp, stack, rec["status"],
                                                      rec.get("reason", "")[:100]))
    for stack, rec in res["experiments"]["cpu"].items():
        for smp in rec["samples"]:
            check(0 < smp["window_system_mean"] <= smp["window_system_peak"],
                  "cpu x %s: window-system mean %s within (0, peak %s]"
                  % (stack, smp["window_system_mean"], smp["window_system_peak"]))
    if res["stacks"]["x11"]["status"] == "ok":
        check((res["stacks"]["x11"].get("content_path") or "").startswith("duet-xwm: content "),
              "x11: duet-xwm's content and output paths recorded: %s"
              % res["stacks"]["x11"].get("content_path"))
    # The straced launch's X server runs without the smart scheduler's
    # SIGALRM (-dumbSched), whose every signal stops a traced server.
    for stack in ("x11", "openbox"):
        sl = res["ipc"].get(stack, {}).get("strace_launch", {})
        if "processes" in sl:
            signals = sl["processes"].get("server", {}).get("signals", {})
            check(signals.get("SIGALRM", 0) == 0,
                  "%s: the straced X server got %d SIGALRM" % (stack, signals.get("SIGALRM", 0)))
    # Tracing is on by default (issue 46): each stack that ran traced its
    # launch, resize and render interval, or says why not; bench-trace
    # checks what the files hold.
    for stack, srec in res["stacks"].items():
        for op in ("launch", "resize", "frame") if srec["status"] == "ok" else ():
            rec = res["ipc"].get(stack, {}).get("trace_" + op, {})
            check((rec.get("status") == "ok" and os.path.getsize(os.path.join(out, rec["file"]))
                   and os.path.isdir(os.path.join(out, rec["raw"]))) or
                  (rec.get("status") == "skipped" and rec.get("reason")),
                  "%s %s traced (%s)" % (stack, op, rec.get("file") or rec.get("reason")))
    if res["stacks"]["wayland"]["status"] == "ok":
        la = res["ipc"]["wayland"]["launch"]
        check(la.get("processes", {}).get("server", {}).get("ipc_unix", 0) > 0,
              "wayland launch: the in-process counter saw server IPC")
        check(la.get("protocol", {}).get("requests", 0) > 0,
              "wayland launch: protocol requests counted")
    check_nothing_left(mark, out)


def test_fault():
    out, mark, res, _ = run_killed(
        # gl: its EGL start-up makes the launch last well past the 30 ms
        # kill (an sw launch can be composited before it comes).
        ["--stacks", "wayland", "--experiments", "launch,resize", "--reps", "2", "--no-ipc",
         "--engine", "gl"], "wayland:launch:30")
    rz = res["experiments"]["resize"]["wayland"]
    check(rz["status"] == "ok" and len(rz["samples"]) == 2 * 2 * 8,
          "resize still ran on a fresh stack (%s, %d samples)"
          % (rz["status"], len(rz["samples"])))
    check_nothing_left(mark, out)


def test_hung():
    r, out, mark, took = run_bench(
        ["--stacks", "wayland", "--experiments", "launch,resize", "--reps", "2", "--no-ipc",
         "--engine", "gl"], {"DUET_BENCH_TEST_KILL_SERVER": "wayland:launch:30:server:stop"},
        timeout=300)
    check(r.returncode == 1, "the bench goes on, and exits 1 since the launch failed (status %d)"
          % r.returncode)
    res = load(out)
    la = res["experiments"]["launch"]["wayland"]
    # The app gives up first (duet-launch waits 20 s for its window to
    # map) or the bench's timeout does: either way not a dead stack.
    check(la["status"] == "failed" and "died" not in la.get("reason", ""),
          "the launch on the stopped server failed, its stack alive: %s" % la.get("reason"))
    rz = res["experiments"]["resize"]["wayland"]
    check(rz["status"] == "ok" and len(rz["samples"]) == 2 * 2 * 8,
          "resize ran on a fresh stack, not the hung one (%s, %d samples: %s)"
          % (rz["status"], len(rz.get("samples", [])), rz.get("reason")))
    check_nothing_left(mark, out)


def test_interrupt():
    mark = "test-%d-%s" % (os.getpid(), os.urandom(4).hex())
    out = tempfile.mkdtemp(prefix="duet-bench-test-")
    env = dict(os.environ, DUET_BENCH_RUN=mark)
    p = subprocess.Popen([sys.executable, os.environ["DUET_TOOL"], "bench", "--out", out,
                          "--stacks", "wayland,x11", "--experiments", "launch,render,resize",
                          "--no-ipc"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    first_done = False
    while time.monotonic() < deadline and p.poll() is None and not first_done:
        time.sleep(0.2)
        try:
            first_done = load(out)["experiments"]["launch"]["wayland"]["status"] == "ok"
        except (OSError, ValueError, KeyError):
            pass
    check(first_done, "the first experiment finished before the interrupt")
    # Asked for its stacks (a hang guard's SIGUSR1), it writes them and
    # goes on; the SIGINT after that still ends it as interrupted.
    p.send_signal(signal.SIGUSR1)
    time.sleep(1)
    p.send_signal(2)
    output, _ = p.communicate(timeout=60)
    print(output[-3000:])
    time.sleep(0.5)
    check(p.returncode == 130, "exit status 130 after SIGUSR1, then SIGINT (got %d)"
          % p.returncode)
    check(re.search(r"^(Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):",
                    output, re.M),
          "SIGUSR1 wrote the bench's Python stacks")
    res = load(out)
    check(res["interrupted"] is True, "results.json says interrupted")
    check(res["experiments"]["launch"]["wayland"]["status"] == "ok"
          and res["experiments"]["launch"]["wayland"]["samples"],
          "what finished before the interrupt is kept")
    statuses = [rec["status"] for e in res["experiments"].values() for rec in e.values()]
    check("running" not in statuses, "no experiment is left 'running': %s" % statuses)
    check(os.path.getsize(os.path.join(out, "report.html")) > 0, "a report is written")
    check_nothing_left(mark, out)


def test_rounds():
    r, out, mark, took = run_bench(["--quick", "--rounds", "2", "--reps", "3", "--stacks",
                                    "wayland,x11", "--experiments", "launch,resize",
                                    "--no-ipc"], {}, timeout=300)
    check(r.returncode == 0, "the bench exits 0 (status %d)" % r.returncode)
    res = load(out)
    check(res["options"]["rounds"] == 2, "the rounds are recorded")
    for stack in ("wayland", "x11"):
        la = res["experiments"]["launch"][stack]
        # Run 0 is each fresh stack's cold launch (the warm series' warm-up).
        warm = [(s["run"], s["round"]) for s in la["samples"] if s["run"] > 0]
        check(la["status"] == "ok" and warm == [(1, 1), (2, 2), (3, 2)],
              "%s: 3 launches spread over 2 rounds as runs 1 | 2 3: %s" % (stack, warm))
        rz = res["experiments"]["resize"][stack]
        check(rz["status"] == "ok" and len(rz["samples"]) == 3 * 2 * 8
              and sorted({s["run"] for s in rz["samples"]}) == [1, 2, 3],
              "%s: resize runs 1..3 over the rounds, 8 sizes x 2 modes each (%d samples)"
              % (stack, len(rz["samples"])))
    # The stacks take turns, in the order drawn for each round: launch 1
    # in round 1, launches 2 and 3 in round 2.
    rounds = res["round_orders"]
    want = [(st, "1") for st in rounds[0]] + [(st, n) for st in rounds[1] for n in "23"]
    order = re.findall(r"launch +(wayland|x11) +run (\d)/3", r.stderr)
    check(sorted(rounds[0]) == sorted(rounds[1]) == ["wayland", "x11"] and order == want,
          "the launches ran round by round in the recorded order %s: %s" % (rounds, order))
    with open(os.path.join(out, "report.md")) as f:
        check("2 round(s)" in f.read(), "the report names the rounds")
    shutil.rmtree(out, ignore_errors=True)
    # --rounds without --reps: every round runs each experiment (here
    # render, 1 run with --quick), so all of them pair.
    r, out, mark2, took = run_bench(["--quick", "--rounds", "3", "--stacks", "wayland",
                                     "--experiments", "render", "--render-engines", "sw",
                                     "--no-ipc"], {}, timeout=300)
    check(r.returncode == 0, "the bench exits 0 (status %d)" % r.returncode)
    got = [s["round"] for s in load(out)["experiments"]["render"]["wayland"]["samples"]]
    check(got == [1, 2, 3], "--rounds 3 alone: one render run in each round (%s)" % got)
    shutil.rmtree(out, ignore_errors=True)
    # With --reps below the rounds the user is told which rounds pair.
    r, out, mark3, took = run_bench(["--quick", "--rounds", "2", "--reps", "1", "--stacks",
                                     "wayland", "--experiments", "render", "--render-engines",
                                     "sw", "--no-ipc"], {}, timeout=300)
    got = [s["round"] for s in load(out)["experiments"]["render"]["wayland"]["samples"]]
    check(r.returncode == 0 and got == [2] and
          "--reps 1 < --rounds 2: render run in 1 rounds only" in r.stderr,
          "--reps 1 --rounds 2: one run, in round 2, and a line saying so (status %d, rounds "
          "%s): %s" % (r.returncode, got, r.stderr[-300:]))
    bad = subprocess.run([sys.executable, os.environ["DUET_TOOL"], "bench", "--rounds", "0"],
                         capture_output=True, text=True, timeout=60)
    check(bad.returncode == 2 and "rounds must be" in bad.stderr,
          "--rounds 0 is refused (status %d)" % bad.returncode)
    check(not any(marked_processes(m) for m in (mark, mark2, mark3)),
          "no process of the runs is left")
    shutil.rmtree(out, ignore_errors=True)


# A 60 Hz grid's period, in s (render/frame-sched.c: 10^12 / 60000 mHz, in
# whole ns).
GRID_PERIOD_S = (10 ** 12 // 60000) / 1e9
# Painted frames an interval of the output's trace can hold beyond its
# whole periods, whatever the load: duet's servers paint at most one frame
# per tick, their painted ticks are at least a period apart (a grid
# restarted after idle starts a period after the last painted tick, at
# least), a frame's trace line is written at most a period before its tick
# (its repaint starts a repaint window ahead), and only a frame that missed
# its tick can be written after it, presented on the first tick after it
# finished, which no later frame may take: so at most the first frame in
# the interval has its tick before the interval, and at most the ticks of a
# period past the interval's end are in it. 1 + 2 = 3.
GRID_EDGE_FRAMES = 3


def check_painted(stack, s):
    """A render sample's painted frames, by count (no rate: how fast a
    stack paints under load is the bench's figure, render_painted_hz and
    render_painted_hz_r0 in summary.csv): from the server's own trace, some,
    at most one per client frame drawn in the interval (a painted frame
    shows a commit that came since the one before, or the window leaving),
    at 60 Hz at most one per tick of the interval, and the CPU per painted
    frame is the sample's window-system CPU spread over them."""
    p, cpu = s.get("painted"), s.get("cpu_per_frame")
    what = "%s at %s Hz, engine %s" % (stack, s["refresh_hz"], s["engine"])
    check(p and cpu and isinstance(p.get("painted_frames"), int) and p["painted_frames"] > 0,
          "%s: the sample has painted frames (%s)" % (what, p))
    # The interval runs from the harness's sight of the end of scene n0 to
    # its last sight of a scene's end (n1), both seen up to a poll late
    # (later under load): the frames counted are those of scenes n0+1..n1.
    m = re.search(r"end of scene (\d+) -> end of scene (\d+)", cpu.get("interval", ""))
    check(m is not None, "%s: the CPU interval names its scenes (%r)"
          % (what, cpu.get("interval")))
    n0, n1 = int(m.group(1)), int(m.group(2))
    drawn = [sc["frames"] for sc in s["scenes"].values()]  # in the order drawn
    check(cpu["frames"] == sum(drawn[n0:n1]),
          "%s: the interval's %d client frames are those of scenes %d..%d (%s)"
          % (what, cpu["frames"], n0 + 1, n1, drawn))
    # What the interval can have painted, however late the harness saw the
    # scenes: every frame the app drew after scene n0 (each scene's untimed
    # first frame included), two commits from before (one in flight, one
    # pending) and two frames for the window leaving when the app exits.
    most = sum(n + 1 for n in drawn[n0:]) + 4
    check(p["painted_frames"] <= most,
          "%s: %d frames painted for the %d the app drew from scene %d on (%d client "
          "frames in the interval)" % (what, p["painted_frames"], most - 4, n0 + 1,
                                       cpu["frames"]))
    if s["refresh_hz"] == 60:
        wall_s = p["painted_frames"] / p["painted_hz"]  # the interval, from the sample
        grid = int(wall_s / GRID_PERIOD_S) + GRID_EDGE_FRAMES
        check(p["painted_frames"] <= grid,
              "%s: %d frames painted in %.3f s of a 60 Hz grid (at most %d)"
              % (what, p["painted_frames"], wall_s, grid))
    want = cpu["ms_per_frame"]["window_system"] * cpu["frames"] / p["painted_frames"]
    check(abs(p["ws_cpu_ms_per_painted_frame"] - want) <= 0.01 * want + 1e-3,
          "%s: window-system CPU per painted frame %.4f, want %.4f" % (
              what, p["ws_cpu_ms_per_painted_frame"], want))


def test_render_refresh():
    for arg in ("-5", "0,0", "60,x"):
        bad = subprocess.run([sys.executable, os.environ["DUET_TOOL"], "bench",
                              "--render-refresh", arg], capture_output=True, text=True,
                             timeout=60)
        check(bad.returncode == 2 and "refresh must be" in bad.stderr,
              "--render-refresh %s is refused with a usage error (status %d: %s)"
              % (arg, bad.returncode, bad.stderr.strip()[-120:]))
    # Two rates in one run: the headline first, the other beside it.
    r, out, mark, took = run_bench(["--quick", "--stacks", "wayland,x11", "--experiments",
                                    "render", "--render-refresh", "60,0", "--no-ipc"],
                                   {}, timeout=400)
    check(r.returncode == 0, "the bench exits 0 (status %d)" % r.returncode)
    res = load(out)
    check(res["options"]["render_refresh"] == 60 and res["options"]["render_refreshes"] == [60, 0],
          "the options are recorded: headline 60, then 0 (%s)" % res["options"]["render_refreshes"])
    engines = res["options"]["render_engines"]
    for stack, role in (("wayland", "server"), ("x11", "wm")):
        rec = res["experiments"]["render"][stack]
        got = sorted((s.get("refresh_hz"), s.get("engine")) for s in rec["samples"])
        want = sorted((hz, e) for hz in (60, 0) for e in engines)
        check(rec["status"] == "ok" and got == want,
              "%s: a render sample per engine at each rate (%s, %s)" % (stack, rec["status"], got))
        for s in rec["samples"]:
            check_painted(stack, s)
        for hz in (60, 0):
            cmd = res["stacks"][stack]["commands"].get("%s@%d" % (role, hz), "")
            check("--refresh %d" % hz in cmd, "%s: the %s was started with --refresh %d: %s"
                  % (stack, role, hz, cmd))
    with open(os.path.join(out, "summary.csv")) as f:
        rows = [line.split(",") for line in f]
    for key in ["render_fps", "render_fps_r0", "render_painted_hz_r0",
                "render_ws_cpu_ms_per_painted_frame_r0"] + \
            ["render_fps_%s_r0" % e for e in engines[1:]]:
        vals = {row[2]: row[5] for row in rows if row[0] == key and row[1] == "stack"}
        check(set(vals) == {"wayland", "x11"} and all(vals.values()),
              "summary.csv has %s for both stacks (%s)" % (key, vals))
    # The headline reads only its own rate's samples.
    for stack in ("wayland", "x11"):
        head = [s["score_fps"] for s in res["experiments"]["render"][stack]["samples"]
                if s["refresh_hz"] == 60 and s["engine"] == engines[0]]
        row = [row for row in rows if row[0] == "render_fps" and row[2] == stack][0]
        check(abs(float(row[5]) - head[0]) < 0.01,
              "%s: render_fps is the 60 Hz sample's score (%s vs %s)" % (stack, row[5], head))
    with open(os.path.join(out, "report.md")) as f:
        text = f.read()
        check("render experiment: 60 Hz; then unthrottled" in text,
              "the report names both render clocks")
    check(not marked_processes(mark), "no process of the run is left")
    shutil.rmtree(out, ignore_errors=True)


def brief_of(r):
    """The one JSON line --no-report prints on stdout (nothing else there)."""
    lines = r.stdout.strip().splitlines()
    check(len(lines) == 1, "--no-report prints one line on stdout (%d)" % len(lines))
    try:
        return json.loads(lines[0])
    except ValueError:
        fail("stdout is not JSON: %r" % lines[0][:200])


def test_no_report():
    r, out, mark, took = run_bench(
        ["--no-report", "--stacks", "wayland", "--experiments", "launch,cpu", "--reps", "1",
         "--no-ipc"], {"DUET_EMULATION": "qemu-system-aarch64 TCG (test)"}, timeout=300)
    check(r.returncode == 0, "a run that measured everything exits 0 (status %d)"
          % r.returncode)
    line = brief_of(r)
    check(line["result"] == "pass" and line["exit_status"] == 0 and line["failed"] == []
          and line["experiments"] == {"launch": "pass", "cpu": "pass"},
          "the line says pass, for each experiment too: %s" % line)
    check(line["results"] == os.path.join(out, "results.json")
          and os.path.isfile(line["summary_csv"]), "the line names results.json and "
          "summary.csv, both written")
    for name in ("report.md", "report.html", "plots"):
        check(not os.path.exists(os.path.join(out, name)), "no %s" % name)
    check("metric" in r.stderr and "launch_ms" in r.stderr,
          "the summary table goes to stderr")
    res = load(out)
    check_schema(res)
    o = res["outcome"]
    check(o["result"] == "pass" and o["measured"] == 2 and o["experiments"]["launch"] == {
        "result": "pass", "stacks": {"wayland": "pass"}}, "results.json's outcome: %s" % o)
    check(res["machine"]["emulation"] == "qemu-system-aarch64 TCG (test) (declared by "
          "DUET_EMULATION)" and "WARNING: run under emulation" in r.stderr,
          "DUET_EMULATION marks the run emulated: %s" % res["machine"]["emulation"])
    shutil.rmtree(out, ignore_errors=True)

    # One experiment x stack fails: exit 1, and which one is said.
    r, out, mark, took = run_bench(
        ["--no-report", "--stacks", "wayland,x11", "--experiments", "launch,cpu", "--reps",
         "1", "--no-ipc"], {"DUET_BENCH_TEST_KILL_SERVER": "wayland:launch:0"}, timeout=300)
    check(r.returncode == 1, "a run with a failed experiment exits 1 (status %d)"
          % r.returncode)
    line = brief_of(r)
    check(line["result"] == "fail" and line["exit_status"] == 1
          and line["failed"] == ["launch x wayland"]
          and line["experiments"] == {"launch": "fail", "cpu": "pass"},
          "the line says which experiment x stack failed: %s" % line)
    res = load(out)
    check_schema(res)
    check(res["outcome"]["experiments"]["launch"]["stacks"] == {"wayland": "fail", "x11": "pass"}
          and res["outcome"]["experiments"]["cpu"]["stacks"] == {"wayland": "pass",
                                                                 "x11": "pass"},
          "pass/fail per experiment and stack: %s" % res["outcome"]["experiments"])
    check(not marked_processes(mark), "no process of the run is left")
    shutil.rmtree(out, ignore_errors=True)

    # Nothing measured (weston missing from PATH): a failure, not a pass.
    empty = tempfile.mkdtemp(prefix="duet-bench-nopath-")
    r, out, mark, took = run_bench(["--no-report", "--stacks", "weston", "--experiments",
                                    "launch", "--reps", "1", "--no-ipc"], {"PATH": empty},
                                   timeout=120)
    line = brief_of(r)
    check(r.returncode == 1 and line["result"] == "fail"
          and line["experiments"] == {"launch": "skip"}
          and any("nothing was measured" in f for f in line["failed"]),
          "a run that measured nothing exits 1 and says why: %s" % line)
    check_schema(load(out))
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(empty, ignore_errors=True)


def test_renderer():
    """--renderer pixman reaches duet's servers and weston, and results.json
    and the report say which engine drew each stack."""
    bad = subprocess.run([sys.executable, os.environ["DUET_TOOL"], "bench", "--display", "kms",
                          "--renderer", "pixman"], capture_output=True, text=True, timeout=60)
    check(bad.returncode == 2 and "--renderer gl" in bad.stderr,
          "--display kms --renderer pixman is a usage error pointing at gl (status %d: %s)"
          % (bad.returncode, bad.stderr.strip()[-160:]))
    r, out, mark, took = run_bench(["--quick", "--stacks", "wayland,x11,weston,openbox",
                                    "--experiments", "launch", "--reps", "1", "--no-ipc",
                                    "--renderer", "pixman"], {}, timeout=400)
    check(r.returncode == 0, "the bench exits 0 (status %d)" % r.returncode)
    res = load(out)
    check(res.get("renderer") == "pixman" and res["options"].get("renderer") == "pixman",
          "results.json records --renderer pixman (%s)" % res.get("renderer"))
    # duet-xwm's software engine is --xwm-software's, XRender by default.
    check(res.get("xwm_software") == "xrender", "results.json records --xwm-software xrender "
          "(%s)" % res.get("xwm_software"))
    want = {"wayland": "pixman", "x11": "xrender", "weston": "pixman", "openbox": "xrender"}
    got = {n: res["stacks"][n].get("renderer") for n in want}
    check(got == want, "each stack's renderer is recorded: %s" % got)
    for stack, role, flag in (("wayland", "server", "--renderer pixman"),
                              ("x11", "wm", "--renderer xrender"),
                              ("weston", "server", "--use-pixman")):
        cmds = res["stacks"][stack].get("commands", {})
        cmd = next((c for k, c in cmds.items() if k.startswith(role + "@")), "")
        check(flag in cmd, "%s: the %s was started with %s: %s" % (stack, role, flag, cmd))
    check(res["experiments"]["launch"]["x11"]["status"] == "ok"
          and res["experiments"]["launch"]["wayland"]["status"] == "ok",
          "launches measured on duet's servers drawing with pixman")
    check_schema(res)
    with open(os.path.join(out, "report.md")) as f:
        text = f.read()
    check("--renderer pixman" in text, "the report's header names the renderer")
    check(not marked_processes(mark), "no process of the run is left")
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    {"quick": test_quick, "fault": test_fault, "hung": test_hung, "interrupt": test_interrupt,
     "render-refresh": test_render_refresh, "rounds": test_rounds,
     "no-report": test_no_report, "renderer": test_renderer}[sys.argv[1]]()
    print("PASS")
