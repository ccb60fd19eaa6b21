#!/usr/bin/env python3
"""`duet bench --display kms` inside the guest (scripts/test-kms), reduced to
one launch per stack, GL engine: the KMS stacks start on the card and are measured
(duet-compositor --backend drm; Xorg + duet-xwm and Xorg + openbox +
xcompmgr, with vkms beside virtio-gpu as `duet bench --display kms` has it;
openbox's launches timed by the observer reading the card's scanout),
weston is reported as not runnable with its reason, results.json says
display "kms" and the emulation, and the report warns that its figures are
not timings.

With "counts-after-concurrent": openbox's concurrent experiment and then its
counting runs (strace launch, counter; not xtrace, whose proxies work the
same on Xorg as on Xvfb, where bench-counts-xtrace runs them, and which was
this test's slowest and most variable stage here: 85 s alone, 7 min beside
a CPU hog): every count measured and duet bench exits 0. The strace
launch, in a stack of its own, was not mapped within duet-launch's limit
once (ci3, 2026-11-27): the failure's reason says where each traced process
was; a pass logs how long the launch took.

usage: test_bench_kms.py [counts-after-concurrent]
"""

import json
import os
import shutil
import signal
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

import duet  # noqa: E402
from duet import check  # noqa: E402
import test_kms  # noqa: E402
import test_xorg  # noqa: E402


def run_bench(args, prefix, timeout):
    """duet bench --display kms --quick ARGS in the guest, vkms beside
    virtio-gpu as --display kms has it: (completed process, out dir)."""
    test_kms.cards()
    test_xorg.xorg_program()
    out = tempfile.mkdtemp(prefix=prefix)
    # --stall-report: a part quiet for 2 min writes where every thread waits
    # (stalls.txt, kept below); one went 34 min without a word (2026-12-06).
    argv = [duet.program("DUET_LAUNCHER"), "bench", "--display", "kms", "--quick"] + args + \
        ["--stall-report", "120", "--out", out]
    # Patience (hang guards only) for TCG with the host's tests beside it:
    # at 10, openbox's straced launch was not mapped within 200 s once
    # (2026-11-27, a heavily loaded host).
    env = dict(os.environ, DUET_BENCH_PATIENCE="20",
               DUET_EMULATION="qemu TCG guest (scripts/test-kms)")
    try:
        with test_xorg.Vkms():
            r = duet.run_guarded(argv, timeout, env=env, stacks_signal=signal.SIGUSR1,
                                 grace=30)
    finally:
        # Kept when the hang guard stopped it too: its stalls.txt then says
        # where it waited (a readiness probe of openbox on Xorg went 900 s
        # in a loaded CI guest, 2026-12-07, and took its report with it).
        keep_dir(out, prefix)
    # Its progress lines (stderr) say how long each part took: this
    # test's time varies threefold from run to run in the guest.
    duet.log("%s -> %d; stdout (tail):\n%s\nstderr (tail):\n%s"
             % (" ".join(argv), r.returncode, r.stdout[-3000:], r.stderr[-3000:]))
    return r, out


def keep_dir(out, prefix):
    """The bench's directory (results.json, its samples, report and stall
    report) beside the build, pass or fail: the guest's /tmp goes with the
    guest, and a run once spent 34 of its 36 minutes before its first
    experiment ended without a failure to say where (2026-12-06)."""
    keep = os.path.join(os.environ.get("DUET_TEST_OUTDIR") or tempfile.gettempdir(),
                        prefix.rstrip("-"))
    shutil.rmtree(keep, ignore_errors=True)
    try:
        shutil.copytree(out, keep, symlinks=True, ignore=shutil.ignore_patterns("runtime"))
    except (shutil.Error, OSError) as e:  # a socket or fifo left in it: the rest is copied
        duet.log("copying the bench's directory: %s" % str(e)[:500])
    duet.log("the bench's directory: %s" % keep)
    log_phases(out)


def log_phases(out):
    """How long each part of the bench took (results' phases) and, if one
    went quiet, the start of its stall report."""
    try:
        with open(os.path.join(out, "results.json")) as f:
            phases = json.load(f).get("phases", [])
    except (OSError, ValueError):
        phases = []
    duet.log("the bench's parts (s): %s" % ", ".join("%s %.1f" % (p["what"], p["s"])
                                                     for p in phases))
    try:
        with open(os.path.join(out, "stalls.txt")) as f:
            duet.log("stalls.txt (head):\n%s" % f.read()[:12000])
    except OSError:
        pass


