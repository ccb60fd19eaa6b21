#!/usr/bin/env python3
"""The Enlightenment stacks (issue 13): E started from the bench profile,
ready, showing a client, and gone without a trace.

  run-x11      `duet run e-x11 --screenshot` with duet-launch: exit 0, the
               screenshot shows duet-launch's window, and no process the
               run started is left (Xvfb, E, its session bus, efreetd)
  run-wayland  the same on e-wayland (E's Wayland output, read back from
               the private Xvfb E_WL_FORCE=x11 draws it into)
  bench        the bench's own e-x11 and e-wayland Stacks: started, ready
               (their probe shown), the measured pid is E itself (not
               enlightenment_start), and stopped without leftovers
  crash        E killed by a signal: enlightenment_start exits 255 and the
               bench's crash reason (enlightenment.crash_reason) names it
  missing      without Enlightenment, `duet run e-x11` exits 125 with one
               line naming the missing programs and their packages

Every scenario but `missing` skips with one line where Enlightenment is not
installed. Leftovers are found by identity, not name: every process the
run started carries the test's private TMPDIR in its environment.
"""

import os
import signal
import tempfile
import time

import duet
import pngread
from duet import check, log
from duet_bench import stacks
from duet_launch import enlightenment
from test_duet_run import run

LAUNCH_RGB = (237, 237, 242)  # duet-launch's clear colour (bench/duet_bench/observer.py)


def need_e():
    why = enlightenment.missing()
    if why:
        raise duet.Skip("Enlightenment cannot run here: %s" % why)


def leftovers(tag):
    """Processes whose environment mentions tag (the run's TMPDIR)."""
    found = []
    needle = tag.encode()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                if needle in f.read():
                    with open("/proc/%s/comm" % d) as c:
                        found.append("%s (%s)" % (d, c.read().strip()))
        except OSError:
            pass
    return found


def check_no_leftovers(tag, what):
    deadline = time.monotonic() + 5
    while leftovers(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = leftovers(tag)
    check(not left, "%s left processes running: %s" % (what, ", ".join(left)))


def duet_run(args, tmp, env_extra=None):
    """`duet run ARGS` with the test's TMPDIR, so every process it starts
    carries it (leftovers)."""
    r = run(["run"] + args, tmp, timeout=90, env_extra=dict(env_extra or {}, TMPDIR=tmp))
    return r.returncode, r.stdout, r.stderr


def scenario_run(stack):
    need_e()
    with tempfile.TemporaryDirectory(prefix="duet-e-test-") as tmp:
        shot = os.path.join(tmp, "shot.png")
        # The app stays up after sh exits, so the screenshot (taken as the
        # stack stops) shows it rather than its window closing. sh waits
        # for the app's first_frame (60 s: a hang guard), then 3 s for
        # Enlightenment to composite it: nothing says when E did, and the
        # app's presented comes first. 3 s from the app's start was too
        # short under ASan on a loaded host.
        out_path = os.path.join(tmp, "launch.out")
        script = ("%s --engine sw --size 400x300 --stay >%s & i=0; "
                  "until grep -q first_frame %s; do sleep 0.1; i=$((i + 1)); "
                  "[ $i -lt 600 ] || exit 1; done; sleep 3"
                  % (duet.program("DUET_LAUNCH"), out_path, out_path))
        rc, out, err = duet_run([stack, "--size", "1024x768", "--screenshot", shot, "--",
                                 "sh", "-c", script], tmp)
        check(rc == 0, "duet run %s exited %d:\n%s" % (stack, rc, err[-3000:]))
        img = pngread.read(shot)
        hits = sum(1 for y in range(0, img.height, 4) for x in range(0, img.width, 4)
                   if all(abs(a - b) <= 2 for a, b in zip(img.pixel(x, y)[:3], LAUNCH_RGB)))
        log("%s: %dx%d screenshot, %d samples of duet-launch's colour"
            % (stack, img.width, img.height, hits))
        # 400x300 sampled every 4 pixels is 7500; its 48-pixel bar and E's
        # borders take some.
        check(hits > 4000, "the screenshot shows %d samples of duet-launch's colour, "
              "not its window" % hits)
        check_no_leftovers(tmp, "duet run %s" % stack)


def scenario_bench():
    need_e()
    with tempfile.TemporaryDirectory(prefix="duet-e-test-") as tmp:
        env = dict(os.environ, TMPDIR=tmp)
        for name in ("e-x11", "e-wayland"):
            st = stacks.Stack(name, tmp, env, size="1024x768")
            try:
                st.start()
                role = "wm" if st.kind == "x11" else "server"
                pid = st.pids()[role]
                with open("/proc/%d/comm" % pid) as f:
                    comm = f.read().strip()
                check(comm == "enlightenment", "%s measures pid %d (%s), not E" % (name, pid, comm))
                check(st.probe is not None or any("frame callback" in n for n in st.notes),
                      "%s: no readiness probe ran: %s" % (name, st.notes))
                log("%s ready: %s; probe %s" % (name, st.pids(), st.probe))
            finally:
                st.stop()
                st.cleanup()
            check_no_leftovers(tmp, "the bench's %s stack" % name)


def scenario_crash():
    """E killed by a signal while the stack runs (E 0.25.4 dies of SIGSEGV
    in the e-wayland GL counting runs; a SIGSEGV sent with kill() is caught
    by E's own handler, so the test kills it with SIGKILL): enlightenment_start
    exits 255, and the bench's reason for the failure names E's crash."""
    need_e()
    with tempfile.TemporaryDirectory(prefix="duet-e-test-") as tmp:
        env = dict(os.environ, TMPDIR=tmp)
        st = stacks.Stack("e-wayland", tmp, env, size="1024x768")
        try:
            st.start()
            check(enlightenment.crash_reason(st) is None, "a live E stack has a crash reason")
            os.kill(st.pids()["server"], signal.SIGKILL)
            deadline = time.monotonic() + 10
            while not st.dead() and time.monotonic() < deadline:
                time.sleep(0.05)
            check(st.dead() is not None, "E was killed and its stack still runs")
            why = enlightenment.crash_reason(st)
            log("enlightenment_start %s; reason: %s" % (st.dead().status(), why))
            check(why == enlightenment.CRASH_255, "no crash reason for E's death: %r" % why)
        finally:
            st.stop()
            st.cleanup()
        check_no_leftovers(tmp, "the crashed e-wayland stack")


def scenario_missing():
    with tempfile.TemporaryDirectory(prefix="duet-e-test-") as tmp:
        empty = os.path.join(tmp, "bin")
        os.mkdir(empty)
        rc, out, err = duet_run(["e-x11", "--", "true"], tmp, env_extra={"PATH": empty})
        lines = [l for l in err.splitlines() if l.strip()]
        log("stderr: %r" % lines)
        check(rc == 125, "duet run e-x11 without Enlightenment exited %d, not 125" % rc)
        check(len(lines) == 1 and "enlightenment_start (Debian package enlightenment)" in lines[0],
              "not one clear line naming what is missing: %r" % lines)


SCENARIOS = {"run-x11": lambda: scenario_run("e-x11"),
             "run-wayland": lambda: scenario_run("e-wayland"),
             "bench": scenario_bench, "crash": scenario_crash, "missing": scenario_missing}

if __name__ == "__main__":
    duet.main_scenario(SCENARIOS)