def test():
    # The GL engine's apps (EGL on the drm backend and on Xorg's glamor),
    # the one guest test that runs them (bench-kms-counts' renders are sw).
    r, out = run_bench(["--experiments", "launch", "--no-ipc", "--reps", "1", "--engine", "gl"],
                       "duet-bench-kms-", 900)
    check(r.returncode == 0, "duet bench exited %d; stderr:\n%s" % (r.returncode,
                                                                   r.stderr[-3000:]))
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    check(res.get("display") == "kms", "results.json display %r" % res.get("display"))
    check(res["options"].get("engine") == "gl", "the apps' engine: %r" % res["options"])
    check("TCG" in (res["machine"].get("emulation") or ""),
          "the emulation is not recorded: %r" % res["machine"].get("emulation"))
    st = res["stacks"]
    for name, note in (("wayland", "--backend drm"), ("x11", "X server: Xorg"),
                       ("openbox", "duet-observe --drm")):
        check(st[name]["status"] == "ok", "%s: %r" % (name, st[name]))
        check(any(note in n for n in st[name].get("notes", [])),
              "%s's notes do not say %r: %r" % (name, note, st[name].get("notes")))
        samples = res["experiments"]["launch"][name].get("samples", [])
        check(samples, "no launch samples on %s" % name)
    # openbox's composited point: the observer on the card's scanout.
    srcs = [smp.get("timeline_source", {}).get("composited")
            for smp in res["experiments"]["launch"]["openbox"].get("samples", [])]
    whys = [(smp.get("timeline_missing") or {}).get("composited")
            for smp in res["experiments"]["launch"]["openbox"].get("samples", [])]
    check(srcs and all(src and "card scanout" in src for src in srcs),
          "openbox's launches are not timed on the card's scanout: %r (why not: %r)"
          % (srcs, whys))
    check(st["weston"]["status"] == "skipped" and "logind" in st["weston"].get("reason", ""),
          "weston: %r" % st["weston"])
    with open(os.path.join(out, "report.md")) as f:
        report = f.read()
    check("this run was under emulation" in report, "the report does not warn of emulation")
    duet.log("bench on KMS: wayland, x11 and openbox measured, weston not runnable, "
             "marked emulated")


def failure_reasons(res):
    """Each failed record's whole reason from results.json: the bench's
    stderr says only its first line, and the rest (the frames of a stack
    process asleep in a lock) stays in the guest's /tmp."""
    lines = []
    for exp, stacks in res.get("experiments", {}).items():
        for name, rec in stacks.items():
            if rec.get("status") == "failed":
                lines.append("\n%s x %s failed: %s" % (exp, name, rec.get("reason")))
    return "".join(lines)


def test_counts_after_concurrent():
    # The counting runs' renders with the sw engine alone: the GL engine on
    # the card is bench-kms's (its launches), and under TCG the xtrace runs
    # of GL renders took 150 s (this test alone: 340 s -> 190 s).
    # --no-trace: the traced operations (strace on every call of three
    # operations) are bench-trace's, natively; under TCG they would add
    # minutes to the counts this test is about.
    r, out = run_bench(["--experiments", "concurrent", "--stacks", "openbox", "--reps", "1",
                        "--render-engines", "sw", "--no-xtrace", "--no-trace"],
                       "duet-bench-kms-counts-", 2400)
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    outcome = res["outcome"]
    check(outcome["ipc"]["openbox"].get("strace_launch") == "pass",
          "openbox's strace launch: %r" % res["ipc"]["openbox"].get("strace_launch"))
    check(r.returncode == 0 and outcome["result"] == "pass",
          "duet bench exited %d, outcome %r; stderr:\n%s%s"
          % (r.returncode, outcome, r.stderr[-3000:], failure_reasons(res)))
    xt = res["ipc"]["openbox"].get("xtrace", {})
    check(xt.get("status") == "skipped" and "--no-xtrace" in xt.get("reason", "")
          and res["options"].get("xtrace") is False,
          "openbox's xtrace run with --no-xtrace: %r; options %r" % (xt, res["options"]))
    sl = res["ipc"]["openbox"]["strace_launch"]
    signals = sl["processes"].get("server", {}).get("signals", {})
    # Each signal stops a traced Xorg; under TCG the smart scheduler's
    # SIGALRM every 20 ms took all its time (-dumbSched in the straced stack).
    check(signals.get("SIGALRM", 0) == 0,
          "the straced Xorg got %d SIGALRM" % signals.get("SIGALRM", 0))
    duet.log("openbox on KMS: concurrent, then every count: %r; the straced launch took %s s; "
             "signals to the straced Xorg: %r"
             % (outcome["ipc"]["openbox"], sl.get("seconds"), signals))


if __name__ == "__main__":
    duet.main(test_counts_after_concurrent if sys.argv[1:] == ["counts-after-concurrent"]
              else test)
